/* The driver: require_static, ops without a rule, arity checks, fused post-op inputs, and
 * repeatable inference. */
#include "tests/partitioner/shape/shape_test.h"

#include <string.h>

static void test_unknown_op_is_unsupported_when_static_required(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    bd_node *n = TNODE(g, "GatherTree", 1, x);
    char want[96];
    snprintf(want, sizeof want, "node '%s' (GatherTree)", n->name);
    tinfer_fails(g, true, BD_EUNSUPPORTED, want, "no shape rule", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    tnode_d(g, "com.microsoft", "Relu", &x, 1, 1);     /* known name, foreign domain */
    tinfer_fails(g, true, BD_EUNSUPPORTED, "com.microsoft.Relu", NULL);
    bd_graph_destroy(g);
}

static void test_unknown_op_leaves_rank_unknown_and_inference_continues(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    bd_node *odd = TNODE(g, "GatherTree", 1, x);
    bd_node *relu = TNODE(g, "Relu", 1, tout(odd, 0));
    bd_node *shape = TNODE(g, "Shape", 1, tout(relu, 0));
    bd_node *other = TNODE(g, "Relu", 1, x);
    tinfer(g, false);
    assert_int_equal(tout(odd, 0)->shape.rank, -1);
    assert_int_equal(tout(relu, 0)->shape.rank, -1);
    tassert_shape(tout(shape, 0), S(-1));
    tassert_shape(tout(other, 0), S(2, 3));
    bd_graph_destroy(g);
}

static void test_dynamic_output_is_unsupported_when_static_required(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3), "batch");
    bd_node *n = TNODE(g, "Relu", 1, x);
    char want[96];
    snprintf(want, sizeof want, "output '%s' has shape [batch,3], not static", tout(n, 0)->name);
    tinfer_fails(g, true, BD_EUNSUPPORTED, want, NULL);
    bd_graph_destroy(g);
}

static void test_wrong_arity_is_a_model_error(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    TNODE(g, "Relu", 1, x, x);
    tinfer_fails(g, false, BD_EMODEL, "expected 1 input, got 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    TNODE(g, "MatMul", 1, x, NULL);
    tinfer_fails(g, false, BD_EMODEL, "required input 1 is missing", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    TNODE(g, "Add", 2, x, x);
    tinfer_fails(g, false, BD_EMODEL, "expected 1 output, got 2", NULL);
    bd_graph_destroy(g);
}

static void test_fused_post_op_input_is_not_a_bias(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 8, 8), NULL);
    bd_value *res = tinput(g, "res", BD_DT_FLOAT, S(1, 16, 6, 6), NULL);
    bd_node *n = TNODE(g, "Conv", 1, x, tweight(g, "w", S(16, 3, 3, 3)));
    bd_error err = { 0 };
    int at = bd_node_append_input(g, n, res, &err);
    assert_int_equal(at, 2);
    n->post[0] = (bd_postop){ .kind = BD_POST_SUM, .scale = 1.f, .input = at };
    n->n_post = 1;
    n->composite = "Conv+Add";
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 16, 6, 6));
    bd_graph_destroy(g);

    /* A residual of the wrong shape cannot be summed into the output. */
    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 8, 8), NULL);
    res = tinput(g, "res", BD_DT_FLOAT, S(1, 16, 8, 8), NULL);
    n = TNODE(g, "Conv", 1, x, tweight(g, "w", S(16, 3, 3, 3)));
    at = bd_node_append_input(g, n, res, &err);
    n->post[0] = (bd_postop){ .kind = BD_POST_SUM, .scale = 1.f, .input = at };
    n->n_post = 1;
    tinfer_fails(g, false, BD_EMODEL, "post-op 0 operand 'res' [1,16,8,8] does not fit output "
                 "[1,16,6,6]", NULL);
    bd_graph_destroy(g);
}

static void test_inference_is_repeatable(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *shape = TNODE(g, "Shape", 1, x);
    bd_node *r = TNODE(g, "Reshape", 1, x, tout(shape, 0));
    tinfer(g, true);
    tinfer(g, true);
    TASSERT_INTS(tout(shape, 0), 2, 3, 4);
    tassert_shape(tout(r, 0), S(2, 3, 4));
    /* The input becomes dynamic: the old fold must not survive. */
    x->shape = S(-1, 3, 4);
    tinfer(g, false);
    assert_null(tout(shape, 0)->data);
    tassert_shape(tout(r, 0), S(-1, -1, -1));
    bd_graph_destroy(g);
}

static void test_has_rule(void **state)
{
    assert_true(bd_shape_has_rule("", "Conv"));
    assert_true(bd_shape_has_rule("ai.onnx", "Reshape"));
    assert_true(bd_shape_has_rule("braid", "Gelu"));
    assert_false(bd_shape_has_rule("braid", "Conv"));
    assert_false(bd_shape_has_rule("", "GatherTree"));
    assert_false(bd_shape_has_rule(NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_op_is_unsupported_when_static_required),
        cmocka_unit_test(test_unknown_op_leaves_rank_unknown_and_inference_continues),
        cmocka_unit_test(test_dynamic_output_is_unsupported_when_static_required),
        cmocka_unit_test(test_wrong_arity_is_a_model_error),
        cmocka_unit_test(test_fused_post_op_input_is_not_a_bias),
        cmocka_unit_test(test_inference_is_repeatable),
        cmocka_unit_test(test_has_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
