/* The oneDNN backend on what the TensorFlow frontends produce (the IR's TF conventions):
 * data_format NHWC, HWIO / HWCM filters, TF-style SAME padding, and the ops TF models add
 * (Elu, Max/Min, PRelu, Pad, ReduceMean, Resize) -- against naive C references. */
#include "tests/backends/dnnl/dnnl_testlib.h"
#include "partitioner/passes/passes.h"

/* ---- layout helpers for the references ------------------------------------------------- */

/* Transpose a row-major 4-D tensor of dims D: output axis k is input axis P[k]. */
static float *permute4(const float *x, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                       int p0, int p1, int p2, int p3)
{
    const int64_t d[4] = { d0, d1, d2, d3 }, od[4] = { d[p0], d[p1], d[p2], d[p3] };
    const int p[4] = { p0, p1, p2, p3 };
    const int64_t stride[4] = { d1 * d2 * d3, d2 * d3, d3, 1 };
    float *y = malloc(sizeof *y * (size_t)(d0 * d1 * d2 * d3) + 4);
    int64_t at = 0, i[4];
    for (i[0] = 0; i[0] < od[0]; i[0]++)
        for (i[1] = 0; i[1] < od[1]; i[1]++)
            for (i[2] = 0; i[2] < od[2]; i[2]++)
                for (i[3] = 0; i[3] < od[3]; i[3]++)
                    y[at++] = x[i[0] * stride[p[0]] + i[1] * stride[p[1]] + i[2] * stride[p[2]] +
                                i[3] * stride[p[3]]];
    return y;
}

static float *nhwc_to_nchw(const float *x, int64_t N, int64_t H, int64_t W, int64_t C)
{
    return permute4(x, N, H, W, C, 0, 3, 1, 2);
}

static float *nchw_to_nhwc(const float *x, int64_t N, int64_t C, int64_t H, int64_t W)
{
    return permute4(x, N, C, H, W, 0, 2, 3, 1);
}

/* HWIO [KH, KW, I, O] -> OIHW. */
static float *hwio_to_oihw(const float *w, int64_t KH, int64_t KW, int64_t I, int64_t O)
{
    return permute4(w, KH, KW, I, O, 3, 2, 0, 1);
}

/* HWCM [KH, KW, C, M] -> [C, M, KH, KW], which is OIHW [C*M, 1, KH, KW] (channel c*M + m). */
static float *hwcm_to_oihw(const float *w, int64_t KH, int64_t KW, int64_t C, int64_t M)
{
    return permute4(w, KH, KW, C, M, 2, 3, 0, 1);
}

/* TF SAME: out = ceil(in / s), the extra pad goes at the end (ONNX SAME_UPPER). */
static int64_t same_out(int64_t in, int64_t s) { return (in + s - 1) / s; }
static int64_t same_begin(int64_t in, int64_t k, int64_t s, int64_t d)
{
    int64_t total = (same_out(in, s) - 1) * s + (k - 1) * d + 1 - in;
    return total > 0 ? total / 2 : 0;
}

/* ---- Conv NHWC ----------------------------------------------------------------------------- */

typedef struct tfconv_case {
    const char *name;
    int64_t N, H, W, C, KH, KW, O, M, s, d;  /* M > 0: depthwise HWCM with multiplier M */
    bool same, bias, relu6;
} tfconv_case;

