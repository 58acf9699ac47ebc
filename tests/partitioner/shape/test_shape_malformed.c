/* Hostile models: every rule, fed random ranks, dims (dynamic, 0, huge), constant inputs and
 * attributes of random types, lengths and extreme values, must answer 0, BD_EMODEL or
 * BD_EUNSUPPORTED with a message, and never crash, overflow or read out of bounds (this test
 * is most useful under -Db_sanitize=address,undefined). Deterministic and bounded;
 * BRAID_FUZZ_SEED and BRAID_FUZZ_ITERS (at most 10^7) explore further by hand. */
#include "tests/partitioner/shape/shape_test.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t pick(const int64_t *vals, size_t n)
{
    return vals[rnd() % n];
}

static const int64_t interesting[] = {
    -1, 0, 1, 2, 3, 4, 7, -2, -3, 8, 9, 64, INT64_MAX, INT64_MIN, INT64_MAX / 2 + 1, 1 << 20,
};

static bd_shape random_shape(void)
{
    static const int64_t dims[] = { -1, 0, 1, 1, 2, 2, 3, 4, 4, 5, 8, 1 << 30, INT64_MAX / 4 };
    bd_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rnd() % 4 ? (int)(rnd() % 5) : (int)(rnd() % (BD_MAX_RANK + 2)) - 1; /* -1 .. 8 */
    for (int i = 0; i < s.rank; i++)
        s.dims[i] = pick(dims, sizeof dims / sizeof *dims);
    return s;
}

static bd_value *random_input(bd_graph *g, int i)
{
    char name[32];
    snprintf(name, sizeof name, "in%d", i);
    if (rnd() % 3 == 0) {
        /* A small INT64 constant (axes, shape, indices, starts...). */
        size_t count = rnd() % 5;
        int64_t vals[5];
        for (size_t k = 0; k < count; k++)
            vals[k] = pick(interesting, sizeof interesting / sizeof *interesting);
        return rnd() % 4 ? tints(g, name, count, vals) : tint_scalar(g, name, vals[0] = 1);
    }
    static const int dtypes[] = { BD_DT_FLOAT, BD_DT_INT64, BD_DT_INT32, BD_DT_UNDEFINED };
    bd_value *v;
    bd_error err = { 0 };
    bd_shape s = random_shape();
    assert_int_equal(bd_graph_add_value(g, name, dtypes[rnd() % 4], &s, &v, &err), 0);
    assert_int_equal(bd_graph_mark_input(g, v, &err), 0);
    return v;
}

static void random_attr(bd_graph *g, bd_node *n)
{
    static const char *const names[] = {
        "axis", "axes", "perm", "kernel_shape", "strides", "pads", "dilations", "group",
        "auto_pad", "ceil_mode", "keepdims", "allowzero", "transA", "transB", "to", "start",
        "end", "starts", "ends", "shape", "value_ints", "value_int", "stash_type",
        "noop_with_empty_axes", "split", "fmod", "direction", "blocksize", "mode", "batch_dims",
        "equation", "hidden_size", "layout", "reduction", "output_shape", "output_padding", "size",
        "p", "upper", "dtype", "batch_axis", "time_axis", "output_height", "output_width",
        "sampling_ratio", "sorted", "padding_mode", "ignore_index",
    };
    const char *name = names[rnd() % (sizeof names / sizeof *names)];
    switch (rnd() % 4) {
    case 0:
        tattr_int(g, n, name, pick(interesting, sizeof interesting / sizeof *interesting));
        break;
    case 1: {
        int64_t vals[10];
        size_t count = rnd() % 10;
        for (size_t k = 0; k < count; k++)
            vals[k] = pick(interesting, sizeof interesting / sizeof *interesting);
        tattr_ints(g, n, name, count, vals);
        break;
    }
    case 2: {
        static const char *const strs[] = {
            "SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET", "", "x", "LEFT", "bidirectional",
            "reverse", "CRD", "none", "sum", "ij,jk->ik", "...ii->...i", "i,i", "a...b.", "->",
        };
        tattr_str(g, n, name, strs[rnd() % (sizeof strs / sizeof *strs)]);
        break;
    }
    default:
        tattr_float(g, n, name, -1.5f);
    }
}

