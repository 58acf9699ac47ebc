/* Graph rewrites: batch-norm folding, GELU and layer-norm pattern fusion, post-op merging. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "partitioner/passes/partition.h"
#include "partitioner/passes/passes.h"
#include "tests/lib/tl_graph.h"

/* A backend that accepts every node, so the passes' own matching is what is tested. */
static bool accept_all(const bd_graph *g, const bd_node *n, char *why, size_t len) { return true; }
static bool accept_one_postop(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    return n->n_post <= 1;
}
static const bd_backend accept_backend = { .name = "test", .supports = accept_all };
static const bd_backend limited_backend = { .name = "limited", .supports = accept_one_postop };
/* A fast path without a Gelu kernel. */
static bool no_gelu(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    return strcmp(n->op_type, "Gelu") != 0;
}
static const bd_backend no_gelu_backend = { .name = "nogelu", .supports = no_gelu };

static bd_value *tensor(bd_graph *g, const char *name, int rank, const int64_t *dims)
{
    return tl_value(g, name, BD_DT_FLOAT, rank, dims);
}

static bd_value *scalar(bd_graph *g, const char *name, float x)
{
    return tl_const(g, name, BD_DT_FLOAT, 0, NULL, &x);
}

static void test_fold_batchnorm(void **state)
{
    bd_graph *g = bd_graph_create("bn");
    int64_t xd[] = { 1, 1, 3, 3 }, wd[] = { 2, 1, 1, 1 }, cd[] = { 2 }, yd[] = { 1, 2, 3, 3 };
    bd_value *x = tensor(g, "x", 4, xd), *y = tensor(g, "y", 4, yd), *z = tensor(g, "z", 4, yd);
    bd_value *w = tl_const(g, "w", BD_DT_FLOAT, 4, wd, (float[]){ 2, 3 });
    bd_value *sc = tl_const(g, "scale", BD_DT_FLOAT, 1, cd, (float[]){ 1, 2 });
    bd_value *sh = tl_const(g, "shift", BD_DT_FLOAT, 1, cd, (float[]){ 0.5f, -1 });
    bd_value *mu = tl_const(g, "mean", BD_DT_FLOAT, 1, cd, (float[]){ 1, 0 });
    bd_value *va = tl_const(g, "var", BD_DT_FLOAT, 1, cd, (float[]){ 3, 0 });
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, z, NULL);
    tl_op(g, "conv", "Conv", (bd_value *[]){ x, w }, 2, y);
    bd_node *bn = tl_op(g, "bn", "BatchNormalization", (bd_value *[]){ y, sc, sh, mu, va }, 5, z);
    bd_node_add_attr(g, bn, &(bd_attr){ .name = "epsilon", .type = BD_ATTR_FLOAT, .f = 1.0f }, NULL);

    assert_int_equal(bd_pass_fold_batchnorm(g, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 1);
    bd_node *conv = bd_graph_node(g, 0);
    assert_ptr_equal(conv->outputs[0], z);
    assert_int_equal(conv->n_inputs, 3);
    const float *nw = conv->inputs[1]->data, *nb = conv->inputs[2]->data;
    /* channel 0: s = 1/sqrt(3+1) = 0.5; channel 1: s = 2/sqrt(0+1) = 2 */
    assert_float_equal(nw[0], 1.0f, 1e-6);
    assert_float_equal(nw[1], 6.0f, 1e-6);
    assert_float_equal(nb[0], (0 - 1) * 0.5f + 0.5f, 1e-6);
    assert_float_equal(nb[1], -1.0f, 1e-6);
    const float *orig = w->data;
    assert_float_equal(orig[0], 2.0f, 0);   /* the original initializer is untouched */
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_graph_destroy(g);
}

/* x -> Div(√2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5) -> y */
/* Keras's batch norm as a frozen TensorFlow graph leaves it: an NHWC Conv (HWIO filter, bias)
 * then Mul by a [C] constant and Add of a [1,1,1,C] one, folded into weights and bias. Not
 * folded: a Mul whose constant varies along a spatial dim. */
static void test_fold_scale_shift(void **state)
{
    (void)state;
    for (int spatial = 0; spatial < 2; spatial++) {
        bd_graph *g = bd_graph_create("scale_shift");
        int64_t xd[] = { 1, 2, 2, 1 }, wd[] = { 1, 1, 1, 2 }, yd[] = { 1, 2, 2, 2 }, c2[] = { 2 },
                c4[] = { 1, 1, 1, 2 }, sp[] = { 1, 2, 1, 1 };
        bd_value *x = tensor(g, "x", 4, xd), *y = tensor(g, "y", 4, yd), *m = tensor(g, "m", 4, yd),
                 *z = tensor(g, "z", 4, yd);
        bd_value *w = tl_const(g, "w", BD_DT_FLOAT, 4, wd, (float[]){ 2, 3 });
        bd_value *b = tl_const(g, "b", BD_DT_FLOAT, 1, c2, (float[]){ 1, -1 });
        bd_value *sc = spatial ? tl_const(g, "s", BD_DT_FLOAT, 4, sp, (float[]){ 4, 5 })
                               : tl_const(g, "s", BD_DT_FLOAT, 1, c2, (float[]){ 4, 5 });
        bd_value *t = tl_const(g, "t", BD_DT_FLOAT, 4, c4, (float[]){ 0.5f, 2 });
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, z, NULL);
        bd_node *conv = tl_op(g, "conv", "Conv", (bd_value *[]){ x, w, b }, 3, y);
        bd_node_add_attr(g, conv, &(bd_attr){ .name = "data_format", .type = BD_ATTR_STRING, .s = "NHWC" }, NULL);
        bd_node_add_attr(g, conv, &(bd_attr){ .name = "filter_format", .type = BD_ATTR_STRING, .s = "HWIO" }, NULL);
        tl_op(g, "mul", "Mul", (bd_value *[]){ sc, y }, 2, m);
        tl_op(g, "add", "Add", (bd_value *[]){ m, t }, 2, z);
        assert_int_equal(bd_pass_fold_batchnorm(g, NULL), spatial ? 0 : 1);
        if (!spatial) {
            assert_int_equal(bd_graph_num_nodes(g), 1);
            assert_ptr_equal(conv->outputs[0], z);
            const float *nw = conv->inputs[1]->data, *nb = conv->inputs[2]->data;
            assert_float_equal(nw[0], 8.0f, 1e-6);             /* 2 * 4 */
            assert_float_equal(nw[1], 15.0f, 1e-6);            /* 3 * 5 */
            assert_float_equal(nb[0], 1 * 4 + 0.5f, 1e-6);
            assert_float_equal(nb[1], -1 * 5 + 2.0f, 1e-6);
            assert_float_equal(((const float *)w->data)[0], 2.0f, 0);   /* file bytes untouched */
            assert_int_equal(bd_graph_validate(g, NULL), 0);
        } else {
            assert_int_equal(bd_graph_num_nodes(g), 3);
        }
        bd_graph_destroy(g);
    }
}

static void test_gelu_pattern(void **state)
{
    bd_graph *g = bd_graph_create("gelu");
    int64_t d[] = { 2, 8 };
    bd_value *x = tensor(g, "x", 2, d), *a = tensor(g, "a", 2, d), *b = tensor(g, "b", 2, d),
             *c = tensor(g, "c", 2, d), *e = tensor(g, "e", 2, d), *y = tensor(g, "y", 2, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "div", "Div", (bd_value *[]){ x, scalar(g, "sqrt2", 1.4142135f) }, 2, a);
    tl_op(g, "erf", "Erf", (bd_value *[]){ a }, 1, b);
    tl_op(g, "add", "Add", (bd_value *[]){ b, scalar(g, "one", 1) }, 2, c);
    tl_op(g, "mul", "Mul", (bd_value *[]){ x, c }, 2, e);
    tl_op(g, "half", "Mul", (bd_value *[]){ e, scalar(g, "h", 0.5f) }, 2, y);
    assert_int_equal(bd_pass_gelu(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 1);
    bd_node *n = bd_graph_node(g, 0);
    assert_string_equal(n->op_type, "Gelu");
    assert_string_equal(n->domain, "braid");
    assert_ptr_equal(n->inputs[0], x);
    assert_ptr_equal(n->outputs[0], y);
    bd_graph_destroy(g);
}

/* SiLU either way round: x * Sigmoid(x) and Sigmoid(x) * x; not x * Sigmoid(z). */
static void test_swish_pattern(void **state)
{
    (void)state;
    for (int order = 0; order < 3; order++) {
        bd_graph *g = bd_graph_create("swish");
        int64_t d[] = { 2, 8 };
        bd_value *x = tensor(g, "x", 2, d), *z = tensor(g, "z", 2, d), *s = tensor(g, "s", 2, d),
                 *y = tensor(g, "y", 2, d);
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_input(g, z, NULL);
        bd_graph_mark_output(g, y, NULL);
        tl_op(g, "sig", "Sigmoid", (bd_value *[]){ order == 2 ? z : x }, 1, s);
        tl_op(g, "mul", "Mul", order == 1 ? (bd_value *[]){ s, x } : (bd_value *[]){ x, s }, 2, y);
        assert_int_equal(bd_pass_swish(g, NULL, NULL), order == 2 ? 0 : 1);
        if (order < 2) {
            assert_int_equal(bd_graph_num_nodes(g), 1);
            bd_node *n = bd_graph_node(g, 0);
            assert_string_equal(n->op_type, "Swish");
            assert_string_equal(n->domain, "braid");
            assert_ptr_equal(n->inputs[0], x);
            assert_ptr_equal(n->outputs[0], y);
        }
        bd_graph_destroy(g);
    }
}

/* x [1,6,2,2] -> Reshape [1,2,3,2,2] -> Transpose(0,2,1,3,4) -> Reshape [1,6,2,2] is a channel
 * shuffle of 2 groups on axis 1; a transpose of other axes is not. */
static void test_channel_shuffle_pattern(void **state)
{
    (void)state;
    for (int wrong_perm = 0; wrong_perm < 2; wrong_perm++) {
        bd_graph *g = bd_graph_create("shuffle");
        int64_t xd[] = { 1, 6, 2, 2 }, rd[] = { 1, 2, 3, 2, 2 }, td[] = { 1, 3, 2, 2, 2 };
        bd_value *x = tensor(g, "x", 4, xd), *r = tensor(g, "r", 5, rd), *t = tensor(g, "t", 5, td),
                 *y = tensor(g, "y", 4, xd);
        if (wrong_perm)
            t->shape.dims[1] = 2, t->shape.dims[2] = 3;
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, y, NULL);
        tl_op(g, "r1", "Reshape", (bd_value *[]){ x }, 1, r);
        bd_node *tr = tl_op(g, "tr", "Transpose", (bd_value *[]){ r }, 1, t);
        tl_attr_ints(g, tr, "perm", 5, wrong_perm ? (int64_t[]){ 0, 1, 2, 4, 3 } : (int64_t[]){ 0, 2, 1, 3, 4 });
        tl_op(g, "r2", "Reshape", (bd_value *[]){ t }, 1, y);
        assert_int_equal(bd_pass_channel_shuffle(g, NULL, NULL), wrong_perm ? 0 : 1);
        if (!wrong_perm) {
            assert_int_equal(bd_graph_num_nodes(g), 1);
            bd_node *n = bd_graph_node(g, 0);
            assert_string_equal(n->op_type, "ChannelShuffle");
            assert_int_equal(bd_node_attr_int(n, "axis", -1), 1);
            assert_int_equal(bd_node_attr_int(n, "group", -1), 2);
            assert_ptr_equal(n->outputs[0], y);
        }
        bd_graph_destroy(g);
    }
}