static void run_tfconv(const tfconv_case *cc)
{
    tg *t = tg_new();
    bool dw = cc->M > 0;
    int64_t O = dw ? cc->C * cc->M : cc->O;
    int64_t OH = cc->same ? same_out(cc->H, cc->s) : (cc->H - ((cc->KH - 1) * cc->d + 1)) / cc->s + 1;
    int64_t OW = cc->same ? same_out(cc->W, cc->s) : (cc->W - ((cc->KW - 1) * cc->d + 1)) / cc->s + 1;
    bd_value *x = t_input(t, SHAPE(cc->N, cc->H, cc->W, cc->C));
    bd_value *w = dw ? t_const(t, SHAPE(cc->KH, cc->KW, cc->C, cc->M))
                     : t_const(t, SHAPE(cc->KH, cc->KW, cc->C, cc->O));
    bd_value *y = t_val(t, SHAPE(cc->N, OH, OW, O));
    bd_node *n = NODE(t, "Conv", y, x, w);
    t_attr_s(t, n, "data_format", "NHWC");
    t_attr_s(t, n, "filter_format", dw ? "HWCM" : "HWIO");
    t_attr_i(t, n, "group", dw ? cc->C : 1);
    ATTR_INTS(t, n, "strides", cc->s, cc->s);
    ATTR_INTS(t, n, "dilations", cc->d, cc->d);
    t_attr_s(t, n, "auto_pad", cc->same ? "SAME_UPPER" : "VALID");
    bd_value *b = NULL;
    if (cc->bias) {     /* TF's BiasAdd after the conv, fused as a binary post-op on the last axis */
        b = t_const(t, SHAPE(O));
        bd_error err = { 0 };
        int bi = bd_node_append_input(t->g, n, b, &err);
        n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = bi };
    }
    if (cc->relu6)
        n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_CLIP, .alpha = 0, .beta = 6 };
    t_output(t, y);
    trun *r = t_run(t);
    float *xc = nhwc_to_nchw(r->in[0], cc->N, cc->H, cc->W, cc->C);
    float *wc = dw ? hwcm_to_oihw(t_data(w), cc->KH, cc->KW, cc->C, cc->M)
                   : hwio_to_oihw(t_data(w), cc->KH, cc->KW, cc->C, cc->O);
    float *yc = malloc(sizeof *yc * (size_t)(cc->N * O * OH * OW));
    int64_t ph = cc->same ? same_begin(cc->H, cc->KH, cc->s, cc->d) : 0;
    int64_t pw = cc->same ? same_begin(cc->W, cc->KW, cc->s, cc->d) : 0;
    ref_conv2d(xc, cc->N, cc->C, cc->H, cc->W, wc, O, cc->KH, cc->KW, b ? t_data(b) : NULL,
               dw ? cc->C : 1, cc->s, cc->s, ph, pw, cc->d, cc->d, yc, OH, OW);
    float *ref = nchw_to_nhwc(yc, cc->N, O, OH, OW);
    size_t ny = (size_t)(cc->N * O * OH * OW);
    if (cc->relu6)
        for (size_t i = 0; i < ny; i++)
            ref[i] = ref[i] < 0 ? 0 : ref[i] > 6 ? 6 : ref[i];
    t_compare(cc->name, r->out[0], ref, ny);
    free(xc);
    free(wc);
    free(yc);
    free(ref);
    t_run_free(r);
    tg_free(t);
}

