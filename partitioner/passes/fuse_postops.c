/* MergeComposite for the oneDNN fast path: the chain after a Conv / ConvTranspose / MatMul /
 * Gemm (or braid's MatMulIntegerScaled) becomes post-ops of that node when the backend accepts them (see passes.h for what is
 * absorbed). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

static bool dims_equal(const bd_shape *a, int ia, const bd_shape *b, int ib)
{
    int64_t x = a->dims[ia], y = b->dims[ib];
    if (x >= 0 || y >= 0)
        return x == y;
    return a->sym[ia] && b->sym[ib] && strcmp(a->sym[ia], b->sym[ib]) == 0;
}

static bool same_shape(const bd_shape *a, const bd_shape *b)
{
    if (a->rank < 0 || a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (!dims_equal(a, i, b, i))
            return false;
    return true;
}

/* Does OTHER broadcast onto Y without enlarging Y? */
static bool broadcasts_onto(const bd_shape *other, const bd_shape *y)
{
    if (other->rank < 0 || y->rank < 0 || other->rank > y->rank)
        return false;
    for (int i = 1; i <= other->rank; i++) {
        int io = other->rank - i, iy = y->rank - i;
        if (other->dims[io] != 1 && !dims_equal(other, io, y, iy))
            return false;
    }
    return true;
}

/* Activations that are one eltwise post-op without parameters. */
static const struct {
    const char *op;
    int         alg;
} k_plain_eltwise[] = {
    { "Sigmoid", BD_ELT_SIGMOID }, { "Tanh", BD_ELT_TANH },       { "HardSwish", BD_ELT_HARDSWISH },
    { "Abs", BD_ELT_ABS },         { "Sqrt", BD_ELT_SQRT },       { "Exp", BD_ELT_EXP },
    { "Log", BD_ELT_LOG },         { "Softplus", BD_ELT_SOFTPLUS },
};

/* Describe how consumer C of Y could become a post-op; false when it cannot. *EXTRA is the
 * tensor the post-op reads (or NULL). */
