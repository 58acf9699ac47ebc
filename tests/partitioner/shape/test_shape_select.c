/* Selection ops and element counts: TopK (K as constant input, as run-time input, as the
 * pre-opset-10 attribute), NonZero, NonMaxSuppression, ArgMax/ArgMin, GatherElements, and Size folding. */
#include "tests/partitioner/shape/shape_test.h"

static const bd_shape unranked = { .rank = -1 };

static void test_topk_constant_k_gives_static_shape(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 8, 256), NULL);
    bd_node *t = TNODE(g, "TopK", 2, x, TINTS(g, "k", 32));
    tinfer(g, true);
    tassert_shape(tout(t, 0), S(1, 8, 32));
    tassert_shape(tout(t, 1), S(1, 8, 32));
    assert_int_equal(tout(t, 0)->dtype, BD_DT_FLOAT);
    assert_int_equal(tout(t, 1)->dtype, BD_DT_INT64);
    bd_graph_destroy(g);

    g = tgraph();                                        /* axis 1, batch dynamic */
    x = tinput(g, "x", BD_DT_FLOAT, S(-1, 10, 4), "batch");
    t = TNODE(g, "TopK", 2, x, TINTS(g, "k", 3));
    tattr_int(g, t, "axis", -2);
    tinfer(g, false);
    tassert_shape(tout(t, 0), S(-1, 3, 4));
    assert_string_equal(tout(t, 1)->shape.sym[0], "batch");
    bd_graph_destroy(g);
}

static void test_topk_runtime_k_keeps_rank(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 5, 7), NULL);
    bd_value *k = tinput(g, "k", BD_DT_INT64, S(1), NULL);
    bd_node *t = TNODE(g, "TopK", 2, x, k);
    tattr_int(g, t, "axis", 1);
    tinfer(g, false);
    tassert_shape(tout(t, 0), S(2, -1, 7));
    tassert_shape(tout(t, 1), S(2, -1, 7));
    assert_int_equal(tout(t, 1)->dtype, BD_DT_INT64);
    bd_graph_destroy(g);
}

static void test_topk_attribute_k_before_opset_10(void **state)
{
    bd_graph *g = tgraph();
    bd_graph_set_opset(g, 9);
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(3, 4), NULL);
    bd_node *t = TNODE(g, "TopK", 2, x);
    tattr_int(g, t, "k", 2);
    tinfer(g, true);
    tassert_shape(tout(t, 0), S(3, 2));
    bd_graph_destroy(g);
}

static void test_topk_malformed(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(3, 4), NULL);
    TNODE(g, "TopK", 2, x, TINTS(g, "k", 5));
    tinfer_fails(g, false, BD_EMODEL, "TopK", "K = 5 is larger than axis 1 of size 4", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 4), NULL);
    TNODE(g, "TopK", 2, x);
    tinfer_fails(g, false, BD_EMODEL, "K is missing", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 4), NULL);
    TNODE(g, "TopK", 2, x, TINTS(g, "k", -1));
    tinfer_fails(g, false, BD_EMODEL, "K = -1 is negative", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 4), NULL);
    bd_node *t = TNODE(g, "TopK", 2, x, TINTS(g, "k", 1));
    tattr_int(g, t, "axis", 2);
    tinfer_fails(g, false, BD_EMODEL, "axis 2 is out of range", NULL);
    bd_graph_destroy(g);
}

static void test_nms_is_runtime_rows_of_three(void **state)
{
    bd_graph *g = tgraph();
    bd_node *n = TNODE(g, "NonMaxSuppression", 1, tinput(g, "b", BD_DT_FLOAT, S(1, 6, 4), NULL),
                       tinput(g, "s", BD_DT_FLOAT, S(1, 2, 6), NULL));
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 3));
    assert_int_equal(tout(n, 0)->dtype, BD_DT_INT64);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "NonMaxSuppression", 1, tinput(g, "b", BD_DT_FLOAT, S(1, 6, 5), NULL),
          tinput(g, "s", BD_DT_FLOAT, S(1, 2, 6), NULL));
    tinfer_fails(g, false, BD_EMODEL, "NonMaxSuppression", "expected 4", NULL);
    bd_graph_destroy(g);
}

