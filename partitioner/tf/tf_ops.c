/* TensorFlow ops mapped to ONNX-semantic IR nodes (the table at the end).
 *
 * TensorFlow's layouts are kept: NHWC tensors get data_format "NHWC", Conv2D filters
 * filter_format "HWIO", depthwise filters "HWCM", so no Transpose is inserted around every
 * op and weights stay where the file has them. Fused TensorFlow ops (_FusedConv2D,
 * _FusedMatMul) are expanded into plain Conv/Gemm + Add/BatchNormalization + activation
 * nodes for braid's own passes to fuse again. A mapper whose preconditions fail (an operand
 * that should be constant is computed, an unknown fused op, ...) returns 1 before emitting
 * anything and the node goes to the TensorFlow fallback instead. */
#include "partitioner/tf/tf_ops.h"
#include "partitioner/tf/tf_mapkit.h"

#include <string.h>

#define DECLINE 1
#define MAX_CONST_INTS 16

/* ---- reading TensorFlow attributes and constant operands ------------------------------ */

static bool attr_s_is(const tf_nodeview *v, const char *key, const char *want, const char *dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    if (!a || a->kind != TF_ATTR_S)
        return dflt && strcmp(dflt, want) == 0;
    return a->s.n == strlen(want) && memcmp(a->s.p, want, a->s.n) == 0;
}

static bool attr_b(const tf_nodeview *v, const char *key, bool dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_B ? a->b : dflt;
}

static float attr_f(const tf_nodeview *v, const char *key, float dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_F ? a->f : dflt;
}

/* list(int) attr KEY, or NULL (N = 0) when absent. */
static const int64_t *attr_ints(const tf_nodeview *v, const char *key, size_t *n)
{
    const tf_attr *a = tf_view_attr(v, key);
    *n = a && a->kind == TF_ATTR_LIST ? a->list.n_i : 0;
    return *n ? a->list.i : NULL;
}

/* The integers of constant operand V into OUT (room for MAX_CONST_INTS); false when V is
 * computed at run time or holds more. */
static bool const_ints(const bd_value *v, int64_t *out, size_t *n)
{
    return tf_const_ints(v, out, MAX_CONST_INTS, n);
}

/* The one integer of constant operand V: false unless V holds exactly one. */
static bool const_int(const bd_value *v, int64_t *out)
{
    size_t n;
    return tf_const_ints(v, out, 1, &n) && n == 1;
}

/* ---- writing IR attributes (payloads copied into the graph's pool) -------------------- */

static int set_int(tf_mapctx *m, bd_node *n, const char *name, int64_t i, bd_error *err)
{
    bd_attr a = { .name = name, .type = BD_ATTR_INT, .i = i };
    return bd_node_add_attr(m->g, n, &a, err);
}

static int set_float(tf_mapctx *m, bd_node *n, const char *name, float f, bd_error *err)
{
    bd_attr a = { .name = name, .type = BD_ATTR_FLOAT, .f = f };
    return bd_node_add_attr(m->g, n, &a, err);
}

static int set_str(tf_mapctx *m, bd_node *n, const char *name, const char *s, bd_error *err)
{
    bd_attr a = { .name = name, .type = BD_ATTR_STRING, .s = s, .s_len = strlen(s) };
    return bd_node_add_attr(m->g, n, &a, err);
}

static int set_ints(tf_mapctx *m, bd_node *n, const char *name, const int64_t *v, size_t k,
                    bd_error *err)
{
    int64_t *p = bd_graph_alloc(m->g, k ? k * sizeof *p : 1);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
    memcpy(p, v, k * sizeof *p);
    bd_attr a = { .name = name, .type = BD_ATTR_INTS, .ints = p, .n = k };
    return bd_node_add_attr(m->g, n, &a, err);
}

static bd_value *const_i64(tf_mapctx *m, const char *suffix, const int64_t *v, size_t k,
                           bd_error *err)
{
    bd_shape s = { .rank = 1, .dims = { (int64_t)k } };
    return tf_emit_const(m, suffix, BD_DT_INT64, &s, v, k * sizeof *v, err);
}

static bd_value *const_f32(tf_mapctx *m, const char *suffix, float f, bd_error *err)
{
    bd_shape s = { .rank = 0 };
    return tf_emit_const(m, suffix, BD_DT_FLOAT, &s, &f, sizeof f, err);
}

/* ---- layout -------------------------------------------------------------------------- */

