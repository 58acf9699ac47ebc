/* A Conv or MatMul of a QDQ model as oneDNN's int8 convolution or matmul, where that is exact.
 *
 * In the QDQ format (docs/partitioning.md, "Quantized models") a Conv or MatMul reads a
 * FakeQuantize's output, values on a grid x = s_in (q - z), and its weights were an int8
 * tensor times a scale per output channel (dequantized at plan time). Such a node is an
 * integer product: u8 source (an s8 grid is shifted by 128 into u8), s8 weights, an s32 sum,
 * scaled per output channel by s_in * w_scale into an f32 destination, the bias and post-ops as
 * before. oneDNN 2.6 runs it 2-3x faster than f32 on AVX2 (a 64 -> 64 channel convolution at
 * 56x56: 2.7 -> 1.2-1.6 ms; a [128, 768] x [768, 768] matmul: 4x).
 *
 * Exact only where oneDNN's kernel cannot saturate: without VNNI it adds two u8 x s8 products
 * into an int16 (`vpmaddubsw`), which holds 255 * 64 * 2 but not 255 * 127 * 2. So the int8
 * primitive is taken when the CPU has VNNI (32-bit sums), or when every weight's integer is
 * within +-64 (onnxruntime's `reduce_range` quantization, which it recommends for such CPUs);
 * else the f32 primitive runs on the dequantized weights, as exact as the QDQ semantics.
 * A fake quantization after the node (its output's QDQ pair) is done inside the primitive:
 * the output scale divided by its step, then round, clip to its range and scale back, as
 * oneDNN post-ops, where braid's own step would read and write the f32 output again (one
 * scaling where the graph has two: a value on a rounding tie may land one step away).
 *
 * When every reader of such a Conv's fake-quantized output is a Conv taking it as its source,
 * the primitive writes the grid's u8 codes instead (keep_u8): the readers take them as they
 * are, where an f32 output would be converted back to the same codes once per edge.
 *
 * BRAID_DNNL_INT8=0 turns this off. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

typedef struct q8_op {
    float    s_in;          /* the source grid: x = s_in * (q - z_u8), q in 0..255 */
    int32_t  z_u8;
    int8_t  *wq;            /* the weights' integers: a Conv's in the initializer's order
                             * [O, I/G, k...], a MatMul's [K, N] */
    float   *oscale;        /* per output channel: s_in * w_scale */
    float   *bias;          /* per output channel: bias / oscale (oneDNN 2.6 adds the bias to
                             * the s32 sum before scaling), or NULL */
    int      qmax;          /* the largest |weight integer| */
} q8_op;

static void q8_free(q8_op *q)
{
    free(q->wq);
    free(q->oscale);
    free(q->bias);
}

/* The grid X's producer puts X on: a FakeQuantize node, or a node whose last post-op is one,
 * found through ops that only move values (a Reshape or MaxPool between). */
static bool source_grid(const bd_value *x, q8_op *q)
{
    const bd_node *p = x->producer;
    for (int hops = 0; p && !p->n_post && bd_node_moves_values(p) && p->outputs[0] == x && hops < 16;
         hops++) {
        x = p->inputs[0];
        p = x->producer;
    }
    if (!p || p->n_outputs < 1 || p->outputs[0] != x)
        return false;
    float s, z;
    bool u8;
    if (!strcmp(p->op_type, "FakeQuantize") && !strcmp(p->domain, "braid") && p->n_post == 0) {
        s = bd_node_attr_float(p, "scale", 0.0f);
        z = (float)bd_node_attr_int(p, "zero_point", 0);
        u8 = bd_node_attr_int(p, "to", BD_DT_UINT8) == BD_DT_UINT8;
    } else if (dn_fakequant_tail(p)) {
        const bd_postop *t = &p->post[p->n_post - 1];
        s = t->alpha;
        z = t->beta;
        u8 = t->alg == BD_ELT_FAKEQUANT_U8;
    } else {
        return false;
    }
    if (!isnormal(s) || !(s > 0.0f) || !isfinite(1.0f / s))
        return false;                             /* a hostile file's scale: the f32 path */
    float zu = z + (u8 ? 0.0f : 128.0f);         /* an s8 grid, shifted into u8 */
    if (!(zu >= 0.0f && zu <= 255.0f) || zu != nearbyintf(zu))
        return false;                             /* checked before any conversion */
    q->s_in = s;
    q->z_u8 = (int32_t)zu;
    return true;
}

