/* The recurrent layers RNN, GRU and LSTM on float and double, where oneDNN does not take them
 * (weights that are run-time tensors, DOUBLE, layout 1): every direction (forward, reverse,
 * bidirectional), sequence_lens, initial states, biases, LSTM's peepholes and input_forget,
 * GRU's linear_before_reset, clip, and any of ONNX's activation functions with their alpha
 * and beta.
 *
 * Each (direction, batch element) runs its own recurrence, in double, over its own steps:
 * the first sequence_lens[b] of them (last first for the reverse direction); the outputs of
 * the steps past them are 0 and the final states are the last step's, as ONNX's reference
 * computes them. The gate order is ONNX's (LSTM i, o, f, c; GRU z, r, h), clip bounds every
 * activation's input, and activation_alpha / activation_beta are consumed in the order of the
 * activations that take them (a missing one takes the op's default). The pairs split across
 * the plan's threads, each with its own state in the step's scratch. sequence_lens is a
 * request's tensor: a length outside [0, seq_length] is INVALID_ARGUMENT. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { RN_RNN, RN_GRU, RN_LSTM };
enum { AC_SIGMOID, AC_TANH, AC_RELU, AC_AFFINE, AC_LEAKY, AC_THRESHOLDED, AC_SCALED_TANH,
       AC_HARD_SIGMOID, AC_ELU, AC_SOFTSIGN, AC_SOFTPLUS };

typedef struct rn_act {
    int    fn;
    double alpha, beta;
} rn_act;

/* The step's heap: what the attributes say. */
typedef struct rn_model {
    int     kind, dirs, gates, layout;
    bool    reverse, lbr, input_forget;
    double  clip;                   /* 0: none */
    rn_act  act[2][3];              /* per direction: f, g (GRU, LSTM), h (LSTM) */
} rn_model;

static const struct {
    const char *name;
    int         fn, uses;           /* uses: 1 alpha, 2 alpha and beta */
    double      alpha, beta;
} k_acts[] = {
    { "Sigmoid", AC_SIGMOID, 0, 0, 0 },         { "Tanh", AC_TANH, 0, 0, 0 },
    { "Relu", AC_RELU, 0, 0, 0 },               { "Affine", AC_AFFINE, 2, 1, 0 },
    { "LeakyRelu", AC_LEAKY, 1, 0.01, 0 },      { "ThresholdedRelu", AC_THRESHOLDED, 1, 1, 0 },
    { "ScaledTanh", AC_SCALED_TANH, 2, 1, 1 },  { "HardSigmoid", AC_HARD_SIGMOID, 2, 0.2, 0.5 },
    { "Elu", AC_ELU, 1, 1, 0 },                 { "Softsign", AC_SOFTSIGN, 0, 0, 0 },
    { "Softplus", AC_SOFTPLUS, 0, 0, 0 },
};

static int kind_of(const char *op)
{
    return !strcmp(op, "LSTM") ? RN_LSTM : !strcmp(op, "GRU") ? RN_GRU : RN_RNN;
}

