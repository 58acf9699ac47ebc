/* Direct convolution cases where oneDNN does not take the node: Conv with fed weights and bias,
 * DOUBLE with groups and dilations, 1-D with SAME_UPPER and strides, 3-D; and where it does:
 * Winograd's two kernels, strided 1x1 convolutions (subsampled first), an RGB first layer;
 * ConvInteger with scalar and per-channel zero points; QLinearConv with a per-channel weight
 * scale and an INT32 bias. The reference walks every output, channel of its group and tap of its window;
 * the integer forms subtract the zero points first, QLinearConv then requantizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static void ref_conv_nd(const op_case *c, const tensor *in, tensor *out)
{
    bool ql = !strcmp(c->op, "QLinearConv");
    const tensor *x = &in[0], *w = &in[ql ? 3 : 1];
    bool integer = !strcmp(c->op, "ConvInteger") || ql;
    int ns = x->rank - 2;
    int64_t G = attr_i(c, "group", 1), C = x->dims[1], M = w->dims[0], cg = C / G, mg = M / G;
    int64_t s[6], d[6], pads[12], pb[6], ones[6] = { 1, 1, 1, 1, 1, 1 }, zeros[12] = { 0 };
    const int64_t *xs = x->dims + 2, *ks = w->dims + 2, *os = out->dims + 2;
    ints_or(c, "strides", ns, ones, s);
    ints_or(c, "dilations", ns, ones, d);
    ints_or(c, "pads", 2 * ns, zeros, pads);
    const char *ap = attr_s(c, "auto_pad", "NOTSET");
    for (int i = 0; i < ns; i++) {
        pb[i] = pads[i];
        if (!strncmp(ap, "SAME", 4)) {
            int64_t total = (os[i] - 1) * s[i] + (ks[i] - 1) * d[i] + 1 - xs[i];
            total = total > 0 ? total : 0;
            pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
        }
    }
    double xz = integer && c->n_in > 2 && !c->in[2].omitted ? in[2].f[0] : 0;
    const tensor *wzt = ql ? &in[5] : integer && c->n_in > 3 ? &in[3] : NULL;
    const tensor *bias = ql ? (c->n_in > 8 ? &in[8] : NULL) : !integer && c->n_in > 2 ? &in[2] : NULL;
    size_t taps = numel(ns, ks), plane_out = numel(ns, os), plane_in = numel(ns, xs);
    int64_t o[6], t[6], pos[6];
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t m = 0; m < M; m++) {
            double wz = wzt ? wzt->f[wzt->n == 1 ? 0 : m] : 0;
            for (size_t q = 0; q < plane_out; q++) {
                unravel(q, ns, os, o);
                double acc = bias ? bias->f[m] : 0;
                for (int64_t ci = 0; ci < cg; ci++)
                    for (size_t tq = 0; tq < taps; tq++) {
                        unravel(tq, ns, ks, t);
                        bool inside = true;
                        for (int i = 0; i < ns; i++) {
                            pos[i] = o[i] * s[i] - pb[i] + t[i] * d[i];
                            inside = inside && pos[i] >= 0 && pos[i] < xs[i];
                        }
                        if (!inside)
                            continue;
                        size_t xi = (size_t)(n * C + m / mg * cg + ci) * plane_in + ravel(pos, ns, xs);
                        size_t wi = (size_t)(m * cg + ci) * taps + tq;
                        acc += (x->f[xi] - xz) * (w->f[wi] - wz);
                    }
                if (ql) {                   /* requantize: scale in float, saturate, round */
                    float sc = (float)in[1].f[0] * (float)in[4].f[in[4].n == 1 ? 0 : m];
                    sc /= (float)in[6].f[0];
                    double v = acc * (double)sc + in[7].f[0];
                    double lo = out->dtype == INT8 ? -128 : 0, hi = out->dtype == INT8 ? 127 : 255;
                    acc = nearbyint(v < lo ? lo : v > hi ? hi : v);
                }
                put(out, (size_t)(n * M + m) * plane_out + q, acc, (int64_t)acc);
            }
        }
}

