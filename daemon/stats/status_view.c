#include "daemon/stats/status_view.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#ifndef BRAIDD_VERSION
#define BRAIDD_VERSION "unknown"
#endif

int bd_status_view_collect(bd_registry *reg, bd_status_view *out)
{
    memset(out, 0, sizeof *out);
    out->version = BRAIDD_VERSION;
    out->ready   = bd_registry_ready(reg);
    out->now_ms  = bd_wall_ms();
    out->server  = bd_registry_server_stats(reg);
    bd_process_stats_read(&out->process);   /* zeros if /proc is unreadable */

    bd_registry_entry *e = NULL;
    size_t n = bd_registry_snapshot(reg, &e);
    out->entries_   = e;
    out->n_entries_ = n;
    out->n_models   = n;
    if (n == 0)
        return 0;
    bd_model_view *v = calloc(n, sizeof *v);
    if (!v) {
        out->n_models = 0;
        return BD_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        v[i].name    = e[i].name;
        v[i].version = e[i].version;
        v[i].state   = e[i].state;
        v[i].reason  = e[i].reason;
        if (e[i].served) {
            v[i].platform    = bd_served_platform(e[i].served);
            v[i].stats       = bd_served_stats(e[i].served);
            v[i].summary     = bd_served_summary(e[i].served);
            v[i].queue_limit = bd_served_queue_limit(e[i].served);
            bd_model_plan_cache_stats(bd_served_model(e[i].served), &v[i].plan_cache);
            v[i].n_batch_ladder = bd_served_batch_ladder(e[i].served, &v[i].batch_ladder);
        }
    }
    out->views_  = v;
    out->models  = v;
    return 0;
}

void bd_status_view_release(bd_status_view *v)
{
    if (!v)
        return;
    if (v->entries_)
        bd_registry_snapshot_free(v->entries_, v->n_entries_);
    free(v->views_);
    memset(v, 0, sizeof *v);
}
