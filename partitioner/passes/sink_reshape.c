/* Reshapes sunk below the elementwise ops that follow a Conv / MatMul / Gemm, so post-op
 * fusion sees those ops right after their anchor. TensorFlow's Tensordot (a Keras Dense on a
 * [B, T, C] input) freezes as Reshape -> MatMul -> Reshape -> BiasAdd -> activation: without
 * this, the bias and the activation run as primitives of their own over the whole tensor.
 *
 *   y = anchor(...); z = Reshape(y, s); w = op(z, k...)
 *     ==>  w' = op(y, k'...); w = Reshape(w', s)
 *
 * Exact when the Reshape keeps the last dim (element i of y and of z then has the same
 * last-dim index) and every other operand of OP is a constant that varies along the last dim
 * only (k' = k as a vector) or a tensor of z's shape (k' = k reshaped to y's shape, a view). */
#include <stdio.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

static const char *const k_elementwise[] = {
    "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Erf", "Abs",
    "Sqrt", "Exp", "Log", "Softplus", "HardSigmoid", "HardSwish", "Clip", "Neg",
};

static bool is_elementwise(const bd_node *n)
{
    if (!strcmp(n->domain, "braid"))
        return !strcmp(n->op_type, "Gelu") || !strcmp(n->op_type, "Swish");
    for (size_t i = 0; i < sizeof k_elementwise / sizeof *k_elementwise; i++)
        if (bd_is_op(n, k_elementwise[i]))
            return true;
    return false;
}

static bool is_anchor(const bd_node *n)
{
    return n && (bd_is_op(n, "Conv") || bd_is_op(n, "ConvTranspose") || bd_is_op(n, "MatMul") ||
                 bd_is_op(n, "Gemm"));
}

static int64_t last_dim(const bd_shape *s)
{
    return s->rank > 0 ? s->dims[s->rank - 1] : 1;
}

/* A constant that varies along the last dim only: every other dim 1, the last C or 1. */
static bool along_last_dim(const bd_value *k, int64_t c)
{
    if (!k->data || !bd_shape_is_static(&k->shape))
        return false;
    for (int d = 0; d + 1 < k->shape.rank; d++)
        if (k->shape.dims[d] != 1)
            return false;
    return last_dim(&k->shape) == c || last_dim(&k->shape) == 1;
}

/* May OP's operand K (not the reshaped Z) follow OP above the Reshape of Y? */
static bool operand_moves(const bd_value *k, const bd_value *y, const bd_value *z)
{
    if (k->data)
        return along_last_dim(k, last_dim(&y->shape));
    return k->dtype == z->dtype && bd_shape_equal(&k->shape, &z->shape);
}

/* K as OP reads it above the Reshape: itself when its rank is at most Y's (broadcasting
 * then gives Y's shape), a rank-1 copy of a constant, or a view of a tensor at Y's shape. */
static bd_value *moved_operand(bd_graph *g, bd_value *k, const bd_value *y, const char *base,
                               bd_error *err)
{
    if (k->data && k->shape.rank <= y->shape.rank)
        return k;
    if (k->data) {
        bd_shape vec = { .rank = 1, .dims = { last_dim(&k->shape) } };
        void *data;
        bd_value *v = bd_pass_new_const(g, k->name, "_vector", k->dtype, &vec, bd_dtype_size(k->dtype),
                                        &data, err);
        if (v)
            memcpy(data, k->data, (size_t)last_dim(&k->shape) * bd_dtype_size(k->dtype));
        return v;
    }
    bd_shape sd = { .rank = 1, .dims = { y->shape.rank } };
    int64_t *dims;
    bd_value *shape = bd_pass_new_const(g, base, "_shape", BD_DT_INT64, &sd, sizeof(int64_t),
                                        (void **)&dims, err);
    bd_value *view = shape ? bd_pass_new_value(g, k->name, "_view", k->dtype, &y->shape, err) : NULL;
    if (!view)
        return NULL;
    memcpy(dims, y->shape.dims, (size_t)y->shape.rank * sizeof(int64_t));
    bd_node *r;
    bd_value *ins[] = { k, shape };
    char name[256];
    snprintf(name, sizeof name, "%s/view", view->name);
    return bd_graph_add_node(g, name, "Reshape", "", ins, 2, &view, 1, &r, err) ? NULL : view;
}

#define MAX_OPERANDS 8
#define MAX_ATTRS    8

