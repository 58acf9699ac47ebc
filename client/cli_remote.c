/* Helpers shared by the remote subcommands (models, load, unload, infer, status). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char *cli_default_server(void)
{
    const char *env = getenv("BRAID_SERVER");
    return env && *env ? env : CLI_DEFAULT_SERVER;
}

void cli_remote_error(const char *cmd, const char *server, braid_status status, const char *msg)
{
    fprintf(stderr, "braid %s: %s\n", cmd, msg && *msg ? msg : braid_status_name(status));
    if (status == BRAID_UNAVAILABLE && msg && strstr(msg, "cannot reach"))
        fprintf(stderr, "hint: is braidd running at %s? start it with scripts/demo.sh, or pass "
                        "--server HOST:PORT (or set BRAID_SERVER)\n", server);
    else if (status == BRAID_DEADLINE_EXCEEDED)
        fprintf(stderr, "hint: the server did not answer in time; raise --timeout MS\n");
}

int cli_connect(const char *cmd, const char *server, int timeout_ms, braid_client **out)
{
    char msg[512];
    braid_client_options o = { .timeout_ms = timeout_ms };
    braid_status st = braid_client_connect(server, &o, out, msg, sizeof msg);
    if (st == BRAID_OK)
        return CLI_OK;
    cli_remote_error(cmd, server, st, msg);
    return CLI_FAIL;
}

int cli_parse_timeout(const char *value)
{
    return cli_parse_count("--timeout", value);
}
