/* Elementwise ops: unary activations keep their input's shape; binary ops broadcast
 * numpy-style. Integer Add/Sub/Mul/Div (and Neg/Abs) of constants are folded (shape
 * arithmetic). */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

int shp_unary(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = shp_in(n, 0);
    shp_pass_through(n);
    /* Neg/Abs of integer constants are shape arithmetic (LayerNormalization's expansion
     * negates an axis to size its reduced shape). */
    bool neg = strcmp(n->op_type, "Neg") == 0, abs = strcmp(n->op_type, "Abs") == 0;
    if (!(neg || abs) || (x->dtype != BD_DT_INT64 && x->dtype != BD_DT_INT32) ||
        !shp_is_int_const(x))
        return 0;
    int64_t count = bd_shape_numel(&x->shape), vals[SHP_FOLD_MAX];
    for (int64_t i = 0; i < count; i++) {
        int64_t v = shp_const_at(x, i);
        if (v == INT64_MIN || (x->dtype == BD_DT_INT32 && v == INT32_MIN))
            return shp_fail(err, n, "folding constant %s of %lld overflows", n->op_type,
                            (long long)v);
        vals[i] = neg || v < 0 ? -v : v;
    }
    return shp_fold_ints(g, n->outputs[0], vals, (size_t)count, err);
}

/* IsInf / IsNaN: X's shape, BOOL. */
int shp_unary_bool(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    (void)err;
    shp_pass_through(n);
    n->outputs[0]->dtype = BD_DT_BOOL;
    return 0;
}

/* Clip's min/max are attributes before opset 11 and optional scalar inputs from 11 on. */
int shp_clip(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    for (size_t i = 1; i < 3; i++) {
        bd_value *b = shp_in(n, i);
        int64_t count;
        if (!b || !shp_ranked(b))
            continue;
        if ((rc = shp_numel(n, &b->shape, &count, err)))
            return rc;
        if (count >= 0 && count != 1)
            return shp_fail(err, n, "%s '%s' must be a scalar, has %lld elements",
                            i == 1 ? "min" : "max", b->name, (long long)count);
    }
    return shp_pass_through(n);
}

/* Dropout in inference is Identity; the optional mask output is BOOL of the same shape. */
int shp_dropout(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = shp_in(n, 0);
    if (!shp_ranked(x)) {
        shp_all_unknown(n);
        if (n->n_outputs > 1)
            n->outputs[1]->dtype = BD_DT_BOOL;
        return 0;
    }
    shp_set(n->outputs[0], x->dtype, &x->shape);
    if (n->n_outputs > 1)
        shp_set(n->outputs[1], BD_DT_BOOL, &x->shape);
    return 0;
}

/* Offset into IN (broadcast against OUT) of OUT's element FLAT. */
static int64_t bcast_offset(const bd_shape *out, const bd_shape *in, int64_t flat)
{
    int64_t off = 0, stride = 1;
    for (int i = out->rank - 1; i >= 0; i--) {
        int64_t idx = flat % out->dims[i];
        flat /= out->dims[i];
        int ii = i - (out->rank - in->rank);
        if (ii < 0)
            continue;
        if (in->dims[ii] != 1)
            off += idx * stride;
        stride *= in->dims[ii];
    }
    return off;
}

/* One element of a folded integer op; false on overflow or division by zero. "Mod" is
 * ONNX's integer Mod (the sign of the divisor, as Python's %), "FMod" its fmod = 1 (the sign
 * of the dividend, as C's %). And/Or/Xor read BOOL operands as 0/1. */
