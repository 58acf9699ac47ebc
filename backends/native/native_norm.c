/* Normalisations on float and double: LayerNormalization (any axis, optional Mean and
 * InvStdDev outputs), InstanceNormalization, MeanVarianceNormalization, LpNormalization and
 * LRN.
 *
 * The first four normalise groups of elements: every element whose index agrees on the kept
 * axes forms a group over the reduced ones (LayerNormalization: the axes from `axis` on;
 * InstanceNormalization: the spatial axes; MeanVarianceNormalization: `axes`;
 * LpNormalization: `axis`). The shape collapses into runs of kept and reduced axes, as the
 * reductions' does, so a group is a few strided rows. Each group takes two passes in double
 * (the mean, then the squared deviations: no cancellation) and one that writes:
 *
 *   LayerNormalization   (x - mean) / sqrt(var + epsilon) * scale + B, scale and B broadcast
 *                        over the normalised axes (expanded once per run into scratch)
 *   InstanceNormalization the same per (n, c), scale and B indexed by the channel
 *   MeanVariance...      (x - mean) / (sqrt(var) + 1e-9), as ONNX's function body computes
 *   LpNormalization      x / ||x||_p (p 1 or 2); a zero norm gives zeros, as ONNX Runtime
 *
 * LayerNormalization computes in double whatever stash_type says (at least its precision).
 * LRN sums squares over a window of channels: x / (bias + alpha / size * sum)^beta. Groups
 * (and LRN's channel rows) split across the plan's threads. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { NM_LAYER, NM_INSTANCE, NM_MVN, NM_LP };

/* ---- geometry ------------------------------------------------------------------------------ */

/* Kept and reduced runs of a shape (size-1 axes dropped, neighbours of one kind merged). */
typedef struct ng_geom {
    int     nk, nr;
    int64_t kd[BD_MAX_RANK], ks[BD_MAX_RANK];    /* kept runs: sizes, strides */
    int64_t rd[BD_MAX_RANK], rs[BD_MAX_RANK];    /* reduced runs: sizes, strides */
    size_t  groups, count;                       /* groups; elements in each */
} ng_geom;

static void ng_plan(const int64_t *dims, int rank, const bool *red, ng_geom *g)
{
    int64_t d[BD_MAX_RANK], st[BD_MAX_RANK];
    bool r[BD_MAX_RANK];
    int n = 0;
    memset(g, 0, sizeof *g);
    g->groups = g->count = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 1)
            continue;
        if (n > 0 && r[n - 1] == red[i]) {
            d[n - 1] *= dims[i];
        } else {
            d[n] = dims[i];
            r[n++] = red[i];
        }
    }
    nv_strides(n, d, st);
    for (int i = 0; i < n; i++) {
        if (r[i]) {
            g->rd[g->nr] = d[i];
            g->rs[g->nr++] = st[i];
            g->count *= (size_t)d[i];
        } else {
            g->kd[g->nk] = d[i];
            g->ks[g->nk++] = st[i];
            g->groups *= (size_t)d[i];
        }
    }
    if (g->nr == 0) {                   /* nothing reduced: groups of one element */
        g->rd[0] = 1;
        g->rs[0] = 1;
        g->nr = 1;
    }
}

/* The offset of element I of the row-major space of N runs (sizes D, strides S). */
static size_t run_offset(size_t i, int n, const int64_t *d, const int64_t *s)
{
    size_t off = 0;
    for (int k = n - 1; k >= 0; k--) {
        off += (i % (size_t)d[k]) * (size_t)s[k];
        i /= (size_t)d[k];
    }
    return off;
}

/* ---- the group kernel ---------------------------------------------------------------------- */

typedef struct ng_job {
    const nv_step *s;
    ng_geom        g;
    const void    *x;
    void          *y;
    int            dtype;
    const double  *ws, *bs;        /* LayerNormalization: scale and B per reduced element */
    const void    *wc, *bc;        /* InstanceNormalization: scale and B per channel */
    size_t         channels;
    void          *mean, *inv;     /* LayerNormalization's optional statistics */
    int            mean_dt, inv_dt;
    double         eps;
    int            p;              /* LpNormalization */
} ng_job;

