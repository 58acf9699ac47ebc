/* Indexing cases and references: Gather, GatherElements, GatherND, ScatterND,
 * ScatterElements, OneHot and NonZero. Indices may be negative (counting from the end); an
 * index out of range is an error every engine must report (expect_error), never a read out of
 * bounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static int64_t wrap_index(int64_t v, int64_t dim)
{
    return v < 0 ? v + dim : v;
}

/* Gather at axis: OUTER x N x INNER -> OUTER x (indices) x INNER. */
void ref_gather(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), in[0].rank);
    size_t outer, len, inner, ni = in[1].n;
    split_axis(in[0].rank, in[0].dims, axis, &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++) {
            size_t g = (size_t)wrap_index(in[1].i[j], (int64_t)len);
            for (size_t e = 0; e < inner; e++)
                copy_el(out, (o * ni + j) * inner + e, &in[0], (o * len + g) * inner + e);
        }
}

/* GatherElements: y[i] = x[i with the axis coordinate replaced by indices[i]]. */
static void ref_gather_elements(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), in[0].rank);
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        idx[axis] = wrap_index(in[1].i[j], in[0].dims[axis]);
        copy_el(out, j, &in[0], ravel(idx, in[0].rank, in[0].dims));
    }
}

/* Combine update U into element K of OUT per the reduction (none, add, mul, max, min). */
static void scatter_el(const op_case *c, tensor *out, size_t k, const tensor *u, size_t j)
{
    const char *red = attr_s(c, "reduction", "none");
    if (!strcmp(red, "none")) {
        copy_el(out, k, u, j);
        return;
    }
    bool add = !strcmp(red, "add"), mul = !strcmp(red, "mul"), mx = !strcmp(red, "max");
    double a = out->f[k], b = u->f[j];
    int64_t x = out->i[k], y = u->i[j];
    out->f[k] = add ? a + b : mul ? a * b : mx ? (a >= b ? a : b) : (a <= b ? a : b);
    out->i[k] = add ? (int64_t)((uint64_t)x + (uint64_t)y) : mul ? (int64_t)((uint64_t)x * (uint64_t)y)
              : mx ? (x >= y ? x : y) : (x <= y ? x : y);
}

/* ScatterElements: a copy of the data, then update i goes to i's coordinates with the axis
 * coordinate replaced by indices[i], in order. */
static void ref_scatter_elements(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), in[0].rank);
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++)
        copy_el(out, j, &in[0], j);
    for (size_t j = 0; j < in[1].n; j++) {
        unravel(j, in[1].rank, in[1].dims, idx);
        idx[axis] = wrap_index(in[1].i[j], in[0].dims[axis]);
        scatter_el(c, out, ravel(idx, in[0].rank, in[0].dims), &in[2], j);
    }
}

/* The data offset (within a batch of DIMS from B on) that index tuple T (K values) names, and
 * the elements of the block it addresses. */
static size_t nd_offset(const tensor *x, const tensor *idx, size_t t, int b, size_t *block)
{
    int k = (int)idx->dims[idx->rank - 1];
    size_t off = 0;
    for (int j = 0; j < k; j++)
        off = off * (size_t)x->dims[b + j] +
              (size_t)wrap_index(idx->i[t * (size_t)k + (size_t)j], x->dims[b + j]);
    *block = numel(x->rank - b - k, x->dims + b + k);
    return off * *block;
}

/* GatherND with batch_dims B: the batches share their leading dims; each index tuple picks a
 * block of the data's remaining dims. */
static void ref_gather_nd(const op_case *c, const tensor *in, tensor *out)
{
    int b = (int)attr_i(c, "batch_dims", 0);
    size_t batches = numel(b, in[0].dims), per_batch = numel(in[0].rank - b, in[0].dims + b);
    size_t tuples = numel(in[1].rank - 1, in[1].dims), per = tuples / batches, block, at = 0;
    for (size_t t = 0; t < tuples; t++) {
        size_t off = nd_offset(&in[0], &in[1], t, b, &block) + t / per * per_batch;
        for (size_t e = 0; e < block; e++)
            copy_el(out, at++, &in[0], off + e);
    }
}

