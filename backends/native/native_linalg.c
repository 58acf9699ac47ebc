/* Dense linear algebra where oneDNN does not take the node: Gemm on float and double (any
 * transposes, alpha, beta, a C broadcast onto [M, N], run-time or constant operands), Det
 * (the determinants of the trailing [M, M] matrices, by LU decomposition with partial pivoting
 * in double, one matrix at a time in the step's scratch), and the integer matrix products
 * MatMulInteger (INT8/UINT8 operands less their zero points, INT32 result) and QLinearMatMul
 * (that product scaled by a_scale * b_scale / y_scale in float, plus y_zero_point, saturated
 * and rounded half to even, as ONNX's reference), with numpy's batch broadcasting and 1-D
 * promotion. Gemm's rows and the products' matrices split across the plan's threads. */
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

/* ---- MatMulInteger and QLinearMatMul --------------------------------------------------------- */

#define QM_BYTES (NV_DT(BD_DT_INT8) | NV_DT(BD_DT_UINT8))

/* Operands: a, b and their zero points; QLinearMatMul's scales and y_zero_point (-1: none). */
typedef struct qm_operands {
    int a, b, az, bz, as, bs, ys, yz;
} qm_operands;

static const qm_operands k_qm_integer = { 0, 1, 2, 3, -1, -1, -1, -1 };
static const qm_operands k_qm_qlinear = { 0, 3, 2, 5, 1, 4, 6, 7 };

/* The product's geometry: batch dims (broadcast), M, K, N, and each operand's batch strides. */
typedef struct qm_geom {
    int     rank;                       /* of the output */
    int64_t dims[BD_MAX_RANK];          /* the output's dims */
    int     nb;                         /* batch dims */
    int64_t bd[BD_MAX_RANK], sa[BD_MAX_RANK], sb[BD_MAX_RANK];   /* per batch dim */
    int64_t m, k, n;
} qm_geom;

/* A [..., M, K] times B [..., K, N] with numpy's rules into G; false when they do not fit. */
static bool qm_plan(const bd_shape *a, const bd_shape *b, qm_geom *g)
{
    memset(g, 0, sizeof *g);
    if (a->rank < 1 || b->rank < 1)
        return false;
    int ra = a->rank < 2 ? 2 : a->rank, rb = b->rank < 2 ? 2 : b->rank;
    int64_t ad[BD_MAX_RANK + 1], bdm[BD_MAX_RANK + 1];
    for (int d = 0; d < ra; d++)                /* 1-D A is a row, 1-D B a column */
        ad[d] = a->rank < 2 ? (d == 0 ? 1 : a->dims[0]) : a->dims[d];
    for (int d = 0; d < rb; d++)
        bdm[d] = b->rank < 2 ? (d == 0 ? b->dims[0] : 1) : b->dims[d];
    g->m = ad[ra - 2];
    g->k = ad[ra - 1];
    g->n = bdm[rb - 1];
    if (bdm[rb - 2] != g->k)
        return false;
    g->nb = (ra > rb ? ra : rb) - 2;
    int64_t stride_a = g->m * g->k, stride_b = g->k * g->n;
    for (int d = g->nb - 1; d >= 0; d--) {      /* from the innermost batch dim out */
        int ia = d - (g->nb - (ra - 2)), ib = d - (g->nb - (rb - 2));
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bdm[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        g->bd[d] = da == 1 ? db : da;
        g->sa[d] = da == 1 ? 0 : stride_a;
        g->sb[d] = db == 1 ? 0 : stride_b;
        stride_a *= da;
        stride_b *= db;
    }
    for (int d = 0; d < g->nb; d++)
        g->dims[g->rank++] = g->bd[d];
    if (a->rank >= 2)
        g->dims[g->rank++] = g->m;
    if (b->rank >= 2)
        g->dims[g->rank++] = g->n;
    return true;
}

static const bd_value *qm_input(const bd_node *n, int k)
{
    return k < 0 ? NULL : bd_node_input(n, (size_t)k);
}

/* V is absent, or a FLOAT or MASK-typed scalar, or a vector of COUNT (per row or column). */
static bool qm_param_ok(const bd_value *v, unsigned mask, int64_t count)
{
    size_t c = v ? nv_shape_numel(&v->shape) : 1;
    return !v || (nv_value_ok(v, mask) && v->shape.rank <= 1 && (c == 1 || c == (size_t)count));
}

static bool qm_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool ql = !strcmp(n->op_type, "QLinearMatMul");
    const qm_operands *o = ql ? &k_qm_qlinear : &k_qm_integer;
    if (n->n_inputs < (ql ? 8u : 2u) || n->n_inputs > (ql ? 8u : 4u) || !n->inputs[o->a] ||
        !n->inputs[o->b] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects %s and one output", n->op_type,
                      ql ? "eight inputs" : "A, B and optional zero points");
    const bd_value *a = n->inputs[o->a], *b = n->inputs[o->b], *yz = qm_input(n, o->yz);
    int out_dt = ql ? (yz ? yz->dtype : BD_DT_UNDEFINED) : BD_DT_INT32;
    qm_geom geom;
    if (!nv_value_ok(a, QM_BYTES) || !nv_value_ok(b, QM_BYTES) ||
        (ql && !(QM_BYTES & NV_DT(out_dt))) || !nv_value_ok(n->outputs[0], NV_DT(out_dt)))
        return nv_why(why, len, "%s: INT8/UINT8 operands and a %s output", n->op_type,
                      ql ? "y_zero_point-typed" : "INT32");
    if (!qm_plan(&a->shape, &b->shape, &geom))
        return nv_why(why, len, "%s: the operands do not fit a matrix product", n->op_type);
    bd_shape want = bd_shape_make(geom.rank, geom.dims);
    if (!bd_shape_equal(&n->outputs[0]->shape, &want))
        return nv_why(why, len, "%s: the output's shape is not the product's", n->op_type);
    if (ql && (!qm_input(n, o->as) || !qm_input(n, o->bs) || !qm_input(n, o->ys)))
        return nv_why(why, len, "QLinearMatMul: the scales are required");
    if (!qm_param_ok(qm_input(n, o->az), NV_DT(a->dtype), geom.m) ||
        !qm_param_ok(qm_input(n, o->bz), NV_DT(b->dtype), geom.n) ||
        !qm_param_ok(qm_input(n, o->as), NV_DT(BD_DT_FLOAT), geom.m) ||
        !qm_param_ok(qm_input(n, o->bs), NV_DT(BD_DT_FLOAT), geom.n) ||
        !qm_param_ok(qm_input(n, o->ys), NV_DT(BD_DT_FLOAT), 1) ||
        !qm_param_ok(yz, QM_BYTES, 1))
        return nv_why(why, len, "%s: zero points and scales per tensor, per row of A or per "
                      "column of B", n->op_type);
    return true;
}

