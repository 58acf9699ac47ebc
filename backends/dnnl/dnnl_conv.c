/* Conv (1D/2D/3D, groups, depthwise, strides, dilations, pads/auto_pad) as a oneDNN
 * convolution with every layout left to the implementation (format_tag_any): activations
 * come out blocked (nChw16c), weights are packed once here. TF graphs: data_format NHWC is
 * the same primitive over permuted mds (dnnl_layout.c), HWIO/HWCM filters are strided mds
 * over the constant's bytes, reordered once. */
#include <stdlib.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static bool geom(const bd_node *n, dn_conv_geom *g, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *w = n->inputs[1], *y = n->outputs[0];
    int rank = x->shape.rank;
    if (rank < 3 || rank > 5 || w->shape.rank != rank || y->shape.rank != rank)
        return dn_why(why, len, "Conv needs 1D, 2D or 3D spatial input with matching weights");
    if (!dn_data_format_ok(n, why, len))
        return false;
    g->last = dn_channels_last(n);
    dn_dims_cf(&x->shape, g->last, g->xd);
    dn_dims_cf(&y->shape, g->last, g->yd);
    if (!dn_filter_oihw(n, &w->shape, g->wd))
        return dn_why(why, len, "Conv filter_format '%s' is not supported",
                      bd_node_attr_string(n, "filter_format", ""));
    g->nsp = rank - 2;
    g->group = bd_node_attr_int(n, "group", 1);
    const int64_t *s = NULL, *d = NULL, *ks = NULL;
    size_t ns = bd_node_attr_ints(n, "strides", &s), nd = bd_node_attr_ints(n, "dilations", &d);
    size_t nk = bd_node_attr_ints(n, "kernel_shape", &ks);
    if ((ns && ns != (size_t)g->nsp) || (nd && nd != (size_t)g->nsp) || (nk && nk != (size_t)g->nsp))
        return dn_why(why, len, "Conv strides/dilations/kernel_shape rank mismatch");
    int64_t C = g->xd[1], M = g->wd[0];
    if (g->group < 1 || C % g->group || M % g->group || g->wd[1] != C / g->group ||
        g->yd[1] != M)
        return dn_why(why, len, "Conv group=%lld does not fit %lld input and %lld output channels",
                      (long long)g->group, (long long)C, (long long)M);
    for (int i = 0; i < g->nsp; i++) {
        g->stride[i] = ns ? s[i] : 1;
        g->dil[i] = nd ? d[i] : 1;
        int64_t k = g->wd[2 + i];
        if (nk && ks[i] != k)
            return dn_why(why, len, "Conv kernel_shape disagrees with the weights");
        if (g->stride[i] < 1 || g->dil[i] < 1)
            return dn_why(why, len, "Conv strides and dilations must be positive");
        g->ext[i] = (k - 1) * g->dil[i] + 1;
    }
    if (!dn_spatial_pads(n, g->nsp, g->xd + 2, g->yd + 2, g->ext, g->stride, g->pl, g->pr))
        return dn_why(why, len, "Conv padding (auto_pad=%s) does not produce the inferred output shape",
                      bd_node_attr_string(n, "auto_pad", "NOTSET"));
    return true;
}

bool dn_conv_supports(const bd_graph *gr, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "Conv needs X and W");
    if (!dn_io_f32(n, 3, why, len))
        return false;
    if (!n->inputs[1]->data)
        return dn_why(why, len, "Conv weights '%s' must be a constant", n->inputs[1]->name);
    const bd_value *b = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    dn_conv_geom g;
    if (!geom(n, &g, why, len))
        return false;
    if (b && (b->shape.rank != 1 || b->shape.dims[0] != g.wd[0]))
        return dn_why(why, len, "Conv bias must be 1-D with one value per output channel");
    return dn_postops_supported(gr, n, why, len);
}

/* oneDNN's Winograd kernels (F(2x2,3x3) and F(4x4,3x3)) do 2.25-4x fewer multiplications
 * than direct convolution on 3x3 stride-1 2D convolutions: ResNet-50 at 1 thread 74.5 -> 63.6
 * ms, ResNet-18 at 2 threads -17%, within 2e-5 of PyTorch (docs/performance.md). Measured
 * alone at 1 and 2 threads they win from 16 channels in and out (SqueezeNet's 16->64 at 55x55:
 * 0.49 -> 0.33 ms, 32->128 at 27x27: 0.45 -> 0.26) and lose below (8->8 at 112x112: 0.26 ->
 * 0.41, 3->16: 3x slower) or on tiny steps (16->16 at 14x14, 0.9 MFLOP: slower at 2 threads),
 * hence the floors. Tried there unless BRAID_DNNL_WINOGRAD=0; where oneDNN has no such kernel
 * (CPUs without AVX-512) the direct one is used. */
