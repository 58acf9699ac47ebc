/* Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax and ArgMin; and the op table of the
 * whole family (native_reduce.h: Softmax, TopK and CumSum live in their own files).
 *
 * A reduction's shape collapses into alternating runs of kept and reduced dims (size-1 dims
 * dropped, neighbours of one kind merged), so the common cases are one or two loops without
 * per-element index math: when the innermost run is reduced, each output folds contiguous
 * rows; when it is kept, NV_CHUNK neighbouring outputs fold together, each step reading
 * NV_CHUNK contiguous inputs. Floats accumulate in double. */
#include "backends/native/native_reduce.h"

#include <math.h>
#include <string.h>

#include <omp.h>

typedef enum rd_op {
    RD_SUM, RD_MEAN, RD_MAX, RD_MIN, RD_PROD, RD_L1, RD_L2, RD_LOGSUM, RD_LSE, RD_SUMSQ,
} rd_op;

typedef struct rd_name {
    const char *op;
    int         code;
    bool        ints;        /* defined, exactly, on integers (the others need a rounding) */
} rd_name;

static const rd_name k_reduce[] = {
    { "ReduceSum", RD_SUM, true },       { "ReduceMean", RD_MEAN, false },
    { "ReduceMax", RD_MAX, true },       { "ReduceMin", RD_MIN, true },
    { "ReduceProd", RD_PROD, true },     { "ReduceL1", RD_L1, true },
    { "ReduceL2", RD_L2, false },        { "ReduceLogSum", RD_LOGSUM, false },
    { "ReduceLogSumExp", RD_LSE, false }, { "ReduceSumSquare", RD_SUMSQ, true },
};

/* Integers are reduced in int64 (wrapping); UINT64 would need its own comparisons. */
#define RD_INTS (NV_DT_INTS & ~NV_DT(BD_DT_UINT64))

static const rd_name *reduce_of(const char *op)
{
    for (size_t i = 0; i < sizeof k_reduce / sizeof k_reduce[0]; i++)
        if (!strcmp(k_reduce[i].op, op))
            return &k_reduce[i];
    return NULL;
}

nv_split nv_split_at(const int64_t *dims, int rank, int axis)
{
    nv_split s = { 1, (size_t)dims[axis], 1 };
    for (int d = 0; d < axis; d++)
        s.outer *= (size_t)dims[d];
    for (int d = axis + 1; d < rank; d++)
        s.inner *= (size_t)dims[d];
    return s;
}

