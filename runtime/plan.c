/* Plans: specialise a model graph to concrete input shapes, annotate, partition into
 * backend steps, compile, and lay out boundary tensors; and the executor that runs them. */
#include "runtime/plan_internal.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/arena.h"
#include "runtime/engines.h"
#include "partitioner/passes/partition.h"
#include "partitioner/passes/passes.h"
#include "partitioner/shape/shape_infer.h"

typedef struct plan_step {
    const bd_backend *backend;
    int               backend_index;   /* position in the backend table */
    bd_kernel        *kernel;
    bd_node         **nodes;   size_t n_nodes;
    bd_value        **inputs;  size_t n_inputs;
    bd_value        **outputs; size_t n_outputs;
} plan_step;

#define NO_OFFSET SIZE_MAX

struct bd_plan {
    atomic_int  refs;          /* the cache's, callers', execution contexts' */
    atomic_bool evicted;       /* the cache dropped it */
    size_t      bytes;         /* bd_plan_bytes' estimate */
    bd_graph  *graph;          /* specialised clone: shapes inferred, folded nodes removed */
    plan_step *steps;
    size_t     n_steps;
    size_t    *offset;         /* per value index: arena offset, or NO_OFFSET */
    size_t     arena_size;
    int       *dyn_slot;       /* per value index: slot of a run-time-shaped value, or -1 */
    size_t     n_dyn;
    bd_shape  *input_shapes;
    size_t     n_inputs;
    int        threads;
    size_t     max_run_bytes;  /* the model's max_run_memory_bytes, for the steps (0: none) */
    bd_const_cache    *consts;     /* during the build: the model's cache, for the kernels */
    bd_node_place      *places;    /* per node index: what annotation decided */
    bd_subgraph_info   *sg_info;   /* the partition report's parts */
    bd_fallback_info   *fb_info;
    bd_partition_report report;
    bd_plan_timings     timings;
};

/* ---- building --------------------------------------------------------------------------- */

static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Adds the time since *T to *ACC and restarts *T. */
static void lap(double *t, double *acc)
{
    double now = clock_ms();
    *acc += now - *t;
    *t = now;
}

static size_t value_bytes(const bd_value *v)       /* saturating */
{
    size_t bytes;
    int64_t n = bd_shape_numel(&v->shape);
    if (n < 0 || __builtin_mul_overflow((size_t)n, bd_dtype_size(v->dtype), &bytes))
        return SIZE_MAX;
    return bytes;
}

static bool is_const(const bd_value *v)
{
    return v->data != NULL;
}

/* A tensor whose shape is only known when the step producing it has run. */
static bool is_dynamic(const bd_value *v)
{
    return !v->data && !v->is_input && !bd_shape_is_static(&v->shape);
}

/* Drop nodes whose outputs shape inference folded to constants (Shape, Gather on shapes). */
static void drop_folded_nodes(bd_graph *g)
{
    for (size_t i = bd_graph_num_nodes(g); i-- > 0;) {
        bd_node *n = bd_graph_node(g, i);
        bool all_const = n->n_outputs > 0;
        for (size_t k = 0; k < n->n_outputs; k++)
            all_const &= is_const(n->outputs[k]);
        if (all_const)
            bd_graph_remove_node(g, n);
    }
}

/* Shape inference, not strict: a shape that depends on data (or an op without a rule) stays
 * dynamic, and annotation keeps the nodes touching it off oneDNN. */
static int infer_shapes(bd_graph *g, bd_error *err)
{
    int rc = bd_shape_infer(g, false, err);
    if (rc == BD_EMODEL) {
        /* the model passed inference with its symbolic dims at open: it is these concrete
         * shapes, the caller's, that do not fit */
        rc = BD_EINVAL;
        if (err)
            err->code = rc;
        bd_error_prefix(err, "the input shapes do not fit the model: ");
    }
    return rc;
}

/* Rounds of folding and inference: enough for the chains models have (a float
 * Cast/Mul/Floor of a shape feeding a Resize's sizes, then a Pad of that), and a bound so a
 * hostile graph cannot make a plan build loop. */
#define PLAN_FOLD_ROUNDS 4

/* Fold nodes of constants (plan_fold_constants) and drop every node whose outputs are all
 * constants; while what was folded feeds a node whose shapes are unknown, infer shapes again
 * (the dropped nodes' outputs are constants now, which inference keeps) and fold again.
 * *REINFERRED tells whether inference ran again. */
static int fold_constants(bd_graph *g, const bd_placement_opts *popts, bool *reinferred,
                          bd_error *err)
{
    size_t spent = 0;                  /* one budget of folded bytes for all rounds */
    *reinferred = false;
    for (int round = 0;; round++) {
        bool again = false;
        int rc = plan_fold_constants(g, popts, &spent, &again, err);
        if (rc < 0)
            return rc;
        drop_folded_nodes(g);
        if (!again || round + 1 == PLAN_FOLD_ROUNDS)
            return 0;
        if ((rc = infer_shapes(g, err)))
            return rc;
        *reinferred = true;
    }
}

/* Annotate, merge regions, apply the cost rule (merging again after each move), and turn the
 * regions into the plan's steps. */