static void test_conv_nhwc_hwio(void **state)
{
    (void)state;
    static const tfconv_case cases[] = {
        { "NHWC HWIO 3x3 SAME s1 bias",          1, 14, 14, 16, 3, 3, 32, 0, 1, 1, true, true, false },
        { "NHWC HWIO 3x3 SAME s2 (pad at end)",  2, 15, 16, 8, 3, 3, 16, 0, 2, 1, true, true, true },
        { "NHWC HWIO 7x7 SAME s2 C=3",           1, 32, 32, 3, 7, 7, 16, 0, 2, 1, true, true, false },
        { "NHWC HWIO 1x1 VALID",                 1, 9, 9, 32, 1, 1, 24, 0, 1, 1, false, false, false },
        { "NHWC HWIO 3x3 VALID dilation 2",      1, 12, 11, 8, 3, 3, 8, 0, 1, 2, false, true, false },
        { "NHWC HWIO 2x2 SAME s2 even kernel",   1, 9, 9, 4, 2, 2, 8, 0, 2, 1, true, false, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_tfconv(&cases[i]);
}

static void test_conv_nhwc_depthwise_hwcm(void **state)
{
    (void)state;
    static const tfconv_case cases[] = {
        { "NHWC HWCM depthwise 3x3 SAME s1 bias relu6", 1, 14, 14, 32, 3, 3, 0, 1, 1, 1, true, true, true },
        { "NHWC HWCM depthwise 3x3 SAME s2",            1, 15, 15, 16, 3, 3, 0, 1, 2, 1, true, true, false },
        { "NHWC HWCM multiplier 2 5x5 SAME s2",         2, 10, 11, 6, 5, 5, 0, 2, 2, 1, true, true, false },
        { "NHWC HWCM multiplier 3 3x3 VALID",           1, 8, 8, 5, 3, 3, 0, 3, 1, 1, false, false, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_tfconv(&cases[i]);
}

/* Weights straight out of a TF tensor_content may sit at any byte offset. */
static void test_conv_unaligned_weights(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 6, 6, 8));
    bd_value *w = t_val(t, SHAPE(3, 3, 8, 16));
    size_t nw = 3 * 3 * 8 * 16;
    char *raw = bd_graph_alloc(t->g, nw * sizeof(float) + 8);
    float *aligned = malloc(nw * sizeof(float));
    for (size_t i = 0; i < nw; i++)
        aligned[i] = t_rand(t);
    memcpy(raw + 2, aligned, nw * sizeof(float));
    w->data = raw + 2;
    w->nbytes = nw * sizeof(float);
    bd_value *y = t_val(t, SHAPE(1, 6, 6, 16));
    bd_node *n = NODE(t, "Conv", y, x, w);
    t_attr_s(t, n, "data_format", "NHWC");
    t_attr_s(t, n, "filter_format", "HWIO");
    t_attr_s(t, n, "auto_pad", "SAME_UPPER");
    t_output(t, y);
    trun *r = t_run(t);
    float *xc = nhwc_to_nchw(r->in[0], 1, 6, 6, 8), *wc = hwio_to_oihw(aligned, 3, 3, 8, 16);
    float yc[16 * 36];
    ref_conv2d(xc, 1, 8, 6, 6, wc, 16, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, yc, 6, 6);
    float *ref = nchw_to_nhwc(yc, 1, 16, 6, 6);
    t_compare("NHWC HWIO weights at an odd address", r->out[0], ref, 16 * 36);
    free(xc);
    free(wc);
    free(ref);
    free(aligned);
    t_run_free(r);
    tg_free(t);
}

/* fold_batchnorm on TF filters: the per-output-channel scale lands on HWIO's last dim and on
 * HWCM's last two (c*M + m); the folded conv must equal conv -> BN. */
static void test_fold_batchnorm_tf_filters(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        bool dw = v == 1;
        int64_t H = 7, C = 6, M = 2, O = dw ? C * M : 10;
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(1, H, H, C));
        bd_value *w = dw ? t_const(t, SHAPE(3, 3, C, M)) : t_const(t, SHAPE(3, 3, C, O));
        bd_value *a = t_val(t, SHAPE(1, H, H, O)), *y = t_val(t, SHAPE(1, H, H, O));
        bd_node *cv = NODE(t, "Conv", a, x, w);
        t_attr_s(t, cv, "data_format", "NHWC");
        t_attr_s(t, cv, "filter_format", dw ? "HWCM" : "HWIO");
        t_attr_s(t, cv, "auto_pad", "SAME_UPPER");
        if (dw)
            t_attr_i(t, cv, "group", C);
        bd_value *sc = t_const(t, SHAPE(O)), *bi = t_const(t, SHAPE(O)), *mu = t_const(t, SHAPE(O));
        bd_value *var = t_const_range(t, SHAPE(O), 0.5f, 2.0f);
        bd_node *bn = NODE(t, "BatchNormalization", y, a, sc, bi, mu, var);
        t_attr_s(t, bn, "data_format", "NHWC");
        t_output(t, y);
        bd_error err = { 0 };
        assert_int_equal(bd_pass_fold_batchnorm(t->g, &err), 1);
        assert_int_equal(bd_graph_num_nodes(t->g), 1);
        trun *r = t_run(t);
        float *xc = nhwc_to_nchw(r->in[0], 1, H, H, C);
        float *wc = dw ? hwcm_to_oihw(t_data(w), 3, 3, C, M) : hwio_to_oihw(t_data(w), 3, 3, C, O);
        float *yc = malloc(sizeof *yc * (size_t)(O * H * H));
        ref_conv2d(xc, 1, C, H, H, wc, O, 3, 3, NULL, dw ? C : 1, 1, 1, 1, 1, 1, 1, yc, H, H);
        for (int64_t i = 0; i < O * H * H; i++) {
            int64_t c = i / (H * H);
            yc[i] = (yc[i] - t_data(mu)[c]) / sqrtf(t_data(var)[c] + 1e-5f) * t_data(sc)[c] + t_data(bi)[c];
        }
        float *ref = nchw_to_nhwc(yc, 1, O, H, H);
        t_compare(dw ? "fold BN into HWCM depthwise conv" : "fold BN into HWIO conv", r->out[0], ref,
                  (size_t)(O * H * H));
        free(xc);
        free(wc);
        free(yc);
        free(ref);
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- pooling, BN, chains -------------------------------------------------------------- */

/* NCHW max / average (excluding padding) pool with begin pads PT, PL. */
static void ref_pool_nchw(const float *x, int64_t NC, int64_t H, int64_t W, int64_t k, int64_t s,
                          int64_t pt, int64_t pl, bool max, float *y, int64_t OH, int64_t OW)
{
    for (int64_t c = 0; c < NC; c++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double acc = max ? -INFINITY : 0;
                int cnt = 0;
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t ih = oh * s - pt + i, iw = ow * s - pl + j;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                            continue;
                        double v = x[(c * H + ih) * W + iw];
                        acc = max ? (v > acc ? v : acc) : acc + v;
                        cnt++;
                    }
                y[(c * OH + oh) * OW + ow] = (float)(max ? acc : acc / cnt);
            }
}

static void test_pool_nhwc(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        /* max 3x3/2 SAME; avg 3x3/2 SAME exclude pad (TF); avg 2x2/2 VALID */
        int64_t N = 2, H = 10, W = 9, C = 8, k = v == 2 ? 2 : 3, s = 2;
        bool same = v < 2;
        int64_t OH = same ? same_out(H, s) : (H - k) / s + 1, OW = same ? same_out(W, s) : (W - k) / s + 1;
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(N, H, W, C));
        bd_value *y = t_val(t, SHAPE(N, OH, OW, C));
        bd_node *n = NODE(t, v == 0 ? "MaxPool" : "AveragePool", y, x);
        t_attr_s(t, n, "data_format", "NHWC");
        ATTR_INTS(t, n, "kernel_shape", k, k);
        ATTR_INTS(t, n, "strides", s, s);
        t_attr_s(t, n, "auto_pad", same ? "SAME_UPPER" : "VALID");
        t_output(t, y);
        trun *r = t_run(t);
        float *xc = nhwc_to_nchw(r->in[0], N, H, W, C);
        float *yc = malloc(sizeof *yc * (size_t)(N * C * OH * OW));
        ref_pool_nchw(xc, N * C, H, W, k, s, same ? same_begin(H, k, s, 1) : 0,
                      same ? same_begin(W, k, s, 1) : 0, v == 0, yc, OH, OW);
        float *ref = nchw_to_nhwc(yc, N, C, OH, OW);
        static const char *names[] = { "NHWC MaxPool 3x3/2 SAME", "NHWC AveragePool 3x3/2 SAME excl. pad",
                                       "NHWC AveragePool 2x2/2 VALID" };
        t_compare(names[v], r->out[0], ref, (size_t)(N * C * OH * OW));
        free(xc);
        free(yc);
        free(ref);
        t_run_free(r);
        tg_free(t);
    }
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(2, 5, 6, 8));
    bd_value *y = t_val(t, SHAPE(2, 1, 1, 8));
    t_attr_s(t, NODE(t, "GlobalAveragePool", y, x), "data_format", "NHWC");
    t_output(t, y);
    trun *r = t_run(t);
    float ref[16];
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 8; c++) {
            double s = 0;
            for (int i = 0; i < 30; i++)
                s += r->in[0][(n * 30 + i) * 8 + c];
            ref[n * 8 + c] = (float)(s / 30);
        }
    t_compare("NHWC GlobalAveragePool", r->out[0], ref, 16);
    t_run_free(r);
    tg_free(t);
}

