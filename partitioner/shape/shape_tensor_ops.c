/* Ops that move data without computing on it: Reshape, Flatten, Transpose, Squeeze,
 * Unsqueeze, Concat, Identity, Cast. Views of a constant share its bytes; Concat and Cast of
 * small integer constants are folded. */
#include "shape_rules.h"

#include <string.h>

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
    int rc = shp_arity(n, 1, 2, 1, err);
    if (rc)
        return rc;
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
        if (sv->dtype != BD_DT_INT64 && sv->dtype != BD_DT_UNDEFINED)
            return shp_fail(err, n, "shape '%s' must be INT64, got %s", sv->name,
                            bd_dtype_name(sv->dtype));
        if (!shp_is_const(sv)) {
            /* Run-time shape: the rank is its length when that is known. */
            if (shp_ranked(sv) && sv->shape.rank == 1 && sv->shape.dims[0] >= 0 &&
                sv->shape.dims[0] <= BD_MAX_RANK) {
                bd_shape s = shp_dynamic((int)sv->shape.dims[0]);
                shp_set(out, x->dtype, &s);
            } else {
                shp_set_unknown(out, x->dtype);
            }
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
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
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

/* ---- Transpose ---------------------------------------------------------------------- */

int shp_transpose(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0);
    const int64_t *perm;
    size_t len;
    if ((rc = shp_attr_ints(n, "perm", &perm, &len, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int r = x->shape.rank;
    int p[BD_MAX_RANK];
    if (perm && len != (size_t)r)
        return shp_fail(err, n, "attribute 'perm' has %zu values for rank %d", len, r);
    bool seen[BD_MAX_RANK] = { false };
    for (int i = 0; i < r; i++) {
        int64_t v = perm ? perm[i] : r - 1 - i;   /* default: reverse the dims */
        if (v < 0 || v >= r || seen[v])
            return shp_fail(err, n, "attribute 'perm' is not a permutation of 0..%d", r - 1);
        seen[v] = true;
        p[i] = (int)v;
    }
    bd_shape s = shp_dynamic(r);
    for (int i = 0; i < r; i++) {
        s.dims[i] = x->shape.dims[p[i]];
        s.sym[i]  = x->shape.sym[p[i]];
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* ---- Squeeze / Unsqueeze ------------------------------------------------------------ */

/* Axes from the attribute (opset < 13) or constant input 1 (opset >= 13). *KNOWN is false
 * when they come from a run-time input; *PRESENT false when neither is given. */
static int read_axes(const bd_node *n, int64_t *axes, size_t *count, bool *known, bool *present,
                     bd_error *err)
{
    const int64_t *attr;
    bd_value *in = shp_in(n, 1);
    int rc = shp_attr_ints(n, "axes", &attr, count, err);
    if (rc)
        return rc;
    *known = true;
    *present = attr != NULL || in != NULL;
    if (attr && in)
        return shp_fail(err, n, "axes given both as attribute and as input");
    if (attr) {
        if (*count > BD_MAX_RANK)
            return shp_fail(err, n, "attribute 'axes' has %zu values, more than any rank", *count);
        memcpy(axes, attr, *count * sizeof *axes);
        return 0;
    }
    if (!in) {
        *count = 0;
        return 0;
    }
    if (!shp_is_const(in)) {
        *known = false;
        return 0;
    }
    return shp_const_ints(n, "axes", in, axes, BD_MAX_RANK, count, err);
}

int shp_squeeze(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 2, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0);
    int64_t axes[BD_MAX_RANK];
    size_t count;
    bool known, present;
    if ((rc = read_axes(n, axes, &count, &known, &present, err)))
        return rc;
    if (shp_ranked(x) && !known) {
        /* Run-time axes: the rank drops by their count when that is known (and not 0). */
        const bd_value *av = shp_in(n, 1);
        int64_t len = shp_ranked(av) && av->shape.rank == 1 ? av->shape.dims[0] : -1;
        if (len <= 0 || len > x->shape.rank)
            return shp_all_unknown(n);
        bd_shape s = shp_dynamic(x->shape.rank - (int)len);
        shp_set(n->outputs[0], x->dtype, &s);
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
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i < r; i++)
        if (!drop[i]) {
            s.dims[s.rank] = x->shape.dims[i];
            s.sym[s.rank++] = x->shape.sym[i];
        }
    shp_set(n->outputs[0], x->dtype, &s);
    maybe_view(n->outputs[0], x);
    return 0;
}

int shp_unsqueeze(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 2, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0);
    int64_t axes[BD_MAX_RANK];
    size_t count;
    bool known, present;
    if ((rc = read_axes(n, axes, &count, &known, &present, err)))
        return rc;
    if (!present)
        return shp_fail(err, n, "axes are required (attribute before opset 13, input 1 after)");
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (!known) {
        if (shp_ranked(shp_in(n, 1)) && shp_in(n, 1)->shape.rank == 1 &&
            shp_in(n, 1)->shape.dims[0] >= 0 &&
            x->shape.rank + shp_in(n, 1)->shape.dims[0] <= BD_MAX_RANK) {
            bd_shape s = shp_dynamic(x->shape.rank + (int)shp_in(n, 1)->shape.dims[0]);
            shp_set(n->outputs[0], x->dtype, &s);
            return 0;
        }
        return shp_all_unknown(n);
    }
    int r = x->shape.rank + (int)count;
    if (r > BD_MAX_RANK)
        return shp_unsupported(err, n, "output rank %d exceeds braid's maximum rank %d", r,
                               BD_MAX_RANK);
    bool add[BD_MAX_RANK] = { false };
    for (size_t i = 0; i < count; i++) {
        int ax;
        if ((rc = shp_axis(n, "axis", axes[i], r, &ax, err)))
            return rc;
        if (add[ax])
            return shp_fail(err, n, "axis %d is listed twice", ax);
        add[ax] = true;
    }
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

/* ---- Concat ------------------------------------------------------------------------- */

static int fold_concat(bd_graph *g, bd_node *n, int ax, bd_value *out, bd_error *err)
{
    int64_t total, vals[SHP_FOLD_MAX];
    int rc = shp_numel(n, &out->shape, &total, err);
    if (rc || total < 0 || total > SHP_FOLD_MAX)
        return rc;
    int64_t outer = 1;
    if (total == 0)
        return shp_fold_ints(g, out, vals, 0, err);
    for (int i = 0; i < ax; i++)
        outer *= out->shape.dims[i];       /* no overflow: a factor of TOTAL */
    size_t at = 0, nin = shp_n_inputs(n);
    for (int64_t o = 0; o < outer; o++)
        for (size_t k = 0; k < nin; k++) {
            const bd_value *v = n->inputs[k];
            int64_t inner = 1;
            for (int i = ax; i < v->shape.rank; i++)
                inner *= v->shape.dims[i];
            for (int64_t e = 0; e < inner; e++)
                vals[at++] = shp_const_at(v, o * inner + e);
        }
    return shp_fold_ints(g, out, vals, at, err);
}

int shp_concat(bd_graph *g, bd_node *n, bd_error *err)
{
    size_t nin = shp_n_inputs(n);
    int rc = shp_arity(n, 1, nin > 0 ? nin : 1, 1, err);
    if (rc)
        return rc;
    int64_t axis;
    const bd_attr *a = bd_node_attr(n, "axis");
    if (!a)
        return shp_fail(err, n, "attribute 'axis' is required");
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)))
        return rc;
    bd_value *x = n->inputs[0];
    const bd_value *ranked = NULL;
    bool all_ranked = true;
    for (size_t k = 0; k < nin; k++) {
        if (!n->inputs[k])
            return shp_fail(err, n, "input %zu is missing", k);
        if (n->inputs[k]->dtype != x->dtype && n->inputs[k]->dtype != BD_DT_UNDEFINED &&
            x->dtype != BD_DT_UNDEFINED)
            return shp_fail(err, n, "input '%s' is %s but '%s' is %s", n->inputs[k]->name,
                            bd_dtype_name(n->inputs[k]->dtype), x->name, bd_dtype_name(x->dtype));
        if (!shp_ranked(n->inputs[k]))
            all_ranked = false;
        else if (!ranked)
            ranked = n->inputs[k];
    }
    if (!all_ranked) {
        /* All inputs share one rank: a ranked one gives it. */
        if (!ranked || ranked->shape.rank == 0)
            return shp_all_unknown(n);
        bd_shape s = shp_dynamic(ranked->shape.rank);
        shp_set(n->outputs[0], x->dtype, &s);
        return 0;
    }
    int r = x->shape.rank, ax;
    if (r == 0)
        return shp_fail(err, n, "cannot concatenate scalars");
    if ((rc = shp_axis(n, "axis", axis, r, &ax, err)))
        return rc;
    bd_shape s = x->shape;
    bool all_int_const = shp_foldable(x->dtype);
    for (size_t k = 0; k < nin; k++) {
        const bd_shape *ks = &n->inputs[k]->shape;
        all_int_const &= shp_is_int_const(n->inputs[k]);
        if (ks->rank != r)
            return shp_fail(err, n, "input '%s' has rank %d, expected %d like '%s'",
                            n->inputs[k]->name, ks->rank, r, x->name);
        if (k == 0)
            continue;
        for (int i = 0; i < r; i++) {
            int64_t d = ks->dims[i];
            if (i == ax) {
                if (s.dims[i] >= 0 && (d < 0 || __builtin_add_overflow(s.dims[i], d, &s.dims[i])))
                    s.dims[i] = -1;
                s.sym[i] = NULL;
            } else if (s.dims[i] >= 0 && d >= 0 && s.dims[i] != d) {
                char s0[96], sk[96];
                return shp_fail(err, n, "input '%s' %s does not match '%s' %s outside axis %d",
                                n->inputs[k]->name, shp_str(ks, sk, sizeof sk), x->name,
                                shp_str(&x->shape, s0, sizeof s0), ax);
            } else if (s.dims[i] < 0 && d >= 0) {
                s.dims[i] = d;
            } else if (s.dims[i] < 0 && d < 0 && s.sym[i] && ks->sym[i] &&
                       strcmp(s.sym[i], ks->sym[i]) != 0) {
                s.sym[i] = NULL;
            }
        }
    }
    shp_set(n->outputs[0], x->dtype, &s);
    if (all_int_const)
        return fold_concat(g, n, ax, n->outputs[0], err);
    return 0;
}

/* ---- Identity / Cast ---------------------------------------------------------------- */

int shp_identity(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    shp_set(n->outputs[0], x->dtype, &x->shape);
    maybe_view(n->outputs[0], x);
    return 0;
}

int shp_cast(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
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
    return 0;
}

/* ---- Split -------------------------------------------------------------------------- */

/* Sizes from the 'split' attribute (opset < 13) or constant input 1 (opset >= 13), else
 * equal parts, one per output. */
int shp_split(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 2, 64, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0), *sv = shp_in(n, 1);
    int64_t axis, sizes[64];
    const int64_t *attr;
    size_t count, nout = n->n_outputs;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)) ||
        (rc = shp_attr_ints(n, "split", &attr, &count, err)))
        return rc;
    if (sv && !shp_is_const(sv)) {
        if (shp_ranked(x)) {
            bd_shape s = shp_dynamic(x->shape.rank);
            for (size_t k = 0; k < nout; k++)
                shp_set(n->outputs[k], x->dtype, &s);
            return 0;
        }
        return shp_all_unknown(n);
    }
    if (sv) {
        if ((rc = shp_const_ints(n, "split", sv, sizes, 64, &count, err)))
            return rc;
        attr = sizes;
    }
    if (attr && count != nout)
        return shp_fail(err, n, "split has %zu sizes for %zu outputs", count, nout);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis(n, "axis", axis, x->shape.rank, &ax, err)))
        return rc;
    int64_t dim = x->shape.dims[ax], total = 0;
    if (attr) {
        for (size_t k = 0; k < nout; k++) {
            if (attr[k] < 0 || __builtin_add_overflow(total, attr[k], &total))
                return shp_fail(err, n, "split size %lld is invalid", (long long)attr[k]);
            sizes[k] = attr[k];
        }
        if (dim >= 0 && total != dim)
            return shp_fail(err, n, "split sizes add up to %lld, axis %d has %lld",
                            (long long)total, ax, (long long)dim);
    } else {
        if (dim >= 0 && dim % (int64_t)nout != 0)
            return shp_fail(err, n, "axis %d of size %lld does not split into %zu equal parts",
                            ax, (long long)dim, nout);
        for (size_t k = 0; k < nout; k++)
            sizes[k] = dim >= 0 ? dim / (int64_t)nout : -1;
    }
    for (size_t k = 0; k < nout; k++) {
        bd_shape s = x->shape;
        s.dims[ax] = sizes[k];
        s.sym[ax]  = NULL;
        shp_set(n->outputs[k], x->dtype, &s);
    }
    return 0;
}

