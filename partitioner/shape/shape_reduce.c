/* Reductions (ReduceMean, ReduceSum, ReduceMax, ...): axes from the attribute, or from a
 * constant second input (ReduceSum from opset 13); keepdims; noop_with_empty_axes. And
 * ArgMax/ArgMin (one axis, INT64 indices). */
#include "partitioner/shape/shape_rules.h"

int shp_reduce(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t keepdims, noop, axes[BD_MAX_RANK];
    size_t n_axes;
    bool known, present;
    if ((rc = shp_attr_int(n, "keepdims", 1, &keepdims, err)) ||
        (rc = shp_attr_int(n, "noop_with_empty_axes", 0, &noop, err)) ||
        (rc = shp_axes_input(n, axes, &n_axes, &known, &present, err)))
        return rc;
    if (!known) {
        /* Axes known only at run time: with keepdims the rank survives; without, it drops by
         * the number of axes when that is known (and not 0, which means all or none). */
        int64_t len = shp_len_1d(shp_in(n, 1));
        if (shp_ranked(x) && keepdims)
            shp_set_rank(n->outputs[0], x->dtype, x->shape.rank);
        else if (shp_ranked(x) && len > 0 && len <= x->shape.rank)
            shp_set_rank(n->outputs[0], x->dtype, x->shape.rank - (int)len);
        else
            shp_all_unknown(n);
        return 0;
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
    if ((rc = shp_axes_mask(n, axes, n_axes, rank, reduce, err)))
        return rc;
    if (n_axes == 0) {
        if (noop) {
            shp_set(n->outputs[0], x->dtype, &x->shape);
            return 0;
        }
        for (int i = 0; i < rank; i++)
            reduce[i] = true;
    }
    bd_shape s = shp_drop_dims(&x->shape, reduce, keepdims != 0);
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* ArgMax / ArgMin: INT64 indices, X's shape with `axis` (default 0) reduced (kept as 1 with
 * keepdims, the default). */
int shp_argreduce(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
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
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    bool reduce[BD_MAX_RANK] = { false };
    reduce[ax] = true;
    bd_shape s = shp_drop_dims(&x->shape, reduce, keepdims != 0);
    shp_set(n->outputs[0], BD_DT_INT64, &s);
    return 0;
}

/* CumSum(x, axis): X's shape and dtype; AXIS is a 0-D (or 1-element 1-D) INT32/INT64 tensor,
 * checked against X's rank when it is a constant. */
int shp_cumsum(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *av = shp_in(n, 1);
    int64_t exclusive, reverse;
    if ((rc = shp_attr_int(n, "exclusive", 0, &exclusive, err)) ||
        (rc = shp_attr_int(n, "reverse", 0, &reverse, err)))
        return rc;
    if (av->dtype != BD_DT_INT64 && av->dtype != BD_DT_INT32 && av->dtype != BD_DT_UNDEFINED)
        return shp_fail(err, n, "axis '%s' must be INT32 or INT64, got %s", av->name,
                        bd_dtype_name(av->dtype));
    if (shp_ranked(av)) {
        int64_t count;
        if ((rc = shp_numel(n, &av->shape, &count, err)))
            return rc;
        if (av->shape.rank > 1 || (count >= 0 && count != 1))
            return shp_fail(err, n, "axis '%s' must be a scalar", av->name);
    }
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (shp_is_int_const(av)) {
        int ax;
        if ((rc = shp_axis_of(n, "input", x, shp_const_at(av, 0), &ax, err)))
            return rc;
    }
    return shp_pass_through(n);
}
