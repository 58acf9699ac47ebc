/* GELU, fused into one node, in the forms exporters write:
 *   PyTorch:            y = x * 0.5 * (1 + Erf(x / sqrt(2)))
 *   TensorFlow / Keras: y = (0.5 * x) * Erfc(-x * (1 / sqrt(2))), whose Erfc braid's TF
 *                       importer writes as 1 - Erf; the same function, as erfc(-z) = 1 + erf(z);
 *   the tanh approximation (GPT-2's, PyTorch's GELU(approximate="tanh") below opset 20):
 *                       y = 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
 *                       a Gelu node with approximate = "tanh" (oneDNN's gelu_tanh). */
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

/* X^3 made by node CUBE: Pow(x, 3), x * (x * x) or (x * x) * x. Its nodes into CHAIN (the
 * inner x * x first); X into *X_OUT; the count, or 0. */
static size_t match_cube(const bd_graph *g, bd_node *cube, bd_value **x_out, bd_node **chain)
{
    float e;
    if (bd_is_op(cube, "Pow") && cube->n_inputs == 2 && bd_const_scalar(cube->inputs[1], &e) && e == 3.0f) {
        chain[0] = cube;
        *x_out = cube->inputs[0];
        return 1;
    }
    if (!bd_is_op(cube, "Mul") || cube->n_inputs != 2)
        return 0;
    for (int k = 0; k < 2; k++) {
        bd_value *x = cube->inputs[k], *sq = cube->inputs[1 - k];
        bd_node *p = sq->producer;
        if (bd_is_op(p, "Mul") && p->n_inputs == 2 && p->inputs[0] == x && p->inputs[1] == x &&
            bd_sole_consumer(g, sq) == cube) {
            chain[0] = p;
            chain[1] = cube;
            *x_out = x;
            return 2;
        }
    }
    return 0;
}

/* The tanh form from its Tanh: the chain's nodes into CHAIN (at most 10), X into *X_OUT; the
 * count, or 0. The last product is 0.5 * x * (1 + tanh) in any grouping: (x * a) * 0.5,
 * (a * 0.5) * x, or a * (0.5 * x). */
static size_t match_from_tanh(const bd_graph *g, bd_node *tanh, bd_value **x_out, bd_node **chain)
{
    float c, one, half;
    if (!bd_is_op(tanh, "Tanh") || tanh->n_inputs != 1 || !tanh->inputs[0]->producer)
        return 0;
    bd_node *inner = tanh->inputs[0]->producer;               /* sqrt(2/pi) * s */
    bd_value *sv = mul_by_scalar(inner, &c);
    if (!sv || !near(c, 0.7978845608f) || bd_sole_consumer(g, tanh->inputs[0]) != tanh ||
        !bd_is_op(sv->producer, "Add") || sv->producer->n_inputs != 2 || bd_sole_consumer(g, sv) != inner)
        return 0;
    bd_node *add = sv->producer;                              /* x + 0.044715 * x^3 */
    size_t n = 0;
    bd_value *x = NULL;
    for (int k = 0; k < 2 && !n; k++) {
        bd_value *kv = add->inputs[k];
        bd_node *kmul = kv->producer;
        bd_value *cv = kmul ? mul_by_scalar(kmul, &c) : NULL;
        if (!cv || !near(c, 0.044715f) || !cv->producer || bd_sole_consumer(g, kv) != add ||
            bd_sole_consumer(g, cv) != kmul)
            continue;
        n = match_cube(g, cv->producer, &x, chain);
        if (n && x != add->inputs[1 - k])
            n = 0;
        if (n)
            chain[n++] = kmul;
    }
    if (!n)
        return 0;
    chain[n++] = add;
    chain[n++] = inner;
    chain[n++] = tanh;
    bd_node *a1 = bd_sole_consumer(g, tanh->outputs[0]);       /* 1 + tanh */
    if (!bd_is_op(a1, "Add") || !bd_const_scalar(bd_other_input(a1, tanh->outputs[0]), &one) || one != 1.0f)
        return 0;
    chain[n++] = a1;
    bd_node *m1 = bd_sole_consumer(g, a1->outputs[0]);
    if (!bd_is_op(m1, "Mul") || m1->n_inputs != 2)
        return 0;
    bd_value *other = bd_other_input(m1, a1->outputs[0]);
    bd_node *last = NULL;
    if (other == x) {                                          /* (x * a) * 0.5 */
        last = bd_sole_consumer(g, m1->outputs[0]);
        if (mul_by_scalar(last, &half) != m1->outputs[0])
            return 0;
        chain[n++] = m1;
    } else if (bd_const_scalar(other, &half)) {                /* (a * 0.5) * x */
        last = bd_sole_consumer(g, m1->outputs[0]);
        if (!bd_is_op(last, "Mul") || bd_other_input(last, m1->outputs[0]) != x)
            return 0;
        chain[n++] = m1;
    } else if (other && other->producer && mul_by_scalar(other->producer, &half) == x &&
               bd_sole_consumer(g, other) == m1) {             /* a * (0.5 * x) */
        chain[n++] = other->producer;
        last = m1;
    } else {
        return 0;
    }
    if (half != 0.5f)
        return 0;
    chain[n++] = last;
    *x_out = x;
    return n;
}