static void test_nonzero_is_rank_by_runtime_count(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_BOOL, S(1, 8, 12, 12), NULL);
    bd_node *nz = TNODE(g, "NonZero", 1, x);
    bd_node *tr = TNODE(g, "Transpose", 1, tout(nz, 0));
    tinfer(g, false);
    tassert_shape(tout(nz, 0), S(4, -1));
    assert_int_equal(tout(nz, 0)->dtype, BD_DT_INT64);
    tassert_shape(tout(tr, 0), S(-1, 4));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, unranked, NULL);
    nz = TNODE(g, "NonZero", 1, x);
    tinfer(g, false);
    tassert_shape(tout(nz, 0), S(-1, -1));
    bd_graph_destroy(g);
}

static void test_argmax_argmin_reduce_one_axis(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *a = TNODE(g, "ArgMax", 1, x);               /* axis 0, keepdims 1 */
    bd_node *b = TNODE(g, "ArgMin", 1, x);
    tattr_int(g, b, "axis", -1);
    tattr_int(g, b, "keepdims", 0);
    tinfer(g, true);
    tassert_shape(tout(a, 0), S(1, 3, 4));
    tassert_shape(tout(b, 0), S(2, 3));
    assert_int_equal(tout(a, 0)->dtype, BD_DT_INT64);
    assert_int_equal(tout(b, 0)->dtype, BD_DT_INT64);
    bd_graph_destroy(g);
}

static void test_gather_elements_has_indices_shape(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(3, 5, 2), NULL);
    bd_value *i = tinput(g, "i", BD_DT_INT64, S(3, 1, 2), NULL);
    bd_node *n = TNODE(g, "GatherElements", 1, x, i);
    tattr_int(g, n, "axis", 1);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(3, 1, 2));
    assert_int_equal(tout(n, 0)->dtype, BD_DT_FLOAT);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 5), NULL);
    i = tinput(g, "i", BD_DT_INT64, S(3), NULL);
    TNODE(g, "GatherElements", 1, x, i);
    tinfer_fails(g, false, BD_EMODEL, "must have the same rank", NULL);
    bd_graph_destroy(g);
}

static void test_size_folds_static_shapes(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *sz = TNODE(g, "Size", 1, x);
    bd_node *sh = TNODE(g, "Size", 1, tout(TNODE(g, "Shape", 1, x), 0));   /* the rank */
    tinfer(g, true);
    tassert_shape(tout(sz, 0), tscalar());
    TASSERT_INTS(tout(sz, 0), 24);
    TASSERT_INTS(tout(sh, 0), 3);
    bd_graph_destroy(g);

    g = tgraph();                                        /* dynamic: a scalar, not folded */
    x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3), "batch");
    sz = TNODE(g, "Size", 1, x);
    bd_value *u = tinput(g, "u", BD_DT_FLOAT, unranked, NULL);
    bd_node *su = TNODE(g, "Size", 1, u);
    tinfer(g, false);
    tassert_shape(tout(sz, 0), tscalar());
    assert_null(tout(sz, 0)->data);
    assert_int_equal(tout(sz, 0)->dtype, BD_DT_INT64);
    tassert_shape(tout(su, 0), tscalar());
    bd_graph_destroy(g);
}

/* LayerNormalization's expansion: Neg of a constant axis sizes ConstantOfShape. */
static void test_neg_and_abs_of_integer_constants_fold(void **state)
{
    bd_graph *g = tgraph();
    bd_node *neg = TNODE(g, "Neg", 1, TINTS(g, "axis", -1, 2));
    bd_node *abs = TNODE(g, "Abs", 1, TINTS(g, "v", -3, 4));
    bd_node *cos = TNODE(g, "ConstantOfShape", 1, tout(TNODE(g, "Neg", 1, TINTS(g, "a", -2)), 0));
    tinfer(g, true);
    TASSERT_INTS(tout(neg, 0), 1, -2);
    TASSERT_INTS(tout(abs, 0), 3, 4);
    tassert_shape(tout(cos, 0), S(2));
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topk_constant_k_gives_static_shape),
        cmocka_unit_test(test_topk_runtime_k_keeps_rank),
        cmocka_unit_test(test_topk_attribute_k_before_opset_10),
        cmocka_unit_test(test_topk_malformed),
        cmocka_unit_test(test_nonzero_is_rank_by_runtime_count),
        cmocka_unit_test(test_nms_is_runtime_rows_of_three),
        cmocka_unit_test(test_argmax_argmin_reduce_one_axis),
        cmocka_unit_test(test_gather_elements_has_indices_shape),
        cmocka_unit_test(test_size_folds_static_shapes),
        cmocka_unit_test(test_neg_and_abs_of_integer_constants_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