static void test_batchnorm_nhwc(void **state)
{
    (void)state;
    tg *t = tg_new();
    int64_t N = 2, H = 5, W = 7, C = 12;
    bd_value *x = t_input(t, SHAPE(N, H, W, C));
    bd_value *sc = t_const(t, SHAPE(C)), *bi = t_const(t, SHAPE(C)), *mu = t_const(t, SHAPE(C));
    bd_value *var = t_const_range(t, SHAPE(C), 0.5f, 2.0f);
    bd_value *y = t_val(t, SHAPE(N, H, W, C));
    bd_node *n = NODE(t, "BatchNormalization", y, x, sc, bi, mu, var);
    t_attr_s(t, n, "data_format", "NHWC");
    t_attr_f(t, n, "epsilon", 1e-3f);
    t_output(t, y);
    trun *r = t_run(t);
    size_t ny = (size_t)(N * H * W * C);
    float *ref = malloc(sizeof *ref * ny);
    for (size_t i = 0; i < ny; i++) {
        size_t c = i % (size_t)C;
        ref[i] = (r->in[0][i] - t_data(mu)[c]) / sqrtf(t_data(var)[c] + 1e-3f) * t_data(sc)[c] + t_data(bi)[c];
    }
    t_compare("NHWC BatchNormalization", r->out[0], ref, ny);
    free(ref);
    t_run_free(r);
    tg_free(t);
}

/* conv -> depthwise conv -> max pool -> BN, all NHWC: blocked layouts flow between them
 * through permuted mds; only the subgraph boundary is plain NHWC. */