/* ScatterND: a copy of the data, then each update block goes where its tuple says. */
static void ref_scatter_nd(const op_case *c, const tensor *in, tensor *out)
{
    size_t tuples = numel(in[1].rank - 1, in[1].dims), block;
    for (size_t j = 0; j < out->n; j++)
        copy_el(out, j, &in[0], j);
    for (size_t t = 0; t < tuples; t++) {
        size_t off = nd_offset(&in[0], &in[1], t, 0, &block);
        for (size_t e = 0; e < block; e++)
            scatter_el(c, out, off + e, &in[2], t * block + e);
    }
}

/* OneHot(indices, depth, values [off, on]) with the depth inserted at axis: an index out of
 * [-depth, depth) gives a row of off values; a float index is truncated. */
static void ref_onehot(const op_case *c, const tensor *in, tensor *out)
{
    int r = in[0].rank, axis = norm_axis(attr_i(c, "axis", -1), r + 1);
    int64_t depth = is_float_dt(in[1].dtype) ? (int64_t)in[1].f[0] : in[1].i[0];
    int64_t idx[BD_MAX_RANK], src[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, r + 1, out->dims, idx);
        for (int k = 0, at = 0; k <= r; k++)
            if (k != axis)
                src[at++] = idx[k];
        size_t e = ravel(src, r, in[0].dims);
        int64_t v = is_float_dt(in[0].dtype) ? (int64_t)trunc(in[0].f[e]) : in[0].i[e];
        bool hot = v >= -depth && v < depth && wrap_index(v, depth) == idx[axis];
        copy_el(out, j, &in[2], hot ? 1 : 0);
    }
}

/* Compress: the slices along axis (or the elements of the flattened input) whose condition is
 * true; a condition shorter than the axis selects nothing past its end. */
static void ref_compress(const op_case *c, const tensor *in, tensor *out)
{
    const attr_spec *a = find_attr(c, "axis");
    size_t outer = 1, len = in[0].n, inner = 1, at = 0;
    if (a)
        split_axis(in[0].rank, in[0].dims, norm_axis(a->i, in[0].rank), &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t k = 0; k < len && k < in[1].n; k++)
            for (size_t e = 0; in[1].i[k] && e < inner; e++)
                copy_el(out, at++, &in[0], (o * len + k) * inner + e);
}

/* MaxUnpool: zeros, and each input element at the flat position its index gives in the
 * pooling's inferred shape (N, C, (in - 1) * stride - pads + kernel); an output_shape input
 * holds that block at its origin, as ONNX's reference places it. */
static void ref_max_unpool(const op_case *c, const tensor *in, tensor *out)
{
    int r = in[0].rank, sp = r - 2;
    int64_t k[BD_MAX_RANK], st[BD_MAX_RANK], p[2 * BD_MAX_RANK], dims[BD_MAX_RANK], idx[BD_MAX_RANK];
    int64_t ones[BD_MAX_RANK] = { 1, 1, 1, 1, 1, 1, 1, 1 }, zeros[2 * BD_MAX_RANK] = { 0 };
    ints_or(c, "kernel_shape", sp, ones, k);
    ints_or(c, "strides", sp, ones, st);
    ints_or(c, "pads", 2 * sp, zeros, p);
    dims[0] = in[0].dims[0];
    dims[1] = in[0].dims[1];
    for (int d = 0; d < sp; d++)
        dims[d + 2] = (in[0].dims[d + 2] - 1) * st[d] - p[d] - p[sp + d] + k[d];
    for (size_t j = 0; j < in[0].n; j++) {
        unravel((size_t)in[1].i[j], r, dims, idx);
        copy_el(out, ravel(idx, r, out->dims), &in[0], j);
    }
}

/* NonZero: INT64 [rank, count], the coordinates of each non-zero element in row-major order
 * (the case's output dims give the count; a NaN is non-zero, -0.0 is zero). */
static void ref_nonzero(const op_case *c, const tensor *in, tensor *out)
{
    size_t count = (size_t)out->dims[1], k = 0;
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < in[0].n && k < count; j++) {
        bool nz = is_float_dt(in[0].dtype) ? in[0].f[j] != 0 || isnan(in[0].f[j]) : in[0].i[j] != 0;
        if (!nz)
            continue;
        unravel(j, in[0].rank, in[0].dims, idx);
        for (int d = 0; d < in[0].rank; d++)
            out->i[(size_t)d * count + k] = idx[d];
        k++;
    }
}

/* ---- the cases ------------------------------------------------------------------------------- */

/* ONNX's backend test test_maxunpool_export_with_output_shape places the unpooled block at the
 * origin of output_shape, as the native engine and the reference here do. */
