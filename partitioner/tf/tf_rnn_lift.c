/* Keras's GRU and LSTM layers, frozen: a TensorFlow v1 while loop (Enter/Merge/Switch/
 * NextIteration/Exit) over TensorLists, which only TensorFlow could run. When the loop is
 * exactly the one Keras 3 writes for GRU(reset_after=True) or LSTM -- its cell checked op by
 * op, its trip count a constant -- the TensorListStack that reads its outputs becomes one
 * node that translates into an ONNX GRU (linear_before_reset=1; Keras's gate order z, r, h is
 * ONNX's) or LSTM (Keras's i f c o reordered to ONNX's i o f c), and nothing of the loop is
 * imported. Anything else is left as it is: TensorFlow runs the loop whole. */
#include "partitioner/tf/tf_rnn_lift.h"
#include "partitioner/tf/tf_mapkit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct lifter {
    const tf_nodeview *nodes;
    size_t             n;
    tf_lookup_fn       lookup;
    void              *ctx;
} lifter;

static bool is(const tf_nodeview *v, const char *op) { return v && strcmp(v->op, op) == 0; }

/* The node REF names and its port; NULL if none. */
static const tf_nodeview *at(const lifter *l, const char *ref, int *port)
{
    int p = 0;
    long i = ref ? l->lookup(l->ctx, ref, &p) : -1;
    if (port)
        *port = p;
    return i >= 0 && (size_t)i < l->n ? &l->nodes[i] : NULL;
}

/* The producer of REF seen through Identity nodes; *PORT its port. */
static const tf_nodeview *src(const lifter *l, const char *ref, int *port)
{
    int p = 0;
    const tf_nodeview *v = at(l, ref, &p);
    for (int hops = 0; v && is(v, "Identity") && v->n_inputs == 1 && p == 0 && hops < 64; hops++)
        v = at(l, v->inputs[0], &p);
    if (port)
        *port = p;
    return v;
}

/* REF is port 0 of a node with op OP and N inputs (through Identities). */
static const tf_nodeview *op_at(const lifter *l, const char *ref, const char *op, size_t n)
{
    int p;
    const tf_nodeview *v = src(l, ref, &p);
    return is(v, op) && p == 0 && v->n_inputs == n ? v : NULL;
}

/* A Const's tensor. */
static const tf_tensor *const_of(const tf_nodeview *v)
{
    const tf_attr *a = is(v, "Const") ? tf_view_attr(v, "value") : NULL;
    return a && a->kind == TF_ATTR_TENSOR ? &a->tensor : NULL;
}

/* REF's constant integers (int32/int64, at most MAX) into OUT; false if not that. */
static bool const_ints(const lifter *l, const char *ref, int64_t *out, size_t max, size_t *n)
{
    int p;
    const tf_tensor *t = const_of(src(l, ref, &p));
    return t && !p && tf_ints_of(t->dtype, t->data, t->nbytes, out, max, n);
}

static bool const_int(const lifter *l, const char *ref, int64_t *v)
{
    size_t n;
    return const_ints(l, ref, v, 1, &n) && n == 1;
}

static bool const_float(const lifter *l, const char *ref, float *v)
{
    int p;
    const tf_tensor *t = const_of(src(l, ref, &p));
    if (!t || p || t->dtype != BD_DT_FLOAT || bd_shape_numel(&t->shape) != 1 || t->nbytes < 4)
        return false;
    memcpy(v, t->data, 4);
    return true;
}

/* One loop variable: Merge(Enter(init), NextIteration(next)) and the Switch that splits it
 * (port 1 goes into the body, port 0 to the Exit). */
typedef struct loop_var {
    const tf_nodeview *merge, *enter, *sw;
    const char *init, *next;     /* refs: the value entering, the body's next value */
} loop_var;

/* The loop variable SW splits; false if SW is not a loop variable's Switch. */
static bool var_of_switch(const lifter *l, const tf_nodeview *sw, loop_var *lv)
{
    if (!is(sw, "Switch") || sw->n_inputs != 2)
        return false;
    const tf_nodeview *m = op_at(l, sw->inputs[0], "Merge", 2);
    const tf_nodeview *e = m ? at(l, m->inputs[0], NULL) : NULL;
    const tf_nodeview *ni = m ? at(l, m->inputs[1], NULL) : NULL;
    if (!is(e, "Enter") || e->n_inputs != 1 || !is(ni, "NextIteration") || ni->n_inputs != 1)
        return false;
    *lv = (loop_var){ m, e, sw, e->inputs[0], ni->inputs[0] };
    return true;
}

/* The loop variable whose Merge is M (the loop's condition reads the Merges); false if M is
 * not one. */
