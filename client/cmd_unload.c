/* braid unload NAME [--server HOST:PORT]: unload a model (running requests finish). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid unload NAME [--server HOST:PORT] [--timeout MS]\n"
        "\n"
        "Unload model NAME from braidd. Requests already running finish first; later ones\n"
        "get NOT_FOUND.\n"
        "\n"
        "  -s, --server HOST:PORT  braidd's gRPC address (default $BRAID_SERVER or %s)\n"
        "      --timeout MS        deadline of the call (default 120000)\n"
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

int cmd_unload(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, 0, 's' }, { "timeout", required_argument, 0, 'T' },
        { "help", no_argument, 0, 'h' }, { 0 },
    };
    const char *server = cli_default_server();
    int timeout = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'T': if ((timeout = cli_parse_timeout(optarg)) < 0) return CLI_USAGE; break;
        case 'h': usage(stdout); return CLI_OK;
        default:  usage(stderr); return CLI_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[optind];
    char msg[512];
    braid_client *cl = NULL;
    braid_client_options o = { .timeout_ms = timeout, .load_timeout_ms = timeout };
    braid_status st = braid_client_connect(server, &o, &cl, msg, sizeof msg);
    if (st == BRAID_OK)
        st = braid_model_unload(cl, name, msg, sizeof msg);
    braid_client_close(cl);
    if (st) {
        cli_remote_error("unload", server, st, msg);
        return CLI_FAIL;
    }
    printf("unloaded '%s'\n", name);
    return CLI_OK;
}
