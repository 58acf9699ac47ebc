/* Rank propagation when dims are known only at run time: the rules keep the rank (with
 * dynamic dims) whenever the rank is knowable, so oneDNN can take the nodes that follow a
 * data-dependent op (NonZero -> Transpose -> ReduceMax -> ReduceSum -> Mul back onto a conv's
 * output, as in tests/runtime/mixed's mixed_where). */
#include "tests/partitioner/shape/shape_test.h"

static const bd_shape unranked = { .rank = -1 };

static void test_reduce_all_without_keepdims_is_scalar_even_unranked(void **state)
{
    bd_graph *g = tgraph();
    bd_value *u = tinput(g, "u", BD_DT_FLOAT, unranked, NULL);
    bd_node *r = TNODE(g, "ReduceSum", 1, u);
    tattr_int(g, r, "keepdims", 0);
    bd_node *k = TNODE(g, "ReduceSum", 1, u);            /* keepdims: rank unknown */
    tinfer(g, false);
    tassert_shape(tout(r, 0), tscalar());
    assert_int_equal(tout(r, 0)->dtype, BD_DT_FLOAT);
    assert_int_equal(tout(k, 0)->shape.rank, -1);
    bd_graph_destroy(g);
}

static void test_reduce_runtime_dims_keep_rank(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_INT64, S(-1, 4), "n");
    bd_node *mx = TNODE(g, "ReduceMax", 1, x);
    TATTR_INTS(g, mx, "axes", 0);
    tattr_int(g, mx, "keepdims", 0);
    bd_node *sum = TNODE(g, "ReduceSum", 1, tout(mx, 0));
    tattr_int(g, sum, "keepdims", 0);
    tinfer(g, false);
    tassert_shape(tout(mx, 0), S(4));
    tassert_shape(tout(sum, 0), tscalar());
    bd_graph_destroy(g);
}

static void test_reduce_runtime_axes_of_known_count(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4, 5), NULL);
    bd_value *axes = tinput(g, "axes", BD_DT_INT64, S(2), NULL);
    bd_node *drop = TNODE(g, "ReduceSum", 1, x, axes);
    tattr_int(g, drop, "keepdims", 0);
    bd_node *keep = TNODE(g, "ReduceSum", 1, x, axes);
    bd_value *none = tinput(g, "none", BD_DT_INT64, S(0), NULL);   /* all or nothing */
    bd_node *zero = TNODE(g, "ReduceSum", 1, x, none);
    tattr_int(g, zero, "keepdims", 0);
    tinfer(g, false);
    tassert_shape(tout(drop, 0), S(-1, -1));
    tassert_shape(tout(keep, 0), S(-1, -1, -1, -1));
    assert_int_equal(tout(zero, 0)->shape.rank, -1);
    bd_graph_destroy(g);
}

static void test_squeeze_runtime_axes_of_known_count(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 1, 5), NULL);
    bd_value *axes = tinput(g, "axes", BD_DT_INT64, S(2), NULL);
    bd_node *sq = TNODE(g, "Squeeze", 1, x, axes);
    tinfer(g, false);
    tassert_shape(tout(sq, 0), S(-1, -1));
    bd_graph_destroy(g);
}

static void test_concat_takes_rank_from_a_ranked_input(void **state)
{
    bd_graph *g = tgraph();
    bd_value *u = tinput(g, "u", BD_DT_FLOAT, unranked, NULL);
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    bd_node *c = TNODE(g, "Concat", 1, u, x);
    tattr_int(g, c, "axis", 0);
    tinfer(g, false);
    tassert_shape(tout(c, 0), S(-1, -1));
    bd_graph_destroy(g);
}

static void test_gemm_is_always_2d(void **state)
{
    bd_graph *g = tgraph();
    bd_value *u = tinput(g, "u", BD_DT_FLOAT, unranked, NULL);
    bd_node *gm = TNODE(g, "Gemm", 1, u, tweight(g, "w", S(4, 10)));
    tinfer(g, false);
    tassert_shape(tout(gm, 0), S(-1, -1));
    assert_int_equal(tout(gm, 0)->dtype, BD_DT_FLOAT);
    bd_graph_destroy(g);
}

