/* Arithmetic that changes nothing, removed: x * 1 and x + 0 (x - 0) with a constant 1 or 0.
 * Frozen TensorFlow graphs are full of them: Keras's SiLU is x * sigmoid(beta * x) with
 * beta = 1, and that Mul stood between the swish pattern and its fusion (EfficientNet's every
 * activation), besides costing a pass over the tensor. */
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* True when V is a float constant whose every element is WANT. */
static bool const_all(const bd_value *v, float want)
{
    if (!v || !v->data || v->dtype != BD_DT_FLOAT || !bd_shape_is_static(&v->shape))
        return false;
    int64_t n = bd_shape_numel(&v->shape);
    if (n <= 0 || v->nbytes < (size_t)n * sizeof(float))
        return false;
    for (int64_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, (const char *)v->data + (size_t)i * sizeof f, sizeof f);   /* may be unaligned */
        if (f != want)
            return false;
    }
    return true;
}

static bool same_shape(const bd_shape *a, const bd_shape *b)
{
    if (a->rank != b->rank || a->rank < 0)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i] || a->dims[i] < 0)
            return false;
    return true;
}

/* The input N passes through unchanged, or NULL: Mul by 1 (either side), Add of 0 (either
 * side), Sub of 0 (right side), when the constant's broadcast leaves the other's shape. */
static bd_value *passthrough(const bd_node *n)
{
    if (n->n_inputs != 2 || n->n_outputs != 1 || !n->inputs[0] || !n->inputs[1])
        return NULL;
    bool mul = bd_is_op(n, "Mul"), add = bd_is_op(n, "Add"), sub = bd_is_op(n, "Sub");
    if (!mul && !add && !sub)
        return NULL;
    float unit = mul ? 1.0f : 0.0f;
    for (int side = 0; side < 2; side++) {
        bd_value *c = n->inputs[side], *x = n->inputs[1 - side];
        if ((sub && side == 0) || !const_all(c, unit))
            continue;
        if (x->dtype == n->outputs[0]->dtype && same_shape(&x->shape, &n->outputs[0]->shape))
            return x;
    }
    return NULL;
}

int bd_pass_identity_arith(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    (void)target;
    (void)err;
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *n = bd_graph_node(g, i);
        bd_value *x = passthrough(n);
        bd_value *y = x ? n->outputs[0] : NULL;
        /* a graph output keeps its name and its node (callers fetch it by name) */
        if (!x || y->is_output || !bd_fusable(n))
            continue;
        bd_graph_remove_node(g, n);
        bd_graph_replace_uses(g, y, x);
        rewrites++;
        i--;                        /* the next node moved into slot i */
    }
    return rewrites;
}
