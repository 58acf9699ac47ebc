/* Layers: ConvTranspose (pads, strides, dilations, output_padding, output_shape, auto_pad,
 * group), MaxUnpool, LpPool / GlobalLpPool, LRN, InstanceNormalization,
 * MeanVarianceNormalization, LpNormalization, Hardmax, LSTM / GRU / RNN (directions, layouts,
 * hidden size), the losses, GridSample, RoiAlign, MaxRoiPool, Upsample, DFT / STFT / window
 * generators / MelWeightMatrix, TfIdfVectorizer, (de)quantization and the integer MatMul and
 * Conv; symbolic dims passing through, and malformed attributes and inputs refused with
 * BD_EMODEL. */
#include <string.h>

#include "tests/partitioner/shape/shape_test.h"
#include "tests/lib/tl_graph.h"

static const bd_shape unranked = { .rank = -1 };

/* ---- ConvTranspose ----------------------------------------------------------------------- */

static void test_conv_transpose_output_dims(void **state)
{
    /* ONNX's node tests: X [1,1,3,3], W [1,2,3,3]. */
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 1, 3, 3), NULL);
    bd_value *w = tweight(g, "w", S(1, 2, 3, 3));
    bd_node *plain = TNODE(g, "ConvTranspose", 1, x, w);
    bd_node *pads = TNODE(g, "ConvTranspose", 1, x, w);
    TATTR_INTS(g, pads, "strides", 3, 2);
    TATTR_INTS(g, pads, "pads", 1, 2, 1, 2);
    bd_node *oshape = TNODE(g, "ConvTranspose", 1, x, w);
    TATTR_INTS(g, oshape, "strides", 3, 2);
    TATTR_INTS(g, oshape, "output_shape", 10, 8);
    bd_node *opad = TNODE(g, "ConvTranspose", 1, x, w);
    TATTR_INTS(g, opad, "strides", 3, 2);
    TATTR_INTS(g, opad, "output_padding", 1, 1);
    bd_node *same = TNODE(g, "ConvTranspose", 1, x, w);
    TATTR_INTS(g, same, "strides", 2, 2);
    tattr_str(g, same, "auto_pad", "SAME_UPPER");
    bd_node *dil = TNODE(g, "ConvTranspose", 1, x, w);
    TATTR_INTS(g, dil, "dilations", 2, 2);
    tinfer(g, true);
    tassert_shape(tout(plain, 0), S(1, 2, 5, 5));
    tassert_shape(tout(pads, 0), S(1, 2, 7, 3));
    tassert_shape(tout(oshape, 0), S(1, 2, 10, 8));
    tassert_shape(tout(opad, 0), S(1, 2, 10, 8));
    tassert_shape(tout(same, 0), S(1, 2, 6, 6));
    tassert_shape(tout(dil, 0), S(1, 2, 7, 7));
    bd_graph_destroy(g);
}

static void test_conv_transpose_groups_bias_and_dynamic_dims(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 4, -1, 8), "batch");
    bd_value *w = tweight(g, "w", S(4, 3, 2, 2));
    bd_value *b = tweight(g, "b", S(6));
    bd_node *n = TNODE(g, "ConvTranspose", 1, x, w, b);
    tattr_int(g, n, "group", 2);
    TATTR_INTS(g, n, "strides", 2, 2);
    bd_node *u = TNODE(g, "ConvTranspose", 1, tinput(g, "u", BD_DT_FLOAT, unranked, NULL), w);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 6, -1, 16));
    assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
    assert_int_equal(tout(u, 0)->shape.rank, -1);
    bd_graph_destroy(g);

    g = tgraph();                                          /* 1-D, full output_shape */
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 1, 3), NULL);
    n = TNODE(g, "ConvTranspose", 1, x, tweight(g, "w", S(1, 2, 3)));
    TATTR_INTS(g, n, "output_shape", 1, 2, 9);
    tinfer(g, true);
    tassert_shape(tout(n, 0), S(1, 2, 9));
    bd_graph_destroy(g);
}

