/* MatMul and Gemm as oneDNN matmul. Constant weights are packed once (format_tag_any) with
 * alpha folded in; a constant bias (a leading Add post-op, or Gemm's C) becomes the
 * primitive's bias. MatMul with constant 2-D weights runs on the input collapsed to 2-D
 * [M, K] (BERT's projections); batched MatMul reads strided views (transposes) directly. */
#include <stdlib.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* What one matmul step needs, filled by the MatMul/Gemm front halves. */
typedef struct mm_spec {
    int                 rank;        /* of the primitive's src/weights/dst */
    dnnl_memory_desc_t  src_md;
    int                 src_buf;
    const float        *w_data;      /* constant weights (row-major per w_md), else NULL */
    dnnl_memory_desc_t  w_md;        /* md of w_data, or of the weights tensor in w_buf */
    int                 w_buf;
    float               w_scale;     /* folded into constant weights */
    const float        *bias;        /* constant bias laid out as bias_md, else NULL */
    dnnl_memory_desc_t  bias_md;
    float               bias_scale;
    bool                has_cpost;   /* a leading binary add (Gemm's C) */
    dnnl_memory_desc_t  cpost_md;
    int                 cpost_buf;
    float               out_scale;   /* alpha with non-constant weights */
    int                 first_post;  /* first node post-op to fuse */
    dnnl_memory_desc_t  dst_md;      /* plain dst as the primitive sees it */
} mm_spec;

static void md_transposed2d(dnnl_memory_desc_t *md, int64_t rows, int64_t cols)
{
    /* [rows, cols] logical over a buffer that stores [cols, rows] row-major */
    dnnl_dims_t d = { rows, cols }, st = { 1, rows };
    dnnl_memory_desc_init_by_strides(md, 2, d, dnnl_f32, st);
}

