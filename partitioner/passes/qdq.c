/* The QDQ format's activation edges: x -> QuantizeLinear -> DequantizeLinear -> readers, both
 * with the same per-tensor scale and zero point, become one node FakeQuantize (domain "braid")
 * that computes the pair's float result, (saturate(round(x / s) + z) - z) * s, on x itself.
 *
 * Why: onnxruntime's quantizer, NNCF and PyTorch write such a pair on every activation, and
 * run as two nodes each pair leaves the fast path twice (to the native engine and back) on
 * every edge of the model. As one elementwise node the whole model stays on the fast path,
 * which runs it after the producer's own primitive, in place (dnnl_fakequant.c). The weights'
 * DequantizeLinear of a constant is folded at plan time and needs nothing here. */
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* The per-tensor scale and zero point of Q or DQ node N (its inputs 1 and 2), and the
 * quantized dtype they imply. False unless the scale is one constant finite positive float and
 * the zero point (if any) one constant UINT8 or INT8. */
static bool params_of(const bd_node *n, float *scale, int64_t *zp, int *qtype)
{
    const bd_value *s = bd_node_input(n, 1), *z = bd_node_input(n, 2);
    if (n->n_inputs < 2 || n->n_inputs > 3 || !s || !bd_const_scalar(s, scale) ||
        !(*scale > 0.0f) || *scale > 3.0e38f)
        return false;
    if (bd_node_attr(n, "block_size") || bd_node_attr(n, "output_dtype"))
        return false;                                  /* opset 21's forms: not handled here */
    *zp = 0;
    *qtype = BD_DT_UINT8;
    if (!z)
        return true;
    if (!z->data || bd_shape_numel(&z->shape) != 1 || z->nbytes < 1 ||
        (z->dtype != BD_DT_UINT8 && z->dtype != BD_DT_INT8))
        return false;
    *qtype = z->dtype;
    *zp = z->dtype == BD_DT_UINT8 ? (int64_t)*(const uint8_t *)z->data
                                  : (int64_t)*(const int8_t *)z->data;
    return true;
}

/* The QuantizeLinear producing DQ's input whose parameters DQ repeats, or NULL. */
static bd_node *matching_quantize(const bd_node *dq, float *scale, int64_t *zp, int *qtype)
{
    if (!bd_is_op(dq, "DequantizeLinear") || !bd_fusable(dq) || dq->n_outputs != 1 ||
        !dq->inputs[0] || dq->outputs[0]->dtype != BD_DT_FLOAT)
        return NULL;
    bd_node *q = dq->inputs[0]->producer;
    float s2;
    int64_t z2;
    int t2;
    if (!q || !bd_is_op(q, "QuantizeLinear") || !bd_fusable(q) || q->n_outputs != 1 ||
        !q->inputs[0] || q->inputs[0]->dtype != BD_DT_FLOAT ||
        !params_of(q, scale, zp, qtype) || !params_of(dq, &s2, &z2, &t2) ||
        s2 != *scale || z2 != *zp || t2 != *qtype || q->outputs[0]->dtype != *qtype ||
        !bd_shape_equal(&q->inputs[0]->shape, &dq->outputs[0]->shape))
        return NULL;
    return q;
}

/* DequantizeLinear(L(c)) -> L(DequantizeLinear(c)) for an op L that only moves or selects the
 * integers (bd_node_moves_values: on a per-tensor grid with a positive scale it commutes with
 * the dequantization, MaxPool included) whose readers are all
 * DequantizeLinears (per tensor) of the same scale and zero point, so that a QuantizeLinear ->
 * L -> DequantizeLinear chain (the QOperator format's Q -> MaxPool or Reshape on UINT8 -> the
 * next ops' dequantizations) becomes an adjacent pair; 1 if DQ was moved, 0 if not, < 0 on
 * error. */