typedef struct qm_job {
    const nv_step   *s;
    const qm_operands *o;
    qm_geom          g;
    const nv_tensor *a, *b, *az, *bz, *as, *bs, *ys, *yz;
    nv_tensor       *y;
} qm_job;

static const nv_tensor *qm_tensor(const nv_step *s, const nv_tensor *in, int k)
{
    return k >= 0 && k < s->n_in && s->in[k] >= 0 ? &in[k] : NULL;
}

/* Element K of the per-tensor or per-row/column parameter P, 0 (1.0 for scales) without it. */
static int64_t qm_pi(const nv_tensor *p, int64_t k)
{
    return p ? nv_get_i(p->data, p->dtype, p->numel == 1 ? 0 : (size_t)k) : 0;
}

static float qm_pf(const nv_tensor *p, int64_t k)
{
    return (float)nv_get_f(p->data, p->dtype, p->numel == 1 ? 0 : (size_t)k);
}

/* Matrices [LO, LO + CNT) of the batch. */
static void qm_matrices(void *vjob, size_t lo, size_t cnt)
{
    const qm_job *j = vjob;
    const qm_geom *g = &j->g;
    bool ql = j->yz != NULL;
    for (size_t q = lo; q < lo + cnt; q++) {
        int64_t oa = 0, ob = 0;
        size_t r = q;
        for (int d = g->nb - 1; d >= 0; d--) {
            int64_t i = (int64_t)(r % (size_t)g->bd[d]);
            r /= (size_t)g->bd[d];
            oa += i * g->sa[d];
            ob += i * g->sb[d];
        }
        for (int64_t m = 0; m < g->m; m++)
            for (int64_t n = 0; n < g->n; n++) {
                int64_t acc = 0, za = qm_pi(j->az, m), zb = qm_pi(j->bz, n);
                for (int64_t k = 0; k < g->k; k++)
                    acc += (nv_get_i(j->a->data, j->a->dtype, (size_t)(oa + m * g->k + k)) - za) *
                           (nv_get_i(j->b->data, j->b->dtype, (size_t)(ob + k * g->n + n)) - zb);
                size_t at = (q * (size_t)g->m + (size_t)m) * (size_t)g->n + (size_t)n;
                if (!ql) {
                    nv_set_i(j->y->data, BD_DT_INT32, at, acc);
                    continue;
                }
                float scale = qm_pf(j->as, m) * qm_pf(j->bs, n);
                scale /= qm_pf(j->ys, 0);
                double v = (double)acc * (double)scale + (double)qm_pi(j->yz, 0);
                double lo_v = j->y->dtype == BD_DT_INT8 ? -128 : 0;
                double hi_v = j->y->dtype == BD_DT_INT8 ? 127 : 255;
                v = v != v ? 0 : v < lo_v ? lo_v : v > hi_v ? hi_v : v;
                nv_set_i(j->y->data, j->y->dtype, at, (int64_t)nearbyint(v));
            }
    }
}

static int qm_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                  bd_error *err)
{
    (void)env;
    (void)err;
    const qm_operands *o = s->op ? &k_qm_qlinear : &k_qm_integer;
    qm_job j = { .s = s, .o = o, .a = &in[o->a], .b = &in[o->b], .y = &out[0],
                 .az = qm_tensor(s, in, o->az), .bz = qm_tensor(s, in, o->bz),
                 .as = qm_tensor(s, in, o->as), .bs = qm_tensor(s, in, o->bs),
                 .ys = qm_tensor(s, in, o->ys), .yz = qm_tensor(s, in, o->yz) };
    bd_shape sa = bd_shape_make(j.a->rank, j.a->dims), sb = bd_shape_make(j.b->rank, j.b->dims);
    qm_plan(&sa, &sb, &j.g);
    size_t mats = 1;
    for (int d = 0; d < j.g.nb; d++)
        mats *= (size_t)j.g.bd[d];
    if (out[0].numel)
        nv_parallel_for(mats, out[0].numel * (size_t)(j.g.k ? j.g.k : 1), qm_matrices, &j);
    return 0;
}

static int qm_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(n->op_type, "QLinearMatMul");
    s->run = qm_run;
    return 0;
}

const nv_op nv_linalg_ops[] = {
    { "Gemm", gemm_supports, gemm_prepare },
    { "Det", det_supports, det_prepare },
    { "MatMulInteger", qm_supports, qm_prepare },
    { "QLinearMatMul", qm_supports, qm_prepare },
};
const size_t nv_linalg_n = sizeof nv_linalg_ops / sizeof nv_linalg_ops[0];
