/* ConvTranspose (1D/2D/3D, groups, strides, dilations, pads/auto_pad, output_padding,
 * output_shape, bias) as a oneDNN deconvolution with src/dst layouts left to the
 * implementation (format_tag_any), like Conv. ONNX stores the weights [C_in, C_out/group,
 * k...] where oneDNN wants [C_out, C_in, k...] ([G, C_out/G, C_in/G, k...] with groups): a
 * strided md over the stored bytes says so, and a constant is reordered once at compile into
 * the primitive's layout; a fed weight is read through that md at run time (the conformance
 * suite feeds them). The bias and the fused post-ops run as one binary step after the
 * deconvolution (dn_deconv_build says why).
 *
 * Geometry: oneDNN relates the shapes as a convolution from dst to src,
 *   in = (out - ext + pl + pr) / stride + 1,   ext = (k - 1) * dilation + 1,
 * so ONNX's output_padding, and an output_shape beyond the window's reach, become a negative
 * right pad: pr = stride * (in - 1) + ext - out - pl. pl is ONNX's begin pad: the pads
 * attribute, 0 under VALID, or half the total padding under SAME_* and output_shape (ONNX's
 * equations: SAME_UPPER puts the odd one at the end, the others at the beginning). */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

typedef struct deconv_geom {
    int     nsp;
    int64_t group;
    int64_t xd[BD_MAX_RANK], wd[BD_MAX_RANK], yd[BD_MAX_RANK];   /* X, W (ONNX order), Y */
    int64_t stride[3], dil[3], ext[3], pl[3], pr[3];
} deconv_geom;

/* floor(a / 2) for any sign (ONNX's equations are Python's //). */
static int64_t half_floor(int64_t a)
{
    return a >= 0 ? a / 2 : -((-a + 1) / 2);
}

/* The begin and end pads of spatial dim I (see the file comment). */
static bool pads_of(const bd_node *n, deconv_geom *g, int i, int64_t op, char *why, size_t len)
{
    const char *ap = bd_node_attr_string(n, "auto_pad", "NOTSET");
    const int64_t *pads = NULL;
    size_t np = bd_node_attr_ints(n, "pads", &pads);
    bool upper = !strcmp(ap, "SAME_UPPER"), lower = !strcmp(ap, "SAME_LOWER");
    bool valid = !strcmp(ap, "VALID"), notset = !strcmp(ap, "NOTSET") || !ap[0];
    if (!upper && !lower && !valid && !notset)
        return dn_why(why, len, "ConvTranspose auto_pad '%s' is not supported", ap);
    if (np && np != (size_t)(2 * g->nsp))
        return dn_why(why, len, "ConvTranspose pads has %zu values for %d spatial dims", np, g->nsp);
    int64_t in = g->xd[2 + i], out = g->yd[2 + i], s = g->stride[i];
    int64_t full = s * (in - 1) + g->ext[i];          /* the window's reach, no padding */
    int64_t total = full + op - out;
    bool oshape = bd_node_attr(n, "output_shape") != NULL;
    if (oshape || upper || lower)
        g->pl[i] = upper ? half_floor(total) : total - half_floor(total);
    else
        g->pl[i] = valid || !np ? 0 : pads[i];
    g->pr[i] = full - out - g->pl[i];
    if (g->pl[i] < 0)
        return dn_why(why, len, "ConvTranspose output %lld of spatial dim %d exceeds the window's reach "
                      "%lld by more than one: the begin pad would be negative", (long long)out, i,
                      (long long)full);
    if (g->pr[i] <= -s)
        return dn_why(why, len, "ConvTranspose output %lld of spatial dim %d reaches a whole stride "
                      "past the input", (long long)out, i);
    if (notset && !oshape && np && g->pr[i] != pads[g->nsp + i] - op)
        return dn_why(why, len, "ConvTranspose pads and output_padding do not produce the inferred "
                      "output shape");
    return true;
}

