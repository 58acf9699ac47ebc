/* A model: its imported, rewritten graph and the cache of plans by input shapes. */
#include "runtime/model.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/big_alloc.h"
#include "runtime/engines.h"
#include "runtime/import.h"
#include "partitioner/passes/partition.h"
#include "runtime/plan_internal.h"
#include "runtime/weights.h"
#include "partitioner/shape/shape_infer.h"

/* One cached shape set: its plan, or a compile in progress (PLAN NULL, BUILDING set). */
typedef struct plan_entry {
    struct plan_entry *prev, *next;  /* the LRU list, most recently used first */
    bd_shape          *shapes;       /* the key: one per graph input */
    bd_plan           *plan;         /* the cache's reference; NULL while building */
    size_t             bytes;        /* bd_plan_bytes(plan), counted in the model's total */
    bool               building;
    bool               linked;       /* in the list (a failed compile unlinks itself) */
    int                waiters;      /* threads waiting for this compile */
    int                rc;           /* a failed compile's code and message, for its waiters */
    bd_error           err;
} plan_entry;

/* A declared input range (bd_model_set_input_range). */
typedef struct input_range {
    int     rank;                    /* -1 = none declared */
    int64_t min[BD_MAX_RANK], max[BD_MAX_RANK];
} input_range;

struct bd_model {
    bd_graph        *graph;
    bd_model_options opts;        /* strings are the model's own copies */
    input_range     *ranges;      /* per graph input */
    pthread_mutex_t  lock;        /* guards the plan cache */
    pthread_cond_t   built;       /* a compile finished */
    plan_entry      *head, *tail;
    bd_plan_cache_stats stats;
    weights         *weights;     /* the model file's weights, given back between compiles */
    bd_const_cache  *consts;      /* constants its plans' kernels laid out, shared by them */
    bd_model_timings timings;
};

static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

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

/* Keep OPTS (own copies of its strings) and check the engine name. */
static int set_options(bd_model *m, const bd_model_options *opts, bd_error *err)
{
    m->opts = *opts;
    m->opts.signature = NULL;          /* used by the import only */
    if (copy_string(opts->fallback_ops, &m->opts.fallback_ops) ||
        copy_string(opts->engine, &m->opts.engine))
        return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    size_t nb;
    const bd_backend *const *backends = bd_backends(&nb);
    bd_placement_opts popts = { .engine = opts->engine };
    unsigned allowed;
    return bd_place_engines(&popts, backends, nb, &allowed, err);
}

/* The cache of laid-out constants, with the graph's initializers declared stable: they keep
 * their address and bytes while the model is open (weights.c reads any given back before a
 * compile), so kernels key those by address and hash only what a plan's passes make.
 * BRAID_SHARE_WEIGHTS=0: none, every plan lays out its own (to measure what sharing saves). */
static int open_consts(bd_model *m, bd_error *err)
{
    const char *env = getenv("BRAID_SHARE_WEIGHTS");
    if (env && !strcmp(env, "0"))
        return 0;
    if (bd_const_cache_create(&m->consts))
        return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    size_t nv = bd_graph_num_values(m->graph);
    for (size_t i = 0; i < nv; i++) {
        const bd_value *v = bd_graph_value(m->graph, i);
        if (v->data && bd_const_cache_add_stable(m->consts, v->data, v->nbytes))
            return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    }
    return 0;
}

int bd_model_from_graph(bd_graph *g, const bd_model_options *opts, bd_model **out, bd_error *err)
{
    double t0 = clock_ms();
    int rc = weights_align(g, err);
    if (rc == 0)
        rc = prepare(g, err);
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
    size_t ni = bd_graph_num_inputs(g);
    m->ranges = calloc(ni ? ni : 1, sizeof *m->ranges);
    if (!m->ranges) {
        bd_graph_destroy(g);
        free(m);
        return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    }
    for (size_t i = 0; i < ni; i++)
        m->ranges[i].rank = -1;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->built, NULL);
    rc = weights_create(g, &m->weights, err);
    if (rc == 0)
        rc = open_consts(m, err);
    if (rc == 0 && opts)
        rc = set_options(m, opts, err);
    if (rc) {
        bd_error_prefix(err, "model '%s': ", bd_graph_name(g));
        bd_model_close(m);
        return rc;
    }
    m->timings.prepare_ms = clock_ms() - t0;
    *out = m;
    return 0;
}

