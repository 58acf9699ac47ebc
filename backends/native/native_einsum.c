/* Einsum on float and double: the equation (explicit "->" or implicit output, one "..." per
 * term with numpy's broadcasting, repeated labels = a diagonal) is parsed at compile into, for
 * every label, its size and its element stride in each operand and in the output (a repeated
 * label's strides add up; 0 where absent or broadcast). A run is one loop nest over all
 * labels: the innermost is the label the most operands (and the output) read contiguously,
 * and every other label is an odometer step that adds strides, so the inner loop is a plain
 * strided product-sum with no index math. Up to ES_MAX_OPS operands. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

#define ES_MAX_OPS    8
#define ES_N_LETTERS  52                              /* A-Z then a-z: ids in ASCII order */
#define ES_MAX_LABELS (ES_N_LETTERS + BD_MAX_RANK)    /* ... adds one label per dim it covers */
#define ES_MAX_EQ     256

typedef struct es_plan {
    int     n_ops;
    int     n_loop;                          /* labels in the loop nest */
    int     loop[ES_MAX_LABELS];             /* their ids, outermost first */
    int64_t size[ES_MAX_LABELS];
    int64_t st[ES_MAX_OPS + 1][ES_MAX_LABELS];   /* [n_ops] is the output */
    int     out_rank;
    int64_t out_dims[BD_MAX_RANK];
} es_plan;

/* ---- parsing ------------------------------------------------------------------------------ */

static int letter_id(char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? 26 + c - 'a' : -1;
}

/* One term: its labels in order (the ellipsis as -1 once) into IDS; the count, or -1 when it
 * holds another character or a second ellipsis. */
static int parse_term(const char *t, size_t len, int *ids)
{
    int n = 0;
    bool ell = false;
    for (size_t i = 0; i < len; i++) {
        if (n == ES_MAX_LABELS)
            return -1;
        if (!strncmp(t + i, "...", 3) && i + 3 <= len && !ell) {
            ids[n++] = -1;
            ell = true;
            i += 2;
        } else if (letter_id(t[i]) >= 0) {
            ids[n++] = letter_id(t[i]);
        } else {
            return -1;
        }
    }
    return n;
}

/* Label ids of a term with the ellipsis expanded for an operand of RANK dims, E being the most
 * dims an ellipsis covers in any operand (its dims are right-aligned: ids ES_N_LETTERS + ...). */
static int expand_term(const int *ids, int n, int rank, int e, int *out)
{
    int letters = 0, r = 0;
    for (int i = 0; i < n; i++)
        letters += ids[i] >= 0;
    int cover = rank - letters;           /* dims the ellipsis stands for */
    for (int i = 0; i < n; i++) {
        if (ids[i] >= 0) {
            out[r++] = ids[i];
            continue;
        }
        for (int j = 0; j < cover; j++)
            out[r++] = ES_N_LETTERS + e - cover + j;
    }
    return r;
}

/* The sizes of an operand's labels LAB (SHAPE's dims) into P: false when a letter's sizes
 * disagree. An ellipsis dim of size 1 broadcasts against a larger one, as numpy's do. */
static bool label_sizes(es_plan *p, const int *lab, const bd_shape *s, bool *seen)
{
    for (int d = 0; d < s->rank; d++) {
        int l = lab[d];
        int64_t sz = s->dims[d];
        bool ell = l >= ES_N_LETTERS;
        if (!seen[l] || (ell && p->size[l] == 1))
            p->size[l] = sz;
        else if (p->size[l] != sz && !(ell && sz == 1))
            return false;
        seen[l] = true;
    }
    return true;
}

/* Operand OP's row-major strides added to its labels' (a repeated label's add up: the
 * diagonal); a broadcast dim adds none. */
static void label_strides(es_plan *p, int op, const int *lab, const bd_shape *s)
{
    int64_t st[BD_MAX_RANK];
    nv_strides(s->rank, s->dims, st);
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] == p->size[lab[d]])
            p->st[op][lab[d]] += st[d];
}