/* N's post-ops from FIRST on are all eltwise (a residual or a binary keeps the f32 path). */
static bool eltwise_posts(const bd_node *n, int first)
{
    for (int i = first; i < n->n_post; i++)
        if (n->post[i].kind != BD_POST_ELTWISE)
            return false;
    return true;
}

/* V rounded to the nearest integer (ties to even) when |V| < 2^22, without a libm call: the
 * weights' check below rejects anything past 127 anyway. */
static inline float round_small(float v)
{
    const float big = 12582912.0f;             /* 1.5 * 2^23: its ulp is 1 */
    return (v + big) - big;
}

/* The magnitudes the largest weight integer of a channel may have: full range, or
 * onnxruntime's reduce_range. */
static const float k_tops[] = { 127.0f, 64.0f, 63.0f };

/* Q's weights, scales and bias from W: M output channels of K weights each, weight k of
 * channel m at W[m * MS + k * KS] (floats, MS and KS one of them 1, the other its extent);
 * integers written at the same index. A channel's scale is the one that puts its largest
 * magnitude on a k_tops value and every weight within 1e-3 of an integer step. BIAS (M floats)
 * may be NULL. False, Q freed, when a channel has no such scale. The passes run in memory
 * order: BERT-base's 85 M weights take ~0.2 s. */
static bool weights_q8(q8_op *q, const void *w, size_t m, size_t k, size_t ms, size_t ks,
                       const void *bias)
{
    size_t outer = ms > ks ? m : k, inner = ms > ks ? k : m;      /* memory order */
    q->wq = malloc(m * k);
    q->oscale = malloc(m * sizeof *q->oscale);
    q->bias = bias ? malloc(m * sizeof *q->bias) : NULL;
    float *amax = calloc(m, sizeof *amax), *scale = malloc(m * sizeof *scale);
    float *inv = malloc(m * sizeof *inv);
    unsigned char *top = calloc(m, 1), *bad = calloc(m, 1);
    bool ok = q->wq && q->oscale && (!bias || q->bias) && amax && scale && inv && top && bad;
    for (size_t o = 0; ok && o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            size_t c = ms > ks ? o : i;
            float v = fabsf(dn_f32_at(w, (int64_t)(o * inner + i)));
            amax[c] = v > amax[c] || v != v ? v : amax[c];          /* a NaN stays */
        }
    for (size_t c = 0; ok && c < m; c++)
        ok = isfinite(amax[c]);
    for (int pass = 0, redo = 1; ok && redo && pass < (int)(sizeof k_tops / sizeof *k_tops); pass++) {
        redo = 0;
        for (size_t c = 0; c < m; c++) {
            scale[c] = amax[c] > 0.0f ? amax[c] / k_tops[top[c]] : 1.0f;
            inv[c] = 1.0f / scale[c];
        }
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++) {
                size_t c = ms > ks ? o : i, at = o * inner + i;
                if (pass && !bad[c])
                    continue;                                       /* settled before */
                float v = dn_f32_at(w, (int64_t)at) * inv[c], r = round_small(v);
                if (fabsf(v - r) > 1e-3f || fabsf(r) > 127.0f)
                    bad[c] = 2;
                q->wq[at] = (int8_t)(fabsf(r) <= 127.0f ? r : 0.0f);
            }
        for (size_t c = 0; c < m; c++) {
            bad[c] = bad[c] == 2;                 /* failed this pass: the next magnitude */
            if (bad[c] && ++top[c] >= sizeof k_tops / sizeof *k_tops)
                ok = false;
            redo |= bad[c];
        }
        if (redo && pass + 1 == (int)(sizeof k_tops / sizeof *k_tops))
            ok = false;
    }
    for (size_t c = 0; ok && c < m; c++) {
        q->oscale[c] = q->s_in * scale[c];
        if (bias)
            q->bias[c] = dn_f32_at(bias, (int64_t)c) / q->oscale[c];
        ok = isnormal(q->oscale[c]) && (!bias || isfinite(q->bias[c]));   /* else the f32 path */
    }
    for (size_t e = 0; ok && e < m * k; e++)
        q->qmax = abs(q->wq[e]) > q->qmax ? abs(q->wq[e]) : q->qmax;
    free(amax);
    free(scale);
    free(inv);
    free(top);
    free(bad);
    if (!ok)
        q8_free(q);
    return ok;
}

