/* SiLU as PyTorch exports it, y = x * Sigmoid(x), fused into one node Swish (domain "braid"):
 * oneDNN's swish eltwise, which post-op fusion then folds into the Conv or MatMul producing x
 * (EfficientNet's every activation). */
#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* The Mul that reads both X and SIG's output (SIG = Sigmoid(X)), SIG's only reader; or NULL. */
static bd_node *match_mul(const bd_graph *g, const bd_node *sig)
{
    if (!bd_is_op(sig, "Sigmoid") || sig->n_inputs != 1 || !sig->inputs[0] || sig->n_outputs != 1)
        return NULL;
    bd_node *mul = bd_sole_consumer(g, sig->outputs[0]);
    if (!bd_is_op(mul, "Mul") || mul->n_inputs != 2 || mul->n_outputs != 1 ||
        bd_other_input(mul, sig->outputs[0]) != sig->inputs[0])
        return NULL;
    return mul;
}

int bd_pass_swish(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *sig = bd_graph_node(g, i);
        bd_node *mul = match_mul(g, sig);
        if (!mul || !bd_fusable(sig) || !bd_fusable(mul))
            continue;
        bd_value *x = sig->inputs[0], *y = mul->outputs[0];
        bd_node probe = { .name = sig->name, .op_type = "Swish", .domain = "braid", .inputs = &x,
                          .n_inputs = 1, .outputs = &y, .n_outputs = 1, .backend = -1, .index = -1 };
        if (!bd_fuse_accepts(target, g, &probe))
            continue;
        const char *name = sig->name;
        bd_graph_remove_node(g, mul);
        bd_graph_remove_node(g, sig);
        bd_node *swish;
        int rc = bd_graph_add_node(g, name, "Swish", "braid", &x, 1, &y, 1, &swish, err);
        if (rc)
            return rc;
        swish->composite = "Sigmoid+Mul";
        rewrites++;
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
        i = (size_t)-1;   /* node order changed: rescan */
    }
    return rewrites;
}
