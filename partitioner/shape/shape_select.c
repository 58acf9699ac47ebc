/* Ops that select elements: TopK (K elements along an axis), and NonZero and
 * NonMaxSuppression (a count known only at run time). They keep what is known of their
 * output's rank, so oneDNN can take what follows them. */
#include "partitioner/shape/shape_rules.h"

/* TopK: values (X's dtype) and indices (INT64), both X's shape with the axis cut to K. K is
 * the `k` attribute before opset 10 and a 1-element INT64 input from 10 on; a K known only
 * at run time keeps the rank and leaves that one dim dynamic. */
int shp_topk(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *kv = shp_in(n, 1);
    int64_t axis, k = -1;
    if ((rc = shp_attr_int(n, "axis", -1, &axis, err)))
        return rc;
    if (kv) {
        if ((rc = shp_check_dtype(n, "K", kv, BD_DT_INT64, err)))
            return rc;
        if (shp_ranked(kv) && kv->shape.rank > 1)
            return shp_fail(err, n, "K '%s' must be a 1-element 1-D tensor, got rank %d",
                            kv->name, kv->shape.rank);
        if (shp_is_const(kv)) {
            int64_t vals[1];
            size_t count;
            if ((rc = shp_const_ints(n, "K", kv, vals, 1, &count, err)))
                return rc;
            if (count != 1)
                return shp_fail(err, n, "K '%s' must hold 1 value, has %zu", kv->name, count);
            k = vals[0];
        }
    } else {
        const bd_attr *a = bd_node_attr(n, "k");
        if (!a)
            return shp_fail(err, n, "K is missing (attribute 'k' before opset 10, input 1 after)");
        if ((rc = shp_attr_int(n, "k", -1, &k, err)))
            return rc;
    }
    if (kv && !shp_is_const(kv))
        k = -1;
    else if (k < 0)
        return shp_fail(err, n, "K = %lld is negative", (long long)k);
    if (!shp_ranked(x)) {
        shp_set_unknown(n->outputs[0], x->dtype);
        if (n->n_outputs > 1)
            shp_set_unknown(n->outputs[1], BD_DT_INT64);
        return 0;
    }
    int ax;
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    int64_t d = x->shape.dims[ax];
    if (k >= 0 && d >= 0 && k > d)
        return shp_fail(err, n, "K = %lld is larger than axis %d of size %lld", (long long)k, ax,
                        (long long)d);
    bd_shape s = x->shape;
    s.dims[ax] = k;                        /* -1 when K is known only at run time */
    s.sym[ax]  = NULL;
    shp_set(n->outputs[0], x->dtype, &s);
    if (n->n_outputs > 1)
        shp_set(n->outputs[1], BD_DT_INT64, &s);
    return 0;
}

/* NonZero: INT64 [rank(X), count], the count known only at run time (for a scalar X the
 * first dim is left dynamic too: engines disagree on it). */
int shp_nonzero(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    bd_value *x = shp_in(n, 0);
    bd_shape s = shp_dynamic(2);
    if (shp_ranked(x) && x->shape.rank > 0)
        s.dims[0] = x->shape.rank;
    shp_set(n->outputs[0], BD_DT_INT64, &s);
    return 0;
}

/* NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], ...): INT64 [selected, 3]. */
int shp_nms(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    int64_t cpb;
    bd_value *boxes = shp_in(n, 0), *scores = shp_in(n, 1);
    if ((rc = shp_attr_int(n, "center_point_box", 0, &cpb, err)))
        return rc;
    if (cpb != 0 && cpb != 1)
        return shp_fail(err, n, "attribute 'center_point_box' = %lld, expected 0 or 1",
                        (long long)cpb);
    if ((rc = shp_expect_rank(n, "boxes", boxes, 3, err)) ||
        (rc = shp_expect_rank(n, "scores", scores, 3, err)))
        return rc;
    if (shp_ranked(boxes) &&
        (rc = shp_expect_dim(n, "boxes", boxes, 2, 4, "the box coordinates", err)))
        return rc;
    bd_shape s = shp_dynamic(2);
    s.dims[1] = 3;
    shp_set(n->outputs[0], BD_DT_INT64, &s);
    return 0;
}