/* N's post-ops from FIRST on, as oneDNN post-ops *PO for a destination of RANK dims DIMS, with a
 * last fake quantization taken into the primitive when what precedes it is at most one ReLU
 * (the only one of them that commutes with the division by the step): Q's output scales are
 * then divided by the step, and c->tail_fused says so. With U8_WANTED the destination may
 * then hold the grid's u8 codes themselves (*U8_DST): round is the last post-op, oneDNN adds
 * the destination's zero point to that integer and saturates (the clip), exactly. */
static int int8_postops(dn_compiler *c, const bd_node *n, int first, int rank, const int64_t *dims,
                        q8_op *q, size_t m, bool u8_wanted, bool *u8_dst, dnnl_post_ops_t *po,
                        dn_post_args *pa)
{
    *po = NULL;
    *u8_dst = false;
    const bd_postop *t = dn_fakequant_tail(n) ? &n->post[n->n_post - 1] : NULL;
    bool relu_only = n->n_post - first == 1 ||
                     (n->n_post - first == 2 && n->post[first].kind == BD_POST_ELTWISE &&
                      n->post[first].alg == BD_ELT_RELU && n->post[first].alpha == 0.0f);
    for (size_t i = 0; t && i < m; i++)
        relu_only &= isnormal(q->oscale[i] / t->alpha);   /* a hostile step: left to the tail */
    if (!t || !relu_only)
        return dn_postops_build_as(c, first, rank, dims, false, NULL, po, pa);
    memset(pa, 0, sizeof *pa);
    pa->sum_index = pa->residual_arg = -1;
    bool u8 = t->alg == BD_ELT_FAKEQUANT_U8;
    float lo = (u8 ? 0.0f : -128.0f) - t->beta, hi = (u8 ? 255.0f : 127.0f) - t->beta;
    for (size_t i = 0; i < m; i++)
        q->oscale[i] /= t->alpha;
    int rc = dn_check(c, dnnl_post_ops_create(po), "dnnl_post_ops_create") ||
             (n->n_post - first == 2 &&
              dn_check(c, dnnl_post_ops_append_eltwise(*po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f), "relu")) ||
             dn_check(c, dnnl_post_ops_append_eltwise(*po, 1.0f, dnnl_eltwise_round, 0.0f, 0.0f), "round") ||
             (!u8_wanted &&
              (dn_check(c, dnnl_post_ops_append_eltwise(*po, 1.0f, dnnl_eltwise_clip, lo, hi), "clip") ||
               dn_check(c, dnnl_post_ops_append_eltwise(*po, 1.0f, dnnl_eltwise_linear, t->alpha, 0.0f),
                        "linear"))) ? BD_EBACKEND : 0;
    if (rc) {
        dnnl_post_ops_destroy(*po);
        *po = NULL;
        return rc;
    }
    c->tail_fused = true;
    *u8_dst = u8_wanted;
    return 0;
}

/* May Q run on oneDNN's int8 kernels exactly here, and are they wanted? */
static bool int8_exact(const q8_op *q)
{
    const char *env = getenv("BRAID_DNNL_INT8");
    return !(env && !strcmp(env, "0")) && (q->qmax <= DN_INT8_NO_VNNI_MAX || dn_cpu_has_vnni());
}

