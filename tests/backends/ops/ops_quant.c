/* Quantization cases and references: QuantizeLinear (UINT8 and INT8, per tensor and per axis,
 * saturation, halfway values rounding to even), DequantizeLinear (INT8 per axis, INT32 without
 * a zero point), both with a [1] scale and a scalar zero point, DynamicQuantizeLinear, and
 * braid's FakeQuantize (a QDQ pair as one node, which only the oneDNN backend runs: its AVX2
 * loop, its scalar tail, its threads), compared exactly with the pair's float result; and onnxruntime's
 * dynamic-quantization pattern as chains of nodes: DynamicQuantizeLinear -> Cast; ->
 * MatMulInteger -> Cast (s8/u8 weights, their zero points); -> MatMulInteger -> Cast ->
 * Mul(x_scale * W_scale) -> Add(bias), per tensor and per column. The references compute in
 * exact integers (int64) and the graph's own float steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"
#include "tests/lib/tl_graph.h"

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

/* DynamicQuantizeLinear of X as ONNX Runtime computes it, in float: scale = (max(0, xmax) -
 * min(0, xmin)) / 255, or 1 when that range is empty (all zeros: ONNX's formula would divide by
 * 0); zp = round_half_even(clamp(-xmin / scale, 0, 255)); q = saturate(round_half_even(x /
 * scale) + zp). Q gets X->n values. */