static int place_and_partition(bd_plan *p, const bd_placement_opts *popts, bd_error *err)
{
    bd_graph *g = p->graph;
    size_t n = bd_graph_num_nodes(g), nb, n_regions = 0, n_parts = 0;
    const bd_backend *const *backends = bd_backends(&nb);
    p->places = calloc(n ? n : 1, sizeof *p->places);
    int *region = malloc((n ? n : 1) * sizeof *region);
    if (!p->places || !region) {
        free(region);
        return bd_error_set(err, BD_ENOMEM, "out of memory annotating");
    }
    int rc = bd_annotate(g, backends, nb, popts, p->places, err);
    double min_flops = popts->min_dnnl_region_flops == 0 ? (double)BD_DEFAULT_MIN_DNNL_REGION_FLOPS
                                                         : (double)popts->min_dnnl_region_flops;
    for (size_t round = 0; rc == 0; round++) {
        rc = bd_region_merge(g, region, &n_regions, err);
        /* each round moves at least one island for good, so the loop is bounded by n */
        if (rc || round > n || bd_cost_rule(g, backends, nb, min_flops, region, n_regions, p->places) == 0)
            break;
    }
    bd_part *parts = NULL;
    if (rc == 0)
        rc = bd_partition(g, region, n_regions, &parts, &n_parts, err);
    free(region);
    if (rc)
        return rc;
    p->steps = calloc(n_parts ? n_parts : 1, sizeof *p->steps);
    if (!p->steps) {
        bd_parts_free(parts, n_parts);
        return bd_error_set(err, BD_ENOMEM, "out of memory partitioning");
    }
    for (size_t i = 0; i < n_parts; i++) {   /* the steps take over the parts' arrays */
        plan_step *s = &p->steps[i];
        s->backend_index = parts[i].backend;
        s->backend = backends[parts[i].backend];
        s->nodes = parts[i].nodes;     s->n_nodes = parts[i].n_nodes;
        s->inputs = parts[i].inputs;   s->n_inputs = parts[i].n_inputs;
        s->outputs = parts[i].outputs; s->n_outputs = parts[i].n_outputs;
    }
    p->n_steps = n_parts;
    free(parts);
    return 0;
}

/* Static boundary tensors and graph outputs get arena slots packed by liveness over steps;
 * run-time-shaped values get a slot number for the executor's shape scratch instead. */
static int layout_arena(bd_plan *p, bd_error *err)
{
    bd_graph *g = p->graph;
    size_t nv = bd_graph_num_values(g);
    p->offset = malloc((nv ? nv : 1) * sizeof *p->offset);
    p->dyn_slot = malloc((nv ? nv : 1) * sizeof *p->dyn_slot);
    bd_arena_req *reqs = calloc(nv ? nv : 1, sizeof *reqs);
    size_t *offs = calloc(nv ? nv : 1, sizeof *offs);
    int *which = calloc(nv ? nv : 1, sizeof *which);
    if (!p->offset || !p->dyn_slot || !reqs || !offs || !which) {
        free(reqs); free(offs); free(which);
        return bd_error_set(err, BD_ENOMEM, "out of memory laying out the arena");
    }
    size_t nr = 0;
    int end = (int)p->n_steps;
    for (size_t i = 0; i < nv; i++) {
        p->offset[i] = NO_OFFSET;
        p->dyn_slot[i] = -1;
        bd_value *v = bd_graph_value(g, i);
        int first = -1, last = -1;
        for (size_t si = 0; si < p->n_steps; si++) {
            for (size_t k = 0; k < p->steps[si].n_outputs; k++)
                if (p->steps[si].outputs[k] == v && first < 0)
                    first = last = (int)si;
            for (size_t k = 0; k < p->steps[si].n_inputs; k++)
                if (p->steps[si].inputs[k] == v)
                    last = (int)si;
        }
        if (is_dynamic(v)) {
            if (first >= 0)
                p->dyn_slot[i] = (int)p->n_dyn++;
            continue;
        }
        if (v->is_output) {          /* outputs live past the last step; inputs/consts copied in */
            if (first < 0)
                first = end;
            last = end;
        }
        if (first < 0)
            continue;
        reqs[nr] = (bd_arena_req){ value_bytes(v), first, last };
        which[nr++] = (int)i;
    }
    size_t total = bd_arena_plan(reqs, nr, offs);
    if (total == (size_t)-1) {
        free(reqs); free(offs); free(which);
        return bd_error_set(err, BD_ENOMEM, "out of memory laying out the arena");
    }
    for (size_t r = 0; r < nr; r++)
        p->offset[which[r]] = offs[r];
    p->arena_size = total;
    free(reqs); free(offs); free(which);
    return 0;
}

/* The table index of the fast-path engine, or -1. */
static int fast_index(const bd_backend *const *backends, size_t nb)
{
    for (size_t b = 0; b < nb; b++)
        if (backends[b]->kind == BD_ENGINE_FAST_PATH)
            return (int)b;
    return -1;
}

/* The partition report: one entry per step, one per node not on the fast path (with the fast
 * path's reason for refusing it). */
static int build_report(bd_plan *p, bd_error *err)
{
    size_t nb, n = bd_graph_num_nodes(p->graph), nf = 0;
    const bd_backend *const *backends = bd_backends(&nb);
    int fast = fast_index(backends, nb);
    for (size_t i = 0; i < n; i++)
        nf += bd_graph_node(p->graph, i)->backend != fast;
    p->sg_info = calloc(p->n_steps ? p->n_steps : 1, sizeof *p->sg_info);
    p->fb_info = calloc(nf ? nf : 1, sizeof *p->fb_info);
    if (!p->sg_info || !p->fb_info)
        return bd_error_set(err, BD_ENOMEM, "out of memory building the partition report");
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        p->sg_info[si] = (bd_subgraph_info){
            .backend = s->backend->name, .n_nodes = s->n_nodes,
            .first_node = s->n_nodes ? s->nodes[0]->name : "",
            .inputs = s->inputs, .n_inputs = s->n_inputs,
            .outputs = s->outputs, .n_outputs = s->n_outputs,
        };
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const bd_node *nd = bd_graph_node(p->graph, i);
        if (nd->backend == fast)
            continue;
        const bd_node_place *pl = &p->places[i];
        p->fb_info[at++] = (bd_fallback_info){
            .node = nd->name, .op_type = nd->op_type,
            .backend = nd->backend >= 0 && (size_t)nd->backend < nb ? backends[nd->backend]->name : "",
            .reason = bd_reason_name(fast >= 0 ? pl->reason[fast] : BD_REASON_NONE),
            .detail = fast >= 0 ? pl->why[fast] : "",
        };
    }
    p->report = (bd_partition_report){ .subgraphs = p->sg_info, .n_subgraphs = p->n_steps,
                                       .fallback = p->fb_info, .n_fallback = at };
    return 0;
}

