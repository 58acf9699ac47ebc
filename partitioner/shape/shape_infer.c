/* The op -> rule table and the driver that walks the sorted graph applying it. */
#include "partitioner/shape/shape_infer.h"
#include "partitioner/shape/shape_rules.h"

#include <stdint.h>
#include <string.h>

/* An op's rule and its arity, which the driver checks before the rule runs: between MIN_IN
 * and MAX_IN inputs of the op's own (SHP_ANY: no upper bound), the first MIN_IN present, and
 * between 1 and MAX_OUT outputs. Rules read inputs past MIN_IN through shp_in(), which
 * returns NULL for an omitted optional input. */
typedef struct shp_entry {
    const char *op_type;
    shp_rule_fn rule;
    size_t      min_in, max_in, max_out;
} shp_entry;

#define SHP_ANY SIZE_MAX

/* ONNX default domain (opsets 7-17): op, rule, min and max inputs, max outputs. */
static const shp_entry onnx_rules[] = {
    { "Conv",               shp_conv,                2, 3,        1 },
    { "MaxPool",            shp_pool,                1, 1,        2 },
    { "AveragePool",        shp_pool,                1, 1,        1 },
    { "GlobalAveragePool",  shp_global_pool,         1, 1,        1 },
    { "GlobalMaxPool",      shp_global_pool,         1, 1,        1 },
    { "MatMul",             shp_matmul,              2, 2,        1 },
    { "Gemm",               shp_gemm,                2, 3,        1 },
    { "Det",                shp_det,                 1, 1,        1 },
    { "Relu",               shp_unary,               1, 1,        1 },
    { "LeakyRelu",          shp_unary,               1, 1,        1 },
    { "Sigmoid",            shp_unary,               1, 1,        1 },
    { "Tanh",               shp_unary,               1, 1,        1 },
    { "Erf",                shp_unary,               1, 1,        1 },
    { "Gelu",               shp_unary,               1, 1,        1 },
    { "Sqrt",               shp_unary,               1, 1,        1 },
    { "Exp",                shp_unary,               1, 1,        1 },
    { "Log",                shp_unary,               1, 1,        1 },
    { "Neg",                shp_unary,               1, 1,        1 },
    { "Abs",                shp_unary,               1, 1,        1 },
    { "Reciprocal",         shp_unary,               1, 1,        1 },
    { "Elu",                shp_unary,               1, 1,        1 },
    { "HardSigmoid",        shp_unary,               1, 1,        1 },
    { "HardSwish",          shp_unary,               1, 1,        1 },
    { "Softplus",           shp_unary,               1, 1,        1 },
    { "Not",                shp_unary,               1, 1,        1 },
    { "Clip",               shp_clip,                1, 3,        1 },
    { "Dropout",            shp_dropout,             1, 3,        2 },
    { "Add",                shp_binary,              2, 2,        1 },
    { "Sub",                shp_binary,              2, 2,        1 },
    { "Mul",                shp_binary,              2, 2,        1 },
    { "Div",                shp_binary,              2, 2,        1 },
    { "Pow",                shp_binary,              2, 2,        1 },
    { "Equal",              shp_compare,             2, 2,        1 },
    { "Less",               shp_compare,             2, 2,        1 },
    { "Greater",            shp_compare,             2, 2,        1 },
    { "Where",              shp_where,               3, 3,        1 },
    { "ReduceMean",         shp_reduce,              1, 2,        1 },
    { "ReduceSum",          shp_reduce,              1, 2,        1 },
    { "ReduceMax",          shp_reduce,              1, 2,        1 },
    { "ReduceMin",          shp_reduce,              1, 2,        1 },
    { "ReduceProd",         shp_reduce,              1, 2,        1 },
    { "ArgMax",             shp_argreduce,           1, 1,        1 },
    { "ArgMin",             shp_argreduce,           1, 1,        1 },
    { "BatchNormalization", shp_batchnorm,           5, 5,        5 },
    { "LayerNormalization", shp_layernorm,           2, 3,        3 },
    { "Softmax",            shp_softmax,             1, 1,        1 },
    { "LogSoftmax",         shp_softmax,             1, 1,        1 },
    { "Reshape",            shp_reshape,             1, 2,        1 },
    { "Flatten",            shp_flatten,             1, 1,        1 },
    { "Transpose",          shp_transpose,           1, 1,        1 },
    { "Squeeze",            shp_squeeze,             1, 2,        1 },
    { "Unsqueeze",          shp_unsqueeze,           1, 2,        1 },
    { "Concat",             shp_concat,              1, SHP_ANY,  1 },
    { "Identity",           shp_identity,            1, 1,        1 },
    { "Cast",               shp_cast,                1, 1,        1 },
    { "Gather",             shp_gather,              2, 2,        1 },
    { "GatherElements",     shp_gather_elements,     2, 2,        1 },
    { "Slice",              shp_slice,               1, 5,        1 },
    { "Shape",              shp_shape,               1, 1,        1 },
    { "Size",               shp_size,                1, 1,        1 },
    { "Constant",           shp_constant,            0, 0,        1 },
    { "ConstantOfShape",    shp_constant_of_shape,   1, 1,        1 },
    { "Range",              shp_range,               3, 3,        1 },
    { "Expand",             shp_expand,              2, 2,        1 },
    { "Split",              shp_split,               1, 2,       64 },
    { "Tile",               shp_tile,                2, 2,        1 },
    { "Pad",                shp_pad,                 1, 4,        1 },
    { "Resize",             shp_resize,              1, 4,        1 },
    { "Upsample",           shp_upsample,            1, 2,        1 },
    { "PRelu",              shp_prelu,               2, 2,        1 },
    { "Max",                shp_variadic,            1, SHP_ANY,  1 },
    { "Min",                shp_variadic,            1, SHP_ANY,  1 },
    { "TopK",               shp_topk,                1, 2,        2 },
    { "NonZero",            shp_nonzero,             1, 1,        1 },
    { "NonMaxSuppression",  shp_nms,                 2, 5,        1 },
    /* unary elementwise */
    { "Acos",               shp_unary,               1, 1,        1 },
    { "Acosh",              shp_unary,               1, 1,        1 },
    { "Asin",               shp_unary,               1, 1,        1 },
    { "Asinh",              shp_unary,               1, 1,        1 },
    { "Atan",               shp_unary,               1, 1,        1 },
    { "Atanh",              shp_unary,               1, 1,        1 },
    { "Cos",                shp_unary,               1, 1,        1 },
    { "Cosh",               shp_unary,               1, 1,        1 },
    { "Sin",                shp_unary,               1, 1,        1 },
    { "Sinh",               shp_unary,               1, 1,        1 },
    { "Tan",                shp_unary,               1, 1,        1 },
    { "Ceil",               shp_unary,               1, 1,        1 },
    { "Floor",              shp_unary,               1, 1,        1 },
    { "Round",              shp_unary,               1, 1,        1 },
    { "Sign",               shp_unary,               1, 1,        1 },
    { "Softsign",           shp_unary,               1, 1,        1 },
    { "Mish",               shp_unary,               1, 1,        1 },
    { "Celu",               shp_unary,               1, 1,        1 },
    { "Selu",               shp_unary,               1, 1,        1 },
    { "Shrink",             shp_unary,               1, 1,        1 },
    { "ThresholdedRelu",    shp_unary,               1, 1,        1 },
    { "IsInf",              shp_unary_bool,          1, 1,        1 },
    { "IsNaN",              shp_unary_bool,          1, 1,        1 },
    { "CastLike",           shp_cast_like,           2, 2,        1 },
    /* binary and variadic elementwise */
    { "Mod",                shp_binary,              2, 2,        1 },
    { "BitShift",           shp_binary,              2, 2,        1 },
    { "LessOrEqual",        shp_compare,             2, 2,        1 },
    { "GreaterOrEqual",     shp_compare,             2, 2,        1 },
    { "And",                shp_logical,             2, 2,        1 },
    { "Or",                 shp_logical,             2, 2,        1 },
    { "Xor",                shp_logical,             2, 2,        1 },
    { "Sum",                shp_variadic,            1, SHP_ANY,  1 },
    { "Mean",               shp_variadic,            1, SHP_ANY,  1 },
    /* reductions and scans */
    { "ReduceL1",           shp_reduce,              1, 2,        1 },
    { "ReduceL2",           shp_reduce,              1, 2,        1 },
    { "ReduceLogSum",       shp_reduce,              1, 2,        1 },
    { "ReduceLogSumExp",    shp_reduce,              1, 2,        1 },
    { "ReduceSumSquare",    shp_reduce,              1, 2,        1 },
    { "CumSum",             shp_cumsum,              2, 2,        1 },
    { "Hardmax",            shp_softmax,             1, 1,        1 },
    /* rearranging, indexing, scattering */
    { "DepthToSpace",       shp_depth_space,         1, 1,        1 },
    { "SpaceToDepth",       shp_depth_space,         1, 1,        1 },
    { "ReverseSequence",    shp_reverse_sequence,    2, 2,        1 },
    { "Trilu",              shp_trilu,               1, 2,        1 },
    { "EyeLike",            shp_eye_like,            1, 1,        1 },
    { "OneHot",             shp_onehot,              3, 3,        1 },
    { "GatherND",           shp_gather_nd,           2, 2,        1 },
    { "ScatterND",          shp_scatter_nd,          3, 3,        1 },
    { "ScatterElements",    shp_scatter_elements,    3, 3,        1 },
    { "Scatter",            shp_scatter_elements,    3, 3,        1 },
    { "Einsum",             shp_einsum,              1, SHP_ANY,  1 },
    /* control flow: inputs past the op's own are its bodies' implicit reads (not counted) */
    { "If",                 shp_if,                  1, 1,        SHP_ANY },
    { "Loop",               shp_loop,                0, SHP_ANY,  SHP_ANY },
    { "Scan",               shp_scan,                0, SHP_ANY,  SHP_ANY },
    /* outputs sized by the data */
    { "Compress",           shp_compress,            2, 2,        1 },
    { "Unique",             shp_unique,              1, 1,        4 },
    /* windows */
    { "ConvTranspose",      shp_conv_transpose,      2, 3,        1 },
    { "MaxUnpool",          shp_max_unpool,          2, 3,        1 },
    { "LpPool",             shp_pool,                1, 1,        1 },
    { "GlobalLpPool",       shp_global_pool,         1, 1,        1 },
    /* normalisations */
    { "LRN",                shp_lrn,                 1, 1,        1 },
    { "InstanceNormalization", shp_instancenorm,     3, 3,        1 },
    { "MeanVarianceNormalization", shp_mvn,          1, 1,        1 },
    { "LpNormalization",    shp_lpnorm,              1, 1,        1 },
    /* recurrent layers: X, W, R, then optional B, sequence_lens, initial_h (, initial_c, P) */
    { "LSTM",               shp_rnn,                 3, 8,        3 },
    { "GRU",                shp_rnn,                 3, 6,        2 },
    { "RNN",                shp_rnn,                 3, 6,        2 },
    /* losses */
    { "NegativeLogLikelihoodLoss", shp_loss,         2, 3,        1 },
    { "SoftmaxCrossEntropyLoss", shp_loss,           2, 3,        2 },
    /* sampling */
    { "GridSample",         shp_grid_sample,         2, 2,        1 },
    { "RoiAlign",           shp_roi_align,           3, 3,        1 },
    { "MaxRoiPool",         shp_max_roi_pool,        2, 2,        1 },
    /* signal processing */
    { "DFT",                shp_dft,                 1, 2,        1 },
    { "STFT",               shp_stft,                2, 4,        1 },
    { "HannWindow",         shp_window,              1, 1,        1 },
    { "HammingWindow",      shp_window,              1, 1,        1 },
    { "BlackmanWindow",     shp_window,              1, 1,        1 },
    { "MelWeightMatrix",    shp_mel_weight,          5, 5,        1 },
    /* text features */
    { "TfIdfVectorizer",    shp_tfidf,               1, 1,        1 },
    /* quantization */
    { "QuantizeLinear",     shp_quantize,            2, 3,        1 },
    { "DequantizeLinear",   shp_quantize,            2, 3,        1 },
    { "DynamicQuantizeLinear", shp_dynamic_quantize, 1, 1,        3 },
    { "MatMulInteger",      shp_integer_op,          2, 4,        1 },
    { "ConvInteger",        shp_integer_op,          2, 4,        1 },
    { "QLinearMatMul",      shp_integer_op,          8, 8,        1 },
    { "QLinearConv",        shp_integer_op,          8, 9,        1 },
};

