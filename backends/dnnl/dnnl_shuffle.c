/* ChannelShuffle (braid's composite of ShuffleNet's Reshape -> Transpose -> Reshape): oneDNN's
 * shuffle primitive, in the layout the data already has (blocked included). */
#include "backends/dnnl/dnnl_internal.h"

bool dn_shuffle_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return dn_why(why, len, "ChannelShuffle takes one input and one output");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    const bd_shape *s = &n->inputs[0]->shape;
    int64_t axis = bd_node_attr_int(n, "axis", -1), groups = bd_node_attr_int(n, "group", 0);
    if (axis < 0 || axis >= s->rank || groups < 2 || s->dims[axis] % groups != 0 ||
        !bd_shape_equal(s, &n->outputs[0]->shape))
        return dn_why(why, len, "ChannelShuffle: axis %lld / group %lld do not fit the input",
                      (long long)axis, (long long)groups);
    return true;
}

int dn_shuffle_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int axis = (int)bd_node_attr_int(n, "axis", 1);
    int64_t groups = bd_node_attr_int(n, "group", 2);
    int rc, xbuf, ybuf;
    if ((rc = dn_input(c, x, NULL, &xbuf)))
        return rc;
    dnnl_memory_desc_t md = c->t[x->index].md;
    if (c->t[x->index].strided_view || md.offset0 != 0) {
        if ((rc = dn_input_plain(c, x, &xbuf, &md)))
            return rc;
    }
    /* oneDNN views the axis as [C/G, G] and transposes it; the pattern viewed it as
     * [groups, C/groups]: the same permutation with G = C / groups */
    dnnl_shuffle_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_shuffle_forward_desc_init(&desc, dnnl_forward_inference, &md, axis,
                                                       x->shape.dims[axis] / groups),
                    "dnnl_shuffle_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    if ((rc = dn_output(c, y, dmd, &ybuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg a[2] = { { DNNL_ARG_SRC, xbuf, md }, { DNNL_ARG_DST, ybuf, *dmd } };
    return dn_add_step(c, pd, a, 2);
}
