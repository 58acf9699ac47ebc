/* ConvTranspose: 1-D, 2-D and 3-D; strides, pads, output_padding, dilations, groups
 * (depthwise too), auto_pad, output_shape; constant and fed weights and bias; with a
 * follow-up activation, channel scale or residual add that oneDNN fuses. The reference
 * scatters every input element through the kernel, with ONNX's begin pads: the pads
 * attribute, or under SAME_* and output_shape half the total padding (SAME_UPPER puts the odd
 * one at the end, the others at the beginning; Python's floor division). */
#include <math.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static int64_t floor_half(int64_t a)
{
    return a >= 0 ? a / 2 : -((-a + 1) / 2);
}

/* The case's follow-up node (THEN) on the op's result in OUT: Relu, Sigmoid, or Add/Mul with
 * the last input (broadcast from the right). */
static void apply_then(const op_case *c, const tensor *in, tensor *out)
{
    if (!c->then)
        return;
    const tensor *e = c->then_in ? &in[c->n_in - 1] : NULL;
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        double v = out->f[j], o = 0;
        if (e) {
            unravel(j, out->rank, out->dims, idx);
            o = e->f[bcast(e, idx, out->rank)];
        }
        if (!strcmp(c->then, "Relu"))
            v = v > 0 ? v : 0;
        else if (!strcmp(c->then, "Sigmoid"))
            v = 1 / (1 + exp(-v));
        else if (!strcmp(c->then, "braid:Swish"))
            v = v / (1 + exp(-v));
        else if (!strcmp(c->then, "Add"))
            v += o;
        else if (!strcmp(c->then, "Mul"))
            v *= o;
        else
            abort();
        out->f[j] = v;
    }
}

/* X [N, C, D...], W [C, M/group, k...], B [M] -> out [N, M, D'...], then the follow-up node. */
void ref_conv_transpose(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0], *w = &in[1];
    int r = x->rank, ns = r - 2;
    int64_t G = attr_i(c, "group", 1), C = x->dims[1], M = out->dims[1];
    int64_t IG = C / G, OG = M / G;
    static const int64_t ones[3] = { 1, 1, 1 }, zeros[6] = { 0 };
    int64_t st[3], dil[3], op[3], pads[6], pb[3];
    ints_or(c, "strides", ns, ones, st);
    ints_or(c, "dilations", ns, ones, dil);
    ints_or(c, "output_padding", ns, zeros, op);
    ints_or(c, "pads", 2 * ns, zeros, pads);
    const char *ap = attr_s(c, "auto_pad", "NOTSET");
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    for (int i = 0; i < ns; i++) {
        int64_t ext = (w->dims[2 + i] - 1) * dil[i] + 1;
        int64_t total = st[i] * (x->dims[2 + i] - 1) + op[i] + ext - out->dims[2 + i];
        if (find_attr(c, "output_shape") || same)
            pb[i] = !strcmp(ap, "SAME_UPPER") ? floor_half(total) : total - floor_half(total);
        else
            pb[i] = !strcmp(ap, "VALID") ? 0 : pads[i];
    }
    size_t K = numel(ns, w->dims + 2), S = numel(ns, x->dims + 2), OS = numel(ns, out->dims + 2);
    for (size_t j = 0; j < out->n; j++) {
        int64_t m = (int64_t)(j / OS % (size_t)M);
        out->f[j] = c->n_in - c->then_in > 2 ? in[2].f[m] : 0.0;
    }
    int64_t xi[3], ki[3];
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t ic = 0; ic < C; ic++) {
            int64_t g = ic / IG;
            for (size_t s = 0; s < S; s++) {
                unravel(s, ns, x->dims + 2, xi);
                double xv = x->f[((size_t)n * (size_t)C + (size_t)ic) * S + s];
                for (size_t k = 0; k < K; k++) {
                    unravel(k, ns, w->dims + 2, ki);
                    size_t o = 0;
                    bool inside = true;
                    for (int i = 0; i < ns && inside; i++) {
                        int64_t p = xi[i] * st[i] + ki[i] * dil[i] - pb[i];
                        inside = p >= 0 && p < out->dims[2 + i];
                        o = o * (size_t)out->dims[2 + i] + (size_t)p;
                    }
                    if (!inside)
                        continue;
                    for (int64_t oc = 0; oc < OG; oc++) {
                        int64_t mo = g * OG + oc;
                        double wv = w->f[((size_t)ic * (size_t)OG + (size_t)oc) * K + k];
                        out->f[((size_t)n * (size_t)M + (size_t)mo) * OS + o] += xv * wv;
                    }
                }
            }
        }
    apply_then(c, in, out);
}