int dn_int8_code_readers(const dn_compiler *c, const bd_value *y, bool *only)
{
    const char *env = getenv("BRAID_DNNL_INT8_CHAIN");
    int readers = 0;
    *only = true;
    if (env && !strcmp(env, "0"))
        return 0;
    for (size_t i = 0; i < c->sg->n_nodes; i++) {
        const bd_node *r = c->sg->nodes[i];
        for (size_t k = 0; k < r->n_inputs; k++) {
            if (r->inputs[k] != y)
                continue;
            if (k == 0 && !strcmp(r->op_type, "Conv") && !(r->domain && r->domain[0]))
                readers++;
            else
                *only = false;
        }
    }
    return readers;
}

/* Should Y, the fake-quantized output of int8 Conv N, stay as u8 codes on grid OUT? When every
 * reader is a Conv taking it as its source: each would convert an f32 Y back to the same u8
 * codes (a reorder per edge, the largest cost of a QDQ MobileNet after the convolutions). A
 * reader that wants f32 after all (its int8 primitive refused) gets it from the codes
 * (dn_int8_dequant). */
static bool keep_u8(const dn_compiler *c, const bd_value *y, q8_op *out)
{
    bool only;
    return c->t[y->index].out_index < 0 && dn_int8_code_readers(c, y, &only) > 0 && only &&
           source_grid(y, out);
}

/* Fill Q for Conv N (source grid, weights on a per-channel grid, scales, bias); false when N
 * is not such a convolution. */
static bool plan_conv(const bd_node *n, const dn_conv_geom *g, q8_op *q)
{
    const bd_value *x = n->inputs[0], *w = n->inputs[1];
    const bd_value *b = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    memset(q, 0, sizeof *q);
    if (g->last || !w->data || w->dtype != BD_DT_FLOAT || (b && (!b->data || b->dtype != BD_DT_FLOAT)) ||
        bd_node_attr(n, "filter_format") || !eltwise_posts(n, 0) || !source_grid(x, q))
        return false;
    size_t m = (size_t)g->wd[0], k = 1;
    for (int d = 1; d < g->nsp + 2; d++)
        k *= (size_t)g->wd[d];
    if (w->nbytes < m * k * sizeof(float) || (b && b->nbytes < m * sizeof(float)))
        return false;
    return weights_q8(q, w->data, m, k, k, 1, b ? b->data : NULL);
}

static const int64_t whole[3] = { 0 };

/* A reorder from XBUF (seen as XMD) into a new buffer *SBUF laid out as SMD, with output scale
 * SCALE and zero point ZP on the side ZP_ARG (DNNL_ARG_SRC or _DST) unless SCALE is 0; the copy
 * is cached as X's in SMD. */