/* data_format: NHWC (TensorFlow's default) or NCHW; anything else is declined. */
static int layout(const tf_nodeview *v, bool *nhwc)
{
    const tf_attr *a = tf_view_attr(v, "data_format");
    if (!a || a->kind != TF_ATTR_S || attr_s_is(v, "data_format", "NHWC", NULL)) {
        *nhwc = true;
        return 0;
    }
    *nhwc = false;
    return attr_s_is(v, "data_format", "NCHW", NULL) ? 0 : DECLINE;
}

/* The two spatial entries of a 4-entry per-dimension list (strides, dilations, ksize). */
static int spatial2(const tf_nodeview *v, const char *key, bool nhwc, int64_t out[2])
{
    size_t n;
    const int64_t *l = attr_ints(v, key, &n);
    out[0] = out[1] = 1;
    if (!l)
        return 0;
    if (n != 4)
        return DECLINE;
    out[0] = l[nhwc ? 1 : 2];
    out[1] = l[nhwc ? 2 : 3];
    return out[0] > 0 && out[1] > 0 ? 0 : DECLINE;
}

typedef struct window {
    bool        nhwc;
    int64_t     strides[2], dilations[2];
    const char *auto_pad;      /* NULL: explicit pads */
    int64_t     pads[4];       /* [top, left, bottom, right] */
} window;

static int window_params(const tf_nodeview *v, window *w)
{
    memset(w, 0, sizeof *w);
    if (layout(v, &w->nhwc) || spatial2(v, "strides", w->nhwc, w->strides) ||
        spatial2(v, "dilations", w->nhwc, w->dilations))
        return DECLINE;
    if (attr_s_is(v, "padding", "SAME", NULL)) {
        w->auto_pad = "SAME_UPPER";          /* TensorFlow puts the odd pixel at the end */
    } else if (attr_s_is(v, "padding", "VALID", NULL)) {
        w->auto_pad = "VALID";
    } else if (attr_s_is(v, "padding", "EXPLICIT", NULL)) {
        size_t n;
        const int64_t *p = attr_ints(v, "explicit_paddings", &n);
        if (!p || n != 8)
            return DECLINE;
        int h = w->nhwc ? 2 : 4, wd = w->nhwc ? 4 : 6;   /* (begin, end) pairs per dim */
        w->pads[0] = p[h];
        w->pads[1] = p[wd];
        w->pads[2] = p[h + 1];
        w->pads[3] = p[wd + 1];
    } else {
        return DECLINE;
    }
    return 0;
}

static int set_window(tf_mapctx *m, bd_node *n, const window *w, bool dilations, bd_error *err)
{
    int rc = 0;
    if (w->nhwc)
        rc = set_str(m, n, "data_format", "NHWC", err);
    if (rc == 0)
        rc = set_ints(m, n, "strides", w->strides, 2, err);
    if (rc == 0 && dilations)
        rc = set_ints(m, n, "dilations", w->dilations, 2, err);
    if (rc == 0)
        rc = w->auto_pad ? set_str(m, n, "auto_pad", w->auto_pad, err)
                         : set_ints(m, n, "pads", w->pads, 4, err);
    return rc;
}

/* ---- activations ----------------------------------------------------------------------- */

