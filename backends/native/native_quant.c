/* Linear (de)quantization of opsets 10 to 18: QuantizeLinear (FLOAT or INT32 to UINT8 or INT8:
 * x / scale rounded half to even, plus the zero point, saturated), DequantizeLinear (INT8,
 * UINT8 or INT32 to FLOAT: (x - zero point) * scale) and DynamicQuantizeLinear (FLOAT to UINT8
 * with the scale and zero point of the data's range, 0 included). The scale and zero point
 * are per tensor (one element) or per axis (one per element of `axis`). Divisions happen in
 * float, as ONNX's reference and ONNX Runtime compute them, so halfway cases round alike. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { QT_QUANT, QT_DEQUANT };

#define QT_QUANTIZED (NV_DT(BD_DT_UINT8) | NV_DT(BD_DT_INT8))

/* The scale (FLOAT) and optional zero point of N: one element, or one per element of X's
 * axis (its index into *AX, -1 for per tensor). */
static bool params_ok(const bd_node *n, int *ax)
{
    const bd_value *x = n->inputs[0], *sc = n->inputs[1], *zp = bd_node_input(n, 2);
    size_t count = nv_shape_numel(&sc->shape);
    *ax = -1;
    if (!nv_value_ok(sc, NV_DT(BD_DT_FLOAT)) || sc->shape.rank > 1)
        return false;
    if (zp && (!nv_value_ok(zp, NV_DT_NUMERIC) || nv_shape_numel(&zp->shape) != count ||
               (zp->shape.rank != sc->shape.rank && count != 1)))   /* [] and [1]: per tensor */
        return false;
    if (sc->shape.rank == 1 && count != 1) {
        *ax = nv_axis(bd_node_attr_int(n, "axis", 1), x->shape.rank);
        return *ax >= 0 && x->shape.rank > 0 && (size_t)x->shape.dims[*ax] == count;
    }
    return count == 1;
}

static bool quant_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool q = !strcmp(n->op_type, "QuantizeLinear");
    if (n->n_inputs < 2 || n->n_inputs > 3 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects x, scale, optional zero point and one output",
                      n->op_type);
    const bd_value *x = n->inputs[0], *zp = bd_node_input(n, 2), *y = n->outputs[0];
    unsigned xm = q ? NV_DT(BD_DT_FLOAT) | NV_DT(BD_DT_INT32) : QT_QUANTIZED | NV_DT(BD_DT_INT32);
    int want = q ? (zp ? zp->dtype : BD_DT_UINT8) : BD_DT_FLOAT;
    int ax;
    if (!nv_value_ok(x, xm) || !nv_value_ok(y, NV_DT(want)) ||
        !bd_shape_equal(&x->shape, &y->shape) || (q && !(QT_QUANTIZED & NV_DT(want))) ||
        (!q && zp && zp->dtype != x->dtype))
        return nv_why(why, len, "%s: dtypes or shapes (x %s)", n->op_type, bd_dtype_name(x->dtype));
    if (!params_ok(n, &ax))
        return nv_why(why, len, "%s: the scale must be one FLOAT, or one per element of the "
                      "axis, and the zero point its shape", n->op_type);
    return true;
}

/* V rounded half to even and saturated to DTYPE's range (UINT8 or INT8). */
static int64_t saturate(double v, int dtype)
{
    double lo = dtype == BD_DT_UINT8 ? 0 : -128, hi = dtype == BD_DT_UINT8 ? 255 : 127;
    v = nearbyint(v);
    return v != v ? 0 : v < lo ? (int64_t)lo : v > hi ? (int64_t)hi : (int64_t)v;
}

/* DequantizeLinear of LEN elements of X (DTYPE) from AT on, with one scale S and zero point Z:
 * typed loops the compiler vectorizes (a model's int8 weights are dequantized here once per
 * plan, tens of millions of them). */
static void dequant_block(const void *x, int dtype, size_t at, size_t len, int64_t z, float s,
                          float *y)
{
    if (dtype == BD_DT_UINT8) {
        const uint8_t *p = (const uint8_t *)x + at;
        int32_t z32 = (int32_t)z;
        for (size_t i = 0; i < len; i++)
            y[i] = (float)((int32_t)p[i] - z32) * s;
    } else if (dtype == BD_DT_INT8) {
        const int8_t *p = (const int8_t *)x + at;
        int32_t z32 = (int32_t)z;
        for (size_t i = 0; i < len; i++)
            y[i] = (float)((int32_t)p[i] - z32) * s;
    } else {
        const int32_t *p = (const int32_t *)x + at;
        for (size_t i = 0; i < len; i++)
            y[i] = (float)((int64_t)p[i] - z) * s;
    }
}

/* DequantizeLinear along X's last axis (a MatMul's per-column weights [K, N]): ROWS rows of
 * LEN elements, element c of a row with scale S[c] and zero point Z[c]. */
static void dequant_rows(const void *x, int dtype, size_t rows, size_t len, const int64_t *z,
                         const float *s, float *y)
{
    for (size_t r = 0; r < rows; r++, y += len) {
        size_t at = r * len;
        if (dtype == BD_DT_UINT8)
            for (size_t c = 0; c < len; c++)
                y[c] = (float)((int64_t)((const uint8_t *)x)[at + c] - z[c]) * s[c];
        else if (dtype == BD_DT_INT8)
            for (size_t c = 0; c < len; c++)
                y[c] = (float)((int64_t)((const int8_t *)x)[at + c] - z[c]) * s[c];
        else
            for (size_t c = 0; c < len; c++)
                y[c] = (float)((int64_t)((const int32_t *)x)[at + c] - z[c]) * s[c];
    }
}

