/* Dense linear algebra on float and double where oneDNN does not take the node: Gemm (any
 * transposes, alpha, beta, a C broadcast onto [M, N], run-time or constant operands) and Det
 * (the determinants of the trailing [M, M] matrices, by LU decomposition with partial pivoting
 * in double, one matrix at a time in the step's scratch). Gemm's rows split across the plan's
 * threads. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

/* ---- Gemm ----------------------------------------------------------------------------------- */

/* C broadcasts onto [M, N] (numpy, unidirectional): its dims into CD[2] (1 where absent). */
static bool c_broadcasts(const bd_shape *c, int64_t m, int64_t n, int64_t *cd)
{
    if (c->rank > 2)
        return false;
    cd[0] = c->rank == 2 ? c->dims[0] : 1;
    cd[1] = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    return (cd[0] == 1 || cd[0] == m) && (cd[1] == 1 || cd[1] == n);
}

static bool gemm_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 2 || n->n_inputs > 3 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "Gemm: expects A, B, optional C and one output");
    if (!nv_io_ok(n, 3, NV_DT_FLOATS, why, len))
        return false;
    if (bd_node_attr(n, "broadcast"))
        return nv_why(why, len, "Gemm: the legacy broadcast attribute");
    const bd_value *a = n->inputs[0], *b = n->inputs[1], *c = bd_node_input(n, 2);
    const bd_shape *as = &a->shape, *bs = &b->shape;
    if (as->rank != 2 || bs->rank != 2 || b->dtype != a->dtype || (c && c->dtype != a->dtype))
        return nv_why(why, len, "Gemm: 2-D A and B of one dtype");
    bool ta = bd_node_attr_int(n, "transA", 0), tb = bd_node_attr_int(n, "transB", 0);
    int64_t m = as->dims[ta], k = as->dims[!ta], kb = bs->dims[tb], nn = bs->dims[!tb], cd[2];
    int64_t want[2] = { m, nn };
    bd_shape ys = bd_shape_make(2, want);
    if (k != kb || (c && !c_broadcasts(&c->shape, m, nn, cd)) ||
        !bd_shape_equal(&n->outputs[0]->shape, &ys) || n->outputs[0]->dtype != a->dtype)
        return nv_why(why, len, "Gemm: the shapes do not fit [M, K] x [K, N] (+ C) -> [M, N]");
    return true;
}

typedef struct gemm_job {
    const nv_step *s;
    const nv_tensor *a, *b, *c;
    nv_tensor     *y;
    int64_t        m, n, k, cd[2];
} gemm_job;

#define GEMM_ROWS(sfx, T)                                                                     \
    static void rows_##sfx(void *vjob, size_t lo, size_t cnt)                                 \
    {                                                                                         \
        const gemm_job *j = vjob;                                                             \
        const T *a = j->a->data, *b = j->b->data, *c = j->c ? j->c->data : NULL;               \
        T *y = j->y->data;                                                                    \
        bool ta = j->s->ip[0], tb = j->s->ip[1];                                              \
        double alpha = j->s->fp[0], beta = j->s->fp[1];                                       \
        int64_t n = j->n, k = j->k, m = j->m;                                                 \
        for (size_t r = lo; r < lo + cnt; r++)                                                \
            for (int64_t col = 0; col < n; col++) {                                           \
                double acc = 0;                                                               \
                for (int64_t q = 0; q < k; q++)                                               \
                    acc += (double)a[ta ? q * m + (int64_t)r : (int64_t)r * k + q] *          \
                           (double)b[tb ? col * k + q : q * n + col];                         \
                double v = alpha * acc;                                                       \
                if (c)                                                                        \
                    v += beta * (double)c[(j->cd[0] == 1 ? 0 : (int64_t)r) * j->cd[1] +       \
                                          (j->cd[1] == 1 ? 0 : col)];                         \
                y[(int64_t)r * n + col] = (T)v;                                               \
            }                                                                                 \
    }
