/* Tensors made from shapes and a few values: Shape and Size (the plan's static dims, written
 * as INT64), Range, ConstantOfShape, EyeLike and OneHot. Where a run-time input determines the
 * shape (Range's bounds, ConstantOfShape's shape, OneHot's depth) each run computes it: a
 * static output (shape inference folded it, or the model declares it) must get the plan's
 * shape, and Range's and ConstantOfShape's outputs may instead be sized by the run
 * (nv_output_shape). */
#include <math.h>
#include <string.h>

#include "backends/native/native_movement.h"

/* N reads NIN inputs, all present, and writes one output. */
static bool arity_ok(const bd_node *n, size_t nin, char *why, size_t len)
{
    bool ok = n->n_inputs == nin && n->n_outputs == 1;
    for (size_t i = 0; ok && i < nin; i++)
        ok = n->inputs[i] != NULL;
    return ok ? true : nv_why(why, len, "%s: expects %zu input(s) and one output", n->op_type, nin);
}

/* ---- Shape, Size ------------------------------------------------------------------------- */

/* Shape's dims [start, end) of rank R (opset 15's attributes, clamped like Slice). */
static void shape_span(const bd_node *n, int r, int64_t *start, int64_t *count)
{
    int64_t b = bd_node_attr_int(n, "start", 0), e = bd_node_attr_int(n, "end", r);
    b = b < 0 ? b + r : b;
    e = e < 0 ? e + r : e;
    b = b < 0 ? 0 : b > r ? r : b;
    e = e < 0 ? 0 : e > r ? r : e;
    *start = b;
    *count = e > b ? e - b : 0;
}

static bool shape_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!arity_ok(n, 1, why, len))
        return false;
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    bool size = !strcmp(n->op_type, "Size");
    int64_t start, count = 1;
    if (!nv_value_ok(x, NV_DT_ANY) || !nv_value_ok(y, NV_DT(BD_DT_INT64)))
        return nv_why(why, len, "%s: needs a static input and an INT64 output", n->op_type);
    if (!size)
        shape_span(n, x->shape.rank, &start, &count);
    if (y->shape.rank != (size ? 0 : 1) || nv_shape_numel(&y->shape) != (size_t)count)
        return nv_why(why, len, "%s: the output shape is not %s", n->op_type,
                      size ? "a scalar" : "the number of dims");
    return true;
}

static int ints_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)in;
    (void)env;
    (void)err;
    if (out[0].numel)
        memcpy(out[0].data, s->ip, out[0].numel * sizeof s->ip[0]);
    return 0;
}

/* The values are the plan's static dims (or their product), known now. */
static int shape_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const bd_shape *x = &n->inputs[0]->shape;
    int64_t start, count;
    if (!strcmp(n->op_type, "Size")) {
        s->ip[0] = (int64_t)nv_shape_numel(x);
    } else {
        shape_span(n, x->rank, &start, &count);
        memcpy(s->ip, &x->dims[start], (size_t)count * sizeof s->ip[0]);
    }
    s->run = ints_run;
    return 0;
}

/* ---- Range ------------------------------------------------------------------------------- */

#define RANGE_TYPES (NV_DT_FLOATS | NV_DT(BD_DT_INT16) | NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64))

static bool range_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!arity_ok(n, 3, why, len))
        return false;
    for (size_t i = 0; i < 3; i++)
        if (!nv_value_ok(n->inputs[i], RANGE_TYPES))
            return nv_why(why, len, "Range: input %zu's dtype or a shape only known at run time",
                          i);
    if (!nv_output_ok(n->outputs[0], RANGE_TYPES))      /* its length may be the run's */
        return nv_why(why, len, "Range: output dtype %s", bd_dtype_name(n->outputs[0]->dtype));
    for (size_t i = 0; i < 3; i++)
        if (n->inputs[i]->dtype != n->outputs[0]->dtype ||
            nv_shape_numel(&n->inputs[i]->shape) != 1)
            return nv_why(why, len, "Range: start, limit and delta must be scalars of the output's "
                          "dtype");
    int r = n->outputs[0]->shape.rank;
    return r == 1 || r < 0 ? true : nv_why(why, len, "Range: a 1-D output");
}

/* The element count of range(START, LIMIT, DELTA) as shape inference computes it: in double
 * for float types, exactly (unsigned span / step) for integers. -1 when DELTA is 0. */
static double range_count(const nv_tensor *in)
{
    int t = in[0].dtype;
    if (nv_dtype_is_float(t)) {
        double s = nv_get_f(in[0].data, t, 0), l = nv_get_f(in[1].data, t, 0);
        double d = nv_get_f(in[2].data, t, 0), c = ceil((l - s) / d);
        return d == 0 || !isfinite(c) ? -1 : c > 0 ? c : 0;
    }
    int64_t s = nv_get_i(in[0].data, t, 0), l = nv_get_i(in[1].data, t, 0);
    int64_t d = nv_get_i(in[2].data, t, 0);
    if (d == 0)
        return -1;
    bool up = d > 0;
    uint64_t span = up ? (l > s ? (uint64_t)l - (uint64_t)s : 0)
                       : (s > l ? (uint64_t)s - (uint64_t)l : 0);
    uint64_t step = up ? (uint64_t)d : 0 - (uint64_t)d;
    return (double)(span / step + (span % step != 0));
}