static bool var_of_merge(const lifter *l, const tf_nodeview *m, loop_var *lv)
{
    if (!is(m, "Merge"))
        return false;
    for (size_t i = 0; i < l->n; i++) {
        int p;
        if (is(&l->nodes[i], "Switch") && l->nodes[i].n_inputs == 2 &&
            src(l, l->nodes[i].inputs[0], &p) == m && p == 0)
            return var_of_switch(l, &l->nodes[i], lv);
    }
    return false;
}

/* REF, inside the body, is loop variable LV's current value (its Switch's port 1). */
static bool is_body_value(const lifter *l, const char *ref, const loop_var *lv)
{
    int p;
    return src(l, ref, &p) == lv->sw && p == 1;
}

/* A loop invariant read in the body: REF is Enter(is_constant)(c), C a float Const of RANK;
 * *CONST_REF gets c's ref. */
static bool invariant(const lifter *l, const char *ref, int rank, const char **const_ref)
{
    int p;
    const tf_nodeview *e = src(l, ref, &p);
    if (!is(e, "Enter") || p || e->n_inputs != 1 || !tf_a_b(e, "is_constant", false))
        return false;
    const tf_tensor *t = const_of(src(l, e->inputs[0], &p));
    if (!t || p || t->dtype != BD_DT_FLOAT || t->shape.rank != rank || !t->data)
        return false;
    *const_ref = e->inputs[0];
    return true;
}

/* REF is a StridedSlice taking all rows and the columns LO..HI of its input *X (HI < 0: to
 * the end), as Keras writes x[:, lo:hi]. */
static bool column_slice(const lifter *l, const char *ref, const char **x, int64_t lo, int64_t hi)
{
    const tf_nodeview *s = op_at(l, ref, "StridedSlice", 4);
    int64_t b[2], e[2], st[2];
    size_t nb, ne, ns;
    if (!s || !const_ints(l, s->inputs[1], b, 2, &nb) || !const_ints(l, s->inputs[2], e, 2, &ne) ||
        !const_ints(l, s->inputs[3], st, 2, &ns) || nb != 2 || ne != 2 || ns != 2 ||
        st[0] != 1 || st[1] != 1 || tf_a_i(s, "ellipsis_mask", 0) || tf_a_i(s, "new_axis_mask", 0) ||
        tf_a_i(s, "shrink_axis_mask", 0))
        return false;
    int64_t bm = tf_a_i(s, "begin_mask", 0), em = tf_a_i(s, "end_mask", 0);
    bool rows = ((bm & 1) || b[0] == 0) && (em & 1);
    int64_t from = (bm & 2) ? 0 : b[1];
    bool to_end = (em & 2) != 0;
    if (!rows || from != lo || (hi < 0 ? !to_end : (to_end || e[1] != hi)))
        return false;
    *x = s->inputs[0];
    return true;
}

/* A or B (either order) of binary node N: *OTHER gets the other input. */
static bool either(const tf_nodeview *n, bool (*test)(const lifter *, const char *, void *),
                   const lifter *l, void *arg, const char **other)
{
    for (int k = 0; k < 2; k++)
        if (test(l, n->inputs[k], arg)) {
            *other = n->inputs[1 - k];
            return true;
        }
    return false;
}

static bool test_body_value(const lifter *l, const char *ref, void *lv)
{
    return is_body_value(l, ref, lv);
}

/* What the GRU cell computes from, once matched. */
typedef struct cell {
    const char *x_t;                     /* TensorListGetItem's ref */
    const char *kernel, *recurrent, *bias;
    int64_t     units;
    const char *c0;                      /* LSTM: the cell state's initial value */
} cell;

/* H_NEXT = z*h + (1-z)*tanh(x_h + r*(h.U_h + b_rh)), z = sigmoid(x_z + h.U_z + b_rz),
 * r = sigmoid(x_r + h.U_r + b_rr), x_* = split(x.W + b_i): Keras 3's GRUCell(reset_after=True)
 * as its frozen graph has it, H the loop variable. */
