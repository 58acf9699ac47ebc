/* The oneDNN backend, op by op, against naive C references on random inputs. Each test
 * prints the max abs error it saw. */
#include <pthread.h>

#include "tests/backends/dnnl/dnnl_testlib.h"

/* ---- Conv --------------------------------------------------------------------------------- */

typedef struct conv_case {
    const char *name;
    int64_t N, C, H, W, M, KH, KW, G, sh, sw, dh, dw;
    const char *auto_pad;     /* NULL = explicit pads */
    int64_t pads[4];          /* t, l, b, r */
    bool bias;
} conv_case;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, const char *ap)
{
    if (ap && !strncmp(ap, "SAME", 4))
        return (in + s - 1) / s;
    if (ap && !strcmp(ap, "VALID"))
        return (in - ((k - 1) * d + 1)) / s + 1;
    return (in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
}

static void run_conv_case(const conv_case *cc)
{
    tg *t = tg_new();
    int64_t OH = out_dim(cc->H, cc->KH, cc->sh, cc->dh, cc->pads[0], cc->pads[2], cc->auto_pad);
    int64_t OW = out_dim(cc->W, cc->KW, cc->sw, cc->dw, cc->pads[1], cc->pads[3], cc->auto_pad);
    bd_value *x = t_input(t, SHAPE(cc->N, cc->C, cc->H, cc->W));
    bd_value *w = t_const(t, SHAPE(cc->M, cc->C / cc->G, cc->KH, cc->KW));
    bd_value *b = cc->bias ? t_const(t, SHAPE(cc->M)) : NULL;
    bd_value *y = t_val(t, SHAPE(cc->N, cc->M, OH, OW));
    bd_node *n = b ? NODE(t, "Conv", y, x, w, b) : NODE(t, "Conv", y, x, w);
    t_attr_i(t, n, "group", cc->G);
    ATTR_INTS(t, n, "strides", cc->sh, cc->sw);
    ATTR_INTS(t, n, "dilations", cc->dh, cc->dw);
    if (cc->auto_pad)
        t_attr_s(t, n, "auto_pad", cc->auto_pad);
    else
        t_attr_ints(t, n, "pads", 4, (int64_t[]){ cc->pads[0], cc->pads[1], cc->pads[2], cc->pads[3] });
    t_output(t, y);
    trun *r = t_run(t);
    /* reference: SAME pads computed the ONNX way */
    int64_t ph = cc->pads[0], pw = cc->pads[1];
    if (cc->auto_pad && !strncmp(cc->auto_pad, "SAME", 4)) {
        int64_t th = (OH - 1) * cc->sh + (cc->KH - 1) * cc->dh + 1 - cc->H;
        int64_t tw = (OW - 1) * cc->sw + (cc->KW - 1) * cc->dw + 1 - cc->W;
        th = th < 0 ? 0 : th;
        tw = tw < 0 ? 0 : tw;
        bool upper = !strcmp(cc->auto_pad, "SAME_UPPER");
        ph = upper ? th / 2 : th - th / 2;
        pw = upper ? tw / 2 : tw - tw / 2;
    } else if (cc->auto_pad) {
        ph = pw = 0;
    }
    size_t ny = (size_t)bd_shape_numel(&y->shape);
    float *ref = malloc(ny * sizeof(float));
    ref_conv2d(r->in[0], cc->N, cc->C, cc->H, cc->W, t_data(w), cc->M, cc->KH, cc->KW,
               b ? t_data(b) : NULL, cc->G, cc->sh, cc->sw, ph, pw, cc->dh, cc->dw, ref, OH, OW);
    t_compare(cc->name, r->out[0], ref, ny);
    free(ref);
    t_run_free(r);
    tg_free(t);
}

static void test_conv_variants(void **state)
{
    (void)state;
    static const conv_case cases[] = {
        { "conv 3x3 pad1 bias",            1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, NULL, { 1, 1, 1, 1 }, true },
        { "conv first layer 7x7/2 C=3",    1, 3, 32, 32, 16, 7, 7, 1, 2, 2, 1, 1, NULL, { 3, 3, 3, 3 }, true },
        { "conv groups=4 stride 2 dil 2",  2, 16, 13, 11, 8, 3, 3, 4, 2, 2, 2, 2, NULL, { 2, 1, 2, 1 }, true },
        { "conv depthwise SAME_UPPER s2",  1, 24, 15, 15, 24, 3, 3, 24, 2, 2, 1, 1, "SAME_UPPER", { 0 }, true },
        { "conv SAME_LOWER 4x4",           1, 8, 9, 9, 8, 4, 4, 1, 1, 1, 1, 1, "SAME_LOWER", { 0 }, false },
        { "conv VALID 1x1 stride 2",       1, 32, 10, 10, 64, 1, 1, 1, 2, 2, 1, 1, "VALID", { 0 }, false },
        { "conv asymmetric pads",          1, 5, 8, 7, 6, 3, 2, 1, 1, 2, 1, 1, NULL, { 0, 1, 2, 0 }, true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_conv_case(&cases[i]);
}

static void test_conv1d(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(2, 4, 20));
    bd_value *w = t_const(t, SHAPE(6, 4, 5));
    bd_value *y = t_val(t, SHAPE(2, 6, 9));
    bd_node *n = NODE(t, "Conv", y, x, w);
    ATTR_INTS(t, n, "strides", 2);
    ATTR_INTS(t, n, "pads", 1, 1);
    t_output(t, y);
    trun *r = t_run(t);
    float ref[2 * 6 * 9];
    ref_conv2d(r->in[0], 2, 4, 1, 20, t_data(w), 6, 1, 5, NULL, 1, 1, 2, 0, 1, 1, 1, ref, 1, 9);
    t_compare("conv 1-D", r->out[0], ref, sizeof ref / sizeof ref[0]);
    t_run_free(r);
    tg_free(t);
}

/* Conv with each post-op kind: relu, binary per-channel mul, sum. The residual r0 = conv(x)
 * either dies at the fused conv (sum in place: no copy step), stays alive (it is also a graph
 * output: copied into the destination first), or is the subgraph input itself. */
static void test_conv_postops(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(1, 16, 8, 8));
        bd_value *w0 = t_const(t, SHAPE(16, 16, 3, 3)), *wa = t_const(t, SHAPE(16, 16, 3, 3));
        bd_value *w1 = t_const(t, SHAPE(16, 16, 3, 3));
        bd_value *scale = t_const(t, SHAPE(1, 16, 1, 1));
        bd_value *r0 = t_val(t, SHAPE(1, 16, 8, 8)), *a = t_val(t, SHAPE(1, 16, 8, 8));
        bd_value *y = t_val(t, SHAPE(1, 16, 8, 8));
        ATTR_INTS(t, NODE(t, "Conv", r0, x, w0), "pads", 1, 1, 1, 1);   /* the residual */
        ATTR_INTS(t, NODE(t, "Conv", a, x, wa), "pads", 1, 1, 1, 1);
        bd_node *c1 = NODE(t, "Conv", y, a, w1);      /* y = relu(conv(a)) * scale + residual */
        ATTR_INTS(t, c1, "pads", 1, 1, 1, 1);
        bd_error err = { 0 };
        int si = bd_node_append_input(t->g, c1, scale, &err);
        int ri = bd_node_append_input(t->g, c1, variant == 2 ? x : r0, &err);
        c1->post[c1->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_RELU };
        c1->post[c1->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_MUL, .input = si };
        c1->post[c1->n_post++] = (bd_postop){ .kind = BD_POST_SUM, .scale = 1.0f, .input = ri };
        t_output(t, y);
        if (variant >= 1)
            t_output(t, r0);   /* the residual stays alive after the fused conv */
        trun *r = t_run(t);
        float ref0[16 * 64], refa[16 * 64], ref1[16 * 64];
        ref_conv2d(r->in[0], 1, 16, 8, 8, t_data(w0), 16, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, ref0, 8, 8);
        ref_conv2d(r->in[0], 1, 16, 8, 8, t_data(wa), 16, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, refa, 8, 8);
        ref_conv2d(refa, 1, 16, 8, 8, t_data(w1), 16, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, ref1, 8, 8);
        const float *res = variant == 2 ? r->in[0] : ref0;
        for (int i = 0; i < 16 * 64; i++) {
            float v = ref1[i] > 0 ? ref1[i] : 0;
            ref1[i] = v * t_data(scale)[i / 64] + res[i];
        }
        static const char *names[] = { "conv+relu+mul+sum (in place)", "conv+relu+mul+sum (residual alive)",
                                       "conv+relu+mul+sum (residual = input)" };
        t_compare(names[variant], r->out[0], ref1, 16 * 64);
        if (variant >= 1)
            t_compare("  ... residual output intact", r->out[1], ref0, 16 * 64);
        /* in place: input reorder (shared by both convs), 3 convs, output reorder; no copy.
         * On every ISA: where oneDNN's kernels (AVX2's) take the sum only as the first
         * post-op, the sum becomes a binary add reading the residual where it lies */
        if (variant == 0)
            assert_int_equal(bd_dnnl_kernel_num_steps(r->k), 5);
        /* and no step falls to oneDNN's reference code (AVX2 once ran this fused conv on
         * ref:any, through two extra reorders to its channels-last layout) */
        for (int i = 0; i < bd_dnnl_kernel_num_steps(r->k); i++)
            if (!strncmp(bd_dnnl_kernel_step_impl(r->k, i), "ref", 3))
                fail_msg("%s: step %d runs on %s", names[variant], i, bd_dnnl_kernel_step_impl(r->k, i));
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- Gemm / MatMul -------------------------------------------------------------------- */

static void test_gemm(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        int64_t M = 5, K = 37, N = 19;
        bool ta = v & 1, tb = v != 2;
        bool const_b = v != 3;
        float alpha = v == 1 ? 0.5f : 1.0f, beta = v >= 2 ? 1.0f : 2.0f;
        tg *t = tg_new();
        bd_value *a = ta ? t_input(t, SHAPE(K, M)) : t_input(t, SHAPE(M, K));
        bd_value *b = const_b ? (tb ? t_const(t, SHAPE(N, K)) : t_const(t, SHAPE(K, N)))
                              : (tb ? t_input(t, SHAPE(N, K)) : t_input(t, SHAPE(K, N)));
        bd_value *c = v == 2 ? t_const(t, SHAPE(M, N)) : t_const(t, SHAPE(N));
        bd_value *y = t_val(t, SHAPE(M, N));
        bd_node *n = NODE(t, "Gemm", y, a, b, c);
        t_attr_i(t, n, "transA", ta);
        t_attr_i(t, n, "transB", tb);
        t_attr_f(t, n, "alpha", alpha);
        t_attr_f(t, n, "beta", beta);
        if (v == 3)
            n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_TANH };
        t_output(t, y);
        trun *r = t_run(t);
        const float *A = r->in[0], *B = const_b ? t_data(b) : r->in[1];
        float ref[5 * 19];
        for (int64_t m = 0; m < M; m++)
            for (int64_t nn = 0; nn < N; nn++) {
                double acc = 0;
                for (int64_t k = 0; k < K; k++)
                    acc += (double)(ta ? A[k * M + m] : A[m * K + k]) * (tb ? B[nn * K + k] : B[k * N + nn]);
                float cv = v == 2 ? t_data(c)[m * N + nn] : t_data(c)[nn];
                ref[m * N + nn] = (float)(alpha * acc + beta * cv);
                if (v == 3)
                    ref[m * N + nn] = tanhf(ref[m * N + nn]);
            }
        static const char *names[] = { "gemm transB beta=2", "gemm transA transB alpha=.5", "gemm C=[M,N]",
                                       "gemm B input, transA, +tanh" };
        t_compare(names[v], r->out[0], ref, (size_t)(M * N));
        t_run_free(r);
        tg_free(t);
    }
}

