/* Helpers shared by the remote subcommands (models, load, unload, infer, status). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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
    case CLI_OPT_TLS_CA:     r->tls_ca = arg;     return -1;
    case CLI_OPT_TLS_CERT:   r->tls_cert = arg;   return -1;
    case CLI_OPT_TLS_KEY:    r->tls_key = arg;    return -1;
    case CLI_OPT_TOKEN_FILE: r->token_file = arg; return -1;
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
    else if (status == BRAID_UNAUTHENTICATED)
        fprintf(stderr, "hint: this braidd needs a token: pass --token-file FILE (or set "
                        "BRAID_TOKEN_FILE)\n");
    else if (status == BRAID_PERMISSION_DENIED)
        fprintf(stderr, "hint: the token's role may not do this (load and unload need an admin "
                        "token)\n");
}

/* The first line of PATH, without its line end, into BUF; false when it cannot be read. */
static bool read_token(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok && buf[0];
}

static const char *env_or(const char *value, const char *name)
{
    const char *env = getenv(name);
    return value ? value : env && *env ? env : NULL;
}

int cli_connect(const cli_remote *r, bool load, braid_client **out)
{
    char msg[512], token[1100] = "";
    const char *token_file = env_or(r->token_file, "BRAID_TOKEN_FILE");
    if (token_file && !read_token(token_file, token, sizeof token)) {
        fprintf(stderr, "braid %s: cannot read a token from %s (expected the token on its first "
                        "line)\n", r->cmd, token_file);
        return CLI_FAIL;
    }
    braid_client_options o = { .timeout_ms = r->timeout, .load_timeout_ms = load ? r->timeout : 0,
                               .tls_ca_file = env_or(r->tls_ca, "BRAID_TLS_CA"),
                               .tls_cert_file = r->tls_cert, .tls_key_file = r->tls_key,
                               .token = token[0] ? token : NULL,
                               .max_message_bytes = r->max_message };
    braid_status st = braid_client_connect(r->server, &o, out, msg, sizeof msg);
    memset(token, 0, sizeof token);
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