int bd_model_open(const char *path, const bd_model_options *opts, bd_model **out, bd_error *err)
{
    bd_graph *g = NULL;
    double t0 = clock_ms();
    int rc = bd_import_model(path, opts ? opts->signature : NULL, &g, err);   /* messages name PATH */
    if (rc)
        return rc;
    double import_ms = clock_ms() - t0;
    rc = bd_model_from_graph(g, opts, out, err);
    if (rc)
        return bd_error_prefix(err, "%s: ", path);
    (*out)->timings.import_ms = import_ms;
    return 0;
}

void bd_model_close(bd_model *m)
{
    if (!m)
        return;
    for (plan_entry *e = m->head, *next; e; e = next) {   /* no compile runs: no user left */
        next = e->next;
        bd_plan_release(e->plan);
        free(e->shapes);
        free(e);
    }
    pthread_cond_destroy(&m->built);
    pthread_mutex_destroy(&m->lock);
    bd_const_cache_release(m->consts);     /* freed with the last plan reading it */
    weights_destroy(m->weights);
    free(m->ranges);
    bd_graph_destroy(m->graph);
    free((char *)m->opts.fallback_ops);
    free((char *)m->opts.engine);
    free(m);
}

const bd_graph *bd_model_graph(const bd_model *m) { return m->graph; }
const bd_model_timings *bd_model_open_timings(const bd_model *m) { return &m->timings; }

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
        /* An empty tensor's other dims are not bounded by its bytes: bound them as a
         * non-empty tensor's would be, or shape inference multiplies them past int64. */
        int64_t bytes = (int64_t)bd_dtype_size(v->dtype);
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] != 0 && __builtin_mul_overflow(bytes, t->shape[d], &bytes))
                return bd_error_set(err, BD_EINVAL, "input '%s': shape %s is too large", v->name,
                                    bd_shape_str(&shapes[i], want, sizeof want));
    }
    return 0;
}

int bd_model_set_input_range(bd_model *m, const char *input, int rank, const int64_t *min,
                             const int64_t *max, bd_error *err)
{
    const bd_graph *g = m->graph;
    size_t i = 0;
    while (i < bd_graph_num_inputs(g) && strcmp(bd_graph_input(g, i)->name, input))
        i++;
    if (i == bd_graph_num_inputs(g))
        return bd_error_set(err, BD_EINVAL, "model '%s' has no input '%s'", bd_graph_name(g), input);
    const bd_value *v = bd_graph_input(g, i);
    if (rank < 0 || rank > BD_MAX_RANK || (v->shape.rank >= 0 && rank != v->shape.rank))
        return bd_error_set(err, BD_EINVAL, "input '%s': a range of rank %d, but the input has rank %d",
                            input, rank, v->shape.rank);
    for (int d = 0; d < rank; d++)
        if (min[d] < 0 || (max[d] >= 0 && max[d] < min[d]))
            return bd_error_set(err, BD_EINVAL, "input '%s': dim %d: empty range [%lld, %lld]", input, d,
                                (long long)min[d], (long long)max[d]);
    input_range *r = &m->ranges[i];
    r->rank = rank;
    memcpy(r->min, min, (size_t)rank * sizeof *min);
    memcpy(r->max, max, (size_t)rank * sizeof *max);
    return 0;
}