static bool arith(const char *op, int64_t a, int64_t b, int64_t *r)
{
    if (strcmp(op, "LessOrEqual") == 0)
        return *r = a <= b, true;
    if (strcmp(op, "GreaterOrEqual") == 0)
        return *r = a >= b, true;
    if (strcmp(op, "And") == 0)
        return *r = a && b, true;
    if (strcmp(op, "Or") == 0)
        return *r = a || b, true;
    if (strcmp(op, "Xor") == 0)
        return *r = !a != !b, true;
    if (strcmp(op, "Max") == 0)
        return *r = a > b ? a : b, true;
    if (strcmp(op, "Min") == 0)
        return *r = a < b ? a : b, true;
    if (strcmp(op, "Mod") == 0 || strcmp(op, "FMod") == 0) {
        if (b == 0)
            return false;
        *r = b == -1 ? 0 : a % b;          /* INT64_MIN % -1 traps */
        if (op[0] == 'M' && *r != 0 && ((*r < 0) != (b < 0)))
            *r += b;                       /* no overflow: |*r| < |b| and opposite signs */
        return true;
    }
    if (strcmp(op, "Sum") == 0)
        op = "Add";
    if (strcmp(op, "Add") == 0)
        return !__builtin_add_overflow(a, b, r);
    if (strcmp(op, "Sub") == 0)
        return !__builtin_sub_overflow(a, b, r);
    if (strcmp(op, "Mul") == 0)
        return !__builtin_mul_overflow(a, b, r);
    if (strcmp(op, "Equal") == 0)
        return *r = a == b, true;
    if (strcmp(op, "Less") == 0)
        return *r = a < b, true;
    if (strcmp(op, "Greater") == 0)
        return *r = a > b, true;
    if (b == 0 || (a == INT64_MIN && b == -1))
        return false;
    *r = a / b;                            /* ONNX integer Div truncates, like C */
    return true;
}

/* Fold N's integer elementwise op OP over its (broadcast) constant inputs into OUT: Where's
 * three, or a left fold over the NIN inputs (two for binary ops, any for Sum/Max/Min). */
static int fold_elementwise(bd_graph *g, bd_node *n, const char *op, size_t nin, bd_value *out,
                            bd_error *err)
{
    int64_t count, vals[SHP_FOLD_MAX];
    int rc = shp_numel(n, &out->shape, &count, err);
    if (rc || count < 0 || count > SHP_FOLD_MAX)
        return rc;
    bool where = strcmp(op, "Where") == 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t x[3];
        if (where) {
            for (size_t k = 0; k < 3; k++)
                x[k] = shp_const_at(n->inputs[k],
                                    bcast_offset(&out->shape, &n->inputs[k]->shape, i));
            vals[i] = x[0] ? x[1] : x[2];
            continue;
        }
        int64_t acc = shp_const_at(n->inputs[0], bcast_offset(&out->shape, &n->inputs[0]->shape, i));
        for (size_t k = 1; k < nin; k++) {
            int64_t a = acc,
                    b = shp_const_at(n->inputs[k], bcast_offset(&out->shape, &n->inputs[k]->shape, i));
            if (!arith(op, a, b, &acc) ||
                (out->dtype == BD_DT_INT32 && (acc < INT32_MIN || acc > INT32_MAX)))
                return shp_fail(err, n, "folding constant %s: %lld %s %lld overflows or divides "
                                "by zero", n->op_type, (long long)a, n->op_type, (long long)b);
        }
        vals[i] = acc;
    }
    return shp_fold_ints(g, out, vals, (size_t)count, err);
}

/* Add, Sub, Mul, Div, Pow, Mod (fmod 0 or 1), BitShift (direction LEFT
 * or RIGHT): broadcast, the inputs' type (Pow's exponent may have another). */
int shp_binary(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *a = shp_in(n, 0), *b = shp_in(n, 1), *out = n->outputs[0];
    bool is_pow = strcmp(n->op_type, "Pow") == 0, is_mod = strcmp(n->op_type, "Mod") == 0;
    const char *op = n->op_type;
    if (!is_pow && a->dtype != BD_DT_UNDEFINED && b->dtype != BD_DT_UNDEFINED && a->dtype != b->dtype)
        return shp_fail(err, n, "input types differ: '%s' is %s, '%s' is %s", a->name,
                        bd_dtype_name(a->dtype), b->name, bd_dtype_name(b->dtype));
    int dtype = a->dtype != BD_DT_UNDEFINED || is_pow ? a->dtype : b->dtype;
    if (is_mod) {
        int64_t fmod;
        if ((rc = shp_attr_int(n, "fmod", 0, &fmod, err)))
            return rc;
        /* ONNX asks fmod = 1 of floating-point inputs; fmod = 0 is still well defined there
         * (the divisor's sign, as Python's %), and the native engine computes it. */
        if (fmod != 0 && fmod != 1)
            return shp_fail(err, n, "attribute 'fmod' = %lld, expected 0 or 1", (long long)fmod);
        op = fmod ? "FMod" : "Mod";
    } else if (strcmp(n->op_type, "BitShift") == 0) {
        static const char *const dirs[] = { "LEFT", "RIGHT" };
        int dir;
        if (!bd_node_attr(n, "direction"))
            return shp_fail(err, n, "attribute 'direction' is required (LEFT or RIGHT)");
        if ((rc = shp_attr_choice(n, "direction", dirs, 2, 0, &dir, err)))
            return rc;
    }
    if (!shp_ranked(a) || !shp_ranked(b)) {
        shp_set_unknown(out, dtype);
        return 0;
    }
    bd_shape s;
    if ((rc = shp_broadcast(n, &a->shape, &b->shape, &s, err)))
        return rc;
    shp_set(out, dtype, &s);
    bool foldable = strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 ||
                    strcmp(op, "Div") == 0 || is_mod;
    if (foldable && (dtype == BD_DT_INT64 || dtype == BD_DT_INT32) && shp_is_int_const(a) &&
        shp_is_int_const(b))
        return fold_elementwise(g, n, op, 2, out, err);
    return 0;
}