/* A scaled copy of a constant (caller frees), or DATA itself when SCALE is 1. */
static const float *scaled(dn_compiler *c, const float *data, size_t n, float scale, float **tmp)
{
    *tmp = NULL;
    if (scale == 1.0f)
        return data;
    *tmp = malloc(n * sizeof(float) + 1);
    if (!*tmp) {
        dn_fail(c, BD_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        (*tmp)[i] = data[i] * scale;
    return *tmp;
}

static int const_scaled(dn_compiler *c, const float *data, const dnnl_memory_desc_t *src_md,
                        const dnnl_memory_desc_t *dst_md, float scale, int *buf)
{
    float *tmp;
    const float *p = scaled(c, data, dnnl_memory_desc_get_size(src_md) / sizeof(float), scale, &tmp);
    if (!p)
        return BD_ENOMEM;
    /* unscaled, DATA is an initializer's: shared with other readers of it */
    int rc = tmp ? dn_const(c, p, src_md, dst_md, buf) : dn_const_shared(c, p, src_md, dst_md, buf);
    free(tmp);
    return rc;
}

static int mm_emit(dn_compiler *c, const bd_node *n, mm_spec *s)
{
    const bd_value *y = n->outputs[0];
    dnnl_memory_desc_t w_desc;
    if (s->w_data)
        dn_md_any(&w_desc, s->rank, s->w_md.dims);
    else
        w_desc = s->w_md;
    dn_post_args pa;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    int rc = 0;
    /* A sum after other post-ops sends oneDNN's gemm matmul to ref:any (dn_postops_build_as):
     * then the sum is built again as a binary add of the residual. */
    for (int as_binary = 0; !pd; as_binary++) {
        dnnl_post_ops_t po = NULL;
        if (s->has_cpost) {
            rc = dn_check(c, dnnl_post_ops_create(&po), "dnnl_post_ops_create");
            if (!rc)
                rc = dn_check(c, dnnl_post_ops_append_binary(po, dnnl_binary_add, &s->cpost_md),
                              "dnnl_post_ops_append_binary");
            if (rc) {
                if (po)
                    dnnl_post_ops_destroy(po);
                return rc;
            }
        }
        if ((rc = dn_postops_build_as(c, s->first_post, s->rank, s->dst_md.dims, false,
                                      as_binary ? &s->dst_md : NULL, &po, &pa)))
            return rc;
        rc = dn_pd_make(c, dnnl_matmul_desc_init(&desc, &s->src_md, &w_desc, s->bias ? &s->bias_md : NULL,
                                                 &s->dst_md),
                        "dnnl_matmul_desc_init", &desc, po, s->out_scale, &pd);
        if (rc)
            return rc;
        if (!as_binary && dn_postops_sum_fell_to_ref(pd, &pa)) {
            dnnl_primitive_desc_destroy(pd);
            pd = NULL;
        }
    }

    const dnnl_memory_desc_t *wmd = dn_pd_md(pd, dnnl_query_weights_md);
    const dnnl_memory_desc_t *bmd = s->bias ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1) : NULL;
    int wbuf = s->w_buf, bbuf = -1, dbuf;
    dnnl_memory_desc_t yplain;
    dn_md_of_shape(&yplain, y);
    if (s->w_data)
        rc = const_scaled(c, s->w_data, &s->w_md, wmd, s->w_scale, &wbuf);
    if (!rc && s->bias)
        rc = const_scaled(c, s->bias, &s->bias_md, bmd, s->bias_scale, &bbuf);
    if (!rc && pa.residual_arg >= 0)
        rc = dn_postops_bind_residual(c, pd, &s->dst_md, &yplain, &pa);
    if (!rc)
        rc = pa.residual && pa.residual_arg < 0 ? dn_output_with_residual(c, y, &yplain, pa.residual, &dbuf)
                                                : dn_output(c, y, &yplain, &dbuf);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[5 + BD_MAX_POSTOPS];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC, s->src_buf, s->src_md };
    args[na++] = (dn_arg){ DNNL_ARG_WEIGHTS, wbuf, *wmd };
    if (s->bias)
        args[na++] = (dn_arg){ DNNL_ARG_BIAS, bbuf, *bmd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, s->dst_md };
    if (s->has_cpost)
        args[na++] = (dn_arg){ DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, s->cpost_buf, s->cpost_md };
    for (int i = 0; i < pa.nargs; i++)
        args[na++] = pa.args[i];
    return dn_add_step(c, pd, args, na);
}

/* A leading "Add constant [.., N]" post-op that can be the matmul's bias [1, N]. */
static const bd_value *bias_post(const bd_node *n, int64_t N)
{
    if (n->n_post < 1 || n->post[0].kind != BD_POST_BINARY || n->post[0].alg != BD_BIN_ADD)
        return NULL;
    const bd_value *b = n->inputs[n->post[0].input];
    if (!b->data || b->dtype != BD_DT_FLOAT || b->shape.rank < 1 ||
        b->shape.dims[b->shape.rank - 1] != N || bd_shape_numel(&b->shape) != N ||
        b->nbytes < (size_t)N * sizeof(float))
        return NULL;
    return b;
}

/* ---- MatMul ------------------------------------------------------------------------------ */

static bool batch_broadcasts(const bd_shape *a, const bd_shape *b, const bd_shape *y)
{
    int R = y->rank;
    for (int i = 0; i < R - 2; i++) {
        int ka = i - (R - a->rank), kb = i - (R - b->rank);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        if ((da != y->dims[i] && da != 1) || (db != y->dims[i] && db != 1))
            return false;
    }
    return true;
}

/* Does oneDNN take batched MatMul N (output rank > 2, operands as they are) with its binary
 * post-ops in a fast implementation? Some broadcasts of a post-op operand over the batch dims
 * (Swin's [1, heads, 1, 1] logit scale and [1, heads, W, W] position bias on [windows, heads,
 * W, W] scores) send the whole primitive to ref:any, a thousand times slower than the matmul
 * and the binary ops apart. Probed only there; the algorithm (add, mul, ...) does not change
 * which implementation takes a broadcast, so the probe adds. */