static bool geom(const bd_node *n, deconv_geom *g, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *w = n->inputs[1], *y = n->outputs[0];
    int rank = x->shape.rank;
    if (rank < 3 || rank > 5 || w->shape.rank != rank || y->shape.rank != rank)
        return dn_why(why, len, "ConvTranspose needs 1D, 2D or 3D spatial input with matching weights");
    if (bd_node_attr(n, "data_format") || bd_node_attr(n, "filter_format"))
        return dn_why(why, len, "ConvTranspose data_format/filter_format attributes are not mapped");
    memcpy(g->xd, x->shape.dims, sizeof *g->xd * (size_t)rank);
    memcpy(g->wd, w->shape.dims, sizeof *g->wd * (size_t)rank);
    memcpy(g->yd, y->shape.dims, sizeof *g->yd * (size_t)rank);
    g->nsp = rank - 2;
    g->group = bd_node_attr_int(n, "group", 1);
    const int64_t *s = NULL, *d = NULL, *ks = NULL, *op = NULL;
    size_t ns = bd_node_attr_ints(n, "strides", &s), nd = bd_node_attr_ints(n, "dilations", &d);
    size_t nk = bd_node_attr_ints(n, "kernel_shape", &ks);
    size_t nop = bd_node_attr_ints(n, "output_padding", &op);
    if ((ns && ns != (size_t)g->nsp) || (nd && nd != (size_t)g->nsp) || (nk && nk != (size_t)g->nsp) ||
        (nop && nop != (size_t)g->nsp))
        return dn_why(why, len, "ConvTranspose strides/dilations/kernel_shape/output_padding rank mismatch");
    int64_t C = g->xd[1], M = g->yd[1];
    if (g->group < 1 || C % g->group || g->wd[0] != C || g->wd[1] * g->group != M)
        return dn_why(why, len, "ConvTranspose group=%lld does not fit %lld input and %lld output channels "
                      "with weights [%lld, %lld, ...]", (long long)g->group, (long long)C, (long long)M,
                      (long long)g->wd[0], (long long)g->wd[1]);
    for (int i = 0; i < g->nsp; i++) {
        g->stride[i] = ns ? s[i] : 1;
        g->dil[i] = nd ? d[i] : 1;
        int64_t k = g->wd[2 + i], opad = nop ? op[i] : 0;
        if (nk && ks[i] != k)
            return dn_why(why, len, "ConvTranspose kernel_shape disagrees with the weights");
        if (g->stride[i] < 1 || g->dil[i] < 1 || k < 1)
            return dn_why(why, len, "ConvTranspose strides, dilations and kernel must be positive");
        if (opad < 0 || (opad >= g->stride[i] && opad >= g->dil[i]))
            return dn_why(why, len, "ConvTranspose output_padding %lld must be below the stride or the "
                          "dilation", (long long)opad);
        g->ext[i] = (k - 1) * g->dil[i] + 1;
        if (!pads_of(n, g, i, opad, why, len))
            return false;
    }
    return true;
}

bool dn_deconv_supports(const bd_graph *gr, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "ConvTranspose needs X and W");
    if (!dn_io_f32(n, 3, why, len))
        return false;
    const bd_value *b = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    deconv_geom g;
    if (!geom(n, &g, why, len))
        return false;
    if (b && (b->shape.rank != 1 || b->shape.dims[0] != g.yd[1]))
        return dn_why(why, len, "ConvTranspose bias must be 1-D with one value per output channel");
    return dn_postops_supported(gr, n, why, len);
}

/* The strided md of ONNX's weight bytes [C, M/G, k...] in oneDNN's order. */
static int weights_md(dn_compiler *c, const deconv_geom *g, int rank, dnnl_memory_desc_t *md)
{
    int64_t C = g->wd[0], OG = g->wd[1], IG = C / g->group, K = 1;
    dnnl_dims_t d, st;
    int r = 0;
    for (int i = 2; i < rank; i++)
        K *= g->wd[i];
    if (g->group > 1) {
        d[r] = g->group;
        st[r++] = IG * OG * K;
    }
    d[r] = OG;                   /* output channel o of the group: W[., o, ...] */
    st[r++] = K;
    d[r] = IG;                   /* input channel i of the group: W[g*IG + i, ...] */
    st[r++] = OG * K;
    int64_t sp = 1;
    for (int i = rank - 1; i >= 2; i--) {
        d[r + i - 2] = g->wd[i];
        st[r + i - 2] = sp;
        sp *= g->wd[i];
    }
    return dn_check(c, dnnl_memory_desc_init_by_strides(md, r + rank - 2, d, dnnl_f32, st),
                    "dnnl_memory_desc_init_by_strides (ConvTranspose weights)");
}

/* Bias and post-ops as one binary step after the deconvolution: Y = post(T + bias) over the
 * layout the deconvolution chose, in place (IN_PLACE: T is Y's buffer already) or from the
 * temporary T into Y. With no bias the operand is a constant 0. */
