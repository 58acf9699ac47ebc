#include "daemon/stats/status_json.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "runtime/engines.h"
#include "core/error.h"

/* Counters are uint64; JSON numbers are doubles in cJSON, exact up to 2^53 — ample for
 * counts and for nanosecond totals up to ~104 days of summed compute. */
static uint64_t load(const _Atomic uint64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static cJSON *duration(const bd_duration *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "count", (double)load(&d->count));
    cJSON_AddNumberToObject(o, "ns", (double)load(&d->ns));
    return o;
}

static cJSON *names(bd_value *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]->name));
    return a;
}

/* Every subgraph (backend, node count, boundary tensors) and every node off oneDNN, with why. */
static void partition_report(cJSON *o, const bd_partition_report *r)
{
    cJSON_AddNumberToObject(o, "kernel_steps", (double)r->run.steps);
    cJSON_AddNumberToObject(o, "reorders", (double)r->run.reorders);
    cJSON_AddNumberToObject(o, "reorder_bytes", (double)r->run.reorder_bytes);
    cJSON_AddNumberToObject(o, "ref_kernels", (double)r->run.ref_steps);
    cJSON_AddNumberToObject(o, "products", (double)r->run.products);
    cJSON_AddNumberToObject(o, "int8_products", (double)r->run.int8_products);
    cJSON *sgs = cJSON_AddArrayToObject(o, "subgraphs");
    for (size_t i = 0; i < r->n_subgraphs; i++) {
        const bd_subgraph_info *s = &r->subgraphs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "backend", s->backend);
        cJSON_AddNumberToObject(j, "nodes", (double)s->n_nodes);
        cJSON_AddNumberToObject(j, "kernel_steps", (double)s->run.steps);
        cJSON_AddNumberToObject(j, "reorders", (double)s->run.reorders);
        cJSON_AddNumberToObject(j, "reorder_bytes", (double)s->run.reorder_bytes);
        cJSON_AddNumberToObject(j, "ref_kernels", (double)s->run.ref_steps);
        cJSON_AddNumberToObject(j, "products", (double)s->run.products);
        cJSON_AddNumberToObject(j, "int8_products", (double)s->run.int8_products);
        if (s->run.impls)
            cJSON_AddStringToObject(j, "implementations", s->run.impls);
        cJSON_AddItemToObject(j, "inputs", names(s->inputs, s->n_inputs));
        cJSON_AddItemToObject(j, "outputs", names(s->outputs, s->n_outputs));
        cJSON_AddItemToArray(sgs, j);
    }
    cJSON *fb = cJSON_AddArrayToObject(o, "fallback_nodes");
    for (size_t i = 0; i < r->n_fallback; i++) {
        const bd_fallback_info *f = &r->fallback[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "node", f->node);
        cJSON_AddStringToObject(j, "op", f->op_type);
        cJSON_AddStringToObject(j, "backend", f->backend);
        cJSON_AddStringToObject(j, "reason", f->reason);
        cJSON_AddStringToObject(j, "detail", f->detail);
        cJSON_AddItemToArray(fb, j);
    }
}

static cJSON *partition(const bd_partition_summary *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "nodes_imported", (double)p->nodes_imported);
    cJSON_AddNumberToObject(o, "nodes_planned", (double)p->nodes_planned);
    cJSON_AddNumberToObject(o, "steps", (double)p->steps);
    cJSON_AddNumberToObject(o, "fused_composites", (double)p->fused_composites);
    cJSON *b = cJSON_AddObjectToObject(o, "backends");
    size_t nb = 0;
    const bd_backend *const *backends = bd_backends(&nb);
    for (size_t i = 0; i < nb && i < BD_MAX_BACKENDS; i++)
        cJSON_AddNumberToObject(b, backends[i]->name, (double)p->nodes_per_backend[i]);
    cJSON_AddNumberToObject(o, "load_ms", p->load_ms);
    if (p->plan)
        partition_report(o, bd_plan_partition(p->plan));
    return o;
}

static cJSON *queue(const bd_model_view *m)
{
    cJSON *o = cJSON_CreateObject();
    int64_t q = atomic_load_explicit(&m->stats->queued, memory_order_relaxed);
    int64_t r = atomic_load_explicit(&m->stats->in_flight, memory_order_relaxed);
    cJSON_AddNumberToObject(o, "queued", (double)(q < 0 ? 0 : q));
    cJSON_AddNumberToObject(o, "in_flight", (double)(r < 0 ? 0 : r));
    cJSON_AddNumberToObject(o, "limit", m->queue_limit);
    return o;
}

static cJSON *plan_cache(const bd_plan_cache_stats *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "plans", (double)c->plans);
    cJSON_AddNumberToObject(o, "bytes", (double)c->bytes);
    cJSON_AddNumberToObject(o, "max_plans", (double)c->max_plans);
    cJSON_AddNumberToObject(o, "max_bytes", (double)c->max_bytes);
    cJSON_AddNumberToObject(o, "hits", (double)c->hits);
    cJSON_AddNumberToObject(o, "compiles", (double)c->compiles);
    cJSON_AddNumberToObject(o, "evictions", (double)c->evictions);
    cJSON_AddNumberToObject(o, "weights_bytes", (double)c->consts_bytes);
    cJSON_AddNumberToObject(o, "weights_shared", (double)c->consts_shared);
    cJSON_AddNumberToObject(o, "weights_shared_bytes", (double)c->consts_shared_bytes);
    return o;
}

