/* Ops that index, scatter, rearrange or generate data: CumSum, DepthToSpace / SpaceToDepth,
 * ReverseSequence, Trilu, EyeLike, OneHot (constant and run-time depth), GatherND (batch_dims),
 * ScatterND, ScatterElements / Scatter, and the data-dependent Compress (folded for a constant
 * condition) and Unique; symbolic dims passing through, and malformed inputs and attributes. */
#include "tests/partitioner/shape/shape_test.h"
#include "tests/lib/tl_graph.h"

static const bd_shape unranked = { .rank = -1 };

static void test_cumsum_keeps_shape_and_checks_axis(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 5), "batch");
    bd_node *a = TNODE(g, "CumSum", 1, x, tint_scalar(g, "axis", -1));
    bd_node *b = TNODE(g, "CumSum", 1, x, tinput(g, "ax", BD_DT_INT32, tscalar(), NULL));
    tattr_int(g, b, "reverse", 1);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 5));
    assert_string_equal(tout(a, 0)->shape.sym[0], "batch");
    tassert_shape(tout(b, 0), S(-1, 5));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 5), NULL);
    TNODE(g, "CumSum", 1, x, tint_scalar(g, "axis", 2));
    tinfer_fails(g, false, BD_EMODEL, "CumSum", "axis 2 is out of range for rank 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 5), NULL);
    TNODE(g, "CumSum", 1, x, TINTS(g, "axis", 0, 1));
    tinfer_fails(g, false, BD_EMODEL, "axis 'axis' must be a scalar", NULL);
    bd_graph_destroy(g);
}

static void test_depth_to_space_and_back(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 8, 3, 5), "batch");
    bd_node *d2s = TNODE(g, "DepthToSpace", 1, x);
    tattr_int(g, d2s, "blocksize", 2);
    tattr_str(g, d2s, "mode", "CRD");
    bd_node *s2d = TNODE(g, "SpaceToDepth", 1, tout(d2s, 0));
    tattr_int(g, s2d, "blocksize", 2);
    tinfer(g, false);
    tassert_shape(tout(d2s, 0), S(-1, 2, 6, 10));
    assert_string_equal(tout(d2s, 0)->shape.sym[0], "batch");
    tassert_shape(tout(s2d, 0), S(-1, 8, 3, 5));
    bd_graph_destroy(g);

    struct { const char *op; bd_shape x; int64_t b; const char *mode, *want; } cases[] = {
        { "DepthToSpace", S(1, 6, 3, 3), 2, NULL, "6 channels are not divisible by blocksize^2 = 4" },
        { "SpaceToDepth", S(1, 1, 3, 4), 2, NULL, "dim 2 of size 3 is not divisible by blocksize 2" },
        { "DepthToSpace", S(1, 8, 3, 3), 0, NULL, "'blocksize' = 0, expected >= 1" },
        { "DepthToSpace", S(1, 8, 3, 3), 2, "RCD", "'mode' is 'RCD', expected one of DCR, CRD" },
        { "SpaceToDepth", S(1, 8, 4), 2, NULL, "must have rank 4" },
        { "DepthToSpace", S(1, 8, 3, 3), -1, NULL, "'blocksize' is required" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        g = tgraph();
        x = tinput(g, "x", BD_DT_FLOAT, cases[i].x, NULL);
        bd_node *n = TNODE(g, cases[i].op, 1, x);
        if (cases[i].b >= 0)
            tattr_int(g, n, "blocksize", cases[i].b);
        if (cases[i].mode)
            tattr_str(g, n, "mode", cases[i].mode);
        tinfer_fails(g, false, BD_EMODEL, cases[i].op, cases[i].want, NULL);
        bd_graph_destroy(g);
    }
}

