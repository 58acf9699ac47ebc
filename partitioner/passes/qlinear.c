/* onnxruntime's QOperator format (and the ONNX model zoo's int8 models): QLinearConv and
 * QLinearMatMul, and com.microsoft's QLinearAdd, QLinearMul, QLinearGlobalAveragePool and
 * QGemm, whose inputs and outputs are the quantized integers themselves, written as
 * the QDQ form that defines them: a DequantizeLinear on the quantized activation, the float
 * Conv or MatMul on the weights dequantized here (and a Conv's INT32 bias as floats, B *
 * x_scale * w_scale), a QuantizeLinear on the result.
 *
 * Why: braid's kernels for these ops are scalar loops (backends/native), where the QDQ form
 * reaches oneDNN's int8 kernels: between two such ops the QuantizeLinear -> DequantizeLinear
 * pair becomes one FakeQuantize (qdq.c, the next pass), and the Conv or MatMul then reads a fake-quantized source with weights
 * on a per-channel grid (backends/dnnl/dnnl_int8.c). The result is ONNX's definition, the sum
 * scaled by x_scale * w_scale / y_scale, rounded half to even and saturated; where the sum is
 * taken in floats (the FP32 path) a value on a rounding tie may land one step away, as on any
 * QDQ model. Only per-tensor activation scales and zero points (constant scalars) and constant
 * weights are rewritten; anything else stays one node for the engines that run it whole. */
#include <stdio.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* Element I of constant V as a float or an int32 (a file's bytes: maybe unaligned). */
static float f32_at(const bd_value *v, int64_t i)
{
    float f;
    memcpy(&f, (const char *)v->data + (size_t)i * sizeof f, sizeof f);
    return f;
}

static int32_t i32_at(const bd_value *v, int64_t i)
{
    int32_t x;
    memcpy(&x, (const char *)v->data + (size_t)i * sizeof x, sizeof x);
    return x;
}

/* Is V a constant scalar of a quantized type (UINT8 or INT8), or absent (zero)? */
static bool zero_point_ok(const bd_value *v)
{
    return !v || (v->data && bd_shape_numel(&v->shape) == 1 && v->nbytes >= 1 &&
                  (v->dtype == BD_DT_UINT8 || v->dtype == BD_DT_INT8));
}

/* Is V a constant of one finite positive float per element (COUNT of them)? */
static bool scales_ok(const bd_value *v, int64_t count)
{
    if (!v || !v->data || v->dtype != BD_DT_FLOAT || bd_shape_numel(&v->shape) != count ||
        v->nbytes < (size_t)count * sizeof(float))
        return false;
    for (int64_t i = 0; i < count; i++) {
        float s = f32_at(v, i);
        if (!(s > 0.0f) || !(s <= 3.0e38f))
            return false;
    }
    return true;
}

/* Append node OP named BASE/PART (inputs IN, one output OUT) to G, with attribute AXIS when
 * >= -8. */
static int add(bd_graph *g, const char *base, const char *part, const char *op, bd_value **in,
               size_t n_in, bd_value *out, int64_t axis, bd_node **node, bd_error *err)
{
    char name[256];
    snprintf(name, sizeof name, "%s/%s", base, part);
    bd_node *n;
    int rc = bd_graph_add_node(g, name, op, "", in, n_in, &out, 1, &n, err);
    if (!rc && axis >= -8) {
        bd_attr a = { .name = "axis", .type = BD_ATTR_INT, .i = axis };
        rc = bd_node_add_attr(g, n, &a, err);
    }
    if (node)
        *node = n;
    return rc;
}

/* W's integers (INT8 or UINT8, less their zero points WZ) times their scales WS (NS of them:
 * one, or one per index of axis AXIS) as a new float constant: the DequantizeLinear of a
 * constant folded here, where the plan's folding has already run. NULL with ERR set on failure. */