static int convert(dn_compiler *c, const bd_value *x, int xbuf, const dnnl_memory_desc_t *xmd,
                   float scale, int zp_arg, int32_t zp, const dnnl_memory_desc_t *smd, int *sbuf)
{
    dnnl_primitive_attr_t attr = dn_attr(c, NULL);
    dnnl_primitive_desc_t pd = NULL;
    if (!attr)
        return BD_EBACKEND;
    int rc = (scale != 0.0f &&
              (dn_check(c, dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale), "set_output_scales") ||
               dn_check(c, dnnl_primitive_attr_set_zero_points(attr, zp_arg, 1, 0, &zp), "set_zero_points"))) ||
             dn_check(c, dnnl_reorder_primitive_desc_create(&pd, xmd, c->eng, smd, c->eng, attr),
                      "dnnl_reorder_primitive_desc_create (int8 codes)");
    dnnl_primitive_attr_destroy(attr);
    if (rc)
        return BD_EBACKEND;
    if ((rc = dn_temp(c, smd, sbuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[2] = { { DNNL_ARG_FROM, xbuf, *xmd }, { DNNL_ARG_TO, *sbuf, *smd } };
    rc = dn_push_prim(c, pd, args, 2);
    return rc ? rc : dn_cache_copy(c, x, smd, whole, *sbuf);
}

/* X (on Q's grid) as u8 codes in layout SMD, made once per X and layout: X's codes when its
 * producer or its fake quantization wrote them (reordered if laid out otherwise: a quarter of
 * the bytes to read), else X's f32 buffer XBUF (seen as XMD; XBUF < 0: X's own) divided by
 * the step plus the zero point, exact on the grid. */
static int source_u8(dn_compiler *c, const bd_value *x, int xbuf, const dnnl_memory_desc_t *xmd,
                     const q8_op *q, const dnnl_memory_desc_t *smd, int *sbuf)
{
    if ((*sbuf = dn_cached_copy(c, x, smd, whole)) >= 0)
        return 0;
    dnnl_memory_desc_t cmd;
    int cbuf = dn_cached_copy_typed(c, x, dnnl_u8, &cmd);
    if (cbuf >= 0)
        return convert(c, x, cbuf, &cmd, 0.0f, 0, 0, smd, sbuf);
    int rc;
    if (xbuf < 0) {
        if ((rc = dn_input(c, x, NULL, &xbuf)))
            return rc;
        xmd = &c->t[x->index].md;
    }
    return convert(c, x, xbuf, xmd, 1.0f / q->s_in, DNNL_ARG_DST, q->z_u8, smd, sbuf);
}

int dn_int8_dequant(dn_compiler *c, const bd_value *v)
{
    dn_tensor *t = &c->t[v->index];
    dnnl_memory_desc_t fmd = t->q8_md;              /* the codes' layout, in f32 */
    fmd.data_type = dnnl_f32;
    int buf, rc = convert(c, v, t->q8_buf, &t->q8_md, t->q8_scale, DNNL_ARG_SRC, t->q8_zp, &fmd, &buf);
    return rc ? rc : dn_define_view(c, v, buf, &fmd, false);
}

/* oneDNN's weight dims of G into DIMS ([G, O/G, I/G, k...] for a grouped convolution, else
 * [O, I, k...]: the initializer's own bytes either way); returns their count. */
static int weight_dims(const dn_conv_geom *g, dnnl_dims_t dims)
{
    int rank = g->nsp + 2, at = 0;
    if (g->group > 1) {
        dims[at++] = g->group;
        dims[at++] = g->wd[0] / g->group;
    } else {
        dims[at++] = g->wd[0];
    }
    for (int i = 1; i < rank; i++)
        dims[at++] = g->wd[i];
    return at;
}

/* The int8 pd for N with Q, post-ops PO (consumed), an f32 destination or OUT's u8 codes;
 * NULL when oneDNN has none but a reference kernel, or none at all. */
static dnnl_primitive_desc_t int8_pd(dn_compiler *c, const dn_conv_geom *g, const q8_op *q,
                                     dnnl_post_ops_t po, bool bias, const q8_op *out)
{
    int rank = g->nsp + 2;
    dnnl_memory_desc_t src, wei, dst, bmd;
    dnnl_dims_t sd, wdd, dd, bd = { g->wd[0] }, strides, dil, pl, pr;
    int wrank = weight_dims(g, wdd);
    for (int i = 0; i < rank; i++) {
        sd[i] = g->xd[i];
        dd[i] = g->yd[i];
    }
    for (int i = 0; i < g->nsp; i++) {
        strides[i] = g->stride[i];
        dil[i] = g->dil[i] - 1;
        pl[i] = g->pl[i];
        pr[i] = g->pr[i];
    }
    dnnl_primitive_attr_t attr = dn_attr(c, po);
    if (po)
        dnnl_post_ops_destroy(po);
    dnnl_convolution_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    if (attr &&
        dnnl_memory_desc_init_by_tag(&src, rank, sd, dnnl_u8, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&wei, wrank, wdd, dnnl_s8, dnnl_format_tag_any) == dnnl_success &&
        dnnl_memory_desc_init_by_tag(&dst, rank, dd, out ? dnnl_u8 : dnnl_f32, dnnl_format_tag_any) == dnnl_success &&
        (!out || dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &out->z_u8) == dnnl_success) &&
        dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a) == dnnl_success &&
        dnnl_primitive_attr_set_output_scales(attr, g->wd[0], 1 << 1, q->oscale) == dnnl_success &&
        dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &q->z_u8) == dnnl_success &&
        dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct,
                                                   &src, &wei, bias ? &bmd : NULL, &dst, strides, dil,
                                                   pl, pr) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &desc, attr, c->eng, NULL) == dnnl_success && dn_pd_is_cliff(pd)) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return pd;
}