/* N's attributes into M; false (and WHY) when one is malformed or not implemented. */
static bool rn_attrs(const bd_node *n, rn_model *m, char *why, size_t len)
{
    memset(m, 0, sizeof *m);
    m->kind = kind_of(n->op_type);
    m->gates = m->kind == RN_LSTM ? 4 : m->kind == RN_GRU ? 3 : 1;
    const char *dir = bd_node_attr_string(n, "direction", "forward");
    m->dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    m->reverse = !strcmp(dir, "reverse");
    m->layout = (int)bd_node_attr_int(n, "layout", 0);
    m->lbr = bd_node_attr_int(n, "linear_before_reset", 0) != 0;
    m->input_forget = bd_node_attr_int(n, "input_forget", 0) != 0;
    m->clip = bd_node_attr(n, "clip") ? bd_node_attr_float(n, "clip", 0) : 0;
    if ((m->dirs == 1 && !m->reverse && strcmp(dir, "forward")) || (m->layout != 0 && m->layout != 1) ||
        (bd_node_attr(n, "clip") && !(m->clip > 0)))
        return nv_why(why, len, "%s: direction '%s', layout %d or clip", n->op_type, dir,
                      m->layout);
    int per = m->kind == RN_LSTM ? 3 : m->kind == RN_GRU ? 2 : 1;
    static const int dflt[3] = { AC_SIGMOID, AC_TANH, AC_TANH };
    const bd_attr *names = bd_node_attr(n, "activations");
    const bd_attr *al = bd_node_attr(n, "activation_alpha"), *be = bd_node_attr(n, "activation_beta");
    size_t ia = 0, ib = 0;
    if (names && (names->type != BD_ATTR_STRINGS || names->n != (size_t)(per * m->dirs)))
        return nv_why(why, len, "%s: activations must name %d functions", n->op_type,
                      per * m->dirs);
    if ((al && al->type != BD_ATTR_FLOATS) || (be && be->type != BD_ATTR_FLOATS))
        return nv_why(why, len, "%s: activation_alpha and activation_beta must be floats",
                      n->op_type);
    for (int d = 0; d < m->dirs; d++)
        for (int k = 0; k < per; k++) {
            const char *name = names ? names->strings[d * per + k] : NULL;
            size_t a = 0, count = sizeof k_acts / sizeof k_acts[0];
            if (!name)
                while (k_acts[a].fn != (m->kind == RN_RNN ? AC_TANH : dflt[k]))
                    a++;
            else
                while (a < count && strcmp(k_acts[a].name, name))
                    a++;
            if (a == count)
                return nv_why(why, len, "%s: activation '%s'", n->op_type, name);
            rn_act *act = &m->act[d][k];
            act->fn = k_acts[a].fn;
            act->alpha = k_acts[a].uses >= 1 && al && ia < al->n ? al->floats[ia++] : k_acts[a].alpha;
            act->beta = k_acts[a].uses >= 2 && be && ib < be->n ? be->floats[ib++] : k_acts[a].beta;
        }
    return true;
}

/* V is absent, or of DTYPE with the RANK dims D. */
static bool shaped(const bd_value *v, int dtype, int rank, const int64_t *d)
{
    if (!v)
        return true;
    bd_shape want = bd_shape_make(rank, d);
    return nv_value_ok(v, NV_DT(dtype)) && bd_shape_equal(&v->shape, &want);
}

