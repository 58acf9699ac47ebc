/* Quantization cases and references: QuantizeLinear (UINT8 and INT8, per tensor and per axis,
 * saturation, halfway values rounding to even), DequantizeLinear (INT8 per axis, INT32 without
 * a zero point), both with a [1] scale and a scalar zero point, DynamicQuantizeLinear, and
 * braid's FakeQuantize (a QDQ pair as one node, which only the oneDNN backend runs: its AVX2
 * loop, its scalar tail, its threads), compared exactly with the pair's float result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

/* The scale and zero point's index for element I: per tensor, or by X's axis. */
static size_t param_index(const op_case *c, const tensor *in, size_t i)
{
    if (in[1].n == 1)
        return 0;
    int64_t at[BD_MAX_RANK];
    unravel(i, in[0].rank, in[0].dims, at);
    return (size_t)at[norm_axis(attr_i(c, "axis", 1), in[0].rank)];
}

static void ref_quant(const op_case *c, const tensor *in, tensor *out)
{
    bool quant = !strcmp(c->op, "QuantizeLinear");
    for (size_t i = 0; i < in[0].n; i++) {
        size_t p = param_index(c, in, i);
        double zp = c->n_in > 2 ? (double)in[2].i[p] : 0;
        if (!quant) {
            out->f[i] = (in[0].f[i] - zp) * in[1].f[p];
            continue;
        }
        double v = nearbyint((double)((float)in[0].f[i] / (float)in[1].f[p])) + zp;
        double lo = out->dtype == UINT8 ? 0 : -128, hi = out->dtype == UINT8 ? 255 : 127;
        out->i[i] = (int64_t)(v < lo ? lo : v > hi ? hi : v);
    }
}

