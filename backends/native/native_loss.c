/* The losses, on float and double: NegativeLogLikelihoodLoss(input, target, weight) and
 * SoftmaxCrossEntropyLoss(scores, labels, weights) -> (loss, log_prob).
 *
 * The input is [N, C, d1...], the target [N, d1...] (INT32 or INT64), the optional weight
 * [C]. Each element of the target picks a class: loss = -input[n, t, d] * weight[t] (weight 1
 * without weights), 0 where t is ignore_index (which then weighs 0). SoftmaxCrossEntropyLoss
 * reads the log-softmax of the scores over C instead of the input (its log_prob output, when
 * asked for). Reduction 'none' keeps the target's shape; 'sum' adds the losses; 'mean'
 * divides that sum by the sum of the weights (the count of elements not ignored, unweighted;
 * 0 / 0 is NaN, as ONNX's reference gives). Sums run in double.
 *
 * A class index outside [0, C) that is not ignore_index is INVALID_ARGUMENT: the target is a
 * request's tensor. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { LOSS_NONE, LOSS_SUM, LOSS_MEAN };
enum { LS_NLL, LS_SCE };

/* Parameters: ip[0] 1 when ignore_index is set, ip[1] its value, ip[2] the reduction. */
enum { LP_HAS_II = 0, LP_II = 1, LP_RED = 2 };

static int reduction_of(const bd_node *n)
{
    const char *r = bd_node_attr_string(n, "reduction", "mean");
    return !strcmp(r, "none") ? LOSS_NONE : !strcmp(r, "sum") ? LOSS_SUM
         : !strcmp(r, "mean") ? LOSS_MEAN : -1;
}

static bool loss_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool sce = !strcmp(n->op_type, "SoftmaxCrossEntropyLoss");
    if (n->n_inputs < 2 || n->n_inputs > 3 || !n->inputs[0] || !n->inputs[1] ||
        n->n_outputs < 1 || n->n_outputs > (sce ? 2u : 1u))
        return nv_why(why, len, "%s: expects input, target, optional weight and %s", n->op_type,
                      sce ? "loss, optional log_prob" : "one output");
    const bd_value *x = n->inputs[0], *t = n->inputs[1], *w = bd_node_input(n, 2);
    if (!nv_value_ok(x, NV_DT_FLOATS) || !nv_value_ok(t, NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64)))
        return nv_why(why, len, "%s: a float or double input and an INT32 or INT64 target, "
                      "of static shapes", n->op_type);
    for (size_t k = 0; k < n->n_outputs; k++)
        if (!nv_value_ok(n->outputs[k], NV_DT(x->dtype)))
            return nv_why(why, len, "%s: output %zu must be %s of a static shape", n->op_type, k,
                          bd_dtype_name(x->dtype));
    int red = reduction_of(n);
    if (red < 0)
        return nv_why(why, len, "%s: reduction '%s'", n->op_type,
                      bd_node_attr_string(n, "reduction", ""));
    const bd_shape *xs = &x->shape, *ts = &t->shape;
    if (xs->rank < 2 || ts->rank != xs->rank - 1 || ts->dims[0] != xs->dims[0])
        return nv_why(why, len, "%s: the target must be the input's shape without C", n->op_type);
    for (int d = 2; d < xs->rank; d++)
        if (ts->dims[d - 1] != xs->dims[d])
            return nv_why(why, len, "%s: the target must be the input's shape without C",
                          n->op_type);
    if (w && (!nv_value_ok(w, NV_DT(x->dtype)) || w->shape.rank != 1 ||
              w->shape.dims[0] != xs->dims[1]))
        return nv_why(why, len, "%s: the weight must be %s [C]", n->op_type,
                      bd_dtype_name(x->dtype));
    bd_shape scalar = bd_shape_make(0, NULL);
    if (!bd_shape_equal(&n->outputs[0]->shape, red == LOSS_NONE ? ts : &scalar))
        return nv_why(why, len, "%s: the loss must be %s", n->op_type,
                      red == LOSS_NONE ? "of the target's shape" : "a scalar");
    if (n->n_outputs > 1 && !bd_shape_equal(&n->outputs[1]->shape, xs))
        return nv_why(why, len, "%s: log_prob must be of the scores' shape", n->op_type);
    return true;
}

