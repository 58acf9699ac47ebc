/* MatMul / Gemm / Det, the normalisations (Softmax, LayerNormalization, BatchNormalization) and
 * reductions. */
#include "tests/partitioner/shape/shape_test.h"

static void test_matmul_2d_batched_and_broadcast(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(3, 4), NULL);
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(4, 6), NULL);
    bd_value *c = tinput(g, "c", BD_DT_FLOAT, S(2, 1, 3, 4), NULL);
    bd_value *d = tinput(g, "d", BD_DT_FLOAT, S(5, 4, 6), NULL);
    bd_node *m1 = TNODE(g, "MatMul", 1, a, b);
    bd_node *m2 = TNODE(g, "MatMul", 1, c, d);
    tinfer(g, true);
    tassert_shape(tout(m1, 0), S(3, 6));
    tassert_shape(tout(m2, 0), S(2, 5, 3, 6));
    bd_graph_destroy(g);
}

static void test_matmul_promotes_1d_operands(void **state)
{
    bd_graph *g = tgraph();
    bd_value *v = tinput(g, "v", BD_DT_FLOAT, S(4), NULL);
    bd_value *m = tinput(g, "m", BD_DT_FLOAT, S(2, 4, 6), NULL);
    bd_value *w = tinput(g, "w", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *left  = TNODE(g, "MatMul", 1, v, m);   /* [4] x [2,4,6] -> [2,6] */
    bd_node *right = TNODE(g, "MatMul", 1, w, v);   /* [2,3,4] x [4] -> [2,3] */
    bd_node *dot   = TNODE(g, "MatMul", 1, v, v);   /* [4] x [4] -> [] */
    tinfer(g, true);
    tassert_shape(tout(left, 0), S(2, 6));
    tassert_shape(tout(right, 0), S(2, 3));
    tassert_shape(tout(dot, 0), tscalar());
    bd_graph_destroy(g);
}

static void test_matmul_keeps_dynamic_batch_and_rows(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 128, 768), "batch");
    bd_node *n = TNODE(g, "MatMul", 1, x, tweight(g, "w", S(768, 3072)));
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 128, 3072));
    assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);
}

static void test_matmul_inner_dim_mismatch(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(3, 4), NULL);
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(5, 6), NULL);
    TNODE(g, "MatMul", 1, a, b);
    tinfer_fails(g, false, BD_EMODEL, "inner dimensions differ", "K=4", "K=5", NULL);
    bd_graph_destroy(g);
}

static void test_gemm_transposes_and_bias(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(4, 3), NULL);
    bd_node *n = TNODE(g, "Gemm", 1, a, tweight(g, "b", S(10, 4)), tweight(g, "c", S(10)));
    tattr_int(g, n, "transA", 1);
    tattr_int(g, n, "transB", 1);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(3, 10));
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_FLOAT, S(3, 4), NULL);
    TNODE(g, "Gemm", 1, a, tweight(g, "b", S(4, 10)), tweight(g, "c", S(7)));
    tinfer_fails(g, false, BD_EMODEL, "C 'c' [7] does not broadcast to the result [3,10]", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_FLOAT, S(2, 3, 4), NULL);
    TNODE(g, "Gemm", 1, a, tweight(g, "b", S(4, 10)));
    tinfer_fails(g, false, BD_EMODEL, "must be 2-D", NULL);
    bd_graph_destroy(g);
}

static void test_det_batch_dims(void **state)
{
    bd_graph *g = tgraph();
    bd_node *d = TNODE(g, "Det", 1, tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4, 4), "batch"));
    bd_node *m = TNODE(g, "Det", 1, tinput(g, "m", BD_DT_DOUBLE, S(5, 5), NULL));
    tinfer(g, false);
    tassert_shape(tout(d, 0), S(-1, 3));
    assert_string_equal(tout(d, 0)->shape.sym[0], "batch");
    tassert_shape(tout(m, 0), tscalar());
    assert_int_equal(tout(m, 0)->dtype, BD_DT_DOUBLE);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Det", 1, tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL));
    tinfer_fails(g, false, BD_EMODEL, "Det", "3 x 4 matrices, not square", NULL);
    bd_graph_destroy(g);
}