static bool batched_postops_fast(const bd_node *n)
{
    const bd_shape *a = &n->inputs[0]->shape, *b = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    int R = y->rank;
    bool any = false;
    for (int i = 0; i < n->n_post; i++)
        any |= n->post[i].kind == BD_POST_BINARY;
    if (R <= 2 || !any || (n->inputs[1]->data && dn_postops_collapsible(n)))
        return true;
    int64_t ad[BD_MAX_RANK], bd[BD_MAX_RANK], xd[BD_MAX_RANK];
    for (int i = 0; i < R; i++) {
        ad[i] = i - (R - a->rank) >= 0 ? a->dims[i - (R - a->rank)] : 1;
        bd[i] = i - (R - b->rank) >= 0 ? b->dims[i - (R - b->rank)] : 1;
    }
    dnnl_memory_desc_t amd, bmd, ymd, xmd;
    dn_md_plain(&amd, R, ad);
    dn_md_plain(&bmd, R, bd);
    dn_md_plain(&ymd, R, y->dims);
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_matmul_desc_t d;
    bool ok = dnnl_post_ops_create(&po) == dnnl_success &&
              dnnl_primitive_attr_create(&attr) == dnnl_success;
    for (int i = 0; ok && i < n->n_post; i++) {
        const bd_postop *p = &n->post[i];
        if (p->kind != BD_POST_BINARY)
            continue;
        const bd_shape *x = &n->inputs[p->input]->shape;
        for (int k = 0; k < R; k++)
            xd[k] = k - (R - x->rank) >= 0 ? x->dims[k - (R - x->rank)] : 1;
        dn_md_plain(&xmd, R, xd);
        ok = dnnl_post_ops_append_binary(po, dnnl_binary_add, &xmd) == dnnl_success;
    }
    const char *impl = "ref";
    if (ok && dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success &&
        dnnl_matmul_desc_init(&d, &amd, &bmd, NULL, &ymd) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &d, attr, dn_engine(), NULL) == dnnl_success)
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    bool fast = pd && impl && strncmp(impl, "ref", 3) != 0;
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (po)
        dnnl_post_ops_destroy(po);
    return fast;
}

bool dn_matmul_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "MatMul needs A and B");
    if (!dn_io_f32(n, 2, why, len))
        return false;
    const bd_shape *a = &n->inputs[0]->shape, *b = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    if (a->rank < 2 || b->rank < 2)
        return dn_why(why, len, "MatMul with 1-D operands is not supported");
    if (y->rank != (a->rank > b->rank ? a->rank : b->rank) || a->dims[a->rank - 1] != b->dims[b->rank - 2] ||
        y->dims[y->rank - 2] != a->dims[a->rank - 2] || y->dims[y->rank - 1] != b->dims[b->rank - 1] ||
        !batch_broadcasts(a, b, y))
        return dn_why(why, len, "MatMul operand shapes do not match the output");
    if (!dn_postops_supported(g, n, why, len))
        return false;
    if (!batched_postops_fast(n))
        return dn_why(why, len, "binary post-ops with these broadcasts run on oneDNN's reference matmul");
    return true;
}