static void test_nhwc_chain(void **state)
{
    (void)state;
    tg *t = tg_new();
    int64_t H = 12, C = 16;
    bd_value *x = t_input(t, SHAPE(1, H, H, 8));
    bd_value *w0 = t_const(t, SHAPE(3, 3, 8, C)), *w1 = t_const(t, SHAPE(3, 3, C, 1));
    bd_value *a = t_val(t, SHAPE(1, H, H, C)), *b = t_val(t, SHAPE(1, H, H, C));
    bd_value *p = t_val(t, SHAPE(1, H / 2, H / 2, C)), *y = t_val(t, SHAPE(1, H / 2, H / 2, C));
    bd_node *c0 = NODE(t, "Conv", a, x, w0), *c1 = NODE(t, "Conv", b, a, w1);
    t_attr_s(t, c0, "filter_format", "HWIO");
    t_attr_s(t, c1, "filter_format", "HWCM");
    t_attr_i(t, c1, "group", C);
    bd_node *mp = NODE(t, "MaxPool", p, b);
    ATTR_INTS(t, mp, "kernel_shape", 2, 2);
    ATTR_INTS(t, mp, "strides", 2, 2);
    bd_value *sc = t_const(t, SHAPE(C)), *bi = t_const(t, SHAPE(C)), *mu = t_const(t, SHAPE(C));
    bd_value *var = t_const_range(t, SHAPE(C), 0.5f, 2.0f);
    bd_node *bn = NODE(t, "BatchNormalization", y, p, sc, bi, mu, var);
    bd_node *all[] = { c0, c1, mp, bn };
    for (int i = 0; i < 4; i++)
        t_attr_s(t, all[i], "data_format", "NHWC");
    t_attr_s(t, c0, "auto_pad", "SAME_UPPER");
    t_attr_s(t, c1, "auto_pad", "SAME_UPPER");
    c0->post[c0->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_RELU };
    t_output(t, y);
    trun *r = t_run(t);
    float *xc = nhwc_to_nchw(r->in[0], 1, H, H, 8);
    float *w0c = hwio_to_oihw(t_data(w0), 3, 3, 8, C), *w1c = hwcm_to_oihw(t_data(w1), 3, 3, C, 1);
    float *ac = malloc(sizeof(float) * (size_t)(C * H * H)), *bc = malloc(sizeof(float) * (size_t)(C * H * H));
    float *pc = malloc(sizeof(float) * (size_t)(C * H * H / 4));
    ref_conv2d(xc, 1, 8, H, H, w0c, C, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, ac, H, H);
    for (int64_t i = 0; i < C * H * H; i++)
        ac[i] = ac[i] > 0 ? ac[i] : 0;
    ref_conv2d(ac, 1, C, H, H, w1c, C, 3, 3, NULL, C, 1, 1, 1, 1, 1, 1, bc, H, H);
    ref_pool_nchw(bc, C, H, H, 2, 2, 0, 0, true, pc, H / 2, H / 2);
    for (int64_t i = 0; i < C * H * H / 4; i++) {
        int64_t c = i / (H * H / 4);
        pc[i] = (pc[i] - t_data(mu)[c]) / sqrtf(t_data(var)[c] + 1e-5f) * t_data(sc)[c] + t_data(bi)[c];
    }
    float *ref = nchw_to_nhwc(pc, 1, C, H / 2, H / 2);
    t_compare("NHWC conv+relu -> depthwise -> maxpool -> BN", r->out[0], ref, (size_t)(C * H * H / 4));
    free(xc);
    free(w0c);
    free(w1c);
    free(ac);
    free(bc);
    free(pc);
    free(ref);
    t_run_free(r);
    tg_free(t);
}

/* ---- elementwise: Elu, Max/Min, PRelu -------------------------------------------------- */

static void test_elu(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(2, 5, 7, 3)), *y = t_val(t, SHAPE(2, 5, 7, 3));
    t_attr_f(t, NODE(t, "Elu", y, x), "alpha", 0.7f);
    t_output(t, y);
    trun *r = t_run(t);
    float ref[210];
    for (int i = 0; i < 210; i++) {
        float v = r->in[0][i] * 3.0f;
        r->in[0][i] = v;
        ref[i] = v > 0 ? v : 0.7f * (expf(v) - 1.0f);
    }
    t_exec(r);
    t_compare("Elu alpha 0.7", r->out[0], ref, 210);
    t_run_free(r);
    tg_free(t);
}

static void test_max_min(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        /* same shape; broadcast [C]; broadcast first operand (swapped); constant scalar */
        tg *t = tg_new();
        bd_value *a = t_input(t, SHAPE(2, 4, 5, 6));
        bd_value *b = v == 0 ? t_input(t, SHAPE(2, 4, 5, 6)) : v == 3 ? t_const(t, SHAPE(1)) : t_input(t, SHAPE(6));
        bd_value *y = t_val(t, SHAPE(2, 4, 5, 6));
        const char *op = v % 2 ? "Min" : "Max";
        if (v == 2)
            NODE(t, op, y, b, a);
        else
            NODE(t, op, y, a, b);
        t_output(t, y);
        trun *r = t_run(t);
        const float *bd = v == 3 ? t_data(b) : r->in[1];
        float ref[240];
        for (int i = 0; i < 240; i++) {
            float p = r->in[0][i], q = bd[v == 0 ? i : v == 3 ? 0 : i % 6];
            ref[i] = v % 2 ? fminf(p, q) : fmaxf(p, q);
        }
        static const char *names[] = { "Max same shape", "Min broadcast [C]", "Max broadcast first operand",
                                       "Min constant scalar" };
        t_compare(names[v], r->out[0], ref, 240);
        t_run_free(r);
        tg_free(t);
    }
}