static bd_value *dequantized(bd_graph *g, const bd_value *w, const bd_value *ws, const bd_value *wz,
                             int64_t ns, int axis, bd_error *err)
{
    int64_t n = bd_shape_numel(&w->shape), inner = 1;
    for (int d = axis + 1; d < w->shape.rank; d++)
        inner *= w->shape.dims[d];
    if ((w->dtype != BD_DT_INT8 && w->dtype != BD_DT_UINT8) || wz->dtype != w->dtype ||
        w->nbytes < (size_t)n || wz->nbytes < (size_t)bd_shape_numel(&wz->shape)) {
        bd_error_set(err, BD_EMODEL, "'%s': weights must be INT8 or UINT8 with a zero point of "
                     "their type", w->name);
        return NULL;
    }
    float *out;
    bd_value *v = bd_pass_new_const(g, w->name, "_f", BD_DT_FLOAT, &w->shape, sizeof(float),
                                    (void **)&out, err);
    if (!v)
        return NULL;
    int64_t nz = bd_shape_numel(&wz->shape);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = ns == 1 ? 0 : (i / inner) % ns, cz = nz == 1 ? 0 : c;
        int q = w->dtype == BD_DT_INT8 ? ((const int8_t *)w->data)[i] : ((const uint8_t *)w->data)[i];
        int z = w->dtype == BD_DT_INT8 ? ((const int8_t *)wz->data)[cz] : ((const uint8_t *)wz->data)[cz];
        out[i] = (float)(q - z) * f32_at(ws, c);
    }
    return v;
}

/* Are W (constant) and its zero point WZ integers of one quantized type, W whole? */
static bool weights_ok(const bd_value *w, const bd_value *wz)
{
    return w->data && (w->dtype == BD_DT_INT8 || w->dtype == BD_DT_UINT8) && wz && wz->data &&
           wz->dtype == w->dtype && bd_shape_numel(&w->shape) > 0 &&
           w->nbytes >= (size_t)bd_shape_numel(&w->shape) &&
           wz->nbytes >= (size_t)bd_shape_numel(&wz->shape);
}

/* Is B absent, or a constant INT32 bias of COUNT values? */
static bool bias_ok(const bd_value *b, int64_t count)
{
    return !b || (b->data && b->dtype == BD_DT_INT32 && bd_shape_numel(&b->shape) == count &&
                  b->nbytes >= (size_t)count * sizeof(int32_t));
}

/* INT32 bias B (COUNT values, bias_ok) on its grid, x_scale XS times w_scale WS (NWS of them:
 * one, or one per value) with zero point 0, as a new float constant; NULL for no B (*FAILED
 * false) or with ERR set (*FAILED true). */
static bd_value *bias_floats(bd_graph *g, const bd_value *b, const bd_value *xs, const bd_value *ws,
                             int64_t nws, int64_t count, bool *failed, bd_error *err)
{
    *failed = false;
    if (!b)
        return NULL;
    float *data;
    bd_shape s = { .rank = 1, .dims = { count } };
    bd_value *v = bd_pass_new_const(g, b->name, "_f", BD_DT_FLOAT, &s, sizeof(float), (void **)&data, err);
    if (!v) {
        *failed = true;
        return NULL;
    }
    for (int64_t i = 0; i < count; i++)
        data[i] = (float)i32_at(b, i) * (f32_at(xs, 0) * f32_at(ws, nws == 1 ? 0 : i));
    return v;
}

/* A float value shaped like V, named after it. */
static bd_value *float_like(bd_graph *g, const bd_value *v, bd_error *err)
{
    return bd_pass_new_value(g, v->name, "_f", BD_DT_FLOAT, &v->shape, err);
}

/* QLinearConv(x, xs, xz, w, ws, wz, ys, yz [, B]) rewritten; 1 if it was, 0 if it does not
 * qualify, < 0 on error. */