/* One pass over group G's elements: BODY sees `v` (the element, as a double) and `at` (its
 * offset); E counts the elements in row-major order of the reduced runs. */
#define FOR_GROUP(T, x, G, base, BODY)                                                        \
    do {                                                                                      \
        size_t len_ = (size_t)(G)->rd[(G)->nr - 1], st_ = (size_t)(G)->rs[(G)->nr - 1];       \
        size_t rows_ = len_ ? (G)->count / len_ : 0, e = 0;                                   \
        for (size_t r_ = 0; r_ < rows_; r_++) {                                               \
            size_t row_ = (base) + run_offset(r_, (G)->nr - 1, (G)->rd, (G)->rs);             \
            for (size_t i_ = 0; i_ < len_; i_++, e++) {                                       \
                size_t at = row_ + i_ * st_;                                                  \
                double v = (x)[at];                                                           \
                BODY;                                                                         \
            }                                                                                 \
        }                                                                                     \
        (void)e;                                                                              \
    } while (0)

#define NG_KERNEL(sfx, T)                                                                     \
    static void groups_##sfx(void *vjob, size_t lo, size_t cnt)                               \
    {                                                                                         \
        const ng_job *j = vjob;                                                               \
        const ng_geom *g = &j->g;                                                             \
        const T *x = j->x;                                                                    \
        T *y = j->y;                                                                          \
        int op = j->s->op;                                                                    \
        double n = (double)g->count;                                                          \
        for (size_t q = lo; q < lo + cnt; q++) {                                              \
            size_t base = run_offset(q, g->nk, g->kd, g->ks);                                 \
            double sum = 0, sq = 0, mean = 0, scale, shift = 0;                               \
            if (op == NM_LP) {                                                                \
                if (j->p == 1)                                                                \
                    FOR_GROUP(T, x, g, base, sum += fabs(v));                                 \
                else                                                                          \
                    FOR_GROUP(T, x, g, base, sum += v * v);                                   \
                double norm = j->p == 1 ? sum : sqrt(sum);                                    \
                scale = norm == 0 ? 0 : 1 / norm;                                             \
                FOR_GROUP(T, x, g, base, y[at] = (T)(norm == 0 ? 0 : v * scale));             \
                continue;                                                                     \
            }                                                                                 \
            FOR_GROUP(T, x, g, base, sum += v);                                               \
            mean = sum / n;                                                                   \
            FOR_GROUP(T, x, g, base, sq += (v - mean) * (v - mean));                          \
            scale = op == NM_MVN ? 1 / (sqrt(sq / n) + 1e-9) : 1 / sqrt(sq / n + j->eps);     \
            if (op == NM_LAYER) {                                                             \
                const double *ws = j->ws, *bs = j->bs;                                        \
                if (bs)                                                               \
                    FOR_GROUP(T, x, g, base, y[at] = (T)((v - mean) * scale * ws[e] + bs[e])); \
                else                                                                          \
                    FOR_GROUP(T, x, g, base, y[at] = (T)((v - mean) * scale * ws[e]));        \
                if (j->mean)                                                                  \
                    nv_set_f(j->mean, j->mean_dt, q, mean);                                   \
                if (j->inv)                                                                   \
                    nv_set_f(j->inv, j->inv_dt, q, scale);                                    \
                continue;                                                                     \
            }                                                                                 \
            if (op == NM_INSTANCE) {                                                          \
                size_t c = q % j->channels;                                                   \
                double w = ((const T *)j->wc)[c];                                             \
                shift = ((const T *)j->bc)[c] - mean * scale * w;                             \
                scale *= w;                                                                   \
            } else {                                                                          \
                shift = -mean * scale;                                                        \
            }                                                                                 \
            FOR_GROUP(T, x, g, base, y[at] = (T)(v * scale + shift));                         \
        }                                                                                     \
    }
NG_KERNEL(f32, float)
NG_KERNEL(f64, double)

/* ---- supports ------------------------------------------------------------------------------- */

/* P (scale or bias) broadcasts onto the trailing dims NORM (RANK of them) of X. */
static bool broadcasts_onto(const bd_value *p, const int64_t *norm, int rank)
{
    if (p->shape.rank > rank)
        return false;
    for (int k = 1; k <= p->shape.rank; k++) {
        int64_t pd = p->shape.dims[p->shape.rank - k], xd = norm[rank - k];
        if (pd != 1 && pd != xd)
            return false;
    }
    return true;
}

