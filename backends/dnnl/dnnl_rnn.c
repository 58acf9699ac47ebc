/* LSTM, GRU and RNN (ONNX layout 0) as oneDNN's RNN primitives: vanilla LSTM, GRU (or the
 * linear-before-reset GRU PyTorch exports), and the vanilla RNN cell, one layer, forward,
 * reverse or bidirectional.
 *
 * ONNX and oneDNN order the gates differently and lay the weights out differently, so the
 * weights and biases are rewritten once at compile into oneDNN's plain layouts (ldigo, ldgo)
 * and then reordered into the primitive's own like every constant:
 *   LSTM  ONNX i, o, f, c  ->  oneDNN i, f, c, o
 *   GRU   ONNX z, r, h     ->  oneDNN u, r, o (the same order)
 *   bias  ONNX Wb and Rb   ->  their sum per gate (the lbr GRU keeps Rb of its output gate
 *                              as a fourth "gate")
 * Y [T, D, N, H] is oneDNN's dst_layer [T, N, D*H] seen through a strided view (the same
 * bytes when D = 1); Y_h and Y_c [D, N, H] are dst_iter(_c) [1, D, N, H], which oneDNN
 * takes for an LSTM only in pairs, like src_iter(_c) (rnn_mds). Not mapped (the
 * fallback takes them): sequence_lens, peepholes, clip, input_forget, non-default
 * activations (RNN: Tanh, Relu or Sigmoid), layout = 1. An LSTM, or a linear-before-reset
 * GRU, at small batch on a CPU with AVX-512 runs on braid's own recurrence instead
 * (dnnl_recurrence.c). */
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "backends/dnnl/dnnl_backend.h"
#include "backends/dnnl/dnnl_internal.h"

typedef enum rnn_kind { RNN_LSTM, RNN_GRU, RNN_VANILLA } rnn_kind;

typedef struct rnn_geom {
    rnn_kind kind;
    bool     lbr;            /* GRU with linear_before_reset = 1 */
    int64_t  t, n, i, h, d;  /* steps, batch, input size, hidden size, directions */
    int      gates;          /* 4, 3, 1 */
    dnnl_rnn_direction_t dir;
    dnnl_alg_kind_t act;     /* vanilla RNN's activation */
} rnn_geom;

static bool activations_ok(const bd_node *n, rnn_geom *g)
{
    const bd_attr *a = bd_node_attr(n, "activations");
    if (g->kind == RNN_VANILLA)
        g->act = dnnl_eltwise_tanh;
    if (!a)
        return true;
    if (a->type != BD_ATTR_STRINGS || a->n == 0)
        return false;
    static const char *const lstm[] = { "Sigmoid", "Tanh", "Tanh" }, *const gru[] = { "Sigmoid", "Tanh" };
    size_t per = g->kind == RNN_LSTM ? 3 : g->kind == RNN_GRU ? 2 : 1;
    if (a->n != per * (size_t)g->d)
        return false;
    for (size_t k = 0; k < a->n; k++) {
        const char *s = a->strings[k];
        if (g->kind == RNN_VANILLA) {
            dnnl_alg_kind_t alg = !strcmp(s, "Tanh") ? dnnl_eltwise_tanh : !strcmp(s, "Relu") ? dnnl_eltwise_relu
                                : !strcmp(s, "Sigmoid") ? dnnl_eltwise_logistic : dnnl_alg_kind_undef;
            if (alg == dnnl_alg_kind_undef || (k > 0 && alg != g->act))
                return false;
            g->act = alg;
        } else if (strcmp(s, (g->kind == RNN_LSTM ? lstm : gru)[k % per])) {
            return false;
        }
    }
    return true;
}

