/* Reshape (0, -1, allowzero, dynamic dims), Flatten, Transpose, Squeeze, Unsqueeze (axes as
 * attribute and as input), Concat, and their malformed attributes. */
#include "tests/partitioner/shape/shape_test.h"

static bd_node *reshape(bd_graph *g, bd_value *x, size_t len, const int64_t *shape)
{
    static int counter;
    char name[32];
    snprintf(name, sizeof name, "shape%d", ++counter);
    return TNODE(g, "Reshape", 1, x, tints(g, name, len, shape));
}
#define RESHAPE(g, x, ...) reshape(g, x, sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), \
                                   (int64_t[]){ __VA_ARGS__ })

static void test_reshape_zero_copies_and_minus_one_infers(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *a = RESHAPE(g, x, 0, -1);
    tinfer(g, true);
    tassert_shape(tout(a, 0), S(2, 12));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    a = RESHAPE(g, x, -1, 0, 2, 2);
    tinfer(g, true);
    tassert_shape(tout(a, 0), S(2, 3, 2, 2));
    bd_graph_destroy(g);
}

static void test_reshape_allowzero_keeps_zero(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(0, 4), NULL);
    bd_node *a = RESHAPE(g, x, 4, 0);
    tattr_int(g, a, "allowzero", 1);
    tinfer(g, true);
    tassert_shape(tout(a, 0), S(4, 0));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(0, 4), NULL);
    a = RESHAPE(g, x, 0, -1);
    tattr_int(g, a, "allowzero", 1);
    tinfer_fails(g, false, BD_EMODEL, "both 0 (allowzero) and -1", NULL);
    bd_graph_destroy(g);
}

static void test_reshape_element_count_mismatch(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    RESHAPE(g, x, 5, -1);
    tinfer_fails(g, false, BD_EMODEL, "Reshape", "24 elements", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    RESHAPE(g, x, 5, 5);
    tinfer_fails(g, false, BD_EMODEL, "into 25 elements", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    RESHAPE(g, x, -1, -1);
    tinfer_fails(g, false, BD_EMODEL, "more than one -1", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    RESHAPE(g, x, 2, -3, 4);
    tinfer_fails(g, false, BD_EMODEL, "shape[1] = -3 is invalid", NULL);
    bd_graph_destroy(g);
}

static void test_reshape_with_dynamic_batch(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 128, 768), "batch");
    bd_node *heads = RESHAPE(g, x, 0, 0, 12, 64);   /* batch copied with its symbol */
    bd_node *flat  = RESHAPE(g, x, 0, -1);          /* the copied dynamic dim cancels */
    bd_node *rows  = RESHAPE(g, x, -1, 768);        /* batch*128: unknown */
    tinfer(g, false);
    tassert_shape(tout(heads, 0), S(-1, 128, 12, 64));
    assert_string_equal(tout(heads, 0)->shape.sym[0], "batch");
    tassert_shape(tout(flat, 0), S(-1, 98304));
    tassert_shape(tout(rows, 0), S(-1, 768));
    assert_null(tout(rows, 0)->shape.sym[0]);
    bd_graph_destroy(g);
}

static void test_reshape_of_runtime_shape_keeps_rank(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_value *s = tinput(g, "s", BD_DT_INT64, S(2), NULL);
    bd_node *n = TNODE(g, "Reshape", 1, x, s);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, -1));
    bd_graph_destroy(g);
}

static void test_flatten_axes(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4, 5), "batch");
    bd_node *a = TNODE(g, "Flatten", 1, x);
    bd_node *b = TNODE(g, "Flatten", 1, x);
    tattr_int(g, b, "axis", 0);
    bd_node *c = TNODE(g, "Flatten", 1, x);
    tattr_int(g, c, "axis", -1);
    bd_node *d = TNODE(g, "Flatten", 1, x);
    tattr_int(g, d, "axis", 4);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 60));
    assert_string_equal(tout(a, 0)->shape.sym[0], "batch");
    tassert_shape(tout(b, 0), S(1, -1));
    tassert_shape(tout(c, 0), S(-1, 5));
    assert_null(tout(c, 0)->shape.sym[0]);
    tassert_shape(tout(d, 0), S(-1, 1));
    bd_graph_destroy(g);

    g = tgraph();
    a = TNODE(g, "Flatten", 1, tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL));
    tattr_int(g, a, "axis", 3);
    tinfer_fails(g, false, BD_EMODEL, "axis 3 is out of range for rank 2", NULL);
    bd_graph_destroy(g);
}

