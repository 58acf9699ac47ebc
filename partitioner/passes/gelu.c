/* GELU as PyTorch exports it: y = x * 0.5 * (1 + Erf(x / sqrt(2))), fused into one node. */
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
        bd_node *div = bd_graph_node(g, i);
        bd_value *x = NULL;
        bd_node *last = match_from_div(g, div, &x);
        if (!last)
            continue;
        /* The chain (every node between DIV and LAST): none pinned to a fallback, and the
         * fused node must be one the fast path runs (Gelu is not an ONNX op to fall back to). */
        bd_value *y = last->outputs[0];
        bd_node *chain[5];
        size_t n = 0;
        bool fusable = true;
        for (bd_node *cur = div; cur && n < 5; cur = cur == last ? NULL : bd_sole_consumer(g, cur->outputs[0])) {
            chain[n++] = cur;
            fusable &= bd_fusable(cur);
        }
        if (!fusable || !target_takes(g, target, div->name, x, y))
            continue;
        const char *name = div->name;
        for (size_t k = 0; k < n; k++)
            bd_graph_remove_node(g, chain[k]);
        bd_node *gelu;
        int rc = bd_graph_add_node(g, name, "Gelu", "braid", &x, 1, &y, 1, &gelu, err);
        if (rc)
            return rc;
        gelu->composite = "Div+Erf+Add+Mul+Mul";
        rewrites++;
        i = (size_t)-1;   /* node order changed: rescan from the start */
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
    }
    return rewrites;
}
