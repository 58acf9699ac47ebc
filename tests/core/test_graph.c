/* The IR: building, lookup, cloning, validation errors and topological order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/ir/graph.h"

static bd_value *val(bd_graph *g, const char *name)
{
    bd_shape s = bd_shape_make(2, (int64_t[]){ 2, 3 });
    bd_value *v = NULL;
    assert_int_equal(bd_graph_add_value(g, name, BD_DT_FLOAT, &s, &v, NULL), 0);
    return v;
}

static bd_node *node(bd_graph *g, const char *name, const char *op, bd_value *in, bd_value *out)
{
    bd_node *n = NULL;
    assert_int_equal(bd_graph_add_node(g, name, op, "", &in, in ? 1 : 0, &out, 1, &n, NULL), 0);
    return n;
}

/* x -> A -> a -> B -> b (output) */
static bd_graph *chain(void)
{
    bd_graph *g = bd_graph_create("chain");
    bd_value *x = val(g, "x"), *a = val(g, "a"), *b = val(g, "b");
    assert_int_equal(bd_graph_mark_input(g, x, NULL), 0);
    assert_int_equal(bd_graph_mark_output(g, b, NULL), 0);
    node(g, "A", "Relu", x, a);
    node(g, "B", "Relu", a, b);
    return g;
}

static void test_build_and_find(void **state)
{
    bd_graph *g = chain();
    assert_int_equal(bd_graph_num_nodes(g), 2);
    assert_int_equal(bd_graph_num_values(g), 3);
    bd_value *a = bd_graph_find_value(g, "a");
    assert_non_null(a);
    assert_string_equal(a->producer->name, "A");
    assert_null(bd_graph_find_value(g, "nope"));
    assert_int_equal(bd_graph_use_count(g, a), 1);
    assert_int_equal(bd_graph_use_count(g, bd_graph_find_value(g, "b")), 1);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_graph_destroy(g);
}

static void test_many_values_index_grows(void **state)
{
    bd_graph *g = bd_graph_create("big");
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        val(g, name);
    }
    for (int i = 0; i < 5000; i += 7) {
        snprintf(name, sizeof name, "v%d", i);
        bd_value *v = bd_graph_find_value(g, name);
        assert_non_null(v);
        assert_int_equal(v->index, i);
    }
    bd_graph_destroy(g);
}

static void test_rejects_duplicate_value(void **state)
{
    bd_graph *g = bd_graph_create("dup");
    val(g, "x");
    bd_error err = { 0 };
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, NULL, NULL, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "duplicate value name 'x'"));
    bd_graph_destroy(g);
}

static void test_rejects_two_producers(void **state)
{
    bd_graph *g = chain();
    bd_error err = { 0 };
    bd_value *x = bd_graph_find_value(g, "x"), *a = bd_graph_find_value(g, "a");
    assert_int_equal(bd_graph_add_node(g, "C", "Relu", "", &x, 1, &a, 1, NULL, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "produced twice"));
    bd_graph_destroy(g);
}

static void test_validate_rejects_dangling_input(void **state)
{
    bd_graph *g = chain();
    bd_value *ghost = val(g, "ghost"), *c = val(g, "c");
    node(g, "C", "Relu", ghost, c);
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "node 'C' (Relu) reads 'ghost'"));
    bd_graph_destroy(g);
}

static void test_validate_rejects_missing_output(void **state)
{
    bd_graph *g = chain();
    assert_int_equal(bd_graph_mark_output(g, val(g, "orphan"), NULL), 0);
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "output 'orphan' is not produced"));
    bd_graph_destroy(g);
}

static void test_validate_rejects_no_outputs(void **state)
{
    bd_graph *g = bd_graph_create("empty");
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "declares no outputs"));
    bd_graph_destroy(g);
}

static void test_validate_rejects_duplicate_node_names(void **state)
{
    bd_graph *g = chain();
    bd_value *c = val(g, "c");
    node(g, "A", "Relu", bd_graph_find_value(g, "b"), c);
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "two nodes are named 'A'"));
    bd_graph_destroy(g);
}

static void test_validate_rejects_cycle(void **state)
{
    bd_graph *g = bd_graph_create("cycle");
    bd_value *x = val(g, "x"), *a = val(g, "a"), *b = val(g, "b");
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, b, NULL);
    bd_value *ab[] = { x, b }, *ba[] = { a };
    assert_int_equal(bd_graph_add_node(g, "A", "Add", "", ab, 2, &a, 1, NULL, NULL), 0);
    assert_int_equal(bd_graph_add_node(g, "B", "Relu", "", ba, 1, &b, 1, NULL, NULL), 0);
    bd_error err = { 0 };
    assert_int_equal(bd_graph_validate(g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "has a cycle through node"));
    bd_graph_destroy(g);
}

static void test_toposort_reorders(void **state)
{
    bd_graph *g = bd_graph_create("rev");
    bd_value *x = val(g, "x"), *a = val(g, "a"), *b = val(g, "b");
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, b, NULL);
    node(g, "B", "Relu", a, b);     /* consumer first */
    node(g, "A", "Relu", x, a);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_string_equal(bd_graph_node(g, 0)->name, "A");
    assert_string_equal(bd_graph_node(g, 1)->name, "B");
    assert_int_equal(bd_graph_node(g, 1)->index, 1);
    bd_graph_destroy(g);
}