/* onnxruntime's quantized ops (domain com.microsoft) that its QOperator format writes. */
static const shp_entry ms_rules[] = {
    { "QLinearAdd",               shp_ms_quantized,  7, 8,        1 },
    { "QLinearMul",               shp_ms_quantized,  7, 8,        1 },
    { "QLinearGlobalAveragePool", shp_ms_quantized,  4, 5,        1 },
    { "QGemm",                    shp_ms_quantized,  6, 9,        1 },
};

/* Composites braid creates (domain "braid"). */
static const shp_entry braid_rules[] = {
    { "Gelu",               shp_unary,               1, 1,        1 },
    { "Swish",              shp_unary,               1, 1,        1 },
    { "FakeQuantize",       shp_unary,               1, 1,        1 },
    { "ChannelShuffle",     shp_channel_shuffle,     1, SHP_ANY,  1 },
};

static const shp_entry *find_rule(const char *domain, const char *op_type)
{
    const shp_entry *table;
    size_t count;
    if (!op_type)
        return NULL;
    if (!domain || !*domain || strcmp(domain, "ai.onnx") == 0) {
        table = onnx_rules;
        count = sizeof onnx_rules / sizeof *onnx_rules;
    } else if (strcmp(domain, "braid") == 0) {
        table = braid_rules;
        count = sizeof braid_rules / sizeof *braid_rules;
    } else if (strcmp(domain, "com.microsoft") == 0) {
        table = ms_rules;
        count = sizeof ms_rules / sizeof *ms_rules;
    } else {
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        if (strcmp(table[i].op_type, op_type) == 0)
            return &table[i];
    return NULL;
}

bool bd_shape_has_rule(const char *domain, const char *op_type)
{
    return find_rule(domain, op_type) != NULL;
}

/* N's inputs and outputs number what rule E expects (inputs appended by fused post-ops are
 * not counted). */
static int check_arity(const bd_node *n, const shp_entry *e, bd_error *err)
{
    size_t nin = shp_n_inputs(n), min_in = e->min_in, max_in = e->max_in;
    if (max_in == SHP_ANY)
        max_in = nin > min_in ? nin : min_in;
    if (nin < min_in || nin > max_in) {
        if (min_in == max_in)
            return shp_fail(err, n, "expected %zu input%s, got %zu", min_in,
                            min_in == 1 ? "" : "s", nin);
        return shp_fail(err, n, "expected %zu to %zu inputs, got %zu", min_in, max_in, nin);
    }
    for (size_t i = 0; i < min_in; i++)
        if (!n->inputs[i])
            return shp_fail(err, n, "required input %zu is missing", i);
    if (n->n_outputs < 1 || n->n_outputs > e->max_out) {
        if (e->max_out == 1)
            return shp_fail(err, n, "expected 1 output, got %zu", n->n_outputs);
        return shp_fail(err, n, "expected 1 to %zu outputs, got %zu", e->max_out, n->n_outputs);
    }
    return 0;
}

/* An input shape the rules can trust: rank within bounds, dims -1 or >= 0. */
static int check_input(const bd_node *n, const bd_value *v, bd_error *err)
{
    if (v->shape.rank > BD_MAX_RANK)
        return shp_unsupported(err, n, "input '%s' has rank %d, above braid's maximum %d",
                               v->name, v->shape.rank, BD_MAX_RANK);
    for (int i = 0; i < v->shape.rank; i++)
        if (v->shape.dims[i] < -1)
            return shp_fail(err, n, "input '%s' has invalid dim %lld", v->name,
                            (long long)v->shape.dims[i]);
    return 0;
}

/* Fused SUM/BINARY post-ops read another input that must broadcast to output 0 without
 * changing it (the fused node writes output 0 in place). */
static int check_postops(const bd_node *n, bd_error *err)
{
    const bd_value *y = n->n_outputs ? n->outputs[0] : NULL;
    for (int p = 0; p < n->n_post && p < BD_MAX_POSTOPS; p++) {
        const bd_postop *po = &n->post[p];
        if (po->kind != BD_POST_SUM && po->kind != BD_POST_BINARY)
            continue;
        if (po->input < 0 || (size_t)po->input >= n->n_inputs || !n->inputs[po->input])
            return shp_fail(err, n, "post-op %d reads input %d, which is missing", p, po->input);
        const bd_value *v = n->inputs[po->input];
        if (!y || !shp_ranked(v) || !shp_ranked(y))
            continue;
        bd_shape s;
        char sv[96], sy[96];
        bool fits = v->shape.rank <= y->shape.rank && shp_broadcast(n, &y->shape, &v->shape, &s, NULL) == 0;
        for (int i = 0; fits && i < s.rank; i++)
            fits = y->shape.dims[i] < 0 || s.dims[i] == y->shape.dims[i];
        if (fits && po->kind == BD_POST_SUM)
            fits = v->shape.rank == y->shape.rank;
        if (!fits)
            return shp_fail(err, n, "post-op %d operand '%s' %s does not fit output %s", p,
                            v->name, shp_str(&v->shape, sv, sizeof sv),
                            shp_str(&y->shape, sy, sizeof sy));
    }
    return 0;
}

static int infer_node(bd_graph *g, bd_node *n, bool require_static, bd_error *err)
{
    for (size_t k = 0; k < n->n_inputs; k++)
        if (n->inputs[k]) {
            int rc = check_input(n, n->inputs[k], err);
            if (rc)
                return rc;
        }
    /* Forget constants folded by an earlier run: they may depend on other input shapes. */
    for (size_t k = 0; k < n->n_outputs; k++) {
        n->outputs[k]->data   = NULL;
        n->outputs[k]->nbytes = 0;
    }
    const shp_entry *e = find_rule(n->domain, n->op_type);
    if (!e) {
        if (require_static)
            return shp_unsupported(err, n, "no shape rule for op '%s%s%s'",
                                   n->domain && *n->domain ? n->domain : "",
                                   n->domain && *n->domain ? "." : "", n->op_type);
        /* Keep what the frontend declared (e.g. TensorFlow's _output_shapes): that is all
         * anyone knows of an op without a rule, and it lets oneDNN take what follows. */
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k]->shape.rank < 0)
                shp_set_unknown(n->outputs[k], n->outputs[k]->dtype);
        return 0;
    }
    int rc = check_arity(n, e, err);
    if (rc || (rc = e->rule(g, n, err)) || (rc = check_postops(n, err)))
        return rc;
    if (require_static)
        for (size_t k = 0; k < n->n_outputs; k++) {
            const bd_value *v = n->outputs[k];
            if (!shp_is_static(&v->shape)) {
                char buf[128];
                return shp_unsupported(err, n, "output '%s' has shape %s, not static", v->name,
                                       shp_str(&v->shape, buf, sizeof buf));
            }
        }
    return 0;
}