static bool is_activation(const char *op)
{
    static const char *ops[] = { "Relu", "Relu6", "Elu", "LeakyRelu", "Sigmoid", "Tanh" };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

/* OUT = activation OP (a TensorFlow name accepted by is_activation) of IN. */
static int emit_activation(tf_mapctx *m, const char *op, const char *suffix, bd_value *in,
                           bd_value *out, bd_error *err)
{
    bd_node *n = NULL;
    int rc;
    if (strcmp(op, "Relu6") == 0) {
        bd_value *lo = const_f32(m, "clip_min", 0.0f, err);
        bd_value *hi = lo ? const_f32(m, "clip_max", 6.0f, err) : NULL;
        if (!hi)
            return err ? err->code : BD_ENOMEM;
        bd_value *ins[3] = { in, lo, hi };
        return tf_emit_node(m, suffix, "Clip", ins, 3, out, &n, err);
    }
    if (strcmp(op, "Elu") == 0) {
        if ((rc = tf_emit_node(m, suffix, "Elu", &in, 1, out, &n, err)))
            return rc;
        return set_float(m, n, "alpha", 1.0f, err);
    }
    if (strcmp(op, "LeakyRelu") == 0) {
        float alpha = attr_f(m->v, "leakyrelu_alpha", attr_f(m->v, "alpha", 0.2f));
        if ((rc = tf_emit_node(m, suffix, "LeakyRelu", &in, 1, out, &n, err)))
            return rc;
        return set_float(m, n, "alpha", alpha, err);
    }
    return tf_emit_node(m, suffix, op, &in, 1, out, &n, err);   /* Relu, Sigmoid, Tanh */
}

/* ---- fused epilogues (_FusedConv2D, _FusedMatMul) -------------------------------------- */

typedef struct epilogue {
    const tf_bytes *ops;
    size_t          n_ops;
    size_t          first_arg;   /* index of the first extra input */
} epilogue;

/* Check the fused_ops list against what is mapped and the number of extra inputs. */
static int epilogue_check(tf_mapctx *m, size_t first_arg, bool allow_bn, epilogue *e)
{
    const tf_attr *a = tf_view_attr(m->v, "fused_ops");
    e->ops = a && a->kind == TF_ATTR_LIST ? a->list.s : NULL;
    e->n_ops = a && a->kind == TF_ATTR_LIST ? a->list.n_s : 0;
    e->first_arg = first_arg;
    size_t args = 0;
    char op[32];
    for (size_t i = 0; i < e->n_ops; i++) {
        if (e->ops[i].n >= sizeof op)
            return DECLINE;
        memcpy(op, e->ops[i].p, e->ops[i].n);
        op[e->ops[i].n] = '\0';
        if (strcmp(op, "BiasAdd") == 0 && i == 0)
            args += 1;
        else if (strcmp(op, "FusedBatchNorm") == 0 && i == 0 && allow_bn)
            args += 4;
        else if (strcmp(op, "Prelu") == 0 && i == e->n_ops - 1)
            args += 1;
        else if (!is_activation(op) || i != e->n_ops - 1)
            return DECLINE;
    }
    return first_arg + args == m->n_in ? 0 : DECLINE;
}

/* Apply the epilogue to CUR (the conv/gemm result, NHWC when NHWC) ending in m->out. */
static int epilogue_emit(tf_mapctx *m, const epilogue *e, bd_value *cur, bool nhwc, bd_error *err)
{
    size_t arg = e->first_arg;
    char op[32];
    for (size_t i = 0; i < e->n_ops; i++) {
        memcpy(op, e->ops[i].p, e->ops[i].n);
        op[e->ops[i].n] = '\0';
        bool last = i == e->n_ops - 1;
        bd_value *next = last ? m->out : tf_emit_temp(m, op, err);
        if (!next)
            return err ? err->code : BD_ENOMEM;
        bd_node *n = NULL;
        int rc;
        if (strcmp(op, "BiasAdd") == 0) {
            bd_value *ins[2] = { cur, m->in[arg++] };
            rc = tf_emit_node(m, "bias", "Add", ins, 2, next, &n, err);
        } else if (strcmp(op, "FusedBatchNorm") == 0) {
            bd_value *ins[5] = { cur, m->in[arg], m->in[arg + 1], m->in[arg + 2], m->in[arg + 3] };
            arg += 4;
            rc = tf_emit_node(m, "batchnorm", "BatchNormalization", ins, 5, next, &n, err);
            if (rc == 0)
                rc = set_float(m, n, "epsilon", attr_f(m->v, "epsilon", 1e-4f), err);
            if (rc == 0 && nhwc)
                rc = set_str(m, n, "data_format", "NHWC", err);
        } else if (strcmp(op, "Prelu") == 0) {
            bd_value *ins[2] = { cur, m->in[arg++] };
            rc = tf_emit_node(m, "prelu", "PRelu", ins, 2, next, &n, err);
        } else {
            rc = emit_activation(m, op, "act", cur, next, err);
        }
        if (rc)
            return rc;
        cur = next;
    }
    return 0;
}

/* ---- convolutions ------------------------------------------------------------------------ */

static int map_conv_common(tf_mapctx *m, bool depthwise, bool fused, bd_error *err)
{
    if (m->n_in < 2)
        return DECLINE;
    window w;
    if (window_params(m->v, &w))
        return DECLINE;
    epilogue e = { 0 };
    if (fused && epilogue_check(m, 2, true, &e))
        return DECLINE;
    if (!fused && m->n_in != 2)
        return DECLINE;
    const bd_value *f = m->in[1];
    bool fknown = f->shape.rank == 4 && bd_shape_is_static(&f->shape);
    if (f->shape.rank >= 0 && f->shape.rank != 4)
        return DECLINE;
    int64_t group = 1;
    if (depthwise) {
        if (!fknown)
            return DECLINE;                 /* group = C comes from the filter */
        group = f->shape.dims[2];
    } else if (fknown) {
        /* A Conv2D whose input has k times the filter's in-channels is a grouped conv. */
        const bd_value *x = m->in[0];
        int c_axis = w.nhwc ? 3 : 1;
        if (x->shape.rank == 4 && x->shape.dims[c_axis] > 0 && f->shape.dims[2] > 0) {
            if (x->shape.dims[c_axis] % f->shape.dims[2])
                return DECLINE;
            group = x->shape.dims[c_axis] / f->shape.dims[2];
        }
    }

    bd_value *y = e.n_ops ? tf_emit_temp(m, "conv", err) : m->out;
    if (!y)
        return err ? err->code : BD_ENOMEM;
    bd_value *ins[2] = { m->in[0], m->in[1] };
    bd_node *n = NULL;
    int rc = tf_emit_node(m, e.n_ops ? "conv" : NULL, "Conv", ins, 2, y, &n, err);
    if (rc == 0)
        rc = set_window(m, n, &w, true, err);
    if (rc == 0)
        rc = set_str(m, n, "filter_format", depthwise ? "HWCM" : "HWIO", err);
    if (rc == 0 && fknown)
        rc = set_ints(m, n, "kernel_shape", f->shape.dims, 2, err);
    if (rc == 0)
        rc = set_int(m, n, "group", group, err);
    if (rc == 0 && e.n_ops)
        rc = epilogue_emit(m, &e, y, w.nhwc, err);
    return rc;
}

static int map_conv2d(tf_mapctx *m, bd_error *err)          { return map_conv_common(m, false, false, err); }
static int map_depthwise(tf_mapctx *m, bd_error *err)       { return map_conv_common(m, true, false, err); }
static int map_fused_conv2d(tf_mapctx *m, bd_error *err)    { return map_conv_common(m, false, true, err); }
static int map_fused_depthwise(tf_mapctx *m, bd_error *err) { return map_conv_common(m, true, true, err); }

/* ---- matrix products --------------------------------------------------------------------- */

static int map_matmul_common(tf_mapctx *m, bool fused, bd_error *err)
{
    if (m->n_in < 2)
        return DECLINE;
    epilogue e = { 0 };
    if (fused && epilogue_check(m, 2, false, &e))
        return DECLINE;
    if (!fused && m->n_in != 2)
        return DECLINE;
    bd_value *y = e.n_ops ? tf_emit_temp(m, "gemm", err) : m->out;
    if (!y)
        return err ? err->code : BD_ENOMEM;
    bd_value *ins[2] = { m->in[0], m->in[1] };
    bd_node *n = NULL;
    int rc = tf_emit_node(m, e.n_ops ? "gemm" : NULL, "Gemm", ins, 2, y, &n, err);
    if (rc == 0 && attr_b(m->v, "transpose_a", false))
        rc = set_int(m, n, "transA", 1, err);
    if (rc == 0 && attr_b(m->v, "transpose_b", false))
        rc = set_int(m, n, "transB", 1, err);
    if (rc == 0 && e.n_ops)
        rc = epilogue_emit(m, &e, y, false, err);
    return rc;
}

/* Integer MatMul (TensorFlow graphs use it for index arithmetic, e.g. a "repeat" as x @ ones):
 * no engine has an integer GEMM, so it is the exact broadcast form
 * ReduceSum(a[M, K, 1] * b[1, K, N], axis 1), transposes applied first. */
static int map_int_matmul(tf_mapctx *m, bd_error *err)
{
    bd_value *ab[2] = { m->in[0], m->in[1] };
    static const char *tkeys[2] = { "transpose_a", "transpose_b" };
    static const int64_t swap[2] = { 1, 0 };
    for (int k = 0; k < 2; k++) {
        if (!attr_b(m->v, tkeys[k], false))
            continue;
        bd_node *n = NULL;
        bd_value *t = tf_emit_temp(m, tkeys[k], err);
        if (!t || tf_emit_node(m, tkeys[k], "Transpose", &ab[k], 1, t, &n, err) ||
            set_ints(m, n, "perm", swap, 2, err))
            return err->code;
        ab[k] = t;
    }
    static const int64_t last = -1, first = 0, mid = 1;
    bd_value *ax_a = const_i64(m, "axis_a", &last, 1, err);
    bd_value *ax_b = ax_a ? const_i64(m, "axis_b", &first, 1, err) : NULL;
    bd_value *ax_k = ax_b ? const_i64(m, "axis_k", &mid, 1, err) : NULL;
    bd_value *a3 = ax_k ? tf_emit_temp(m, "a3", err) : NULL;
    bd_value *b3 = a3 ? tf_emit_temp(m, "b3", err) : NULL;
    bd_value *prod = b3 ? tf_emit_temp(m, "products", err) : NULL;
    if (!prod)
        return err ? err->code : BD_ENOMEM;
    bd_node *n = NULL;
    bd_value *ua[2] = { ab[0], ax_a }, *ub[2] = { ab[1], ax_b }, *mul[2] = { a3, b3 }, *red[2] = { prod, ax_k };
    int rc = tf_emit_node(m, "a3", "Unsqueeze", ua, 2, a3, &n, err);
    if (rc == 0)
        rc = tf_emit_node(m, "b3", "Unsqueeze", ub, 2, b3, &n, err);
    if (rc == 0)
        rc = tf_emit_node(m, "products", "Mul", mul, 2, prod, &n, err);
    if (rc == 0)
        rc = tf_emit_node(m, NULL, "ReduceSum", red, 2, m->out, &n, err);
    return rc ? rc : set_int(m, n, "keepdims", 0, err);
}

static int map_matmul(tf_mapctx *m, bd_error *err)
{
    const tf_attr *t = tf_view_attr(m->v, "T");
    if (t && t->kind == TF_ATTR_TYPE && (t->type == TF_DT_INT32 || t->type == TF_DT_INT64))
        return m->n_in == 2 ? map_int_matmul(m, err) : DECLINE;
    if (t && t->kind == TF_ATTR_TYPE && t->type != TF_DT_FLOAT)
        return DECLINE;
    return map_matmul_common(m, false, err);
}
static int map_fused_matmul(tf_mapctx *m, bd_error *err) { return map_matmul_common(m, true, err); }

static int map_batch_matmul(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return DECLINE;
    const tf_attr *tout = tf_view_attr(m->v, "Tout");
    if (tout && tout->kind == TF_ATTR_TYPE && tout->type != TF_DT_FLOAT)
        return DECLINE;
    bool adj[2] = { attr_b(m->v, "adj_x", false), attr_b(m->v, "adj_y", false) };
    for (int k = 0; k < 2; k++)
        if (adj[k] && m->in[k]->shape.rank >= 0 && m->in[k]->shape.rank < 2)
            return DECLINE;
    if ((adj[0] && m->in[0]->shape.rank < 0) || (adj[1] && m->in[1]->shape.rank < 0)) {
        /* The Transpose's perm needs the operand's rank, unknown until shape inference: an
         * Einsum over the batch dims says the same without it. */
        static const char *const eqs[3] = { "...ji,...jk->...ik", "...ij,...kj->...ik",
                                            "...ji,...kj->...ik" };
        const char *eq = eqs[adj[0] && adj[1] ? 2 : adj[1] ? 1 : 0];
        bd_node *n = NULL;
        int rc = tf_emit_node(m, NULL, "Einsum", m->in, 2, m->out, &n, err);
        return rc ? rc : set_str(m, n, "equation", eq, err);
    }
    bd_value *ins[2] = { m->in[0], m->in[1] };
    static const char *names[2] = { "adj_x", "adj_y" };
    for (int k = 0; k < 2; k++) {
        if (!adj[k])
            continue;
        int r = m->in[k]->shape.rank;
        int64_t perm[BD_MAX_RANK];
        for (int i = 0; i < r; i++)
            perm[i] = i;
        perm[r - 2] = r - 1;
        perm[r - 1] = r - 2;
        bd_value *t = tf_emit_temp(m, names[k], err);
        bd_node *n = NULL;
        int rc = t ? tf_emit_node(m, names[k], "Transpose", &ins[k], 1, t, &n, err)
                   : (err ? err->code : BD_ENOMEM);
        if (rc == 0)
            rc = set_ints(m, n, "perm", perm, (size_t)r, err);
        if (rc)
            return rc;
        ins[k] = t;
    }
    bd_node *n = NULL;
    return tf_emit_node(m, NULL, "MatMul", ins, 2, m->out, &n, err);
}

/* ---- element-wise ------------------------------------------------------------------------ */

static int map_binary_as(tf_mapctx *m, const char *op, bd_error *err)
{
    if (m->n_in != 2)
        return DECLINE;
    bd_node *n = NULL;
    return tf_emit_node(m, NULL, op, m->in, 2, m->out, &n, err);
}

static int map_add(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "Add", err); }
static int map_sub(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "Sub", err); }
static int map_mul(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "Mul", err); }
static int map_div(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "Div", err); }
static int map_max(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "Max", err); }
static int map_min(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "Min", err); }
static int map_prelu(tf_mapctx *m, bd_error *err) { return map_binary_as(m, "PRelu", err); }