/* Equal/Less/Greater/LessOrEqual/GreaterOrEqual: broadcast, BOOL result. */
int shp_compare(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *a = shp_in(n, 0), *b = shp_in(n, 1);
    if (!shp_ranked(a) || !shp_ranked(b)) {
        shp_set_unknown(n->outputs[0], BD_DT_BOOL);
        return 0;
    }
    bd_shape s;
    if ((rc = shp_broadcast(n, &a->shape, &b->shape, &s, err)))
        return rc;
    shp_set(n->outputs[0], BD_DT_BOOL, &s);
    if (a->dtype != BD_DT_BOOL && shp_is_int_const(a) && shp_is_int_const(b))
        return fold_elementwise(g, n, n->op_type, 2, n->outputs[0], err);
    return 0;
}

/* And/Or/Xor: BOOL operands, broadcast, BOOL result (folded when both are constants). */
int shp_logical(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *a = shp_in(n, 0), *b = shp_in(n, 1);
    if ((rc = shp_check_dtype(n, "input", a, BD_DT_BOOL, err)) ||
        (rc = shp_check_dtype(n, "input", b, BD_DT_BOOL, err)))
        return rc;
    if (!shp_ranked(a) || !shp_ranked(b)) {
        shp_set_unknown(n->outputs[0], BD_DT_BOOL);
        return 0;
    }
    bd_shape s;
    if ((rc = shp_broadcast(n, &a->shape, &b->shape, &s, err)))
        return rc;
    shp_set(n->outputs[0], BD_DT_BOOL, &s);
    if (shp_is_int_const(a) && shp_is_int_const(b))
        return fold_elementwise(g, n, n->op_type, 2, n->outputs[0], err);
    return 0;
}

/* Where(cond, x, y): three-way broadcast, dtype of X. */
int shp_where(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *c = shp_in(n, 0), *x = shp_in(n, 1), *y = shp_in(n, 2);
    int dtype = x->dtype != BD_DT_UNDEFINED ? x->dtype : y->dtype;
    if (x->dtype != BD_DT_UNDEFINED && y->dtype != BD_DT_UNDEFINED && x->dtype != y->dtype)
        return shp_fail(err, n, "input types differ: '%s' is %s, '%s' is %s", x->name,
                        bd_dtype_name(x->dtype), y->name, bd_dtype_name(y->dtype));
    if (!shp_ranked(c) || !shp_ranked(x) || !shp_ranked(y)) {
        shp_set_unknown(n->outputs[0], dtype);
        return 0;
    }
    bd_shape s;
    if ((rc = shp_broadcast(n, &c->shape, &x->shape, &s, err)) ||
        (rc = shp_broadcast(n, &s, &y->shape, &s, err)))
        return rc;
    shp_set(n->outputs[0], dtype, &s);
    if (shp_foldable(dtype) && shp_is_int_const(c) && shp_is_int_const(x) && shp_is_int_const(y))
        return fold_elementwise(g, n, "Where", 3, n->outputs[0], err);
    return 0;
}

