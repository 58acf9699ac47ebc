/* Elementwise ops: unary shape pass-through, numpy broadcasting (incl. dynamic dims and
 * failures), Clip's attribute and input forms, Cast and dtype rules. */
#include "tests/partitioner/shape/shape_test.h"

#include <string.h>

static void test_unary_ops_keep_shape_and_dtype(void **state)
{
    static const char *const ops[] = { "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Sqrt" };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        bd_graph *g = tgraph();
        bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 5), NULL);
        bd_node *n = TNODE(g, ops[i], 1, x);
        tinfer(g, true);
        tassert_shape(tout(n, 0), S(2, 3, 5));
        assert_int_equal(tout(n, 0)->dtype, BD_DT_FLOAT);
        bd_graph_destroy(g);
    }
}

static void test_braid_gelu_keeps_shape(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(4, 768), NULL);
    bd_node *n = tnode_d(g, "braid", "Gelu", &x, 1, 1);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(4, 768));
    bd_graph_destroy(g);
}

static void test_clip_with_min_max_inputs_and_attrs(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 8), NULL);
    bd_value *lo = tweight(g, "lo", tscalar()), *hi = tweight(g, "hi", tscalar());
    bd_node *a = TNODE(g, "Clip", 1, x, lo, hi);                 /* opset 11+ */
    bd_node *b = TNODE(g, "Clip", 1, tout(a, 0));                  /* opset 6 attributes */
    tattr_float(g, b, "min", 0.f);
    tattr_float(g, b, "max", 6.f);
    bd_node *c = TNODE(g, "Clip", 1, tout(b, 0), NULL, hi);      /* min omitted */
    tinfer(g, true);
    tassert_shape(tout(c, 0), S(1, 8));
    bd_graph_destroy(g);
}

static void test_clip_rejects_non_scalar_bounds(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 8), NULL);
    bd_value *lo = tweight(g, "lo", S(8));
    TNODE(g, "Clip", 1, x, lo);
    tinfer_fails(g, false, BD_EMODEL, "Clip", "min 'lo' must be a scalar", NULL);
    bd_graph_destroy(g);
}

static void test_binary_broadcasts_numpy_style(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(2, 1, 4), NULL);
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(3, 1), NULL);
    bd_value *c = tinput(g, "c", BD_DT_FLOAT, S(4), NULL);
    bd_value *s = tinput(g, "s", BD_DT_FLOAT, tscalar(), NULL);
    bd_node *add = TNODE(g, "Add", 1, a, b);
    bd_node *mul = TNODE(g, "Mul", 1, tout(add, 0), c);
    bd_node *sub = TNODE(g, "Sub", 1, s, tout(mul, 0));
    bd_node *div = TNODE(g, "Div", 1, tout(sub, 0), s);
    bd_node *pw  = TNODE(g, "Pow", 1, tout(div, 0), s);
    tinfer(g, true);
    tassert_shape(tout(add, 0), S(2, 3, 4));
    tassert_shape(tout(sub, 0), S(2, 3, 4));
    tassert_shape(tout(pw, 0), S(2, 3, 4));
    bd_graph_destroy(g);
}

static void test_broadcast_mismatch_is_a_model_error(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL);
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(4, 3, 2), NULL);
    bd_node *n = TNODE(g, "Add", 1, a, b);
    char name[64];
    snprintf(name, sizeof name, "node '%s'", n->name);
    tinfer_fails(g, false, BD_EMODEL, name, "[2,3]", "[4,3,2]", "do not broadcast", NULL);
    bd_graph_destroy(g);
}

