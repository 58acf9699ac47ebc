/* Run-time-shaped views and reductions: Reshape (-1, a 0 copying a dim, allowzero), Squeeze
 * and Unsqueeze with fed axes, ReduceSum with fed axes (keepdims, an empty list with and
 * without noop_with_empty_axes) and TopK with a fed K; the outputs' dims come from the run, and
 * a shape, axes or K the input cannot take is an error. The views and ReduceSum use the family
 * files' references (ref_copy, ref_reduce). */
#include "tests/backends/ops/ops_harness.h"

/* TopK: the K best of each slice along the axis (largest or smallest; ties by lower index). */
static void ref_topk_fed(const op_case *c, const tensor *in, tensor *out)
{
    int ax = norm_axis(attr_i(c, "axis", -1), in[0].rank);
    bool largest = attr_i(c, "largest", 1);
    size_t outer, len, inner, k = (size_t)in[1].i[0];
    split_axis(in[0].rank, in[0].dims, ax, &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            bool used[64] = { false };
            for (size_t r = 0; r < k; r++) {
                size_t best = len;
                for (size_t j = 0; j < len; j++) {
                    double v = in[0].f[(o * len + j) * inner + i];
                    if (used[j])
                        continue;
                    double b = best < len ? in[0].f[(o * len + best) * inner + i] : 0;
                    if (best == len || (largest ? v > b : v < b))
                        best = j;
                }
                used[best] = true;
                size_t at = (o * k + r) * inner + i;
                copy_el(&out[0], at, &in[0], (o * len + best) * inner + i);
                out[1].i[at] = (int64_t)best;
            }
        }
}

/* A fed INT64 vector of no values. */
#define FI64_EMPTY  { .dtype = BD_DT_INT64, .rank = 1, .dims = { 0 }, \
                      .ivals = (const int64_t[]){ 0 } }

static const op_case k_cases[] = {
    /* Reshape */
    { "reshape_shape_fed", "Reshape", NULL, 2, { IN(2, 3, 4), FI64(4, -1) }, NO_ATTR,
      OUT(4, 6), ref_copy, .runtime_shape = true },
    { "reshape_fed_zero_copies_dim", "Reshape", NULL, 2, { FED(INT64, 2, 3, 4), FI64(0, -1, 2) },
      NO_ATTR, OUTT(INT64, 2, 6, 2), ref_copy, .runtime_shape = true },
    { "reshape_fed_allowzero_empty", "Reshape", NULL, 2, { IN(0, 3, 4), FI64(3, 4, 0) },
      { AI("allowzero", 1) }, OUT(3, 4, 0), ref_copy, .runtime_shape = true },
    { "reshape_fed_count_mismatch", "Reshape", NULL, 2, { IN(2, 3), FI64(4, 2) }, NO_ATTR,
      OUT(4, 2), NULL, .runtime_shape = true, .expect_error = true },
    { "reshape_fed_two_inferred", "Reshape", NULL, 2, { IN(2, 3), FI64(-1, -1) }, NO_ATTR,
      OUT(2, 3), NULL, .runtime_shape = true, .expect_error = true },
    /* Squeeze and Unsqueeze */
    { "squeeze_axes_fed", "Squeeze", NULL, 2, { IN(2, 1, 3, 1), FI64(1, -1) }, NO_ATTR,
      OUT(2, 3), ref_copy, .runtime_shape = true },
    { "squeeze_fed_not_one", "Squeeze", NULL, 2, { IN(2, 3), FI64(0) }, NO_ATTR, OUT(3), NULL,
      .runtime_shape = true, .expect_error = true },
    { "unsqueeze_axes_fed_bool", "Unsqueeze", NULL, 2, { FED(BOOL, 2, 3), FI64(-1, 0) }, NO_ATTR,
      OUTT(BOOL, 1, 2, 3, 1), ref_copy, .runtime_shape = true },
    { "unsqueeze_fed_repeated", "Unsqueeze", NULL, 2, { IN(2, 3), FI64(1, 1) }, NO_ATTR,
      OUT(2, 1, 1, 3), NULL, .runtime_shape = true, .expect_error = true },
    /* ReduceSum with fed axes */
    { "reducesum_axes_fed_keep", "ReduceSum", NULL, 2, { IN(2, 3, 4), FI64(1) }, NO_ATTR,
      OUT(2, 1, 4), ref_reduce, .runtime_shape = true },
    { "reducesum_axes_fed_drop_i32", "ReduceSum", NULL, 2, { FED(INT32, 2, 3, 4), FI64(0, -1) },
      { AI("keepdims", 0) }, OUTT(INT32, 3), ref_reduce, .runtime_shape = true },
    { "reducesum_axes_fed_empty_noop", "ReduceSum", NULL, 2, { IN(2, 3), FI64_EMPTY },
      { AI("noop_with_empty_axes", 1) }, OUT(2, 3), ref_reduce, .runtime_shape = true },
    { "reducesum_axes_fed_empty_all", "ReduceSum", NULL, 2, { FED(F64, 2, 3), FI64_EMPTY },
      NO_ATTR, OUTT(F64, 1, 1), ref_reduce, .runtime_shape = true },
    /* TopK with a fed K */
    { "topk_k_fed", "TopK", NULL, 2, { IN(3, 7), FI64(4) }, NO_ATTR,
      OUTS(O(F32, 3, 4), O(INT64, 3, 4)), ref_topk_fed, .runtime_shape = true },
    { "topk_k_fed_smallest_axis0_i32", "TopK", NULL, 2, { FEDR(INT32, -5, 5, 6, 2), FI64(3) },
      { AI("axis", 0), AI("largest", 0) }, OUTS(O(INT32, 3, 2), O(INT64, 3, 2)), ref_topk_fed,
      .runtime_shape = true },
    { "topk_k_fed_beyond_axis", "TopK", NULL, 2, { IN(2, 3), FI64(4) }, NO_ATTR,
      OUTS(O(F32, 2, 4), O(INT64, 2, 4)), NULL, .runtime_shape = true, .expect_error = true },
    { "reducesum_axes_fed_out_of_range", "ReduceSum", NULL, 2, { IN(2, 3), FI64(2) }, NO_ATTR,
      OUT(2, 3, 1), NULL, .runtime_shape = true, .expect_error = true },
};

const case_table ops_dynshape_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