/* The loop nest: output labels in order, then the summed ones; innermost, the label read
 * contiguously by the output (counted twice) and by the most operands. */
static void order_loops(es_plan *p, const bool *seen, const bool *in_out, const int *out,
                        int out_rank)
{
    int best = -1, best_score = -1;
    for (int l = 0; l < ES_MAX_LABELS; l++) {
        if (!seen[l])
            continue;
        int score = 2 * (p->st[p->n_ops][l] == 1);
        for (int k = 0; k < p->n_ops; k++)
            score += p->st[k][l] == 1;
        if (score > best_score) {
            best = l;
            best_score = score;
        }
    }
    p->n_loop = 0;
    for (int i = 0; i < out_rank; i++)
        if (out[i] != best)
            p->loop[p->n_loop++] = out[i];
    for (int l = 0; l < ES_MAX_LABELS; l++)
        if (seen[l] && !in_out[l] && l != best)
            p->loop[p->n_loop++] = l;
    if (best >= 0)
        p->loop[p->n_loop++] = best;
}

/* The implicit output: the ellipsis dims, then the letters used exactly once, in ASCII order. */
static int implicit_output(const int *count, int e, int *out)
{
    int r = 0;
    for (int j = 0; j < e; j++)
        out[r++] = ES_N_LETTERS + j;
    for (int l = 0; l < ES_N_LETTERS; l++)
        if (count[l] == 1)
            out[r++] = l;
    return r;
}

/* The terms of the left-hand side LHS (LEN chars) into IDS/CNT, one per operand of N, and the
 * most dims an ellipsis covers into *E. False with WHY when they do not parse or fit. */
static bool parse_inputs(const bd_node *n, const char *lhs, size_t len, int ids[][ES_MAX_LABELS],
                         int *cnt, int *e, char *why, size_t wlen)
{
    const char *t = lhs, *stop = lhs + len, *eq = bd_node_attr_string(n, "equation", "");
    *e = 0;
    for (size_t k = 0; k < n->n_inputs; k++) {
        const char *end = memchr(t, ',', (size_t)(stop - t));
        if ((k + 1 < n->n_inputs) != (end != NULL))
            return nv_why(why, wlen, "Einsum: '%s' does not have %zu terms", eq, n->n_inputs);
        end = end ? end : stop;
        if ((cnt[k] = parse_term(t, (size_t)(end - t), ids[k])) < 0)
            return nv_why(why, wlen, "Einsum: cannot parse term %zu of '%s'", k, eq);
        int letters = 0, rank = n->inputs[k]->shape.rank;
        bool ell = false;
        for (int i = 0; i < cnt[k]; i++) {
            letters += ids[k][i] >= 0;
            ell |= ids[k][i] < 0;
        }
        if (ell ? letters > rank : letters != rank)
            return nv_why(why, wlen, "Einsum: term %zu of '%s' does not match rank %d", k, eq, rank);
        if (ell && rank - letters > *e)
            *e = rank - letters;
        t = end + 1;
    }
    return true;
}

/* The output labels into OUT (the count, -1 when they do not parse): the right-hand side RHS,
 * or the implicit output when there is none. */
static int parse_output(const char *rhs, const int *count, int e, int *out)
{
    if (!rhs)
        return implicit_output(count, e, out);
    int ids[ES_MAX_LABELS], n = parse_term(rhs, strlen(rhs), ids);
    if (n < 0 || n > BD_MAX_RANK + 1)        /* more could not fit an output anyway */
        return -1;
    bool ell = false;
    for (int i = 0; i < n; i++)
        ell |= ids[i] < 0;
    return expand_term(ids, n, ell ? n - 1 + e : n, e, out);
}