static const op_case k_cases[] = {
    { "convtranspose_basic", "ConvTranspose", NULL, 3, { IN(1, 2, 4, 4), W(2, 3, 3, 3), W(3) },
      NO_ATTR, OUT(1, 3, 6, 6), ref_conv_transpose },
    { "convtranspose_stride2_pad1", "ConvTranspose", NULL, 3,
      { IN(1, 4, 5, 5), W(4, 2, 3, 3), W(2) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 2, 9, 9), ref_conv_transpose },
    { "convtranspose_output_padding", "ConvTranspose", NULL, 2, { IN(1, 3, 4, 4), W(3, 2, 3, 3) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1), AINTS("output_padding", 1, 1) },
      OUT(1, 2, 8, 8), ref_conv_transpose },
    { "convtranspose_stride3_output_padding2", "ConvTranspose", NULL, 3,
      { IN(1, 2, 3, 3), W(2, 2, 2, 2), W(2) },
      { AINTS("strides", 3, 3), AINTS("output_padding", 2, 1) }, OUT(1, 2, 10, 9),
      ref_conv_transpose },
    { "convtranspose_group2", "ConvTranspose", NULL, 3, { IN(1, 4, 5, 5), W(4, 3, 3, 3), W(6) },
      { AI("group", 2), AINTS("strides", 2, 2) }, OUT(1, 6, 11, 11), ref_conv_transpose },
    { "convtranspose_depthwise", "ConvTranspose", NULL, 3, { IN(1, 4, 5, 5), W(4, 1, 4, 4), W(4) },
      { AI("group", 4), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 4, 10, 10),
      ref_conv_transpose },
    { "convtranspose_dilated_asym_pad", "ConvTranspose", NULL, 2, { IN(1, 2, 5, 5), W(2, 3, 3, 3) },
      { AINTS("dilations", 2, 2), AINTS("pads", 1, 0, 1, 2) }, OUT(1, 3, 7, 7), ref_conv_transpose },
    { "convtranspose_1d", "ConvTranspose", NULL, 3, { IN(2, 3, 7), W(3, 4, 3), W(4) },
      { AINTS("strides", 2), AINTS("output_padding", 1) }, OUT(2, 4, 16), ref_conv_transpose },
    { "convtranspose_3d", "ConvTranspose", NULL, 3, { IN(1, 2, 3, 4, 4), W(2, 3, 3, 3, 3), W(3) },
      { AINTS("strides", 1, 2, 2), AINTS("pads", 1, 1, 1, 1, 1, 1) }, OUT(1, 3, 3, 7, 7),
      ref_conv_transpose },
    { "convtranspose_3d_group_output_padding", "ConvTranspose", NULL, 2,
      { IN(1, 4, 2, 3, 3), W(4, 1, 2, 2, 2) },
      { AI("group", 2), AINTS("strides", 2, 2, 2), AINTS("output_padding", 1, 0, 1) },
      OUT(1, 2, 5, 6, 7), ref_conv_transpose },
    { "convtranspose_output_shape", "ConvTranspose", NULL, 2, { IN(1, 2, 3, 3), W(2, 2, 3, 3) },
      { AINTS("strides", 3, 2), AINTS("output_shape", 10, 8) }, OUT(1, 2, 10, 8),
      ref_conv_transpose },
    { "convtranspose_output_shape_crop", "ConvTranspose", NULL, 2, { IN(1, 2, 4, 4), W(2, 2, 3, 3) },
      { AINTS("strides", 2, 2), AINTS("output_shape", 6, 7) }, OUT(1, 2, 6, 7),
      ref_conv_transpose },
    { "convtranspose_same_upper", "ConvTranspose", NULL, 2, { IN(1, 2, 4, 4), W(2, 2, 3, 3) },
      { AS("auto_pad", "SAME_UPPER"), AINTS("strides", 2, 2) }, OUT(1, 2, 8, 8),
      ref_conv_transpose },
    { "convtranspose_same_lower", "ConvTranspose", NULL, 2, { IN(1, 2, 4, 4), W(2, 2, 3, 3) },
      { AS("auto_pad", "SAME_LOWER"), AINTS("strides", 2, 2) }, OUT(1, 2, 8, 8),
      ref_conv_transpose },
    { "convtranspose_fed_weights", "ConvTranspose", NULL, 2, { IN(1, 2, 4, 4), IN(2, 3, 3, 3) },
      { AINTS("strides", 2, 2) }, OUT(1, 3, 9, 9), ref_conv_transpose },
    { "convtranspose_fed_weights_bias_group", "ConvTranspose", NULL, 3,
      { IN(1, 4, 3, 3), IN(4, 2, 2, 2), IN(4) }, { AI("group", 2), AINTS("strides", 2, 2) },
      OUT(1, 4, 6, 6), ref_conv_transpose },
    { "convtranspose_upsample_blocked", "ConvTranspose", NULL, 3,
      { IN(1, 16, 8, 8), W(16, 32, 4, 4), W(32) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 32, 16, 16),
      ref_conv_transpose, .threads = 2 },
    /* fused: bias and post-ops run as one binary step after oneDNN's deconvolution, in place
     * unless a residual waits in the output or the channels are padded (8 of nChw16c) */
    { "convtranspose_bias_relu_padded", "ConvTranspose", NULL, 3,
      { IN(1, 16, 8, 8), W(16, 8, 4, 4), W(8) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 8, 16, 16),
      ref_conv_transpose, .then = "Relu" },
    { "convtranspose_bias_sigmoid", "ConvTranspose", NULL, 3,
      { IN(1, 16, 8, 8), W(16, 32, 4, 4), WR(-3, 3, 32) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 32, 16, 16),
      ref_conv_transpose, .then = "Sigmoid" },
    { "convtranspose_mul_channel", "ConvTranspose", NULL, 3,
      { IN(1, 16, 8, 8), W(16, 8, 4, 4), W(1, 8, 1, 1) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 8, 16, 16),
      ref_conv_transpose, .then = "Mul", .then_in = 1 },
    { "convtranspose_bias_residual", "ConvTranspose", NULL, 4,
      { IN(1, 16, 8, 8), W(16, 8, 4, 4), W(8), IN(1, 8, 16, 16) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 8, 16, 16),
      ref_conv_transpose, .then = "Add", .then_in = 1 },
    { "convtranspose_1d_bias_relu", "ConvTranspose", NULL, 3, { IN(1, 24, 9), W(24, 20, 3), W(20) },
      { AINTS("strides", 2), AINTS("output_padding", 1) }, OUT(1, 20, 20), ref_conv_transpose,
      .then = "Relu" },
};

const case_table ops_deconv_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
