/* braidd's configuration: defaults, then the JSON file, then the flags. The JSON key and the
 * flag share a name (queue_limit = --queue-limit); docs/config.md documents each. */
#include "daemon/config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_text.h"
#include "daemon/log.h"
#include "runtime/engines.h"

#ifndef BRAIDD_VERSION
#define BRAIDD_VERSION "unknown"
#endif

void bd_config_defaults(bd_daemon_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->grpc_address, sizeof cfg->grpc_address, "127.0.0.1:8001");
    snprintf(cfg->http_address, sizeof cfg->http_address, "127.0.0.1:8002");
    snprintf(cfg->rest_address, sizeof cfg->rest_address, "127.0.0.1:8000");
    cfg->workers            = 0;
    cfg->threads_per_worker = 0;
    cfg->queue_limit        = 64;
    cfg->max_message_bytes  = (size_t)256 << 20;
    cfg->allow_uploads      = false;
    cfg->allow_shared_memory = false;
    cfg->shared_memory_max_regions = 64;
    cfg->shared_memory_max_bytes = (size_t)16 << 30;
    cfg->exit_timeout_secs  = -1;
    cfg->drain_timeout_ms   = -1;
    cfg->exit_timeout_ms    = 30000;
    cfg->load_queue_limit   = 4;
    cfg->max_pending_upload_bytes = (size_t)1 << 30;
    cfg->log_level          = BD_LOG_INFO;
    cfg->load_all_at_start  = true;
    snprintf(cfg->engine, sizeof cfg->engine, "auto");
    cfg->plan_cache_max_plans = 64;
    cfg->plan_cache_max_bytes = (size_t)1 << 30;
    snprintf(cfg->model_control_mode, sizeof cfg->model_control_mode, "explicit");
    cfg->repository_poll_secs = 15;
}

int bd_config_model_control(const bd_daemon_config *cfg)
{
    if (!strcmp(cfg->model_control_mode, "explicit"))
        return BD_MODEL_CONTROL_EXPLICIT;
    if (!strcmp(cfg->model_control_mode, "poll"))
        return BD_MODEL_CONTROL_POLL;
    if (!strcmp(cfg->model_control_mode, "none"))
        return BD_MODEL_CONTROL_NONE;
    return -1;
}

/* ---- one table drives the JSON keys, the flags and the help text ---------------------- */

/* K_PORT and K_ENABLE are Triton's spellings of parts of an address (flag-only):
 * K_PORT sets the port of the HOST:PORT string at offset; K_ENABLE takes true|false and,
 * when max is 1, false turns the address off (""). */
typedef enum { K_STRING, K_INT, K_SIZE, K_LEVEL, K_FLAG_TRUE, K_FLAG_FALSE, K_PORT, K_ENABLE } key_kind;

typedef struct key_def {
    const char *json;        /* JSON key; NULL for flag-only entries */
    const char *flag;        /* long option name */
    key_kind    kind;
    size_t      offset;      /* into bd_daemon_config */
    size_t      size;        /* K_STRING: buffer size */
    long long   min, max;    /* K_INT / K_SIZE bounds */
    const char *arg;         /* help: argument name */
    const char *help;
} key_def;