static int epilogue(dn_compiler *c, const bd_node *n, const bd_value *b, int tbuf,
                    const dnnl_memory_desc_t *tmd, bool in_place)
{
    const bd_value *y = n->outputs[0];
    int rank = y->shape.rank, rc, bbuf, dbuf;
    int64_t bd[BD_MAX_RANK];
    for (int i = 0; i < rank; i++)
        bd[i] = i == 1 && b ? y->shape.dims[1] : 1;
    dnnl_memory_desc_t bmd, bplain;
    dn_md_plain(&bplain, rank, bd);
    dn_md_like(&bmd, tmd, bd);        /* a constant operand in T's layout (jit binary) */
    static const float zero = 0.0f;
    if (!b)
        rc = dn_const(c, &zero, &bplain, &bmd, &bbuf);
    else if (b->data)
        rc = dn_const_value(c, b, &bplain, &bmd, &bbuf);
    else {
        bmd = bplain;
        rc = dn_input_plain(c, b, &bbuf, &bplain);
    }
    if (rc)
        return rc;
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    if ((rc = dn_postops_build(c, 0, rank, y->shape.dims, &po, &pa)))
        return rc;
    dnnl_binary_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_binary_desc_init(&desc, dnnl_binary_add, tmd, &bmd, tmd),
                    "dnnl_binary_desc_init (ConvTranspose bias)", &desc, po, 1.0f, &pd);
    if (rc)
        return rc;
    if (in_place) {
        dbuf = tbuf;
    } else {
        rc = pa.residual ? dn_output_with_residual(c, y, tmd, pa.residual, &dbuf)
                         : dn_output(c, y, tmd, &dbuf);
        if (rc) {
            dnnl_primitive_desc_destroy(pd);
            return rc;
        }
    }
    dn_arg args[3 + BD_MAX_POSTOPS];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC_0, tbuf, *tmd };
    args[na++] = (dn_arg){ DNNL_ARG_SRC_1, bbuf, bmd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, *tmd };
    for (int i = 0; i < pa.nargs; i++)
        args[na++] = pa.args[i];
    return dn_add_step(c, pd, args, na);
}

int dn_deconv_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *w = n->inputs[1], *y = n->outputs[0];
    const bd_value *b = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    char why[160];
    deconv_geom g;
    if (!geom(n, &g, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    int rank = x->shape.rank;

    dnnl_memory_desc_t src_any, dst_any, wei_src, wei_want;
    dn_md_any(&src_any, rank, g.xd);
    dn_md_any(&dst_any, rank, g.yd);
    int rc = weights_md(c, &g, rank, &wei_src);
    if (rc)
        return rc;
    wei_want = wei_src;
    if (w->data)                 /* a constant: let the implementation pick, reorder once */
        dnnl_memory_desc_init_by_tag(&wei_want, wei_src.ndims, wei_src.dims, dnnl_f32,
                                     dnnl_format_tag_any);

    /* No bias and no post-ops in the primitive: oneDNN 2.6 runs a deconvolution as a
     * backward-data convolution and adds a bias or post-ops afterwards with reference loops
     * (a 64->32 channel 4x4/2 upsampling to 64x64: 0.58 ms alone, 0.95 ms with a bias, 5.4
     * with a Relu); a binary step does them at memory speed (epilogue). */
    dnnl_dims_t strides, dil, pl, pr;
    for (int i = 0; i < g.nsp; i++) {
        strides[i] = g.stride[i];
        dil[i] = g.dil[i] - 1;
        pl[i] = g.pl[i];
        pr[i] = g.pr[i];
    }
    dnnl_deconvolution_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_dilated_deconvolution_forward_desc_init(&desc, dnnl_forward_inference,
                       dnnl_deconvolution_direct, &src_any, &wei_want, NULL, &dst_any,
                       strides, dil, pl, pr),
                    "dnnl_dilated_deconvolution_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;

    const dnnl_memory_desc_t *smd = dn_pd_md(pd, dnnl_query_src_md);
    const dnnl_memory_desc_t *wmd = dn_pd_md(pd, dnnl_query_weights_md);
    dnnl_memory_desc_t dmd = *dn_pd_md(pd, dnnl_query_dst_md), wplain;   /* copied: PD goes */
    int npost = n->n_post - (dn_native_tail(n) ? 1 : 0);    /* a native tail runs after us */
    bool epi = b || npost > 0, sum = false;
    for (int i = 0; i < npost; i++)
        sum |= n->post[i].kind == BD_POST_SUM;
    int sbuf, wbuf, dbuf;
    rc = dn_input(c, x, smd, &sbuf);
    if (!rc)
        rc = w->data ? dn_const_value(c, w, &wei_src, wmd, &wbuf) : dn_input_plain(c, w, &wbuf, &wplain);
    /* The epilogue runs in place over Y unless a residual waits there, or unless the layout
     * pads the channels (C % 16 in nChw16c) and post-ops follow the add: oneDNN 2.6's jit
     * binary then leaves its destination unwritten when it is its source. */
    bool padded = false;
    for (int i = 0; i < dmd.ndims; i++)
        padded |= dmd.padded_dims[i] != dmd.dims[i];
    bool temp = sum || (padded && npost > 0);
    if (!rc)
        rc = temp ? dn_temp(c, &dmd, &dbuf) : dn_output(c, y, &dmd, &dbuf);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[3] = {
        { DNNL_ARG_SRC, sbuf, *smd }, { DNNL_ARG_WEIGHTS, wbuf, *wmd }, { DNNL_ARG_DST, dbuf, dmd },
    };
    if ((rc = dn_add_step(c, pd, args, 3)))
        return rc;
    return epi ? epilogue(c, n, b, dbuf, &dmd, !temp) : 0;
}
