/* The elementwise ops beyond the basic arithmetic: trigonometric and rounding unary ops, IsInf /
 * IsNaN (BOOL), CastLike, Mod (fmod) and BitShift (direction), LessOrEqual / GreaterOrEqual,
 * And / Or / Xor (BOOL operands), Sum / Mean, braid's Swish and ChannelShuffle (of one input
 * or of several parts); the integer shape arithmetic they fold; and their malformed
 * attributes. */
#include "tests/partitioner/shape/shape_test.h"
#include "tests/lib/tl_graph.h"

#include <string.h>

static const bd_shape unranked = { .rank = -1 };

static void test_unary_ops_keep_shape_dtype_and_symbol(void **state)
{
    static const char *const ops[] = {
        "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cos", "Cosh", "Sin", "Sinh", "Tan",
        "Ceil", "Floor", "Round", "Sign", "Softsign", "Mish", "Celu", "Selu", "Shrink",
        "ThresholdedRelu",
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        bd_graph *g = tgraph();
        bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 5), "batch");
        bd_node *n = TNODE(g, ops[i], 1, x);
        tinfer(g, false);
        tassert_shape(tout(n, 0), S(-1, 3, 5));
        assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
        assert_int_equal(tout(n, 0)->dtype, BD_DT_FLOAT);
        bd_graph_destroy(g);

        g = tgraph();                                   /* static, and unknown rank */
        x = tinput(g, "x", BD_DT_DOUBLE, S(4), NULL);
        n = TNODE(g, ops[i], 1, x);
        bd_node *u = TNODE(g, ops[i], 1, tinput(g, "u", BD_DT_FLOAT, unranked, NULL));
        tinfer(g, false);
        tassert_shape(tout(n, 0), S(4));
        assert_int_equal(tout(n, 0)->dtype, BD_DT_DOUBLE);
        assert_int_equal(tout(u, 0)->shape.rank, -1);
        bd_graph_destroy(g);
    }
}

static void test_isinf_isnan_are_bool(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 7), "n");
    bd_node *a = TNODE(g, "IsInf", 1, x);
    bd_node *b = TNODE(g, "IsNaN", 1, x);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 7));
    assert_string_equal(tout(b, 0)->shape.sym[0], "n");
    assert_int_equal(tout(a, 0)->dtype, BD_DT_BOOL);
    assert_int_equal(tout(b, 0)->dtype, BD_DT_BOOL);
    bd_graph_destroy(g);
}

static void test_castlike_takes_the_second_inputs_dtype(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3), "batch");
    bd_value *like = tinput(g, "like", BD_DT_FLOAT16, S(1), NULL);
    bd_node *c = TNODE(g, "CastLike", 1, x, like);
    tinfer(g, false);
    tassert_shape(tout(c, 0), S(-1, 3));
    assert_string_equal(tout(c, 0)->shape.sym[0], "batch");
    assert_int_equal(tout(c, 0)->dtype, BD_DT_FLOAT16);
    bd_graph_destroy(g);

    g = tgraph();                                       /* folded like Cast */
    bd_value *i32 = tinput(g, "i32", BD_DT_INT32, S(1), NULL);
    c = TNODE(g, "CastLike", 1, TINTS(g, "v", 3, -4), i32);
    bd_node *back = TNODE(g, "Cast", 1, tout(c, 0));
    tattr_int(g, back, "to", BD_DT_INT64);
    tinfer(g, true);
    assert_int_equal(tout(c, 0)->dtype, BD_DT_INT32);
    assert_non_null(tout(c, 0)->data);
    TASSERT_INTS(tout(back, 0), 3, -4);
    bd_graph_destroy(g);
}

static void test_mod_and_bitshift_broadcast(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(-1, 1, 4), "batch");
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(3, 1), NULL);
    bd_node *m = TNODE(g, "Mod", 1, a, b);
    tattr_int(g, m, "fmod", 1);
    bd_value *u = tinput(g, "u", BD_DT_UINT8, S(2, 3), NULL);
    bd_value *s = tinput(g, "s", BD_DT_UINT8, S(3), NULL);
    bd_node *sh = TNODE(g, "BitShift", 1, u, s);
    tattr_str(g, sh, "direction", "RIGHT");
    tinfer(g, false);
    tassert_shape(tout(m, 0), S(-1, 3, 4));
    assert_string_equal(tout(m, 0)->shape.sym[0], "batch");
    tassert_shape(tout(sh, 0), S(2, 3));
    assert_int_equal(tout(sh, 0)->dtype, BD_DT_UINT8);
    bd_graph_destroy(g);
}

