/* braid unload NAME [--server HOST:PORT]: unload a model (running requests finish). */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"

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
        CLI_REMOTE_SECURITY_HELP
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

int cmd_unload(int argc, char **argv)
{
    cli_remote r = { .cmd = "unload" };
    braid_client *cl = NULL;
    int rc = cli_remote_parse(&r, argc, argv, 1, usage, true, &cl);
    if (rc >= 0)
        return rc;
    const char *name = argv[optind];
    char msg[512];
    braid_status st = braid_model_unload(cl, name, msg, sizeof msg);
    braid_client_close(cl);
    if (st) {
        cli_remote_error(&r, st, msg);
        return CLI_FAIL;
    }
    printf("unloaded '%s'\n", name);
    return CLI_OK;
}
