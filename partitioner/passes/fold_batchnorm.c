/* A per-output-channel affine map after a Conv, folded into the conv's weights and bias:
 *   y = conv(x) * s + t   ->   W' = W * s (per output channel);  B' = B * s + t
 * Two forms:
 * - inference BatchNormalization: s = scale / sqrt(var + eps), t = shift - mean * s;
 * - Mul by a constant per-channel (or scalar) s, then optionally Add of a constant t: what a
 *   frozen TensorFlow graph makes of Keras's BatchNormalization (its statistics folded into
 *   x * s + t by Grappler), on every convolution of Keras's MobileNetV2, ResNet50 and
 *   EfficientNet. Folded, the conv needs no binary post-ops.
 * The output channel is W's first dim (ONNX) or, for TF's filter_format HWIO / HWCM, its last
 * dim / last two dims (c*M + m); the folded weights keep the filter's format. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

static bool f32_const(const bd_value *v, int64_t numel)
{
    return v && v->data && v->dtype == BD_DT_FLOAT && bd_shape_numel(&v->shape) == numel &&
           v->nbytes >= (size_t)numel * sizeof(float);
}

/* Element I of a float constant that may sit unaligned in the model file. */
static float at(const bd_value *v, int64_t i)
{
    float f;
    memcpy(&f, (const char *)v->data + (size_t)i * sizeof f, sizeof f);
    return f;
}

/* The conv's weights, their output channels *OC and whether they are TF-laid (HWIO / HWCM:
 * element k belongs to channel k % oc), or false when the conv cannot be folded into. */
static bool conv_weights(const bd_node *conv, int64_t *oc, bool *tf_filter)
{
    if (!bd_is_op(conv, "Conv") || !bd_fusable(conv) || conv->n_inputs < 2 || conv->n_post ||
        conv->n_outputs != 1)
        return false;
    const bd_value *w = conv->inputs[1];
    if (!w->data || w->dtype != BD_DT_FLOAT || w->shape.rank < 3 || !bd_shape_is_static(&w->shape))
        return false;
    const char *ff = bd_node_attr_string(conv, "filter_format", "OIHW");
    *tf_filter = !strcmp(ff, "HWIO") || !strcmp(ff, "HWCM");
    if (!*tf_filter && strcmp(ff, "OIHW"))
        return false;
    int r = w->shape.rank;
    *oc = !*tf_filter ? w->shape.dims[0] : !strcmp(ff, "HWIO") ? w->shape.dims[r - 1]
        : w->shape.dims[r - 2] * w->shape.dims[r - 1];
    const bd_value *b = bd_node_input(conv, 2);
    return *oc > 0 && (!b || f32_const(b, *oc));
}

/* Give CONV the weights W * S and bias B * S + T (S, T: OC floats) and make it produce Y
 * (the output of the folded chain, whose nodes the caller removed). */
static int fold(bd_graph *g, bd_node *conv, int64_t oc, bool tf_filter, const float *s,
                const float *t, bd_value *y, const char *composite, bd_error *err)
{
    bd_value *w = conv->inputs[1], *b = bd_node_input(conv, 2);
    int64_t per = bd_shape_numel(&w->shape) / oc;
    float *nw, *nb;
    bd_shape bshape = bd_shape_make(1, &oc);
    bd_value *wv = bd_pass_new_const(g, w->name, "_bnfold", BD_DT_FLOAT, &w->shape, sizeof(float),
                                     (void **)&nw, err);
    bd_value *bv = wv ? bd_pass_new_const(g, conv->name, "_bnfold_bias", BD_DT_FLOAT, &bshape,
                                          sizeof(float), (void **)&nb, err) : NULL;
    if (!bv)
        return err && err->code ? err->code : BD_ENOMEM;
    for (int64_t k = 0; k < oc * per; k++)
        nw[k] = at(w, k) * s[tf_filter ? k % oc : k / per];
    for (int64_t c = 0; c < oc; c++)
        nb[c] = (b ? at(b, c) : 0.0f) * s[c] + t[c];
    conv->inputs[1] = wv;
    if (conv->n_inputs >= 3)
        conv->inputs[2] = bv;
    else if (bd_node_append_input(g, conv, bv, err) < 0)
        return err ? err->code : BD_ENOMEM;
    bd_node_set_output(conv, 0, y);
    conv->composite = composite;
    return 0;
}