static const op_case k_cases[] = {
    /* Conv */
    { "conv_fed_weights_bias", "Conv", NULL, 3, { IN(1, 3, 6, 6), IN(4, 3, 3, 3), IN(4) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 4, 6, 6), ref_conv_nd },
    { "conv_f64_groups_dilated", "Conv", NULL, 2, { FED(F64, 2, 4, 7, 7), FED(F64, 6, 2, 3, 3) },
      { AI("group", 2), AINTS("dilations", 2, 2) }, OUTT(F64, 2, 6, 3, 3), ref_conv_nd,
      .skip = ORT_NO_KERNEL("Conv on DOUBLE") },
    { "conv_1d_same_upper_strided", "Conv", NULL, 2, { IN(1, 2, 9), IN(3, 2, 4) },
      { AINTS("strides", 2), AS("auto_pad", "SAME_UPPER") }, OUT(1, 3, 5), ref_conv_nd },
    { "conv_3d_fed", "Conv", NULL, 2, { IN(1, 2, 4, 4, 4), IN(2, 2, 2, 2, 2) }, NO_ATTR,
      OUT(1, 2, 3, 3, 3), ref_conv_nd },
    { "conv_fed_big_parallel", "Conv", NULL, 2, { IN(1, 8, 32, 32), IN(8, 8, 3, 3) }, NO_ATTR,
      OUT(1, 8, 30, 30), ref_conv_nd, .threads = 2 },
    /* 3x3, stride 1, 64 channels in and out: oneDNN runs it with its Winograd kernels */
    { "conv_3x3_64ch_winograd", "Conv", NULL, 3, { IN(1, 64, 12, 12), CST(F32, 64, 64, 3, 3), CST(F32, 64) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 64, 12, 12), ref_conv_nd },
    /* from 16 channels: F(4x4,3x3) on a 28x28 output whose 6x6 filters fit L2 (dnnl_conv.c),
     * F(2x2,3x3) under 13x13 */
    { "conv_3x3_16to64_winograd_4x4", "Conv", NULL, 3, { IN(1, 16, 28, 28), CST(F32, 64, 16, 3, 3), CST(F32, 64) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 64, 28, 28), ref_conv_nd },
    { "conv_3x3_48to96_winograd_2x2", "Conv", NULL, 3, { IN(1, 48, 12, 12), CST(F32, 96, 48, 3, 3), CST(F32, 96) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 96, 12, 12), ref_conv_nd },
    /* 1x1 with strides and no padding: oneDNN's backend picks the pixels with a pooling step,
     * then convolves at stride 1 (dnnl_conv.c); odd sizes, grouped, 1-D */
    { "conv_1x1_stride2_subsampled", "Conv", NULL, 3, { IN(1, 32, 9, 9), CST(F32, 48, 32, 1, 1), CST(F32, 48) },
      { AINTS("strides", 2, 2) }, OUT(1, 48, 5, 5), ref_conv_nd },
    { "conv_1x1_strides_3_1_grouped", "Conv", NULL, 2, { IN(1, 8, 7, 10), CST(F32, 8, 4, 1, 1) },
      { AI("group", 2), AINTS("strides", 3, 1) }, OUT(1, 8, 3, 10), ref_conv_nd },
    { "conv_1x1_1d_stride2", "Conv", NULL, 2, { IN(1, 4, 11), CST(F32, 6, 4, 1) },
      { AINTS("strides", 2) }, OUT(1, 6, 6), ref_conv_nd },
    /* a NaN among the picked pixels stays NaN */
    { "conv_1x1_stride2_nan", "Conv", NULL, 2, { FEDF(F32, VF(NAN, 1, 2, 3, 4, 5, 6, 7, 8, -1, -2,
      -3, -4, -5, -6, -7, -8, -9), 1, 2, 3, 3), CST(F32, 3, 2, 1, 1) }, { AINTS("strides", 2, 2) },
      OUT(1, 3, 2, 2), ref_conv_nd },
    /* an RGB image (batch 1, 3 channels, NCHW) into a channels-last first layer: its planes
     * interleaved by braid's step (dnnl_interleave.c); 420 pixels (a tail of 4), and 40000 on
     * two threads */
    { "conv_rgb_first_layer", "Conv", NULL, 3, { IN(1, 3, 20, 21), CST(F32, 16, 3, 3, 3), CST(F32, 16) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 16, 20, 21), ref_conv_nd },
    { "conv_rgb_first_layer_threads", "Conv", NULL, 2, { IN(1, 3, 200, 200), CST(F32, 16, 3, 3, 3) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 16, 100, 100), ref_conv_nd,
      .threads = 2 },
    /* ConvInteger */
    { "convinteger_u8", "ConvInteger", NULL, 4, { FED(UINT8, 1, 1, 4, 4), FED(UINT8, 2, 1, 2, 2),
      CSTS(UINT8, 12), CSTS(UINT8, 3) }, NO_ATTR, OUTT(INT32, 1, 2, 3, 3), ref_conv_nd },
    { "convinteger_i8_per_channel_zp", "ConvInteger", NULL, 4, { FED(INT8, 1, 2, 5, 5),
      FED(INT8, 3, 2, 3, 3), OMIT, CSTV(INT8, V(1, -2, 0), 3) }, { AINTS("pads", 1, 1, 1, 1) },
      OUTT(INT32, 1, 3, 5, 5), ref_conv_nd,
      .skip = { "ort", "ONNX Runtime's ConvInteger takes a per-tensor w_zero_point only" } },
    /* QLinearConv */
    { "qlinearconv_u8_per_channel", "QLinearConv", NULL, 9, { FED(UINT8, 1, 2, 5, 5),
      CSTSF(F32, 0.02f), CSTS(UINT8, 128), FED(INT8, 3, 2, 3, 3),
      CSTF(F32, VF(0.01f, 0.02f, 0.03f), 3), CSTV(INT8, V(0, 0, 0), 3), CSTSF(F32, 0.05f),
      CSTS(UINT8, 100), FED(INT32, 3) }, { AINTS("pads", 1, 1, 1, 1) }, OUTT(UINT8, 1, 3, 5, 5),
      ref_conv_nd },
};

const case_table ops_conv_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
