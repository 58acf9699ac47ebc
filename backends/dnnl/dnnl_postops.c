/* Fused post-ops: the IR's bd_postop list -> a dnnl_post_ops_t plus the extra arguments
 * (binary src1 tensors) and the residual a SUM needs in the destination. */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static bool eltwise_alg(int alg, dnnl_alg_kind_t *out)
{
    switch (alg) {
    case BD_ELT_RELU:      *out = dnnl_eltwise_relu; return true;
    case BD_ELT_CLIP:      *out = dnnl_eltwise_clip; return true;
    case BD_ELT_SIGMOID:   *out = dnnl_eltwise_logistic; return true;
    case BD_ELT_TANH:      *out = dnnl_eltwise_tanh; return true;
    case BD_ELT_GELU_ERF:  *out = dnnl_eltwise_gelu_erf; return true;
    case BD_ELT_GELU_TANH: *out = dnnl_eltwise_gelu_tanh; return true;
    case BD_ELT_LINEAR:    *out = dnnl_eltwise_linear; return true;
    case BD_ELT_ELU:       *out = dnnl_eltwise_elu; return true;
    case BD_ELT_SWISH:     *out = dnnl_eltwise_swish; return true;
    case BD_ELT_HARDSWISH: *out = dnnl_eltwise_hardswish; return true;
    case BD_ELT_HARDSIGMOID: *out = dnnl_eltwise_linear; return true;   /* then a clip: append_eltwise */
    case BD_ELT_ABS:       *out = dnnl_eltwise_abs; return true;
    case BD_ELT_SQRT:      *out = dnnl_eltwise_sqrt; return true;
    case BD_ELT_EXP:       *out = dnnl_eltwise_exp; return true;
    case BD_ELT_LOG:       *out = dnnl_eltwise_log; return true;
    case BD_ELT_SOFTPLUS:  *out = dnnl_eltwise_soft_relu; return true;
    case BD_ELT_POW:       *out = dnnl_eltwise_pow; return true;
    default:               return false;
    }
}

/* Append the eltwise post-op P: one oneDNN post-op, or two for HardSigmoid (linear, clip). */
static dnnl_status_t append_eltwise(dnnl_post_ops_t po, const bd_postop *p, dnnl_alg_kind_t a)
{
    float alpha = p->alpha, beta = p->beta;
    if (p->alg == BD_ELT_SOFTPLUS)
        alpha = 1.0f;               /* oneDNN's soft_relu scale, where it has one: plain softplus */
    dnnl_status_t st = dnnl_post_ops_append_eltwise(po, 1.0f, a, alpha, beta);
    if (st == dnnl_success && p->alg == BD_ELT_HARDSIGMOID)
        st = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 1.0f);
    return st;
}

static bool binary_alg(int alg, dnnl_alg_kind_t *out)
{
    switch (alg) {
    case BD_BIN_ADD: *out = dnnl_binary_add; return true;
    case BD_BIN_SUB: *out = dnnl_binary_sub; return true;
    case BD_BIN_MUL: *out = dnnl_binary_mul; return true;
    case BD_BIN_DIV: *out = dnnl_binary_div; return true;
    default:         return false;
    }
}

/* X broadcasts (numpy, right-aligned) to OUT without growing OUT. */
static bool broadcasts_to(const bd_shape *x, const bd_shape *out)
{
    if (x->rank > out->rank)
        return false;
    for (int i = 0; i < x->rank; i++) {
        int64_t d = x->dims[x->rank - 1 - i], o = out->dims[out->rank - 1 - i];
        if (d != o && d != 1)
            return false;
    }
    return true;
}

/* The cliff guard's probe (dnnl_guard.c) for a binary post-op: would its operand X, run as
 * the binary the guard splits a post-op into, need oneDNN's reference kernel even row-major?
 * (A broadcast along a middle axis such as [1,1,H,1] has no jit kernel in oneDNN 2.6.) Then
 * the node is not fused, and its own supports() hands the binary to the next engine. */
static bool ref_only_broadcast(dnnl_alg_kind_t alg, const bd_shape *x, const bd_shape *y)
{
    if (bd_shape_equal(x, y) || y->rank < 1)
        return false;
    int64_t dims[BD_MAX_RANK];
    int off = y->rank - x->rank;
    for (int i = 0; i < y->rank; i++)
        dims[i] = i >= off ? x->dims[i - off] : 1;
    dnnl_memory_desc_t ymd, xmd;
    dnnl_binary_desc_t desc;
    dn_md_plain(&ymd, y->rank, y->dims);
    dn_md_plain(&xmd, y->rank, dims);
    return dnnl_binary_desc_init(&desc, alg, &ymd, &xmd, &ymd) == dnnl_success && dn_probe_is_cliff(&desc);
}