static int map_activation(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return DECLINE;
    return emit_activation(m, m->v->op, NULL, m->in[0], m->out, err);
}

static int map_bias_add(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return DECLINE;
    bool nhwc;
    if (layout(m->v, &nhwc))
        return DECLINE;
    bd_value *ins[2] = { m->in[0], m->in[1] };
    if (!nhwc) {
        /* NCHW: view the constant bias [C] as [C,1,...,1] (same bytes, no copy). */
        const bd_value *b = m->in[1];
        int r = m->in[0]->shape.rank;
        if (!b->data || b->shape.rank != 1 || r < 2)
            return DECLINE;
        bd_shape s = { .rank = r - 1 };
        for (int i = 0; i < r - 1; i++)
            s.dims[i] = i == 0 ? b->shape.dims[0] : 1;
        bd_value *view = tf_emit_temp(m, "bias_nchw", err);
        if (!view)
            return err ? err->code : BD_ENOMEM;
        view->dtype = b->dtype;
        view->shape = s;
        view->data = b->data;
        view->nbytes = b->nbytes;
        ins[1] = view;
    }
    bd_node *n = NULL;
    return tf_emit_node(m, NULL, "Add", ins, 2, m->out, &n, err);
}

static int map_softmax(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return DECLINE;
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Softmax", m->in, 1, m->out, &n, err);
    return rc ? rc : set_int(m, n, "axis", -1, err);
}