static cJSON *stats(const bd_model_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "inference_count", (double)load(&s->inference_count));
    cJSON_AddNumberToObject(o, "execution_count", (double)load(&s->execution_count));
    cJSON_AddNumberToObject(o, "last_inference_ms", (double)load(&s->last_inference_ms));
    cJSON_AddItemToObject(o, "success", duration(&s->success));
    cJSON_AddItemToObject(o, "fail", duration(&s->fail));
    cJSON_AddItemToObject(o, "queue", duration(&s->queue));
    cJSON_AddItemToObject(o, "compute_input", duration(&s->compute_input));
    cJSON_AddItemToObject(o, "compute_infer", duration(&s->compute_infer));
    cJSON_AddItemToObject(o, "compute_output", duration(&s->compute_output));
    cJSON *f = cJSON_AddObjectToObject(o, "failures");
    for (int r = 0; r < BD_FAIL_REASONS; r++)
        cJSON_AddNumberToObject(f, bd_fail_reason_name((bd_fail_reason)r),
                                (double)load(&s->failures[r]));
    cJSON *b = cJSON_AddObjectToObject(o, "backend_ns");
    size_t nb = 0;
    const bd_backend *const *backends = bd_backends(&nb);
    for (size_t i = 0; i < nb && i < BD_MAX_BACKENDS; i++)
        cJSON_AddNumberToObject(b, backends[i]->name, (double)load(&s->backend_ns[i]));
    return o;
}

static cJSON *model(const bd_model_view *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name ? m->name : "");
    cJSON_AddStringToObject(o, "version", m->version ? m->version : "");
    cJSON_AddStringToObject(o, "state", bd_model_state_name(m->state));
    cJSON_AddStringToObject(o, "reason", m->reason ? m->reason : "");
    if (!m->stats) {
        /* nothing serves: the same keys, null, so clients need not test for presence */
        cJSON_AddNullToObject(o, "platform");
        cJSON_AddNullToObject(o, "partition");
        cJSON_AddNullToObject(o, "queue");
        cJSON_AddNullToObject(o, "stats");
        cJSON_AddNullToObject(o, "plan_cache");
        cJSON_AddNullToObject(o, "batch_ladder");
        return o;
    }
    if (m->platform)
        cJSON_AddStringToObject(o, "platform", m->platform);
    else
        cJSON_AddNullToObject(o, "platform");
    if (m->summary)
        cJSON_AddItemToObject(o, "partition", partition(m->summary));
    else
        cJSON_AddNullToObject(o, "partition");
    cJSON_AddItemToObject(o, "queue", queue(m));
    cJSON_AddItemToObject(o, "stats", stats(m->stats));
    cJSON_AddItemToObject(o, "plan_cache", plan_cache(&m->plan_cache));
    cJSON *ladder = cJSON_AddArrayToObject(o, "batch_ladder");
    for (int i = 0; ladder && m->batch_ladder && i < m->n_batch_ladder; i++)
        cJSON_AddItemToArray(ladder, cJSON_CreateNumber(m->batch_ladder[i]));
    return o;
}

static cJSON *document(const bd_status_view *v)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *srv = cJSON_AddObjectToObject(root, "server");
    cJSON_AddStringToObject(srv, "name", "braid");
    cJSON_AddStringToObject(srv, "version", v->version ? v->version : "");
    const bd_server_stats *s = v->server;
    double uptime = 0;
    if (s && v->now_ms > s->start_ms)
        uptime = (double)(v->now_ms - s->start_ms) / 1e3;
    cJSON_AddNumberToObject(srv, "uptime_s", uptime);
    cJSON_AddBoolToObject(srv, "ready", v->ready);
    cJSON_AddNumberToObject(srv, "rpc_total", s ? (double)load(&s->rpc_total) : 0);
    cJSON_AddNumberToObject(srv, "rpc_unimplemented", s ? (double)load(&s->rpc_unimplemented) : 0);
    cJSON *loads = cJSON_AddObjectToObject(srv, "loads");
    cJSON_AddNumberToObject(loads, "ok", s ? (double)load(&s->loads_ok) : 0);
    cJSON_AddNumberToObject(loads, "failed", s ? (double)load(&s->loads_failed) : 0);
    cJSON_AddNumberToObject(srv, "unloads", s ? (double)load(&s->unloads) : 0);
    cJSON *mem = cJSON_AddObjectToObject(srv, "memory");
    cJSON_AddNumberToObject(mem, "rss_bytes", (double)v->process.rss_bytes);
    cJSON_AddNumberToObject(mem, "rss_peak_bytes", (double)v->process.rss_peak_bytes);
    cJSON_AddNumberToObject(mem, "virtual_bytes", (double)v->process.vm_bytes);
    cJSON_AddNumberToObject(srv, "threads", v->process.threads);

    cJSON *models = cJSON_AddArrayToObject(root, "models");
    for (size_t i = 0; i < v->n_models; i++)
        cJSON_AddItemToArray(models, model(&v->models[i]));
    return root;
}

int bd_status_json_render(const bd_status_view *view, int pretty, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    cJSON *root = document(view);
    if (!root)
        return BD_ENOMEM;
    /* cJSON's builders ignore a NULL parent, so an allocation failure while building
     * loses only that part; a failed print is reported */
    char *text = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return BD_ENOMEM;
    *out = text;
    *len = strlen(text);
    return 0;
}