static bool match_cell(const lifter *l, const char *h_next, const loop_var *h, cell *c)
{
    const tf_nodeview *add4 = op_at(l, h_next, "AddV2", 2);
    if (!add4)
        return false;
    const tf_nodeview *mul1 = NULL, *mul2 = NULL;
    for (int k = 0; k < 2 && !mul1; k++) {
        const tf_nodeview *a = op_at(l, add4->inputs[k], "Mul", 2);
        const tf_nodeview *b = op_at(l, add4->inputs[1 - k], "Mul", 2);
        const char *o;
        if (a && b && either(a, test_body_value, l, (void *)h, &o)) {
            mul1 = a;
            mul2 = b;
        }
    }
    if (!mul1)
        return false;
    const char *z_ref;                                   /* mul1 = z * h */
    if (!either(mul1, test_body_value, l, (void *)h, &z_ref))
        return false;
    int zp;
    const tf_nodeview *z = src(l, z_ref, &zp);
    if (!is(z, "Sigmoid") || zp || z->n_inputs != 1)
        return false;
    /* mul2 = (1 - z) * tanh(...) */
    const tf_nodeview *sub = NULL, *tanh_n = NULL;
    for (int k = 0; k < 2 && !sub; k++) {
        const tf_nodeview *a = op_at(l, mul2->inputs[k], "Sub", 2);
        const tf_nodeview *b = op_at(l, mul2->inputs[1 - k], "Tanh", 1);
        if (a && b) {
            sub = a;
            tanh_n = b;
        }
    }
    float one;
    int sp;
    if (!sub || !const_float(l, sub->inputs[0], &one) || one != 1.0f ||
        src(l, sub->inputs[1], &sp) != z || sp)
        return false;
    /* the three gates' pre-activations: x part (Split of the input projection) + h part */
    const tf_nodeview *add1 = op_at(l, z->inputs[0], "AddV2", 2);
    const tf_nodeview *add3 = op_at(l, tanh_n->inputs[0], "AddV2", 2);
    if (!add1 || !add3)
        return false;
    int p0;
    const tf_nodeview *split1 = src(l, add1->inputs[0], &p0);       /* x_z = split_1:0 */
    if (!is(split1, "Split") || p0 != 0 || split1->n_inputs != 2 || tf_a_i(split1, "num_split", 0) != 3)
        return false;
    int64_t dim;
    if (!const_int(l, split1->inputs[0], &dim) || (dim != -1 && dim != 1))
        return false;
    /* the input projection: BiasAdd(MatMul(x_t, W), Squeeze(split(bias):0)) */
    const tf_nodeview *bias_add = op_at(l, split1->inputs[1], "BiasAdd", 2);
    const tf_nodeview *mm = bias_add ? op_at(l, bias_add->inputs[0], "MatMul", 2) : NULL;
    if (!mm || tf_a_b(mm, "transpose_a", false) || tf_a_b(mm, "transpose_b", false))
        return false;
    const tf_nodeview *get = op_at(l, mm->inputs[0], "TensorListGetItem", 3);
    if (!get || !invariant(l, mm->inputs[1], 2, &c->kernel))
        return false;
    c->x_t = mm->inputs[0];
    const tf_nodeview *sq0 = op_at(l, bias_add->inputs[1], "Squeeze", 1);
    int bp0;
    const tf_nodeview *bsplit = sq0 ? src(l, sq0->inputs[0], &bp0) : NULL;
    int64_t bdim;
    if (!is(bsplit, "Split") || bp0 != 0 || bsplit->n_inputs != 2 || tf_a_i(bsplit, "num_split", 0) != 2 ||
        !const_int(l, bsplit->inputs[0], &bdim) || bdim != 0 || !invariant(l, bsplit->inputs[1], 2, &c->bias))
        return false;
    /* the recurrent projection mh = AddV2(MatMul(h, U), Squeeze(split(bias):1)), which the
     * three gates slice by columns */
    const tf_nodeview *ss = op_at(l, add1->inputs[1], "StridedSlice", 4);
    const tf_nodeview *mh = ss ? op_at(l, ss->inputs[0], "AddV2", 2) : NULL;
    if (!mh)
        return false;
    const tf_nodeview *mm1 = op_at(l, mh->inputs[0], "MatMul", 2);
    const tf_nodeview *sq1 = op_at(l, mh->inputs[1], "Squeeze", 1);
    int bp1;
    if (!mm1 || !sq1 || src(l, sq1->inputs[0], &bp1) != bsplit || bp1 != 1 ||
        !is_body_value(l, mm1->inputs[0], h) || !invariant(l, mm1->inputs[1], 2, &c->recurrent))
        return false;
    if (tf_a_b(mm1, "transpose_a", false) || tf_a_b(mm1, "transpose_b", false))
        return false;
    /* the units, from the recurrent kernel [H, 3H] */
    int kp;
    const tf_tensor *u = const_of(src(l, c->recurrent, &kp));
    int64_t H = u->shape.dims[0];
    if (H < 1 || H > INT32_MAX || u->shape.dims[1] != 3 * H)
        return false;
    c->units = H;
    const char *x1, *x2, *x3;
    if (!column_slice(l, add1->inputs[1], &x1, 0, H) || src(l, x1, &kp) != mh)
        return false;
    /* r = sigmoid(split_1:1 + mh[:, H:2H]) */
    const tf_nodeview *mul_r = NULL;
    const char *hh_ref = NULL;
    for (int k = 0; k < 2 && !mul_r; k++) {
        int q;
        if (src(l, add3->inputs[k], &q) == split1 && q == 2)
            mul_r = op_at(l, add3->inputs[1 - k], "Mul", 2);
    }
    if (!mul_r)
        return false;
    const tf_nodeview *r = NULL;
    for (int k = 0; k < 2 && !r; k++) {
        int q;
        const tf_nodeview *cand = src(l, mul_r->inputs[k], &q);
        if (is(cand, "Sigmoid") && q == 0 && cand != z) {
            r = cand;
            hh_ref = mul_r->inputs[1 - k];
        }
    }
    if (!r || !column_slice(l, hh_ref, &x3, 2 * H, -1) || src(l, x3, &kp) != mh)
        return false;
    const tf_nodeview *add2 = op_at(l, r->inputs[0], "AddV2", 2);
    int q1;
    if (!add2 || src(l, add2->inputs[0], &q1) != split1 || q1 != 1 ||
        !column_slice(l, add2->inputs[1], &x2, H, 2 * H) || src(l, x2, &kp) != mh)
        return false;
    /* the kernel [I, 3H] and the bias [2, 3H] */
    const tf_tensor *w = const_of(src(l, c->kernel, &kp));
    const tf_tensor *b = const_of(src(l, c->bias, &kp));
    return w->shape.dims[1] == 3 * H && w->shape.dims[0] >= 1 && b->shape.dims[0] == 2 &&
           b->shape.dims[1] == 3 * H;
}