/* ---- normalization and pooling ----------------------------------------------------------- */

static int map_batchnorm(tf_mapctx *m, bd_error *err)
{
    bool nhwc;
    if (m->n_in != 5 || attr_b(m->v, "is_training", true) || layout(m->v, &nhwc))
        return DECLINE;
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "BatchNormalization", m->in, 5, m->out, &n, err);
    if (rc == 0)
        rc = set_float(m, n, "epsilon", attr_f(m->v, "epsilon", 1e-4f), err);
    if (rc == 0 && nhwc)
        rc = set_str(m, n, "data_format", "NHWC", err);
    return rc;
}

static int map_pool(tf_mapctx *m, const char *op, bd_error *err)
{
    window w;
    int64_t k[2];
    if (m->n_in != 1 || window_params(m->v, &w) || spatial2(m->v, "ksize", w.nhwc, k))
        return DECLINE;
    size_t nk;
    if (!attr_ints(m->v, "ksize", &nk))
        return DECLINE;
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, op, m->in, 1, m->out, &n, err);
    if (rc == 0)
        rc = set_ints(m, n, "kernel_shape", k, 2, err);
    if (rc == 0)
        rc = set_window(m, n, &w, false, err);
    if (rc == 0 && strcmp(op, "AveragePool") == 0)
        rc = set_int(m, n, "count_include_pad", 0, err);   /* TensorFlow excludes padding */
    return rc;
}

