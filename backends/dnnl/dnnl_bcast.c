/* A binary op between a tensor and an operand that varies only along its innermost axis,
 * as a native step: a channels-last tensor and a per-channel operand ([1, C, 1, 1]: the
 * squeeze-excitation scale of MobileNetV3 and EfficientNet), a plain tensor and a last-axis
 * operand (a bias over NHWC or [batch, tokens, C] data). oneDNN 2.6's jit binary walks such a
 * tensor one row (C floats) at a time with a fixed cost per row: 0.31 ns an element at C = 32
 * (1x32x112x112 channels-last: 0.125 ms, where the same product over nChw16c takes 0.018 ms),
 * 0.16 at C = 96, 0.06 at C = 1152. This kernel runs at memory speed whatever C is: rows of C
 * floats against the operand held in L1. Below 16 floats a row, oneDNN keeps the op. */
#include <string.h>

#include <immintrin.h>
#include <omp.h>

#include "backends/dnnl/dnnl_internal.h"

/* One row: y[c] = x[c] op s[c] for c < C (REV: s[c] op x[c]). */
#define ROW_SCALAR(OP)                                                                       \
    for (int64_t c = 0; c < C; c++) {                                                        \
        float u = rev ? s[c] : x[c], v = rev ? x[c] : s[c];                                  \
        y[c] = OP;                                                                           \
    }

static void row_scalar(int op, bool rev, const float *x, const float *s, float *y, int64_t C)
{
    switch (op) {
    case DN_BCAST_ADD: ROW_SCALAR(u + v); break;
    case DN_BCAST_SUB: ROW_SCALAR(u - v); break;
    case DN_BCAST_MUL: ROW_SCALAR(u * v); break;
    case DN_BCAST_DIV: ROW_SCALAR(u / v); break;
    case DN_BCAST_MAX: ROW_SCALAR(u > v ? u : (u != u ? u : v)); break;
    default:           ROW_SCALAR(u < v ? u : (u != u ? u : v)); break;
    }
}

__attribute__((target("avx512f")))
static inline __m512 op16(int op, __m512 u, __m512 v)
{
    switch (op) {
    case DN_BCAST_ADD: return _mm512_add_ps(u, v);
    case DN_BCAST_SUB: return _mm512_sub_ps(u, v);
    case DN_BCAST_MUL: return _mm512_mul_ps(u, v);
    case DN_BCAST_DIV: return _mm512_div_ps(u, v);
    default: {                 /* max/min, NaN from either side propagating as oneDNN's does */
        __m512 r = op == DN_BCAST_MAX ? _mm512_max_ps(u, v) : _mm512_min_ps(u, v);
        __mmask16 nan = _mm512_cmp_ps_mask(u, u, _CMP_UNORD_Q);
        return _mm512_mask_mov_ps(r, nan, u);
    }
    }
}

__attribute__((target("avx512f")))
static void rows_avx512(int op, bool rev, const float *x, const float *s, float *y, int64_t C,
                        int64_t rows)
{
    int64_t full = C / 16 * 16;
    __mmask16 tail = (__mmask16)((1u << (C - full)) - 1);
    for (int64_t r = 0; r < rows; r++, x += C, y += C) {
        for (int64_t c = 0; c < full; c += 16) {
            __m512 a = _mm512_loadu_ps(x + c), b = _mm512_loadu_ps(s + c);
            _mm512_storeu_ps(y + c, rev ? op16(op, b, a) : op16(op, a, b));
        }
        if (tail) {
            __m512 a = _mm512_maskz_loadu_ps(tail, x + full), b = _mm512_maskz_loadu_ps(tail, s + full);
            _mm512_mask_storeu_ps(y + full, tail, rev ? op16(op, b, a) : op16(op, a, b));
        }
    }
}

static void rows_run(int op, bool rev, const float *x, const float *s, float *y, int64_t C,
                     int64_t rows)
{
    if (dn_avx512()) {
        rows_avx512(op, rev, x, s, y, C, rows);
        return;
    }
    for (int64_t r = 0; r < rows; r++)
        row_scalar(op, rev, x + r * C, s, y + r * C, C);
}

void dn_bcast_run(const dn_step *st, dnnl_memory_t *mems)
{
    void *px = NULL, *ps = NULL, *py = NULL;
    dnnl_memory_get_data_handle(mems[0], &px);
    dnnl_memory_get_data_handle(mems[1], &ps);
    dnnl_memory_get_data_handle(mems[2], &py);
    int op = (int)st->nat.ip[0];
    bool rev = st->nat.ip[1] != 0;
    int64_t C = st->nat.ip[2];
    int64_t rows = (int64_t)(dnnl_memory_desc_get_size(&st->args[0].md) / sizeof(float)) / C;
    const float *x = px, *s = ps;
    float *y = py;
    int64_t per = (8192 + C - 1) / C;          /* rows per task when split across threads */
    int64_t tasks = (rows + per - 1) / per;
    if (tasks < 4 || omp_get_max_threads() < 2) {
        rows_run(op, rev, x, s, y, C, rows);
        return;
    }
    #pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < tasks; k++) {
        int64_t r0 = k * per, nr = rows - r0 < per ? rows - r0 : per;
        rows_run(op, rev, x + r0 * C, s, y + r0 * C, C, nr);
    }
}

int64_t dn_bcast_fits(const dnnl_memory_desc_t *amd, const bd_shape *b)
{
    int R = amd->ndims, axis;
    if (R < 2 || R > BD_MAX_RANK || b->rank > R)
        return 0;
    dnnl_format_tag_t t = dn_md_tag(amd);
    if (t == dnnl_acb || t == dnnl_acdb || t == dnnl_acdeb)
        axis = 1;                        /* channels-last: the channels are innermost */
    else if (dn_md_is_plain(amd))
        axis = R - 1;                    /* plain: the last axis is */
    else
        return 0;
    for (int i = 0; i < R; i++) {        /* B right-aligned: 1 everywhere but that axis */
        int k = i - (R - b->rank);
        int64_t d = k >= 0 ? b->dims[k] : 1;
        if (d != (i == axis ? amd->dims[axis] : 1))
            return 0;
    }
    return amd->dims[axis] >= 16 ? amd->dims[axis] : 0;
}