bool dn_postops_supported(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    int sums = 0;
    const bd_value *y = n->outputs[0];
    for (int i = 0; i < n->n_post; i++) {
        const bd_postop *p = &n->post[i];
        dnnl_alg_kind_t a;
        const bd_value *x = NULL;
        if (p->kind == BD_POST_SUM || p->kind == BD_POST_BINARY) {
            if (p->input < 0 || (size_t)p->input >= n->n_inputs || !n->inputs[p->input])
                return dn_why(why, len, "post-op %d reads input %d, which does not exist", i, p->input);
            x = n->inputs[p->input];
            if (!dn_is_f32_static(x))
                return dn_why(why, len, "post-op %d input '%s' is not FP32 with a static shape", i, x->name);
        }
        switch (p->kind) {
        case BD_POST_ELTWISE:
            if (p->alg == BD_ELT_FAKEQUANT_U8 || p->alg == BD_ELT_FAKEQUANT_S8) {
                if (i != n->n_post - 1 || !dn_fakequant_postop_ok(p))
                    return dn_why(why, len, "post-op %d: a fake quantization must be the last "
                                  "post-op, with a positive scale and an in-range zero point", i);
                break;
            }
            if (!eltwise_alg(p->alg, &a))
                return dn_why(why, len, "post-op %d: eltwise algorithm %d has no oneDNN post-op", i, p->alg);
            break;
        case BD_POST_SUM:
            if (++sums > 1)
                return dn_why(why, len, "more than one sum post-op");
            if (!bd_shape_equal(&x->shape, &y->shape))
                return dn_why(why, len, "sum post-op input '%s' does not have the output's shape", x->name);
            break;
        case BD_POST_BINARY:
            if (!binary_alg(p->alg, &a))
                return dn_why(why, len, "post-op %d: binary algorithm %d unknown", i, p->alg);
            if (!broadcasts_to(&x->shape, &y->shape))
                return dn_why(why, len, "binary post-op input '%s' does not broadcast to the output", x->name);
            if (ref_only_broadcast(a, &x->shape, &y->shape))
                return dn_why(why, len, "binary post-op input '%s': oneDNN has only a reference kernel "
                              "for this broadcast", x->name);
            break;
        default:
            return dn_why(why, len, "post-op %d has unknown kind %d", i, (int)p->kind);
        }
    }
    (void)g;
    return true;
}

/* Dims of X broadcast into the primitive's destination DST (rank RANK), where the node's
 * output Y may have been collapsed to 2D [M, N] by the builder. */
static bool src1_dims(const bd_value *x, const bd_value *y, int rank, const int64_t *dst,
                      int64_t *dims)
{
    int R = y->shape.rank;
    int64_t full[BD_MAX_RANK];
    for (int i = 0; i < R; i++) {
        int k = i - (R - x->shape.rank);
        full[i] = k >= 0 ? x->shape.dims[k] : 1;
    }
    if (rank == R) {
        memcpy(dims, full, sizeof *dims * (size_t)R);
        return true;
    }
    if (rank != 2 || R < 2)
        return false;
    bool all_ones = true, all_full = true;
    for (int i = 0; i < R - 1; i++) {
        all_ones &= full[i] == 1;
        all_full &= full[i] == y->shape.dims[i];
    }
    if (all_ones) {
        dims[0] = 1;
        dims[1] = full[R - 1];
        return true;
    }
    if (all_full && full[R - 1] == y->shape.dims[R - 1]) {
        dims[0] = dst[0];
        dims[1] = dst[1];
        return true;
    }
    return false;
}

bool dn_postops_collapsible(const bd_node *n)
{
    const bd_value *y = n->outputs[0];
    int64_t d[2] = { 1, y->shape.rank ? y->shape.dims[y->shape.rank - 1] : 1 }, out[2];
    for (int i = 0; i < y->shape.rank - 1; i++)
        d[0] *= y->shape.dims[i];
    for (int i = 0; i < n->n_post; i++)
        if (n->post[i].kind == BD_POST_BINARY &&
            !src1_dims(n->inputs[n->post[i].input], y, 2, d, out))
            return false;
    return true;
}

int dn_postops_build(dn_compiler *c, int first, int rank, const int64_t *dst_dims,
                     dnnl_post_ops_t *po, dn_post_args *pa)
{
    return dn_postops_build_ex(c, first, rank, dst_dims, false, po, pa);
}

int dn_postops_build_ex(dn_compiler *c, int first, int rank, const int64_t *dst_dims, bool last,
                        dnnl_post_ops_t *po, dn_post_args *pa)
{
    return dn_postops_build_as(c, first, rank, dst_dims, last, NULL, po, pa);
}