static bool rnn_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    rn_model m;
    int kind = kind_of(n->op_type);
    if (n->n_inputs < 3 || n->n_inputs > (kind == RN_LSTM ? 8u : 6u) || !n->inputs[0] ||
        !n->inputs[1] || !n->inputs[2] || n->n_outputs < 1 || n->n_outputs > (kind == RN_LSTM ? 3u : 2u))
        return nv_why(why, len, "%s: expects X, W, R, optional inputs and 1 to %d outputs",
                      n->op_type, kind == RN_LSTM ? 3 : 2);
    if (!rn_attrs(n, &m, why, len))
        return false;
    const bd_value *x = n->inputs[0], *w = n->inputs[1], *r = n->inputs[2];
    if (!nv_value_ok(x, NV_DT_FLOATS) || x->shape.rank != 3)
        return nv_why(why, len, "%s: X must be a float or double [seq, batch, input]", n->op_type);
    int dt = x->dtype, D = m.dirs;
    int64_t T = x->shape.dims[m.layout], B = x->shape.dims[1 - m.layout], I = x->shape.dims[2];
    int64_t H = r->shape.rank == 3 ? r->shape.dims[2] : -1, G = m.gates;
    if (H < 0 || bd_node_attr_int(n, "hidden_size", H) != H)
        return nv_why(why, len, "%s: R's dims and hidden_size disagree", n->op_type);
    int64_t wd[3] = { D, G * H, I }, rd[3] = { D, G * H, H }, bd[2] = { D, 2 * G * H };
    int64_t hd[3] = { m.layout ? B : D, m.layout ? D : B, H }, pd[2] = { D, 3 * H };
    int64_t yd[4] = { m.layout ? B : T, m.layout ? T : D, m.layout ? D : B, H };
    const bd_value *sl = bd_node_input(n, 4);
    if (!shaped(w, dt, 3, wd) || !shaped(r, dt, 3, rd) || !shaped(bd_node_input(n, 3), dt, 2, bd) ||
        !shaped(bd_node_input(n, 5), dt, 3, hd) ||
        (kind == RN_LSTM && (!shaped(bd_node_input(n, 6), dt, 3, hd) ||
                             !shaped(bd_node_input(n, 7), dt, 2, pd))) ||
        (sl && (!nv_value_ok(sl, NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64)) || sl->shape.rank != 1 ||
                sl->shape.dims[0] != B)))
        return nv_why(why, len, "%s: W, R, B, sequence_lens, the initial states or P do not fit "
                      "X, %d direction(s) and hidden size %lld", n->op_type, D, (long long)H);
    if (!shaped(n->outputs[0], dt, 4, yd))
        return nv_why(why, len, "%s: Y must be %s of the layout's shape", n->op_type,
                      bd_dtype_name(dt));
    for (size_t k = 1; k < n->n_outputs; k++)
        if (!shaped(n->outputs[k], dt, 3, hd))
            return nv_why(why, len, "%s: the final states must be %s of the layout's shape",
                          n->op_type, bd_dtype_name(dt));
    return true;
}

/* ---- the recurrence ------------------------------------------------------------------------- */

static double activate(const rn_act *a, double v, double clip)
{
    if (clip > 0)
        v = v < -clip ? -clip : v > clip ? clip : v;
    switch (a->fn) {
    case AC_SIGMOID:      return 1 / (1 + exp(-v));
    case AC_TANH:         return tanh(v);
    case AC_RELU:         return v > 0 ? v : 0;
    case AC_AFFINE:       return a->alpha * v + a->beta;
    case AC_LEAKY:        return v >= 0 ? v : a->alpha * v;
    case AC_THRESHOLDED:  return v > a->alpha ? v : 0;
    case AC_SCALED_TANH:  return a->alpha * tanh(a->beta * v);
    case AC_HARD_SIGMOID: return fmax(0, fmin(1, a->alpha * v + a->beta));
    case AC_ELU:          return v >= 0 ? v : a->alpha * (exp(v) - 1);
    case AC_SOFTSIGN:     return v / (1 + fabs(v));
    default:              return log1p(exp(-fabs(v))) + fmax(v, 0);   /* Softplus */
    }
}

typedef struct rn_job {
    const nv_step   *s;
    const rn_model  *m;
    const nv_tensor *x, *w, *r, *b, *h0, *c0, *p;
    nv_tensor       *y, *yh, *yc;
    const int64_t   *lens;          /* per batch element, checked */
    int64_t          T, B, I, H;
    double          *scratch;       /* per (direction, batch) pair: gates, h, c */
} rn_job;

#define RN_LD(t, i) nv_get_f((t)->data, (t)->dtype, (size_t)(i))

/* Row Q of the gates' matrix W (or R) of direction D times the vector V of length LEN. */
static double row_dot(const nv_tensor *mat, int64_t d, int64_t rows, int64_t q, const double *v,
                      int64_t len)
{
    double acc = 0;
    size_t base = (size_t)((d * rows + q) * len);
    for (int64_t k = 0; k < len; k++)
        acc += RN_LD(mat, base + (size_t)k) * v[k];
    return acc;
}

