/* Constant folding at plan time: a node whose every input is a constant (an initializer, or
 * the output of a node folded before it) is run once, here, and its outputs become constants
 * of the plan's graph; the node is then dropped with the others shape inference folded. What
 * is left for every run is the work that depends on the inputs: BERT's position and
 * token-type embedding lookups, Swin's relative position bias MLP and window masks,
 * TensorFlow graphs' constant subexpressions and the like cost nothing per inference.
 *
 * A node runs on the native engine when it takes it, else on the fast path (a MatMul or Conv
 * of weights) when the plan's options allow the fast path for it (its engine list names it
 * and fallback_ops does not name the op).
 *
 * Folded bytes live in the plan graph's pool, bounded per plan (PLAN_FOLD_MAX_BYTES): a
 * constant subexpression that would expand past it (a Tile or Expand of a constant into a
 * huge tensor) is left to run per inference instead. A DequantizeLinear of one of the model's
 * own initializers is not bounded so: its float result is at most 4x bytes the model file
 * already holds (a QDQ model's int8 weights: BERT-base's are 340 MB as floats), and the fast
 * path lays it out at compile, after which release_plan_constants gives the pages back. */
#include "runtime/plan_internal.h"

#include <stdlib.h>
#include <string.h>

#include "partitioner/passes/partition.h"
#include "runtime/engines.h"

#define PLAN_FOLD_MAX_BYTES   ((size_t)64 << 20)
#define PLAN_FOLD_MAX_OUTPUTS 8

/* N is a DequantizeLinear of an initializer of the model (not of a folded value, which a Tile
 * may have expanded): its output is at most 4x that initializer's bytes. */
static bool dequantizes_model_bytes(const bd_node *n)
{
    const bd_value *x = n->n_inputs ? n->inputs[0] : NULL;
    return !strcmp(n->op_type, "DequantizeLinear") && (!n->domain || !n->domain[0]) && x && x->data && !x->producer &&
           x->nbytes >= (size_t)bd_shape_numel(&x->shape) * bd_dtype_size(x->dtype);
}

/* Can N be folded: outputs static and small enough, every input a constant? */
static bool foldable(const bd_node *n, size_t budget, size_t *bytes)
{
    if (n->n_outputs == 0 || n->n_implicit || n->n_post)
        return false;
    bool any_input = false;
    for (size_t k = 0; k < n->n_inputs; k++) {
        const bd_value *v = n->inputs[k];
        if (!v)
            continue;
        if (!v->data || v->is_input || !bd_shape_is_static(&v->shape))
            return false;
        any_input = true;
    }
    size_t total = 0;
    for (size_t k = 0; k < n->n_outputs; k++) {
        const bd_value *v = n->outputs[k];
        int64_t ne = bd_shape_numel(&v->shape);
        size_t b;
        if (v->data || v->is_output || !bd_shape_is_static(&v->shape) || ne < 0 ||
            bd_dtype_size(v->dtype) == 0 || __builtin_mul_overflow((size_t)ne, bd_dtype_size(v->dtype), &b) ||
            __builtin_add_overflow(total, b, &total))
            return false;
    }
    *bytes = total;
    if (any_input && dequantizes_model_bytes(n))
        *bytes = 0;                    /* bounded by the model's size, not the budget */
    return any_input && *bytes <= budget;
}