static int quant_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    (void)env;
    (void)err;
    const nv_tensor *x = &in[0], *sc = &in[1];
    const nv_tensor *zp = s->n_in > 2 && s->in[2] >= 0 ? &in[2] : NULL;
    int ax = (int)s->ip[0];
    size_t inner = 1, len = ax >= 0 ? (size_t)x->dims[ax] : 1;
    for (int d = ax + 1; ax >= 0 && d < x->rank; d++)
        inner *= (size_t)x->dims[d];
    if (ax < 0)
        inner = x->numel;                       /* one block: the whole tensor */
    const float *scale = sc->data;
    if (s->op == QT_DEQUANT && ax >= 0 && inner == 1 && len > 1) {
        int64_t *z = calloc(len, sizeof *z);
        if (z) {
            for (size_t c = 0; zp && c < len; c++)
                z[c] = nv_get_i(zp->data, zp->dtype, c);
            dequant_rows(x->data, x->dtype, x->numel / len, len, z, scale, out[0].data);
            free(z);
            return 0;
        }                                       /* no memory: the blocks below, slower */
    }
    /* Blocks of INNER elements share one scale and zero point (all of X per tensor). */
    for (size_t at = 0, b = 0; at < x->numel; at += inner, b++) {
        size_t c = ax >= 0 ? b % len : 0, n = x->numel - at < inner ? x->numel - at : inner;
        int64_t z = zp ? nv_get_i(zp->data, zp->dtype, c) : 0;
        if (s->op == QT_DEQUANT) {
            dequant_block(x->data, x->dtype, at, n, z, scale[c], (float *)out[0].data + at);
            continue;
        }
        for (size_t i = at; i < at + n; i++) {
            float v = x->dtype == BD_DT_FLOAT ? ((const float *)x->data)[i]
                                              : (float)((const int32_t *)x->data)[i];
            nv_set_i(out[0].data, out[0].dtype, i,
                     saturate((double)nearbyintf(v / scale[c]) + (double)z, out[0].dtype));
        }
    }
    return 0;
}

static int quant_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    int ax;
    params_ok(n, &ax);
    s->op = !strcmp(n->op_type, "QuantizeLinear") ? QT_QUANT : QT_DEQUANT;
    s->ip[0] = ax;
    s->run = quant_run;
    return 0;
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------------------ */

static bool dynquant_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 3)
        return nv_why(why, len, "DynamicQuantizeLinear: expects x and three outputs");
    const bd_value *x = n->inputs[0];
    bd_shape scalar = bd_shape_make(0, NULL);
    if (!nv_value_ok(x, NV_DT(BD_DT_FLOAT)) || !nv_value_ok(n->outputs[0], NV_DT(BD_DT_UINT8)) ||
        !bd_shape_equal(&x->shape, &n->outputs[0]->shape) ||
        !nv_value_ok(n->outputs[1], NV_DT(BD_DT_FLOAT)) ||
        !nv_value_ok(n->outputs[2], NV_DT(BD_DT_UINT8)) ||
        !bd_shape_equal(&n->outputs[1]->shape, &scalar) ||
        !bd_shape_equal(&n->outputs[2]->shape, &scalar))
        return nv_why(why, len, "DynamicQuantizeLinear: FLOAT x, UINT8 y of its shape, and a "
                      "FLOAT scale and UINT8 zero point scalars");
    return true;
}

static int dynquant_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                        bd_error *err)
{
    (void)s;
    (void)env;
    (void)err;
    const float *x = in[0].data;
    float lo = 0, hi = 0;
    for (size_t i = 0; i < in[0].numel; i++) {
        lo = x[i] < lo ? x[i] : lo;             /* a NaN is skipped */
        hi = x[i] > hi ? x[i] : hi;
    }
    float scale = (hi - lo) / 255.0f;
    int64_t zp = scale > 0 ? saturate(nearbyintf(0 - lo / scale), BD_DT_UINT8) : 0;
    uint8_t *y = out[0].data;
    for (size_t i = 0; i < in[0].numel; i++)
        y[i] = scale > 0 ? (uint8_t)saturate((double)nearbyintf(x[i] / scale) + (double)zp,
                                             BD_DT_UINT8)
                         : (uint8_t)zp;
    *(float *)out[1].data = scale > 0 ? scale : 1.0f;   /* all zeros: ONNX Runtime's scale 1
                                                          * (ONNX's formula divides by 0) */
    *(uint8_t *)out[2].data = (uint8_t)zp;
    return 0;
}

static int dynquant_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)err;
    s->run = dynquant_run;
    return 0;
}

const nv_op nv_quant_ops[] = {
    { "QuantizeLinear", quant_supports, quant_prepare },
    { "DequantizeLinear", quant_supports, quant_prepare },
    { "DynamicQuantizeLinear", dynquant_supports, dynquant_prepare },
};
const size_t nv_quant_n = sizeof nv_quant_ops / sizeof nv_quant_ops[0];