/* The geometry of N, or false with WHY. */
static bool geom_of(const bd_node *n, rnn_geom *g, char *why, size_t len)
{
    memset(g, 0, sizeof *g);
    g->kind = !strcmp(n->op_type, "LSTM") ? RNN_LSTM : !strcmp(n->op_type, "GRU") ? RNN_GRU : RNN_VANILLA;
    g->gates = g->kind == RNN_LSTM ? 4 : g->kind == RNN_GRU ? 3 : 1;
    const bd_value *x = dn_op_input(n, 0), *w = dn_op_input(n, 1), *r = dn_op_input(n, 2);
    if (!x || !w || !r || !dn_is_f32_static(x) || x->shape.rank != 3)
        return dn_why(why, len, "%s: X must be FP32 [T, N, I] with a static shape", n->op_type);
    if (!w->data || !r->data || !dn_is_f32_static(w) || !dn_is_f32_static(r) || w->shape.rank != 3 ||
        r->shape.rank != 3)
        return dn_why(why, len, "%s: W and R must be constant FP32", n->op_type);
    if (bd_node_attr_int(n, "layout", 0) != 0)
        return dn_why(why, len, "%s: layout = 1 is not supported by oneDNN's mapping", n->op_type);
    if (bd_node_attr(n, "clip") || bd_node_attr_int(n, "input_forget", 0))
        return dn_why(why, len, "%s: clip and input_forget are not supported", n->op_type);
    const char *dir = bd_node_attr_string(n, "direction", "forward");
    g->d = !strcmp(dir, "bidirectional") ? 2 : 1;
    if (g->d == 1 && strcmp(dir, "reverse") && strcmp(dir, "forward"))
        return dn_why(why, len, "%s: direction '%s' unknown", n->op_type, dir);
    g->dir = g->d == 2 ? dnnl_bidirectional_concat
           : !strcmp(dir, "reverse") ? dnnl_unidirectional_right2left : dnnl_unidirectional_left2right;
    g->t = x->shape.dims[0];
    g->n = x->shape.dims[1];
    g->i = x->shape.dims[2];
    g->h = bd_node_attr_int(n, "hidden_size", r->shape.dims[2]);
    g->lbr = g->kind == RNN_GRU && bd_node_attr_int(n, "linear_before_reset", 0);
    int64_t gh = g->gates * g->h;
    if (g->h <= 0 || w->shape.dims[0] != g->d || w->shape.dims[1] != gh || w->shape.dims[2] != g->i ||
        r->shape.dims[0] != g->d || r->shape.dims[1] != gh || r->shape.dims[2] != g->h)
        return dn_why(why, len, "%s: W/R shapes do not fit X, hidden_size and direction", n->op_type);
    if (!activations_ok(n, g))
        return dn_why(why, len, "%s: only the default activations are supported", n->op_type);
    const bd_value *b = dn_op_input(n, 3), *seq = dn_op_input(n, 4), *p = dn_op_input(n, 7);
    if (b && (!b->data || !dn_is_f32_static(b) || bd_shape_numel(&b->shape) != g->d * 2 * gh))
        return dn_why(why, len, "%s: B must be a constant FP32 [D, %lld]", n->op_type, (long long)(2 * gh));
    if (seq)
        return dn_why(why, len, "%s: sequence_lens is not supported by oneDNN's mapping", n->op_type);
    if (g->kind == RNN_LSTM && p)
        return dn_why(why, len, "LSTM: peepholes are not supported by oneDNN's mapping");
    for (size_t k = 5; k < 7 && (size_t)k < dn_num_op_inputs(n); k++) {    /* initial_h, initial_c */
        const bd_value *s = dn_op_input(n, k);
        if (s && (!dn_is_f32_static(s) || bd_shape_numel(&s->shape) != g->d * g->n * g->h))
            return dn_why(why, len, "%s: initial states must be FP32 [D, N, H]", n->op_type);
        if (k == 6 && s && g->kind != RNN_LSTM)
            return dn_why(why, len, "%s takes no initial_c", n->op_type);
    }
    for (size_t k = 0; k < n->n_outputs; k++)
        if (!dn_is_f32_static(n->outputs[k]))
            return dn_why(why, len, "%s: output %zu is not FP32 with a static shape", n->op_type, k);
    return true;
}

/* The primitive's memory descs: X tnc, states ldnc, weights any (layer, iter), bias ldgo,
 * Y tnc; and which of the optional states the descriptor carries. oneDNN 2.6 takes an LSTM's
 * states in pairs (src_iter with src_iter_c, dst_iter with dst_iter_c: one alone is
 * invalid_arguments), so an LSTM with only initial_h or only initial_c carries both (the
 * missing one zeros) and one with only Y_h (or Y_c) writes both (the other to scratch). */
typedef struct rnn_mds {
    dnnl_dims_t        xd, sd, wl, wi, bd, yd;
    dnnl_memory_desc_t x, s, wl_any, wi_any, b, y;
    bool               src_iter, src_iter_c, dst_iter, dst_iter_c;
} rnn_mds;

