/* Normalisation and loss cases and references: LayerNormalization (every axis, Scale and B
 * broadcast, the Mean and InvStdDev outputs, DOUBLE), InstanceNormalization,
 * MeanVarianceNormalization, LpNormalization (p 1 and 2, a zero row), LRN, and the losses
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reductions none/sum/mean, weights,
 * ignore_index, INT32 targets, log_prob; a class out of range is an error). The references
 * compute in double, straight from the ONNX definitions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

/* The group of element I: its index with the axes RED marks set to 0, raveled. Groups are
 * numbered in the row-major order of the kept axes, and a group's first element is the one
 * whose index is its key. */
static size_t group_key(const tensor *x, size_t i, const bool *red)
{
    int64_t at[BD_MAX_RANK];
    unravel(i, x->rank, x->dims, at);
    for (int d = 0; d < x->rank; d++)
        if (red[d])
            at[d] = 0;
    return ravel(at, x->rank, x->dims);
}

/* LayerNormalization, InstanceNormalization and MeanVarianceNormalization: each element
 * against the mean and population variance of its group. */
static void ref_norm(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    int r = x->rank, axis = norm_axis(attr_i(c, "axis", -1), r);
    bool layer = !strcmp(c->op, "LayerNormalization"), inst = !strcmp(c->op, "InstanceNormalization");
    bool red[BD_MAX_RANK] = { false };
    if (layer)
        for (int d = axis; d < r; d++)
            red[d] = true;
    else if (inst)
        for (int d = 2; d < r; d++)
            red[d] = true;
    else {
        const attr_spec *a = find_attr(c, "axes");
        int64_t dflt[3] = { 0, 2, 3 };
        for (int k = 0; k < (a ? a->n : 3); k++)
            red[norm_axis(a ? a->ints[k] : dflt[k], r)] = true;
    }
    double eps = attr_f(c, "epsilon", 1e-5f);
    double *sum = calloc(x->n + 1, sizeof *sum), *sq = calloc(x->n + 1, sizeof *sq);
    size_t *cnt = calloc(x->n + 1, sizeof *cnt), stat = 0;
    for (size_t i = 0; i < x->n; i++) {
        size_t k = group_key(x, i, red);
        sum[k] += x->f[i];
        cnt[k]++;
    }
    for (size_t i = 0; i < x->n; i++) {
        size_t k = group_key(x, i, red);
        double d = x->f[i] - sum[k] / (double)cnt[k];
        sq[k] += d * d;
    }
    int64_t at[BD_MAX_RANK];
    for (size_t i = 0; i < x->n; i++) {
        size_t k = group_key(x, i, red);
        double mean = sum[k] / (double)cnt[k], var = sq[k] / (double)cnt[k];
        double v = x->f[i] - mean, y;
        unravel(i, r, x->dims, at);
        if (layer) {
            y = v / sqrt(var + eps) * in[1].f[bcast(&in[1], at, r)];
            if (c->n_in > 2)
                y += in[2].f[bcast(&in[2], at, r)];
            if (k == i && c->out[1].dtype) {   /* the group's first element: its statistics */
                out[1].f[stat] = mean;
                if (c->out[2].dtype)
                    out[2].f[stat] = 1 / sqrt(var + eps);
                stat++;
            }
        } else if (inst) {
            y = v / sqrt(var + eps) * in[1].f[at[1]] + in[2].f[at[1]];
        } else {
            y = v / (sqrt(var) + 1e-9);
        }
        out[0].f[i] = y;
    }
    free(sum);
    free(sq);
    free(cnt);
}

/* LpNormalization: x / ||x||_p along the axis; a zero norm gives 0. */
static void ref_lpnorm(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", -1), in[0].rank);
    int64_t p = attr_i(c, "p", 2);
    size_t outer, len, inner;
    split_axis(in[0].rank, in[0].dims, axis, &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < inner; j++) {
            double s = 0;
            for (size_t k = 0; k < len; k++) {
                double v = in[0].f[(o * len + k) * inner + j];
                s += p == 1 ? fabs(v) : v * v;
            }
            double norm = p == 1 ? s : sqrt(s);
            for (size_t k = 0; k < len; k++) {
                size_t i = (o * len + k) * inner + j;
                out->f[i] = norm == 0 ? 0 : in[0].f[i] / norm;
            }
        }
}

