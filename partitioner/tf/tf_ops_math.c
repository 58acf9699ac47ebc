/* TensorFlow's element-wise math, comparisons, reductions and casts as ONNX-semantic IR.
 *
 * Ops with an ONNX namesake map one to one; the rest are short compositions whose every
 * step has TensorFlow's exact semantics: Square = x·x, Rsqrt = 1/√x, SquaredDifference =
 * (x−y)², integer FloorDiv = (x − Mod(x, y)) / y (ONNX's Mod with fmod 0 has the divisor's
 * sign, like TensorFlow's FloorMod, so the division is exact), float FloorMod = x − ⌊x/y⌋·y,
 * Atan2 = atan(y/x) ± π where x < 0. Reductions read their axes from a constant operand; an
 * empty axes list reduces nothing in TensorFlow (everything in ONNX), so it becomes Identity. */
#include "partitioner/tf/tf_mapkit.h"
#include "partitioner/tf/tf_ops.h"

#include <stdint.h>
#include <string.h>

/* The bd_dtype of the node's T attribute (FLOAT when absent: the translator let only
 * float or, for TF_MAP_ANY_T ops, integer/bool T through). */
static int t_dtype(const tf_mapctx *m) { return tf_a_dtype(m->v, "T", BD_DT_FLOAT); }

static bool is_int(int dtype) { return dtype == BD_DT_INT32 || dtype == BD_DT_INT64 || dtype == BD_DT_UINT8; }

/* ---- one to one -------------------------------------------------------------------------- */

static const struct { const char *tf, *onnx; } same[] = {
    { "Abs", "Abs" },       { "Neg", "Neg" },       { "Sqrt", "Sqrt" },     { "Exp", "Exp" },
    { "Log", "Log" },       { "Floor", "Floor" },   { "Ceil", "Ceil" },     { "Round", "Round" },
    { "Sin", "Sin" },       { "Cos", "Cos" },       { "Tan", "Tan" },       { "Asin", "Asin" },
    { "Acos", "Acos" },     { "Atan", "Atan" },     { "Sinh", "Sinh" },     { "Cosh", "Cosh" },
    { "Asinh", "Asinh" },   { "Acosh", "Acosh" },   { "Atanh", "Atanh" },   { "Erf", "Erf" },
    { "Sign", "Sign" },     { "Softplus", "Softplus" }, { "Softsign", "Softsign" },
    { "Reciprocal", "Reciprocal" }, { "Inv", "Reciprocal" }, { "IsNan", "IsNaN" },
    { "LogicalNot", "Not" }, { "Selu", "Selu" },
    { "Pow", "Pow" },       { "Div", "Div" },       { "TruncateDiv", "Div" },
    { "Equal", "Equal" },   { "Less", "Less" },     { "LessEqual", "LessOrEqual" },
    { "Greater", "Greater" }, { "GreaterEqual", "GreaterOrEqual" },
    { "LogicalAnd", "And" }, { "LogicalOr", "Or" },
};

static int map_same(tf_mapctx *m, bd_error *err)
{
    const char *onnx = NULL;
    for (size_t i = 0; i < sizeof same / sizeof *same && !onnx; i++)
        if (strcmp(same[i].tf, m->v->op) == 0)
            onnx = same[i].onnx;
    bool binary = strcmp(onnx, "Pow") == 0 || strcmp(onnx, "Div") == 0 || strcmp(onnx, "Equal") == 0 ||
                  strcmp(onnx, "Less") == 0 || strcmp(onnx, "LessOrEqual") == 0 ||
                  strcmp(onnx, "Greater") == 0 || strcmp(onnx, "GreaterOrEqual") == 0 ||
                  strcmp(onnx, "And") == 0 || strcmp(onnx, "Or") == 0;
    if (m->n_in != (binary ? 2u : 1u))
        return TF_DECLINE;
    /* Float-only ONNX ops on an integer T (TensorFlow allows Round/Sign/... on ints). */
    if (!binary && is_int(t_dtype(m)) && strcmp(onnx, "Abs") && strcmp(onnx, "Neg") &&
        strcmp(onnx, "Sign") && strcmp(onnx, "Not"))
        return TF_DECLINE;
    return tf_op(m, NULL, onnx, m->in, m->n_in, m->out, NULL, err) ? 0 : tf_rc(err);
}