/* BERT-style projection: [2,7,32] x const [32,24] + bias, then gelu, fused. */
static void test_matmul_projection_fused(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *a = t_input(t, SHAPE(2, 7, 32));
    bd_value *w = t_const(t, SHAPE(32, 24)), *bias = t_const(t, SHAPE(24));
    bd_value *res = t_input(t, SHAPE(2, 7, 24));
    bd_value *y = t_val(t, SHAPE(2, 7, 24));
    bd_node *n = NODE(t, "MatMul", y, a, w);
    bd_error err = { 0 };
    int bi = bd_node_append_input(t->g, n, bias, &err);
    int ri = bd_node_append_input(t->g, n, res, &err);
    n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = bi };
    n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_GELU_ERF };
    n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = ri };
    t_output(t, y);
    trun *r = t_run(t);
    float ref[2 * 7 * 24];
    ref_matmul(r->in[0], 3, DIMS(2, 7, 32), t_data(w), 2, DIMS(32, 24), ref, 3, DIMS(2, 7, 24));
    for (int i = 0; i < 2 * 7 * 24; i++)
        ref[i] = ref_gelu_erf(ref[i] + t_data(bias)[i % 24]) + r->in[1][i];
    t_compare("matmul [2,7,32]x[32,24]+bias,gelu,+res", r->out[0], ref, sizeof ref / sizeof ref[0]);
    t_run_free(r);
    tg_free(t);
}