int dn_matmul_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0];
    int R = y->shape.rank;
    int64_t K = b->shape.dims[b->shape.rank - 2], N = b->shape.dims[b->shape.rank - 1];
    bool b_flat = bd_shape_numel(&b->shape) == K * N;
    const dn_tensor *ta = dn_tensor_of(c, a);
    if (!ta)
        return c->err ? c->err->code : BD_EBACKEND;
    mm_spec s;
    memset(&s, 0, sizeof s);
    s.w_scale = s.bias_scale = s.out_scale = 1.0f;
    int rc;

    if (b->data && b_flat && !ta->strided_view && dn_postops_collapsible(n)) {
        /* [.., M, K] x [K, N]: one 2-D matmul over all rows, packed weights, fused bias */
        int64_t M = bd_shape_numel(&a->shape) / K;
        int64_t sd[2] = { M, K }, wd[2] = { K, N }, dd[2] = { M, N };
        dnnl_memory_desc_t aplain;
        if ((rc = dn_input_plain(c, a, &s.src_buf, &aplain)))
            return rc;
        if (b->nbytes < (size_t)(K * N) * sizeof(float))
            return dn_fail(c, BD_EMODEL, "constant '%s' is shorter than its shape", b->name);
        s.rank = 2;
        dn_md_plain(&s.src_md, 2, sd);
        dn_md_plain(&s.w_md, 2, wd);
        dn_md_plain(&s.dst_md, 2, dd);
        s.w_data = b->data;
        const bd_value *bias = bias_post(n, N);
        if (bias) {
            int64_t bd[2] = { 1, N };
            dn_md_plain(&s.bias_md, 2, bd);
            s.bias = bias->data;
            s.first_post = 1;
        }
        dn_mm_int8 q = { .m = M, .k = K, .n = N, .src_buf = s.src_buf, .src_md = s.src_md,
                         .w = b->data, .bias = s.bias, .first_post = s.first_post };
        bool int8;
        if ((rc = dn_matmul_int8_build(c, n, &q, &int8)) || int8)   /* a QDQ model's, if exact */
            return rc;
        return mm_emit(c, n, &s);
    }

    /* general batched matmul: operands as they are (strided views allowed), batch broadcast */
    dnnl_memory_desc_t amd, bmd;
    int abuf, bbuf;
    if ((rc = dn_input_any(c, a, &abuf, &amd)))
        return rc;
    if ((rc = dn_input_any(c, b, &bbuf, &bmd)))   /* constants: plain, kernel-owned */
        return rc;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt == 1 || !dn_md_expand(&s.src_md, &amd, R)) {
            if ((rc = dn_input_plain(c, a, &abuf, &amd)))
                return rc;
            dn_md_expand(&s.src_md, &amd, R);
        }
        if (attempt == 1 || !dn_md_expand(&s.w_md, &bmd, R)) {
            if ((rc = dn_input_plain(c, b, &bbuf, &bmd)))
                return rc;
            dn_md_expand(&s.w_md, &bmd, R);
        }
        if (attempt == 0 && (!dn_md_is_plain(&amd) || !dn_md_is_plain(&bmd))) {
            /* strided operands: keep them only if a fast implementation takes them */
            dnnl_matmul_desc_t d;
            dnnl_primitive_desc_t pd = NULL;
            dnnl_memory_desc_t dst;
            dn_md_of_shape(&dst, y);
            dnnl_primitive_attr_t attr = dn_attr(c, NULL);
            if (!attr)
                return BD_EBACKEND;
            const char *impl = "ref";
            if (dnnl_matmul_desc_init(&d, &s.src_md, &s.w_md, NULL, &dst) == dnnl_success &&
                dnnl_primitive_desc_create(&pd, &d, attr, c->eng, NULL) == dnnl_success)
                dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
            bool slow = !pd || !strncmp(impl, "ref", 3);
            if (pd)
                dnnl_primitive_desc_destroy(pd);
            dnnl_primitive_attr_destroy(attr);
            if (slow)
                continue;
        }
        break;
    }
    s.rank = R;
    s.src_buf = abuf;
    s.w_buf = bbuf;
    dn_md_of_shape(&s.dst_md, y);
    return mm_emit(c, n, &s);
}

/* ---- Gemm ------------------------------------------------------------------------------ */