/* Expand(x, shape): X broadcast against the constant target SHAPE (numpy rules both ways). */
int shp_expand(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *sv = shp_in(n, 1), *out = n->outputs[0];
    if (!shp_is_const(sv)) {
        /* Run-time target: the rank is known when X's rank and the target's length are. */
        if (shp_ranked(x) && shp_ranked(sv) && sv->shape.rank == 1 && sv->shape.dims[0] >= 0 &&
            sv->shape.dims[0] <= BD_MAX_RANK) {
            int r = x->shape.rank > sv->shape.dims[0] ? x->shape.rank : (int)sv->shape.dims[0];
            bd_shape s = shp_dynamic(r);
            shp_set(out, x->dtype, &s);
        } else {
            shp_set_unknown(out, x->dtype);
        }
        return 0;
    }
    int64_t dims[BD_MAX_RANK];
    size_t len;
    if ((rc = shp_const_ints(n, "shape", sv, dims, BD_MAX_RANK, &len, err)))
        return rc;
    for (size_t i = 0; i < len; i++)
        if (dims[i] < 0)
            return shp_fail(err, n, "shape[%zu] = %lld is negative", i, (long long)dims[i]);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    bd_shape target = bd_shape_make((int)len, dims), s;
    if ((rc = shp_broadcast(n, &x->shape, &target, &s, err)))
        return rc;
    shp_set(out, x->dtype, &s);
    int64_t count, vals[SHP_FOLD_MAX];
    if (!shp_is_int_const(x) || (rc = shp_numel(n, &s, &count, err)) || count < 0 ||
        count > SHP_FOLD_MAX)
        return rc;
    for (int64_t i = 0; i < count; i++)
        vals[i] = shp_const_at(x, bcast_offset(&s, &x->shape, i));
    return shp_fold_ints(g, out, vals, (size_t)count, err);
}

/* PRelu: Y has X's shape; the slope broadcasts onto X (unidirectionally). */
int shp_prelu(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = shp_in(n, 0), *slope = shp_in(n, 1);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (shp_ranked(slope)) {
        const bd_shape *xs = &x->shape, *ss = &slope->shape;
        bool fits = ss->rank <= xs->rank;
        for (int i = 1; fits && i <= ss->rank; i++) {
            int64_t sd = ss->dims[ss->rank - i], xd = xs->dims[xs->rank - i];
            fits = sd == 1 || sd < 0 || xd < 0 || sd == xd;
        }
        if (!fits) {
            char bx[96], bs[96];
            return shp_fail(err, n, "slope '%s' %s does not broadcast onto input '%s' %s",
                            slope->name, shp_str(ss, bs, sizeof bs), x->name,
                            shp_str(xs, bx, sizeof bx));
        }
    }
    shp_set(n->outputs[0], x->dtype, &x->shape);
    return 0;
}

/* Max, Min, Sum, Mean: one or more inputs of one type, broadcast together. */
int shp_variadic(bd_graph *g, bd_node *n, bd_error *err)
{
    size_t nin = shp_n_inputs(n);
    int rc;
    bd_value *a = shp_in(n, 0);
    int dtype = a->dtype;
    bool ranked = shp_ranked(a);
    bd_shape s = a->shape;
    for (size_t i = 1; i < nin; i++) {
        bd_value *b = shp_in(n, i);
        if (!b)
            return shp_fail(err, n, "input %zu is missing", i);
        if (dtype != BD_DT_UNDEFINED && b->dtype != BD_DT_UNDEFINED && b->dtype != dtype)
            return shp_fail(err, n, "input types differ: '%s' is %s, '%s' is %s", a->name,
                            bd_dtype_name(dtype), b->name, bd_dtype_name(b->dtype));
        if (dtype == BD_DT_UNDEFINED)
            dtype = b->dtype;
        if (!shp_ranked(b))
            ranked = false;
        if (ranked && (rc = shp_broadcast(n, &s, &b->shape, &s, err)))
            return rc;
    }
    if (!ranked) {
        shp_set_unknown(n->outputs[0], dtype);
        return 0;
    }
    shp_set(n->outputs[0], dtype, &s);
    /* Integer Sum/Max/Min of constants are shape arithmetic (Mean is floating point only). */
    if (strcmp(n->op_type, "Mean") == 0 || (dtype != BD_DT_INT64 && dtype != BD_DT_INT32))
        return 0;
    for (size_t i = 0; i < nin; i++)
        if (!shp_is_int_const(shp_in(n, i)))
            return 0;
    return fold_elementwise(g, n, n->op_type, nin, n->outputs[0], err);
}