static void test_conv_transpose_malformed(void **state)
{
    struct { const char *attr; int64_t vals[4]; size_t n; const char *want; } cases[] = {
        { "strides", { 0, 1 }, 2, "'strides'[0] = 0, expected >= 1" },
        { "pads", { 1, 1 }, 2, "'pads' has 2 values, expected 4" },
        { "output_padding", { 2, 0 }, 2, "output_padding[0] = 2 must be less than" },
        { "output_shape", { 5 }, 1, "'output_shape' has 1 values, expected 2" },
        { "kernel_shape", { 2, 2 }, 2, "kernel_shape[0] = 2 but the weight's kernel is 3" },
        { "pads", { 4, 4, 4, 4 }, 4, "negative size" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bd_graph *g = tgraph();
        bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 1, 3, 3), NULL);
        bd_node *n = TNODE(g, "ConvTranspose", 1, x, tweight(g, "w", S(1, 2, 3, 3)));
        tattr_ints(g, n, cases[i].attr, cases[i].n, cases[i].vals);
        tinfer_fails(g, false, BD_EMODEL, "ConvTranspose", cases[i].want, NULL);
        bd_graph_destroy(g);
    }
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 3, 3), NULL);
    TNODE(g, "ConvTranspose", 1, x, tweight(g, "w", S(2, 2, 3, 3)));
    tinfer_fails(g, false, BD_EMODEL, "has 3 channels but weight 'w' has 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 2, 3, 3), NULL);
    TNODE(g, "ConvTranspose", 1, x, tweight(g, "w", S(2, 2, 3, 3)), tweight(g, "b", S(3)));
    tinfer_fails(g, false, BD_EMODEL, "bias 'b' has 3 values for 2 output channels", NULL);
    bd_graph_destroy(g);
}

/* ---- MaxUnpool, LpPool, GlobalLpPool ----------------------------------------------------- */

static void test_max_unpool(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 1, 2, 2), "batch");
    bd_value *i = tinput(g, "i", BD_DT_INT64, S(-1, 1, 2, 2), "batch");
    bd_node *n = TNODE(g, "MaxUnpool", 1, x, i);
    TATTR_INTS(g, n, "kernel_shape", 2, 2);
    TATTR_INTS(g, n, "strides", 2, 2);
    bd_node *o = TNODE(g, "MaxUnpool", 1, x, i, TINTS(g, "os", 1, 1, 5, 5));
    TATTR_INTS(g, o, "kernel_shape", 2, 2);
    TATTR_INTS(g, o, "strides", 2, 2);
    bd_node *r = TNODE(g, "MaxUnpool", 1, x, i, tinput(g, "rs", BD_DT_INT64, S(4), NULL));
    TATTR_INTS(g, r, "kernel_shape", 2, 2);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 1, 4, 4));
    assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
    tassert_shape(tout(o, 0), S(1, 1, 5, 5));
    tassert_shape(tout(r, 0), S(-1, -1, -1, -1));
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 1, 2, 2), NULL);
    TNODE(g, "MaxUnpool", 1, x, tinput(g, "i", BD_DT_INT64, S(1, 1, 2, 2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "MaxUnpool", "'kernel_shape' is required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 1, 2, 2), NULL);
    n = TNODE(g, "MaxUnpool", 1, x, tinput(g, "i", BD_DT_INT64, S(1, 1, 2, 3), NULL));
    TATTR_INTS(g, n, "kernel_shape", 2, 2);
    tinfer_fails(g, false, BD_EMODEL, "must have the shape of X", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 1, 2, 2), NULL);
    n = TNODE(g, "MaxUnpool", 1, x, tinput(g, "i", BD_DT_INT64, S(1, 1, 2, 2), NULL),
              TINTS(g, "os", 4, 4));
    TATTR_INTS(g, n, "kernel_shape", 2, 2);
    tinfer_fails(g, false, BD_EMODEL, "output_shape 'os' must be 1-D with 4 values", NULL);
    bd_graph_destroy(g);
}

static void test_lp_pools(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 32, 32), "batch");
    bd_node *lp = TNODE(g, "LpPool", 1, x);
    TATTR_INTS(g, lp, "kernel_shape", 2, 2);
    TATTR_INTS(g, lp, "strides", 2, 2);
    tattr_int(g, lp, "p", 3);
    bd_node *glp = TNODE(g, "GlobalLpPool", 1, x);
    tinfer(g, false);
    tassert_shape(tout(lp, 0), S(-1, 3, 16, 16));
    tassert_shape(tout(glp, 0), S(-1, 3, 1, 1));
    assert_string_equal(tout(glp, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3), NULL);
    TNODE(g, "GlobalLpPool", 1, x);
    tinfer_fails(g, false, BD_EMODEL, "GlobalLpPool", "must have rank >= 3", NULL);
    bd_graph_destroy(g);
}

/* ---- normalisations ------------------------------------------------------------------------ */

static void test_normalisations_keep_shape(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 5, 5), "batch");
    bd_node *lrn = TNODE(g, "LRN", 1, x);
    tattr_int(g, lrn, "size", 3);
    bd_node *in = TNODE(g, "InstanceNormalization", 1, x, tweight(g, "s", S(3)),
                        tweight(g, "b", S(3)));
    bd_node *mvn = TNODE(g, "MeanVarianceNormalization", 1, x);
    bd_node *lp = TNODE(g, "LpNormalization", 1, x);
    tattr_int(g, lp, "axis", 1);
    tattr_int(g, lp, "p", 1);
    bd_node *hm = TNODE(g, "Hardmax", 1, x);
    tinfer(g, false);
    const bd_node *all[] = { lrn, in, mvn, lp, hm };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        tassert_shape(tout(all[i], 0), S(-1, 3, 5, 5));
        assert_string_equal(tout(all[i], 0)->shape.sym[0], "batch");
        assert_int_equal(tout(all[i], 0)->dtype, BD_DT_FLOAT);
    }
    bd_graph_destroy(g);
}