int64_t nv_int_at(const void *data, int dtype, size_t i)
{
    if (dtype == BD_DT_INT64) {
        int64_t v;
        memcpy(&v, (const char *)data + i * sizeof v, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, (const char *)data + i * sizeof v, sizeof v);
    return v;
}

/* ---- folds: how one element enters an accumulator ---------------------------------------- */

/* Each op is a fold (and a final step, see finish()); LogSumExp folds twice: the maximum M,
 * then exp(x - M). */
typedef enum rd_fold { F_SUM, F_SUMSQ, F_ABS, F_PROD, F_MAX, F_MIN, F_EXP, F_COUNT } rd_fold;

static rd_fold fold_of(int op)
{
    switch (op) {
    case RD_MAX:   return F_MAX;
    case RD_MIN:   return F_MIN;
    case RD_PROD:  return F_PROD;
    case RD_L1:    return F_ABS;
    case RD_L2:
    case RD_SUMSQ: return F_SUMSQ;
    case RD_LSE:   return F_EXP;
    }
    return F_SUM;
}

static double fold_init(rd_fold f)
{
    return f == F_PROD ? 1.0 : f == F_MAX ? -INFINITY : f == F_MIN ? INFINITY : 0.0;
}

#define FOLD_SUM(a, x, m)   ((a) + (x))
#define FOLD_SUMSQ(a, x, m) ((a) + (x) * (x))
#define FOLD_ABS(a, x, m)   ((a) + fabs(x))
#define FOLD_PROD(a, x, m)  ((a) * (x))
#define FOLD_MAX(a, x, m)   ((x) > (a) || (x) != (x) ? (x) : (a))    /* a NaN sticks */
#define FOLD_MIN(a, x, m)   ((x) < (a) || (x) != (x) ? (x) : (a))
#define FOLD_EXP(a, x, m)   ((a) + exp((x) - (m)))

/* A fold over one contiguous row into one accumulator, and over one contiguous row of
 * neighbouring columns into as many accumulators (the form that vectorises). The row keeps
 * four partial accumulators (from the fold's identity ID), merged at the end with MERGE: four
 * independent chains instead of one long dependency on the previous add. The column loops
 * carry `omp simd`: at -O2 GCC only vectorises a loop whose trip count it knows, and these
 * (NV_CHUNK or fewer, set at run time) would otherwise run scalar, a branch per element. */
typedef double (*rd_row_fn)(const void *p, size_t n, double acc, double m);
typedef void   (*rd_col_fn)(const void *p, size_t n, double *acc, const double *m);

#define MERGE_ADD(a, b)  ((a) + (b))
#define MERGE_PROD(a, b) ((a) * (b))
#define MERGE_MAX(a, b)  FOLD_MAX(a, b, 0)
#define MERGE_MIN(a, b)  FOLD_MIN(a, b, 0)

#define FOLD_FNS(name, T, FOLD, MERGE, ID)                                                    \
    static double name##_row(const void *vp, size_t n, double a, double m)                   \
    {                                                                                         \
        const T *p = vp;                                                                      \
        double a1 = ID, a2 = ID, a3 = ID;                                                     \
        size_t i = 0;                                                                         \
        (void)m;                                                                              \
        for (; i + 4 <= n; i += 4) {                                                          \
            double x0 = p[i], x1 = p[i + 1], x2 = p[i + 2], x3 = p[i + 3];                    \
            a = FOLD(a, x0, m);                                                               \
            a1 = FOLD(a1, x1, m);                                                             \
            a2 = FOLD(a2, x2, m);                                                             \
            a3 = FOLD(a3, x3, m);                                                             \
        }                                                                                     \
        for (; i < n; i++) { double x = p[i]; a = FOLD(a, x, m); }                           \
        return MERGE(MERGE(a, a1), MERGE(a2, a3));                                            \
    }                                                                                         \
    static void name##_col(const void *vp, size_t n, double *restrict acc,                    \
                           const double *restrict ms)                                         \
    {                                                                                         \
        const T *p = vp;                                                                      \
        (void)ms;                                                                             \
        _Pragma("omp simd")                                                                  \
        for (size_t i = 0; i < n; i++) { double x = p[i]; acc[i] = FOLD(acc[i], x, ms[i]); } \
    }

