/* The float cases the backend-ops harness began with: oneDNN's ops (element-wise, binary,
 * MatMul, Gemm, Conv, pooling, normalization, Resize) and the float glue around them. They
 * keep their original order: a case's random inputs are seeded by its position in the run
 * (the tables are run in the order test_backend_ops.c lists them, this one first). The
 * references of the ops only these cases use live here; the others are in the family files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static void ref_prelu(const op_case *c, const tensor *in, tensor *out)
{
    int64_t idx[BD_MAX_RANK];
    for (size_t i = 0; i < out->n; i++) {
        unravel(i, out->rank, out->dims, idx);
        double x = in[0].f[i], s = in[1].f[bcast(&in[1], idx, out->rank)];
        out->f[i] = x >= 0 ? x : s * x;
    }
}

/* MatMul with numpy broadcasting of the batch dims (both operands rank >= 2). */
static void ref_matmul(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *a = &in[0], *b = &in[1];
    int R = out->rank;
    int64_t K = a->dims[a->rank - 1];
    int64_t idx[BD_MAX_RANK];
    for (size_t i = 0; i < out->n; i++) {
        unravel(i, R, out->dims, idx);
        int64_t m = idx[R - 2], j = idx[R - 1];
        double acc = 0;
        for (int64_t k = 0; k < K; k++) {
            idx[R - 2] = m;
            idx[R - 1] = k;
            double x = a->f[bcast(a, idx, R)];
            idx[R - 2] = k;
            idx[R - 1] = j;
            acc += x * b->f[bcast(b, idx, R)];
        }
        out->f[i] = acc;
    }
}

static void ref_gemm(const op_case *c, const tensor *in, tensor *out)
{
    bool ta = attr_i(c, "transA", 0), tb = attr_i(c, "transB", 0);
    double alpha = attr_f(c, "alpha", 1), beta = attr_f(c, "beta", 1);
    int64_t M = out->dims[0], N = out->dims[1];
    int64_t K = ta ? in[0].dims[0] : in[0].dims[1];
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += in[0].f[ta ? k * M + m : m * K + k] * in[1].f[tb ? n * K + k : k * N + n];
            int64_t idx[2] = { m, n };
            double cterm = c->n_in > 2 ? in[2].f[bcast(&in[2], idx, 2)] : 0;
            out->f[m * N + n] = alpha * acc + beta * cterm;
        }
}

/* 2-D convolution, NCHW, ONNX semantics (explicit pads, strides, dilations, group). */
void ref_conv(const op_case *c, const tensor *in, tensor *out)
{
    const int64_t *xd = in[0].dims, *wd = in[1].dims;
    int64_t N = xd[0], Ch = xd[1], H = xd[2], Wd = xd[3], M = wd[0], KH = wd[2], KW = wd[3];
    int64_t G = attr_i(c, "group", 1), OH = out->dims[2], OW = out->dims[3];
    int64_t s[2], d[2], p[4];
    ints_or(c, "strides", 2, (const int64_t[]){ 1, 1 }, s);
    ints_or(c, "dilations", 2, (const int64_t[]){ 1, 1 }, d);
    ints_or(c, "pads", 4, (const int64_t[]){ 0, 0, 0, 0 }, p);
    int64_t cg = Ch / G, mg = M / G;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = c->n_in > 2 ? in[2].f[m] : 0;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t ih = oh * s[0] - p[0] + kh * d[0];
                                int64_t iw = ow * s[1] - p[1] + kw * d[1];
                                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                                    continue;
                                int64_t xc = (m / mg) * cg + ci;    /* its group's channel */
                                acc += in[0].f[((n * Ch + xc) * H + ih) * Wd + iw] *
                                       in[1].f[((m * cg + ci) * KH + kh) * KW + kw];
                            }
                    out->f[((n * M + m) * OH + oh) * OW + ow] = acc;
                }
}

