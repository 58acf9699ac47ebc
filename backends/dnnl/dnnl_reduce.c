/* ReduceMean / ReduceSum / ReduceMax / ReduceMin / ReduceProd as oneDNN's reduction primitive.
 * The source is read in its layout (a blocked conv output stays blocked); the destination is
 * plain with the reduced dims kept as 1, which is also the byte layout of the keepdims=0
 * output, so that case only renames the dims. Axes come from the attribute or a constant
 * INT64 input (opset 18); noop_with_empty_axes with no axes is not supported. A mean or max
 * over every spatial dim of an [N, C, spatial...] tensor (x.mean((2, 3)) in ConvNeXt and
 * MobileNetV3's heads) is a global pooling instead: oneDNN 2.6 has only its reference
 * reduction for channels-last sources, and jit pooling for every layout. So is the same mean
 * or max over a channels-last [N, spatial..., C] tensor (TensorFlow's x.mean((1, 2)): Keras'
 * GlobalAveragePooling2D and squeeze-excitation blocks), its descriptor's axes permuted to
 * [N, C, spatial...]: the reference reduction took 67 ms on one 1x112x112x32 mean, ~85% of
 * EfficientNetB0's time. */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static bool alg_of(const char *op, dnnl_alg_kind_t *alg)
{
    static const struct { const char *op; dnnl_alg_kind_t alg; } k[] = {
        { "ReduceMean", dnnl_reduction_mean }, { "ReduceSum", dnnl_reduction_sum },
        { "ReduceMax", dnnl_reduction_max },   { "ReduceMin", dnnl_reduction_min },
        { "ReduceProd", dnnl_reduction_mul },
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcmp(op, k[i].op)) {
            *alg = k[i].alg;
            return true;
        }
    return false;
}

/* The keepdims shape of the reduction into DIMS; false with WHY when axes are unsupported. */
static bool kept_dims(const bd_node *n, int64_t *dims, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *av = dn_num_op_inputs(n) > 1 ? n->inputs[1] : NULL;
    int rank = x->shape.rank;
    int64_t axes[BD_MAX_RANK];
    size_t na = 0;
    if (av) {
        if (!av->data || av->dtype != BD_DT_INT64 || av->shape.rank != 1 || av->shape.dims[0] > rank ||
            av->nbytes < (size_t)av->shape.dims[0] * 8)
            return dn_why(why, len, "%s axes '%s' must be a constant INT64 vector", n->op_type, av->name);
        na = (size_t)av->shape.dims[0];
        memcpy(axes, av->data, na * 8);
    } else {
        const int64_t *a = NULL;
        na = bd_node_attr_ints(n, "axes", &a);
        if (na > (size_t)rank)
            return dn_why(why, len, "%s has more axes than dims", n->op_type);
        if (na)
            memcpy(axes, a, na * sizeof *a);
    }
    memcpy(dims, x->shape.dims, sizeof *dims * (size_t)rank);
    if (na == 0) {
        if (bd_node_attr_int(n, "noop_with_empty_axes", 0))
            return dn_why(why, len, "%s noop_with_empty_axes is not supported", n->op_type);
        for (int i = 0; i < rank; i++)
            dims[i] = 1;
        return true;
    }
    for (size_t i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank)
            return dn_why(why, len, "%s axis %lld out of range", n->op_type, (long long)axes[i]);
        dims[a] = 1;
    }
    return true;
}

bool dn_reduce_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    dnnl_alg_kind_t alg;
    if (n->n_inputs < 1 || !n->inputs[0] || !alg_of(n->op_type, &alg))
        return dn_why(why, len, "%s needs an input", n->op_type);
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    if (n->inputs[0]->shape.rank < 1)
        return dn_why(why, len, "%s of a scalar is not supported", n->op_type);
    int64_t dims[BD_MAX_RANK];
    if (!kept_dims(n, dims, why, len))
        return false;
    int rank = n->inputs[0]->shape.rank;
    bd_shape kept = bd_shape_make(rank, dims);
    if (bd_shape_numel(&kept) != bd_shape_numel(&n->outputs[0]->shape))
        return dn_why(why, len, "%s axes do not produce the inferred output shape", n->op_type);
    /* oneDNN refuses a reduction that reduces nothing (every reduced axis of size 1, e.g. a
     * batch of 1 summed over the batch axis): the native engine runs that one */
    bool reduces = false;
    for (int d = 0; d < rank; d++)
        reduces |= dims[d] != n->inputs[0]->shape.dims[d];
    if (!reduces)
        return dn_why(why, len, "%s reduces only axes of size 1 (oneDNN wants one reduced)", n->op_type);
    return true;
}

/* Does the reduction to DIMS keep N and C and reduce every spatial dim (rank 3 to 5)? */
static bool spatial_only(const bd_value *x, const int64_t *dims)
{
    int rank = x->shape.rank;
    if (rank < 3 || rank > 5 || dims[0] != x->shape.dims[0] || dims[1] != x->shape.dims[1])
        return false;
    for (int d = 2; d < rank; d++)
        if (dims[d] != 1)
            return false;
    return true;
}

/* A pooling pd over the whole spatial extent of SMD (logical dims SRC, [N, C, spatial...] of
 * RANK) into DST (a format_tag_any md lets oneDNN pick its layout, and its jit kernels want
 * the source's). */