#define OFF(f) offsetof(bd_daemon_config, f)
static const key_def keys[] = {
    { "grpc_address", "grpc-address", K_STRING, OFF(grpc_address), sizeof ((bd_daemon_config *)0)->grpc_address, 0, 0,
      "HOST:PORT", "gRPC listen address (port 0 picks a free port)   [127.0.0.1:8001]" },
    { "http_address", "http-address", K_STRING, OFF(http_address), sizeof ((bd_daemon_config *)0)->http_address, 0, 0,
      "HOST:PORT", "HTTP status endpoint address; \"\" disables it    [127.0.0.1:8002]" },
    { "rest_address", "rest-address", K_STRING, OFF(rest_address), sizeof ((bd_daemon_config *)0)->rest_address, 0, 0,
      "HOST:PORT", "HTTP/REST inference address (KServe v2 REST); \"\" disables it [127.0.0.1:8000]" },
    { "repository", "repository", K_STRING, OFF(repository), sizeof ((bd_daemon_config *)0)->repository, 0, 0,
      "DIR", "model repository: DIR/<model>/<version>/model.onnx (or .pb, .json, model.savedmodel/) [none]" },
    { "workers", "workers", K_INT, OFF(workers), 0, 0, 1024,
      "N", "worker threads running inferences; 0 = auto      [0]" },
    { "threads_per_worker", "threads-per-worker", K_INT, OFF(threads_per_worker), 0, 0, 1024,
      "N", "oneDNN (OpenMP) threads per worker; 0 = auto     [0]" },
    { "queue_limit", "queue-limit", K_INT, OFF(queue_limit), 0, 1, 1000000,
      "N", "queued requests per model before RESOURCE_EXHAUSTED [64]" },
    { "max_message_bytes", "max-message-bytes", K_SIZE, OFF(max_message_bytes), 0, 4096, INT_MAX,
      "BYTES", "largest gRPC message received or sent          [268435456]" },
    { "allow_uploads", "allow-uploads", K_FLAG_TRUE, OFF(allow_uploads), 0, 0, 0,
      NULL, "let RepositoryModelLoad write uploaded model files and config.json into the repository [off]" },
    { "allow_shared_memory", "allow-shared-memory", K_FLAG_TRUE, OFF(allow_shared_memory), 0, 0, 0,
      NULL, "serve Triton's system shared memory extension (same-host clients) [off]" },
    { "shared_memory_max_regions", "shared-memory-max-regions", K_INT, OFF(shared_memory_max_regions), 0, 1, 512,
      "N", "shared memory regions registered at once        [64]" },
    { "shared_memory_max_bytes", "shared-memory-max-bytes", K_SIZE, OFF(shared_memory_max_bytes), 0, 1, 1LL << 50,
      "BYTES", "bytes of all registered regions together [17179869184]" },
    { "exit_timeout_secs", "exit-timeout-secs", K_INT, OFF(exit_timeout_secs), 0, 0, 3600,
      "S", "SIGTERM: how long in-flight requests may finish [30]" },
    { "drain_timeout_ms", "drain-timeout-ms", K_INT, OFF(drain_timeout_ms), 0, 0, 3600000,
      "MS", "deprecated alias of --exit-timeout-secs, in ms" },
    { "load_queue_limit", "load-queue-limit", K_INT, OFF(load_queue_limit), 0, 0, 1024,
      "N", "loads waiting per model behind its running one  [4]" },
    { "max_pending_upload_bytes", "max-pending-upload-bytes", K_SIZE, OFF(max_pending_upload_bytes), 0, 0, INT_MAX,
      "BYTES", "uploads unfinished loads may hold [1073741824]" },
    { "log_level", "log-level", K_LEVEL, OFF(log_level), 0, 0, 0,
      "LEVEL", "debug, info, warn or error                      [info]" },
    { "load_all_at_start", "no-load-at-start", K_FLAG_FALSE, OFF(load_all_at_start), 0, 0, 0,
      NULL, "do not load the repository's models at start-up (JSON: load_all_at_start=false) [load]" },
    { "fallback_ops", "fallback-ops", K_STRING, OFF(fallback_ops), sizeof ((bd_daemon_config *)0)->fallback_ops, 0, 0,
      "A,B", "op types sent to the framework fallback (e.g. Softmax,Erf)  [none]" },
    { "engine", "engine", K_STRING, OFF(engine), sizeof ((bd_daemon_config *)0)->engine, 0, 0,
      "LIST", "auto, or the engines allowed: dnnl,native,ort,tf [auto]" },
    { "ort_library", "ort-library", K_STRING, OFF(ort_library), sizeof ((bd_daemon_config *)0)->ort_library, 0, 0,
      "PATH", "libonnxruntime.so.1 for the ONNX Runtime fallback [default search]" },
    { "ort_threads", "ort-threads", K_INT, OFF(ort_threads), 0, 0, 1024,
      "N", "ONNX Runtime intra-op threads per session; 0 = 1  [0]" },
    { "tf_library", "tf-library", K_STRING, OFF(tf_library), sizeof ((bd_daemon_config *)0)->tf_library, 0, 0,
      "PATH", "libtensorflow.so.2 for the TensorFlow fallback  [default search]" },
    { "tf_threads", "tf-threads", K_INT, OFF(tf_threads), 0, 0, 1024,
      "N", "TensorFlow intra-op threads per session; 0 = its default [0]" },
    { "plan_cache_max_plans", "plan-cache-max-plans", K_SIZE, OFF(plan_cache_max_plans), 0, 0, 1 << 20,
      "N", "plans (input shape sets) cached per model; 0 = unbounded [64]" },
    { "max_run_memory_bytes", "max-run-memory-bytes", K_SIZE, OFF(max_run_memory_bytes), 0, 0, 1LL << 50,
      "BYTES", "tensor memory one run may hold; 0 = half of RAM/cgroup [0]" },
    { "plan_cache_max_bytes", "plan-cache-max-bytes", K_SIZE, OFF(plan_cache_max_bytes), 0, 0, 1LL << 50,
      "BYTES", "estimated plan memory cached per model; 0 = unbounded [1073741824]" },
#define S(f) OFF(f), sizeof ((bd_daemon_config *)0)->f
    { "model_control_mode", "model-control-mode", K_STRING, S(model_control_mode), 0, 0,
      "MODE", "explicit (load/unload RPCs), poll (rescans), none [explicit]" },
    { "repository_poll_secs", "repository-poll-secs", K_INT, OFF(repository_poll_secs), 0, 1, 86400,
      "S", "poll mode: seconds between repository rescans    [15]" },
    { "tls_cert_file", "tls-cert-file", K_STRING, S(tls_cert_file), 0, 0,
      "PEM", "TLS certificate chain for both ports (docs/security.md) [none]" },
    { "tls_key_file", "tls-key-file", K_STRING, S(tls_key_file), 0, 0,
      "PEM", "private key of --tls-cert-file                   [none]" },
    { "tls_client_ca_file", "tls-client-ca-file", K_STRING, S(tls_client_ca_file), 0, 0,
      "PEM", "require client certificates signed by these CAs (mTLS) [none]" },
    { "http_tls_cert_file", "http-tls-cert-file", K_STRING, S(http_tls_cert_file), 0, 0,
      "PEM", "HTTP port only: certificate (default: --tls-cert-file)" },
    { "http_tls_key_file", "http-tls-key-file", K_STRING, S(http_tls_key_file), 0, 0,
      "PEM", "HTTP port only: key (default: --tls-key-file)" },
    { "http_tls_client_ca_file", "http-tls-client-ca-file", K_STRING, S(http_tls_client_ca_file), 0, 0,
      "PEM", "HTTP port only: client CAs, or none (default: --tls-client-ca-file)" },
    { "auth_token_file", "auth-token-file", K_STRING, S(auth_token_file), 0, 0,
      "FILE", "bearer tokens, lines 'inference|admin TOKEN', mode 0600 [none]" },
    { "allow_insecure_bind", "allow-insecure-bind", K_FLAG_TRUE, OFF(allow_insecure_bind), 0, 0, 0,
      NULL, "allow a non-loopback address without TLS and tokens [off]" },
    /* Triton's spellings, flag-only, so KServe's Triton runtime arguments work as given
     * (docs/kubernetes.md); everything from here on is listed apart in --help. */
#define FIRST_TRITON_KEY "model-repository"
    { NULL, "model-repository", K_STRING, S(repository), 0, 0,
      "DIR", "Triton's spelling of --repository" },
    { NULL, "model-store", K_STRING, S(repository), 0, 0,
      "DIR", "Triton's older spelling of --repository (KServe passes it)" },
    { NULL, "grpc-port", K_PORT, S(grpc_address), 0, 65535,
      "PORT", "the port of --grpc-address; its host stays" },
    /* Triton's --http-port is its HTTP/REST inference port (KServe's v2 REST predictor sends
     * inference there); its metrics port is --metrics-port. */
    { NULL, "http-port", K_PORT, S(rest_address), 0, 65535,
      "PORT", "the port of --rest-address (HTTP/REST inference and health); its host stays" },
    { NULL, "metrics-port", K_PORT, S(http_address), 0, 65535,
      "PORT", "the port of --http-address (health, metrics, status); its host stays" },
    { NULL, "allow-grpc", K_ENABLE, S(grpc_address), 0, 0,
      "BOOL", "true only: braidd always serves gRPC" },
    { NULL, "allow-http", K_ENABLE, S(rest_address), 0, 1,
      "BOOL", "false = --rest-address \"\"" },
    { NULL, "allow-metrics", K_ENABLE, S(http_address), 0, 1,
      "BOOL", "false = --http-address \"\"" },
#undef S
};
#define N_KEYS (sizeof keys / sizeof keys[0])

