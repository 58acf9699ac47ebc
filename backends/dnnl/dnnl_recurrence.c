/* LSTM, and GRU as PyTorch exports it (linear_before_reset), at small batch on braid's own
 * recurrence, where the CPU has AVX-512. oneDNN 2.6's LSTM primitive took 2.7 ms at batch 1
 * on the zoo's tagger (bidirectional, 64 steps, hidden 256), where ONNX Runtime's LSTM took
 * 1.9; no library kernel covers this case faster, so it is written here.
 *
 * Two steps:
 *   1. the input projection of every time step and both directions at once, one oneDNN
 *      matmul: Gx [T*N, D*GH] = X [T*N, I] . W^T + bias (LSTM: Wb + Rb; GRU: Wb + Rb for z
 *      and r, Wb alone for h, whose Rb the cell adds inside r's product);
 *   2. the recurrence (DN_STEP_RECURRENCE): per time step and direction, G = h [N, H] . R^T,
 *      then the gates on G + Gx. At batch 1 the product reads all of R (1 MiB for an LSTM of
 *      hidden 256) for G*H outputs, so it is bound by how fast one core streams R from its L2
 *      (~100 GB/s measured here). R is packed in panels of 64 gate columns ([GH/64][H][64],
 *      padded with zero columns) so that each k reads one contiguous 256-byte row, and up to
 *      four batch rows share every row read. With two threads the two directions run on
 *      separate cores, each keeping its own R in its own L2.
 *
 * Gates are ONNX's (LSTM i, o, f, c; GRU z, r, h) with the default activations;
 * dn_rnn_supports has refused peepholes, clip, input_forget, sequence_lens and layout 1
 * before this is reached. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "backends/dnnl/dnnl_avx512_math.h"
#include "backends/dnnl/dnnl_internal.h"

#define LS_COLS 64        /* gate columns per panel of R: four zmm registers */
#define LS_ROWS 4         /* batch rows that share one pass over R */

/* The step's parameters in dn_native.ip, and the state's layout. */
enum { IP_KIND, IP_T, IP_N, IP_H, IP_D, IP_REVERSE, IP_J, IP_RBH, IP_H0, IP_C0, IP_Y, IP_YH,
       IP_YC };

typedef struct ls_run {
    int          kind;               /* DN_REC_LSTM, DN_REC_GRU */
    int64_t      t, n, h, d, j;      /* steps, batch, hidden, directions, padded gate columns */
    bool         reverse;            /* unidirectional, last step first */
    const float *gx, *r, *rbh, *h0, *c0;   /* rbh: a GRU's Rb of its h gate, [D, H] */
    float       *state, *y, *yh, *yc;
} ls_run;

static int gates_of(int kind)
{
    return kind == DN_REC_LSTM ? 4 : 3;
}

bool dn_rec_native(int kind, int64_t batch)
{
    /* "0": oneDNN's primitive */
    const char *env = getenv(kind == DN_REC_LSTM ? "BRAID_DNNL_LSTM" : "BRAID_DNNL_GRU");
    return batch >= 1 && batch <= DN_REC_MAX_BATCH && !(env && !strcmp(env, "0")) &&
           dn_avx512();
}

/* Floats of one direction's state: h [N][H], c [N][H] (an LSTM's), G [N][J], rounded to a
 * cache line so that directions on different cores never share one. */
static int64_t state_floats(int64_t n, int64_t h, int64_t j)
{
    return (2 * n * h + n * j + 15) / 16 * 16;
}

/* G[r][0:64] = sum_k H[r][k] P[k][0:64] for the NR batch rows of H (row stride HS) against
 * one panel P ([HS][64]); G's rows are J apart. */