static bool layer_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 2 || n->n_inputs > 3 || !n->inputs[0] || !n->inputs[1] ||
        n->n_outputs < 1 || n->n_outputs > 3)
        return nv_why(why, len, "LayerNormalization: expects X, Scale, optional B and 1-3 "
                      "outputs");
    const bd_value *x = n->inputs[0];
    if (!nv_io_ok(n, 3, NV_DT_FLOATS, why, len))
        return false;
    const bd_shape *xs = &x->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", -1), xs->rank);
    if (xs->rank < 1 || ax < 0)
        return nv_why(why, len, "LayerNormalization: axis out of range for rank %d", xs->rank);
    for (size_t i = 1; i < n->n_inputs; i++) {
        const bd_value *p = n->inputs[i];
        if (p && (p->dtype != x->dtype || !broadcasts_onto(p, xs->dims + ax, xs->rank - ax)))
            return nv_why(why, len, "LayerNormalization: %s must be %s and broadcast onto the "
                          "normalised dims", i == 1 ? "Scale" : "B", bd_dtype_name(x->dtype));
    }
    if (n->outputs[0]->dtype != x->dtype || !bd_shape_equal(&n->outputs[0]->shape, xs))
        return nv_why(why, len, "LayerNormalization: Y must be X's dtype and shape");
    int64_t stat[BD_MAX_RANK];
    for (int d = 0; d < xs->rank; d++)
        stat[d] = d < ax ? xs->dims[d] : 1;
    bd_shape ss = bd_shape_make(xs->rank, stat);
    for (size_t k = 1; k < n->n_outputs; k++)
        if (!bd_shape_equal(&n->outputs[k]->shape, &ss))
            return nv_why(why, len, "LayerNormalization: %s must be X's shape with 1 from the "
                          "axis on", k == 1 ? "Mean" : "InvStdDev");
    return true;
}

static bool instance_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 3 || !n->inputs[0] || !n->inputs[1] || !n->inputs[2] ||
        n->n_outputs != 1)
        return nv_why(why, len, "InstanceNormalization: expects input, scale, B and one output");
    if (!nv_io_ok(n, 3, NV_DT_FLOATS, why, len))
        return false;
    const bd_value *x = n->inputs[0];
    const bd_shape *xs = &x->shape;
    if (xs->rank < 3)
        return nv_why(why, len, "InstanceNormalization: the input must have rank >= 3");
    for (size_t i = 1; i < 3; i++) {
        const bd_value *p = n->inputs[i];
        if (p->dtype != x->dtype || p->shape.rank != 1 || p->shape.dims[0] != xs->dims[1])
            return nv_why(why, len, "InstanceNormalization: %s must be %s [C]",
                          i == 1 ? "scale" : "B", bd_dtype_name(x->dtype));
    }
    if (n->outputs[0]->dtype != x->dtype || !bd_shape_equal(&n->outputs[0]->shape, xs))
        return nv_why(why, len, "InstanceNormalization: the output must be the input's dtype "
                      "and shape");
    return true;
}

/* MeanVarianceNormalization's reduced axes into RED: false when one is out of range. */
static bool mvn_axes(const bd_node *n, int rank, bool *red)
{
    static const int64_t dflt[] = { 0, 2, 3 };
    const int64_t *axes;
    size_t count = bd_node_attr_ints(n, "axes", &axes);
    if (!bd_node_attr(n, "axes")) {
        axes = dflt;
        count = 3;
    }
    memset(red, 0, BD_MAX_RANK * sizeof *red);
    for (size_t k = 0; k < count; k++) {
        int a = nv_axis(axes[k], rank);
        if (a < 0 || rank == 0)
            return false;
        red[a] = true;
    }
    return true;
}

/* One input and one output of its dtype and shape (MVN, LpNormalization, LRN). */
static bool same_io(const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects one input and one output", n->op_type);
    if (!nv_io_ok(n, 1, NV_DT_FLOATS, why, len))
        return false;
    if (n->outputs[0]->dtype != n->inputs[0]->dtype ||
        !bd_shape_equal(&n->outputs[0]->shape, &n->inputs[0]->shape))
        return nv_why(why, len, "%s: the output must be the input's dtype and shape", n->op_type);
    return true;
}

