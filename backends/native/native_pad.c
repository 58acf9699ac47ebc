/* Pad (constant, reflect and edge modes; negative pads crop) and Trilu, of any dtype: copies
 * whose output rows are part input row (one memcpy) and part fill (a constant or an edge
 * element replicated with memcpy doubling, or the reflected elements). */
#include <string.h>

#include "backends/native/native_movement.h"

enum { PAD_CONSTANT = 1, PAD_REFLECT, PAD_EDGE };

static int pad_mode(const bd_node *n)
{
    const char *m = bd_node_attr_string(n, "mode", "constant");
    return !strcmp(m, "constant") ? PAD_CONSTANT : !strcmp(m, "reflect") ? PAD_REFLECT
         : !strcmp(m, "edge")     ? PAD_EDGE     : 0;
}

/* The output dims YD and begin pads B[R] that PADS (COUNT values: begins then ends) give X
 * (rank R, dims XD); BD_EINVAL when they crop more than an axis holds or ask reflect or edge
 * of an empty axis. */
static int pad_dims(int r, const int64_t *xd, const int64_t *pads, int64_t count, int mode,
                    int64_t *yd, int64_t *b, bd_error *err)
{
    if (count != 2 * (int64_t)r)
        return bd_error_set(err, BD_EINVAL, "Pad: %lld pads for rank %d", (long long)count, r);
    for (int d = 0; d < r; d++) {
        int64_t lo = pads[d], hi = pads[r + d];
        if (lo < -xd[d] || hi < -xd[d] || __builtin_add_overflow(xd[d], lo, &yd[d]) ||
            __builtin_add_overflow(yd[d], hi, &yd[d]) || yd[d] < 0)
            return bd_error_set(err, BD_EINVAL, "Pad: pads %lld, %lld on axis %d of size %lld "
                                "give no valid size", (long long)lo, (long long)hi, d,
                                (long long)xd[d]);
        if (mode != PAD_CONSTANT && xd[d] == 0 && yd[d] > 0)
            return bd_error_set(err, BD_EINVAL, "Pad: reflect or edge of the empty axis %d", d);
        b[d] = lo;
    }
    return 0;
}

/* ---- supports ---------------------------------------------------------------------------- */

/* The pads when known at compile (the attribute before opset 11, else a constant input) into
 * PADS; the count, or -1 when only the run knows them. */
static int64_t const_pads(const bd_node *n, int64_t *pads)
{
    const int64_t *a;
    size_t count = bd_node_attr_ints(n, "pads", &a);
    if (bd_node_attr(n, "pads")) {
        if (count > 2 * BD_MAX_RANK)
            return 2 * BD_MAX_RANK + 1;     /* too many for any rank: pad_dims refuses it */
        if (count)
            memcpy(pads, a, count * sizeof *pads);
        return (int64_t)count;
    }
    return nv_input_const(n, 1) ? nv_const_ints(n->inputs[1], pads, 2 * BD_MAX_RANK) : -1;
}

/* The operands' form: the pads an attribute (opset < 11) or an INT64 input, the optional
 * constant value a scalar of X's dtype, no axes (opset 18). */
static bool pad_form_ok(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    int dt = n->inputs[0]->dtype;
    if (bd_graph_opset(g) < 11) {
        float v = bd_node_attr_float(n, "value", 0.0f);
        if (!bd_node_attr(n, "pads") || n->n_inputs != 1)
            return nv_why(why, len, "Pad: the pads attribute is required before opset 11");
        if (v != 0 && !(NV_DT_NUMERIC & NV_DT(dt)))
            return nv_why(why, len, "Pad: a non-zero value attribute on %s", bd_dtype_name(dt));
        return true;
    }
    const bd_value *p = bd_node_input(n, 1), *v = bd_node_input(n, 2);
    if (bd_node_attr(n, "pads") || !p || n->n_inputs > 3)
        return nv_why(why, len, "Pad: expects the pads input and no axes (opset >= 11)");
    if (!nv_value_ok(p, NV_DT(BD_DT_INT64)) || p->shape.rank != 1)
        return nv_why(why, len, "Pad: pads must be a static INT64 vector");
    if (v && (!nv_value_ok(v, NV_DT_ANY) || v->dtype != dt || nv_shape_numel(&v->shape) != 1))
        return nv_why(why, len, "Pad: constant_value must be one %s", bd_dtype_name(dt));
    return true;
}

