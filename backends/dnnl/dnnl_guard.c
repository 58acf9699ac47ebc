/* The cliff guard: no oneDNN reference implementation on the hot path unless it is allowed
 * here with a reason (docs/partitioning.md, "The cliff guard").
 *
 * oneDNN picks an implementation per primitive desc by ISA, layouts and attributes; when no
 * optimised one fits it falls back to `ref:` kernels, often 10-100x slower (a pooling over an
 * 8-blocked input into a plain output, a binary on 8-blocked channels on AVX-512, PReLU with
 * blocked slopes). Every primitive a builder appends goes through dn_add_step, which asks
 * dn_guard_add here: a pd whose implementation is a cliff is created again, in order,
 *
 *   0. with its dst in its src's layout (blocked like it), reordered after the step into the
 *      layout its readers expect (a pool into a small plain output);
 *   1. with plain layouts: every blocked or strided operand of the op desc (and every binary
 *      post-op operand) row-major, reorders into temporaries before and from the dst after
 *      (constant operands are reordered once, at compile);
 *   2. with the op's own axes innermost: a softmax's axis, a reduction's reduced dims, else
 *      the channels (channels-last): oneDNN 2.6 has jit softmax kernels only along the
 *      innermost axis and jit reductions only over trailing dims (relayout below);
 *   3. with its post-op chain split at its first binary: the op with the eltwise post-ops
 *      before it, then each post-op from there as its own in-place primitive;
 *   4. with its whole post-op chain split off (a chain with a sum keeps it:
 *      dn_postops_build_as already handles a late sum);
 *   5. and 6. the whole split with plain, then with those layouts;
 *
 * and the first whose every primitive is not a cliff replaces it. One optimised implementation
 * counts as a cliff too: a gemm convolution with a binary post-op (slow_postops below). The
 * decision reads the implementation's name and attributes, never the CPU: the same code serves
 * AVX2 and AVX-512, whichever kernels oneDNN has there. What still lands on a cliff is kept
 * (the model still runs) and counted (bd_kernel_stats.ref_steps in the partition report,
 * `braid inspect`, /v2/status). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* Reference implementations measured to be as fast as the optimised path, by primitive kind
 * and implementation name. Each entry says why. */
static const struct {
    dnnl_primitive_kind_t kind;
    const char           *impl;
    const char           *reason;
} allowed[] = {
    /* oneDNN 2.6's f32 RNN (GRU, LSTM, vanilla) on CPU is one implementation named "ref":
     * a driver around its jit gemm (the cells' matmuls) and jit elementwise kernels. Measured
     * on an AVX2 Zen 3 (2026-12, zoo gru_classifier: two linear-before-reset GRU layers,
     * 64 steps, hidden 192, batch 1, ~52 MFLOP), 1 thread, 200 runs: min 1.20 ms (~43
     * GFLOP/s, gemm speed; a reference kernel runs at 1-3) and median 1.50-1.57 ms, against
     * ONNX Runtime's min 1.40-1.44 and median 1.86-2.25 in the same session. braid's own
     * recurrence (dnnl_recurrence.c) needs AVX-512 and takes it there. */
    { dnnl_rnn, "ref", "oneDNN 2.6's f32 RNN: a driver around jit gemm, not a reference kernel" },
};

bool dn_impl_is_cliff(dnnl_primitive_kind_t kind, const char *impl)
{
    if (!impl || strncmp(impl, "ref", 3) != 0)
        return false;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (allowed[i].kind == kind && !strcmp(allowed[i].impl, impl))
            return false;
    return true;
}

static const char *impl_of(const_dnnl_primitive_desc_t pd)
{
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    return impl;
}

static dnnl_primitive_kind_t kind_of(const_dnnl_primitive_desc_t pd)
{
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
    return kind;
}

/* The first binary post-op of PD's attr, or -1. */
static int first_binary_postop(const_dnnl_primitive_desc_t pd)
{
    const_dnnl_primitive_attr_t attr = NULL;
    const_dnnl_post_ops_t po = NULL;
    if (dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success ||
        dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success || !po)
        return -1;
    for (int i = 0; i < dnnl_post_ops_len(po); i++)
        if (dnnl_post_ops_get_kind(po, i) == dnnl_binary)
            return i;
    return -1;
}