/* Would TARGET run Gelu(X) -> Y? (asked before rewriting, on a node that only lives here) */
static bool target_takes(const bd_graph *g, const bd_fuse_target *target, const char *name, bd_value *x,
                         bd_value *y, bd_attr *approximate)
{
    bd_node probe = { .name = name, .op_type = "Gelu", .domain = "braid", .inputs = &x,
                      .n_inputs = 1, .outputs = &y, .n_outputs = 1, .attrs = approximate,
                      .n_attrs = approximate ? 1 : 0, .backend = -1, .index = -1 };
    return bd_fuse_accepts(target, g, &probe);
}

int bd_pass_gelu(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *first = bd_graph_node(g, i);
        bd_value *x = NULL;
        bd_node *chain[10];
        size_t n = 0;
        const char *composite = "Div+Erf+Add+Mul+Mul";
        bd_attr tanh_form = { .name = "approximate", .type = BD_ATTR_STRING, .s = "tanh", .s_len = 4 };
        bd_attr *approximate = NULL;
        bd_node *last = match_from_div(g, first, &x);
        if (last) {             /* the chain: every node from the Div to LAST */
            for (bd_node *cur = first; cur && n < 5;
                 cur = cur == last ? NULL : bd_sole_consumer(g, cur->outputs[0]))
                chain[n++] = cur;
        } else if ((n = match_from_erf(g, first, &x, chain)) != 0) {
            last = chain[n - 1];
            first = chain[0];
            composite = "Neg+Mul+Erf+Sub+Mul+Mul";
        } else if ((n = match_from_tanh(g, first, &x, chain)) != 0) {
            last = chain[n - 1];
            first = chain[0];
            composite = "Mul+Tanh+Add+Mul (tanh GELU)";
            approximate = &tanh_form;
        } else {
            continue;
        }
        /* None pinned to a fallback, and the fused node must be one the fast path runs (Gelu
         * is not an ONNX op to fall back to). */
        bd_value *y = last->outputs[0];
        bool fusable = true;
        for (size_t k = 0; k < n; k++)
            fusable &= bd_fusable(chain[k]);
        if (!fusable || !target_takes(g, target, first->name, x, y, approximate))
            continue;
        const char *name = first->name;
        for (size_t k = 0; k < n; k++)
            bd_graph_remove_node(g, chain[k]);
        bd_node *gelu;
        int rc = bd_graph_add_node(g, name, "Gelu", "braid", &x, 1, &y, 1, &gelu, err);
        if (rc)
            return rc;
        gelu->composite = composite;
        if (approximate && (rc = bd_node_add_attr(g, gelu, approximate, err)))
            return rc;
        rewrites++;
        i = (size_t)-1;   /* node order changed: rescan from the start */
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
    }
    return rewrites;
}