/* ---- Tile --------------------------------------------------------------------------- */

/* Tile(x, repeats): dim i becomes dims[i] * repeats[i]; repeats is a constant INT64 of X's
 * rank (a run-time repeats keeps only the rank). */
int shp_tile(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 2, 2, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0), *rv = shp_in(n, 1);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    bd_shape s = shp_dynamic(x->shape.rank);
    if (!shp_is_const(rv)) {
        shp_set(n->outputs[0], x->dtype, &s);
        return 0;
    }
    int64_t reps[BD_MAX_RANK];
    size_t count;
    if ((rc = shp_const_ints(n, "repeats", rv, reps, BD_MAX_RANK, &count, err)))
        return rc;
    if (count != (size_t)x->shape.rank)
        return shp_fail(err, n, "repeats has %zu values for rank %d", count, x->shape.rank);
    for (int i = 0; i < s.rank; i++) {
        int64_t d = x->shape.dims[i];
        if (reps[i] < 0)
            return shp_fail(err, n, "repeats[%d] = %lld is negative", i, (long long)reps[i]);
        if (reps[i] == 1) {
            s.dims[i] = d;
            s.sym[i]  = x->shape.sym[i];
        } else if (d >= 0 && !shp_mul(d, reps[i], &s.dims[i])) {
            return shp_fail(err, n, "dim %d (%lld x %lld) overflows int64", i, (long long)d,
                            (long long)reps[i]);
        } else if (d < 0) {
            s.dims[i] = reps[i] == 0 ? 0 : -1;
        }
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