#define WINOGRAD_MIN_CHANNELS 16
#define WINOGRAD_MIN_FLOPS    10e6    /* of the direct convolution */

static bool winograd_wanted(const dn_conv_geom *g)
{
    const char *env = getenv("BRAID_DNNL_WINOGRAD");
    if ((env && !strcmp(env, "0")) || g->nsp != 2 || g->group != 1 ||
        g->wd[0] < WINOGRAD_MIN_CHANNELS || g->wd[1] < WINOGRAD_MIN_CHANNELS)
        return false;
    for (int i = 0; i < 2; i++)
        if (g->wd[2 + i] != 3 || g->stride[i] != 1 || g->dil[i] != 1)
            return false;
    double flops = 2.0 * (double)g->yd[0] * (double)g->yd[2] * (double)g->yd[3] * (double)g->wd[0] *
                   (double)g->wd[1] * 9.0;
    return flops >= WINOGRAD_MIN_FLOPS;
}

/* oneDNN 2.6 has two Winograd kernels on AVX-512, F(2x2,3x3) and F(4x4,3x3), and its own
 * choice is mostly the first. F(4x4) does fewer multiplications but transforms each 3x3
 * filter into a 6x6 one (4x the weight bytes; F(2x2): 4x4, 1.8x). Measured alone it wins from
 * 13x13 outputs up (64 channels at 56x56: 1.01 -> 0.69 ms; 256 at 14x14: 0.92 -> 0.76) and
 * loses at 7x7, where its 4x4 tiles cover 8x8 (512 channels: 1.33 -> 1.78). Inside a model,
 * where each inference streams the weights in again, it wins only while the transformed
 * weights stay in a core's L2: SqueezeNet's 16->64 at 55x55 (147 KB) 0.33 -> 0.24 ms and
 * 32->128 at 27x27 (590 KB) 0.27 -> 0.18, but 64->256 at 13x13 (2.4 MB) 0.38 -> 0.42 and
 * ResNet's 256 at 14x14 (9.4 MB): 1.1 ms with F(2x2), 1.3 with F(4x4). */
#define WINOGRAD_4X4_MIN_SIZE    13
#define WINOGRAD_4X4_MAX_WEIGHTS (1 << 20)   /* bytes of 6x6 f32 filters */

/* A Winograd primitive for DESC's shapes with post-ops PO (not consumed), or NULL when oneDNN
 * has none: F(4x4,3x3) where it wins (above) and oneDNN offers it, else oneDNN's first
 * choice. */
static dnnl_primitive_desc_t winograd_pd(dn_compiler *c, const_dnnl_post_ops_t po, const dn_conv_geom *g,
                                         const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wei,
                                         const dnnl_memory_desc_t *bias, const dnnl_memory_desc_t *dst,
                                         const dnnl_dims_t strides, const dnnl_dims_t dil,
                                         const dnnl_dims_t pl, const dnnl_dims_t pr)
{
    dnnl_primitive_attr_t attr = dn_attr(c, po);
    dnnl_convolution_desc_t desc;
    dnnl_primitive_desc_iterator_t it = NULL;
    dnnl_primitive_desc_t pd = NULL;
    bool want_4x4 = g->yd[2] >= WINOGRAD_4X4_MIN_SIZE && g->yd[3] >= WINOGRAD_4X4_MIN_SIZE &&
                    (double)g->wd[0] * (double)g->wd[1] * 36.0 * sizeof(float) <= WINOGRAD_4X4_MAX_WEIGHTS;
    if (attr && dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference,
                    dnnl_convolution_winograd, src, wei, bias, dst, strides, dil, pl, pr) == dnnl_success &&
        dnnl_primitive_desc_iterator_create(&it, &desc, attr, c->eng, NULL) == dnnl_success) {
        do {
            dnnl_primitive_desc_t cand = dnnl_primitive_desc_iterator_fetch(it);
            const char *impl = NULL;
            if (!cand)
                break;
            dnnl_primitive_desc_query(cand, dnnl_query_impl_info_str, 0, &impl);
            bool is_4x4 = impl && strstr(impl, "wino_4x3");
            if (!pd || (want_4x4 && is_4x4)) {
                if (pd)
                    dnnl_primitive_desc_destroy(pd);
                pd = cand;
            } else {
                dnnl_primitive_desc_destroy(cand);
            }
            if (!want_4x4 || is_4x4)
                break;
        } while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
        dnnl_primitive_desc_iterator_destroy(it);
    }
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return pd;
}