/* The report's per-run stats, once every step is compiled. */
static void report_stats(bd_plan *p)
{
    p->report.run = (bd_kernel_stats){ 0 };
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        bd_kernel_stats *st = &p->sg_info[si].run;
        *st = (bd_kernel_stats){ .steps = 1 };
        if (s->backend->stats && s->kernel)
            s->backend->stats(s->kernel, st);
        p->report.run.steps += st->steps;
        p->report.run.reorders += st->reorders;
        p->report.run.reorder_bytes += st->reorder_bytes;
        p->report.run.const_bytes += st->const_bytes;
        p->report.run.ref_steps += st->ref_steps;
        p->report.run.const_ms += st->const_ms;
        p->report.run.shared_consts += st->shared_consts;
        p->report.run.shared_const_bytes += st->shared_const_bytes;
        p->report.run.products += st->products;
        p->report.run.int8_products += st->int8_products;
    }
}

static int compile_each(bd_plan *p, bd_error *err)
{
    for (size_t si = 0; si < p->n_steps; si++) {
        plan_step *s = &p->steps[si];
        bd_subgraph sg = {
            .graph = p->graph, .nodes = s->nodes, .n_nodes = s->n_nodes,
            .inputs = s->inputs, .n_inputs = s->n_inputs,
            .outputs = s->outputs, .n_outputs = s->n_outputs,
            .max_run_bytes = p->max_run_bytes, .consts = p->consts,
        };
        int rc = s->backend->compile(&sg, &s->kernel, err);
        if (rc)
            return bd_error_prefix(err, "step %zu (%s, %zu nodes from '%s'): ", si,
                                   s->backend->name, s->n_nodes, s->nodes[0]->name);
    }
    return 0;
}

/* Compile every step with the plan's thread count in force: oneDNN sizes a primitive's work
 * split from it at creation, and a primitive made for 2 threads runs on 2 whatever the
 * context's count at run time. */
static int compile_steps(bd_plan *p, bd_error *err)
{
    int saved = omp_get_max_threads();
    if (p->threads > 0 && p->threads != saved)
        omp_set_num_threads(p->threads);
    int rc = compile_each(p, err);
    if (p->threads > 0 && p->threads != saved)
        omp_set_num_threads(saved);
    return rc;
}

/* "'x' [0,4]": the first empty input, or "" when none is. */
static void empty_input(const bd_plan *p, char *buf, size_t size)
{
    buf[0] = 0;
    for (size_t k = 0; k < p->n_inputs && !buf[0]; k++)
        if (bd_shape_numel(&p->input_shapes[k]) == 0) {
            char sh[80];
            snprintf(buf, size, "'%s' %s", bd_graph_input(p->graph, k)->name,
                     bd_shape_str(&p->input_shapes[k], sh, sizeof sh));
        }
}

/* The first output a zero-size input does not make trivially known (not empty, constant or
 * an input passed through), or NULL. */
static const bd_value *non_empty_output(const bd_graph *g)
{
    for (size_t i = 0; i < bd_graph_num_outputs(g); i++) {
        const bd_value *v = bd_graph_output(g, i);
        if (!v->data && !v->is_input && !(bd_shape_is_static(&v->shape) && bd_shape_numel(&v->shape) == 0))
            return v;
    }
    return NULL;
}

/* A zero-size input (legal in ONNX) whose outputs are all empty: no step runs, so no backend
 * sees an empty tensor, and the outputs are the empty tensors shape inference gave. */
static int plan_empty(bd_plan *p, bd_error *err)
{
    bd_graph *g = p->graph;
    for (size_t i = bd_graph_num_nodes(g); i-- > 0;)
        bd_graph_remove_node(g, bd_graph_node(g, i));
    p->places = calloc(1, sizeof *p->places);
    p->steps = calloc(1, sizeof *p->steps);
    return p->places && p->steps ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory building a plan");
}

/* ---- constants the plan made ------------------------------------------------------------- */

#define PLAN_RELEASE_MIN_BYTES ((size_t)256 << 10)

typedef struct byte_range {
    uintptr_t lo, hi;
} byte_range;

typedef struct range_set {
    byte_range *r;
    size_t      n, cap;
    bool        failed;        /* out of memory: the set is incomplete */
} range_set;

static void range_add(const void *data, size_t n, void *ctx)
{
    range_set *s = ctx;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        byte_range *q = realloc(s->r, cap * sizeof *q);
        if (!q) {
            s->failed = true;
            return;
        }
        s->r = q;
        s->cap = cap;
    }
    s->r[s->n++] = (byte_range){ (uintptr_t)data, (uintptr_t)data + n };
}

/* Does a run read any of the N bytes at DATA (a constant may be a view into another)? */
static bool range_read(const range_set *s, const void *data, size_t n)
{
    uintptr_t lo = (uintptr_t)data, hi = lo + n;
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].lo < hi && lo < s->r[i].hi)
            return true;
    return false;
}

/* The constants the plan's passes made (BatchNorm folded into conv weights, merged q/k/v
 * weights, folded subexpressions) live in the plan graph's pool, and the fast path copies
 * those it uses into its own layout at compile: once every step is compiled, the pages of
 * those no run reads are given back (the value keeps its shape, loses its bytes). */