/* Concat(a, b) on axis 1 then that shuffle of 2 groups is one ChannelShuffle of the parts a and
 * b; not when the Concat's output is read elsewhere too (a graph output here), nor when its
 * parts differ in shape. */
static void test_channel_shuffle_of_concat(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        bd_graph *g = bd_graph_create("shuffle_concat");
        int64_t pd[] = { 1, 3, 2, 2 }, p2[] = { 1, 2, 2, 2 }, p4[] = { 1, 4, 2, 2 };
        int64_t xd[] = { 1, 6, 2, 2 }, rd[] = { 1, 2, 3, 2, 2 }, td[] = { 1, 3, 2, 2, 2 };
        bd_value *a = tensor(g, "a", 4, variant == 2 ? p2 : pd), *b = tensor(g, "b", 4, variant == 2 ? p4 : pd);
        bd_value *x = tensor(g, "x", 4, xd), *r = tensor(g, "r", 5, rd), *t = tensor(g, "t", 5, td),
                 *y = tensor(g, "y", 4, xd);
        bd_graph_mark_input(g, a, NULL);
        bd_graph_mark_input(g, b, NULL);
        bd_graph_mark_output(g, y, NULL);
        if (variant == 1)
            bd_graph_mark_output(g, x, NULL);
        bd_node *cat = tl_op(g, "cat", "Concat", (bd_value *[]){ a, b }, 2, x);
        tl_attr_int(g, cat, "axis", -3);
        tl_op(g, "r1", "Reshape", (bd_value *[]){ x }, 1, r);
        bd_node *tr = tl_op(g, "tr", "Transpose", (bd_value *[]){ r }, 1, t);
        tl_attr_ints(g, tr, "perm", 5, (int64_t[]){ 0, 2, 1, 3, 4 });
        tl_op(g, "r2", "Reshape", (bd_value *[]){ t }, 1, y);
        assert_int_equal(bd_pass_channel_shuffle(g, NULL, NULL), 1);
        assert_int_equal(bd_graph_num_nodes(g), variant == 0 ? 1 : 2);
        bd_node *n = bd_graph_node(g, bd_graph_num_nodes(g) - 1);
        assert_string_equal(n->op_type, "ChannelShuffle");
        assert_ptr_equal(n->outputs[0], y);
        if (variant == 0) {
            assert_int_equal(n->n_inputs, 2);
            assert_ptr_equal(n->inputs[0], a);
            assert_ptr_equal(n->inputs[1], b);
            assert_string_equal(n->composite, "Concat+Reshape+Transpose+Reshape");
        } else {
            assert_int_equal(n->n_inputs, 1);
            assert_ptr_equal(n->inputs[0], x);
        }
        bd_graph_destroy(g);
    }
}

/* Where(C, -inf, x) with a constant mask becomes Add(x, M), M = -inf where C; a finite fill
 * (-1e4) does not, since x + c would not be c. */
static void test_where_mask_pattern(void **state)
{
    (void)state;
    static const uint8_t cond[4] = { 0, 1, 0, 1 };
    for (int finite = 0; finite < 2; finite++) {
        bd_graph *g = bd_graph_create("where");
        int64_t d[] = { 2, 2 };
        bd_value *x = tensor(g, "x", 2, d), *y = tensor(g, "y", 2, d), *c;
        assert_int_equal(bd_graph_add_value(g, "c", BD_DT_BOOL, &x->shape, &c, NULL), 0);
        c->data = cond;
        c->nbytes = sizeof cond;
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, y, NULL);
        bd_value *fill = scalar(g, "fill", finite ? -1e4f : -INFINITY);
        tl_op(g, "w", "Where", (bd_value *[]){ c, fill, x }, 3, y);
        assert_int_equal(bd_pass_where_mask(g, NULL, NULL), finite ? 0 : 1);
        bd_node *n = bd_graph_node(g, 0);
        if (!finite) {
            assert_string_equal(n->op_type, "Add");
            assert_ptr_equal(n->inputs[0], x);
            const float *m = n->inputs[1]->data;
            assert_true(m[0] == 0.0f && m[2] == 0.0f && isinf(m[1]) && m[1] < 0 && isinf(m[3]));
            assert_ptr_equal(n->outputs[0], y);
        } else {
            assert_string_equal(n->op_type, "Where");
        }
        bd_graph_destroy(g);
    }
}

/* TensorFlow's exact GELU, (0.5 * x) * Erfc(-x * (1/sqrt 2)) with Erfc imported as 1 - Erf:
 * one Gelu; with 0.5 for 1/sqrt 2, not a GELU and left alone. */
static void test_gelu_tensorflow_pattern(void **state)
{
    (void)state;
    for (int wrong = 0; wrong < 2; wrong++) {
        bd_graph *g = bd_graph_create("gelu_tf");
        int64_t d[] = { 2, 8 };
        bd_value *x = tensor(g, "x", 2, d), *h = tensor(g, "h", 2, d), *n = tensor(g, "n", 2, d),
                 *m = tensor(g, "m", 2, d), *e = tensor(g, "e", 2, d), *c = tensor(g, "c", 2, d),
                 *y = tensor(g, "y", 2, d);
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, y, NULL);
        tl_op(g, "half", "Mul", (bd_value *[]){ scalar(g, "k_half", 0.5f), x }, 2, h);
        tl_op(g, "neg", "Neg", (bd_value *[]){ x }, 1, n);
        tl_op(g, "scale", "Mul", (bd_value *[]){ n, scalar(g, "k_rsqrt2", wrong ? 0.5f : 0.70710678f) }, 2, m);
        tl_op(g, "erf", "Erf", (bd_value *[]){ m }, 1, e);
        tl_op(g, "erfc", "Sub", (bd_value *[]){ scalar(g, "k_one", 1), e }, 2, c);
        tl_op(g, "out", "Mul", (bd_value *[]){ h, c }, 2, y);
        assert_int_equal(bd_pass_gelu(g, NULL, NULL), wrong ? 0 : 1);
        assert_int_equal(bd_graph_num_nodes(g), wrong ? 6 : 1);
        if (!wrong) {
            bd_node *gl = bd_graph_node(g, 0);
            assert_string_equal(gl->op_type, "Gelu");
            assert_string_equal(gl->domain, "braid");
            assert_ptr_equal(gl->inputs[0], x);
            assert_ptr_equal(gl->outputs[0], y);
            assert_int_equal(bd_graph_validate(g, NULL), 0);
        }
        bd_graph_destroy(g);
    }
}

/* GELU's tanh approximation, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), as
 * PyTorch exports it (x * (x * x), then (x * a) * 0.5) and in another grouping (Pow(x, 3),
 * a * (0.5 * x)): one Gelu with approximate = "tanh". With 0.5 for sqrt(2/pi): left alone. */
