/* Split along one axis: each output is a reorder from a sub-memory view of the (plain) input.
 * The sizes along the axis come from the outputs' inferred shapes, so the split input or
 * attribute (opset < 13 / >= 13 / num_outputs) needs no reading here. */
#include "backends/dnnl/dnnl_internal.h"

/* Declared here rather than in dnnl_internal.h (another engineer's file); dnnl_backend.c's
 * op table declares them the same way. */
bool dn_split_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_split_build(dn_compiler *c, const bd_node *n);

static int split_axis(const bd_node *n, int rank)
{
    int64_t axis = bd_node_attr_int(n, "axis", 0);
    return (int)(axis < 0 ? axis + rank : axis);
}

bool dn_split_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs < 1)
        return dn_why(why, len, "Split needs an input and outputs");
    if (!dn_no_post(n, why, len))
        return false;
    const bd_value *x = n->inputs[0];
    if (!dn_is_f32_static(x))
        return dn_why(why, len, "input '%s' is not FP32 with a static shape", x->name);
    int rank = x->shape.rank, axis = split_axis(n, rank);
    if (rank < 1 || axis < 0 || axis >= rank)
        return dn_why(why, len, "Split axis out of range");
    int64_t sum = 0;
    for (size_t i = 0; i < n->n_outputs; i++) {
        const bd_value *y = n->outputs[i];
        if (!dn_is_f32_static(y) || y->shape.rank != rank)
            return dn_why(why, len, "output '%s' is not FP32 with a static shape", y->name);
        for (int d = 0; d < rank; d++)
            if (d != axis && y->shape.dims[d] != x->shape.dims[d])
                return dn_why(why, len, "output '%s' differs from the input off the split axis", y->name);
        if (y->shape.dims[axis] <= 0)
            return dn_why(why, len, "output '%s' is empty", y->name);
        sum += y->shape.dims[axis];
    }
    if (sum != x->shape.dims[axis])
        return dn_why(why, len, "Split outputs do not cover the input's axis %d", axis);
    return true;
}

int dn_split_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0];
    int rank = x->shape.rank, axis = split_axis(n, rank), xbuf, rc;
    dnnl_memory_desc_t xmd;
    if ((rc = dn_input_plain(c, x, &xbuf, &xmd)))
        return rc;
    int64_t at = 0;
    for (size_t i = 0; i < n->n_outputs && !rc; i++) {
        const bd_value *y = n->outputs[i];
        dnnl_dims_t dims, offs;
        for (int d = 0; d < rank; d++) {
            dims[d] = y->shape.dims[d];
            offs[d] = d == axis ? at : 0;
        }
        at += y->shape.dims[axis];
        dnnl_memory_desc_t sub, ymd;
        int ybuf;
        dn_md_of_shape(&ymd, y);
        rc = dn_check(c, dnnl_memory_desc_init_submemory(&sub, &xmd, dims, offs),
                      "dnnl_memory_desc_init_submemory");
        dnnl_primitive_desc_t pd = NULL;
        if (!rc)
            rc = dn_reorder_pd(c, &sub, &ymd, "dnnl_reorder_primitive_desc_create (split)", &pd);
        if (!rc)
            rc = dn_output(c, y, &ymd, &ybuf);
        if (!rc) {
            dn_arg a[2] = { { DNNL_ARG_FROM, xbuf, sub }, { DNNL_ARG_TO, ybuf, ymd } };
            rc = dn_add_step(c, pd, a, 2);
        } else if (pd) {
            dnnl_primitive_desc_destroy(pd);
        }
    }
    return rc;
}