/* oneDNN 2.6's gemm convolution (the one x64 f32 convolution that takes any dilation on AVX2)
 * runs a binary post-op through its reference post-op path, element by element: measured on
 * an AVX2 Zen 3 (zoo tcn: 96 -> 96 channels, kernel 3, dilation 2-32, 1000 steps, 1 thread),
 * 1.3-1.6 ms per call with a fused ReLU, 7.7-11.2 ms with ReLU + residual add + ReLU. The same
 * add as a jit binary primitive of its own costs a few microseconds. */
static bool slow_postops(dnnl_primitive_kind_t kind, const char *impl, const_dnnl_primitive_desc_t pd)
{
    return kind == dnnl_convolution && strstr(impl, "gemm") && first_binary_postop(pd) >= 0;
}

bool dn_pd_is_cliff(const_dnnl_primitive_desc_t pd)
{
    dnnl_primitive_kind_t kind = kind_of(pd);
    const char *impl = impl_of(pd);
    return dn_impl_is_cliff(kind, impl) || slow_postops(kind, impl, pd);
}

bool dn_probe_is_cliff(const void *desc)
{
    dnnl_engine_t eng = dn_engine();
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (!eng || dnnl_primitive_attr_create(&attr) != dnnl_success)
        return false;
    bool cliff = false;
    if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, desc, attr, eng, NULL) == dnnl_success) {
        cliff = dn_pd_is_cliff(pd);
        dnnl_primitive_desc_destroy(pd);
    }
    dnnl_primitive_attr_destroy(attr);
    return cliff;
}

/* ---- the op desc's operands ------------------------------------------------------------ */

/* Any op desc of oneDNN 2.6 the guard copies (the largest: RNN's). */
typedef union op_desc {
    dnnl_primitive_kind_t        kind;
    dnnl_pooling_v2_desc_t       pool2;
    dnnl_pooling_desc_t          pool;
    dnnl_binary_desc_t           binary;
    dnnl_prelu_desc_t            prelu;
    dnnl_softmax_v2_desc_t       softmax2;
    dnnl_softmax_desc_t          softmax;
    dnnl_eltwise_desc_t          eltwise;
    dnnl_reduction_desc_t        reduction;
    dnnl_resampling_desc_t       resampling;
    dnnl_matmul_desc_t           matmul;
    dnnl_lrn_desc_t              lrn;
    dnnl_shuffle_desc_t          shuffle;
    dnnl_batch_normalization_desc_t bnorm;
    dnnl_layer_normalization_desc_t lnorm;
    dnnl_rnn_desc_t              rnn;
    dnnl_convolution_desc_t      conv;
} op_desc;

#define MAX_FIELDS 4

/* The md fields of D that step arguments read or write: ARG[i] is read/written through
 * *MD[i] (one field may serve two args: an eltwise's data desc is its src and its dst).
 * Returns how many, 0 for an op the guard does not rewrite. */
static int op_fields(op_desc *d, int *arg, dnnl_memory_desc_t **md)
{
    int n = 0;
#define F(a, f) (arg[n] = (a), md[n++] = &(f))
    switch (d->kind) {
    case dnnl_pooling_v2:  F(DNNL_ARG_SRC, d->pool2.src_desc); F(DNNL_ARG_DST, d->pool2.dst_desc); break;
    case dnnl_pooling:     F(DNNL_ARG_SRC, d->pool.src_desc); F(DNNL_ARG_DST, d->pool.dst_desc); break;
    case dnnl_binary:      F(DNNL_ARG_SRC_0, d->binary.src_desc[0]); F(DNNL_ARG_SRC_1, d->binary.src_desc[1]);
                           F(DNNL_ARG_DST, d->binary.dst_desc); break;
    case dnnl_prelu:       F(DNNL_ARG_SRC, d->prelu.data_desc); F(DNNL_ARG_DST, d->prelu.data_desc);
                           F(DNNL_ARG_WEIGHTS, d->prelu.weights_desc); break;
    case dnnl_softmax_v2:  F(DNNL_ARG_SRC, d->softmax2.src_desc); F(DNNL_ARG_DST, d->softmax2.dst_desc); break;
    case dnnl_softmax:
    case dnnl_logsoftmax:  F(DNNL_ARG_SRC, d->softmax.data_desc); F(DNNL_ARG_DST, d->softmax.data_desc); break;
    case dnnl_eltwise:     F(DNNL_ARG_SRC, d->eltwise.data_desc); F(DNNL_ARG_DST, d->eltwise.data_desc); break;
    case dnnl_reduction:   F(DNNL_ARG_SRC, d->reduction.src_desc); F(DNNL_ARG_DST, d->reduction.dst_desc); break;
    case dnnl_resampling:  F(DNNL_ARG_SRC, d->resampling.src_desc); F(DNNL_ARG_DST, d->resampling.dst_desc); break;
    case dnnl_matmul:      F(DNNL_ARG_SRC, d->matmul.src_desc); F(DNNL_ARG_WEIGHTS, d->matmul.weights_desc);
                           F(DNNL_ARG_BIAS, d->matmul.bias_desc); F(DNNL_ARG_DST, d->matmul.dst_desc); break;
    case dnnl_lrn:         F(DNNL_ARG_SRC, d->lrn.data_desc); F(DNNL_ARG_DST, d->lrn.data_desc); break;
    case dnnl_shuffle:     F(DNNL_ARG_SRC, d->shuffle.data_desc); F(DNNL_ARG_DST, d->shuffle.data_desc); break;
    case dnnl_batch_normalization:
                           F(DNNL_ARG_SRC, d->bnorm.data_desc); F(DNNL_ARG_DST, d->bnorm.data_desc); break;
    case dnnl_layer_normalization:
                           F(DNNL_ARG_SRC, d->lnorm.data_desc); F(DNNL_ARG_DST, d->lnorm.data_desc); break;
    case dnnl_convolution: F(DNNL_ARG_SRC, d->conv.src_desc); F(DNNL_ARG_WEIGHTS, d->conv.weights_desc);
                           F(DNNL_ARG_BIAS, d->conv.bias_desc); F(DNNL_ARG_DST, d->conv.dst_desc); break;
    default: break;
    }
#undef F
    return n;
}

