/* Conv and pooling: window geometry (kernel, strides, dilations, pads, auto_pad,
 * ceil_mode) and the output shapes it implies. */
#include "partitioner/shape/shape_conv.h"
#include "partitioner/shape/shape_rules.h"

#include <string.h>

int shp_window_attr(const bd_node *n, const char *name, size_t want, int64_t min,
                    int64_t dflt, int64_t *out, bool *present, bd_error *err)
{
    const int64_t *vals;
    size_t count;
    int rc = shp_attr_ints(n, name, &vals, &count, err);
    if (rc)
        return rc;
    if (present)
        *present = vals != NULL;
    if (!vals) {
        for (size_t i = 0; i < want; i++)
            out[i] = dflt;
        return 0;
    }
    if (count != want)
        return shp_fail(err, n, "attribute '%s' has %zu values, expected %zu", name, count, want);
    for (size_t i = 0; i < want; i++) {
        if (vals[i] < min)
            return shp_fail(err, n, "attribute '%s'[%zu] = %lld, expected >= %lld", name, i,
                            (long long)vals[i], (long long)min);
        out[i] = vals[i];
    }
    return 0;
}

int shp_auto_pad(const bd_node *n, int *mode, bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, "auto_pad");
    *mode = SHP_PAD_NOTSET;
    if (!a)
        return 0;
    if (a->type != BD_ATTR_STRING || !a->s)
        return shp_fail(err, n, "attribute 'auto_pad' must be a STRING");
    static const char *const names[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" };
    if (a->s[0] == '\0')
        return 0;
    for (int i = 0; i < 4; i++)
        if (strcmp(a->s, names[i]) == 0) {
            *mode = i;
            return 0;
        }
    return shp_fail(err, n, "attribute 'auto_pad' is '%s', expected NOTSET, SAME_UPPER, "
                    "SAME_LOWER or VALID", a->s);
}

/* Output size of one spatial dim; fills the resolved pads. */
static int window_dim(const bd_node *n, int i, int mode, int64_t in, bd_window *w, bd_error *err)
{
    int64_t k = w->kernel[i], s = w->strides[i], d = w->dilations[i], dk, pb, pe, padded;
    w->out[i] = -1;
    if (k < 0)                              /* kernel unknown (dynamic weight) */
        return 0;
    if (__builtin_mul_overflow(k - 1, d, &dk) || __builtin_add_overflow(dk, 1, &dk))
        return shp_fail(err, n, "dilated kernel of spatial dim %d overflows", i);
    if (in < 0) {
        if (mode != SHP_PAD_NOTSET)
            w->pad_begin[i] = w->pad_end[i] = 0;
        return 0;
    }
    switch (mode) {
    case SHP_PAD_SAME_UPPER:
    case SHP_PAD_SAME_LOWER: {
        int64_t out = in / s + (in % s != 0), total;
        if (__builtin_mul_overflow(out > 0 ? out - 1 : 0, s, &total) ||
            __builtin_add_overflow(total, dk, &total))
            return shp_fail(err, n, "padding of spatial dim %d overflows", i);
        total = total > in ? total - in : 0;
        w->pad_begin[i] = mode == SHP_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        w->pad_end[i]   = total - w->pad_begin[i];
        w->out[i] = out;
        return 0;
    }
    case SHP_PAD_VALID:
        w->pad_begin[i] = w->pad_end[i] = 0;
        break;
    default:
        break;
    }
    pb = w->pad_begin[i];
    pe = w->pad_end[i];
    if (__builtin_add_overflow(in, pb, &padded) || __builtin_add_overflow(padded, pe, &padded))
        return shp_fail(err, n, "padded size of spatial dim %d overflows", i);
    if (padded < dk)
        return shp_fail(err, n, "window %lld (kernel %lld, dilation %lld) is larger than the "
                        "padded input %lld in spatial dim %d", (long long)dk, (long long)k,
                        (long long)d, (long long)padded, i);
    int64_t span = padded - dk, out = span / s + 1;
    if (w->ceil_mode && mode == SHP_PAD_NOTSET && span % s != 0) {
        out++;
        /* As PyTorch and oneDNN: the last window must start inside the input or left pad. */
        int64_t start;
        if (__builtin_mul_overflow(out - 1, s, &start) || start >= in + pb)
            out--;
    }
    w->out[i] = out;
    return 0;
}

