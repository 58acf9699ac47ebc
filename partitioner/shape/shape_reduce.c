/* Reductions (ReduceMean, ReduceSum, ReduceMax, ...): axes from the attribute, or from a
 * constant second input (ReduceSum from opset 13); keepdims; noop_with_empty_axes. */
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
        /* Axes known only at run time: with keepdims the rank survives. */
        if (shp_ranked(x) && keepdims) {
            bd_shape s = shp_dynamic(x->shape.rank);
            shp_set(n->outputs[0], x->dtype, &s);
        } else
            shp_all_unknown(n);
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
    if (!shp_ranked(x))
        return shp_all_unknown(n);
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