/* MatMul + relu + a residual as a SUM post-op after the relu: oneDNN 2.6's AVX2 gemm matmul
 * takes a sum only first (ref:any otherwise), so braid reads the residual as a binary add. */
static void test_matmul_late_sum(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *a = t_input(t, SHAPE(2, 7, 32)), *w = t_const(t, SHAPE(32, 24));
    bd_value *res = t_input(t, SHAPE(2, 7, 24)), *y = t_val(t, SHAPE(2, 7, 24));
    bd_node *n = NODE(t, "MatMul", y, a, w);
    bd_error err = { 0 };
    int ri = bd_node_append_input(t->g, n, res, &err);
    n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_RELU };
    n->post[n->n_post++] = (bd_postop){ .kind = BD_POST_SUM, .scale = 1.0f, .input = ri };
    t_output(t, y);
    trun *r = t_run(t);
    float ref[2 * 7 * 24];
    ref_matmul(r->in[0], 3, DIMS(2, 7, 32), t_data(w), 2, DIMS(32, 24), ref, 3, DIMS(2, 7, 24));
    for (int i = 0; i < 2 * 7 * 24; i++)
        ref[i] = (ref[i] > 0 ? ref[i] : 0) + r->in[1][i];
    t_compare("matmul [2,7,32]x[32,24],relu,+res (sum)", r->out[0], ref, sizeof ref / sizeof ref[0]);
    for (int i = 0; i < bd_dnnl_kernel_num_steps(r->k); i++)
        if (!strncmp(bd_dnnl_kernel_step_impl(r->k, i), "ref", 3))
            fail_msg("matmul + relu + sum: step %d runs on %s", i, bd_dnnl_kernel_step_impl(r->k, i));
    t_run_free(r);
    tg_free(t);
}

static void test_matmul_batched_broadcast(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *a = t_input(t, SHAPE(2, 1, 5, 8));
    bd_value *b = t_input(t, SHAPE(3, 8, 6));
    bd_value *y = t_val(t, SHAPE(2, 3, 5, 6));
    NODE(t, "MatMul", y, a, b);
    t_output(t, y);
    trun *r = t_run(t);
    float ref[2 * 3 * 5 * 6];
    ref_matmul(r->in[0], 4, DIMS(2, 1, 5, 8), r->in[1], 3, DIMS(3, 8, 6), ref, 4, DIMS(2, 3, 5, 6));
    t_compare("matmul [2,1,5,8]x[3,8,6] broadcast", r->out[0], ref, sizeof ref / sizeof ref[0]);
    t_run_free(r);
    tg_free(t);
}

/* Attention scores: Q [1,S,H,D] -> Transpose(0,2,1,3); K -> Transpose(0,2,3,1); MatMul. The
 * transposes are views that the matmul reads strided. */
static void test_matmul_transposed_views(void **state)
{
    (void)state;
    int64_t S = 6, H = 2, D = 4;
    tg *t = tg_new();
    bd_value *q = t_input(t, SHAPE(1, S, H, D)), *k = t_input(t, SHAPE(1, S, H, D));
    bd_value *qt = t_val(t, SHAPE(1, H, S, D)), *kt = t_val(t, SHAPE(1, H, D, S));
    bd_value *y = t_val(t, SHAPE(1, H, S, S));
    ATTR_INTS(t, NODE(t, "Transpose", qt, q), "perm", 0, 2, 1, 3);
    ATTR_INTS(t, NODE(t, "Transpose", kt, k), "perm", 0, 2, 3, 1);
    NODE(t, "MatMul", y, qt, kt);
    t_output(t, y);
    trun *r = t_run(t);
    float ref[2 * 6 * 6];
    for (int64_t h = 0; h < H; h++)
        for (int64_t i = 0; i < S; i++)
            for (int64_t j = 0; j < S; j++) {
                double acc = 0;
                for (int64_t d = 0; d < D; d++)
                    acc += (double)r->in[0][(i * H + h) * D + d] * r->in[1][(j * H + h) * D + d];
                ref[(h * S + i) * S + j] = (float)acc;
            }
    t_compare("matmul of transposed views (QK^T)", r->out[0], ref, sizeof ref / sizeof ref[0]);
    t_run_free(r);
    tg_free(t);
}

/* ---- eltwise ---------------------------------------------------------------------------- */

static void test_eltwise_ops(void **state)
{
    (void)state;
    static const char *ops[] = { "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Erf", "Gelu" };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(3, 5, 7));
        bd_value *y = t_val(t, SHAPE(3, 5, 7));
        bd_node *n;
        if (!strcmp(ops[o], "Clip")) {
            bd_value *lo = t_const_range(t, 0, NULL, -0.3f, -0.3f), *hi = t_const_range(t, 0, NULL, 0.6f, 0.6f);
            n = NODE(t, "Clip", y, x, lo, hi);
        } else {
            n = t_node(t, ops[o], !strcmp(ops[o], "Gelu") ? "braid" : "", 1, (bd_value *[]){ x }, y);
        }
        if (!strcmp(ops[o], "LeakyRelu"))
            t_attr_f(t, n, "alpha", 0.2f);
        t_output(t, y);
        trun *r = t_run(t);
        float ref[105];
        for (int i = 0; i < 105; i++) {
            float v = r->in[0][i];
            switch (o) {
            case 0: ref[i] = v > 0 ? v : 0; break;
            case 1: ref[i] = v > 0 ? v : 0.2f * v; break;
            case 2: ref[i] = v < -0.3f ? -0.3f : v > 0.6f ? 0.6f : v; break;
            case 3: ref[i] = ref_sigmoid(v); break;
            case 4: ref[i] = tanhf(v); break;
            case 5: ref[i] = erff(v); break;
            default: ref[i] = ref_gelu_erf(v); break;
            }
        }
        t_compare(ops[o], r->out[0], ref, 105);
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- binary -------------------------------------------------------------------------- */