static void test_prelu(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        /* per channel [C] on NHWC (after an NHWC conv: blocked); TF [1, 1, C]; full [H, W, C];
         * NCHW per-channel [C, 1, 1] */
        tg *t = tg_new();
        int64_t H = 6, W = 5, C = 16;
        bool nchw = v == 3;
        bd_value *x = nchw ? t_input(t, SHAPE(1, C, H, W)) : t_input(t, SHAPE(1, H, W, C));
        bd_value *src = x, *w = NULL;
        if (v == 0) {
            w = t_const(t, SHAPE(1, 1, C, C));
            src = t_val(t, SHAPE(1, H, W, C));
            bd_node *cv = NODE(t, "Conv", src, x, w);
            t_attr_s(t, cv, "data_format", "NHWC");
            t_attr_s(t, cv, "filter_format", "HWIO");
        }
        bd_value *slope = v == 0 ? t_const(t, SHAPE(C)) : v == 1 ? t_const(t, SHAPE(1, 1, C))
                        : v == 2 ? t_const(t, SHAPE(H, W, C)) : t_const(t, SHAPE(C, 1, 1));
        bd_value *y = t_val(t, 4, src->shape.dims);
        NODE(t, "PRelu", y, src, slope);
        t_output(t, y);
        trun *r = t_run(t);
        size_t ny = (size_t)(H * W * C);
        float *in = r->in[0], *conv = NULL;
        if (v == 0) {
            float *xc = nhwc_to_nchw(r->in[0], 1, H, W, C), *wc = hwio_to_oihw(t_data(w), 1, 1, C, C);
            float *yc = malloc(sizeof *yc * ny);
            ref_conv2d(xc, 1, C, H, W, wc, C, 1, 1, NULL, 1, 1, 1, 0, 0, 1, 1, yc, H, W);
            in = conv = nchw_to_nhwc(yc, 1, C, H, W);
            free(xc);
            free(wc);
            free(yc);
        }
        float *ref = malloc(sizeof *ref * ny);
        for (size_t i = 0; i < ny; i++) {
            size_t si = v == 0 || v == 1 ? i % (size_t)C : v == 2 ? i : i / (size_t)(H * W);
            ref[i] = in[i] > 0 ? in[i] : in[i] * t_data(slope)[si];
        }
        static const char *names[] = { "PRelu [C] on NHWC conv output", "PRelu TF [1,1,C]",
                                       "PRelu full [H,W,C]", "PRelu NCHW [C,1,1]" };
        t_compare(names[v], r->out[0], ref, ny);
        free(ref);
        free(conv);
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- Pad, ReduceMean ------------------------------------------------------------------- */

static void test_pad(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        /* NHWC spatial pads (TF's explicit Pad before a VALID conv); every dim with a fill value
         * from constant_value; pads on the last dim only */
        tg *t = tg_new();
        int64_t d[4] = { 2, 5, 4, 3 }, pb[4] = { 0 }, pe[4] = { 0 };
        if (v == 0) {
            pb[1] = 1; pe[1] = 2; pb[2] = 3; pe[2] = 0;
        } else if (v == 1) {
            pb[0] = 1; pb[1] = 0; pb[2] = 2; pb[3] = 1; pe[0] = 0; pe[1] = 1; pe[2] = 1; pe[3] = 2;
        } else {
            pb[3] = 2; pe[3] = 1;
        }
        int64_t od[4];
        for (int i = 0; i < 4; i++)
            od[i] = d[i] + pb[i] + pe[i];
        bd_value *x = t_input(t, 4, d), *y = t_val(t, 4, od);
        bd_value *pads = t_const_i64(t, 8, (int64_t[]){ pb[0], pb[1], pb[2], pb[3], pe[0], pe[1], pe[2], pe[3] });
        float fill = v == 1 ? -1.5f : 0.0f;
        if (v == 1) {
            bd_value *cv = t_const(t, 0, NULL);
            *(float *)cv->data = fill;
            NODE(t, "Pad", y, x, pads, cv);
        } else {
            NODE(t, "Pad", y, x, pads);
        }
        t_output(t, y);
        trun *r = t_run(t);
        size_t ny = (size_t)(od[0] * od[1] * od[2] * od[3]);
        float *ref = malloc(sizeof *ref * ny);
        for (size_t i = 0; i < ny; i++) {
            int64_t c[4], rem = (int64_t)i;
            bool inside = true;
            for (int k = 3; k >= 0; k--) {
                c[k] = rem % od[k] - pb[k];
                rem /= od[k];
                inside &= c[k] >= 0 && c[k] < d[k];
            }
            ref[i] = inside ? r->in[0][((c[0] * d[1] + c[1]) * d[2] + c[2]) * d[3] + c[3]] : fill;
        }
        static const char *names[] = { "Pad NHWC spatial", "Pad all dims, constant_value", "Pad last dim" };
        t_compare(names[v], r->out[0], ref, ny);
        free(ref);
        t_run_free(r);
        tg_free(t);
    }
}

