/* Run-time-shaped views and reductions: Reshape, Squeeze and Unsqueeze whose shape or axes,
 * the Reduce ops whose axes, and TopK whose K are a run-time tensor, so that only the run can
 * tell the output's shape.
 *
 * A node whose output shapes the plan knows is the movement or reduction family's (this
 * table comes first and hands such a node to that family's entry: native_movement.c's views,
 * native_reduce.c, native_topk.c). Otherwise the run computes the outputs' dims from the
 * run-time tensor with the op's rules and checked arithmetic (nv_output_shape: non-negative,
 * within the bounds, agreeing with what the plan knows), then a view copies the bytes, and a
 * reduction or TopK runs its family's kernel, which finds the outputs shaped as the axes or K
 * say. A shape, an axis or a K the input cannot take (an element count that does not divide,
 * two -1, an axis out of range or repeated, squeezing a dim that is not 1, K beyond the axis)
 * is INVALID_ARGUMENT. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { DS_RESHAPE, DS_SQUEEZE, DS_UNSQUEEZE, DS_REDUCE, DS_TOPK };

/* The entry of the family that runs N when its output's shape is planned. */
static const nv_op *planned_op(const bd_node *n)
{
    bool red = !strncmp(n->op_type, "Reduce", 6) || !strcmp(n->op_type, "TopK");
    const nv_op *t = red ? nv_reduce_ops : nv_movement_ops;
    size_t count = t == nv_reduce_ops ? nv_reduce_n : nv_movement_n;
    for (size_t i = 0; i < count; i++)
        if (!strcmp(t[i].op, n->op_type))
            return &t[i];
    return NULL;
}

static int kind_of(const char *op)
{
    return !strcmp(op, "Reshape") ? DS_RESHAPE : !strcmp(op, "Squeeze") ? DS_SQUEEZE
         : !strcmp(op, "Unsqueeze") ? DS_UNSQUEEZE : !strcmp(op, "TopK") ? DS_TOPK : DS_REDUCE;
}

/* Reductions the family defines exactly on integers (the others need a rounding). */
static bool reduce_on_ints(const char *op)
{
    return !strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin") ||
           !strcmp(op, "ReduceProd") || !strcmp(op, "ReduceL1") || !strcmp(op, "ReduceSumSquare");
}

static bool planned(const bd_node *n)
{
    for (size_t k = 0; k < n->n_outputs; k++)
        if (!bd_shape_is_static(&n->outputs[k]->shape))
            return false;
    return true;
}

/* TopK with a run-time K: X numeric, K one INT64, values of X's dtype and INT64 indices of
 * X's rank (or an unknown one). */
static bool topk_supports(const bd_node *n, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *k = bd_node_input(n, 1);
    if (n->n_inputs != 2 || !x || !k || n->n_outputs != 2)
        return nv_why(why, len, "TopK: a run-time-shaped output needs X, a K input and two "
                      "outputs");
    if (!nv_value_ok(x, NV_DT_NUMERIC) || !nv_value_ok(k, NV_DT(BD_DT_INT64)) ||
        nv_shape_numel(&k->shape) != 1 || !nv_output_ok(n->outputs[0], NV_DT(x->dtype)) ||
        !nv_output_ok(n->outputs[1], NV_DT(BD_DT_INT64)))
        return nv_why(why, len, "TopK: numeric X, one INT64 K, values of X's dtype and INT64 "
                      "indices");
    int r = x->shape.rank;
    if (r < 1 || nv_axis(bd_node_attr_int(n, "axis", -1), r) < 0)
        return nv_why(why, len, "TopK: axis out of range for rank %d", r);
    for (size_t i = 0; i < 2; i++)
        if (n->outputs[i]->shape.rank >= 0 && n->outputs[i]->shape.rank != r)
            return nv_why(why, len, "TopK: the outputs must have X's rank");
    return true;
}