__attribute__((target("avx512f"), always_inline))
static inline void panel_rows(const float *p, const float *h, int64_t hs, float *g, int64_t j,
                              const int nr)
{
    __m512 a[LS_ROWS][4];
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < 4; i++)
            a[r][i] = _mm512_setzero_ps();
    for (int64_t k = 0; k < hs; k++) {
        const float *w = p + k * LS_COLS;
        __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
        __m512 w2 = _mm512_loadu_ps(w + 32), w3 = _mm512_loadu_ps(w + 48);
        for (int r = 0; r < nr; r++) {
            __m512 hk = _mm512_set1_ps(h[r * hs + k]);
            a[r][0] = _mm512_fmadd_ps(hk, w0, a[r][0]);
            a[r][1] = _mm512_fmadd_ps(hk, w1, a[r][1]);
            a[r][2] = _mm512_fmadd_ps(hk, w2, a[r][2]);
            a[r][3] = _mm512_fmadd_ps(hk, w3, a[r][3]);
        }
    }
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < 4; i++)
            _mm512_storeu_ps(g + r * j + 16 * i, a[r][i]);
}

/* G [N][J] = H [N][HS] . R^T for one direction's packed R. */
__attribute__((target("avx512f")))
static void recurrent_product(const float *r, const float *h, int64_t n, int64_t hs, float *g,
                              int64_t j)
{
    for (int64_t b = 0; b < n; b += LS_ROWS) {
        int nr = n - b < LS_ROWS ? (int)(n - b) : LS_ROWS;
        for (int64_t q = 0; q < j / LS_COLS; q++) {
            const float *p = r + q * hs * LS_COLS;
            float *gq = g + b * j + q * LS_COLS;
            switch (nr) {                     /* a constant row count: registers, unrolled */
            case 1:  panel_rows(p, h + b * hs, hs, gq, j, 1); break;
            case 2:  panel_rows(p, h + b * hs, hs, gq, j, 2); break;
            case 3:  panel_rows(p, h + b * hs, hs, gq, j, 3); break;
            default: panel_rows(p, h + b * hs, hs, gq, j, 4); break;
            }
        }
    }
}

/* One batch row's LSTM cell: gates from G + Gx (both [4H], ONNX order), c and h updated in
 * place. */
__attribute__((target("avx512f")))
static void lstm_cell(const float *gx, const float *g, float *h, float *c, int64_t hs)
{
    for (int64_t u = 0; u < hs; u += 16) {
        __mmask16 m = hs - u >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (hs - u)) - 1);
#define LS_GATE(k) _mm512_add_ps(_mm512_maskz_loadu_ps(m, g + (k) * hs + u), \
                                 _mm512_maskz_loadu_ps(m, gx + (k) * hs + u))
        __m512 i = dn_sigmoid16(LS_GATE(0)), o = dn_sigmoid16(LS_GATE(1));
        __m512 f = dn_sigmoid16(LS_GATE(2)), cc = dn_tanh16(LS_GATE(3));
#undef LS_GATE
        __m512 cn = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(m, c + u), _mm512_mul_ps(i, cc));
        _mm512_mask_storeu_ps(c + u, m, cn);
        _mm512_mask_storeu_ps(h + u, m, _mm512_mul_ps(o, dn_tanh16(cn)));
    }
}

/* One batch row's GRU cell (linear_before_reset): z, r from G + Gx, the candidate from
 * Gx_h + r * (G_h + Rb_h), h = candidate + z (h - candidate), in place. */
__attribute__((target("avx512f")))
static void gru_cell(const float *gx, const float *g, const float *rbh, float *h, int64_t hs)
{
    for (int64_t u = 0; u < hs; u += 16) {
        __mmask16 m = hs - u >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (hs - u)) - 1);
        __m512 z = dn_sigmoid16(_mm512_add_ps(_mm512_maskz_loadu_ps(m, g + u),
                                              _mm512_maskz_loadu_ps(m, gx + u)));
        __m512 r = dn_sigmoid16(_mm512_add_ps(_mm512_maskz_loadu_ps(m, g + hs + u),
                                              _mm512_maskz_loadu_ps(m, gx + hs + u)));
        __m512 rec = _mm512_add_ps(_mm512_maskz_loadu_ps(m, g + 2 * hs + u),
                                   _mm512_maskz_loadu_ps(m, rbh + u));
        __m512 cand = dn_tanh16(_mm512_fmadd_ps(r, rec, _mm512_maskz_loadu_ps(m, gx + 2 * hs + u)));
        __m512 prev = _mm512_maskz_loadu_ps(m, h + u);
        _mm512_mask_storeu_ps(h + u, m, _mm512_fmadd_ps(z, _mm512_sub_ps(prev, cand), cand));
    }
}

