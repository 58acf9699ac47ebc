/* Reduction and scan cases and references: the ten Reduce ops (axes as an attribute, or as
 * input 1 for ReduceSum from opset 13; keepdims; noop_with_empty_axes), ArgMax and ArgMin
 * (select_last_index), CumSum (exclusive, reverse), TopK (values and indices), Softmax,
 * LogSoftmax and Hardmax. Floats reduce in double, integers in int64 (wrapping). Shapes with
 * more than 64 inner elements reach the kernels' chunked column paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static bool op_is(const op_case *c, const char *op)
{
    return !strcmp(c->op, op);
}

/* The reduced dims of IN[0]: the axes attribute, else input 1; none given reduces every dim,
 * or none with noop_with_empty_axes (*COPY). */
static void reduced_mask(const op_case *c, const tensor *in, bool *red, bool *copy)
{
    const attr_spec *a = find_attr(c, "axes");
    int r = in[0].rank, na = a ? a->n : c->n_in > 1 ? (int)in[1].n : 0;
    for (int k = 0; k < BD_MAX_RANK; k++)
        red[k] = na == 0;
    for (int j = 0; j < na; j++)
        red[norm_axis(a ? a->ints[j] : in[1].i[j], r)] = true;
    *copy = na == 0 && attr_i(c, "noop_with_empty_axes", 0);
}

/* ReduceSum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare. The output's
 * elements are in the same order with or without keepdims. */
void ref_reduce(const op_case *c, const tensor *in, tensor *out)
{
    bool red[BD_MAX_RANK], copy;
    reduced_mask(c, in, red, &copy);
    if (copy) {
        for (size_t j = 0; j < out->n; j++)
            copy_el(out, j, &in[0], j);
        return;
    }
    int r = in[0].rank;
    int64_t kd[BD_MAX_RANK], idx[BD_MAX_RANK];
    for (int k = 0; k < r; k++)
        kd[k] = red[k] ? 1 : in[0].dims[k];
    size_t no = numel(r, kd), count = no ? in[0].n / no : 0;
    bool fl = is_float_dt(in[0].dtype);
    bool mx = op_is(c, "ReduceMax"), mn = op_is(c, "ReduceMin"), prod = op_is(c, "ReduceProd");
    bool l1 = op_is(c, "ReduceL1"), sq = op_is(c, "ReduceL2") || op_is(c, "ReduceSumSquare");
    bool lse = op_is(c, "ReduceLogSumExp");
    double *fa = calloc(no, sizeof *fa), *shift = calloc(no, sizeof *shift);
    int64_t *ia = calloc(no, sizeof *ia);
    bool *seen = calloc(no, sizeof *seen);
    for (int pass = lse ? 0 : 1; pass < 2; pass++)    /* LogSumExp: the maximum first */
        for (size_t j = 0; j < in[0].n; j++) {
            unravel(j, r, in[0].dims, idx);
            for (int k = 0; k < r; k++)
                idx[k] = red[k] ? 0 : idx[k];
            size_t o = ravel(idx, r, kd);
            double x = in[0].f[j];
            int64_t v = in[0].i[j];
            uint64_t ua = (uint64_t)ia[o], uv = (uint64_t)v;
            if (pass == 0) {
                shift[o] = !seen[o] || x > shift[o] ? x : shift[o];
                seen[o] = true;
                continue;
            }
            if (mx || mn) {
                bool first = !seen[o];
                seen[o] = true;
                if (fl)
                    fa[o] = first || isnan(x) || (mx ? x > fa[o] : x < fa[o]) ? x : fa[o];
                else
                    ia[o] = first || (mx ? v > ia[o] : v < ia[o]) ? v : ia[o];
                continue;
            }
            if (prod) {
                fa[o] = (seen[o] ? fa[o] : 1) * x;
                ia[o] = (int64_t)((seen[o] ? ua : 1) * uv);
                seen[o] = true;
                continue;
            }
            if (lse)
                fa[o] += exp(x - shift[o]);
            else if (l1)
                fa[o] += fabs(x), ia[o] = (int64_t)(ua + (v < 0 ? 0 - uv : uv));
            else if (sq)
                fa[o] += x * x, ia[o] = (int64_t)(ua + uv * uv);
            else
                fa[o] += x, ia[o] = (int64_t)(ua + uv);
        }
    for (size_t o = 0; o < no; o++) {
        double f = fa[o];
        if (op_is(c, "ReduceMean"))
            f /= (double)count;
        else if (op_is(c, "ReduceL2"))
            f = sqrt(f);
        else if (op_is(c, "ReduceLogSum"))
            f = log(f);
        else if (lse)
            f = log(f) + shift[o];
        put(out, o, f, ia[o]);
    }
    free(fa);
    free(shift);
    free(ia);
    free(seen);
}