bool dn_gemm_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "Gemm needs A and B");
    if (!dn_io_f32(n, 3, why, len))
        return false;
    const bd_shape *a = &n->inputs[0]->shape, *b = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    if (a->rank != 2 || b->rank != 2 || y->rank != 2)
        return dn_why(why, len, "Gemm needs 2-D operands");
    bool ta = bd_node_attr_int(n, "transA", 0), tb = bd_node_attr_int(n, "transB", 0);
    int64_t M = a->dims[ta ? 1 : 0], K = a->dims[ta ? 0 : 1];
    int64_t K2 = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
    if (K != K2 || y->dims[0] != M || y->dims[1] != N)
        return dn_why(why, len, "Gemm operand shapes do not match");
    const bd_value *cv = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    if (cv) {
        bd_shape ys = *y;
        if (cv->shape.rank > 2)
            return dn_why(why, len, "Gemm C must broadcast to [M, N]");
        for (int i = 0; i < cv->shape.rank; i++) {
            int64_t d = cv->shape.dims[cv->shape.rank - 1 - i], o = ys.dims[1 - i];
            if (d != o && d != 1)
                return dn_why(why, len, "Gemm C must broadcast to [M, N]");
        }
        float beta = bd_node_attr_float(n, "beta", 1.0f);
        if (!cv->data && beta != 1.0f)
            return dn_why(why, len, "Gemm with beta != 1 needs a constant C");
    }
    return dn_postops_supported(g, n, why, len);
}

int dn_gemm_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0];
    const bd_value *cv = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    bool ta = bd_node_attr_int(n, "transA", 0), tb = bd_node_attr_int(n, "transB", 0);
    float alpha = bd_node_attr_float(n, "alpha", 1.0f), beta = bd_node_attr_float(n, "beta", 1.0f);
    int64_t M = y->shape.dims[0], N = y->shape.dims[1], K = a->shape.dims[ta ? 0 : 1];
    mm_spec s;
    memset(&s, 0, sizeof s);
    s.rank = 2;
    s.w_scale = s.bias_scale = s.out_scale = 1.0f;
    int64_t dd[2] = { M, N }, kd[2] = { K, N };
    dn_md_plain(&s.dst_md, 2, dd);
    dnnl_memory_desc_t plain;
    int rc = dn_input_plain(c, a, &s.src_buf, &plain);
    if (rc)
        return rc;
    if (ta)
        md_transposed2d(&s.src_md, M, K);
    else
        s.src_md = plain;
    if (b->data) {
        if (tb)
            md_transposed2d(&s.w_md, K, N);
        else
            dn_md_plain(&s.w_md, 2, kd);
        if (b->nbytes < (size_t)(K * N) * sizeof(float))
            return dn_fail(c, BD_EMODEL, "constant '%s' is shorter than its shape", b->name);
        s.w_data = b->data;
        s.w_scale = alpha;
    } else {
        if ((rc = dn_input_plain(c, b, &s.w_buf, &plain)))
            return rc;
        if (tb)
            md_transposed2d(&s.w_md, K, N);
        else
            s.w_md = plain;
        s.out_scale = alpha;
    }
    if (cv) {
        int64_t cd[2] = { 1, 1 };
        for (int i = 0; i < cv->shape.rank; i++)
            cd[2 - cv->shape.rank + i] = cv->shape.dims[i];
        dnnl_memory_desc_t cmd;
        dn_md_plain(&cmd, 2, cd);
        if (cv->data && cd[0] == 1 && cd[1] == N && s.out_scale == 1.0f) {
            if (cv->nbytes < (size_t)N * sizeof(float))
                return dn_fail(c, BD_EMODEL, "constant '%s' is shorter than its shape", cv->name);
            s.bias = cv->data;
            s.bias_md = cmd;
            s.bias_scale = beta;
        } else if (cv->data) {
            dnnl_memory_desc_t src;
            dn_md_of_shape(&src, cv);
            if (cv->nbytes < dnnl_memory_desc_get_size(&src))
                return dn_fail(c, BD_EMODEL, "constant '%s' is shorter than its shape", cv->name);
            if ((rc = const_scaled(c, cv->data, &cmd, &cmd, beta, &s.cpost_buf)))
                return rc;
            s.has_cpost = true;
            s.cpost_md = cmd;
        } else {
            if ((rc = dn_input_plain(c, cv, &s.cpost_buf, &plain)))
                return rc;
            s.has_cpost = true;
            s.cpost_md = cmd;
        }
    }
    return mm_emit(c, n, &s);
}