/* MaxPool / AveragePool (2-D, explicit pads) and the global pools. */
static void ref_pool(const op_case *c, const tensor *in, tensor *out)
{
    const int64_t *xd = in[0].dims;
    int64_t N = xd[0], Ch = xd[1], H = xd[2], Wd = xd[3], OH = out->dims[2], OW = out->dims[3];
    bool global = !strncmp(c->op, "Global", 6);
    bool is_max = strstr(c->op, "Max") != NULL;
    int64_t k[2] = { H, Wd }, s[2] = { 1, 1 }, p[4] = { 0, 0, 0, 0 };
    if (!global) {
        ints_or(c, "kernel_shape", 2, k, k);
        ints_or(c, "strides", 2, s, s);
        ints_or(c, "pads", 4, p, p);
    }
    bool count_pad = attr_i(c, "count_include_pad", 0);
    for (int64_t nc = 0; nc < N * Ch; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double acc = is_max ? -INFINITY : 0;
                int64_t cnt = 0;
                for (int64_t kh = 0; kh < k[0]; kh++)
                    for (int64_t kw = 0; kw < k[1]; kw++) {
                        int64_t ih = oh * s[0] - p[0] + kh, iw = ow * s[1] - p[1] + kw;
                        bool inside = ih >= 0 && ih < H && iw >= 0 && iw < Wd;
                        bool in_padded = ih < H + p[2] && iw < Wd + p[3];
                        if (!inside) {
                            cnt += count_pad && in_padded;
                            continue;
                        }
                        double x = in[0].f[(nc * H + ih) * Wd + iw];
                        acc = is_max ? (x > acc ? x : acc) : acc + x;
                        cnt++;
                    }
                out->f[(nc * OH + oh) * OW + ow] = is_max ? acc : acc / (double)cnt;
            }
}

static void ref_batchnorm(const op_case *c, const tensor *in, tensor *out)
{
    size_t N = (size_t)in[0].dims[0], Ch = (size_t)in[0].dims[1];
    size_t S = numel(in[0].rank - 2, in[0].dims + 2);
    double eps = attr_f(c, "epsilon", 1e-5f);
    for (size_t n = 0; n < N; n++)
        for (size_t ch = 0; ch < Ch; ch++) {
            double sc = in[1].f[ch] / sqrt(in[4].f[ch] + eps);
            for (size_t s = 0; s < S; s++) {
                size_t i = (n * Ch + ch) * S + s;
                out->f[i] = (in[0].f[i] - in[3].f[ch]) * sc + in[2].f[ch];
            }
        }
}

static void ref_layernorm(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", -1), in[0].rank);
    size_t outer = numel(axis, in[0].dims), len = numel(in[0].rank - axis, in[0].dims + axis);
    double eps = attr_f(c, "epsilon", 1e-5f);
    for (size_t o = 0; o < outer; o++) {
        const double *x = in[0].f + o * len;
        double mean = 0, var = 0;
        for (size_t j = 0; j < len; j++)
            mean += x[j];
        mean /= (double)len;
        for (size_t j = 0; j < len; j++)
            var += (x[j] - mean) * (x[j] - mean);
        var /= (double)len;
        for (size_t j = 0; j < len; j++)
            out->f[o * len + j] = (x[j] - mean) / sqrt(var + eps) * in[1].f[j] +
                                  (c->n_in > 2 ? in[2].f[j] : 0);
    }
}

/* The input coordinate of output coordinate X along an axis of IN -> OUT elements (scale from
 * the scales input), per coordinate_transformation_mode. */