static void test_transpose_perm_and_default(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4, 5), "batch");
    bd_node *a = TNODE(g, "Transpose", 1, x);
    bd_node *b = TNODE(g, "Transpose", 1, x);
    TATTR_INTS(g, b, "perm", 0, 2, 1, 3);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(5, 4, 3, -1));
    assert_string_equal(tout(a, 0)->shape.sym[3], "batch");
    tassert_shape(tout(b, 0), S(-1, 4, 3, 5));
    bd_graph_destroy(g);

    static const int64_t bad[][4] = { { 0, 1, 1, 3 }, { 0, 1, 2, 4 }, { 0, 1, 2, -1 } };
    for (int i = 0; i < 3; i++) {
        g = tgraph();
        a = TNODE(g, "Transpose", 1, tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4, 5), NULL));
        tattr_ints(g, a, "perm", 4, bad[i]);
        tinfer_fails(g, false, BD_EMODEL, "not a permutation of 0..3", NULL);
        bd_graph_destroy(g);
    }
    g = tgraph();
    a = TNODE(g, "Transpose", 1, tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4, 5), NULL));
    TATTR_INTS(g, a, "perm", 1, 0);
    tinfer_fails(g, false, BD_EMODEL, "'perm' has 2 values for rank 4", NULL);
    bd_graph_destroy(g);
}

static void test_squeeze_attr_input_and_all(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 1, 5), NULL);
    bd_node *a = TNODE(g, "Squeeze", 1, x);                        /* every 1 */
    bd_node *b = TNODE(g, "Squeeze", 1, x);
    TATTR_INTS(g, b, "axes", -2);                                   /* opset < 13 */
    bd_node *c = TNODE(g, "Squeeze", 1, x, TINTS(g, "axes", 0));    /* opset >= 13 */
    tinfer(g, true);
    tassert_shape(tout(a, 0), S(3, 5));
    tassert_shape(tout(b, 0), S(1, 3, 5));
    tassert_shape(tout(c, 0), S(3, 1, 5));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3), NULL);
    a = TNODE(g, "Squeeze", 1, x);
    TATTR_INTS(g, a, "axes", 1);
    tinfer_fails(g, false, BD_EMODEL, "cannot squeeze axis 1 of size 3", NULL);
    bd_graph_destroy(g);
}

static void test_unsqueeze_attr_and_input(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3), "batch");
    bd_node *a = TNODE(g, "Unsqueeze", 1, x);
    TATTR_INTS(g, a, "axes", 0, -1);                                /* opset < 13 */
    bd_node *b = TNODE(g, "Unsqueeze", 1, x, TINTS(g, "axes", 1, 2)); /* opset >= 13 */
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(1, -1, 3, 1));
    assert_string_equal(tout(a, 0)->shape.sym[1], "batch");
    tassert_shape(tout(b, 0), S(-1, 1, 1, 3));
    bd_graph_destroy(g);

    g = tgraph();
    a = TNODE(g, "Unsqueeze", 1, tinput(g, "x", BD_DT_FLOAT, S(3), NULL));
    TATTR_INTS(g, a, "axes", 0, 0);
    tinfer_fails(g, false, BD_EMODEL, "axis 0 is listed twice", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = TNODE(g, "Unsqueeze", 1, tinput(g, "x", BD_DT_FLOAT, S(3), NULL));
    TATTR_INTS(g, a, "axes", 5);
    tinfer_fails(g, false, BD_EMODEL, "axis 5 is out of range for rank 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Unsqueeze", 1, tinput(g, "x", BD_DT_FLOAT, S(3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "axes are required", NULL);
    bd_graph_destroy(g);
}

static void test_concat_sums_axis_and_checks_others(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(-1, 3, 4), "batch");
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(-1, 5, 4), "batch");
    bd_node *n = TNODE(g, "Concat", 1, a, b, a);
    tattr_int(g, n, "axis", -2);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 11, 4));
    assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL);
    b = tinput(g, "b", BD_DT_FLOAT, S(3, 3), NULL);
    n = TNODE(g, "Concat", 1, a, b);
    tattr_int(g, n, "axis", 1);
    tinfer_fails(g, false, BD_EMODEL, "'b' [3,3] does not match 'a' [2,3] outside axis 1", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL);
    n = TNODE(g, "Concat", 1, a, a);
    tinfer_fails(g, false, BD_EMODEL, "attribute 'axis' is required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL);
    n = TNODE(g, "Concat", 1, a, a);
    tattr_int(g, n, "axis", -3);
    tinfer_fails(g, false, BD_EMODEL, "axis -3 is out of range", NULL);
    bd_graph_destroy(g);
}

