/* braid load NAME [--file PATH.onnx [--version V]] [--config JSON|@FILE] [--server HOST:PORT] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid load NAME [--file MODEL.onnx [--version V]] [--config JSON|@FILE]\n"
        "                  [--server HOST:PORT] [--timeout MS]\n"
        "\n"
        "Load (or hot-reload) model NAME on braidd: from the server's repository, or, with\n"
        "--file, upload MODEL.onnx as version V (the server must allow uploads). The new\n"
        "version replaces the old one atomically; a failed load leaves the old one serving.\n"
        "\n"
        "  -f, --file MODEL.onnx   upload this model file\n"
        "  -v, --version V         version to upload as (default 1; needs --file)\n"
        "  -c, --config JSON|@FILE model configuration (JSON text, or @ and a file name)\n"
        "  -s, --server HOST:PORT  braidd's gRPC address (default $BRAID_SERVER or %s)\n"
        "      --timeout MS        deadline of the call (default 120000)\n"
        CLI_REMOTE_SECURITY_HELP
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

/* Read all of PATH into a malloc'ed buffer (NUL-terminated); NULL after a message. */
static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "braid load: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
        *size = (size_t)n;
    } else {
        fprintf(stderr, "braid load: cannot read '%s': %s\n", path, errno ? strerror(errno) : "short read");
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

int cmd_load(int argc, char **argv)
{
    static const struct option opts[] = {
        { "file", required_argument, 0, 'f' }, { "version", required_argument, 0, 'v' },
        { "config", required_argument, 0, 'c' }, CLI_REMOTE_OPTIONS, { 0 },
    };
    cli_remote r = { .cmd = "load", .server = cli_default_server() };
    const char *file = NULL, *version = NULL, *config = NULL;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:v:c:" CLI_REMOTE_SHORT, opts, NULL)) != -1) {
        switch (c) {
        case 'f': file = optarg; break;
        case 'v': version = optarg; break;
        case 'c': config = optarg; break;
        default:
            if ((rc = cli_remote_option(c, optarg, &r, usage)) >= 0)
                return rc;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (version && !file) {
        fprintf(stderr, "braid load: --version needs --file (a repository model loads its own versions)\n");
        return CLI_USAGE;
    }
    if (version && (!*version || strchr(version, '/') || !strcmp(version, ".") || !strcmp(version, ".."))) {
        fprintf(stderr, "braid load: --version expects a plain name such as 1 or 2, got '%s'\n", version);
        return CLI_USAGE;
    }
    const char *name = argv[optind];
    char *config_buf = NULL, *bytes = NULL;
    size_t size = 0;
    if (config && config[0] == '@' && !(config = config_buf = read_file(config + 1, &size)))
        return CLI_FAIL;
    if (file && !(bytes = read_file(file, &size))) {
        free(config_buf);
        return CLI_FAIL;
    }
    char msg[512];
    braid_client *cl = NULL;
    braid_status st = BRAID_OK;
    if ((rc = cli_connect(&r, true, &cl)) == CLI_OK)
        st = file ? braid_model_load_bytes(cl, name, version ? version : "1", bytes, size, config, msg, sizeof msg)
                  : braid_model_load(cl, name, config, msg, sizeof msg);
    braid_client_close(cl);
    free(bytes);
    free(config_buf);
    if (rc)
        return rc;
    if (st) {
        cli_remote_error(&r, st, msg);
        return CLI_FAIL;
    }
    if (file)
        printf("loaded '%s' version %s from %s\n", name, version ? version : "1", file);
    else
        printf("loaded '%s'\n", name);
    return CLI_OK;
}
