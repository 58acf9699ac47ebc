/* braid load NAME [--file PATH.onnx [--version V]] [--config JSON|@FILE] [--server HOST:PORT] */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
/* gRPC's largest message is INT_MAX bytes; the request's other fields take a little. */
#define UPLOAD_OVERHEAD ((size_t)1 << 20)
#define UPLOAD_MAX      ((size_t)INT_MAX - UPLOAD_OVERHEAD)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

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
    /* One gRPC message carries the file (Triton's "file:" upload): this side may send up to
     * gRPC's largest message, so only the server's limit (max_message_bytes) applies. */
    if (file && size > UPLOAD_MAX) {
        fprintf(stderr, "braid load: %s is %zu bytes; a gRPC upload carries at most %zu. Copy it "
                        "into the server's repository as %s/%s/model.onnx and run `braid load %s`\n",
                file, size, (size_t)UPLOAD_MAX, name, version ? version : "1", name);
        free(bytes);
        free(config_buf);
        return CLI_FAIL;
    }
    if (file)
        r.max_message = UPLOAD_MAX + UPLOAD_OVERHEAD;
    char msg[512];
    braid_client *cl = NULL;
    braid_status st = BRAID_OK;
    double t0 = now_s();
    if ((rc = cli_connect(&r, true, &cl)) == CLI_OK) {
        if (file)
            fprintf(stderr, "uploading %s (%.1f MB) to %s as '%s' version %s, then loading it...\n",
                    file, (double)size / 1e6, r.server, name, version ? version : "1");
        else
            fprintf(stderr, "loading '%s' on %s...\n", name, r.server);
        st = file ? braid_model_load_bytes(cl, name, version ? version : "1", bytes, size, config, msg, sizeof msg)
                  : braid_model_load(cl, name, config, msg, sizeof msg);
    }
    braid_client_close(cl);
    free(bytes);
    free(config_buf);
    if (rc)
        return rc;
    if (st) {
        cli_remote_error(&r, st, msg);
        if (file && st == BRAID_RESOURCE_EXHAUSTED && strstr(msg, "larger than max"))
            fprintf(stderr, "hint: the upload (%zu bytes) is over braidd's message limit: start "
                            "braidd with --max-message-bytes %zu or more (docs/config.md), or copy "
                            "the file into its repository and run `braid load %s`\n",
                    size, size + UPLOAD_OVERHEAD, name);
        return CLI_FAIL;
    }
    if (file)
        printf("loaded '%s' version %s from %s (%.1f s)\n", name, version ? version : "1", file,
               now_s() - t0);
    else
        printf("loaded '%s' (%.1f s)\n", name, now_s() - t0);
    return CLI_OK;
}
