/* Constant folding of shape arithmetic: Shape, Gather, Slice, Unsqueeze, Concat, integer
 * Add/Sub/Mul/Div, Cast, Constant; the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain
 * of dynamic-axis exports; re-inference on a clone with other input shapes. */
#include "tests/partitioner/shape/shape_test.h"

#include <string.h>

static void test_shape_of_static_input_is_folded(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *all = TNODE(g, "Shape", 1, x);
    bd_node *tail = TNODE(g, "Shape", 1, x);
    tattr_int(g, tail, "start", -2);                   /* opset 15 */
    tinfer(g, true);
    tassert_shape(tout(all, 0), S(3));
    TASSERT_INTS(tout(all, 0), 2, 3, 4);
    TASSERT_INTS(tout(tail, 0), 3, 4);
    bd_graph_destroy(g);
}

static void test_shape_of_dynamic_input_is_not_folded(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4), "batch");
    bd_node *all = TNODE(g, "Shape", 1, x);
    bd_node *tail = TNODE(g, "Shape", 1, x);
    tattr_int(g, tail, "start", 1);
    tinfer(g, false);
    tassert_shape(tout(all, 0), S(3));
    assert_int_equal(tout(all, 0)->dtype, BD_DT_INT64);
    assert_null(tout(all, 0)->data);
    TASSERT_INTS(tout(tail, 0), 3, 4);                 /* only static dims are asked for */
    bd_graph_destroy(g);
}

/* x.view(x.size(0), -1) as torch.onnx exports it with a dynamic batch axis. */
static bd_graph *view_chain(bd_node **reshape, bd_node **concat)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4), "batch");
    bd_node *shape = TNODE(g, "Shape", 1, x);
    bd_node *gather = TNODE(g, "Gather", 1, tout(shape, 0), tint_scalar(g, "zero", 0));
    bd_node *unsq = TNODE(g, "Unsqueeze", 1, tout(gather, 0), TINTS(g, "axes", 0));
    *concat = TNODE(g, "Concat", 1, tout(unsq, 0), TINTS(g, "minus_one", -1));
    tattr_int(g, *concat, "axis", 0);
    *reshape = TNODE(g, "Reshape", 1, x, tout(*concat, 0));
    bd_error err = { 0 };
    assert_int_equal(bd_graph_mark_output(g, tout(*reshape, 0), &err), 0);
    return g;
}

/* The clone's copy of node N (clones keep the node order). */
static bd_node *same_node(bd_graph *clone, const bd_node *n)
{
    return bd_graph_node(clone, (size_t)n->index);
}

static void test_shape_gather_concat_reshape_chain_folds_when_static(void **state)
{
    bd_node *reshape, *concat;
    bd_graph *g = view_chain(&reshape, &concat);
    tinfer(g, false);
    tassert_shape(tout(reshape, 0), S(-1, -1));       /* rank known, dims at run time */
    assert_null(tout(concat, 0)->data);
    tinfer_fails(g, true, BD_EUNSUPPORTED, "not static", NULL);

    /* The same graph specialised to a concrete batch resolves completely. */
    bd_graph *c = bd_graph_clone(g);
    assert_non_null(c);
    bd_graph_input(c, 0)->shape = S(2, 3, 4);
    tinfer(c, true);
    TASSERT_INTS(tout(same_node(c, concat), 0), 2, -1);
    tassert_shape(tout(same_node(c, reshape), 0), S(2, 12));

    /* Re-inferring a clone of the folded graph with another batch forgets the stale fold. */
    bd_graph *c2 = bd_graph_clone(c);
    assert_non_null(c2);
    bd_graph_input(c2, 0)->shape = S(5, 3, 4);
    tinfer(c2, true);
    TASSERT_INTS(tout(same_node(c2, concat), 0), 5, -1);
    tassert_shape(tout(same_node(c2, reshape), 0), S(5, 12));
    TASSERT_INTS(tout(same_node(c, concat), 0), 2, -1);   /* the first clone is untouched */
    bd_graph_destroy(c2);
    bd_graph_destroy(c);
    bd_graph_destroy(g);
}

static void test_integer_arithmetic_folds_with_broadcast(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 12, 64), NULL);
    bd_node *shape = TNODE(g, "Shape", 1, x);
    bd_node *mul = TNODE(g, "Mul", 1, tout(shape, 0), tint_scalar(g, "two", 2));
    bd_node *div = TNODE(g, "Div", 1, tout(mul, 0), TINTS(g, "d", 4, 3, -5));
    bd_node *sub = TNODE(g, "Sub", 1, tout(div, 0), tint_scalar(g, "one", 1));
    bd_node *add = TNODE(g, "Add", 1, tout(sub, 0), tout(sub, 0));
    tinfer(g, true);
    TASSERT_INTS(tout(mul, 0), 4, 24, 128);
    TASSERT_INTS(tout(div, 0), 1, 8, -25);               /* truncating division */
    TASSERT_INTS(tout(add, 0), 0, 14, -52);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Div", 1, TINTS(g, "a", 4), tint_scalar(g, "zero", 0));
    tinfer_fails(g, false, BD_EMODEL, "divides by zero", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Mul", 1, TINTS(g, "a", INT64_MAX), tint_scalar(g, "two", 2));
    tinfer_fails(g, false, BD_EMODEL, "overflows", NULL);
    bd_graph_destroy(g);
}

