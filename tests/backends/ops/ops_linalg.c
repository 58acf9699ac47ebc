/* Dense linear algebra cases and references: Gemm where oneDNN does not take it (a fed C with
 * beta != 1, DOUBLE, both transposes, C broadcast from a column) and Det (one matrix, a batch
 * of them in DOUBLE, a singular one). Det's reference expands along the first row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static void ref_gemm_bcast(const op_case *c, const tensor *in, tensor *out)
{
    bool ta = attr_i(c, "transA", 0), tb = attr_i(c, "transB", 0);
    double alpha = attr_f(c, "alpha", 1), beta = attr_f(c, "beta", 1);
    int64_t M = out->dims[0], N = out->dims[1], K = ta ? in[0].dims[0] : in[0].dims[1];
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += in[0].f[ta ? k * M + m : m * K + k] * in[1].f[tb ? n * K + k : k * N + n];
            int64_t idx[2] = { m, n };
            out->f[m * N + n] = alpha * acc + (c->n_in > 2 ? beta * in[2].f[bcast(&in[2], idx, 2)] : 0);
        }
}

/* The determinant of the M x M matrix A by cofactor expansion along its first row. */
static double cofactor_det(const double *a, int64_t m)
{
    if (m == 1)
        return a[0];
    double det = 0, *minor = malloc((size_t)((m - 1) * (m - 1)) * sizeof *minor);
    for (int64_t col = 0; col < m; col++) {
        int64_t at = 0;
        for (int64_t r = 1; r < m; r++)
            for (int64_t k = 0; k < m; k++)
                if (k != col)
                    minor[at++] = a[r * m + k];
        det += (col % 2 ? -1 : 1) * a[col] * cofactor_det(minor, m - 1);
    }
    free(minor);
    return det;
}

static void ref_det(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    int64_t m = in[0].dims[in[0].rank - 1];
    for (size_t q = 0; q < out->n; q++)
        out->f[q] = cofactor_det(in[0].f + q * (size_t)(m * m), m);
}

#define k_singular VF(1, 2, 3, 2, 4, 6, 1, 1, 1)

static const op_case k_cases[] = {
    /* Gemm */
    { "gemm_fed_c_beta", "Gemm", NULL, 3, { IN(3, 4), IN(4, 5), IN(5) },
      { AF("alpha", 0.5f), AF("beta", 2) }, OUT(3, 5), ref_gemm_bcast },
    { "gemm_f64_trans_c_column", "Gemm", NULL, 3, { FED(F64, 4, 3), FED(F64, 5, 4),
      FED(F64, 3, 1) }, { AI("transA", 1), AI("transB", 1), AF("beta", -1) },
      OUTT(F64, 3, 5), ref_gemm_bcast },
    { "gemm_fed_b_no_c", "Gemm", NULL, 2, { IN(2, 6), IN(6, 3) }, NO_ATTR, OUT(2, 3),
      ref_gemm_bcast },
    { "gemm_big_parallel", "Gemm", NULL, 3, { IN(256, 64), IN(64, 128), IN(256, 128) },
      { AF("beta", 0.25f) }, OUT(256, 128), ref_gemm_bcast, .threads = 2 },
    /* Det */
    { "det_2d", "Det", NULL, 1, { IN(3, 3) }, NO_ATTR, OUT0(F32), ref_det },
    { "det_batched_f64", "Det", NULL, 1, { FED(F64, 2, 3, 4, 4) }, NO_ATTR, OUTT(F64, 2, 3),
      ref_det, .skip = ORT_NO_KERNEL("Det on DOUBLE") },
    { "det_singular", "Det", NULL, 1, { FEDF(F32, k_singular, 3, 3) }, NO_ATTR, OUT0(F32),
      ref_det },
};

const case_table ops_linalg_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