/* LRN: the squares of the channels [c - floor((size-1)/2), c + ceil((size-1)/2)]. */
static void ref_lrn(const op_case *c, const tensor *in, tensor *out)
{
    int64_t size = attr_i(c, "size", 1), C = in[0].dims[1];
    double alpha = attr_f(c, "alpha", 1e-4f), beta = attr_f(c, "beta", 0.75f);
    double bias = attr_f(c, "bias", 1.0f);
    int64_t at[BD_MAX_RANK];
    for (size_t i = 0; i < in[0].n; i++) {
        unravel(i, in[0].rank, in[0].dims, at);
        int64_t ch = at[1];
        double s = 0;
        for (int64_t k = ch - (size - 1) / 2; k <= ch + size / 2; k++) {
            if (k < 0 || k >= C)
                continue;
            at[1] = k;
            double v = in[0].f[ravel(at, in[0].rank, in[0].dims)];
            s += v * v;
        }
        out->f[i] = in[0].f[i] / pow(bias + alpha / (double)size * s, beta);
    }
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (log-softmax over C first). */
static void ref_loss(const op_case *c, const tensor *in, tensor *out)
{
    bool sce = !strcmp(c->op, "SoftmaxCrossEntropyLoss");
    const char *red = attr_s(c, "reduction", "mean");
    const attr_spec *ii = find_attr(c, "ignore_index");
    size_t N = (size_t)in[0].dims[0], C = (size_t)in[0].dims[1];
    size_t D = in[0].n / (N * C);
    double *lp = malloc((in[0].n + 1) * sizeof *lp), sum = 0, wsum = 0;
    for (size_t i = 0; i < in[0].n; i++)
        lp[i] = in[0].f[i];
    if (sce)
        for (size_t n = 0; n < N; n++)
            for (size_t d = 0; d < D; d++) {
                double m = -INFINITY, s = 0;
                for (size_t k = 0; k < C; k++)
                    m = fmax(m, lp[(n * C + k) * D + d]);
                for (size_t k = 0; k < C; k++)
                    s += exp(lp[(n * C + k) * D + d] - m);
                for (size_t k = 0; k < C; k++)
                    lp[(n * C + k) * D + d] -= m + log(s);
            }
    for (size_t n = 0; n < N; n++)
        for (size_t d = 0; d < D; d++) {
            int64_t t = in[1].i[n * D + d];
            double w = 0, l = 0;
            if (!(ii && t == ii->i)) {
                w = c->n_in > 2 ? in[2].f[t] : 1;
                l = -lp[(n * C + (size_t)t) * D + d] * w;
            }
            if (!strcmp(red, "none"))
                out[0].f[n * D + d] = l;
            sum += l;
            wsum += w;
        }
    if (strcmp(red, "none"))
        out[0].f[0] = !strcmp(red, "sum") ? sum : sum / wsum;
    for (size_t i = 0; sce && i < out[1].n; i++)
        out[1].f[i] = lp[i];
    free(lp);
}

/* ---- the cases ------------------------------------------------------------------------------- */

#define k_targets_3x4     V(0, 2, 1, 4, 3, 3, 0, 1, 2, 2, 4, 0)
#define k_targets_ii      V(0, -1, 1, 4, -1, 3, 0, 1, 2, -1, 4, 0)
#define k_targets_bad     V(0, 2, 1, 5, 3, 3)
#define k_lp_zero_row     VF(0, 0, 0, 1, -2, 2, 0.5f, 3, -1, 0, 0, 0)

static const op_case k_cases[] = {
    /* LayerNormalization: oneDNN takes FP32 over the last axis with constant Scale and B;
     * the native engine every axis, DOUBLE, broadcast parameters and the statistics */
    { "layernorm_axis1_stats", "LayerNormalization", NULL, 3, { IN(2, 3, 4, 5), IN(3, 4, 5),
      IN(3, 4, 5) }, { AI("axis", 1) },
      OUTS(O(F32, 2, 3, 4, 5), O(F32, 2, 1, 1, 1), O(F32, 2, 1, 1, 1)), ref_norm },
    { "layernorm_axis0_no_bias", "LayerNormalization", NULL, 2, { IN(3, 4), W(3, 4) },
      { AI("axis", 0), AF("epsilon", 1e-3f) }, OUT(3, 4), ref_norm,
      .known = { "dnnl", "oneDNN's LayerNormalization of a 2-D input normalises its last axis "
                 "whatever the axis (dnnl_norm.c keeps the input's 2-D shape)" } },
    { "layernorm_mid_bcast_scale", "LayerNormalization", NULL, 3, { IN(4, 2, 6), W(1, 6),
      W(6) }, { AI("axis", -2) }, OUTS(O(F32, 4, 2, 6), O(F32, 4, 1, 1)), ref_norm },
    { "layernorm_f64_neg2", "LayerNormalization", NULL, 3, { FED(F64, 3, 5, 7), FED(F64, 5, 1),
      FED(F64, 7) }, { AI("axis", -2) },
      OUTS(O(F64, 3, 5, 7), O(F32, 3, 1, 1), O(F32, 3, 1, 1)), ref_norm },
    { "layernorm_big_parallel", "LayerNormalization", NULL, 3, { IN(64, 1024), IN(1024),
      IN(1024) }, NO_ATTR, OUT(64, 1024), ref_norm, .threads = 2 },
    /* InstanceNormalization */
    { "instancenorm_f32", "InstanceNormalization", NULL, 3, { IN(2, 3, 4, 5), IN(3), IN(3) },
      { AF("epsilon", 1e-2f) }, OUT(2, 3, 4, 5), ref_norm },
    { "instancenorm_f64_1d", "InstanceNormalization", NULL, 3, { FED(F64, 3, 2, 7),
      FED(F64, 2), FED(F64, 2) }, NO_ATTR, OUTT(F64, 3, 2, 7), ref_norm,
      .skip = ORT_NO_KERNEL("InstanceNormalization on DOUBLE") },
    /* MeanVarianceNormalization: default axes [0, 2, 3], and given ones */
    { "mvn_default_axes", "MeanVarianceNormalization", NULL, 1, { IN(3, 2, 4, 5) }, NO_ATTR,
      OUT(3, 2, 4, 5), ref_norm },
    { "mvn_axes_1_f64", "MeanVarianceNormalization", NULL, 1, { FED(F64, 2, 6, 3) },
      { AINTS("axes", 1) }, OUTT(F64, 2, 6, 3), ref_norm,
      .skip = ORT_NO_KERNEL("MeanVarianceNormalization on DOUBLE") },
    /* LpNormalization: p 1 and 2, a middle axis, a zero row */
    { "lpnorm_p2_last", "LpNormalization", NULL, 1, { IN(3, 7) }, NO_ATTR, OUT(3, 7),
      ref_lpnorm },
    { "lpnorm_p1_axis1", "LpNormalization", NULL, 1, { FED(F64, 2, 5, 3) },
      { AI("axis", 1), AI("p", 1) }, OUTT(F64, 2, 5, 3), ref_lpnorm },
    { "lpnorm_zero_row", "LpNormalization", NULL, 1, { FEDF(F32, k_lp_zero_row, 4, 3) },
      { AI("axis", 1) }, OUT(4, 3), ref_lpnorm },
    /* LRN: odd and even sizes */
    { "lrn_size3", "LRN", NULL, 1, { IN(2, 5, 3, 4) },
      { AI("size", 3), AF("alpha", 0.2f), AF("beta", 0.5f), AF("bias", 2) }, OUT(2, 5, 3, 4),
      ref_lrn },
    { "lrn_size4_f64", "LRN", NULL, 1, { FED(F64, 1, 6, 5) }, { AI("size", 4) },
      OUTT(F64, 1, 6, 5), ref_lrn, .skip = ORT_NO_KERNEL("LRN on DOUBLE") },
    /* NegativeLogLikelihoodLoss: the three reductions, weights, ignore_index, INT32 */
    { "nll_mean", "NegativeLogLikelihoodLoss", NULL, 2, { IN(3, 5, 4), FEDV(INT64,
      k_targets_3x4, 3, 4) }, NO_ATTR, OUT0(F32), ref_loss },
    { "nll_none_weight", "NegativeLogLikelihoodLoss", NULL, 3, { IN(3, 5, 4), FEDV(INT64,
      k_targets_3x4, 3, 4), IN(5) }, { AS("reduction", "none") }, OUT(3, 4), ref_loss },
    { "nll_sum_i32_ii", "NegativeLogLikelihoodLoss", NULL, 2, { IN(3, 5, 2, 2), FEDV(INT32,
      k_targets_ii, 3, 2, 2) }, { AS("reduction", "sum"), AI("ignore_index", -1) },
      OUT0(F32), ref_loss },
    { "nll_mean_weight_ii_f64", "NegativeLogLikelihoodLoss", NULL, 3, { FED(F64, 3, 5, 4),
      FEDV(INT64, k_targets_ii, 3, 4), FED(F64, 5) }, { AI("ignore_index", -1) },
      OUT0(F64), ref_loss },
    { "nll_target_out_of_range", "NegativeLogLikelihoodLoss", NULL, 2, { IN(6, 5), FEDV(INT64,
      k_targets_bad, 6) }, NO_ATTR, OUT0(F32), NULL, .expect_error = true },
    /* SoftmaxCrossEntropyLoss: with and without log_prob */
    { "sce_mean_log_prob", "SoftmaxCrossEntropyLoss", NULL, 2, { INR(-3, 3, 3, 5, 4),
      FEDV(INT64, k_targets_3x4, 3, 4) }, NO_ATTR, OUTS(O(F32), O(F32, 3, 5, 4)), ref_loss },
    { "sce_none_weight_ii", "SoftmaxCrossEntropyLoss", NULL, 3, { INR(-3, 3, 3, 5, 4),
      FEDV(INT64, k_targets_ii, 3, 4), IN(5) }, { AS("reduction", "none"),
      AI("ignore_index", -1) }, OUT(3, 4), ref_loss },
    { "sce_sum_f64_i32", "SoftmaxCrossEntropyLoss", NULL, 2, { FEDR(F64, -3, 3, 12, 5),
      FEDV(INT32, k_targets_3x4, 12) }, { AS("reduction", "sum") },
      OUTS(O(F64), O(F64, 12, 5)), ref_loss },
};

const case_table ops_norm_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