/* The (direction, batch element) pairs [LO, LO + CNT). */
static void rnn_pairs(void *vjob, size_t lo, size_t cnt)
{
    const rn_job *j = vjob;
    const rn_model *m = j->m;
    int64_t T = j->T, B = j->B, I = j->I, H = j->H, G = m->gates, D = m->dirs;
    for (size_t pr = lo; pr < lo + cnt; pr++) {
        int64_t d = (int64_t)pr / B, b = (int64_t)pr % B, L = j->lens[b];
        const rn_act *act = m->act[d];
        bool back = m->reverse || d == 1;
        double *gates = j->scratch + pr * (size_t)((G + 2) * H + I), *h = gates + G * H;
        double *c = h + H, *xv = c + H;
        size_t state = (size_t)(m->layout ? (b * D + d) * H : (d * B + b) * H);
        for (int64_t k = 0; k < H; k++) {
            h[k] = j->h0 ? RN_LD(j->h0, state + (size_t)k) : 0;
            c[k] = j->c0 ? RN_LD(j->c0, state + (size_t)k) : 0;
        }
        for (int64_t st = 0; st < T; st++) {
            int64_t t = back ? L - 1 - st : st;
            if (st >= L)                       /* past the sequence: zeros, in step order */
                t = st;
            size_t yat = (size_t)(m->layout ? ((b * T + t) * D + d) * H : ((t * D + d) * B + b) * H);
            if (st >= L) {
                for (int64_t k = 0; k < H; k++)
                    nv_set_f(j->y->data, j->y->dtype, yat + (size_t)k, 0);
                continue;
            }
            size_t xat = (size_t)(m->layout ? (b * T + t) * I : (t * B + b) * I);
            for (int64_t k = 0; k < I; k++)
                xv[k] = RN_LD(j->x, xat + (size_t)k);
            for (int64_t q = 0; q < G * H; q++) {  /* W x + Wb (+ R h + Rb but GRU's h gate) */
                double v = row_dot(j->w, d, G * H, q, xv, I);
                if (j->b)
                    v += RN_LD(j->b, (size_t)(d * 2 * G * H + q));
                if (m->kind != RN_GRU || q < 2 * H) {
                    v += row_dot(j->r, d, G * H, q, h, H);
                    if (j->b)
                        v += RN_LD(j->b, (size_t)(d * 2 * G * H + G * H + q));
                }
                gates[q] = v;
            }
            if (m->kind == RN_RNN) {
                for (int64_t k = 0; k < H; k++)
                    h[k] = activate(&act[0], gates[k], m->clip);
            } else if (m->kind == RN_GRU) {
                double *z = gates, *rg = gates + H, *hh = gates + 2 * H;
                for (int64_t k = 0; k < H; k++) {
                    z[k] = activate(&act[0], z[k], m->clip);
                    rg[k] = activate(&act[0], rg[k], m->clip);
                }
                for (int64_t k = 0; k < H; k++) {   /* the h gate: R h after (or before) reset */
                    double rh = 0, rb = j->b ? RN_LD(j->b, (size_t)(d * 2 * G * H + G * H + 2 * H + k)) : 0;
                    size_t base = (size_t)((d * G * H + 2 * H + k) * H);
                    for (int64_t q = 0; q < H; q++)
                        rh += RN_LD(j->r, base + (size_t)q) * (m->lbr ? h[q] : rg[q] * h[q]);
                    hh[k] += m->lbr ? rg[k] * (rh + rb) : rh + rb;
                }
                for (int64_t k = 0; k < H; k++) {
                    double hv = activate(&act[1], hh[k], m->clip);
                    h[k] = (1 - z[k]) * hv + z[k] * h[k];
                }
            } else {
                double *gi = gates, *go = gates + H, *gf = gates + 2 * H, *gc = gates + 3 * H;
                size_t pat = (size_t)(d * 3 * H);
                for (int64_t k = 0; k < H; k++) {
                    double pi = j->p ? RN_LD(j->p, pat + (size_t)k) : 0;
                    double po = j->p ? RN_LD(j->p, pat + (size_t)(H + k)) : 0;
                    double pf = j->p ? RN_LD(j->p, pat + (size_t)(2 * H + k)) : 0;
                    double i = activate(&act[0], gi[k] + pi * c[k], m->clip);
                    double f = m->input_forget ? 1 - i : activate(&act[0], gf[k] + pf * c[k], m->clip);
                    double cc = activate(&act[1], gc[k], m->clip);
                    c[k] = f * c[k] + i * cc;
                    double o = activate(&act[0], go[k] + po * c[k], m->clip);
                    h[k] = o * activate(&act[2], c[k], 0);
                }
            }
            for (int64_t k = 0; k < H; k++)
                nv_set_f(j->y->data, j->y->dtype, yat + (size_t)k, h[k]);
        }
        for (int64_t k = 0; k < H; k++) {
            if (j->yh)
                nv_set_f(j->yh->data, j->yh->dtype, state + (size_t)k, h[k]);
            if (j->yc)
                nv_set_f(j->yc->data, j->yc->dtype, state + (size_t)k, c[k]);
        }
    }
}