/* The declared ranges, before anything is built for these shapes. */
static int check_ranges(const bd_model *m, const bd_shape *shapes, size_t n, bd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const input_range *r = &m->ranges[i];
        if (r->rank < 0)
            continue;
        const char *name = bd_graph_input(m->graph, i)->name;
        if (shapes[i].rank != r->rank)
            return bd_error_set(err, BD_EINVAL, "input '%s': expected rank %d, got %d", name, r->rank,
                                shapes[i].rank);
        for (int d = 0; d < r->rank; d++) {
            int64_t x = shapes[i].dims[d];
            if (x < r->min[d] || (r->max[d] >= 0 && x > r->max[d])) {
                char hi[32] = "unbounded";
                if (r->max[d] >= 0)
                    snprintf(hi, sizeof hi, "%lld", (long long)r->max[d]);
                return bd_error_set(err, BD_EINVAL, "input '%s': dim %d is %lld, outside the allowed "
                                    "range [%lld, %s]", name, d, (long long)x, (long long)r->min[d], hi);
            }
        }
    }
    return 0;
}

static void lru_unlink(bd_model *m, plan_entry *e)
{
    if (e->prev) e->prev->next = e->next; else m->head = e->next;
    if (e->next) e->next->prev = e->prev; else m->tail = e->prev;
    e->prev = e->next = NULL;
    e->linked = false;
}

static void lru_push_front(bd_model *m, plan_entry *e)
{
    e->prev = NULL;
    e->next = m->head;
    if (m->head) m->head->prev = e; else m->tail = e;
    m->head = e;
    e->linked = true;
}

static bool entry_matches(const plan_entry *e, const bd_shape *shapes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!bd_shape_equal(&e->shapes[i], &shapes[i]))
            return false;
    return true;
}

/* Lock held: drop least recently used plans (never KEEP, never a compile in progress) until
 * both bounds hold. The dropped entries go on *DROP, freed by the caller after unlocking. */
static void evict_locked(bd_model *m, const plan_entry *keep, plan_entry **drop)
{
    size_t max_plans = m->opts.plan_cache_max_plans, max_bytes = m->opts.plan_cache_max_bytes;
    for (plan_entry *e = m->tail, *prev; e; e = prev) {
        prev = e->prev;
        bool over = (max_plans && m->stats.plans > max_plans) || (max_bytes && m->stats.bytes > max_bytes);
        if (!over)
            break;
        if (e == keep || e->building || e->waiters > 0)   /* waiters still read it */
            continue;
        lru_unlink(m, e);
        m->stats.plans--;
        m->stats.bytes -= e->bytes;
        m->stats.evictions++;
        plan_mark_evicted(e->plan);
        e->next = *drop;
        *drop = e;
    }
}

static void free_dropped(plan_entry *drop)
{
    for (plan_entry *e = drop, *next; e; e = next) {
        next = e->next;
        bd_plan_release(e->plan);   /* freed now, or by its last execution context */
        free(e->shapes);
        free(e);
    }
}

