/* braidd's configuration: defaults, then a JSON file (--config FILE), then command-line
 * flags, each overriding the one before. Every key is documented in docs/config.md; the
 * JSON key and the flag share a name (json "queue_limit" = flag --queue-limit). */
#ifndef BD_DAEMON_CONFIG_H
#define BD_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct bd_daemon_config {
    char   grpc_address[256];     /* "127.0.0.1:8001" */
    char   http_address[256];     /* "127.0.0.1:8002"; "" disables the status endpoint */
    char   rest_address[256];     /* "127.0.0.1:8000": HTTP/REST inference (Triton's HTTP
                                   * port); "" disables it */
    char   repository[4096];      /* model repository directory; "" = none */
    int    workers;               /* worker threads; 0 = auto (fits the cores) */
    int    threads_per_worker;    /* oneDNN/OpenMP threads per worker; 0 = auto */
    int    queue_limit;           /* queued requests per model before RESOURCE_EXHAUSTED */
    size_t max_message_bytes;     /* gRPC receive/send limit; default 256 MiB */
    bool   allow_uploads;         /* RepositoryModelLoad may write files into the repository */
    bool   allow_shared_memory;   /* Triton's system shared memory extension (shm_region.h) */
    int    shared_memory_max_regions; /* regions registered at once */
    size_t shared_memory_max_bytes;   /* bytes of all registered regions together */
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
    /* the fallback engines' process-wide settings, applied once at start (bd_engines_configure) */
    char   ort_library[4096];     /* libonnxruntime.so.1 path; "" = the default search */
    int    ort_threads;           /* ONNX Runtime intra-op threads per session; 0 = 1 */
    char   tf_library[4096];      /* libtensorflow.so.2 path; "" = the default search */
    int    tf_threads;            /* TensorFlow intra-op threads per session; 0 = its default */
    /* each model's plan cache (one plan per input shape set); config.json may override */
    size_t plan_cache_max_plans;  /* LRU bound by count; 0 = unbounded */
    size_t plan_cache_max_bytes;  /* LRU bound by estimated bytes; 0 = unbounded */
    /* input shapes whose run would hold more tensor memory refused; 0 = auto: half of
     * bd_memory_budget() (bd_config_resolve_memory) */
    size_t max_run_memory_bytes;
    char   config_path[4096];     /* the file these came from, "" if none (for SIGHUP) */
    /* security (docs/security.md): TLS for both ports unless the http_ ones are set */
    char   tls_cert_file[4096];        /* PEM certificate chain; "" = plaintext */
    char   tls_key_file[4096];         /* PEM private key of tls_cert_file */
    char   tls_client_ca_file[4096];   /* PEM CAs: clients must present a certificate (mTLS) */
    char   http_tls_cert_file[4096];   /* "" = tls_cert_file */
    char   http_tls_key_file[4096];    /* "" = tls_key_file */
    char   http_tls_client_ca_file[4096]; /* "" = tls_client_ca_file; "none" = no client certs */
    char   auth_token_file[4096];      /* bearer tokens by role (auth.h); "" = no authentication */
    bool   allow_insecure_bind;        /* bind beyond loopback without TLS and tokens */
    char   model_control_mode[16];     /* "explicit" (load/unload RPCs), "poll", "none" */
    int    repository_poll_secs;       /* poll mode: seconds between repository rescans */
} bd_daemon_config;

/* Model control (Triton's --model-control-mode): who may change what is loaded. */
typedef enum bd_model_control {
    BD_MODEL_CONTROL_EXPLICIT = 0,   /* RepositoryModelLoad/Unload and SIGHUP rescans */
    BD_MODEL_CONTROL_POLL,           /* rescans every repository_poll_secs; no load/unload RPCs */
    BD_MODEL_CONTROL_NONE,           /* what was found at start stays; no load/unload RPCs */
} bd_model_control;

/* CFG's model control mode; -1 when the string is not one of the three. */
int  bd_config_model_control(const bd_daemon_config *cfg);

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
/* Resolve max_run_memory_bytes = 0 (auto) to half of BUDGET (bytes braidd may use: a request
 * must not be able to take the whole machine or cgroup); an explicit value is kept. */
void bd_config_resolve_memory(bd_daemon_config *cfg, size_t budget);
/* Hand CFG's fallback-engine settings (ort_library/ort_threads, tf_library/tf_threads) to the
 * engines through bd_engines_configure. They are process-wide (an engine loads its library
 * once), so braidd calls this once at start, before any model is opened. */
int  bd_config_configure_engines(const bd_daemon_config *cfg, bd_error *err);

#endif