static int map_not_equal(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *eq = tf_op(m, "equal", "Equal", m->in, 2, NULL, NULL, err);
    return eq && tf_op1(m, NULL, "Not", eq, m->out, NULL, 0, err) ? 0 : tf_rc(err);
}

/* ---- compositions ------------------------------------------------------------------------ */

static int map_square(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return TF_DECLINE;
    return tf_op2(m, NULL, "Mul", m->in[0], m->in[0], m->out, err) ? 0 : tf_rc(err);
}

static int map_rsqrt(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return TF_DECLINE;
    bd_value *s = tf_op1(m, "sqrt", "Sqrt", m->in[0], NULL, NULL, 0, err);
    return s && tf_op1(m, NULL, "Reciprocal", s, m->out, NULL, 0, err) ? 0 : tf_rc(err);
}

static int map_log1p(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return TF_DECLINE;
    bd_value *one = tf_k_scalar(m, "one", BD_DT_FLOAT, 1.0, err);
    bd_value *s = one ? tf_op2(m, "plus1", "Add", m->in[0], one, NULL, err) : NULL;
    return s && tf_op1(m, NULL, "Log", s, m->out, NULL, 0, err) ? 0 : tf_rc(err);
}

/* erfc(x) = 1 - erf(x): what Keras' exact GELU freezes to (0.5·x·erfc(-x/√2)). */
static int map_erfc(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return TF_DECLINE;
    bd_value *one = tf_k_scalar(m, "one", BD_DT_FLOAT, 1.0, err);
    bd_value *e = one ? tf_op1(m, "erf", "Erf", m->in[0], NULL, NULL, 0, err) : NULL;
    return e && tf_op2(m, NULL, "Sub", one, e, m->out, err) ? 0 : tf_rc(err);
}

static int map_squared_difference(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *d = tf_op2(m, "diff", "Sub", m->in[0], m->in[1], NULL, err);
    return d && tf_op2(m, NULL, "Mul", d, d, m->out, err) ? 0 : tf_rc(err);
}

static int map_floor_div(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *x = m->in[0], *y = m->in[1];
    if (is_int(t_dtype(m))) {
        bd_node *n = NULL;
        bd_value *in[2] = { x, y };
        bd_value *r = tf_op(m, "mod", "Mod", in, 2, NULL, &n, err);
        if (!r || tf_set_int(m, n, "fmod", 0, err))
            return tf_rc(err);
        bd_value *e = tf_op2(m, "exact", "Sub", x, r, NULL, err);
        return e && tf_op2(m, NULL, "Div", e, y, m->out, err) ? 0 : tf_rc(err);
    }
    bd_value *q = tf_op2(m, "div", "Div", x, y, NULL, err);
    return q && tf_op1(m, NULL, "Floor", q, m->out, NULL, 0, err) ? 0 : tf_rc(err);
}

static int map_floor_mod(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *x = m->in[0], *y = m->in[1];
    if (is_int(t_dtype(m))) {
        bd_node *n = NULL;
        return tf_op(m, NULL, "Mod", m->in, 2, m->out, &n, err) ? tf_set_int(m, n, "fmod", 0, err)
                                                                : tf_rc(err);
    }
    bd_value *q = tf_op2(m, "div", "Div", x, y, NULL, err);
    bd_value *f = q ? tf_op1(m, "floor", "Floor", q, NULL, NULL, 0, err) : NULL;
    bd_value *p = f ? tf_op2(m, "times", "Mul", f, y, NULL, err) : NULL;
    return p && tf_op2(m, NULL, "Sub", x, p, m->out, err) ? 0 : tf_rc(err);
}