static int range_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    double count = range_count(in);
    int t = out[0].dtype;
    if (count < 0)
        return bd_error_set(err, BD_EINVAL, "Range: delta is 0 or the range is not finite");
    if (count > (double)INT64_MAX / 2)      /* beyond any shape; and an exact int64 below */
        return bd_error_set(err, BD_EINVAL, "Range: start, limit and delta give %.0f elements",
                            count);
    int64_t dim = (int64_t)count;
    int rc = nv_output_shape(env, s, out, 0, 1, &dim, err);
    if (rc)
        return rc;
    size_t n = out[0].numel;
    if (nv_dtype_is_float(t)) {
        double start = nv_get_f(in[0].data, t, 0), delta = nv_get_f(in[2].data, t, 0);
        for (size_t i = 0; i < n; i++)
            nv_set_f(out[0].data, t, i, start + (double)i * delta);
        return 0;
    }
    uint64_t start = (uint64_t)nv_get_i(in[0].data, t, 0);
    uint64_t delta = (uint64_t)nv_get_i(in[2].data, t, 0);
    for (size_t i = 0; i < n; i++)      /* in [start, limit): fits T; unsigned: never UB */
        nv_set_i(out[0].data, t, i, (int64_t)(start + i * delta));
    return 0;
}

static int range_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)err;
    s->run = range_run;
    return 0;
}

/* ---- ConstantOfShape --------------------------------------------------------------------- */

/* The fill: the value attribute (one element of any dtype), FLOAT 0 without it; NULL when the
 * attribute is not one element. */
static const bd_value *fill_value(const bd_node *n, int *dtype)
{
    static const float zero = 0;
    static const bd_value dflt = { .dtype = BD_DT_FLOAT, .data = &zero, .nbytes = sizeof zero };
    const bd_attr *a = bd_node_attr(n, "value");
    if (!a) {
        *dtype = BD_DT_FLOAT;
        return &dflt;
    }
    const bd_value *v = a->type == BD_ATTR_TENSOR ? a->tensor : NULL;
    if (!v || !v->data || !bd_dtype_size(v->dtype) || v->nbytes != bd_dtype_size(v->dtype))
        return NULL;
    *dtype = v->dtype;
    return v;
}

/* The output may be run-time-shaped when the shape is a run-time input. */
static bool cos_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    int dtype;
    if (!arity_ok(n, 1, why, len))
        return false;
    const bd_value *sv = n->inputs[0], *y = n->outputs[0];
    bool runtime = !nv_input_const(n, 0);
    if (!(runtime ? nv_output_ok(y, NV_DT_ANY) : nv_value_ok(y, NV_DT_ANY)))
        return nv_why(why, len, "ConstantOfShape: an output dtype or shape only known at run time");
    if (!fill_value(n, &dtype) || y->dtype != dtype)
        return nv_why(why, len, "ConstantOfShape: value is not one element of the output's dtype");
    if (!nv_value_ok(sv, NV_DT(BD_DT_INT64)) || sv->shape.rank != 1 ||
        nv_shape_numel(&sv->shape) > BD_MAX_RANK ||
        (y->shape.rank >= 0 && nv_shape_numel(&sv->shape) != (size_t)y->shape.rank))
        return nv_why(why, len, "ConstantOfShape: the shape must be an INT64 vector of the "
                      "output's rank (at most %d)", BD_MAX_RANK);
    int64_t dims[BD_MAX_RANK];
    if (!runtime && (nv_const_ints(sv, dims, BD_MAX_RANK) != y->shape.rank ||
                     memcmp(dims, y->shape.dims, (size_t)y->shape.rank * sizeof *dims)))
        return nv_why(why, len, "ConstantOfShape: the output shape is not the shape input's");
    return true;
}

static int cos_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    int64_t dims[BD_MAX_RANK];
    int64_t count = nv_run_ints(&in[0], dims, BD_MAX_RANK, "ConstantOfShape: shape", err);
    if (count < 0)
        return (int)count;
    int rc = nv_output_shape(env, s, out, 0, (int)count, dims, err);
    if (rc || out[0].numel == 0)
        return rc;
    size_t es = bd_dtype_size(out[0].dtype);
    memcpy(out[0].data, s->ip, es);
    nv_replicate(out[0].data, es, out[0].numel);
    return 0;
}

static int cos_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    int dtype;
    const bd_value *v = fill_value(n, &dtype);
    memcpy(s->ip, v->data, v->nbytes);
    s->run = cos_run;
    return 0;
}

/* ---- EyeLike ----------------------------------------------------------------------------- */