static void release_plan_constants(bd_plan *p, const bd_graph *model_graph)
{
    range_set run = { 0 };
    plan_run_constants(p, range_add, &run);
    size_t nv = bd_graph_num_values(p->graph), nmv = bd_graph_num_values(model_graph);
    for (size_t i = 0; i < nv && !run.failed; i++) {
        bd_value *v = bd_graph_value(p->graph, i);
        if (!v->data || v->nbytes < PLAN_RELEASE_MIN_BYTES || v->is_output || range_read(&run, v->data, v->nbytes))
            continue;
        if (i < nmv && bd_graph_value(model_graph, i)->data == v->data)
            continue;                                   /* the model's bytes: weights.c */
        uintptr_t lo = ((uintptr_t)v->data + 4095) & ~(uintptr_t)4095;
        uintptr_t hi = ((uintptr_t)v->data + v->nbytes) & ~(uintptr_t)4095;
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
        v->data = NULL;
        v->nbytes = 0;
    }
    free(run.r);
}

/* bd_plan_bytes' estimate (model.h): the arena, constants the plan's passes made (not shared
 * with MODEL_GRAPH), the constants its kernels laid out (their own layout; what they read from
 * another plan's kernels is that plan's), and fixed overheads for graph records and compiled
 * primitives. */
#define PLAN_BYTES_PER_VALUE 256
#define PLAN_BYTES_PER_NODE  512
#define PLAN_BYTES_PER_STEP  (16 * 1024)
static size_t estimate_bytes(const bd_plan *p, const bd_graph *model_graph)
{
    const bd_graph *g = p->graph;
    size_t total = sizeof *p + p->arena_size;
    size_t nv = bd_graph_num_values(g), nmv = bd_graph_num_values(model_graph);
    for (size_t i = 0; i < nv; i++) {
        const bd_value *v = bd_graph_value(g, i);
        bool shared = i < nmv && v->data && bd_graph_value(model_graph, i)->data == v->data;
        total += PLAN_BYTES_PER_VALUE + (v->data && !shared ? v->nbytes : 0);
    }
    total += bd_graph_num_nodes(g) * PLAN_BYTES_PER_NODE + p->n_steps * PLAN_BYTES_PER_STEP;
    return total + (p->report.run.const_bytes - p->report.run.shared_const_bytes);
}

#ifdef BD_TEST_HOOKS
/* Debug builds only (meson: buildtype=debug): with BRAID_TEST_COMPILE_GATE=PATH set and the
 * file PATH present, a compile creates PATH.waiting and waits (at most 120 s) until PATH is
 * removed, so a test can hold a compile in progress and prove what does not wait for it. */
void plan_test_compile_gate(void)
{
    const char *gate = getenv("BRAID_TEST_COMPILE_GATE");
    if (!gate || access(gate, F_OK) != 0)
        return;
    char marker[4096];
    snprintf(marker, sizeof marker, "%s.waiting", gate);
    FILE *f = fopen(marker, "w");
    if (f)
        fclose(f);
    for (int i = 0; i < 12000 && access(gate, F_OK) == 0; i++)
        usleep(10 * 1000);
}
#else
void plan_test_compile_gate(void) {}
#endif

/* Composites for the fast path, unless the engine option leaves it out. */
static int rewrite(bd_graph *g, const bd_placement_opts *popts, bd_error *err)
{
    size_t nb;
    const bd_backend *const *backends = bd_backends(&nb);
    unsigned allowed;
    int rc = bd_place_engines(popts, backends, nb, &allowed, err);
    if (rc)
        return rc;
    bd_placement_opts eff = *popts;
    eff.fallback_ops = bd_place_fallback_ops(popts, backends, nb, allowed);
    bd_place_pin(g, &eff);
    const bd_backend *fast = bd_engines_fast_path();
    bool fast_allowed = false;
    for (size_t b = 0; fast && b < nb && b < 32; b++)
        fast_allowed |= backends[b] == fast && (allowed & (1u << b));
    if (!fast_allowed)
        return bd_graph_validate(g, err);
    bd_fuse_target target = { .backend = fast, .forced_ops = eff.fallback_ops };
    return bd_passes_run(g, &target, err);
}

/* Refuse shapes whose run would hold more than LIMIT bytes of tensors at once: legal shapes
 * can still ask for terabytes (an outer product, a Tile), and the first touch of such an
 * arena is the OOM killer's, not an error. */
static int check_run_bytes(const bd_graph *g, size_t limit, bd_error *err)
{
    size_t peak;
    if (plan_peak_tensor_bytes(g, &peak))
        return bd_error_set(err, BD_ENOMEM, "out of memory estimating a plan's memory");
    if (peak <= limit)
        return 0;
    if (peak == SIZE_MAX)
        return bd_error_set(err, BD_EINVAL, "these input shapes make the model's tensors too large "
                            "to count (over the limit of %zu MiB of tensors per run)", limit >> 20);
    return bd_error_set(err, BD_EINVAL, "these input shapes need %zu MiB of tensors at the peak of a "
                        "run, over the limit of %zu MiB (max_run_memory_bytes)", peak >> 20, limit >> 20);
}