/* The layouts a variant gives the op's operands. */
enum { KEEP = 0, PLAIN, INNER, DST_LIKE_SRC };
/* Which post-ops a variant runs as primitives of their own: none, all, or those from the first
 * binary on (the eltwise ones before it stay fused). */
enum { FUSED = 0, SPLIT_ALL, SPLIT_AT_BINARY };

/* MD's dims in LAYOUT: row-major (PLAIN), or with the dims in mask INNER innermost, the rest
 * outside them, each group in its order (INNER). oneDNN 2.6 has jit softmax kernels only along
 * the innermost axis and jit reductions only over trailing dims: a softmax over the channels
 * of an NCHW tensor, or a sum over its middle axis, is `ref:` row-major and jit with that
 * axis innermost. */
static void relayout(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md, int layout, unsigned inner)
{
    if (layout != INNER) {
        dn_md_plain(out, md->ndims, md->dims);
        return;
    }
    dnnl_dims_t st;
    int64_t s = 1;
    for (int pass = 0; pass < 2; pass++)      /* inner dims first (from the last), then outer */
        for (int i = md->ndims - 1; i >= 0; i--)
            if (((inner >> i) & 1u) == (pass == 0)) {
                st[i] = s;
                s *= md->dims[i] > 0 ? md->dims[i] : 1;
            }
    dnnl_memory_desc_init_by_strides(out, md->ndims, md->dims, dnnl_f32, st);
}

/* Does MD (f32, defined) differ from its LAYOUT form? */
static bool needs_relayout(const dnnl_memory_desc_t *md, int layout, unsigned inner)
{
    if (layout == KEEP || layout == DST_LIKE_SRC || md->ndims == 0 || md->data_type != dnnl_f32)
        return false;
    if (md->format_kind == dnnl_format_kind_any)
        return true;
    dnnl_memory_desc_t t;
    relayout(&t, md, layout, inner);
    return layout == PLAIN ? !dn_md_is_plain(md) : !dn_md_equal(md, &t);
}

/* The dims the INNER layout puts innermost for op D: a softmax's axis, a reduction's reduced
 * dims, else the channels (dim 1: channels-last). 0 when that layout is the plain one. */
static unsigned inner_dims(const op_desc *d)
{
    unsigned m = 0;
    int nd = 0;
    if (d->kind == dnnl_softmax_v2) {
        m = 1u << d->softmax2.softmax_axis;
        nd = d->softmax2.src_desc.ndims;
    } else if (d->kind == dnnl_softmax || d->kind == dnnl_logsoftmax) {
        m = 1u << d->softmax.softmax_axis;
        nd = d->softmax.data_desc.ndims;
    } else if (d->kind == dnnl_reduction) {
        nd = d->reduction.src_desc.ndims;
        for (int i = 0; i < nd; i++)
            if (d->reduction.src_desc.dims[i] != d->reduction.dst_desc.dims[i])
                m |= 1u << i;
    } else {
        m = 2u;
        nd = 3;     /* channels-last only where there are spatial dims */
        const dnnl_memory_desc_t *x = d->kind == dnnl_binary ? &d->binary.src_desc[0] : NULL;
        if (x)
            nd = x->ndims;
    }
    for (int i = nd - 1; i >= 0 && ((m >> i) & 1u); i--)   /* already trailing: plain */
        m &= ~(1u << i);
    return nd < 2 ? 0 : m;
}