static void test_mod_and_bitshift_malformed(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_INT64, S(3), NULL);
    bd_node *m = TNODE(g, "Mod", 1, a, a);
    tattr_int(g, m, "fmod", 2);
    tinfer_fails(g, false, BD_EMODEL, "Mod", "'fmod' = 2, expected 0 or 1", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_UINT32, S(3), NULL);
    TNODE(g, "BitShift", 1, a, a);
    tinfer_fails(g, false, BD_EMODEL, "BitShift", "'direction' is required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_UINT32, S(3), NULL);
    bd_node *sh = TNODE(g, "BitShift", 1, a, a);
    tattr_str(g, sh, "direction", "UP");
    tinfer_fails(g, false, BD_EMODEL, "'direction' is 'UP', expected one of LEFT, RIGHT", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                       /* an attribute of the wrong type */
    a = tinput(g, "a", BD_DT_UINT32, S(3), NULL);
    sh = TNODE(g, "BitShift", 1, a, a);
    tattr_int(g, sh, "direction", 1);
    tinfer_fails(g, false, BD_EMODEL, "'direction' must be a STRING", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_INT32, S(3), NULL);
    bd_value *b = tinput(g, "b", BD_DT_INT64, S(3), NULL);
    TNODE(g, "Mod", 1, a, b);
    tinfer_fails(g, false, BD_EMODEL, "input types differ", NULL);
    bd_graph_destroy(g);
}

static void test_compare_or_equal_and_logical_ops(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(-1, 4), "batch");
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(4), NULL);
    bd_node *le = TNODE(g, "LessOrEqual", 1, a, b);
    bd_node *ge = TNODE(g, "GreaterOrEqual", 1, b, a);
    bd_node *and = TNODE(g, "And", 1, tout(le, 0), tout(ge, 0));
    bd_node *or = TNODE(g, "Or", 1, tout(and, 0), tout(le, 0));
    bd_value *m = tinput(g, "m", BD_DT_BOOL, S(3, 1, 1), NULL);
    bd_node *xor = TNODE(g, "Xor", 1, tout(or, 0), m);
    tinfer(g, false);
    tassert_shape(tout(le, 0), S(-1, 4));
    assert_string_equal(tout(and, 0)->shape.sym[0], "batch");
    tassert_shape(tout(xor, 0), S(3, -1, 4));
    assert_int_equal(tout(le, 0)->dtype, BD_DT_BOOL);
    assert_int_equal(tout(xor, 0)->dtype, BD_DT_BOOL);
    bd_graph_destroy(g);

    g = tgraph();                                       /* And of numbers is malformed */
    a = tinput(g, "a", BD_DT_FLOAT, S(4), NULL);
    TNODE(g, "And", 1, a, a);
    tinfer_fails(g, false, BD_EMODEL, "And", "input 'a' must be BOOL, got FP32", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_BOOL, S(3), NULL);
    b = tinput(g, "b", BD_DT_BOOL, S(4), NULL);
    TNODE(g, "Or", 1, a, b);
    tinfer_fails(g, false, BD_EMODEL, "do not broadcast", NULL);
    bd_graph_destroy(g);
}

static void test_sum_and_mean_broadcast_variadic(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_FLOAT, S(-1, 1, 4), "batch");
    bd_value *b = tinput(g, "b", BD_DT_FLOAT, S(3, 1), NULL);
    bd_value *c = tinput(g, "c", BD_DT_FLOAT, S(4), NULL);
    bd_node *sum = TNODE(g, "Sum", 1, a, b, c);
    bd_node *mean = TNODE(g, "Mean", 1, c);
    tinfer(g, false);
    tassert_shape(tout(sum, 0), S(-1, 3, 4));
    assert_string_equal(tout(sum, 0)->shape.sym[0], "batch");
    tassert_shape(tout(mean, 0), S(4));
    bd_graph_destroy(g);

    g = tgraph();
    a = tinput(g, "a", BD_DT_FLOAT, S(2, 3), NULL);
    b = tinput(g, "b", BD_DT_FLOAT, S(4, 3), NULL);
    TNODE(g, "Mean", 1, a, b);
    tinfer_fails(g, false, BD_EMODEL, "Mean", "do not broadcast", NULL);
    bd_graph_destroy(g);
}

static bool bool_at(const bd_value *v, size_t i)
{
    return ((const unsigned char *)v->data)[i] != 0;
}

