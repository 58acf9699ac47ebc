/* Elementwise activations (Relu, LeakyRelu, Clip, Elu, Sigmoid, Tanh, Gelu; Erf natively since
 * oneDNN has no erf eltwise). They run in whatever layout their input has, in place when the
 * input dies here. */
#include <float.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* A constant FP32 scalar input I of N (*OUT untouched when absent). False if not constant. */
static bool const_scalar(const bd_node *n, size_t i, float *out)
{
    const bd_value *v = i < dn_num_op_inputs(n) ? bd_node_input(n, i) : NULL;
    if (!v)
        return true;
    if (!v->data || v->dtype != BD_DT_FLOAT || bd_shape_numel(&v->shape) != 1 || v->nbytes < sizeof(float))
        return false;
    memcpy(out, v->data, sizeof(float));
    return true;
}

static bool alg_of(const bd_node *n, dnnl_alg_kind_t *alg, float *alpha, float *beta, bool *erf)
{
    const char *op = n->op_type;
    *alpha = *beta = 0.0f;
    *erf = false;
    if (!strcmp(op, "Relu")) {
        *alg = dnnl_eltwise_relu;
    } else if (!strcmp(op, "LeakyRelu")) {
        *alg = dnnl_eltwise_relu;
        *alpha = bd_node_attr_float(n, "alpha", 0.01f);
    } else if (!strcmp(op, "Clip")) {
        *alg = dnnl_eltwise_clip;
        *alpha = bd_node_attr_float(n, "min", -FLT_MAX);
        *beta = bd_node_attr_float(n, "max", FLT_MAX);
        if (!const_scalar(n, 1, alpha) || !const_scalar(n, 2, beta))
            return false;
    } else if (!strcmp(op, "Elu")) {
        *alg = dnnl_eltwise_elu;
        *alpha = bd_node_attr_float(n, "alpha", 1.0f);
    } else if (!strcmp(op, "Sigmoid")) {
        *alg = dnnl_eltwise_logistic;
    } else if (!strcmp(op, "Tanh")) {
        *alg = dnnl_eltwise_tanh;
    } else if (!strcmp(op, "Gelu")) {
        const char *ap = bd_node_attr_string(n, "approximate", "none");
        *alg = !strcmp(ap, "tanh") ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_gelu_erf;
    } else if (!strcmp(op, "Erf")) {
        *erf = true;
    } else {
        return false;
    }
    return true;
}

bool dn_eltwise_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "%s needs an input", n->op_type);
    if (!dn_io_f32(n, 1, why, len))
        return false;
    if (!bd_shape_equal(&n->inputs[0]->shape, &n->outputs[0]->shape))
        return dn_why(why, len, "%s output shape differs from its input", n->op_type);
    dnnl_alg_kind_t alg;
    float a, b;
    bool erf;
    if (!alg_of(n, &alg, &a, &b, &erf))
        return dn_why(why, len, "Clip min/max must be constant FP32 scalars");
    for (int i = 0; i < n->n_post; i++)
        if (erf || n->post[i].kind != BD_POST_BINARY)
            return dn_why(why, len, "%s takes only binary post-ops", n->op_type);
    return dn_postops_supported(g, n, why, len);
}

int dn_eltwise_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    dnnl_alg_kind_t alg;
    float alpha, beta;
    bool erf;
    if (!alg_of(n, &alg, &alpha, &beta, &erf))
        return dn_fail(c, BD_EUNSUPPORTED, "unsupported activation parameters");
    int rc, sbuf, dbuf;
    if (erf) {
        dnnl_memory_desc_t md;
        if ((rc = dn_input_plain(c, x, &sbuf, &md)))
            return rc;
        if (dn_can_reuse(c, x, &md)) {
            dbuf = sbuf;
            rc = dn_define_view(c, y, dbuf, &md, false);
        } else {
            rc = dn_output(c, y, &md, &dbuf);
        }
        if (rc)
            return rc;
        dn_arg a[2] = { { DNNL_ARG_SRC, sbuf, md }, { DNNL_ARG_DST, dbuf, md } };
        return dn_add_native(c, DN_STEP_ERF, a, 2, NULL);
    }
    if ((rc = dn_input(c, x, NULL, &sbuf)))
        return rc;
    dnnl_memory_desc_t md = c->t[x->index].md;
    if (c->t[x->index].strided_view)
        dn_md_of_shape(&md, x);
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    if ((rc = dn_postops_build(c, 0, md.ndims, md.dims, &po, &pa)))
        return rc;
    dnnl_eltwise_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, alg, &md, alpha, beta),
                    "dnnl_eltwise_forward_desc_init", &desc, po, 1.0f, &pd);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    if (dn_can_reuse(c, x, dmd)) {
        dbuf = sbuf;
        rc = dn_define_view(c, y, dbuf, dmd, false);
    } else {
        rc = dn_output(c, y, dmd, &dbuf);
    }
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[2 + BD_MAX_POSTOPS];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC, sbuf, md };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, *dmd };
    for (int i = 0; i < pa.nargs; i++)
        args[na++] = pa.args[i];
    return dn_add_step(c, pd, args, na);
}