static void test_clone_is_independent(void **state)
{
    bd_graph *g = chain();
    bd_graph *c = bd_graph_clone(g);
    assert_non_null(c);
    bd_value *ca = bd_graph_find_value(c, "a");
    assert_ptr_not_equal(ca, bd_graph_find_value(g, "a"));
    assert_string_equal(ca->producer->name, "A");
    assert_ptr_equal(ca->producer, bd_graph_node(c, 0));
    ca->shape.dims[0] = 99;
    assert_int_equal(bd_graph_find_value(g, "a")->shape.dims[0], 2);
    assert_int_equal(bd_graph_num_inputs(c), 1);
    assert_ptr_equal(bd_graph_input(c, 0), bd_graph_find_value(c, "x"));
    assert_int_equal(bd_graph_validate(c, NULL), 0);
    bd_graph_destroy(c);
    bd_graph_destroy(g);
}

static void test_rewrite_helpers(void **state)
{
    bd_graph *g = chain();
    bd_node *a = bd_graph_node(g, 0), *b = bd_graph_node(g, 1);
    bd_value *bv = bd_graph_find_value(g, "b");
    /* fuse B into A: A now produces b */
    bd_graph_remove_node(g, b);
    bd_node_set_output(a, 0, bv);
    assert_ptr_equal(bv->producer, a);
    assert_null(bd_graph_find_value(g, "a")->producer);
    assert_int_equal(bd_graph_num_nodes(g), 1);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    int idx = bd_node_append_input(g, a, bd_graph_find_value(g, "x"), NULL);
    assert_int_equal(idx, 1);
    assert_int_equal(a->n_inputs, 2);
    bd_graph_destroy(g);
}

static void test_attributes(void **state)
{
    bd_graph *g = chain();
    bd_node *a = bd_graph_node(g, 0);
    static const int64_t pads[] = { 1, 1, 1, 1 };
    assert_int_equal(bd_node_add_attr(g, a, &(bd_attr){ .name = "group", .type = BD_ATTR_INT, .i = 4 }, NULL), 0);
    assert_int_equal(bd_node_add_attr(g, a, &(bd_attr){ .name = "pads", .type = BD_ATTR_INTS, .ints = pads, .n = 4 }, NULL), 0);
    assert_int_equal(bd_node_add_attr(g, a, &(bd_attr){ .name = "alpha", .type = BD_ATTR_FLOAT, .f = 0.5f }, NULL), 0);
    assert_int_equal(bd_node_attr_int(a, "group", 1), 4);
    assert_int_equal(bd_node_attr_int(a, "missing", 7), 7);
    assert_int_equal(bd_node_attr_int(a, "alpha", 7), 7);   /* wrong type -> default */
    assert_true(bd_node_attr_float(a, "alpha", 0) == 0.5f);
    const int64_t *p;
    assert_int_equal(bd_node_attr_ints(a, "pads", &p), 4);
    assert_int_equal(p[3], 1);
    assert_int_equal(bd_node_attr_ints(a, "strides", &p), 0);
    assert_null(p);
    bd_graph_destroy(g);
}

/* Attributes are appended into a doubling array: 100,000 of them on one node take a few MB.
 * (Copying the array on every add, as braid once did, needs ~400 GB for this node: a
 * 6,000-attribute ONNX node took 1.7 GB.) */
static void test_many_attributes_build_in_linear_space(void **state)
{
    (void)state;
    bd_graph *g = chain();
    bd_node *a = bd_graph_node(g, 0);
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "a%d", i);
        bd_attr at = { .name = bd_graph_strdup(g, name, (size_t)-1), .type = BD_ATTR_INT, .i = i };
        assert_int_equal(bd_node_add_attr(g, a, &at, NULL), 0);
    }
    assert_int_equal(a->n_attrs, N);
    assert_true(a->cap_attrs >= N && a->cap_attrs <= 2 * N);
    assert_int_equal(bd_node_attr_int(a, "a0", -1), 0);
    assert_int_equal(bd_node_attr_int(a, "a99999", -1), 99999);
    bd_graph_destroy(g);
}

/* A clone shares its parent's attribute arrays: appending to the clone's node must copy,
 * never write into the parent's array. */
static void test_clone_attribute_append_leaves_parent(void **state)
{
    (void)state;
    bd_graph *g = chain();
    bd_node *a = bd_graph_node(g, 0);
    assert_int_equal(bd_node_add_attr(g, a, &(bd_attr){ .name = "k", .type = BD_ATTR_INT, .i = 1 }, NULL), 0);
    bd_graph *c = bd_graph_clone(g);
    assert_non_null(c);
    bd_node *ca = bd_graph_node(c, 0);
    assert_int_equal(bd_node_add_attr(c, ca, &(bd_attr){ .name = "m", .type = BD_ATTR_INT, .i = 2 }, NULL), 0);
    assert_ptr_not_equal(ca->attrs, a->attrs);
    assert_int_equal(a->n_attrs, 1);
    assert_int_equal(bd_node_attr_int(ca, "m", 0), 2);
    assert_int_equal(bd_node_attr_int(ca, "k", 0), 1);
    assert_int_equal(bd_node_add_attr(g, a, &(bd_attr){ .name = "p", .type = BD_ATTR_INT, .i = 3 }, NULL), 0);
    assert_int_equal(bd_node_attr_int(ca, "p", 0), 0);       /* the parent's add is not seen */
    bd_graph_destroy(c);
    bd_graph_destroy(g);
}