/* Either input of binary node N is port 0 of an OP node (through Identities): that node, and
 * the other input in *OTHER. */
static const tf_nodeview *operand(const lifter *l, const tf_nodeview *n, const char *op,
                                  size_t n_in, const char **other)
{
    for (int k = 0; k < 2; k++) {
        const tf_nodeview *v = op_at(l, n->inputs[k], op, n_in);
        if (v) {
            *other = n->inputs[1 - k];
            return v;
        }
    }
    return NULL;
}

/* REF is Sigmoid (or Tanh: TANH) of port GATE of SPLIT, through Identities. */
static bool gate(const lifter *l, const char *ref, const char *act, const tf_nodeview *split, int want)
{
    const tf_nodeview *a = op_at(l, ref, act, 1);
    int p;
    return a && src(l, a->inputs[0], &p) == split && p == want;
}

/* The loop variable, among those LOOP_COND drives, whose next value is NEXT (through
 * Identities). */
static bool var_with_next(const lifter *l, const tf_nodeview *loop_cond, const char *next,
                          loop_var *out)
{
    int np;
    const tf_nodeview *want = src(l, next, &np);
    for (size_t i = 0; i < l->n; i++) {
        loop_var lv;
        int q;
        if (is(&l->nodes[i], "Switch") && var_of_switch(l, &l->nodes[i], &lv) &&
            at(l, lv.sw->inputs[1], NULL) == loop_cond && src(l, lv.next, &q) == want && q == np) {
            *out = lv;
            return true;
        }
    }
    return false;
}

/* H_NEXT = o * tanh(c), c = f * c_prev + i * tanh(g), [i f g o] = split(x.W + h.U + b, 4):
 * Keras 3's LSTMCell (sigmoid gates, tanh activations, a bias) as its frozen graph has it (at
 * batch 1 the h.U term is a Squeeze'd BiasAdd operand, else an AddV2), H and the cell state
 * loop variables. */
