/* Resize: the output dims come from constant `sizes` (INT64) or `scales` (FLOAT, floor of
 * in * scale). Inputs: X, scales (opset 10); X, roi, scales, sizes (opset 11+, an empty tensor
 * or an omitted input means "not given"). `axes` (opset 18) restricts both to those axes; a
 * list of rank-2 values on an NHWC/NCHW image means its spatial dims (as TF's size input).
 * Upsample: X and scales (opset 9, read as Resize's opset-10 form), or X and the scales
 * attribute (opset 7). */
#include "partitioner/shape/shape_rules.h"

#include <math.h>
#include <string.h>

static bool given(const bd_value *v)
{
    return v && !(v->shape.rank == 1 && v->shape.dims[0] == 0);
}

/* Constant FLOAT scales of V into OUT (at most CAP); false when V is not such a constant. */
static bool const_floats(const bd_value *v, double *out, size_t cap, size_t *count)
{
    if (!shp_is_const(v) || v->dtype != BD_DT_FLOAT || v->shape.rank != 1 || v->shape.dims[0] < 0 ||
        (size_t)v->shape.dims[0] > cap || v->nbytes < (size_t)v->shape.dims[0] * sizeof(float))
        return false;
    *count = (size_t)v->shape.dims[0];
    for (size_t i = 0; i < *count; i++) {
        float f;
        memcpy(&f, (const char *)v->data + i * sizeof f, sizeof f);   /* may be unaligned */
        out[i] = f;
    }
    return true;
}

int shp_resize(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bool last;
    const int64_t *attr_axes;
    size_t n_axes;
    if ((rc = shp_channels_last(n, &last, err)) ||
        (rc = shp_attr_ints(n, "axes", &attr_axes, &n_axes, err)))
        return rc;
    const char *policy = bd_node_attr_string(n, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(policy, "stretch"))
        return shp_unsupported(err, n, "keep_aspect_ratio_policy '%s' is not supported", policy);
    bd_value *x = shp_in(n, 0);
    bd_value *scales = shp_n_inputs(n) == 2 ? shp_in(n, 1) : shp_in(n, 2), *sizes = shp_in(n, 3);
    if (!given(sizes))
        sizes = NULL;
    if (!given(scales))
        scales = NULL;
    if (!sizes && !scales)
        return shp_fail(err, n, "one of 'scales' and 'sizes' is required");
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int rank = x->shape.rank;
    bd_shape s = x->shape;
    if ((sizes && !shp_is_const(sizes)) || (!sizes && !shp_is_const(scales))) {
        shp_set_rank(n->outputs[0], x->dtype, rank);   /* run-time target: the rank survives */
        return 0;
    }
    int64_t ivals[BD_MAX_RANK];
    double fvals[BD_MAX_RANK];
    size_t count;
    if (sizes) {
        if ((rc = shp_const_ints(n, "sizes", sizes, ivals, BD_MAX_RANK, &count, err)))
            return rc;
    } else if (!const_floats(scales, fvals, BD_MAX_RANK, &count)) {
        return shp_fail(err, n, "scales '%s' must be a 1-D FLOAT tensor of at most %d values",
                        scales->name, BD_MAX_RANK);
    }
    int axes[BD_MAX_RANK];
    if (attr_axes) {
        if (n_axes != count)
            return shp_fail(err, n, "%zu axes for %zu %s", n_axes, count, sizes ? "sizes" : "scales");
        for (size_t k = 0; k < n_axes; k++)
            if ((rc = shp_axis(n, "axis", attr_axes[k], rank, &axes[k], err)))
                return rc;
    } else if (count == (size_t)rank) {
        for (int k = 0; k < rank; k++)
            axes[k] = k;
    } else if (count == (size_t)rank - 2 && rank >= 3) {
        for (int k = 0; k < rank - 2; k++)
            axes[k] = last ? 1 + k : 2 + k;
    } else {
        return shp_fail(err, n, "%s has %zu values for an input of rank %d", sizes ? "sizes" : "scales",
                        count, rank);
    }
    for (size_t k = 0; k < count; k++) {
        int ax = axes[k];
        int64_t d;
        if (sizes) {
            d = ivals[k];
            if (d < 0)
                return shp_fail(err, n, "sizes[%zu] = %lld is negative", k, (long long)d);
        } else {
            if (!(fvals[k] > 0) || fvals[k] > 1e9)
                return shp_fail(err, n, "scales[%zu] = %g, expected a positive scale", k, fvals[k]);
            if (x->shape.dims[ax] < 0) {
                s.dims[ax] = -1;
                s.sym[ax]  = NULL;
                continue;
            }
            double o = floor((double)x->shape.dims[ax] * fvals[k]);
            if (o > 1e15)
                return shp_fail(err, n, "scaled size of axis %d overflows", ax);
            d = (int64_t)o;
        }
        if (d != s.dims[ax])
            s.sym[ax] = NULL;
        s.dims[ax] = d;
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* Upsample-7: one FLOAT scale per axis in the scales attribute, floor(in * scale). */
int shp_upsample(bd_graph *g, bd_node *n, bd_error *err)
{
    if (shp_n_inputs(n) == 2)
        return shp_resize(g, n, err);
    const bd_attr *a = bd_node_attr(n, "scales");
    if (!a || a->type != BD_ATTR_FLOATS)
        return shp_fail(err, n, "attribute 'scales' (FLOATS) is required without a scales input");
    bd_value *x = shp_in(n, 0);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (a->n != (size_t)x->shape.rank)
        return shp_fail(err, n, "attribute 'scales' has %zu values for an input of rank %d", a->n,
                        x->shape.rank);
    bd_shape s = x->shape;
    for (int k = 0; k < s.rank; k++) {
        double f = a->floats[k];
        if (!(f > 0) || f > 1e9)
            return shp_fail(err, n, "scales[%d] = %g, expected a positive scale", k, f);
        if (s.dims[k] < 0)
            continue;
        double o = floor((double)s.dims[k] * f);
        if (o > 1e15)
            return shp_fail(err, n, "scaled size of axis %d overflows", k);
        if ((int64_t)o != s.dims[k])
            s.sym[k] = NULL;
        s.dims[k] = (int64_t)o;
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