static void ref_dynquant(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    float lo = 0, hi = 0;
    for (size_t i = 0; i < in[0].n; i++) {
        lo = fminf(lo, (float)in[0].f[i]);
        hi = fmaxf(hi, (float)in[0].f[i]);
    }
    float scale = (hi - lo) / 255;
    double zp = nearbyintf(-lo / scale);
    zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
    for (size_t i = 0; i < in[0].n; i++) {
        double v = nearbyintf((float)in[0].f[i] / scale) + zp;
        out[0].i[i] = (int64_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    out[1].f[0] = scale;
    out[2].i[0] = (int64_t)zp;
}

/* FakeQuantize: (saturate(round(x / s) + z) - z) * s, NaN quantized to 0 (as the native
 * QuantizeLinear does: ONNX leaves it undefined). */
static void ref_fakequant(const op_case *c, const tensor *in, tensor *out)
{
    float s = attr_f(c, "scale", 0);
    int64_t z = attr_i(c, "zero_point", 0);
    bool u8 = attr_i(c, "to", UINT8) == UINT8;
    double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    for (size_t i = 0; i < in[0].n; i++) {
        double q = nearbyint((double)((float)in[0].f[i] / s));
        q = q != q ? 0 : q + (double)z;
        q = q < lo ? lo : q > hi ? hi : q;
        out->f[i] = (double)((float)(q - (double)z) * s);
    }
}

#define k_halves VF(0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 300, -300)

/* Halfway values both ways, both ends of INT8 past saturation, infinities, NaN, -0. */
#define k_fq_edges VF(0.25f, 0.75f, 1.25f, -0.25f, -0.75f, -1.25f, 63.25f, 63.75f, 64.25f, \
                      -62.75f, -62.25f, -61.75f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, -0.0f, \
                      0.2499f, 3.0f)
#define FQ_ONLY { "native,ort", "braid's FakeQuantize runs on oneDNN alone" }

static const op_case k_cases[] = {
    /* QuantizeLinear */
    { "quantizelinear_u8", "QuantizeLinear", NULL, 3, { INR(-2, 2, 2, 5), CSTSF(F32, 0.02f),
      CSTS(UINT8, 128) }, NO_ATTR, OUTT(UINT8, 2, 5), ref_quant },
    { "quantizelinear_axis_i8", "QuantizeLinear", NULL, 3, { INR(-1, 1, 2, 3, 4),
      CSTF(F32, VF(0.01f, 0.02f, 0.05f), 3), CSTV(INT8, V(0, -3, 5), 3) }, { AI("axis", 1) },
      OUTT(INT8, 2, 3, 4), ref_quant },
    { "quantizelinear_halves_saturate", "QuantizeLinear", NULL, 2,
      { FEDF(F32, k_halves, 8), CSTSF(F32, 1) }, NO_ATTR, OUTT(UINT8, 8), ref_quant },
    /* DequantizeLinear */
    { "dequantizelinear_i8_axis", "DequantizeLinear", NULL, 3, { FED(INT8, 2, 3, 4),
      CSTF(F32, VF(0.1f, 0.2f, 0.5f), 3), CSTV(INT8, V(1, -2, 0), 3) }, { AI("axis", -2) },
      OUT(2, 3, 4), ref_quant },
    /* along the last axis (a MatMul's per-column weights): the native engine's row loop */
    { "dequantizelinear_u8_last_axis", "DequantizeLinear", NULL, 3, { FED(UINT8, 3, 5),
      CSTF(F32, VF(0.1f, 0.2f, 0.5f, 0.25f, 2.0f), 5), CSTV(UINT8, V(0, 3, 128, 255, 7), 5) },
      { AI("axis", -1) }, OUT(3, 5), ref_quant },
    { "dequantizelinear_i32", "DequantizeLinear", NULL, 2, { FED(INT32, 5),
      CSTSF(F32, 0.5f) }, NO_ATTR, OUT(5), ref_quant },
    /* a [1] scale with a scalar zero point: per tensor (onnxruntime's quantizer writes these
     * for the bias of a LayerNorm, and runs them) */
    { "dequantizelinear_scale_1_zero_point_scalar", "DequantizeLinear", NULL, 3,
      { FED(UINT8, 2, 5), CSTF(F32, VF(0.25f), 1), CSTS(UINT8, 7) }, NO_ATTR, OUT(2, 5), ref_quant },
    { "quantizelinear_scale_1_zero_point_scalar", "QuantizeLinear", NULL, 3,
      { INR(-2, 2, 2, 5), CSTF(F32, VF(0.02f), 1), CSTS(INT8, -3) }, NO_ATTR, OUTT(INT8, 2, 5), ref_quant },
    /* DynamicQuantizeLinear */
    { "dynamicquantizelinear", "DynamicQuantizeLinear", NULL, 1, { INR(-3, 5, 3, 4) },
      NO_ATTR, OUTS(O(UINT8, 3, 4), O(F32), O(UINT8)), ref_dynquant },
    /* FakeQuantize: exact (tol 1e-9: the float result itself, any rounding apart is a step) */
    { "fakequantize_u8(braid)", "FakeQuantize", "braid", 1, { INR(-3, 5, 2, 3, 7, 5) },
      { AF("scale", 0.03f), AI("zero_point", 97), AI("to", UINT8) }, OUT(2, 3, 7, 5),
      ref_fakequant, .tol = 1e-9, .skip = FQ_ONLY },
    { "fakequantize_i8_halves_saturate(braid)", "FakeQuantize", "braid", 1,
      { { SHAPE(20), .fvals = k_fq_edges } },
      { AF("scale", 0.5f), AI("zero_point", -3), AI("to", INT8) }, OUT(20), ref_fakequant,
      .tol = 1e-9, .skip = FQ_ONLY },
    { "fakequantize_threads(braid)", "FakeQuantize", "braid", 1, { INR(-1, 1, 1, 24, 56, 56) },
      { AF("scale", 0.0078125f), AI("zero_point", 128), AI("to", UINT8) }, OUT(1, 24, 56, 56),
      ref_fakequant, .tol = 1e-9, .threads = 2, .skip = FQ_ONLY },
};

const case_table ops_quant_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