static bool mvn_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool red[BD_MAX_RANK];
    if (!same_io(n, why, len))
        return false;
    if (bd_node_attr(n, "across_channels") || bd_node_attr(n, "normalize_variance"))
        return nv_why(why, len, "MeanVarianceNormalization: opset 1's attributes");
    if (!mvn_axes(n, n->inputs[0]->shape.rank, red))
        return nv_why(why, len, "MeanVarianceNormalization: an axis out of range for rank %d",
                      n->inputs[0]->shape.rank);
    return true;
}

static bool lp_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!same_io(n, why, len))
        return false;
    int64_t p = bd_node_attr_int(n, "p", 2);
    int rank = n->inputs[0]->shape.rank;
    if (p != 1 && p != 2)
        return nv_why(why, len, "LpNormalization: p = %lld, expected 1 or 2", (long long)p);
    if (rank < 1 || nv_axis(bd_node_attr_int(n, "axis", -1), rank) < 0)
        return nv_why(why, len, "LpNormalization: axis out of range for rank %d", rank);
    return true;
}

/* ---- run and prepare ------------------------------------------------------------------------- */

/* Scale and B of LayerNormalization broadcast over the COUNT normalised elements (dims ND,
 * RANK of them) into WS and BS (BS NULL without B). */
static void expand_affine(const nv_tensor *w, const nv_tensor *b, const int64_t *nd, int rank,
                          size_t count, double *ws, double *bs)
{
    int64_t idx[BD_MAX_RANK] = { 0 };
    for (size_t e = 0; e < count; e++) {
        for (int k = 0; k < 2; k++) {
            const nv_tensor *p = k ? b : w;
            if (!p)
                continue;
            size_t off = 0;             /* numpy broadcasting from the right */
            for (int d = 0; d < p->rank; d++) {
                int64_t pd = p->dims[d], i = idx[rank - p->rank + d];
                off = off * (size_t)pd + (size_t)(pd == 1 ? 0 : i);
            }
            (k ? bs : ws)[e] = nv_get_f(p->data, p->dtype, off);
        }
        for (int d = rank - 1; d >= 0 && ++idx[d] == nd[d]; d--)
            idx[d] = 0;
    }
}

/* ip[0]: the first reduced axis (LayerNormalization), or the axis (LpNormalization). */
static int groups_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)err;
    const nv_tensor *x = &in[0];
    bool red[BD_MAX_RANK] = { false };
    ng_job j = { .s = s, .x = x->data, .y = out[0].data, .dtype = x->dtype, .eps = s->fp[0],
                 .p = (int)s->ip[1] };
    switch (s->op) {
    case NM_LAYER:
        for (int d = (int)s->ip[0]; d < x->rank; d++)
            red[d] = true;
        break;
    case NM_INSTANCE:
        for (int d = 2; d < x->rank; d++)
            red[d] = true;
        j.wc = in[1].data;
        j.bc = in[2].data;
        j.channels = (size_t)x->dims[1];
        break;
    case NM_MVN:
        mvn_axes(s->node, x->rank, red);
        break;
    default:
        red[s->ip[0]] = true;
        break;
    }
    ng_plan(x->dims, x->rank, red, &j.g);
    if (s->op == NM_LAYER) {
        int ax = (int)s->ip[0];
        double *ws = nv_scratch(env);
        bool has_b = s->n_in > 2 && s->in[2] >= 0;
        expand_affine(&in[1], has_b ? &in[2] : NULL, x->dims + ax, x->rank - ax, j.g.count, ws,
                      ws + j.g.count);
        j.ws = ws;
        j.bs = has_b ? ws + j.g.count : NULL;
        if (s->n_out > 1) {
            j.mean = out[1].data;
            j.mean_dt = out[1].dtype;
        }
        if (s->n_out > 2) {
            j.inv = out[2].data;
            j.inv_dt = out[2].dtype;
        }
    }
    if (j.g.groups == 0 || (j.g.count == 0 && s->op != NM_LAYER))
        return 0;
    nv_parallel_for(j.g.groups, x->numel, x->dtype == BD_DT_FLOAT ? groups_f32 : groups_f64, &j);
    return 0;
}