static bool match_lstm_cell(const lifter *l, const char *h_next, const loop_var *h,
                            const tf_nodeview *loop_cond, cell *c)
{
    const tf_nodeview *hm = op_at(l, h_next, "Mul", 2);
    const char *o_ref;
    const tf_nodeview *tc = hm ? operand(l, hm, "Tanh", 1, &o_ref) : NULL;
    const char *c_new = tc ? tc->inputs[0] : NULL;
    const tf_nodeview *cadd = c_new ? op_at(l, c_new, "AddV2", 2) : NULL;
    if (!cadd)
        return false;
    loop_var cv;
    if (!var_with_next(l, loop_cond, c_new, &cv) || cv.merge == h->merge)
        return false;
    /* c = f * c_prev + i * tanh(g): find the term that reads c_prev */
    const tf_nodeview *fm = NULL, *im = NULL;
    for (int k = 0; k < 2 && !fm; k++) {
        const tf_nodeview *a = op_at(l, cadd->inputs[k], "Mul", 2);
        const tf_nodeview *b = op_at(l, cadd->inputs[1 - k], "Mul", 2);
        const char *o;
        if (a && b && either(a, test_body_value, l, (void *)&cv, &o)) {
            fm = a;
            im = b;
        }
    }
    if (!fm)
        return false;
    const char *f_ref, *i_ref, *g_ref;
    if (!either(fm, test_body_value, l, (void *)&cv, &f_ref))
        return false;
    const tf_nodeview *g_tanh = operand(l, im, "Tanh", 1, &i_ref);
    const tf_nodeview *fs = op_at(l, f_ref, "Sigmoid", 1);
    if (!g_tanh || !fs)
        return false;
    g_ref = g_tanh->inputs[0];
    int sp;
    const tf_nodeview *split = src(l, g_ref, &sp);
    int64_t dim;
    if (!is(split, "Split") || sp != 2 || split->n_inputs != 2 || tf_a_i(split, "num_split", 0) != 4 ||
        !const_int(l, split->inputs[0], &dim) || (dim != -1 && dim != 1) ||
        !gate(l, i_ref, "Sigmoid", split, 0) || !gate(l, f_ref, "Sigmoid", split, 1) ||
        !gate(l, o_ref, "Sigmoid", split, 3))
        return false;
    /* z = (x.W + h.U) + b */
    const tf_nodeview *zb = op_at(l, split->inputs[1], "BiasAdd", 2);
    if (!zb)
        zb = op_at(l, split->inputs[1], "AddV2", 2);
    if (!zb || !invariant(l, zb->inputs[1], 1, &c->bias))
        return false;
    const tf_nodeview *zxh = op_at(l, zb->inputs[0], "BiasAdd", 2);
    const tf_nodeview *mm = NULL, *mm1 = NULL;
    if (zxh) {                                   /* BiasAdd(x.W, Squeeze(h.U)) at batch 1 */
        const tf_nodeview *sq = op_at(l, zxh->inputs[1], "Squeeze", 1);
        mm = op_at(l, zxh->inputs[0], "MatMul", 2);
        mm1 = sq ? op_at(l, sq->inputs[0], "MatMul", 2) : NULL;
    } else if ((zxh = op_at(l, zb->inputs[0], "AddV2", 2))) {
        const char *other;
        mm = operand(l, zxh, "MatMul", 2, &other);
        mm1 = mm ? op_at(l, other, "MatMul", 2) : NULL;
        if (mm && mm1 && is_body_value(l, mm->inputs[0], h)) {
            const tf_nodeview *t = mm;            /* the h.U one came first */
            mm = mm1;
            mm1 = t;
        }
    }
    if (!mm || !mm1 || tf_a_b(mm, "transpose_a", false) || tf_a_b(mm, "transpose_b", false) ||
        tf_a_b(mm1, "transpose_a", false) || tf_a_b(mm1, "transpose_b", false) ||
        !op_at(l, mm->inputs[0], "TensorListGetItem", 3) || !invariant(l, mm->inputs[1], 2, &c->kernel) ||
        !is_body_value(l, mm1->inputs[0], h) || !invariant(l, mm1->inputs[1], 2, &c->recurrent))
        return false;
    c->x_t = mm->inputs[0];
    c->c0 = cv.init;
    int kp;
    const tf_tensor *u = const_of(src(l, c->recurrent, &kp));
    const tf_tensor *w = const_of(src(l, c->kernel, &kp));
    const tf_tensor *b = const_of(src(l, c->bias, &kp));
    int64_t H = u->shape.dims[0];
    if (H < 1 || H > INT32_MAX || u->shape.dims[1] != 4 * H || w->shape.dims[1] != 4 * H ||
        w->shape.dims[0] < 1 || b->shape.dims[0] != 4 * H)
        return false;
    c->units = H;
    return true;
}