static int set_string(bd_daemon_config *cfg, const key_def *k, const char *v, const char *from,
                      bd_error *err)
{
    char *dst = (char *)cfg + k->offset;
    if (strlen(v) >= k->size)
        return bd_error_set(err, BD_EINVAL, "%s%s: longer than %zu characters", from,
                            k->json ? k->json : k->flag,
                            k->size - 1);
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int set_number(bd_daemon_config *cfg, const key_def *k, long long v, const char *from,
                      bd_error *err)
{
    if (v < k->min || v > k->max)
        return bd_error_set(err, BD_EINVAL, "%s%s: expected an integer in [%lld, %lld], got %lld",
                            from, k->json ? k->json : k->flag, k->min, k->max, v);
    if (k->kind == K_SIZE)
        *(size_t *)((char *)cfg + k->offset) = (size_t)v;
    else
        *(int *)((char *)cfg + k->offset) = (int)v;
    return 0;
}

static int set_level(bd_daemon_config *cfg, const char *v, const char *from, bd_error *err)
{
    int level = bd_log_level_parse(v);
    if (level < 0)
        return bd_error_set(err, BD_EINVAL, "%slog_level: expected debug, info, warn or error, got '%s'",
                            from, v);
    cfg->log_level = level;
    return 0;
}

/* ---- JSON file --------------------------------------------------------------------------- */

static int apply_json_key(bd_daemon_config *cfg, const cJSON *item, const char *path, bd_error *err)
{
    char from[4200];
    snprintf(from, sizeof from, "%s: key ", path);
    const key_def *k = NULL;
    for (size_t i = 0; i < N_KEYS && !k; i++)
        if (keys[i].json && strcmp(keys[i].json, item->string) == 0)
            k = &keys[i];
    if (!k) {
        char known[1024] = "";
        for (size_t i = 0, used = 0; i < N_KEYS && used < sizeof known; i++)
            if (keys[i].json)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                                         keys[i].json);
        return bd_error_set(err, BD_EINVAL, "%s: unknown key '%s' (known keys: %s)", path,
                            item->string, known);
    }
    switch (k->kind) {
    case K_STRING:
        if (!cJSON_IsString(item))
            return bd_error_set(err, BD_EINVAL, "%s%s: expected a string", from, k->json);
        return set_string(cfg, k, item->valuestring, from, err);
    case K_INT:
    case K_SIZE: {
        double d = item->valuedouble;
        /* in range before the cast, which is undefined beyond it (1e300, NaN) */
        if (!cJSON_IsNumber(item) || !(d >= -9.2e18 && d <= 9.2e18) || d != (double)(long long)d)
            return bd_error_set(err, BD_EINVAL, "%s%s: expected an integer", from, k->json);
        return set_number(cfg, k, (long long)d, from, err);
    }
    case K_LEVEL:
        if (!cJSON_IsString(item))
            return bd_error_set(err, BD_EINVAL, "%s%s: expected a string (debug, info, warn, error)",
                                from, k->json);
        return set_level(cfg, item->valuestring, from, err);
    case K_FLAG_TRUE:
    case K_FLAG_FALSE:
        if (!cJSON_IsBool(item))
            return bd_error_set(err, BD_EINVAL, "%s%s: expected true or false", from, k->json);
        *(bool *)((char *)cfg + k->offset) = cJSON_IsTrue(item);
        return 0;
    case K_PORT:
    case K_ENABLE:
        break;                     /* flag-only: no JSON key reaches here */
    }
    return 0;
}