static void test_gather_and_slice_fold(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4, 5), NULL);
    bd_node *shape = TNODE(g, "Shape", 1, x);
    bd_node *gath = TNODE(g, "Gather", 1, tout(shape, 0), TINTS(g, "idx", -1, 1));
    bd_node *tail = TNODE(g, "Slice", 1, tout(shape, 0), TINTS(g, "st", 1), TINTS(g, "en", INT64_MAX));
    bd_node *rev  = TNODE(g, "Slice", 1, tout(shape, 0), TINTS(g, "st2", -1), TINTS(g, "en2", INT64_MIN),
                          TINTS(g, "ax2", 0), TINTS(g, "step2", -2));
    tinfer(g, true);
    TASSERT_INTS(tout(gath, 0), 5, 3);
    TASSERT_INTS(tout(tail, 0), 3, 4, 5);
    TASSERT_INTS(tout(rev, 0), 5, 3);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    shape = TNODE(g, "Shape", 1, x);
    TNODE(g, "Gather", 1, tout(shape, 0), TINTS(g, "idx", 2));
    tinfer_fails(g, false, BD_EMODEL, "index 2 is out of range for axis 0 of size 2", NULL);
    bd_graph_destroy(g);
}

/* An empty axis selects nothing whatever the step's sign (a negative step once gave 1). */
static void test_slice_of_empty_axis_is_empty(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(0, 3), NULL);
    bd_node *back = TNODE(g, "Slice", 1, x, TINTS(g, "st", -1), TINTS(g, "en", INT64_MIN),
                          TINTS(g, "ax", 0), TINTS(g, "step", -1));
    bd_node *fwd = TNODE(g, "Slice", 1, x, TINTS(g, "st2", 0, 0), TINTS(g, "en2", 5, 2),
                         TINTS(g, "ax2", 0, 1), TINTS(g, "step2", 2, 1));
    tinfer(g, true);
    tassert_shape(tout(back, 0), S(0, 3));
    tassert_shape(tout(fwd, 0), S(0, 2));
    bd_graph_destroy(g);
}

static void test_gather_shape_on_tensors(void **state)
{
    bd_graph *g = tgraph();
    bd_value *ids = tinput(g, "ids", BD_DT_INT64, S(-1, 128), "batch");
    bd_node *emb = TNODE(g, "Gather", 1, tweight(g, "table", S(30522, 768)), ids);
    bd_node *col = TNODE(g, "Gather", 1, tweight(g, "t2", S(4, 5, 6)), TINTS(g, "i", 0, 2));
    tattr_int(g, col, "axis", 1);
    tinfer(g, false);
    tassert_shape(tout(emb, 0), S(-1, 128, 768));
    assert_string_equal(tout(emb, 0)->shape.sym[0], "batch");
    tassert_shape(tout(col, 0), S(4, 2, 6));
    assert_null(tout(col, 0)->data);                    /* FLOAT data is not folded */
    bd_graph_destroy(g);
}

static void test_constant_cast_and_views_fold(void **state)
{
    bd_graph *g = tgraph();
    bd_node *k = tnode(g, "Constant", NULL, 0, 1);
    TATTR_INTS(g, k, "value_ints", 6, 7);
    bd_node *unsq = TNODE(g, "Unsqueeze", 1, tout(k, 0), TINTS(g, "axes", 0));
    bd_node *sq = TNODE(g, "Squeeze", 1, tout(unsq, 0));
    bd_node *cast = TNODE(g, "Cast", 1, tout(sq, 0));
    tattr_int(g, cast, "to", BD_DT_INT64);
    bd_value *w = tweight(g, "w", S(2, 3, 4));
    bd_node *flat = TNODE(g, "Reshape", 1, w, TINTS(g, "shape", 6, -1));
    tinfer(g, true);
    TASSERT_INTS(tout(k, 0), 6, 7);
    tassert_shape(tout(unsq, 0), S(1, 2));
    TASSERT_INTS(tout(unsq, 0), 6, 7);
    tassert_shape(tout(sq, 0), S(2));
    TASSERT_INTS(tout(cast, 0), 6, 7);
    tassert_shape(tout(flat, 0), S(6, 4));
    assert_ptr_equal(tout(flat, 0)->data, w->data);      /* a view: no copy of the weight */
    assert_int_equal(tout(flat, 0)->nbytes, w->nbytes);
    bd_graph_destroy(g);
}

/* F.pad's pads chain: the [begin, end] pairs reversed (Slice step -1) then transposed and
 * flattened into ONNX's [all begins, all ends]; the Transpose of the constant pairs folds. */
