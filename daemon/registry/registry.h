/* The model registry: every model braidd knows (from the repository directory or loaded over
 * RPC), its state, and the loaded version requests run against.
 *
 * Threads: every bd_registry_* function runs on the libuv loop thread. A bd_served (one
 * loaded model version, registry_served.h) is reference counted: bd_served_retain/release and the accessors are
 * safe from any thread, and the version is freed when its last reference goes — so a hot
 * reload swaps the new version in atomically while requests on the old one finish, and a
 * failed load or reload leaves the previous version serving.
 *
 * Repository layout (Triton's): <repo>/<model>/<version>/model.onnx, optional
 * <repo>/<model>/config.json. The highest numeric version directory is served. */
#ifndef BD_DAEMON_REGISTRY_REGISTRY_H
#define BD_DAEMON_REGISTRY_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "daemon/config.h"
#include "daemon/registry/registry_served.h"
#include "daemon/registry/upload.h"

typedef enum bd_model_state {
    BD_STATE_UNAVAILABLE = 0,  /* known (e.g. found in the repository) but not serving   */
    BD_STATE_LOADING,          /* a load or reload is running (a previous version may serve) */
    BD_STATE_READY,            /* serving                                                 */
    BD_STATE_UNLOADING,        /* reserved: an unload removes the model from lookups at once
                                * (it shows as UNAVAILABLE "unloaded") while in-flight
                                * requests finish on their own references */
} bd_model_state;

/* "UNAVAILABLE", "LOADING", "READY", "UNLOADING" (Triton's spelling). */
const char *bd_model_state_name(int state);

typedef struct bd_registry bd_registry;

/* ---- lifecycle (loop thread) ---------------------------------------------------------- */

/* A registry for CFG's repository (may be ""). Nothing is scanned or loaded yet. */
int  bd_registry_create(uv_loop_t *loop, const bd_daemon_config *cfg, bd_registry **out,
                        bd_error *err);
/* Free the registry. Every bd_served handed out must have been released. NULL is allowed. */
void bd_registry_destroy(bd_registry *r);

/* Scan the repository directory: new model directories become UNAVAILABLE entries, and
 * with LOAD they are loaded (start-up with load_all_at_start, and SIGHUP). */
int  bd_registry_scan(bd_registry *r, bool load, bd_error *err);

/* Called on the loop thread when a load/unload finishes: STATUS 0 or a BD_E* code, MESSAGE
 * the reason (valid during the call only). When bd_registry_load/unload return an error the
 * callback is never called; when they return 0 it is called exactly once (never from inside
 * the call itself). Loads and unloads of one model run one after another, in request order. */
typedef void (*bd_registry_cb)(void *arg, int status, const char *message);

/* Load (or reload) NAME off the loop thread: write UPLOADS into <repo>/<name>/ (paths
 * confined to that directory: absolute paths, "..", and symlinks rejected; needs
 * allow_uploads), apply CONFIG_JSON (may be NULL) as the model's config.json, import,
 * plan, warm up, then swap the new version in. CB runs when done (also on failure).
 * Bounded: BD_EBUSY when load_queue_limit operations already wait behind NAME's running
 * load, when BD_REGISTRY_MAX_PENDING_OPS loads are running or waiting in all, or when the
 * uploads' bytes would take the bytes held by unfinished loads past
 * max_pending_upload_bytes; BD_EUNAVAIL once shutting down. */
#define BD_REGISTRY_MAX_PENDING_OPS 256
int  bd_registry_load(bd_registry *r, const char *name, const char *config_json,
                      const bd_upload *uploads, size_t n_uploads,
                      bd_registry_cb cb, void *arg, bd_error *err);
/* Unload NAME: it stops taking requests at once (NOT_FOUND after); requests already
 * running finish on their reference. CB runs once it is removed from the registry. While a
 * load of NAME runs, the unload waits its turn (bounded like a load: BD_EBUSY). */
int  bd_registry_unload(bd_registry *r, const char *name, bd_registry_cb cb, void *arg,
                        bd_error *err);

/* ---- lookups (loop thread) ------------------------------------------------------------ */

/* The READY version of NAME (VERSION "" or NULL = the served one; else it must match).
 * BD_ENOTFOUND for an unknown model or version, BD_EUNAVAIL when it exists but is not
 * ready (message says why). On success the caller owns one reference. */
int  bd_registry_acquire(bd_registry *r, const char *name, const char *version,
                         bd_served **out, bd_error *err);

/* A point-in-time copy of every entry, for RepositoryIndex, /v2/status and /metrics. */
typedef struct bd_registry_entry {
    char       name[256];
    char       version[32];       /* the served or loading version, "" if none */
    int        state;             /* bd_model_state */
    char       reason[512];       /* why UNAVAILABLE, or why a reload failed while the
                                   * previous version keeps serving; "" otherwise */
    bd_served *served;            /* retained, or NULL when nothing serves */
} bd_registry_entry;

/* Fill *OUT with a malloc'ed array (release it with bd_registry_snapshot_free). */
size_t bd_registry_snapshot(bd_registry *r, bd_registry_entry **out);
void   bd_registry_snapshot_free(bd_registry_entry *entries, size_t n);
/* ---- readiness and shutdown (loop thread) ----------------------------------------------- */

/* Why the server is not ready, or NULL when it is. Ready = the start-up loads (those the first
 * bd_registry_scan started) have finished, failed ones included, and no shutdown has begun.
 * A load, reload or unload after start-up never makes the server unready: per-model readiness
 * is ModelReady's. The one source of truth for ServerReady, grpc.health.v1 and
 * GET /v2/health/ready, so they always agree. */
const char *bd_registry_not_ready_reason(bd_registry *r);
bool        bd_registry_ready(bd_registry *r);     /* bd_registry_not_ready_reason() == NULL */
/* Begin the shutdown (SIGTERM), idempotent: readiness turns false at once; new loads and
 * unloads are refused (BD_EUNAVAIL "braidd is shutting down"); operations waiting behind a
 * running load are answered BD_EUNAVAIL; loads not yet started are cancelled; running loads
 * stop at their next checkpoint (after the upload, the import, the plan, the warm-up) and
 * their result is discarded. Every load's callback still runs exactly once. */
void bd_registry_shutdown(bd_registry *r);
/* Loads running (or queued) in the thread pool. */
int  bd_registry_loads_running(const bd_registry *r);
/* Answer every running load's callback now with BD_EUNAVAIL (the exit timeout passed while
 * it was inside a step that cannot be interrupted): the load finishes in the pool, unseen,
 * and its result is discarded. A load still writing its uploads (whose bytes belong to the
 * caller until the callback) is left to answer itself. After bd_registry_shutdown. */
void bd_registry_abandon_loads(bd_registry *r);
/* A counter that changes whenever the version serving some name changes (a load swapped in,
 * an unload). Any thread may read it: a cache of acquired versions kept off the loop is
 * valid exactly while the generation it was filled at is current. */
uint64_t bd_registry_generation(const bd_registry *r);
/* Server-wide counters (loads, unloads, RPCs). */
bd_server_stats *bd_registry_server_stats(bd_registry *r);

#endif
