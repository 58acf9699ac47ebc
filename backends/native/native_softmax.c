/* Softmax, LogSoftmax and Hardmax on float and double: OUTER x N x INNER, normalised along N.
 * Opset 13 works along one axis; before it, the input was coerced to 2-D at `axis` (rows of
 * every dim from the axis on). A row's maximum is subtracted before exp() (no overflow), and
 * sums run in double. With INNER > 1 (a middle axis), NV_CHUNK neighbouring columns are
 * normalised together, so every pass reads contiguous memory. */
#include "backends/native/native_reduce.h"

#include <math.h>
#include <string.h>

#include <omp.h>

typedef enum sm_op { SM_SOFT, SM_LOG, SM_HARD } sm_op;

/* At -O2 GCC vectorises only loops of a known trip count: the column loops (NV_CHUNK or
 * fewer, known at run time) say they may be. */
#define SIMD _Pragma("omp simd")

#define EXP_F32 expf
#define EXP_F64 exp

/* One contiguous row of N, and W columns of N rows INNER apart: maximum (and, for Hardmax,
 * its first index), then the op's passes. */
#define SM_KERNEL(sfx, T, EXP)                                                                \
    static void row_##sfx(const T *x, T *y, size_t n, int op)                                 \
    {                                                                                         \
        T m = x[0];                                                                           \
        size_t at = 0;                                                                        \
        for (size_t i = 1; i < n; i++)                                                        \
            if (x[i] > m) { m = x[i]; at = i; }                                               \
        double s = 0;                                                                         \
        if (op == SM_HARD) {                                                                  \
            memset(y, 0, n * sizeof *y);                                                      \
            y[at] = 1;                                                                        \
        } else if (op == SM_SOFT) {                                                           \
            for (size_t i = 0; i < n; i++) { T e = EXP(x[i] - m); y[i] = e; s += e; }        \
            T inv = (T)(1.0 / s);                                                             \
            for (size_t i = 0; i < n; i++) y[i] *= inv;                                       \
        } else {                                                                              \
            for (size_t i = 0; i < n; i++) s += EXP(x[i] - m);                                \
            double ls = log(s);                                                               \
            for (size_t i = 0; i < n; i++) y[i] = (T)((x[i] - m) - ls);                       \
        }                                                                                     \
    }                                                                                         \
    static void cols_##sfx(const T *x, T *y, size_t n, size_t inner, size_t w, int op)       \
    {                                                                                         \
        T m[NV_CHUNK];                                                                        \
        size_t at[NV_CHUNK];                                                                  \
        double s[NV_CHUNK];                                                                   \
        for (size_t j = 0; j < w; j++) { m[j] = x[j]; at[j] = 0; s[j] = 0; }                 \
        for (size_t r = 1; r < n; r++)                                                        \
            SIMD for (size_t j = 0; j < w; j++) {                                             \
                bool b = x[r * inner + j] > m[j];                                             \
                m[j] = b ? x[r * inner + j] : m[j];                                           \
                at[j] = b ? r : at[j];                                                        \
            }                                                                                 \
        if (op == SM_HARD) {                                                                  \
            for (size_t r = 0; r < n; r++)                                                    \
                SIMD for (size_t j = 0; j < w; j++) y[r * inner + j] = (T)(r == at[j]);       \
            return;                                                                           \
        }                                                                                     \
        for (size_t r = 0; r < n; r++)                                                        \
            for (size_t j = 0; j < w; j++) {                                                  \
                T e = EXP(x[r * inner + j] - m[j]);                                           \
                s[j] += e;                                                                    \
                if (op == SM_SOFT) y[r * inner + j] = e;                                      \
            }                                                                                 \
        for (size_t j = 0; j < w; j++) s[j] = op == SM_SOFT ? 1.0 / s[j] : log(s[j]);        \
        for (size_t r = 0; r < n; r++)                                                        \
            SIMD for (size_t j = 0; j < w; j++) {                                             \
                T *py = &y[r * inner + j];                                                    \
                *py = op == SM_SOFT ? (T)(*py * s[j])                                         \
                                    : (T)((x[r * inner + j] - m[j]) - s[j]);                  \
            }                                                                                 \
    }                                                                                         \
    static void sm_##sfx(const void *vx, void *vy, nv_split sp, int op)                      \
    {                                                                                         \
        const T *x = vx;                                                                      \
        T *y = vy;                                                                            \
        size_t chunks = (sp.inner + NV_CHUNK - 1) / NV_CHUNK, items = sp.outer * chunks;     \
        bool par = items > 1 && sp.outer * sp.n * sp.inner >= NV_PARALLEL_MIN &&              \
                   !omp_in_parallel();                                                        \
        if (sp.n == 0)                                                                        \
            return;                                                                           \
        _Pragma("omp parallel for if (par) schedule(static)")                                \
        for (size_t it = 0; it < items; it++) {                                               \
            size_t o = it / chunks, j0 = it % chunks * NV_CHUNK;                              \
            size_t off = o * sp.n * sp.inner + j0;                                            \
            if (sp.inner == 1)                                                                \
                row_##sfx(x + off, y + off, sp.n, op);                                        \
            else                                                                              \
                cols_##sfx(x + off, y + off, sp.n, sp.inner,                                  \
                           sp.inner - j0 < NV_CHUNK ? sp.inner - j0 : NV_CHUNK, op);          \
        }                                                                                     \
    }