static const nv_tensor *present(const nv_step *s, const nv_tensor *t, int k)
{
    return k < s->n_in && s->in[k] >= 0 ? &t[k] : NULL;
}

static int rnn_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    const rn_model *m = s->heap;
    const nv_tensor *x = &in[0];
    rn_job j = { .s = s, .m = m, .x = x, .w = &in[1], .r = &in[2], .b = present(s, in, 3),
                 .h0 = present(s, in, 5), .c0 = present(s, in, 6), .p = present(s, in, 7),
                 .y = &out[0], .yh = s->n_out > 1 ? &out[1] : NULL,
                 .yc = s->n_out > 2 ? &out[2] : NULL, .T = x->dims[m->layout],
                 .B = x->dims[1 - m->layout], .I = x->dims[2], .H = in[2].dims[2] };
    if (m->kind != RN_LSTM)
        j.c0 = j.p = NULL;
    int64_t *lens = nv_scratch(env);
    const nv_tensor *sl = present(s, in, 4);
    for (int64_t b = 0; b < j.B; b++) {
        lens[b] = sl ? nv_get_i(sl->data, sl->dtype, (size_t)b) : j.T;
        if (lens[b] < 0 || lens[b] > j.T)
            return bd_error_set(err, BD_EINVAL, "%s: sequence_lens[%lld] = %lld, expected 0 to "
                                "%lld", s->node->op_type, (long long)b, (long long)lens[b],
                                (long long)j.T);
    }
    j.lens = lens;
    j.scratch = (double *)(lens + (j.B ? j.B : 1));
    size_t pairs = (size_t)(m->dirs * j.B);
    if (pairs && out[0].numel + (j.yh ? j.yh->numel : 0) > 0)
        nv_parallel_for(pairs, (size_t)j.T * pairs * (size_t)(m->gates * j.H * (j.I + j.H)),
                        rnn_pairs, &j);
    return 0;
}

static int rnn_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    rn_model *m = malloc(sizeof *m);
    if (!m)
        return bd_error_set(err, BD_ENOMEM, "out of memory preparing %s", n->op_type);
    rn_attrs(n, m, NULL, 0);
    s->heap = m;
    const bd_shape *x = &n->inputs[0]->shape, *r = &n->inputs[2]->shape;
    size_t B = (size_t)x->dims[1 - m->layout], H = (size_t)r->dims[2], I = (size_t)x->dims[2];
    s->scratch = (B ? B : 1) * sizeof(int64_t) +
                 (size_t)m->dirs * B * ((size_t)(m->gates + 2) * H + I) * sizeof(double);
    s->run = rnn_run;
    return 0;
}

const nv_op nv_rnn_ops[] = {
    { "RNN", rnn_supports, rnn_prepare },
    { "GRU", rnn_supports, rnn_prepare },
    { "LSTM", rnn_supports, rnn_prepare },
};
const size_t nv_rnn_n = sizeof nv_rnn_ops / sizeof nv_rnn_ops[0];