/* atan2(y, x) = atan(y / x) + (x < 0 ? (y >= 0 ? π : −π) : 0); x = 0 gives atan(±inf) = ±π/2. */
static int map_atan2(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *y = m->in[0], *x = m->in[1];
    bd_value *zero = tf_k_scalar(m, "zero", BD_DT_FLOAT, 0.0, err);
    bd_value *pi = zero ? tf_k_scalar(m, "pi", BD_DT_FLOAT, 3.14159265358979323846, err) : NULL;
    bd_value *mpi = pi ? tf_k_scalar(m, "minus_pi", BD_DT_FLOAT, -3.14159265358979323846, err) : NULL;
    bd_value *q = mpi ? tf_op2(m, "ratio", "Div", y, x, NULL, err) : NULL;
    bd_value *a = q ? tf_op1(m, "atan", "Atan", q, NULL, NULL, 0, err) : NULL;
    bd_value *xneg = a ? tf_op2(m, "x_neg", "Less", x, zero, NULL, err) : NULL;
    bd_value *ypos = xneg ? tf_op2(m, "y_pos", "GreaterOrEqual", y, zero, NULL, err) : NULL;
    bd_value *in1[3] = { ypos, pi, mpi };
    bd_value *turn = ypos ? tf_op(m, "turn", "Where", in1, 3, NULL, NULL, err) : NULL;
    bd_value *in2[3] = { xneg, turn, zero };
    bd_value *adj = turn ? tf_op(m, "adjust", "Where", in2, 3, NULL, NULL, err) : NULL;
    return adj && tf_op2(m, NULL, "Add", a, adj, m->out, err) ? 0 : tf_rc(err);
}

static int map_add_n(tf_mapctx *m, bd_error *err)
{
    if (m->n_in < 1)
        return TF_DECLINE;
    if (m->n_in == 1)
        return tf_op1(m, NULL, "Identity", m->in[0], m->out, NULL, 0, err) ? 0 : tf_rc(err);
    bd_value *acc = m->in[0];
    for (size_t k = 1; k < m->n_in; k++) {
        acc = tf_op2(m, k + 1 == m->n_in ? NULL : "sum", "Add", acc, m->in[k],
                     k + 1 == m->n_in ? m->out : NULL, err);
        if (!acc)
            return tf_rc(err);
    }
    return 0;
}

static int map_select(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 3)
        return TF_DECLINE;
    /* Select (v1) picks whole rows with a vector condition; Where broadcasts numpy-style,
     * which is the same only when the ranks agree (or the condition is a scalar). */
    int rc = m->in[0]->shape.rank, rx = m->in[1]->shape.rank;
    if (strcmp(m->v->op, "Select") != 0 || (rc >= 0 && rx >= 0 && (rc == rx || rc == 0)))
        return tf_op(m, NULL, "Where", m->in, 3, m->out, NULL, err) ? 0 : tf_rc(err);
    /* Ranks unknown here: the condition is reshaped to its own dims followed by ones up to
     * x's rank, [n] -> [n, 1, ..., 1] (the same shape or a scalar stay what they are); shape
     * inference folds the whole computation when the shapes are static. */
    static const int64_t zero = 0, one = 1, to_end = INT64_MAX;
    bd_value *k0 = tf_k_i64(m, "zero", &zero, 1, err);
    bd_value *k1 = k0 ? tf_k_i64(m, "one", &one, 1, err) : NULL;
    bd_value *kend = k1 ? tf_k_i64(m, "to_end", &to_end, 1, err) : NULL;
    bd_value *sx = kend ? tf_op1(m, "x_shape", "Shape", m->in[1], NULL, NULL, 0, err) : NULL;
    bd_value *sc = sx ? tf_op1(m, "cond_shape", "Shape", m->in[0], NULL, NULL, 0, err) : NULL;
    bd_value *rk = sc ? tf_op1(m, "cond_rank", "Shape", sc, NULL, NULL, 0, err) : NULL;
    bd_value *z = rk ? tf_op2(m, "x_zeros", "Mul", sx, k0, NULL, err) : NULL;
    bd_value *ones = z ? tf_op2(m, "x_ones", "Add", z, k1, NULL, err) : NULL;
    bd_value *sl[4] = { ones, rk, kend, k0 };
    bd_value *tail = ones ? tf_op(m, "ones_tail", "Slice", sl, 4, NULL, NULL, err) : NULL;
    bd_value *cat[2] = { sc, tail };
    bd_node *n = NULL;
    bd_value *shape = tail ? tf_op(m, "cond_dims", "Concat", cat, 2, NULL, &n, err) : NULL;
    if (!shape || tf_set_int(m, n, "axis", 0, err))
        return tf_rc(err);
    bd_value *cond = tf_op2(m, "cond", "Reshape", m->in[0], shape, NULL, err);
    bd_value *in[3] = { cond, m->in[1], m->in[2] };
    return cond && tf_op(m, NULL, "Where", in, 3, m->out, NULL, err) ? 0 : tf_rc(err);
}

