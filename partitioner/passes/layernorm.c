/* The layer norm that opset-13 exporters decompose, fused back into LayerNormalization:
 *   m = ReduceMean(x, [-1]); d = x - m; v = ReduceMean(d^2, [-1]);
 *   y = d / Sqrt(v + eps) * gamma + beta                                                  */
#include <math.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* ReduceMean over exactly the last axis, keeping dims. */
static bool is_mean_last_axis(const bd_node *n, int rank)
{
    if (!bd_is_op(n, "ReduceMean") || bd_node_attr_int(n, "keepdims", 1) != 1)
        return false;
    const int64_t *axes;
    if (bd_node_attr_ints(n, "axes", &axes) != 1)
        return false;
    return axes[0] == -1 || (rank > 0 && axes[0] == rank - 1);
}

static bool const_vector(const bd_value *v)
{
    return v && v->data && v->dtype == BD_DT_FLOAT && v->shape.rank == 1;
}

/* Would TARGET run LayerNormalization(X, GAMMA, BETA) -> Y over the last axis? Asked on a
 * node that only lives here, before rewriting: LayerNormalization is an ONNX op only from
 * opset 17, so the fused node must stay on the fast path. */
static bool target_takes(const bd_graph *g, const bd_fuse_target *target, const char *name, bd_value *x,
                         bd_value *gamma, bd_value *beta, bd_value *y, float eps)
{
    bd_value *ins[] = { x, gamma, beta };
    bd_attr attrs[] = { { .name = "axis", .type = BD_ATTR_INT, .i = -1 },
                        { .name = "epsilon", .type = BD_ATTR_FLOAT, .f = eps } };
    bd_node probe = { .name = name, .op_type = "LayerNormalization", .domain = "", .inputs = ins,
                      .n_inputs = 3, .outputs = &y, .n_outputs = 1, .attrs = attrs, .n_attrs = 2,
                      .backend = -1, .index = -1 };
    return bd_fuse_accepts(target, g, &probe);
}

int bd_pass_layernorm(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *mean = bd_graph_node(g, i);
        bd_value *x = mean->n_inputs ? mean->inputs[0] : NULL;
        if (!x || !is_mean_last_axis(mean, x->shape.rank))
            continue;
        /* x feeds the first mean and the Sub; the mean feeds only the Sub. */
        bd_node *sub = bd_sole_consumer(g, mean->outputs[0]);
        if (!bd_is_op(sub, "Sub") || sub->inputs[0] != x || sub->inputs[1] != mean->outputs[0])
            continue;
        bd_value *d = sub->outputs[0];
        /* d feeds Pow and Div (two readers). */
        bd_node *pow = NULL, *div = NULL;
        size_t readers = 0;
        for (size_t k = 0; k < bd_graph_num_nodes(g); k++) {
            bd_node *n = bd_graph_node(g, k);
            for (size_t q = 0; q < n->n_inputs; q++)
                if (n->inputs[q] == d) {
                    readers++;
                    if (bd_is_op(n, "Pow")) pow = n;
                    if (bd_is_op(n, "Div")) div = n;
                }
        }
        float two, eps;
        if (readers != 2 || d->is_output || !pow || !div || div->inputs[0] != d ||
            !bd_const_scalar(pow->inputs[1], &two) || two != 2.0f)
            continue;
        bd_node *var = bd_sole_consumer(g, pow->outputs[0]);
        if (!var || !is_mean_last_axis(var, x->shape.rank))
            continue;
        bd_node *add = bd_sole_consumer(g, var->outputs[0]);
        if (!bd_is_op(add, "Add") || !bd_const_scalar(bd_other_input(add, var->outputs[0]), &eps))
            continue;
        bd_node *sqrt_ = bd_sole_consumer(g, add->outputs[0]);
        if (!bd_is_op(sqrt_, "Sqrt") || bd_sole_consumer(g, sqrt_->outputs[0]) != div ||
            div->inputs[1] != sqrt_->outputs[0])
            continue;
        bd_node *mul = bd_sole_consumer(g, div->outputs[0]);
        bd_value *gamma = mul && bd_is_op(mul, "Mul") ? bd_other_input(mul, div->outputs[0]) : NULL;
        if (!const_vector(gamma))
            continue;
        bd_node *badd = bd_sole_consumer(g, mul->outputs[0]);
        bd_value *beta = badd && bd_is_op(badd, "Add") ? bd_other_input(badd, mul->outputs[0]) : NULL;
        if (!const_vector(beta))
            continue;

        bd_node *chain[] = { mean, sub, pow, var, add, sqrt_, div, mul, badd };
        bd_value *y = badd->outputs[0];
        bool fusable = true;
        for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++)
            fusable &= bd_fusable(chain[k]);
        if (!fusable || !target_takes(g, target, mean->name, x, gamma, beta, y, eps))
            continue;
        const char *name = mean->name;
        for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++)
            bd_graph_remove_node(g, chain[k]);
        bd_value *ins[] = { x, gamma, beta };
        bd_node *ln;
        int rc = bd_graph_add_node(g, name, "LayerNormalization", "", ins, 3, &y, 1, &ln, err);
        if (rc == 0)
            rc = bd_node_add_attr(g, ln, &(bd_attr){ .name = "axis", .type = BD_ATTR_INT, .i = -1 }, err);
        if (rc == 0)
            rc = bd_node_add_attr(g, ln, &(bd_attr){ .name = "epsilon", .type = BD_ATTR_FLOAT, .f = eps }, err);
        if (rc == 0)
            rc = bd_graph_toposort(g, err);
        if (rc)
            return rc;
        ln->composite = "ReduceMean+Sub+Pow+ReduceMean+Add+Sqrt+Div+Mul+Add";
        rewrites++;
        i = (size_t)-1;
    }
    return rewrites;
}
