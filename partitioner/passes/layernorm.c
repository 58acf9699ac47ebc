/* The layer norm that exporters decompose, fused back into LayerNormalization. Two forms:
 * opset-13 ONNX exporters write
 *   m = ReduceMean(x, [-1]); d = x - m; v = ReduceMean(d^2, [-1]);
 *   y = d / Sqrt(v + eps) * gamma + beta
 * and Keras's LayerNormalization, frozen by TensorFlow, is (after braid's TF importer: its
 * SquaredDifference is Sub + Mul, its Rsqrt Sqrt + Reciprocal)
 *   m = ReduceMean(x, [-1]); v = ReduceMean((x - m)^2, [-1]); s = 1/Sqrt(v + eps) * gamma;
 *   y = x * s + (-m * s + beta)
 * where a zero beta's Add may already be gone (identity_arith).                             */
#include <math.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* ReduceMean over exactly the last axis, keeping dims. */
static bool is_mean_last_axis(const bd_node *n, int rank)
{
    if (!bd_is_op(n, "ReduceMean") || bd_node_attr_int(n, "keepdims", 1) != 1)
        return false;
    const int64_t *axes;
    if (bd_node_attr_ints(n, "axes", &axes) != 1)
        return false;
    return axes[0] == -1 || (rank > 0 && axes[0] == rank - 1);
}

static bool const_vector(const bd_value *v)
{
    return v && v->data && v->dtype == BD_DT_FLOAT && v->shape.rank == 1;
}

/* Would TARGET run LayerNormalization(X, GAMMA, BETA) -> Y over the last axis? Asked on a
 * node that only lives here, before rewriting: LayerNormalization is an ONNX op only from
 * opset 17, so the fused node must stay on the fast path. */
static bool target_takes(const bd_graph *g, const bd_fuse_target *target, const char *name, bd_value *x,
                         bd_value *gamma, bd_value *beta, bd_value *y, float eps)
{
    bd_value *ins[] = { x, gamma, beta };
    bd_attr attrs[] = { { .name = "axis", .type = BD_ATTR_INT, .i = -1 },
                        { .name = "epsilon", .type = BD_ATTR_FLOAT, .f = eps } };
    bd_node probe = { .name = name, .op_type = "LayerNormalization", .domain = "", .inputs = ins,
                      .n_inputs = 3, .outputs = &y, .n_outputs = 1, .attrs = attrs, .n_attrs = 2,
                      .backend = -1, .index = -1 };
    return bd_fuse_accepts(target, g, &probe);
}

/* Replace CHAIN (N nodes, all fusable) with Y = LayerNormalization(X, GAMMA, BETA) named
 * NAME, recorded as COMPOSITE. */
static int rewrite(bd_graph *g, bd_node *const *chain, size_t n, const char *name, bd_value *x,
                   bd_value *gamma, bd_value *beta, bd_value *y, float eps, const char *composite,
                   bd_error *err)
{
    for (size_t k = 0; k < n; k++)
        bd_graph_remove_node(g, chain[k]);
    bd_value *ins[] = { x, gamma, beta };
    bd_node *ln;
    int rc = bd_graph_add_node(g, name, "LayerNormalization", "", ins, 3, &y, 1, &ln, err);
    if (rc == 0)
        rc = bd_node_add_attr(g, ln, &(bd_attr){ .name = "axis", .type = BD_ATTR_INT, .i = -1 }, err);
    if (rc == 0)
        rc = bd_node_add_attr(g, ln, &(bd_attr){ .name = "epsilon", .type = BD_ATTR_FLOAT, .f = eps }, err);
    if (rc == 0)
        rc = bd_graph_toposort(g, err);
    if (rc == 0)
        ln->composite = composite;
    return rc;
}

/* V as the [C] vector LayerNormalization takes: V itself when it is one, a copy of a
 * [1, ..., 1, C] constant (Keras reshapes gamma and beta so, to broadcast), else NULL. */
static bd_value *as_vector(bd_graph *g, bd_value *v, int64_t c, bd_error *err)
{
    if (!v || !v->data || v->dtype != BD_DT_FLOAT || v->shape.rank < 1 ||
        v->shape.dims[v->shape.rank - 1] != c || v->nbytes != (size_t)c * sizeof(float))
        return NULL;
    if (v->shape.rank == 1)
        return v;
    bd_shape vec = { .rank = 1, .dims = { c } };
    void *data = NULL;
    bd_value *out = bd_pass_new_const(g, v->name, "_vector", BD_DT_FLOAT, &vec, sizeof(float), &data, err);
    if (out)
        memcpy(data, v->data, v->nbytes);
    return out;
}

