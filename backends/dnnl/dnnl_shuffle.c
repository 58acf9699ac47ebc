/* ChannelShuffle (braid's composite of ShuffleNet's Reshape -> Transpose -> Reshape), in the
 * layout the data already has. On a strided layout (NCHW, NHWC) it is one reorder between two
 * 5-D views of the same dense layout — the jit reorders handle that at copy speed, where
 * oneDNN 2.6 has only its reference shuffle for NHWC; on a blocked layout it is oneDNN's
 * shuffle primitive. A ChannelShuffle of several parts (the Concat before it folded in) is
 * braid's own step (dnnl_interleave.c). */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

bool dn_shuffle_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs != 1)
        return dn_why(why, len, "ChannelShuffle takes its input (or parts) and one output");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    const bd_shape *s = &n->outputs[0]->shape;
    int64_t axis = bd_node_attr_int(n, "axis", -1), groups = bd_node_attr_int(n, "group", 0);
    if (axis < 0 || axis >= s->rank || groups < 2 || s->dims[axis] % groups != 0)
        return dn_why(why, len, "ChannelShuffle: axis %lld / group %lld do not fit the output",
                      (long long)axis, (long long)groups);
    if (n->n_inputs > 1)             /* the parts of a Concat, shuffled */
        return dn_interleave_fits(n, (int)axis, groups, why, len);
    if (!bd_shape_equal(&n->inputs[0]->shape, s))
        return dn_why(why, len, "ChannelShuffle: the input's shape is not the output's");
    return true;
}

static bool is_strided(const dnnl_memory_desc_t *md)
{
    return md->format_kind == dnnl_blocked && md->format_desc.blocking.inner_nblks == 0 &&
           md->offset0 == 0;
}

/* MD (rank R, strides S) with AXIS split in two: [.., A, B, ..] with strides SA, SB. */
static int split_axis(dn_compiler *c, const dnnl_memory_desc_t *md, int axis, int64_t a, int64_t sa,
                      int64_t b, int64_t sb, dnnl_memory_desc_t *out)
{
    dnnl_dims_t dims, strides;
    int r = md->ndims, k = 0;
    for (int d = 0; d < r; d++) {
        if (d == axis) {
            dims[k] = a, strides[k++] = sa;
            dims[k] = b, strides[k++] = sb;
        } else {
            dims[k] = md->dims[d], strides[k++] = md->format_desc.blocking.strides[d];
        }
    }
    return dn_check(c, dnnl_memory_desc_init_by_strides(out, r + 1, dims, dnnl_f32, strides),
                    "dnnl_memory_desc_init_by_strides");
}

/* Output channel k = j * G + i (j < C/G, i < G) is input channel i * C/G + j: read the input
 * as [.., C/G, G, ..] with strides (s, C/G * s) and write the output, laid out like the input,
 * as [.., C/G, G, ..] with strides (G * s, s). */
static int shuffle_by_reorder(dn_compiler *c, const bd_node *n, int xbuf, const dnnl_memory_desc_t *md)
{
    int axis = (int)bd_node_attr_int(n, "axis", 1), rc, ybuf;
    int64_t g = bd_node_attr_int(n, "group", 2), per = md->dims[axis] / g;
    int64_t s = md->format_desc.blocking.strides[axis];
    dnnl_memory_desc_t src, dst;
    if ((rc = split_axis(c, md, axis, per, s, g, per * s, &src)) ||
        (rc = split_axis(c, md, axis, per, g * s, g, s, &dst)) ||
        (rc = dn_output(c, n->outputs[0], md, &ybuf)))
        return rc;
    dnnl_primitive_desc_t pd;
    if ((rc = dn_reorder_pd(c, &src, &dst, "dnnl_reorder_primitive_desc_create (shuffle)", &pd)))
        return rc;
    dn_arg a[2] = { { DNNL_ARG_FROM, xbuf, src }, { DNNL_ARG_TO, ybuf, dst } };
    return dn_add_step(c, pd, a, 2);
}

int dn_shuffle_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int axis = (int)bd_node_attr_int(n, "axis", 1);
    int64_t groups = bd_node_attr_int(n, "group", 2);
    int rc, xbuf, ybuf;
    if (n->n_inputs > 1)
        return dn_interleave_build(c, n, axis, groups);
    if ((rc = dn_input(c, x, NULL, &xbuf)))
        return rc;
    dnnl_memory_desc_t md = c->t[x->index].md;
    if (c->t[x->index].strided_view || md.offset0 != 0) {
        if ((rc = dn_input_plain(c, x, &xbuf, &md)))
            return rc;
    }
    if (is_strided(&md) && md.ndims < DNNL_MAX_NDIMS)
        return shuffle_by_reorder(c, n, xbuf, &md);
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