static int expand_conv(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = bd_node_input(n, 0), *xs = bd_node_input(n, 1), *xz = bd_node_input(n, 2);
    bd_value *w = bd_node_input(n, 3), *ws = bd_node_input(n, 4), *wz = bd_node_input(n, 5);
    bd_value *ys = bd_node_input(n, 6), *yz = bd_node_input(n, 7), *b = bd_node_input(n, 8);
    if (n->n_inputs < 8 || n->n_inputs > 9 || n->n_outputs != 1 || !x || !w || !w->data ||
        w->shape.rank < 3 || !bd_shape_is_static(&w->shape) || !bd_shape_is_static(&x->shape) ||
        !bd_shape_is_static(&n->outputs[0]->shape))
        return 0;
    if (!xs || !ws || !ys)
        return 0;
    int64_t m = w->shape.dims[0];
    int64_t nws = bd_shape_numel(&ws->shape);
    if (!scales_ok(xs, 1) || !scales_ok(ys, 1) || !(nws == 1 || nws == m) || !scales_ok(ws, nws) ||
        !zero_point_ok(xz) || !zero_point_ok(yz) || !weights_ok(w, wz) ||
        !(bd_shape_numel(&wz->shape) == 1 || bd_shape_numel(&wz->shape) == nws) || !bias_ok(b, m))
        return 0;
    bd_value *y = n->outputs[0], *xf, *wf, *yf, *bf = NULL;
    if (!(xf = float_like(g, x, err)) || !(yf = float_like(g, y, err)) ||
        !(wf = dequantized(g, w, ws, wz, nws, 0, err)))
        return -1;
    bool failed;
    if (!(bf = bias_floats(g, b, xs, ws, nws, m, &failed, err)) && failed)
        return -1;
    const char *name = n->name;
    bd_attr *attrs = n->attrs;
    size_t n_attrs = n->n_attrs;
    bd_graph_remove_node(g, n);
    bd_value *dqx[3] = { x, xs, xz }, *cv[3] = { xf, wf, bf }, *q[3] = { yf, ys, yz };
    bd_node *conv;
    int rc = add(g, name, "dequantize_x", "DequantizeLinear", dqx, xz ? 3 : 2, xf, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "conv", "Conv", cv, bf ? 3 : 2, yf, -9, &conv, err);
    for (size_t a = 0; !rc && a < n_attrs; a++)
        rc = bd_node_add_attr(g, conv, &attrs[a], err);
    if (!rc)
        rc = add(g, name, "quantize_y", "QuantizeLinear", q, yz ? 3 : 2, y, -9, NULL, err);
    return rc ? -1 : 1;
}

/* QLinearMatMul(a, as, az, b, bs, bz, ys, yz) rewritten, B a constant [K, N] with one scale
 * or one per column; 1 if it was, 0 if it does not qualify, < 0 on error. */
static int expand_matmul(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *a = bd_node_input(n, 0), *as = bd_node_input(n, 1), *az = bd_node_input(n, 2);
    bd_value *b = bd_node_input(n, 3), *bs = bd_node_input(n, 4), *bz = bd_node_input(n, 5);
    bd_value *ys = bd_node_input(n, 6), *yz = bd_node_input(n, 7);
    if (n->n_inputs != 8 || n->n_outputs != 1 || !a || !b || !b->data || b->shape.rank != 2 ||
        !bd_shape_is_static(&a->shape) || !bd_shape_is_static(&b->shape) ||
        !bd_shape_is_static(&n->outputs[0]->shape))
        return 0;
    if (!as || !bs || !ys)
        return 0;
    int64_t cols = b->shape.dims[1], nbs = bd_shape_numel(&bs->shape);
    if (!scales_ok(as, 1) || !scales_ok(ys, 1) || !(nbs == 1 || (nbs == cols && bs->shape.rank == 1)) ||
        !scales_ok(bs, nbs) || !zero_point_ok(az) || !zero_point_ok(yz) || !weights_ok(b, bz) ||
        bd_shape_numel(&bz->shape) != nbs)
        return 0;
    bd_value *y = n->outputs[0], *af, *bf, *yf;
    if (!(af = float_like(g, a, err)) || !(yf = float_like(g, y, err)) ||
        !(bf = dequantized(g, b, bs, bz, nbs, 1, err)))
        return -1;
    const char *name = n->name;
    bd_graph_remove_node(g, n);
    bd_value *dqa[3] = { a, as, az }, *mm[2] = { af, bf }, *q[3] = { yf, ys, yz };
    int rc = add(g, name, "dequantize_a", "DequantizeLinear", dqa, az ? 3 : 2, af, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "matmul", "MatMul", mm, 2, yf, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "quantize_y", "QuantizeLinear", q, yz ? 3 : 2, y, -9, NULL, err);
    return rc ? -1 : 1;
}

/* Is N com.microsoft's OP? */
static bool is_ms(const bd_node *n, const char *op)
{
    return n->domain && !strcmp(n->domain, "com.microsoft") && !strcmp(n->op_type, op);
}