static void test_binary_broadcast(void **state)
{
    (void)state;
    static const char *ops[] = { "Add", "Sub", "Mul", "Div", "Mul", "Sub" };
    for (int o = 0; o < 6; o++) {
        tg *t = tg_new();
        bd_value *a = t_input(t, SHAPE(2, 3, 4, 5));
        bd_value *b;
        switch (o) {
        case 0: b = t_const(t, SHAPE(5)); break;
        case 1: b = t_const_range(t, 0, NULL, 0.25f, 0.25f); break;
        case 2: b = t_input(t, SHAPE(3, 1, 1)); break;
        case 3: b = t_const_range(t, SHAPE(2, 3, 4, 5), 0.5f, 2.0f); break;
        case 4: b = t_input(t, SHAPE(1, 5)); break;   /* [4,1] is ref-only: test_dnnl_cliffs.c */
        default: b = t_const_range(t, 0, NULL, 1.0f, 1.0f); break;   /* 1 - x (BERT's mask) */
        }
        int rb = b->shape.rank;
        const int64_t *bd = b->shape.dims;
        bd_value *y = t_val(t, SHAPE(2, 3, 4, 5));
        if (o >= 4)
            NODE(t, ops[o], y, b, a);   /* broadcast operand first: swapped (Sub negated) */
        else
            NODE(t, ops[o], y, a, b);
        t_output(t, y);
        trun *r = t_run(t);
        const float *B = b->data ? t_data(b) : r->in[1];
        float ref[120];
        for (size_t i = 0; i < 120; i++) {
            float x = r->in[0][i], z = B[bcast_off(i, 4, DIMS(2, 3, 4, 5), rb, bd)];
            ref[i] = o == 0 ? x + z : o == 1 ? x - z : o == 3 ? x / z : o == 5 ? z - x : x * z;
        }
        char name[48];
        snprintf(name, sizeof name, "%s broadcast (case %d)", ops[o], o);
        t_compare(name, r->out[0], ref, 120);
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- normalisation -------------------------------------------------------------------- */

static void test_batchnorm(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(2, 6, 5, 3));
    bd_value *sc = t_const(t, SHAPE(6)), *bi = t_const(t, SHAPE(6)), *mu = t_const(t, SHAPE(6));
    bd_value *var = t_const_range(t, SHAPE(6), 0.5f, 2.0f);
    bd_value *y = t_val(t, SHAPE(2, 6, 5, 3));
    t_attr_f(t, NODE(t, "BatchNormalization", y, x, sc, bi, mu, var), "epsilon", 1e-3f);
    t_output(t, y);
    trun *r = t_run(t);
    float ref[180];
    for (int i = 0; i < 180; i++) {
        int c = (i / 15) % 6;
        ref[i] = (r->in[0][i] - t_data(mu)[c]) / sqrtf(t_data(var)[c] + 1e-3f) * t_data(sc)[c] + t_data(bi)[c];
    }
    t_compare("BatchNormalization", r->out[0], ref, 180);
    t_run_free(r);
    tg_free(t);
}

static void test_softmax(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        tg *t = tg_new();
        bd_graph_set_opset(t->g, v == 0 ? 11 : 13);
        bd_value *x = t_input(t, SHAPE(2, 3, 8));
        bd_value *y = t_val(t, SHAPE(2, 3, 8));
        t_attr_i(t, NODE(t, "Softmax", y, x), "axis", v == 0 ? 1 : -1);
        t_output(t, y);
        trun *r = t_run(t);
        float ref[48];
        int rows = v == 0 ? 2 : 6, cols = v == 0 ? 24 : 8;
        for (int i = 0; i < rows; i++) {
            float mx = -INFINITY;
            double s = 0;
            for (int j = 0; j < cols; j++)
                mx = fmaxf(mx, r->in[0][i * cols + j]);
            for (int j = 0; j < cols; j++)
                s += exp(r->in[0][i * cols + j] - mx);
            for (int j = 0; j < cols; j++)
                ref[i * cols + j] = (float)(exp(r->in[0][i * cols + j] - mx) / s);
        }
        t_compare(v == 0 ? "Softmax opset 11 axis 1 (flattened)" : "Softmax opset 13 axis -1", r->out[0], ref, 48);
        t_run_free(r);
        tg_free(t);
    }
}

static void test_layernorm(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(2, 4, 6));
        bd_value *sc = v == 0 ? t_const(t, SHAPE(6)) : t_const(t, SHAPE(4, 6));
        bd_value *bi = v == 0 ? t_const(t, SHAPE(6)) : NULL;
        bd_value *y = t_val(t, SHAPE(2, 4, 6));
        bd_node *n = bi ? NODE(t, "LayerNormalization", y, x, sc, bi) : NODE(t, "LayerNormalization", y, x, sc);
        t_attr_i(t, n, "axis", v == 0 ? -1 : 1);
        t_attr_f(t, n, "epsilon", 1e-5f);
        t_output(t, y);
        trun *r = t_run(t);
        float ref[48];
        int rows = v == 0 ? 8 : 2, cols = v == 0 ? 6 : 24;
        for (int i = 0; i < rows; i++) {
            double m = 0, q = 0;
            for (int j = 0; j < cols; j++)
                m += r->in[0][i * cols + j];
            m /= cols;
            for (int j = 0; j < cols; j++)
                q += (r->in[0][i * cols + j] - m) * (r->in[0][i * cols + j] - m);
            q /= cols;
            for (int j = 0; j < cols; j++)
                ref[i * cols + j] = (float)((r->in[0][i * cols + j] - m) / sqrt(q + 1e-5)) * t_data(sc)[j] +
                                    (bi ? t_data(bi)[j] : 0.0f);
        }
        t_compare(v == 0 ? "LayerNormalization axis -1 + bias" : "LayerNormalization axis 1, no bias",
                  r->out[0], ref, 48);
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- pooling ---------------------------------------------------------------------------- */

static void ref_pool(const float *x, int64_t NC, int64_t H, int64_t W, int64_t k, int64_t s, int64_t p,
                     bool max, bool include_pad, float *y, int64_t OH, int64_t OW)
{
    for (int64_t c = 0; c < NC; c++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double acc = max ? -INFINITY : 0;
                int cnt = 0;
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t ih = oh * s - p + i, iw = ow * s - p + j;
                        bool in_pad = ih >= -p && ih < H + p && iw >= -p && iw < W + p;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                            if (include_pad && in_pad)
                                cnt++;
                            continue;
                        }
                        float v = x[(c * H + ih) * W + iw];
                        acc = max ? fmax(acc, v) : acc + v;
                        cnt++;
                    }
                y[(c * OH + oh) * OW + ow] = (float)(max ? acc : acc / cnt);
            }
}

