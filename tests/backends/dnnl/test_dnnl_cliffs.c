/* The cliff guard (backends/dnnl/dnnl_guard.c): the shapes that once ran on oneDNN's `ref:`
 * kernels, on AVX-512 or on AVX2 (issue 24), compile to no reference kernel, and compute what
 * the unguarded plan computes (BRAID_DNNL_GUARD=0: oneDNN's own choice, its reference kernel
 * where it fell to one, which is the reference here). Which of them fall to `ref:` without the
 * guard depends on the ISA; each test prints it, and asserts the guarded plan on any ISA. */
#pragma GCC diagnostic ignored "-Wunused-function"   /* the header-only test library */
#include "tests/backends/dnnl/dnnl_testlib.h"

static int cliffs(const trun *r, const char *what, bool print)
{
    int n = 0;
    for (int i = 0; i < bd_dnnl_kernel_num_steps(r->k); i++)
        if (bd_dnnl_kernel_step_is_cliff(r->k, i)) {
            n++;
            if (print)
                fprintf(stderr, "%s: step %d runs on %s\n", what, i, bd_dnnl_kernel_step_impl(r->k, i));
        }
    return n;
}

/* Compile T's graph without and with the guard, run both on the same inputs, compare every
 * output, and fail on any reference kernel left in the guarded plan. */
static void guarded_matches_unguarded(tg *t, const char *what)
{
    setenv("BRAID_DNNL_GUARD", "0", 1);
    trun *r0 = t_compile(t);
    unsetenv("BRAID_DNNL_GUARD");
    trun *r1 = t_compile(t);
    for (size_t i = 0; i < r1->sg.n_inputs; i++)
        memcpy(r1->in[i], r0->in[i], (size_t)bd_shape_numel(&r1->sg.inputs[i]->shape) * sizeof(float));
    t_exec(r0);
    t_exec(r1);
    int before = cliffs(r0, what, false), after = cliffs(r1, what, true);
    printf("  %-52s reference kernels without the guard %d, with it %d (%d -> %d steps)\n", what,
           before, after, bd_dnnl_kernel_num_steps(r0->k), bd_dnnl_kernel_num_steps(r1->k));
    for (size_t i = 0; i < r1->sg.n_outputs; i++)
        t_compare(what, r1->out[i], r0->out[i], (size_t)bd_shape_numel(&r1->sg.outputs[i]->shape));
    assert_int_equal(after, 0);
    t_run_free(r0);
    t_run_free(r1);
}

/* A conv giving C channels in oneDNN's own (blocked) layout from x [1,8,H,W]. */
static bd_value *conv_to(tg *t, bd_value *x, int64_t c, int64_t h, int64_t w)
{
    bd_value *wt = t_const(t, SHAPE(c, x->shape.dims[1], 3, 3));
    bd_value *y = t_val(t, SHAPE(1, c, h, w));
    ATTR_INTS(t, NODE(t, "Conv", y, x, wt), "pads", 1, 1, 1, 1);
    return y;
}

/* ShuffleNet's last average pool, x.mean([2, 3]) of a [1,1024,7,7] conv output: a global
 * pooling of the blocked tensor into the plain graph output (dnnl_reduce.c; on AVX2
 * pooling_v2 ref:any aBcd8b -> abcd). */
static void test_mean_of_blocked_into_plain_is_not_ref(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 8, 7, 7));
    bd_value *c = conv_to(t, x, 1024, 7, 7);
    bd_value *y = t_val(t, SHAPE(1, 1024));
    bd_node *r = NODE(t, "ReduceMean", y, c);
    ATTR_INTS(t, r, "axes", 2, 3);
    t_attr_i(t, r, "keepdims", 0);
    t_output(t, y);
    guarded_matches_unguarded(t, "ReduceMean [2,3] of [1,1024,7,7] blocked -> plain");
    tg_free(t);
}

/* The same as AveragePool / GlobalAveragePool nodes of 24 channels. */
static void test_pool_of_blocked_into_plain_is_not_ref(void **state)
{
    (void)state;
    for (int global = 0; global < 2; global++) {
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(1, 8, 7, 7));
        bd_value *c = conv_to(t, x, 24, 7, 7);
        bd_value *y = t_val(t, SHAPE(1, 24, 1, 1));
        if (global) {
            NODE(t, "GlobalAveragePool", y, c);
        } else {
            bd_node *p = NODE(t, "AveragePool", y, c);
            ATTR_INTS(t, p, "kernel_shape", 7, 7);
        }
        t_output(t, y);
        guarded_matches_unguarded(t, global ? "GlobalAveragePool [1,24,7,7] blocked -> plain"
                                            : "AveragePool 7x7 [1,24,7,7] blocked -> plain");
        tg_free(t);
    }
}