static int norm_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const char *op = n->op_type;
    const bd_shape *xs = &n->inputs[0]->shape;
    s->op = !strcmp(op, "LayerNormalization") ? NM_LAYER
          : !strcmp(op, "InstanceNormalization") ? NM_INSTANCE
          : !strcmp(op, "MeanVarianceNormalization") ? NM_MVN : NM_LP;
    s->fp[0] = bd_node_attr_float(n, "epsilon", 1e-5f);
    if (s->op == NM_LAYER) {
        s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", -1), xs->rank);
        size_t count = 1;
        for (int d = (int)s->ip[0]; d < xs->rank; d++)
            count *= (size_t)xs->dims[d];
        s->scratch = 2 * count * sizeof(double);
    } else if (s->op == NM_LP) {
        s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", -1), xs->rank);
        s->ip[1] = bd_node_attr_int(n, "p", 2);
    }
    s->run = groups_run;
    return 0;
}

/* ---- LRN ------------------------------------------------------------------------------------ */

static bool lrn_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!same_io(n, why, len))
        return false;
    if (n->inputs[0]->shape.rank < 2)
        return nv_why(why, len, "LRN: the input must have rank >= 2");
    if (bd_node_attr_int(n, "size", 0) < 1)
        return nv_why(why, len, "LRN: size must be given and >= 1");
    return true;
}

typedef struct lrn_job {
    const nv_step *s;
    const void    *x;
    void          *y;
    int            dtype;
    size_t         c, inner;       /* channels; elements per channel */
} lrn_job;

/* Channel rows [LO, LO + CNT) of N x C: each element over the window of channels around it. */
static void lrn_rows(void *vjob, size_t lo, size_t cnt)
{
    const lrn_job *j = vjob;
    const nv_step *s = j->s;
    int64_t size = s->ip[0], before = (size - 1) / 2, after = size - 1 - before;
    double alpha = s->fp[0], beta = s->fp[1], bias = s->fp[2];
    for (size_t row = lo; row < lo + cnt; row++) {
        size_t n = row / j->c, c = row % j->c;
        size_t c0 = (int64_t)c < before ? 0 : c - (size_t)before;
        size_t c1 = c + (size_t)after + 1 > j->c ? j->c : c + (size_t)after + 1;
        for (size_t i = 0; i < j->inner; i++) {
            double sum = 0;
            for (size_t k = c0; k < c1; k++) {
                double v = nv_get_f(j->x, j->dtype, (n * j->c + k) * j->inner + i);
                sum += v * v;
            }
            size_t at = row * j->inner + i;
            nv_set_f(j->y, j->dtype, at, nv_get_f(j->x, j->dtype, at) /
                                         pow(bias + alpha / (double)size * sum, beta));
        }
    }
}

static int lrn_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    (void)env;
    (void)err;
    const nv_tensor *x = &in[0];
    lrn_job j = { .s = s, .x = x->data, .y = out[0].data, .dtype = x->dtype,
                  .c = (size_t)x->dims[1], .inner = 1 };
    for (int d = 2; d < x->rank; d++)
        j.inner *= (size_t)x->dims[d];
    if (x->numel)
        nv_parallel_for((size_t)x->dims[0] * j.c, x->numel * (size_t)s->ip[0], lrn_rows, &j);
    return 0;
}

static int lrn_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "size", 1);
    s->fp[0] = bd_node_attr_float(n, "alpha", 1e-4f);
    s->fp[1] = bd_node_attr_float(n, "beta", 0.75f);
    s->fp[2] = bd_node_attr_float(n, "bias", 1.0f);
    s->run = lrn_run;
    return 0;
}

const nv_op nv_norm_ops[] = {
    { "LayerNormalization", layer_supports, norm_prepare },
    { "InstanceNormalization", instance_supports, norm_prepare },
    { "MeanVarianceNormalization", mvn_supports, norm_prepare },
    { "LpNormalization", lp_supports, norm_prepare },
    { "LRN", lrn_supports, lrn_prepare },
};
const size_t nv_norm_n = sizeof nv_norm_ops / sizeof nv_norm_ops[0];