static void test_pooling(void **state)
{
    (void)state;
    /* max 3x3/2 pad 1; avg 3x3/2 ceil_mode exclude pad; avg 2x2/2 count_include_pad pad 1 */
    for (int v = 0; v < 3; v++) {
        int64_t H = 9, k = v == 2 ? 2 : 3, s = 2, p = v == 1 ? 0 : 1;
        int64_t OH = v == 1 ? (H - k + s - 1) / s + 1 : (H + 2 * p - k) / s + 1;
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(1, 16, H, H));
        bd_value *y = t_val(t, SHAPE(1, 16, OH, OH));
        bd_node *n = NODE(t, v == 0 ? "MaxPool" : "AveragePool", y, x);
        ATTR_INTS(t, n, "kernel_shape", k, k);
        ATTR_INTS(t, n, "strides", s, s);
        t_attr_ints(t, n, "pads", 4, (int64_t[]){ p, p, p, p });
        if (v == 1)
            t_attr_i(t, n, "ceil_mode", 1);
        if (v == 2)
            t_attr_i(t, n, "count_include_pad", 1);
        t_output(t, y);
        trun *r = t_run(t);
        float *ref = malloc(sizeof(float) * (size_t)(16 * OH * OH));
        ref_pool(r->in[0], 16, H, H, k, s, p, v == 0, v == 2, ref, OH, OH);
        static const char *names[] = { "MaxPool 3x3/2 pad 1", "AveragePool 3x3/2 ceil_mode", "AveragePool 2x2/2 include pad" };
        t_compare(names[v], r->out[0], ref, (size_t)(16 * OH * OH));
        free(ref);
        t_run_free(r);
        tg_free(t);
    }
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(2, 8, 5, 5));
    bd_value *y = t_val(t, SHAPE(2, 8, 1, 1));
    NODE(t, "GlobalAveragePool", y, x);
    t_output(t, y);
    trun *r = t_run(t);
    float ref[16];
    for (int c = 0; c < 16; c++) {
        double s = 0;
        for (int i = 0; i < 25; i++)
            s += r->in[0][c * 25 + i];
        ref[c] = (float)(s / 25);
    }
    t_compare("GlobalAveragePool", r->out[0], ref, 16);
    t_run_free(r);
    tg_free(t);
}

/* ---- shape ops ---------------------------------------------------------------------------- */

/* conv (blocked out) -> Reshape/Squeeze/Unsqueeze/Flatten/Identity views; Transpose; Concat. */
static void test_shape_ops(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 16, 4, 4));
    bd_value *w = t_const(t, SHAPE(16, 16, 1, 1));
    bd_value *c = t_val(t, SHAPE(1, 16, 4, 4));
    NODE(t, "Conv", c, x, w);
    bd_value *r1 = t_val(t, SHAPE(16, 16));
    NODE(t, "Reshape", r1, c, t_const_i64(t, 2, DIMS(16, -1)));
    bd_value *u = t_val(t, SHAPE(1, 16, 16));
    ATTR_INTS(t, NODE(t, "Unsqueeze", u, r1), "axes", 0);
    bd_value *s = t_val(t, SHAPE(16, 16));
    NODE(t, "Squeeze", s, u, t_const_i64(t, 1, DIMS(0)));
    bd_value *id = t_val(t, SHAPE(16, 16));
    NODE(t, "Identity", id, s);
    bd_value *tr = t_val(t, SHAPE(16, 16));
    ATTR_INTS(t, NODE(t, "Transpose", tr, id), "perm", 1, 0);
    bd_value *f = t_val(t, SHAPE(1, 256));
    t_attr_i(t, NODE(t, "Flatten", f, c), "axis", 1);
    bd_value *x2 = t_input(t, SHAPE(1, 8, 4, 4));
    bd_value *cat = t_val(t, SHAPE(1, 24, 4, 4));
    t_attr_i(t, NODE(t, "Concat", cat, c, x2), "axis", 1);
    t_output(t, tr);
    t_output(t, f);
    t_output(t, cat);
    trun *r = t_run(t);
    float conv[256], ref[256], refcat[384];
    ref_conv2d(r->in[0], 1, 16, 4, 4, t_data(w), 16, 1, 1, NULL, 1, 1, 1, 0, 0, 1, 1, conv, 4, 4);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            ref[j * 16 + i] = conv[i * 16 + j];
    t_compare("Reshape/Unsqueeze/Squeeze/Identity/Transpose", r->out[0], ref, 256);
    t_compare("Flatten of a blocked conv output", r->out[1], conv, 256);
    memcpy(refcat, conv, sizeof conv);
    memcpy(refcat + 256, r->in[1], 128 * sizeof(float));
    t_compare("Concat (blocked + plain)", r->out[2], refcat, 384);
    t_run_free(r);
    tg_free(t);
}

/* A Concat fed a Transpose (a permuted view) must not run oneDNN's reference concat
 * (issue 24). Two shapes from the zoo: a GPT decoder step's KV cache, past [B,H,T,D] with the
 * new token's K [B,1,H,D] transposed to [B,H,1,D]; ViT's class token [1,1,D] before the patch
 * embeddings, a conv's [1,D,N] transposed to [1,N,D]. */