static void test_gelu_tanh_pattern(void **state)
{
    (void)state;
    for (int form = 0; form < 3; form++) {
        bool wrong = form == 2;
        bd_graph *g = bd_graph_create("gelu_tanh");
        int64_t d[] = { 2, 8 };
        bd_value *x = tensor(g, "x", 2, d), *sq = tensor(g, "sq", 2, d), *cube = tensor(g, "cube", 2, d),
                 *k = tensor(g, "k", 2, d), *s = tensor(g, "s", 2, d), *in = tensor(g, "in", 2, d),
                 *t = tensor(g, "t", 2, d), *a = tensor(g, "a", 2, d), *m = tensor(g, "m", 2, d),
                 *y = tensor(g, "y", 2, d);
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, y, NULL);
        if (form == 1) {
            tl_op(g, "pow", "Pow", (bd_value *[]){ x, scalar(g, "three", 3) }, 2, cube);
        } else {
            tl_op(g, "sq", "Mul", (bd_value *[]){ x, x }, 2, sq);
            tl_op(g, "cube", "Mul", (bd_value *[]){ x, sq }, 2, cube);
        }
        tl_op(g, "k", "Mul", (bd_value *[]){ scalar(g, "kappa", 0.044715f), cube }, 2, k);
        tl_op(g, "s", "Add", (bd_value *[]){ x, k }, 2, s);
        tl_op(g, "in", "Mul", (bd_value *[]){ scalar(g, "beta", wrong ? 0.5f : 0.7978846f), s }, 2, in);
        tl_op(g, "tanh", "Tanh", (bd_value *[]){ in }, 1, t);
        tl_op(g, "a", "Add", (bd_value *[]){ scalar(g, "one", 1), t }, 2, a);
        if (form == 1) {
            tl_op(g, "hx", "Mul", (bd_value *[]){ x, scalar(g, "half", 0.5f) }, 2, m);
            tl_op(g, "out", "Mul", (bd_value *[]){ a, m }, 2, y);
        } else {
            tl_op(g, "xa", "Mul", (bd_value *[]){ x, a }, 2, m);
            tl_op(g, "out", "Mul", (bd_value *[]){ m, scalar(g, "half", 0.5f) }, 2, y);
        }
        size_t before = bd_graph_num_nodes(g);
        assert_int_equal(bd_pass_gelu(g, NULL, NULL), wrong ? 0 : 1);
        assert_int_equal(bd_graph_num_nodes(g), wrong ? before : 1);
        if (!wrong) {
            bd_node *gl = bd_graph_node(g, 0);
            assert_string_equal(gl->op_type, "Gelu");
            assert_string_equal(gl->domain, "braid");
            assert_string_equal(bd_node_attr_string(gl, "approximate", "none"), "tanh");
            assert_ptr_equal(gl->inputs[0], x);
            assert_ptr_equal(gl->outputs[0], y);
            assert_int_equal(bd_graph_validate(g, NULL), 0);
        }
        bd_graph_destroy(g);
    }
}