/* ---- a variant: the steps that replace one cliff ---------------------------------------- */

#define MAX_ARGS 24
#define MAX_STEPS (2 * MAX_ARGS + BD_MAX_POSTOPS + 2)

typedef struct pending {
    dnnl_primitive_desc_t pd;
    dn_arg                args[MAX_ARGS];
    int                   nargs;
    int                   const_from;   /* >= 0: a constant's conversion, not a step (see below) */
} pending;

typedef struct variant {
    pending steps[MAX_STEPS];
    int     n;
} variant;

static void variant_free(variant *v)
{
    for (int i = 0; i < v->n; i++)
        if (v->steps[i].pd)
            dnnl_primitive_desc_destroy(v->steps[i].pd);
    v->n = 0;
}

/* Queue PD (taken) with ARGS; false if PD is itself a cliff or the queue is full. */
static bool queue(variant *v, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs)
{
    if (v->n == MAX_STEPS || nargs > MAX_ARGS || dn_pd_is_cliff(pd)) {
        dnnl_primitive_desc_destroy(pd);
        return false;
    }
    pending *p = &v->steps[v->n++];
    p->pd = pd;
    memcpy(p->args, args, sizeof *args * (size_t)nargs);
    p->nargs = nargs;
    p->const_from = -1;
    return true;
}