static int build(const bd_graph *model_graph, const bd_shape *input_shapes,
                 const bd_model_options *opts, bd_const_cache *consts, bd_plan **out, bd_error *err)
{
    double t0 = clock_ms(), t = t0;
    bd_model_options none = { 0 };
    if (!opts)
        opts = &none;
    bd_placement_opts popts = { .fallback_ops = opts->fallback_ops, .engine = opts->engine,
                                .min_dnnl_region_flops = opts->min_dnnl_region_flops,
                                .prefer_fallback_ops = bd_engines_prefer_fallback_ops() };
    bd_plan *p = calloc(1, sizeof *p);
    if (!p || !(p->graph = bd_graph_clone(model_graph))) {
        free(p);
        return bd_error_set(err, BD_ENOMEM, "out of memory building a plan");
    }
    atomic_init(&p->refs, 1);
    atomic_init(&p->evicted, false);
    p->threads  = opts->threads;
    p->max_run_bytes = opts->max_run_memory_bytes;
    p->consts   = consts;
    p->n_inputs = bd_graph_num_inputs(p->graph);
    p->input_shapes = malloc((p->n_inputs ? p->n_inputs : 1) * sizeof *p->input_shapes);
    int rc = p->input_shapes ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory building a plan");
    for (size_t i = 0; rc == 0 && i < p->n_inputs; i++) {
        p->input_shapes[i] = input_shapes[i];
        bd_graph_input(p->graph, i)->shape = input_shapes[i];
    }
    if (rc == 0)
        rc = infer_shapes(p->graph, err);
    if (rc == 0 && opts->max_run_memory_bytes)
        rc = check_run_bytes(p->graph, opts->max_run_memory_bytes, err);
    bd_plan_timings *tm = &p->timings;
    lap(&t, &tm->infer_ms);
    /* An empty input: when every output is empty too, nothing runs (plan_empty); otherwise
     * the plan is built as usual (oneDNN refuses empty tensors, a fallback engine may take
     * them) and a failure is the request's: INVALID_ARGUMENT naming the empty input. */
    char empty_in[128] = "";
    if (rc == 0)
        empty_input(p, empty_in, sizeof empty_in);
    bool empty = empty_in[0] && !non_empty_output(p->graph);
    bool reinferred = false;
    if (rc == 0 && !empty)
        rc = fold_constants(p->graph, &popts, &reinferred, err);
    if (rc == 0 && reinferred && opts->max_run_memory_bytes)
        rc = check_run_bytes(p->graph, opts->max_run_memory_bytes, err);   /* shapes now known */
    lap(&t, &tm->fold_ms);
    if (rc == 0 && !empty)
        rc = rewrite(p->graph, &popts, err);
    lap(&t, &tm->rewrite_ms);
    if (rc == 0)
        rc = empty ? plan_empty(p, err) : place_and_partition(p, &popts, err);
    if (rc == 0)
        rc = layout_arena(p, err);
    lap(&t, &tm->partition_ms);
    if (rc == 0)
        rc = build_report(p, err);
    if (rc == 0)
        rc = compile_steps(p, err);
    lap(&t, &tm->compile_ms);
    if (rc == 0) {
        report_stats(p);
        tm->consts_ms = p->report.run.const_ms;
        release_plan_constants(p, model_graph);
    }
    if (rc && rc != BD_ENOMEM && empty_in[0]) {
        const bd_value *o = non_empty_output(p->graph);
        char sh[96];
        rc = BD_EINVAL;
        if (err)
            err->code = rc;
        bd_error_prefix(err, "input %s is empty and output '%s' would be %s, which needs the model to run "
                        "on it, and it cannot: ", empty_in, o ? o->name : "?",
                        o ? bd_shape_str(&o->shape, sh, sizeof sh) : "?");
    }
    if (rc) {
        plan_destroy(p);
        return rc;
    }
    p->consts = NULL;                  /* the model's: a plan may outlive it */
    p->bytes = estimate_bytes(p, model_graph);
    tm->total_ms = clock_ms() - t0;
    *out = p;
    return 0;
}

/* The options of the plan this thread is building (runtime/control.c plans bodies with them). */
static _Thread_local const bd_model_options *building;

const bd_model_options *plan_building_options(void) { return building; }

int plan_build(const bd_graph *model_graph, const bd_shape *input_shapes,
               const bd_model_options *opts, bd_const_cache *consts, bd_plan **out, bd_error *err)
{
    const bd_model_options *outer = building;
    building = opts;
    int rc = build(model_graph, input_shapes, opts, consts, out, err);
    building = outer;
    return rc;
}

void bd_plan_retain(const bd_plan *p)
{
    atomic_fetch_add_explicit(&((bd_plan *)p)->refs, 1, memory_order_relaxed);
}

void bd_plan_release(const bd_plan *p)
{
    if (p && atomic_fetch_sub_explicit(&((bd_plan *)p)->refs, 1, memory_order_acq_rel) == 1)
        plan_destroy((bd_plan *)p);
}

void plan_mark_evicted(const bd_plan *p) { atomic_store(&((bd_plan *)p)->evicted, true); }
bool bd_plan_evicted(const bd_plan *p)      { return atomic_load(&((bd_plan *)p)->evicted); }
size_t bd_plan_bytes(const bd_plan *p)      { return p->bytes; }

void plan_destroy(bd_plan *p)
{
    if (!p)
        return;
    for (size_t si = 0; si < p->n_steps; si++) {
        plan_step *s = &p->steps[si];
        if (s->kernel)
            s->backend->release(s->kernel);
        free(s->nodes);
        free(s->inputs);
        free(s->outputs);
    }
    free(p->steps);
    free(p->offset);
    free(p->dyn_slot);
    free(p->places);
    free(p->sg_info);
    free(p->fb_info);
    free(p->input_shapes);
    bd_graph_destroy(p->graph);
    free(p);
}

void plan_run_constants(const bd_plan *p, void (*keep)(const void *data, size_t n, void *ctx),
                        void *ctx)
{
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        if (s->backend->kind == BD_ENGINE_FAST_PATH)
            continue;
        for (size_t k = 0; k < s->n_nodes; k++)
            for (size_t i = 0; i < s->nodes[k]->n_inputs; i++) {
                const bd_value *v = s->nodes[k]->inputs[i];
                if (v && v->data)
                    keep(v->data, v->nbytes, ctx);
            }
    }
    for (size_t i = 0; i < bd_graph_num_outputs(p->graph); i++) {
        const bd_value *v = bd_graph_output(p->graph, i);
        if (v->data)
            keep(v->data, v->nbytes, ctx);
    }
}

bool plan_matches(const bd_plan *p, const bd_shape *input_shapes, size_t n)
{
    if (n != p->n_inputs)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!bd_shape_equal(&p->input_shapes[i], &input_shapes[i]))
            return false;
    return true;
}