static void test_normalisations_malformed(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5, 5), NULL);
    TNODE(g, "LRN", 1, x);
    tinfer_fails(g, false, BD_EMODEL, "LRN", "'size' is required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5, 5), NULL);
    bd_node *n = TNODE(g, "LRN", 1, x);
    tattr_int(g, n, "size", 0);
    tinfer_fails(g, false, BD_EMODEL, "'size' = 0, expected >= 1", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5, 5), NULL);
    TNODE(g, "InstanceNormalization", 1, x, tweight(g, "s", S(4)), tweight(g, "b", S(3)));
    tinfer_fails(g, false, BD_EMODEL, "scale 's' has 4 values for 3 channels", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3), NULL);
    TNODE(g, "InstanceNormalization", 1, x, tweight(g, "s", S(3)), tweight(g, "b", S(3)));
    tinfer_fails(g, false, BD_EMODEL, "must have rank >= 3", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* default axes [0, 2, 3] */
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5), NULL);
    TNODE(g, "MeanVarianceNormalization", 1, x);
    tinfer_fails(g, false, BD_EMODEL, "axis 3 is out of range for rank 3", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5), NULL);
    n = TNODE(g, "MeanVarianceNormalization", 1, x);
    TATTR_INTS(g, n, "axes", 1, -2);
    tinfer_fails(g, false, BD_EMODEL, "axis 1 is listed twice", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5), NULL);
    n = TNODE(g, "LpNormalization", 1, x);
    tattr_int(g, n, "p", 3);
    tinfer_fails(g, false, BD_EMODEL, "'p' = 3, expected 1 or 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5), NULL);
    n = TNODE(g, "Hardmax", 1, x);
    tattr_int(g, n, "axis", 3);
    tinfer_fails(g, false, BD_EMODEL, "Hardmax", "axis 3 is out of range", NULL);
    bd_graph_destroy(g);
}

/* ---- recurrent layers ---------------------------------------------------------------------- */

static void test_lstm_shapes_by_direction_and_layout(void **state)
{
    /* seq 7, batch dynamic, input 10, hidden 16, bidirectional. */
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(7, -1, 10), NULL);
    x->shape.sym[1] = "batch";
    bd_value *w = tweight(g, "w", S(2, 64, 10)), *r = tweight(g, "r", S(2, 64, 16));
    bd_value *b = tweight(g, "b", S(2, 128));
    bd_node *n = TNODE(g, "LSTM", 3, x, w, r, b);
    tattr_str(g, n, "direction", "bidirectional");
    tattr_int(g, n, "hidden_size", 16);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(7, 2, -1, 16));
    assert_string_equal(tout(n, 0)->shape.sym[2], "batch");
    tassert_shape(tout(n, 1), S(2, -1, 16));
    tassert_shape(tout(n, 2), S(2, -1, 16));
    assert_string_equal(tout(n, 2)->shape.sym[1], "batch");
    assert_int_equal(tout(n, 2)->dtype, BD_DT_FLOAT);
    bd_graph_destroy(g);

    g = tgraph();                                          /* layout 1, hidden from R */
    x = tinput(g, "x", BD_DT_FLOAT, S(-1, 5, 3), "batch");
    w = tweight(g, "w", S(1, 32, 3));
    r = tweight(g, "r", S(1, 32, 8));
    bd_value *h0 = tinput(g, "h0", BD_DT_FLOAT, S(-1, 1, 8), "batch");
    bd_value *c0 = tinput(g, "c0", BD_DT_FLOAT, S(-1, 1, 8), "batch");
    n = TNODE(g, "LSTM", 3, x, w, r, NULL, NULL, h0, c0);
    tattr_int(g, n, "layout", 1);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 5, 1, 8));
    assert_string_equal(tout(n, 0)->shape.sym[0], "batch");
    tassert_shape(tout(n, 1), S(-1, 1, 8));
    bd_graph_destroy(g);
}

