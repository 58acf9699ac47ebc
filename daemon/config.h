/* braidd's configuration: defaults, then a JSON file (--config FILE), then command-line
 * flags, each overriding the one before. Every key is documented in docs/config.md; the
 * JSON key and the flag share a name (json "queue_limit" = flag --queue-limit). */
#ifndef BD_CONFIG_H
#define BD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "partitioner/error.h"

typedef struct bd_daemon_config {
    char   grpc_address[256];     /* "127.0.0.1:8001" */
    char   http_address[256];     /* "127.0.0.1:8002"; "" disables the status endpoint */
    char   repository[4096];      /* model repository directory; "" = none */
    int    workers;               /* worker threads; 0 = auto (fits the cores) */
    int    threads_per_worker;    /* oneDNN/OpenMP threads per worker; 0 = auto */
    int    queue_limit;           /* queued requests per model before RESOURCE_EXHAUSTED */
    size_t max_message_bytes;     /* gRPC receive/send limit; default 256 MiB */
    bool   allow_uploads;         /* RepositoryModelLoad may write files into the repository */
    int    exit_timeout_secs;     /* SIGTERM: how long in-flight requests may finish (Triton's
                                   * --exit-timeout-secs); -1 = unset (drain_timeout_ms, else 30) */
    int    drain_timeout_ms;      /* deprecated alias of exit_timeout_secs in ms; -1 = unset */
    int    exit_timeout_ms;       /* resolved from the two above by bd_config_resolve */
    int    load_queue_limit;      /* loads/unloads of one model waiting behind its running load */
    size_t max_pending_upload_bytes; /* uploaded bytes held by accepted, unfinished loads */
    int    log_level;             /* bd_log_level */
    bool   load_all_at_start;     /* load every model found in the repository at start-up */
    /* placement defaults for every model (docs/partitioning.md); config.json may override
     * fallback_ops and engine per model */
    char   fallback_ops[1024];    /* op types never run on oneDNN, comma-separated; "" = none */
    char   engine[32];            /* "auto" or a backend name for whole models ("ort") */
    char   ort_library[4096];     /* libonnxruntime.so.1 path; "" = the default search */
    int    ort_threads;           /* ONNX Runtime intra-op threads per session; 0 = 1 */
    char   config_path[4096];     /* the file these came from, "" if none (for SIGHUP) */
} bd_daemon_config;

/* Fill CFG with the defaults. */
void bd_config_defaults(bd_daemon_config *cfg);
/* Apply the JSON file at PATH on top of CFG. Unknown keys and wrong types are errors
 * (BD_EINVAL naming the key and what it expects). */
int  bd_config_load_file(bd_daemon_config *cfg, const char *path, bd_error *err);
/* Apply ARGV's flags on top of CFG (a --config FILE among them is applied first, so flags
 * win). Returns 0, 1 when --help/--version was handled (caller exits 0), or BD_EINVAL. */
int  bd_config_parse_args(bd_daemon_config *cfg, int argc, char **argv, bd_error *err);
/* Resolve the automatic values (workers, threads_per_worker) for NCORES cores, and
 * exit_timeout_ms from exit_timeout_secs or the deprecated drain_timeout_ms. */
void bd_config_resolve(bd_daemon_config *cfg, int ncores);

#endif