static void run_direction(const ls_run *L, int64_t d)
{
    int64_t n = L->n, hs = L->h, gh = gates_of(L->kind) * hs;
    float *h = L->state + d * state_floats(n, hs, L->j), *c = h + n * hs, *g = c + n * hs;
    size_t bytes = (size_t)(n * hs) * sizeof(float);
    if (L->h0)
        memcpy(h, L->h0 + d * n * hs, bytes);
    else
        memset(h, 0, bytes);
    if (L->c0)
        memcpy(c, L->c0 + d * n * hs, bytes);
    else
        memset(c, 0, bytes);               /* (a GRU's stays unused) */
    const float *r = L->r + d * L->j * hs;
    bool rev = L->reverse || d == 1;
    for (int64_t s = 0; s < L->t; s++) {
        int64_t t = rev ? L->t - 1 - s : s;
        recurrent_product(r, h, n, hs, g, L->j);
        for (int64_t b = 0; b < n; b++) {
            const float *gx = L->gx + ((t * n + b) * L->d + d) * gh;
            if (L->kind == DN_REC_LSTM)
                lstm_cell(gx, g + b * L->j, h + b * hs, c + b * hs, hs);
            else
                gru_cell(gx, g + b * L->j, L->rbh + d * hs, h + b * hs, hs);
            if (L->y)                                  /* Y [T, D, N, H] */
                memcpy(L->y + ((t * L->d + d) * n + b) * hs, h + b * hs, (size_t)hs * sizeof(float));
        }
    }
    if (L->yh)                                         /* Y_h, Y_c [D, N, H] */
        memcpy(L->yh + d * n * hs, h, bytes);
    if (L->yc)
        memcpy(L->yc + d * n * hs, c, bytes);
}

static void *mem_at(dnnl_memory_t *mems, int64_t arg)
{
    void *p = NULL;
    if (arg >= 0)
        dnnl_memory_get_data_handle(mems[arg], &p);
    return p;
}

void dn_rec_run(const dn_step *s, dnnl_memory_t *mems)
{
    const int64_t *ip = s->nat.ip;
    ls_run L = { .kind = (int)ip[IP_KIND], .t = ip[IP_T], .n = ip[IP_N], .h = ip[IP_H],
                 .d = ip[IP_D], .j = ip[IP_J], .reverse = ip[IP_REVERSE] != 0,
                 .gx = mem_at(mems, 0), .r = mem_at(mems, 1), .state = mem_at(mems, 2),
                 .rbh = mem_at(mems, ip[IP_RBH]), .h0 = mem_at(mems, ip[IP_H0]),
                 .c0 = mem_at(mems, ip[IP_C0]), .y = mem_at(mems, ip[IP_Y]),
                 .yh = mem_at(mems, ip[IP_YH]), .yc = mem_at(mems, ip[IP_YC]) };
    if (L.d == 2 && omp_get_max_threads() > 1) {
        #pragma omp parallel for num_threads(2) schedule(static, 1)
        for (int64_t d = 0; d < 2; d++)
            run_direction(&L, d);
    } else {
        for (int64_t d = 0; d < L.d; d++)
            run_direction(&L, d);
    }
}

/* ---- building --------------------------------------------------------------------------- */