/* Sink RESHAPE below OP (checked): 1 when rewritten, 0 when not applicable, < 0 on error. */
static int sink(bd_graph *g, bd_node *reshape, bd_node *op, bd_error *err)
{
    bd_value *y = reshape->inputs[0], *z = reshape->outputs[0], *w = op->outputs[0];
    if (op->n_outputs != 1 || !bd_shape_is_static(&w->shape) ||
        !bd_shape_equal(&w->shape, &z->shape) || op->n_inputs > MAX_OPERANDS ||
        op->n_attrs > MAX_ATTRS || reshape->n_attrs > MAX_ATTRS)
        return 0;
    for (size_t k = 0; k < op->n_inputs; k++)
        if (!op->inputs[k] || (op->inputs[k] != z && !operand_moves(op->inputs[k], y, z)))
            return 0;
    bd_value *ins[MAX_OPERANDS];
    for (size_t k = 0; k < op->n_inputs; k++) {
        ins[k] = op->inputs[k] == z ? y : moved_operand(g, op->inputs[k], y, op->name, err);
        if (!ins[k])
            return err && err->code ? err->code : BD_ENOMEM;
    }
    bd_value *w2 = bd_pass_new_value(g, w->name, "_unshaped", w->dtype, &y->shape, err);
    if (!w2)
        return err && err->code ? err->code : BD_ENOMEM;
    /* What the two nodes were (attributes by value: their arrays go with the nodes) */
    const char *op_name = op->name, *r_name = reshape->name;
    const char *op_type = op->op_type, *domain = op->domain, *composite = op->composite;
    bd_attr attrs[MAX_ATTRS], r_attrs[MAX_ATTRS];
    size_t n_attrs = op->n_attrs, r_n_attrs = reshape->n_attrs, n_in = op->n_inputs;
    if (n_attrs)                        /* ATTRS is NULL when there are none */
        memcpy(attrs, op->attrs, n_attrs * sizeof *attrs);
    if (r_n_attrs)
        memcpy(r_attrs, reshape->attrs, r_n_attrs * sizeof *r_attrs);
    bd_value *r_ins[] = { w2, reshape->n_inputs > 1 ? reshape->inputs[1] : NULL };
    size_t r_n_in = reshape->n_inputs > 1 ? 2 : 1;
    bd_graph_remove_node(g, op);
    bd_graph_remove_node(g, reshape);
    /* OP again, on Y, writing W2; then the Reshape of W2 to W (the same target shape). */
    bd_node *n = NULL, *r = NULL;
    int rc = bd_graph_add_node(g, op_name, op_type, domain, ins, n_in, &w2, 1, &n, err);
    for (size_t a = 0; !rc && a < n_attrs; a++)
        rc = bd_node_add_attr(g, n, &attrs[a], err);
    if (!rc) {
        n->composite = composite;
        rc = bd_graph_add_node(g, r_name, "Reshape", "", r_ins, r_n_in, &w, 1, &r, err);
    }
    for (size_t a = 0; !rc && a < r_n_attrs; a++)
        rc = bd_node_add_attr(g, r, &r_attrs[a], err);
    if (!rc)
        rc = bd_graph_toposort(g, err);
    return rc ? rc : 1;
}

/* Is V an anchor's output, directly or through elementwise ops each read only by the next?
 * (after one sink, the Reshape reads the moved op's output) */
static bool from_anchor(const bd_graph *g, const bd_value *v, int depth)
{
    const bd_node *p = v->producer;
    if (!p || depth > 8)
        return false;
    if (is_anchor(p))
        return true;
    if (!is_elementwise(p))
        return false;
    for (size_t k = 0; k < p->n_inputs; k++)
        if (p->inputs[k] && !p->inputs[k]->data && bd_sole_consumer(g, p->inputs[k]) == p &&
            from_anchor(g, p->inputs[k], depth + 1))
            return true;
    return false;
}

int bd_pass_sink_reshape(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    (void)target;                   /* plain ONNX ops only: any engine runs the result */
    int rewrites = 0;
    size_t budget = 4 * bd_graph_num_nodes(g) + 16;    /* each sink moves a Reshape down */
    for (size_t i = 0; i < bd_graph_num_nodes(g) && budget > 0; i++) {
        bd_node *reshape = bd_graph_node(g, i);
        if (!bd_is_op(reshape, "Reshape") || reshape->n_inputs < 1 || reshape->n_outputs != 1)
            continue;
        bd_value *y = reshape->inputs[0], *z = reshape->outputs[0];
        if (!from_anchor(g, y, 0) || y->is_output || bd_sole_consumer(g, y) != reshape ||
            z->is_output || !bd_shape_is_static(&y->shape) || !bd_shape_is_static(&z->shape) ||
            last_dim(&y->shape) != last_dim(&z->shape) || !bd_fusable(reshape))
            continue;
        bd_node *op = bd_sole_consumer(g, z);
        if (!op || !is_elementwise(op) || !bd_fusable(op))
            continue;
        int rc = sink(g, reshape, op, err);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            rewrites++;
            budget--;
            i = (size_t)-1;             /* the order changed: rescan */
        }
    }
    return rewrites;
}