GEMM_ROWS(f32, float)
GEMM_ROWS(f64, double)

static int gemm_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    bool ta = s->ip[0];
    gemm_job j = { .s = s, .a = &in[0], .b = &in[1], .y = &out[0],
                   .c = s->n_in > 2 && s->in[2] >= 0 ? &in[2] : NULL,
                   .m = in[0].dims[ta], .k = in[0].dims[!ta], .n = in[1].dims[!s->ip[1]] };
    if (j.c) {                          /* supports() checked that C broadcasts */
        j.cd[0] = j.c->rank == 2 ? j.c->dims[0] : 1;
        j.cd[1] = j.c->rank >= 1 ? j.c->dims[j.c->rank - 1] : 1;
    }
    if (out[0].numel)
        nv_parallel_for((size_t)j.m, out[0].numel * (size_t)(j.k ? j.k : 1),
                        in[0].dtype == BD_DT_FLOAT ? rows_f32 : rows_f64, &j);
    return 0;
}

static int gemm_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "transA", 0) != 0;
    s->ip[1] = bd_node_attr_int(n, "transB", 0) != 0;
    s->fp[0] = bd_node_attr_float(n, "alpha", 1.0f);
    s->fp[1] = bd_node_attr_float(n, "beta", 1.0f);
    s->run = gemm_run;
    return 0;
}

/* ---- Det ------------------------------------------------------------------------------------ */

static bool det_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "Det: expects one input and one output");
    if (!nv_io_ok(n, 1, NV_DT_FLOATS, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape;
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return nv_why(why, len, "Det: the input must be [..., M, M]");
    bd_shape want = bd_shape_make(x->rank - 2, x->dims);
    if (!bd_shape_equal(&n->outputs[0]->shape, &want) || n->outputs[0]->dtype != n->inputs[0]->dtype)
        return nv_why(why, len, "Det: the output must be the input's batch dims");
    return true;
}

/* The determinant of the M x M matrix A (overwritten), by LU with partial pivoting. */
static double lu_det(double *a, int64_t m)
{
    double det = 1;
    for (int64_t c = 0; c < m; c++) {
        int64_t p = c;
        for (int64_t r = c + 1; r < m; r++)
            if (fabs(a[r * m + c]) > fabs(a[p * m + c]))
                p = r;
        if (a[p * m + c] == 0)
            return 0;
        if (p != c) {
            for (int64_t k = 0; k < m; k++) {
                double t = a[c * m + k];
                a[c * m + k] = a[p * m + k];
                a[p * m + k] = t;
            }
            det = -det;
        }
        double piv = a[c * m + c];
        det *= piv;
        for (int64_t r = c + 1; r < m; r++) {
            double f = a[r * m + c] / piv;
            for (int64_t k = c + 1; k < m; k++)
                a[r * m + k] -= f * a[c * m + k];
        }
    }
    return det;
}

static int det_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    (void)s;
    (void)err;
    const nv_tensor *x = &in[0];
    int64_t m = x->dims[x->rank - 1];
    size_t mm = (size_t)(m * m);
    double *a = nv_scratch(env);
    for (size_t q = 0; q < out[0].numel; q++) {
        for (size_t i = 0; i < mm; i++)
            a[i] = nv_get_f(x->data, x->dtype, q * mm + i);
        nv_set_f(out[0].data, out[0].dtype, q, lu_det(a, m));
    }
    return 0;
}

static int det_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const bd_shape *x = &n->inputs[0]->shape;
    size_t m = (size_t)x->dims[x->rank - 1];
    s->scratch = m * m * sizeof(double);
    s->run = det_run;
    return 0;
}

const nv_op nv_linalg_ops[] = {
    { "Gemm", gemm_supports, gemm_prepare },
    { "Det", det_supports, det_prepare },
};
const size_t nv_linalg_n = sizeof nv_linalg_ops / sizeof nv_linalg_ops[0];
