/* Recurrent layers where oneDNN does not take them (fed weights, DOUBLE, layout 1): RNN with a
 * Relu and clip; GRU bidirectional with linear_before_reset, sequence_lens and initial_h, and
 * reversed on DOUBLE in layout 1; LSTM with peepholes and initial states, and bidirectional
 * with input_forget and HardSigmoid / LeakyRelu activations taking alpha and beta; a
 * sequence length beyond the sequence is an error. And LSTMs and GRUs with constant weights as
 * oneDNN's backend takes them: on braid's own recurrence at small batch (dnnl_recurrence.c; a
 * hidden size that is no multiple of 16, five batch rows, bidirectional with initial states
 * and every output; reverse without a bias; the two directions on two threads), and on
 * oneDNN's primitives beyond that batch, for a GRU without linear_before_reset, or where
 * the case turns braid's own off (BRAID_DNNL_LSTM=0, BRAID_DNNL_GRU=0: any CPU). The
 * reference steps each direction over each batch element's own steps, from ONNX's
 * equations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

typedef struct act_ref {
    const char *name;
    double      alpha, beta;
} act_ref;

static double act_apply(const act_ref *a, double v, double clip)
{
    if (clip > 0)
        v = fmax(-clip, fmin(clip, v));
    if (!strcmp(a->name, "Sigmoid"))
        return 1 / (1 + exp(-v));
    if (!strcmp(a->name, "Relu"))
        return v > 0 ? v : 0;
    if (!strcmp(a->name, "HardSigmoid"))
        return fmax(0, fmin(1, a->alpha * v + a->beta));
    if (!strcmp(a->name, "LeakyRelu"))
        return v >= 0 ? v : a->alpha * v;
    return tanh(v);
}

static void ref_rnn(const op_case *c, const tensor *in, tensor *out)
{
    bool lstm = !strcmp(c->op, "LSTM"), gru = !strcmp(c->op, "GRU");
    int G = lstm ? 4 : gru ? 3 : 1, per = lstm ? 3 : gru ? 2 : 1;
    const char *dir = attr_s(c, "direction", "forward");
    int D = !strcmp(dir, "bidirectional") ? 2 : 1, layout = (int)attr_i(c, "layout", 0);
    bool lbr = attr_i(c, "linear_before_reset", 0), coupled = attr_i(c, "input_forget", 0);
    double clip = attr_f(c, "clip", 0);
    const tensor *x = &in[0], *W = &in[1], *R = &in[2];
    bool has_b = c->n_in > 3 && !c->in[3].omitted, has_len = c->n_in > 4 && !c->in[4].omitted;
    bool has_h0 = c->n_in > 5 && !c->in[5].omitted, has_c0 = lstm && c->n_in > 6 && !c->in[6].omitted;
    bool has_p = lstm && c->n_in > 7 && !c->in[7].omitted;
    int64_t T = x->dims[layout], B = x->dims[1 - layout], I = x->dims[2], H = R->dims[2];
    const attr_spec *names = find_attr(c, "activations"), *al = find_attr(c, "activation_alpha");
    const attr_spec *be = find_attr(c, "activation_beta");
    act_ref act[2][3];
    int ia = 0, ib = 0;
    for (int d = 0; d < D; d++)
        for (int k = 0; k < per; k++) {
            const char *nm = names ? names->strs[d * per + k] : (!lstm && !gru) || k ? "Tanh" : "Sigmoid";
            bool a1 = !strcmp(nm, "HardSigmoid") || !strcmp(nm, "LeakyRelu");
            bool b1 = !strcmp(nm, "HardSigmoid");
            act[d][k] = (act_ref){ nm, a1 && al && ia < al->n ? al->floats[ia++]
                                       : !strcmp(nm, "LeakyRelu") ? 0.01 : 0.2,
                                   b1 && be && ib < be->n ? be->floats[ib++] : 0.5 };
        }
    double h[128], cst[128], gt[512];   /* H <= 128 */
    for (int d = 0; d < D; d++)
        for (int64_t b = 0; b < B; b++) {
            int64_t L = has_len ? in[4].i[b] : T;
            bool back = d == 1 || !strcmp(dir, "reverse");
            size_t st = (size_t)(layout ? (b * D + d) * H : (d * B + b) * H);
            for (int64_t k = 0; k < H; k++) {
                h[k] = has_h0 ? in[5].f[st + k] : 0;
                cst[k] = has_c0 ? in[6].f[st + k] : 0;
            }
            for (int64_t t = 0; t < T; t++) {   /* zeros past the sequence */
                size_t y = (size_t)(layout ? ((b * T + t) * D + d) * H : ((t * D + d) * B + b) * H);
                for (int64_t k = 0; k < H; k++)
                    out[0].f[y + k] = 0;
            }
            for (int64_t s = 0; s < L; s++) {
                int64_t t = back ? L - 1 - s : s;
                const double *xv = x->f + (layout ? (b * T + t) * I : (t * B + b) * I);
                for (int64_t q = 0; q < G * H; q++) {
                    double v = 0;
                    for (int64_t i = 0; i < I; i++)
                        v += W->f[(d * G * H + q) * I + i] * xv[i];
                    if (has_b)
                        v += in[3].f[d * 2 * G * H + q];
                    if (!gru || q < 2 * H) {
                        for (int64_t i = 0; i < H; i++)
                            v += R->f[(d * G * H + q) * H + i] * h[i];
                        if (has_b)
                            v += in[3].f[d * 2 * G * H + G * H + q];
                    }
                    gt[q] = v;
                }
                double nh[128];
                for (int64_t k = 0; k < H; k++) {
                    if (!lstm && !gru) {
                        nh[k] = act_apply(&act[d][0], gt[k], clip);
                    } else if (gru) {
                        double z = act_apply(&act[d][0], gt[k], clip), rh = 0;
                        double rb = has_b ? in[3].f[d * 2 * G * H + G * H + 2 * H + k] : 0;
                        for (int64_t i = 0; i < H; i++) {
                            double r_i = act_apply(&act[d][0], gt[H + i], clip);
                            rh += R->f[(d * G * H + 2 * H + k) * H + i] * (lbr ? h[i] : r_i * h[i]);
                        }
                        double r_k = act_apply(&act[d][0], gt[H + k], clip);
                        double hh = act_apply(&act[d][1], gt[2 * H + k] + (lbr ? r_k * (rh + rb) : rh + rb), clip);
                        nh[k] = (1 - z) * hh + z * h[k];
                    } else {
                        const double *p = has_p ? in[7].f + d * 3 * H : NULL;
                        double i_g = act_apply(&act[d][0], gt[k] + (p ? p[k] * cst[k] : 0), clip);
                        double f_g = coupled ? 1 - i_g
                                   : act_apply(&act[d][0], gt[2 * H + k] + (p ? p[2 * H + k] * cst[k] : 0), clip);
                        double c_new = f_g * cst[k] + i_g * act_apply(&act[d][1], gt[3 * H + k], clip);
                        double o_g = act_apply(&act[d][0], gt[H + k] + (p ? p[H + k] * c_new : 0), clip);
                        cst[k] = c_new;
                        nh[k] = o_g * act_apply(&act[d][2], c_new, 0);
                    }
                }
                size_t y = (size_t)(layout ? ((b * T + t) * D + d) * H : ((t * D + d) * B + b) * H);
                for (int64_t k = 0; k < H; k++) {
                    h[k] = nh[k];
                    out[0].f[y + k] = h[k];
                }
            }
            for (int64_t k = 0; k < H; k++) {
                if (c->out[1].dtype)
                    out[1].f[st + k] = h[k];
                if (c->out[2].dtype)
                    out[2].f[st + k] = cst[k];
            }
        }
}

