/* braid models [--server HOST:PORT] [--ready]: the server's model repository. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid models [--server HOST:PORT] [--ready] [--timeout MS]\n"
        "\n"
        "List every model in braidd's repository: name, version, state (READY, LOADING,\n"
        "UNAVAILABLE) and, when it is not ready, the reason.\n"
        "\n"
        "  -s, --server HOST:PORT  braidd's gRPC address (default $BRAID_SERVER or %s)\n"
        "  -r, --ready             only models ready for inference\n"
        "      --timeout MS        deadline of each call (default 10000)\n"
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

int cmd_models(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, 0, 's' }, { "ready", no_argument, 0, 'r' },
        { "timeout", required_argument, 0, 'T' }, { "help", no_argument, 0, 'h' }, { 0 },
    };
    const char *server = cli_default_server();
    bool ready_only = false;
    int timeout = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:rh", opts, NULL)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'r': ready_only = true; break;
        case 'T': if ((timeout = cli_parse_timeout(optarg)) < 0) return CLI_USAGE; break;
        case 'h': usage(stdout); return CLI_OK;
        default:  usage(stderr); return CLI_USAGE;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return CLI_USAGE;
    }
    braid_client *cl = NULL;
    if (cli_connect("models", server, timeout, &cl))
        return CLI_FAIL;
    char msg[512];
    braid_repository_list *index = NULL;
    braid_status st = braid_repository_index(cl, ready_only, &index, msg, sizeof msg);
    int rc = CLI_OK;
    if (st) {
        cli_remote_error("models", server, st, msg);
        rc = CLI_FAIL;
    } else if (index->n_models == 0) {
        printf("no models%s on %s\n", ready_only ? " ready" : "", server);
    } else {
        printf("%-24s %-8s %-12s %s\n", "MODEL", "VERSION", "STATE", "REASON");
        for (size_t i = 0; i < index->n_models; i++) {
            const braid_repository_entry *e = &index->models[i];
            printf("%-24s %-8s %-12s %s\n", e->name, e->version[0] ? e->version : "-", e->state, e->reason);
        }
    }
    braid_repository_list_free(index);
    braid_client_close(cl);
    return rc;
}