/* Run N once on ENGINE, its outputs written into fresh buffers of G's pool. */
static int fold_node(bd_graph *g, bd_node *n, const bd_backend *engine, bd_error *err)
{
    bd_value *none = NULL;
    bd_node *nodes[1] = { n };
    bd_subgraph sg = { .graph = g, .nodes = nodes, .n_nodes = 1, .inputs = &none, .n_inputs = 0,
                       .outputs = n->outputs, .n_outputs = n->n_outputs };
    DLTensor out[PLAN_FOLD_MAX_OUTPUTS];
    void *data[PLAN_FOLD_MAX_OUTPUTS];
    if (n->n_outputs > PLAN_FOLD_MAX_OUTPUTS)
        return 1;
    for (size_t k = 0; k < n->n_outputs; k++) {
        const bd_value *v = n->outputs[k];
        size_t bytes = (size_t)bd_shape_numel(&v->shape) * bd_dtype_size(v->dtype);
        if (!(data[k] = bd_graph_alloc(g, bytes ? bytes : 1)))
            return bd_error_set(err, BD_ENOMEM, "out of memory folding node '%s'", n->name);
        out[k] = (DLTensor){ .data = data[k], .device = { kDLCPU, 0 }, .ndim = v->shape.rank,
                             .shape = (int64_t *)v->shape.dims };
        bd_dtype_to_dl(v->dtype, &out[k].dtype);
    }
    bd_kernel *k = NULL;
    bd_kernel_ctx *ctx = NULL;
    bd_error ignored = { 0 };
    /* a node the engine claims but cannot run on these constants (an index out of range, say)
     * is simply not folded: the same error then comes from the run, to the caller */
    int rc = engine->compile(&sg, &k, &ignored);
    if (rc == 0)
        rc = engine->ctx_create(k, &ctx, &ignored);
    if (rc == 0)
        rc = engine->run(ctx, NULL, 0, out, n->n_outputs, &ignored);
    if (ctx)
        engine->ctx_destroy(ctx);
    if (k)
        engine->release(k);
    if (rc)
        return rc == BD_ENOMEM ? bd_error_set(err, BD_ENOMEM, "out of memory folding node '%s'", n->name) : 1;
    for (size_t i = 0; i < n->n_outputs; i++) {
        bd_value *v = n->outputs[i];
        v->data = data[i];
        v->nbytes = (size_t)bd_shape_numel(&v->shape) * bd_dtype_size(v->dtype);
    }
    return 0;
}

/* The engine that folds N: the native engine when it takes N, else the fast path when it is
 * allowed for N and takes it; NULL when neither does. */
static const bd_backend *fold_engine(const bd_graph *g, const bd_node *n, const bd_backend *native,
                                     const bd_backend *fast, const bd_placement_opts *opts)
{
    char why[128];
    if (native && native->supports(g, n, why, sizeof why))
        return native;
    if (fast && !bd_place_forced_fallback(opts, n) && fast->supports(g, n, why, sizeof why))
        return fast;
    return NULL;
}

/* Does some node whose outputs are not all static read a value FOLDED (by value index)?
 * Then inference, run again, may learn its shapes. */
static bool feeds_unknown_shape(const bd_graph *g, const bool *folded)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *n = bd_graph_node(g, i);
        bool unknown = false;
        for (size_t k = 0; k < n->n_outputs && !unknown; k++)
            unknown = !bd_shape_is_static(&n->outputs[k]->shape);
        for (size_t k = 0; unknown && k < n->n_inputs; k++)
            if (n->inputs[k] && folded[n->inputs[k]->index])
                return true;
    }
    return false;
}

int plan_fold_constants(bd_graph *g, const bd_placement_opts *opts, size_t *spent, bool *reinfer,
                        bd_error *err)
{
    size_t nb, budget = *spent < PLAN_FOLD_MAX_BYTES ? PLAN_FOLD_MAX_BYTES - *spent : 0;
    const bd_backend *const *backends = bd_backends(&nb), *native = NULL, *fast = NULL;
    unsigned allowed = ~0u;
    bd_error ignored = { 0 };
    if (opts && bd_place_engines(opts, backends, nb, &allowed, &ignored))
        allowed = 0;                   /* the model's open checked the names: not reached */
    for (size_t b = 0; b < nb; b++) {
        if (backends[b]->kind == BD_ENGINE_NATIVE && !native)
            native = backends[b];      /* folding is not placement: any engine list folds */
        if (backends[b]->kind == BD_ENGINE_FAST_PATH && !fast && b < 32 && (allowed >> b & 1))
            fast = backends[b];
    }
    *reinfer = false;
    if (!native && !fast)
        return 0;
    bool *folded = calloc(bd_graph_num_values(g) + 1, sizeof *folded);
    if (!folded)
        return bd_error_set(err, BD_ENOMEM, "out of memory folding constants");
    int count = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {     /* topological: folds chain */
        bd_node *n = bd_graph_node(g, i);
        size_t bytes;
        const bd_backend *engine;
        if (!foldable(n, budget, &bytes) || !(engine = fold_engine(g, n, native, fast, opts)))
            continue;
        int rc = fold_node(g, n, engine, err);
        if (rc < 0) {
            free(folded);
            return rc;
        }
        if (rc == 0) {
            budget -= bytes;
            *spent += bytes;
            count++;
            for (size_t k = 0; k < n->n_outputs; k++)
                folded[n->outputs[k]->index] = true;
        }
    }
    *reinfer = count > 0 && feeds_unknown_shape(g, folded);
    free(folded);
    return count;
}