static void test_gru_and_rnn(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(4, 2, 3), NULL);
    bd_node *gru = TNODE(g, "GRU", 2, x, tweight(g, "wg", S(1, 15, 3)), tweight(g, "rg", S(1, 15, 5)),
                         tweight(g, "bg", S(1, 30)));
    tattr_int(g, gru, "hidden_size", 5);
    tattr_str(g, gru, "direction", "reverse");
    bd_value *lens = tinput(g, "lens", BD_DT_INT32, S(2), NULL);
    bd_node *rnn = TNODE(g, "RNN", 2, x, tweight(g, "wr", S(1, 4, 3)), tweight(g, "rr", S(1, 4, 4)),
                         NULL, lens);
    bd_node *u = TNODE(g, "RNN", 1, tinput(g, "u", BD_DT_FLOAT, unranked, NULL),
                       tweight(g, "wu", S(1, 6, 3)), tweight(g, "ru", S(1, 6, 6)));
    tinfer(g, false);
    tassert_shape(tout(gru, 0), S(4, 1, 2, 5));
    tassert_shape(tout(gru, 1), S(1, 2, 5));
    tassert_shape(tout(rnn, 0), S(4, 1, 2, 4));
    tassert_shape(tout(rnn, 1), S(1, 2, 4));
    tassert_shape(tout(u, 0), S(-1, 1, -1, 6));            /* X unranked: its dims unknown */
    bd_graph_destroy(g);
}

static void test_recurrent_malformed(void **state)
{
    struct { const char *op; bd_shape w, r; const char *attr, *sval; int64_t ival; const char *want; }
    cases[] = {
        { "LSTM", S(1, 64, 10), S(1, 64, 16), "direction", "sideways", 0,
          "'direction' is 'sideways'" },
        { "LSTM", S(1, 64, 10), S(1, 64, 16), "layout", NULL, 2, "'layout' = 2, expected 0 or 1" },
        { "LSTM", S(1, 64, 10), S(1, 64, 16), "hidden_size", NULL, 0, "'hidden_size' = 0" },
        { "LSTM", S(1, 64, 10), S(1, 64, 16), "hidden_size", NULL, 8,
          "has 64 at dim 1, expected 32 (gates x hidden_size)" },
        { "LSTM", S(2, 64, 10), S(2, 64, 16), NULL, NULL, 0, "expected 1 (num_directions)" },
        { "GRU", S(1, 48, 9), S(1, 48, 16), NULL, NULL, 0, "expected 10 (input size)" },
        { "RNN", S(1, 16, 10), S(1, 15, 16), NULL, NULL, 0, "expected 16 (gates x hidden_size)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bd_graph *g = tgraph();
        bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(7, 2, 10), NULL);
        bd_node *n = TNODE(g, cases[i].op, 2, x, tweight(g, "w", cases[i].w),
                           tweight(g, "r", cases[i].r));
        if (cases[i].attr && cases[i].sval)
            tattr_str(g, n, cases[i].attr, cases[i].sval);
        else if (cases[i].attr)
            tattr_int(g, n, cases[i].attr, cases[i].ival);
        tinfer_fails(g, false, BD_EMODEL, cases[i].op, cases[i].want, NULL);
        bd_graph_destroy(g);
    }
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(7, 2, 10), NULL);
    TNODE(g, "LSTM", 3, x, tweight(g, "w", S(1, 64, 10)), tweight(g, "r", S(1, 64, 16)), NULL,
          NULL, tinput(g, "h0", BD_DT_FLOAT, S(1, 3, 16), NULL));
    tinfer_fails(g, false, BD_EMODEL, "initial_h 'h0'", "expected 2 (batch size)", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(7, 10), NULL);
    TNODE(g, "GRU", 2, x, tweight(g, "w", S(1, 48, 10)), tweight(g, "r", S(1, 48, 16)));
    tinfer_fails(g, false, BD_EMODEL, "X 'x' must have rank 3, got 2", NULL);
    bd_graph_destroy(g);
}

/* ---- losses -------------------------------------------------------------------------------- */

static void test_losses_by_reduction(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 5, 2, 3), "batch");
    bd_value *t = tinput(g, "t", BD_DT_INT64, S(-1, 2, 3), "batch");
    bd_node *none = TNODE(g, "NegativeLogLikelihoodLoss", 1, x, t, tweight(g, "w", S(5)));
    tattr_str(g, none, "reduction", "none");
    bd_node *mean = TNODE(g, "NegativeLogLikelihoodLoss", 1, x, t);
    bd_node *sce = TNODE(g, "SoftmaxCrossEntropyLoss", 2, x, t);
    tattr_str(g, sce, "reduction", "sum");
    bd_node *sce_none = TNODE(g, "SoftmaxCrossEntropyLoss", 1, x, t);
    tattr_str(g, sce_none, "reduction", "none");
    tinfer(g, false);
    tassert_shape(tout(none, 0), S(-1, 2, 3));
    assert_string_equal(tout(none, 0)->shape.sym[0], "batch");
    tassert_shape(tout(mean, 0), tscalar());
    tassert_shape(tout(sce, 0), tscalar());
    tassert_shape(tout(sce, 1), S(-1, 5, 2, 3));
    assert_int_equal(tout(sce, 1)->dtype, BD_DT_FLOAT);
    tassert_shape(tout(sce_none, 0), S(-1, 2, 3));
    bd_graph_destroy(g);
}