static void test_reduce_mean(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        /* TF global pool Mean(axes 1,2) keepdims 0 after an NHWC conv (blocked source);
         * keepdims 1; last axis (negative) keepdims 0 */
        tg *t = tg_new();
        int64_t H = 7, W = 6, C = 16;
        bd_value *x = t_input(t, SHAPE(2, H, W, C)), *src = x, *w = NULL;
        if (v == 0) {
            w = t_const(t, SHAPE(1, 1, C, C));
            src = t_val(t, SHAPE(2, H, W, C));
            bd_node *cv = NODE(t, "Conv", src, x, w);
            t_attr_s(t, cv, "data_format", "NHWC");
            t_attr_s(t, cv, "filter_format", "HWIO");
        }
        bd_value *y = v == 0 ? t_val(t, SHAPE(2, C)) : v == 1 ? t_val(t, SHAPE(2, 1, 1, C)) : t_val(t, SHAPE(2, H, W));
        bd_node *n = NODE(t, "ReduceMean", y, src);
        if (v == 2)
            ATTR_INTS(t, n, "axes", -1);
        else
            ATTR_INTS(t, n, "axes", 1, 2);
        t_attr_i(t, n, "keepdims", v == 1);
        t_output(t, y);
        trun *r = t_run(t);
        size_t nx = (size_t)(2 * H * W * C);
        float *in = r->in[0], *conv = NULL;
        if (v == 0) {
            float *xc = nhwc_to_nchw(r->in[0], 2, H, W, C), *wc = hwio_to_oihw(t_data(w), 1, 1, C, C);
            float *yc = malloc(sizeof *yc * nx);
            ref_conv2d(xc, 2, C, H, W, wc, C, 1, 1, NULL, 1, 1, 1, 0, 0, 1, 1, yc, H, W);
            in = conv = nchw_to_nhwc(yc, 2, C, H, W);
            free(xc);
            free(wc);
            free(yc);
        }
        size_t ny = (size_t)bd_shape_numel(&y->shape);
        double *acc = calloc(ny, sizeof *acc);
        for (size_t i = 0; i < nx; i++) {
            size_t n0 = i / (size_t)(H * W * C), c = i % (size_t)C, hw = i / (size_t)C;
            acc[v == 2 ? hw : n0 * (size_t)C + c] += in[i];
        }
        float *ref = malloc(sizeof *ref * ny);
        for (size_t i = 0; i < ny; i++)
            ref[i] = (float)(acc[i] / (double)(v == 2 ? C : H * W));
        static const char *names[] = { "ReduceMean NHWC spatial keepdims 0 (blocked src)",
                                       "ReduceMean NHWC spatial keepdims 1", "ReduceMean axis -1 keepdims 0" };
        t_compare(names[v], r->out[0], ref, ny);
        free(acc);
        free(ref);
        free(conv);
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- Resize ----------------------------------------------------------------------------- */

/* Independent reference: ONNX Resize for one spatial axis, as TF computes it. */
static void taps(const char *mode, const char *ctm, const char *nm, int64_t y, int64_t in, int64_t out,
                 int64_t *lo, int64_t *hi, double *w)
{
    double s = (double)out / (double)in, x;
    if (!strcmp(ctm, "align_corners"))
        x = out > 1 ? (double)y * (double)(in - 1) / (double)(out - 1) : 0;
    else if (!strcmp(ctm, "asymmetric"))
        x = y / s;
    else if (!strcmp(ctm, "tf_half_pixel_for_nn"))
        x = (y + 0.5) / s;
    else
        x = (y + 0.5) / s - 0.5;
    if (!strcmp(mode, "nearest")) {
        int64_t i = !strcmp(nm, "floor") ? (int64_t)floor(x) : !strcmp(nm, "round_prefer_ceil")
                  ? (int64_t)floor(x + 0.5) : (int64_t)ceil(x - 0.5);
        i = i < 0 ? 0 : i >= in ? in - 1 : i;
        *lo = *hi = i;
        *w = 0;
        return;
    }
    x = x < 0 ? 0 : x > in - 1 ? in - 1 : x;
    *lo = (int64_t)floor(x);
    *hi = *lo + 1 < in ? *lo + 1 : in - 1;
    *w = x - *lo;
}

typedef struct resize_case {
    const char *mode, *ctm, *nm;
    bool nhwc;
    int64_t H, W, OH, OW;
} resize_case;

static void run_resize(const resize_case *rc)
{
    tg *t = tg_new();
    int64_t N = 2, C = 5;
    bd_value *x = rc->nhwc ? t_input(t, SHAPE(N, rc->H, rc->W, C)) : t_input(t, SHAPE(N, C, rc->H, rc->W));
    bd_value *y = rc->nhwc ? t_val(t, SHAPE(N, rc->OH, rc->OW, C)) : t_val(t, SHAPE(N, C, rc->OH, rc->OW));
    bd_value *sizes = rc->nhwc ? t_const_i64(t, 4, (int64_t[]){ N, rc->OH, rc->OW, C })
                               : t_const_i64(t, 4, (int64_t[]){ N, C, rc->OH, rc->OW });
    bd_node *n = t_node(t, "Resize", "", 4, (bd_value *[]){ x, NULL, NULL, sizes }, y);
    t_attr_s(t, n, "mode", rc->mode);
    t_attr_s(t, n, "coordinate_transformation_mode", rc->ctm);
    t_attr_s(t, n, "nearest_mode", rc->nm);
    if (rc->nhwc)
        t_attr_s(t, n, "data_format", "NHWC");
    t_output(t, y);
    trun *r = t_run(t);
    size_t ny = (size_t)(N * C * rc->OH * rc->OW);
    float *ref = malloc(sizeof *ref * ny);
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oh = 0; oh < rc->OH; oh++)
                for (int64_t ow = 0; ow < rc->OW; ow++) {
                    int64_t h0, h1, w0, w1;
                    double wh, ww;
                    taps(rc->mode, rc->ctm, rc->nm, oh, rc->H, rc->OH, &h0, &h1, &wh);
                    taps(rc->mode, rc->ctm, rc->nm, ow, rc->W, rc->OW, &w0, &w1, &ww);
#define AT(h, w) (rc->nhwc ? r->in[0][((b * rc->H + (h)) * rc->W + (w)) * C + c] \
                           : r->in[0][((b * C + c) * rc->H + (h)) * rc->W + (w)])
                    double v = (1 - wh) * ((1 - ww) * AT(h0, w0) + ww * AT(h0, w1)) +
                               wh * ((1 - ww) * AT(h1, w0) + ww * AT(h1, w1));
#undef AT
                    size_t o = rc->nhwc ? (size_t)(((b * rc->OH + oh) * rc->OW + ow) * C + c)
                                        : (size_t)(((b * C + c) * rc->OH + oh) * rc->OW + ow);
                    ref[o] = (float)v;
                }
    char name[128];
    snprintf(name, sizeof name, "Resize %s %s%s%s %s %lldx%lld->%lldx%lld", rc->mode, rc->ctm,
             strcmp(rc->mode, "nearest") ? "" : " ", strcmp(rc->mode, "nearest") ? "" : rc->nm,
             rc->nhwc ? "NHWC" : "NCHW", (long long)rc->H, (long long)rc->W, (long long)rc->OH,
             (long long)rc->OW);
    t_compare(name, r->out[0], ref, ny);
    free(ref);
    t_run_free(r);
    tg_free(t);
}