int bd_config_load_file(bd_daemon_config *cfg, const char *path, bd_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bd_error_set(err, BD_EIO, "config file %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (int guard = 0; guard < (1 << 20); guard++) {   /* bounded: 1 GiB at most */
        if (len + 4096 + 1 > cap) {
            char *t = realloc(text, cap = cap ? cap * 2 : 8192);
            if (!t) {
                free(text);
                fclose(f);
                return bd_error_set(err, BD_ENOMEM, "config file %s: out of memory", path);
            }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || !text) {
        free(text);
        return bd_error_set(err, BD_EIO, "config file %s: read error", path);
    }
    text[len] = '\0';
    long nul = bd_json_find_nul(text, len);
    if (nul >= 0) {
        free(text);
        return bd_error_set(err, BD_EINVAL, "config file %s: a NUL (\\u0000 or a 0 byte) near byte "
                            "%ld; strings must not contain NUL", path, nul);
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int at = end ? (int)(end - text) : 0;
        free(text);
        return bd_error_set(err, BD_EINVAL, "config file %s: not valid JSON (near byte %d)", path, at);
    }
    free(text);
    int rc = 0;
    if (!cJSON_IsObject(root))
        rc = bd_error_set(err, BD_EINVAL, "config file %s: expected a JSON object at the top", path);
    for (const cJSON *item = root->child; rc == 0 && item; item = item->next)
        rc = apply_json_key(cfg, item, path, err);
    cJSON_Delete(root);
    if (rc == 0)
        snprintf(cfg->config_path, sizeof cfg->config_path, "%s", path);
    return rc;
}

/* ---- flags ------------------------------------------------------------------------------- */

enum { OPT_CONFIG = 1000, OPT_HELP, OPT_VERSION, OPT_KEY0 = 2000 };

static void print_help(FILE *f, const char *prog)
{
    fprintf(f,
        "usage: %s [--config FILE] [OPTION]...\n"
        "\n"
        "braidd serves ONNX, TensorFlow (GraphDef, SavedModel) and TF.js graph models over the\n"
        "Open Inference Protocol (gRPC, REST) with an HTTP status endpoint (/metrics,\n"
        "/v2/health/*, /v2/status). Settings come from the defaults, then\n"
        "the JSON file given with --config, then these flags (each JSON key has the flag's name\n"
        "with '_' for '-'; see docs/config.md). Defaults in brackets.\n"
        "\n"
        "  -c, --config FILE             JSON configuration file, applied before the flags\n",
        prog);
    for (size_t i = 0; i < N_KEYS; i++) {
        if (strcmp(keys[i].flag, FIRST_TRITON_KEY) == 0)
            fprintf(f, "\nTriton's spellings (flags only; KServe's Triton runtime passes --model-store,\n"
                       "--grpc-port, --http-port, --allow-grpc, --allow-http):\n");
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", keys[i].flag, keys[i].arg ? " " : "",
                 keys[i].arg ? keys[i].arg : "");
        fprintf(f, "      %-24s  %s\n", left, keys[i].help);
    }
    fprintf(f,
        "  -h, --help                    print this help and exit\n"
        "  -V, --version                 print the version and exit\n"
        "\n"
        "Automatic sizing (workers / threads-per-worker = 0) fits the machine's cores without\n"
        "oversubscription. OMP_WAIT_POLICY defaults to passive unless set in the environment.\n"
        "Signals: SIGTERM drains and exits 0; SIGHUP re-reads the token and certificate files\n"
        "and rescans the repository (explicit and poll modes).\n");
}