static void dq_ref(const tensor *x, uint8_t *q, float *scale, int64_t *zp)
{
    float lo = 0, hi = 0;
    for (size_t i = 0; i < x->n; i++) {
        lo = fminf(lo, (float)x->f[i]);
        hi = fmaxf(hi, (float)x->f[i]);
    }
    *scale = hi == lo ? 1.0f : (hi - lo) / 255;
    float z = -lo / *scale;
    *zp = (int64_t)nearbyintf(z < 0 ? 0 : z > 255 ? 255 : z);
    for (size_t i = 0; i < x->n; i++) {
        double v = nearbyintf((float)x->f[i] / *scale) + (double)*zp;
        q[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

static void ref_dynquant(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    uint8_t *q = malloc(in[0].n + 1);
    float scale;
    dq_ref(&in[0], q, &scale, &out[2].i[0]);
    for (size_t i = 0; i < in[0].n; i++)
        out[0].i[i] = q[i];
    out[1].f[0] = scale;
    free(q);
}

/* ---- the dynamic-quantization pattern (onnxruntime's quantize_dynamic) ------------------- */

/* The chains below start with DynamicQuantizeLinear(IN[0]) -> q, x_scale, x_zp. */
static bd_node *dq_node(bd_graph *g, bd_value *x, bd_value **q, bd_value **s, bd_value **z)
{
    *q = tl_value(g, "x_q", UINT8, x->shape.rank, x->shape.dims);
    *s = tl_value(g, "x_scale", F32, 0, NULL);
    *z = tl_value(g, "x_zp", UINT8, 0, NULL);
    bd_value *o[3] = { *q, *s, *z };
    return tl_node(g, "dq", "DynamicQuantizeLinear", "", &x, 1, o, 3);
}

/* DynamicQuantizeLinear(x) -> Cast(q), x_scale, Cast(x_zp) (outputs 0, 1, 2): the quantizer's
 * every output, exactly, as floats. */
static bd_node *chain_dq_cast(bd_graph *g, bd_value *const *in, bd_value *const *out)
{
    bd_value *q, *s, *z;
    bd_node *first = dq_node(g, in[0], &q, &s, &z);
    tl_attr_int(g, tl_op(g, "cast_q", "Cast", &q, 1, out[0]), "to", F32);
    tl_attr_int(g, tl_op(g, "cast_zp", "Cast", &z, 1, out[2]), "to", F32);
    tl_op(g, "scale", "Identity", &s, 1, out[1]);
    return first;
}

/* DynamicQuantizeLinear(x) -> MatMulInteger(q, W, x_zp, W_zp) (IN: x, W, W_zp or omitted); the
 * product's value, returned. */
static bd_value *dq_matmul(bd_graph *g, bd_value *const *in, bd_node **first, bd_value **xs)
{
    bd_value *q, *z;
    *first = dq_node(g, in[0], &q, xs, &z);
    int64_t d[BD_MAX_RANK];
    int r = in[0]->shape.rank;
    memcpy(d, in[0]->shape.dims, sizeof d);
    d[r - 1] = in[1]->shape.dims[1];
    bd_value *acc = tl_value(g, "acc", INT32, r, d);
    bd_value *mi[4] = { q, in[1], z, in[2] };
    tl_op(g, "mmi", "MatMulInteger", mi, in[2] ? 4 : 3, acc);
    return acc;
}

/* ... -> Cast(to float): the integer product, exactly (no scale: the dynquant pass leaves it
 * as MatMulInteger and Cast). */
static bd_node *chain_dq_matmul_cast(bd_graph *g, bd_value *const *in, bd_value *const *out)
{
    bd_node *first;
    bd_value *xs, *acc = dq_matmul(g, in, &first, &xs);
    tl_attr_int(g, tl_op(g, "cast", "Cast", &acc, 1, out[0]), "to", F32);
    return first;
}

/* ... -> Cast -> Mul(x_scale * W_scale) -> Add(bias, .) (IN: x, W, W_zp or omitted, W_scale one
 * or one per column, bias [N]), as quantize_dynamic writes it: the dynquant pass fuses it. */
static bd_node *chain_dq_matmul_scaled(bd_graph *g, bd_value *const *in, bd_value *const *out)
{
    bd_node *first;
    bd_value *xs, *acc = dq_matmul(g, in, &first, &xs);
    const bd_shape *ys = &out[0]->shape;
    bd_value *f = tl_value(g, "acc_f", F32, ys->rank, ys->dims);
    bd_value *m = tl_value(g, "scaled", F32, ys->rank, ys->dims);
    bd_value *sc = tl_value(g, "scales", F32, in[3]->shape.rank, in[3]->shape.dims);
    bd_value *ss[2] = { xs, in[3] }, *fm[2] = { f, sc }, *ba[2] = { in[4], m };
    tl_op(g, "scales_mul", "Mul", ss, 2, sc);
    tl_attr_int(g, tl_op(g, "cast", "Cast", &acc, 1, f), "to", F32);
    tl_op(g, "mul", "Mul", fm, 2, m);
    tl_op(g, "bias", "Add", ba, 2, out[0]);
    return first;
}

/* ... -> Add(bias) -> Add(., residual) (IN[5], fed [.., N]): a residual after the fused matmul
 * (it stays a binary step: the int8 matmul's probe does not take a sum after the bias). */
static bd_node *chain_dq_matmul_residual(bd_graph *g, bd_value *const *in, bd_value *const *out)
{
    const bd_shape *ys = &out[0]->shape;
    bd_value *t = tl_value(g, "biased", F32, ys->rank, ys->dims);
    bd_value *mid[1] = { t };
    bd_node *first = chain_dq_matmul_scaled(g, in, mid);
    bd_value *ra[2] = { t, in[5] };
    tl_op(g, "residual", "Add", ra, 2, out[0]);
    return first;
}

static void ref_dq_cast(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    uint8_t *q = malloc(in[0].n + 1);
    float scale;
    int64_t zp;
    dq_ref(&in[0], q, &scale, &zp);
    for (size_t i = 0; i < in[0].n; i++)
        out[0].f[i] = q[i];
    out[1].f[0] = scale;
    out[2].f[0] = (double)zp;
    free(q);
}

/* The chains' product: sum over k of (q - x_zp) (W - W_zp[n]) in int64; with a scale (5
 * inputs), then float(acc) * (x_scale * W_scale[n]) + bias[n] (+ residual[m, n], 6 inputs),
 * each step in float as the graph's nodes round. */
static void ref_dq_matmul(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0], *w = &in[1], *wz = &in[2];
    int64_t K = w->dims[0], N = w->dims[1], M = (int64_t)x->n / K;
    uint8_t *q = malloc(x->n + 1);
    float xs;
    int64_t zp;
    dq_ref(x, q, &xs, &zp);
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t acc = 0, bz = wz->n ? wz->i[wz->n == 1 ? 0 : n] : 0;
            for (int64_t k = 0; k < K; k++)
                acc += ((int64_t)q[m * K + k] - zp) * (w->i[k * N + n] - bz);
            if (c->n_in < 5) {
                out->f[m * N + n] = (double)acc;
                continue;
            }
            float s = xs * (float)in[3].f[in[3].n == 1 ? 0 : n];
            float y = (float)acc * s;
            y = y + (float)in[4].f[n];
            out->f[m * N + n] = c->n_in > 5 ? y + (float)in[5].f[m * N + n] : y;
        }
    free(q);
}

/* Exact: integers in float, and the same float steps as the reference. */
#define DQ_EXACT 1e-9
/* s8 weights of the full range: ONNX Runtime's MLAS kernel for u8 x s8 on AVX2 without VNNI
 * adds pairs of products in int16 with saturation (vpmaddubsw), so its product is not ONNX's */
#define ORT_U8S8 { "ort", "ONNX Runtime's u8 x s8 MLAS kernel saturates pairs of products in int16 " \
                          "on CPUs without VNNI (vpmaddubsw)" }

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
    { "dynamicquantizelinear_zero_range", "DynamicQuantizeLinear", NULL, 1,
      { FEDF(F32, VF(0, 0, 0, 0, 0, 0), 2, 3) }, NO_ATTR, OUTS(O(UINT8, 2, 3), O(F32), O(UINT8)),
      ref_dynquant },
    /* The pattern onnxruntime's quantize_dynamic writes, whole: oneDNN takes it into one
     * subgraph (dnnl_integer.c, the dynquant pass). Scale 1 from a range of 255: x / scale is x,
     * so the halves round to even (0.5 -> 0, 2.5 -> 2), and 127.5 + zp 128 saturates. */
    { "dq_cast_halves", "DynamicQuantizeLinear", NULL, 1,
      { FEDF(F32, VF(0.5f, 1.5f, 2.5f, 254.5f, 255, 0, 3.5f, 100.5f, 7, 9.5f), 10) }, NO_ATTR,
      OUTS(O(F32, 10), O(F32), O(F32)), ref_dq_cast, DQ_EXACT, .chain = chain_dq_cast },
    { "dq_cast_signed_halves", "DynamicQuantizeLinear", NULL, 1,
      { FEDF(F32, VF(-127.5f, 127.5f, -0.5f, 0.5f, 1.5f, -1.5f, 2.5f, 10, -2.5f), 9) }, NO_ATTR,
      OUTS(O(F32, 9), O(F32), O(F32)), ref_dq_cast, DQ_EXACT, .chain = chain_dq_cast },
    { "dq_cast_zero_range", "DynamicQuantizeLinear", NULL, 1,
      { FEDF(F32, VF(0, 0, 0, 0, 0, 0), 2, 3) }, NO_ATTR, OUTS(O(F32, 2, 3), O(F32), O(F32)),
      ref_dq_cast, DQ_EXACT, .chain = chain_dq_cast },
    { "dq_cast_odd_length", "DynamicQuantizeLinear", NULL, 1, { INR(-3, 5, 3, 37) }, NO_ATTR,
      OUTS(O(F32, 3, 37), O(F32), O(F32)), ref_dq_cast, DQ_EXACT, .chain = chain_dq_cast },
    /* -> MatMulInteger -> Cast: s8 and u8 weights (less their zero point, split into parts
     * oneDNN multiplies exactly), zero points scalar, per column, none; K and N not multiples
     * of 16, batch dims */
    { "dq_matmulinteger_s8_zp", "DynamicQuantizeLinear", NULL, 3,
      { INR(-2, 3, 5, 13), CSTR(INT8, -128, 127, 13, 7), CSTS(INT8, 3) }, NO_ATTR, OUT(5, 7),
      ref_dq_matmul, DQ_EXACT, .chain = chain_dq_matmul_cast, .skip = ORT_U8S8 },
    { "dq_matmulinteger_u8_batch", "DynamicQuantizeLinear", NULL, 3,
      { INR(-1, 2, 2, 3, 19), CSTR(UINT8, 0, 255, 19, 5), CSTV(UINT8, V(131, 131, 131, 131, 131), 5) },
      NO_ATTR, OUT(2, 3, 5), ref_dq_matmul, DQ_EXACT, .chain = chain_dq_matmul_cast },
    { "dq_matmulinteger_s8_no_zp", "DynamicQuantizeLinear", NULL, 3,
      { INR(-4, 1, 4, 40), CSTR(INT8, -128, 127, 40, 33), OMIT }, NO_ATTR, OUT(4, 33),
      ref_dq_matmul, DQ_EXACT, .chain = chain_dq_matmul_cast, .skip = ORT_U8S8 },
    /* per-column zero points that differ (folded into the weights: oneDNN 2.6's matmul takes
     * only a common one) */
    { "dq_matmulinteger_u8_zp_per_column", "DynamicQuantizeLinear", NULL, 3,
      { INR(-1, 1, 3, 6), CSTR(UINT8, 0, 255, 6, 4), CSTV(UINT8, V(120, 128, 131, 0), 4) },
      NO_ATTR, OUT(3, 4), ref_dq_matmul, DQ_EXACT, .chain = chain_dq_matmul_cast },
    /* -> Cast -> Mul(x_scale * W_scale) -> Add(bias): one matmul with run-time output scales
     * (one, or per column) and the bias as a post-op */
    { "dq_matmul_scaled_per_tensor", "DynamicQuantizeLinear", NULL, 5,
      { INR(-4, 4, 4, 33), CSTR(INT8, -128, 127, 33, 20), CSTS(INT8, 0), CSTSF(F32, 0.0123f),
        WR(-1, 1, 20) }, NO_ATTR, OUT(4, 20), ref_dq_matmul, 1e-6, .chain = chain_dq_matmul_scaled,
      .skip = ORT_U8S8 },
    { "dq_matmul_scaled_u8_per_column_batch", "DynamicQuantizeLinear", NULL, 5,
      { INR(-2, 6, 2, 5, 24), CSTR(UINT8, 0, 255, 24, 17), CSTS(UINT8, 128), WR(0.001f, 0.02f, 17),
        WR(-1, 1, 17) }, NO_ATTR, OUT(2, 5, 17), ref_dq_matmul, 1e-6, .chain = chain_dq_matmul_scaled },
    { "dq_matmul_scaled_s8_zp_no_bias_zp", "DynamicQuantizeLinear", NULL, 5,
      { INR(-3, 1, 7, 50), CSTR(INT8, -100, 100, 50, 9), CSTS(INT8, -5), CSTSF(F32, 0.5f),
        WR(-1, 1, 9) }, NO_ATTR, OUT(7, 9), ref_dq_matmul, 1e-6, .chain = chain_dq_matmul_scaled,
      .skip = ORT_U8S8 },
    { "dq_matmul_scaled_residual", "DynamicQuantizeLinear", NULL, 6,
      { INR(-2, 2, 1, 6, 40), CSTR(UINT8, 0, 255, 40, 24), CSTS(UINT8, 119), CSTSF(F32, 0.03f),
        WR(-1, 1, 24), INR(-3, 3, 1, 6, 24) }, NO_ATTR, OUT(1, 6, 24), ref_dq_matmul, 1e-6,
      .chain = chain_dq_matmul_residual },
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