/* Element P of T against element Q: -1, 0 or 1 (floats by value, integers in their dtype's
 * order). */
static int cmp_el(const tensor *t, size_t p, size_t q)
{
    if (is_float_dt(t->dtype))
        return (t->f[p] > t->f[q]) - (t->f[p] < t->f[q]);
    int64_t a = ordered(t->dtype, t->i[p]), b = ordered(t->dtype, t->i[q]);
    return (a > b) - (a < b);
}

/* ArgMax / ArgMin along axis: the first best index, or the last with select_last_index. */
static void ref_arg(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), in[0].rank);
    bool mx = op_is(c, "ArgMax"), last = attr_i(c, "select_last_index", 0);
    size_t outer, len, inner;
    split_axis(in[0].rank, in[0].dims, axis, &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t e = 0; e < inner; e++) {
            size_t best = 0, base = o * len * inner + e;
            bool nan = false;                   /* numpy: the first NaN wins (the last with */
            for (size_t a = 0; a < len; a++) {  /* select_last_index, ONNX's reference) */
                size_t at = base + a * inner;
                bool x_nan = is_float_dt(in[0].dtype) && isnan(in[0].f[at]);
                int d = a ? cmp_el(&in[0], at, base + best * inner) : 0;
                if (nan ? x_nan && last
                        : x_nan || (a && ((mx ? d > 0 : d < 0) || (last && d == 0))))
                    best = a;
                nan |= x_nan;
            }
            out->i[o * inner + e] = (int64_t)best;
        }
}

/* CumSum along input 1's axis: inclusive or exclusive, forward or reversed. */
static void ref_cumsum(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(in[1].i[0], in[0].rank);
    bool excl = attr_i(c, "exclusive", 0), rev = attr_i(c, "reverse", 0);
    size_t outer, len, inner;
    split_axis(in[0].rank, in[0].dims, axis, &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t e = 0; e < inner; e++) {
            double fs = 0;
            uint64_t is = 0;
            for (size_t k = 0; k < len; k++) {
                size_t a = rev ? len - 1 - k : k, at = (o * len + a) * inner + e;
                if (!excl)
                    fs += in[0].f[at], is += (uint64_t)in[0].i[at];
                put(out, at, fs, (int64_t)is);
                if (excl)
                    fs += in[0].f[at], is += (uint64_t)in[0].i[at];
            }
        }
}

/* TopK (K input 1, axis, largest): values and INT64 indices, best first; equal values in
 * index order. */
static void ref_topk(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", -1), in[0].rank);
    bool largest = attr_i(c, "largest", 1);
    size_t outer, len, inner;
    size_t k = (size_t)(c->n_in > 1 ? in[1].i[0] : attr_i(c, "k", 0));   /* opset < 10: k */
    split_axis(in[0].rank, in[0].dims, axis, &outer, &len, &inner);
    size_t *order = calloc(len, sizeof *order);
    for (size_t o = 0; o < outer; o++)
        for (size_t e = 0; e < inner; e++) {
            size_t base = o * len * inner + e;
            for (size_t a = 0; a < len; a++)
                order[a] = a;
            for (size_t a = 1; a < len; a++)        /* a stable insertion sort */
                for (size_t b = a; b > 0; b--) {
                    int d = cmp_el(&in[0], base + order[b] * inner, base + order[b - 1] * inner);
                    if (!(largest ? d > 0 : d < 0))
                        break;
                    size_t t = order[b - 1];
                    order[b - 1] = order[b];
                    order[b] = t;
                }
            for (size_t j = 0; j < k; j++) {
                size_t at = (o * k + j) * inner + e;
                copy_el(&out[0], at, &in[0], base + order[j] * inner);
                out[1].i[at] = (int64_t)order[j];
            }
        }
    free(order);
}

/* Softmax, LogSoftmax, Hardmax along one axis (opset 13: default -1); before opset 13, over the
 * rows of the input coerced to 2-D at axis (default 1). */