static int parse_int(const char *flag, const char *s, long long *out, bd_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno)
        return bd_error_set(err, BD_EINVAL, "--%s: expected an integer, got '%s'", flag, s);
    *out = v;
    return 0;
}

/* --grpc-port/--http-port/--metrics-port: replace the port of the HOST:PORT address at K's offset, keeping
 * its host ("[::1]:8001" keeps "[::1]"); an address switched off ("") gets braidd's default
 * host, 127.0.0.1. */
static int set_port(bd_daemon_config *cfg, const key_def *k, long long port, bd_error *err)
{
    if (port < k->min || port > k->max)
        return bd_error_set(err, BD_EINVAL, "--%s: expected a port in [%lld, %lld], got %lld",
                            k->flag, k->min, k->max, port);
    char *addr = (char *)cfg + k->offset;
    char host[256] = "127.0.0.1";
    const char *colon = strrchr(addr, ':');
    if (addr[0] != '\0') {
        /* "[v6]" keeps its brackets; an address without a port is all host */
        size_t n = colon && (addr[0] != '[' || colon[-1] == ']') ? (size_t)(colon - addr) : strlen(addr);
        if (n >= sizeof host)
            return bd_error_set(err, BD_EINVAL, "--%s: the host of '%s' is too long", k->flag, addr);
        memcpy(host, addr, n);
        host[n] = '\0';
    }
    int w = snprintf(addr, k->size, "%s:%lld", host, port);
    if (w < 0 || (size_t)w >= k->size)
        return bd_error_set(err, BD_EINVAL, "--%s: address longer than %zu characters", k->flag,
                            k->size - 1);
    return 0;
}