#define ORT_UNPOOL_SHAPE { "ort", "ORT reads MaxUnpool's indices as flat positions in output_shape's " \
                           "tensor, not in the pooling's shape placed at its origin (ONNX's backend " \
                           "test test_maxunpool_export_with_output_shape)" }

#define ORT_RED18 { "ort", "reduction max/min are opset 18's; the harness builds opset 17, which " \
                    "ORT checks (the native engine takes them at any opset)" }

static const op_case k_cases[] = {
    /* Gather: negative indices, INT32 or INT64 indices, fed or constant, several axes */
    { "gather_i64_neg_indices", "Gather", NULL, 2, { FED(INT64, 5, 3), I64(-1, 0, -5, 2) },
      NO_ATTR, OUTT(INT64, 4, 3), ref_gather },
    { "gather_f32_i32_indices_2d", "Gather", NULL, 2, { IN(4, 6), CSTV(INT32, V(3, -4, 1, 1), 2, 2) },
      { AI("axis", 1) }, OUT(4, 2, 2), ref_gather },
    { "gather_bool_axis_neg", "Gather", NULL, 2, { FED(BOOL, 2, 3, 4), I64(3, 0) },
      { AI("axis", -1) }, OUTT(BOOL, 2, 3, 2), ref_gather },
    { "gather_u8_fed_indices", "Gather", NULL, 2, { FEDR(UINT8, 0, 255, 3, 4), FEDV(INT64, V(2, -1, 0), 3) },
      NO_ATTR, OUTT(UINT8, 3, 4), ref_gather },
    { "gather_f64_fed_i32_indices", "Gather", NULL, 2, { FED(F64, 2, 5, 2), FEDV(INT32, V(4, -2), 2) },
      { AI("axis", 1) }, OUTT(F64, 2, 2, 2), ref_gather },
    { "gather_i32_scalar_index", "Gather", NULL, 2, { FED(INT32, 3, 4), CSTS(INT64, -2) }, NO_ATTR,
      OUTT(INT32, 4), ref_gather },
    { "gather_f32_parallel", "Gather", NULL, 2, { IN(1000, 64), FEDR(INT64, -1000, 999, 600) },
      NO_ATTR, OUT(600, 64), ref_gather, .threads = 2 },
    { "gather_empty_indices", "Gather", NULL, 2, { FED(INT64, 5, 4), FED(INT64, 0) }, NO_ATTR,
      OUTT(INT64, 0, 4), ref_gather },
    { "gather_out_of_range", "Gather", NULL, 2, { IN(5, 4), FEDV(INT64, V(0, 5), 2) }, NO_ATTR,
      OUT(2, 4), NULL, .expect_error = true },
    { "gather_out_of_range_neg", "Gather", NULL, 2, { FED(INT64, 5, 4), FEDV(INT32, V(-6), 1) },
      NO_ATTR, OUTT(INT64, 1, 4), NULL, .expect_error = true },
    /* GatherElements */
    { "gather_elements_axis0_f32", "GatherElements", NULL, 2,
      { IN(3, 3), CSTV(INT64, V(1, 2, 0, 2, 0, -1), 2, 3) }, NO_ATTR, OUT(2, 3),
      ref_gather_elements },
    { "gather_elements_axis1_i64", "GatherElements", NULL, 2,
      { FED(INT64, 3, 4), FEDV(INT32, V(3, -4, 0, 1, 1, -1), 3, 2) }, { AI("axis", 1) },
      OUTT(INT64, 3, 2), ref_gather_elements },
    { "gather_elements_bool_3d", "GatherElements", NULL, 2,
      { FED(BOOL, 2, 3, 2), CSTV(INT64, V(2, 0, 1, 1), 2, 1, 2) }, { AI("axis", 1) },
      OUTT(BOOL, 2, 1, 2), ref_gather_elements },
    { "gather_elements_out_of_range", "GatherElements", NULL, 2,
      { IN(3, 3), FEDV(INT64, V(0, 3, 1), 1, 3) }, NO_ATTR, OUT(1, 3), NULL, .expect_error = true },
    /* GatherND */
    { "gather_nd_elements_f32", "GatherND", NULL, 2, { IN(3, 4), CSTV(INT64, V(0, 0, 2, -1), 2, 2) },
      NO_ATTR, OUT(2), ref_gather_nd },
    { "gather_nd_rows_i64", "GatherND", NULL, 2, { FED(INT64, 3, 4), CSTV(INT64, V(2, -3), 2, 1) },
      NO_ATTR, OUTT(INT64, 2, 4), ref_gather_nd },
    { "gather_nd_pairs_u8", "GatherND", NULL, 2,
      { FEDR(UINT8, 0, 255, 2, 3, 4), FEDV(INT64, V(0, 1, 1, 2, 1, 0), 3, 2) }, NO_ATTR,
      OUTT(UINT8, 3, 4), ref_gather_nd },
    { "gather_nd_batch_dims1_f32", "GatherND", NULL, 2,
      { IN(2, 3, 4), CSTV(INT64, V(2, 1, 0, -1), 2, 2, 1) }, { AI("batch_dims", 1) },
      OUT(2, 2, 4), ref_gather_nd },
    { "gather_nd_batch_dims1_tuples_bool", "GatherND", NULL, 2,
      { FED(BOOL, 2, 3, 4), CSTV(INT64, V(2, 1, 0, 3), 2, 1, 2) }, { AI("batch_dims", 1) },
      OUTT(BOOL, 2, 1), ref_gather_nd },
    { "gather_nd_out_of_range", "GatherND", NULL, 2, { IN(3, 4), FEDV(INT64, V(0, 4), 1, 2) },
      NO_ATTR, OUT(1), NULL, .expect_error = true },
    /* ScatterND: none, add, mul (repeated indices add up in order) */
    { "scatter_nd_rows_f32", "ScatterND", NULL, 3, { IN(4, 3), CSTV(INT64, V(1, 3), 2, 1), IN(2, 3) },
      NO_ATTR, OUT(4, 3), ref_scatter_nd },
    { "scatter_nd_rows_i64", "ScatterND", NULL, 3,
      { FED(INT64, 4, 3), CSTV(INT64, V(1, -1), 2, 1), FED(INT64, 2, 3) }, NO_ATTR,
      OUTT(INT64, 4, 3), ref_scatter_nd },
    { "scatter_nd_elements_bool", "ScatterND", NULL, 3,
      { FED(BOOL, 3, 4), FEDV(INT64, V(0, 0, 2, 3, 1, 1), 3, 2), FED(BOOL, 3) }, NO_ATTR,
      OUTT(BOOL, 3, 4), ref_scatter_nd },
    { "scatter_nd_add_f32", "ScatterND", NULL, 3,
      { IN(4, 3), CSTV(INT64, V(1, 1, 3), 3, 1), IN(3, 3) }, { AS("reduction", "add") },
      OUT(4, 3), ref_scatter_nd },
    { "scatter_nd_mul_i32", "ScatterND", NULL, 3,
      { FEDR(INT32, -5, 5, 2, 3), CSTV(INT64, V(0, 2, 0, 2, 1, 0), 3, 2), FEDR(INT32, -5, 5, 3) },
      { AS("reduction", "mul") }, OUTT(INT32, 2, 3), ref_scatter_nd },
    { "scatter_nd_out_of_range", "ScatterND", NULL, 3,
      { IN(4, 3), FEDV(INT64, V(4), 1, 1), IN(1, 3) }, NO_ATTR, OUT(4, 3), NULL,
      .expect_error = true },
    /* ScatterElements: none, add, mul; negative indices */
    { "scatter_elements_axis0_f32", "ScatterElements", NULL, 3,
      { IN(3, 3), CSTV(INT64, V(1, 0, 2, 0, 2, 1), 2, 3), IN(2, 3) }, NO_ATTR, OUT(3, 3),
      ref_scatter_elements },
    { "scatter_elements_axis1_neg_i64", "ScatterElements", NULL, 3,
      { FED(INT64, 2, 4), FEDV(INT32, V(-1, 0, 1, -4), 2, 2), FED(INT64, 2, 2) }, { AI("axis", 1) },
      OUTT(INT64, 2, 4), ref_scatter_elements },
    { "scatter_elements_add_f64", "ScatterElements", NULL, 3,
      { FED(F64, 2, 4), CSTV(INT64, V(1, 1, 3, 0, 0, 0), 2, 3), FED(F64, 2, 3) },
      { AI("axis", 1), AS("reduction", "add") }, OUTT(F64, 2, 4), ref_scatter_elements },
    { "scatter_elements_mul_i32", "ScatterElements", NULL, 3,
      { FEDR(INT32, -5, 5, 3, 2), CSTV(INT64, V(2, 2, 2, 0), 2, 2), FEDR(INT32, -5, 5, 2, 2) },
      { AS("reduction", "mul") }, OUTT(INT32, 3, 2), ref_scatter_elements },
    { "scatter_elements_bool", "ScatterElements", NULL, 3,
      { FED(BOOL, 3, 3), CSTV(INT64, V(0, 1, 2), 1, 3), FED(BOOL, 1, 3) }, NO_ATTR,
      OUTT(BOOL, 3, 3), ref_scatter_elements },
    { "scatter_legacy_f32", "Scatter", NULL, 3,
      { IN(3, 3), CSTV(INT64, V(1, 0, 2), 1, 3), IN(1, 3) }, NO_ATTR, OUT(3, 3),
      ref_scatter_elements, .opset = 9 },
    { "scatter_elements_max_i32", "ScatterElements", NULL, 3,
      { FEDR(INT32, -5, 5, 3, 2), CSTV(INT64, V(2, 2, 2, 0), 2, 2), FEDR(INT32, -5, 5, 2, 2) },
      { AS("reduction", "max") }, OUTT(INT32, 3, 2), ref_scatter_elements, .skip = ORT_RED18 },
    { "scatter_nd_min_f32", "ScatterND", NULL, 3,
      { IN(4, 3), CSTV(INT64, V(1, 1, 3), 3, 1), IN(3, 3) }, { AS("reduction", "min") },
      OUT(4, 3), ref_scatter_nd, .skip = ORT_RED18 },
    { "scatter_elements_out_of_range", "ScatterElements", NULL, 3,
      { IN(3, 3), FEDV(INT64, V(0, -4, 1), 1, 3), IN(1, 3) }, NO_ATTR, OUT(3, 3), NULL,
      .expect_error = true },
    /* OneHot: indices of several dtypes (out of range -> all off), the depth at any axis */
    { "onehot_i64_f32_values", "OneHot", NULL, 3,
      { FEDV(INT64, V(0, -1, 3, 7, -5, 2), 2, 3), CSTS(INT64, 4), CSTF(F32, VF(-0.5f, 2), 2) },
      NO_ATTR, OUT(2, 3, 4), ref_onehot },
    { "onehot_axis0_i32_i64_values", "OneHot", NULL, 3,
      { FEDV(INT32, V(0, 2, 1, -3), 4), CSTS(INT32, 3), CSTV(INT64, V(-1, 5), 2) },
      { AI("axis", 0) }, OUTT(INT64, 3, 4), ref_onehot,
      .skip = ORT_NO_KERNEL("OneHot of INT32 indices and depth with INT64 values") },
    { "onehot_f32_indices_axis1", "OneHot", NULL, 3,
      { FEDF(F32, VF(0, 2, -1, 5), 2, 2), CSTSF(F32, 3), CSTF(F32, VF(0, 1), 2) },
      { AI("axis", 1) }, OUT(2, 3, 2), ref_onehot },
    { "onehot_f32_fractional_indices", "OneHot", NULL, 3,
      { FEDF(F32, VF(0.7f, 2.9f, -1.2f, 5), 2, 2), CSTSF(F32, 3), CSTF(F32, VF(0, 1), 2) },
      { AI("axis", 1) }, OUT(2, 3, 2), ref_onehot,
      .skip = { "ort", "ORT compares float indices with the classes as floats, without the cast "
                "to int64 the spec asks for: 0.7 and -1.2 match no class" } },
    { "onehot_depth1", "OneHot", NULL, 3, { FEDV(INT64, V(0, -1, 1), 3), CSTS(INT64, 1),
      CSTF(F32, VF(3, 7), 2) }, NO_ATTR, OUT(3, 1), ref_onehot },
    { "onehot_i64_depth_f32_bool", "OneHot", NULL, 3,
      { FEDV(INT64, V(1, 0, 4), 3), CSTSF(F32, 5), CSTV(BOOL, V(0, 1), 2) }, NO_ATTR,
      OUTT(BOOL, 3, 5), ref_onehot, .skip = ORT_NO_KERNEL("OneHot with BOOL values") },
    /* Compress: a constant condition gives a static shape, a fed one the run's */
    { "compress_axis0_const_cond", "Compress", NULL, 2, { IN(3, 4), CSTV(BOOL, V(1, 0, 1), 3) },
      { AI("axis", 0) }, OUT(2, 4), ref_compress },
    { "compress_axis1_fed_cond_i64", "Compress", NULL, 2,
      { FED(INT64, 2, 4), FEDV(BOOL, V(0, 1, 1, 0), 4) }, { AI("axis", -1) }, OUTT(INT64, 2, 2),
      ref_compress, .runtime_shape = true },
    { "compress_flat_short_cond_u8", "Compress", NULL, 2,
      { FEDR(UINT8, 0, 255, 2, 3), FEDV(BOOL, V(1, 0, 1, 1), 4) }, NO_ATTR, OUTT(UINT8, 3),
      ref_compress, .runtime_shape = true },
    { "compress_all_false_f32", "Compress", NULL, 2, { IN(3, 4), FEDV(BOOL, V(0, 0, 0), 3) },
      { AI("axis", 0) }, OUT(0, 4), ref_compress, .runtime_shape = true },
    /* MaxUnpool: indices as MaxPool gives them (flat positions in the output) */
    { "max_unpool_2d_f32", "MaxUnpool", NULL, 2,
      { IN(1, 1, 2, 2), CSTV(INT64, V(5, 7, 13, 15), 1, 1, 2, 2) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2) }, OUT(1, 1, 4, 4), ref_max_unpool },
    { "max_unpool_2d_i32_fed_indices", "MaxUnpool", NULL, 2,
      { FED(INT32, 1, 2, 2, 2), FEDV(INT64, V(0, 3, 8, 10, 16, 19, 29, 30), 1, 2, 2, 2) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2) }, OUTT(INT32, 1, 2, 4, 4),
      ref_max_unpool, .skip = { "ort", "ONNX defines MaxUnpool on floats only; ORT rejects the "
                                "model (the native engine moves any dtype)" } },
    { "max_unpool_output_shape_f32", "MaxUnpool", NULL, 3,
      { IN(1, 1, 2, 2), CSTV(INT64, V(5, 7, 13, 15), 1, 1, 2, 2), I64(1, 1, 5, 5) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2) }, OUT(1, 1, 5, 5), ref_max_unpool,
      .skip = ORT_UNPOOL_SHAPE },
    { "max_unpool_fed_output_shape_f32", "MaxUnpool", NULL, 3,
      { IN(1, 2, 2, 3), CSTV(INT64, V(0, 9, 5, 18, 14, 23, 25, 32, 34, 36, 45, 46), 1, 2, 2, 3),
        FI64(1, 2, 4, 7) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2) }, OUT(1, 2, 4, 7), ref_max_unpool,
      .runtime_shape = true, .skip = ORT_UNPOOL_SHAPE },
    { "max_unpool_1d_pads_f64", "MaxUnpool", NULL, 2,
      { FED(F64, 2, 1, 3), CSTV(INT64, V(0, 2, 3, 6, 7, 9), 2, 1, 3) },
      { AINTS("kernel_shape", 3), AINTS("strides", 2), AINTS("pads", 1, 1) }, OUTT(F64, 2, 1, 5),
      ref_max_unpool, .skip = ORT_NO_KERNEL("MaxUnpool on DOUBLE") },
    /* NonZero: the output's shape is the run's */
    { "nonzero_f32", "NonZero", NULL, 1,
      { FEDF(F32, VF(0, 1.5f, -0.0f, NAN, 0, -2, 0, 0, 3, 0, 0, 1e-30f), 3, 4) }, NO_ATTR,
      OUTT(INT64, 2, 5), ref_nonzero, .runtime_shape = true },
    { "nonzero_i64_3d", "NonZero", NULL, 1,
      { FEDV(INT64, V(0, 0, 5, 0, -1, 0, 0, 0, 0, 7, 0, 0), 2, 3, 2) }, NO_ATTR,
      OUTT(INT64, 3, 3), ref_nonzero, .runtime_shape = true },
    { "nonzero_bool_1d", "NonZero", NULL, 1, { FEDV(BOOL, V(1, 0, 0, 1, 1), 5) }, NO_ATTR,
      OUTT(INT64, 1, 3), ref_nonzero, .runtime_shape = true },
    { "nonzero_u8_none", "NonZero", NULL, 1, { FEDV(UINT8, V(0, 0, 0, 0), 2, 2) }, NO_ATTR,
      OUTT(INT64, 2, 0), ref_nonzero, .runtime_shape = true },
};

const case_table ops_indexing_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
