/* Families are written one after the other (HELP, TYPE, then every sample of the family),
 * as the format requires: all lines of one metric family must be contiguous. braid's own
 * braid_* families come first, then Triton's nv_* names for the same counters
 * (prometheus_triton.c). */
#include "daemon/stats/prometheus.h"
#include "daemon/stats/prometheus_text.h"
#include "daemon/stats/prometheus_triton.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/engines.h"
#include "core/error.h"

static double seconds(uint64_t ns) { return (double)ns / 1e9; }

static void histogram(FILE *f, const bd_model_view *m, const char *phase, const bd_histogram *h)
{
    /* The buckets are read one by one while workers may be observing: _count is the sum
     * actually read, so +Inf == _count always holds, as the format requires. */
    uint64_t cum = 0;
    for (int b = 0; b < BD_HIST_BUCKETS; b++) {
        cum += prom_load(&h->bucket[b]);
        prom_open_model(f, "braid_request_duration_seconds_bucket", m);
        fputc(',', f);
        prom_put_label(f, "phase", phase);
        if (b < BD_HIST_BUCKETS - 1)
            fprintf(f, ",le=\"%g\"} %" PRIu64 "\n", bd_hist_bounds_s[b], cum);
        else
            fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n", cum);
    }
    prom_open_model(f, "braid_request_duration_seconds_sum", m);
    fputc(',', f);
    prom_put_label(f, "phase", phase);
    fprintf(f, "} %.9f\n", seconds(prom_load(&h->sum_ns)));
    prom_open_model(f, "braid_request_duration_seconds_count", m);
    fputc(',', f);
    prom_put_label(f, "phase", phase);
    fprintf(f, "} %" PRIu64 "\n", cum);
}

/* Per-model counter/gauge families with only {model,version}. */
typedef enum { G_INFERENCES, G_EXECUTIONS, G_INFLIGHT, G_QUEUED,
               G_PLANS, G_PLAN_BYTES, G_PLAN_COMPILES, G_PLAN_EVICTIONS } model_gauge;

static void model_family(FILE *f, const bd_status_view *v, const char *name, const char *type,
                         const char *help, model_gauge which)
{
    prom_family(f, name, type, help);
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        prom_open_model(f, name, m);
        int64_t val = 0;
        switch (which) {
        case G_INFERENCES: val = (int64_t)prom_load(&m->stats->inference_count); break;
        case G_EXECUTIONS: val = (int64_t)prom_load(&m->stats->execution_count); break;
        case G_INFLIGHT:   val = atomic_load_explicit(&m->stats->in_flight, memory_order_relaxed); break;
        case G_QUEUED:     val = atomic_load_explicit(&m->stats->queued, memory_order_relaxed); break;
        case G_PLANS:      val = (int64_t)m->plan_cache.plans; break;
        case G_PLAN_BYTES: val = (int64_t)m->plan_cache.bytes; break;
        case G_PLAN_COMPILES:  val = (int64_t)m->plan_cache.compiles; break;
        case G_PLAN_EVICTIONS: val = (int64_t)m->plan_cache.evictions; break;
        }
        if (val < 0)       /* a gauge racing its own decrement never shows below zero */
            val = 0;
        fprintf(f, "} %" PRId64 "\n", val);
    }
}

