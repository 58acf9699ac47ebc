/* Pad: pads as an attribute (opset < 11) or a constant INT64 input [begins..., ends...]
 * (opset >= 11), optionally restricted to `axes` (opset 18). Negative pads crop. */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

int shp_pad(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *pv = shp_in(n, 1), *av = shp_in(n, 3);
    const char *mode = bd_node_attr_string(n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") &&
        strcmp(mode, "wrap"))
        return shp_fail(err, n, "attribute 'mode' is '%s', expected constant, reflect, edge or wrap",
                        mode);
    int64_t pads[2 * BD_MAX_RANK], axes[BD_MAX_RANK];
    size_t np = 0, na = 0;
    if (pv) {
        if (!shp_is_const(pv)) {
            /* Run-time pads: the rank survives. */
            if (!shp_ranked(x))
                return shp_all_unknown(n);
            shp_set_rank(n->outputs[0], x->dtype, x->shape.rank);
            return 0;
        }
        if ((rc = shp_const_ints(n, "pads", pv, pads, 2 * BD_MAX_RANK, &np, err)))
            return rc;
    } else {
        const int64_t *vals;
        if ((rc = shp_attr_ints(n, "pads", &vals, &np, err)))
            return rc;
        if (!vals)
            return shp_fail(err, n, "the pads are required (input 1 or attribute 'pads')");
        if (np > 2 * BD_MAX_RANK)
            return shp_fail(err, n, "attribute 'pads' has %zu values, more than any rank", np);
        memcpy(pads, vals, sizeof *pads * np);
    }
    if (av && (rc = shp_const_ints(n, "axes", av, axes, BD_MAX_RANK, &na, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int rank = x->shape.rank;
    if (!av) {
        na = (size_t)rank;
        for (int i = 0; i < rank; i++)
            axes[i] = i;
    }
    if (np != 2 * na)
        return shp_fail(err, n, "pads has %zu values, expected %zu (begin and end per axis)", np,
                        2 * na);
    bd_shape s = x->shape;
    bool seen[BD_MAX_RANK] = { false };
    for (size_t k = 0; k < na; k++) {
        int ax;
        if ((rc = shp_axis(n, "axis", axes[k], rank, &ax, err)))
            return rc;
        if (seen[ax])
            return shp_fail(err, n, "axis %d is listed twice", ax);
        seen[ax] = true;
        int64_t d = x->shape.dims[ax], b = pads[k], e = pads[na + k];
        if (d < 0 || (b == 0 && e == 0))
            continue;
        if (__builtin_add_overflow(d, b, &d) || __builtin_add_overflow(d, e, &d) || d < 0)
            return shp_fail(err, n, "pads %lld, %lld on axis %d of size %lld give an invalid size",
                            (long long)b, (long long)e, ax, (long long)x->shape.dims[ax]);
        s.dims[ax] = d;
        s.sym[ax]  = NULL;
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