/* V (scale S, zero point Z: per tensor, checked) as floats: a new constant when V is one,
 * else V's DequantizeLinear, named BASE/PART. NULL with ERR set on failure. */
static bd_value *operand(bd_graph *g, const char *base, const char *part, bd_value *v, bd_value *s,
                         bd_value *z, bd_error *err)
{
    if (v->data && z)
        return dequantized(g, v, s, z, 1, 0, err);
    bd_value *f = float_like(g, v, err), *in[3] = { v, s, z };
    if (!f || add(g, base, part, "DequantizeLinear", in, z ? 3 : 2, f, -9, NULL, err))
        return NULL;
    return f;
}

/* com.microsoft's QLinearAdd or QLinearMul (A, As, Az, B, Bs, Bz, Cs, Cz) rewritten as
 * DequantizeLinear, Add or Mul, QuantizeLinear; 1, 0 or < 0 as expand_conv. */
static int expand_ms_binary(bd_graph *g, bd_node *n, const char *op, bd_error *err)
{
    bd_value *a = bd_node_input(n, 0), *as = bd_node_input(n, 1), *az = bd_node_input(n, 2);
    bd_value *b = bd_node_input(n, 3), *bs = bd_node_input(n, 4), *bz = bd_node_input(n, 5);
    bd_value *ys = bd_node_input(n, 6), *yz = bd_node_input(n, 7);
    if (n->n_inputs < 7 || n->n_outputs != 1 || !a || !b || !scales_ok(as, 1) || !scales_ok(bs, 1) ||
        !scales_ok(ys, 1) || !zero_point_ok(az) || !zero_point_ok(bz) || !zero_point_ok(yz) ||
        (a->data && !weights_ok(a, az)) || (b->data && !weights_ok(b, bz)) ||
        !bd_shape_is_static(&a->shape) || !bd_shape_is_static(&b->shape) ||
        !bd_shape_is_static(&n->outputs[0]->shape))
        return 0;
    bd_value *y = n->outputs[0], *yf = float_like(g, y, err);
    if (!yf)
        return -1;
    const char *name = n->name;
    bd_graph_remove_node(g, n);
    bd_value *af = operand(g, name, "dequantize_a", a, as, az, err);
    bd_value *bf = af ? operand(g, name, "dequantize_b", b, bs, bz, err) : NULL;
    if (!bf)
        return -1;
    bd_value *ab[2] = { af, bf }, *q[3] = { yf, ys, yz };
    int rc = add(g, name, !strcmp(op, "Add") ? "add" : "mul", op, ab, 2, yf, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "quantize_y", "QuantizeLinear", q, yz ? 3 : 2, y, -9, NULL, err);
    return rc ? -1 : 1;
}

/* com.microsoft's QLinearGlobalAveragePool (X, xs, xz, ys, yz), channels first, rewritten as
 * DequantizeLinear, GlobalAveragePool, QuantizeLinear; 1, 0 or < 0 as expand_conv. */
static int expand_ms_gap(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = bd_node_input(n, 0), *xs = bd_node_input(n, 1), *xz = bd_node_input(n, 2);
    bd_value *ys = bd_node_input(n, 3), *yz = bd_node_input(n, 4);
    if (n->n_inputs < 4 || n->n_outputs != 1 || !x || bd_node_attr_int(n, "channels_last", 0) != 0 ||
        !scales_ok(xs, 1) || !scales_ok(ys, 1) || !zero_point_ok(xz) || !zero_point_ok(yz) ||
        !bd_shape_is_static(&x->shape) || !bd_shape_is_static(&n->outputs[0]->shape))
        return 0;
    bd_value *y = n->outputs[0], *xf = float_like(g, x, err), *yf = xf ? float_like(g, y, err) : NULL;
    if (!yf)
        return -1;
    const char *name = n->name;
    bd_graph_remove_node(g, n);
    bd_value *dq[3] = { x, xs, xz }, *q[3] = { yf, ys, yz };
    int rc = add(g, name, "dequantize_x", "DequantizeLinear", dq, xz ? 3 : 2, xf, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "pool", "GlobalAveragePool", &xf, 1, yf, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "quantize_y", "QuantizeLinear", q, yz ? 3 : 2, y, -9, NULL, err);
    return rc ? -1 : 1;
}