static void render(FILE *f, const bd_status_view *v)
{
    const bd_server_stats *s = v->server;

    prom_family(f, "braid_up", "gauge", "1 while braidd is running.");
    fputs("braid_up 1\n", f);

    prom_family(f, "braid_process_start_time_seconds", "gauge",
           "Start time of the process since the Unix epoch, in seconds.");
    fprintf(f, "braid_process_start_time_seconds %.3f\n", s ? (double)s->start_ms / 1e3 : 0.0);

    prom_family(f, "braid_process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
    fprintf(f, "braid_process_resident_memory_bytes %" PRIu64 "\n", v->process.rss_bytes);

    prom_family(f, "braid_process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
    fprintf(f, "braid_process_virtual_memory_bytes %" PRIu64 "\n", v->process.vm_bytes);

    prom_family(f, "braid_rpc_total", "counter", "gRPC calls received, of any method.");
    fprintf(f, "braid_rpc_total %" PRIu64 "\n", s ? prom_load(&s->rpc_total) : 0);

    prom_family(f, "braid_rpc_unimplemented_total", "counter",
           "gRPC calls to a method braidd does not serve (answered UNIMPLEMENTED).");
    fprintf(f, "braid_rpc_unimplemented_total %" PRIu64 "\n", s ? prom_load(&s->rpc_unimplemented) : 0);

    prom_family(f, "braid_model_loads_total", "counter", "Model loads and reloads by result.");
    fprintf(f, "braid_model_loads_total{result=\"ok\"} %" PRIu64 "\n", s ? prom_load(&s->loads_ok) : 0);
    fprintf(f, "braid_model_loads_total{result=\"failed\"} %" PRIu64 "\n",
            s ? prom_load(&s->loads_failed) : 0);

    prom_family(f, "braid_unloads_total", "counter", "Model unloads.");
    fprintf(f, "braid_unloads_total %" PRIu64 "\n", s ? prom_load(&s->unloads) : 0);

    size_t ready = 0;
    for (size_t i = 0; i < v->n_models; i++)
        ready += v->models[i].state == BD_STATE_READY;
    prom_family(f, "braid_models_loaded", "gauge", "Models in state READY.");
    fprintf(f, "braid_models_loaded %zu\n", ready);

    prom_family(f, "braid_model_state", "gauge",
           "1 for the state each model is in, 0 for the other states.");
    for (size_t i = 0; i < v->n_models; i++) {
        for (int st = BD_STATE_UNAVAILABLE; st <= BD_STATE_UNLOADING; st++) {
            fputs("braid_model_state{", f);
            prom_put_label(f, "model", v->models[i].name);
            fputc(',', f);
            prom_put_label(f, "state", bd_model_state_name(st));
            fprintf(f, "} %d\n", v->models[i].state == st);
        }
    }

    prom_family(f, "braid_requests_total", "counter",
           "Inference requests by outcome (success, or the reason they failed).");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        prom_open_model(f, "braid_requests_total", m);
        fprintf(f, ",outcome=\"success\"} %" PRIu64 "\n", prom_load(&m->stats->success.count));
        for (int r = 0; r < BD_FAIL_REASONS; r++) {
            prom_open_model(f, "braid_requests_total", m);
            fputc(',', f);
            prom_put_label(f, "outcome", bd_fail_reason_name((bd_fail_reason)r));
            fprintf(f, "} %" PRIu64 "\n", prom_load(&m->stats->failures[r]));
        }
    }

    prom_family(f, "braid_request_duration_seconds", "histogram",
           "Request latency: time queued, time computing, and total time in braidd.");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        histogram(f, m, "queue", &m->stats->queue_hist);
        histogram(f, m, "compute", &m->stats->compute_hist);
        histogram(f, m, "total", &m->stats->total_hist);
    }

    model_family(f, v, "braid_inference_count_total", "counter",
                 "Inferences run (batch sizes summed).", G_INFERENCES);
    model_family(f, v, "braid_execution_count_total", "counter",
                 "Model executions.", G_EXECUTIONS);
    model_family(f, v, "braid_inflight_requests", "gauge",
                 "Requests running on a worker now.", G_INFLIGHT);
    model_family(f, v, "braid_queued_requests", "gauge",
                 "Requests waiting in the model's queue now.", G_QUEUED);
    model_family(f, v, "braid_plan_cache_plans", "gauge",
                 "Plans (one per distinct input shape set) in the model's cache now.", G_PLANS);
    model_family(f, v, "braid_plan_cache_bytes", "gauge",
                 "Estimated memory of the cached plans, in bytes.", G_PLAN_BYTES);
    model_family(f, v, "braid_plan_compiles_total", "counter",
                 "Plans compiled (each distinct input shape set not in the cache).", G_PLAN_COMPILES);
    model_family(f, v, "braid_plan_evictions_total", "counter",
                 "Plans evicted from the cache to stay within its bounds.", G_PLAN_EVICTIONS);

    prom_family(f, "braid_shm_output_bytes_total", "counter",
           "Output bytes sent to client shared memory: written there by the run itself "
           "(how=\"in_place\") or copied there after it (how=\"copied\").");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        prom_open_model(f, "braid_shm_output_bytes_total", m);
        fprintf(f, ",how=\"in_place\"} %" PRIu64 "\n", prom_load(&m->stats->shm_out_in_place_bytes));
        prom_open_model(f, "braid_shm_output_bytes_total", m);
        fprintf(f, ",how=\"copied\"} %" PRIu64 "\n", prom_load(&m->stats->shm_out_copied_bytes));
    }

    size_t nb = 0;
    const bd_backend *const *backends = bd_backends(&nb);
    if (nb > BD_MAX_BACKENDS)
        nb = BD_MAX_BACKENDS;
    prom_family(f, "braid_backend_seconds_total", "counter",
           "Time spent running each backend's subgraphs, in seconds.");
    for (size_t i = 0; i < v->n_models; i++) {
        const bd_model_view *m = &v->models[i];
        if (!m->stats)
            continue;
        for (size_t b = 0; b < nb; b++) {
            prom_open_model(f, "braid_backend_seconds_total", m);
            fputc(',', f);
            prom_put_label(f, "backend", backends[b]->name);
            fprintf(f, "} %.9f\n", seconds(prom_load(&m->stats->backend_ns[b])));
        }
    }

    prom_render_triton(f, v);
}

int bd_prometheus_render(const bd_status_view *view, char **out, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    /* open_memstream grows the buffer as fprintf writes */
    FILE *f = open_memstream(&buf, &n);
    if (!f) {
        *out = NULL;
        *len = 0;
        return BD_ENOMEM;
    }
    render(f, view);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        *out = NULL;
        *len = 0;
        return BD_ENOMEM;
    }
    *out = buf;
    *len = n;
    return 0;
}
