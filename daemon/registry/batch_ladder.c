/* A batching version's ladder (batch_ladder.h, served_plan_ladder): the batch sizes its
 * batcher may form (bd_batch_ladder), planned at load before the version turns
 * ready, so that no batch compiles a plan on the request path (a compile of MobileNetV2 takes
 * longer than hundreds of runs). Sizes are planned smallest first, and the first that cannot
 * be planned ends the ladder: a larger batch needs more memory (max_run_memory_bytes) and
 * more of a bounded plan cache, whose bounds the ladder never exceeds (a compile that evicts
 * a plan ends it too). What is dropped is logged; the load does not fail for it.
 *
 * Measured, too (dynamic_batching.measure_ladder, on by default): each planned size runs
 * LADDER_RUNS times on zeroed inputs, and a size whose time per row (the fastest run: other
 * loads and compiles only ever slow a run down) is not at least LADDER_MIN_GAIN below the
 * best smaller size's is dropped: on a CPU a compute-bound model often runs a batch hardly
 * faster per row than one request, and in a busy server such a batch only costs throughput
 * and waiting. One load measures at a time. The runs also touch each size's memory once
 * before the first request does. Timing stops after LADDER_BUDGET_NS per load; larger sizes
 * then follow the last measured one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/log.h"
#include "daemon/registry/batch_ladder.h"
#include "daemon/registry/registry_served_internal.h"

#define LADDER_RUNS      5                          /* timed, after one untimed */
#define LADDER_MIN_GAIN  0.10                       /* 10% cheaper per row than smaller ones */
#define LADDER_BUDGET_NS (UINT64_C(2000000000))     /* measuring, per load */

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

static pthread_mutex_t measuring = PTHREAD_MUTEX_INITIALIZER;   /* one load at a time */

/* Nanoseconds per row of PLAN's runs (INPUTS' shapes, K rows), the fastest of LADDER_RUNS
 * after one untimed run, on zeroed inputs; 0 when it cannot be measured (then it is logged). */
static uint64_t ns_per_row(bd_served *s, const bd_plan *plan, const DLTensor *inputs, size_t n, int k)
{
    DLTensor *in = calloc(n ? n : 1, sizeof *in);
    void **buf = calloc(n ? n : 1, sizeof *buf);
    bd_exec *exec = NULL;
    bd_error err = {0};
    uint64_t fastest = UINT64_MAX;
    int rc = in && buf ? 0 : bd_error_set(&err, BD_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        in[i] = inputs[i];
        in[i].byte_offset = 0;
        in[i].strides = NULL;
        size_t bytes = bd_dl_tensor_bytes(&in[i]);
        in[i].data = buf[i] = calloc(1, bytes ? bytes : 1);
        if (!buf[i])
            rc = bd_error_set(&err, BD_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = bd_served_exec_acquire(s, plan, &exec, &err);
    pthread_mutex_lock(&measuring);
    for (int r = -1; !rc && r < LADDER_RUNS; r++) {
        uint64_t t0 = bd_now_ns();
        rc = bd_exec_run(exec, in, n, &err);
        uint64_t dt = bd_now_ns() - t0;
        if (r >= 0 && dt < fastest)
            fastest = dt;
    }
    pthread_mutex_unlock(&measuring);
    if (exec)
        bd_served_exec_release(s, exec);
    for (size_t i = 0; buf && i < n; i++)
        free(buf[i]);
    free(buf);
    free(in);
    if (rc) {
        bd_log(BD_LOG_WARN, s->name, s->version, "dynamic_batching: batch size %d not measured: %s",
               k, err.msg);
        return 0;
    }
    uint64_t per_row = fastest / (uint64_t)k;
    return per_row ? per_row : 1;
}

static int insert_sorted(int *out, int n, int size)
{
    int at = 0;
    while (at < n && out[at] < size)
        at++;
    if (at < n && out[at] == size)
        return n;
    for (int i = n; i > at; i--)
        out[i] = out[i - 1];
    out[at] = size;
    return n + 1;
}

int bd_batch_ladder(int max_rows, const int *preferred, int n_preferred, int *out)
{
    int n = 0;
    for (int64_t p = 1; p < max_rows && n < 31; p *= 2)
        n = insert_sorted(out, n, (int)p);
    for (int i = 0; i < n_preferred && i < BD_BATCH_MAX_PREFERRED; i++)
        if (preferred[i] >= 1 && preferred[i] <= max_rows)
            n = insert_sorted(out, n, preferred[i]);
    if (max_rows >= 1)
        n = insert_sorted(out, n, max_rows);
    return n;
}

void served_plan_ladder(bd_served *s, DLTensor *inputs, size_t n, const atomic_bool *cancel)
{
    const bd_batching_config *bc = &s->config.batching;
    int want[BD_BATCH_MAX_LADDER], slow[BD_BATCH_MAX_LADDER], n_slow = 0;
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
    uint64_t t0 = bd_now_ns(), best = 0, measuring_ns = 0;
    bool measure = bc->measure_ladder, last_kept = true;
    s->n_batch_ladder = 0;
    for (int k = 0; k < n_want && !(cancel && atomic_load(cancel)); k++) {
        bd_error err = {0};
        const bd_plan *plan = NULL;
        uint64_t evictions = st.evictions;
        for (size_t i = 0; i < n; i++)
            inputs[i].shape[0] = want[k];
        int rc = bd_model_plan_acquire(s->model, inputs, n, &plan, &err);
        bd_model_plan_cache_stats(s->model, &st);
        if (rc == 0 && st.evictions > evictions)
            rc = bd_error_set(&err, BD_ENOMEM, "the plan cache's bounds (plan_cache_max_plans %zu, "
                              "plan_cache_max_bytes %zu) hold no more plans", st.max_plans, st.max_bytes);
        if (rc) {
            bd_plan_release(plan);
            bd_log(BD_LOG_WARN, s->name, s->version, "dynamic_batching: batch sizes %s are not "
                   "formed: planning %d rows failed: %s",
                   sizes_str(want + k, n_want - k, buf, sizeof buf), want[k], err.msg);
            break;
        }
        bool keep = last_kept;              /* unmeasured: follows the last measured size */
        if (measure && measuring_ns < LADDER_BUDGET_NS) {
            uint64_t m0 = bd_now_ns();
            uint64_t per_row = ns_per_row(s, plan, inputs, n, want[k]);
            measuring_ns += bd_now_ns() - m0;
            keep = s->n_batch_ladder == 0 || per_row == 0 ||
                   (double)per_row <= (1.0 - LADDER_MIN_GAIN) * (double)best;
            if (per_row && (!best || per_row < best))
                best = per_row;
            last_kept = keep;
        }
        bd_plan_release(plan);
        if (keep)
            s->batch_ladder[s->n_batch_ladder++] = want[k];
        else
            slow[n_slow++] = want[k];
    }
    for (size_t i = 0; i < n; i++)
        inputs[i].shape[0] = base;
    if (n_slow)
        bd_log(BD_LOG_INFO, s->name, s->version, "dynamic_batching: batch sizes %s are not formed: "
               "not %.0f%% faster per row than a smaller batch (measured at load; "
               "measure_ladder: false keeps them)", sizes_str(slow, n_slow, buf, sizeof buf),
               100 * LADDER_MIN_GAIN);
    bd_log(BD_LOG_INFO, s->name, s->version, "dynamic_batching: batch sizes %s planned in %.1f ms",
           sizes_str(s->batch_ladder, s->n_batch_ladder, buf, sizeof buf),
           (double)(bd_now_ns() - t0) / 1e6);
}
