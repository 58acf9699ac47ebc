/* Softmax (opset < 13: flattened to 2-D at axis; >= 13: one axis), LayerNormalization (over
 * the trailing dims from axis, as 2-D [rows, features]) and inference BatchNormalization
 * (data_format NHWC through a permuted md). */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

/* Rows and features of X split at AXIS. */
static void split2d(const bd_shape *s, int axis, int64_t d[2])
{
    d[0] = d[1] = 1;
    for (int i = 0; i < s->rank; i++)
        d[i < axis ? 0 : 1] *= s->dims[i];
}

/* Input I of N as a buffer seen through the 1-D md [C] (constants become kernel-owned). */
static int vec_input(dn_compiler *c, const bd_node *n, size_t i, int64_t C, dnnl_memory_desc_t *md, int *buf)
{
    const bd_value *v = n->inputs[i];
    dn_md_plain(md, 1, &C);
    if (bd_shape_numel(&v->shape) != C)
        return dn_fail(c, BD_EUNSUPPORTED, "input '%s' must hold %lld values", v->name, (long long)C);
    dnnl_memory_desc_t plain;
    return dn_input_plain(c, v, buf, &plain);
}

/* LAST: the primitive sees a channels-last X as [N, C, spatial...]. */
static int finish(dn_compiler *c, const bd_node *n, dnnl_primitive_desc_t pd, const bd_value *x,
                  int sbuf, const dnnl_memory_desc_t *smd, dn_arg *extra, int nextra, bool last)
{
    const bd_value *y = n->outputs[0];
    dnnl_memory_desc_t yview = *dn_pd_md(pd, dnnl_query_dst_md), dir;
    const dnnl_memory_desc_t *dmd = &dir;
    int rc = dn_md_ir(c, last, &dir, &yview), dbuf;
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    /* the output tensor keeps the input's layout; the primitive may see a reshaped view */
    const dnnl_memory_desc_t *xmd = &c->t[x->index].md;
    bool reshaped = smd->ndims != x->shape.rank;
    dnnl_memory_desc_t ymd;
    if (reshaped)
        dn_md_of_shape(&ymd, y);
    else
        ymd = *dmd;
    if (!reshaped && dn_can_reuse(c, x, dmd)) {
        dbuf = sbuf;
        rc = dn_define_view(c, y, dbuf, &ymd, false);
    } else if (reshaped && dn_md_is_plain(xmd) && dn_can_reuse(c, x, xmd)) {
        dbuf = sbuf;
        rc = dn_define_view(c, y, dbuf, &ymd, false);
    } else {
        rc = dn_output(c, y, &ymd, &dbuf);
    }
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[8];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC, sbuf, *smd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, yview };
    for (int i = 0; i < nextra; i++)
        args[na++] = extra[i];
    return dn_add_step(c, pd, args, na);
}

/* ---- Softmax ---------------------------------------------------------------------------- */

static int softmax_axis(const bd_graph *g, const bd_node *n, bool *flatten)
{
    int64_t opset = bd_graph_opset(g);
    *flatten = opset > 0 && opset < 13;
    int rank = n->inputs[0]->shape.rank;
    return norm_axis(bd_node_attr_int(n, "axis", *flatten ? 1 : -1), rank);
}

bool dn_softmax_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "Softmax needs an input");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    bool flatten;
    int axis = softmax_axis(g, n, &flatten);
    if (axis < 0 || axis >= (n->inputs[0]->shape.rank ? n->inputs[0]->shape.rank : 1))
        return dn_why(why, len, "Softmax axis out of range");
    return true;
}

int dn_softmax_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0];
    bool flatten;
    int axis = softmax_axis(c->sg->graph, n, &flatten);
    int rc, sbuf;
    dnnl_memory_desc_t smd;
    if ((rc = dn_input_plain(c, x, &sbuf, &smd)))
        return rc;
    if (flatten) {
        int64_t d[2];
        split2d(&x->shape, axis, d);
        dn_md_plain(&smd, 2, d);
        axis = 1;
    }
    dnnl_softmax_v2_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_softmax_v2_forward_desc_init(&desc, dnnl_forward_inference, dnnl_softmax_accurate,
                                                         &smd, &smd, axis),
                    "dnnl_softmax_v2_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    return finish(c, n, pd, x, sbuf, &smd, NULL, 0, false);
}

/* ---- LayerNormalization ------------------------------------------------------------------ */