/* The target's class at I: the value, or -1 for ignored; BD_EINVAL out of [0, C). */
static int target_at(const nv_step *s, const nv_tensor *t, size_t i, int64_t c, int64_t *out,
                     bd_error *err)
{
    int64_t v = nv_get_i(t->data, t->dtype, i);
    if (s->ip[LP_HAS_II] && v == s->ip[LP_II]) {
        *out = -1;
        return 0;
    }
    if (v < 0 || v >= c)
        return bd_error_set(err, BD_EINVAL, "target %lld at %zu is outside the %lld classes%s",
                            (long long)v, i, (long long)c,
                            s->ip[LP_HAS_II] ? " and not ignore_index" : "");
    *out = v;
    return 0;
}

/* SoftmaxCrossEntropyLoss: the maximum and log of the sum of exp over C of column (o, d) of
 * X [N, C, D] into *M and *LSE; the column's log-probabilities into LOGP when asked for. */
static void log_softmax_col(const nv_tensor *x, size_t o, size_t d, size_t c, size_t dn,
                            double *m, double *lse, void *logp)
{
    size_t base = o * c * dn + d;
    double mx = -INFINITY, sum = 0;
    for (size_t k = 0; k < c; k++) {
        double v = nv_get_f(x->data, x->dtype, base + k * dn);
        mx = v > mx || v != v ? v : mx;
    }
    double shift = isfinite(mx) ? mx : 0;
    for (size_t k = 0; k < c; k++)
        sum += exp(nv_get_f(x->data, x->dtype, base + k * dn) - shift);
    *m = shift;
    *lse = log(sum);
    for (size_t k = 0; logp && k < c; k++)
        nv_set_f(logp, x->dtype, base + k * dn,
                 nv_get_f(x->data, x->dtype, base + k * dn) - shift - *lse);
}

static int loss_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    const nv_tensor *x = &in[0], *t = &in[1];
    const nv_tensor *w = s->n_in > 2 && s->in[2] >= 0 ? &in[2] : NULL;
    int red = (int)s->ip[LP_RED];
    bool sce = s->op == LS_SCE;
    void *logp = sce && s->n_out > 1 ? out[1].data : NULL;
    size_t n = (size_t)x->dims[0], c = (size_t)x->dims[1], dn = 1;
    for (int d = 2; d < x->rank; d++)
        dn *= (size_t)x->dims[d];
    double sum = 0, wsum = 0;
    for (size_t o = 0; o < n; o++)
        for (size_t d = 0; d < dn; d++) {
            int64_t k = -1;
            int rc = target_at(s, t, o * dn + d, (int64_t)c, &k, err);
            if (rc)
                return rc;
            double m = 0, lse = 0;
            if (sce)
                log_softmax_col(x, o, d, c, dn, &m, &lse, logp);
            double loss = 0, wk = 0;
            if (k >= 0) {
                double v = nv_get_f(x->data, x->dtype, (o * c + (size_t)k) * dn + d);
                wk = w ? nv_get_f(w->data, w->dtype, (size_t)k) : 1;
                loss = -(sce ? v - m - lse : v) * wk;
            }
            if (red == LOSS_NONE)
                nv_set_f(out[0].data, out[0].dtype, o * dn + d, loss);
            sum += loss;
            wsum += wk;
        }
    if (red != LOSS_NONE)
        nv_set_f(out[0].data, out[0].dtype, 0, red == LOSS_SUM ? sum : sum / wsum);
    return 0;
}

static int loss_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(n->op_type, "SoftmaxCrossEntropyLoss") ? LS_SCE : LS_NLL;
    s->ip[LP_HAS_II] = bd_node_attr(n, "ignore_index") != NULL;
    s->ip[LP_II] = bd_node_attr_int(n, "ignore_index", 0);
    s->ip[LP_RED] = reduction_of(n);
    s->run = loss_run;
    return 0;
}

const nv_op nv_loss_ops[] = {
    { "NegativeLogLikelihoodLoss", loss_supports, loss_prepare },
    { "SoftmaxCrossEntropyLoss", loss_supports, loss_prepare },
};
const size_t nv_loss_n = sizeof nv_loss_ops / sizeof nv_loss_ops[0];
