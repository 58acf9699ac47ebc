/* Swish (SiLU, x * sigmoid(x)) where the oneDNN backend runs it on its own AVX-512 kernel
 * (backends/dnnl/dnnl_swish.c): a standalone Swish of odd length (the kernel's masked tail),
 * one long enough to be split across threads, extreme values, and a Swish fused after a
 * MatMul and after a ConvTranspose (over channels padded to 16), which the backend takes out
 * of the primitive and runs after it. Swish is braid's
 * composite (the SiLU pass makes it from Sigmoid and Mul), so only oneDNN claims these. */
#include <math.h>

#include "tests/backends/ops/ops_harness.h"

static double silu(double v)
{
    return v / (1 + exp(-v));
}

static void ref_swish(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    for (size_t i = 0; i < out->n; i++)
        out->f[i] = silu(in[0].f[i]);
}

/* A [M, K] x B [K, N], then Swish. */
static void ref_matmul_swish(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    size_t M = (size_t)in[0].dims[0], K = (size_t)in[0].dims[1], N = (size_t)in[1].dims[1];
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            double s = 0;
            for (size_t k = 0; k < K; k++)
                s += in[0].f[m * K + k] * in[1].f[k * N + n];
            out->f[m * N + n] = silu(s);
        }
}

#define k_extreme VF(-100, -87.5f, -40, -20, -1e-3f, 0, 1e-3f, 20, 40, 87.5f, 100, 1e30f, \
                     INFINITY, NAN, -0.0f)
#define SWISH_ONLY { "native,ort", "braid's Swish composite runs on oneDNN alone" }

static const op_case k_cases[] = {
    { "swish_odd_length(braid)", "Swish", "braid", 1, { INR(-10, 10, 3, 7, 5) }, NO_ATTR,
      OUT(3, 7, 5), ref_swish },
    { "swish_threads(braid)", "Swish", "braid", 1, { INR(-8, 8, 1, 40, 57, 33) }, NO_ATTR,
      OUT(1, 40, 57, 33), ref_swish, .threads = 2 },
    { "swish_extreme(braid)", "Swish", "braid", 1, { { SHAPE(15), .fvals = k_extreme } }, NO_ATTR,
      OUT(15), ref_swish },
    { "matmul_swish", "MatMul", NULL, 2, { INR(-2, 2, 5, 7), W(7, 9) }, NO_ATTR, OUT(5, 9),
      ref_matmul_swish, .then = "braid:Swish", .skip = SWISH_ONLY },
    { "convtranspose_bias_swish_padded", "ConvTranspose", NULL, 3,
      { IN(1, 16, 8, 8), W(16, 8, 4, 4), W(8) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 8, 16, 16),
      ref_conv_transpose, .then = "braid:Swish", .skip = SWISH_ONLY },
};

const case_table ops_swish_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