/* The mixed_where chain: NonZero's run-time count never reaches the conv's side. */
static void test_nonzero_chain_returns_to_static(void **state)
{
    bd_graph *g = tgraph();
    bd_value *y = tinput(g, "y", BD_DT_FLOAT, S(1, 8, 12, 12), NULL);
    bd_node *gt = TNODE(g, "Greater", 1, y, tweight(g, "zero", tscalar()));
    bd_node *nz = TNODE(g, "NonZero", 1, tout(gt, 0));
    bd_node *tr = TNODE(g, "Transpose", 1, tout(nz, 0));
    bd_node *mx = TNODE(g, "ReduceMax", 1, tout(tr, 0));
    TATTR_INTS(g, mx, "axes", 0);
    tattr_int(g, mx, "keepdims", 0);
    bd_node *sum = TNODE(g, "ReduceSum", 1, tout(mx, 0));
    tattr_int(g, sum, "keepdims", 0);
    bd_node *cast = TNODE(g, "Cast", 1, tout(sum, 0));
    tattr_int(g, cast, "to", BD_DT_FLOAT);
    bd_node *mul = TNODE(g, "Mul", 1, y, tout(cast, 0));
    tinfer(g, false);
    tassert_shape(tout(tr, 0), S(-1, 4));
    tassert_shape(tout(cast, 0), tscalar());
    tassert_shape(tout(mul, 0), S(1, 8, 12, 12));
    bd_graph_destroy(g);
}

/* An input of unknown type (an op without a rule) does not erase a declared output type. */
static void test_unknown_input_type_keeps_declared_type(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(3, 5, 2), NULL);
    bd_node *odd = tnode_d(g, "com.example", "Odd", &x, 1, 1);
    bd_node *r = TNODE(g, "ReduceMean", 1, tout(odd, 0));
    tattr_int(g, r, "keepdims", 0);
    tout(r, 0)->dtype = BD_DT_FLOAT;                     /* as the model declared it */
    tinfer(g, false);
    assert_int_equal(tout(odd, 0)->dtype, BD_DT_UNDEFINED);
    assert_int_equal(tout(r, 0)->dtype, BD_DT_FLOAT);
    tassert_shape(tout(r, 0), tscalar());
    bd_graph_destroy(g);
}

/* Opset 6's Add broadcasts by attribute (B along axis 1), which numpy rules would reject: a
 * graph outside opsets 7-17 keeps its declared shapes and no rule runs. */
static void test_other_opsets_keep_declared_shapes(void **state)
{
    bd_graph *g = tgraph();
    bd_graph_set_opset(g, 6);
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(2, 3, 4, 5), NULL);
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(3), NULL);
    bd_node *add = TNODE(g, "Add", 1, a, b);
    tattr_int(g, add, "broadcast", 1);
    tattr_int(g, add, "axis", 1);
    tout(add, 0)->dtype = BD_DT_FLOAT;
    tout(add, 0)->shape = S(2, 3, 4, 5);                 /* as the file declares it */
    bd_node *relu = TNODE(g, "Relu", 1, tout(add, 0));   /* undeclared: stays unknown */
    tinfer(g, false);
    tassert_shape(tout(add, 0), S(2, 3, 4, 5));
    assert_int_equal(tout(relu, 0)->shape.rank, -1);
    tinfer_fails(g, true, BD_EUNSUPPORTED, "opset 6", "7-17", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                        /* TensorFlow: a producer version */
    bd_graph_set_opset(g, 1087);
    bd_graph_set_framework(g, "tensorflow");
    a = tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL);
    relu = TNODE(g, "Relu", 1, a);
    tinfer(g, true);
    tassert_shape(tout(relu, 0), S(2, 3));
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_all_without_keepdims_is_scalar_even_unranked),
        cmocka_unit_test(test_reduce_runtime_dims_keep_rank),
        cmocka_unit_test(test_reduce_runtime_axes_of_known_count),
        cmocka_unit_test(test_squeeze_runtime_axes_of_known_count),
        cmocka_unit_test(test_concat_takes_rank_from_a_ranked_input),
        cmocka_unit_test(test_gemm_is_always_2d),
        cmocka_unit_test(test_nonzero_chain_returns_to_static),
        cmocka_unit_test(test_unknown_input_type_keeps_declared_type),
        cmocka_unit_test(test_other_opsets_keep_declared_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
