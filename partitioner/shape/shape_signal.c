/* Signal processing: DFT (opset 17), STFT, the window generators (HannWindow, HammingWindow,
 * BlackmanWindow) and MelWeightMatrix. Their lengths come from scalar inputs: a constant one
 * gives the dim, a run-time one leaves it dynamic (the rank is always known). */
#include "partitioner/shape/shape_rules.h"

/* V is a constant scalar (or 1-element) integer: its value into *OUT. */
static bool const_scalar(const bd_value *v, int64_t *out)
{
    if (!v || !shp_is_int_const(v) || bd_shape_numel(&v->shape) != 1)
        return false;
    *out = shp_const_at(v, 0);
    return true;
}

/* The output_datatype attribute (default FLOAT), which must be a numeric dtype. */
static int out_datatype(const bd_node *n, int *dt, bd_error *err)
{
    int64_t v;
    int rc = shp_attr_int(n, "output_datatype", BD_DT_FLOAT, &v, err);
    if (rc)
        return rc;
    if (v < 1 || v > BD_DT_BFLOAT16 || v == BD_DT_STRING || v == BD_DT_BOOL ||
        bd_dtype_size((int)v) == 0)
        return shp_fail(err, n, "attribute 'output_datatype' = %lld is not a numeric type",
                        (long long)v);
    *dt = (int)v;
    return 0;
}

/* DFT(input [..., n, ..., 1 or 2], dft_length): the axis becomes dft_length (or the input's
 * length), halved plus one when onesided, and the last dim 2 (real, imaginary). */
int shp_dft(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, ax;
    int64_t axis, onesided, len;
    bd_value *x = shp_in(n, 0), *dl = shp_in(n, 1);
    if ((rc = shp_attr_int(n, "axis", 1, &axis, err)) ||
        (rc = shp_attr_int(n, "onesided", 0, &onesided, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int r = x->shape.rank;
    if (r < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2 ([..., 1 or 2]), got %d",
                        x->name, r);
    if ((rc = shp_axis(n, "axis", axis, r, &ax, err)))
        return rc;
    if (ax == r - 1)
        return shp_fail(err, n, "axis %lld is the complex dim", (long long)axis);
    int64_t c = x->shape.dims[r - 1];
    if (c >= 0 && c != 1 && c != 2)
        return shp_fail(err, n, "the last dim of input '%s' is %lld, expected 1 or 2", x->name,
                        (long long)c);
    bd_shape s = x->shape;
    if (dl && !const_scalar(dl, &len))
        len = -1;
    else if (!dl)
        len = x->shape.dims[ax];
    if (dl && len == 0)
        return shp_fail(err, n, "dft_length is 0");
    if (len >= 0 && onesided)
        len = len / 2 + 1;
    if (len != s.dims[ax])
        s.sym[ax] = NULL;
    s.dims[ax] = len < 0 ? -1 : len;
    s.dims[r - 1] = 2;
    s.sym[r - 1] = NULL;
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* STFT(signal [B, L, 1 or 2], frame_step, window [W], frame_length): [B, frames, bins, 2],
 * frames = 1 + (L - frame_length) / frame_step, bins = frame_length (/ 2 + 1 when onesided,
 * the default). frame_length defaults to the window's length, then to L. */
int shp_stft(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    int64_t onesided, step = -1, frame = -1;
    bd_value *x = shp_in(n, 0), *fs = shp_in(n, 1), *w = shp_in(n, 2), *fl = shp_in(n, 3);
    if ((rc = shp_attr_int(n, "onesided", 1, &onesided, err)) ||
        (rc = shp_expect_rank(n, "signal", x, 3, err)) ||
        (rc = shp_expect_rank(n, "window", w, 1, err)))
        return rc;
    bool step_known = const_scalar(fs, &step), frame_known = fl && const_scalar(fl, &frame);
    if (!fl && shp_ranked(w))
        frame = w->shape.dims[0];
    else if (!fl && !w && shp_ranked(x))
        frame = x->shape.dims[1];
    if ((step_known && step < 1) || (frame_known && frame < 1))
        return shp_fail(err, n, "frame_step %lld and frame_length %lld must be positive",
                        (long long)step, (long long)frame);
    bd_shape s = shp_dynamic(4);
    int64_t len = shp_ranked(x) ? x->shape.dims[1] : -1;
    if (shp_ranked(x)) {
        s.dims[0] = x->shape.dims[0];
        s.sym[0] = x->shape.sym[0];
    }
    if (len >= 0 && step >= 1 && frame >= 1) {
        if (frame > len)
            return shp_fail(err, n, "frame_length %lld is longer than the signal's %lld",
                            (long long)frame, (long long)len);
        s.dims[1] = 1 + (len - frame) / step;
    }
    if (frame >= 1)
        s.dims[2] = onesided ? frame / 2 + 1 : frame;
    s.dims[3] = 2;
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* HannWindow, HammingWindow, BlackmanWindow(size): [size] of output_datatype. */
int shp_window(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, dt;
    int64_t size = -1;
    if ((rc = out_datatype(n, &dt, err)))
        return rc;
    if (const_scalar(shp_in(n, 0), &size) && size < 0)
        return shp_fail(err, n, "size %lld is negative", (long long)size);
    bd_shape s = shp_dynamic(1);
    s.dims[0] = size;
    shp_set(n->outputs[0], dt, &s);
    return 0;
}

/* MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
 * [dft_length / 2 + 1, num_mel_bins] of output_datatype. */
int shp_mel_weight(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, dt;
    int64_t mels = -1, dft = -1;
    if ((rc = out_datatype(n, &dt, err)))
        return rc;
    if ((const_scalar(shp_in(n, 0), &mels) && mels < 1) ||
        (const_scalar(shp_in(n, 1), &dft) && dft < 1))
        return shp_fail(err, n, "num_mel_bins %lld and dft_length %lld must be positive",
                        (long long)mels, (long long)dft);
    bd_shape s = shp_dynamic(2);
    s.dims[0] = dft >= 1 ? dft / 2 + 1 : -1;
    s.dims[1] = mels;
    shp_set(n->outputs[0], dt, &s);
    return 0;
}