/* A 1x1 convolution with strides and no padding reads only every s-th pixel. oneDNN 2.6's
 * brgconv_1x1 runs ResNet-50's 512 -> 1024 channels, 28x28 -> 14x14 at 82 GFLOP/s, where the
 * same convolution at stride 1 over the 14x14 pixels it reads runs at 107 (2.49 vs 1.91 ms;
 * picking them costs 0.03); ResNet-50's other strided 1x1 convolutions take the same time
 * either way. So the pixels are picked first, by a pooling with a 1x1 window and the
 * convolution's strides (in the convolution's own source layout), and the convolution then
 * runs at stride 1. BRAID_DNNL_SUBSAMPLE=0 turns it off. */
static bool subsample_first(const dn_conv_geom *g)
{
    const char *env = getenv("BRAID_DNNL_SUBSAMPLE");
    if (env && !strcmp(env, "0"))
        return false;
    bool strided = false;
    for (int i = 0; i < g->nsp; i++) {
        if (g->wd[2 + i] != 1 || g->pl[i] || g->pr[i])
            return false;
        strided |= g->stride[i] > 1;
    }
    return strided;
}

/* The pooling step that picks X's pixels at G's strides into a new buffer *BUF laid out as
 * SMD (the convolution's source: X's channels, the output's spatial dims). Made once per X,
 * strides and layout: ResNet's stride-2 blocks pick the same pixels for both 1x1
 * convolutions of the block (its first and its shortcut). */
