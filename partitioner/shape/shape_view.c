/* Ops that keep the data and change only how it is seen: Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, Cast. Views of a constant share its bytes; Cast of a small integer
 * constant is folded. */
#include "partitioner/shape/shape_rules.h"

/* OUT becomes a view of IN when IN is a constant whose bytes match its shape. */
static void maybe_view(bd_value *out, const bd_value *in)
{
    if (!shp_is_const(in) || !shp_is_static(&in->shape))
        return;
    uint64_t bytes = bd_dtype_size(in->dtype);
    for (int i = 0; i < in->shape.rank; i++)
        if (__builtin_mul_overflow(bytes, (uint64_t)in->shape.dims[i], &bytes))
            return;
    if (bytes && bytes == in->nbytes)
        shp_fold_view(out, in);
}

/* Product of dims [FROM, TO) of S: static product, or -1 keeping the symbol when the span is
 * one dynamic dim and 1s. */
static int span_product(const bd_node *n, const bd_shape *s, int from, int to, int64_t *dim,
                        const char **sym, bd_error *err)
{
    int64_t p = 1;
    int dynamic = 0;
    *sym = NULL;
    for (int i = from; i < to; i++) {
        if (s->dims[i] < 0) {
            dynamic++;
            *sym = s->sym[i];
        } else if (!shp_mul(p, s->dims[i], &p)) {
            return shp_fail(err, n, "dimension product overflows int64");
        }
    }
    if (dynamic == 0) {
        *dim = p;
    } else {
        *dim = -1;
        if (dynamic > 1 || p != 1)
            *sym = NULL;
    }
    return 0;
}

/* ---- Reshape ------------------------------------------------------------------------ */

/* Target dims from SHAPE (0 copies X's dim unless ALLOWZERO, one -1 is inferred). */
static int reshape_dims(const bd_node *n, const bd_value *x, const int64_t *shape, size_t len,
                        bool allowzero, bd_shape *out, bd_error *err)
{
    if (len > BD_MAX_RANK)
        return shp_unsupported(err, n, "target rank %zu exceeds braid's maximum rank %d", len,
                               BD_MAX_RANK);
    const bd_shape *xs = &x->shape;
    bd_shape s = shp_dynamic((int)len);
    int infer = -1;
    bool copied[BD_MAX_RANK] = { false }, has_zero = false;
    for (size_t i = 0; i < len; i++) {
        int64_t v = shape[i];
        if (v == 0 && !allowzero) {
            if (xs->rank >= 0 && (int)i >= xs->rank)
                return shp_fail(err, n, "shape[%zu] = 0 copies a dim the input (rank %d) lacks",
                                i, xs->rank);
            s.dims[i] = xs->rank >= 0 ? xs->dims[i] : -1;
            s.sym[i]  = xs->rank >= 0 ? xs->sym[i] : NULL;
            copied[i] = true;
        } else if (v == -1) {
            if (infer >= 0)
                return shp_fail(err, n, "shape has more than one -1 (at %d and %zu)", infer, i);
            infer = (int)i;
        } else if (v < -1) {
            return shp_fail(err, n, "shape[%zu] = %lld is invalid", i, (long long)v);
        } else {
            has_zero |= v == 0;
            s.dims[i] = v;
        }
    }
    if (allowzero && has_zero && infer >= 0)
        return shp_fail(err, n, "shape has both 0 (allowzero) and -1");
    if (xs->rank < 0) {
        *out = s;
        return 0;
    }
    /* Static products of what is left once dims copied by 0 cancel out on both sides. */
    int64_t in_p = 1, out_p = 1;
    bool in_dyn = false;
    for (int i = 0; i < xs->rank; i++) {
        if (i < (int)len && copied[i])
            continue;
        if (xs->dims[i] < 0)
            in_dyn = true;
        else if (!shp_mul(in_p, xs->dims[i], &in_p))
            return shp_fail(err, n, "input element count overflows int64");
    }
    for (size_t i = 0; i < len; i++) {
        if (copied[i] || (int)i == infer)
            continue;
        if (!shp_mul(out_p, s.dims[i], &out_p))
            return shp_fail(err, n, "target element count overflows int64");
    }
    char sx[96];
    if (infer >= 0) {
        if (!in_dyn) {
            if (out_p == 0 || in_p % out_p != 0)
                return shp_fail(err, n, "cannot reshape %s: %lld elements are not a multiple of "
                                "the %lld the other target dims hold", shp_str(xs, sx, sizeof sx),
                                (long long)in_p, (long long)out_p);
            s.dims[infer] = in_p / out_p;
        }
    } else if (!in_dyn && in_p != out_p) {
        return shp_fail(err, n, "cannot reshape %s (%lld elements) into %lld elements",
                        shp_str(xs, sx, sizeof sx), (long long)in_p, (long long)out_p);
    }
    *out = s;
    return 0;
}

