/* A point-in-time view of the server for the status endpoint's renderers (prometheus.h,
 * status_json.h). The renderers read only this view, never the registry, so they are
 * testable with hand-built views; bd_status_view_collect builds one from a live registry. */
#ifndef BD_DAEMON_STATS_STATUS_VIEW_H
#define BD_DAEMON_STATS_STATUS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/stats/metrics.h"
#include "daemon/stats/process_stats.h"
#include "daemon/registry/registry.h"

/* One model of the registry. Pointers stay valid as long as the view. */
typedef struct bd_model_view {
    const char *name;
    const char *version;                   /* served or loading version, "" if none */
    int         state;                     /* bd_model_state */
    const char *reason;                    /* why UNAVAILABLE, "" otherwise */
    /* The served version; all NULL / 0 when nothing serves. */
    const char                 *platform;  /* "onnx" */
    const bd_model_stats       *stats;
    const bd_partition_summary *summary;
    int                         queue_limit;
    bd_plan_cache_stats         plan_cache;   /* the served model's, when collected */
    const int                  *batch_ladder; /* batch sizes formed (bd_served_batch_ladder) */
    int                         n_batch_ladder;
} bd_model_view;

typedef struct bd_status_view {
    const char            *version;        /* braidd's version */
    bool                   ready;          /* bd_registry_ready() */
    uint64_t               now_ms;         /* wall clock when collected */
    const bd_server_stats *server;
    bd_process_stats       process;
    const bd_model_view   *models;
    size_t                 n_models;
    /* private: what collect() must release */
    bd_registry_entry     *entries_;
    size_t                 n_entries_;
    bd_model_view         *views_;
} bd_status_view;

/* Snapshot REG (retaining every served version) into OUT. Loop thread. Returns 0 or
 * BD_ENOMEM; release OUT with bd_status_view_release either way. */
int  bd_status_view_collect(bd_registry *reg, bd_status_view *out);
void bd_status_view_release(bd_status_view *v);

#endif