/* Fill M and DESC for N of geometry G; returns oneDNN's status of the descriptor's init. */
static dnnl_status_t rnn_desc_init(const bd_node *n, const rnn_geom *g, rnn_mds *m, dnnl_rnn_desc_t *desc)
{
    int gates_b = g->gates + (g->lbr ? 1 : 0);
    bool lstm = g->kind == RNN_LSTM;
    memset(m, 0, sizeof *m);
    m->xd[0] = g->t, m->xd[1] = g->n, m->xd[2] = g->i;
    m->sd[0] = 1, m->sd[1] = g->d, m->sd[2] = g->n, m->sd[3] = g->h;
    m->wl[0] = 1, m->wl[1] = g->d, m->wl[2] = g->i, m->wl[3] = g->gates, m->wl[4] = g->h;
    m->wi[0] = 1, m->wi[1] = g->d, m->wi[2] = g->h, m->wi[3] = g->gates, m->wi[4] = g->h;
    m->bd[0] = 1, m->bd[1] = g->d, m->bd[2] = gates_b, m->bd[3] = g->h;
    m->yd[0] = g->t, m->yd[1] = g->n, m->yd[2] = g->d * g->h;
    dnnl_status_t st;
    if ((st = dnnl_memory_desc_init_by_tag(&m->x, 3, m->xd, dnnl_f32, dnnl_tnc)) ||
        (st = dnnl_memory_desc_init_by_tag(&m->s, 4, m->sd, dnnl_f32, dnnl_ldnc)) ||
        (st = dnnl_memory_desc_init_by_tag(&m->wl_any, 5, m->wl, dnnl_f32, dnnl_format_tag_any)) ||
        (st = dnnl_memory_desc_init_by_tag(&m->wi_any, 5, m->wi, dnnl_f32, dnnl_format_tag_any)) ||
        (st = dnnl_memory_desc_init_by_tag(&m->b, 4, m->bd, dnnl_f32, dnnl_ldgo)) ||
        (st = dnnl_memory_desc_init_by_tag(&m->y, 3, m->yd, dnnl_f32, dnnl_tnc)))
        return st;
    bool h0 = dn_op_input(n, 5) != NULL, c0 = lstm && dn_op_input(n, 6) != NULL;
    /* absent states are absent from the descriptor too (oneDNN then starts from zeros / does
     * not write them) */
    m->src_iter = h0 || c0;
    m->src_iter_c = lstm && m->src_iter;
    m->dst_iter = n->n_outputs > 1;
    m->dst_iter_c = lstm && m->dst_iter;
    const dnnl_memory_desc_t *h_in = m->src_iter ? &m->s : NULL, *c_in = m->src_iter_c ? &m->s : NULL;
    const dnnl_memory_desc_t *h_out = m->dst_iter ? &m->s : NULL, *c_out = m->dst_iter_c ? &m->s : NULL;
    if (lstm)
        return dnnl_lstm_forward_desc_init(desc, dnnl_forward_inference, g->dir, &m->x, h_in, c_in, &m->wl_any,
                                           &m->wi_any, &m->b, &m->y, h_out, c_out, 0);
    if (g->kind == RNN_GRU)
        return (g->lbr ? dnnl_lbr_gru_forward_desc_init : dnnl_gru_forward_desc_init)(
            desc, dnnl_forward_inference, g->dir, &m->x, h_in, &m->wl_any, &m->wi_any, &m->b, &m->y, h_out, 0);
    return dnnl_vanilla_rnn_forward_desc_init(desc, dnnl_forward_inference, g->act, g->dir, &m->x, h_in,
                                              &m->wl_any, &m->wi_any, &m->b, &m->y, h_out, 0, 0.0f, 0.0f);
}

bool dn_rnn_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    rnn_geom geom;
    rnn_mds m;
    dnnl_rnn_desc_t desc;
    if (!dn_no_post(n, why, len) || !geom_of(n, &geom, why, len))
        return false;
    /* what dn_rnn_build will ask of oneDNN (braid's own recurrence builds a matmul) */
    dnnl_status_t st = rnn_desc_init(n, &geom, &m, &desc);
    if (st != dnnl_success)
        return dn_why(why, len, "%s: oneDNN's descriptor refuses it: %s", n->op_type, dnnl_status2str(st));
    return true;
}

/* oneDNN's gate K is ONNX's gate ONNX_GATE[K]. */
static int onnx_gate(const rnn_geom *g, int k)
{
    static const int lstm[4] = { 0, 2, 3, 1 };     /* i, f, c, o <- i, o, f, c */
    return g->kind == RNN_LSTM ? lstm[k] : k;
}

