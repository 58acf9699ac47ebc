/* A batching version's ladder (registry_internal.h, served_plan_ladder): the batch sizes its
 * batcher may form (batch_form.h, bd_batch_ladder), planned at load before the version turns
 * ready, so that no batch compiles a plan on the request path (a compile of MobileNetV2 takes
 * longer than hundreds of runs). Sizes are planned smallest first, and the first that cannot
 * be planned ends the ladder: a larger batch needs more memory (max_run_memory_bytes) and
 * more of a bounded plan cache, whose bounds the ladder never exceeds (a compile that evicts
 * a plan ends it too). What is dropped is logged; the load does not fail for it. */
#include <stdio.h>

#include "daemon/batch_form.h"
#include "daemon/log.h"
#include "daemon/registry_internal.h"

/* "1 2 4 8" from SIZES[0..N) into BUF. */
static const char *sizes_str(const int *sizes, int n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < size; i++) {
        int w = snprintf(buf + at, size - at, "%s%d", i ? " " : "", sizes[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

void served_plan_ladder(bd_served *s, DLTensor *inputs, size_t n, const atomic_bool *cancel)
{
    const bd_batching_config *bc = &s->config.batching;
    int want[BD_BATCH_MAX_LADDER];
    int n_want = bd_batch_ladder(s->batch_max_rows, bc->preferred, bc->n_preferred, want);
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(s->model, &st);
    char buf[512];
    if (st.max_plans > 0 && (size_t)n_want > st.max_plans) {
        bd_log(BD_LOG_WARN, s->name, s->version, "dynamic_batching: batch sizes %s are not "
               "formed: plan_cache_max_plans (%zu) holds fewer plans than the ladder needs",
               sizes_str(want + st.max_plans, n_want - (int)st.max_plans, buf, sizeof buf),
               st.max_plans);
        n_want = (int)st.max_plans;
    }
    int64_t base = inputs[0].shape[0];
    uint64_t t0 = bd_now_ns();
    s->n_batch_ladder = 0;
    for (int k = 0; k < n_want && !(cancel && atomic_load(cancel)); k++) {
        bd_error err = {0};
        const bd_plan *plan = NULL;
        uint64_t evictions = st.evictions;
        for (size_t i = 0; i < n; i++)
            inputs[i].shape[0] = want[k];
        int rc = bd_model_plan_acquire(s->model, inputs, n, &plan, &err);
        bd_plan_release(plan);
        bd_model_plan_cache_stats(s->model, &st);
        if (rc == 0 && st.evictions > evictions)
            rc = bd_error_set(&err, BD_ENOMEM, "the plan cache's bounds (plan_cache_max_plans %zu, "
                              "plan_cache_max_bytes %zu) hold no more plans", st.max_plans, st.max_bytes);
        if (rc) {
            bd_log(BD_LOG_WARN, s->name, s->version, "dynamic_batching: batch sizes %s are not "
                   "formed: planning %d rows failed: %s",
                   sizes_str(want + k, n_want - k, buf, sizeof buf), want[k], err.msg);
            break;
        }
        s->batch_ladder[s->n_batch_ladder++] = want[k];
    }
    for (size_t i = 0; i < n; i++)
        inputs[i].shape[0] = base;
    bd_log(BD_LOG_INFO, s->name, s->version, "dynamic_batching: batch sizes %s planned in %.1f ms",
           sizes_str(s->batch_ladder, s->n_batch_ladder, buf, sizeof buf),
           (double)(bd_now_ns() - t0) / 1e6);
}