const bd_graph *bd_plan_graph(const bd_plan *p)  { return p->graph; }
size_t bd_plan_num_steps(const bd_plan *p)       { return p->n_steps; }
size_t bd_plan_arena_size(const bd_plan *p)      { return p->arena_size; }
const bd_partition_report *bd_plan_partition(const bd_plan *p) { return &p->report; }
const bd_plan_timings *bd_plan_build_timings(const bd_plan *p)  { return &p->timings; }

void plan_add_weights_ms(bd_plan *p, double read_ms, double release_ms)
{
    p->timings.weights_ms += read_ms;
    p->timings.release_ms += release_ms;
    p->timings.total_ms += read_ms + release_ms;
}

/* ---- execution ------------------------------------------------------------------------ */

#define EXEC_MAX_BACKENDS 8

/* A run-time-shaped value: the tensor its producer reported in the last run. */
typedef struct dyn_value {
    DLTensor t;
    int64_t  dims[BD_MAX_RANK];
} dyn_value;

struct bd_exec {
    const bd_plan  *plan;
    uint64_t        backend_ns[EXEC_MAX_BACKENDS];   /* last run's time per backend */
    unsigned char  *arena;
    bd_kernel_ctx **ctx;
    DLTensor       *io;          /* per step: its inputs then its outputs */
    size_t         *io_base;     /* per step: index of its first entry in IO */
    DLTensor       *outputs;     /* graph outputs, views into the arena (or dynamic values) */
    dyn_value      *dyn;         /* per plan dyn_slot */
    /* Placing graph outputs in caller memory (bd_exec_run_into): the IO entries that name
     * output I's value are REF_IO[REF_START[I] .. REF_START[I + 1]); HOME[I] is its arena
     * address, NULL when it has none to move (a run-time shape). */
    size_t         *ref_io;
    size_t         *ref_start;
    void          **home;
    void          **where;       /* scratch: output I's address for the coming run */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static DLTensor tensor_view(const bd_value *v, void *data)
{
    DLTensor t = {
        .data = data, .device = { kDLCPU, 0 }, .ndim = v->shape.rank < 0 ? 0 : v->shape.rank,
        .shape = (int64_t *)v->shape.dims, .strides = NULL, .byte_offset = 0,
    };
    bd_dtype_to_dl(v->dtype, &t.dtype);
    return t;
}

/* Where V lives for this context (graph inputs are patched per run). */
static void *value_data(const bd_exec *e, const bd_value *v)
{
    if (e->plan->offset[v->index] != NO_OFFSET)
        return e->arena + e->plan->offset[v->index];
    return (void *)v->data;   /* a constant, or NULL for a graph input / dynamic value until run */
}

/* The view of V in this context: run-time-shaped values share their slot's dims. */
static DLTensor exec_view(bd_exec *e, const bd_value *v)
{
    DLTensor t = tensor_view(v, value_data(e, v));
    int slot = e->plan->dyn_slot[v->index];
    if (slot >= 0)
        t.shape = e->dyn[slot].dims;
    return t;
}

/* Does any node of G read V? */
static bool graph_reads(const bd_graph *g, const bd_value *v)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *n = bd_graph_node(g, i);
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v)
                return true;
    }
    return false;
}

/* Does any step of P take V as an input? */
static bool steps_read(const bd_plan *p, const bd_value *v)
{
    for (size_t si = 0; si < p->n_steps; si++)
        for (size_t k = 0; k < p->steps[si].n_inputs; k++)
            if (p->steps[si].inputs[k] == v)
                return true;
    return false;
}

/* E's REF_IO/REF_START/HOME/WHERE (struct bd_exec) for its N_OUT outputs: -1 when out of
 * memory. */
static int index_output_refs(bd_exec *e, size_t n_out)
{
    const bd_plan *p = e->plan;
    size_t n_refs = 0;
    e->ref_start = calloc(n_out + 1, sizeof *e->ref_start);
    e->home = calloc(n_out ? n_out : 1, sizeof *e->home);
    e->where = calloc(n_out ? n_out : 1, sizeof *e->where);
    if (!e->ref_start || !e->home || !e->where)
        return -1;
    for (int pass = 0; pass < 2; pass++) {      /* count, then fill */
        n_refs = 0;
        for (size_t i = 0; i < n_out; i++) {
            const bd_value *v = bd_graph_output(p->graph, i);
            e->ref_start[i] = n_refs;
            if (p->offset[v->index] == NO_OFFSET || p->dyn_slot[v->index] >= 0)
                continue;
            /* An output that a node reads — in a later step, or inside a framework's
             * subgraph — stays in the arena: caller memory may be a client's shared region,
             * which the client can rewrite while the node reads it (a double fetch of indices
             * or shapes). Only outputs nothing reads are placed. */
            if (graph_reads(p->graph, v) || steps_read(p, v))
                continue;
            e->home[i] = e->outputs[i].data;
            size_t at = 0;
            for (size_t si = 0; si < p->n_steps; si++) {
                const plan_step *s = &p->steps[si];
                for (size_t k = 0; k < s->n_inputs + s->n_outputs; k++, at++) {
                    const bd_value *x = k < s->n_inputs ? s->inputs[k] : s->outputs[k - s->n_inputs];
                    if (x != v)
                        continue;
                    if (pass)
                        e->ref_io[n_refs] = at;
                    n_refs++;
                }
            }
        }
        e->ref_start[n_out] = n_refs;
        if (!pass && !(e->ref_io = calloc(n_refs ? n_refs : 1, sizeof *e->ref_io)))
            return -1;
    }
    return 0;
}