/* --allow-grpc/--allow-http/--allow-metrics BOOL (Triton's): true changes nothing; false turns the address
 * off where braidd can do without it (max == 1), and is refused otherwise. */
static int set_enable(bd_daemon_config *cfg, const key_def *k, const char *arg, bd_error *err)
{
    bool on;
    if (!strcmp(arg, "true") || !strcmp(arg, "1"))
        on = true;
    else if (!strcmp(arg, "false") || !strcmp(arg, "0"))
        on = false;
    else
        return bd_error_set(err, BD_EINVAL, "--%s: expected true or false, got '%s'", k->flag, arg);
    if (on)
        return 0;
    if (k->max != 1)
        return bd_error_set(err, BD_EINVAL, "--%s=false: braidd always serves gRPC (the Open "
                            "Inference Protocol's transport here); drop the flag or set it true",
                            k->flag);
    ((char *)cfg + k->offset)[0] = '\0';
    return 0;
}

static int apply_flag(bd_daemon_config *cfg, const key_def *k, const char *arg, bd_error *err)
{
    char from[80];
    snprintf(from, sizeof from, "--%s (", k->flag);
    bd_error sub = { 0 };
    int rc = 0;
    switch (k->kind) {
    case K_STRING: rc = set_string(cfg, k, arg, "", &sub); break;
    case K_INT:
    case K_SIZE: {
        long long v = 0;
        if ((rc = parse_int(k->flag, arg, &v, err)) != 0)
            return rc;
        rc = set_number(cfg, k, v, "", &sub);
        break;
    }
    case K_LEVEL: rc = set_level(cfg, arg, "", &sub); break;
    case K_FLAG_TRUE:  *(bool *)((char *)cfg + k->offset) = true;  break;
    case K_FLAG_FALSE: *(bool *)((char *)cfg + k->offset) = false; break;
    case K_PORT: {
        long long v = 0;
        if ((rc = parse_int(k->flag, arg, &v, err)) != 0)
            return rc;
        return set_port(cfg, k, v, err);
    }
    case K_ENABLE:
        return set_enable(cfg, k, arg, err);
    }
    if (rc)   /* re-word the key as the flag: "--queue-limit: expected ..." */
        return bd_error_set(err, rc, "--%s%s", k->flag, strchr(sub.msg, ':') ? strchr(sub.msg, ':') : "");
    return 0;
}