int dn_postops_build_as(dn_compiler *c, int first, int rank, const int64_t *dst_dims, bool last,
                        const dnnl_memory_desc_t *sum_src1, dnnl_post_ops_t *po, dn_post_args *pa)
{
    const bd_node *n = c->node;
    memset(pa, 0, sizeof *pa);
    pa->sum_index = pa->residual_arg = -1;
    if (first >= n->n_post - (dn_native_tail(n) ? 1 : 0))
        return 0;
    if (!*po && dn_check(c, dnnl_post_ops_create(po), "dnnl_post_ops_create"))
        return BD_EBACKEND;
    int rc = 0, end = n->n_post - (dn_native_tail(n) ? 1 : 0);  /* a native tail ends it */
    for (int i = first; i < end && !rc; i++) {
        int idx = dnnl_post_ops_len(*po);           /* oneDNN's index of the post-op added now */
        const bd_postop *p = &n->post[i];
        dnnl_alg_kind_t a;
        if (p->kind == BD_POST_ELTWISE) {
            if (!eltwise_alg(p->alg, &a)) {
                rc = dn_fail(c, BD_EUNSUPPORTED, "eltwise post-op %d unsupported", p->alg);
                break;
            }
            rc = dn_check(c, append_eltwise(*po, p, a), "dnnl_post_ops_append_eltwise");
        } else if (p->kind == BD_POST_SUM) {
            float scale = p->scale != 0.0f ? p->scale : 1.0f;
            pa->residual = n->inputs[p->input];
            pa->sum_index = idx;
            if (sum_src1 && scale == 1.0f) {
                dn_arg *arg = &pa->args[pa->nargs];
                arg->md = *sum_src1;
                rc = dn_check(c, dnnl_post_ops_append_binary(*po, dnnl_binary_add, &arg->md),
                              "dnnl_post_ops_append_binary (residual)");
                if (!rc) {
                    arg->arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1;
                    arg->buf = -1;                  /* dn_postops_bind_residual */
                    pa->residual_arg = pa->nargs++;
                }
            } else {
                rc = dn_check(c, dnnl_post_ops_append_sum(*po, scale), "dnnl_post_ops_append_sum");
            }
        } else if (p->kind == BD_POST_BINARY) {
            const bd_value *x = n->inputs[p->input];
            int64_t dims[BD_MAX_RANK];
            if (!binary_alg(p->alg, &a) || !src1_dims(x, n->outputs[0], rank, dst_dims, dims)) {
                rc = dn_fail(c, BD_EUNSUPPORTED, "binary post-op %d on '%s' cannot be applied", i, x->name);
                break;
            }
            dnnl_memory_desc_t md, xmd;
            dn_md_plain(&md, rank, dims);
            int buf;
            rc = dn_input_plain(c, x, &buf, &xmd);
            if (!rc && last) {       /* the IR-order operand seen in the dst's [N, C, ...] order */
                dnnl_memory_desc_t ir = md;
                rc = dn_md_to_cf(c, &md, &ir);
            }
            if (!rc)
                rc = dn_check(c, dnnl_post_ops_append_binary(*po, a, &md), "dnnl_post_ops_append_binary");
            if (!rc) {
                dn_arg *arg = &pa->args[pa->nargs++];
                arg->arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1;
                arg->buf = buf;
                arg->md = md;
            }
        } else {
            rc = dn_fail(c, BD_EUNSUPPORTED, "post-op kind %d unknown", (int)p->kind);
        }
    }
    if (rc) {
        dnnl_post_ops_destroy(*po);
        *po = NULL;
    }
    return rc;
}

bool dn_native_tail(const bd_node *n)
{
    return dn_swish_tail(n) || dn_fakequant_tail(n);
}

int dn_native_tail_append(dn_compiler *c, const bd_node *n)
{
    const dn_tensor *t = &c->t[n->outputs[0]->index];
    if (dn_fakequant_tail(n))
        return dn_fakequant_tail_append(c, n);
    return dn_swish_append(c, n->outputs[0], t->buf, &t->md, n->post[n->n_post - 1].alpha);
}

bool dn_postops_sum_fell_to_ref(const_dnnl_primitive_desc_t pd, const dn_post_args *pa)
{
    const char *impl = NULL;
    if (!pd || !pa->residual || pa->sum_index <= 0 || pa->residual_arg >= 0)
        return false;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    return impl && !strncmp(impl, "ref", 3);
}

int dn_postops_bind_residual(dn_compiler *c, const_dnnl_primitive_desc_t pd,
                             const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *residual_md,
                             dn_post_args *pa)
{
    dn_arg *arg = &pa->args[pa->residual_arg];
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg->arg);
    if (!md || !dn_md_equal(md, dst_md))
        return dn_fail(c, BD_EBACKEND, "the residual of '%s' is not laid out as its output",
                       c->node->name);
    arg->md = *md;
    return dn_input(c, pa->residual, residual_md, &arg->buf);
}
