/* Helpers shared by the remote subcommands (models, load, unload, infer, status). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *cli_default_server(void)
{
    const char *env = getenv("BRAID_SERVER");
    return env && *env ? env : CLI_DEFAULT_SERVER;
}

int cli_remote_option(int c, const char *arg, cli_remote *r, void (*usage)(FILE *))
{
    switch (c) {
    case 's': r->server = arg; return -1;
    case 'T': return (r->timeout = cli_parse_count("--timeout", arg)) < 0 ? CLI_USAGE : -1;
    case 'h': usage(stdout); return CLI_OK;
    default:  usage(stderr); return CLI_USAGE;
    }
}

void cli_remote_error(const cli_remote *r, braid_status status, const char *msg)
{
    fprintf(stderr, "braid %s: %s\n", r->cmd, msg && *msg ? msg : braid_status_name(status));
    if (status == BRAID_UNAVAILABLE && msg && strstr(msg, "cannot reach"))
        fprintf(stderr, "hint: is braidd running at %s? start it with scripts/demo.sh, or pass "
                        "--server HOST:PORT (or set BRAID_SERVER)\n", r->server);
    else if (status == BRAID_DEADLINE_EXCEEDED)
        fprintf(stderr, "hint: the server did not answer in time; raise --timeout MS\n");
}

int cli_connect(const cli_remote *r, bool load, braid_client **out)
{
    char msg[512];
    braid_client_options o = { .timeout_ms = r->timeout, .load_timeout_ms = load ? r->timeout : 0 };
    braid_status st = braid_client_connect(r->server, &o, out, msg, sizeof msg);
    if (st == BRAID_OK)
        return CLI_OK;
    cli_remote_error(r, st, msg);
    return CLI_FAIL;
}

int cli_remote_begin(const cli_remote *r, int argc, int n_args, void (*usage)(FILE *), bool load,
                     braid_client **out)
{
    if (optind != argc - n_args) {
        usage(stderr);
        return CLI_USAGE;
    }
    return cli_connect(r, load, out) == CLI_OK ? -1 : CLI_FAIL;
}

int cli_remote_parse(cli_remote *r, int argc, char **argv, int n_args, void (*usage)(FILE *),
                     bool load, braid_client **out)
{
    static const struct option opts[] = { CLI_REMOTE_OPTIONS, { 0 } };
    int c, rc;
    if (!r->server)
        r->server = cli_default_server();
    optind = 1;
    while ((c = getopt_long(argc, argv, CLI_REMOTE_SHORT, opts, NULL)) != -1)
        if ((rc = cli_remote_option(c, optarg, r, usage)) >= 0)
            return rc;
    return cli_remote_begin(r, argc, n_args, usage, load, out);
}