/* The output's shape may be known only at run time when the pads are a run-time input. */
bool nv_pad_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    int64_t pads[2 * BD_MAX_RANK], yd[BD_MAX_RANK], b[BD_MAX_RANK];
    bool runtime = bd_graph_opset(g) >= 11 && bd_node_input(n, 1) && !nv_input_const(n, 1);
    if (!nv_move_io_ok(n, runtime, why, len))
        return false;
    if (!pad_mode(n))
        return nv_why(why, len, "Pad: mode '%s'", bd_node_attr_string(n, "mode", ""));
    if (!pad_form_ok(g, n, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    int64_t count = const_pads(n, pads);
    bd_error err = { 0 };
    if (y->rank >= 0 && y->rank != x->rank)
        return nv_why(why, len, "Pad: the output rank differs from the input's");
    if (count < 0)
        return true;                    /* the run checks the pads */
    if (pad_dims(x->rank, x->dims, pads, count, pad_mode(n), yd, b, &err))
        return nv_why(why, len, "%s", err.msg);
    if (memcmp(yd, y->dims, (size_t)x->rank * sizeof *yd))
        return nv_why(why, len, "Pad: the pads do not give the output's shape");
    return true;
}

/* ---- the kernel and prepare -------------------------------------------------------------- */

/* The padded copy, its dims merged where the pads allow: X, Y and begin pad B per dim. */
typedef struct pad_job {
    int         rank, mode;
    int64_t     x[BD_MAX_RANK], y[BD_MAX_RANK], b[BD_MAX_RANK];
    const char *val;            /* the constant's bytes */
    size_t      es;
} pad_job;

/* Merge an unpadded dim into the one before it when that is unpadded too (any mode), or in
 * constant mode (whole sub-rows are padded), so rows get as long as they can. */
static void pad_collapse(pad_job *p, int r, const int64_t *xd, const int64_t *yd, const int64_t *b)
{
    p->rank = 0;
    for (int d = 0; d < r; d++) {
        int k = p->rank;
        bool flat = b[d] == 0 && xd[d] == yd[d];
        bool prev_flat = k > 0 && p->b[k - 1] == 0 && p->x[k - 1] == p->y[k - 1];
        if (k > 0 && flat && (p->mode == PAD_CONSTANT || prev_flat)) {
            p->x[k - 1] *= xd[d];
            p->y[k - 1] *= yd[d];
            p->b[k - 1] *= xd[d];
            continue;
        }
        p->x[k] = xd[d], p->y[k] = yd[d], p->b[k] = b[d];
        p->rank++;
    }
    if (p->rank == 0) {                 /* a scalar */
        p->x[0] = p->y[0] = 1;
        p->b[0] = 0;
        p->rank = 1;
    }
}

/* The input index output position I - B reads on an axis of N (> 0) elements; -1: the fill. */
static int64_t pad_source(int64_t i, int64_t n, int mode)
{
    if (mode == PAD_EDGE)
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (mode == PAD_CONSTANT || n == 1)
        return i >= 0 && i < n ? i : mode == PAD_CONSTANT ? -1 : 0;
    int64_t period = 2 * (n - 1);       /* reflect: numpy's, repeated when pads exceed n - 1 */
    i %= period;
    i = i < 0 ? i + period : i;
    return i < n ? i : period - i;
}

/* COUNT copies of the element ELEM at Y. */
static void fill(char *y, const char *elem, size_t es, int64_t count)
{
    if (count <= 0)
        return;
    memcpy(y, elem, es);
    nv_replicate(y, es, (size_t)count);
}

/* Output positions [FROM, TO) of a row reflecting input row SRC (X elements, begin pad B). */
static void reflect(char *y, const char *src, int64_t from, int64_t to, int64_t b, int64_t x,
                    size_t es)
{
    for (int64_t o = from; o < to; o++)
        memcpy(y + o * (int64_t)es, src + pad_source(o - b, x, PAD_REFLECT) * (int64_t)es, es);
}

/* One output row from input row SRC (NULL: a row of the constant). */
static void pad_row(const pad_job *p, const char *src, char *y)
{
    int r = p->rank;
    int64_t n = p->y[r - 1], x = p->x[r - 1], b = p->b[r - 1];
    size_t es = p->es;
    if (!src) {
        fill(y, p->val, es, n);
        return;
    }
    int64_t lo = b < 0 ? 0 : b > n ? n : b, hi = b + x < 0 ? 0 : b + x > n ? n : b + x;
    if (hi > lo)
        memcpy(y + lo * (int64_t)es, src + (lo - b) * (int64_t)es, (size_t)(hi - lo) * es);
    if (p->mode == PAD_CONSTANT) {
        fill(y, p->val, es, lo);
        fill(y + hi * (int64_t)es, p->val, es, n - hi);
    } else if (p->mode == PAD_EDGE) {
        fill(y, src, es, lo);
        fill(y + hi * (int64_t)es, src + (x - 1) * (int64_t)es, es, n - hi);
    } else {
        reflect(y, src, 0, lo, b, x, es);
        reflect(y, src, hi, n, b, x, es);
    }
}

static void pad_fill(const pad_job *p, const char *x, char *y, size_t y_numel)
{
    int r = p->rank;
    int64_t idx[BD_MAX_RANK] = { 0 }, row_bytes = p->y[r - 1] * (int64_t)p->es;
    size_t rows = y_numel / (size_t)p->y[r - 1];
    for (size_t q = 0; q < rows; q++, y += row_bytes) {
        int64_t off = 0;                /* the input row, Horner over the outer dims */
        for (int d = 0; d < r - 1 && off >= 0; d++) {
            int64_t i = pad_source(idx[d] - p->b[d], p->x[d], p->mode);
            off = i < 0 ? -1 : off * p->x[d] + i;
        }
        bool fill_row = off < 0 || p->x[r - 1] == 0;     /* no input element to read */
        pad_row(p, fill_row ? NULL : x + off * p->x[r - 1] * (int64_t)p->es, y);
        for (int d = r - 2; d >= 0 && ++idx[d] == p->y[d]; d--)
            idx[d] = 0;
    }
}

static int pad_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    int64_t buf[2 * BD_MAX_RANK], b[BD_MAX_RANK], yd[BD_MAX_RANK];
    int64_t count = 2 * (int64_t)in[0].rank;
    const int64_t *pads = &s->ip[1];
    if (!s->ip[0]) {
        count = nv_run_ints(&in[1], buf, 2 * BD_MAX_RANK, "Pad: pads", err);
        if (count < 0)
            return (int)count;
        pads = buf;
    }
    int rc = pad_dims(in[0].rank, in[0].dims, pads, count, s->op, yd, b, err);
    if (rc || (rc = nv_output_shape(env, s, out, 0, in[0].rank, yd, err)) || out[0].numel == 0)
        return rc;
    pad_job p = { .mode = s->op, .es = bd_dtype_size(in[0].dtype),
                  .val = (const char *)&s->ip[17] };
    if (s->n_in > 2 && s->in[2] >= 0)
        p.val = in[2].data;
    pad_collapse(&p, in[0].rank, in[0].dims, out[0].dims, b);
    pad_fill(&p, in[0].data, out[0].data, out[0].numel);
    return 0;
}

