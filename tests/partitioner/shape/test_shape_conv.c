/* Conv and pooling: pads, strides, dilations, groups, auto_pad, ceil_mode, dynamic batch,
 * and malformed window attributes. */
#include "tests/partitioner/shape/shape_test.h"

#include "partitioner/shape/shape_conv.h"

static bd_node *conv(bd_graph *g, bd_shape x, bd_shape w, bool bias)
{
    bd_value *xv = tinput(g, "x", BD_DT_FLOAT, x, x.dims[0] < 0 ? "batch" : NULL);
    bd_value *wv = tweight(g, "w", w);
    if (!bias)
        return TNODE(g, "Conv", 1, xv, wv);
    int64_t m = w.dims[0];
    return TNODE(g, "Conv", 1, xv, wv, tweight(g, "b", bd_shape_make(1, &m)));
}

static void test_conv_with_pads_and_strides(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(1, 3, 224, 224), S(64, 3, 7, 7), true);
    TATTR_INTS(g, n, "pads", 3, 3, 3, 3);
    TATTR_INTS(g, n, "strides", 2, 2);
    TATTR_INTS(g, n, "kernel_shape", 7, 7);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 64, 112, 112));
    bd_graph_destroy(g);
}

static void test_conv_with_dilations_and_asymmetric_pads(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(2, 1, 10, 12), S(4, 1, 3, 3), false);
    TATTR_INTS(g, n, "dilations", 2, 3);
    TATTR_INTS(g, n, "pads", 0, 1, 2, 0);            /* h: 0+2, w: 1+0 */
    tinfer(g, true);
    /* h: 10+2-5+1 = 8; w: 12+1-7+1 = 7 */
    tassert_shape(tout(n, 0), S(2, 4, 8, 7));
    bd_graph_destroy(g);
}

static void test_conv_1d_and_3d(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(1, 2, 16), S(8, 2, 3), false);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 8, 14));
    bd_graph_destroy(g);
    g = tgraph();
    n = conv(g, S(1, 2, 4, 8, 8), S(8, 2, 1, 3, 3), false);
    TATTR_INTS(g, n, "strides", 1, 2, 2);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 8, 4, 3, 3));
    bd_graph_destroy(g);
}

static void test_depthwise_conv_groups(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(1, 32, 8, 8), S(32, 1, 3, 3), true);
    tattr_int(g, n, "group", 32);
    TATTR_INTS(g, n, "pads", 1, 1, 1, 1);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 32, 8, 8));
    bd_graph_destroy(g);
}

static void test_conv_channel_mismatch_is_a_model_error(void **state)
{
    bd_graph *g = tgraph();
    conv(g, S(1, 4, 8, 8), S(16, 3, 3, 3), false);
    tinfer_fails(g, false, BD_EMODEL, "Conv", "has 4 channels", "weight 'w'", NULL);
    bd_graph_destroy(g);
    g = tgraph();
    bd_node *n = conv(g, S(1, 4, 8, 8), S(6, 1, 3, 3), false);
    tattr_int(g, n, "group", 4);
    tinfer_fails(g, false, BD_EMODEL, "not divisible by group 4", NULL);
    bd_graph_destroy(g);
}

static void test_conv_bias_mismatch_is_a_model_error(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 8, 8), NULL);
    TNODE(g, "Conv", 1, x, tweight(g, "w", S(16, 3, 3, 3)), tweight(g, "b", S(8)));
    tinfer_fails(g, false, BD_EMODEL, "bias 'b' has 8 values for 16 output channels", NULL);
    bd_graph_destroy(g);
}

static void test_conv_auto_pad_same_and_valid(void **state)
{
    static const char *const modes[] = { "SAME_UPPER", "SAME_LOWER", "VALID" };
    static const int64_t want[] = { 4, 4, 2 };
    for (int i = 0; i < 3; i++) {
        bd_graph *g = tgraph();
        bd_node *n = conv(g, S(1, 1, 7, 7), S(1, 1, 4, 4), false);
        tattr_str(g, n, "auto_pad", modes[i]);
        TATTR_INTS(g, n, "strides", 2, 2);
        tinfer(g, true);
        tassert_shape(tout(n, 0), S(1, 1, want[i], want[i]));
        /* The pads a backend must use: total (4-1)*2+4-7 = 3, the odd one at the end for
         * SAME_UPPER and at the beginning for SAME_LOWER. */
        bd_window win;
        bd_error err = { 0 };
        assert_int_equal(bd_window_resolve(n, &n->inputs[0]->shape, &n->inputs[1]->shape, &win,
                                           &err), 0);
        int64_t pb = i == 0 ? 1 : i == 1 ? 2 : 0, pe = i == 0 ? 2 : i == 1 ? 1 : 0;
        assert_int_equal(win.pad_begin[0], pb);
        assert_int_equal(win.pad_end[1], pe);
        bd_graph_destroy(g);
    }
}

static void test_conv_keeps_dynamic_batch_symbol(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(-1, 3, 32, 32), S(8, 3, 3, 3), false);
    bd_node *r = TNODE(g, "Relu", 1, tout(n, 0));
    tinfer(g, false);
    tassert_shape(tout(r, 0), S(-1, 8, 30, 30));
    assert_string_equal(tout(r, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);
}