/* Try STACK (a TensorListStack): the lift of its loop, or false. */
static bool match_stack(const lifter *l, size_t stack, tf_rnn_lift *out)
{
    const tf_nodeview *st = &l->nodes[stack];
    if (st->n_inputs != 2)
        return false;
    int p;
    const tf_nodeview *exit = at(l, st->inputs[0], &p);
    if (!is(exit, "Exit") || p || exit->n_inputs != 1)
        return false;
    int sp;
    const tf_nodeview *sw = at(l, exit->inputs[0], &sp);
    loop_var out_tl;
    if (sp != 0 || !var_of_switch(l, sw, &out_tl))
        return false;
    const tf_nodeview *reserve = op_at(l, out_tl.init, "TensorListReserve", 2);
    const tf_nodeview *set = op_at(l, out_tl.next, "TensorListSetItem", 3);
    int64_t n_elems;
    if (!reserve || !set || !const_int(l, reserve->inputs[1], &n_elems) ||
        !is_body_value(l, set->inputs[0], &out_tl))
        return false;
    const tf_nodeview *loop_cond = at(l, sw->inputs[1], NULL);
    if (!is(loop_cond, "LoopCond") || loop_cond->n_inputs != 1)
        return false;
    /* the h variable: the Merge whose next value is what the body writes */
    const char *h_next = set->inputs[2];
    int hp;
    const tf_nodeview *h_src = src(l, h_next, &hp);
    loop_var h = { 0 };
    bool found = false;
    for (size_t i = 0; i < l->n && !found; i++) {
        loop_var lv;
        if (is(&l->nodes[i], "Switch") && var_of_switch(l, &l->nodes[i], &lv) &&
            at(l, lv.sw->inputs[1], NULL) == loop_cond) {
            int q;
            if (src(l, lv.next, &q) == h_src && q == hp && lv.merge != out_tl.merge) {
                h = lv;
                found = true;
            }
        }
    }
    if (!found)
        return false;
    cell c = { 0 };
    bool lstm = false;
    if (!match_cell(l, h_next, &h, &c)) {
        if (!match_lstm_cell(l, h_next, &h, loop_cond, &c))
            return false;
        lstm = true;
    }
    /* x_t = TensorListGetItem(in_tl, time): in_tl an invariant variable holding
     * TensorListFromTensor(X), time the variable counting 0, 1, ... */
    const tf_nodeview *get = op_at(l, c.x_t, "TensorListGetItem", 3);
    int gp;
    loop_var in_tl, time;
    const tf_nodeview *in_sw = get ? src(l, get->inputs[0], &gp) : NULL;
    if (!in_sw || gp != 1 || !var_of_switch(l, in_sw, &in_tl) || !is_body_value(l, in_tl.next, &in_tl))
        return false;
    const tf_nodeview *from = op_at(l, in_tl.init, "TensorListFromTensor", 2);
    const tf_nodeview *t_sw = src(l, get->inputs[1], &gp);
    if (!from || gp != 1 || !var_of_switch(l, t_sw, &time))
        return false;
    int64_t t0, t_step;
    const tf_nodeview *t_add = op_at(l, time.next, "AddV2", 2);
    if (!const_int(l, time.init, &t0) || t0 != 0 || !t_add ||
        !is_body_value(l, t_add->inputs[0], &time) || !const_int(l, t_add->inputs[1], &t_step) ||
        t_step != 1)
        return false;
    /* the output list: the last step's h at index 0 (return_sequences=False), or each at time */
    int64_t idx;
    bool sequences;
    if (const_int(l, set->inputs[1], &idx) && idx == 0 && n_elems == 1)
        sequences = false;
    else if (is_body_value(l, set->inputs[1], &time))
        sequences = true;
    else
        return false;
    /* the trip count: LoopCond(LogicalAnd(Less(counter, max), Less(time, T))) with counter
     * another 0, 1, ... variable; the loop runs min(max, T) steps */
    const tf_nodeview *and = op_at(l, loop_cond->inputs[0], "LogicalAnd", 2);
    if (!and)
        return false;
    int64_t limit = -1;
    for (int k = 0; k < 2; k++) {
        const tf_nodeview *less = op_at(l, and->inputs[k], "Less", 2);
        int lp;
        loop_var v;
        if (!less || !var_of_merge(l, src(l, less->inputs[0], &lp), &v) || lp)
            return false;
        int64_t bound, init, step;
        const tf_nodeview *add = op_at(l, v.next, "AddV2", 2);
        if (!const_int(l, v.init, &init) || init != 0 || !add ||
            !is_body_value(l, add->inputs[0], &v) || !const_int(l, add->inputs[1], &step) || step != 1)
            return false;
        /* the bound: a constant, or a loop variable passed through unchanged whose initial
         * value is Max(constant, ...) of a scalar (Keras's maximum_iterations) */
        int mp;
        const tf_nodeview *bsrc = src(l, less->inputs[1], &mp);
        loop_var bv;
        if (!const_int(l, less->inputs[1], &bound)) {
            const tf_nodeview *mx;
            if (!var_of_merge(l, bsrc, &bv) || mp != 0 || !is_body_value(l, bv.next, &bv) ||
                !(mx = op_at(l, bv.init, "Max", 2)) || !const_int(l, mx->inputs[0], &bound))
                return false;
        }
        if (bound < 1)
            return false;
        limit = limit < 0 || bound < limit ? bound : limit;
    }
    if (sequences && n_elems != limit)
        return false;
    *out = (tf_rnn_lift){ .stack = stack, .lstm = lstm, .x = from->inputs[0], .kernel = c.kernel,
                          .recurrent = c.recurrent, .bias = c.bias, .h0 = h.init, .c0 = c.c0,
                          .units = c.units, .steps = limit, .sequences = sequences };
    return true;
}