static void test_concat_of_transposed_view_is_not_ref(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        bool gpt = variant == 0;
        const char *what = gpt ? "KV-cache concat [2,4,7,8]+T[2,1,4,8]" : "class-token concat [1,1,8]+T[1,8,5]";
        tg *t = tg_new();
        bd_value *a, *x, *xt, *y;
        if (gpt) {
            a = t_input(t, SHAPE(2, 4, 7, 8));
            x = t_input(t, SHAPE(2, 1, 4, 8));
            xt = t_val(t, SHAPE(2, 4, 1, 8));
            y = t_val(t, SHAPE(2, 4, 8, 8));
            ATTR_INTS(t, NODE(t, "Transpose", xt, x), "perm", 0, 2, 1, 3);
            t_attr_i(t, NODE(t, "Concat", y, a, xt), "axis", 2);
        } else {
            a = t_const(t, SHAPE(1, 1, 8));
            x = t_input(t, SHAPE(1, 8, 5));
            xt = t_val(t, SHAPE(1, 5, 8));
            y = t_val(t, SHAPE(1, 6, 8));
            ATTR_INTS(t, NODE(t, "Transpose", xt, x), "perm", 0, 2, 1);
            t_attr_i(t, NODE(t, "Concat", y, a, xt), "axis", 1);
        }
        t_output(t, y);
        trun *r = t_run(t);
        float ref[2 * 4 * 8 * 8];
        size_t n = 0;
        if (gpt) {
            const float *past = r->in[0], *k = r->in[1];
            for (int b = 0; b < 2; b++)
                for (int h = 0; h < 4; h++)
                    for (int s = 0; s < 8; s++)
                        for (int d = 0; d < 8; d++)
                            ref[n++] = s < 7 ? past[((b * 4 + h) * 7 + s) * 8 + d] : k[(b * 4 + h) * 8 + d];
        } else {
            const float *cls = t_data(a), *p = r->in[0];
            for (int s = 0; s < 6; s++)
                for (int d = 0; d < 8; d++)
                    ref[n++] = s == 0 ? cls[d] : p[d * 5 + (s - 1)];
        }
        t_compare(what, r->out[0], ref, n);
        for (int i = 0; i < bd_dnnl_kernel_num_steps(r->k); i++)
            if (!strncmp(bd_dnnl_kernel_step_impl(r->k, i), "ref", 3))
                fail_msg("%s: step %d runs on %s", what, i, bd_dnnl_kernel_step_impl(r->k, i));
        t_run_free(r);
        tg_free(t);
    }
}

/* ---- whole chains ------------------------------------------------------------------------ */

/* conv -> relu -> maxpool -> conv -> flatten -> gemm, all layouts left to oneDNN. */
typedef struct chain {
    tg *t;
    bd_value *w0, *w1, *b0, *gw, *gb;
} chain;

static chain build_chain(void)
{
    chain ch;
    tg *t = ch.t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 8, 16, 16));
    ch.w0 = t_const(t, SHAPE(32, 8, 3, 3));
    ch.b0 = t_const(t, SHAPE(32));
    bd_value *c0 = t_val(t, SHAPE(1, 32, 16, 16)), *r0 = t_val(t, SHAPE(1, 32, 16, 16));
    ATTR_INTS(t, NODE(t, "Conv", c0, x, ch.w0, ch.b0), "pads", 1, 1, 1, 1);
    NODE(t, "Relu", r0, c0);
    bd_value *p0 = t_val(t, SHAPE(1, 32, 8, 8));
    bd_node *mp = NODE(t, "MaxPool", p0, r0);
    ATTR_INTS(t, mp, "kernel_shape", 2, 2);
    ATTR_INTS(t, mp, "strides", 2, 2);
    ch.w1 = t_const(t, SHAPE(16, 32, 3, 3));
    bd_value *c1 = t_val(t, SHAPE(1, 16, 8, 8));
    ATTR_INTS(t, NODE(t, "Conv", c1, p0, ch.w1), "pads", 1, 1, 1, 1);
    bd_value *f = t_val(t, SHAPE(1, 1024));
    NODE(t, "Flatten", f, c1);
    ch.gw = t_const(t, SHAPE(10, 1024));
    ch.gb = t_const(t, SHAPE(10));
    bd_value *y = t_val(t, SHAPE(1, 10));
    t_attr_i(t, NODE(t, "Gemm", y, f, ch.gw, ch.gb), "transB", 1);
    t_output(t, y);
    return ch;
}

static void ref_chain(const chain *ch, const float *x, float *y)
{
    static float c0[32 * 256], p0[32 * 64], c1[16 * 64];
    ref_conv2d(x, 1, 8, 16, 16, t_data(ch->w0), 32, 3, 3, t_data(ch->b0), 1, 1, 1, 1, 1, 1, 1, c0, 16, 16);
    for (int i = 0; i < 32 * 256; i++)
        c0[i] = c0[i] > 0 ? c0[i] : 0;
    ref_pool(c0, 32, 16, 16, 2, 2, 0, true, false, p0, 8, 8);
    ref_conv2d(p0, 1, 32, 8, 8, t_data(ch->w1), 16, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, c1, 8, 8);
    for (int o = 0; o < 10; o++) {
        double acc = t_data(ch->gb)[o];
        for (int k = 0; k < 1024; k++)
            acc += (double)c1[k] * t_data(ch->gw)[o * 1024 + k];
        y[o] = (float)acc;
    }
}

static void test_blocked_chain(void **state)
{
    (void)state;
    chain ch = build_chain();
    trun *r = t_run(ch.t);
    float ref[10];
    ref_chain(&ch, r->in[0], ref);
    t_compare("conv->relu->maxpool->conv->flatten->gemm", r->out[0], ref, 10);
    size_t arena, naive;
    bd_dnnl_kernel_arena(r->k, &arena, &naive);
    printf("    chain: %d steps, arena %zu bytes (no reuse: %zu)\n", bd_dnnl_kernel_num_steps(r->k), arena, naive);
    t_run_free(r);
    tg_free(ch.t);
}

/* A blocked conv output read plain by two consumers: one reorder, shared. */
static void test_reorder_shared(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 16, 6, 6));
    bd_value *w = t_const(t, SHAPE(32, 16, 3, 3));
    bd_value *c = t_val(t, SHAPE(1, 32, 6, 6));
    ATTR_INTS(t, NODE(t, "Conv", c, x, w), "pads", 1, 1, 1, 1);
    bd_value *f = t_val(t, SHAPE(1, 1152)), *q = t_val(t, SHAPE(32, 36));
    NODE(t, "Flatten", f, c);
    NODE(t, "Reshape", q, c, t_const_i64(t, 2, DIMS(32, 36)));
    bd_value *y1 = t_val(t, SHAPE(1, 1152)), *y2 = t_val(t, SHAPE(32, 36));
    NODE(t, "Relu", y1, f);
    NODE(t, "Sigmoid", y2, q);
    t_output(t, y1);
    t_output(t, y2);
    trun *r = t_run(t);
    float conv[1152], ref1[1152], ref2[1152];
    ref_conv2d(r->in[0], 1, 16, 6, 6, t_data(w), 32, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, conv, 6, 6);
    for (int i = 0; i < 1152; i++) {
        ref1[i] = conv[i] > 0 ? conv[i] : 0;
        ref2[i] = ref_sigmoid(conv[i]);
    }
    t_compare("reorder shared: Flatten->Relu", r->out[0], ref1, 1152);
    t_compare("reorder shared: Reshape->Sigmoid", r->out[1], ref2, 1152);
    int steps = bd_dnnl_kernel_num_steps(r->k);
    /* input reorder to the conv's layout, conv, ONE shared reorder to plain, relu, sigmoid */
    printf("    reorder sharing: %d steps\n", steps);
    assert_true(steps <= 5);
    t_run_free(r);
    tg_free(t);
}