static bool dyn_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    const nv_op *op = planned_op(n);
    if (!op)
        return nv_why(why, len, "%s: no kernel", n->op_type);
    if (planned(n))
        return op->supports(g, n, why, len);
    int kind = kind_of(n->op_type);
    if (kind == DS_TOPK)
        return topk_supports(n, why, len);
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "%s: a run-time-shaped output needs the data and a %s input",
                      n->op_type, kind == DS_RESHAPE ? "shape" : "axes");
    const bd_value *x = n->inputs[0], *p = n->inputs[1], *y = n->outputs[0];
    unsigned mask = NV_DT_ANY;
    if (kind == DS_REDUCE)
        mask = NV_DT_FLOATS | (reduce_on_ints(n->op_type)
                                   ? NV_DT_INTS & ~NV_DT(BD_DT_UINT64) : 0);
    if (!nv_value_ok(x, mask) || !nv_output_ok(y, NV_DT(x->dtype)))
        return nv_why(why, len, "%s: dtype %s", n->op_type, bd_dtype_name(x->dtype));
    if (!nv_value_ok(p, NV_DT(BD_DT_INT64)) || p->shape.rank != 1 || p->shape.dims[0] > BD_MAX_RANK)
        return nv_why(why, len, "%s: the %s must be a static INT64 vector of at most %d values",
                      n->op_type, kind == DS_RESHAPE ? "shape" : "axes", BD_MAX_RANK);
    if (kind == DS_REDUCE && (bd_node_attr(n, "axes") ||
                              (!nv_dtype_is_float(x->dtype) && nv_shape_numel(&x->shape) == 0)))
        return nv_why(why, len, "%s: an axes attribute besides the input, or an empty integer "
                      "tensor", n->op_type);
    int rank = x->shape.rank, count = (int)p->shape.dims[0], want = -1;
    if (kind == DS_RESHAPE)
        want = count;
    else if (kind == DS_UNSQUEEZE)
        want = rank + count;
    else if (kind == DS_SQUEEZE && count > 0)
        want = rank - count;
    else if (kind == DS_REDUCE && bd_node_attr_int(n, "keepdims", 1))
        want = rank;
    if (want > BD_MAX_RANK || (want >= 0 && y->shape.rank >= 0 && y->shape.rank != want))
        return nv_why(why, len, "%s: the output's rank is not what the %s gives", n->op_type,
                      kind == DS_RESHAPE ? "shape" : "axes");
    return true;
}

/* ---- the output's dims --------------------------------------------------------------------- */

/* Reshape: SHAPE's COUNT values over X (0 copies X's dim unless ALLOWZERO, -1 takes the rest). */
static int reshape_dims(const nv_tensor *x, const int64_t *shape, int64_t count, bool allowzero,
                        int64_t *dims, bd_error *err)
{
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < count; i++) {
        int64_t v = shape[i];
        if (v == 0 && !allowzero) {
            if (i >= x->rank)
                return bd_error_set(err, BD_EINVAL, "Reshape: shape[%d] = 0 copies a dim the "
                                    "input of rank %d has not", i, x->rank);
            v = x->dims[i];
        }
        if (v < -1 || (v == -1 && infer >= 0))
            return bd_error_set(err, BD_EINVAL, "Reshape: shape[%d] = %lld (at most one -1, no "
                                "other negative)", i, (long long)shape[i]);
        if (v == -1) {
            infer = i;
            continue;
        }
        if (__builtin_mul_overflow(known, v, &known))
            return bd_error_set(err, BD_EINVAL, "Reshape: the shape's element count overflows");
        dims[i] = v;
    }
    int64_t numel = (int64_t)x->numel;
    if (infer >= 0) {
        if (known == 0 || numel % known)
            return bd_error_set(err, BD_EINVAL, "Reshape: %lld elements do not divide into the "
                                "shape's %lld", (long long)numel, (long long)known);
        dims[infer] = numel / known;
        known = numel;
    }
    if (known != numel)
        return bd_error_set(err, BD_EINVAL, "Reshape: the shape holds %lld elements, the input "
                            "%lld", (long long)known, (long long)numel);
    return 0;
}

/* AXES (COUNT of them) against RANK into MASK; BD_EINVAL naming OP when one is out of range or
 * repeated. */
static int axes_mask(const char *op, const int64_t *axes, int64_t count, int rank, bool *mask,
                     bd_error *err)
{
    memset(mask, 0, BD_MAX_RANK * sizeof *mask);
    for (int64_t k = 0; k < count; k++) {
        int a = nv_axis(axes[k], rank);
        if (a < 0 || rank == 0 || mask[a])
            return bd_error_set(err, BD_EINVAL, "%s: axis %lld is out of range for rank %d or "
                                "repeated", op, (long long)axes[k], rank);
        mask[a] = true;
    }
    return 0;
}

/* The family's kernel of a reduction or TopK and what the outputs' dims need, kept by
 * prepare (the step keeps the family's own parameters). */
typedef struct ds_reduce {
    nv_run_fn run;
    bool      keep, noop;        /* a reduction's keepdims, noop_with_empty_axes */
    int       topk_axis;         /* TopK's axis, or -1 */
} ds_reduce;