int bd_exec_create(const bd_plan *p, bd_exec **out, bd_error *err)
{
    bd_exec *e = calloc(1, sizeof *e);
    if (!e)
        return bd_error_set(err, BD_ENOMEM, "out of memory creating an execution context");
    e->plan = p;
    bd_plan_retain(p);
    size_t n_io = 0;
    for (size_t si = 0; si < p->n_steps; si++)
        n_io += p->steps[si].n_inputs + p->steps[si].n_outputs;
    size_t n_out = bd_graph_num_outputs(p->graph);
    e->arena   = aligned_alloc(BD_ARENA_ALIGN, p->arena_size ? (p->arena_size + 63) & ~(size_t)63 : 64);
    e->ctx     = calloc(p->n_steps ? p->n_steps : 1, sizeof *e->ctx);
    e->io      = calloc(n_io ? n_io : 1, sizeof *e->io);
    e->io_base = calloc(p->n_steps ? p->n_steps : 1, sizeof *e->io_base);
    e->outputs = calloc(n_out ? n_out : 1, sizeof *e->outputs);
    e->dyn     = calloc(p->n_dyn ? p->n_dyn : 1, sizeof *e->dyn);
    if (!e->arena || !e->ctx || !e->io || !e->io_base || !e->outputs || !e->dyn) {
        bd_exec_destroy(e);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating an execution context (arena %zu bytes)",
                            p->arena_size);
    }
    size_t at = 0;
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        e->io_base[si] = at;
        for (size_t k = 0; k < s->n_inputs; k++)
            e->io[at++] = exec_view(e, s->inputs[k]);
        for (size_t k = 0; k < s->n_outputs; k++)
            e->io[at++] = exec_view(e, s->outputs[k]);
        int rc = s->backend->ctx_create(s->kernel, &e->ctx[si], err);
        if (rc) {
            bd_exec_destroy(e);
            return rc;
        }
    }
    for (size_t i = 0; i < n_out; i++)
        e->outputs[i] = exec_view(e, bd_graph_output(p->graph, i));
    if (index_output_refs(e, n_out)) {
        bd_exec_destroy(e);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating an execution context");
    }
    *out = e;
    return 0;
}

void bd_exec_destroy(bd_exec *e)
{
    if (!e)
        return;
    for (size_t si = 0; e->ctx && si < e->plan->n_steps; si++)
        if (e->ctx[si])
            e->plan->steps[si].backend->ctx_destroy(e->ctx[si]);
    free(e->arena);
    free(e->ctx);
    free(e->io);
    free(e->io_base);
    free(e->outputs);
    free(e->dyn);
    free(e->ref_io);
    free(e->ref_start);
    free(e->home);
    free(e->where);
    bd_plan_release(e->plan);
    free(e);
}

static bool is_row_major(const DLTensor *t)
{
    if (!t->strides)
        return true;
    int64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != want)
            return false;
        want *= t->shape[d];
    }
    return true;
}

static int check_input(const bd_value *v, const DLTensor *t, bd_error *err)
{
    char want[96], got[96];
    bd_shape gs = { .rank = t->ndim < 0 || t->ndim > BD_MAX_RANK ? -1 : t->ndim };
    for (int d = 0; d < gs.rank; d++)
        gs.dims[d] = t->shape[d];
    int dt = bd_dtype_from_dl(t->dtype);
    if (v->dtype == BD_DT_BOOL && dt == BD_DT_UINT8)
        dt = BD_DT_BOOL;
    if (dt != v->dtype || !bd_shape_equal(&gs, &v->shape))
        return bd_error_set(err, BD_EINVAL, "input '%s': expected %s %s, got %s %s", v->name,
                            bd_dtype_name(v->dtype), bd_shape_str(&v->shape, want, sizeof want),
                            bd_dtype_name(dt), bd_shape_str(&gs, got, sizeof got));
    if (t->device.device_type != kDLCPU || !is_row_major(t) || (!t->data && bd_shape_numel(&gs) > 0))
        return bd_error_set(err, BD_EINVAL, "input '%s': expected a row-major CPU tensor with data",
                            v->name);
    return 0;
}

/* Run-time shapes (backend.h's run() contract): a dynamic input is the tensor its producer
 * reported; a dynamic output is handed over with data NULL and the slot's dims to fill. */
static void dyn_before(bd_exec *e, const plan_step *s, DLTensor *io)
{
    const int *slot = e->plan->dyn_slot;
    for (size_t k = 0; k < s->n_inputs; k++)
        if (slot[s->inputs[k]->index] >= 0)
            io[k] = e->dyn[slot[s->inputs[k]->index]].t;
    for (size_t k = 0; k < s->n_outputs; k++) {
        int d = slot[s->outputs[k]->index];
        if (d < 0)
            continue;
        DLTensor *t = &io[s->n_inputs + k];
        t->data = NULL;
        t->byte_offset = 0;
        t->strides = NULL;
        t->shape = e->dyn[d].dims;
        t->ndim = s->outputs[k]->shape.rank < 0 ? 0 : s->outputs[k]->shape.rank;
    }
}

static int dyn_after(bd_exec *e, const plan_step *s, DLTensor *io, bd_error *err)
{
    const int *slot = e->plan->dyn_slot;
    for (size_t k = 0; k < s->n_outputs; k++) {
        int d = slot[s->outputs[k]->index];
        if (d < 0)
            continue;
        DLTensor *t = &io[s->n_inputs + k];
        if (t->ndim < 0 || t->ndim > BD_MAX_RANK || (t->ndim > 0 && !t->shape))
            return bd_error_set(err, BD_EBACKEND, "output '%s': the backend reported rank %d "
                                "(expected 0..%d with dims)", s->outputs[k]->name, t->ndim, BD_MAX_RANK);
        int64_t numel = 1;
        for (int i = 0; i < t->ndim; i++)
            numel *= t->shape[i];
        if (!t->data && numel > 0)
            return bd_error_set(err, BD_EBACKEND, "output '%s': the backend returned no data",
                                s->outputs[k]->name);
        e->dyn[d].t = *t;
    }
    return 0;
}

static bool overlaps(const char *a, size_t na, const char *b, size_t nb)
{
    return na && nb && a < b + nb && b < a + na;
}