static void test_gelu_pattern_rejects_wrong_constant(void **state)
{
    bd_graph *g = bd_graph_create("notgelu");
    int64_t d[] = { 2, 8 };
    bd_value *x = tensor(g, "x", 2, d), *a = tensor(g, "a", 2, d), *b = tensor(g, "b", 2, d),
             *c = tensor(g, "c", 2, d), *e = tensor(g, "e", 2, d), *y = tensor(g, "y", 2, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "div", "Div", (bd_value *[]){ x, scalar(g, "sqrt2", 1.4142135f) }, 2, a);
    tl_op(g, "erf", "Erf", (bd_value *[]){ a }, 1, b);
    tl_op(g, "add", "Add", (bd_value *[]){ b, scalar(g, "two", 2) }, 2, c);   /* not 1 */
    tl_op(g, "mul", "Mul", (bd_value *[]){ x, c }, 2, e);
    tl_op(g, "half", "Mul", (bd_value *[]){ e, scalar(g, "h", 0.5f) }, 2, y);
    assert_int_equal(bd_pass_gelu(g, NULL, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 5);
    bd_graph_destroy(g);
}

static void test_layernorm_pattern(void **state)
{
    bd_graph *g = bd_graph_create("ln");
    int64_t d[] = { 1, 4, 8 }, r[] = { 1, 4, 1 }, v8[] = { 8 };
    float ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, zeros[8] = { 0 };
    bd_value *x = tensor(g, "x", 3, d), *m = tensor(g, "m", 3, r), *dd = tensor(g, "d", 3, d),
             *p = tensor(g, "p", 3, d), *v = tensor(g, "v", 3, r), *ve = tensor(g, "ve", 3, r),
             *s = tensor(g, "s", 3, r), *n = tensor(g, "n", 3, d), *gm = tensor(g, "gm", 3, d),
             *y = tensor(g, "y", 3, d);
    bd_value *gamma = tl_const(g, "gamma", BD_DT_FLOAT, 1, v8, ones), *beta = tl_const(g, "beta", BD_DT_FLOAT, 1, v8, zeros);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    static const int64_t last[] = { -1 };
    bd_attr axes = { .name = "axes", .type = BD_ATTR_INTS, .ints = last, .n = 1 };
    bd_node_add_attr(g, tl_op(g, "mean", "ReduceMean", (bd_value *[]){ x }, 1, m), &axes, NULL);
    tl_op(g, "sub", "Sub", (bd_value *[]){ x, m }, 2, dd);
    tl_op(g, "pow", "Pow", (bd_value *[]){ dd, scalar(g, "two", 2) }, 2, p);
    bd_node_add_attr(g, tl_op(g, "var", "ReduceMean", (bd_value *[]){ p }, 1, v), &axes, NULL);
    tl_op(g, "eps", "Add", (bd_value *[]){ v, scalar(g, "epsilon", 1e-5f) }, 2, ve);
    tl_op(g, "sqrt", "Sqrt", (bd_value *[]){ ve }, 1, s);
    tl_op(g, "div", "Div", (bd_value *[]){ dd, s }, 2, n);
    tl_op(g, "gamma_mul", "Mul", (bd_value *[]){ n, gamma }, 2, gm);
    tl_op(g, "beta_add", "Add", (bd_value *[]){ gm, beta }, 2, y);
    assert_int_equal(bd_pass_layernorm(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 1);
    bd_node *ln = bd_graph_node(g, 0);
    assert_string_equal(ln->op_type, "LayerNormalization");
    assert_ptr_equal(ln->inputs[1], gamma);
    assert_ptr_equal(ln->inputs[2], beta);
    assert_float_equal(bd_node_attr_float(ln, "epsilon", 0), 1e-5f, 1e-12);
    assert_int_equal(bd_node_attr_int(ln, "axis", 0), -1);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_graph_destroy(g);
}

/* Keras's LayerNormalization as TensorFlow freezes it (gamma and beta reshaped to [1,1,C]):
 * fused into one LayerNormalization with [C] gamma and beta; with the scale read a third
 * time, not fused. */
static void test_layernorm_keras_pattern(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        int extra_reader = variant == 1, no_beta = variant == 2;  /* beta 0: its Add dropped */
        bd_graph *g = bd_graph_create("ln_keras");
        int64_t d[] = { 1, 4, 8 }, r[] = { 1, 4, 1 }, b8[] = { 1, 1, 8 };
        float gdata[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, bdata[8] = { 0, 1, 0, 1, 0, 1, 0, 1 };
        bd_value *x = tensor(g, "x", 3, d), *m = tensor(g, "m", 3, r), *dd = tensor(g, "d", 3, d),
                 *sq = tensor(g, "sq", 3, d), *v = tensor(g, "v", 3, r), *ve = tensor(g, "ve", 3, r),
                 *rt = tensor(g, "rt", 3, r), *rc = tensor(g, "rc", 3, r), *sc = tensor(g, "sc", 3, d),
                 *xs = tensor(g, "xs", 3, d), *ng = tensor(g, "ng", 3, r), *ms = tensor(g, "ms", 3, d),
                 *mb = tensor(g, "mb", 3, d), *y = tensor(g, "y", 3, d), *y2 = tensor(g, "y2", 3, d);
        bd_value *gamma = tl_const(g, "gamma", BD_DT_FLOAT, 3, b8, gdata);
        bd_value *beta = tl_const(g, "beta", BD_DT_FLOAT, 3, b8, bdata);
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, y, NULL);
        static const int64_t last[] = { -1 };
        bd_attr axes = { .name = "axes", .type = BD_ATTR_INTS, .ints = last, .n = 1 };
        bd_node_add_attr(g, tl_op(g, "mean", "ReduceMean", (bd_value *[]){ x }, 1, m), &axes, NULL);
        tl_op(g, "diff", "Sub", (bd_value *[]){ x, m }, 2, dd);
        tl_op(g, "square", "Mul", (bd_value *[]){ dd, dd }, 2, sq);
        bd_node_add_attr(g, tl_op(g, "var", "ReduceMean", (bd_value *[]){ sq }, 1, v), &axes, NULL);
        tl_op(g, "eps", "Add", (bd_value *[]){ v, scalar(g, "epsilon", 1e-3f) }, 2, ve);
        tl_op(g, "sqrt", "Sqrt", (bd_value *[]){ ve }, 1, rt);
        tl_op(g, "rsqrt", "Reciprocal", (bd_value *[]){ rt }, 1, rc);
        tl_op(g, "scale", "Mul", (bd_value *[]){ rc, gamma }, 2, sc);
        tl_op(g, "xs", "Mul", (bd_value *[]){ x, sc }, 2, xs);
        tl_op(g, "neg", "Neg", (bd_value *[]){ m }, 1, ng);
        tl_op(g, "ms", "Mul", (bd_value *[]){ ng, sc }, 2, ms);
        if (!no_beta)
            tl_op(g, "beta_add", "Add", (bd_value *[]){ ms, beta }, 2, mb);
        tl_op(g, "sum", "Add", (bd_value *[]){ xs, no_beta ? ms : mb }, 2, y);
        if (extra_reader) {
            bd_graph_mark_output(g, y2, NULL);
            tl_op(g, "peek", "Relu", (bd_value *[]){ sc }, 1, y2);
        }
        assert_int_equal(bd_pass_layernorm(g, NULL, NULL), extra_reader ? 0 : 1);
        if (!extra_reader) {
            assert_int_equal(bd_graph_num_nodes(g), 1);
            bd_node *ln = bd_graph_node(g, 0);
            assert_string_equal(ln->op_type, "LayerNormalization");
            assert_ptr_equal(ln->inputs[0], x);
            assert_int_equal(ln->inputs[1]->shape.rank, 1);
            assert_int_equal(ln->inputs[1]->shape.dims[0], 8);
            assert_memory_equal(ln->inputs[1]->data, gdata, sizeof gdata);
            static const float zeros[8];
            assert_memory_equal(ln->inputs[2]->data, no_beta ? zeros : bdata, sizeof bdata);
            assert_int_equal(ln->inputs[2]->shape.rank, 1);
            assert_float_equal(bd_node_attr_float(ln, "epsilon", 0), 1e-3f, 1e-12);
            assert_ptr_equal(ln->outputs[0], y);
            assert_int_equal(bd_graph_validate(g, NULL), 0);
        } else {
            assert_int_equal(bd_graph_num_nodes(g), 14);
        }
        bd_graph_destroy(g);
    }
}

/* Keras's SiLU, x * Sigmoid(x * 1): the * 1 goes, then the swish pattern matches. Not removed:
 * a multiply by 1 that broadcasts x to a larger shape, a multiply by 2, 0 - x, and a result
 * that is a graph output. */
static void test_identity_arith(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("silu");
    int64_t d[] = { 2, 8 };
    bd_value *x = tensor(g, "x", 2, d), *bx = tensor(g, "bx", 2, d), *s = tensor(g, "s", 2, d),
             *y = tensor(g, "y", 2, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "beta", "Mul", (bd_value *[]){ x, scalar(g, "one", 1.0f) }, 2, bx);
    tl_op(g, "sig", "Sigmoid", (bd_value *[]){ bx }, 1, s);
    tl_op(g, "silu", "Mul", (bd_value *[]){ x, s }, 2, y);
    assert_int_equal(bd_pass_identity_arith(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 2);
    assert_ptr_equal(bd_graph_node(g, 0)->inputs[0], x);
    assert_int_equal(bd_pass_swish(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 1);
    assert_string_equal(bd_graph_node(g, 0)->op_type, "Swish");
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_graph_destroy(g);

    g = bd_graph_create("kept");
    int64_t d1[] = { 1, 8 };
    bd_value *a = tensor(g, "a", 2, d1), *ones = tensor(g, "ones", 2, d), *o1 = tensor(g, "o1", 2, d),
             *o2 = tensor(g, "o2", 2, d1), *o3 = tensor(g, "o3", 2, d1), *o4 = tensor(g, "o4", 2, d1),
             *o5 = tensor(g, "o5", 2, d1);
    static const float one16[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    ones->data = one16;
    ones->nbytes = sizeof one16;
    bd_graph_mark_input(g, a, NULL);
    bd_graph_mark_output(g, o1, NULL);
    bd_graph_mark_output(g, o3, NULL);
    bd_graph_mark_output(g, o4, NULL);
    bd_graph_mark_output(g, o5, NULL);
    tl_op(g, "widen", "Mul", (bd_value *[]){ a, ones }, 2, o1);                     /* [1,8] -> [2,8] */
    tl_op(g, "twice", "Mul", (bd_value *[]){ a, scalar(g, "two", 2.0f) }, 2, o2);
    tl_op(g, "neg", "Sub", (bd_value *[]){ scalar(g, "zero", 0.0f), o2 }, 2, o3);   /* 0 - x */
    tl_op(g, "last", "Add", (bd_value *[]){ a, scalar(g, "zero2", 0.0f) }, 2, o4);  /* a graph output */
    tl_op(g, "keep", "Relu", (bd_value *[]){ o2 }, 1, o5);
    assert_int_equal(bd_pass_identity_arith(g, NULL, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 5);
    bd_graph_destroy(g);
}

/* conv -> Relu -> Add(residual r) -> Relu, with r produced *after* conv in node order. */
static void test_fuse_conv_relu_residual(void **state)
{
    bd_graph *g = bd_graph_create("res");
    int64_t d[] = { 1, 4, 5, 5 }, wd[] = { 4, 4, 1, 1 };
    float w[16] = { 0 };
    bd_value *x = tensor(g, "x", 4, d), *a = tensor(g, "a", 4, d), *b = tensor(g, "b", 4, d),
             *r = tensor(g, "r", 4, d), *c = tensor(g, "c", 4, d), *y = tensor(g, "y", 4, d);
    bd_value *wv = tl_const(g, "w", BD_DT_FLOAT, 4, wd, w);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "conv", "Conv", (bd_value *[]){ x, wv }, 2, a);
    tl_op(g, "relu1", "Relu", (bd_value *[]){ a }, 1, b);
    tl_op(g, "side", "Sigmoid", (bd_value *[]){ x }, 1, r);
    tl_op(g, "add", "Add", (bd_value *[]){ r, b }, 2, c);
    tl_op(g, "relu2", "Relu", (bd_value *[]){ c }, 1, y);
    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 3);
    assert_int_equal(bd_graph_num_nodes(g), 2);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_node *conv = bd_graph_node(g, 1);      /* re-sorted after the side branch */
    assert_string_equal(conv->name, "conv");
    assert_int_equal(conv->n_post, 3);
    assert_int_equal(conv->post[0].kind, BD_POST_ELTWISE);
    assert_int_equal(conv->post[0].alg, BD_ELT_RELU);
    assert_int_equal(conv->post[1].kind, BD_POST_SUM);
    assert_ptr_equal(conv->inputs[conv->post[1].input], r);
    assert_int_equal(conv->post[2].alg, BD_ELT_RELU);
    assert_ptr_equal(conv->outputs[0], y);
    assert_string_equal(conv->composite, "Conv+Relu+Add+Relu");
    bd_graph_destroy(g);
}

/* matmul -> Add(bias const) -> Div(8) -> Add(mask, broadcast) ; backend allows one post-op. */
static void test_fuse_respects_backend_and_broadcast(void **state)
{
    bd_graph *g = bd_graph_create("attn");
    int64_t d[] = { 1, 2, 4, 4 }, md[] = { 1, 1, 1, 4 }, bd[] = { 4 };
    bd_value *q = tensor(g, "q", 4, d), *k = tensor(g, "k", 4, d), *s = tensor(g, "s", 4, d),
             *t = tensor(g, "t", 4, d), *u = tensor(g, "u", 4, d), *mask = tensor(g, "mask", 4, md),
             *y = tensor(g, "y", 4, d);
    bd_value *bias = tl_const(g, "bias", BD_DT_FLOAT, 1, bd, (float[]){ 1, 2, 3, 4 });
    bd_graph_mark_input(g, q, NULL);
    bd_graph_mark_input(g, k, NULL);
    bd_graph_mark_input(g, mask, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "mm", "MatMul", (bd_value *[]){ q, k }, 2, s);
    tl_op(g, "bias", "Add", (bd_value *[]){ bias, s }, 2, t);
    tl_op(g, "scale", "Div", (bd_value *[]){ t, scalar(g, "eight", 8) }, 2, u);
    tl_op(g, "mask_add", "Add", (bd_value *[]){ u, mask }, 2, y);

    bd_graph *g2 = bd_graph_clone(g);
    assert_int_equal(bd_pass_fuse_postops(g2, &limited_backend, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g2), 3);
    bd_graph_destroy(g2);

    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 3);
    bd_node *mm = bd_graph_node(g, 0);
    assert_int_equal(mm->n_post, 3);
    assert_int_equal(mm->post[0].kind, BD_POST_BINARY);
    assert_ptr_equal(mm->inputs[mm->post[0].input], bias);
    assert_int_equal(mm->post[1].kind, BD_POST_ELTWISE);
    assert_int_equal(mm->post[1].alg, BD_ELT_LINEAR);
    assert_float_equal(mm->post[1].alpha, 0.125f, 1e-7);
    assert_int_equal(mm->post[2].kind, BD_POST_BINARY);
    assert_int_equal(mm->post[2].alg, BD_BIN_ADD);
    assert_ptr_equal(mm->inputs[mm->post[2].input], mask);
    bd_graph_destroy(g);
}

static void test_fuse_conv_elu(void **state)
{
    bd_graph *g = bd_graph_create("elu");
    int64_t d[] = { 1, 2, 3, 3 }, wd[] = { 2, 2, 1, 1 };
    float w[4] = { 1, 0, 0, 1 };
    bd_value *x = tensor(g, "x", 4, d), *a = tensor(g, "a", 4, d), *y = tensor(g, "y", 4, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "conv", "Conv", (bd_value *[]){ x, tl_const(g, "w", BD_DT_FLOAT, 4, wd, w) }, 2, a);
    bd_node *elu = tl_op(g, "elu", "Elu", (bd_value *[]){ a }, 1, y);
    bd_node_add_attr(g, elu, &(bd_attr){ .name = "alpha", .type = BD_ATTR_FLOAT, .f = 0.5f }, NULL);
    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 1);
    bd_node *conv = bd_graph_node(g, 0);
    assert_int_equal(conv->n_post, 1);
    assert_int_equal(conv->post[0].alg, BD_ELT_ELU);
    assert_float_equal(conv->post[0].alpha, 0.5f, 0);
    bd_graph_destroy(g);
}

static void test_fuse_stops_at_shared_value(void **state)
{
    bd_graph *g = bd_graph_create("shared");
    int64_t d[] = { 2, 2 };
    bd_value *x = tensor(g, "x", 2, d), *w = tl_const(g, "w", BD_DT_FLOAT, 2, d, (float[]){ 1, 0, 0, 1 }),
             *a = tensor(g, "a", 2, d), *b = tensor(g, "b", 2, d), *c = tensor(g, "c", 2, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, b, NULL);
    bd_graph_mark_output(g, c, NULL);
    tl_op(g, "mm", "MatMul", (bd_value *[]){ x, w }, 2, a);
    tl_op(g, "r", "Relu", (bd_value *[]){ a }, 1, b);
    tl_op(g, "t", "Tanh", (bd_value *[]){ a }, 1, c);    /* a has two readers: nothing fuses */
    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 3);
    bd_graph_destroy(g);
}