/* Strided 1x1 convolutions pick their input's pixels first (dnnl_conv.c): two at stride 2
 * over the same input (ResNet's block and its shortcut) share one picking step; one at
 * stride 3, whose picked pixels have the same 2x2 shape (0 and 3, not 0 and 2), has its own. */
static void test_subsample_shared(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 16, 4, 4));
    const int64_t ms[3] = { 8, 24, 16 }, ss[3] = { 2, 2, 3 };
    bd_value *w[3], *b[3], *y[3];
    for (int i = 0; i < 3; i++) {
        w[i] = t_const(t, SHAPE(ms[i], 16, 1, 1));
        b[i] = t_const(t, SHAPE(ms[i]));
        y[i] = t_val(t, SHAPE(1, ms[i], 2, 2));
        ATTR_INTS(t, NODE(t, "Conv", y[i], x, w[i], b[i]), "strides", ss[i], ss[i]);
        t_output(t, y[i]);
    }
    trun *r = t_run(t);
    static const char *names[3] = { "subsample shared: stride 2", "subsample shared: stride 2 again",
                                    "subsample shared: stride 3" };
    for (int i = 0; i < 3; i++) {
        float ref[24 * 4];
        ref_conv2d(r->in[0], 1, 16, 4, 4, t_data(w[i]), ms[i], 1, 1, t_data(b[i]), 1, ss[i], ss[i],
                   0, 0, 1, 1, ref, 2, 2);
        t_compare(names[i], r->out[i], ref, (size_t)ms[i] * 4);
    }
    int steps = bd_dnnl_kernel_num_steps(r->k);
    printf("    subsample sharing: %d steps\n", steps);
    /* x into the convolutions' layout, 2 pickings, 3 convolutions, 3 outputs back to plain */
    assert_true(steps <= 9);
    t_run_free(r);
    tg_free(t);
}

/* Liveness: a chain of 6 same-shape convs needs far less than the sum of its tensors. */
static void test_arena_reuse(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *cur = t_input(t, SHAPE(1, 16, 12, 12));
    bd_value *ws[6];
    for (int i = 0; i < 6; i++) {
        ws[i] = t_const_range(t, SHAPE(16, 16, 3, 3), -0.2f, 0.2f);
        bd_value *nx = t_val(t, SHAPE(1, 16, 12, 12));
        ATTR_INTS(t, NODE(t, "Conv", nx, cur, ws[i]), "pads", 1, 1, 1, 1);
        cur = nx;
    }
    t_output(t, cur);
    trun *r = t_run(t);
    float a[2304], b[2304];
    memcpy(a, r->in[0], sizeof a);
    for (int i = 0; i < 6; i++) {
        ref_conv2d(a, 1, 16, 12, 12, t_data(ws[i]), 16, 3, 3, NULL, 1, 1, 1, 1, 1, 1, 1, b, 12, 12);
        memcpy(a, b, sizeof a);
    }
    t_compare("6-conv chain", r->out[0], a, 2304);
    size_t arena, naive;
    bd_dnnl_kernel_arena(r->k, &arena, &naive);
    printf("    arena %zu bytes vs %zu without reuse\n", arena, naive);
    assert_true(arena < naive);
    assert_true(arena <= 3 * 2304 * sizeof(float));
    t_run_free(r);
    tg_free(t);
}

/* Two contexts of one kernel run concurrently on two threads. */
typedef struct thr_arg {
    trun *r;
    const float *ref;
    int ok;
} thr_arg;

static void *thr_main(void *p)
{
    thr_arg *a = p;
    bd_kernel_ctx *ctx = NULL;
    bd_error err = { 0 };
    float out[10];
    int64_t shape[2] = { 1, 10 };
    DLTensor t = a->r->tout[0];
    t.data = out;
    t.shape = shape;
    a->ok = bd_dnnl_backend.ctx_create(a->r->k, &ctx, &err) == 0;
    for (int i = 0; i < 20 && a->ok; i++) {
        memset(out, 0, sizeof out);
        a->ok = bd_dnnl_backend.run(ctx, a->r->tin, 1, &t, 1, &err) == 0;
        for (int j = 0; j < 10 && a->ok; j++)
            a->ok = fabsf(out[j] - a->ref[j]) <= 1e-4f * (1.0f + fabsf(a->ref[j]));
    }
    bd_dnnl_backend.ctx_destroy(ctx);
    return NULL;
}

static void test_two_contexts_concurrently(void **state)
{
    (void)state;
    chain ch = build_chain();
    trun *r = t_compile(ch.t);
    float ref[10];
    ref_chain(&ch, r->in[0], ref);
    pthread_t th[2];
    thr_arg args[2] = { { r, ref, 0 }, { r, ref, 0 } };
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, thr_main, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_true(args[0].ok && args[1].ok);
    printf("    two threads x 20 runs: outputs match\n");
    t_run_free(r);
    tg_free(ch.t);
}

/* ---- supports() and errors ----------------------------------------------------------------- */

static void test_supports_rejects_with_reason(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 4, 5, 5)), *w = t_input(t, SHAPE(4, 4, 3, 3));
    bd_value *y = t_val(t, SHAPE(1, 4, 3, 3)), *z = t_val(t, SHAPE(1, 4, 5, 5)), *e = t_val(t, SHAPE(1, 4, 5, 5));
    bd_node *conv = NODE(t, "Conv", y, x, w);
    bd_node *gt = NODE(t, "GatherTree", z, x);
    bd_node *rl = NODE(t, "Relu", e, x);
    rl->post[rl->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_ERF };
    char why[128];
    why[0] = 0;
    assert_false(bd_dnnl_backend.supports(t->g, conv, why, sizeof why));
    printf("    Conv with input weights: %s\n", why);
    assert_non_null(strstr(why, "constant"));
    why[0] = 0;
    assert_false(bd_dnnl_backend.supports(t->g, gt, why, sizeof why));
    printf("    GatherTree: %s\n", why);
    assert_non_null(strstr(why, "GatherTree"));
    why[0] = 0;
    assert_false(bd_dnnl_backend.supports(t->g, rl, why, sizeof why));
    printf("    Relu+erf post-op: %s\n", why);
    assert_true(why[0] != 0);
    tg_free(t);
}