int bd_config_parse_args(bd_daemon_config *cfg, int argc, char **argv, bd_error *err)
{
    struct option opts[N_KEYS + 4];
    size_t n = 0;
    opts[n++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
    opts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
    opts[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
    for (size_t i = 0; i < N_KEYS; i++)
        opts[n++] = (struct option){ keys[i].flag, keys[i].arg ? required_argument : no_argument, NULL,
                                     OPT_KEY0 + (int)i };
    opts[n] = (struct option){ 0 };
    const char *prog = argc > 0 && argv[0] ? argv[0] : "braidd";
    const char *shortopts = "+:c:hV";

    /* Pass 1: the config file (so flags win regardless of their order), help, version. */
    opterr = 0;
    optind = 0;
    const char *config = NULL;
    for (int c; (c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1;) {
        if (c == 'c' || c == OPT_CONFIG)
            config = optarg;
        else if (c == 'h' || c == OPT_HELP) {
            print_help(stdout, prog);
            return 1;
        } else if (c == 'V' || c == OPT_VERSION) {
            printf("braidd %s\n", BRAIDD_VERSION);
            return 1;
        }
    }
    if (config) {
        int rc = bd_config_load_file(cfg, config, err);
        if (rc)
            return rc;
    }
    /* Pass 2: every other flag, in order. */
    optind = 0;
    for (int c; (c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1;) {
        if (c == '?')
            return bd_error_set(err, BD_EINVAL, "unknown option '%s' (see --help)",
                                optopt ? (char[]){ '-', (char)optopt, 0 } : argv[optind - 1]);
        if (c == ':')
            return bd_error_set(err, BD_EINVAL, "option '%s' needs a value (see --help)", argv[optind - 1]);
        if (c >= OPT_KEY0 && c < OPT_KEY0 + (int)N_KEYS) {
            int rc = apply_flag(cfg, &keys[c - OPT_KEY0], optarg, err);
            if (rc)
                return rc;
        }
    }
    if (optind < argc)
        return bd_error_set(err, BD_EINVAL, "unexpected argument '%s' (see --help)", argv[optind]);
    return 0;
}

void bd_config_resolve(bd_daemon_config *cfg, int ncores)
{
    /* exit_timeout_secs wins over its deprecated millisecond alias when both are given. */
    if (cfg->exit_timeout_secs >= 0)
        cfg->exit_timeout_ms = cfg->exit_timeout_secs * 1000;
    else if (cfg->drain_timeout_ms >= 0)
        cfg->exit_timeout_ms = cfg->drain_timeout_ms;
    if (ncores < 1)
        ncores = 1;
    /* docs/config.md, "Automatic sizing": measured on 2 cores, one single-threaded worker per
     * core gave the best and steadiest throughput for concurrent clients (an OpenMP team
     * stalls whenever one of its cores is taken). Beyond 4 cores, teams of about 4 threads
     * keep single-request latency reasonable without oversubscribing. */
    if (cfg->workers <= 0 && cfg->threads_per_worker <= 0) {
        cfg->workers = ncores <= 4 ? ncores : (ncores + 3) / 4;
        cfg->threads_per_worker = ncores / cfg->workers;
    } else if (cfg->workers <= 0) {
        cfg->workers = ncores / cfg->threads_per_worker > 0 ? ncores / cfg->threads_per_worker : 1;
    } else if (cfg->threads_per_worker <= 0) {
        cfg->threads_per_worker = ncores / cfg->workers > 0 ? ncores / cfg->workers : 1;
    }
}

void bd_config_resolve_memory(bd_daemon_config *cfg, size_t budget)
{
    if (cfg->max_run_memory_bytes == 0)
        cfg->max_run_memory_bytes = budget / 2 ? budget / 2 : 1;
}

int bd_config_configure_engines(const bd_daemon_config *cfg, bd_error *err)
{
    /* the config keys are named after the engine they set ("ort_library" sets engine "ort") */
    const struct { const char *engine, *library; int threads; } set[] = {
        { "ort", cfg->ort_library, cfg->ort_threads },
        { "tf",  cfg->tf_library,  cfg->tf_threads },
    };
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
        bd_engine_config ec = { .library = set[i].library[0] ? set[i].library : NULL,
                                .threads = set[i].threads };
        int rc = bd_engines_configure(set[i].engine, &ec, err);
        if (rc)
            return bd_error_prefix(err, "%s_library/%s_threads: ", set[i].engine, set[i].engine);
    }
    return 0;
}