void ref_softmax(const op_case *c, const tensor *in, tensor *out)
{
    size_t outer, len, inner;
    bool legacy = c->opset && c->opset < 13;
    int axis = norm_axis(attr_i(c, "axis", legacy ? 1 : -1), in[0].rank);
    split_axis(in[0].rank, in[0].dims, axis, &outer, &len, &inner);
    if (legacy) {
        len *= inner;
        inner = 1;
    }
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < inner; j++) {
            const double *x = in[0].f + o * len * inner + j;
            double *y = out->f + o * len * inner + j;
            double mx = -INFINITY, sum = 0;
            size_t at = 0;
            for (size_t a = 0; a < len; a++)
                if (x[a * inner] > mx) {
                    mx = x[a * inner];
                    at = a;
                }
            for (size_t a = 0; a < len; a++)
                sum += exp(x[a * inner] - mx);
            for (size_t a = 0; a < len; a++)
                y[a * inner] = op_is(c, "Hardmax") ? a == at
                             : op_is(c, "LogSoftmax") ? x[a * inner] - mx - log(sum)
                             : exp(x[a * inner] - mx) / sum;
        }
}

/* ---- the cases ------------------------------------------------------------------------------- */

/* Reduce OP over axes (attribute) of a fed [2, 3, 4] of dtype DT in [LO, HI]. */
#define RED(nm, op_, dt, lo_, hi_, keep, out_, ...) \
    { nm, op_, NULL, 1, { FEDR(dt, lo_, hi_, 2, 3, 4) }, { AINTS("axes", __VA_ARGS__), \
      AI("keepdims", keep) }, out_, ref_reduce }
/* ... over every axis (no axes). */
#define RED_ALL(nm, op_, dt, lo_, hi_, keep, out_) \
    { nm, op_, NULL, 1, { FEDR(dt, lo_, hi_, 2, 3, 4) }, { AI("keepdims", keep) }, out_, ref_reduce }

/* NaN: numpy's max/min reductions and argmax/argmin (ONNX's reference) propagate or pick it. */
#define ORT_REDUCE_NAN { "ort", "ORT's ReduceMax/ReduceMin keep or drop a NaN depending on where it " \
                         "is in the row; numpy (ONNX's reference) propagates it" }
#define ORT_ARG_NAN { "ort", "ORT's ArgMax/ArgMin ignore NaN; numpy (ONNX's reference) and the " \
                      "native engine pick the first NaN (the last with select_last_index)" }
/* KNOWN FAILURE (oneDNN, not a native kernel): its reduction max/min drop a NaN. Remove once the
 * oneDNN engine propagates it or declines NaN-sensitive reductions. */
#define KNOWN_DNNL_REDUCE_NAN { "dnnl", "oneDNN's ReduceMax/ReduceMin drop a NaN" }

