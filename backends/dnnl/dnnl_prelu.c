/* PRelu as oneDNN's prelu primitive: the slope is a plain weights md broadcast onto X
 * (right-aligned, numpy). A per-channel slope on a channels-last tensor (slope non-1 only in
 * the last dim, as TF's Prelu [.., C]) is presented as [N, C, spatial...] so the primitive
 * sees its per-channel case, in X's layout (blocked stays blocked). */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* SLOPE's dims right-aligned to X's rank; false when it does not broadcast onto X. */
static bool slope_dims(const bd_shape *x, const bd_shape *slope, int64_t *dims)
{
    int R = x->rank, off = R - slope->rank;
    if (off < 0)
        return false;
    for (int i = 0; i < R; i++) {
        dims[i] = i >= off ? slope->dims[i - off] : 1;
        if (dims[i] != 1 && dims[i] != x->dims[i])
            return false;
    }
    return true;
}

/* Slope varies only along the last dim of a rank >= 3 X. */
static bool per_last_channel(const bd_shape *x, const int64_t *dims)
{
    if (x->rank < 3 || dims[x->rank - 1] == 1)
        return false;
    for (int i = 0; i < x->rank - 1; i++)
        if (dims[i] != 1)
            return false;
    return true;
}

bool dn_prelu_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (dn_num_op_inputs(n) != 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "PRelu needs X and slope");
    if (!dn_io_f32(n, 2, why, len) || !dn_no_post(n, why, len))
        return false;
    int64_t dims[BD_MAX_RANK];
    if (n->inputs[0]->shape.rank < 1 || !slope_dims(&n->inputs[0]->shape, &n->inputs[1]->shape, dims))
        return dn_why(why, len, "PRelu slope '%s' does not broadcast onto the input", n->inputs[1]->name);
    if (!bd_shape_equal(&n->inputs[0]->shape, &n->outputs[0]->shape))
        return dn_why(why, len, "PRelu output shape differs from its input");
    return true;
}

int dn_prelu_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *s = n->inputs[1], *y = n->outputs[0];
    int64_t dims[BD_MAX_RANK];
    if (!slope_dims(&x->shape, &s->shape, dims))
        return dn_fail(c, BD_EUNSUPPORTED, "slope does not broadcast onto the input");
    bool cf = per_last_channel(&x->shape, dims);
    int rc, xbuf, sbuf, dbuf;
    dnnl_memory_desc_t xmd, xir, wmd, wir, splain;
    if ((rc = dn_input_cf(c, x, cf, &xbuf, &xmd)) || (rc = dn_input_plain(c, s, &sbuf, &splain)))
        return rc;
    xir = c->t[x->index].md;
    if (c->t[x->index].strided_view)
        dn_md_of_shape(&xir, x);
    dn_md_plain(&wir, x->shape.rank, dims);
    if ((rc = dn_md_cf(c, cf, &wmd, &wir)))
        return rc;
    dnnl_prelu_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_prelu_forward_desc_init(&desc, dnnl_forward_inference, &xmd, &wmd),
                    "dnnl_prelu_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *pw = dn_pd_md(pd, dnnl_query_weights_md);
    if (!dn_md_equal(pw, &wmd)) {
        dnnl_primitive_desc_destroy(pd);
        return dn_fail(c, BD_EBACKEND, "prelu chose an unexpected slope layout");
    }
    if (dn_can_reuse(c, x, &xir)) {
        dbuf = xbuf;
        rc = dn_define_view(c, y, dbuf, &xir, false);
    } else {
        rc = dn_output(c, y, &xir, &dbuf);
    }
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[3] = { { DNNL_ARG_SRC, xbuf, xmd }, { DNNL_ARG_WEIGHTS, sbuf, wmd },
                       { DNNL_ARG_DST, dbuf, xmd } };
    return dn_add_step(c, pd, args, 3);
}