/* Y's destination buffer *DBUF laid out as DMD: Y defined as it, seen as YMD, or (OUT) kept as
 * OUT's u8 codes, for the readers that want them (source_u8) or f32 (dn_int8_dequant). */
static int destination(dn_compiler *c, const bd_value *y, const dnnl_memory_desc_t *dmd,
                       const dnnl_memory_desc_t *ymd, const q8_op *out, int *dbuf)
{
    if (!out)
        return dn_output(c, y, ymd, dbuf);
    int rc = dn_temp(c, dmd, dbuf);
    if (!rc)
        rc = dn_cache_copy(c, y, dmd, whole, *dbuf);
    if (rc)
        return rc;
    dn_tensor *t = &c->t[y->index];
    t->q8 = true;
    t->q8_buf = *dbuf;
    t->q8_md = *dmd;
    t->q8_scale = out->s_in;
    t->q8_zp = out->z_u8;
    return 0;
}

/* Append PD (consumed) reading the u8 source SBUF: Q's weights (plain as WPLAIN) and bias
 * (BPLAIN) laid out as PD wants them, Y's destination as destination() makes it, post-op
 * arguments PA. Frees Q. */
static int emit(dn_compiler *c, dnnl_primitive_desc_t pd, q8_op *q, int sbuf,
                const dnnl_memory_desc_t *wplain, const dnnl_memory_desc_t *bplain,
                const bd_value *y, const dnnl_memory_desc_t *ymd, const q8_op *out,
                const dn_post_args *pa)
{
    const dnnl_memory_desc_t *smd = dn_pd_md(pd, dnnl_query_src_md);
    const dnnl_memory_desc_t *wmd = dn_pd_md(pd, dnnl_query_weights_md);
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    const dnnl_memory_desc_t *bmd = q->bias ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1) : NULL;
    int wbuf, bbuf = -1, dbuf;
    int rc = dn_const(c, q->wq, wplain, wmd, &wbuf);
    if (!rc && q->bias)
        rc = dn_const(c, q->bias, bplain, bmd, &bbuf);
    if (!rc)
        rc = destination(c, y, dmd, ymd, out, &dbuf);
    q8_free(q);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[4 + BD_MAX_POSTOPS];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC, sbuf, *smd };
    args[na++] = (dn_arg){ DNNL_ARG_WEIGHTS, wbuf, *wmd };
    if (bbuf >= 0)
        args[na++] = (dn_arg){ DNNL_ARG_BIAS, bbuf, *bmd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, *dmd };
    for (int i = 0; i < pa->nargs; i++)
        args[na++] = pa->args[i];
    return dn_push_prim(c, pd, args, na);
}