static void test_integer_shape_arithmetic_folds(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = TINTS(g, "a", 7, -7, 7, -7), *b = TINTS(g, "b", 3, 3, -3, -3);
    bd_node *mod = TNODE(g, "Mod", 1, a, b);             /* the divisor's sign */
    bd_node *fmod = TNODE(g, "Mod", 1, a, b);            /* the dividend's sign */
    tattr_int(g, fmod, "fmod", 1);
    bd_node *sum = TNODE(g, "Sum", 1, a, b, TINTS(g, "c", 100));
    bd_node *max = TNODE(g, "Max", 1, a, b);
    bd_node *min = TNODE(g, "Min", 1, a, TINTS(g, "one", 1));
    bd_node *le = TNODE(g, "LessOrEqual", 1, a, b);
    bd_node *ge = TNODE(g, "GreaterOrEqual", 1, a, TINTS(g, "seven", 7));
    bd_node *and = TNODE(g, "And", 1, tout(le, 0), tout(ge, 0));
    bd_node *or = TNODE(g, "Or", 1, tout(le, 0), tout(ge, 0));
    bd_node *xor = TNODE(g, "Xor", 1, tout(le, 0), tout(ge, 0));
    tinfer(g, true);
    TASSERT_INTS(tout(mod, 0), 1, 2, -2, -1);
    TASSERT_INTS(tout(fmod, 0), 1, -1, 1, -1);
    TASSERT_INTS(tout(sum, 0), 110, 96, 104, 90);
    TASSERT_INTS(tout(max, 0), 7, 3, 7, -3);
    TASSERT_INTS(tout(min, 0), 1, -7, 1, -7);
    const bool want_le[] = { false, true, false, true }, want_ge[] = { true, false, true, false };
    for (size_t i = 0; i < 4; i++) {
        assert_non_null(tout(xor, 0)->data);
        assert_int_equal(bool_at(tout(le, 0), i), want_le[i]);
        assert_int_equal(bool_at(tout(ge, 0), i), want_ge[i]);
        assert_int_equal(bool_at(tout(and, 0), i), want_le[i] && want_ge[i]);
        assert_int_equal(bool_at(tout(or, 0), i), want_le[i] || want_ge[i]);
        assert_int_equal(bool_at(tout(xor, 0), i), want_le[i] != want_ge[i]);
    }
    bd_graph_destroy(g);

    g = tgraph();                                       /* INT64_MIN % -1 is 0, not a trap */
    mod = TNODE(g, "Mod", 1, TINTS(g, "m", INT64_MIN), TINTS(g, "n", -1));
    tinfer(g, true);
    TASSERT_INTS(tout(mod, 0), 0);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Mod", 1, TINTS(g, "m", 5), TINTS(g, "z", 0));
    tinfer_fails(g, false, BD_EMODEL, "Mod", "divides by zero", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Sum", 1, TINTS(g, "m", INT64_MAX), TINTS(g, "o", 1));
    tinfer_fails(g, false, BD_EMODEL, "Sum", "overflows", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                       /* Mean (floating point) is not folded */
    float f = 2.f;
    bd_value *fc = tl_const(g, "f", BD_DT_FLOAT, 0, NULL, &f);
    bd_node *mean = TNODE(g, "Mean", 1, fc, fc);
    tinfer(g, true);
    assert_null(tout(mean, 0)->data);
    bd_graph_destroy(g);
}

static void test_braid_swish_and_channel_shuffle(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 8, 5, 5), "batch");
    bd_node *sw = tnode_d(g, "braid", "Swish", &x, 1, 1);
    bd_value *y = tout(sw, 0);
    bd_node *cs = tnode_d(g, "braid", "ChannelShuffle", &y, 1, 1);
    tattr_int(g, cs, "axis", 1);
    tattr_int(g, cs, "group", 4);
    tinfer(g, false);
    tassert_shape(tout(cs, 0), S(-1, 8, 5, 5));
    assert_string_equal(tout(cs, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 6, 5, 5), NULL);
    cs = tnode_d(g, "braid", "ChannelShuffle", &x, 1, 1);
    tattr_int(g, cs, "group", 4);
    tinfer_fails(g, false, BD_EMODEL, "dim 1 of size 6 is not divisible by group 4", NULL);
    bd_graph_destroy(g);

    /* of several parts: side by side along the axis; parts of two shapes are refused */
    g = tgraph();
    bd_value *parts[2] = { tinput(g, "a", BD_DT_FLOAT, S(1, 3, 4, 4), NULL),
                           tinput(g, "b", BD_DT_FLOAT, S(1, 3, 4, 4), NULL) };
    cs = tnode_d(g, "braid", "ChannelShuffle", parts, 2, 1);
    tattr_int(g, cs, "axis", 1);
    tattr_int(g, cs, "group", 2);
    tinfer(g, false);
    tassert_shape(tout(cs, 0), S(1, 6, 4, 4));
    bd_graph_destroy(g);

    g = tgraph();
    parts[0] = tinput(g, "a", BD_DT_FLOAT, S(1, 3, 4, 4), NULL);
    parts[1] = tinput(g, "b", BD_DT_FLOAT, S(1, 3, 4, 5), NULL);
    cs = tnode_d(g, "braid", "ChannelShuffle", parts, 2, 1);
    tattr_int(g, cs, "axis", 1);
    tattr_int(g, cs, "group", 2);
    tinfer_fails(g, false, BD_EMODEL, "part 'b' differs from 'a' in shape or type", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_ops_keep_shape_dtype_and_symbol),
        cmocka_unit_test(test_isinf_isnan_are_bool),
        cmocka_unit_test(test_castlike_takes_the_second_inputs_dtype),
        cmocka_unit_test(test_mod_and_bitshift_broadcast),
        cmocka_unit_test(test_mod_and_bitshift_malformed),
        cmocka_unit_test(test_compare_or_equal_and_logical_ops),
        cmocka_unit_test(test_sum_and_mean_broadcast_variadic),
        cmocka_unit_test(test_integer_shape_arithmetic_folds),
        cmocka_unit_test(test_braid_swish_and_channel_shuffle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