/* ip[0]: 1 when the pads are an attribute, then in ip[1..2r]; ip[17]: the fill's bytes. */
int nv_pad_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = pad_mode(n);
    if (bd_node_attr(n, "pads")) {
        s->ip[0] = 1;
        const_pads(n, &s->ip[1]);
        float v = bd_node_attr_float(n, "value", 0.0f);
        if (v != 0)
            nv_set_f(&s->ip[17], n->inputs[0]->dtype, 0, v);
    }
    s->run = pad_run;
    return 0;
}

/* ---- Trilu ------------------------------------------------------------------------------- */

bool nv_trilu_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!nv_move_io_ok(n, false, why, len))
        return false;
    const bd_value *k = bd_node_input(n, 1);
    const bd_shape *x = &n->inputs[0]->shape;
    if (n->n_inputs > 2 ||
        (k && (!nv_value_ok(k, NV_DT(BD_DT_INT64)) || nv_shape_numel(&k->shape) != 1)))
        return nv_why(why, len, "Trilu: k must be one INT64");
    if (x->rank < 2 || !bd_shape_equal(x, &n->outputs[0]->shape))
        return nv_why(why, len, "Trilu: needs rank >= 2 and the output of the input's shape");
    return true;
}

/* Each row of each matrix is the input's from column A on (upper) or up to A (lower), zeros
 * elsewhere; zero bytes are zero in every dtype. */
static int trilu_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    (void)env;
    int64_t k = 0;
    if (s->n_in > 1 && s->in[1] >= 0) {
        int64_t count = nv_run_ints(&in[1], &k, 1, "Trilu: k", err);
        if (count != 1)
            return count < 0 ? (int)count : bd_error_set(err, BD_EINVAL, "Trilu: k is empty");
    }
    int r = in[0].rank;
    int64_t rows = in[0].dims[r - 2], cols = in[0].dims[r - 1];
    size_t es = bd_dtype_size(in[0].dtype), row = (size_t)cols * es;
    if (in[0].numel == 0)
        return 0;
    k = k < -rows ? -rows : k > cols ? cols : k;      /* beyond: all or nothing, no overflow */
    const char *x = in[0].data;
    char *y = out[0].data;
    for (size_t i = 0; i < in[0].numel / (size_t)cols; i++, x += row, y += row) {
        int64_t a = (int64_t)(i % (size_t)rows) + k + (s->ip[0] ? 0 : 1);
        size_t cut = (size_t)(a < 0 ? 0 : a > cols ? cols : a) * es;
        if (s->ip[0]) {                 /* upper: keep columns j >= i + k */
            memset(y, 0, cut);
            memcpy(y + cut, x + cut, row - cut);
        } else {                        /* lower: keep columns j <= i + k */
            memcpy(y, x, cut);
            memset(y + cut, 0, row - cut);
        }
    }
    return 0;
}

int nv_trilu_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "upper", 1) != 0;
    s->run = trilu_run;
    return 0;
}