int bd_window_resolve(const bd_node *n, const bd_shape *x, const bd_shape *wt, bd_window *w,
                      bd_error *err)
{
    memset(w, 0, sizeof *w);
    if (x->rank < 3 || x->rank > BD_MAX_RANK)
        return shp_fail(err, n, "input must have rank 3 to %d (N, C, spatial...), got %d",
                        BD_MAX_RANK, x->rank);
    int ns = x->rank - 2, rc, mode;
    size_t uns = (size_t)ns;
    bool has_kernel;
    int64_t ceil_mode;
    w->n_spatial = ns;
    if ((rc = shp_window_attr(n, "kernel_shape", uns, 1, -1, w->kernel, &has_kernel, err)) ||
        (rc = shp_window_attr(n, "strides", uns, 1, 1, w->strides, NULL, err)) ||
        (rc = shp_window_attr(n, "dilations", uns, 1, 1, w->dilations, NULL, err)) ||
        (rc = shp_auto_pad(n, &mode, err)) ||
        (rc = shp_attr_int(n, "ceil_mode", 0, &ceil_mode, err)))
        return rc;
    int64_t pads[2 * BD_MAX_SPATIAL];
    if ((rc = shp_window_attr(n, "pads", 2 * uns, 0, 0, pads, NULL, err)))
        return rc;
    for (int i = 0; i < ns; i++) {
        w->pad_begin[i] = pads[i];
        w->pad_end[i]   = pads[ns + i];
    }
    w->ceil_mode = ceil_mode != 0;
    if (wt) {
        if (wt->rank >= 0 && wt->rank != x->rank) {
            char bx[96], bw[96];
            return shp_fail(err, n, "weight %s must have the rank of input %s",
                            shp_str(wt, bw, sizeof bw), shp_str(x, bx, sizeof bx));
        }
        for (int i = 0; i < ns; i++) {
            int64_t kw = wt->rank >= 0 ? wt->dims[2 + i] : -1;
            if (has_kernel && kw >= 0 && kw != w->kernel[i])
                return shp_fail(err, n, "kernel_shape[%d] = %lld but the weight's kernel is %lld",
                                i, (long long)w->kernel[i], (long long)kw);
            if (!has_kernel)
                w->kernel[i] = kw;
        }
    } else if (!has_kernel) {
        return shp_fail(err, n, "attribute 'kernel_shape' is required");
    }
    for (int i = 0; i < ns; i++)
        if ((rc = window_dim(n, i, mode, x->dims[2 + i], w, err)))
            return rc;
    return 0;
}

int shp_conv(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *wv = shp_in(n, 1), *b = shp_in(n, 2);
    int64_t group;
    bool last;
    if ((rc = shp_attr_int(n, "group", 1, &group, err)) || (rc = shp_channels_last(n, &last, err)))
        return rc;
    if (group < 1)
        return shp_fail(err, n, "attribute 'group' = %lld, expected >= 1", (long long)group);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    /* NHWC data and HWIO/HWCM filters are reasoned about in ONNX's order */
    bd_shape xcf, wcf;
    shp_to_channels_first(&x->shape, &xcf);
    if (shp_ranked(wv) && (rc = shp_filter_oihw(n, &wv->shape, &wcf, err)))
        return rc;
    const bd_shape *xs = last ? &xcf : &x->shape, *ws = shp_ranked(wv) ? &wcf : NULL;
    bd_window win;
    bd_shape unranked = { .rank = -1 };
    if ((rc = bd_window_resolve(n, xs, ws ? ws : &unranked, &win, err)))
        return rc;
    int64_t c = xs->dims[1], m = ws ? ws->dims[0] : -1, cg = ws ? ws->dims[1] : -1;
    if (m >= 0 && m % group != 0)
        return shp_fail(err, n, "%lld output channels are not divisible by group %lld",
                        (long long)m, (long long)group);
    if (c >= 0 && cg >= 0) {
        int64_t want;
        if (!shp_mul(cg, group, &want) || want != c)
            return shp_fail(err, n, "input '%s' has %lld channels but weight '%s' expects "
                            "%lld per group x %lld groups", x->name, (long long)c, wv->name,
                            (long long)cg, (long long)group);
    }
    if (b && shp_ranked(b)) {
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
    for (int i = 0; i < win.n_spatial; i++)
        s.dims[2 + i] = win.out[i];
    if (last)
        shp_to_channels_last(&s, &s);
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* MaxPool (optional INT64 Indices output) and AveragePool: channels pass through. */
int shp_pool(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    bool last;
    if ((rc = shp_channels_last(n, &last, err)))
        return rc;
    if (!shp_ranked(x)) {
        shp_all_unknown(n);
        if (n->n_outputs > 1)
            n->outputs[1]->dtype = BD_DT_INT64;
        return 0;
    }
    bd_window win;
    bd_shape s;
    shp_to_channels_first(&x->shape, &s);
    if ((rc = bd_window_resolve(n, last ? &s : &x->shape, NULL, &win, err)))
        return rc;
    if (!last)
        s = x->shape;
    for (int i = 0; i < win.n_spatial; i++) {
        s.dims[2 + i] = win.out[i];
        s.sym[2 + i]  = NULL;
    }
    if (last)
        shp_to_channels_last(&s, &s);
    shp_set(n->outputs[0], x->dtype, &s);
    if (n->n_outputs > 1)
        shp_set(n->outputs[1], BD_DT_INT64, &s);
    return 0;
}

/* GlobalAveragePool / GlobalMaxPool: every spatial dim becomes 1 (NHWC: dims 1..rank-2). */
int shp_global_pool(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    bool last;
    if ((rc = shp_channels_last(n, &last, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank < 3)
        return shp_fail(err, n, "input '%s' must have rank >= 3 (N, C, spatial...), got %d",
                        x->name, x->shape.rank);
    bd_shape s = x->shape;
    for (int i = last ? 1 : 2; i < (last ? s.rank - 1 : s.rank); i++) {
        s.dims[i] = 1;
        s.sym[i]  = NULL;
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