int tf_find_keras_rnns(const tf_nodeview *nodes, size_t n, tf_lookup_fn lookup, void *ctx,
                      tf_rnn_lift **out, size_t *n_out, bd_error *err)
{
    lifter l = { nodes, n, lookup, ctx };
    *out = NULL;
    *n_out = 0;
    /* Matching a stack scans the graph for loop variables: a file with many TensorListStacks
     * reading one loop would cost their number times the node count, so only the first
     * MAX_TRIES are tried (a model has one per recurrent layer). */
    enum { MAX_TRIES = 256 };
    int tries = 0;
    for (size_t i = 0; i < n && tries < MAX_TRIES; i++) {
        tf_rnn_lift lift;
        if (!is(&nodes[i], "TensorListStack") || (tries++, !match_stack(&l, i, &lift)))
            continue;
        tf_rnn_lift *grown = realloc(*out, (*n_out + 1) * sizeof *grown);
        if (!grown) {
            free(*out);
            *out = NULL;
            *n_out = 0;
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        }
        *out = grown;
        (*out)[(*n_out)++] = lift;
    }
    return 0;
}

/* ---- emitting the GRU -------------------------------------------------------------------- */

static bd_value *i64s(tf_mapctx *m, const char *suffix, const int64_t *v, int64_t n, bd_error *err)
{
    bd_shape s = { .rank = 1, .dims = { n } };
    return tf_emit_const(m, suffix, BD_DT_INT64, &s, v, (size_t)n * sizeof *v, err);
}

/* A float Const value of shape [ROWS, COLS]; false if V is not one. */
static bool f32_matrix(const bd_value *v, int64_t rows, int64_t cols)
{
    int64_t n, bytes;
    return v && v->data && v->dtype == BD_DT_FLOAT && v->shape.rank == 2 && rows > 0 &&
           cols > 0 && v->shape.dims[0] == rows && v->shape.dims[1] == cols &&
           !__builtin_mul_overflow(rows, cols, &n) && !__builtin_mul_overflow(n, 4, &bytes) &&
           v->nbytes >= (size_t)bytes;
}

/* Keras's gate order to ONNX's: GRU z r h is the same; LSTM i f c o becomes i o f c (ONNX
 * gate block K is Keras's block ORDER[K]). */
static const int k_lstm_order[4] = { 0, 3, 1, 2 };

/* Column C of an ONNX-ordered [.., GATES*H] matrix: the column of Keras's. */
static int64_t keras_col(int64_t c, int64_t H, bool lstm)
{
    return lstm ? k_lstm_order[c / H] * H + c % H : c;
}

/* SRC [ROWS, COLS] (bytes at any alignment) transposed into a new [1, COLS, ROWS] constant,
 * its gate blocks in ONNX's order. */
static bd_value *transposed(tf_mapctx *m, const char *suffix, const bd_value *src, int64_t H,
                            bool lstm, bd_error *err)
{
    int64_t rows = src->shape.dims[0], cols = src->shape.dims[1];
    float *t = malloc((size_t)(rows * cols) * sizeof *t);
    if (!t) {
        bd_error_set(err, BD_ENOMEM, "out of memory");
        return NULL;
    }
    for (int64_t c = 0; c < cols; c++) {
        int64_t kc = keras_col(c, H, lstm);
        for (int64_t r = 0; r < rows; r++)
            memcpy(&t[c * rows + r], (const char *)src->data + (size_t)(r * cols + kc) * sizeof(float),
                   sizeof(float));
    }
    bd_shape s = { .rank = 3, .dims = { 1, cols, rows } };
    bd_value *v = tf_emit_const(m, suffix, BD_DT_FLOAT, &s, t, (size_t)(rows * cols) * sizeof *t, err);
    free(t);
    return v;
}

/* ONNX's B [1, 2*G*H]: the input bias then the recurrent one. GRU: Keras's [2, 3H] as it is;
 * LSTM: Keras's one [4H] in ONNX's gate order, then zeros. */
static bd_value *onnx_bias(tf_mapctx *m, const bd_value *b, int64_t H, bool lstm, bd_error *err)
{
    int64_t n = lstm ? 8 * H : 6 * H;
    float *t = calloc((size_t)n, sizeof *t);
    if (!t) {
        bd_error_set(err, BD_ENOMEM, "out of memory");
        return NULL;
    }
    for (int64_t c = 0; c < (lstm ? 4 * H : n); c++)
        memcpy(&t[c], (const char *)b->data + (size_t)keras_col(c, H, lstm) * sizeof(float),
               sizeof(float));
    bd_shape s = { .rank = 2, .dims = { 1, n } };
    bd_value *v = tf_emit_const(m, "B", BD_DT_FLOAT, &s, t, (size_t)n * sizeof *t, err);
    free(t);
    return v;
}

