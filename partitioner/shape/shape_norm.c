/* Normalisations: Softmax / LogSoftmax, LayerNormalization, BatchNormalization. */
#include "partitioner/shape/shape_rules.h"

/* Softmax keeps its shape; the axis default moved from 1 to -1 in opset 13. */
int shp_softmax(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t opset = bd_graph_opset(g), axis;
    if ((rc = shp_attr_int(n, "axis", opset > 0 && opset < 13 ? 1 : -1, &axis, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    shp_set(n->outputs[0], x->dtype, &x->shape);
    return 0;
}

/* Check that 1-D per-channel input I of N has C elements. */
static int per_channel(const bd_node *n, size_t i, const char *what, int64_t c, bd_error *err)
{
    bd_value *v = shp_in(n, i);
    if (!shp_ranked(v))
        return 0;
    if (v->shape.rank != 1)
        return shp_fail(err, n, "%s '%s' must be 1-D, got rank %d", what, v->name, v->shape.rank);
    if (c >= 0 && v->shape.dims[0] >= 0 && v->shape.dims[0] != c)
        return shp_fail(err, n, "%s '%s' has %lld values for %lld channels", what, v->name,
                        (long long)v->shape.dims[0], (long long)c);
    return 0;
}

/* Y has X's shape; the optional training outputs (running mean/var) are [C] (C last for
 * data_format NHWC). */
int shp_batchnorm(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    bool last;
    if ((rc = shp_channels_last(n, &last, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2 (N, C, ...), got %d", x->name,
                        x->shape.rank);
    int64_t c = x->shape.dims[last ? x->shape.rank - 1 : 1];
    static const char *const what[] = { "scale", "B", "mean", "var" };
    for (size_t i = 1; i < 5; i++)
        if ((rc = per_channel(n, i, what[i - 1], c, err)))
            return rc;
    shp_set(n->outputs[0], x->dtype, &x->shape);
    bd_shape cs = shp_dynamic(1);
    cs.dims[0] = c;
    for (size_t k = 1; k < n->n_outputs; k++)
        shp_set(n->outputs[k], x->dtype, &cs);
    return 0;
}

/* Y has X's shape; optional Mean / InvStdDev keep dims before AXIS and are 1 from AXIS on.
 * Scale (and bias) must broadcast to X's trailing dims from AXIS. */
int shp_layernorm(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", -1, &axis, err)))
        return rc;
    if (!shp_ranked(x)) {
        shp_all_unknown(n);
        for (size_t k = 1; k < n->n_outputs; k++)
            n->outputs[k]->dtype = BD_DT_FLOAT;
        return 0;
    }
    int ax;
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    bd_shape norm = x->shape;              /* the normalised trailing dims */
    norm.rank = x->shape.rank - ax;
    for (int i = 0; i < norm.rank; i++) {
        norm.dims[i] = x->shape.dims[ax + i];
        norm.sym[i]  = x->shape.sym[ax + i];
    }
    for (size_t i = 1; i < 3; i++) {
        bd_value *p = shp_in(n, i);
        if (!shp_ranked(p))
            continue;
        bd_shape bs;
        if (p->shape.rank > norm.rank || (rc = shp_broadcast(n, &norm, &p->shape, &bs, err)) ||
            bs.rank != norm.rank) {
            char sp[96], sn[96];
            bd_error_clear(err);
            return shp_fail(err, n, "%s '%s' %s does not match the normalised dims %s",
                            i == 1 ? "scale" : "bias", p->name, shp_str(&p->shape, sp, sizeof sp),
                            shp_str(&norm, sn, sizeof sn));
        }
        for (int k = 0; k < norm.rank; k++)
            if (norm.dims[k] >= 0 && bs.dims[k] != norm.dims[k]) {
                char sp[96], sn[96];
                return shp_fail(err, n, "%s '%s' %s does not match the normalised dims %s",
                                i == 1 ? "scale" : "bias", p->name,
                                shp_str(&p->shape, sp, sizeof sp), shp_str(&norm, sn, sizeof sn));
            }
    }
    shp_set(n->outputs[0], x->dtype, &x->shape);
    bd_shape stat = x->shape;
    for (int i = ax; i < stat.rank; i++) {
        stat.dims[i] = 1;
        stat.sym[i]  = NULL;
    }
    /* The statistics' type is stash_type (default FLOAT). */
    int64_t stash;
    if ((rc = shp_attr_int(n, "stash_type", BD_DT_FLOAT, &stash, err)))
        return rc;
    if (stash < 1 || stash > BD_DT_BFLOAT16 || bd_dtype_size((int)stash) == 0)
        return shp_fail(err, n, "attribute 'stash_type' = %lld is not a numeric type",
                        (long long)stash);
    for (size_t k = 1; k < n->n_outputs; k++)
        shp_set(n->outputs[k], (int)stash, &stat);
    return 0;
}

/* LRN: Y has X's shape ([N, C, spatial...]); 'size' (required) is the window over channels. */
int shp_lrn(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t size;
    float alpha, beta, bias;
    if (!bd_node_attr(n, "size"))
        return shp_fail(err, n, "attribute 'size' is required");
    if ((rc = shp_attr_int(n, "size", 1, &size, err)) ||
        (rc = shp_attr_float(n, "alpha", 1e-4f, &alpha, err)) ||
        (rc = shp_attr_float(n, "beta", 0.75f, &beta, err)) ||
        (rc = shp_attr_float(n, "bias", 1.0f, &bias, err)))
        return rc;
    if (size < 1)
        return shp_fail(err, n, "attribute 'size' = %lld, expected >= 1", (long long)size);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2 (N, C, ...), got %d", x->name,
                        x->shape.rank);
    return shp_pass_through(n);
}

/* InstanceNormalization(input, scale, B): Y has X's shape [N, C, D1, ...]; scale and B are
 * [C]. */
int shp_instancenorm(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    float eps;
    if ((rc = shp_attr_float(n, "epsilon", 1e-5f, &eps, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank < 3)
        return shp_fail(err, n, "input '%s' must have rank >= 3 (N, C, D1, ...), got %d",
                        x->name, x->shape.rank);
    if ((rc = per_channel(n, 1, "scale", x->shape.dims[1], err)) ||
        (rc = per_channel(n, 2, "B", x->shape.dims[1], err)))
        return rc;
    return shp_pass_through(n);
}

/* MeanVarianceNormalization: Y has X's shape; 'axes' (default [0, 2, 3]) must name X's dims. */
int shp_mvn(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    static const int64_t dflt[] = { 0, 2, 3 };
    const int64_t *axes;
    size_t count;
    if ((rc = shp_attr_ints(n, "axes", &axes, &count, err)))
        return rc;
    if (!axes) {
        axes  = dflt;
        count = 3;
    }
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    bool mask[BD_MAX_RANK] = { false };
    if (count > BD_MAX_RANK)
        return shp_fail(err, n, "attribute 'axes' has %zu values, more than any rank", count);
    if ((rc = shp_axes_mask(n, axes, count, x->shape.rank, mask, err)))
        return rc;
    return shp_pass_through(n);
}

/* LpNormalization: Y has X's shape; 'axis' (default -1) names a dim of X, p is 1 or 2. */
int shp_lpnorm(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t axis, p;
    if ((rc = shp_attr_int(n, "axis", -1, &axis, err)) ||
        (rc = shp_attr_int(n, "p", 2, &p, err)))
        return rc;
    if (p != 1 && p != 2)
        return shp_fail(err, n, "attribute 'p' = %lld, expected 1 or 2", (long long)p);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    return shp_pass_through(n);
}