static int subsample_step(dn_compiler *c, const bd_value *x, const dn_conv_geom *g,
                          const dnnl_memory_desc_t *smd, int *buf)
{
    dnnl_memory_desc_t xcf, xir;
    dnnl_dims_t stride, kernel, dil = { 0 }, pad = { 0 };
    int64_t pick[3] = { 0 };
    for (int i = 0; i < g->nsp; i++) {
        stride[i] = pick[i] = g->stride[i];
        kernel[i] = 1;
    }
    if ((*buf = dn_cached_copy(c, x, smd, pick)) >= 0)
        return 0;
    dn_md_like(&xcf, smd, g->xd);                 /* X in the same layout: one jit kernel */
    int xbuf, rc = dn_md_ir(c, g->last, &xir, &xcf);
    if (rc || (rc = dn_input(c, x, &xir, &xbuf)) || (rc = dn_temp(c, smd, buf)))
        return rc;
    dnnl_pooling_v2_desc_t desc;
    dnnl_primitive_desc_t pd;
    /* an average of one element: x itself, NaN included (a max pooling starts from -FLT_MAX) */
    rc = dn_pd_make(c, dnnl_pooling_v2_forward_desc_init(&desc, dnnl_forward_inference,
                                                         dnnl_pooling_avg_exclude_padding, &xcf, smd,
                                                         stride, kernel, dil, pad, pad),
                    "dnnl_pooling_v2_forward_desc_init (subsample)", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    dn_arg args[2] = { { DNNL_ARG_SRC, xbuf, xcf }, { DNNL_ARG_DST, *buf, *smd } };
    rc = dn_add_step(c, pd, args, 2);
    return rc ? rc : dn_cache_copy(c, x, smd, pick, *buf);
}

int dn_conv_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *w = n->inputs[1], *y = n->outputs[0];
    const bd_value *b = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    char why[160];
    dn_conv_geom g;
    if (!geom(n, &g, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    int rank = x->shape.rank;
    bool int8;
    int rc = dn_conv_int8_build(c, n, &g, &int8);       /* a QDQ model's Conv, where exact */
    if (rc || int8)
        return rc;

    bool sub = subsample_first(&g);
    int64_t cd[BD_MAX_RANK];               /* the primitive's source: X, or its picked pixels */
    memcpy(cd, g.xd, sizeof cd);
    for (int i = 0; sub && i < g.nsp; i++)
        cd[2 + i] = g.yd[2 + i];
    dnnl_memory_desc_t src_any, wei_any, bias_md, dst_any, wei_src;
    dn_md_any(&src_any, rank, cd);
    dn_md_any(&dst_any, rank, g.yd);
    int64_t wd[BD_MAX_RANK + 1];
    int wrank = rank;
    if (g.group > 1) {
        wd[0] = g.group;
        wd[1] = g.wd[0] / g.group;
        memcpy(wd + 2, g.wd + 1, sizeof *wd * (size_t)(rank - 1));
        wrank = rank + 1;
    } else {
        memcpy(wd, g.wd, sizeof *wd * (size_t)rank);
    }
    dn_md_any(&wei_any, wrank, wd);
    rc = dn_filter_md(c, n, &w->shape, g.group, &wei_src);
    if (rc)
        return rc;
    if (b)
        dn_md_of_shape(&bias_md, b);

    dnnl_dims_t strides, dil, pl, pr;
    for (int i = 0; i < g.nsp; i++) {
        strides[i] = sub ? 1 : g.stride[i];
        dil[i] = g.dil[i] - 1;
        pl[i] = g.pl[i];
        pr[i] = g.pr[i];
    }
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    rc = dn_postops_build_ex(c, 0, rank, y->shape.dims, g.last, &po, &pa);
    if (rc)
        return rc;
    dnnl_convolution_desc_t desc;
    dnnl_primitive_desc_t pd = winograd_wanted(&g) ?
        winograd_pd(c, po, &g, &src_any, &wei_any, b ? &bias_md : NULL, &dst_any, strides, dil, pl, pr) : NULL;
    if (pd) {
        if (po)
            dnnl_post_ops_destroy(po);
    } else {
        /* A sum after other post-ops sends oneDNN's AVX2 kernels to ref:any (dn_postops_build_as):
         * then the sum is built again as a binary add of the residual. */
        dnnl_memory_desc_t res_any;
        dn_md_any(&res_any, rank, g.yd);
        for (int as_binary = 0; !pd; as_binary++) {
            if (as_binary && (rc = dn_postops_build_as(c, 0, rank, y->shape.dims, g.last, &res_any, &po, &pa)))
                return rc;
            rc = dn_pd_make(c, dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference,
                               dnnl_convolution_direct, &src_any, &wei_any, b ? &bias_md : NULL, &dst_any,
                               strides, dil, pl, pr),
                            "dnnl_dilated_convolution_forward_desc_init", &desc, po, 1.0f, &pd);
            po = NULL;                          /* dn_pd_make consumed it */
            if (rc)
                return rc;
            if (!as_binary && dn_postops_sum_fell_to_ref(pd, &pa)) {
                dnnl_primitive_desc_destroy(pd);
                pd = NULL;
            }
        }
    }

    dn_arg args[4 + BD_MAX_POSTOPS];
    int na = 0, sbuf, wbuf, bbuf = -1, dbuf;
    const dnnl_memory_desc_t *smd = dn_pd_md(pd, dnnl_query_src_md);
    const dnnl_memory_desc_t *wmd = dn_pd_md(pd, dnnl_query_weights_md);
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    const dnnl_memory_desc_t *bmd = b ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1) : NULL;
    dnnl_memory_desc_t sir, dir;     /* src/dst in the IR's dim order (NHWC: permuted back) */
    rc = dn_md_ir(c, g.last, &sir, smd);
    if (!rc)
        rc = dn_md_ir(c, g.last, &dir, dmd);
    if (!rc)
        rc = sub ? subsample_step(c, x, &g, smd, &sbuf) : dn_input(c, x, &sir, &sbuf);
    if (!rc)
        rc = dn_const_value(c, w, &wei_src, wmd, &wbuf);
    if (!rc && b)
        rc = b->data ? dn_const_value(c, b, &bias_md, bmd, &bbuf) : dn_input(c, b, bmd, &bbuf);
    if (!rc && pa.residual_arg >= 0)
        rc = dn_postops_bind_residual(c, pd, dmd, &dir, &pa);
    if (!rc)
        rc = pa.residual && pa.residual_arg < 0 ? dn_output_with_residual(c, y, &dir, pa.residual, &dbuf)
                                                : dn_output(c, y, &dir, &dbuf);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    args[na++] = (dn_arg){ DNNL_ARG_SRC, sbuf, *smd };
    args[na++] = (dn_arg){ DNNL_ARG_WEIGHTS, wbuf, *wmd };
    if (b)
        args[na++] = (dn_arg){ DNNL_ARG_BIAS, bbuf, *bmd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, *dmd };
    for (int i = 0; i < pa.nargs; i++)
        args[na++] = pa.args[i];
    return dn_add_step(c, pd, args, na);
}
