/* Windows run backwards: ConvTranspose and MaxUnpool, whose spatial output grows from the
 * input by the window (kernel, strides, dilations, pads), unless an output shape is given. */
#include "partitioner/shape/shape_rules.h"

/* ---- ConvTranspose ------------------------------------------------------------------ */

/* Spatial output dim I of ConvTranspose: stride * (in - 1) + output_padding + (kernel - 1) *
 * dilation + 1 - pads, or in * stride under SAME_*; -1 when IN or the kernel is unknown. */
static int deconv_dim(const bd_node *n, int i, int mode, int64_t in, int64_t k, int64_t s,
                      int64_t d, int64_t op, int64_t pb, int64_t pe, int64_t *out, bd_error *err)
{
    int64_t v, dk;
    *out = -1;
    if (in < 0)
        return 0;
    if (mode == SHP_PAD_SAME_UPPER || mode == SHP_PAD_SAME_LOWER) {
        if (!shp_mul(in, s, out))
            return shp_fail(err, n, "spatial dim %d (%lld x stride %lld) overflows int64", i,
                            (long long)in, (long long)s);
        return 0;
    }
    if (k < 0)
        return 0;
    if (mode == SHP_PAD_VALID)
        pb = pe = 0;
    if (__builtin_mul_overflow(in - 1, s, &v) || __builtin_mul_overflow(k - 1, d, &dk) ||
        __builtin_add_overflow(dk, 1, &dk) || __builtin_add_overflow(v, dk, &v) || __builtin_add_overflow(v, op, &v) ||
        __builtin_sub_overflow(v, pb, &v) || __builtin_sub_overflow(v, pe, &v))
        return shp_fail(err, n, "output size of spatial dim %d overflows int64", i);
    if (v < 0)
        return shp_fail(err, n, "pads %lld, %lld leave spatial dim %d a negative size %lld",
                        (long long)pb, (long long)pe, i, (long long)v);
    *out = v;
    return 0;
}

/* ConvTranspose(X [N, C, D...], W [C, M/group, k...], B [M]): Y [N, M, D'...], D' from the
 * 'output_shape' attribute (the spatial dims, or all dims of which the spatial ones are used)
 * or from the window. */