int bd_model_plan_acquire(bd_model *m, const DLTensor *inputs, size_t n_inputs, const bd_plan **out,
                          bd_error *err)
{
    bd_shape shapes[64];
    if (n_inputs > sizeof shapes / sizeof shapes[0])
        return bd_error_set(err, BD_EUNSUPPORTED, "models with more than 64 inputs are not supported");
    int rc = signature_shapes(m->graph, inputs, n_inputs, shapes, err);
    if (rc == 0)
        rc = check_ranges(m, shapes, n_inputs, err);
    if (rc)
        return rc;

    pthread_mutex_lock(&m->lock);
    plan_entry *e = m->head;
    while (e && !entry_matches(e, shapes, n_inputs))
        e = e->next;
    if (e) {
        m->stats.hits++;
        if (e->building) {            /* another thread compiles this shape: share its result */
            e->waiters++;
            while (e->building)
                pthread_cond_wait(&m->built, &m->lock);
            e->waiters--;
        }
        if (e->plan) {
            if (e->linked && e != m->head) {
                lru_unlink(m, e);
                lru_push_front(m, e);
            }
            bd_plan_retain(e->plan);
            *out = e->plan;
            pthread_mutex_unlock(&m->lock);
            return 0;
        }
        /* that compile failed: its error is ours; the last waiter frees the entry */
        rc = e->rc;
        if (err)
            *err = e->err;
        bool last = e->waiters == 0;
        pthread_mutex_unlock(&m->lock);
        if (last) {
            free(e->shapes);
            free(e);
        }
        return rc;
    }

    /* A new shape: claim it, then compile without the lock. */
    e = calloc(1, sizeof *e);
    if (e && !(e->shapes = malloc(n_inputs ? n_inputs * sizeof *shapes : 1))) {
        free(e);
        e = NULL;
    }
    if (!e) {
        pthread_mutex_unlock(&m->lock);
        return bd_error_set(err, BD_ENOMEM, "model '%s': out of memory", bd_graph_name(m->graph));
    }
    memcpy(e->shapes, shapes, n_inputs * sizeof *shapes);
    e->building = true;
    lru_push_front(m, e);
    m->stats.compiles++;
    pthread_mutex_unlock(&m->lock);

    plan_test_compile_gate();
    bd_plan *p = NULL;
    bd_error build_err = { 0 };      /* kept for the waiters too (ERR may be NULL) */
    double t0 = clock_ms();
    rc = weights_acquire(m->weights, &build_err);
    double read_ms = clock_ms() - t0;
    if (rc == 0) {
        rc = plan_build(m->graph, shapes, &m->opts, m->consts, &p, &build_err);
        t0 = clock_ms();
        weights_release(m->weights, rc == 0 ? p : NULL);
        /* what the compile freed, back to the system: braidd serving ResNet-50 and BERT-base
         * stayed at 1.01 GB resident without this, 614 MB with it (docs/performance.md) */
        bd_heap_trim();
        if (rc == 0)
            plan_add_weights_ms(p, read_ms, clock_ms() - t0);
    }
    if (rc) {
        bd_error_prefix(&build_err, "model '%s': ", bd_graph_name(m->graph));
        if (err)
            *err = build_err;
    }

    plan_entry *drop = NULL;
    bool free_entry = false;
    pthread_mutex_lock(&m->lock);
    e->building = false;
    if (rc == 0) {
        e->plan = p;
        e->bytes = bd_plan_bytes(p);
        m->stats.plans++;
        m->stats.bytes += e->bytes;
        bd_plan_retain(p);
        *out = p;
        evict_locked(m, e, &drop);
    } else {                          /* not cached: the next request for it tries again */
        lru_unlink(m, e);
        e->rc = rc;
        e->err = build_err;
        free_entry = e->waiters == 0;
    }
    pthread_cond_broadcast(&m->built);
    pthread_mutex_unlock(&m->lock);
    free_dropped(drop);
    if (free_entry) {
        free(e->shapes);
        free(e);
    }
    return rc;
}

int bd_model_plan(bd_model *m, const DLTensor *inputs, size_t n_inputs, const bd_plan **out,
                  bd_error *err)
{
    int rc = bd_model_plan_acquire(m, inputs, n_inputs, out, err);
    if (rc == 0)
        bd_plan_release(*out);        /* the cache keeps its own reference */
    return rc;
}

void bd_model_plan_cache_stats(bd_model *m, bd_plan_cache_stats *out)
{
    pthread_mutex_lock(&m->lock);
    *out = m->stats;
    pthread_mutex_unlock(&m->lock);
    out->max_plans = m->opts.plan_cache_max_plans;
    out->max_bytes = m->opts.plan_cache_max_bytes;
    out->weights_released = weights_released_bytes(m->weights);
    bd_const_cache_stats cs = { 0 };
    if (m->consts)
        bd_const_cache_stats_get(m->consts, &cs);
    out->consts_bytes = cs.bytes;
    out->consts_shared = cs.hits;
    out->consts_shared_bytes = cs.hit_bytes;
}