static int map_maxpool(tf_mapctx *m, bd_error *err) { return map_pool(m, "MaxPool", err); }
static int map_avgpool(tf_mapctx *m, bd_error *err) { return map_pool(m, "AveragePool", err); }

/* ---- tensor manipulation ----------------------------------------------------------------- */

static int map_pad(tf_mapctx *m, bd_error *err)
{
    bool v2 = strcmp(m->v->op, "PadV2") == 0;
    int64_t p[MAX_CONST_INTS];
    size_t np;
    if (m->n_in != (v2 ? 3u : 2u) || !const_ints(m->in[1], p, &np) || np % 2 ||
        np / 2 > BD_MAX_RANK)
        return DECLINE;
    const bd_value *cv = v2 ? m->in[2] : NULL;
    if (cv && (!cv->data || cv->dtype != BD_DT_FLOAT || cv->nbytes != sizeof(float)))
        return DECLINE;
    size_t r = np / 2;
    int64_t pads[MAX_CONST_INTS];
    for (size_t i = 0; i < r; i++) {      /* TensorFlow [[b0,e0],[b1,e1]..] -> ONNX [b..., e...] */
        pads[i] = p[2 * i];
        pads[r + i] = p[2 * i + 1];
    }
    bd_value *pv = const_i64(m, "pads", pads, np, err);
    if (!pv)
        return err ? err->code : BD_ENOMEM;
    bd_value *ins[3] = { m->in[0], pv, v2 ? m->in[2] : NULL };
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Pad", ins, v2 ? 3 : 2, m->out, &n, err);
    return rc ? rc : set_str(m, n, "mode", "constant", err);
}

