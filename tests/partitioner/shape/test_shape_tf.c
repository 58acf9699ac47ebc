/* Rules for what the TensorFlow frontends produce: data_format NHWC on Conv, pools and
 * BatchNormalization, filter_format HWIO / HWCM, and the ops TF graphs add (Pad, Resize,
 * PRelu, Max, Min, ReduceMean with keepdims 0/1). */
#include <string.h>

#include "tests/partitioner/shape/shape_test.h"

static bd_value *tfloats(bd_graph *g, const char *name, size_t count, const float *vals)
{
    bd_value *v = tweight(g, name, tshape(1, (int64_t[]){ (int64_t)count }));
    memcpy((void *)v->data, vals, count * sizeof *vals);
    return v;
}

static bd_node *tfconv(bd_graph *g, bd_shape x, bd_shape w, const char *filter_format, int64_t group)
{
    bd_node *n = TNODE(g, "Conv", 1, tinput(g, "x", BD_DT_FLOAT, x, x.dims[0] < 0 ? "batch" : NULL),
                       tweight(g, "w", w));
    tattr_str(g, n, "data_format", "NHWC");
    tattr_str(g, n, "filter_format", filter_format);
    if (group > 1)
        tattr_int(g, n, "group", group);
    return n;
}

static void test_conv_nhwc_hwio_same(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = tfconv(g, S(-1, 225, 225, 3), S(3, 3, 3, 32), "HWIO", 1);
    TATTR_INTS(g, n, "strides", 2, 2);
    tattr_str(g, n, "auto_pad", "SAME_UPPER");
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 113, 113, 32));
    bd_graph_destroy(g);
}

static void test_conv_nhwc_hwcm_depthwise(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = tfconv(g, S(1, 14, 14, 32), S(3, 3, 32, 2), "HWCM", 32);
    TATTR_INTS(g, n, "pads", 1, 1, 1, 1);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 14, 14, 64));       /* C * M channels */
    bd_graph_destroy(g);
    /* group must be C for HWCM */
    g = tgraph();
    tfconv(g, S(1, 14, 14, 32), S(3, 3, 32, 1), "HWCM", 16);
    tinfer_fails(g, true, BD_EMODEL, "channels", NULL);
    bd_graph_destroy(g);
}

static void test_conv_nhwc_rejects_bad_formats(void **state)
{
    bd_graph *g = tgraph();
    tfconv(g, S(1, 8, 8, 4), S(3, 3, 4, 8), "IOHW", 1);
    tinfer_fails(g, true, BD_EMODEL, "filter_format", "IOHW", NULL);
    bd_graph_destroy(g);
    g = tgraph();
    bd_node *n = TNODE(g, "Conv", 1, tinput(g, "x", BD_DT_FLOAT, S(1, 8, 8, 4), NULL),
                       tweight(g, "w", S(3, 3, 4, 8)));
    tattr_str(g, n, "data_format", "CHWN");
    tinfer_fails(g, true, BD_EMODEL, "data_format", "CHWN", NULL);
    bd_graph_destroy(g);
    /* HWIO input channels must match the NHWC input's last dim */
    g = tgraph();
    tfconv(g, S(1, 8, 8, 4), S(3, 3, 5, 8), "HWIO", 1);
    tinfer_fails(g, true, BD_EMODEL, "channels", NULL);
    bd_graph_destroy(g);
}

static void test_pools_and_bn_nhwc(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 15, 16, 8), NULL);
    bd_node *mp = TNODE(g, "MaxPool", 1, x);
    tattr_str(g, mp, "data_format", "NHWC");
    TATTR_INTS(g, mp, "kernel_shape", 3, 3);
    TATTR_INTS(g, mp, "strides", 2, 2);
    tattr_str(g, mp, "auto_pad", "SAME_UPPER");
    bd_node *ap = TNODE(g, "AveragePool", 1, x);
    tattr_str(g, ap, "data_format", "NHWC");
    TATTR_INTS(g, ap, "kernel_shape", 2, 2);
    TATTR_INTS(g, ap, "strides", 2, 2);
    tattr_str(g, ap, "auto_pad", "VALID");
    bd_node *gp = TNODE(g, "GlobalAveragePool", 1, x);
    tattr_str(g, gp, "data_format", "NHWC");
    bd_value *p = tweight(g, "p", S(8));
    bd_node *bn = TNODE(g, "BatchNormalization", 1, x, p, p, p, p);
    tattr_str(g, bn, "data_format", "NHWC");
    tinfer(g, true);
    tassert_shape(tout(mp, 0), S(2, 8, 8, 8));
    tassert_shape(tout(ap, 0), S(2, 7, 8, 8));
    tassert_shape(tout(gp, 0), S(2, 1, 1, 8));
    tassert_shape(tout(bn, 0), S(2, 15, 16, 8));
    bd_graph_destroy(g);
    /* BN parameters are counted against the last dim */
    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 15, 16, 8), NULL);
    p = tweight(g, "p", S(15));
    bn = TNODE(g, "BatchNormalization", 1, x, p, p, p, p);
    tattr_str(g, bn, "data_format", "NHWC");
    tinfer_fails(g, true, BD_EMODEL, "15 values for 8 channels", NULL);
    bd_graph_destroy(g);
}