static void test_resize(void **state)
{
    (void)state;
    static const resize_case cases[] = {
        /* oneDNN resampling */
        { "linear", "half_pixel", "round_prefer_floor", true, 5, 7, 10, 14 },
        { "linear", "half_pixel", "round_prefer_floor", true, 8, 9, 5, 4 },
        { "linear", "half_pixel", "round_prefer_floor", false, 6, 6, 9, 13 },
        { "linear", "pytorch_half_pixel", "round_prefer_floor", true, 4, 4, 8, 8 },
        /* the native kernel */
        { "linear", "align_corners", "round_prefer_floor", true, 5, 7, 9, 13 },
        { "linear", "asymmetric", "round_prefer_floor", true, 5, 7, 10, 11 },
        { "nearest", "asymmetric", "floor", true, 5, 7, 10, 14 },
        { "nearest", "tf_half_pixel_for_nn", "floor", true, 6, 5, 9, 13 },
        { "nearest", "align_corners", "round_prefer_ceil", true, 5, 7, 8, 3 },
        { "nearest", "half_pixel", "round_prefer_floor", false, 4, 6, 12, 9 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_resize(&cases[i]);
}

/* ---- what goes elsewhere, and why ------------------------------------------------------- */

static void test_supports_rejects_tf_cases(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 4, 4, 3)), *y = t_val(t, SHAPE(1, 6, 6, 3));
    bd_value *pads = t_const_i64(t, 8, (int64_t[]){ 0, 1, 1, 0, 0, 1, 1, 0 });
    bd_node *pad = NODE(t, "Pad", y, x, pads);
    t_attr_s(t, pad, "mode", "reflect");
    char why[256] = "";
    assert_false(bd_dnnl_backend.supports(t->g, pad, why, sizeof why));
    printf("    rejected: %s\n", why);
    assert_non_null(strstr(why, "reflect"));

    bd_value *z = t_val(t, SHAPE(1, 8, 8, 3));
    bd_value *sizes = t_const_i64(t, 4, (int64_t[]){ 1, 8, 8, 3 });
    bd_node *rs = t_node(t, "Resize", "", 4, (bd_value *[]){ x, NULL, NULL, sizes }, z);
    t_attr_s(t, rs, "mode", "cubic");
    assert_false(bd_dnnl_backend.supports(t->g, rs, why, sizeof why));
    printf("    rejected: %s\n", why);
    assert_non_null(strstr(why, "cubic"));

    bd_value *u = t_val(t, SHAPE(1, 4, 4, 3));
    bd_node *tfop = t_node(t, "LookupTableFindV2", "tf", 1, (bd_value *[]){ x }, u);
    assert_false(bd_dnnl_backend.supports(t->g, tfop, why, sizeof why));
    printf("    rejected: %s\n", why);
    tg_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_nhwc_hwio),
        cmocka_unit_test(test_conv_nhwc_depthwise_hwcm),
        cmocka_unit_test(test_conv_unaligned_weights),
        cmocka_unit_test(test_fold_batchnorm_tf_filters),
        cmocka_unit_test(test_pool_nhwc),
        cmocka_unit_test(test_batchnorm_nhwc),
        cmocka_unit_test(test_nhwc_chain),
        cmocka_unit_test(test_elu),
        cmocka_unit_test(test_max_min),
        cmocka_unit_test(test_prelu),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_reduce_mean),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_supports_rejects_tf_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