/* PReLU after a conv of 24 channels: slopes [24,1,1] in the conv's 8-blocked layout. */
static void test_prelu_of_blocked_slopes_is_not_ref(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 8, 6, 6));
    bd_value *c = conv_to(t, x, 24, 6, 6);
    bd_value *slope = t_const(t, SHAPE(24, 1, 1));
    bd_value *y = t_val(t, SHAPE(1, 24, 6, 6));
    NODE(t, "PRelu", y, c, slope);
    t_output(t, y);
    guarded_matches_unguarded(t, "PRelu [1,24,6,6] slopes [24,1,1]");
    tg_free(t);
}

/* A squeeze-excitation multiply on channels not a multiple of 16 (48, 104): the conv output
 * times sigmoid(its global pool), [1,C,H,W] * [1,C,1,1] (AVX-512: binary ref:any aBcd8b). */
static void test_se_multiply_on_8_blocked_channels_is_not_ref(void **state)
{
    (void)state;
    static const int64_t chans[] = { 48, 104 };
    for (size_t k = 0; k < 2; k++) {
        int64_t ch = chans[k];
        tg *t = tg_new();
        bd_value *x = t_input(t, SHAPE(1, 8, 5, 5));
        bd_value *c = conv_to(t, x, ch, 5, 5);
        bd_value *p = t_val(t, SHAPE(1, ch, 1, 1)), *s = t_val(t, SHAPE(1, ch, 1, 1));
        NODE(t, "GlobalAveragePool", p, c);
        NODE(t, "Sigmoid", s, p);
        bd_value *y = t_val(t, SHAPE(1, ch, 5, 5));
        NODE(t, "Mul", y, c, s);
        t_output(t, y);
        char what[64];
        snprintf(what, sizeof what, "SE multiply [1,%lld,5,5] * [1,%lld,1,1]", (long long)ch, (long long)ch);
        guarded_matches_unguarded(t, what);
        tg_free(t);
    }
}

/* Attention scores: Q [1,4,16,8] seen through a Transpose of [1,16,4,8], times K^T (a
 * Transpose of [1,16,4,8] to [1,4,8,16]), plus a broadcast mask [1,1,1,16] as a binary
 * post-op (AVX-512: matmul ref:any). */
static void test_batched_matmul_transposed_with_mask_is_not_ref(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *q = t_input(t, SHAPE(1, 16, 4, 8)), *k = t_input(t, SHAPE(1, 16, 4, 8));
    bd_value *mask = t_input(t, SHAPE(1, 1, 1, 16));
    bd_value *qt = t_val(t, SHAPE(1, 4, 16, 8)), *kt = t_val(t, SHAPE(1, 4, 8, 16));
    ATTR_INTS(t, NODE(t, "Transpose", qt, q), "perm", 0, 2, 1, 3);
    ATTR_INTS(t, NODE(t, "Transpose", kt, k), "perm", 0, 2, 3, 1);
    bd_value *y = t_val(t, SHAPE(1, 4, 16, 16));
    bd_node *mm = NODE(t, "MatMul", y, qt, kt);
    bd_error err = { 0 };
    int mi = bd_node_append_input(t->g, mm, mask, &err);
    mm->post[mm->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = mi };
    t_output(t, y);
    guarded_matches_unguarded(t, "MatMul T[1,4,16,8] x T[1,4,8,16] + mask [1,1,1,16]");
    tg_free(t);
}

/* DenseNet: a concat of blocked conv outputs whose channels (24, 40) are not multiples of
 * 16, feeding another conv. */
static void test_concat_of_8_blocked_channels_is_not_ref(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 8, 6, 6));
    bd_value *a = conv_to(t, x, 24, 6, 6), *b = conv_to(t, x, 40, 6, 6);
    bd_value *cat = t_val(t, SHAPE(1, 64, 6, 6));
    t_attr_i(t, NODE(t, "Concat", cat, a, b), "axis", 1);
    bd_value *y = conv_to(t, cat, 24, 6, 6);
    t_output(t, y);
    guarded_matches_unguarded(t, "Concat [1,24,6,6] + [1,40,6,6] blocked");
    tg_free(t);
}

/* Softmax and a reduction along the channels of a blocked tensor (axis 1). */
static void test_softmax_and_reduce_on_channels_are_not_ref(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 8, 6, 6));
    bd_value *c = conv_to(t, x, 24, 6, 6);
    bd_value *s = t_val(t, SHAPE(1, 24, 6, 6)), *m = t_val(t, SHAPE(1, 1, 6, 6));
    t_attr_i(t, NODE(t, "Softmax", s, c), "axis", 1);
    bd_node *r = NODE(t, "ReduceMean", m, c);
    ATTR_INTS(t, r, "axes", 1);
    t_attr_i(t, r, "keepdims", 1);
    t_output(t, s);
    t_output(t, m);
    guarded_matches_unguarded(t, "Softmax axis 1 and ReduceMean axes [1] of [1,24,6,6]");
    tg_free(t);
}