static int map_concat(tf_mapctx *m, bd_error *err)
{
    bool v2 = strcmp(m->v->op, "ConcatV2") == 0;     /* Concat has the axis first */
    int64_t axis;
    if (m->n_in < 2 || !const_int(m->in[v2 ? m->n_in - 1 : 0], &axis))
        return DECLINE;
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Concat", m->in + (v2 ? 0 : 1), m->n_in - 1, m->out, &n, err);
    return rc ? rc : set_int(m, n, "axis", axis, err);
}

static int map_reshape(tf_mapctx *m, bd_error *err)
{
    int64_t s[MAX_CONST_INTS];
    size_t ns;
    if (m->n_in != 2)
        return DECLINE;
    bd_value *sv;
    bool zero = false;
    if (const_ints(m->in[1], s, &ns)) {
        if (ns > BD_MAX_RANK)
            return DECLINE;
        for (size_t i = 0; i < ns; i++)
            zero |= s[i] == 0;
        sv = const_i64(m, "shape", s, ns, err);
    } else {
        /* A shape computed from other shapes (Shape -> StridedSlice -> Pack): shape inference
         * folds the chain when the input shapes are static. */
        const tf_attr *tshape = tf_view_attr(m->v, "Tshape");
        if (tshape && (tshape->kind != TF_ATTR_TYPE ||
                       (tshape->type != TF_DT_INT32 && tshape->type != TF_DT_INT64)))
            return DECLINE;
        zero = true;
        sv = tf_emit_temp(m, "shape", err);
        bd_node *c = NULL;
        if (sv && (tf_emit_node(m, "shape", "Cast", &m->in[1], 1, sv, &c, err) ||
                   set_int(m, c, "to", BD_DT_INT64, err)))
            return err->code;
    }
    if (!sv)
        return err ? err->code : BD_ENOMEM;
    bd_value *ins[2] = { m->in[0], sv };
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Reshape", ins, 2, m->out, &n, err);
    if (rc == 0 && zero)          /* a TensorFlow 0 is a zero-size dim, not "copy the input's" */
        rc = set_int(m, n, "allowzero", 1, err);
    return rc;
}

static int map_squeeze(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return DECLINE;
    size_t na;
    const int64_t *axes = attr_ints(m->v, "squeeze_dims", &na);
    if (!axes)
        axes = attr_ints(m->v, "axis", &na);
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Squeeze", m->in, 1, m->out, &n, err);
    if (rc == 0 && na)
        rc = set_ints(m, n, "axes", axes, na, err);
    return rc;
}

static int map_expand_dims(tf_mapctx *m, bd_error *err)
{
    int64_t axis;
    if (m->n_in != 2 || !const_int(m->in[1], &axis))
        return DECLINE;
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Unsqueeze", m->in, 1, m->out, &n, err);
    return rc ? rc : set_ints(m, n, "axes", &axis, 1, err);
}

static int map_transpose(tf_mapctx *m, bd_error *err)
{
    int64_t perm[MAX_CONST_INTS];
    size_t np;
    if (m->n_in != 2 || !const_ints(m->in[1], perm, &np) || np > BD_MAX_RANK)
        return DECLINE;
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Transpose", m->in, 1, m->out, &n, err);
    return rc ? rc : set_ints(m, n, "perm", perm, np, err);
}

