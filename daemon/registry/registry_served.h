/* One loaded model version (bd_served), as every thread sees it: reference counted, read
 * through accessors, lent execution contexts. The registry (registry.h) hands versions out;
 * their layout is registry_served_internal.h's.
 *
 * Threads: bd_served_retain/release and the accessors are safe from any thread, and the
 * version is freed when its last reference goes. */
#ifndef BD_DAEMON_REGISTRY_REGISTRY_SERVED_H
#define BD_DAEMON_REGISTRY_REGISTRY_SERVED_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/registry/model_config.h"
#include "daemon/stats/metrics.h"
#include "runtime/model.h"

typedef struct bd_served bd_served;

/* What the partitioner made of a loaded version (computed once at load, from the plan for
 * the model's own shapes with dynamic dims = 1). */
typedef struct bd_partition_summary {
    size_t nodes_imported;                   /* nodes in the model file */
    size_t nodes_planned;                    /* after fusion */
    size_t steps;                            /* subgraphs */
    size_t nodes_per_backend[BD_MAX_BACKENDS];
    size_t fused_composites;                 /* nodes carrying a composite */
    double load_ms;                          /* import + plan + warm-up run */
    const bd_plan *plan;                     /* the plan summarised (lives as long as the model):
                                              * bd_plan_partition gives its subgraphs and the
                                              * nodes off oneDNN with reasons */
} bd_partition_summary;

void              bd_served_retain(bd_served *s);
void              bd_served_release(bd_served *s);        /* NULL is allowed */
const char       *bd_served_name(const bd_served *s);
const char       *bd_served_version(const bd_served *s);   /* "1", "2", ... */
const char       *bd_served_platform(const bd_served *s);  /* "onnx" */
bd_model         *bd_served_model(const bd_served *s);     /* bd_model_plan is thread-safe */
bd_model_stats   *bd_served_stats(bd_served *s);
const bd_partition_summary *bd_served_summary(const bd_served *s);
/* Borrow an execution context for PLAN (a plan of S's model, on which the caller holds a
 * reference until this returns): reused across requests, created on first need. A context
 * holds its own reference to its plan; contexts of plans the model's cache evicted are freed
 * when idle (at the next acquire or release), the others with the version. Return it with
 * bd_served_exec_release. Any thread. */
int               bd_served_exec_acquire(bd_served *s, const bd_plan *plan, bd_exec **out,
                                         bd_error *err);
void              bd_served_exec_release(bd_served *s, bd_exec *e);
/* Per-model limits from config.json (or the daemon defaults). */
int               bd_served_queue_limit(const bd_served *s);
/* config.json's max_batch_size: 0 = no batch dim (full shapes); N > 0 = every input's first
 * dim is the batch, at most N (Triton's convention; checked at load). */
int               bd_served_max_batch_size(const bd_served *s);
/* config.json's dynamic_batching as given (enabled = false without it), and whether S
 * gathers requests into batches: the key was given and the load saw every output follow the
 * input batch on dim 0. */
const bd_batching_config *bd_served_batching_config(const bd_served *s);
bool              bd_served_batches(const bd_served *s);
/* The batch sizes S's batcher forms, ascending (their plans were compiled at load), into
 * *SIZES (S's own array); returns their count, 0 when S does not batch. */
int               bd_served_batch_ladder(const bd_served *s, const int **sizes);
/* The class labels of graph output OUTPUT (config.json "labels"), NULL when it has none. */
struct bd_labels;
const struct bd_labels *bd_served_labels(const bd_served *s, size_t output);

#endif