/* Parse N's equation against its static shapes into P; false with WHY when it cannot. */
static bool es_parse(const bd_node *n, es_plan *p, char *why, size_t len)
{
    const char *eq = bd_node_attr_string(n, "equation", NULL);
    char buf[ES_MAX_EQ];
    size_t m = 0;
    if (!eq || strlen(eq) >= sizeof buf)
        return nv_why(why, len, "Einsum: no equation, or one longer than %d", ES_MAX_EQ - 1);
    for (size_t i = 0; eq[i]; i++)
        if (eq[i] != ' ')
            buf[m++] = eq[i];
    buf[m] = '\0';
    const char *arrow = strstr(buf, "->");
    memset(p, 0, sizeof *p);
    p->n_ops = (int)n->n_inputs;
    int ids[ES_MAX_OPS][ES_MAX_LABELS], cnt[ES_MAX_OPS], e;
    if (!parse_inputs(n, buf, arrow ? (size_t)(arrow - buf) : m, ids, cnt, &e, why, len))
        return false;
    bool seen[ES_MAX_LABELS] = { false };
    int lab[ES_MAX_OPS][ES_MAX_LABELS], count[ES_MAX_LABELS] = { 0 }, out[ES_MAX_LABELS];
    for (int k = 0; k < p->n_ops; k++) {
        int r = expand_term(ids[k], cnt[k], n->inputs[k]->shape.rank, e, lab[k]);
        for (int i = 0; i < r; i++)
            count[lab[k][i]]++;
        if (!label_sizes(p, lab[k], &n->inputs[k]->shape, seen))
            return nv_why(why, len, "Einsum: the sizes of a label disagree in '%s'", eq);
    }
    for (int k = 0; k < p->n_ops; k++)
        label_strides(p, k, lab[k], &n->inputs[k]->shape);
    int out_rank = parse_output(arrow ? arrow + 2 : NULL, count, e, out);
    if (out_rank < 0 || out_rank > BD_MAX_RANK)
        return nv_why(why, len, "Einsum: cannot parse the output of '%s'", eq);
    bool in_out[ES_MAX_LABELS] = { false };
    for (int i = 0; i < out_rank; i++) {
        if (!seen[out[i]] || in_out[out[i]])
            return nv_why(why, len, "Einsum: output label %d of '%s' is repeated or unknown", i, eq);
        in_out[out[i]] = true;
        p->out_dims[i] = p->size[out[i]];
    }
    int64_t st[BD_MAX_RANK];
    nv_strides(out_rank, p->out_dims, st);
    for (int i = 0; i < out_rank; i++)
        p->st[p->n_ops][out[i]] = st[i];
    p->out_rank = out_rank;
    bd_shape want = bd_shape_make(out_rank, p->out_dims);
    if (!bd_shape_equal(&want, &n->outputs[0]->shape))
        return nv_why(why, len, "Einsum: '%s' gives another output shape than the node's", eq);
    order_loops(p, seen, in_out, out, out_rank);
    return true;
}

/* ---- the run ---------------------------------------------------------------------------- */

/* The innermost loop at offsets OFF: LEN steps of strides SO (the output's is SO[n_ops]). A
 * summed label accumulates in double and adds once; an output label adds into each element. */
typedef void (*es_inner_fn)(int n_ops, const void *const *x, void *y, const size_t *off,
                            const int64_t *so, size_t len);