int shp_reshape(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *sv = shp_in(n, 1), *out = n->outputs[0];
    int64_t allowzero;
    const int64_t *attr_shape;
    size_t len;
    if ((rc = shp_attr_int(n, "allowzero", 0, &allowzero, err)) ||
        (rc = shp_attr_ints(n, "shape", &attr_shape, &len, err)))
        return rc;
    int64_t buf[SHP_FOLD_MAX];
    const int64_t *shape = attr_shape;            /* opset < 5 carried it as an attribute */
    if (sv) {
        if ((rc = shp_check_dtype(n, "shape", sv, BD_DT_INT64, err)))
            return rc;
        if (!shp_is_const(sv)) {
            shp_set_shaped_by(out, x->dtype, sv);   /* run-time shape */
            return 0;
        }
        if ((rc = shp_const_ints(n, "shape", sv, buf, SHP_FOLD_MAX, &len, err)))
            return rc;
        shape = buf;
    } else if (!attr_shape) {
        return shp_fail(err, n, "the target shape is missing (input 1)");
    }
    bd_shape s;
    if ((rc = reshape_dims(n, x, shape, len, allowzero != 0, &s, err)))
        return rc;
    shp_set(out, x->dtype, &s);
    maybe_view(out, x);
    return 0;
}

/* ---- Flatten ------------------------------------------------------------------------ */

int shp_flatten(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", 1, &axis, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int r = x->shape.rank;
    if (axis < -(int64_t)r || axis > r)
        return shp_fail(err, n, "axis %lld is out of range for rank %d (expected %d..%d)",
                        (long long)axis, r, -r, r);
    int ax = (int)(axis < 0 ? axis + r : axis);
    bd_shape s = shp_dynamic(2);
    if ((rc = span_product(n, &x->shape, 0, ax, &s.dims[0], &s.sym[0], err)) ||
        (rc = span_product(n, &x->shape, ax, r, &s.dims[1], &s.sym[1], err)))
        return rc;
    shp_set(n->outputs[0], x->dtype, &s);
    maybe_view(n->outputs[0], x);
    return 0;
}

/* ---- Squeeze / Unsqueeze ------------------------------------------------------------ */

int shp_squeeze(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t axes[BD_MAX_RANK];
    size_t count;
    bool known, present;
    if ((rc = shp_axes_input(n, axes, &count, &known, &present, err)))
        return rc;
    if (shp_ranked(x) && !known) {
        /* Run-time axes: the rank drops by their count when that is known (and not 0). */
        int64_t len = shp_len_1d(shp_in(n, 1));
        if (len <= 0 || len > x->shape.rank)
            return shp_all_unknown(n);
        shp_set_rank(n->outputs[0], x->dtype, x->shape.rank - (int)len);
        return 0;
    }
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int r = x->shape.rank;
    bool drop[BD_MAX_RANK] = { false };
    if (count == 0) {
        /* No (or empty) axes: squeeze every 1; a dynamic dim might be 1, so the rank is unknown. */
        for (int i = 0; i < r; i++) {
            if (x->shape.dims[i] < 0)
                return shp_all_unknown(n);
            drop[i] = x->shape.dims[i] == 1;
        }
    }
    for (size_t i = 0; i < count; i++) {
        int ax;
        if ((rc = shp_axis(n, "axis", axes[i], r, &ax, err)))
            return rc;
        if (drop[ax])
            return shp_fail(err, n, "axis %d is listed twice", ax);
        if (x->shape.dims[ax] >= 0 && x->shape.dims[ax] != 1)
            return shp_fail(err, n, "cannot squeeze axis %d of size %lld", ax,
                            (long long)x->shape.dims[ax]);
        drop[ax] = true;
    }
    bd_shape s = shp_drop_dims(&x->shape, drop, false);
    shp_set(n->outputs[0], x->dtype, &s);
    maybe_view(n->outputs[0], x);
    return 0;
}

