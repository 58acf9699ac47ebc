/* Shape ops. Reshape/Flatten/Squeeze/Unsqueeze/Identity are views: no step, the output
 * aliases the (plain) input buffer. Transpose is a permuted strided view that MatMul reads
 * directly; any other consumer gets it reordered to plain once (cached). Concat is a oneDNN
 * concat, or one reorder per input into the output where that concat would be oneDNN's
 * reference one. */
#include <stdlib.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* ---- views ------------------------------------------------------------------------------- */

static bool const_i64(const bd_value *v)
{
    return v && v->data && v->dtype == BD_DT_INT64 && bd_shape_is_static(&v->shape);
}

bool dn_view_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "%s needs an input", n->op_type);
    if (!dn_is_f32_static(n->inputs[0]) || n->n_outputs < 1 || !dn_is_f32_static(n->outputs[0]))
        return dn_why(why, len, "%s: input and output must be FP32 with static shapes", n->op_type);
    if (!dn_no_post(n, why, len))
        return false;
    if (bd_shape_numel(&n->inputs[0]->shape) != bd_shape_numel(&n->outputs[0]->shape))
        return dn_why(why, len, "%s changes the element count", n->op_type);
    const bd_value *second = bd_node_input(n, 1);
    if (!strcmp(n->op_type, "Reshape") && !const_i64(second))
        return dn_why(why, len, "Reshape shape must be a constant INT64 tensor");
    if ((!strcmp(n->op_type, "Squeeze") || !strcmp(n->op_type, "Unsqueeze")) && second && !const_i64(second))
        return dn_why(why, len, "%s axes must be a constant INT64 tensor", n->op_type);
    (void)g;
    return true;
}

int dn_view_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rc, buf;
    if (!strcmp(n->op_type, "Identity")) {
        const dn_tensor *t = dn_tensor_of(c, x);
        if (!t)
            return c->err ? c->err->code : BD_EBACKEND;
        return dn_define_view(c, y, t->buf, &t->md, t->strided_view);
    }
    /* the output shape comes from shape inference: only the bytes' order matters here */
    dnnl_memory_desc_t xmd, ymd;
    if ((rc = dn_input_plain(c, x, &buf, &xmd)))
        return rc;
    dn_md_of_shape(&ymd, y);
    return dn_define_view(c, y, buf, &ymd, false);
}

/* ---- Transpose -------------------------------------------------------------------------- */

static bool perm_of(const bd_node *n, int rank, int *perm)
{
    const int64_t *p = NULL;
    size_t np = bd_node_attr_ints(n, "perm", &p);
    if (!np) {
        for (int i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return true;
    }
    if (np != (size_t)rank)
        return false;
    bool seen[BD_MAX_RANK] = { false };
    for (int i = 0; i < rank; i++) {
        if (p[i] < 0 || p[i] >= rank || seen[p[i]])
            return false;
        seen[p[i]] = true;
        perm[i] = (int)p[i];
    }
    return true;
}

bool dn_transpose_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "Transpose needs an input");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    int perm[BD_MAX_RANK];
    if (!perm_of(n, n->inputs[0]->shape.rank, perm))
        return dn_why(why, len, "Transpose perm is not a permutation of the input's axes");
    (void)g;
    return true;
}

int dn_transpose_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = x->shape.rank, perm[BD_MAX_RANK], q[DNNL_MAX_NDIMS];
    if (!perm_of(n, rank, perm))
        return dn_fail(c, BD_EUNSUPPORTED, "perm is not a permutation");
    if (rank == 0) {
        const dn_tensor *t = dn_tensor_of(c, x);
        return t ? dn_define_view(c, y, t->buf, &t->md, false) : (c->err ? c->err->code : BD_EBACKEND);
    }
    for (int i = 0; i < rank; i++)
        q[perm[i]] = i;   /* input axis perm[i] becomes output axis i */
    const dn_tensor *t = dn_tensor_of(c, x);
    if (!t)
        return c->err ? c->err->code : BD_EBACKEND;
    int rc, buf = t->buf;
    dnnl_memory_desc_t src = t->md, view;
    if (src.format_kind != dnnl_blocked || src.format_desc.blocking.inner_nblks != 0) {
        if ((rc = dn_input_plain(c, x, &buf, &src)))
            return rc;
    }
    if ((rc = dn_check(c, dnnl_memory_desc_permute_axes(&view, &src, q), "dnnl_memory_desc_permute_axes")))
        return rc;
    return dn_define_view(c, y, buf, &view, !dn_md_is_plain(&view));
}