/* The GELU chain of test_gelu_pattern, for the placement-aware variants below. */
static bd_graph *gelu_graph(void)
{
    bd_graph *g = bd_graph_create("gelu");
    int64_t d[] = { 2, 8 };
    bd_value *x = tensor(g, "x", 2, d), *a = tensor(g, "a", 2, d), *b = tensor(g, "b", 2, d),
             *c = tensor(g, "c", 2, d), *e = tensor(g, "e", 2, d), *y = tensor(g, "y", 2, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "div", "Div", (bd_value *[]){ x, scalar(g, "sqrt2", 1.4142135f) }, 2, a);
    tl_op(g, "erf", "Erf", (bd_value *[]){ a }, 1, b);
    tl_op(g, "add", "Add", (bd_value *[]){ b, scalar(g, "one", 1) }, 2, c);
    tl_op(g, "mul", "Mul", (bd_value *[]){ x, c }, 2, e);
    tl_op(g, "half", "Mul", (bd_value *[]){ e, scalar(g, "h", 0.5f) }, 2, y);
    return g;
}

static void test_gelu_not_fused_over_forced_node(void **state)
{
    bd_graph *g = gelu_graph();
    bd_placement_opts o = { .fallback_ops = "Erf" };
    assert_int_equal(bd_place_pin(g, &o), 1);
    bd_fuse_target t = { .backend = &accept_backend, .forced_ops = o.fallback_ops };
    assert_int_equal(bd_pass_gelu(g, &t, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 5);
    bd_graph_destroy(g);
}

static void test_gelu_only_for_a_backend_that_runs_it(void **state)
{
    bd_graph *g = gelu_graph();
    bd_fuse_target t = { .backend = &no_gelu_backend };
    assert_int_equal(bd_pass_gelu(g, &t, NULL), 0);
    /* forcing the composite's own op type off the fast path also keeps it apart */
    t = (bd_fuse_target){ .backend = &accept_backend, .forced_ops = "Softmax,Gelu" };
    assert_int_equal(bd_pass_gelu(g, &t, NULL), 0);
    t.forced_ops = NULL;
    assert_int_equal(bd_pass_gelu(g, &t, NULL), 1);
    bd_graph_destroy(g);
}

static void test_fuse_postops_skips_pinned_consumer(void **state)
{
    bd_graph *g = bd_graph_create("pin");
    int64_t xd[] = { 2, 4 }, wd[] = { 4, 3 }, yd[] = { 2, 3 };
    bd_value *x = tensor(g, "x", 2, xd), *y = tensor(g, "y", 2, yd), *z = tensor(g, "z", 2, yd);
    bd_value *w = tl_const(g, "w", BD_DT_FLOAT, 2, wd, (float[12]){ 0 });
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, z, NULL);
    tl_op(g, "mm", "MatMul", (bd_value *[]){ x, w }, 2, y);
    tl_op(g, "relu", "Relu", (bd_value *[]){ y }, 1, z);
    bd_placement_opts o = { .fallback_ops = "Relu" };
    bd_place_pin(g, &o);
    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 0);
    o.fallback_ops = NULL;
    bd_place_pin(g, &o);
    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 1);
    bd_graph_destroy(g);
}

/* x[1,2,4] feeds three MatMuls (weights [4,2], [4,3], [4,1]) each + a bias: one MatMul over
 * [4,6], one Add of the concatenated bias, one Split back into the three outputs. */
static bd_graph *qkv_graph(bool bias_on_all)
{
    bd_graph *g = bd_graph_create("qkv");
    bd_graph_set_opset(g, 13);
    int64_t xd[] = { 1, 2, 4 };
    bd_value *x = tensor(g, "x", 3, xd);
    bd_graph_mark_input(g, x, NULL);
    const int64_t n[3] = { 2, 3, 1 };
    const char *names[3] = { "q", "k", "v" };
    for (int i = 0; i < 3; i++) {
        char buf[32];
        int64_t wd[] = { 4, n[i] }, yd[] = { 1, 2, n[i] };
        float w[12], b[3];
        for (int j = 0; j < 4 * n[i]; j++)
            w[j] = (float)(100 * i + j);
        for (int j = 0; j < n[i]; j++)
            b[j] = (float)(-10 * i - j);
        snprintf(buf, sizeof buf, "w%s", names[i]);
        bd_value *wv = tl_const(g, buf, BD_DT_FLOAT, 2, wd, w);
        snprintf(buf, sizeof buf, "%s_mm", names[i]);
        bd_value *y = tensor(g, buf, 3, yd);
        tl_op(g, buf, "MatMul", (bd_value *[]){ x, wv }, 2, y);
        bd_value *out = y;
        if (bias_on_all || i != 1) {
            snprintf(buf, sizeof buf, "b%s", names[i]);
            bd_value *bv = tl_const(g, buf, BD_DT_FLOAT, 1, &n[i], b);
            out = tensor(g, names[i], 3, yd);
            snprintf(buf, sizeof buf, "%s_add", names[i]);
            tl_op(g, buf, "Add", (bd_value *[]){ y, bv }, 2, out);
        }
        bd_graph_mark_output(g, out, NULL);
    }
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    return g;
}