static void test_softmax_axis_checked(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = TNODE(g, "Softmax", 1, tinput(g, "x", BD_DT_FLOAT, S(2, 12, 64, 64), NULL));
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(2, 12, 64, 64));
    bd_graph_destroy(g);

    g = tgraph();
    n = TNODE(g, "Softmax", 1, tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL));
    tattr_int(g, n, "axis", 2);
    tinfer_fails(g, false, BD_EMODEL, "axis 2 is out of range for rank 2", NULL);
    bd_graph_destroy(g);
}

static void test_layernorm_outputs_and_scale_check(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 16, 64), "batch");
    bd_node *n = TNODE(g, "LayerNormalization", 3, x, tweight(g, "s", S(64)), tweight(g, "b", S(64)));
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 16, 64));
    tassert_shape(tout(n, 1), S(-1, 16, 1));
    assert_string_equal(tout(n, 1)->shape.sym[0], "batch");
    assert_int_equal(tout(n, 2)->dtype, BD_DT_FLOAT);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 16, 64), NULL);
    TNODE(g, "LayerNormalization", 1, x, tweight(g, "s", S(32)));
    tinfer_fails(g, false, BD_EMODEL, "scale 's' [32] does not match the normalised dims [64]", NULL);
    bd_graph_destroy(g);
}

static void test_batchnorm_checks_channels(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 8, 4, 4), NULL);
    bd_node *n = TNODE(g, "BatchNormalization", 1, x, tweight(g, "s", S(8)), tweight(g, "b", S(8)),
                       tweight(g, "m", S(8)), tweight(g, "v", S(8)));
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 8, 4, 4));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 8, 4, 4), NULL);
    TNODE(g, "BatchNormalization", 1, x, tweight(g, "s", S(8)), tweight(g, "b", S(8)),
          tweight(g, "m", S(4)), tweight(g, "v", S(8)));
    tinfer_fails(g, false, BD_EMODEL, "mean 'm' has 4 values for 8 channels", NULL);
    bd_graph_destroy(g);
}

static void test_reduce_mean_axes_and_keepdims(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 16, 64), "batch");
    bd_node *keep = TNODE(g, "ReduceMean", 1, x);
    TATTR_INTS(g, keep, "axes", -1);
    bd_node *drop = TNODE(g, "ReduceMean", 1, x);
    TATTR_INTS(g, drop, "axes", 1, 2);
    tattr_int(g, drop, "keepdims", 0);
    bd_node *all = TNODE(g, "ReduceMean", 1, x);
    tattr_int(g, all, "keepdims", 0);
    bd_node *sum = TNODE(g, "ReduceSum", 1, x, TINTS(g, "axes", 0));   /* opset 13 input */
    tinfer(g, false);
    tassert_shape(tout(keep, 0), S(-1, 16, 1));
    assert_string_equal(tout(keep, 0)->shape.sym[0], "batch");
    tassert_shape(tout(drop, 0), S(-1));
    tassert_shape(tout(all, 0), tscalar());
    tassert_shape(tout(sum, 0), S(1, 16, 64));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    keep = TNODE(g, "ReduceMean", 1, x);
    TATTR_INTS(g, keep, "axes", 1, -1);
    tinfer_fails(g, false, BD_EMODEL, "axis 1 is listed twice", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_2d_batched_and_broadcast),
        cmocka_unit_test(test_matmul_promotes_1d_operands),
        cmocka_unit_test(test_matmul_keeps_dynamic_batch_and_rows),
        cmocka_unit_test(test_matmul_inner_dim_mismatch),
        cmocka_unit_test(test_gemm_transposes_and_bias),
        cmocka_unit_test(test_det_batch_dims),
        cmocka_unit_test(test_softmax_axis_checked),
        cmocka_unit_test(test_layernorm_outputs_and_scale_check),
        cmocka_unit_test(test_batchnorm_checks_channels),
        cmocka_unit_test(test_reduce_mean_axes_and_keepdims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