/* ---- Concat ----------------------------------------------------------------------------- */

bool dn_concat_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1)
        return dn_why(why, len, "Concat needs inputs");
    for (size_t i = 0; i < n->n_inputs; i++)
        if (!n->inputs[i])
            return dn_why(why, len, "Concat input %zu is missing", i);
    if (!dn_io_f32(n, n->n_inputs, why, len) || !dn_no_post(n, why, len))
        return false;
    int rank = n->outputs[0]->shape.rank;
    int64_t axis = bd_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank)
        return dn_why(why, len, "Concat axis out of range");
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i]->shape.rank != rank)
            return dn_why(why, len, "Concat inputs must have the output's rank");
    (void)g;
    return true;
}

/* A strided md (inner blocks none), view or not. */
static bool no_blocks(const dnnl_memory_desc_t *md)
{
    return md->format_kind == dnnl_blocked && md->format_desc.blocking.inner_nblks == 0;
}

/* A dense md of DIMS whose axes are laid out in the order of LIKE's strides (NHWC stays
 * NHWC): the destination of a concat of strided inputs, sub-box views included. */
static int dense_like(dn_compiler *c, const dnnl_memory_desc_t *like, int rank, const int64_t *dims,
                      dnnl_memory_desc_t *out)
{
    int order[DNNL_MAX_NDIMS];
    for (int d = 0; d < rank; d++)
        order[d] = d;
    const dnnl_dims_t *st = &like->format_desc.blocking.strides;
    for (int i = 1; i < rank; i++)          /* outermost first: larger stride, then lower axis */
        for (int j = i; j > 0 && (*st)[order[j]] > (*st)[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    dnnl_dims_t strides, d;
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[order[i]] = s;
        s *= dims[order[i]];
    }
    for (int i = 0; i < rank; i++)
        d[i] = dims[i];
    return dn_check(c, dnnl_memory_desc_init_by_strides(out, rank, d, dnnl_f32, strides),
                    "dnnl_memory_desc_init_by_strides");
}

/* The implementation oneDNN chose for PD is its reference one. */
static bool is_ref(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    return !impl || !strncmp(impl, "ref", 3);
}

/* The oneDNN concat of N's inputs, read as they are: creates *PD and fills MDS and ARGS (the
 * sources, *NA of them). */
static int concat_pd(dn_compiler *c, const bd_node *n, int axis, dnnl_memory_desc_t *mds, dn_arg *args,
                     int *na, dnnl_primitive_desc_t *pd)
{
    const bd_value *y = n->outputs[0];
    int rank = y->shape.rank, ni = (int)n->n_inputs;
    int rc = 0;
    /* Inputs that are all strided (NCHW, NHWC, sub-box views) are read as they are into a dense
     * destination laid out like the first; inputs that are all blocked alike keep their
     * layout; a mix of the two goes plain. */
    bool mixed = false, strided = true;
    for (int i = 0; i < ni; i++) {
        const dn_tensor *t = dn_tensor_of(c, n->inputs[i]);
        if (!t)
            return c->err ? c->err->code : BD_EBACKEND;
        strided &= no_blocks(&t->md);
        if (t->strided_view || dn_md_is_plain(&t->md) != dn_md_is_plain(&c->t[n->inputs[0]->index].md))
            mixed = true;
    }
    *na = 0;
    for (int i = 0; i < ni && !rc; i++) {
        const bd_value *x = n->inputs[i];
        if (mixed && !strided) {
            rc = dn_input_plain(c, x, &args[*na].buf, &mds[i]);
        } else {
            const dn_tensor *t = dn_tensor_of(c, x);
            args[*na].buf = t->buf;
            mds[i] = t->md;
        }
        args[*na].arg = DNNL_ARG_MULTIPLE_SRC + i;
        args[(*na)++].md = mds[i];
    }
    dnnl_memory_desc_t dst;
    bool own_dst = !rc && mixed && strided;
    if (own_dst)
        rc = dense_like(c, &mds[0], rank, y->shape.dims, &dst);
    dnnl_primitive_attr_t attr = rc ? NULL : dn_attr(c, NULL);
    if (!rc && !attr)
        rc = BD_EBACKEND;
    if (!rc)
        rc = dn_check(c, dnnl_concat_primitive_desc_create(pd, own_dst ? &dst : NULL, ni, axis, mds,
                                                           attr, c->eng),
                      "dnnl_concat_primitive_desc_create");
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return rc;
}

/* The concat of N's inputs as one reorder per input, each writing its input (a strided view
 * included, read as it is) straight into its sub-box of the plain output. */
static int concat_by_reorders(dn_compiler *c, const bd_node *n, int axis)
{
    const bd_value *y = n->outputs[0];
    int rank = y->shape.rank, obuf, rc;
    dnnl_memory_desc_t dst;
    dn_md_of_shape(&dst, y);
    if ((rc = dn_output(c, y, &dst, &obuf)))
        return rc;
    dnnl_dims_t dims, offs = { 0 };
    for (size_t i = 0; i < n->n_inputs && !rc; i++) {
        const bd_value *x = n->inputs[i];
        const dn_tensor *t = dn_tensor_of(c, x);
        if (!t)
            return c->err ? c->err->code : BD_EBACKEND;
        for (int d = 0; d < rank; d++)
            dims[d] = x->shape.dims[d];
        dnnl_memory_desc_t sub;
        dnnl_primitive_desc_t pd = NULL;
        rc = dn_check(c, dnnl_memory_desc_init_submemory(&sub, &dst, dims, offs),
                      "dnnl_memory_desc_init_submemory");
        if (!rc)
            rc = dn_reorder_pd(c, &t->md, &sub, "dnnl_reorder_primitive_desc_create", &pd);
        if (!rc) {
            dn_arg a[2] = { { DNNL_ARG_FROM, t->buf, t->md }, { DNNL_ARG_TO, obuf, sub } };
            rc = dn_add_step(c, pd, a, 2);
        } else if (pd) {
            dnnl_primitive_desc_destroy(pd);
        }
        if (!rc)   /* the concat's own copy, not a change of layout */
            c->steps[c->n_steps - 1].reorder_bytes = 0;
        offs[axis] += dims[axis];
    }
    return rc;
}

/* oneDNN's concat primitive takes its fast path only when every source is laid out like the
 * destination; otherwise (a transposed view: `concat ref:any src:abcd src:acbd`, a KV cache's
 * new token; `src:abc src:acb`, ViT's class token) it picks its reference concat, which is
 * never kept (issue 24). That one is a loop of reorders into the destination's sub-boxes:
 * braid emits those reorders itself, the same copies, each step showing the jit reorder it
 * runs. Measured, this is as fast as the reference concat, as fast as or faster than oneDNN's
 * simple concat of the KV cache's sources told plainly, and 4x faster than reordering the
 * view to plain first (2.6's simple concat alone takes 4x the reorder's time on ViT's
 * [1,197,768]). */
int dn_concat_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *y = n->outputs[0];
    int rank = y->shape.rank, ni = (int)n->n_inputs;
    int axis = (int)bd_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += rank;
    dnnl_memory_desc_t *mds = calloc((size_t)ni, sizeof *mds);
    dn_arg *args = calloc((size_t)ni + 2, sizeof *args);
    if (!mds || !args) {
        free(mds);
        free(args);
        return dn_fail(c, BD_ENOMEM, "out of memory");
    }
    int na = 0;
    dnnl_primitive_desc_t pd = NULL;
    int rc = concat_pd(c, n, axis, mds, args, &na, &pd);
    if (!rc && is_ref(pd)) {
        dnnl_primitive_desc_destroy(pd);
        free(mds);
        free(args);
        return concat_by_reorders(c, n, axis);
    }
    if (!rc) {
        const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
        rc = dn_output(c, y, dmd, &args[na].buf);
        args[na].arg = DNNL_ARG_DST;
        args[na++].md = *dmd;
        if (!rc)
            rc = dn_add_step(c, pd, args, na);
        else
            dnnl_primitive_desc_destroy(pd);
    }
    free(mds);
    free(args);
    return rc;
}