int shp_conv_transpose(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, mode;
    bd_value *x = shp_in(n, 0), *wv = shp_in(n, 1), *b = shp_in(n, 2);
    int64_t group;
    const int64_t *oshape;
    size_t n_oshape;
    if ((rc = shp_attr_int(n, "group", 1, &group, err)) || (rc = shp_auto_pad(n, &mode, err)) ||
        (rc = shp_attr_ints(n, "output_shape", &oshape, &n_oshape, err)))
        return rc;
    if (group < 1)
        return shp_fail(err, n, "attribute 'group' = %lld, expected >= 1", (long long)group);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    const bd_shape *xs = &x->shape, *ws = shp_ranked(wv) ? &wv->shape : NULL;
    if (xs->rank < 3)
        return shp_fail(err, n, "input '%s' must have rank >= 3 (N, C, spatial...), got %d",
                        x->name, xs->rank);
    if (ws && ws->rank != xs->rank) {
        char bx[96], bw[96];
        return shp_fail(err, n, "weight %s must have the rank of input %s",
                        shp_str(ws, bw, sizeof bw), shp_str(xs, bx, sizeof bx));
    }
    int ns = xs->rank - 2;
    size_t uns = (size_t)ns;
    int64_t k[BD_MAX_RANK], st[BD_MAX_RANK], dil[BD_MAX_RANK], op[BD_MAX_RANK],
            pads[2 * BD_MAX_RANK];
    bool has_k;
    if ((rc = shp_window_attr(n, "kernel_shape", uns, 1, -1, k, &has_k, err)) ||
        (rc = shp_window_attr(n, "strides", uns, 1, 1, st, NULL, err)) ||
        (rc = shp_window_attr(n, "dilations", uns, 1, 1, dil, NULL, err)) ||
        (rc = shp_window_attr(n, "output_padding", uns, 0, 0, op, NULL, err)) ||
        (rc = shp_window_attr(n, "pads", 2 * uns, 0, 0, pads, NULL, err)))
        return rc;
    if (oshape && n_oshape != uns && n_oshape != uns + 2)
        return shp_fail(err, n, "attribute 'output_shape' has %zu values, expected %d (the "
                        "spatial dims)", n_oshape, ns);
    for (int i = 0; i < ns; i++) {
        int64_t kw = ws ? ws->dims[2 + i] : -1;
        if (has_k && kw >= 0 && kw != k[i])
            return shp_fail(err, n, "kernel_shape[%d] = %lld but the weight's kernel is %lld", i,
                            (long long)k[i], (long long)kw);
        if (!has_k)
            k[i] = kw;
        if (op[i] >= st[i] && op[i] >= dil[i])
            return shp_fail(err, n, "output_padding[%d] = %lld must be less than the stride "
                            "(%lld) or the dilation (%lld)", i, (long long)op[i],
                            (long long)st[i], (long long)dil[i]);
        if (oshape && oshape[n_oshape - uns + (size_t)i] < 0)
            return shp_fail(err, n, "output_shape[%zu] = %lld is negative",
                            n_oshape - uns + (size_t)i, (long long)oshape[n_oshape - uns + (size_t)i]);
    }
    /* Channels: X has C = W's dim 0, split into groups; Y has W's dim 1 x group. */
    int64_t c = xs->dims[1], wc = ws ? ws->dims[0] : -1, m = -1;
    if (c >= 0 && c % group != 0)
        return shp_fail(err, n, "%lld input channels are not divisible by group %lld",
                        (long long)c, (long long)group);
    if (c >= 0 && wc >= 0 && c != wc)
        return shp_fail(err, n, "input '%s' has %lld channels but weight '%s' has %lld",
                        x->name, (long long)c, wv->name, (long long)wc);
    if (ws && ws->dims[1] >= 0 && !shp_mul(ws->dims[1], group, &m))
        return shp_fail(err, n, "output channels %lld x group %lld overflow int64",
                        (long long)ws->dims[1], (long long)group);
    if (shp_ranked(b)) {
        if (b->shape.rank != 1)
            return shp_fail(err, n, "bias '%s' must be 1-D, got rank %d", b->name, b->shape.rank);
        if (m >= 0 && b->shape.dims[0] >= 0 && b->shape.dims[0] != m)
            return shp_fail(err, n, "bias '%s' has %lld values for %lld output channels",
                            b->name, (long long)b->shape.dims[0], (long long)m);
    }
    bd_shape s = shp_dynamic(xs->rank);
    s.dims[0] = xs->dims[0];
    s.sym[0]  = xs->sym[0];
    s.dims[1] = m;
    for (int i = 0; i < ns; i++) {
        if (oshape)
            s.dims[2 + i] = oshape[n_oshape - uns + (size_t)i];
        else if ((rc = deconv_dim(n, i, mode, xs->dims[2 + i], k[i], st[i], dil[i], op[i],
                                  pads[i], pads[ns + i], &s.dims[2 + i], err)))
            return rc;
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* ---- MaxUnpool ---------------------------------------------------------------------- */

/* MaxUnpool(X [N, C, D...], I, output_shape): [N, C, (D - 1) * stride - pads + kernel...], or
 * the output_shape input's dims when it is a constant (only its rank when it is not). I has
 * X's shape. */
int shp_max_unpool(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *idx = shp_in(n, 1), *osv = shp_in(n, 2), *out = n->outputs[0];
    const int64_t *kattr;
    size_t nk;
    if ((rc = shp_attr_ints(n, "kernel_shape", &kattr, &nk, err)) ||
        (rc = shp_check_dtype(n, "I", idx, BD_DT_INT64, err)))
        return rc;
    if (!kattr)
        return shp_fail(err, n, "attribute 'kernel_shape' is required");
    if (osv && (rc = shp_check_dtype(n, "output_shape", osv, BD_DT_INT64, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    const bd_shape *xs = &x->shape;
    if (xs->rank < 3)
        return shp_fail(err, n, "input '%s' must have rank >= 3 (N, C, spatial...), got %d",
                        x->name, xs->rank);
    int ns = xs->rank - 2;
    size_t uns = (size_t)ns;
    int64_t k[BD_MAX_RANK], st[BD_MAX_RANK], pads[2 * BD_MAX_RANK];
    if ((rc = shp_window_attr(n, "kernel_shape", uns, 1, 1, k, NULL, err)) ||
        (rc = shp_window_attr(n, "strides", uns, 1, 1, st, NULL, err)) ||
        (rc = shp_window_attr(n, "pads", 2 * uns, 0, 0, pads, NULL, err)))
        return rc;
    if (shp_ranked(idx)) {
        bool same = idx->shape.rank == xs->rank;
        for (int i = 0; same && i < xs->rank; i++)
            same = idx->shape.dims[i] < 0 || xs->dims[i] < 0 || idx->shape.dims[i] == xs->dims[i];
        if (!same) {
            char bi[96], bx[96];
            return shp_fail(err, n, "I '%s' %s must have the shape of X %s", idx->name,
                            shp_str(&idx->shape, bi, sizeof bi), shp_str(xs, bx, sizeof bx));
        }
    }
    if (osv) {
        if (shp_ranked(osv) && (osv->shape.rank != 1 ||
                                (osv->shape.dims[0] >= 0 && osv->shape.dims[0] != xs->rank)))
            return shp_fail(err, n, "output_shape '%s' must be 1-D with %d values", osv->name,
                            xs->rank);
        if (!shp_is_const(osv)) {
            shp_set_rank(out, x->dtype, xs->rank);
            return 0;
        }
        int64_t dims[BD_MAX_RANK];
        size_t len;
        if ((rc = shp_const_ints(n, "output_shape", osv, dims, BD_MAX_RANK, &len, err)))
            return rc;
        if (len != (size_t)xs->rank)
            return shp_fail(err, n, "output_shape '%s' has %zu values, expected %d", osv->name,
                            len, xs->rank);
        for (size_t i = 0; i < len; i++)
            if (dims[i] < 0)
                return shp_fail(err, n, "output_shape[%zu] = %lld is negative", i,
                                (long long)dims[i]);
        bd_shape s = bd_shape_make((int)len, dims);
        shp_set(out, x->dtype, &s);
        return 0;
    }
    bd_shape s = *xs;
    for (int i = 0; i < ns; i++) {
        int64_t in = xs->dims[2 + i], v;
        s.sym[2 + i] = NULL;
        if (in < 0) {
            s.dims[2 + i] = -1;
            continue;
        }
        if (__builtin_mul_overflow(in - 1, st[i], &v) || __builtin_add_overflow(v, k[i], &v) ||
            __builtin_sub_overflow(v, pads[i], &v) || __builtin_sub_overflow(v, pads[ns + i], &v))
            return shp_fail(err, n, "output size of spatial dim %d overflows int64", i);
        if (v < 0)
            return shp_fail(err, n, "pads leave spatial dim %d a negative size %lld", i,
                            (long long)v);
        s.dims[2 + i] = v;
    }
    shp_set(out, x->dtype, &s);
    return 0;
}