static bool eyelike_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!arity_ok(n, 1, why, len))
        return false;
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int dtype = (int)bd_node_attr_int(n, "dtype", x->dtype);
    if (!nv_value_ok(x, NV_DT_ANY) || !nv_value_ok(y, NV_DT_ANY) || y->dtype != dtype)
        return nv_why(why, len, "EyeLike: dtypes or shapes");
    if (x->shape.rank != 2 || !bd_shape_equal(&x->shape, &y->shape))
        return nv_why(why, len, "EyeLike: needs a 2-D input and an output of its shape");
    return true;
}

/* Zeros, then ones on the diagonal K (checked against the dims first: no overflow). */
static int eyelike_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                       bd_error *err)
{
    (void)in;
    (void)env;
    (void)err;
    int64_t rows = out[0].dims[0], cols = out[0].dims[1], k = s->ip[0];
    size_t es = bd_dtype_size(out[0].dtype);
    char *y = out[0].data;
    if (out[0].numel == 0)
        return 0;
    memset(y, 0, out[0].numel * es);
    if (k >= cols || k <= -rows)
        return 0;
    for (int64_t i = k < 0 ? -k : 0; i < rows && i + k < cols; i++)
        memcpy(y + (size_t)(i * cols + i + k) * es, &s->ip[1], es);
    return 0;
}

static int eyelike_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "k", 0);
    nv_one_bits(n->outputs[0]->dtype, &s->ip[1]);
    s->run = eyelike_run;
    return 0;
}

/* ---- OneHot ------------------------------------------------------------------------------ */

static bool onehot_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!arity_ok(n, 3, why, len))
        return false;
    const bd_value *x = n->inputs[0], *depth = n->inputs[1], *vals = n->inputs[2];
    const bd_shape *y = &n->outputs[0]->shape;
    if (!nv_value_ok(x, NV_DT_NUMERIC) || !nv_value_ok(depth, NV_DT_NUMERIC) ||
        nv_shape_numel(&depth->shape) != 1 || !nv_value_ok(vals, NV_DT_ANY) ||
        nv_shape_numel(&vals->shape) != 2 || !nv_value_ok(n->outputs[0], NV_DT_ANY) ||
        n->outputs[0]->dtype != vals->dtype)
        return nv_why(why, len, "OneHot: numeric indices, one depth, two values of the output's "
                      "dtype");
    int r = x->shape.rank, ax = nv_axis(bd_node_attr_int(n, "axis", -1), r + 1);
    bool ok = ax >= 0 && y->rank == r + 1;
    for (int d = 0; ok && d < r; d++)
        ok = x->shape.dims[d] == y->dims[d < ax ? d : d + 1];
    return ok ? true : nv_why(why, len, "OneHot: the output shape is not the indices' with the "
                              "depth inserted at axis");
}

/* Index E of X as a class in [0, DEPTH) (negative ones wrap once), or -1: out of range. */
static int64_t class_of(const nv_tensor *x, size_t e, int64_t depth)
{
    int64_t v;
    if (nv_dtype_is_float(x->dtype)) {
        double f = nv_get_f(x->data, x->dtype, e);
        if (!(f > (double)-depth - 1 && f < (double)depth))   /* NaN too */
            return -1;
        v = (int64_t)f;                 /* truncation, as ONNX casts to int64 */
    } else if (x->dtype == BD_DT_UINT64 && ((const uint64_t *)x->data)[e] > INT64_MAX) {
        return -1;
    } else {
        v = nv_get_i(x->data, x->dtype, e);
    }
    v = v < 0 && v >= -depth ? v + depth : v;
    return v >= 0 && v < depth ? v : -1;
}

static int onehot_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    int ax = (int)s->ip[0];
    int64_t depth = out[0].dims[ax];
    double want = nv_get_f(in[1].data, in[1].dtype, 0);
    if (trunc(want) != (double)depth)    /* the depth sized the output at compile */
        return bd_error_set(err, BD_EINVAL, "OneHot: depth %g, the plan has %lld", want,
                            (long long)depth);
    size_t es = bd_dtype_size(out[0].dtype), inner = 1;
    const char *off_on = in[2].data;
    char *y = out[0].data;
    if (out[0].numel == 0)
        return 0;
    for (int d = ax; d < in[0].rank; d++)
        inner *= (size_t)in[0].dims[d];
    memcpy(y, off_on, es);
    nv_replicate(y, es, out[0].numel);
    for (size_t e = 0; e < in[0].numel; e++) {
        int64_t c = class_of(&in[0], e, depth);
        if (c >= 0)                     /* y[outer][c][inner] */
            memcpy(y + ((e / inner * (size_t)depth + (size_t)c) * inner + e % inner) * es,
                   off_on + es, es);
    }
    return 0;
}

static int onehot_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", -1), n->inputs[0]->shape.rank + 1);
    s->run = onehot_run;
    return 0;
}

const nv_op nv_generate_ops[] = {
    { "Shape", shape_supports, shape_prepare },     { "Size", shape_supports, shape_prepare },
    { "Range", range_supports, range_prepare },
    { "ConstantOfShape", cos_supports, cos_prepare },
    { "EyeLike", eyelike_supports, eyelike_prepare },
    { "OneHot", onehot_supports, onehot_prepare },
};
const size_t nv_generate_n = sizeof nv_generate_ops / sizeof nv_generate_ops[0];