static int map_clip(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 3 || m->in[1]->shape.rank != 0 || m->in[2]->shape.rank != 0)
        return TF_DECLINE;
    return tf_op(m, NULL, "Clip", m->in, 3, m->out, NULL, err) ? 0 : tf_rc(err);
}

/* ---- casts ------------------------------------------------------------------------------- */

static bool castable(int dtype)
{
    return dtype == BD_DT_FLOAT || dtype == BD_DT_INT32 || dtype == BD_DT_INT64 ||
           dtype == BD_DT_BOOL || dtype == BD_DT_UINT8;
}

static int map_cast(tf_mapctx *m, bd_error *err)
{
    int src = tf_a_dtype(m->v, "SrcT", BD_DT_UNDEFINED), dst = tf_a_dtype(m->v, "DstT", BD_DT_UNDEFINED);
    if (m->n_in != 1 || !castable(dst) || (src != BD_DT_UNDEFINED && !castable(src)))
        return TF_DECLINE;
    return tf_cast(m, NULL, m->in[0], dst, m->out, err) ? 0 : tf_rc(err);
}

/* ---- reductions -------------------------------------------------------------------------- */

static int map_reduce(tf_mapctx *m, bd_error *err)
{
    static const struct { const char *tf, *onnx; } ops[] = {
        { "Sum", "ReduceSum" }, { "Max", "ReduceMax" }, { "Min", "ReduceMin" },
        { "Prod", "ReduceProd" }, { "Mean", "ReduceMean" }, { "All", "ReduceMin" },
        { "Any", "ReduceMax" },
    };
    const char *onnx = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof *ops && !onnx; i++)
        if (strcmp(ops[i].tf, m->v->op) == 0)
            onnx = ops[i].onnx;
    int64_t axes[TF_MAX_CONST_INTS];
    size_t n_axes;
    if (m->n_in != 2 || !tf_const_ints(m->in[1], axes, BD_MAX_RANK, &n_axes))
        return TF_DECLINE;
    bool logical = strcmp(m->v->op, "All") == 0 || strcmp(m->v->op, "Any") == 0;
    if (strcmp(m->v->op, "Mean") == 0 && is_int(t_dtype(m)))
        return TF_DECLINE;                  /* TensorFlow's integer mean truncates */
    if (n_axes == 0)
        return tf_op1(m, NULL, "Identity", m->in[0], m->out, NULL, 0, err) ? 0 : tf_rc(err);
    bd_value *x = m->in[0];
    if (logical && !(x = tf_cast(m, "as_int", x, BD_DT_INT32, NULL, err)))
        return tf_rc(err);
    bd_node *n = NULL;
    bd_value *y = tf_op(m, logical ? "reduce" : NULL, onnx, &x, 1, logical ? NULL : m->out, &n, err);
    if (!y || tf_set_ints(m, n, "axes", axes, n_axes, err) ||
        tf_set_int(m, n, "keepdims", tf_a_b(m->v, "keep_dims", false), err))
        return tf_rc(err);
    if (logical && !tf_cast(m, NULL, y, BD_DT_BOOL, m->out, err))
        return tf_rc(err);
    return 0;
}