static const op_case k_cases[] = {
    { "rnn_fed_weights_relu_clip", "RNN", NULL, 4, { IN(5, 2, 3), IN(1, 4, 3), IN(1, 4, 4),
      IN(1, 8) }, { AI("hidden_size", 4), ASTRS("activations", "Relu"), AF("clip", 0.6f) },
      OUTS(O(F32, 5, 1, 2, 4), O(F32, 1, 2, 4)), ref_rnn },
    { "gru_bidirectional_lbr_seq_lens", "GRU", NULL, 6, { IN(5, 2, 3), IN(2, 9, 3),
      IN(2, 9, 3), IN(2, 18), FEDV(INT32, V(3, 5), 2), IN(2, 2, 3) },
      { AS("direction", "bidirectional"), AI("linear_before_reset", 1), AI("hidden_size", 3) },
      OUTS(O(F32, 5, 2, 2, 3), O(F32, 2, 2, 3)), ref_rnn },
    { "gru_reverse_f64_layout1", "GRU", NULL, 3, { FED(F64, 2, 4, 3), FED(F64, 1, 6, 3),
      FED(F64, 1, 6, 2) }, { AS("direction", "reverse"), AI("layout", 1), AI("hidden_size", 2) },
      OUTS(O(F64, 2, 4, 1, 2), O(F64, 2, 1, 2)), ref_rnn,
      .skip = { "ort", "ONNX Runtime runs neither DOUBLE nor layout 1 recurrences" } },
    { "lstm_peepholes_initial_states", "LSTM", NULL, 8, { IN(4, 2, 3), IN(1, 8, 3),
      IN(1, 8, 2), IN(1, 16), OMIT, IN(1, 2, 2), IN(1, 2, 2), IN(1, 6) }, { AI("hidden_size", 2) },
      OUTS(O(F32, 4, 1, 2, 2), O(F32, 1, 2, 2), O(F32, 1, 2, 2)), ref_rnn },
    { "lstm_bidirectional_coupled_activations", "LSTM", NULL, 5, { IN(3, 2, 2), IN(2, 12, 2),
      IN(2, 12, 3), IN(2, 24), FEDV(INT32, V(2, 3), 2) },
      { AS("direction", "bidirectional"), AI("input_forget", 1), AI("hidden_size", 3),
        ASTRS("activations", "HardSigmoid", "Tanh", "Tanh", "Sigmoid", "LeakyRelu", "Tanh"),
        AFLOATS("activation_alpha", 0.3f, 0.05f), AFLOATS("activation_beta", 0.4f) },
      OUTS(O(F32, 3, 2, 2, 3), O(F32, 2, 2, 3), O(F32, 2, 2, 3)), ref_rnn },
    { "lstm_const_bidirectional_batch5_states", "LSTM", NULL, 7, { IN(6, 5, 7), W(2, 80, 7),
      W(2, 80, 20), W(2, 160), OMIT, IN(2, 5, 20), IN(2, 5, 20) },
      { AS("direction", "bidirectional"), AI("hidden_size", 20) },
      OUTS(O(F32, 6, 2, 5, 20), O(F32, 2, 5, 20), O(F32, 2, 5, 20)), ref_rnn },
    { "lstm_const_reverse_no_bias", "LSTM", NULL, 3, { IN(5, 2, 3), W(1, 12, 3), W(1, 12, 3) },
      { AS("direction", "reverse"), AI("hidden_size", 3) },
      OUTS(O(F32, 5, 1, 2, 3), O(F32, 1, 2, 3)), ref_rnn },
    { "lstm_const_bidirectional_two_threads", "LSTM", NULL, 4, { IN(3, 2, 16), W(2, 512, 16),
      W(2, 512, 128), W(2, 1024) }, { AS("direction", "bidirectional"), AI("hidden_size", 128) },
      OUTS(O(F32, 3, 2, 2, 128), O(F32, 2, 2, 128), O(F32, 2, 2, 128)), ref_rnn, .threads = 2 },
    { "gru_const_lbr_bidirectional_batch5_state", "GRU", NULL, 6, { IN(4, 5, 7), W(2, 60, 7),
      W(2, 60, 20), W(2, 120), OMIT, IN(2, 5, 20) },
      { AS("direction", "bidirectional"), AI("linear_before_reset", 1), AI("hidden_size", 20) },
      OUTS(O(F32, 4, 2, 5, 20), O(F32, 2, 5, 20)), ref_rnn },
    { "gru_const_lbr_reverse_no_bias", "GRU", NULL, 3, { IN(5, 2, 3), W(1, 9, 3), W(1, 9, 3) },
      { AS("direction", "reverse"), AI("linear_before_reset", 1), AI("hidden_size", 3) },
      OUTS(O(F32, 5, 1, 2, 3), O(F32, 1, 2, 3)), ref_rnn },
    { "gru_const_lbr_bidirectional_two_threads", "GRU", NULL, 4, { IN(3, 2, 16), W(2, 384, 16),
      W(2, 384, 128), W(2, 768) },
      { AS("direction", "bidirectional"), AI("linear_before_reset", 1), AI("hidden_size", 128) },
      OUTS(O(F32, 3, 2, 2, 128), O(F32, 2, 2, 128)), ref_rnn, .threads = 2 },
    { "gru_const_without_lbr", "GRU", NULL, 4, { IN(3, 2, 4), W(1, 24, 4), W(1, 24, 8),
      W(1, 48) }, { AI("hidden_size", 8) }, OUTS(O(F32, 3, 1, 2, 8), O(F32, 1, 2, 8)), ref_rnn },
    { "lstm_const_batch_beyond_braids_own", "LSTM", NULL, 4, { IN(3, 9, 4), W(1, 32, 4),
      W(1, 32, 8), W(1, 64) }, { AI("hidden_size", 8) }, OUTS(O(F32, 3, 1, 9, 8)), ref_rnn },
    /* oneDNN's LSTM and GRU primitives on any CPU (braid's own recurrence off), without a
     * bias: an LSTM's states come in pairs there (only Y_h wanted, only initial_h or only
     * initial_c given), reverse and bidirectional */
    { "lstm_primitive_reverse_no_bias_y_h", "LSTM", NULL, 3, { IN(5, 2, 3), W(1, 12, 3),
      W(1, 12, 3) }, { AS("direction", "reverse"), AI("hidden_size", 3) },
      OUTS(O(F32, 5, 1, 2, 3), O(F32, 1, 2, 3)), ref_rnn, .env = "BRAID_DNNL_LSTM=0" },
    { "lstm_primitive_bidirectional_no_bias_initial_h", "LSTM", NULL, 6, { IN(4, 3, 5),
      W(2, 16, 5), W(2, 16, 4), OMIT, OMIT, IN(2, 3, 4) },
      { AS("direction", "bidirectional"), AI("hidden_size", 4) },
      OUTS(O(F32, 4, 2, 3, 4), O(F32, 2, 3, 4)), ref_rnn, .env = "BRAID_DNNL_LSTM=0" },
    { "lstm_primitive_forward_no_bias_initial_c", "LSTM", NULL, 7, { IN(3, 2, 3), W(1, 12, 3),
      W(1, 12, 3), OMIT, OMIT, OMIT, IN(1, 2, 3) }, { AI("hidden_size", 3) },
      OUTS(O(F32, 3, 1, 2, 3), O(F32, 1, 2, 3), O(F32, 1, 2, 3)), ref_rnn,
      .env = "BRAID_DNNL_LSTM=0" },
    { "gru_primitive_lbr_bidirectional_no_bias", "GRU", NULL, 3, { IN(5, 2, 3), W(2, 9, 3),
      W(2, 9, 3) }, { AS("direction", "bidirectional"), AI("linear_before_reset", 1), AI("hidden_size", 3) },
      OUTS(O(F32, 5, 2, 2, 3), O(F32, 2, 2, 3)), ref_rnn, .env = "BRAID_DNNL_GRU=0" },
    { "gru_primitive_reverse_no_bias", "GRU", NULL, 3, { IN(5, 2, 3), W(1, 9, 3), W(1, 9, 3) },
      { AS("direction", "reverse"), AI("hidden_size", 3) },
      OUTS(O(F32, 5, 1, 2, 3), O(F32, 1, 2, 3)), ref_rnn, .env = "BRAID_DNNL_GRU=0" },
    { "lstm_seq_len_beyond_sequence", "LSTM", NULL, 5, { IN(3, 2, 2), IN(1, 8, 2),
      IN(1, 8, 2), OMIT, FEDV(INT32, V(2, 4), 2) }, { AI("hidden_size", 2) }, OUT(3, 1, 2, 2),
      NULL,
      .expect_error = true },
};

const case_table ops_rnn_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