/* Trilu(input, k): the input's shape (rank >= 2); K is an optional INT64 scalar. */
int shp_trilu(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *kv = shp_in(n, 1);
    int64_t upper;
    if ((rc = shp_attr_int(n, "upper", 1, &upper, err)))
        return rc;
    if (kv) {
        int64_t count;
        if ((rc = shp_check_dtype(n, "k", kv, BD_DT_INT64, err)) ||
            (rc = shp_numel(n, &kv->shape, &count, err)))
            return rc;
        if (shp_ranked(kv) && (kv->shape.rank > 1 || (count >= 0 && count != 1)))
            return shp_fail(err, n, "k '%s' must be a scalar", kv->name);
    }
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2, got %d", x->name, x->shape.rank);
    return shp_pass_through(n);
}

/* Number of true values among the first LIMIT of constant 1-D BOOL condition C, or -1 when
 * C is not such a constant. */
static int64_t count_true(const bd_value *c, int64_t limit)
{
    if (!shp_is_const(c) || c->dtype != BD_DT_BOOL || c->shape.rank != 1 ||
        c->shape.dims[0] < 0 || c->nbytes != (size_t)c->shape.dims[0])
        return -1;
    const unsigned char *p = c->data;
    int64_t len = c->shape.dims[0] < limit ? c->shape.dims[0] : limit, count = 0;
    for (int64_t i = 0; i < len; i++)
        count += p[i] != 0;
    return count;
}

/* Compress(input, condition): the slices along 'axis' (or the elements of the flattened input)
 * a 1-D BOOL condition selects. Their count follows the data, so that dim is known only at run
 * time, unless the condition is a constant: as ONNX Runtime (and the native engine) do, a
 * condition longer than the axis is cut to it, and a shorter one selects nothing past its end. */
int shp_compress(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *c = shp_in(n, 1), *out = n->outputs[0];
    const bd_attr *a = bd_node_attr(n, "axis");
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)) ||
        (rc = shp_check_dtype(n, "condition", c, BD_DT_BOOL, err)) ||
        (rc = shp_expect_rank(n, "condition", c, 1, err)))
        return rc;
    if (!a) {
        /* The flattened input: a 1-D result. */
        int64_t numel = -1;
        if (shp_ranked(x) && (rc = shp_numel(n, &x->shape, &numel, err)))
            return rc;
        bd_shape s = shp_dynamic(1);
        if (numel >= 0)
            s.dims[0] = count_true(c, numel);
        shp_set(out, x->dtype, &s);
        return 0;
    }
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    bd_shape s = x->shape;
    s.dims[ax] = x->shape.dims[ax] >= 0 ? count_true(c, x->shape.dims[ax]) : -1;
    s.sym[ax]  = NULL;
    shp_set(out, x->dtype, &s);
    return 0;
}

/* Unique: Y (X's dtype) holds the distinct elements of the flattened X, or the distinct slices
 * along 'axis'; indices and counts ([number distinct], INT64) follow the data, so that number
 * is known only at run time. inverse_indices (INT64) has one entry per element of X, or per
 * slice along the axis. */
int shp_unique(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    const bd_attr *a = bd_node_attr(n, "axis");
    int64_t axis, sorted, numel = -1;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)) ||
        (rc = shp_attr_int(n, "sorted", 1, &sorted, err)))
        return rc;
    int ax = -1;
    if (shp_ranked(x)) {
        if (a && (rc = shp_axis_of(n, "input", x, axis, &ax, err)))
            return rc;
        if ((rc = shp_numel(n, &x->shape, &numel, err)))
            return rc;
    }
    bd_shape y = shp_dynamic(1), one = shp_dynamic(1), inv = shp_dynamic(1);
    if (a && ax >= 0) {
        y = x->shape;
        y.dims[ax] = -1;
        y.sym[ax]  = NULL;
        inv.dims[0] = x->shape.dims[ax];
        inv.sym[0]  = x->shape.sym[ax];
    } else if (!a) {
        inv.dims[0] = numel;
    }
    if (a && ax < 0)
        shp_set_unknown(n->outputs[0], x->dtype);
    else
        shp_set(n->outputs[0], x->dtype, &y);
    for (size_t k = 1; k < n->n_outputs; k++)
        shp_set(n->outputs[k], BD_DT_INT64, k == 2 ? &inv : &one);
    return 0;
}