static int map_argminmax(tf_mapctx *m, bd_error *err)
{
    int64_t axis;
    size_t na;
    int ot = tf_a_dtype(m->v, "output_type", BD_DT_INT64);
    if (m->n_in != 2 || !tf_const_ints(m->in[1], &axis, 1, &na) || na != 1 ||
        (ot != BD_DT_INT64 && ot != BD_DT_INT32))
        return TF_DECLINE;
    const char *op = strcmp(m->v->op, "ArgMax") == 0 ? "ArgMax" : "ArgMin";
    bd_node *n = NULL;
    bd_value *y = tf_op(m, ot == BD_DT_INT64 ? NULL : "arg", op, m->in, 1,
                        ot == BD_DT_INT64 ? m->out : NULL, &n, err);
    if (!y || tf_set_int(m, n, "axis", axis, err) || tf_set_int(m, n, "keepdims", 0, err))
        return tf_rc(err);
    if (ot == BD_DT_INT32 && !tf_cast(m, NULL, y, BD_DT_INT32, m->out, err))
        return tf_rc(err);
    return 0;
}

static int map_log_softmax(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1)
        return TF_DECLINE;
    return tf_op1(m, NULL, "LogSoftmax", m->in[0], m->out, "axis", -1, err) ? 0 : tf_rc(err);
}

#define ANY TF_MAP_ANY_T
const tf_op_entry tf_math_ops[] = {
    { "Abs", map_same, ANY },          { "Neg", map_same, ANY },          { "Sqrt", map_same, 0 },
    { "Exp", map_same, 0 },            { "Log", map_same, 0 },            { "Floor", map_same, 0 },
    { "Ceil", map_same, 0 },           { "Round", map_same, 0 },          { "Sin", map_same, 0 },
    { "Cos", map_same, 0 },            { "Tan", map_same, 0 },            { "Asin", map_same, 0 },
    { "Acos", map_same, 0 },           { "Atan", map_same, 0 },           { "Sinh", map_same, 0 },
    { "Cosh", map_same, 0 },           { "Asinh", map_same, 0 },          { "Acosh", map_same, 0 },
    { "Atanh", map_same, 0 },          { "Erf", map_same, 0 },            { "Sign", map_same, ANY },
    { "Softplus", map_same, 0 },       { "Softsign", map_same, 0 },       { "Reciprocal", map_same, 0 },
    { "Inv", map_same, 0 },            { "IsNan", map_same, 0 },          { "LogicalNot", map_same, ANY },
    { "Selu", map_same, 0 },
    { "Pow", map_same, ANY },          { "Div", map_same, ANY },          { "TruncateDiv", map_same, ANY },
    { "Equal", map_same, ANY },        { "Less", map_same, ANY },         { "LessEqual", map_same, ANY },
    { "Greater", map_same, ANY },      { "GreaterEqual", map_same, ANY },
    { "LogicalAnd", map_same, ANY },   { "LogicalOr", map_same, ANY },
    { "NotEqual", map_not_equal, ANY },
    { "Square", map_square, ANY },     { "Rsqrt", map_rsqrt, 0 },         { "Log1p", map_log1p, 0 },
    { "Erfc", map_erfc, 0 },
    { "SquaredDifference", map_squared_difference, ANY },
    { "FloorDiv", map_floor_div, ANY }, { "FloorMod", map_floor_mod, ANY },
    { "Atan2", map_atan2, 0 },         { "AddN", map_add_n, ANY },
    { "Select", map_select, ANY },     { "SelectV2", map_select, ANY },
    { "ClipByValue", map_clip, 0 },    { "Cast", map_cast, ANY },
    { "Sum", map_reduce, ANY },        { "Max", map_reduce, ANY },        { "Min", map_reduce, ANY },
    { "Prod", map_reduce, ANY },       { "All", map_reduce, ANY },        { "Any", map_reduce, ANY },
    { "Mean", map_reduce, ANY },
    { "ArgMax", map_argminmax, ANY },  { "ArgMin", map_argminmax, ANY },
    { "LogSoftmax", map_log_softmax, 0 },
    { NULL, NULL, 0 },
};