static dnnl_primitive_desc_t reorder_pd(dn_compiler *c, const dnnl_memory_desc_t *src,
                                        const dnnl_memory_desc_t *dst)
{
    dnnl_primitive_attr_t attr = dn_attr(c, NULL);
    dnnl_primitive_desc_t pd = NULL;
    if (attr && dnnl_reorder_primitive_desc_create(&pd, src, c->eng, dst, c->eng, attr) != dnnl_success)
        pd = NULL;
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

/* A pd of DESC with a plain attr, or NULL (no error recorded: a variant that does not fit is
 * no failure). */
static dnnl_primitive_desc_t plain_pd(dn_compiler *c, const void *desc)
{
    dnnl_primitive_attr_t attr = dn_attr(c, NULL);
    dnnl_primitive_desc_t pd = NULL;
    if (attr && dnnl_primitive_desc_create(&pd, desc, attr, c->eng, NULL) != dnnl_success)
        pd = NULL;
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

/* Queue a copy of BUF (layout FROM) into a new temporary of layout TO; *OUT its buffer. A
 * constant is converted once at commit instead (const_from: the source buffer). */
static bool queue_copy_in(dn_compiler *c, variant *v, int buf, const dnnl_memory_desc_t *from,
                          const dnnl_memory_desc_t *to, int *out)
{
    if (buf >= 0 && c->bufs[buf].kind == DN_BUF_CONST) {
        if (v->n == MAX_STEPS)
            return false;
        pending *p = &v->steps[v->n++];
        memset(p, 0, sizeof *p);
        p->const_from = buf;
        p->args[0] = (dn_arg){ DNNL_ARG_FROM, buf, *from };
        p->args[1] = (dn_arg){ DNNL_ARG_TO, -1, *to };
        p->nargs = 2;
        *out = -(v->n + 1);  /* resolved at commit: -(index + 2) of this entry (-1 is the
                              * scratchpad's) */
        return true;
    }
    if (dn_temp(c, to, out))
        return false;
    dnnl_primitive_desc_t pd = reorder_pd(c, from, to);
    dn_arg a[2] = { { DNNL_ARG_FROM, buf, *from }, { DNNL_ARG_TO, *out, *to } };
    return pd && queue(v, pd, a, 2);
}

static bool is_input_arg(int arg)
{
    return arg != DNNL_ARG_DST;
}

/* The binary post-op I's operand argument id. */
static int post_src1(int i)
{
    return DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1;
}

/* The post-op index of a post-op operand's argument id (DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | x). */
static int postop_of_arg(int arg)
{
    return arg / DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE - 1;
}

/* Build variant V replacing the cliff PD (args ARGS): LAYOUT gives every operand that layout
 * (KEEP: none), SPLITTING (FUSED, SPLIT_ALL, SPLIT_AT_BINARY) says which post-ops run as
 * primitives of their own. False when it cannot be built or any of its primitives is a cliff
 * too. */
static bool build_variant(dn_compiler *c, const_dnnl_primitive_desc_t pd, const dn_arg *args,
                          int nargs, int layout, int splitting, variant *v)
{
    const_dnnl_op_desc_t opd = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_op_d, 0, &opd) != dnnl_success || !opd)
        return false;
    op_desc d;
    memset(&d, 0, sizeof d);
    dnnl_primitive_kind_t kind = *(const dnnl_primitive_kind_t *)opd;
    op_desc probe = { .kind = kind };
    int farg[MAX_FIELDS];
    dnnl_memory_desc_t *fmd[MAX_FIELDS];
    if (op_fields(&probe, farg, fmd) == 0)
        return false;
    size_t dsize = 0;
    switch (kind) {   /* copy exactly the op's desc: the pd's points at that many bytes */
    case dnnl_pooling_v2:  dsize = sizeof d.pool2; break;
    case dnnl_pooling:     dsize = sizeof d.pool; break;
    case dnnl_binary:      dsize = sizeof d.binary; break;
    case dnnl_prelu:       dsize = sizeof d.prelu; break;
    case dnnl_softmax_v2:  dsize = sizeof d.softmax2; break;
    case dnnl_softmax:
    case dnnl_logsoftmax:  dsize = sizeof d.softmax; break;
    case dnnl_eltwise:     dsize = sizeof d.eltwise; break;
    case dnnl_reduction:   dsize = sizeof d.reduction; break;
    case dnnl_resampling:  dsize = sizeof d.resampling; break;
    case dnnl_matmul:      dsize = sizeof d.matmul; break;
    case dnnl_lrn:         dsize = sizeof d.lrn; break;
    case dnnl_shuffle:     dsize = sizeof d.shuffle; break;
    case dnnl_batch_normalization: dsize = sizeof d.bnorm; break;
    case dnnl_layer_normalization: dsize = sizeof d.lnorm; break;
    case dnnl_convolution: dsize = sizeof d.conv; break;
    default: return false;
    }
    memcpy(&d, opd, dsize);
    int nf = op_fields(&d, farg, fmd);
    unsigned inner = inner_dims(&d);
    if (layout == INNER && !inner)
        return false;

    const_dnnl_primitive_attr_t attr0 = NULL;
    const_dnnl_post_ops_t po0 = NULL;
    if (dnnl_primitive_desc_get_attr(pd, &attr0) != dnnl_success ||
        dnnl_primitive_attr_get_post_ops(attr0, &po0) != dnnl_success)
        return false;
    int npo = po0 ? dnnl_post_ops_len(po0) : 0;
    bool has_sum = false;
    for (int i = 0; i < npo; i++) {
        dnnl_primitive_kind_t k = dnnl_post_ops_get_kind(po0, i);
        if (k == dnnl_sum)
            has_sum = true;
        else if (k != dnnl_eltwise && k != dnnl_binary)
            return false;
    }
    /* Post-ops [0, from) stay fused, [from, npo) become primitives of their own. */
    int from = splitting == FUSED ? npo : splitting == SPLIT_ALL ? 0 : first_binary_postop(pd);
    bool split = from >= 0 && from < npo;
    if (splitting != FUSED && !split)
        return false;
    for (int i = from; i < npo; i++)
        if (dnnl_post_ops_get_kind(po0, i) == dnnl_sum)
            return false;    /* a late sum: dn_postops_build_as handles it already */

    /* The operands: which args change layout, and to what. */
    dn_arg margs[MAX_ARGS];
    int nmain = 0;
    for (int a = 0; a < nargs && nmain < MAX_ARGS; a++)
        if (!split || args[a].arg < DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE || postop_of_arg(args[a].arg) < from)
            margs[nmain++] = args[a];
    if (nmain < nargs && !split)
        return false;
    /* COPY: the operand's new layout in the op's dims (what reorders write and read); the op
     * desc gets the same, except for a reduction's INNER layout, whose jit kernel wants a
     * row-major tensor (a strided one is `ref:`): it reads the same bytes as a row-major
     * tensor of the dims permuted (kept dims first, reduced dims last). */
    dnnl_memory_desc_t old_field[MAX_FIELDS], copy[MAX_FIELDS];
    for (int f = 0; f < nf; f++)    /* first: one field may serve two args (prelu's data) */
        old_field[f] = copy[f] = *fmd[f];
    /* DST_LIKE_SRC: only the dst changes, to the src's (blocked) layout, and is reordered into
     * what its readers expect after the step: a pooling of an 8-blocked [1,1024,7,7] into a
     * plain [1,1024,1,1] is ref:any on AVX2, blocked to blocked jit, and the reorder after it
     * moves 4 KiB where a plain copy of the input would move 200. */
    if (layout == DST_LIKE_SRC) {
        const dnnl_memory_desc_t *src = NULL, *src_field = NULL;
        for (int f = 0; f < nf; f++)
            if (farg[f] == DNNL_ARG_SRC) {
                src = &old_field[f];
                src_field = fmd[f];
            }
        bool changed = false;      /* a dst that is the src's own field (eltwise, prelu) stays */
        for (int f = 0; src && f < nf; f++)
            if (farg[f] == DNNL_ARG_DST && fmd[f] != src_field && old_field[f].ndims == src->ndims &&
                dn_md_tag(src) != dnnl_format_tag_undef) {
                dn_md_like(&copy[f], src, old_field[f].dims);
                changed |= !dn_md_equal(&copy[f], &old_field[f]);
                *fmd[f] = copy[f];
            }
        if (!changed)
            return false;
    }
    /* KEEP: an operand left to oneDNN (format any) keeps the layout the pd chose, so the op
     * alone reads and writes exactly what the fused one did. */
    for (int f = 0; layout == KEEP && f < nf; f++)
        if (fmd[f]->format_kind == dnnl_format_kind_any) {
            const dnnl_memory_desc_t *q = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, farg[f]);
            if (q && q->ndims)
                *fmd[f] = old_field[f] = copy[f] = *q;
        }
    bool permute = layout == INNER && kind == dnnl_reduction;   /* every field, or none */
    for (int f = 0; layout != DST_LIKE_SRC && f < nf; f++) {
        if (!permute && !needs_relayout(&old_field[f], layout, inner))
            continue;
        relayout(&copy[f], &old_field[f], layout, inner);
        *fmd[f] = copy[f];
        if (permute) {
            int64_t pd[DNNL_MAX_NDIMS];
            int k = 0;
            for (int pass = 0; pass < 2; pass++)
                for (int i = 0; i < copy[f].ndims; i++)
                    if (((inner >> i) & 1u) == (pass == 1))
                        pd[k++] = copy[f].dims[i];
            dn_md_plain(fmd[f], copy[f].ndims, pd);
        }
    }

    /* The attr: the same, with its post-ops dropped (SPLIT) or their operands in LAYOUT. Made
     * afresh (user scratchpad, the output scale, the post-ops), never cloned: a clone of a
     * pd's attr with its post-ops emptied still steered a plain linear eltwise to ref:any. */
    dnnl_dim_t nscales = 0;
    int smask = 0;
    const float *scales = NULL;
    if (dnnl_primitive_attr_get_output_scales(attr0, &nscales, &smask, &scales) != dnnl_success ||
        nscales != 1 || smask != 0)
        return false;
    dnnl_primitive_attr_t attr = dn_attr(c, NULL);
    if (!attr)
        return false;
    if (scales[0] != 1.0f && dnnl_primitive_attr_set_output_scales(attr, 1, 0, scales) != dnnl_success) {
        dnnl_primitive_attr_destroy(attr);
        return false;
    }
    dnnl_post_ops_t po = NULL;
    bool ok = dnnl_post_ops_create(&po) == dnnl_success;
    for (int i = 0; ok && i < from; i++) {
        dnnl_primitive_kind_t k = dnnl_post_ops_get_kind(po0, i);
        if (k == dnnl_eltwise) {
            float scale, alpha, beta;
            dnnl_alg_kind_t alg;
            ok = dnnl_post_ops_get_params_eltwise(po0, i, &scale, &alg, &alpha, &beta) == dnnl_success &&
                 dnnl_post_ops_append_eltwise(po, scale, alg, alpha, beta) == dnnl_success;
        } else if (k == dnnl_sum) {
            float scale;
            ok = dnnl_post_ops_get_params_sum(po0, i, &scale) == dnnl_success &&
                 dnnl_post_ops_append_sum(po, scale) == dnnl_success;
        } else {
            dnnl_alg_kind_t alg;
            const dnnl_memory_desc_t *s1 = NULL;
            ok = dnnl_post_ops_get_params_binary(po0, i, &alg, &s1) == dnnl_success;
            dnnl_memory_desc_t m = *s1;
            if (ok && needs_relayout(&m, layout, inner))
                relayout(&m, s1, layout, inner);
            ok = ok && dnnl_post_ops_append_binary(po, alg, &m) == dnnl_success;
        }
    }
    ok = ok && dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
    if (po)
        dnnl_post_ops_destroy(po);
    dnnl_primitive_desc_t mpd = NULL;
    if (ok && dnnl_primitive_desc_create(&mpd, &d, attr, c->eng, NULL) != dnnl_success)
        mpd = NULL;
    dnnl_primitive_attr_destroy(attr);
    if (!mpd)
        return false;
    if (dn_pd_is_cliff(mpd)) {
        dnnl_primitive_desc_destroy(mpd);
        return false;
    }

    /* Inputs first: each operand whose layout changed is copied into a temporary (a format_any
     * field got a concrete layout above, unless the layout is KEEP: checked below). */
    int dst_orig = -1;
    dnnl_memory_desc_t dst_old, dst_new;
    for (int a = 0; a < nmain; a++) {
        int arg = margs[a].arg;
        const dnnl_memory_desc_t *want = NULL, *prim = NULL;   /* copy md, op desc md */
        for (int f = 0; f < nf; f++)
            if (farg[f] == arg && !dn_md_equal(&old_field[f], &copy[f])) {
                want = &copy[f];
                prim = fmd[f];
            } else if (farg[f] == arg && permute) {
                margs[a].md = *fmd[f];    /* the same bytes (a reduced dim of size 1 moved) */
            }
        dnnl_memory_desc_t pm;
        if (arg >= DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE && needs_relayout(&margs[a].md, layout, inner)) {
            relayout(&pm, &margs[a].md, layout, inner);
            want = prim = &pm;
        }
        if (!want)
            continue;
        if (arg == DNNL_ARG_DST) {
            dst_orig = margs[a].buf;
            dst_old = margs[a].md;
            dst_new = *want;
            if (dn_temp(c, &dst_new, &margs[a].buf)) {
                dnnl_primitive_desc_destroy(mpd);
                return false;
            }
            margs[a].md = *prim;
            if (has_sum) {      /* the temporary must hold the residual the sum adds */
                dnnl_primitive_desc_t r = reorder_pd(c, &dst_old, &dst_new);
                dn_arg ra[2] = { { DNNL_ARG_FROM, dst_orig, dst_old }, { DNNL_ARG_TO, margs[a].buf, dst_new } };
                if (!r || !queue(v, r, ra, 2)) {
                    dnnl_primitive_desc_destroy(mpd);
                    return false;
                }
            }
        } else if (is_input_arg(arg)) {
            dnnl_memory_desc_t to = *want;
            int nb;
            if (!queue_copy_in(c, v, margs[a].buf, &margs[a].md, &to, &nb)) {
                dnnl_primitive_desc_destroy(mpd);
                return false;
            }
            margs[a].buf = nb;
            margs[a].md = *prim;
        }
    }
    int dbuf = -1;
    dnnl_memory_desc_t dmd;
    for (int a = 0; a < nmain; a++)
        if (margs[a].arg == DNNL_ARG_DST) {
            dbuf = margs[a].buf;
            dmd = margs[a].md;
        }
    /* Every operand must be what the new pd reads and writes (a format_any field left to oneDNN
     * may come out in another layout without the post-ops). */
    bool same = dbuf != -1 || !split;
    for (int a = 0; same && a < nmain; a++) {
        const dnnl_memory_desc_t *q = dnnl_primitive_desc_query_md(mpd, dnnl_query_exec_arg_md, margs[a].arg);
        same = !q || q->ndims == 0 || dn_md_equal(q, &margs[a].md);
    }
    if (!same) {
        dnnl_primitive_desc_destroy(mpd);
        return false;
    }
    if (!queue(v, mpd, margs, nmain))
        return false;

    /* The post-ops, each in place on the dst. */
    for (int i = from; split && i < npo; i++) {
        dnnl_primitive_desc_t ppd = NULL;
        dn_arg pa[3];
        int np = 0;
        dnnl_primitive_kind_t k = dnnl_post_ops_get_kind(po0, i);
        if (k == dnnl_eltwise) {
            float scale, alpha, beta;
            dnnl_alg_kind_t alg;
            dnnl_eltwise_desc_t ed;
            if (dnnl_post_ops_get_params_eltwise(po0, i, &scale, &alg, &alpha, &beta) != dnnl_success ||
                scale != 1.0f ||
                dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg, &dmd, alpha, beta) != dnnl_success)
                return false;
            if (!(ppd = plain_pd(c, &ed)))
                return false;
            pa[np++] = (dn_arg){ DNNL_ARG_SRC, dbuf, dmd };
            pa[np++] = (dn_arg){ DNNL_ARG_DST, dbuf, dmd };
        } else {
            dnnl_alg_kind_t alg;
            const dnnl_memory_desc_t *s1 = NULL;
            int sbuf = -2;
            dnnl_memory_desc_t smd;
            for (int a = 0; a < nargs; a++)
                if (args[a].arg == post_src1(i)) {
                    sbuf = args[a].buf;
                    smd = args[a].md;
                }
            if (sbuf == -2 || dnnl_post_ops_get_params_binary(po0, i, &alg, &s1) != dnnl_success)
                return false;
            if (needs_relayout(&smd, layout, inner)) {
                dnnl_memory_desc_t to;
                int nb;
                relayout(&to, &smd, layout, inner);
                if (!queue_copy_in(c, v, sbuf, &smd, &to, &nb))
                    return false;
                sbuf = nb;
                smd = to;
            }
            dnnl_binary_desc_t bd;
            if (dnnl_binary_desc_init(&bd, alg, &dmd, &smd, &dmd) != dnnl_success)
                return false;
            if (!(ppd = plain_pd(c, &bd)))
                return false;
            pa[np++] = (dn_arg){ DNNL_ARG_SRC_0, dbuf, dmd };
            pa[np++] = (dn_arg){ DNNL_ARG_SRC_1, sbuf, smd };
            pa[np++] = (dn_arg){ DNNL_ARG_DST, dbuf, dmd };
        }
        if (!queue(v, ppd, pa, np))
            return false;
    }

    /* The dst back into the layout its readers expect. */
    if (dst_orig != -1) {
        dnnl_primitive_desc_t r = reorder_pd(c, &dst_new, &dst_old);
        dn_arg ra[2] = { { DNNL_ARG_FROM, dbuf, dst_new }, { DNNL_ARG_TO, dst_orig, dst_old } };
        if (!r || !queue(v, r, ra, 2))
            return false;
    }
    return true;
}