/* Mul(a, b) in either order. */
static bool is_mul_of(const bd_node *n, const bd_value *a, const bd_value *b)
{
    return bd_is_op(n, "Mul") && n->n_inputs == 2 &&
           ((n->inputs[0] == a && n->inputs[1] == b) || (n->inputs[0] == b && n->inputs[1] == a));
}

/* The Keras form (above) from MEAN = ReduceMean(x): 1 when rewritten, 0 when it is not that
 * form, negative on error. */
static int fuse_keras(bd_graph *g, const bd_fuse_target *target, bd_node *mean, bd_error *err)
{
    bd_value *x = mean->inputs[0], *m = mean->outputs[0];
    bd_node *rd[2];
    size_t n;
    /* m feeds x - m and -m */
    if (!bd_consumers(g, m, rd, 2, &n) || n != 2)
        return 0;
    bd_node *sub = bd_is_op(rd[0], "Sub") ? rd[0] : rd[1], *neg = sub == rd[0] ? rd[1] : rd[0];
    if (!bd_is_op(sub, "Sub") || sub->inputs[0] != x || sub->inputs[1] != m || !bd_is_op(neg, "Neg"))
        return 0;
    /* (x - m)^2 as d * d, then its mean, + eps, 1/sqrt */
    bd_value *d = sub->outputs[0];
    if (!bd_consumers(g, d, rd, 1, &n) || n != 1 || !is_mul_of(rd[0], d, d))
        return 0;
    bd_node *sq = rd[0];
    bd_node *var = bd_sole_consumer(g, sq->outputs[0]);
    if (!var || !is_mean_last_axis(var, x->shape.rank))
        return 0;
    float eps;
    bd_node *add = bd_sole_consumer(g, var->outputs[0]);
    if (!bd_is_op(add, "Add") || !bd_const_scalar(bd_other_input(add, var->outputs[0]), &eps))
        return 0;
    bd_node *sqrt_ = bd_sole_consumer(g, add->outputs[0]);
    bd_node *rec = sqrt_ && bd_is_op(sqrt_, "Sqrt") ? bd_sole_consumer(g, sqrt_->outputs[0]) : NULL;
    if (!bd_is_op(rec, "Reciprocal"))
        return 0;
    /* s = r * gamma, read by x * s and -m * s */
    int64_t c = x->shape.rank > 0 ? x->shape.dims[x->shape.rank - 1] : -1;
    bd_node *scale = bd_sole_consumer(g, rec->outputs[0]);
    bd_value *gamma = bd_is_op(scale, "Mul") ? bd_other_input(scale, rec->outputs[0]) : NULL;
    if (c <= 0 || !gamma || !gamma->data || gamma->shape.dims[gamma->shape.rank - 1] != c)
        return 0;
    bd_value *s = scale->outputs[0];
    if (!bd_consumers(g, s, rd, 2, &n) || n != 2)
        return 0;
    bd_node *xs = is_mul_of(rd[0], x, s) ? rd[0] : rd[1], *ms = xs == rd[0] ? rd[1] : rd[0];
    if (!is_mul_of(xs, x, s) || !is_mul_of(ms, neg->outputs[0], s) ||
        bd_sole_consumer(g, neg->outputs[0]) != ms)
        return 0;
    /* + beta, then the sum; or the sum alone when beta was zero and identity_arith dropped
     * its Add (Keras initialises beta to zeros) */
    bd_node *sum = bd_sole_consumer(g, xs->outputs[0]);
    bd_node *badd = bd_sole_consumer(g, ms->outputs[0]);
    bd_value *beta = NULL;
    if (!bd_is_op(sum, "Add"))
        return 0;
    if (badd == sum) {
        badd = NULL;
    } else {
        beta = bd_is_op(badd, "Add") ? bd_other_input(badd, ms->outputs[0]) : NULL;
        if (!beta || !beta->data || beta->shape.dims[beta->shape.rank - 1] != c ||
            bd_sole_consumer(g, badd->outputs[0]) != sum ||
            bd_other_input(sum, xs->outputs[0]) != badd->outputs[0])
            return 0;
    }

    bd_node *chain[] = { mean, sub, sq, var, add, sqrt_, rec, scale, neg, xs, ms, sum, badd };
    size_t n_chain = sizeof chain / sizeof chain[0] - (badd == NULL);
    bd_value *y = sum->outputs[0];
    for (size_t k = 0; k < n_chain; k++)
        if (!bd_fusable(chain[k]))
            return 0;
    bd_error sub_err = {0};
    bd_value *gv = as_vector(g, gamma, c, &sub_err), *bv = NULL;
    if (gv && beta) {
        bv = as_vector(g, beta, c, &sub_err);
    } else if (gv) {
        void *zeros;
        bd_shape vec = { .rank = 1, .dims = { c } };
        bv = bd_pass_new_const(g, mean->name, "_beta", BD_DT_FLOAT, &vec, sizeof(float), &zeros, &sub_err);
    }
    if (!gv || !bv) {
        if (sub_err.code == BD_ENOMEM)
            return bd_error_set(err, BD_ENOMEM, "%s", sub_err.msg);
        return 0;
    }
    gamma = gv;
    beta = bv;
    if (!target_takes(g, target, mean->name, x, gamma, beta, y, eps))
        return 0;
    int rc = rewrite(g, chain, n_chain, mean->name, x, gamma, beta, y, eps,
                     n_chain == sizeof chain / sizeof chain[0]
                         ? "ReduceMean+Sub+Mul+ReduceMean+Add+Sqrt+Reciprocal+Mul+Neg+Mul+Mul+Add+Add"
                         : "ReduceMean+Sub+Mul+ReduceMean+Add+Sqrt+Reciprocal+Mul+Neg+Mul+Mul+Add", err);
    return rc ? rc : 1;
}