bool dn_lnorm_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "LayerNormalization needs X and Scale");
    if (!dn_io_f32(n, 3, why, len) || !dn_no_post(n, why, len))
        return false;
    for (size_t i = 1; i < n->n_outputs; i++)
        if (bd_graph_use_count(g, n->outputs[i]) > 0)
            return dn_why(why, len, "LayerNormalization Mean/InvStdDev outputs are not supported");
    const bd_shape *x = &n->inputs[0]->shape;
    int axis = norm_axis(bd_node_attr_int(n, "axis", -1), x->rank);
    if (axis < 0 || axis >= x->rank)
        return dn_why(why, len, "LayerNormalization axis out of range");
    int64_t d[2];
    split2d(x, axis, d);
    for (size_t i = 1; i < 3 && i < dn_num_op_inputs(n); i++)
        if (n->inputs[i] && bd_shape_numel(&n->inputs[i]->shape) != d[1])
            return dn_why(why, len, "LayerNormalization scale/bias must cover the normalized dims");
    return true;
}

int dn_lnorm_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0];
    const bd_value *bias = dn_num_op_inputs(n) > 2 ? n->inputs[2] : NULL;
    int axis = norm_axis(bd_node_attr_int(n, "axis", -1), x->shape.rank);
    float eps = bd_node_attr_float(n, "epsilon", 1e-5f);
    int64_t d[2];
    split2d(&x->shape, axis, d);
    int rc, sbuf;
    dnnl_memory_desc_t smd, xplain;
    if ((rc = dn_input_plain(c, x, &sbuf, &xplain)))
        return rc;
    if (x->shape.rank == 2)
        smd = xplain;
    else
        dn_md_plain(&smd, 2, d);
    dn_arg extra[2];
    int ne = 0;
    if ((rc = vec_input(c, n, 1, d[1], &extra[ne].md, &extra[ne].buf)))
        return rc;
    extra[ne++].arg = DNNL_ARG_SCALE;
    if (bias) {
        if ((rc = vec_input(c, n, 2, d[1], &extra[ne].md, &extra[ne].buf)))
            return rc;
        extra[ne++].arg = DNNL_ARG_SHIFT;
    }
    dnnl_layer_normalization_desc_t desc;
    dnnl_primitive_desc_t pd;
    unsigned flags = dnnl_use_scale | (bias ? dnnl_use_shift : 0);
    rc = dn_pd_make(c, dnnl_layer_normalization_forward_desc_init(&desc, dnnl_forward_inference, &smd, NULL,
                                                                  eps, flags),
                    "dnnl_layer_normalization_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    return finish(c, n, pd, x, sbuf, &smd, extra, ne, false);
}

/* ---- BatchNormalization (inference) ----------------------------------------------------- */

bool dn_bnorm_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs != 5)
        return dn_why(why, len, "BatchNormalization needs X, scale, B, mean and var");
    for (size_t i = 0; i < 5; i++)
        if (!n->inputs[i])
            return dn_why(why, len, "BatchNormalization input %zu is missing", i);
    if (!dn_io_f32(n, 5, why, len) || !dn_no_post(n, why, len))
        return false;
    for (size_t i = 1; i < n->n_outputs; i++)
        if (bd_graph_use_count(g, n->outputs[i]) > 0)
            return dn_why(why, len, "BatchNormalization training outputs are not supported");
    if (bd_node_attr_int(n, "training_mode", 0))
        return dn_why(why, len, "BatchNormalization training_mode is not supported");
    const bd_shape *x = &n->inputs[0]->shape;
    if (x->rank < 2)
        return dn_why(why, len, "BatchNormalization needs at least [N, C]");
    if (!dn_data_format_ok(n, why, len))
        return false;
    int64_t C = x->dims[dn_channels_last(n) ? x->rank - 1 : 1];
    for (size_t i = 1; i < 5; i++)
        if (bd_shape_numel(&n->inputs[i]->shape) != C)
            return dn_why(why, len, "BatchNormalization parameters must have C values");
    return true;
}

int dn_bnorm_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0];
    bool last = dn_channels_last(n);
    int64_t C = x->shape.dims[last ? x->shape.rank - 1 : 1];
    int rc, sbuf;
    dnnl_memory_desc_t smd;
    if ((rc = dn_input_cf(c, x, last, &sbuf, &smd)))
        return rc;
    static const int argk[4] = { DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE };
    dn_arg extra[4];
    for (int i = 0; i < 4; i++) {
        if ((rc = vec_input(c, n, (size_t)i + 1, C, &extra[i].md, &extra[i].buf)))
            return rc;
        extra[i].arg = argk[i];
    }
    dnnl_batch_normalization_desc_t desc;
    dnnl_primitive_desc_t pd;
    unsigned flags = dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift;
    rc = dn_pd_make(c, dnnl_batch_normalization_forward_desc_init(&desc, dnnl_forward_inference, &smd,
                                                                  bd_node_attr_float(n, "epsilon", 1e-5f), flags),
                    "dnnl_batch_normalization_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    return finish(c, n, pd, x, sbuf, &smd, extra, 4, last);
}
