/* Pad, constant mode, as a native step (oneDNN has no pad primitive): one pass over the
 * plain output writing the fill value around row copies of the input (dnnl_native.c). Pads
 * come from the constant INT64 input (opset >= 11, optionally per `axes`) or the attribute;
 * the fill value from the constant scalar input or the `value` attribute. Negative pads
 * (cropping) and the reflect/edge/wrap modes are left to another backend. */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* Begin pads per dim into PB and the fill value into *VALUE; false with WHY if unsupported. */
static bool pad_params(const bd_node *n, int64_t *pb, float *value, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = x->shape.rank;
    const char *mode = bd_node_attr_string(n, "mode", "constant");
    if (strcmp(mode, "constant"))
        return dn_why(why, len, "Pad mode '%s' is not supported (constant only)", mode);
    size_t nin = dn_num_op_inputs(n);
    const bd_value *pv = nin > 1 ? n->inputs[1] : NULL, *cv = nin > 2 ? n->inputs[2] : NULL;
    const bd_value *av = nin > 3 ? n->inputs[3] : NULL;
    int64_t pads[2 * BD_MAX_RANK];
    int axes[BD_MAX_RANK];
    size_t np = 0, na = (size_t)rank;
    if (pv) {
        if (!pv->data || (pv->dtype != BD_DT_INT64 && pv->dtype != BD_DT_INT32) ||
            pv->shape.rank != 1 || pv->shape.dims[0] > 2 * BD_MAX_RANK)
            return dn_why(why, len, "Pad pads '%s' must be a constant INT64 vector", pv->name);
        np = (size_t)pv->shape.dims[0];
        size_t es = pv->dtype == BD_DT_INT64 ? 8 : 4;
        if (pv->nbytes < np * es)
            return dn_why(why, len, "Pad pads '%s' holds too few bytes", pv->name);
        for (size_t i = 0; i < np; i++) {
            if (es == 8) {
                memcpy(&pads[i], (const char *)pv->data + i * 8, 8);
            } else {
                int32_t v;
                memcpy(&v, (const char *)pv->data + i * 4, 4);
                pads[i] = v;
            }
        }
    } else {
        const int64_t *a = NULL;
        np = bd_node_attr_ints(n, "pads", &a);
        if (!a || np > 2 * BD_MAX_RANK)
            return dn_why(why, len, "Pad needs pads");
        memcpy(pads, a, sizeof *pads * np);
    }
    for (int i = 0; i < rank; i++)
        axes[i] = i;
    if (av) {
        if (!av->data || av->dtype != BD_DT_INT64 || av->shape.rank != 1 || av->shape.dims[0] > rank ||
            av->nbytes < (size_t)av->shape.dims[0] * 8)
            return dn_why(why, len, "Pad axes '%s' must be a constant INT64 vector", av->name);
        na = (size_t)av->shape.dims[0];
        for (size_t i = 0; i < na; i++) {
            int64_t a;
            memcpy(&a, (const char *)av->data + i * 8, 8);
            if (a < 0)
                a += rank;
            if (a < 0 || a >= rank)
                return dn_why(why, len, "Pad axis %lld out of range", (long long)a);
            axes[i] = (int)a;
        }
    }
    if (np != 2 * na)
        return dn_why(why, len, "Pad has %zu pads for %zu axes", np, na);
    for (int i = 0; i < rank; i++)
        pb[i] = 0;
    for (size_t k = 0; k < na; k++) {
        if (pads[k] < 0 || pads[na + k] < 0)
            return dn_why(why, len, "Pad with negative pads (cropping) is not supported");
        pb[axes[k]] = pads[k];
        if (x->shape.dims[axes[k]] + pads[k] + pads[na + k] != y->shape.dims[axes[k]])
            return dn_why(why, len, "Pad pads do not produce the inferred output shape");
    }
    *value = bd_node_attr_float(n, "value", 0.0f);
    if (cv) {
        if (!cv->data || cv->dtype != BD_DT_FLOAT || bd_shape_numel(&cv->shape) != 1 || cv->nbytes < 4)
            return dn_why(why, len, "Pad constant_value must be a constant FP32 scalar");
        memcpy(value, cv->data, sizeof *value);
    }
    return true;
}

bool dn_pad_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "Pad needs an input");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    if (n->inputs[0]->shape.rank < 1 || n->inputs[0]->shape.rank != n->outputs[0]->shape.rank)
        return dn_why(why, len, "Pad needs an input of rank >= 1 and an output of the same rank");
    int64_t pb[BD_MAX_RANK];
    float v;
    return pad_params(n, pb, &v, why, len);
}

int dn_pad_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    dn_native nat;
    memset(&nat, 0, sizeof nat);
    char why[160];
    if (!pad_params(n, nat.ip, &nat.fp[0], why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    int rc, sbuf, dbuf;
    dnnl_memory_desc_t smd, dmd;
    if ((rc = dn_input_plain(c, x, &sbuf, &smd)))
        return rc;
    dn_md_of_shape(&dmd, y);
    if ((rc = dn_output(c, y, &dmd, &dbuf)))
        return rc;
    dn_arg a[2] = { { DNNL_ARG_SRC, sbuf, smd }, { DNNL_ARG_DST, dbuf, dmd } };
    return dn_add_native(c, DN_STEP_PAD, a, 2, &nat);
}
