/* The tail of onnxruntime's dynamic quantization, MatMulInteger(a, b, a_zp, b_zp) -> Cast(to
 * FLOAT) -> Mul(scale) (scale = a_scale * b_scale: one element, or one per column), becomes one
 * node MatMulIntegerScaled(a, b, a_zp, b_zp, scale) of domain "braid": oneDNN's int8 matmul
 * with an f32 destination and SCALE as its run-time output scales (backends/dnnl/dnnl_integer.c),
 * the same float product Cast and Mul compute (float(acc) * scale, one rounding). Post-op
 * fusion then folds the bias Add after it (and a residual Add) into the matmul. */
#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* MMI's Cast and Mul, and the scale the Mul multiplies by; false when the chain is not there. */
static bool match_tail(const bd_graph *g, const bd_node *mmi, bd_node **cast, bd_node **mul,
                       bd_value **scale)
{
    if (!bd_is_op(mmi, "MatMulInteger") || mmi->n_outputs != 1 || mmi->n_inputs < 2)
        return false;
    const bd_value *acc = mmi->outputs[0];
    *cast = bd_sole_consumer(g, acc);
    if (!bd_is_op(*cast, "Cast") || bd_node_attr_int(*cast, "to", 0) != BD_DT_FLOAT)
        return false;
    const bd_value *f = (*cast)->outputs[0];
    *mul = bd_sole_consumer(g, f);
    if (!bd_is_op(*mul, "Mul") || (*mul)->n_outputs != 1)
        return false;
    *scale = bd_other_input(*mul, f);
    const bd_value *s = *scale, *y = (*mul)->outputs[0];
    if (!s || s == f || s->dtype != BD_DT_FLOAT || !bd_shape_is_static(&s->shape) ||
        !bd_shape_is_static(&acc->shape) || acc->shape.rank < 1 || !bd_shape_equal(&y->shape, &acc->shape))
        return false;
    int64_t n = acc->shape.dims[acc->shape.rank - 1], cnt = bd_shape_numel(&s->shape);
    if (cnt == 1)
        return true;
    /* one per column: [N] or [1, .., 1, N] */
    return cnt == n && s->shape.rank >= 1 && s->shape.rank <= acc->shape.rank &&
           s->shape.dims[s->shape.rank - 1] == n;
}

int bd_pass_dynquant(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *mmi = bd_graph_node(g, i), *cast, *mul;
        bd_value *scale;
        if (!match_tail(g, mmi, &cast, &mul, &scale) || !bd_fusable(mmi) || !bd_fusable(cast) ||
            !bd_fusable(mul))
            continue;
        bd_value *in[5] = { mmi->inputs[0], mmi->inputs[1], bd_node_input(mmi, 2), bd_node_input(mmi, 3),
                            scale };
        bd_value *y = mul->outputs[0];
        bd_node probe = { .name = mmi->name, .op_type = "MatMulIntegerScaled", .domain = "braid",
                          .inputs = in, .n_inputs = 5, .outputs = &y, .n_outputs = 1, .backend = -1,
                          .index = -1 };
        if (!bd_fuse_accepts(target, g, &probe))
            continue;
        const char *name = mmi->name;
        bd_graph_remove_node(g, mul);
        bd_graph_remove_node(g, cast);
        bd_graph_remove_node(g, mmi);
        bd_node *fused;
        int rc = bd_graph_add_node(g, name, "MatMulIntegerScaled", "braid", in, 5, &y, 1, &fused, err);
        if (rc)
            return rc;
        fused->composite = "MatMulInteger+Cast+Mul";
        rewrites++;
        i = (size_t)-1;   /* node order changed: rescan from the start */
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
    }
    return rewrites;
}