/* Step 1: GX = X . W^T + bias, a oneDNN matmul over all steps and directions. */
static int build_projection(dn_compiler *c, const bd_node *n, const dn_rec_geom *g, int gx_buf,
                            const dnnl_memory_desc_t *gx_md)
{
    int64_t gh = gates_of(g->kind) * g->h, cols = g->d * gh, rows = g->t * g->n;
    int64_t x3[3] = { g->t, g->n, g->i }, x2[2] = { rows, g->i }, bd[2] = { 1, cols };
    dnnl_dims_t wd = { g->i, cols };
    dnnl_memory_desc_t x3_md, x2_md, w_src, w_any, b_md;
    dn_md_plain(&x3_md, 3, x3);
    dn_md_plain(&x2_md, 2, x2);
    dn_md_plain(&b_md, 2, bd);
    dn_md_any(&w_any, 2, wd);
    /* W [D, GH, I] is the [I, D*GH] matrix W^T stored column by column */
    if (dn_check(c, dnnl_memory_desc_init_by_tag(&w_src, 2, wd, dnnl_f32, dnnl_ba), "md"))
        return BD_EBACKEND;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd;
    int rc = dn_pd_make(c, dnnl_matmul_desc_init(&desc, &x2_md, &w_any, &b_md, gx_md),
                        "dnnl_matmul_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    const bd_value *b = dn_op_input(n, 3);
    float *bias = calloc((size_t)cols, sizeof *bias);
    int x_buf, w_buf, b_buf;
    rc = bias ? 0 : dn_fail(c, BD_ENOMEM, "out of memory");
    /* B [D, 2*GH]: Wb then Rb per direction; a GRU's Rb of its h gate is the cell's */
    int64_t with_rb = g->kind == DN_REC_LSTM ? gh : 2 * g->h;
    for (int64_t d = 0; !rc && b && d < g->d; d++)
        for (int64_t k = 0; k < gh; k++)
            bias[d * gh + k] = dn_f32_at(b->data, d * 2 * gh + k) +
                               (k < with_rb ? dn_f32_at(b->data, d * 2 * gh + gh + k) : 0.0f);
    if (!rc)
        rc = dn_input(c, dn_op_input(n, 0), &x3_md, &x_buf);
    if (!rc)
        rc = dn_const_shared(c, dn_op_input(n, 1)->data, &w_src,
                             dn_pd_md(pd, dnnl_query_weights_md), &w_buf);
    if (!rc)
        rc = dn_const(c, bias, &b_md, &b_md, &b_buf);
    free(bias);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[4] = { { DNNL_ARG_SRC, x_buf, x2_md },
                       { DNNL_ARG_WEIGHTS, w_buf, *dn_pd_md(pd, dnnl_query_weights_md) },
                       { DNNL_ARG_BIAS, b_buf, b_md },
                       { DNNL_ARG_DST, gx_buf, *gx_md } };
    return dn_add_step(c, pd, args, 4);
}

/* R [D, GH, H] as panels [D][J/64][H][64] (columns past GH are zero). NULL when out of
 * memory. */
static float *pack_r(const void *r, int64_t d, int64_t gh, int64_t hs, int64_t j)
{
    float *p = calloc((size_t)(d * j * hs), sizeof *p);
    if (!p)
        return NULL;
    for (int64_t dd = 0; dd < d; dd++)
        for (int64_t col = 0; col < gh; col++)
            for (int64_t k = 0; k < hs; k++)
                p[dd * j * hs + (col / LS_COLS) * hs * LS_COLS + k * LS_COLS + col % LS_COLS] =
                    dn_f32_at(r, (dd * gh + col) * hs + k);
    return p;
}

/* A constant [D, H] of a GRU's Rb for its h gate (zeros without B) into *BUF. */
static int const_rbh(dn_compiler *c, const bd_node *n, const dn_rec_geom *g, int *buf)
{
    const bd_value *b = dn_op_input(n, 3);
    int64_t dims[1] = { g->d * g->h }, gh = 3 * g->h;
    dnnl_memory_desc_t md;
    dn_md_plain(&md, 1, dims);
    float *v = calloc((size_t)dims[0], sizeof *v);
    if (!v)
        return dn_fail(c, BD_ENOMEM, "out of memory");
    for (int64_t d = 0; b && d < g->d; d++)
        for (int64_t u = 0; u < g->h; u++)
            v[d * g->h + u] = dn_f32_at(b->data, d * 2 * gh + gh + 2 * g->h + u);
    int rc = dn_const(c, v, &md, &md, buf);
    free(v);
    return rc;
}

int dn_rec_build(dn_compiler *c, const bd_node *n, const dn_rec_geom *g)
{
    int64_t gh = gates_of(g->kind) * g->h, j = (gh + LS_COLS - 1) / LS_COLS * LS_COLS;
    int64_t gxd[2] = { g->t * g->n, g->d * gh }, rd[1] = { g->d * j * g->h },
            sd[1] = { g->d * state_floats(g->n, g->h, j) };
    dnnl_memory_desc_t gx_md, r_md, s_md;
    dn_md_plain(&gx_md, 2, gxd);
    dn_md_plain(&r_md, 1, rd);
    dn_md_plain(&s_md, 1, sd);
    int gx_buf, r_buf, s_buf, buf, rc;
    if ((rc = dn_temp(c, &gx_md, &gx_buf)) || (rc = build_projection(c, n, g, gx_buf, &gx_md)))
        return rc;
    float *packed = pack_r(dn_op_input(n, 2)->data, g->d, gh, g->h, j);
    if (!packed)
        return dn_fail(c, BD_ENOMEM, "out of memory packing R");
    rc = dn_const(c, packed, &r_md, &r_md, &r_buf);
    free(packed);
    if (rc || (rc = dn_temp(c, &s_md, &s_buf)))
        return rc;
    dn_native nat = { .ip = { [IP_KIND] = g->kind, [IP_T] = g->t, [IP_N] = g->n, [IP_H] = g->h,
                              [IP_D] = g->d, [IP_REVERSE] = g->reverse, [IP_J] = j,
                              [IP_RBH] = -1, [IP_H0] = -1, [IP_C0] = -1, [IP_Y] = -1,
                              [IP_YH] = -1, [IP_YC] = -1 } };
    dn_arg args[9] = { { DNNL_ARG_MULTIPLE_SRC, gx_buf, gx_md },
                       { DNNL_ARG_MULTIPLE_SRC + 1, r_buf, r_md },
                       { DNNL_ARG_MULTIPLE_SRC + 2, s_buf, s_md } };
    int na = 3;
    if (g->kind == DN_REC_GRU) {
        if ((rc = const_rbh(c, n, g, &buf)))
            return rc;
        int64_t dims[1] = { g->d * g->h };
        nat.ip[IP_RBH] = na;
        args[na] = (dn_arg){ DNNL_ARG_MULTIPLE_SRC + na, buf, { 0 } };
        dn_md_plain(&args[na].md, 1, dims);
        na++;
    }
    size_t states = g->kind == DN_REC_LSTM ? 2 : 1;
    for (size_t k = 0; k < states; k++) {              /* initial_h (, initial_c): [D, N, H] */
        const bd_value *v = dn_op_input(n, 5 + k);
        dnnl_memory_desc_t md;
        if (!v)
            continue;
        if ((rc = dn_input_plain(c, v, &buf, &md)))
            return rc;
        nat.ip[IP_H0 + k] = na;
        args[na] = (dn_arg){ DNNL_ARG_MULTIPLE_SRC + na, buf, md };
        na++;
    }
    for (size_t k = 0; k < n->n_outputs && k < 1 + states; k++) {   /* Y, Y_h (, Y_c) */
        dnnl_memory_desc_t md;
        dn_md_of_shape(&md, n->outputs[k]);
        if ((rc = dn_output(c, n->outputs[k], &md, &buf)))
            return rc;
        nat.ip[IP_Y + k] = na;
        args[na] = (dn_arg){ DNNL_ARG_MULTIPLE_DST + (int)k, buf, md };
        na++;
    }
    return dn_add_native(c, DN_STEP_RECURRENCE, args, na, &nat);
}