/* BatchNormalization(conv) -> the conv, folded. 1 when folded, 0 when not that form. */
static int fold_bn(bd_graph *g, bd_node *conv, int64_t oc, bool tf_filter, bd_error *err)
{
    bd_node *bn = bd_sole_consumer(g, conv->outputs[0]);
    if (!bd_is_op(bn, "BatchNormalization") || !bd_fusable(bn) || bn->n_inputs != 5 || bn->n_outputs != 1 ||
        bn->inputs[0] != conv->outputs[0] || bd_node_attr_int(bn, "training_mode", 0))
        return 0;
    /* BN must normalise the conv's channel axis (both NHWC or both NCHW) */
    if (strcmp(bd_node_attr_string(conv, "data_format", "NCHW"), bd_node_attr_string(bn, "data_format", "NCHW")))
        return 0;
    for (int i = 1; i < 5; i++)
        if (!f32_const(bn->inputs[i], oc))
            return 0;
    float eps = bd_node_attr_float(bn, "epsilon", 1e-5f);
    float *s = malloc((size_t)oc * 2 * sizeof *s);
    if (!s)
        return bd_error_set(err, BD_ENOMEM, "out of memory folding '%s'", bn->name);
    float *t = s + oc;
    for (int64_t c = 0; c < oc; c++) {
        s[c] = at(bn->inputs[1], c) / sqrtf(at(bn->inputs[4], c) + eps);
        t[c] = at(bn->inputs[2], c) - at(bn->inputs[3], c) * s[c];
    }
    bd_value *y = bn->outputs[0];
    bd_graph_remove_node(g, bn);
    int rc = fold(g, conv, oc, tf_filter, s, t, y, "Conv+BatchNormalization", err);
    free(s);
    return rc ? rc : 1;
}

/* V as OC per-channel floats of a conv output of rank RANK whose channels are on axis
 * CAXIS: a constant holding one value, or OC values on that axis (right-aligned broadcast,
 * every other dim 1). Fills OUT (OC floats); false when V is not such a constant. */
static bool per_channel(const bd_value *v, int rank, int caxis, int64_t oc, float *out)
{
    if (!v || !v->data || v->dtype != BD_DT_FLOAT || !bd_shape_is_static(&v->shape) ||
        v->shape.rank > rank)
        return false;
    int64_t n = bd_shape_numel(&v->shape);
    if (n == 1 && v->nbytes >= sizeof(float)) {
        for (int64_t c = 0; c < oc; c++)
            out[c] = at(v, 0);
        return true;
    }
    if (n != oc || v->nbytes < (size_t)oc * sizeof(float))
        return false;
    for (int d = 0; d < v->shape.rank; d++) {
        int axis = rank - v->shape.rank + d;
        if (v->shape.dims[d] != (axis == caxis ? oc : 1))
            return false;
    }
    for (int64_t c = 0; c < oc; c++)
        out[c] = at(v, c);
    return true;
}

/* Mul(conv, s) [-> Add(., t)] with constant per-channel s, t -> the conv, folded. */
static int fold_scale_shift(bd_graph *g, bd_node *conv, int64_t oc, bool tf_filter, bd_error *err)
{
    const bd_value *x = conv->outputs[0];
    int rank = x->shape.rank;
    if (rank < 3)
        return 0;
    int caxis = !strcmp(bd_node_attr_string(conv, "data_format", "NCHW"), "NHWC") ? rank - 1 : 1;
    bd_node *mul = bd_sole_consumer(g, x);
    if (!bd_is_op(mul, "Mul") || !bd_fusable(mul) || mul->n_inputs != 2 || mul->n_outputs != 1)
        return 0;
    float *s = malloc((size_t)oc * 2 * sizeof *s);
    if (!s)
        return bd_error_set(err, BD_ENOMEM, "out of memory folding '%s'", mul->name);
    float *t = s + oc;
    int rc = 0;
    const bd_value *sv = bd_other_input(mul, x);
    /* the product keeps the conv's shape (a wider constant would broadcast it) */
    if (!per_channel(sv, rank, caxis, oc, s) || mul->outputs[0]->shape.rank != rank)
        goto done;
    bd_node *add = bd_sole_consumer(g, mul->outputs[0]);
    const bd_value *tv = bd_is_op(add, "Add") && bd_fusable(add) && add->n_inputs == 2 ?
                         bd_other_input(add, mul->outputs[0]) : NULL;
    bool with_add = tv && per_channel(tv, rank, caxis, oc, t) && add->outputs[0]->shape.rank == rank;
    if (!with_add)
        memset(t, 0, (size_t)oc * sizeof *t);
    bd_value *y = with_add ? add->outputs[0] : mul->outputs[0];
    if (with_add)
        bd_graph_remove_node(g, add);
    bd_graph_remove_node(g, mul);
    rc = fold(g, conv, oc, tf_filter, s, t, y, with_add ? "Conv+Mul+Add(folded)" : "Conv+Mul(folded)", err);
    rc = rc ? rc : 1;
done:
    free(s);
    return rc;
}

int bd_pass_fold_batchnorm(bd_graph *g, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *conv = bd_graph_node(g, i);
        int64_t oc;
        bool tf_filter;
        if (!conv_weights(conv, &oc, &tf_filter))
            continue;
        int rc = fold_bn(g, conv, oc, tf_filter, err);
        if (rc == 0)
            rc = fold_scale_shift(g, conv, oc, tf_filter, err);
        if (rc < 0)
            return rc;
        rewrites += rc;   /* the removed nodes came after the conv: index I still holds it */
    }
    return rewrites;
}
