/* Dense linear algebra cases and references: Gemm where oneDNN does not take it (a fed C with
 * beta != 1, DOUBLE, both transposes, C broadcast from a column), Det (one matrix, a batch of
 * them in DOUBLE, a singular one; the reference expands along the first row), MatMulInteger
 * and QLinearMatMul (zero points, batch broadcasting, a 1-D operand, per-column scales). */
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

/* MatMulInteger and QLinearMatMul: numpy's matmul of the operands less their zero points;
 * QLinearMatMul then scales by a_scale * b_scale / y_scale (in float), adds y_zero_point,
 * saturates and rounds half to even. */
static void ref_qmatmul(const op_case *c, const tensor *in, tensor *out)
{
    bool ql = !strcmp(c->op, "QLinearMatMul");
    const tensor *a = &in[0], *b = &in[ql ? 3 : 1];
    const tensor *az = c->n_in > 2 ? &in[2] : NULL, *bz = c->n_in > (ql ? 5 : 3) ? &in[ql ? 5 : 3] : NULL;
    int ra = a->rank, rb = b->rank, r = out->rank;
    int64_t K = a->dims[ra - 1], M = ra > 1 ? a->dims[ra - 2] : 1, N = rb > 1 ? b->dims[rb - 1] : 1;
    int64_t idx[BD_MAX_RANK], ia[BD_MAX_RANK], ib[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, r, out->dims, idx);
        int64_t n = rb > 1 ? idx[r - 1] : 0, m = ra > 1 ? idx[r - (rb > 1 ? 2 : 1)] : 0;
        int nb = r - (ra > 1) - (rb > 1);      /* the output's batch dims */
        double acc = 0;
        for (int64_t k = 0; k < K; k++) {
            for (int d = 0; d < ra - 2; d++)   /* batch dims, broadcast from the right */
                ia[d] = a->dims[d] == 1 ? 0 : idx[nb - (ra - 2) + d];
            for (int d = 0; d < rb - 2; d++)
                ib[d] = b->dims[d] == 1 ? 0 : idx[nb - (rb - 2) + d];
            if (ra > 1) {
                ia[ra - 2] = m;
                ia[ra - 1] = k;
            } else {
                ia[0] = k;
            }
            if (rb > 1) {
                ib[rb - 2] = k;
                ib[rb - 1] = n;
            } else {
                ib[0] = k;
            }
            double xa = a->f[ravel(ia, ra, a->dims)] - (az ? az->f[az->n == 1 ? 0 : m] : 0);
            double xb = b->f[ravel(ib, rb, b->dims)] - (bz ? bz->f[bz->n == 1 ? 0 : n] : 0);
            acc += xa * xb;
        }
        if (!ql) {
            out->i[j] = (int64_t)acc;
            continue;
        }
        float scale = (float)in[1].f[in[1].n == 1 ? 0 : m] * (float)in[4].f[in[4].n == 1 ? 0 : n];
        scale /= (float)in[6].f[0];
        double v = acc * (double)scale + in[7].f[0];
        double lo = out->dtype == INT8 ? -128 : 0, hi = out->dtype == INT8 ? 127 : 255;
        out->i[j] = (int64_t)nearbyint(v < lo ? lo : v > hi ? hi : v);
    }
    (void)M;
    (void)N;
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
    /* MatMulInteger and QLinearMatMul */
    { "matmulinteger_u8_zero_points", "MatMulInteger", NULL, 4, { FED(UINT8, 3, 4),
      FED(UINT8, 4, 5), CSTS(UINT8, 12), CSTS(UINT8, 7) }, NO_ATTR, OUTT(INT32, 3, 5),
      ref_qmatmul },
    { "matmulinteger_i8_batch_bcast", "MatMulInteger", NULL, 2, { FED(INT8, 2, 1, 3, 4),
      FED(INT8, 3, 4, 2) }, NO_ATTR, OUTT(INT32, 2, 3, 3, 2), ref_qmatmul },
    { "qlinearmatmul_u8", "QLinearMatMul", NULL, 8, { FED(UINT8, 2, 4), CSTSF(F32, 0.05f),
      CSTS(UINT8, 113), FED(UINT8, 4, 3), CSTSF(F32, 0.03f), CSTS(UINT8, 114), CSTSF(F32, 0.1f),
      CSTS(UINT8, 118) }, NO_ATTR, OUTT(UINT8, 2, 3), ref_qmatmul },
    { "qlinearmatmul_i8_1d_per_column", "QLinearMatMul", NULL, 8, { FED(INT8, 4),
      CSTSF(F32, 0.05f), CSTS(INT8, 3), FED(INT8, 4, 3), CSTF(F32, VF(0.01f, 0.02f, 0.04f), 3),
      CSTV(INT8, V(0, 0, 0), 3), CSTSF(F32, 0.02f), CSTS(INT8, -5) }, NO_ATTR, OUTT(INT8, 3),
      ref_qmatmul },
};

const case_table ops_linalg_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