static double resize_coord(const char *ctm, int64_t x, int64_t in, int64_t out, double scale)
{
    if (!strcmp(ctm, "align_corners"))
        return out == 1 ? 0 : (double)x * (double)(in - 1) / (double)(out - 1);
    if (!strcmp(ctm, "asymmetric"))
        return (double)x / scale;
    if (!strcmp(ctm, "pytorch_half_pixel"))
        return out > 1 ? ((double)x + 0.5) / scale - 0.5 : 0;
    return ((double)x + 0.5) / scale - 0.5;                       /* half_pixel */
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Resize of the last two dims of a 4-D input: nearest or (bi)linear, scales input 2. */
static void ref_resize(const op_case *c, const tensor *in, tensor *out)
{
    const char *mode = attr_s(c, "mode", "nearest");
    const char *ctm = attr_s(c, "coordinate_transformation_mode", "half_pixel");
    const char *nm = attr_s(c, "nearest_mode", "round_prefer_floor");
    int64_t H = in[0].dims[2], Wd = in[0].dims[3], OH = out->dims[2], OW = out->dims[3];
    size_t NC = (size_t)(in[0].dims[0] * in[0].dims[1]);
    for (size_t nc = 0; nc < NC; nc++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                double y = resize_coord(ctm, oy, H, OH, in[2].f[2]);
                double x = resize_coord(ctm, ox, Wd, OW, in[2].f[3]);
                const double *p = in[0].f + nc * (size_t)(H * Wd);
                double v;
                if (!strcmp(mode, "linear")) {
                    y = y < 0 ? 0 : y > (double)(H - 1) ? (double)(H - 1) : y;
                    x = x < 0 ? 0 : x > (double)(Wd - 1) ? (double)(Wd - 1) : x;
                    int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(x);
                    int64_t y1 = clampi(y0 + 1, 0, H - 1), x1 = clampi(x0 + 1, 0, Wd - 1);
                    double fy = y - (double)y0, fx = x - (double)x0;
                    v = (1 - fy) * ((1 - fx) * p[y0 * Wd + x0] + fx * p[y0 * Wd + x1]) +
                        fy * ((1 - fx) * p[y1 * Wd + x0] + fx * p[y1 * Wd + x1]);
                } else {
                    double ry, rx;
                    if (!strcmp(nm, "floor")) {
                        ry = floor(y);
                        rx = floor(x);
                    } else if (!strcmp(nm, "ceil")) {
                        ry = ceil(y);
                        rx = ceil(x);
                    } else {            /* round_prefer_floor: halves go down */
                        ry = y - floor(y) == 0.5 ? floor(y) : round(y);
                        rx = x - floor(x) == 0.5 ? floor(x) : round(x);
                    }
                    v = p[clampi((int64_t)ry, 0, H - 1) * Wd + clampi((int64_t)rx, 0, Wd - 1)];
                }
                out->f[(nc * (size_t)OH + (size_t)oy) * (size_t)OW + (size_t)ox] = v;
            }
}

/* ---- the cases ------------------------------------------------------------------------------- */

#define k_scales2     VF(1, 1, 2, 2)
#define k_scales_down VF(1, 1, 0.5f, 0.5f)
#define k_lo          VF(-0.5f)
#define k_hi          VF(0.25f)
#define k_pad_value   VF(1.5f)
#define k_pow_exp     VF(2.5f)

static const op_case k_cases[] = {
    /* element-wise */
    { "relu", "Relu", NULL, 1, { IN(2, 3, 4, 5) }, { { 0 } }, OUT(2, 3, 4, 5), ref_unary },
    { "sigmoid", "Sigmoid", NULL, 1, { INR(-4, 4, 2, 3, 8) }, { { 0 } }, OUT(2, 3, 8), ref_unary },
    { "tanh", "Tanh", NULL, 1, { INR(-3, 3, 4, 16) }, { { 0 } }, OUT(4, 16), ref_unary },
    { "erf", "Erf", NULL, 1, { INR(-3, 3, 4, 16) }, { { 0 } }, OUT(4, 16), ref_unary },
    { "gelu(braid)", "Gelu", "braid", 1, { INR(-3, 3, 2, 5, 7) }, { { 0 } }, OUT(2, 5, 7), ref_unary },
    { "leakyrelu", "LeakyRelu", NULL, 1, { IN(3, 17) }, { AF("alpha", 0.2f) }, OUT(3, 17), ref_unary },
    { "elu", "Elu", NULL, 1, { INR(-3, 3, 3, 17) }, { AF("alpha", 0.7f) }, OUT(3, 17), ref_unary },
    { "swish(braid)", "Swish", "braid", 1, { INR(-5, 5, 2, 8, 9) }, { { 0 } }, OUT(2, 8, 9), ref_unary },
    { "hardswish", "HardSwish", NULL, 1, { INR(-5, 5, 2, 8, 9) }, { { 0 } }, OUT(2, 8, 9), ref_unary },
    { "hardsigmoid", "HardSigmoid", NULL, 1, { INR(-5, 5, 3, 40) }, { AF("alpha", 0.3f),
      AF("beta", 0.4f) }, OUT(3, 40), ref_unary },
    { "abs", "Abs", NULL, 1, { IN(4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "sqrt", "Sqrt", NULL, 1, { INR(0.1f, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "exp", "Exp", NULL, 1, { INR(-4, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "log", "Log", NULL, 1, { INR(0.1f, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "softplus", "Softplus", NULL, 1, { INR(-6, 6, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "neg", "Neg", NULL, 1, { IN(4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "reciprocal", "Reciprocal", NULL, 1, { INR(0.5f, 3, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "floor", "Floor", NULL, 1, { INR(-4, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "sin", "Sin", NULL, 1, { INR(-4, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "pow_const", "Pow", NULL, 2, { INR(0.1f, 3, 4, 33), WF(k_pow_exp, 1) }, { { 0 } }, OUT(4, 33),
      ref_binary },
    { "clip", "Clip", NULL, 3, { IN(2, 33), WF(k_lo, 1), WF(k_hi, 1) }, { { 0 } }, OUT(2, 33),
      ref_clip },
    { "prelu_channel", "PRelu", NULL, 2, { IN(1, 4, 5, 5), W(4, 1, 1) }, { { 0 } },
      OUT(1, 4, 5, 5), ref_prelu },
    /* binary, with broadcasting */
    { "add_same", "Add", NULL, 2, { IN(2, 3, 4), IN(2, 3, 4) }, { { 0 } }, OUT(2, 3, 4), ref_binary },
    { "add_bcast_row", "Add", NULL, 2, { IN(2, 3, 4, 5), IN(5) }, { { 0 } }, OUT(2, 3, 4, 5),
      ref_binary },
    { "add_bcast_mid", "Add", NULL, 2, { IN(2, 3, 4, 5), IN(3, 1, 5) }, { { 0 } },
      OUT(2, 3, 4, 5), ref_binary },
    { "sub_bcast_const", "Sub", NULL, 2, { IN(2, 3, 4), W(3, 1) }, { { 0 } }, OUT(2, 3, 4),
      ref_binary },
    { "mul_bcast_both", "Mul", NULL, 2, { IN(2, 1, 4), IN(1, 3, 1) }, { { 0 } }, OUT(2, 3, 4),
      ref_binary },
    { "div", "Div", NULL, 2, { IN(2, 3, 4), INR(0.5f, 2, 2, 3, 4) }, { { 0 } }, OUT(2, 3, 4),
      ref_binary },
    { "div_bcast_scalar", "Div", NULL, 2, { IN(2, 3, 4), WR(0.5f, 2, 1) }, { { 0 } },
      OUT(2, 3, 4), ref_binary },
    { "max", "Max", NULL, 2, { IN(3, 8), IN(3, 8) }, { { 0 } }, OUT(3, 8), ref_binary },
    { "min_bcast", "Min", NULL, 2, { IN(3, 8), IN(8) }, { { 0 } }, OUT(3, 8), ref_binary },
    /* linear algebra */
    { "matmul_2d", "MatMul", NULL, 2, { IN(5, 7), W(7, 3) }, { { 0 } }, OUT(5, 3), ref_matmul },
    { "matmul_batched", "MatMul", NULL, 2, { IN(2, 3, 4), W(4, 5) }, { { 0 } }, OUT(2, 3, 5),
      ref_matmul },
    { "matmul_bcast", "MatMul", NULL, 2, { IN(2, 1, 3, 4), IN(3, 4, 5) }, { { 0 } },
      OUT(2, 3, 3, 5), ref_matmul },
    { "gemm_transb", "Gemm", NULL, 3, { IN(3, 4), W(5, 4), W(5) },
      { AI("transB", 1), AF("alpha", 0.5f), AF("beta", 2.0f) }, OUT(3, 5), ref_gemm },
    { "gemm_transa", "Gemm", NULL, 3, { IN(4, 3), W(4, 5), W(1, 5) }, { AI("transA", 1) },
      OUT(3, 5), ref_gemm },
    /* convolution */
    { "conv_pad1", "Conv", NULL, 3, { IN(1, 3, 8, 8), W(4, 3, 3, 3), W(4) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 4, 8, 8), ref_conv },
    { "conv_stride2_nobias", "Conv", NULL, 2, { IN(2, 3, 9, 9), W(6, 3, 3, 3) },
      { AINTS("strides", 2, 2) }, OUT(2, 6, 4, 4), ref_conv },
    { "conv_dilated_asym_pad", "Conv", NULL, 3, { IN(1, 2, 10, 10), W(3, 2, 3, 3), W(3) },
      { AINTS("dilations", 2, 2), AINTS("pads", 1, 2, 0, 1) }, OUT(1, 3, 7, 9), ref_conv },
    { "conv_depthwise", "Conv", NULL, 3, { IN(1, 4, 7, 7), W(4, 1, 3, 3), W(4) },
      { AI("group", 4), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 4, 7, 7), ref_conv },
    { "conv_grouped_1x1", "Conv", NULL, 2, { IN(1, 6, 5, 5), W(4, 3, 1, 1) }, { AI("group", 2) },
      OUT(1, 4, 5, 5), ref_conv },
    /* pooling */
    { "maxpool_3s2p1", "MaxPool", NULL, 1, { IN(1, 3, 9, 9) },
      { AINTS("kernel_shape", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) },
      OUT(1, 3, 5, 5), ref_pool },
    { "avgpool_2s2", "AveragePool", NULL, 1, { IN(2, 3, 8, 8) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2) }, OUT(2, 3, 4, 4), ref_pool },
    { "avgpool_pad_exclude", "AveragePool", NULL, 1, { IN(1, 2, 6, 6) },
      { AINTS("kernel_shape", 3, 3), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 2, 6, 6), ref_pool },
    { "avgpool_pad_include", "AveragePool", NULL, 1, { IN(1, 2, 6, 6) },
      { AINTS("kernel_shape", 3, 3), AINTS("pads", 1, 1, 1, 1), AI("count_include_pad", 1) },
      OUT(1, 2, 6, 6), ref_pool },
    { "global_avgpool", "GlobalAveragePool", NULL, 1, { IN(2, 5, 4, 6) }, { { 0 } },
      OUT(2, 5, 1, 1), ref_pool },
    { "global_maxpool", "GlobalMaxPool", NULL, 1, { IN(2, 5, 4, 6) }, { { 0 } },
      OUT(2, 5, 1, 1), ref_pool },
    /* normalization */
    { "softmax_last", "Softmax", NULL, 1, { INR(-4, 4, 2, 3, 10) }, { { 0 } }, OUT(2, 3, 10),
      ref_softmax },
    { "softmax_axis1", "Softmax", NULL, 1, { INR(-4, 4, 2, 6, 5) }, { AI("axis", 1) },
      OUT(2, 6, 5), ref_softmax },
    { "batchnorm", "BatchNormalization", NULL, 5,
      { IN(2, 3, 4, 4), W(3), W(3), W(3), WR(0.5f, 1.5f, 3) }, { AF("epsilon", 1e-3f) },
      OUT(2, 3, 4, 4), ref_batchnorm },
    { "layernorm_last", "LayerNormalization", NULL, 3, { IN(2, 3, 16), W(16), W(16) },
      { AI("axis", -1), AF("epsilon", 1e-5f) }, OUT(2, 3, 16), ref_layernorm, 1e-3 },
    /* data movement */
    { "reshape", "Reshape", NULL, 2, { IN(2, 3, 4), I64(4, -1) }, { { 0 } }, OUT(4, 6), ref_copy },
    { "flatten", "Flatten", NULL, 1, { IN(2, 3, 4, 5) }, { AI("axis", 2) }, OUT(6, 20), ref_copy },
    { "squeeze", "Squeeze", NULL, 2, { IN(2, 1, 4, 1), I64(1, 3) }, { { 0 } }, OUT(2, 4), ref_copy },
    { "unsqueeze", "Unsqueeze", NULL, 2, { IN(2, 4), I64(0, 2) }, { { 0 } }, OUT(1, 2, 1, 4),
      ref_copy },
    { "transpose_0213", "Transpose", NULL, 1, { IN(2, 3, 4, 5) }, { AINTS("perm", 0, 2, 1, 3) },
      OUT(2, 4, 3, 5), ref_transpose },
    { "transpose_nchw_nhwc", "Transpose", NULL, 1, { IN(2, 3, 4, 5) },
      { AINTS("perm", 0, 2, 3, 1) }, OUT(2, 4, 5, 3), ref_transpose },
    { "concat_axis1", "Concat", NULL, 3, { IN(2, 3, 4), IN(2, 1, 4), IN(2, 2, 4) },
      { AI("axis", 1) }, OUT(2, 6, 4), ref_concat },
    { "concat_last_const", "Concat", NULL, 2, { IN(2, 3), W(2, 2) }, { AI("axis", -1) },
      OUT(2, 5), ref_concat },
    { "channel_shuffle(braid)", "ChannelShuffle", "braid", 1, { IN(2, 6, 3, 4) },
      { AI("axis", 1), AI("group", 3) }, OUT(2, 6, 3, 4), ref_channel_shuffle },
    /* of several parts (a Concat folded in, dnnl_interleave.c): two parts of 48 channels (the
     * AVX-512 kernel), three of 5 (the plain one), two of 40 over 40x40 on two threads */
    { "channel_shuffle_two_parts(braid)", "ChannelShuffle", "braid", 2,
      { IN(1, 48, 5, 7), IN(1, 48, 5, 7) }, { AI("axis", 1), AI("group", 2) }, OUT(1, 96, 5, 7),
      ref_channel_shuffle },
    { "channel_shuffle_three_parts(braid)", "ChannelShuffle", "braid", 3,
      { IN(2, 5, 3, 4), IN(2, 5, 3, 4), IN(2, 5, 3, 4) }, { AI("axis", 1), AI("group", 3) },
      OUT(2, 15, 3, 4), ref_channel_shuffle },
    { "channel_shuffle_two_parts_threads(braid)", "ChannelShuffle", "braid", 2,
      { IN(1, 40, 40, 40), IN(1, 40, 40, 40) }, { AI("axis", 1), AI("group", 2) },
      OUT(1, 80, 40, 40), ref_channel_shuffle, .threads = 2 },
    { "slice_channels", "Slice", NULL, 4, { IN(1, 40, 3, 3), I64(16), I64(40), I64(1) }, { { 0 } },
      OUT(1, 24, 3, 3), ref_slice },
    { "slice_axes", "Slice", NULL, 4, { IN(4, 6, 5), I64(1, 1), I64(3, 100), I64(0, 2) },
      { { 0 } }, OUT(2, 6, 4), ref_slice },
    { "slice_steps_neg", "Slice", NULL, 5,
      { IN(4, 7), I64(-1, 0), I64(-100, 7), I64(0, 1), I64(-1, 2) }, { { 0 } }, OUT(4, 4),
      ref_slice },
    { "gather_axis0", "Gather", NULL, 2, { IN(5, 4), I64(4, 0, -2) }, { { 0 } }, OUT(3, 4),
      ref_gather },
    { "gather_axis1", "Gather", NULL, 2, { IN(2, 5, 3), I64(1, 1, 4, 0) }, { AI("axis", 1) },
      OUT(2, 4, 3), ref_gather },
    /* reductions */
    { "reducemean_keep", "ReduceMean", NULL, 1, { IN(2, 3, 4, 5) },
      { AINTS("axes", 2, 3), AI("keepdims", 1) }, OUT(2, 3, 1, 1), ref_reduce },
    { "reducemean_drop", "ReduceMean", NULL, 1, { IN(2, 3, 4) },
      { AINTS("axes", 1), AI("keepdims", 0) }, OUT(2, 4), ref_reduce },
    { "reducesum_input_axes", "ReduceSum", NULL, 2, { IN(2, 3, 4), I64(-1) },
      { AI("keepdims", 0) }, OUT(2, 3), ref_reduce },
    { "reducemax", "ReduceMax", NULL, 1, { IN(3, 4, 5) }, { AINTS("axes", 0), AI("keepdims", 1) },
      OUT(1, 4, 5), ref_reduce },
    /* resize and pad */
    { "resize_linear_half_pixel", "Resize", NULL, 3,
      { IN(1, 2, 3, 4), OMIT, WF(k_scales2, 4) }, { AS("mode", "linear") }, OUT(1, 2, 6, 8),
      ref_resize },
    { "resize_linear_align_corners", "Resize", NULL, 3,
      { IN(1, 2, 3, 4), OMIT, WF(k_scales2, 4) },
      { AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners") },
      OUT(1, 2, 6, 8), ref_resize },
    { "resize_nearest_asym_floor", "Resize", NULL, 3,
      { IN(1, 2, 3, 4), OMIT, WF(k_scales2, 4) },
      { AS("mode", "nearest"), AS("coordinate_transformation_mode", "asymmetric"),
        AS("nearest_mode", "floor") }, OUT(1, 2, 6, 8), ref_resize },
    { "resize_nearest_down", "Resize", NULL, 3,
      { IN(1, 2, 6, 8), OMIT, WF(k_scales_down, 4) }, { AS("mode", "nearest") },
      OUT(1, 2, 3, 4), ref_resize },
    { "pad_constant", "Pad", NULL, 3, { IN(1, 2, 3, 4), I64(0, 0, 1, 2, 0, 0, 2, 1),
      WF(k_pad_value, 1) }, { { 0 } }, OUT(1, 2, 6, 7), ref_pad },
    { "pad_edge", "Pad", NULL, 2, { IN(1, 2, 3, 4), I64(0, 0, 1, 1, 0, 0, 1, 1) },
      { AS("mode", "edge") }, OUT(1, 2, 5, 6), ref_pad },
};

const case_table ops_float_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