static int hoist_dequantize(bd_graph *g, bd_node *dq, bd_error *err)
{
    float scale, s2;
    int64_t zp, z2;
    int qtype, t2;
    if (!bd_is_op(dq, "DequantizeLinear") || !bd_fusable(dq) || dq->n_outputs != 1 || !dq->inputs[0] ||
        !params_of(dq, &scale, &zp, &qtype) || dq->outputs[0]->dtype != BD_DT_FLOAT)
        return 0;
    bd_value *c = dq->inputs[0];
    bd_node *l = c->producer, *readers[8];
    size_t n_readers;
    if (!l || !bd_node_moves_values(l) || !bd_fusable(l) || l->outputs[0] != c || l->inputs[0]->dtype != c->dtype ||
        !bd_shape_is_static(&l->inputs[0]->shape) || !bd_consumers(g, c, readers, 8, &n_readers))
        return 0;
    for (size_t i = 0; i < n_readers; i++) {
        const bd_node *r = readers[i];
        if (!bd_is_op(r, "DequantizeLinear") || !bd_fusable(r) || r->inputs[0] != c || r->n_outputs != 1 ||
            !params_of(r, &s2, &z2, &t2) || s2 != scale || z2 != zp || t2 != qtype ||
            r->outputs[0]->dtype != BD_DT_FLOAT || (r != dq && r->outputs[0]->is_output))
            return 0;                            /* (a graph output keeps its own name) */
    }
    bd_value *in = l->inputs[0], *y = dq->outputs[0];
    bd_value *f = bd_pass_new_value(g, in->name, "_f", BD_DT_FLOAT, &in->shape, err);
    if (!f)
        return -1;
    bd_value *dq_in[3] = { in, dq->inputs[1], bd_node_input(dq, 2) };
    size_t n_in = dq->n_inputs;
    const char *name = dq->name;
    for (size_t i = 0; i < n_readers; i++) {  /* one float result for every reader */
        bd_graph_remove_node(g, readers[i]);
        if (readers[i] != dq)
            bd_graph_replace_uses(g, readers[i]->outputs[0], y);
    }
    l->inputs[0] = f;                          /* L now moves the floats */
    bd_node_set_output(l, 0, y);
    bd_node *moved;
    return bd_graph_add_node(g, name, "DequantizeLinear", "", dq_in, n_in, &f, 1, &moved, err) ? -1 : 1;
}

int bd_pass_qdq(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        int rc = hoist_dequantize(g, bd_graph_node(g, i), err);
        if (rc < 0)
            return err && err->code ? err->code : BD_ENOMEM;
        if (rc > 0) {
            if ((rc = bd_graph_toposort(g, err)))
                return rc;
            i = (size_t)-1;                      /* node order changed: rescan */
        }
    }
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *dq = bd_graph_node(g, i);
        float scale;
        int64_t zp;
        int qtype;
        bd_node *q = matching_quantize(dq, &scale, &zp, &qtype);
        if (!q)
            continue;
        bd_value *x = q->inputs[0], *y = dq->outputs[0], *qy = q->outputs[0];
        bd_attr attrs[] = {
            { .name = "scale", .type = BD_ATTR_FLOAT, .f = scale },
            { .name = "zero_point", .type = BD_ATTR_INT, .i = zp },
            { .name = "to", .type = BD_ATTR_INT, .i = qtype },
        };
        bd_node probe = { .name = dq->name, .op_type = "FakeQuantize", .domain = "braid",
                          .inputs = &x, .n_inputs = 1, .outputs = &y, .n_outputs = 1,
                          .attrs = attrs, .n_attrs = 3, .backend = -1, .index = -1 };
        if (!bd_fuse_accepts(target, g, &probe))
            continue;
        const char *name = dq->name;
        bd_graph_remove_node(g, dq);
        bd_node *fq;
        int rc = bd_graph_add_node(g, name, "FakeQuantize", "braid", &x, 1, &y, 1, &fq, err);
        for (size_t a = 0; !rc && a < sizeof attrs / sizeof attrs[0]; a++)
            rc = bd_node_add_attr(g, fq, &attrs[a], err);
        if (rc)
            return rc;
        fq->composite = "QuantizeLinear+DequantizeLinear";
        if (bd_graph_use_count(g, qy) == 0)        /* its last DequantizeLinear went */
            bd_graph_remove_node(g, q);
        rewrites++;
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
        i = (size_t)-1;   /* node order changed: rescan */
    }
    return rewrites;
}