static void test_pad(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 5, 4, 3), NULL);
    bd_node *n = TNODE(g, "Pad", 1, x, TINTS(g, "pads", 0, 1, 2, 0, 0, 2, 1, 0));
    bd_node *crop = TNODE(g, "Pad", 1, x, TINTS(g, "crop", 0, -1, 0, 0, 0, -1, 0, 0));
    bd_node *ax = TNODE(g, "Pad", 1, x, TINTS(g, "p2", 1, 1), tweight(g, "cv", tscalar()),
                        TINTS(g, "axes", -1));
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 8, 7, 3));
    tassert_shape(tout(crop, 0), S(1, 3, 4, 3));
    tassert_shape(tout(ax, 0), S(1, 5, 4, 5));
    bd_graph_destroy(g);
    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 5, 4, 3), NULL);
    TNODE(g, "Pad", 1, x, TINTS(g, "pads", 0, 1, 0, 1));
    tinfer_fails(g, true, BD_EMODEL, "pads has 4 values, expected 8", NULL);
    bd_graph_destroy(g);
}

static void test_resize_sizes_and_scales(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 5, 7, 3), NULL);
    bd_value *none = tweight(g, "none", S(0));
    bd_node *a = TNODE(g, "Resize", 1, x, none, none, TINTS(g, "sizes", 1, 10, 14, 3));
    tattr_str(g, a, "data_format", "NHWC");
    bd_node *b = TNODE(g, "Resize", 1, x, none, tfloats(g, "sc", 4, (float[]){ 1, 2.5f, 0.5f, 1 }));
    bd_node *c = TNODE(g, "Resize", 1, x, none, none, TINTS(g, "hw", 9, 11));   /* spatial only */
    tattr_str(g, c, "data_format", "NHWC");
    tinfer(g, true);
    tassert_shape(tout(a, 0), S(1, 10, 14, 3));
    tassert_shape(tout(b, 0), S(1, 12, 3, 3));
    tassert_shape(tout(c, 0), S(1, 9, 11, 3));
    bd_graph_destroy(g);
    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 5, 7, 3), NULL);
    TNODE(g, "Resize", 1, x, tweight(g, "roi", S(0)), tweight(g, "sc", S(0)));
    tinfer_fails(g, true, BD_EMODEL, "scales", "sizes", NULL);
    bd_graph_destroy(g);
}

static void test_prelu_max_min(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 6, 6, 16), NULL);
    bd_node *p = TNODE(g, "PRelu", 1, x, tweight(g, "slope", S(1, 1, 16)));
    bd_node *mx = TNODE(g, "Max", 1, x, tweight(g, "c", S(16)));
    bd_node *mn = TNODE(g, "Min", 1, tweight(g, "s", tscalar()), x, tweight(g, "d", S(6, 1, 1)));
    tinfer(g, true);
    tassert_shape(tout(p, 0), S(2, 6, 6, 16));
    tassert_shape(tout(mx, 0), S(2, 6, 6, 16));
    tassert_shape(tout(mn, 0), S(2, 6, 6, 16));
    bd_graph_destroy(g);
    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 6, 6, 16), NULL);
    TNODE(g, "PRelu", 1, x, tweight(g, "slope", S(6, 16, 1)));
    tinfer_fails(g, true, BD_EMODEL, "slope", "does not broadcast", NULL);
    bd_graph_destroy(g);
}

static void test_reduce_mean_keepdims(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 7, 7, 64), NULL);
    bd_node *k0 = TNODE(g, "ReduceMean", 1, x);
    TATTR_INTS(g, k0, "axes", 1, 2);
    tattr_int(g, k0, "keepdims", 0);
    bd_node *k1 = TNODE(g, "ReduceMean", 1, x);
    TATTR_INTS(g, k1, "axes", 1, 2);
    bd_node *elu = TNODE(g, "Elu", 1, x);
    tinfer(g, false);
    tassert_shape(tout(k0, 0), S(-1, 64));
    tassert_shape(tout(k1, 0), S(-1, 1, 1, 64));
    tassert_shape(tout(elu, 0), S(-1, 7, 7, 64));
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_nhwc_hwio_same),
        cmocka_unit_test(test_conv_nhwc_hwcm_depthwise),
        cmocka_unit_test(test_conv_nhwc_rejects_bad_formats),
        cmocka_unit_test(test_pools_and_bn_nhwc),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_resize_sizes_and_scales),
        cmocka_unit_test(test_prelu_max_min),
        cmocka_unit_test(test_reduce_mean_keepdims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
