/* Element-wise activations and math on oneDNN's eltwise primitive (Relu, LeakyRelu, Clip, Elu,
 * Sigmoid, Tanh, Gelu, Swish, HardSwish, HardSigmoid, Abs, Sqrt, Exp, Log, Softplus, Neg,
 * Reciprocal, Round, Pow by a constant; Erf natively since oneDNN has no erf eltwise). They
 * run in whatever layout their input has, in place when the input dies here. */
#include <float.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* A constant FP32 scalar input I of N (*OUT untouched when absent). False if not constant. */
static bool const_scalar(const bd_node *n, size_t i, float *out)
{
    const bd_value *v = dn_op_input(n, i);
    if (!v)
        return true;
    if (!v->data || v->dtype != BD_DT_FLOAT || bd_shape_numel(&v->shape) != 1 || v->nbytes < sizeof(float))
        return false;
    memcpy(out, v->data, sizeof(float));
    return true;
}

/* Ops that are one oneDNN algorithm with fixed parameters. */
static const struct {
    const char     *op;
    dnnl_alg_kind_t alg;
    float           alpha, beta;
} k_simple[] = {
    { "Relu", dnnl_eltwise_relu, 0, 0 },          { "Sigmoid", dnnl_eltwise_logistic, 0, 0 },
    { "Tanh", dnnl_eltwise_tanh, 0, 0 },          { "Abs", dnnl_eltwise_abs, 0, 0 },
    { "Sqrt", dnnl_eltwise_sqrt, 0, 0 },          { "Exp", dnnl_eltwise_exp, 0, 0 },
    { "Log", dnnl_eltwise_log, 0, 0 },            { "HardSwish", dnnl_eltwise_hardswish, 0, 0 },
    { "Softplus", dnnl_eltwise_soft_relu, 1, 0 }, { "Neg", dnnl_eltwise_linear, -1, 0 },
    { "Reciprocal", dnnl_eltwise_pow, 1, -1 },    { "Round", dnnl_eltwise_round, 0, 0 },
    { "Swish", dnnl_eltwise_swish, 1, 0 },        /* braid's composite of x * Sigmoid(x) */
};

/* N's algorithm and parameters; *CLIP01 when a clip to [0, 1] follows (HardSigmoid). */
static bool alg_of(const bd_node *n, dnnl_alg_kind_t *alg, float *alpha, float *beta, bool *erf,
                   bool *clip01)
{
    const char *op = n->op_type;
    *alpha = *beta = 0.0f;
    *erf = *clip01 = false;
    for (size_t i = 0; i < sizeof k_simple / sizeof k_simple[0]; i++)
        if (!strcmp(op, k_simple[i].op)) {
            *alg = k_simple[i].alg;
            *alpha = k_simple[i].alpha;
            *beta = k_simple[i].beta;
            return true;
        }
    if (!strcmp(op, "LeakyRelu")) {
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
    } else if (!strcmp(op, "HardSigmoid")) {
        *alg = dnnl_eltwise_linear;
        *alpha = bd_node_attr_float(n, "alpha", 0.2f);
        *beta = bd_node_attr_float(n, "beta", 0.5f);
        *clip01 = true;
    } else if (!strcmp(op, "Pow")) {                 /* x ^ e for a constant scalar e */
        *alg = dnnl_eltwise_pow;
        *alpha = 1.0f;
        if (n->n_inputs < 2 || !n->inputs[1] || !const_scalar(n, 1, beta))
            return false;
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
    bool erf, clip01;
    if (!alg_of(n, &alg, &a, &b, &erf, &clip01))
        return dn_why(why, len, "%s: its %s must be a constant FP32 scalar", n->op_type,
                      !strcmp(n->op_type, "Pow") ? "exponent" : "min/max");
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
    bool erf, clip01;
    if (!alg_of(n, &alg, &alpha, &beta, &erf, &clip01))
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
    if (alg == dnnl_eltwise_swish && n->n_post == 0 && dn_avx512() &&
        !c->t[x->index].strided_view && dn_md_dense(&md)) {     /* dnnl_swish.c: faster */
        rc = dn_can_reuse(c, x, &md) ? dn_define_view(c, y, sbuf, &md, false)
                                     : dn_output(c, y, &md, &dbuf);
        return rc ? rc : dn_swish_append(c, y, sbuf, &md, alpha);
    }
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    if (clip01 && (dn_check(c, dnnl_post_ops_create(&po), "dnnl_post_ops_create") ||
                   dn_check(c, dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 1.0f),
                            "dnnl_post_ops_append_eltwise"))) {
        dnnl_post_ops_destroy(po);
        return BD_EBACKEND;
    }
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