static bool as_postop(const bd_node *c, const bd_value *y, bd_postop *po, bd_value **extra)
{
    *extra = NULL;
    *po = (bd_postop){ .kind = BD_POST_ELTWISE, .scale = 1.0f, .input = -1 };
    float s;
    for (size_t i = 0; i < sizeof k_plain_eltwise / sizeof k_plain_eltwise[0]; i++)
        if (bd_is_op(c, k_plain_eltwise[i].op) && c->n_inputs == 1) {
            po->alg = k_plain_eltwise[i].alg;
            return true;
        }
    if (bd_is_op(c, "Relu")) {
        po->alg = BD_ELT_RELU;
    } else if (bd_is_op(c, "LeakyRelu")) {
        po->alg = BD_ELT_RELU;
        po->alpha = bd_node_attr_float(c, "alpha", 0.01f);
    } else if (bd_is_op(c, "HardSigmoid")) {
        po->alg   = BD_ELT_HARDSIGMOID;
        po->alpha = bd_node_attr_float(c, "alpha", 0.2f);
        po->beta  = bd_node_attr_float(c, "beta", 0.5f);
    } else if (strcmp(c->op_type, "Swish") == 0 && strcmp(c->domain, "braid") == 0) {
        po->alg   = BD_ELT_SWISH;
        po->alpha = 1.0f;
    } else if (strcmp(c->op_type, "FakeQuantize") == 0 && strcmp(c->domain, "braid") == 0) {
        int64_t to = bd_node_attr_int(c, "to", BD_DT_UINT8);
        if (to != BD_DT_UINT8 && to != BD_DT_INT8)
            return false;
        po->alg   = to == BD_DT_UINT8 ? BD_ELT_FAKEQUANT_U8 : BD_ELT_FAKEQUANT_S8;
        po->alpha = bd_node_attr_float(c, "scale", 0.0f);
        po->beta  = (float)bd_node_attr_int(c, "zero_point", 0);
    } else if (bd_is_op(c, "Elu")) {
        po->alg = BD_ELT_ELU;
        po->alpha = bd_node_attr_float(c, "alpha", 1.0f);
    } else if (strcmp(c->op_type, "Gelu") == 0 && (!strcmp(c->domain, "braid") || !c->domain[0])) {
        const char *ap = bd_node_attr_string(c, "approximate", "none");
        if (strcmp(ap, "none") && strcmp(ap, "tanh"))
            return false;
        po->alg = strcmp(ap, "tanh") ? BD_ELT_GELU_ERF : BD_ELT_GELU_TANH;
    } else if (bd_is_op(c, "Clip")) {
        po->alg   = BD_ELT_CLIP;
        po->alpha = bd_node_attr_float(c, "min", -INFINITY);
        po->beta  = bd_node_attr_float(c, "max", INFINITY);
        bd_value *lo = bd_node_input(c, 1), *hi = bd_node_input(c, 2);
        if ((lo && !bd_const_scalar(lo, &po->alpha)) || (hi && !bd_const_scalar(hi, &po->beta)))
            return false;
    } else if ((bd_is_op(c, "Mul") || bd_is_op(c, "Div") || bd_is_op(c, "Add") || bd_is_op(c, "Sub")) &&
               c->n_inputs == 2 && c->inputs[0] != c->inputs[1]) {
        bd_value *other = bd_other_input(c, y);
        bool y_first = c->inputs[0] == y;
        bool mul = bd_is_op(c, "Mul"), div = bd_is_op(c, "Div"), add = bd_is_op(c, "Add");
        if (bd_const_scalar(other, &s)) {
            if (!y_first && !mul && !add)
                return false;                       /* s / y, s - y: not linear in that form */
            po->alg   = BD_ELT_LINEAR;
            po->alpha = mul ? s : div ? 1.0f / s : 1.0f;
            po->beta  = add ? s : bd_is_op(c, "Sub") ? -s : 0.0f;
            return true;
        }
        if (other->dtype != y->dtype || (!y_first && !mul && !add))
            return false;
        if (add && !other->data && same_shape(&other->shape, &y->shape)) {
            po->kind = BD_POST_SUM;                 /* residual connection */
            *extra = other;
            return true;
        }
        if (!broadcasts_onto(&other->shape, &y->shape))
            return false;
        po->kind = BD_POST_BINARY;
        po->alg  = add ? BD_BIN_ADD : mul ? BD_BIN_MUL : div ? BD_BIN_DIV : BD_BIN_SUB;
        *extra = other;
    } else {
        return false;
    }
    return true;
}

/* A fake quantization ends a chain: it runs after the anchor's primitive, not inside it. */
static bool ends_chain(const bd_node *anchor)
{
    const bd_postop *last = anchor->n_post ? &anchor->post[anchor->n_post - 1] : NULL;
    return last && last->kind == BD_POST_ELTWISE &&
           (last->alg == BD_ELT_FAKEQUANT_U8 || last->alg == BD_ELT_FAKEQUANT_S8);
}

static const char *composite_name(bd_graph *g, const bd_node *anchor, const bd_node *c)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s+%s", anchor->composite ? anchor->composite : anchor->op_type,
             c->op_type);
    return bd_graph_strdup(g, buf, (size_t)-1);
}