/* SRC [D, G*H, C] (ONNX) rewritten as ldigo [1, D, C, G, H] into DST. */
static void to_ldigo(const rnn_geom *g, const void *src, int64_t c, float *dst)
{
    for (int64_t d = 0; d < g->d; d++)
        for (int64_t ci = 0; ci < c; ci++)
            for (int k = 0; k < g->gates; k++)
                for (int64_t h = 0; h < g->h; h++)
                    dst[((d * c + ci) * g->gates + k) * g->h + h] =
                        dn_f32_at(src, (d * g->gates * g->h + onnx_gate(g, k) * g->h + h) * c + ci);
}

/* B [D, 2*G*H] (Wb then Rb, ONNX) as ldgo [1, D, G(+1), H] into DST (zeros without B). */
static void to_ldgo(const rnn_geom *g, const void *b, float *dst)
{
    int gates = g->gates + (g->lbr ? 1 : 0);
    int64_t gh = (int64_t)g->gates * g->h;
    for (int64_t d = 0; d < g->d; d++)
        for (int k = 0; k < gates; k++)
            for (int64_t h = 0; h < g->h; h++) {
                int64_t at = d * 2 * gh;                           /* this direction's */
                float v = 0;
                if (b && k < g->gates) {
                    int o = onnx_gate(g, k);
                    v = dn_f32_at(b, at + o * g->h + h);            /* Wb */
                    if (!(g->lbr && k == 2))                       /* lbr: Rb_h is gate 3's */
                        v += dn_f32_at(b, at + gh + o * g->h + h);  /* + Rb */
                } else if (b) {
                    v = dn_f32_at(b, at + gh + 2 * g->h + h);       /* lbr's Rb_h */
                }
                dst[(d * gates + k) * g->h + h] = v;
            }
}

static int const_of(dn_compiler *c, const float *data, int nd, const dnnl_dims_t dims,
                    dnnl_format_tag_t tag, const dnnl_memory_desc_t *want, int *buf)
{
    dnnl_memory_desc_t src;
    if (dn_check(c, dnnl_memory_desc_init_by_tag(&src, nd, dims, dnnl_f32, tag), "dnnl_memory_desc_init_by_tag"))
        return BD_EBACKEND;
    return dn_const(c, data, &src, want, buf);
}

/* A constant of zeros laid out as MD (an initial state the node does not give). */
static int zero_state(dn_compiler *c, const dnnl_memory_desc_t *md, int *buf)
{
    float *z = calloc(dnnl_memory_desc_get_size(md) / sizeof *z + 1, sizeof *z);
    if (!z)
        return dn_fail(c, BD_ENOMEM, "out of memory");
    int rc = dn_const(c, z, md, md, buf);
    free(z);
    return rc;
}