/* A TCN block's second convolution: a dilated causal Conv1d (dilation 4, kernel 3, pads 8
 * and 0) with ReLU, the residual add and ReLU fused as post-ops. On AVX2 oneDNN 2.6 gives a
 * dilated 1D convolution its gemm implementation, which applies a binary post-op element by
 * element (5-7x slower than the convolution itself, dnnl_guard.c's slow_postops): the guard
 * keeps the ReLU fused and runs the add and the last ReLU as primitives of their own. */
static void test_gemm_conv_with_residual_add_is_split(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 24, 200));
    bd_value *w = t_const(t, SHAPE(24, 24, 3));
    bd_value *y = t_val(t, SHAPE(1, 24, 200));
    bd_node *conv = NODE(t, "Conv", y, x, w);
    ATTR_INTS(t, conv, "pads", 8, 0);
    ATTR_INTS(t, conv, "dilations", 4);
    bd_error err = { 0 };
    int ri = bd_node_append_input(t->g, conv, x, &err);
    conv->post[conv->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_RELU };
    conv->post[conv->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_ADD, .input = ri };
    conv->post[conv->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_RELU };
    t_output(t, y);
    guarded_matches_unguarded(t, "dilated Conv1d [1,24,200] + ReLU + residual add + ReLU");
    tg_free(t);
}

/* A broadcast oneDNN 2.6 runs only on its reference kernel in every layout ([2,3,4,5] by
 * [4,1], i.e. [1,1,4,1]) is refused at annotate with the reason "reference kernel" (the
 * guard's probe), so the native engine takes it; one oneDNN has a jit kernel for is not. */
static void test_binary_broadcast_only_ref_is_refused(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *a = t_input(t, SHAPE(2, 3, 4, 5));
    bd_value *mid = t_input(t, SHAPE(4, 1)), *chan = t_input(t, SHAPE(3, 1, 1));
    bd_value *y = t_val(t, SHAPE(2, 3, 4, 5)), *z = t_val(t, SHAPE(2, 3, 4, 5));
    bd_node *refused = NODE(t, "Mul", y, a, mid);
    bd_node *kept = NODE(t, "Mul", z, a, chan);
    char why[256] = "";
    assert_false(bd_dnnl_backend.supports(t->g, refused, why, sizeof why));
    assert_non_null(strstr(why, "reference kernel"));
    printf("  [2,3,4,5] * [4,1] refused: %s\n", why);
    assert_true(bd_dnnl_backend.supports(t->g, kept, why, sizeof why));
    /* the same broadcast as a fused binary post-op of a conv: not fused (composites ask
     * supports() on the fused node first), so the Mul stays a node of its own */
    bd_value *x = t_input(t, SHAPE(1, 8, 6, 6)), *cw = t_const(t, SHAPE(24, 8, 3, 3));
    bd_value *cy = t_val(t, SHAPE(1, 24, 6, 6)), *row = t_input(t, SHAPE(6, 1));
    bd_node *conv = NODE(t, "Conv", cy, x, cw);
    ATTR_INTS(t, conv, "pads", 1, 1, 1, 1);
    bd_error err = { 0 };
    int ri = bd_node_append_input(t->g, conv, row, &err);
    conv->post[conv->n_post++] = (bd_postop){ .kind = BD_POST_BINARY, .alg = BD_BIN_MUL, .input = ri };
    assert_false(bd_dnnl_backend.supports(t->g, conv, why, sizeof why));
    assert_non_null(strstr(why, "reference kernel"));
    printf("  conv * [6,1] as a post-op refused: %s\n", why);
    tg_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_of_blocked_into_plain_is_not_ref),
        cmocka_unit_test(test_pool_of_blocked_into_plain_is_not_ref),
        cmocka_unit_test(test_prelu_of_blocked_slopes_is_not_ref),
        cmocka_unit_test(test_se_multiply_on_8_blocked_channels_is_not_ref),
        cmocka_unit_test(test_batched_matmul_transposed_with_mask_is_not_ref),
        cmocka_unit_test(test_concat_of_8_blocked_channels_is_not_ref),
        cmocka_unit_test(test_softmax_and_reduce_on_channels_are_not_ref),
        cmocka_unit_test(test_gemm_conv_with_residual_add_is_split),
        cmocka_unit_test(test_binary_broadcast_only_ref_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