static void test_conv_dynamic_spatial_dims_stay_dynamic(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(1, 3, -1, 32), S(8, 3, 3, 3), false);
    tattr_str(g, n, "auto_pad", "SAME_UPPER");
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(1, 8, -1, 32));
    bd_graph_destroy(g);
}

static bd_node *pool(bd_graph *g, const char *op, bd_shape x, int64_t k, int64_t s, int64_t p,
                     bool ceil_mode)
{
    bd_node *n = TNODE(g, op, 1, tinput(g, "x", BD_DT_FLOAT, x, NULL));
    TATTR_INTS(g, n, "kernel_shape", k, k);
    TATTR_INTS(g, n, "strides", s, s);
    TATTR_INTS(g, n, "pads", p, p, p, p);
    if (ceil_mode)
        tattr_int(g, n, "ceil_mode", 1);
    return n;
}

/* Expected sizes are PyTorch's (nn.MaxPool2d / nn.AvgPool2d with the same arguments). */
static void test_pool_floor_and_ceil_mode(void **state)
{
    static const struct {
        const char *op;
        int64_t in, k, s, p;
        bool ceil_mode;
        int64_t out;
    } cases[] = {
        { "MaxPool", 112, 3, 2, 0, false, 55 },
        { "MaxPool", 112, 3, 2, 0, true, 56 },
        { "MaxPool", 5, 2, 2, 1, true, 3 },          /* last window would start in the pad */
        { "AveragePool", 6, 3, 2, 1, true, 4 },
        { "AveragePool", 6, 3, 2, 1, false, 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bd_graph *g = tgraph();
        bd_node *n = pool(g, cases[i].op, S(1, 2, cases[i].in, cases[i].in), cases[i].k,
                          cases[i].s, cases[i].p, cases[i].ceil_mode);
        tinfer(g, true);
        tassert_shape(tout(n, 0), S(1, 2, cases[i].out, cases[i].out));
        bd_graph_destroy(g);
    }
}

static void test_maxpool_indices_are_int64(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = TNODE(g, "MaxPool", 2, tinput(g, "x", BD_DT_FLOAT, S(1, 2, 4, 4), NULL));
    TATTR_INTS(g, n, "kernel_shape", 2, 2);
    TATTR_INTS(g, n, "strides", 2, 2);
    tinfer(g, true);
    tassert_shape(tout(n, 1), S(1, 2, 2, 2));
    assert_int_equal(tout(n, 1)->dtype, BD_DT_INT64);
    bd_graph_destroy(g);
}

static void test_global_average_pool(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = TNODE(g, "GlobalAveragePool", 1,
                       tinput(g, "x", BD_DT_FLOAT, S(-1, 512, 7, 7), "batch"));
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 512, 1, 1));
    assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);
}

static void test_malformed_window_attributes(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    TATTR_INTS(g, n, "kernel_shape", 3, 3, 3);
    tinfer_fails(g, false, BD_EMODEL, "'kernel_shape' has 3 values, expected 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    TATTR_INTS(g, n, "kernel_shape", 5, 5);
    tinfer_fails(g, false, BD_EMODEL, "kernel_shape[0] = 5", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    TATTR_INTS(g, n, "strides", 0, 1);
    tinfer_fails(g, false, BD_EMODEL, "'strides'[0] = 0", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    TATTR_INTS(g, n, "pads", 1, 1, -1, 1);
    tinfer_fails(g, false, BD_EMODEL, "'pads'[2] = -1", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    tattr_str(g, n, "auto_pad", "SAME");
    tinfer_fails(g, false, BD_EMODEL, "'auto_pad' is 'SAME'", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    tattr_float(g, n, "group", 1.f);
    tinfer_fails(g, false, BD_EMODEL, "attribute 'group' must be an INT", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 2, 2), S(4, 3, 3, 3), false);
    tinfer_fails(g, false, BD_EMODEL, "larger than the padded input", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = conv(g, S(1, 3, 8, 8), S(4, 3, 3, 3), false);
    TATTR_INTS(g, n, "dilations", INT64_MAX / 2 + 1, 1);
    tinfer_fails(g, false, BD_EMODEL, "overflows", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "MaxPool", 1, tinput(g, "x", BD_DT_FLOAT, S(1, 2, 4, 4), NULL));
    tinfer_fails(g, false, BD_EMODEL, "'kernel_shape' is required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    n = TNODE(g, "MaxPool", 1, tinput(g, "x", BD_DT_FLOAT, S(4, 4), NULL));
    TATTR_INTS(g, n, "kernel_shape", 2);
    tinfer_fails(g, false, BD_EMODEL, "rank 3 to 8", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_with_pads_and_strides),
        cmocka_unit_test(test_conv_with_dilations_and_asymmetric_pads),
        cmocka_unit_test(test_conv_1d_and_3d),
        cmocka_unit_test(test_depthwise_conv_groups),
        cmocka_unit_test(test_conv_channel_mismatch_is_a_model_error),
        cmocka_unit_test(test_conv_bias_mismatch_is_a_model_error),
        cmocka_unit_test(test_conv_auto_pad_same_and_valid),
        cmocka_unit_test(test_conv_keeps_dynamic_batch_symbol),
        cmocka_unit_test(test_conv_dynamic_spatial_dims_stay_dynamic),
        cmocka_unit_test(test_pool_floor_and_ceil_mode),
        cmocka_unit_test(test_maxpool_indices_are_int64),
        cmocka_unit_test(test_global_average_pool),
        cmocka_unit_test(test_malformed_window_attributes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