SM_KERNEL(f32, float, EXP_F32)
SM_KERNEL(f64, double, EXP_F64)

/* The axis the kernel runs along: the attribute, else -1 (opset 13's default). */
static int64_t axis_attr(const bd_node *n)
{
    return bd_node_attr_int(n, "axis", -1);
}

/* Before opset 13 (default axis 1) the rows are every dim from the axis on. prepare() cannot
 * see the opset, so such a node is claimed only where those rows are the ones prepare() takes
 * (the dims after its axis are all 1): e.g. [N, C] at axis 1, or the last axis. */
static bool legacy_fits(const bd_node *n, const bd_shape *x)
{
    int64_t a = bd_node_attr_int(n, "axis", 1);
    int ax = nv_axis(axis_attr(n), x->rank);
    if (a < 0)
        a += x->rank;
    if (a < 0 || a > x->rank || ax < 0)
        return false;
    nv_split p = nv_split_at(x->dims, x->rank, ax);
    size_t rows = 1;
    for (int d = (int)a; d < x->rank; d++)
        rows *= (size_t)x->dims[d];
    return p.inner == 1 && p.n == rows;
}

bool nv_softmax_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects one input and one output", n->op_type);
    if (!nv_io_ok(n, 1, NV_DT_FLOATS, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape;
    if (n->outputs[0]->dtype != n->inputs[0]->dtype || !bd_shape_equal(x, &n->outputs[0]->shape))
        return nv_why(why, len, "%s: the output must be the input's dtype and shape", n->op_type);
    if (x->rank < 1 || nv_axis(axis_attr(n), x->rank) < 0)
        return nv_why(why, len, "%s: axis %lld out of range for rank %d", n->op_type,
                      (long long)axis_attr(n), x->rank);
    if (bd_graph_opset(g) < 13 && !legacy_fits(n, x))
        return nv_why(why, len, "%s: opset %lld's 2-D coercion at an inner axis is not "
                      "implemented", n->op_type, (long long)bd_graph_opset(g));
    return true;
}

static int softmax_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                       bd_error *err)
{
    (void)env;
    (void)err;
    nv_split sp = nv_split_at(in[0].dims, in[0].rank, (int)s->ip[0]);
    if (in[0].dtype == BD_DT_FLOAT)
        sm_f32(in[0].data, out[0].data, sp, s->op);
    else
        sm_f64(in[0].data, out[0].data, sp, s->op);
    return 0;
}

int nv_softmax_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(n->op_type, "Softmax") ? SM_SOFT : !strcmp(n->op_type, "LogSoftmax") ? SM_LOG
                                                                                         : SM_HARD;
    s->ip[0] = nv_axis(axis_attr(n), n->inputs[0]->shape.rank);
    s->run = softmax_run;
    return 0;
}