#define ES_INNER(sfx, T)                                                                      \
    static void inner_##sfx(int n_ops, const void *const *x, void *y, const size_t *off,      \
                            const int64_t *so, size_t len)                                    \
    {                                                                                         \
        const T *a = (const T *)x[0] + off[0];                                                \
        const T *b = n_ops > 1 ? (const T *)x[1] + off[1] : a;                                \
        int64_t sa = so[0], sb = n_ops > 1 ? so[1] : 0, sy = so[n_ops];                       \
        T *py = (T *)y + off[n_ops];                                                          \
        double acc = 0;                                                                       \
        for (size_t j = 0; j < len; j++) {                                                    \
            int64_t jj = (int64_t)j;                                                          \
            T v = n_ops > 1 ? a[jj * sa] * b[jj * sb] : a[jj * sa];                           \
            for (int k = 2; k < n_ops; k++)                                                   \
                v *= ((const T *)x[k])[(int64_t)off[k] + jj * so[k]];                         \
            if (sy)                                                                           \
                py[jj * sy] += v;                                                             \
            else                                                                              \
                acc += v;                                                                     \
        }                                                                                     \
        if (!sy)                                                                              \
            *py += (T)acc;                                                                    \
    }
ES_INNER(f32, float)
ES_INNER(f64, double)

/* The odometer over every loop but the innermost: each step adds the label's strides to the
 * offsets (and takes back a whole turn when it wraps). */
static void loop_nest(const es_plan *p, es_inner_fn inner, const void *const *x, void *y)
{
    int in = p->n_loop ? p->loop[p->n_loop - 1] : -1;     /* none: every operand a scalar */
    size_t total = 1, len = in >= 0 ? (size_t)p->size[in] : 1, off[ES_MAX_OPS + 1] = { 0 };
    int64_t so[ES_MAX_OPS + 1], c[ES_MAX_LABELS] = { 0 };
    for (int i = 0; i < p->n_loop; i++)
        total *= (size_t)p->size[p->loop[i]];
    if (total == 0)
        return;
    total /= len;
    for (int k = 0; k <= p->n_ops; k++)
        so[k] = in >= 0 ? p->st[k][in] : 0;
    for (size_t it = 0; it < total; it++) {
        inner(p->n_ops, x, y, off, so, len);
        for (int d = p->n_loop - 2; d >= 0; d--) {
            int l = p->loop[d];
            for (int k = 0; k <= p->n_ops; k++)
                off[k] += (size_t)p->st[k][l];
            if (++c[d] < p->size[l])
                break;
            for (int k = 0; k <= p->n_ops; k++)
                off[k] -= (size_t)(p->st[k][l] * p->size[l]);
            c[d] = 0;
        }
    }
}

static bool einsum_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || n->n_inputs > ES_MAX_OPS || n->n_outputs != 1)
        return nv_why(why, len, "Einsum: 1 to %d operands and one output", ES_MAX_OPS);
    for (size_t k = 0; k < n->n_inputs; k++)
        if (!n->inputs[k] || n->inputs[k]->dtype != n->outputs[0]->dtype)
            return nv_why(why, len, "Einsum: operand %zu is omitted or of another dtype", k);
    if (!nv_io_ok(n, n->n_inputs, NV_DT_FLOATS, why, len))
        return false;
    es_plan *p = malloc(sizeof *p);
    if (!p)
        return nv_why(why, len, "Einsum: out of memory");
    bool ok = es_parse(n, p, why, len);
    free(p);
    return ok;
}

static int einsum_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    (void)err;
    const es_plan *p = s->heap;
    const void *x[ES_MAX_OPS];
    for (int k = 0; k < p->n_ops; k++)
        x[k] = in[k].data;
    memset(out[0].data, 0, out[0].numel * bd_dtype_size(out[0].dtype));
    loop_nest(p, out[0].dtype == BD_DT_FLOAT ? inner_f32 : inner_f64, x, out[0].data);
    return 0;
}

static int einsum_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    char why[160];
    es_plan *p = malloc(sizeof *p);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    s->heap = p;
    if (!es_parse(n, p, why, sizeof why))
        return bd_error_set(err, BD_EUNSUPPORTED, "%s", why);
    s->run = einsum_run;
    return 0;
}

const nv_op nv_einsum_ops[] = {
    { "Einsum", einsum_supports, einsum_prepare },
};
const size_t nv_einsum_n = sizeof nv_einsum_ops / sizeof nv_einsum_ops[0];
