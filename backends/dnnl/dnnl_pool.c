/* MaxPool, AveragePool (count_include_pad, ceil_mode, dilations), GlobalAveragePool and
 * GlobalMaxPool as oneDNN pooling_v2, in the layout of their input (blocked stays blocked;
 * data_format NHWC is seen as [N, C, spatial...] through a permuted md). */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

typedef struct pool_geom {
    int             nsp;
    bool            last;          /* data_format NHWC */
    int64_t         xd[BD_MAX_RANK], yd[BD_MAX_RANK];   /* channels-first dims */
    dnnl_alg_kind_t alg;
    dnnl_dims_t     kernel, stride, dil, pl, pr;
} pool_geom;

static bool geom(const bd_node *n, pool_geom *g, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = x->shape.rank;
    if (rank < 3 || rank > 5 || y->shape.rank != rank)
        return dn_why(why, len, "%s needs 1D, 2D or 3D spatial input", n->op_type);
    if (!dn_data_format_ok(n, why, len))
        return false;
    g->last = dn_channels_last(n);
    dn_dims_cf(&x->shape, g->last, g->xd);
    dn_dims_cf(&y->shape, g->last, g->yd);
    g->nsp = rank - 2;
    bool global = !strncmp(n->op_type, "Global", 6);
    bool max = strstr(n->op_type, "Max") != NULL;
    if (max)
        g->alg = dnnl_pooling_max;
    else
        g->alg = bd_node_attr_int(n, "count_include_pad", 0) ? dnnl_pooling_avg_include_padding
                                                                : dnnl_pooling_avg_exclude_padding;
    if (global) {
        for (int i = 0; i < g->nsp; i++) {
            g->kernel[i] = g->xd[2 + i];
            g->stride[i] = 1;
            g->dil[i] = g->pl[i] = g->pr[i] = 0;
            if (g->yd[2 + i] != 1)
                return dn_why(why, len, "%s output must have spatial size 1", n->op_type);
        }
        return true;
    }
    if (bd_node_attr_int(n, "storage_order", 0) != 0)
        return dn_why(why, len, "MaxPool storage_order=1 is not supported");
    const int64_t *k = NULL, *s = NULL, *d = NULL;
    size_t nk = bd_node_attr_ints(n, "kernel_shape", &k), ns = bd_node_attr_ints(n, "strides", &s);
    size_t nd = bd_node_attr_ints(n, "dilations", &d);
    if (nk != (size_t)g->nsp || (ns && ns != nk) || (nd && nd != nk))
        return dn_why(why, len, "%s kernel_shape/strides/dilations rank mismatch", n->op_type);
    int64_t in[3], out[3], ext[3], st[3], pl[3], pr[3];
    for (int i = 0; i < g->nsp; i++) {
        int64_t dil = nd ? d[i] : 1;
        st[i] = ns ? s[i] : 1;
        if (k[i] < 1 || st[i] < 1 || dil < 1)
            return dn_why(why, len, "%s kernel, strides and dilations must be positive", n->op_type);
        in[i] = g->xd[2 + i];
        out[i] = g->yd[2 + i];
        ext[i] = (k[i] - 1) * dil + 1;
        g->kernel[i] = k[i];
        g->stride[i] = st[i];
        g->dil[i] = dil - 1;
    }
    if (!dn_spatial_pads(n, g->nsp, in, out, ext, st, pl, pr))
        return dn_why(why, len, "%s padding does not produce the inferred output shape", n->op_type);
    for (int i = 0; i < g->nsp; i++) {
        g->pl[i] = pl[i];
        g->pr[i] = pr[i];
    }
    return true;
}

bool dn_pool_supports(const bd_graph *gr, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "%s needs an input", n->op_type);
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    if (n->n_outputs > 1 && bd_graph_use_count(gr, n->outputs[1]) > 0)
        return dn_why(why, len, "MaxPool Indices output is not supported");
    pool_geom g;
    return geom(n, &g, why, len);
}

int dn_pool_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    char why[160];
    pool_geom g;
    if (!geom(n, &g, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    int rc, sbuf, dbuf;
    dnnl_memory_desc_t smd, dany, dir;
    if ((rc = dn_input_cf(c, x, g.last, &sbuf, &smd)))
        return rc;
    dn_md_any(&dany, y->shape.rank, g.yd);
    dnnl_pooling_v2_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_pooling_v2_forward_desc_init(&desc, dnnl_forward_inference, g.alg, &smd, &dany,
                                                         g.stride, g.kernel, g.dil, g.pl, g.pr),
                    "dnnl_pooling_v2_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md(pd, dnnl_query_workspace_md, 0);
    if (ws && dnnl_memory_desc_get_size(ws) > 0) {
        dnnl_primitive_desc_destroy(pd);
        return dn_fail(c, BD_EBACKEND, "pooling unexpectedly needs a workspace at inference");
    }
    if ((rc = dn_md_ir(c, g.last, &dir, dmd)) || (rc = dn_output(c, y, &dir, &dbuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[2] = { { DNNL_ARG_SRC, sbuf, smd }, { DNNL_ARG_DST, dbuf, *dmd } };
    return dn_add_step(c, pd, args, 2);
}
