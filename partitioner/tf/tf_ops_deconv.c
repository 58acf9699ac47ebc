/* Conv2DBackpropInput (a transposed convolution, what Keras' Conv2DTranspose freezes to) as
 * ONNX ConvTranspose between two Transposes (braid's ConvTranspose is NCHW with an
 * [in, out, kH, kW] weight).
 *
 * TensorFlow gives the result's size (input_sizes, constant) and the forward convolution's
 * padding; the transposed conv reproduces it with explicit pads: the forward pad total
 * max((I-1)·s + (k-1)·d + 1 - O, 0) split with the odd pixel at the end (SAME) or 0 (VALID),
 * and output_padding for the rows the forward conv's floor division dropped. The filter
 * [kH, kW, out_channels, in_channels] is transposed once at load to [in, out, kH, kW].
 *
 * When input_sizes is computed (Keras' Conv2DTranspose packs it from the input's shape), the
 * size is taken to be Keras' own: O = I·s under SAME, I·s + max(k_eff − s, 0) under VALID,
 * for which pads and output_padding do not depend on I; a Reshape to the computed sizes then
 * makes shape inference (which folds them) refuse any model where that guess is wrong. */
#include "partitioner/tf/tf_mapkit.h"
#include "partitioner/tf/tf_ops.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int map_conv2d_backprop_input(tf_mapctx *m, bd_error *err)
{
    int64_t sizes[4];
    size_t ns;
    if (m->n_in != 3)
        return TF_DECLINE;
    bool computed = !tf_const_ints(m->in[0], sizes, 4, &ns);
    if (!computed && ns != 4)
        return TF_DECLINE;
    const bd_value *f = m->in[1];
    if (!f->data || f->dtype != BD_DT_FLOAT || f->shape.rank != 4 || !bd_shape_is_static(&f->shape))
        return TF_DECLINE;
    const tf_attr *df = tf_view_attr(m->v, "data_format");
    if (df && !tf_a_s_is(m->v, "data_format", "NHWC"))
        return TF_DECLINE;
    size_t n_st, n_dil;
    const int64_t *st = tf_a_ints(m->v, "strides", &n_st), *dil = tf_a_ints(m->v, "dilations", &n_dil);
    if ((st && n_st != 4) || (dil && n_dil != 4))
        return TF_DECLINE;
    bool same = tf_a_s_is(m->v, "padding", "SAME");
    if (!same && !tf_a_s_is(m->v, "padding", "VALID"))
        return TF_DECLINE;
    int64_t kh = f->shape.dims[0], kw = f->shape.dims[1], cout = f->shape.dims[2], cin = f->shape.dims[3];
    if (kh < 1 || kw < 1 || cout < 1 || cin < 1 || kh > 4096 || kw > 4096 || cout > (1 << 20) ||
        cin > (1 << 20) || (!computed && sizes[3] != cout) ||
        (uint64_t)kh * (uint64_t)kw * (uint64_t)cout * (uint64_t)cin * 4 != f->nbytes)
        return TF_DECLINE;
    int64_t k[2] = { kh, kw }, s[2], d[2], pads[4], opad[2];
    for (int i = 0; i < 2; i++) {
        s[i] = st ? st[1 + i] : 1;
        d[i] = dil ? dil[1 + i] : 1;
        if (s[i] < 1 || s[i] > 1024 || d[i] < 1 || d[i] > 1024)
            return TF_DECLINE;
        int64_t ke = (k[i] - 1) * d[i] + 1;
        if (computed) {
            int64_t total = same && ke > s[i] ? ke - s[i] : 0;
            pads[i] = total / 2;
            pads[2 + i] = total - total / 2;
            opad[i] = s[i] > ke ? s[i] - ke : 0;
            continue;
        }
        int64_t o = sizes[1 + i];
        if (o < 1 || o > (1 << 24))
            return TF_DECLINE;
        int64_t in = same ? (o + s[i] - 1) / s[i] : (o - ke) / s[i] + 1;
        if (in < 1)
            return TF_DECLINE;
        int64_t total = same ? (in - 1) * s[i] + ke - o : 0;
        if (total < 0)
            total = 0;
        pads[i] = total / 2;
        pads[2 + i] = total - total / 2;
        opad[i] = o - ((in - 1) * s[i] + ke - total);
        if (opad[i] < 0 || opad[i] >= s[i])
            return TF_DECLINE;
    }
    /* [kH, kW, out, in] -> [in, out, kH, kW] */
    size_t count = (size_t)(kh * kw * cout * cin);
    float *w = malloc(count * sizeof *w);
    if (!w)
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
    const float *src = f->data;
    for (int64_t y = 0; y < kh; y++)
        for (int64_t x = 0; x < kw; x++)
            for (int64_t o = 0; o < cout; o++)
                for (int64_t c = 0; c < cin; c++) {
                    float v;
                    memcpy(&v, src + ((y * kw + x) * cout + o) * cin + c, sizeof v);
                    w[((c * cout + o) * kh + y) * kw + x] = v;
                }
    bd_shape ws = { .rank = 4, .dims = { cin, cout, kh, kw } };
    bd_value *wv = tf_emit_const(m, "weight", BD_DT_FLOAT, &ws, w, count * sizeof *w, err);
    free(w);
    if (!wv)
        return tf_rc(err);
    static const int64_t to_nchw[4] = { 0, 3, 1, 2 }, to_nhwc[4] = { 0, 2, 3, 1 };
    bd_node *n = NULL;
    bd_value *x = tf_op(m, "nchw", "Transpose", &m->in[2], 1, NULL, &n, err);
    if (!x || tf_set_ints(m, n, "perm", to_nchw, 4, err))
        return tf_rc(err);
    bd_value *ins[2] = { x, wv };
    bd_value *y = tf_op(m, "deconv", "ConvTranspose", ins, 2, NULL, &n, err);
    if (!y || tf_set_ints(m, n, "kernel_shape", k, 2, err) || tf_set_ints(m, n, "strides", s, 2, err) ||
        tf_set_ints(m, n, "dilations", d, 2, err) || tf_set_ints(m, n, "pads", pads, 4, err) ||
        ((opad[0] || opad[1]) && tf_set_ints(m, n, "output_padding", opad, 2, err)))
        return tf_rc(err);
    if (!tf_op(m, computed ? "nhwc" : NULL, "Transpose", &y, 1, computed ? NULL : m->out, &n, err) ||
        tf_set_ints(m, n, "perm", to_nhwc, 4, err))
        return tf_rc(err);
    if (!computed)
        return 0;
    bd_value *sz = tf_cast(m, "sizes", m->in[0], BD_DT_INT64, NULL, err);
    bd_value *ins2[2] = { n->outputs[0], sz };
    if (!sz || !tf_op(m, NULL, "Reshape", ins2, 2, m->out, &n, err))
        return tf_rc(err);
    return tf_set_int(m, n, "allowzero", 1, err);
}

const tf_op_entry tf_deconv_ops[] = {
    { "Conv2DBackpropInput", map_conv2d_backprop_input, 0 },
    { NULL, NULL, 0 },
};
