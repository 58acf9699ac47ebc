/* Linear (de)quantization: QuantizeLinear(x, y_scale, y_zero_point) -> y of x's shape, the zero
 * point's dtype (UINT8 without one); DequantizeLinear(x, x_scale, x_zero_point) -> y of x's
 * shape, the scale's (floating-point) dtype; DynamicQuantizeLinear(x) -> y (UINT8, x's
 * shape), y_scale (FLOAT scalar), y_zero_point (UINT8 scalar). The scale is a scalar (per
 * tensor: also a 1-element 1-D) or, from opset 13, 1-D over dim 'axis' of x (per axis); the
 * zero point has the scale's shape. The integer and quantized MatMul and Conv take the float
 * ops' shapes. */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

static bool is_float(int dtype)
{
    return dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE || dtype == BD_DT_FLOAT16 ||
           dtype == BD_DT_BFLOAT16;
}

int shp_quantize(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bool quant = strcmp(n->op_type, "QuantizeLinear") == 0;
    bd_value *x = shp_in(n, 0), *scale = shp_in(n, 1), *zp = shp_in(n, 2);
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", 1, &axis, err)))
        return rc;
    if (scale->dtype != BD_DT_UNDEFINED && !is_float(scale->dtype) && scale->dtype != BD_DT_INT32)
        return shp_fail(err, n, "scale '%s' must be floating point, got %s", scale->name,
                        bd_dtype_name(scale->dtype));
    int dtype = quant ? (zp ? zp->dtype : BD_DT_UINT8)
                      : (is_float(scale->dtype) ? scale->dtype : BD_DT_FLOAT);
    if (shp_ranked(scale)) {
        if (scale->shape.rank > 1)
            return shp_fail(err, n, "scale '%s' must be a scalar or 1-D, got rank %d", scale->name,
                            scale->shape.rank);
        int64_t len = scale->shape.rank == 1 ? scale->shape.dims[0] : 1;
        if (len >= 0 && len != 1 && shp_ranked(x)) {
            int ax;
            if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)) ||
                (rc = shp_expect_dim(n, "input", x, ax, len, "the per-axis scale's length", err)))
                return rc;
        }
        if (shp_ranked(zp)) {
            bool same = zp->shape.rank == scale->shape.rank;
            for (int i = 0; same && i < zp->shape.rank; i++)
                same = zp->shape.dims[i] < 0 || scale->shape.dims[i] < 0 ||
                       zp->shape.dims[i] == scale->shape.dims[i];
            /* one value each, a scalar and a [1]: per tensor both (onnxruntime's quantizer
             * writes such pairs, and onnxruntime runs them) */
            if (!same && bd_shape_is_static(&zp->shape) && bd_shape_is_static(&scale->shape) &&
                bd_shape_numel(&zp->shape) == 1 && bd_shape_numel(&scale->shape) == 1)
                same = true;
            if (!same) {
                char bz[96], bs[96];
                return shp_fail(err, n, "zero point '%s' %s must have the scale's shape %s",
                                zp->name, shp_str(&zp->shape, bz, sizeof bz),
                                shp_str(&scale->shape, bs, sizeof bs));
            }
        }
    }
    if (!shp_ranked(x)) {
        shp_set_unknown(n->outputs[0], dtype);
        return 0;
    }
    shp_set(n->outputs[0], dtype, &x->shape);
    (void)g;
    return 0;
}

int shp_dynamic_quantize(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    (void)err;
    bd_value *x = shp_in(n, 0);
    bd_shape scalar = shp_dynamic(0);
    if (shp_ranked(x))
        shp_set(n->outputs[0], BD_DT_UINT8, &x->shape);
    else
        shp_set_unknown(n->outputs[0], BD_DT_UINT8);
    if (n->n_outputs > 1)
        shp_set(n->outputs[1], BD_DT_FLOAT, &scalar);
    if (n->n_outputs > 2)
        shp_set(n->outputs[2], BD_DT_UINT8, &scalar);
    return 0;
}

/* The integer and quantized forms of MatMul and Conv (MatMulInteger, QLinearMatMul,
 * ConvInteger, QLinearConv): the float op's rule over their data operands (A and B, X and W:
 * inputs 0 and 1, or 0 and 3 for the QLinear forms), the output INT32 or y_zero_point's dtype
 * (UINT8 when it is unknown). */
int shp_integer_op(bd_graph *g, bd_node *n, bd_error *err)
{
    bool conv = strstr(n->op_type, "Conv") != NULL, ql = !strncmp(n->op_type, "QLinear", 7);
    bd_value *data[2] = { shp_in(n, 0), shp_in(n, ql ? 3 : 1) }, *yz = ql ? shp_in(n, 7) : NULL;
    if (!data[1])
        return shp_fail(err, n, "input %d (%s) is required", ql ? 3 : 1, conv ? "W" : "B");
    bd_node view = *n;                     /* the same node, its data operands only */
    view.inputs = data;
    view.n_inputs = 2;
    view.n_post = 0;
    view.n_implicit = 0;
    int rc = conv ? shp_conv(g, &view, err) : shp_matmul(g, &view, err);
    if (rc)
        return rc;
    int dt = !ql ? BD_DT_INT32 : yz && yz->dtype != BD_DT_UNDEFINED ? yz->dtype : BD_DT_UINT8;
    n->outputs[0]->dtype = dt;
    return 0;
}

/* onnxruntime's quantized ops of domain com.microsoft (its QOperator format): QLinearAdd and
 * QLinearMul (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp) broadcast A and B;
 * QLinearGlobalAveragePool (X, x_scale, x_zp, y_scale, y_zp; channels_last) pools X; QGemm (A,
 * a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp; transA, transB) is Gemm's rule over A
 * and B, FLOAT without y_scale. A quantized output takes its zero point's dtype (else A's). */
int shp_ms_quantized(bd_graph *g, bd_node *n, bd_error *err)
{
    bool gap = !strcmp(n->op_type, "QLinearGlobalAveragePool"), gemm = !strcmp(n->op_type, "QGemm");
    bd_value *a = shp_in(n, 0), *b = gap ? NULL : shp_in(n, 3);
    bd_value *yz = shp_in(n, gap ? 4 : gemm ? 8 : 7), *ys = gemm ? shp_in(n, 7) : NULL;
    if (!a || (!gap && !b))
        return shp_fail(err, n, "inputs 0 and %d are required", gap ? 0 : 3);
    int dt = gemm && !ys ? BD_DT_FLOAT : yz && yz->dtype != BD_DT_UNDEFINED ? yz->dtype : a->dtype;
    bd_value *data[2] = { a, b };
    bd_node view = *n;                      /* the float op over the data operands */
    view.inputs = data;
    view.n_inputs = gap ? 1 : 2;
    view.n_post = 0;
    view.n_implicit = 0;
    int rc;
    if (gap) {
        if (bd_node_attr_int(n, "channels_last", 0) != 0) {
            if (!shp_ranked(a)) {
                shp_set_unknown(n->outputs[0], dt);
                return 0;
            }
            bd_shape s = a->shape;          /* [N, spatial..., C] -> [N, 1..., C] */
            for (int d = 1; d + 1 < s.rank; d++) {
                s.dims[d] = 1;
                s.sym[d] = NULL;
            }
            shp_set(n->outputs[0], dt, &s);
            return 0;
        }
        rc = shp_global_pool(g, &view, err);
    } else {
        rc = gemm ? shp_gemm(g, &view, err) : shp_binary(g, &view, err);
    }
    if (rc)
        return rc;
    n->outputs[0]->dtype = dt;
    return 0;
}