/* Broadcasts that send oneDNN to its reference kernels are refused, so the native engine (a
 * binary) or separate primitives (a MatMul's post-ops) run them: Swin's window mask
 * [1, nW, 1, W, W] on [B, nW, heads, W, W] and its position bias [1, heads, W, W] fused into
 * the scores' MatMul. The broadcasts that oneDNN runs fast stay accepted. */
static void test_supports_rejects_reference_kernel_broadcasts(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *s = t_input(t, SHAPE(1, 4, 3, 8, 8)), *mask = t_input(t, SHAPE(1, 4, 1, 8, 8));
    bd_value *head = t_input(t, SHAPE(1, 1, 3, 8, 8)), *y1 = t_val(t, SHAPE(1, 4, 3, 8, 8));
    bd_value *y2 = t_val(t, SHAPE(1, 4, 3, 8, 8));
    bd_node *masked = NODE(t, "Add", y1, s, mask);
    bd_node *per_head = NODE(t, "Add", y2, s, head);
    bd_value *q = t_input(t, SHAPE(4, 3, 8, 2)), *k = t_input(t, SHAPE(4, 3, 2, 8));
    bd_value *bias = t_input(t, SHAPE(1, 3, 8, 8)), *full = t_input(t, SHAPE(4, 3, 8, 8));
    bd_value *y3 = t_val(t, SHAPE(4, 3, 8, 8)), *y4 = t_val(t, SHAPE(4, 3, 8, 8));
    bd_node *mm_bias = NODE(t, "MatMul", y3, q, k);
    bd_node *mm_full = NODE(t, "MatMul", y4, q, k);
    bd_error err = { 0 };
    int bi = bd_node_append_input(t->g, mm_bias, bias, &err);
    int fi = bd_node_append_input(t->g, mm_full, full, &err);
    mm_bias->post[mm_bias->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = bi };
    mm_full->post[mm_full->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = fi };
    char why[128] = "";
    assert_false(bd_dnnl_backend.supports(t->g, masked, why, sizeof why));
    printf("    Add [1,4,3,8,8] + [1,4,1,8,8]: %s\n", why);
    assert_non_null(strstr(why, "reference"));
    assert_true(bd_dnnl_backend.supports(t->g, per_head, why, sizeof why));
    why[0] = 0;
    assert_false(bd_dnnl_backend.supports(t->g, mm_bias, why, sizeof why));
    printf("    MatMul [4,3,8,8] + post-op [1,3,8,8]: %s\n", why);
    assert_non_null(strstr(why, "reference"));
    assert_true(bd_dnnl_backend.supports(t->g, mm_full, why, sizeof why));
    tg_free(t);
}

static void test_run_rejects_wrong_shape(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(2, 3)), *y = t_val(t, SHAPE(2, 3));
    NODE(t, "Relu", y, x);
    t_output(t, y);
    trun *r = t_compile(t);
    bd_kernel_ctx *ctx = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_dnnl_backend.ctx_create(r->k, &ctx, &err), 0);
    r->in_shape[0][1] = 4;
    assert_int_equal(bd_dnnl_backend.run(ctx, r->tin, 1, r->tout, 1, &err), BD_EINVAL);
    printf("    %s\n", err.msg);
    bd_dnnl_backend.ctx_destroy(ctx);
    t_run_free(r);
    tg_free(t);
}

/* An empty tensor anywhere (an empty batch): supports() says no and compile() refuses
 * cleanly, so no oneDNN primitive descriptor is ever created with a zero dim (SIGFPE). */
static void test_empty_tensor_never_reaches_a_primitive(void **state)
{
    static const char *const ops[] = { "MatMul", "Gemm", "Conv", "Relu" };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        tg *t = tg_new();
        bool conv = strcmp(ops[o], "Conv") == 0, relu = strcmp(ops[o], "Relu") == 0;
        bd_value *x = conv ? t_input(t, SHAPE(0, 3, 8, 8)) : t_input(t, SHAPE(0, 4));
        bd_value *w = conv ? t_const(t, SHAPE(2, 3, 3, 3)) : t_const(t, SHAPE(4, 3));
        bd_value *y = conv ? t_val(t, SHAPE(0, 2, 6, 6)) : relu ? t_val(t, SHAPE(0, 4)) : t_val(t, SHAPE(0, 3));
        t_output(t, y);
        bd_node *n = relu ? NODE(t, "Relu", y, x) : t_node(t, ops[o], "", 2, (bd_value *[]){ x, w }, y);
        char why[256] = "";
        assert_false(bd_dnnl_backend.supports(t->g, n, why, sizeof why));
        assert_non_null(strstr(why, "empty"));
        bd_subgraph sg = { .graph = t->g, .nodes = &n, .n_nodes = 1, .inputs = &x, .n_inputs = 1,
                           .outputs = &y, .n_outputs = 1 };
        bd_kernel *k = NULL;
        bd_error err = { 0 };
        assert_int_equal(bd_dnnl_backend.compile(&sg, &k, &err), BD_EUNSUPPORTED);
        assert_null(k);
        assert_non_null(strstr(err.msg, "empty"));
        tg_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_variants),
        cmocka_unit_test(test_conv1d),
        cmocka_unit_test(test_conv_postops),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_matmul_projection_fused),
        cmocka_unit_test(test_matmul_late_sum),
        cmocka_unit_test(test_matmul_batched_broadcast),
        cmocka_unit_test(test_matmul_transposed_views),
        cmocka_unit_test(test_eltwise_ops),
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_pooling),
        cmocka_unit_test(test_shape_ops),
        cmocka_unit_test(test_concat_of_transposed_view_is_not_ref),
        cmocka_unit_test(test_blocked_chain),
        cmocka_unit_test(test_reorder_shared),
        cmocka_unit_test(test_subsample_shared),
        cmocka_unit_test(test_arena_reuse),
        cmocka_unit_test(test_two_contexts_concurrently),
        cmocka_unit_test(test_supports_rejects_with_reason),
        cmocka_unit_test(test_supports_rejects_reference_kernel_broadcasts),
        cmocka_unit_test(test_run_rejects_wrong_shape),
        cmocka_unit_test(test_empty_tensor_never_reaches_a_primitive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