static int set_int_attr(bd_graph *g, bd_node *n, const char *name, int64_t v, bd_error *err)
{
    return bd_node_add_attr(g, n, &(bd_attr){ .name = name, .type = BD_ATTR_INT, .i = v }, err);
}

/* A Const value of shape [N] (float); false if V is not one. */
static bool f32_vector(const bd_value *v, int64_t n)
{
    return v && v->data && v->dtype == BD_DT_FLOAT && v->shape.rank == 1 && v->shape.dims[0] == n &&
           n > 0 && n <= INT32_MAX && v->nbytes >= (size_t)n * sizeof(float);
}

int tf_emit_keras_rnn(tf_mapctx *m, const tf_rnn_lift *lift, bd_error *err)
{
    int64_t H = lift->units, G = lift->lstm ? 4 : 3;
    size_t n_in = lift->lstm ? 6 : 5;
    const bd_value *w = m->in[1], *u = m->in[2], *b = m->in[3];
    bool bias_ok = lift->lstm ? f32_vector(b, 4 * H) : f32_matrix(b, 2, 3 * H);
    if (m->n_in != n_in || !w || w->shape.rank != 2 || !f32_matrix(w, w->shape.dims[0], G * H) ||
        !f32_matrix(u, H, G * H) || !bias_ok)
        return bd_error_set(err, BD_EMODEL, "node '%s': the recurrent loop's weights are not the "
                            "constants its cell was matched with", m->v->name);
    /* the first STEPS steps of X: what the loop reads */
    const int64_t zero = 0, steps = lift->steps;
    bd_value *starts = i64s(m, "starts", &zero, 1, err), *ends = i64s(m, "ends", &steps, 1, err);
    bd_value *axes = i64s(m, "axes", &zero, 1, err), *xs = tf_emit_temp(m, "steps", err);
    bd_value *wt = transposed(m, "W", w, H, lift->lstm, err);
    bd_value *rt = transposed(m, "R", u, H, lift->lstm, err);
    bd_value *bias = onnx_bias(m, b, H, lift->lstm, err);
    bd_value *h0 = tf_emit_temp(m, "initial_h", err), *y = tf_emit_temp(m, "Y", err);
    bd_value *c0 = lift->lstm ? tf_emit_temp(m, "initial_c", err) : NULL;
    bd_value *yc = lift->lstm ? tf_emit_temp(m, "Y_c", err) : NULL;
    bd_value *yh = lift->sequences ? tf_emit_temp(m, "Y_h", err) : m->out;
    if (!starts || !ends || !axes || !xs || !wt || !rt || !bias || !h0 || !y || !yh ||
        (lift->lstm && (!c0 || !yc)))
        return err && err->code ? err->code : BD_ENOMEM;
    bd_node *rnn = NULL;
    int rc = tf_emit_node(m, "steps", "Slice", (bd_value *[]){ m->in[0], starts, ends, axes }, 4, xs,
                          NULL, err);
    if (rc == 0)
        rc = tf_emit_node(m, "initial_h", "Unsqueeze", (bd_value *[]){ m->in[4], axes }, 2, h0, NULL, err);
    if (rc == 0 && lift->lstm)
        rc = tf_emit_node(m, "initial_c", "Unsqueeze", (bd_value *[]){ m->in[5], axes }, 2, c0, NULL, err);
    if (rc == 0 && lift->lstm)
        rc = tf_emit_node_n(m, "lstm", "LSTM", (bd_value *[]){ xs, wt, rt, bias, NULL, h0, c0 }, 7,
                            (bd_value *[]){ y, yh, yc }, 3, &rnn, err);
    else if (rc == 0)
        rc = tf_emit_node_n(m, "gru", "GRU", (bd_value *[]){ xs, wt, rt, bias, NULL, h0 }, 6,
                            (bd_value *[]){ y, yh }, 2, &rnn, err);
    if (rc == 0)
        rc = set_int_attr(m->g, rnn, "hidden_size", H, err);
    if (rc == 0 && !lift->lstm)
        rc = set_int_attr(m->g, rnn, "linear_before_reset", 1, err);
    if (rc == 0 && lift->sequences) {                 /* Y [T, 1, B, H] -> [T, B, H] */
        const int64_t one = 1;
        bd_value *ax1 = i64s(m, "squeeze_axes", &one, 1, err);
        rc = ax1 ? tf_emit_node(m, NULL, "Squeeze", (bd_value *[]){ y, ax1 }, 2, m->out, NULL, err)
                 : (err && err->code ? err->code : BD_ENOMEM);
    }
    return rc;
}