/* com.microsoft's QGemm (A, as, az, B, bs, bz [, C [, ys [, yz]]]; alpha, transA, transB), B
 * a constant 2-D with one scale or one per output column, rewritten as DequantizeLinear, Gemm
 * (C, INT32, as floats C * as * bs), and QuantizeLinear when ys is given (else Y is FLOAT). */
static int expand_qgemm(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *a = bd_node_input(n, 0), *as = bd_node_input(n, 1), *az = bd_node_input(n, 2);
    bd_value *b = bd_node_input(n, 3), *bs = bd_node_input(n, 4), *bz = bd_node_input(n, 5);
    bd_value *c = bd_node_input(n, 6), *ys = bd_node_input(n, 7), *yz = bd_node_input(n, 8);
    bool tb = bd_node_attr_int(n, "transB", 0) != 0;
    if (n->n_outputs != 1 || !a || !b || !bs || b->shape.rank != 2 || !bd_shape_is_static(&b->shape) ||
        !bd_shape_is_static(&a->shape) || !bd_shape_is_static(&n->outputs[0]->shape))
        return 0;
    int64_t cols = b->shape.dims[tb ? 0 : 1], nbs = bd_shape_numel(&bs->shape);
    if (!scales_ok(as, 1) || !(nbs == 1 || (nbs == cols && bs->shape.rank == 1)) || !scales_ok(bs, nbs) ||
        !zero_point_ok(az) || !weights_ok(b, bz) || bd_shape_numel(&bz->shape) != nbs ||
        (ys && (!scales_ok(ys, 1) || !zero_point_ok(yz))) || !bias_ok(c, cols))
        return 0;
    bd_value *y = n->outputs[0], *af, *bf, *cf = NULL, *yf = y;
    if (!(af = float_like(g, a, err)) || !(bf = dequantized(g, b, bs, bz, nbs, tb ? 0 : 1, err)) ||
        (ys && !(yf = float_like(g, y, err))))
        return -1;
    bool failed;
    if (!(cf = bias_floats(g, c, as, bs, nbs, cols, &failed, err)) && failed)
        return -1;
    const char *name = n->name;
    bd_attr keep[3];
    size_t n_keep = 0;
    for (size_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, "alpha") || !strcmp(n->attrs[i].name, "transA") ||
            !strcmp(n->attrs[i].name, "transB"))
            if (n_keep < 3)
                keep[n_keep++] = n->attrs[i];
    bd_graph_remove_node(g, n);
    bd_value *dq[3] = { a, as, az }, *gm[3] = { af, bf, cf }, *q[3] = { yf, ys, yz };
    bd_node *gemm;
    int rc = add(g, name, "dequantize_a", "DequantizeLinear", dq, az ? 3 : 2, af, -9, NULL, err);
    if (!rc)
        rc = add(g, name, "gemm", "Gemm", gm, cf ? 3 : 2, yf, -9, &gemm, err);
    for (size_t i = 0; !rc && i < n_keep; i++)
        rc = bd_node_add_attr(g, gemm, &keep[i], err);
    if (!rc && ys)
        rc = add(g, name, "quantize_y", "QuantizeLinear", q, yz ? 3 : 2, y, -9, NULL, err);
    return rc ? -1 : 1;
}

int bd_pass_qlinear(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    (void)target;            /* the rewrite is plain ONNX: every engine runs its nodes */
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *n = bd_graph_node(g, i);
        if (!bd_fusable(n))
            continue;
        int rc = bd_is_op(n, "QLinearConv") ? expand_conv(g, n, err)
               : bd_is_op(n, "QLinearMatMul") ? expand_matmul(g, n, err)
               : is_ms(n, "QLinearAdd") ? expand_ms_binary(g, n, "Add", err)
               : is_ms(n, "QLinearMul") ? expand_ms_binary(g, n, "Mul", err)
               : is_ms(n, "QLinearGlobalAveragePool") ? expand_ms_gap(g, n, err)
               : is_ms(n, "QGemm") ? expand_qgemm(g, n, err) : 0;
        if (rc < 0)
            return err && err->code ? err->code : BD_ENOMEM;
        if (rc == 0)
            continue;
        rewrites++;
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
        i = (size_t)-1;      /* node order changed: rescan */
    }
    return rewrites;
}
