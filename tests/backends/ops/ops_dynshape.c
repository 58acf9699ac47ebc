/* Run-time-shaped views and reductions: Reshape (-1, a 0 copying a dim, allowzero), Squeeze
 * and Unsqueeze with fed axes, and ReduceSum with fed axes (keepdims, an empty list with and
 * without noop_with_empty_axes); the output's dims come from the run, and a shape or axes the
 * input cannot take is an error. The references are the family files' (ref_copy, ref_reduce). */
#include "tests/backends/ops/ops_harness.h"

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
    { "reducesum_axes_fed_out_of_range", "ReduceSum", NULL, 2, { IN(2, 3), FI64(2) }, NO_ATTR,
      OUT(2, 3, 1), NULL, .runtime_shape = true, .expect_error = true },
};

const case_table ops_dynshape_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