static void test_random_malformed_nodes_never_crash(void **state)
{
    /* Each op with its usual input count range, so most nodes get past the arity check. */
    static const struct { const char *op; size_t lo, hi; } ops[] = {
        { "Conv", 2, 3 }, { "MaxPool", 1, 1 }, { "AveragePool", 1, 1 },
        { "GlobalAveragePool", 1, 1 }, { "MatMul", 2, 2 }, { "Gemm", 2, 3 }, { "Relu", 1, 1 },
        { "Clip", 1, 3 }, { "Add", 2, 2 }, { "Div", 2, 2 }, { "Pow", 2, 2 }, { "Where", 3, 3 },
        { "Equal", 2, 2 }, { "ReduceMean", 1, 1 }, { "ReduceSum", 1, 2 },
        { "BatchNormalization", 5, 5 }, { "LayerNormalization", 2, 3 }, { "Softmax", 1, 1 },
        { "Reshape", 2, 2 }, { "Flatten", 1, 1 }, { "Transpose", 1, 1 }, { "Squeeze", 1, 2 },
        { "Unsqueeze", 1, 2 }, { "Concat", 1, 4 }, { "Identity", 1, 1 }, { "Cast", 1, 1 },
        { "Shape", 1, 1 }, { "Gather", 2, 2 }, { "Slice", 3, 5 }, { "Constant", 0, 0 },
        { "ConstantOfShape", 1, 1 }, { "Dropout", 1, 3 }, { "Expand", 2, 2 },
        { "Range", 3, 3 }, { "Split", 1, 2 }, { "Less", 2, 2 }, { "Mul", 2, 2 },
        { "Tile", 2, 2 }, { "Cos", 1, 1 }, { "IsNaN", 1, 1 }, { "CastLike", 2, 2 },
        { "Mod", 2, 2 }, { "BitShift", 2, 2 }, { "And", 2, 2 }, { "GreaterOrEqual", 2, 2 },
        { "Sum", 1, 4 }, { "Mean", 1, 3 }, { "ReduceLogSumExp", 1, 2 }, { "CumSum", 2, 2 },
        { "Hardmax", 1, 1 }, { "DepthToSpace", 1, 1 }, { "SpaceToDepth", 1, 1 },
        { "ReverseSequence", 2, 2 }, { "Trilu", 1, 2 }, { "EyeLike", 1, 1 }, { "OneHot", 3, 3 },
        { "GatherND", 2, 2 }, { "ScatterND", 3, 3 }, { "ScatterElements", 3, 3 },
        { "Einsum", 1, 3 }, { "Compress", 2, 2 }, { "Unique", 1, 1 }, { "ConvTranspose", 2, 3 },
        { "MaxUnpool", 2, 3 }, { "LpPool", 1, 1 }, { "GlobalLpPool", 1, 1 }, { "LRN", 1, 1 },
        { "InstanceNormalization", 3, 3 }, { "MeanVarianceNormalization", 1, 1 },
        { "LpNormalization", 1, 1 }, { "LSTM", 3, 8 }, { "GRU", 3, 6 }, { "RNN", 3, 6 },
        { "NegativeLogLikelihoodLoss", 2, 3 }, { "SoftmaxCrossEntropyLoss", 2, 3 },
        { "GridSample", 2, 2 }, { "RoiAlign", 3, 3 }, { "QuantizeLinear", 2, 3 },
        { "DequantizeLinear", 2, 3 }, { "DynamicQuantizeLinear", 1, 1 }, { "Upsample", 1, 2 },
        { "MaxRoiPool", 2, 2 }, { "DFT", 1, 2 }, { "STFT", 2, 4 }, { "HannWindow", 1, 1 },
        { "MelWeightMatrix", 5, 5 }, { "Det", 1, 1 },
        { "TfIdfVectorizer", 1, 1 }, { "NonMaxSuppression", 2, 5 }, { "MatMulInteger", 2, 4 },
        { "ConvInteger", 2, 4 }, { "QLinearMatMul", 8, 8 }, { "QLinearConv", 8, 9 },
    };
    int answered[3] = { 0 };
    const char *seed = getenv("BRAID_FUZZ_SEED"), *iters_s = getenv("BRAID_FUZZ_ITERS");
    long iters = iters_s ? strtol(iters_s, NULL, 10) : 60000;
    iters = iters < 1000 ? 1000 : iters > 10000000 ? 10000000 : iters;
    if (seed)
        rng_state = strtoull(seed, NULL, 10) | 1;
    for (long iter = 0; iter < iters; iter++) {
        bd_graph *g = tgraph();
        size_t which = rnd() % (sizeof ops / sizeof *ops);
        const char *op = ops[which].op;
        size_t n_in = ops[which].lo + rnd() % (ops[which].hi - ops[which].lo + 1);
        size_t n_out = rnd() % 8 ? 1 : 1 + rnd() % 3;
        if (rnd() % 16 == 0)
            n_in = rnd() % 7;
        bd_value *in[16];               /* the most inputs of an op above, QLinearConv: 9 */
        for (size_t i = 0; i < n_in; i++)
            in[i] = rnd() % 16 ? random_input(g, (int)i) : NULL;
        bd_node *n = tnode(g, op, in, n_in, n_out);
        for (int a = (int)(rnd() % 3); a > 0; a--)
            random_attr(g, n);
        bd_error err = { 0 };
        int rc = bd_shape_infer(g, rnd() % 2, &err);
        if (rc != 0 && rc != BD_EMODEL && rc != BD_EUNSUPPORTED)
            fail_msg("op %s: unexpected %s: %s", op, bd_status_name(rc), err.msg);
        if (rc != 0 && !strstr(err.msg, n->name))
            fail_msg("op %s: message does not name the node: '%s'", op, err.msg);
        for (size_t k = 0; rc == 0 && k < n_out; k++) {
            const bd_shape *s = &n->outputs[k]->shape;
            assert_true(s->rank >= -1 && s->rank <= BD_MAX_RANK);
            for (int d = 0; d < s->rank; d++)
                assert_true(s->dims[d] >= -1);
        }
        answered[rc == 0 ? 0 : rc == BD_EMODEL ? 1 : 2]++;
        bd_graph_destroy(g);
    }
    print_message("ok %d, EMODEL %d, EUNSUPPORTED %d\n", answered[0], answered[1], answered[2]);
    /* The generator must exercise both the success and the failure paths. */
    assert_true(answered[0] > 100);
    assert_true(answered[1] > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_malformed_nodes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