static void test_losses_malformed(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(3, 5), NULL);
    bd_node *n = TNODE(g, "NegativeLogLikelihoodLoss", 1, x,
                       tinput(g, "t", BD_DT_INT64, S(3), NULL));
    tattr_str(g, n, "reduction", "max");
    tinfer_fails(g, false, BD_EMODEL, "'reduction' is 'max', expected one of none, sum, mean",
                 NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 5), NULL);
    TNODE(g, "NegativeLogLikelihoodLoss", 1, x, tinput(g, "t", BD_DT_INT64, S(4), NULL));
    tinfer_fails(g, false, BD_EMODEL, "target 't'", "expected 3", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 5, 2), NULL);
    TNODE(g, "SoftmaxCrossEntropyLoss", 1, x, tinput(g, "t", BD_DT_INT64, S(3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "target 't' must have rank 2", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 5), NULL);
    TNODE(g, "SoftmaxCrossEntropyLoss", 1, x, tinput(g, "t", BD_DT_INT64, S(3), NULL),
          tweight(g, "w", S(4)));
    tinfer_fails(g, false, BD_EMODEL, "weight 'w'", "expected 5 (the classes)", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(3, 5), NULL);
    TNODE(g, "SoftmaxCrossEntropyLoss", 1, x, tinput(g, "t", BD_DT_FLOAT, S(3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "must be INT32 or INT64", NULL);
    bd_graph_destroy(g);
}

/* ---- sampling ------------------------------------------------------------------------------ */

static void test_grid_sample_and_roi_align(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 32, 32), "batch");
    bd_value *grid = tinput(g, "grid", BD_DT_FLOAT, S(-1, 7, 9, 2), "batch");
    bd_node *gs = TNODE(g, "GridSample", 1, x, grid);
    tattr_str(g, gs, "mode", "nearest");
    bd_value *rois = tinput(g, "rois", BD_DT_FLOAT, S(-1, 4), "rois");
    bd_value *bi = tinput(g, "bi", BD_DT_INT64, S(-1), "rois");
    bd_node *ra = TNODE(g, "RoiAlign", 1, x, rois, bi);
    tattr_int(g, ra, "output_height", 5);
    tattr_int(g, ra, "output_width", 6);
    tinfer(g, false);
    tassert_shape(tout(gs, 0), S(-1, 3, 7, 9));
    assert_string_equal(tout(gs, 0)->shape.sym[0], "batch");
    tassert_shape(tout(ra, 0), S(-1, 3, 5, 6));
    assert_string_equal(tout(ra, 0)->shape.sym[0], "rois");
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 32, 32), NULL);
    TNODE(g, "GridSample", 1, x, tinput(g, "grid", BD_DT_FLOAT, S(1, 7, 9, 3), NULL));
    tinfer_fails(g, false, BD_EMODEL, "GridSample", "expected 2 (X's spatial rank)", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 32, 32), NULL);
    gs = TNODE(g, "GridSample", 1, x, tinput(g, "grid", BD_DT_FLOAT, S(1, 7, 9, 2), NULL));
    tattr_str(g, gs, "padding_mode", "wrap");
    tinfer_fails(g, false, BD_EMODEL, "'padding_mode' is 'wrap'", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 32, 32), NULL);
    TNODE(g, "RoiAlign", 1, x, tinput(g, "rois", BD_DT_FLOAT, S(5, 4), NULL),
          tinput(g, "bi", BD_DT_INT64, S(6), NULL));
    tinfer_fails(g, false, BD_EMODEL, "RoiAlign", "expected 5 (the number of rois)", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 32, 32), NULL);
    ra = TNODE(g, "RoiAlign", 1, x, tinput(g, "rois", BD_DT_FLOAT, S(5, 4), NULL),
               tinput(g, "bi", BD_DT_INT64, S(5), NULL));
    tattr_int(g, ra, "output_height", 0);
    tinfer_fails(g, false, BD_EMODEL, "must be >= 1", NULL);
    bd_graph_destroy(g);
}