static int pooling_pd(dn_compiler *c, dnnl_alg_kind_t alg, int rank, const int64_t *src,
                      const dnnl_memory_desc_t *smd, const dnnl_memory_desc_t *dst, dnnl_primitive_desc_t *pd)
{
    dnnl_dims_t kernel, stride, dil = { 0 }, pad = { 0 };
    for (int i = 0; i < rank - 2; i++) {
        kernel[i] = src[2 + i];
        stride[i] = 1;
    }
    dnnl_pooling_v2_desc_t desc;
    return dn_pd_make(c, dnnl_pooling_v2_forward_desc_init(&desc, dnnl_forward_inference,
                                                           alg == dnnl_reduction_max ? dnnl_pooling_max
                                                                                     : dnnl_pooling_avg_exclude_padding,
                                                           smd, dst, stride, kernel, dil, pad, pad),
                      "dnnl_pooling_v2_forward_desc_init", &desc, NULL, 1.0f, pd);
}

/* The reduction as a global pooling of SMD (logical dims SRC, [N, C, spatial...]) to DIMS
 * ([N, C, 1...]). That destination has the bytes of the plain keepdims output whenever its
 * layout is not blocked (NHWC of 1x1 is NCHW, and [N, C, 1...] is [N, 1..., C] in bytes):
 * then it writes the output directly; else the pooling writes plain. */
static int reduce_by_pooling(dn_compiler *c, const bd_node *n, dnnl_alg_kind_t alg, int sbuf,
                             const dnnl_memory_desc_t *smd, const int64_t *src, const int64_t *dims)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rc, dbuf, rank = x->shape.rank;
    dnnl_memory_desc_t dany, dmd, ymd;
    dn_md_any(&dany, rank, dims);
    dn_md_of_shape(&ymd, y);
    dnnl_primitive_desc_t pd;
    if ((rc = pooling_pd(c, alg, rank, src, smd, &dany, &pd)))
        return rc;
    dmd = *dn_pd_md(pd, dnnl_query_dst_md);
    if (!dn_md_is_plain(&dmd)) {
        dnnl_primitive_desc_destroy(pd);
        dn_md_plain(&dmd, rank, dims);
        if ((rc = pooling_pd(c, alg, rank, src, smd, &dmd, &pd)))
            return rc;
    }
    if ((rc = dn_output(c, y, &ymd, &dbuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[2] = { { DNNL_ARG_SRC, sbuf, *smd }, { DNNL_ARG_DST, dbuf, dmd } };
    return dn_add_step(c, pd, args, 2);
}

/* Does the reduction to DIMS keep N and the last dim (C) and reduce every dim between them
 * (rank 3 to 5, channels last)? */
static bool spatial_only_channels_last(const bd_value *x, const int64_t *dims)
{
    int rank = x->shape.rank;
    if (rank < 3 || rank > 5 || dims[0] != x->shape.dims[0] || dims[rank - 1] != x->shape.dims[rank - 1])
        return false;
    for (int d = 1; d < rank - 1; d++)
        if (dims[d] != 1)
            return false;
    return true;
}

int dn_reduce_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    dnnl_alg_kind_t alg;
    int64_t dims[BD_MAX_RANK];
    char why[160];
    if (!alg_of(n->op_type, &alg) || !kept_dims(n, dims, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    int rc, sbuf, dbuf;
    if ((rc = dn_input(c, x, NULL, &sbuf)))
        return rc;
    dnnl_memory_desc_t smd = c->t[x->index].md, dmd, ymd;
    if (c->t[x->index].strided_view)      /* dn_input made it plain */
        dn_md_of_shape(&smd, x);
    bool poolable = alg == dnnl_reduction_mean || alg == dnnl_reduction_max;
    if (poolable && spatial_only(x, dims))
        return reduce_by_pooling(c, n, alg, sbuf, &smd, x->shape.dims, dims);
    if (poolable && spatial_only_channels_last(x, dims)) {
        /* Logical axis d of [N, spatial..., C] becomes axis perm[d] of [N, C, spatial...]. */
        int rank = x->shape.rank, perm[BD_MAX_RANK];
        int64_t src[BD_MAX_RANK], pdims[BD_MAX_RANK];
        perm[0] = 0;
        perm[rank - 1] = 1;
        for (int d = 1; d < rank - 1; d++)
            perm[d] = d + 1;
        for (int d = 0; d < rank; d++) {
            src[perm[d]] = x->shape.dims[d];
            pdims[perm[d]] = dims[d];
        }
        dnnl_memory_desc_t pmd;
        if (dnnl_memory_desc_permute_axes(&pmd, &smd, perm) == dnnl_success)
            return reduce_by_pooling(c, n, alg, sbuf, &pmd, src, pdims);
    }
    dn_md_plain(&dmd, x->shape.rank, dims);
    dn_md_of_shape(&ymd, y);
    dnnl_reduction_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_reduction_desc_init(&desc, alg, &smd, &dmd, 0.0f, 0.0f),
                    "dnnl_reduction_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    if ((rc = dn_output(c, y, &ymd, &dbuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[2] = { { DNNL_ARG_SRC, sbuf, smd }, { DNNL_ARG_DST, dbuf, dmd } };
    return dn_add_step(c, pd, args, 2);
}
