/* Recurrent layers: LSTM (4 gates, outputs Y, Y_h, Y_c), GRU (3 gates; Y, Y_h) and RNN (1 gate;
 * Y, Y_h). With num_directions D (2 when bidirectional) and hidden size H:
 *
 *   layout 0: X [seq, batch, in]   Y [seq, D, batch, H]   Y_h, Y_c, initial_h/c [D, batch, H]
 *   layout 1: X [batch, seq, in]   Y [batch, seq, D, H]   Y_h, Y_c, initial_h/c [batch, D, H]
 *   W [D, G*H, in], R [D, G*H, H], B [D, 2*G*H], sequence_lens [batch] (INT32), P [D, 3*H]
 *
 * H is the hidden_size attribute, else what R (or W) says. The outputs' ranks never depend on
 * X's, so an unranked X still gives them, with its dims dynamic. */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

/* Fail unless V (when ranked) has DIMS (-1 = any) for its RANK dims; WHAT names it and WHY
 * says what each dim is. */
static int expect_shape(const bd_node *n, const char *what, const bd_value *v, int rank,
                        const int64_t *dims, const char *const *why, bd_error *err)
{
    int rc;
    if (!shp_ranked(v))
        return 0;
    if ((rc = shp_expect_rank(n, what, v, rank, err)))
        return rc;
    for (int i = 0; i < rank; i++)
        if ((rc = shp_expect_dim(n, what, v, i, dims[i], why[i], err)))
            return rc;
    return 0;
}

int shp_rnn(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, dir;
    static const char *const dirs[] = { "forward", "reverse", "bidirectional" };
    bool lstm = strcmp(n->op_type, "LSTM") == 0, gru = strcmp(n->op_type, "GRU") == 0;
    int64_t gates = lstm ? 4 : gru ? 3 : 1, hidden, layout, gh, gh2, h3 = -1;
    if ((rc = shp_attr_choice(n, "direction", dirs, 3, 0, &dir, err)) ||
        (rc = shp_attr_int(n, "hidden_size", -1, &hidden, err)) ||
        (rc = shp_attr_int(n, "layout", 0, &layout, err)))
        return rc;
    if (bd_node_attr(n, "hidden_size") && hidden < 1)
        return shp_fail(err, n, "attribute 'hidden_size' = %lld, expected >= 1", (long long)hidden);
    if (layout != 0 && layout != 1)
        return shp_fail(err, n, "attribute 'layout' = %lld, expected 0 or 1", (long long)layout);
    int64_t nd = dir == 2 ? 2 : 1;
    bd_value *x = shp_in(n, 0), *w = shp_in(n, 1), *r = shp_in(n, 2), *b = shp_in(n, 3),
             *lens = shp_in(n, 4), *h0 = shp_in(n, 5), *c0 = lstm ? shp_in(n, 6) : NULL,
             *p = lstm ? shp_in(n, 7) : NULL;
    if ((rc = shp_expect_rank(n, "X", x, 3, err)) || (rc = shp_expect_rank(n, "W", w, 3, err)) ||
        (rc = shp_expect_rank(n, "R", r, 3, err)))
        return rc;
    /* The hidden size: the attribute, else R's last dim, else W's dim 1 over the gates. */
    if (hidden < 0 && shp_ranked(r))
        hidden = r->shape.dims[2];
    if (hidden < 0 && shp_ranked(w) && w->shape.dims[1] >= 0) {
        if (w->shape.dims[1] % gates != 0)
            return shp_fail(err, n, "W '%s' has %lld rows, not a multiple of the %lld gates",
                            w->name, (long long)w->shape.dims[1], (long long)gates);
        hidden = w->shape.dims[1] / gates;
    }
    gh = gh2 = -1;
    if (hidden >= 0 && (!shp_mul(hidden, gates, &gh) || !shp_mul(gh, 2, &gh2) ||
                        !shp_mul(hidden, 3, &h3)))
        return shp_fail(err, n, "hidden size %lld overflows int64", (long long)hidden);
    int64_t seq = -1, batch = -1, in = -1;
    const char *seq_sym = NULL, *batch_sym = NULL;
    if (shp_ranked(x)) {
        int si = layout ? 1 : 0, bi = layout ? 0 : 1;
        seq = x->shape.dims[si];
        seq_sym = x->shape.sym[si];
        batch = x->shape.dims[bi];
        batch_sym = x->shape.sym[bi];
        in = x->shape.dims[2];
    }
    static const char *const why_w[] = { "num_directions", "gates x hidden_size", "input size" };
    static const char *const why_r[] = { "num_directions", "gates x hidden_size", "hidden_size" };
    static const char *const why_b[] = { "num_directions", "2 x gates x hidden_size" };
    static const char *const why_p[] = { "num_directions", "3 x hidden_size" };
    static const char *const why_h0[] = { "num_directions", "batch size", "hidden_size" };
    static const char *const why_h1[] = { "batch size", "num_directions", "hidden_size" };
    const int64_t dw[] = { nd, gh, in }, dr[] = { nd, gh, hidden }, db[] = { nd, gh2 },
                  dp[] = { nd, h3 }, dl[] = { batch };
    const int64_t dh0[] = { nd, batch, hidden }, dh1[] = { batch, nd, hidden };
    static const char *const why_l[] = { "batch size" };
    if ((rc = expect_shape(n, "W", w, 3, dw, why_w, err)) ||
        (rc = expect_shape(n, "R", r, 3, dr, why_r, err)) ||
        (rc = expect_shape(n, "B", b, 2, db, why_b, err)) ||
        (rc = expect_shape(n, "sequence_lens", lens, 1, dl, why_l, err)) ||
        (rc = expect_shape(n, "initial_h", h0, 3, layout ? dh1 : dh0, layout ? why_h1 : why_h0,
                           err)) ||
        (rc = expect_shape(n, "initial_c", c0, 3, layout ? dh1 : dh0, layout ? why_h1 : why_h0,
                           err)) ||
        (rc = expect_shape(n, "P", p, 2, dp, why_p, err)))
        return rc;
    if (lens && (rc = shp_check_dtype(n, "sequence_lens", lens, BD_DT_INT32, err)))
        return rc;
    bd_shape y = shp_dynamic(0), yh = shp_dynamic(0);
    if (layout) {
        y.rank = 4;
        y.dims[0] = batch, y.sym[0] = batch_sym;
        y.dims[1] = seq,   y.sym[1] = seq_sym;
        y.dims[2] = nd;
        y.dims[3] = hidden;
        yh.rank = 3;
        yh.dims[0] = batch, yh.sym[0] = batch_sym;
        yh.dims[1] = nd;
        yh.dims[2] = hidden;
    } else {
        y.rank = 4;
        y.dims[0] = seq,   y.sym[0] = seq_sym;
        y.dims[1] = nd;
        y.dims[2] = batch, y.sym[2] = batch_sym;
        y.dims[3] = hidden;
        yh.rank = 3;
        yh.dims[0] = nd;
        yh.dims[1] = batch, yh.sym[1] = batch_sym;
        yh.dims[2] = hidden;
    }
    for (size_t k = 0; k < n->n_outputs; k++)
        shp_set(n->outputs[k], x->dtype, k == 0 ? &y : &yh);
    return 0;
}