#define FOLDS_FOR(sfx, T)                                                                     \
    FOLD_FNS(sum_##sfx, T, FOLD_SUM, MERGE_ADD, 0.0)                                          \
    FOLD_FNS(sumsq_##sfx, T, FOLD_SUMSQ, MERGE_ADD, 0.0)                                      \
    FOLD_FNS(abs_##sfx, T, FOLD_ABS, MERGE_ADD, 0.0)                                          \
    FOLD_FNS(prod_##sfx, T, FOLD_PROD, MERGE_PROD, 1.0)                                       \
    FOLD_FNS(max_##sfx, T, FOLD_MAX, MERGE_MAX, -INFINITY)                                    \
    FOLD_FNS(min_##sfx, T, FOLD_MIN, MERGE_MIN, INFINITY)                                     \
    FOLD_FNS(exp_##sfx, T, FOLD_EXP, MERGE_ADD, 0.0)
FOLDS_FOR(f32, float)
FOLDS_FOR(f64, double)

typedef struct rd_fns {
    rd_row_fn row;
    rd_col_fn col;
} rd_fns;

#define FNS(name) { name##_row, name##_col }
#define FNS_OF(sfx) { [F_SUM] = FNS(sum_##sfx), [F_SUMSQ] = FNS(sumsq_##sfx),                 \
                      [F_ABS] = FNS(abs_##sfx), [F_PROD] = FNS(prod_##sfx),                   \
                      [F_MAX] = FNS(max_##sfx), [F_MIN] = FNS(min_##sfx),                     \
                      [F_EXP] = FNS(exp_##sfx) }
static const rd_fns k_fns_f32[F_COUNT] = FNS_OF(f32);
static const rd_fns k_fns_f64[F_COUNT] = FNS_OF(f64);

/* The accumulator A of COUNT elements as the op's result; SHIFT is LogSumExp's maximum. */
static double finish(int op, double a, size_t count, double shift)
{
    switch (op) {
    case RD_MEAN:   return a / (double)count;
    case RD_L2:     return sqrt(a);
    case RD_LOGSUM: return log(a);
    case RD_LSE:    return log(a) + shift;
    }
    return a;
}

/* LogSumExp subtracts the maximum before exp() (no overflow); an infinite or NaN maximum is
 * not subtracted, so the result is what the plain formula gives. */
static double lse_shift(double m)
{
    return isfinite(m) ? m : 0.0;
}

/* ---- geometry ----------------------------------------------------------------------------- */

typedef struct rd_geom {
    int     nk, nr;                              /* kept and reduced runs */
    int64_t kd[BD_MAX_RANK], ks[BD_MAX_RANK];    /* kept runs: sizes, input strides */
    int64_t rd[BD_MAX_RANK], rs[BD_MAX_RANK];    /* reduced runs: sizes, input strides */
    size_t  n_out, count;                        /* outputs; inputs folded into each */
} rd_geom;

static void plan_geometry(const int64_t *dims, int rank, const bool *mask, rd_geom *g)
{
    int64_t d[BD_MAX_RANK], st[BD_MAX_RANK];
    bool red[BD_MAX_RANK];
    int n = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 1)
            continue;
        if (n > 0 && red[n - 1] == mask[i])
            d[n - 1] *= dims[i];
        else {
            d[n] = dims[i];
            red[n++] = mask[i];
        }
    }
    nv_strides(n, d, st);
    memset(g, 0, sizeof *g);
    g->n_out = g->count = 1;
    for (int i = 0; i < n; i++) {
        if (red[i]) {
            g->rd[g->nr] = d[i];
            g->rs[g->nr++] = st[i];
            g->count *= (size_t)d[i];
        } else {
            g->kd[g->nk] = d[i];
            g->ks[g->nk++] = st[i];
            g->n_out *= (size_t)d[i];
        }
    }
}

/* The input offset of element I of the row-major space of N runs (sizes D, strides S). */
static size_t run_offset(size_t i, int n, const int64_t *d, const int64_t *s)
{
    size_t off = 0;
    for (int k = n - 1; k >= 0; k--) {
        off += (i % (size_t)d[k]) * (size_t)s[k];
        i /= (size_t)d[k];
    }
    return off;
}

/* The innermost run is kept: outputs are computed NV_CHUNK neighbours at a time. */
static bool inner_kept(const rd_geom *g)
{
    return g->nk > 0 && g->ks[g->nk - 1] == 1;
}

static void store(void *y, int dtype, size_t i, double v)
{
    if (dtype == BD_DT_FLOAT)
        ((float *)y)[i] = (float)v;
    else
        ((double *)y)[i] = v;
}

/* ---- float kernels ------------------------------------------------------------------------ */

/* Fold every reduced element of one output (its inputs from P) into A: contiguous rows. */
static double fold_rows(const rd_geom *g, rd_row_fn fn, const char *p, size_t es, double a,
                        double m)
{
    size_t len = g->nr ? (size_t)g->rd[g->nr - 1] : 1, rows = len ? g->count / len : 0;
    for (size_t r = 0; r < rows; r++)
        a = fn(p + run_offset(r, g->nr - 1, g->rd, g->rs) * es, len, a, m);
    return a;
}

/* Fold the reduced elements of W neighbouring outputs (their inputs from P) into ACC. */
static void fold_cols(const rd_geom *g, rd_col_fn fn, const char *p, size_t es, size_t w,
                      double *acc, const double *m)
{
    for (size_t r = 0; r < g->count; r++)
        fn(p + run_offset(r, g->nr, g->rd, g->rs) * es, w, acc, m);
}

static void reduce_float(const rd_geom *g, int op, const nv_tensor *x, void *y)
{
    const rd_fns *fns = x->dtype == BD_DT_FLOAT ? k_fns_f32 : k_fns_f64;
    const rd_fns *f = &fns[fold_of(op)], *fm = &fns[F_MAX];
    size_t es = bd_dtype_size(x->dtype);
    const char *px = x->data;
    bool par = x->numel >= NV_PARALLEL_MIN && !omp_in_parallel();
    if (!inner_kept(g)) {
        #pragma omp parallel for if (par) schedule(static)
        for (size_t o = 0; o < g->n_out; o++) {
            const char *p = px + run_offset(o, g->nk, g->kd, g->ks) * es;
            double m = op == RD_LSE ? lse_shift(fold_rows(g, fm->row, p, es, -INFINITY, 0)) : 0;
            double a = fold_rows(g, f->row, p, es, fold_init(fold_of(op)), m);
            store(y, x->dtype, o, finish(op, a, g->count, m));
        }
        return;
    }
    size_t len = (size_t)g->kd[g->nk - 1], chunks = (len + NV_CHUNK - 1) / NV_CHUNK;
    size_t items = len ? g->n_out / len * chunks : 0;
    #pragma omp parallel for if (par) schedule(static)
    for (size_t it = 0; it < items; it++) {
        size_t row = it / chunks, j0 = it % chunks * NV_CHUNK;
        size_t w = len - j0 < NV_CHUNK ? len - j0 : NV_CHUNK;
        const char *p = px + (run_offset(row, g->nk - 1, g->kd, g->ks) + j0) * es;
        double acc[NV_CHUNK], m[NV_CHUNK];
        for (size_t j = 0; j < w; j++) {
            acc[j] = fold_init(fold_of(op));
            m[j] = op == RD_LSE ? -INFINITY : 0;
        }
        if (op == RD_LSE) {
            fold_cols(g, fm->col, p, es, w, m, m);
            for (size_t j = 0; j < w; j++)
                m[j] = lse_shift(m[j]);
        }
        fold_cols(g, f->col, p, es, w, acc, m);
        for (size_t j = 0; j < w; j++)
            store(y, x->dtype, row * len + j0 + j, finish(op, acc[j], g->count, m[j]));
    }
}

/* ---- integer kernel ------------------------------------------------------------------------ */

/* Integers (shape arithmetic, masks: small tensors) take one generic loop, exact in int64;
 * sums and products wrap as the type's own arithmetic would. */
static int64_t fold_int(int op, int64_t a, int64_t v)
{
    uint64_t ua = (uint64_t)a, uv = (uint64_t)v;
    switch (op) {
    case RD_MAX:   return v > a ? v : a;
    case RD_MIN:   return v < a ? v : a;
    case RD_PROD:  return (int64_t)(ua * uv);
    case RD_L1:    return (int64_t)(ua + (v < 0 ? 0 - uv : uv));
    case RD_SUMSQ: return (int64_t)(ua + uv * uv);
    }
    return (int64_t)(ua + uv);
}

static void reduce_int(const rd_geom *g, int op, const nv_tensor *x, void *y, int dtype)
{
    for (size_t o = 0; o < g->n_out; o++) {
        size_t base = run_offset(o, g->nk, g->kd, g->ks);
        int64_t a = op == RD_PROD ? 1 : 0;
        for (size_t r = 0; r < g->count; r++) {
            int64_t v = nv_get_i(x->data, x->dtype, base + run_offset(r, g->nr, g->rd, g->rs));
            a = r == 0 && (op == RD_MAX || op == RD_MIN) ? v : fold_int(op, a, v);
        }
        nv_set_i(y, dtype, o, a);
    }
}

/* ---- the Reduce ops ------------------------------------------------------------------------ */

/* Parameters: ip[0] the number of constant axes (-1: input 1 gives them at run time), ip[1..8]
 * the axes, ip[9] keepdims, ip[10] noop_with_empty_axes. */
enum { RP_N = 0, RP_AXES = 1, RP_KEEP = 9, RP_NOOP = 10 };

/* N's axes (the attribute, or a constant input 1) into AXES: the count, -1 when they come at
 * run time, -2 when there are too many or both forms are given. */
static int64_t node_axes(const bd_node *n, int64_t *axes)
{
    const bd_value *in = bd_node_input(n, 1);
    const int64_t *attr;
    size_t count = bd_node_attr_ints(n, "axes", &attr);
    if (in && bd_node_attr(n, "axes"))
        return -2;
    if (in && !in->data)
        return -1;
    if (in) {                   /* supports() checked it: static, INT64, 1-D */
        size_t got = nv_shape_numel(&in->shape);
        if (got > BD_MAX_RANK || in->nbytes < got * sizeof *axes)
            return -2;
        for (size_t i = 0; i < got; i++)
            axes[i] = nv_int_at(in->data, in->dtype, i);
        return (int64_t)got;
    }
    if (count > BD_MAX_RANK)
        return -2;
    for (size_t i = 0; i < count; i++)
        axes[i] = attr[i];
    return (int64_t)count;
}

/* The reduced dims of a RANK-dim input from N_AXES AXES: false when one is out of range or
 * repeated. An empty list reduces everything, or nothing (*COPY) with noop_with_empty_axes. */
static bool axes_mask(const int64_t *axes, int64_t n_axes, int rank, bool noop, bool *mask,
                      bool *copy)
{
    *copy = n_axes == 0 && noop;
    for (int d = 0; d < BD_MAX_RANK; d++)
        mask[d] = n_axes == 0 && !noop;
    for (int64_t k = 0; k < n_axes; k++) {
        int a = nv_axis(axes[k], rank);
        if (a < 0 || rank == 0 || mask[a])
            return false;
        mask[a] = true;
    }
    return true;
}

/* The output dims the mask gives X (into DIMS): the rank. */
static int reduced_dims(const int64_t *x, int rank, const bool *mask, bool keep, bool copy,
                        int64_t *dims)
{
    int r = 0;
    for (int d = 0; d < rank; d++)
        if (copy || !mask[d])
            dims[r++] = x[d];
        else if (keep)
            dims[r++] = 1;
    return r;
}

static bool reduce_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    const rd_name *r = reduce_of(n->op_type);
    if (n->n_inputs < 1 || n->n_inputs > 2 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects data, optional axes, and one output", n->op_type);
    if (!nv_io_ok(n, 1, NV_DT_FLOATS | (r->ints ? RD_INTS : 0), why, len))
        return false;
    const bd_value *x = n->inputs[0], *y = n->outputs[0], *ax = bd_node_input(n, 1);
    if (x->dtype != y->dtype)
        return nv_why(why, len, "%s: output dtype differs from the input's", n->op_type);
    if (ax && (!nv_value_ok(ax, NV_DT(BD_DT_INT64)) || ax->shape.rank != 1))
        return nv_why(why, len, "%s: axes must be a static 1-D INT64 tensor", n->op_type);
    if (!nv_dtype_is_float(x->dtype) && nv_shape_numel(&x->shape) == 0)
        return nv_why(why, len, "%s of an empty integer tensor", n->op_type);
    int64_t axes[BD_MAX_RANK], n_axes = node_axes(n, axes), want[BD_MAX_RANK];
    if (n_axes == -2)
        return nv_why(why, len, "%s: more than %d axes, or both an axes input and attribute",
                      n->op_type, BD_MAX_RANK);
    if (n_axes == -1)
        return true;                /* read at run time, checked against the output's shape */
    bool mask[BD_MAX_RANK], copy;
    if (!axes_mask(axes, n_axes, x->shape.rank, bd_node_attr_int(n, "noop_with_empty_axes", 0),
                   mask, &copy))
        return nv_why(why, len, "%s: an axis out of range or repeated", n->op_type);
    int rank = reduced_dims(x->shape.dims, x->shape.rank, mask, bd_node_attr_int(n, "keepdims", 1),
                            copy, want);
    bd_shape ws = bd_shape_make(rank, want);
    return bd_shape_equal(&ws, &y->shape) ? true
                                          : nv_why(why, len, "%s: unexpected output shape", n->op_type);
}

/* The axes of this run: the constant ones, or input 1's, checked against the planned output. */
static int run_mask(const nv_step *s, const nv_tensor *in, const nv_tensor *y, bool *mask,
                    bool *copy, bd_error *err)
{
    int64_t axes[BD_MAX_RANK], n = s->ip[RP_N], dims[BD_MAX_RANK];
    if (n >= 0)
        for (int64_t i = 0; i < n; i++)
            axes[i] = s->ip[RP_AXES + i];
    else if ((n = in[1].data ? nv_read_ints(in[1].data, in[1].dtype, in[1].numel, axes,
                                            BD_MAX_RANK) : 0) < 0)
        return bd_error_set(err, BD_EINVAL, "%zu axes for an input of rank %d", in[1].numel,
                            in[0].rank);
    if (!axes_mask(axes, n, in[0].rank, s->ip[RP_NOOP], mask, copy))
        return bd_error_set(err, BD_EINVAL, "an axis is out of range for rank %d or repeated",
                            in[0].rank);
    int rank = reduced_dims(in[0].dims, in[0].rank, mask, s->ip[RP_KEEP], *copy, dims);
    bd_shape got = bd_shape_make(rank, dims), plan = bd_shape_make(y->rank, y->dims);
    if (!bd_shape_equal(&got, &plan)) {
        char a[96], b[96];
        return bd_error_set(err, BD_EINVAL, "the axes give an output of shape %s, the plan has %s",
                            bd_shape_str(&got, a, sizeof a), bd_shape_str(&plan, b, sizeof b));
    }
    return 0;
}

static int reduce_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    bool mask[BD_MAX_RANK], copy;
    int rc = run_mask(s, in, &out[0], mask, &copy, err);
    if (rc)
        return rc;
    if (copy) {
        if (in[0].numel)
            memcpy(out[0].data, in[0].data, in[0].numel * bd_dtype_size(in[0].dtype));
        return 0;
    }
    rd_geom g;
    plan_geometry(in[0].dims, in[0].rank, mask, &g);
    if (nv_dtype_is_float(in[0].dtype))
        reduce_float(&g, s->op, &in[0], out[0].data);
    else
        reduce_int(&g, s->op, &in[0], out[0].data, out[0].dtype);
    return 0;
}

static int reduce_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = reduce_of(n->op_type)->code;
    s->ip[RP_N] = node_axes(n, &s->ip[RP_AXES]);
    s->ip[RP_KEEP] = bd_node_attr_int(n, "keepdims", 1) != 0;
    s->ip[RP_NOOP] = bd_node_attr_int(n, "noop_with_empty_axes", 0) != 0;
    s->run = reduce_run;
    return 0;
}

/* ---- ArgMax, ArgMin ------------------------------------------------------------------------ */

/* V replaces the best B so far: strictly better, or as good with select_last_index; a NaN is
 * the extreme (numpy's argmax/argmin return the first NaN). Bitwise, without a branch, so the
 * column loop vectorises (a comparison with a NaN is false, so CMP needs no NaN test). */
#define ARG_BETTER(v, b, max, last)                                                           \
    ((int)((max) ? ((last) ? (v) >= (b) : (v) > (b)) : ((last) ? (v) <= (b) : (v) < (b))) |    \
     ((int)((v) != (v)) & ((int)((b) == (b)) | (int)(last))))

/* The running best of NV_CHUNK neighbouring columns, and its index (of type IT), stay on the
 * stack. 32-bit indices when the axis allows (the index and the value then select with masks
 * of one width, so the loop vectorises);
 * the body is inlined into one function per (max, last) pair, so the comparison is constant. */
#define ARG_BODY(name, T, IT)                                                                 \
    static inline __attribute__((always_inline)) void                                         \
    name(const T *x, int64_t *y, nv_split sp, bool max, bool last)                            \
    {                                                                                         \
        for (size_t o = 0; sp.inner == 1 && o < sp.outer; o++) {   /* contiguous rows */       \
            const T *p = x + o * sp.n;                                                        \
            T best = p[0];                                                                    \
            IT at = 0;                                                                        \
            for (size_t r = 1; r < sp.n; r++) {                                               \
                int b = ARG_BETTER(p[r], best, max, last);                                    \
                best = b ? p[r] : best;                                                       \
                at = b ? (IT)r : at;                                                          \
            }                                                                                 \
            y[o] = at;                                                                        \
        }                                                                                     \
        for (size_t o = 0; sp.inner > 1 && o < sp.outer; o++)                                 \
            for (size_t i0 = 0; i0 < sp.inner; i0 += NV_CHUNK) {                              \
                size_t w = sp.inner - i0 < NV_CHUNK ? sp.inner - i0 : NV_CHUNK;               \
                const T *p = x + o * sp.n * sp.inner + i0;                                    \
                T best[NV_CHUNK];                                                             \
                IT at[NV_CHUNK];                                                              \
                for (size_t j = 0; j < w; j++) {                                              \
                    best[j] = p[j];                                                           \
                    at[j] = 0;                                                                \
                }                                                                             \
                for (size_t r = 1; r < sp.n; r++) {                                           \
                    _Pragma("omp simd")                                                      \
                    for (size_t j = 0; j < w; j++) {                                          \
                        T v = p[r * sp.inner + j];                                            \
                        int b = ARG_BETTER(v, best[j], max, last);                            \
                        best[j] = b ? v : best[j];                                            \
                        at[j] = b ? (IT)r : at[j];                                            \
                    }                                                                         \
                }                                                                             \
                for (size_t j = 0; j < w; j++)                                                \
                    y[o * sp.inner + i0 + j] = at[j];                                         \
            }                                                                                 \
    }

#define ARG_KERNEL(sfx, T)                                                                    \
    ARG_BODY(arg_narrow_##sfx, T, int32_t)                                                    \
    ARG_BODY(arg_wide_##sfx, T, int64_t)                                                      \
    static void arg_##sfx(const void *x, int64_t *y, nv_split sp, bool max, bool last)       \
    {                                                                                         \
        if (sp.n > INT32_MAX)                                                                 \
            arg_wide_##sfx(x, y, sp, max, last);                                              \
        else if (max)                                                                         \
            last ? arg_narrow_##sfx(x, y, sp, true, true) : arg_narrow_##sfx(x, y, sp, true, false); \
        else                                                                                  \
            last ? arg_narrow_##sfx(x, y, sp, false, true)                                    \
                 : arg_narrow_##sfx(x, y, sp, false, false);                                  \
    }
ARG_KERNEL(f32, float)
ARG_KERNEL(f64, double)
ARG_KERNEL(i8, int8_t)
ARG_KERNEL(u8, uint8_t)
ARG_KERNEL(i16, int16_t)
ARG_KERNEL(u16, uint16_t)
ARG_KERNEL(i32, int32_t)
ARG_KERNEL(u32, uint32_t)
ARG_KERNEL(i64, int64_t)
ARG_KERNEL(u64, uint64_t)

typedef void (*arg_fn)(const void *, int64_t *, nv_split, bool, bool);

static const arg_fn k_arg[] = {
    [BD_DT_FLOAT] = arg_f32, [BD_DT_DOUBLE] = arg_f64, [BD_DT_INT8] = arg_i8,
    [BD_DT_UINT8] = arg_u8,  [BD_DT_INT16] = arg_i16,  [BD_DT_UINT16] = arg_u16,
    [BD_DT_INT32] = arg_i32, [BD_DT_UINT32] = arg_u32, [BD_DT_INT64] = arg_i64,
    [BD_DT_UINT64] = arg_u64,
};

static bool arg_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects one input and one output", n->op_type);
    if (!nv_value_ok(n->inputs[0], NV_DT_NUMERIC) || !nv_value_ok(n->outputs[0], NV_DT(BD_DT_INT64)))
        return nv_why(why, len, "%s: a numeric input and an INT64 output, of static shapes",
                      n->op_type);
    const bd_shape *x = &n->inputs[0]->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", 0), x->rank);
    if (ax < 0 || x->rank == 0 || x->dims[ax] == 0)
        return nv_why(why, len, "%s: axis out of range, or an empty axis", n->op_type);
    bool mask[BD_MAX_RANK] = { false };
    int64_t want[BD_MAX_RANK];
    mask[ax] = true;
    int rank = reduced_dims(x->dims, x->rank, mask, bd_node_attr_int(n, "keepdims", 1), false, want);
    bd_shape ws = bd_shape_make(rank, want);
    return bd_shape_equal(&ws, &n->outputs[0]->shape)
               ? true : nv_why(why, len, "%s: unexpected output shape", n->op_type);
}

static int arg_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    (void)env;
    (void)err;
    nv_split sp = nv_split_at(in[0].dims, in[0].rank, (int)s->ip[0]);
    k_arg[in[0].dtype](in[0].data, out[0].data, sp, s->op, s->ip[1]);
    return 0;
}

static int arg_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(n->op_type, "ArgMax");
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", 0), n->inputs[0]->shape.rank);
    s->ip[1] = bd_node_attr_int(n, "select_last_index", 0) != 0;
    s->run = arg_run;
    return 0;
}

const nv_op nv_reduce_ops[] = {
    { "ReduceSum", reduce_supports, reduce_prepare },
    { "ReduceMean", reduce_supports, reduce_prepare },
    { "ReduceMax", reduce_supports, reduce_prepare },
    { "ReduceMin", reduce_supports, reduce_prepare },
    { "ReduceProd", reduce_supports, reduce_prepare },
    { "ReduceL1", reduce_supports, reduce_prepare },
    { "ReduceL2", reduce_supports, reduce_prepare },
    { "ReduceLogSum", reduce_supports, reduce_prepare },
    { "ReduceLogSumExp", reduce_supports, reduce_prepare },
    { "ReduceSumSquare", reduce_supports, reduce_prepare },
    { "ArgMax", arg_supports, arg_prepare },
    { "ArgMin", arg_supports, arg_prepare },
    { "CumSum", nv_cumsum_supports, nv_cumsum_prepare },
    { "TopK", nv_topk_supports, nv_topk_prepare },
    { "Softmax", nv_softmax_supports, nv_softmax_prepare },
    { "LogSoftmax", nv_softmax_supports, nv_softmax_prepare },
    { "Hardmax", nv_softmax_supports, nv_softmax_prepare },
};
const size_t nv_reduce_n = sizeof nv_reduce_ops / sizeof nv_reduce_ops[0];