static void test_reverse_sequence_trilu_eyelike(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 4, 3), "time");
    bd_node *rs = TNODE(g, "ReverseSequence", 1, x, tinput(g, "lens", BD_DT_INT64, S(4), NULL));
    bd_node *tri = TNODE(g, "Trilu", 1, x, tint_scalar(g, "k", -1));
    tattr_int(g, tri, "upper", 0);
    bd_value *m = tinput(g, "m", BD_DT_INT32, S(3, 5), NULL);
    bd_node *eye = TNODE(g, "EyeLike", 1, m);
    bd_node *eyef = TNODE(g, "EyeLike", 1, m);
    tattr_int(g, eyef, "dtype", BD_DT_DOUBLE);
    tattr_int(g, eyef, "k", 2);
    bd_node *eyeu = TNODE(g, "EyeLike", 1, tinput(g, "u", BD_DT_FLOAT, unranked, NULL));
    tinfer(g, false);
    tassert_shape(tout(rs, 0), S(-1, 4, 3));
    assert_string_equal(tout(rs, 0)->shape.sym[0], "time");
    tassert_shape(tout(tri, 0), S(-1, 4, 3));
    tassert_shape(tout(eye, 0), S(3, 5));
    assert_int_equal(tout(eye, 0)->dtype, BD_DT_INT32);
    assert_int_equal(tout(eyef, 0)->dtype, BD_DT_DOUBLE);
    tassert_shape(tout(eyeu, 0), S(-1, -1));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(5, 4, 3), NULL);
    TNODE(g, "ReverseSequence", 1, x, tinput(g, "lens", BD_DT_INT64, S(5), NULL));
    tinfer_fails(g, false, BD_EMODEL, "ReverseSequence", "expected 4 (the batch size)", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(5, 4, 3), NULL);
    bd_node *n = TNODE(g, "ReverseSequence", 1, x, tinput(g, "lens", BD_DT_INT64, S(4), NULL));
    tattr_int(g, n, "time_axis", 1);
    tinfer_fails(g, false, BD_EMODEL, "must be 0 and 1 in some order", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(5), NULL);
    TNODE(g, "Trilu", 1, x);
    tinfer_fails(g, false, BD_EMODEL, "Trilu", "must have rank >= 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(5, 5), NULL);
    TNODE(g, "Trilu", 1, x, TINTS(g, "k", 1, 2));
    tinfer_fails(g, false, BD_EMODEL, "k 'k' must be a scalar", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 5, 5), NULL);
    TNODE(g, "EyeLike", 1, x);
    tinfer_fails(g, false, BD_EMODEL, "EyeLike", "must be 2-D, got rank 3", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(5, 5), NULL);
    n = TNODE(g, "EyeLike", 1, x);
    tattr_int(g, n, "dtype", 99);
    tinfer_fails(g, false, BD_EMODEL, "'dtype' = 99 is not a numeric type", NULL);
    bd_graph_destroy(g);
}

