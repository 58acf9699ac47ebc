/* Ops that select elements: TopK (K elements along an axis) and NonZero (a count known only
 * at run time). Both keep what is known of their output's rank, so oneDNN can take what
 * follows them. */
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