/* May output I go to DEST (bd_exec_run_into's conditions)? WHERE[0..I) are decided. */
static bool placeable(const bd_exec *e, size_t i, const bd_exec_dest *dest, const DLTensor *inputs,
                      size_t n_inputs)
{
    const bd_graph *g = e->plan->graph;
    const bd_value *v = bd_graph_output(g, i);
    size_t bytes = value_bytes(v);
    if (!e->home[i] || !dest->data || bytes > dest->bytes || (uintptr_t)dest->data % BD_ARENA_ALIGN)
        return false;
    for (size_t k = 0; k < n_inputs; k++)
        if (overlaps(dest->data, bytes, (const char *)inputs[k].data + inputs[k].byte_offset,
                     value_bytes(bd_graph_input(g, k))))
            return false;
    for (size_t j = 0; j < i; j++)
        if (e->where[j] != e->home[j] &&
            (bd_graph_output(g, j) == v ||      /* the same value, already placed */
             overlaps(dest->data, bytes, e->where[j], value_bytes(bd_graph_output(g, j)))))
            return false;
    return true;
}

/* Point graph outputs (and every step view of them) at DEST where placeable, else home. */
static void place_outputs(bd_exec *e, const DLTensor *inputs, size_t n_inputs,
                          const bd_exec_dest *dest, size_t n_dest)
{
    const bd_graph *g = e->plan->graph;
    size_t n_out = bd_graph_num_outputs(g);
    for (size_t i = 0; i < n_out; i++)
        e->where[i] = e->home[i];
    for (size_t i = 0; i < n_dest; i++)
        if (placeable(e, i, &dest[i], inputs, n_inputs))
            for (size_t j = 0; j < n_out; j++)  /* the same value named twice moves too */
                if (bd_graph_output(g, j) == bd_graph_output(g, i))
                    e->where[j] = dest[i].data;
    for (size_t i = 0; i < n_out; i++) {
        if (!e->home[i] || e->outputs[i].data == e->where[i])
            continue;
        for (size_t r = e->ref_start[i]; r < e->ref_start[i + 1]; r++)
            e->io[e->ref_io[r]].data = e->where[i];
        e->outputs[i].data = e->where[i];
    }
}

int bd_exec_run(bd_exec *e, const DLTensor *inputs, size_t n_inputs, bd_error *err)
{
    return bd_exec_run_into(e, inputs, n_inputs, NULL, 0, err);
}

int bd_exec_run_into(bd_exec *e, const DLTensor *inputs, size_t n_inputs,
                     const bd_exec_dest *dest, size_t n_dest, bd_error *err)
{
    const bd_plan *p = e->plan;
    const bd_graph *g = p->graph;
    if (n_inputs != bd_graph_num_inputs(g))
        return bd_error_set(err, BD_EINVAL, "expected %zu input tensor(s), got %zu",
                            bd_graph_num_inputs(g), n_inputs);
    if (n_dest > bd_graph_num_outputs(g))
        return bd_error_set(err, BD_EINVAL, "%zu output destinations for %zu output(s)", n_dest,
                            bd_graph_num_outputs(g));
    for (size_t i = 0; i < n_inputs; i++) {
        int rc = check_input(bd_graph_input(g, i), &inputs[i], err);
        if (rc)
            return rc;
    }
    place_outputs(e, inputs, n_inputs, dest, n_dest);
    if (p->threads > 0)
        omp_set_num_threads(p->threads);
    memset(e->backend_ns, 0, sizeof e->backend_ns);
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        DLTensor *io = &e->io[e->io_base[si]];
        for (size_t k = 0; k < s->n_inputs; k++)
            if (s->inputs[k]->is_input)
                for (size_t i = 0; i < n_inputs; i++)
                    if (bd_graph_input(g, i) == s->inputs[k])
                        io[k].data = (char *)inputs[i].data + inputs[i].byte_offset;
        if (p->n_dyn)
            dyn_before(e, s, io);
        uint64_t t0 = now_ns();
        int rc = s->backend->run(e->ctx[si], io, s->n_inputs, io + s->n_inputs, s->n_outputs, err);
        if (s->backend_index >= 0 && s->backend_index < EXEC_MAX_BACKENDS)
            e->backend_ns[s->backend_index] += now_ns() - t0;
        if (rc == 0 && p->n_dyn)
            rc = dyn_after(e, s, io, err);
        if (rc)
            return bd_error_prefix(err, "step %zu (%s): ", si, s->backend->name);
    }
    for (size_t i = 0; p->n_dyn && i < bd_graph_num_outputs(g); i++) {
        int slot = p->dyn_slot[bd_graph_output(g, i)->index];
        if (slot >= 0)
            e->outputs[i] = e->dyn[slot].t;
    }
    /* Outputs that no step produces (a graph input or a constant passed through). */
    for (size_t i = 0; i < bd_graph_num_outputs(g); i++) {
        const bd_value *v = bd_graph_output(g, i);
        if (v->producer)
            continue;
        const void *src = v->data;
        for (size_t k = 0; k < n_inputs && !src; k++)
            if (bd_graph_input(g, k) == v)
                src = (const char *)inputs[k].data + inputs[k].byte_offset;
        if (src)
            memcpy(e->outputs[i].data, src, value_bytes(v));
    }
    return 0;
}

size_t bd_exec_backend_ns(const bd_exec *e, uint64_t *ns, size_t max)
{
    size_t nb;
    bd_backends(&nb);
    size_t n = nb < max ? nb : max;
    for (size_t i = 0; i < n; i++)
        ns[i] = i < EXEC_MAX_BACKENDS ? e->backend_ns[i] : 0;
    return n;
}

size_t bd_exec_num_outputs(const bd_exec *e)            { return bd_graph_num_outputs(e->plan->graph); }
const DLTensor *bd_exec_output(const bd_exec *e, size_t i)
{
    return i < bd_exec_num_outputs(e) ? &e->outputs[i] : NULL;
}
