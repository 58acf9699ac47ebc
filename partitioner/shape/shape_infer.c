/* The op -> rule table and the driver that walks the sorted graph applying it. */
#include "partitioner/shape/shape_infer.h"
#include "partitioner/shape/shape_rules.h"

#include <string.h>

typedef struct shp_entry {
    const char *op_type;
    shp_rule_fn rule;
} shp_entry;

/* ONNX default domain (opsets 7-17). */
static const shp_entry onnx_rules[] = {
    { "Conv", shp_conv },
    { "MaxPool", shp_pool },              { "AveragePool", shp_pool },
    { "GlobalAveragePool", shp_global_pool }, { "GlobalMaxPool", shp_global_pool },
    { "MatMul", shp_matmul },             { "Gemm", shp_gemm },
    { "Relu", shp_unary },                { "LeakyRelu", shp_unary },
    { "Sigmoid", shp_unary },             { "Tanh", shp_unary },
    { "Erf", shp_unary },                 { "Gelu", shp_unary },
    { "Sqrt", shp_unary },                { "Exp", shp_unary },
    { "Log", shp_unary },                 { "Neg", shp_unary },
    { "Abs", shp_unary },                 { "Reciprocal", shp_unary },
    { "Elu", shp_unary },                 { "HardSigmoid", shp_unary },
    { "HardSwish", shp_unary },           { "Softplus", shp_unary },
    { "Not", shp_unary },
    { "Clip", shp_clip },                 { "Dropout", shp_dropout },
    { "Add", shp_binary },                { "Sub", shp_binary },
    { "Mul", shp_binary },                { "Div", shp_binary },
    { "Pow", shp_binary },
    { "Equal", shp_compare },             { "Less", shp_compare },
    { "Greater", shp_compare },           { "Where", shp_where },
    { "ReduceMean", shp_reduce },         { "ReduceSum", shp_reduce },
    { "ReduceMax", shp_reduce },          { "ReduceMin", shp_reduce },
    { "ReduceProd", shp_reduce },         { "ArgMax", shp_argreduce },
    { "ArgMin", shp_argreduce },
    { "BatchNormalization", shp_batchnorm },
    { "LayerNormalization", shp_layernorm },
    { "Softmax", shp_softmax },           { "LogSoftmax", shp_softmax },
    { "Reshape", shp_reshape },           { "Flatten", shp_flatten },
    { "Transpose", shp_transpose },       { "Squeeze", shp_squeeze },
    { "Unsqueeze", shp_unsqueeze },       { "Concat", shp_concat },
    { "Identity", shp_identity },         { "Cast", shp_cast },
    { "Gather", shp_gather },             { "GatherElements", shp_gather_elements },             { "Slice", shp_slice },
    { "Shape", shp_shape },               { "Size", shp_size },
    { "Constant", shp_constant },
    { "ConstantOfShape", shp_constant_of_shape }, { "Range", shp_range },
    { "Expand", shp_expand },             { "Split", shp_split },
    { "Tile", shp_tile },
    { "Pad", shp_pad },                   { "Resize", shp_resize },
    { "PRelu", shp_prelu },               { "Max", shp_variadic },
    { "Min", shp_variadic },              { "TopK", shp_topk },
    { "NonZero", shp_nonzero },
};

/* Composites braid creates (domain "braid"). */
static const shp_entry braid_rules[] = {
    { "Gelu", shp_unary },
};

static shp_rule_fn find_rule(const char *domain, const char *op_type)
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
    } else {
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        if (strcmp(table[i].op_type, op_type) == 0)
            return table[i].rule;
    return NULL;
}

bool bd_shape_has_rule(const char *domain, const char *op_type)
{
    return find_rule(domain, op_type) != NULL;
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
    shp_rule_fn rule = find_rule(n->domain, n->op_type);
    if (!rule) {
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
    int rc = rule(g, n, err);
    if (rc || (rc = check_postops(n, err)))
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