/* The output's dims from this run's shape or axes into DIMS; its rank into *RANK. */
static int output_dims(const nv_step *s, const nv_tensor *in, int64_t *dims, int *rank,
                       bd_error *err)
{
    const nv_tensor *x = &in[0];
    const ds_reduce *red = s->heap;
    const char *op = s->node->op_type;
    int64_t v[BD_MAX_RANK];
    int64_t count = nv_run_ints(&in[1], v, BD_MAX_RANK, op, err);
    bool mask[BD_MAX_RANK];
    int rc, r = 0;
    if (count < 0)
        return (int)count;
    if (red && red->topk_axis >= 0) {
        int ax = red->topk_axis;
        if (count != 1 || v[0] < 0 || v[0] > x->dims[ax])
            return bd_error_set(err, BD_EINVAL, "TopK: K = %lld for an axis of %lld",
                                count == 1 ? (long long)v[0] : -1LL, (long long)x->dims[ax]);
        memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
        dims[ax] = v[0];
        *rank = x->rank;
        return 0;
    }
    if (red) {
        if (count == 0 && red->noop) {          /* no axes: the input as it is */
            memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
            *rank = x->rank;
            return 0;
        }
        if ((rc = axes_mask(op, v, count, x->rank, mask, err)))
            return rc;
        for (int d = 0; d < x->rank; d++)
            if (!(count == 0 || mask[d]))
                dims[r++] = x->dims[d];
            else if (red->keep)
                dims[r++] = 1;
        *rank = r;
        return 0;
    }
    switch (s->op) {
    case DS_RESHAPE:
        *rank = (int)count;
        return reshape_dims(x, v, count, s->ip[0], dims, err);
    case DS_UNSQUEEZE:
        if (x->rank + count > BD_MAX_RANK)
            return bd_error_set(err, BD_EINVAL, "Unsqueeze: rank %lld is beyond %d",
                                (long long)(x->rank + count), BD_MAX_RANK);
        if ((rc = axes_mask(op, v, count, x->rank + (int)count, mask, err)))
            return rc;
        for (int d = 0, i = 0; d < x->rank + count; d++)
            dims[r++] = mask[d] ? 1 : x->dims[i++];
        *rank = r;
        return 0;
    default:                                    /* Squeeze */
        if ((rc = axes_mask(op, v, count, x->rank, mask, err)))
            return rc;
        for (int d = 0; d < x->rank; d++) {
            bool drop = count ? mask[d] : x->dims[d] == 1;
            if (drop && x->dims[d] != 1)
                return bd_error_set(err, BD_EINVAL, "Squeeze: axis %d has %lld elements, not 1",
                                    d, (long long)x->dims[d]);
            if (!drop)
                dims[r++] = x->dims[d];
        }
        *rank = r;
        return 0;
    }
}

/* ---- run and prepare ------------------------------------------------------------------------ */

static int dyn_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    int64_t dims[BD_MAX_RANK];
    int rank = 0;
    int rc = output_dims(s, in, dims, &rank, err);
    for (int k = 0; rc == 0 && k < s->n_out; k++)     /* TopK's two outputs share the dims */
        rc = nv_output_shape(env, s, out, k, rank, dims, err);
    if (rc)
        return rc;
    if (s->heap)                                /* a reduction or TopK: its family's kernel */
        return ((const ds_reduce *)s->heap)->run(s, in, out, env, err);
    if (out[0].numel && out[0].data != in[0].data)
        memcpy(out[0].data, in[0].data, in[0].numel * bd_dtype_size(in[0].dtype));
    return 0;
}

static int dyn_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    const nv_op *op = planned_op(n);
    if (planned(n))
        return op->prepare(n, s, err);
    int kind = kind_of(n->op_type);
    if (kind == DS_REDUCE || kind == DS_TOPK) {
        ds_reduce *r = malloc(sizeof *r);
        if (!r)
            return bd_error_set(err, BD_ENOMEM, "out of memory preparing %s", n->op_type);
        int rc = op->prepare(n, s, err);     /* the family's parameters, axes at run time */
        if (rc) {
            free(r);
            return rc;
        }
        *r = (ds_reduce){ .run = s->run, .keep = bd_node_attr_int(n, "keepdims", 1) != 0,
                          .noop = bd_node_attr_int(n, "noop_with_empty_axes", 0) != 0,
                          .topk_axis = kind == DS_TOPK ? nv_axis(bd_node_attr_int(n, "axis", -1),
                                                                 n->inputs[0]->shape.rank) : -1 };
        s->heap = r;
    } else {
        s->op = kind;
        s->ip[0] = kind == DS_RESHAPE && bd_node_attr_int(n, "allowzero", 0) != 0;
    }
    s->run = dyn_run;
    return 0;
}

const nv_op nv_dynshape_ops[] = {
    { "Reshape", dyn_supports, dyn_prepare },
    { "Squeeze", dyn_supports, dyn_prepare },
    { "Unsqueeze", dyn_supports, dyn_prepare },
    { "ReduceSum", dyn_supports, dyn_prepare },
    { "ReduceMean", dyn_supports, dyn_prepare },
    { "ReduceMax", dyn_supports, dyn_prepare },
    { "ReduceMin", dyn_supports, dyn_prepare },
    { "ReduceProd", dyn_supports, dyn_prepare },
    { "ReduceL1", dyn_supports, dyn_prepare },
    { "ReduceL2", dyn_supports, dyn_prepare },
    { "ReduceLogSum", dyn_supports, dyn_prepare },
    { "ReduceLogSumExp", dyn_supports, dyn_prepare },
    { "ReduceSumSquare", dyn_supports, dyn_prepare },
    { "TopK", dyn_supports, dyn_prepare },
};
const size_t nv_dynshape_n = sizeof nv_dynshape_ops / sizeof nv_dynshape_ops[0];