/* A 50,000-node chain listed consumer first: Kahn's algorithm with consumer lists sorts it
 * in one pass (the former repeated sweeps needed ~n^3 steps here and never finished). */
static void test_toposort_long_reversed_chain(void **state)
{
    (void)state;
    enum { N = 50000 };
    bd_graph *g = bd_graph_create("long");
    static bd_value *v[N + 1];
    for (int i = 0; i <= N; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%d", i);
        v[i] = val(g, name);
    }
    bd_graph_mark_input(g, v[0], NULL);
    bd_graph_mark_output(g, v[N], NULL);
    for (int i = N - 1; i >= 0; i--) {
        char name[32];
        snprintf(name, sizeof name, "n%d", i);
        node(g, name, "Relu", v[i], v[i + 1]);
    }
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "n%d", i);
        assert_string_equal(bd_graph_node(g, (size_t)i)->name, name);
        assert_int_equal(bd_graph_node(g, (size_t)i)->index, i);
    }
    /* a sorted graph keeps its order (ties broken by position) */
    bd_value *y = val(g, "side");
    node(g, "side_node", "Relu", v[0], y);
    bd_graph_mark_output(g, y, NULL);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_string_equal(bd_graph_node(g, 0)->name, "n0");
    assert_string_equal(bd_graph_node(g, 1)->name, "n1");
    assert_string_equal(bd_graph_node(g, N)->name, "side_node");
    bd_graph_destroy(g);
}

static void test_shapes_and_dtypes(void **state)
{
    char buf[64];
    bd_shape s = bd_shape_make(3, (int64_t[]){ -1, 3, 4 });
    s.sym[0] = "batch";
    assert_string_equal(bd_shape_str(&s, buf, sizeof buf), "[batch,3,4]");
    assert_int_equal(bd_shape_numel(&s), -1);
    assert_false(bd_shape_is_static(&s));
    s.dims[0] = 2;
    assert_int_equal(bd_shape_numel(&s), 24);
    bd_shape huge = bd_shape_make(3, (int64_t[]){ INT64_MAX / 2, 4, 1 });
    assert_int_equal(bd_shape_numel(&huge), -1);     /* overflow is "unknown", not UB */
    assert_false(bd_shape_is_static(&huge));
    bd_shape scalar = { .rank = 0 };
    assert_int_equal(bd_shape_numel(&scalar), 1);
    assert_int_equal(bd_dtype_size(BD_DT_FLOAT16), 2);
    assert_string_equal(bd_dtype_name(BD_DT_FLOAT), "FP32");
    assert_int_equal(bd_dtype_from_name("INT64"), BD_DT_INT64);
    DLDataType dl;
    assert_true(bd_dtype_to_dl(BD_DT_UINT8, &dl));
    assert_int_equal(bd_dtype_from_dl(dl), BD_DT_UINT8);
    assert_false(bd_dtype_to_dl(BD_DT_STRING, &dl));
}

static void test_error_prefix(void **state)
{
    bd_error err = { 0 };
    bd_error_set(&err, BD_EMODEL, "node 'x' is bad");
    bd_error_prefix(&err, "model '%s': ", "m");
    assert_string_equal(err.msg, "model 'm': node 'x' is bad");
    assert_int_equal(err.code, BD_EMODEL);
    bd_error_clear(&err);
    assert_int_equal(bd_error_prefix(&err, "ignored"), 0);
    assert_string_equal(err.msg, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_find),
        cmocka_unit_test(test_many_values_index_grows),
        cmocka_unit_test(test_rejects_duplicate_value),
        cmocka_unit_test(test_rejects_two_producers),
        cmocka_unit_test(test_validate_rejects_dangling_input),
        cmocka_unit_test(test_validate_rejects_missing_output),
        cmocka_unit_test(test_validate_rejects_no_outputs),
        cmocka_unit_test(test_validate_rejects_duplicate_node_names),
        cmocka_unit_test(test_validate_rejects_cycle),
        cmocka_unit_test(test_toposort_reorders),
        cmocka_unit_test(test_clone_is_independent),
        cmocka_unit_test(test_rewrite_helpers),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_many_attributes_build_in_linear_space),
        cmocka_unit_test(test_clone_attribute_append_leaves_parent),
        cmocka_unit_test(test_toposort_long_reversed_chain),
        cmocka_unit_test(test_shapes_and_dtypes),
        cmocka_unit_test(test_error_prefix),
    };
    return cmocka_run_group_tests_name("graph", tests, NULL, NULL);
}