static const op_case k_cases[] = {
    /* the ten Reduce ops on FLOAT: one axis kept, two axes dropped */
    { "reducesum_f32_keep", "ReduceSum", NULL, 2, { INR(-2, 2, 2, 3, 4), I64(1) },
      { AI("keepdims", 1) }, OUT(2, 1, 4), ref_reduce },
    { "reducesum_f32_drop", "ReduceSum", NULL, 2, { INR(-2, 2, 2, 3, 4), I64(0, 2) },
      { AI("keepdims", 0) }, OUT(3), ref_reduce },
    /* only axes of size 1 reduced (a batch of 1 summed over the batch axis): oneDNN refuses
     * such a reduction, so another engine takes it */
    { "reducesum_f32_size1_axis", "ReduceSum", NULL, 2, { INR(-2, 2, 1, 4), I64(0) },
      { AI("keepdims", 0) }, OUT(4), ref_reduce },
    { "reducel2_f32_size1_axis", "ReduceL2", NULL, 1, { INR(-2, 2, 1, 4) },
      { AINTS("axes", 0), AI("keepdims", 1) }, OUT(1, 4), ref_reduce },
    RED("reducemean_f32_keep1", "ReduceMean", F32, -2, 2, 1, OUT(2, 1, 4), 1),
    RED("reducemax_f32_drop02", "ReduceMax", F32, -2, 2, 0, OUT(3), 0, 2),
    RED("reducemax_f32_neg_axis", "ReduceMax", F32, -2, 2, 1, OUT(2, 3, 1), -1),
    RED("reducemin_f32_keep1", "ReduceMin", F32, -2, 2, 1, OUT(2, 1, 4), 1),
    RED("reducemin_f32_drop02", "ReduceMin", F32, -2, 2, 0, OUT(3), 0, 2),
    RED("reduceprod_f32_keep1", "ReduceProd", F32, 0.5f, 1.5f, 1, OUT(2, 1, 4), 1),
    RED("reduceprod_f32_drop02", "ReduceProd", F32, 0.5f, 1.5f, 0, OUT(3), 0, 2),
    RED("reducel1_f32_keep1", "ReduceL1", F32, -2, 2, 1, OUT(2, 1, 4), 1),
    RED("reducel1_f32_drop02", "ReduceL1", F32, -2, 2, 0, OUT(3), 0, 2),
    RED("reducel2_f32_keep1", "ReduceL2", F32, -2, 2, 1, OUT(2, 1, 4), 1),
    RED("reducel2_f32_drop02", "ReduceL2", F32, -2, 2, 0, OUT(3), 0, 2),
    RED("reducelogsum_f32_keep1", "ReduceLogSum", F32, 0.1f, 2, 1, OUT(2, 1, 4), 1),
    RED("reducelogsum_f32_drop02", "ReduceLogSum", F32, 0.1f, 2, 0, OUT(3), 0, 2),
    RED("reducelogsumexp_f32_keep1", "ReduceLogSumExp", F32, -4, 4, 1, OUT(2, 1, 4), 1),
    RED("reducelogsumexp_f32_drop02", "ReduceLogSumExp", F32, -4, 4, 0, OUT(3), 0, 2),
    RED("reducesumsquare_f32_keep1", "ReduceSumSquare", F32, -2, 2, 1, OUT(2, 1, 4), 1),
    RED("reducesumsquare_f32_drop02", "ReduceSumSquare", F32, -2, 2, 0, OUT(3), 0, 2),
    RED("reducemean_f32_drop12", "ReduceMean", F32, -2, 2, 0, OUT(2), 1, 2),
    /* on DOUBLE, every axis */
    { "reducesum_f64_all", "ReduceSum", NULL, 1, { FED(F64, 2, 3, 4) }, { AI("keepdims", 0) },
      OUT0(F64), ref_reduce },
    RED_ALL("reducemean_f64_all", "ReduceMean", F64, -2, 2, 1, OUTT(F64, 1, 1, 1)),
    RED_ALL("reducemax_f64_all", "ReduceMax", F64, -2, 2, 0, OUT0(F64)),
    RED_ALL("reducemin_f64_all", "ReduceMin", F64, -2, 2, 1, OUTT(F64, 1, 1, 1)),
    RED_ALL("reduceprod_f64_all", "ReduceProd", F64, 0.8f, 1.2f, 0, OUT0(F64)),
    RED_ALL("reducel1_f64_all", "ReduceL1", F64, -2, 2, 1, OUTT(F64, 1, 1, 1)),
    RED_ALL("reducel2_f64_all", "ReduceL2", F64, -2, 2, 0, OUT0(F64)),
    RED_ALL("reducelogsum_f64_all", "ReduceLogSum", F64, 0.1f, 2, 1, OUTT(F64, 1, 1, 1)),
    RED_ALL("reducelogsumexp_f64_all", "ReduceLogSumExp", F64, -4, 4, 0, OUT0(F64)),
    RED_ALL("reducesumsquare_f64_all", "ReduceSumSquare", F64, -2, 2, 1, OUTT(F64, 1, 1, 1)),
    RED("reducelogsumexp_f64_axis0", "ReduceLogSumExp", F64, -4, 4, 1, OUTT(F64, 1, 3, 4), 0),
    /* on integers: the exact ones (in int64, wrapping to the dtype) */
    { "reducesum_i32_last", "ReduceSum", NULL, 2, { FEDR(INT32, -1000, 1000, 2, 3, 4), I64(-1) },
      { AI("keepdims", 0) }, OUTT(INT32, 2, 3), ref_reduce },
    { "reducesum_i64_drop01", "ReduceSum", NULL, 2, { FED(INT64, 2, 3, 4), I64(0, 1) },
      { AI("keepdims", 0) }, OUTT(INT64, 4), ref_reduce },
    RED("reducemax_i8_keep1", "ReduceMax", INT8, -128, 127, 1, OUTT(INT8, 2, 1, 4), 1),
    RED("reducemin_u8_drop02", "ReduceMin", UINT8, 0, 255, 0, OUTT(UINT8, 3), 0, 2),
    RED("reducemax_i64_drop2", "ReduceMax", INT64, -1000, 1000, 0, OUTT(INT64, 2, 3), 2),
    RED("reducemin_i32_keep0", "ReduceMin", INT32, -1000, 1000, 1, OUTT(INT32, 1, 3, 4), 0),
    RED("reduceprod_i32_keep1", "ReduceProd", INT32, -4, 4, 1, OUTT(INT32, 2, 1, 4), 1),
    RED("reduceprod_i64_drop2", "ReduceProd", INT64, -9, 9, 0, OUTT(INT64, 2, 3), 2),
    RED("reducel1_i64_keep1", "ReduceL1", INT64, -100, 100, 1, OUTT(INT64, 2, 1, 4), 1),
    RED("reducel1_i32_drop2", "ReduceL1", INT32, -100, 100, 0, OUTT(INT32, 2, 3), 2),
    RED("reducesumsquare_i32_keep1", "ReduceSumSquare", INT32, -100, 100, 1, OUTT(INT32, 2, 1, 4), 1),
    RED("reducesumsquare_i64_drop02", "ReduceSumSquare", INT64, -100, 100, 0, OUTT(INT64, 3), 0, 2),
    { "reducemax_i16_drop1", "ReduceMax", NULL, 1, { FEDR(INT16, -30000, 30000, 2, 3, 4) },
      { AINTS("axes", 1), AI("keepdims", 0) }, OUTT(INT16, 2, 4), ref_reduce,
      .skip = { "ort", "ONNX's ReduceMax (opset 13) has no INT16; ORT rejects the model" } },
    { "reducesum_4d_axes13_keep", "ReduceSum", NULL, 2, { INR(-2, 2, 2, 3, 4, 5), I64(1, 3) },
      NO_ATTR, OUT(2, 1, 4, 1), ref_reduce },
    RED("reduceprod_4d_axes02", "ReduceProd", F32, 0.5f, 1.5f, 0, OUT(3), 0, 2),
    { "reducel2_f32_4d_axes023", "ReduceL2", NULL, 1, { IN(2, 3, 4, 5) },
      { AINTS("axes", 0, 2, 3), AI("keepdims", 0) }, OUT(3), ref_reduce },
    { "reducemin_i32_4d_axes_neg", "ReduceMin", NULL, 1, { FEDR(INT32, -1000, 1000, 2, 3, 4, 5) },
      { AINTS("axes", -1, -3) }, OUTT(INT32, 2, 1, 4, 1), ref_reduce },
    { "reducesum_f32_parallel_rows", "ReduceSum", NULL, 2, { IN(40, 1000), I64(1) }, NO_ATTR,
      OUT(40, 1), ref_reduce, 1e-4, .threads = 2 },
    { "reducemax_f32_parallel_cols", "ReduceMax", NULL, 1, { IN(8, 5000) }, { AINTS("axes", 0) },
      OUT(1, 5000), ref_reduce, .threads = 2 },
    { "reducelogsumexp_f64_parallel", "ReduceLogSumExp", NULL, 1, { FEDR(F64, -5, 5, 50, 800) },
      { AINTS("axes", 1), AI("keepdims", 0) }, OUTT(F64, 50), ref_reduce, .threads = 2,
      .skip = ORT_NO_KERNEL("ReduceLogSumExp on DOUBLE") },
    { "reducemax_f32_nan", "ReduceMax", NULL, 1, { FEDF(F32, VF(1, NAN, 3, 2, 0, -1, NAN, NAN), 2, 4) },
      { AINTS("axes", 1), AI("keepdims", 0) }, OUT(2), ref_reduce, .skip = ORT_REDUCE_NAN,
      .known = KNOWN_DNNL_REDUCE_NAN },
    { "reducemin_f32_nan_cols", "ReduceMin", NULL, 1, { FEDF(F32, VF(1, NAN, 3, 2, 0, -1, NAN, 5), 2, 4) },
      { AINTS("axes", 0), AI("keepdims", 0) }, OUT(4), ref_reduce, .skip = ORT_REDUCE_NAN,
      .known = KNOWN_DNNL_REDUCE_NAN },
    /* noop_with_empty_axes, axes fed at run time, wide inner dims (chunked columns) */
    { "reducesum_noop_f32", "ReduceSum", NULL, 1, { IN(2, 3, 4) },
      { AI("noop_with_empty_axes", 1) }, OUT(2, 3, 4), ref_reduce },
    { "reducesum_fed_axes_f32", "ReduceSum", NULL, 2, { IN(2, 3, 4), FI64(1) }, NO_ATTR,
      OUT(2, 1, 4), ref_reduce },
    { "reducemax_f32_wide_inner", "ReduceMax", NULL, 1, { IN(3, 5, 70) },
      { AINTS("axes", 1), AI("keepdims", 0) }, OUT(3, 70), ref_reduce },
    { "reducelogsumexp_f32_wide_inner", "ReduceLogSumExp", NULL, 1, { INR(-4, 4, 2, 3, 70) },
      { AINTS("axes", 0, 1) }, OUT(1, 1, 70), ref_reduce },
    { "reducesum_f64_wide_inner", "ReduceSum", NULL, 2, { FED(F64, 4, 130), I64(0) },
      NO_ATTR, OUTT(F64, 1, 130), ref_reduce },
    { "reducesum_empty_axis_f32", "ReduceSum", NULL, 2, { IN(2, 0, 3), I64(1) },
      { AI("keepdims", 0) }, OUT(2, 3), ref_reduce },
    { "reducemax_empty_axis_keep_f32", "ReduceMax", NULL, 1, { IN(2, 0, 3) },
      { AINTS("axes", 0) }, OUT(1, 0, 3), ref_reduce },
    /* ArgMax, ArgMin; ties go to the first index, or the last with select_last_index */
    { "argmax_f32_axis1_keep", "ArgMax", NULL, 1, { IN(3, 5, 4) }, { AI("axis", 1) },
      OUTT(INT64, 3, 1, 4), ref_arg },
    { "argmin_f32_axis0_drop", "ArgMin", NULL, 1, { IN(3, 5) }, { AI("keepdims", 0) },
      OUTT(INT64, 5), ref_arg },
    { "argmax_i32_ties_last", "ArgMax", NULL, 1, { FEDR(INT32, 0, 2, 4, 6) },
      { AI("axis", 1), AI("keepdims", 0), AI("select_last_index", 1) }, OUTT(INT64, 4), ref_arg },
    { "argmin_i64_ties_first", "ArgMin", NULL, 1, { FEDR(INT64, 0, 2, 4, 6) }, { AI("axis", -1) },
      OUTT(INT64, 4, 1), ref_arg },
    { "argmin_i64_ties_last", "ArgMin", NULL, 1, { FEDR(INT64, 0, 2, 4, 6) },
      { AI("axis", -1), AI("select_last_index", 1) }, OUTT(INT64, 4, 1), ref_arg },
    { "argmax_u8_axis0", "ArgMax", NULL, 1, { FEDR(UINT8, 0, 3, 3, 4) }, NO_ATTR,
      OUTT(INT64, 1, 4), ref_arg },
    { "argmin_f64_ties_last", "ArgMin", NULL, 1, { FEDF(F64, VF(1, 0, 0, 2, 0, 3, 3, 0), 2, 4) },
      { AI("axis", 1), AI("select_last_index", 1) }, OUTT(INT64, 2, 1), ref_arg },
    { "argmax_1d_scalar", "ArgMax", NULL, 1, { IN(7) }, { AI("keepdims", 0) }, OUT0(INT64), ref_arg },
    { "argmax_i8_wide_inner", "ArgMax", NULL, 1, { FEDR(INT8, -128, 127, 2, 3, 70) },
      { AI("axis", 1), AI("keepdims", 0) }, OUTT(INT64, 2, 70), ref_arg },
    { "argmax_f32_nan", "ArgMax", NULL, 1,
      { FEDF(F32, VF(1, NAN, 3, NAN, 2, 0, -1, 5, NAN, 0, 9, 9), 3, 4) }, { AI("axis", 1) },
      OUTT(INT64, 3, 1), ref_arg, .skip = ORT_ARG_NAN },
    { "argmin_f32_nan_last", "ArgMin", NULL, 1,
      { FEDF(F32, VF(1, NAN, 3, NAN, 2, 0, -1, 5, NAN, 0, 9, 9), 3, 4) },
      { AI("axis", 1), AI("select_last_index", 1) }, OUTT(INT64, 3, 1), ref_arg,
      .skip = ORT_ARG_NAN },
    { "argmax_u64_big", "ArgMax", NULL, 1, { FEDV(UINT64, V(5, INT64_MIN, -1, 7, -1, 0), 2, 3) },
      { AI("axis", 1), AI("select_last_index", 1) }, OUTT(INT64, 2, 1), ref_arg,
      .skip = ORT_NO_KERNEL("ArgMax on UINT64") },
    { "argmin_u64_big", "ArgMin", NULL, 1, { FEDV(UINT64, V(5, INT64_MIN, -1, 7, -1, 0), 2, 3) },
      { AI("axis", 0) }, OUTT(INT64, 1, 3), ref_arg, .skip = ORT_NO_KERNEL("ArgMin on UINT64") },
    { "argmax_i16_ties_last_inner", "ArgMax", NULL, 1, { FEDR(INT16, 0, 1, 5, 3) },
      { AI("axis", 0), AI("select_last_index", 1) }, OUTT(INT64, 1, 3), ref_arg,
      .skip = ORT_NO_KERNEL("ArgMax on INT16") },
    /* CumSum: axis input (INT32 or INT64, constant or fed), exclusive, reverse */
    { "cumsum_f32_axis1", "CumSum", NULL, 2, { IN(3, 5), CSTS(INT64, 1) }, NO_ATTR, OUT(3, 5),
      ref_cumsum },
    { "cumsum_i32_exclusive", "CumSum", NULL, 2, { FED(INT32, 3, 5), CSTS(INT32, 0) },
      { AI("exclusive", 1) }, OUTT(INT32, 3, 5), ref_cumsum },
    { "cumsum_i64_reverse", "CumSum", NULL, 2, { FED(INT64, 2, 3, 4), CSTS(INT64, -1) },
      { AI("reverse", 1) }, OUTT(INT64, 2, 3, 4), ref_cumsum },
    { "cumsum_f64_exclusive_reverse", "CumSum", NULL, 2, { FED(F64, 4, 3), CSTS(INT64, 0) },
      { AI("exclusive", 1), AI("reverse", 1) }, OUTT(F64, 4, 3), ref_cumsum },
    { "cumsum_f32_fed_axis", "CumSum", NULL, 2, { IN(2, 3, 4), FEDS(INT64, 1) }, NO_ATTR,
      OUT(2, 3, 4), ref_cumsum },
    { "cumsum_u32", "CumSum", NULL, 2, { FEDR(UINT32, 0, 1000, 3, 4), CSTS(INT32, 1) }, NO_ATTR,
      OUTT(UINT32, 3, 4), ref_cumsum, .skip = ORT_NO_KERNEL("CumSum on UINT32") },
    { "cumsum_f32_wide_reverse_exclusive", "CumSum", NULL, 2, { IN(5, 70), CSTS(INT64, 0) },
      { AI("exclusive", 1), AI("reverse", 1) }, OUT(5, 70), ref_cumsum },
    { "cumsum_i32_wrap", "CumSum", NULL, 2, { FEDR(INT32, 1000000000, 2000000000, 6), CSTS(INT64, 0) },
      NO_ATTR, OUTT(INT32, 6), ref_cumsum },
    /* TopK: values and INT64 indices, largest or smallest, equal values in index order */
    { "topk_f32_largest", "TopK", NULL, 2, { IN(3, 10), I64(4) }, NO_ATTR,
      OUTS(O(F32, 3, 4), O(INT64, 3, 4)), ref_topk },
    { "topk_f32_smallest_axis0", "TopK", NULL, 2, { IN(6, 3), I64(2) },
      { AI("axis", 0), AI("largest", 0) }, OUTS(O(F32, 2, 3), O(INT64, 2, 3)), ref_topk },
    { "topk_i32_ties", "TopK", NULL, 2, { FEDR(INT32, 0, 3, 2, 8), I64(5) }, NO_ATTR,
      OUTS(O(INT32, 2, 5), O(INT64, 2, 5)), ref_topk },
    { "topk_f64_axis1_3d", "TopK", NULL, 2, { FED(F64, 2, 6, 3), I64(3) }, { AI("axis", 1) },
      OUTS(O(F64, 2, 3, 3), O(INT64, 2, 3, 3)), ref_topk },
    { "topk_i64_smallest_all_ties", "TopK", NULL, 2, { FEDR(INT64, -2, 2, 3, 7), I64(7) },
      { AI("largest", 0) }, OUTS(O(INT64, 3, 7), O(INT64, 3, 7)), ref_topk },
    { "topk_u8", "TopK", NULL, 2, { FEDR(UINT8, 0, 255, 2, 9), I64(3) }, NO_ATTR,
      OUTS(O(UINT8, 2, 3), O(INT64, 2, 3)), ref_topk },
    { "topk_u64_big", "TopK", NULL, 2, { FEDV(UINT64, V(5, INT64_MIN, -1, 7, -1, 0), 6), I64(4) },
      NO_ATTR, OUTS(O(UINT64, 4), O(INT64, 4)), ref_topk, .skip = ORT_NO_KERNEL("TopK on UINT64") },
    { "topk_f32_fed_k", "TopK", NULL, 2, { IN(2, 8), FI64(3) }, NO_ATTR,
      OUTS(O(F32, 2, 3), O(INT64, 2, 3)), ref_topk },
    { "topk_f32_wide", "TopK", NULL, 2, { IN(2, 70), I64(10) }, NO_ATTR,
      OUTS(O(F32, 2, 10), O(INT64, 2, 10)), ref_topk },
    /* legacy forms: axes and k attributes, Softmax's 2-D coercion (opset < 13) */
    { "reducesum_attr_opset11", "ReduceSum", NULL, 1, { IN(2, 3, 4) },
      { AINTS("axes", 0, 2), AI("keepdims", 0) }, OUT(3), ref_reduce, .opset = 11 },
    { "topk_attr_k_opset9", "TopK", NULL, 1, { IN(3, 8) }, { AI("k", 3) },
      OUTS(O(F32, 3, 3), O(INT64, 3, 3)), ref_topk, .opset = 9 },
    { "softmax_opset11_2d", "Softmax", NULL, 1, { INR(-4, 4, 3, 7) }, NO_ATTR, OUT(3, 7),
      ref_softmax, .opset = 11 },
    { "logsoftmax_opset11_last_axis", "LogSoftmax", NULL, 1, { INR(-4, 4, 2, 3, 7) },
      { AI("axis", 2) }, OUT(2, 3, 7), ref_softmax, .opset = 11 },
    { "hardmax_opset11_coerced", "Hardmax", NULL, 1, { IN(2, 3, 4) }, NO_ATTR, OUT(2, 3, 4),
      ref_softmax, .opset = 11 },
    { "softmax_opset11_coerced", "Softmax", NULL, 1, { INR(-4, 4, 2, 3, 4) }, NO_ATTR,
      OUT(2, 3, 4), ref_softmax, .opset = 11 },
    /* Softmax, LogSoftmax, Hardmax (ties: the first maximum) */
    { "softmax_f32_large_values", "Softmax", NULL, 1, { INR(-100, 100, 3, 9) }, NO_ATTR, OUT(3, 9),
      ref_softmax },
    { "softmax_1d", "Softmax", NULL, 1, { INR(-4, 4, 7) }, NO_ATTR, OUT(7), ref_softmax },
    { "softmax_f32_masked", "Softmax", NULL, 1,
      { FEDF(F32, VF(0.5f, -INFINITY, 2, -INFINITY, -INFINITY, 1, -1, 0), 2, 4) }, NO_ATTR,
      OUT(2, 4), ref_softmax },
    { "logsoftmax_f32_masked", "LogSoftmax", NULL, 1,
      { FEDF(F32, VF(0.5f, -INFINITY, 2, -INFINITY, -INFINITY, 1, -1, 0), 2, 4) }, NO_ATTR,
      OUT(2, 4), ref_softmax },
    { "softmax_f32_parallel_rows", "Softmax", NULL, 1, { INR(-4, 4, 64, 600) }, NO_ATTR,
      OUT(64, 600), ref_softmax, .threads = 2 },
    { "logsoftmax_f32_parallel_axis0", "LogSoftmax", NULL, 1, { INR(-4, 4, 60, 600) },
      { AI("axis", 0) }, OUT(60, 600), ref_softmax, .threads = 2 },
    { "softmax_f64_axis0", "Softmax", NULL, 1, { FEDR(F64, -4, 4, 3, 5) }, { AI("axis", 0) },
      OUTT(F64, 3, 5), ref_softmax },
    { "softmax_f32_mid_wide", "Softmax", NULL, 1, { INR(-4, 4, 2, 5, 70) }, { AI("axis", 1) },
      OUT(2, 5, 70), ref_softmax },
    { "logsoftmax_f32", "LogSoftmax", NULL, 1, { INR(-4, 4, 3, 10) }, NO_ATTR, OUT(3, 10),
      ref_softmax },
    { "logsoftmax_f64_axis1", "LogSoftmax", NULL, 1, { FEDR(F64, -4, 4, 2, 5, 3) },
      { AI("axis", 1) }, OUTT(F64, 2, 5, 3), ref_softmax },
    { "logsoftmax_f32_mid_wide", "LogSoftmax", NULL, 1, { INR(-4, 4, 2, 4, 70) },
      { AI("axis", 1) }, OUT(2, 4, 70), ref_softmax },
    { "hardmax_f32", "Hardmax", NULL, 1, { IN(3, 7) }, NO_ATTR, OUT(3, 7), ref_softmax },
    { "hardmax_f32_ties", "Hardmax", NULL, 1, { FEDF(F32, VF(2, 5, 5, 1, 0, 0, 0, 0), 2, 4) },
      NO_ATTR, OUT(2, 4), ref_softmax },
    { "hardmax_f64_axis0_ties", "Hardmax", NULL, 1, { FEDF(F64, VF(1, 3, 3, 2, 3, 0), 3, 2) },
      { AI("axis", 0) }, OUTT(F64, 3, 2), ref_softmax, .skip = ORT_NO_KERNEL("Hardmax on DOUBLE") },
    { "hardmax_f32_mid_wide", "Hardmax", NULL, 1, { IN(2, 3, 70) }, { AI("axis", 1) },
      OUT(2, 3, 70), ref_softmax },
};

const case_table ops_reduction_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
