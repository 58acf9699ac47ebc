/* Inference BatchNormalization after a Conv folded into the conv's weights and bias:
 *   s = scale / sqrt(var + eps);  W' = W * s (per output channel);  B' = (B - mean) * s + shift
 * The output channel is W's first dim (ONNX) or, for TF's filter_format HWIO / HWCM, its last
 * dim / last two dims (c*M + m); the folded weights keep the filter's format. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

static bool f32_const(const bd_value *v, int64_t numel)
{
    return v && v->data && v->dtype == BD_DT_FLOAT && bd_shape_numel(&v->shape) == numel &&
           v->nbytes >= (size_t)numel * sizeof(float);
}

int bd_pass_fold_batchnorm(bd_graph *g, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *conv = bd_graph_node(g, i);
        if (!bd_is_op(conv, "Conv") || !bd_fusable(conv) || conv->n_inputs < 2 || conv->n_post)
            continue;
        bd_value *w = conv->inputs[1], *b = bd_node_input(conv, 2);
        if (!w->data || w->dtype != BD_DT_FLOAT || w->shape.rank < 3 || !bd_shape_is_static(&w->shape))
            continue;
        /* output channels: ONNX [O, ...] leads; TF's HWIO [.., O] / HWCM [.., C, M] (channel
         * c*M + m) put them innermost, so element k belongs to channel k % oc */
        const char *ff = bd_node_attr_string(conv, "filter_format", "OIHW");
        bool tf_filter = !strcmp(ff, "HWIO") || !strcmp(ff, "HWCM");
        if (!tf_filter && strcmp(ff, "OIHW"))
            continue;
        int r = w->shape.rank;
        int64_t oc = !tf_filter ? w->shape.dims[0] : !strcmp(ff, "HWIO") ? w->shape.dims[r - 1]
                   : w->shape.dims[r - 2] * w->shape.dims[r - 1];
        int64_t per = bd_shape_numel(&w->shape) / (oc ? oc : 1);
        bd_node *bn = bd_sole_consumer(g, conv->outputs[0]);
        if (!bd_is_op(bn, "BatchNormalization") || !bd_fusable(bn) || bn->n_inputs != 5 || bn->n_outputs != 1 ||
            bn->inputs[0] != conv->outputs[0] || bd_node_attr_int(bn, "training_mode", 0))
            continue;
        /* BN must normalise the conv's channel axis (both NHWC or both NCHW) */
        if (strcmp(bd_node_attr_string(conv, "data_format", "NCHW"), bd_node_attr_string(bn, "data_format", "NCHW")))
            continue;
        if (!f32_const(bn->inputs[1], oc) || !f32_const(bn->inputs[2], oc) ||
            !f32_const(bn->inputs[3], oc) || !f32_const(bn->inputs[4], oc) || (b && !f32_const(b, oc)))
            continue;
        float eps = bd_node_attr_float(bn, "epsilon", 1e-5f);
        const float *scale = bn->inputs[1]->data, *shift = bn->inputs[2]->data,
                    *mean = bn->inputs[3]->data, *var = bn->inputs[4]->data,
                    *bias = b ? b->data : NULL, *w0 = w->data;
        float *nw, *nb;
        bd_shape bshape = bd_shape_make(1, &oc);
        bd_value *wv = bd_pass_new_const(g, w->name, "_bnfold", BD_DT_FLOAT, &w->shape, sizeof(float),
                                         (void **)&nw, err);
        bd_value *bv = wv ? bd_pass_new_const(g, conv->name, "_bnfold_bias", BD_DT_FLOAT, &bshape,
                                              sizeof(float), (void **)&nb, err) : NULL;
        if (!bv)
            return err && err->code ? err->code : BD_ENOMEM;
        for (int64_t c = 0; c < oc; c++) {
            float s = scale[c] / sqrtf(var[c] + eps);
            for (int64_t k = 0; k < per && !tf_filter; k++)
                nw[c * per + k] = w0[c * per + k] * s;
            nb[c] = ((bias ? bias[c] : 0.0f) - mean[c]) * s + shift[c];
        }
        for (int64_t k = 0; tf_filter && k < oc * per; k++) {
            float v;                 /* TF weights may sit unaligned in the model file */
            memcpy(&v, (const char *)w->data + (size_t)k * sizeof v, sizeof v);
            nw[k] = v * (scale[k % oc] / sqrtf(var[k % oc] + eps));
        }
        /* Conv now reads the folded constants and produces BN's output. */
        bd_value *y = bn->outputs[0];
        bd_graph_remove_node(g, bn);
        conv->inputs[1] = wv;
        if (conv->n_inputs >= 3)
            conv->inputs[2] = bv;
        else if (bd_node_append_input(g, conv, bv, err) < 0)
            return err ? err->code : BD_ENOMEM;
        bd_node_set_output(conv, 0, y);
        conv->composite = "Conv+BatchNormalization";
        rewrites++;
    }
    return rewrites;
}
