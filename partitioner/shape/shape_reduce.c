/* Reductions (ReduceMean, ReduceSum, ReduceMax, ...): axes from the attribute, or from a
 * constant second input (ReduceSum from opset 13); keepdims; noop_with_empty_axes. And
 * ArgMax/ArgMin (one axis, INT64 indices). */
#include "shape_rules.h"

int shp_reduce(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 2, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0), *axes_in = shp_in(n, 1);
    int64_t keepdims, noop;
    const int64_t *attr_axes;
    size_t n_axes;
    if ((rc = shp_attr_int(n, "keepdims", 1, &keepdims, err)) ||
        (rc = shp_attr_int(n, "noop_with_empty_axes", 0, &noop, err)) ||
        (rc = shp_attr_ints(n, "axes", &attr_axes, &n_axes, err)))
        return rc;
    int64_t axes[BD_MAX_RANK];
    if (attr_axes && axes_in)
        return shp_fail(err, n, "axes given both as attribute and as input");
    if (axes_in && !shp_is_const(axes_in)) {
        /* Axes known only at run time: with keepdims the rank survives; without, it drops by
         * the number of axes when that is known (and not 0, which means all or none). */
        int64_t len = shp_ranked(axes_in) && axes_in->shape.rank == 1 ? axes_in->shape.dims[0] : -1;
        if (shp_ranked(x) && keepdims) {
            bd_shape s = shp_dynamic(x->shape.rank);
            shp_set(n->outputs[0], x->dtype, &s);
        } else if (shp_ranked(x) && len > 0 && len <= x->shape.rank) {
            bd_shape s = shp_dynamic(x->shape.rank - (int)len);
            shp_set(n->outputs[0], x->dtype, &s);
        } else {
            shp_all_unknown(n);
        }
        return 0;
    }
    if (axes_in) {
        if ((rc = shp_const_ints(n, "axes", axes_in, axes, BD_MAX_RANK, &n_axes, err)))
            return rc;
    } else {
        if (n_axes > BD_MAX_RANK)
            return shp_fail(err, n, "attribute 'axes' has %zu values, more than any rank", n_axes);
        for (size_t i = 0; i < n_axes; i++)
            axes[i] = attr_axes[i];
    }
    if (!shp_ranked(x)) {
        /* Reducing everything without keepdims is a scalar whatever X's rank. */
        if (n_axes == 0 && !noop && !keepdims) {
            bd_shape s = shp_dynamic(0);
            shp_set(n->outputs[0], x->dtype, &s);
            return 0;
        }
        return shp_all_unknown(n);
    }
    int rank = x->shape.rank;
    bool reduce[BD_MAX_RANK] = { false };
    for (size_t i = 0; i < n_axes; i++) {
        int ax;
        if ((rc = shp_axis(n, "axis", axes[i], rank, &ax, err)))
            return rc;
        if (reduce[ax])
            return shp_fail(err, n, "axis %d is listed twice", ax);
        reduce[ax] = true;
    }
    if (n_axes == 0) {
        if (noop) {
            shp_set(n->outputs[0], x->dtype, &x->shape);
            return 0;
        }
        for (int i = 0; i < rank; i++)
            reduce[i] = true;
    }
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i < rank; i++) {
        if (!reduce[i]) {
            s.dims[s.rank] = x->shape.dims[i];
            s.sym[s.rank++] = x->shape.sym[i];
        } else if (keepdims) {
            s.dims[s.rank++] = 1;
        }
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* ArgMax / ArgMin: INT64 indices, X's shape with `axis` (default 0) reduced (kept as 1 with
 * keepdims, the default). */
int shp_argreduce(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0);
    int64_t axis, keepdims;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)) ||
        (rc = shp_attr_int(n, "keepdims", 1, &keepdims, err)))
        return rc;
    if (!shp_ranked(x)) {
        shp_set_unknown(n->outputs[0], BD_DT_INT64);
        return 0;
    }
    int ax;
    if (x->shape.rank == 0)
        return shp_fail(err, n, "input '%s' must have rank >= 1", x->name);
    if ((rc = shp_axis(n, "axis", axis, x->shape.rank, &ax, err)))
        return rc;
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i < x->shape.rank; i++) {
        if (i != ax) {
            s.dims[s.rank] = x->shape.dims[i];
            s.sym[s.rank++] = x->shape.sym[i];
        } else if (keepdims) {
            s.dims[s.rank++] = 1;
        }
    }
    shp_set(n->outputs[0], BD_DT_INT64, &s);
    return 0;
}