int shp_unsqueeze(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t axes[BD_MAX_RANK];
    size_t count;
    bool known, present;
    if ((rc = shp_axes_input(n, axes, &count, &known, &present, err)))
        return rc;
    if (!present)
        return shp_fail(err, n, "axes are required (attribute before opset 13, input 1 after)");
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (!known) {
        int64_t len = shp_len_1d(shp_in(n, 1));
        if (len < 0 || x->shape.rank + len > BD_MAX_RANK)
            return shp_all_unknown(n);
        shp_set_rank(n->outputs[0], x->dtype, x->shape.rank + (int)len);
        return 0;
    }
    int r = x->shape.rank + (int)count;
    if (r > BD_MAX_RANK)
        return shp_unsupported(err, n, "output rank %d exceeds braid's maximum rank %d", r,
                               BD_MAX_RANK);
    bool add[BD_MAX_RANK] = { false };
    if ((rc = shp_axes_mask(n, axes, count, r, add, err)))
        return rc;
    bd_shape s = shp_dynamic(r);
    for (int i = 0, k = 0; i < r; i++) {
        if (add[i]) {
            s.dims[i] = 1;
        } else {
            s.dims[i] = x->shape.dims[k];
            s.sym[i]  = x->shape.sym[k++];
        }
    }
    shp_set(n->outputs[0], x->dtype, &s);
    maybe_view(n->outputs[0], x);
    return 0;
}

/* ---- Identity / Cast ---------------------------------------------------------------- */

int shp_identity(bd_graph *g, bd_node *n, bd_error *err)
{
    shp_pass_through(n);
    maybe_view(n->outputs[0], shp_in(n, 0));
    return 0;
}

int shp_cast(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *out = n->outputs[0];
    int64_t to;
    if ((rc = shp_attr_int(n, "to", -1, &to, err)))
        return rc;
    if (to < 0 || to > BD_DT_BFLOAT16 || (bd_dtype_size((int)to) == 0 && to != BD_DT_STRING))
        return shp_fail(err, n, "attribute 'to' = %lld is not a known type", (long long)to);
    if (!shp_ranked(x)) {
        shp_set_unknown(out, (int)to);
        return 0;
    }
    shp_set(out, (int)to, &x->shape);
    if (shp_foldable((int)to) && shp_is_int_const(x)) {
        int64_t count = bd_shape_numel(&x->shape), vals[SHP_FOLD_MAX];
        for (int64_t i = 0; i < count; i++)
            vals[i] = shp_const_at(x, i);
        return shp_fold_ints(g, out, vals, (size_t)count, err);
    }
    /* A few shape numbers made float (TensorFlow's Range over float limits, a scale from a
     * size): folded too, so what they size is static. */
    if (to == BD_DT_FLOAT && shp_is_int_const(x) && bd_shape_numel(&x->shape) <= 16) {
        int64_t count = bd_shape_numel(&x->shape);
        float *p = bd_graph_alloc(g, count ? (size_t)count * sizeof *p : 1);
        if (!p)
            return bd_error_set(err, BD_ENOMEM, "out of memory folding constant '%s'", out->name);
        for (int64_t i = 0; i < count; i++)
            p[i] = (float)shp_const_at(x, i);
        out->data = p;
        out->nbytes = (size_t)count * sizeof *p;
    }
    return 0;
}

/* CastLike(input, target_type): Cast to the dtype of input 1 (folded like Cast). */
int shp_cast_like(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = shp_in(n, 0), *like = shp_in(n, 1), *out = n->outputs[0];
    int to = like->dtype;
    if (!shp_ranked(x)) {
        shp_set_unknown(out, to);
        return 0;
    }
    shp_set(out, to, &x->shape);
    if (to != BD_DT_UNDEFINED && shp_foldable(to) && shp_is_int_const(x)) {
        int64_t count = bd_shape_numel(&x->shape), vals[SHP_FOLD_MAX];
        for (int64_t i = 0; i < count; i++)
            vals[i] = shp_const_at(x, i);
        return shp_fold_ints(g, out, vals, (size_t)count, err);
    }
    return 0;
}
