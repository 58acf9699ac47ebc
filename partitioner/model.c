/* A model: its imported, rewritten graph and the cache of plans by input shapes. */
#include "model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/ort/ort_backend.h"
#include "../backends/registry.h"
#include "import.h"
#include "passes/partition.h"
#include "plan_build.h"
#include "shape/shape_infer.h"

typedef struct plan_entry {
    struct plan_entry *next;
    bd_plan           *plan;
} plan_entry;

struct bd_model {
    bd_graph        *graph;
    bd_model_options opts;        /* strings are the model's own copies */
    pthread_mutex_t  lock;        /* guards the plan cache */
    plan_entry      *plans;
};

/* Model-level preparation: invariants and the symbolic shapes of the signature. Rewrites
 * wait for a plan, where every shape is static (see plan.c). */
static int prepare(bd_graph *g, bd_error *err)
{
    int rc = bd_graph_validate(g, err);
    return rc ? rc : bd_shape_infer(g, false, err);
}

static int copy_string(const char *s, const char **out)
{
    *out = NULL;
    return s && !(*out = strdup(s)) ? BD_ENOMEM : 0;
}

/* Keep OPTS (own copies of its strings), check the engine name, and hand the ONNX Runtime
 * knobs to that engine (process-wide: ORT is loaded once). */
static int set_options(bd_model *m, const bd_model_options *opts, bd_error *err)
{
    m->opts = *opts;
    if (copy_string(opts->fallback_ops, &m->opts.fallback_ops) ||
        copy_string(opts->engine, &m->opts.engine) ||
        copy_string(opts->ort_library, &m->opts.ort_library))
        return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    size_t nb;
    const bd_backend *const *backends = bd_backends(&nb);
    bd_placement_opts popts = { .engine = opts->engine };
    int engine, rc = bd_place_engine(&popts, backends, nb, &engine, err);
    if (rc)
        return rc;
    if (opts->ort_library || opts->ort_threads > 0)
        return bd_ort_configure(opts->ort_library, opts->ort_threads, err);
    return 0;
}

int bd_model_from_graph(bd_graph *g, const bd_model_options *opts, bd_model **out, bd_error *err)
{
    int rc = prepare(g, err);
    if (rc) {
        bd_error_prefix(err, "model '%s': ", bd_graph_name(g));
        bd_graph_destroy(g);
        return rc;
    }
    bd_model *m = calloc(1, sizeof *m);
    if (!m) {
        bd_graph_destroy(g);
        return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    }
    m->graph = g;
    pthread_mutex_init(&m->lock, NULL);
    rc = opts ? set_options(m, opts, err) : 0;
    if (rc) {
        bd_error_prefix(err, "model '%s': ", bd_graph_name(g));
        bd_model_close(m);
        return rc;
    }
    *out = m;
    return 0;
}

int bd_model_open(const char *path, const bd_model_options *opts, bd_model **out, bd_error *err)
{
    bd_graph *g = NULL;
    int rc = bd_import_file(path, &g, err);   /* its messages already name PATH */
    if (rc)
        return rc;
    rc = bd_model_from_graph(g, opts, out, err);
    return rc ? bd_error_prefix(err, "%s: ", path) : 0;
}

void bd_model_close(bd_model *m)
{
    if (!m)
        return;
    for (plan_entry *e = m->plans, *next; e; e = next) {
        next = e->next;
        bd_plan_destroy(e->plan);
        free(e);
    }
    pthread_mutex_destroy(&m->lock);
    bd_graph_destroy(m->graph);
    free((char *)m->opts.fallback_ops);
    free((char *)m->opts.engine);
    free((char *)m->opts.ort_library);
    free(m);
}

const bd_graph *bd_model_graph(const bd_model *m) { return m->graph; }

/* Check INPUTS against the model's signature and extract their concrete shapes. */
static int signature_shapes(const bd_graph *g, const DLTensor *inputs, size_t n, bd_shape *shapes,
                            bd_error *err)
{
    if (n != bd_graph_num_inputs(g))
        return bd_error_set(err, BD_EINVAL, "model '%s' takes %zu input(s), got %zu",
                            bd_graph_name(g), bd_graph_num_inputs(g), n);
    for (size_t i = 0; i < n; i++) {
        const bd_value *v = bd_graph_input(g, i);
        const DLTensor *t = &inputs[i];
        char want[96];
        int dt = bd_dtype_from_dl(t->dtype);
        if (v->dtype == BD_DT_BOOL && dt == BD_DT_UINT8)
            dt = BD_DT_BOOL;
        if (dt != v->dtype)
            return bd_error_set(err, BD_EINVAL, "input '%s': expected %s, got %s", v->name,
                                bd_dtype_name(v->dtype), bd_dtype_name(dt));
        bool ok = t->ndim >= 0 && t->ndim <= BD_MAX_RANK && (v->shape.rank < 0 || t->ndim == v->shape.rank);
        shapes[i] = (bd_shape){ .rank = ok ? t->ndim : 0 };
        for (int d = 0; ok && d < t->ndim; d++) {
            shapes[i].dims[d] = t->shape[d];
            shapes[i].sym[d]  = NULL;
            ok = t->shape[d] >= 0 && (v->shape.rank < 0 || v->shape.dims[d] < 0 ||
                                      v->shape.dims[d] == t->shape[d]);
        }
        if (!ok) {
            char got[96];
            bd_shape gs = { .rank = t->ndim > 0 && t->ndim <= BD_MAX_RANK ? t->ndim : 0 };
            for (int d = 0; d < gs.rank; d++)
                gs.dims[d] = t->shape[d];
            return bd_error_set(err, BD_EINVAL, "input '%s': expected shape %s, got %s", v->name,
                                bd_shape_str(&v->shape, want, sizeof want),
                                bd_shape_str(&gs, got, sizeof got));
        }
    }
    return 0;
}

int bd_model_plan(bd_model *m, const DLTensor *inputs, size_t n_inputs, const bd_plan **out,
                  bd_error *err)
{
    bd_shape shapes[64];
    if (n_inputs > sizeof shapes / sizeof shapes[0])
        return bd_error_set(err, BD_EUNSUPPORTED, "models with more than 64 inputs are not supported");
    int rc = signature_shapes(m->graph, inputs, n_inputs, shapes, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&m->lock);
    for (plan_entry *e = m->plans; e; e = e->next)
        if (bd_plan_matches(e->plan, shapes, n_inputs)) {
            *out = e->plan;
            pthread_mutex_unlock(&m->lock);
            return 0;
        }
    bd_plan *p = NULL;
    plan_entry *e = calloc(1, sizeof *e);
    rc = e ? bd_plan_build(m->graph, shapes, &m->opts, &p, err)
           : bd_error_set(err, BD_ENOMEM, "out of memory");
    if (rc == 0) {
        e->plan = p;
        e->next = m->plans;
        m->plans = e;
        *out = p;
    } else {
        free(e);
        bd_error_prefix(err, "model '%s': ", bd_graph_name(m->graph));
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}