/* ONNX opsets the rules implement: another opset's ops may mean something else (opset 6's
 * legacy broadcast, opset 18's Split num_outputs), so such a graph keeps only the shapes its
 * file declares (its nodes all run on the fallback engine, which knows its opset). */
enum { SHP_OPSET_MIN = 7, SHP_OPSET_MAX = 17 };

static bool rules_apply(const bd_graph *g)
{
    int64_t opset = bd_graph_opset(g);
    return strcmp(bd_graph_framework(g), "onnx") != 0 || opset <= 0 ||
           (opset >= SHP_OPSET_MIN && opset <= SHP_OPSET_MAX);
}

int bd_shape_infer(bd_graph *g, bool require_static, bd_error *err)
{
    size_t count = bd_graph_num_nodes(g);
    if (!rules_apply(g)) {
        if (require_static && count)
            return bd_error_set(err, BD_EUNSUPPORTED, "opset %lld: braid's shape rules cover "
                                "ONNX opsets %d-%d", (long long)bd_graph_opset(g), SHP_OPSET_MIN,
                                SHP_OPSET_MAX);
        for (size_t i = 0; i < count; i++) {
            bd_node *n = bd_graph_node(g, i);
            for (size_t k = 0; k < n->n_outputs; k++) {
                n->outputs[k]->data   = NULL;
                n->outputs[k]->nbytes = 0;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        int rc = infer_node(g, bd_graph_node(g, i), require_static, err);
        if (rc)
            return rc;
    }
    return 0;
}