int dn_conv_int8_build(dn_compiler *c, const bd_node *n, const dn_conv_geom *g, bool *built)
{
    *built = false;
    q8_op q;
    if (!plan_conv(n, g, &q))
        return 0;
    if (!int8_exact(&q)) {
        q8_free(&q);
        return 0;                                   /* could saturate: the f32 path is exact */
    }
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = g->nsp + 2;
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    q8_op grid = { 0 };
    bool u8 = false;
    int rc = int8_postops(c, n, 0, rank, y->shape.dims, &q, (size_t)g->wd[0], keep_u8(c, y, &grid),
                          &u8, &po, &pa);
    dnnl_primitive_desc_t pd = rc ? NULL : int8_pd(c, g, &q, po, q.bias != NULL, u8 ? &grid : NULL);
    if (!pd) {
        c->tail_fused = false;
        q8_free(&q);
        return rc;                                  /* none: the f32 path */
    }
    const dnnl_memory_desc_t *smd = dn_pd_md(pd, dnnl_query_src_md);
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    dnnl_memory_desc_t wplain, bplain;
    dnnl_dims_t wdims, bd = { g->wd[0] };
    int wrank = weight_dims(g, wdims);
    int sbuf;
    rc = dn_check(c, dnnl_memory_desc_init_by_strides(&wplain, wrank, wdims, dnnl_s8, NULL),
                  "dnnl_memory_desc_init_by_strides (int8 weights)") ||
         dn_check(c, dnnl_memory_desc_init_by_tag(&bplain, 1, bd, dnnl_f32, dnnl_a),
                  "dnnl_memory_desc_init_by_tag (bias)") ? BD_EBACKEND : 0;
    if (!rc)
        rc = source_u8(c, x, -1, NULL, &q, smd, &sbuf);
    if (rc) {
        q8_free(&q);
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    *built = true;
    return emit(c, pd, &q, sbuf, &wplain, &bplain, y, dmd, u8 ? &grid : NULL, &pa);
}

int dn_matmul_int8_build(dn_compiler *c, const bd_node *n, const dn_mm_int8 *mm, bool *built)
{
    *built = false;
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    size_t K = (size_t)mm->k, N = (size_t)mm->n;
    q8_op q;
    memset(&q, 0, sizeof q);
    if (!eltwise_posts(n, mm->first_post) || !source_grid(x, &q) ||
        !weights_q8(&q, mm->w, N, K, 1, N, mm->bias))
        return 0;
    if (!int8_exact(&q)) {
        q8_free(&q);
        return 0;
    }
    dnnl_memory_desc_t src, wei, wplain, bmd, dst, yplain;
    dnnl_dims_t sd = { mm->m, mm->k }, wd = { mm->k, mm->n }, bd = { 1, mm->n }, dd = { mm->m, mm->n };
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_matmul_desc_t desc;
    int rc = dn_check(c, dnnl_memory_desc_init_by_tag(&src, 2, sd, dnnl_u8, dnnl_ab), "md") ||
             dn_check(c, dnnl_memory_desc_init_by_tag(&wei, 2, wd, dnnl_s8, dnnl_format_tag_any), "md") ||
             dn_check(c, dnnl_memory_desc_init_by_tag(&wplain, 2, wd, dnnl_s8, dnnl_ab), "md") ||
             dn_check(c, dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_f32, dnnl_ab), "md") ||
             dn_check(c, dnnl_memory_desc_init_by_tag(&dst, 2, dd, dnnl_f32, dnnl_ab), "md") ? BD_EBACKEND : 0;
    bool u8 = false;                                /* its codes kept for Convs: not yet */
    if (!rc)
        rc = int8_postops(c, n, mm->first_post, 2, dst.dims, &q, N, false, &u8, &po, &pa);
    dnnl_primitive_attr_t attr = rc ? NULL : dn_attr(c, po);
    if (po)
        dnnl_post_ops_destroy(po);
    if (attr &&
        (dnnl_primitive_attr_set_output_scales(attr, mm->n, 1 << 1, q.oscale) != dnnl_success ||
         dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &q.z_u8) != dnnl_success ||
         dnnl_matmul_desc_init(&desc, &src, &wei, q.bias ? &bmd : NULL, &dst) != dnnl_success ||
         dnnl_primitive_desc_create(&pd, &desc, attr, c->eng, NULL) != dnnl_success || dn_pd_is_cliff(pd))) {
        if (pd)
            dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!pd) {
        c->tail_fused = false;
        q8_free(&q);
        return rc;                                  /* none: the f32 path */
    }
    int sbuf;
    dn_md_of_shape(&yplain, y);
    rc = source_u8(c, x, mm->src_buf, &mm->src_md, &q, &src, &sbuf);
    if (rc) {
        q8_free(&q);
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    *built = true;
    return emit(c, pd, &q, sbuf, &wplain, &bmd, y, &yplain, NULL, &pa);
}