int dn_rnn_build(dn_compiler *c, const bd_node *n)
{
    rnn_geom g;
    char why[160];
    if (!geom_of(n, &g, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    int own = g.kind == RNN_LSTM ? DN_REC_LSTM : g.kind == RNN_GRU && g.lbr ? DN_REC_GRU : 0;
    if (own && dn_rec_native(own, g.n))
        return dn_rec_build(c, n, &(dn_rec_geom){ own, g.t, g.n, g.i, g.h, g.d,
                                                  g.dir == dnnl_unidirectional_right2left });
    int gates_b = g.gates + (g.lbr ? 1 : 0), rc;
    rnn_mds m;
    dnnl_rnn_desc_t desc;
    dnnl_status_t init = rnn_desc_init(n, &g, &m, &desc);
    const dnnl_memory_desc_t b_md = m.b, x_md = m.x, s_md = m.s, y_md = m.y;
    const bd_value *h0 = dn_op_input(n, 5), *c0 = g.kind == RNN_LSTM ? dn_op_input(n, 6) : NULL;
    dnnl_primitive_desc_t pd;
    if ((rc = dn_pd_make(c, init, "dnnl rnn desc_init", &desc, NULL, 1.0f, &pd)))
        return rc;
    /* the weights and bias in oneDNN's gate order and plain layouts, then in the pd's */
    size_t nw = (size_t)(g.d * g.i * g.gates * g.h), nr = (size_t)(g.d * g.h * g.gates * g.h);
    float *tmp = malloc((nw > nr ? nw : nr) * sizeof *tmp), *bias = calloc((size_t)(g.d * gates_b * g.h), sizeof *bias);
    int wl_buf, wi_buf, b_buf, x_buf, y_buf, buf;
    rc = tmp && bias ? 0 : dn_fail(c, BD_ENOMEM, "out of memory");
    if (!rc) {
        to_ldigo(&g, dn_op_input(n, 1)->data, g.i, tmp);
        rc = const_of(c, tmp, 5, m.wl, dnnl_ldigo, dn_pd_md(pd, dnnl_query_weights_md), &wl_buf);
    }
    if (!rc) {
        to_ldigo(&g, dn_op_input(n, 2)->data, g.h, tmp);
        rc = const_of(c, tmp, 5, m.wi, dnnl_ldigo, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1), &wi_buf);
    }
    if (!rc) {
        to_ldgo(&g, dn_op_input(n, 3) ? dn_op_input(n, 3)->data : NULL, bias);
        rc = const_of(c, bias, 4, m.bd, dnnl_ldgo, &b_md, &b_buf);
    }
    free(tmp);
    free(bias);
    dn_arg args[12];
    int na = 0;
    if (!rc && !(rc = dn_input(c, dn_op_input(n, 0), &x_md, &x_buf)))
        args[na++] = (dn_arg){ DNNL_ARG_SRC_LAYER, x_buf, x_md };
    if (!rc) {
        args[na++] = (dn_arg){ DNNL_ARG_WEIGHTS_LAYER, wl_buf, *dn_pd_md(pd, dnnl_query_weights_md) };
        args[na++] = (dn_arg){ DNNL_ARG_WEIGHTS_ITER, wi_buf,
                               *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1) };
        args[na++] = (dn_arg){ DNNL_ARG_BIAS, b_buf, b_md };
    }
    /* initial states: [D, N, H] is ldnc [1, D, N, H] byte for byte; a state the descriptor
     * carries that the node lacks (an LSTM's other one) starts from zeros */
    const bd_value *init_state[2] = { h0, c0 };
    const bool carried[2] = { m.src_iter, m.src_iter_c };
    const int init_arg[2] = { DNNL_ARG_SRC_ITER, DNNL_ARG_SRC_ITER_C };
    for (int k = 0; k < 2 && !rc; k++) {
        if (init_state[k])
            rc = dn_input_plain(c, init_state[k], &buf, &(dnnl_memory_desc_t){ 0 });
        else if (carried[k])
            rc = zero_state(c, &s_md, &buf);
        if (!rc && carried[k])
            args[na++] = (dn_arg){ init_arg[k], buf, s_md };
    }
    /* Y: dst_layer's bytes, seen as [T, D, N, H] */
    if (!rc && n->n_outputs > 0) {
        dnnl_dims_t y4 = { g.t, g.d, g.n, g.h }, st = { g.n * g.d * g.h, g.h, g.d * g.h, 1 };
        dnnl_memory_desc_t view;
        rc = dn_check(c, dnnl_memory_desc_init_by_strides(&view, 4, y4, dnnl_f32, st), "md");
        if (!rc && !(rc = dn_output(c, n->outputs[0], &view, &y_buf)))
            args[na++] = (dn_arg){ DNNL_ARG_DST_LAYER, y_buf, y_md };
    }
    /* Y_h, Y_c; an LSTM's Y_c the node does not want goes to scratch */
    const int iter_arg[2] = { DNNL_ARG_DST_ITER, DNNL_ARG_DST_ITER_C };
    const bool written[2] = { m.dst_iter, m.dst_iter_c };
    for (size_t k = 1; k < 3 && written[k - 1] && !rc; k++) {
        dnnl_memory_desc_t md;
        if (k < n->n_outputs) {
            dn_md_of_shape(&md, n->outputs[k]);
            rc = dn_output(c, n->outputs[k], &md, &buf);
        } else {
            rc = dn_temp(c, &s_md, &buf);
        }
        if (!rc)
            args[na++] = (dn_arg){ iter_arg[k - 1], buf, s_md };
    }
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    return dn_add_step(c, pd, args, na);
}

/* oneDNN 2.6's LSTM primitive at batch 1 took 2.7 ms on the zoo's LSTM tagger where ONNX
 * Runtime's LSTM took 1.9 (docs/performance.md); braid's own LSTM, where it runs, is faster
 * than both. Its GRU and RNN primitives are as fast as ONNX Runtime's or faster
 * (bidirectional, hidden 256, 64 steps, batch 1: GRU 1.32-1.39 against 1.43 ms at 1 thread,
 * RNN 0.59 against 0.63; at 2 threads RNN 0.46-0.51 against 0.78-0.89). */
const char *bd_dnnl_slower_ops(void)
{
    return dn_rec_native(DN_REC_LSTM, 1) ? "" : "LSTM";
}