static void test_broadcast_with_dynamic_dims(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 1, 8), "batch");
    bd_value *y = tinput(g, "y", BD_DT_FLOAT, S(1, 5, 8), NULL);
    bd_value *z = tinput(g, "z", BD_DT_FLOAT, S(-1, 5, 1), "other");
    bd_value *w = tinput(g, "w", BD_DT_FLOAT, S(3, 1, 1), NULL);
    bd_node *keep = TNODE(g, "Add", 1, x, y);          /* batch vs 1: symbol kept */
    bd_node *diff = TNODE(g, "Mul", 1, tout(keep, 0), z); /* batch vs other: unnamed */
    bd_node *fix  = TNODE(g, "Sub", 1, x, w);          /* batch vs 3: must be 3 */
    tinfer(g, false);
    tassert_shape(tout(keep, 0), S(-1, 5, 8));
    assert_string_equal(tout(keep, 0)->shape.sym[0], "batch");
    tassert_shape(tout(diff, 0), S(-1, 5, 8));
    assert_null(tout(diff, 0)->shape.sym[0]);
    tassert_shape(tout(fix, 0), S(3, 1, 8));
    bd_graph_destroy(g);
}

static void test_binary_rejects_mixed_dtypes(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(2), NULL);
    bd_value *b = tinput(g, "b", BD_DT_INT64, S(2), NULL);
    TNODE(g, "Add", 1, a, b);
    tinfer_fails(g, false, BD_EMODEL, "input types differ", "FP32", "INT64", NULL);
    bd_graph_destroy(g);
}

static void test_cast_takes_dtype_from_to(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 2), NULL);
    bd_node *n = TNODE(g, "Cast", 1, x);
    tattr_int(g, n, "to", BD_DT_INT32);
    bd_node *id = TNODE(g, "Identity", 1, tout(n, 0));
    tinfer(g, true);
    assert_int_equal(tout(n, 0)->dtype, BD_DT_INT32);
    assert_int_equal(tout(id, 0)->dtype, BD_DT_INT32);
    tassert_shape(tout(id, 0), S(2, 2));
    bd_graph_destroy(g);
}

static void test_cast_rejects_unknown_type(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 2), NULL);
    bd_node *n = TNODE(g, "Cast", 1, x);
    tattr_int(g, n, "to", 99);
    tinfer_fails(g, false, BD_EMODEL, "attribute 'to' = 99", NULL);
    bd_graph_destroy(g);
}

static void test_compare_and_where(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_INT64, S(2, 1), NULL);
    bd_value *b = tinput(g, "b", BD_DT_INT64, S(3), NULL);
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1), NULL);
    bd_node *eq = TNODE(g, "Equal", 1, a, b);
    bd_node *wh = TNODE(g, "Where", 1, tout(eq, 0), x, x);
    tinfer(g, true);
    assert_int_equal(tout(eq, 0)->dtype, BD_DT_BOOL);
    tassert_shape(tout(wh, 0), S(2, 3));
    assert_int_equal(tout(wh, 0)->dtype, BD_DT_FLOAT);
    bd_graph_destroy(g);
}

static void test_dropout_mask_is_bool(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 4), NULL);
    bd_node *n = TNODE(g, "Dropout", 2, x);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(2, 4));
    tassert_shape(tout(n, 1), S(2, 4));
    assert_int_equal(tout(n, 1)->dtype, BD_DT_BOOL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_ops_keep_shape_and_dtype),
        cmocka_unit_test(test_braid_gelu_keeps_shape),
        cmocka_unit_test(test_clip_with_min_max_inputs_and_attrs),
        cmocka_unit_test(test_clip_rejects_non_scalar_bounds),
        cmocka_unit_test(test_binary_broadcasts_numpy_style),
        cmocka_unit_test(test_broadcast_mismatch_is_a_model_error),
        cmocka_unit_test(test_broadcast_with_dynamic_dims),
        cmocka_unit_test(test_binary_rejects_mixed_dtypes),
        cmocka_unit_test(test_cast_takes_dtype_from_to),
        cmocka_unit_test(test_cast_rejects_unknown_type),
        cmocka_unit_test(test_compare_and_where),
        cmocka_unit_test(test_dropout_mask_is_bool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