static void test_max_roi_pool(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(2, 16, 20, 30), NULL);
    bd_node *n = TNODE(g, "MaxRoiPool", 1, x, tinput(g, "rois", BD_DT_FLOAT, S(-1, 5), "rois"));
    TATTR_INTS(g, n, "pooled_shape", 3, 4);
    tattr_float(g, n, "spatial_scale", 0.5f);
    tinfer(g, false);
    tassert_shape(tout(n, 0), S(-1, 16, 3, 4));
    assert_string_equal(tout(n, 0)->shape.sym[0], "rois");
    bd_graph_destroy(g);

    g = tgraph();                                          /* rois of four columns */
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 16, 20, 30), NULL);
    n = TNODE(g, "MaxRoiPool", 1, x, tinput(g, "rois", BD_DT_FLOAT, S(7, 4), NULL));
    TATTR_INTS(g, n, "pooled_shape", 3, 4);
    tinfer_fails(g, false, BD_EMODEL, "MaxRoiPool", "expected 5", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* pooled_shape missing */
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 16, 20, 30), NULL);
    TNODE(g, "MaxRoiPool", 1, x, tinput(g, "rois", BD_DT_FLOAT, S(7, 5), NULL));
    tinfer_fails(g, false, BD_EMODEL, "'pooled_shape' must hold two sizes", NULL);
    bd_graph_destroy(g);
}

/* ---- resampling ----------------------------------------------------------------------------- */

static void test_upsample_scales_attribute_and_input(void **state)
{
    /* opset 7: the scales attribute; opset 9: a constant scales input, as Resize's opset 10 */
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 5, 4), "batch");
    bd_node *a = TNODE(g, "Upsample", 1, x);
    TATTR_FLOATS(g, a, "scales", 1, 1, 2, 1.5f);
    bd_value *sc = tweight(g, "sc", S(4));
    memcpy((void *)sc->data, (float[]){ 1, 1, 3, 2 }, 4 * sizeof(float));
    bd_node *b = TNODE(g, "Upsample", 1, x, sc);
    tinfer(g, false);
    tassert_shape(tout(a, 0), S(-1, 3, 10, 6));
    assert_string_equal(tout(a, 0)->shape.sym[0], "batch");
    tassert_shape(tout(b, 0), S(-1, 3, 15, 8));
    bd_graph_destroy(g);

    g = tgraph();                                          /* one scale short */
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5, 4), NULL);
    a = TNODE(g, "Upsample", 1, x);
    TATTR_FLOATS(g, a, "scales", 1, 2, 2);
    tinfer_fails(g, false, BD_EMODEL, "Upsample", "3 values for an input of rank 4", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* a zero scale */
    x = tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5, 4), NULL);
    a = TNODE(g, "Upsample", 1, x);
    TATTR_FLOATS(g, a, "scales", 1, 1, 0, 2);
    tinfer_fails(g, false, BD_EMODEL, "scales[2] = 0", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* neither attribute nor input */
    TNODE(g, "Upsample", 1, tinput(g, "x", BD_DT_FLOAT, S(1, 3, 5, 4), NULL));
    tinfer_fails(g, false, BD_EMODEL, "'scales' (FLOATS) is required", NULL);
    bd_graph_destroy(g);
}

/* ---- signal processing ---------------------------------------------------------------------- */

static void test_signal_ops(void **state)
{
    bd_graph *g = tgraph();
    bd_graph_set_opset(g, 17);
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(3, 10, 1), NULL);
    bd_node *dft = TNODE(g, "DFT", 1, x);
    bd_node *dft_len = TNODE(g, "DFT", 1, x, TINTS(g, "len", 16));
    tattr_int(g, dft_len, "onesided", 1);
    bd_node *dft_run = TNODE(g, "DFT", 1, x, tinput(g, "n", BD_DT_INT64, S(1), NULL));
    bd_node *stft = TNODE(g, "STFT", 1, x, tint_scalar(g, "step", 3), tweight(g, "win", S(4)));
    bd_node *stft_two = TNODE(g, "STFT", 1, x, tint_scalar(g, "step2", 2));
    tattr_int(g, stft_two, "onesided", 0);
    bd_node *hann = TNODE(g, "HannWindow", 1, tint_scalar(g, "size", 7));
    bd_node *ham = TNODE(g, "HammingWindow", 1, tinput(g, "size2", BD_DT_INT64, tscalar(), NULL));
    tattr_int(g, ham, "output_datatype", BD_DT_DOUBLE);
    bd_node *mel = TNODE(g, "MelWeightMatrix", 1, tint_scalar(g, "mels", 8),
                         tint_scalar(g, "dft", 16), tint_scalar(g, "rate", 8192),
                         tweight(g, "lo", tscalar()), tweight(g, "hi", tscalar()));
    tinfer(g, false);
    tassert_shape(tout(dft, 0), S(3, 10, 2));
    tassert_shape(tout(dft_len, 0), S(3, 9, 2));
    tassert_shape(tout(dft_run, 0), S(3, -1, 2));
    tassert_shape(tout(stft, 0), S(3, 3, 3, 2));
    tassert_shape(tout(stft_two, 0), S(3, 1, 10, 2));
    tassert_shape(tout(hann, 0), S(7));
    assert_int_equal(tout(hann, 0)->dtype, BD_DT_FLOAT);
    tassert_shape(tout(ham, 0), S(-1));
    assert_int_equal(tout(ham, 0)->dtype, BD_DT_DOUBLE);
    tassert_shape(tout(mel, 0), S(9, 8));
    bd_graph_destroy(g);

    g = tgraph();                                          /* the axis is the complex dim */
    bd_graph_set_opset(g, 17);
    bd_node *n = TNODE(g, "DFT", 1, tinput(g, "x", BD_DT_FLOAT, S(3, 10, 2), NULL));
    tattr_int(g, n, "axis", 2);
    tinfer_fails(g, false, BD_EMODEL, "DFT", "is the complex dim", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* frames longer than the signal */
    bd_graph_set_opset(g, 17);
    TNODE(g, "STFT", 1, tinput(g, "x", BD_DT_FLOAT, S(1, 5, 1), NULL), tint_scalar(g, "s", 1),
          tweight(g, "w", S(8)));
    tinfer_fails(g, false, BD_EMODEL, "longer than the signal", NULL);
    bd_graph_destroy(g);

    g = tgraph();                                          /* a negative window size */
    bd_graph_set_opset(g, 17);
    TNODE(g, "BlackmanWindow", 1, tint_scalar(g, "size", -2));
    tinfer_fails(g, false, BD_EMODEL, "size -2 is negative", NULL);
    bd_graph_destroy(g);
}

