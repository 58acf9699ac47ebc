/* Internal to registry/ and sched/: the layout of a loaded version (struct bd_served) and
 * its making (registry_served.c). The registry's load fills it; the scheduler reads what a
 * run needs (pool, batching, queue limit) and keeps its queue in it. Everything else reads a
 * bd_served through registry_served.h. */
#ifndef BD_DAEMON_REGISTRY_REGISTRY_SERVED_INTERNAL_H
#define BD_DAEMON_REGISTRY_REGISTRY_SERVED_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "daemon/registry/model_config.h"
#include "daemon/registry/registry_served.h"
#include "daemon/sched/sched_queue.h"

/* An execution context in a version's pool. */
typedef struct bd_exec_slot {
    struct bd_exec_slot *next;
    const bd_plan       *plan;
    bd_exec             *exec;
    bool                 busy;
} bd_exec_slot;

struct bd_served {
    atomic_int           refs;
    char                 name[256];
    char                 version[32];
    bd_model_config      config;
    int                  queue_limit;      /* resolved: config or daemon default */
    bd_model            *model;
    struct bd_labels   **labels;           /* per graph output, NULL = none (config "labels") */
    bd_model_stats       stats;
    bd_partition_summary summary;
    /* Requests are gathered into batches (config "dynamic_batching", and the load saw the
     * outputs follow the input batch on dim 0). Set before the version is shared. */
    bool                 batching;
    int                  batch_max_rows;   /* rows per gathered batch: max_batch_size, or less
                                            * when input_shapes caps dim 0 */
    int                  batch_ladder[BD_BATCH_MAX_LADDER];  /* the batch sizes formed: their
                                            * plans were compiled at load (batch_ladder.c) */
    int                  n_batch_ladder;

    pthread_mutex_t      pool_lock;        /* guards POOL */
    bd_exec_slot        *pool;

    bd_sched_queue       queue;            /* the scheduler's, and only its (sched_queue.h) */
};

/* A new version with one reference, owning MODEL (closed with the version, also when this
 * fails). */
int  served_create(const char *name, const char *version, const bd_model_config *mc,
                   int default_queue_limit, bd_model *model, bd_served **out, bd_error *err);
/* Read config.json's label files (in MODEL_DIR) for S's outputs; BD_EINVAL names an unknown
 * output, BD_EIO/BD_EINVAL a file that cannot be read or is over a limit (labels.h). The
 * message starts at "key 'labels': "; the caller names the model. */
int  served_load_labels(bd_served *s, const char *model_dir, bd_error *err);

/* Number of bd_served alive in the process (tests check versions are freed). */
long served_live_count(void);

#endif