int bd_pass_layernorm(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *mean = bd_graph_node(g, i);
        bd_value *x = mean->n_inputs ? mean->inputs[0] : NULL;
        if (!x || !is_mean_last_axis(mean, x->shape.rank))
            continue;
        int keras = fuse_keras(g, target, mean, err);
        if (keras < 0)
            return keras;
        if (keras) {
            rewrites++;
            i = (size_t)-1;
            continue;
        }
        /* x feeds the first mean and the Sub; the mean feeds only the Sub. */
        bd_node *sub = bd_sole_consumer(g, mean->outputs[0]);
        if (!bd_is_op(sub, "Sub") || sub->inputs[0] != x || sub->inputs[1] != mean->outputs[0])
            continue;
        bd_value *d = sub->outputs[0];
        /* d feeds Pow and Div (two readers). */
        bd_node *pow = NULL, *div = NULL;
        size_t readers = 0;
        for (size_t k = 0; k < bd_graph_num_nodes(g); k++) {
            bd_node *n = bd_graph_node(g, k);
            for (size_t q = 0; q < n->n_inputs; q++)
                if (n->inputs[q] == d) {
                    readers++;
                    if (bd_is_op(n, "Pow")) pow = n;
                    if (bd_is_op(n, "Div")) div = n;
                }
        }
        float two, eps;
        if (readers != 2 || d->is_output || !pow || !div || div->inputs[0] != d ||
            !bd_const_scalar(pow->inputs[1], &two) || two != 2.0f)
            continue;
        bd_node *var = bd_sole_consumer(g, pow->outputs[0]);
        if (!var || !is_mean_last_axis(var, x->shape.rank))
            continue;
        bd_node *add = bd_sole_consumer(g, var->outputs[0]);
        if (!bd_is_op(add, "Add") || !bd_const_scalar(bd_other_input(add, var->outputs[0]), &eps))
            continue;
        bd_node *sqrt_ = bd_sole_consumer(g, add->outputs[0]);
        if (!bd_is_op(sqrt_, "Sqrt") || bd_sole_consumer(g, sqrt_->outputs[0]) != div ||
            div->inputs[1] != sqrt_->outputs[0])
            continue;
        bd_node *mul = bd_sole_consumer(g, div->outputs[0]);
        bd_value *gamma = mul && bd_is_op(mul, "Mul") ? bd_other_input(mul, div->outputs[0]) : NULL;
        if (!const_vector(gamma))
            continue;
        bd_node *badd = bd_sole_consumer(g, mul->outputs[0]);
        bd_value *beta = badd && bd_is_op(badd, "Add") ? bd_other_input(badd, mul->outputs[0]) : NULL;
        if (!const_vector(beta))
            continue;

        bd_node *chain[] = { mean, sub, pow, var, add, sqrt_, div, mul, badd };
        bd_value *y = badd->outputs[0];
        bool fusable = true;
        for (size_t k = 0; k < sizeof chain / sizeof chain[0]; k++)
            fusable &= bd_fusable(chain[k]);
        if (!fusable || !target_takes(g, target, mean->name, x, gamma, beta, y, eps))
            continue;
        int rc = rewrite(g, chain, sizeof chain / sizeof chain[0], mean->name, x, gamma, beta, y,
                         eps, "ReduceMean+Sub+Pow+ReduceMean+Add+Sqrt+Div+Mul+Add", err);
        if (rc)
            return rc;
        rewrites++;
        i = (size_t)-1;
    }
    return rewrites;
}