static void test_tfidf_vectorizer(void **state)
{
    bd_graph *g = tgraph();
    bd_node *one = TNODE(g, "TfIdfVectorizer", 1, tinput(g, "x", BD_DT_INT32, S(12), NULL));
    TATTR_INTS(g, one, "ngram_indexes", 0, 1, 2, 3, 4, 5, 6);
    bd_node *batch = TNODE(g, "TfIdfVectorizer", 1, tinput(g, "b", BD_DT_INT64, S(-1, 6), "batch"));
    TATTR_INTS(g, batch, "ngram_indexes", 4, 0, 9);
    tinfer(g, false);
    tassert_shape(tout(one, 0), S(7));
    assert_int_equal(tout(one, 0)->dtype, BD_DT_FLOAT);
    tassert_shape(tout(batch, 0), S(-1, 10));
    assert_string_equal(tout(batch, 0)->shape.sym[0], "batch");
    bd_graph_destroy(g);

    g = tgraph();
    TNODE(g, "TfIdfVectorizer", 1, tinput(g, "x", BD_DT_INT32, S(2, 3, 4), NULL));
    tinfer_fails(g, false, BD_EMODEL, "required", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    bd_node *n = TNODE(g, "TfIdfVectorizer", 1, tinput(g, "x", BD_DT_INT32, S(2, 3, 4), NULL));
    TATTR_INTS(g, n, "ngram_indexes", 0, 1);
    tinfer_fails(g, false, BD_EMODEL, "must be [C] or [B, C]", NULL);
    bd_graph_destroy(g);
}

/* ---- quantization -------------------------------------------------------------------------- */

static void test_integer_matmul_and_conv(void **state)
{
    bd_graph *g = tgraph();
    bd_value *a = tinput(g, "a", BD_DT_UINT8, S(2, 1, 3, 4), NULL);
    bd_value *b = tinput(g, "b", BD_DT_INT8, S(5, 4, 6), NULL);
    bd_node *mi = TNODE(g, "MatMulInteger", 1, a, b);
    bd_value *sc = tweight(g, "sc", tscalar());
    bd_value *yz = tinput(g, "yz", BD_DT_INT8, tscalar(), NULL);
    bd_node *qm = TNODE(g, "QLinearMatMul", 1, a, sc, tinput(g, "az", BD_DT_UINT8, tscalar(), NULL),
                        b, sc, tinput(g, "bz", BD_DT_INT8, tscalar(), NULL), sc, yz);
    bd_value *x = tinput(g, "x", BD_DT_UINT8, S(1, 2, 7, 7), NULL);
    bd_value *w = tinput(g, "w", BD_DT_UINT8, S(3, 2, 3, 3), NULL);
    bd_node *ci = TNODE(g, "ConvInteger", 1, x, w);
    TATTR_INTS(g, ci, "pads", 1, 1, 1, 1);
    bd_node *qc = TNODE(g, "QLinearConv", 1, x, sc, tinput(g, "xz", BD_DT_UINT8, tscalar(), NULL),
                        w, sc, tinput(g, "wz", BD_DT_UINT8, tscalar(), NULL), sc,
                        tinput(g, "cz", BD_DT_UINT8, tscalar(), NULL));
    TATTR_INTS(g, qc, "strides", 2, 2);
    tinfer(g, false);
    tassert_shape(tout(mi, 0), S(2, 5, 3, 6));
    assert_int_equal(tout(mi, 0)->dtype, BD_DT_INT32);
    tassert_shape(tout(qm, 0), S(2, 5, 3, 6));
    assert_int_equal(tout(qm, 0)->dtype, BD_DT_INT8);
    tassert_shape(tout(ci, 0), S(1, 3, 7, 7));
    assert_int_equal(tout(ci, 0)->dtype, BD_DT_INT32);
    tassert_shape(tout(qc, 0), S(1, 3, 3, 3));
    assert_int_equal(tout(qc, 0)->dtype, BD_DT_UINT8);
    bd_graph_destroy(g);

    g = tgraph();                                          /* K disagrees */
    TNODE(g, "MatMulInteger", 1, tinput(g, "a", BD_DT_UINT8, S(3, 4), NULL),
          tinput(g, "b", BD_DT_UINT8, S(5, 6), NULL));
    tinfer_fails(g, false, BD_EMODEL, "MatMulInteger", NULL);
    bd_graph_destroy(g);
}

static void test_quantize_dequantize(void **state)
{
    bd_graph *g = tgraph();
    bd_value *x = tinput(g, "x", BD_DT_FLOAT, S(-1, 3, 4), "batch");
    bd_value *scale = tweight(g, "scale", tscalar());
    int8_t zp_v = 0;
    bd_value *zp = tl_const(g, "zp", BD_DT_INT8, 0, NULL, &zp_v);
    bd_node *q = TNODE(g, "QuantizeLinear", 1, x, scale, zp);
    bd_node *q8 = TNODE(g, "QuantizeLinear", 1, x, scale);
    bd_value *axis_scale = tweight(g, "axis_scale", S(3));
    bd_node *dq = TNODE(g, "DequantizeLinear", 1, tout(q, 0), axis_scale);
    bd_node *dyn = TNODE(g, "DynamicQuantizeLinear", 3, x);
    tinfer(g, false);
    tassert_shape(tout(q, 0), S(-1, 3, 4));
    assert_string_equal(tout(q, 0)->shape.sym[0], "batch");
    assert_int_equal(tout(q, 0)->dtype, BD_DT_INT8);
    assert_int_equal(tout(q8, 0)->dtype, BD_DT_UINT8);
    tassert_shape(tout(dq, 0), S(-1, 3, 4));
    assert_int_equal(tout(dq, 0)->dtype, BD_DT_FLOAT);
    assert_int_equal(tout(dyn, 0)->dtype, BD_DT_UINT8);
    tassert_shape(tout(dyn, 1), tscalar());
    assert_int_equal(tout(dyn, 1)->dtype, BD_DT_FLOAT);
    assert_int_equal(tout(dyn, 2)->dtype, BD_DT_UINT8);
    bd_graph_destroy(g);

    g = tgraph();                                          /* per-axis scale of another length */
    x = tinput(g, "x", BD_DT_FLOAT, S(2, 3, 4), NULL);
    TNODE(g, "QuantizeLinear", 1, x, tweight(g, "scale", S(4)));
    tinfer_fails(g, false, BD_EMODEL, "QuantizeLinear", "the per-axis scale's length", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_UINT8, S(2, 3, 4), NULL);
    TNODE(g, "DequantizeLinear", 1, x, tweight(g, "scale", S(3)),
          tinput(g, "zp", BD_DT_UINT8, S(2), NULL));
    tinfer_fails(g, false, BD_EMODEL, "zero point 'zp' [2] must have the scale's shape [3]", NULL);
    bd_graph_destroy(g);

    g = tgraph();
    x = tinput(g, "x", BD_DT_UINT8, S(2, 3, 4), NULL);
    TNODE(g, "DequantizeLinear", 1, x, tweight(g, "scale", S(3, 1)));
    tinfer_fails(g, false, BD_EMODEL, "must be a scalar or 1-D", NULL);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_transpose_output_dims),
        cmocka_unit_test(test_conv_transpose_groups_bias_and_dynamic_dims),
        cmocka_unit_test(test_conv_transpose_malformed),
        cmocka_unit_test(test_max_unpool),
        cmocka_unit_test(test_lp_pools),
        cmocka_unit_test(test_normalisations_keep_shape),
        cmocka_unit_test(test_normalisations_malformed),
        cmocka_unit_test(test_lstm_shapes_by_direction_and_layout),
        cmocka_unit_test(test_gru_and_rnn),
        cmocka_unit_test(test_recurrent_malformed),
        cmocka_unit_test(test_losses_by_reduction),
        cmocka_unit_test(test_losses_malformed),
        cmocka_unit_test(test_grid_sample_and_roi_align),
        cmocka_unit_test(test_max_roi_pool),
        cmocka_unit_test(test_upsample_scales_attribute_and_input),
        cmocka_unit_test(test_signal_ops),
        cmocka_unit_test(test_tfidf_vectorizer),
        cmocka_unit_test(test_integer_matmul_and_conv),
        cmocka_unit_test(test_quantize_dequantize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
