/* braid models [--server HOST:PORT] [--ready]: the server's model repository. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"

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
        CLI_REMOTE_SECURITY_HELP
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

int cmd_models(int argc, char **argv)
{
    static const struct option opts[] = {
        { "ready", no_argument, 0, 'r' }, CLI_REMOTE_OPTIONS, { 0 },
    };
    cli_remote r = { .cmd = "models", .server = cli_default_server() };
    bool ready_only = false;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "r" CLI_REMOTE_SHORT, opts, NULL)) != -1) {
        if (c == 'r')
            ready_only = true;
        else if ((rc = cli_remote_option(c, optarg, &r, usage)) >= 0)
            return rc;
    }
    braid_client *cl = NULL;
    if ((rc = cli_remote_begin(&r, argc, 0, usage, false, &cl)) >= 0)
        return rc;
    char msg[512];
    braid_repository_list *index = NULL;
    braid_status st = braid_repository_index(cl, ready_only, &index, msg, sizeof msg);
    rc = CLI_OK;
    if (st) {
        cli_remote_error(&r, st, msg);
        rc = CLI_FAIL;
    } else if (index->n_models == 0) {
        printf("no models%s on %s\n", ready_only ? " ready" : "", r.server);
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
