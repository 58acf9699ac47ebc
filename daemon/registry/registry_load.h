/* Internal to registry/: the blocking half of a load (registry_load.c): what registry.c hands
 * to libuv's thread pool and gets back. */
#ifndef BD_DAEMON_REGISTRY_REGISTRY_LOAD_H
#define BD_DAEMON_REGISTRY_REGISTRY_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "daemon/registry/registry_served.h"
#include "daemon/registry/upload.h"

/* One load, prepared on the loop thread and run in libuv's thread pool (registry_load.c):
 * write uploads and config.json, pick the highest version, import, plan for the model's own
 * shapes (dynamic dims = 1), run one warm-up inference, summarise the partition. */
typedef struct bd_load_task {
    /* inputs (owned by the task) */
    char        repo[4096];
    char        name[256];
    char       *config_json;      /* NULL = read <repo>/<name>/config.json if present */
    bool        write_config;     /* also store CONFIG_JSON as <repo>/<name>/config.json */
    bd_upload  *uploads;          /* paths copied; data borrowed from the caller */
    size_t      n_uploads;
    int         threads;          /* daemon threads_per_worker */
    int         queue_limit;      /* daemon queue_limit */
    char        fallback_ops[1024]; /* daemon placement defaults (config.json may override) */
    char        engine[32];
    size_t      plan_cache_max_plans; /* daemon defaults (config.json may override) */
    size_t      plan_cache_max_bytes;
    size_t      max_run_memory_bytes; /* daemon-wide: refuse shapes needing more per run */
    const atomic_bool *cancel;    /* set at shutdown: stop at the next checkpoint (may be NULL) */
    atomic_bool uploads_done;     /* set by the load once it no longer reads UPLOADS' data: only
                                   * then may its caller be answered early (abandoned) */
    /* outputs */
    bd_served  *served;           /* one reference on success */
    int         status;
    bd_error    err;
} bd_load_task;

/* The highest numeric version directory under MODEL_DIR (as written there) into VERSION;
 * BD_ENOTFOUND when there is none. Blocking, but only a directory read. */
int  repo_highest_version(const char *model_dir, const char *name, char *version, size_t size,
                          bd_error *err);

/* Run T (blocking). Fills T->served or T->status/T->err. */
void load_task_run(bd_load_task *t);
void load_task_free(bd_load_task *t);      /* releases an unclaimed T->served too */

#endif