static void test_qkv_merge(void **state)
{
    bd_graph *g = qkv_graph(true);
    assert_int_equal(bd_pass_qkv_merge(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 3);
    bd_node *mm = bd_graph_node(g, 0), *add = bd_graph_node(g, 1), *split = bd_graph_node(g, 2);
    assert_string_equal(mm->op_type, "MatMul");
    assert_string_equal(add->op_type, "Add");
    assert_string_equal(split->op_type, "Split");
    const bd_value *w = mm->inputs[1];
    assert_int_equal(w->shape.rank, 2);
    assert_int_equal(w->shape.dims[0], 4);
    assert_int_equal(w->shape.dims[1], 6);
    const float *wc = w->data;
    /* row 1: q's w[1,0..1] = 2,3; k's w[1,0..2] = 103,104,105; v's w[1,0] = 201 */
    float row1[6] = { 2, 3, 103, 104, 105, 201 };
    for (int j = 0; j < 6; j++)
        assert_float_equal(wc[6 + j], row1[j], 0);
    const float *bc = add->inputs[1]->data;
    float bias[6] = { 0, -1, -10, -11, -12, -20 };
    for (int j = 0; j < 6; j++)
        assert_float_equal(bc[j], bias[j], 0);
    assert_int_equal(split->n_inputs, 2);       /* opset 13: sizes are an input */
    const int64_t *sz = split->inputs[1]->data;
    assert_int_equal(sz[0], 2);
    assert_int_equal(sz[1], 3);
    assert_int_equal(sz[2], 1);
    assert_int_equal(split->n_outputs, 3);
    assert_string_equal(split->outputs[0]->name, "q");
    assert_string_equal(split->outputs[2]->name, "v");
    bd_graph_destroy(g);
}

static void test_qkv_merge_mixed_bias_keeps_adds(void **state)
{
    bd_graph *g = qkv_graph(false);
    assert_int_equal(bd_pass_qkv_merge(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    /* MatMul + Split + the two Adds that stay outside */
    assert_int_equal(bd_graph_num_nodes(g), 4);
    bd_graph_destroy(g);
}

static void test_qkv_merge_respects_pins_and_target(void **state)
{
    bd_graph *g = qkv_graph(true);
    bd_placement_opts o = { .fallback_ops = "MatMul" };
    bd_place_pin(g, &o);
    assert_int_equal(bd_pass_qkv_merge(g, NULL, NULL), 0);
    o.fallback_ops = NULL;
    bd_place_pin(g, &o);
    bd_fuse_target t = { .backend = &accept_backend, .forced_ops = "Split" };
    assert_int_equal(bd_pass_qkv_merge(g, &t, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 6);
    bd_graph_destroy(g);
}

/* Gemm -> Reshape (last dim kept) -> Add(bias [1,1,C]) -> Relu -> Add(residual of the
 * reshaped shape): the Reshape ends below all three, the bias as a [C] vector, the residual
 * read through a Reshape view; a Reshape that changes the last dim stays where it is. */
static void test_sink_reshape(void **state)
{
    (void)state;
    for (int keeps_last = 1; keeps_last >= 0; keeps_last--) {
        bd_graph *g = bd_graph_create("tensordot");
        int64_t xd[] = { 4, 8 }, wd[] = { 8, 6 }, yd[] = { 4, 6 }, bd3[] = { 1, 1, 6 };
        int64_t zd_keep[] = { 1, 4, 6 }, zd_change[] = { 1, 2, 12 }, sd[] = { 3 };
        const int64_t *zd = keeps_last ? zd_keep : zd_change;
        float w[48] = { 0 }, b[6] = { 1, 2, 3, 4, 5, 6 };
        int64_t shape[3] = { zd[0], zd[1], zd[2] };
        bd_value *x = tensor(g, "x", 2, xd), *res = tensor(g, "res", 3, zd), *y = tensor(g, "y", 2, yd),
                 *z = tensor(g, "z", 3, zd), *zb = tensor(g, "zb", 3, zd), *zr = tensor(g, "zr", 3, zd),
                 *out = tensor(g, "out", 3, zd);
        bd_value *wt = tl_const(g, "w", BD_DT_FLOAT, 2, wd, w);
        bd_value *bias = tl_const(g, "bias", BD_DT_FLOAT, 3, bd3, b);
        bd_value *to = tl_const(g, "to", BD_DT_INT64, 1, sd, shape);
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_input(g, res, NULL);
        bd_graph_mark_output(g, out, NULL);
        tl_op(g, "mm", "Gemm", (bd_value *[]){ x, wt }, 2, y);
        tl_op(g, "rs", "Reshape", (bd_value *[]){ y, to }, 2, z);
        tl_op(g, "bias_add", "Add", (bd_value *[]){ z, keeps_last ? bias : scalar(g, "one", 1) }, 2, zb);
        tl_op(g, "relu", "Relu", (bd_value *[]){ zb }, 1, zr);
        tl_op(g, "residual", "Add", (bd_value *[]){ res, zr }, 2, out);
        assert_int_equal(bd_pass_sink_reshape(g, NULL, NULL), keeps_last ? 3 : 0);
        assert_int_equal(bd_graph_validate(g, NULL), 0);
        if (keeps_last) {
            /* Gemm, Add, Relu, Reshape(res), Add, then the Reshape writing OUT */
            bd_node *last = out->producer;
            assert_string_equal(last->op_type, "Reshape");
            assert_ptr_equal(last->inputs[1], to);
            bd_node *radd = last->inputs[0]->producer;
            assert_string_equal(radd->name, "residual");
            assert_int_equal(radd->outputs[0]->shape.rank, 2);
            bd_value *view = radd->inputs[0];
            assert_string_equal(view->producer->op_type, "Reshape");
            assert_ptr_equal(view->producer->inputs[0], res);
            assert_true(bd_shape_equal(&view->shape, &y->shape));
            bd_node *relu = radd->inputs[1]->producer;
            assert_string_equal(relu->op_type, "Relu");
            bd_node *badd = relu->inputs[0]->producer;
            assert_ptr_equal(badd->inputs[0], y);
            assert_int_equal(badd->inputs[1]->shape.rank, 1);
            assert_memory_equal(badd->inputs[1]->data, b, sizeof b);
            assert_int_equal(bd_graph_num_nodes(g), 6);
        } else {
            assert_int_equal(bd_graph_num_nodes(g), 5);
            assert_ptr_equal(out->producer->inputs[1], zr);
        }
        bd_graph_destroy(g);
    }
}

/* Keras's ZeroPadding2D before a VALID convolution (NHWC, TensorFlow's pads [[0,0],[0,1],
 * [0,1],[0,0]] as ONNX [b..., e...]) folds into the Conv's pads; an ONNX-style NCHW Pad adds to
 * the Conv's own pads; the Conv drops its TensorFlow origin, and stays as it was when the target
 * declines the result. Not folded: a non-zero fill, a padded channel axis, a SAME conv, pads
 * whose sum overflows, a Pad read twice. */
static bd_node *pad_conv(bd_graph *g, const char *tag, const int64_t *amounts, float fill,
                         const char *data_format, const char *auto_pad, const int64_t *own_pads)
{
    char name[64];
    int64_t xd[] = { 1, 6, 6, 4 }, pd[] = { 1, 7, 7, 4 }, wd[] = { 3, 3, 1, 4 }, yd[] = { 1, 3, 3, 4 };
    int64_t nd[] = { 8 };
    snprintf(name, sizeof name, "%s_x", tag);
    bd_value *x = tensor(g, name, 4, xd);
    snprintf(name, sizeof name, "%s_p", tag);
    bd_value *p = tensor(g, name, 4, pd);
    snprintf(name, sizeof name, "%s_y", tag);
    bd_value *y = tensor(g, name, 4, yd);
    snprintf(name, sizeof name, "%s_pads", tag);
    bd_value *pads = tl_const(g, name, BD_DT_INT64, 1, nd, amounts);
    snprintf(name, sizeof name, "%s_fill", tag);
    bd_value *fv = scalar(g, name, fill);
    snprintf(name, sizeof name, "%s_w", tag);
    float w[36] = { 0 };
    bd_value *wv = tl_const(g, name, BD_DT_FLOAT, 4, wd, w);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    snprintf(name, sizeof name, "%s_pad", tag);
    tl_op(g, name, "Pad", (bd_value *[]){ x, pads, fv }, 3, p);
    snprintf(name, sizeof name, "%s_conv", tag);
    bd_node *conv = tl_op(g, name, "Conv", (bd_value *[]){ p, wv }, 2, y);
    bd_node_add_attr(g, conv, &(bd_attr){ .name = "data_format", .type = BD_ATTR_STRING, .s = data_format }, NULL);
    bd_node_add_attr(g, conv, &(bd_attr){ .name = "filter_format", .type = BD_ATTR_STRING, .s = "HWCM" }, NULL);
    bd_node_add_attr(g, conv, &(bd_attr){ .name = "group", .type = BD_ATTR_INT, .i = 4 }, NULL);
    static const int64_t two[2] = { 2, 2 };                /* attributes point, not copy */
    bd_node_add_attr(g, conv, &(bd_attr){ .name = "strides", .type = BD_ATTR_INTS, .ints = two, .n = 2 }, NULL);
    if (auto_pad)
        bd_node_add_attr(g, conv, &(bd_attr){ .name = "auto_pad", .type = BD_ATTR_STRING, .s = auto_pad }, NULL);
    if (own_pads)
        bd_node_add_attr(g, conv, &(bd_attr){ .name = "pads", .type = BD_ATTR_INTS, .ints = own_pads, .n = 4 }, NULL);
    return conv;
}

/* N's 2-D pads attribute is [T, L, B, R]. */
static void assert_pads(const bd_node *n, int64_t t, int64_t l, int64_t b, int64_t r)
{
    const int64_t *pads = NULL;
    assert_int_equal(bd_node_attr_ints(n, "pads", &pads), 4);
    assert_int_equal(pads[0], t);
    assert_int_equal(pads[1], l);
    assert_int_equal(pads[2], b);
    assert_int_equal(pads[3], r);
}

static void test_fold_pad(void **state)
{
    static const int64_t keras[8] = { 0, 0, 0, 0, 0, 1, 1, 0 };   /* NHWC: H, W end by 1 */
    bd_graph *g = bd_graph_create("pad");
    bd_node *conv = pad_conv(g, "a", keras, 0.0f, "NHWC", "VALID", NULL);
    bd_value *x = bd_graph_input(g, 0);
    conv->origin = "NodeDef";                /* as the TensorFlow importer leaves it */
    conv->origin_len = 7;
    /* a target that does not run Conv: nothing changes */
    bd_fuse_target no_conv = { .backend = &accept_backend, .forced_ops = "Conv" };
    assert_int_equal(bd_pass_fold_pad(g, &no_conv, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 2);
    assert_ptr_not_equal(conv->inputs[0], x);
    assert_string_equal(bd_node_attr_string(conv, "auto_pad", ""), "VALID");
    assert_non_null(conv->origin);
    bd_fuse_target any = { .backend = &accept_backend };
    assert_int_equal(bd_pass_fold_pad(g, &any, NULL), 1);
    assert_null(conv->origin);               /* its NodeDef no longer describes it */
    assert_int_equal(bd_graph_num_nodes(g), 1);
    assert_ptr_equal(conv->inputs[0], x);
    const int64_t *pads = NULL;
    assert_int_equal(bd_node_attr_ints(conv, "pads", &pads), 4);
    assert_int_equal(pads[0], 0);            /* top, left, bottom, right */
    assert_int_equal(pads[1], 0);
    assert_int_equal(pads[2], 1);
    assert_int_equal(pads[3], 1);
    assert_null(bd_node_attr(conv, "auto_pad"));
    assert_int_equal(bd_node_attr_int(conv, "group", 0), 4);            /* the rest is kept */
    assert_string_equal(bd_node_attr_string(conv, "filter_format", ""), "HWCM");
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_graph_destroy(g);

    /* NCHW: the Pad's H/W amounts add to the Conv's own explicit pads */
    static const int64_t nchw[8] = { 0, 0, 1, 2, 0, 0, 3, 0 };
    g = bd_graph_create("pad2");
    conv = pad_conv(g, "b", nchw, 0.0f, "NCHW", NULL, (int64_t[]){ 1, 1, 1, 1 });
    assert_int_equal(bd_pass_fold_pad(g, NULL, NULL), 1);
    assert_pads(conv, 2, 3, 4, 1);
    bd_graph_destroy(g);

    /* kept as they are */
    static const int64_t channel[8] = { 0, 0, 0, 1, 0, 0, 0, 0 };    /* NHWC: pads C */
    g = bd_graph_create("keep");
    pad_conv(g, "c", keras, 0.5f, "NHWC", "VALID", NULL);               /* fills 0.5 */
    pad_conv(g, "d", channel, 0.0f, "NHWC", "VALID", NULL);
    pad_conv(g, "e", keras, 0.0f, "NHWC", "SAME_UPPER", NULL);
    static const int64_t huge[8] = { 0, 0, 0, 0, 0, INT64_MAX, 1, 0 };  /* + own 1: overflows */
    pad_conv(g, "g", huge, 0.0f, "NHWC", NULL, (int64_t[]){ 1, 1, 1, 1 });
    bd_node *f = pad_conv(g, "f", keras, 0.0f, "NHWC", "VALID", NULL);
    int64_t od[] = { 1, 7, 7, 4 };
    bd_value *twice = tensor(g, "f_twice", 4, od);
    bd_graph_mark_output(g, twice, NULL);
    tl_op(g, "f_relu", "Relu", (bd_value *[]){ f->inputs[0] }, 1, twice);
    assert_int_equal(bd_pass_fold_pad(g, NULL, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), 11);
    bd_graph_destroy(g);
}

/* ResNet50's stem (Keras): Relu, ZeroPadding2D, MaxPool VALID (NHWC) folds into the pooling's
 * pads; an AveragePool folds with count_include_pad set, as the Pad averaged its zeros. Not
 * folded: a MaxPool over an input that may be negative (a zero would win), one whose padding
 * would reach a whole window, ceil_mode, and an AveragePool whose own pads are not counted. */
static bd_node *pad_pool(bd_graph *g, const char *tag, const char *op, bool relu, int64_t kernel,
                         const int64_t *own_pads, int64_t include_pad, int64_t ceil_mode)
{
    static const int64_t amounts[8] = { 0, 1, 1, 0, 0, 1, 1, 0 };      /* NHWC: H, W by 1 each */
    char name[64];
    int64_t xd[] = { 1, 6, 6, 4 }, pd[] = { 1, 8, 8, 4 }, yd[] = { 1, 3, 3, 4 }, nd[] = { 8 };
    snprintf(name, sizeof name, "%s_x", tag);
    bd_value *x = tensor(g, name, 4, xd);
    bd_graph_mark_input(g, x, NULL);
    if (relu) {
        snprintf(name, sizeof name, "%s_r", tag);
        bd_value *r = tensor(g, name, 4, xd);
        snprintf(name, sizeof name, "%s_relu", tag);
        tl_op(g, name, "Relu", (bd_value *[]){ x }, 1, r);
        x = r;
    }
    snprintf(name, sizeof name, "%s_p", tag);
    bd_value *p = tensor(g, name, 4, pd);
    snprintf(name, sizeof name, "%s_y", tag);
    bd_value *y = tensor(g, name, 4, yd);
    bd_graph_mark_output(g, y, NULL);
    snprintf(name, sizeof name, "%s_pads", tag);
    bd_value *pads = tl_const(g, name, BD_DT_INT64, 1, nd, amounts);
    snprintf(name, sizeof name, "%s_pad", tag);
    tl_op(g, name, "Pad", (bd_value *[]){ x, pads }, 2, p);
    snprintf(name, sizeof name, "%s_pool", tag);
    bd_node *pool = tl_op(g, name, op, (bd_value *[]){ p }, 1, y);
    bd_node_add_attr(g, pool, &(bd_attr){ .name = "data_format", .type = BD_ATTR_STRING, .s = "NHWC" }, NULL);
    int64_t *ks = bd_graph_alloc(g, 2 * sizeof *ks);       /* attributes point, not copy */
    ks[0] = ks[1] = kernel;
    static const int64_t two[2] = { 2, 2 };
    bd_node_add_attr(g, pool, &(bd_attr){ .name = "kernel_shape", .type = BD_ATTR_INTS, .ints = ks, .n = 2 }, NULL);
    bd_node_add_attr(g, pool, &(bd_attr){ .name = "strides", .type = BD_ATTR_INTS, .ints = two, .n = 2 }, NULL);
    bd_node_add_attr(g, pool, &(bd_attr){ .name = "ceil_mode", .type = BD_ATTR_INT, .i = ceil_mode }, NULL);
    if (own_pads)
        bd_node_add_attr(g, pool, &(bd_attr){ .name = "pads", .type = BD_ATTR_INTS, .ints = own_pads, .n = 4 }, NULL);
    if (include_pad >= 0)
        bd_node_add_attr(g, pool, &(bd_attr){ .name = "count_include_pad", .type = BD_ATTR_INT,
                                              .i = include_pad }, NULL);
    return pool;
}

static void test_fold_pad_pool(void **state)
{
    const int64_t *pads = NULL;
    bd_graph *g = bd_graph_create("maxpool");
    bd_node *pool = pad_pool(g, "a", "MaxPool", true, 3, NULL, -1, 0);
    bd_value *r = bd_graph_node(g, 0)->outputs[0];
    assert_int_equal(bd_pass_fold_pad(g, NULL, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 2);                          /* Relu, MaxPool */
    assert_ptr_equal(pool->inputs[0], r);
    assert_int_equal(bd_node_attr_ints(pool, "pads", &pads), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pads[i], 1);
    assert_int_equal(bd_node_attr_ints(pool, "kernel_shape", &pads), 2);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    bd_graph_destroy(g);

    g = bd_graph_create("avgpool");                                     /* not counted: set */
    pool = pad_pool(g, "b", "AveragePool", false, 3, (int64_t[]){ 0, 0, 0, 0 }, 0, 0);
    assert_int_equal(bd_pass_fold_pad(g, NULL, NULL), 1);
    assert_int_equal(bd_node_attr_int(pool, "count_include_pad", 0), 1);
    assert_int_equal(bd_node_attr_ints(pool, "pads", &pads), 4);
    assert_int_equal(pads[0], 1);
    bd_graph_destroy(g);

    g = bd_graph_create("avgpool2");                                    /* counted: adds */
    pool = pad_pool(g, "c", "AveragePool", false, 3, (int64_t[]){ 1, 0, 0, 1 }, 1, 0);
    assert_int_equal(bd_pass_fold_pad(g, NULL, NULL), 1);
    assert_pads(pool, 2, 1, 1, 2);
    bd_graph_destroy(g);

    g = bd_graph_create("keep");
    pad_pool(g, "d", "MaxPool", false, 3, NULL, -1, 0);                 /* may be negative */
    pad_pool(g, "e", "MaxPool", true, 1, NULL, -1, 0);                  /* a window of zeros */
    pad_pool(g, "f", "MaxPool", true, 3, NULL, -1, 1);                  /* ceil_mode */
    pad_pool(g, "h", "AveragePool", false, 3, (int64_t[]){ 1, 0, 0, 0 }, 0, 0);  /* own, not counted */
    size_t before = bd_graph_num_nodes(g);
    assert_int_equal(bd_pass_fold_pad(g, NULL, NULL), 0);
    assert_int_equal(bd_graph_num_nodes(g), before);
    bd_graph_destroy(g);
    (void)state;
}

/* onnxruntime's dynamic quantization tail: q [2,3,4] u8 -> MatMulInteger(W [4,5] s8) ->
 * Cast(FLOAT) -> Mul(S) becomes MatMulIntegerScaled(q, W, q_zp, W_zp, S) for S of one element or
 * one per column [5]; not for S of [3,5] (it varies along rows), a Cast to INT64, a Mul pinned
 * to a fallback, or a target that declines the fused node. */
static void test_dynquant_pattern(void **state)
{
    (void)state;
    for (int form = 0; form < 6; form++) {
        bd_graph *g = bd_graph_create("dynq");
        int64_t qd[] = { 2, 3, 4 }, wd[] = { 4, 5 }, yd[] = { 2, 3, 5 }, cd[] = { 5 }, rd[] = { 3, 5 };
        int8_t w[20] = { 1, -2, 3 };
        bd_value *q = tl_value(g, "q", BD_DT_UINT8, 3, qd), *qz = tl_value(g, "qz", BD_DT_UINT8, 0, NULL);
        bd_value *wq = tl_const(g, "w", BD_DT_INT8, 2, wd, w);
        bd_value *wz = tl_const(g, "wz", BD_DT_INT8, 0, NULL, (int8_t[]){ 0 });
        bd_value *acc = tl_value(g, "acc", BD_DT_INT32, 3, yd);
        bd_value *f = tl_value(g, "f", form == 3 ? BD_DT_INT64 : BD_DT_FLOAT, 3, yd);
        bd_value *y = tensor(g, "y", 3, yd);
        bd_value *sc = form == 1 ? tl_value(g, "s", BD_DT_FLOAT, 1, cd)
                     : form == 2 ? tl_value(g, "s", BD_DT_FLOAT, 2, rd) : tl_value(g, "s", BD_DT_FLOAT, 0, NULL);
        bd_graph_mark_input(g, q, NULL);
        bd_graph_mark_input(g, qz, NULL);
        bd_graph_mark_input(g, sc, NULL);
        bd_graph_mark_output(g, y, NULL);
        tl_op(g, "mmi", "MatMulInteger", (bd_value *[]){ q, wq, qz, wz }, 4, acc);
        tl_attr_int(g, tl_op(g, "cast", "Cast", (bd_value *[]){ acc }, 1, f), "to",
                    form == 3 ? BD_DT_INT64 : BD_DT_FLOAT);
        bd_node *mul = tl_op(g, "mul", "Mul", (bd_value *[]){ f, sc }, 2, y);
        if (form == 4)
            mul->backend = BD_BACKEND_PINNED;
        bd_fuse_target declines = { .backend = &no_gelu_backend, .forced_ops = "MatMulIntegerScaled" };
        bool fused = form < 2;
        assert_int_equal(bd_pass_dynquant(g, form == 5 ? &declines : NULL, NULL), fused ? 1 : 0);
        assert_int_equal(bd_graph_num_nodes(g), fused ? 1 : 3);
        if (fused) {
            bd_node *n = bd_graph_node(g, 0);
            assert_string_equal(n->op_type, "MatMulIntegerScaled");
            assert_string_equal(n->domain, "braid");
            assert_int_equal(n->n_inputs, 5);
            assert_ptr_equal(n->inputs[0], q);
            assert_ptr_equal(n->inputs[1], wq);
            assert_ptr_equal(n->inputs[2], qz);
            assert_ptr_equal(n->inputs[3], wz);
            assert_ptr_equal(n->inputs[4], sc);
            assert_ptr_equal(n->outputs[0], y);
            assert_int_equal(bd_graph_validate(g, NULL), 0);
        }
        bd_graph_destroy(g);
    }
}

/* x -> QuantizeLinear -> DequantizeLinear -> Relu, the pair per tensor with equal scale and zero
 * point: one FakeQuantize reading x, the QuantizeLinear gone unless its output is read elsewhere
 * (here a graph output). Not matched: a DequantizeLinear of another scale or zero point, or
 * per-axis parameters. Then post-op fusion takes it as the last post-op of a Conv, and
 * nothing after it. */
static void test_qdq_pair(void **state)
{
    (void)state;
    for (int form = 0; form < 5; form++) {      /* 0 plain, 1 Q read by an output, 2 other scale,
                                                 * 3 other zero point, 4 per axis */
        bd_graph *g = bd_graph_create("qdq");
        int64_t d[] = { 1, 4, 3, 3 }, c4[] = { 4 };
        bd_value *x = tensor(g, "x", 4, d), *y = tensor(g, "y", 4, d), *r = tensor(g, "r", 4, d);
        bd_value *q = tl_value(g, "q", BD_DT_UINT8, 4, d);
        uint8_t z = 7, z2 = 8;
        bd_value *s = form == 4 ? tl_const(g, "s", BD_DT_FLOAT, 1, c4, (float[]){ 0.1f, 0.2f, 0.3f, 0.4f })
                                : scalar(g, "s", 0.05f);
        bd_value *s2 = form == 2 ? scalar(g, "s2", 0.06f) : s;
        bd_value *zp = tl_const(g, "z", BD_DT_UINT8, 0, NULL, &z);
        bd_value *zp2 = form == 3 ? tl_const(g, "z2", BD_DT_UINT8, 0, NULL, &z2) : zp;
        bd_graph_mark_input(g, x, NULL);
        bd_graph_mark_output(g, r, NULL);
        if (form == 1)
            bd_graph_mark_output(g, q, NULL);
        tl_op(g, "quant", "QuantizeLinear", (bd_value *[]){ x, s, zp }, 3, q);
        tl_op(g, "dequant", "DequantizeLinear", (bd_value *[]){ q, s2, zp2 }, 3, y);
        tl_op(g, "relu", "Relu", (bd_value *[]){ y }, 1, r);
        bool match = form <= 1;
        assert_int_equal(bd_pass_qdq(g, NULL, NULL), match ? 1 : 0);
        assert_int_equal(bd_graph_num_nodes(g), form == 0 ? 2 : 3);
        assert_int_equal(bd_graph_validate(g, NULL), 0);
        if (match) {
            bd_node *fq = y->producer;
            assert_string_equal(fq->op_type, "FakeQuantize");
            assert_string_equal(fq->domain, "braid");
            assert_ptr_equal(fq->inputs[0], x);
            assert_float_equal(bd_node_attr_float(fq, "scale", 0), 0.05f, 0);
            assert_int_equal(bd_node_attr_int(fq, "zero_point", -1), 7);
            assert_int_equal(bd_node_attr_int(fq, "to", -1), BD_DT_UINT8);
            assert_int_equal(q->producer != NULL, form == 1);
        }
        bd_graph_destroy(g);
    }
    /* Conv -> FakeQuantize -> Relu: the FakeQuantize ends the Conv's chain, the Relu stays. */
    bd_graph *g = bd_graph_create("qdq_conv");
    int64_t xd[] = { 1, 1, 3, 3 }, wd[] = { 2, 1, 1, 1 }, yd[] = { 1, 2, 3, 3 };
    bd_value *x = tensor(g, "x", 4, xd), *c = tensor(g, "c", 4, yd), *f = tensor(g, "f", 4, yd),
             *r = tensor(g, "r", 4, yd);
    bd_value *w = tl_const(g, "w", BD_DT_FLOAT, 4, wd, (float[]){ 2, 3 });
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, r, NULL);
    tl_op(g, "conv", "Conv", (bd_value *[]){ x, w }, 2, c);
    bd_node *fq = tl_node(g, "fq", "FakeQuantize", "braid", (bd_value *[]){ c }, 1, &f, 1);
    tl_attr_float(g, fq, "scale", 0.5f);
    tl_attr_int(g, fq, "zero_point", -3);
    tl_attr_int(g, fq, "to", BD_DT_INT8);
    tl_op(g, "relu", "Relu", (bd_value *[]){ f }, 1, r);
    assert_int_equal(bd_pass_fuse_postops(g, &accept_backend, NULL), 1);
    assert_int_equal(bd_graph_num_nodes(g), 2);
    bd_node *conv = bd_graph_node(g, 0);
    assert_int_equal(conv->n_post, 1);
    assert_int_equal(conv->post[0].alg, BD_ELT_FAKEQUANT_S8);
    assert_float_equal(conv->post[0].alpha, 0.5f, 0);
    assert_float_equal(conv->post[0].beta, -3.0f, 0);
    assert_ptr_equal(conv->outputs[0], f);
    bd_graph_destroy(g);
}

static void test_composite_table(void **state)
{
    size_t n;
    const bd_composite *c = bd_composites_for(BD_ENGINE_FAST_PATH, &n);
    assert_non_null(c);
    assert_int_equal(n, 14);
    assert_string_equal(c[0].name, "qlinear");      /* its QDQ form feeds the next pass */
    assert_string_equal(c[1].name, "qdq");
    assert_string_equal(c[2].name, "identity_arith");
    assert_string_equal(c[3].name, "fold_batchnorm");
    assert_string_equal(c[4].name, "fold_pad");
    assert_string_equal(c[6].name, "swish");
    assert_string_equal(c[7].name, "channel_shuffle");
    assert_string_equal(c[n - 2].name, "sink_reshape");
    assert_string_equal(c[n - 1].name, "fuse_postops");
    assert_null(bd_composites_for(BD_ENGINE_FALLBACK, &n));
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold_batchnorm),
        cmocka_unit_test(test_fold_scale_shift),
        cmocka_unit_test(test_gelu_pattern),
        cmocka_unit_test(test_gelu_tanh_pattern),
        cmocka_unit_test(test_gelu_pattern_rejects_wrong_constant),
        cmocka_unit_test(test_gelu_tensorflow_pattern),
        cmocka_unit_test(test_swish_pattern),
        cmocka_unit_test(test_channel_shuffle_pattern),
        cmocka_unit_test(test_channel_shuffle_of_concat),
        cmocka_unit_test(test_where_mask_pattern),
        cmocka_unit_test(test_layernorm_pattern),
        cmocka_unit_test(test_layernorm_keras_pattern),
        cmocka_unit_test(test_identity_arith),
        cmocka_unit_test(test_fuse_conv_relu_residual),
        cmocka_unit_test(test_fuse_respects_backend_and_broadcast),
        cmocka_unit_test(test_fuse_conv_elu),
        cmocka_unit_test(test_fuse_stops_at_shared_value),
        cmocka_unit_test(test_gelu_not_fused_over_forced_node),
        cmocka_unit_test(test_gelu_only_for_a_backend_that_runs_it),
        cmocka_unit_test(test_fuse_postops_skips_pinned_consumer),
        cmocka_unit_test(test_qdq_pair),
        cmocka_unit_test(test_qkv_merge),
        cmocka_unit_test(test_qkv_merge_mixed_bias_keeps_adds),
        cmocka_unit_test(test_qkv_merge_respects_pins_and_target),
        cmocka_unit_test(test_sink_reshape),
        cmocka_unit_test(test_fold_pad),
        cmocka_unit_test(test_fold_pad_pool),
        cmocka_unit_test(test_dynquant_pattern),
        cmocka_unit_test(test_composite_table),
    };
    return cmocka_run_group_tests_name("passes", tests, NULL, NULL);
}