static void test_transpose_of_int_constant_folds(void **state)
{
    bd_graph *g = tgraph();
    bd_node *pairs = TNODE(g, "Reshape", 1, TINTS(g, "flat", 0, 0, 0, 3, 0, 1, 0, 0),
                           TINTS(g, "shape", -1, 2));
    bd_node *rev = TNODE(g, "Slice", 1, tout(pairs, 0), TINTS(g, "st", -1), TINTS(g, "en", INT64_MIN),
                         TINTS(g, "ax", 0), TINTS(g, "step", -1));
    bd_node *tr = TNODE(g, "Transpose", 1, tout(rev, 0));
    TATTR_INTS(g, tr, "perm", 1, 0);
    bd_node *pads = TNODE(g, "Reshape", 1, tout(tr, 0), TINTS(g, "shape2", -1));
    bd_node *dflt = TNODE(g, "Transpose", 1, tout(rev, 0));      /* no perm: dims reversed */
    tinfer(g, true);
    tassert_shape(tout(tr, 0), S(2, 4));
    TASSERT_INTS(tout(tr, 0), 0, 0, 0, 0, 0, 1, 3, 0);
    TASSERT_INTS(tout(pads, 0), 0, 0, 0, 0, 0, 1, 3, 0);
    TASSERT_INTS(tout(dflt, 0), 0, 0, 0, 0, 0, 1, 3, 0);
    bd_graph_destroy(g);
}

/* torch's expand(b, -1, -1) export: Where(Equal(shape, -1), ones, shape) feeding Expand. */
static void test_expand_where_equal_chain_folds(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 4), NULL);
    bd_value *want = TINTS(g, "want", 3, -1);
    bd_node *cos = TNODE(g, "ConstantOfShape", 1, TINTS(g, "len", 2));
    bd_value *one = tint_scalar(g, "one", 1);
    bd_attr a = { .name = "value", .type = BD_ATTR_TENSOR, .tensor = one };
    bd_error err = { 0 };
    assert_int_equal(bd_node_add_attr(g, cos, &a, &err), 0);
    bd_node *neg = TNODE(g, "Mul", 1, tout(cos, 0), tint_scalar(g, "m1", -1));
    bd_node *eq = TNODE(g, "Equal", 1, want, tout(neg, 0));
    bd_node *wh = TNODE(g, "Where", 1, tout(eq, 0), tout(cos, 0), want);
    bd_node *ex = TNODE(g, "Expand", 1, x, tout(wh, 0));
    tinfer(g, true);
    TASSERT_INTS(tout(cos, 0), 1, 1);
    assert_int_equal(tout(eq, 0)->dtype, BD_DT_BOOL);
    assert_memory_equal(tout(eq, 0)->data, ((unsigned char[]){ 0, 1 }), 2);
    TASSERT_INTS(tout(wh, 0), 3, 1);
    tassert_shape(tout(ex, 0), S(3, 4));
    bd_graph_destroy(g);
}

static void test_range_folds_and_sizes(void **state)
{
    bd_graph *g = tgraph();
    bd_node *up = TNODE(g, "Range", 1, tint_scalar(g, "a", 0), tint_scalar(g, "b", 7),
                        tint_scalar(g, "c", 3));
    bd_node *down = TNODE(g, "Range", 1, tint_scalar(g, "d", 5), tint_scalar(g, "e", 1),
                          tint_scalar(g, "f", -2));
    bd_node *empty = TNODE(g, "Range", 1, tint_scalar(g, "h", 5), tint_scalar(g, "i", 1),
                           tint_scalar(g, "j", 1));
    bd_node *huge = TNODE(g, "Range", 1, tint_scalar(g, "k", INT64_MIN), tint_scalar(g, "l", INT64_MAX),
                          tint_scalar(g, "m", INT64_MAX));
    tinfer(g, true);
    TASSERT_INTS(tout(up, 0), 0, 3, 6);
    TASSERT_INTS(tout(down, 0), 5, 3);
    tassert_shape(tout(empty, 0), S(0));
    tassert_shape(tout(huge, 0), S(3));
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "Range", 1, tint_scalar(g, "a", 0), tint_scalar(g, "b", 7), tint_scalar(g, "c", 0));
    tinfer_fails(g, false, BD_EMODEL, "delta is 0", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_of_static_input_is_folded),
        cmocka_unit_test(test_shape_of_dynamic_input_is_not_folded),
        cmocka_unit_test(test_shape_gather_concat_reshape_chain_folds_when_static),
        cmocka_unit_test(test_integer_arithmetic_folds_with_broadcast),
        cmocka_unit_test(test_gather_and_slice_fold),
        cmocka_unit_test(test_slice_of_empty_axis_is_empty),
        cmocka_unit_test(test_gather_shape_on_tensors),
        cmocka_unit_test(test_constant_cast_and_views_fold),
        cmocka_unit_test(test_expand_where_equal_chain_folds),
        cmocka_unit_test(test_range_folds_and_sizes),
        cmocka_unit_test(test_transpose_of_int_constant_folds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
