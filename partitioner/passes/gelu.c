/* Exact GELU, fused into one node, in the two forms exporters write:
 *   PyTorch:            y = x * 0.5 * (1 + Erf(x / sqrt(2)))
 *   TensorFlow / Keras: y = (0.5 * x) * Erfc(-x * (1 / sqrt(2))), whose Erfc braid's TF
 *                       importer writes as 1 - Erf; the same function, as erfc(-z) = 1 + erf(z). */
#include <math.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

static bool near(float a, float b) { return fabsf(a - b) <= 1e-4f * fabsf(b); }

/* Starting at the Div: returns the final node of the chain, or NULL. */
static bd_node *match_from_div(const bd_graph *g, bd_node *div, bd_value **x_out)
{
    float c;
    if (!bd_is_op(div, "Div") || div->n_inputs != 2 || !bd_const_scalar(div->inputs[1], &c) ||
        !near(c, 1.41421356f))
        return NULL;
    bd_value *x = div->inputs[0];
    bd_node *erf = bd_sole_consumer(g, div->outputs[0]);
    if (!bd_is_op(erf, "Erf"))
        return NULL;
    bd_node *add = bd_sole_consumer(g, erf->outputs[0]);
    float one;
    if (!bd_is_op(add, "Add") || !bd_const_scalar(bd_other_input(add, erf->outputs[0]), &one) || one != 1.0f)
        return NULL;
    bd_node *m1 = bd_sole_consumer(g, add->outputs[0]);
    if (!bd_is_op(m1, "Mul"))
        return NULL;
    bd_value *other = bd_other_input(m1, add->outputs[0]);
    float half;
    bd_node *last;
    if (other == x) {                                   /* (x * (1+erf)) * 0.5 */
        last = bd_sole_consumer(g, m1->outputs[0]);
        if (!bd_is_op(last, "Mul") || !bd_const_scalar(bd_other_input(last, m1->outputs[0]), &half))
            return NULL;
    } else if (bd_const_scalar(other, &half)) {        /* x * ((1+erf) * 0.5) */
        last = bd_sole_consumer(g, m1->outputs[0]);
        if (!bd_is_op(last, "Mul") || bd_other_input(last, m1->outputs[0]) != x)
            return NULL;
    } else {
        return NULL;
    }
    if (half != 0.5f)
        return NULL;
    *x_out = x;
    return last;
}

/* Mul(a, b) in either order with a constant scalar C: the other input, else NULL. */
static bd_value *mul_by_scalar(const bd_node *n, float *c)
{
    if (!bd_is_op(n, "Mul") || n->n_inputs != 2)
        return NULL;
    for (int k = 0; k < 2; k++)
        if (bd_const_scalar(n->inputs[k], c))
            return n->inputs[1 - k];
    return NULL;
}

/* The TensorFlow form from its Erf: the chain's six nodes into CHAIN (the last one last) and
 * X into *X_OUT, or 0. */
static size_t match_from_erf(const bd_graph *g, bd_node *erf, bd_value **x_out, bd_node **chain)
{
    float c, one, half;
    if (!bd_is_op(erf, "Erf") || erf->n_inputs != 1 || !erf->inputs[0]->producer)
        return 0;
    bd_node *scale = erf->inputs[0]->producer;              /* -x * (1/sqrt 2) */
    bd_value *nx = mul_by_scalar(scale, &c);
    if (!nx || !near(c, 0.70710678f) || !nx->producer || !bd_is_op(nx->producer, "Neg") ||
        bd_sole_consumer(g, nx) != scale || bd_sole_consumer(g, scale->outputs[0]) != erf)
        return 0;
    bd_node *neg = nx->producer;
    bd_value *x = neg->inputs[0];
    bd_node *sub = bd_sole_consumer(g, erf->outputs[0]);      /* 1 - erf */
    if (!bd_is_op(sub, "Sub") || sub->inputs[1] != erf->outputs[0] ||
        !bd_const_scalar(sub->inputs[0], &one) || one != 1.0f)
        return 0;
    bd_node *last = bd_sole_consumer(g, sub->outputs[0]);     /* (0.5 * x) * (1 - erf) */
    bd_value *hx = last && bd_is_op(last, "Mul") ? bd_other_input(last, sub->outputs[0]) : NULL;
    if (!hx || !hx->producer || mul_by_scalar(hx->producer, &half) != x || half != 0.5f ||
        bd_sole_consumer(g, hx) != last)
        return 0;
    bd_node *nodes[] = { neg, scale, erf, sub, hx->producer, last };
    for (size_t k = 0; k < 6; k++)
        chain[k] = nodes[k];
    *x_out = x;
    return 6;
}

/* Would TARGET run Gelu(X) -> Y? (asked before rewriting, on a node that only lives here) */
static bool target_takes(const bd_graph *g, const bd_fuse_target *target, const char *name, bd_value *x,
                         bd_value *y)
{
    bd_node probe = { .name = name, .op_type = "Gelu", .domain = "braid", .inputs = &x,
                      .n_inputs = 1, .outputs = &y, .n_outputs = 1, .backend = -1, .index = -1 };
    return bd_fuse_accepts(target, g, &probe);
}

int bd_pass_gelu(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *first = bd_graph_node(g, i);
        bd_value *x = NULL;
        bd_node *chain[6];
        size_t n = 0;
        const char *composite = "Div+Erf+Add+Mul+Mul";
        bd_node *last = match_from_div(g, first, &x);
        if (last) {             /* the chain: every node from the Div to LAST */
            for (bd_node *cur = first; cur && n < 5;
                 cur = cur == last ? NULL : bd_sole_consumer(g, cur->outputs[0]))
                chain[n++] = cur;
        } else if ((n = match_from_erf(g, first, &x, chain)) != 0) {
            last = chain[n - 1];
            first = chain[0];
            composite = "Neg+Mul+Erf+Sub+Mul+Mul";
        } else {
            continue;
        }
        /* None pinned to a fallback, and the fused node must be one the fast path runs (Gelu
         * is not an ONNX op to fall back to). */
        bd_value *y = last->outputs[0];
        bool fusable = true;
        for (size_t k = 0; k < n; k++)
            fusable &= bd_fusable(chain[k]);
        if (!fusable || !target_takes(g, target, first->name, x, y))
            continue;
        const char *name = first->name;
        for (size_t k = 0; k < n; k++)
            bd_graph_remove_node(g, chain[k]);
        bd_node *gelu;
        int rc = bd_graph_add_node(g, name, "Gelu", "braid", &x, 1, &y, 1, &gelu, err);
        if (rc)
            return rc;
        gelu->composite = composite;
        rewrites++;
        i = (size_t)-1;   /* node order changed: rescan from the start */
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
    }
    return rewrites;
}
