/* braid load NAME [--file MODEL [--version V]] [--config JSON|@FILE] [--server HOST:PORT] */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid load NAME [--file MODEL [--version V]] [--config JSON|@FILE]\n"
        "                  [--server HOST:PORT] [--timeout MS]\n"
        "\n"
        "Load (or hot-reload) model NAME on braidd: from the server's repository, or, with\n"
        "--file, upload MODEL as version V (the server must allow uploads): an ONNX file (as\n"
        "model.onnx), a frozen GraphDef .pb/.graphdef (as model.pb), or a TensorFlow SavedModel\n"
        "directory (as model.savedmodel/, every file under it). The new version replaces the\n"
        "old one atomically; a failed load leaves the old one serving.\n"
        "\n"
        "  -f, --file MODEL        upload this model file or SavedModel directory\n"
        "  -v, --version V         version to upload as (default 1; needs --file)\n"
        "  -c, --config JSON|@FILE model configuration (JSON text, or @ and a file name)\n"
        "  -s, --server HOST:PORT  braidd's gRPC address (default $BRAID_SERVER or %s)\n"
        "      --timeout MS        deadline of the call (default 120000)\n"
        CLI_REMOTE_SECURITY_HELP
        "  -h, --help              this text\n", CLI_DEFAULT_SERVER);
}

/* gRPC's largest message is INT_MAX bytes; the request's other fields take a little. */
#define UPLOAD_OVERHEAD ((size_t)1 << 20)
#define UPLOAD_MAX      ((size_t)INT_MAX - UPLOAD_OVERHEAD)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The files of an upload: names inside the version directory, their bytes. */
typedef struct upload {
    braid_model_file *f;
    size_t            n, cap;
} upload;

static void upload_free(upload *u)
{
    for (size_t i = 0; i < u->n; i++) {
        free((char *)u->f[i].path);
        free((void *)u->f[i].bytes);
    }
    free(u->f);
}

static int upload_add(upload *u, const char *disk, const char *name)
{
    if (u->n == 1000) {
        fprintf(stderr, "braid load: more than 1000 files to upload under '%s'\n", disk);
        return -1;
    }
    if (u->n == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 16;
        braid_model_file *f = realloc(u->f, cap * sizeof *f);
        if (!f)
            return -1;
        u->f = f;
        u->cap = cap;
    }
    size_t size = 0;
    char *bytes = read_file(disk, &size), *copy = strdup(name);
    if (!bytes || !copy) {
        free(bytes);
        free(copy);
        return -1;
    }
    u->f[u->n++] = (braid_model_file){ .path = copy, .bytes = bytes, .nbytes = size };
    return 0;
}

/* Every regular file under DIR (symlinks not followed), named PREFIX/<relative path>. */
static int upload_dir(upload *u, const char *dir, const char *prefix, int depth)
{
    DIR *d = depth < 16 ? opendir(dir) : NULL;
    if (!d) {
        fprintf(stderr, "braid load: cannot read directory '%s': %s\n", dir,
                depth < 16 ? strerror(errno) : "nested too deep");
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char disk[4096], name[1024];
        struct stat st;
        if ((size_t)snprintf(disk, sizeof disk, "%s/%s", dir, e->d_name) >= sizeof disk ||
            (size_t)snprintf(name, sizeof name, "%s/%s", prefix, e->d_name) >= sizeof name) {
            fprintf(stderr, "braid load: path too long under '%s'\n", dir);
            rc = -1;
        } else if (lstat(disk, &st) != 0) {
            fprintf(stderr, "braid load: cannot stat '%s': %s\n", disk, strerror(errno));
            rc = -1;
        } else if (S_ISDIR(st.st_mode))
            rc = upload_dir(u, disk, name, depth + 1);
        else if (S_ISREG(st.st_mode))
            rc = upload_add(u, disk, name);
        else {
            fprintf(stderr, "braid load: '%s' is neither a file nor a directory (symlinks are not "
                    "uploaded)\n", disk);
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

/* The upload for --file PATH: a SavedModel directory as model.savedmodel/, a GraphDef as
 * model.pb, anything else as model.onnx. */
static int upload_of(const char *path, upload *u)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return upload_dir(u, path, "model.savedmodel", 0);
    return upload_add(u, path, ends_with(path, ".pb") || ends_with(path, ".graphdef") ? "model.pb"
                                                                                   : "model.onnx");
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
    char *config_buf = NULL;
    size_t size = 0;
    upload up = { 0 };
    if (config && config[0] == '@' && !(config = config_buf = read_file(config + 1, &size)))
        return CLI_FAIL;
    if (file && upload_of(file, &up)) {
        upload_free(&up);
        free(config_buf);
        return CLI_FAIL;
    }
    size = 0;                           /* the upload's bytes, all files together */
    for (size_t i = 0; i < up.n; i++)
        size = up.f[i].nbytes > SIZE_MAX - size ? SIZE_MAX : size + up.f[i].nbytes;
    /* One gRPC message carries the file (Triton's "file:" upload): this side may send up to
     * gRPC's largest message, so only the server's limit (max_message_bytes) applies. */
    if (file && size > UPLOAD_MAX) {
        fprintf(stderr, "braid load: %s is %zu bytes; a gRPC upload carries at most %zu. Copy it "
                        "into the server's repository as %s/%s/%s and run `braid load %s`\n",
                file, size, (size_t)UPLOAD_MAX, name, version ? version : "1",
                up.n > 1 || strchr(up.f[0].path, '/') ? "model.savedmodel" : up.f[0].path, name);
        upload_free(&up);
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
            fprintf(stderr, "uploading %s (%zu file%s, %.1f MB) to %s as '%s' version %s, then "
                    "loading it...\n", file, up.n, up.n == 1 ? "" : "s", (double)size / 1e6, r.server,
                    name, version ? version : "1");
        else
            fprintf(stderr, "loading '%s' on %s...\n", name, r.server);
        st = file ? braid_model_load_files(cl, name, version ? version : "1", up.f, up.n, config, msg,
                                           sizeof msg)
                  : braid_model_load(cl, name, config, msg, sizeof msg);
    }
    braid_client_close(cl);
    upload_free(&up);
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