static void test_split_sizes_and_equal_parts(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 10, 6), "batch");
    bd_node *a = TNODE(g, "Split", 2, x, TINTS(g, "split", 3, 7));   /* opset 13 input */
    tattr_int(g, a, "axis", 1);
    bd_node *b = TNODE(g, "Split", 3, x);                           /* equal parts */
    tattr_int(g, b, "axis", -1);
    bd_node *c = TNODE(g, "Split", 2, x);
    TATTR_INTS(g, c, "split", 4, 6);                                 /* opset < 13 attr */
    tattr_int(g, c, "axis", 1);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 3, 6));
    tassert_shape(tout(a, 1), S(-1, 7, 6));
    assert_string_equal(tout(a, 1)->shape.sym[0], "batch");
    tassert_shape(tout(b, 2), S(-1, 10, 2));
    tassert_shape(tout(c, 1), S(-1, 6, 6));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(10), NULL);
    TNODE(g, "Split", 2, x, TINTS(g, "split", 3, 6));
    tinfer_fails(g, false, BD_EMODEL, "split sizes add up to 9, axis 0 has 10", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(10), NULL);
    TNODE(g, "Split", 3, x);
    tinfer_fails(g, false, BD_EMODEL, "does not split into 3 equal parts", NULL);
    bd_graph_destroy(g);
}

static void test_expand_broadcasts_to_target(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 1, 4), "batch");
    bd_node *a = TNODE(g, "Expand", 1, x, TINTS(g, "t", 3, 1));
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 3, 4));
    assert_string_equal(tout(a, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 4), NULL);
    TNODE(g, "Expand", 1, x, TINTS(g, "t", 3, 4));
    tinfer_fails(g, false, BD_EMODEL, "do not broadcast", NULL);
    bd_graph_destroy(g);
}

static void test_tile_multiplies_dims(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4), "batch");
    bd_node *a = TNODE(g, "Tile", 1, x, TINTS(g, "r", 1, 2, 3));
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 6, 12));
    assert_string_equal(tout(a, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    TNODE(g, "Tile", 1, x, TINTS(g, "r", 2));
    tinfer_fails(g, false, BD_EMODEL, "repeats has 1 values for rank 2", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape_zero_copies_and_minus_one_infers),
        cmocka_unit_test(test_reshape_allowzero_keeps_zero),
        cmocka_unit_test(test_reshape_element_count_mismatch),
        cmocka_unit_test(test_reshape_with_dynamic_batch),
        cmocka_unit_test(test_reshape_of_runtime_shape_keeps_rank),
        cmocka_unit_test(test_flatten_axes),
        cmocka_unit_test(test_transpose_perm_and_default),
        cmocka_unit_test(test_squeeze_attr_input_and_all),
        cmocka_unit_test(test_unsqueeze_attr_and_input),
        cmocka_unit_test(test_concat_sums_axis_and_checks_others),
        cmocka_unit_test(test_split_sizes_and_equal_parts),
        cmocka_unit_test(test_expand_broadcasts_to_target),
        cmocka_unit_test(test_tile_multiplies_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
