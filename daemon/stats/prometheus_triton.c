/* Triton's per-model metric families, under Triton's exact names, types, help texts and
 * labels (triton-inference-server/core src/metrics.cc and metric_model_reporter.cc), so a
 * Grafana dashboard or an autoscaler written for Triton reads braidd unchanged. They are
 * the counters braid_* already shows, in Triton's units: durations are cumulative
 * microseconds, the load time a gauge in seconds. docs/operations.md maps each to its
 * braid_* twin and says where the meanings differ. */
#include "daemon/stats/prometheus_triton.h"

#include <inttypes.h>

#include "daemon/stats/prometheus_text.h"

/* Per-model counters with only {model,version}. */
typedef enum {
    T_SUCCESS, T_INFERENCES, T_EXECUTIONS,
    T_REQUEST_US, T_QUEUE_US, T_INPUT_US, T_INFER_US, T_OUTPUT_US,
} triton_counter;

static uint64_t counter_value(const bd_model_stats *st, triton_counter which)
{
    switch (which) {
    case T_SUCCESS:    return prom_load(&st->success.count);
    case T_INFERENCES: return prom_load(&st->inference_count);
    case T_EXECUTIONS: return prom_load(&st->execution_count);
    case T_REQUEST_US: return prom_load(&st->success.ns) / 1000;
    case T_QUEUE_US:   return prom_load(&st->queue.ns) / 1000;
    case T_INPUT_US:   return prom_load(&st->compute_input.ns) / 1000;
    case T_INFER_US:   return prom_load(&st->compute_infer.ns) / 1000;
    case T_OUTPUT_US:  return prom_load(&st->compute_output.ns) / 1000;
    }
    return 0;
}

static void counter_family(FILE *f, const bd_status_view *v, const char *name, const char *help,
                           triton_counter which)
{
    prom_family(f, name, "counter", help);
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        prom_open_model(f, name, m);
        fprintf(f, "} %" PRIu64 "\n", counter_value(m->stats, which));
    }
}

/* nv_inference_request_failure{model,reason,version}: every reason, zero or not, as Triton
 * creates all four series when a model loads. */
static void failure_family(FILE *f, const bd_status_view *v)
{
    static const char name[] = "nv_inference_request_failure";
    prom_family(f, name, "counter", "Number of failed inference requests, all batch sizes");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        uint64_t by_reason[BD_TRITON_REASONS] = {0};
        for (int r = 0; r < BD_FAIL_REASONS; r++)
            by_reason[bd_fail_reason_triton((bd_fail_reason)r)] += prom_load(&m->stats->failures[r]);
        for (int t = 0; t < BD_TRITON_REASONS; t++) {
            fprintf(f, "%s{", name);        /* Triton's label order: model, reason, version */
            prom_put_label(f, "model", m->name);
            fputc(',', f);
            prom_put_label(f, "reason", bd_triton_reason_name((bd_triton_reason)t));
            fputc(',', f);
            prom_put_label(f, "version", m->version);
            fprintf(f, "} %" PRIu64 "\n", by_reason[t]);
        }
    }
}

void prom_render_triton(FILE *f, const bd_status_view *v)
{
    counter_family(f, v, "nv_inference_request_success",
                   "Number of successful inference requests, all batch sizes", T_SUCCESS);
    failure_family(f, v);
    counter_family(f, v, "nv_inference_count",
                   "Number of inferences performed (does not include cached requests)",
                   T_INFERENCES);
    counter_family(f, v, "nv_inference_exec_count",
                   "Number of model executions performed (does not include cached requests)",
                   T_EXECUTIONS);
    counter_family(f, v, "nv_inference_request_duration_us",
                   "Cumulative inference request duration in microseconds (includes cached requests)",
                   T_REQUEST_US);
    counter_family(f, v, "nv_inference_queue_duration_us",
                   "Cumulative inference queuing duration in microseconds (includes cached requests)",
                   T_QUEUE_US);
    counter_family(f, v, "nv_inference_compute_input_duration_us",
                   "Cumulative compute input duration in microseconds (does not include cached requests)",
                   T_INPUT_US);
    counter_family(f, v, "nv_inference_compute_infer_duration_us",
                   "Cumulative compute inference duration in microseconds (does not include cached requests)",
                   T_INFER_US);
    counter_family(f, v, "nv_inference_compute_output_duration_us",
                   "Cumulative inference compute output duration in microseconds (does not include "
                   "cached requests)", T_OUTPUT_US);

    prom_family(f, "nv_inference_pending_request_count", "gauge",
                "Instantaneous number of pending requests awaiting execution per-model.");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        int64_t queued = atomic_load_explicit(&m->stats->queued, memory_order_relaxed);
        prom_open_model(f, "nv_inference_pending_request_count", m);
        fprintf(f, "} %" PRId64 "\n", queued > 0 ? queued : 0);   /* never below zero */
    }

    prom_family(f, "nv_model_load_duration_secs", "gauge", "Model load time in seconds");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats || !m->summary)
            continue;
        prom_open_model(f, "nv_model_load_duration_secs", m);
        fprintf(f, "} %.9f\n", m->summary->load_ms / 1e3);
    }
}