int bd_pass_fuse_postops(bd_graph *g, const bd_backend *backend, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *anchor = bd_graph_node(g, i);
        bool int8mm = !strcmp(anchor->domain, "braid") && !strcmp(anchor->op_type, "MatMulIntegerScaled");
        if ((!bd_is_op(anchor, "Conv") && !bd_is_op(anchor, "ConvTranspose") &&
             !bd_is_op(anchor, "MatMul") && !bd_is_op(anchor, "Gemm") && !int8mm) || !bd_fusable(anchor))
            continue;
        while (anchor->n_post < BD_MAX_POSTOPS && anchor->n_outputs == 1 && !ends_chain(anchor)) {
            bd_value *y = anchor->outputs[0];
            bd_node *c = bd_sole_consumer(g, y);
            bd_postop po;
            bd_value *extra;
            if (!c || !bd_fusable(c) || c->n_outputs != 1 || !as_postop(c, y, &po, &extra))
                break;
            /* Two linear post-ops in a row become one: oneDNN 2.6.3's brgemm matmul applied
             * the first one's alpha/beta twice ("eltwise_linear:1:0.01+eltwise_linear:3"
             * computed x + 0.02), and one is cheaper anyway. */
            bd_postop *last = anchor->n_post ? &anchor->post[anchor->n_post - 1] : NULL;
            if (last && last->kind == BD_POST_ELTWISE && last->alg == BD_ELT_LINEAR &&
                po.kind == BD_POST_ELTWISE && po.alg == BD_ELT_LINEAR && !extra) {
                bd_postop merged = *last;
                merged.alpha = po.alpha * last->alpha;
                merged.beta = po.alpha * last->beta + po.beta;
                bd_postop saved = *last;
                *last = merged;
                char why[128];
                if (!backend->supports(g, anchor, why, sizeof why)) {
                    *last = saved;
                    break;
                }
                anchor->composite = composite_name(g, anchor, c);
                bd_value *out = c->outputs[0];
                bd_graph_remove_node(g, c);
                bd_node_set_output(anchor, 0, out);
                rewrites++;
                continue;
            }
            /* oneDNN 2.6.3 (brgemm matmul, seen on Gemm [1,90]x[90,1]) applies one set of
             * parameters to every eltwise post-op of the same kind: "linear:1:0.01 + tanh +
             * linear:3" computed tanh(x + 0.01) + 0.01. Such a chain stops here instead. */
            bool clash = false;
            for (int k = 0; k < anchor->n_post && po.kind == BD_POST_ELTWISE; k++)
                clash |= anchor->post[k].kind == BD_POST_ELTWISE && anchor->post[k].alg == po.alg &&
                         (anchor->post[k].alpha != po.alpha || anchor->post[k].beta != po.beta);
            if (clash)
                break;
            /* A constant per-channel Add after an NHWC Conv is the convolution's own bias
             * (oneDNN 2.6.3's depthwise brdgmm_dw kernel got a per-channel binary_add post-op
             * wrong on a 7x7 VALID window, mobilefacenet's head; a bias is cheaper anyway). */
            const bd_value *yv = anchor->outputs[0];
            if (extra && po.kind == BD_POST_BINARY && po.alg == BD_BIN_ADD && anchor->n_post == 0 &&
                bd_is_op(anchor, "Conv") && anchor->n_inputs == 2 && extra->data &&
                extra->dtype == BD_DT_FLOAT && extra->shape.rank == 1 && yv->shape.rank >= 3 &&
                extra->shape.dims[0] == yv->shape.dims[yv->shape.rank - 1] &&
                strcmp(bd_node_attr_string(anchor, "data_format", ""), "NHWC") == 0) {
                if (bd_node_append_input(g, anchor, extra, err) < 0)
                    return err ? err->code : BD_ENOMEM;
                char why[128];
                if (!backend->supports(g, anchor, why, sizeof why)) {
                    anchor->n_inputs = 2;
                    break;
                }
                anchor->composite = composite_name(g, anchor, c);
                bd_value *out = c->outputs[0];
                bd_graph_remove_node(g, c);
                bd_node_set_output(anchor, 0, out);
                rewrites++;
                continue;
            }
            /* Try it; the backend has the last word. */
            size_t saved_inputs = anchor->n_inputs;
            if (extra) {
                int at = bd_node_append_input(g, anchor, extra, err);
                if (at < 0)
                    return at;
                po.input = at;
            }
            anchor->post[anchor->n_post++] = po;
            char why[128];
            if (!backend->supports(g, anchor, why, sizeof why)) {
                anchor->n_post--;
                anchor->n_inputs = saved_inputs;
                break;
            }
            anchor->composite = composite_name(g, anchor, c);
            bd_value *out = c->outputs[0];
            bd_graph_remove_node(g, c);
            bd_node_set_output(anchor, 0, out);
            rewrites++;
        }
    }
    /* A residual may be produced after the anchor in the old order; Y's only reader was the
     * absorbed node, so moving the anchor later cannot create a cycle. */
    int rc = rewrites ? bd_graph_toposort(g, err) : 0;
    return rc ? rc : rewrites;
}