/* Push V's steps (a constant's conversion becomes a new constant buffer). */
static int commit(dn_compiler *c, variant *v)
{
    int conv[MAX_STEPS];
    for (int i = 0; i < v->n; i++) {
        pending *p = &v->steps[i];
        conv[i] = -1;
        if (p->const_from >= 0) {
            const void *data = c->bufs[p->const_from].data;
            int rc = dn_const(c, data, &p->args[0].md, &p->args[1].md, &conv[i]);
            if (rc)
                return rc;
            continue;
        }
        for (int a = 0; a < p->nargs; a++)
            if (p->args[a].buf < -1 && -p->args[a].buf - 2 < i)
                p->args[a].buf = conv[-p->args[a].buf - 2];
        dnnl_primitive_desc_t pd = p->pd;
        p->pd = NULL;
        int rc = dn_push_prim(c, pd, p->args, p->nargs);
        if (rc)
            return rc;
    }
    return 0;
}

int dn_guard_add(dn_compiler *c, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs)
{
    const char *off = getenv("BRAID_DNNL_GUARD");
    if (!dn_pd_is_cliff(pd) || (off && !strcmp(off, "0")))
        return dn_push_prim(c, pd, args, nargs);
    static const struct { int layout, splitting; } order[] = {
        { DST_LIKE_SRC, FUSED }, { PLAIN, FUSED }, { INNER, FUSED }, { KEEP, SPLIT_AT_BINARY },
        { KEEP, SPLIT_ALL }, { PLAIN, SPLIT_ALL }, { INNER, SPLIT_ALL },
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        variant *v = calloc(1, sizeof *v);
        if (!v) {
            dnnl_primitive_desc_destroy(pd);
            return dn_fail(c, BD_ENOMEM, "out of memory");
        }
        if (build_variant(c, pd, args, nargs, order[i].layout, order[i].splitting, v)) {
            int rc = commit(c, v);
            variant_free(v);
            free(v);
            dnnl_primitive_desc_destroy(pd);
            return rc;
        }
        variant_free(v);
        free(v);
    }
    return dn_push_prim(c, pd, args, nargs);   /* still a cliff: counted in the kernel's stats */
}