static void test_onehot_depth_constant_or_declared(void **state)
{
    bd_graph *g = tgraph();
    bd_value *idx = tinput(g, "idx", BD_DT_INT64, S(-1, 4), "batch");
    float depth = 10.7f;                                /* a float depth is truncated */
    bd_value *dv = tl_const(g, "depth", BD_DT_FLOAT, 0, NULL, &depth);
    bd_value *vals = tinput(g, "vals", BD_DT_FLOAT, S(2), NULL);
    bd_node *last = TNODE(g, "OneHot", 1, idx, dv, vals);
    bd_node *mid = TNODE(g, "OneHot", 1, idx, TINTS(g, "d3", 3), vals);
    tattr_int(g, mid, "axis", 1);
    bd_node *first = TNODE(g, "OneHot", 1, idx, TINTS(g, "d5", 5), vals);
    tattr_int(g, first, "axis", -3);
    tinfer(g, false);
    tassert_shape(tout(last, 0), S(-1, 4, 10));
    assert_string_equal(tout(last, 0)->shape.sym[0], "batch");
    assert_int_equal(tout(last, 0)->dtype, BD_DT_FLOAT);
    tassert_shape(tout(mid, 0), S(-1, 3, 4));
    tassert_shape(tout(first, 0), S(5, -1, 4));
    bd_graph_destroy(g);

    /* A run-time depth: the dim the model declares for the output, else dynamic. */
    g = tgraph();
    idx = tinput(g, "idx", BD_DT_INT64, S(3), NULL);
    bd_value *rd = tinput(g, "depth", BD_DT_INT64, S(1), NULL);
    vals = tinput(g, "vals", BD_DT_INT32, S(2), NULL);
    bd_node *decl = TNODE(g, "OneHot", 1, idx, rd, vals);
    tout(decl, 0)->shape = S(3, 12);
    bd_node *none = TNODE(g, "OneHot", 1, idx, rd, vals);
    tinfer(g, false);
    tassert_shape(tout(decl, 0), S(3, 12));
    assert_int_equal(tout(decl, 0)->dtype, BD_DT_INT32);
    tassert_shape(tout(none, 0), S(3, -1));
    bd_graph_destroy(g);

    g = tgraph();
    idx = tinput(g, "idx", BD_DT_INT64, S(3), NULL);
    bd_node *n = TNODE(g, "OneHot", 1, idx, TINTS(g, "d", 4), tinput(g, "vals", BD_DT_FLOAT, S(2), NULL));
    tattr_int(g, n, "axis", 2);
    tinfer_fails(g, false, BD_EMODEL, "OneHot", "axis 2 is out of range for rank 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    idx = tinput(g, "idx", BD_DT_INT64, S(3), NULL);
    TNODE(g, "OneHot", 1, idx, TINTS(g, "d", 4), tinput(g, "vals", BD_DT_FLOAT, S(3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "values 'vals' must be 1-D with 2 values", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    idx = tinput(g, "idx", BD_DT_INT64, S(3), NULL);
    TNODE(g, "OneHot", 1, idx, TINTS(g, "d", -4), tinput(g, "vals", BD_DT_FLOAT, S(2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "depth -4 is negative", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    idx = tinput(g, "idx", BD_DT_INT64, S(3), NULL);
    TNODE(g, "OneHot", 1, idx, TINTS(g, "d", 4, 5), tinput(g, "vals", BD_DT_FLOAT, S(2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "depth 'd' must hold one value", NULL);
    bd_graph_destroy(g);
}

static void test_gather_nd(void **state)
{
    bd_graph *g = tgraph();
    bd_value *data = tinput(g, "data", BD_DT_FLOAT, S(-1, 5, 6, 7), "batch");
    bd_value *i2 = tinput(g, "i2", BD_DT_INT64, S(3, 2), NULL);
    bd_node *a = TNODE(g, "GatherND", 1, data, i2);                     /* [3, 6, 7] */
    bd_value *ib = tinput(g, "ib", BD_DT_INT64, S(-1, 4, 1), "batch");
    bd_node *b = TNODE(g, "GatherND", 1, data, ib);                     /* batch_dims 1 */
    tattr_int(g, b, "batch_dims", 1);
    bd_value *ir = tinput(g, "ir", BD_DT_INT64, S(3, -1), NULL);        /* m unknown */
    bd_node *c = TNODE(g, "GatherND", 1, data, ir);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(3, 6, 7));
    tassert_shape(tout(b, 0), S(-1, 4, 6, 7));
    assert_string_equal(tout(b, 0)->shape.sym[0], "batch");
    assert_int_equal(tout(c, 0)->shape.rank, -1);
    bd_graph_destroy(g);

    struct { bd_shape d, i; int64_t b; const char *want; } cases[] = {
        { S(2, 3), S(4, 3), 0, "last dim 3 must be between 1 and rank - batch_dims = 2" },
        { S(2, 3), S(2, 1), 2, "batch_dims 2 must be less than the ranks" },
        { S(2, 3, 4), S(3, 1), 1, "expected 2 (data's batch dim)" },
        { S(2, 3), S(4, 1), -1, "'batch_dims' = -1 is negative" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        g = tgraph();
        bd_node *n = TNODE(g, "GatherND", 1, tinput(g, "d", BD_DT_FLOAT, cases[i].d, NULL),
                           tinput(g, "i", BD_DT_INT64, cases[i].i, NULL));
        tattr_int(g, n, "batch_dims", cases[i].b);
        tinfer_fails(g, false, BD_EMODEL, "GatherND", cases[i].want, NULL);
        bd_graph_destroy(g);
    }
}

static void test_scatters(void **state)
{
    bd_graph *g = tgraph();
    bd_value *data = tinput(g, "data", BD_DT_FLOAT, S(-1, 5, 6), "batch");
    bd_value *ind = tinput(g, "ind", BD_DT_INT64, S(3, 2), NULL);
    bd_value *upd = tinput(g, "upd", BD_DT_FLOAT, S(3, 6), NULL);
    bd_node *nd = TNODE(g, "ScatterND", 1, data, ind, upd);
    tattr_str(g, nd, "reduction", "add");
    bd_value *ei = tinput(g, "ei", BD_DT_INT32, S(2, 5, 1), NULL);
    bd_value *eu = tinput(g, "eu", BD_DT_FLOAT, S(2, 5, 1), NULL);
    bd_node *el = TNODE(g, "ScatterElements", 1, data, ei, eu);
    tattr_int(g, el, "axis", -1);
    bd_node *old = TNODE(g, "Scatter", 1, data, ei, eu);
    tinfer(g, false);
    const bd_node *all[] = { nd, el, old };
    for (size_t i = 0; i < 3; i++) {
        tassert_shape(tout(all[i], 0), S(-1, 5, 6));
        assert_string_equal(tout(all[i], 0)->shape.sym[0], "batch");
        assert_int_equal(tout(all[i], 0)->dtype, BD_DT_FLOAT);
    }
    bd_graph_destroy(g);

    g = tgraph();
    data = tinput(g, "data", BD_DT_FLOAT, S(4, 5, 6), NULL);
    TNODE(g, "ScatterND", 1, data, tinput(g, "ind", BD_DT_INT64, S(3, 2), NULL),
          tinput(g, "upd", BD_DT_FLOAT, S(3, 5), NULL));
    tinfer_fails(g, false, BD_EMODEL, "ScatterND", "indices.shape[:-1] + data.shape[2:] = [3,6]",
                 NULL);
    bd_graph_destroy(g);

    g = tgraph();
    data = tinput(g, "data", BD_DT_FLOAT, S(4, 5), NULL);
    TNODE(g, "ScatterND", 1, data, tinput(g, "ind", BD_DT_INT64, S(3, 3), NULL),
          tinput(g, "upd", BD_DT_FLOAT, S(3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "last dim 3 must be between 1 and data's rank 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    data = tinput(g, "data", BD_DT_FLOAT, S(4, 5), NULL);
    bd_node *n = TNODE(g, "ScatterElements", 1, data, tinput(g, "i", BD_DT_INT64, S(2, 2), NULL),
                       tinput(g, "u", BD_DT_FLOAT, S(2, 2), NULL));
    tattr_str(g, n, "reduction", "avg");
    tinfer_fails(g, false, BD_EMODEL, "'reduction' is 'avg'", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    data = tinput(g, "data", BD_DT_FLOAT, S(4, 5), NULL);
    TNODE(g, "ScatterElements", 1, data, tinput(g, "i", BD_DT_INT64, S(2, 2), NULL),
          tinput(g, "u", BD_DT_FLOAT, S(2, 3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "updates 'u'", "expected 2 (the indices' dim)", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    data = tinput(g, "data", BD_DT_FLOAT, S(4, 5), NULL);
    TNODE(g, "Scatter", 1, data, tinput(g, "i", BD_DT_INT64, S(2), NULL),
          tinput(g, "u", BD_DT_FLOAT, S(2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "Scatter", "must have the same rank", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    data = tinput(g, "data", BD_DT_FLOAT, S(4, 5), NULL);
    TNODE(g, "ScatterElements", 1, data, tinput(g, "i", BD_DT_INT64, S(2, 2), NULL),
          tinput(g, "u", BD_DT_INT64, S(2, 2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "updates 'u' is INT64 but data 'data' is FP32", NULL);
    bd_graph_destroy(g);
}

static void test_compress_is_dynamic_unless_the_condition_is_constant(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 5), "batch");
    bd_value *c = tinput(g, "c", BD_DT_BOOL, S(5), NULL);
    bd_node *ax = TNODE(g, "Compress", 1, x, c);
    tattr_int(g, ax, "axis", 1);
    bd_node *flat = TNODE(g, "Compress", 1, x, c);
    const uint8_t bits[] = { 1, 0, 1, 1, 0, 1, 1 };      /* longer than the axis: cut to 5 */
    bd_value *k = tl_const(g, "k", BD_DT_BOOL, 1, (int64_t[]){ 7 }, bits);
    bd_node *folded = TNODE(g, "Compress", 1, x, k);
    tattr_int(g, folded, "axis", -1);
    bd_value *s = tinput(g, "s", BD_DT_FLOAT, S(2, 3), NULL);
    bd_node *short_flat = TNODE(g, "Compress", 1, s, k);  /* 6 elements: the first 6 bits */
    tinfer(g, false);
    tassert_shape(tout(ax, 0), S(-1, -1));
    assert_string_equal(tout(ax, 0)->shape.sym[0], "batch");
    tassert_shape(tout(flat, 0), S(-1));
    tassert_shape(tout(folded, 0), S(-1, 3));
    tassert_shape(tout(short_flat, 0), S(4));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(4, 5), NULL);
    TNODE(g, "Compress", 1, x, tinput(g, "c", BD_DT_BOOL, S(2, 2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "Compress", "condition 'c' must have rank 1", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(4, 5), NULL);
    TNODE(g, "Compress", 1, x, tinput(g, "c", BD_DT_INT64, S(4), NULL));
    tinfer_fails(g, false, BD_EMODEL, "condition 'c' must be BOOL", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(4, 5), NULL);
    bd_node *n = TNODE(g, "Compress", 1, x, tinput(g, "c", BD_DT_BOOL, S(4), NULL));
    tattr_int(g, n, "axis", 2);
    tinfer_fails(g, false, BD_EMODEL, "axis 2 is out of range for rank 2", NULL);
    bd_graph_destroy(g);
}

static void test_unique_outputs(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    bd_node *flat = TNODE(g, "Unique", 4, x);
    bd_node *ax = TNODE(g, "Unique", 4, x);
    tattr_int(g, ax, "axis", -2);
    bd_value *d = tinput(g, "d", BD_DT_INT32, S(-1, 3), "batch");
    bd_node *dyn = TNODE(g, "Unique", 3, d);
    tattr_int(g, dyn, "axis", 0);
    bd_node *u = TNODE(g, "Unique", 3, tinput(g, "u", BD_DT_FLOAT, unranked, NULL));
    tinfer(g, false);
    tassert_shape(tout(flat, 0), S(-1));
    tassert_shape(tout(flat, 1), S(-1));
    tassert_shape(tout(flat, 2), S(24));
    tassert_shape(tout(flat, 3), S(-1));
    assert_int_equal(tout(flat, 0)->dtype, BD_DT_FLOAT);
    for (size_t k = 1; k < 4; k++)
        assert_int_equal(tout(flat, k)->dtype, BD_DT_INT64);
    tassert_shape(tout(ax, 0), S(2, -1, 4));
    tassert_shape(tout(ax, 2), S(3));
    tassert_shape(tout(dyn, 0), S(-1, 3));
    tassert_shape(tout(dyn, 2), S(-1));
    assert_string_equal(tout(dyn, 2)->shape.sym[0], "batch");
    assert_int_equal(tout(dyn, 0)->dtype, BD_DT_INT32);
    tassert_shape(tout(u, 0), S(-1));
    tassert_shape(tout(u, 2), S(-1));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3), NULL);
    bd_node *n = TNODE(g, "Unique", 1, x);
    tattr_int(g, n, "axis", 2);
    tinfer_fails(g, false, BD_EMODEL, "Unique", "axis 2 is out of range for rank 2", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cumsum_keeps_shape_and_checks_axis),
        cmocka_unit_test(test_depth_to_space_and_back),
        cmocka_unit_test(test_reverse_sequence_trilu_eyelike),
        cmocka_unit_test(test_onehot_depth_constant_or_declared),
        cmocka_unit_test(test_gather_nd),
        cmocka_unit_test(test_scatters),
        cmocka_unit_test(test_compress_is_dynamic_unless_the_condition_is_constant),
        cmocka_unit_test(test_unique_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