static int map_resize(tf_mapctx *m, bd_error *err)
{
    bool nearest = strcmp(m->v->op, "ResizeNearestNeighbor") == 0;
    int64_t size[MAX_CONST_INTS];
    size_t ns;
    if (m->n_in != 2 || m->in[1]->shape.rank > 1 ||
        (m->in[1]->data && (!const_ints(m->in[1], size, &ns) || ns != 2)))
        return DECLINE;
    if (m->in[0]->shape.rank >= 0 && m->in[0]->shape.rank != 4)
        return DECLINE;
    bool computed = !m->in[1]->data;     /* Shape -> StridedSlice -> Mul: folded by inference */
    bool align = attr_b(m->v, "align_corners", false);
    bool half = attr_b(m->v, "half_pixel_centers", false);
    const char *ctm = align ? "align_corners"
                    : half ? (nearest ? "tf_half_pixel_for_nn" : "half_pixel") : "asymmetric";
    bd_value *sv = NULL;
    if (computed) {
        bd_node *c = NULL;
        sv = tf_emit_temp(m, "sizes", err);
        if (sv && (tf_emit_node(m, "sizes", "Cast", &m->in[1], 1, sv, &c, err) ||
                   set_int(m, c, "to", BD_DT_INT64, err)))
            return err->code;
    } else {
        sv = const_i64(m, "sizes", size, 2, err);
    }
    if (!sv)
        return err ? err->code : BD_ENOMEM;
    /* sizes holds the spatial dims only ([H, W], TensorFlow's size input), which braid's
     * shape rule and oneDNN builder read under data_format NHWC. */
    bd_value *ins[4] = { m->in[0], NULL, NULL, sv };
    bd_node *n = NULL;
    int rc = tf_emit_node(m, NULL, "Resize", ins, 4, m->out, &n, err);
    if (rc == 0)
        rc = set_str(m, n, "mode", nearest ? "nearest" : "linear", err);
    if (rc == 0)
        rc = set_str(m, n, "coordinate_transformation_mode", ctm, err);
    if (rc == 0 && nearest)
        rc = set_str(m, n, "nearest_mode", align ? "round_prefer_ceil" : "floor", err);
    if (rc == 0)
        rc = set_str(m, n, "data_format", "NHWC", err);
    return rc;
}

/* ---- the table --------------------------------------------------------------------------- */

#define ANY TF_MAP_ANY_T
static const tf_op_entry table[] = {
    { "Conv2D", map_conv2d, 0 },                       { "DepthwiseConv2dNative", map_depthwise, 0 },
    { "_FusedConv2D", map_fused_conv2d, 0 },           { "FusedDepthwiseConv2dNative", map_fused_depthwise, 0 },
    { "_FusedDepthwiseConv2dNative", map_fused_depthwise, 0 },
    { "MatMul", map_matmul, ANY },                       { "_FusedMatMul", map_fused_matmul, 0 },
    { "BatchMatMul", map_batch_matmul, 0 },            { "BatchMatMulV2", map_batch_matmul, 0 },
    { "BatchMatMulV3", map_batch_matmul, 0 },
    { "BiasAdd", map_bias_add, 0 },                    { "BiasAddV1", map_bias_add, 0 },
    { "Relu", map_activation, 0 },                     { "Relu6", map_activation, 0 },
    { "Elu", map_activation, 0 },                      { "LeakyRelu", map_activation, 0 },
    { "Sigmoid", map_activation, 0 },                  { "Tanh", map_activation, 0 },
    { "Prelu", map_prelu, 0 },
    { "Add", map_add, ANY }, { "AddV2", map_add, ANY }, { "Sub", map_sub, ANY },
    { "Mul", map_mul, ANY }, { "RealDiv", map_div, 0 }, { "Maximum", map_max, ANY },
    { "Minimum", map_min, ANY },
    { "FusedBatchNorm", map_batchnorm, 0 },            { "FusedBatchNormV2", map_batchnorm, 0 },
    { "FusedBatchNormV3", map_batchnorm, 0 },
    { "MaxPool", map_maxpool, 0 },                     { "AvgPool", map_avgpool, 0 },
    { "Pad", map_pad, ANY },  { "PadV2", map_pad, 0 },
    { "ConcatV2", map_concat, ANY },                { "Concat", map_concat, ANY },
    { "Reshape", map_reshape, ANY },                { "Squeeze", map_squeeze, ANY },
    { "ExpandDims", map_expand_dims, ANY },         { "Transpose", map_transpose, ANY },
    { "Softmax", map_softmax, 0 },
    { "ResizeBilinear", map_resize, 0 },               { "ResizeNearestNeighbor", map_resize, 0 },
};

tf_mapper tf_op_mapper(const char *op, unsigned *flags)
{
    if (flags)
        *flags = 0;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i].op, op) == 0) {
            if (flags)
                *flags = table[i].flags;
            return table[i].fn;
        }
    static const tf_op_entry *const families[] = { tf_math_ops, tf_array_ops, tf_deconv_ops };
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const tf_op_entry *e = families[f]; e->op; e++)
            if (strcmp(e->op, op) == 0) {
                if (flags)
                    *flags = e->flags;
                return e->fn;
            }
    return NULL;
}
