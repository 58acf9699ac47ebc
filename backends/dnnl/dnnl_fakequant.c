/* FakeQuantize (braid's node for a QDQ pair, partitioner/passes/qdq.c) as braid's own step:
 * y = (saturate(round_half_even(x / s) + z) - z) * s, bit for bit what QuantizeLinear then
 * DequantizeLinear compute (the same float division and rounding; NaN quantizes to 0, as the
 * native engine's QuantizeLinear does: ONNX leaves it undefined).
 *
 * Why by hand: oneDNN 2.6 has no primitive or post-op for it. Its eltwise chain linear ->
 * round -> clip -> linear could express it, but multiplies by 1/s where ONNX divides by s
 * (halfway cases would round apart), and its brgemm kernels apply one set of parameters to
 * every eltwise post-op of a kind (fuse_postops.c), which the two linears here would hit. So
 * a FakeQuantize that ends a node's post-ops runs after the node's primitive, in place over
 * its output (every element of the buffer: a blocked layout's padding holds zeros, and the
 * pair maps 0 to 0), and a standalone one the same way from its input. Where a Conv reads
 * the result as its source (an int8 convolution wants u8 codes, dnnl_int8.c), the step also
 * writes the codes themselves, in the result's layout: the integer it rounded plus the zero
 * point, where a reorder would read the floats again to make the same bytes. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <immintrin.h>

#include "backends/dnnl/dnnl_internal.h"

/* The step's parameters in dn_native.fp: FQ_ZC is the zero point of the u8 codes (an INT8
 * grid's shifted by 128). */
enum { FQ_SCALE = 0, FQ_LO, FQ_HI, FQ_NAN, FQ_ZC };

/* The range function's parameters: dn_native.fp and, or NULL, where the codes go (element i's
 * at CODES[i - X's first element], the chunk's offset taken from X). */
typedef struct fq_args {
    const float   *p;
    const float   *x0;
    unsigned char *codes;
} fq_args;

static bool g_avx2;
static pthread_once_t g_avx2_once = PTHREAD_ONCE_INIT;

static void probe_avx2(void)
{
    __builtin_cpu_init();
    g_avx2 = __builtin_cpu_supports("avx2");
}

static void fq_scalar(const float *x, float *y, size_t n, const float *p, unsigned char *codes)
{
    for (size_t i = 0; i < n; i++) {
        float r = nearbyintf(x[i] / p[FQ_SCALE]);
        r = r != r ? p[FQ_NAN] : r < p[FQ_LO] ? p[FQ_LO] : r > p[FQ_HI] ? p[FQ_HI] : r;
        y[i] = r * p[FQ_SCALE];
        if (codes)
            codes[i] = (unsigned char)(int)(r + p[FQ_ZC]);
    }
}

/* The clipped integers of 8 values (NaN's is NANQ). */
__attribute__((target("avx2")))
static inline __m256 fq8_int(__m256 x, __m256 s, __m256 lo, __m256 hi, __m256 nanq)
{
    __m256 r = _mm256_round_ps(_mm256_div_ps(x, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 nan = _mm256_cmp_ps(r, r, _CMP_UNORD_Q);
    r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
    return _mm256_blendv_ps(r, nanq, nan);
}

__attribute__((target("avx2")))
static inline __m256 fq8(__m256 x, __m256 s, __m256 lo, __m256 hi, __m256 nanq)
{
    return _mm256_mul_ps(fq8_int(x, s, lo, hi, nanq), s);
}

/* fq8 that also stores the 8 values' u8 codes (integer + ZC, within 0..255) at CODES. */
__attribute__((target("avx2")))
static inline __m256 fq8_codes(__m256 x, __m256 s, __m256 lo, __m256 hi, __m256 nanq, __m256 zc,
                               unsigned char *codes)
{
    __m256 r = fq8_int(x, s, lo, hi, nanq);
    __m256i q = _mm256_cvtps_epi32(_mm256_add_ps(r, zc));
    __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64((__m128i *)codes, _mm_packus_epi16(w, w));
    return _mm256_mul_ps(r, s);
}

__attribute__((target("avx2")))
static void fq_avx2(const float *x, float *y, size_t n, const float *p)
{
    __m256 s = _mm256_set1_ps(p[FQ_SCALE]), lo = _mm256_set1_ps(p[FQ_LO]);
    __m256 hi = _mm256_set1_ps(p[FQ_HI]), nanq = _mm256_set1_ps(p[FQ_NAN]);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
        _mm256_storeu_ps(y + i, fq8(v0, s, lo, hi, nanq));
        _mm256_storeu_ps(y + i + 8, fq8(v1, s, lo, hi, nanq));
        _mm256_storeu_ps(y + i + 16, fq8(v2, s, lo, hi, nanq));
        _mm256_storeu_ps(y + i + 24, fq8(v3, s, lo, hi, nanq));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, fq8(_mm256_loadu_ps(x + i), s, lo, hi, nanq));
    fq_scalar(x + i, y + i, n - i, p, NULL);
}

__attribute__((target("avx2")))
static void fq_avx2_codes(const float *x, float *y, size_t n, const float *p, unsigned char *codes)
{
    __m256 s = _mm256_set1_ps(p[FQ_SCALE]), lo = _mm256_set1_ps(p[FQ_LO]);
    __m256 hi = _mm256_set1_ps(p[FQ_HI]), nanq = _mm256_set1_ps(p[FQ_NAN]);
    __m256 zc = _mm256_set1_ps(p[FQ_ZC]);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, fq8_codes(_mm256_loadu_ps(x + i), s, lo, hi, nanq, zc, codes + i));
    fq_scalar(x + i, y + i, n - i, p, codes + i);
}

static void fq_range(const float *x, float *y, size_t n, const void *params)
{
    const fq_args *a = params;
    unsigned char *codes = a->codes ? a->codes + (x - a->x0) : NULL;
    if (g_avx2 && codes)
        fq_avx2_codes(x, y, n, a->p, codes);
    else if (g_avx2)
        fq_avx2(x, y, n, a->p);
    else
        fq_scalar(x, y, n, a->p, codes);
}

#define DN_FQ_CHUNK 16384                 /* elements per task when split across threads */

void dn_fakequant_run(const dn_step *s, dnnl_memory_t *mems)
{
    void *x = NULL, *y = NULL, *codes = NULL;
    dnnl_memory_get_data_handle(mems[0], &x);
    dnnl_memory_get_data_handle(mems[1], &y);
    if (s->nargs > 2)
        dnnl_memory_get_data_handle(mems[2], &codes);
    fq_args a = { s->nat.fp, x, codes };
    pthread_once(&g_avx2_once, probe_avx2);
    dn_elementwise(x, y, dnnl_memory_desc_get_size(&s->args[0].md) / sizeof(float), DN_FQ_CHUNK,
                   fq_range, &a);
}

/* The step's parameters for scale S, zero point Z of a UINT8 (else INT8) range. */
static void fq_params(dn_native *nat, float s, float z, bool u8)
{
    memset(nat, 0, sizeof *nat);
    nat->fp[FQ_SCALE] = s;
    nat->fp[FQ_LO] = (u8 ? 0.0f : -128.0f) - z;
    nat->fp[FQ_HI] = (u8 ? 255.0f : 127.0f) - z;
    nat->fp[FQ_NAN] = -z;
    nat->fp[FQ_ZC] = z + (u8 ? 0.0f : 128.0f);
}

/* Append the step from SBUF (layout SMD) into Y's buffer, which has SMD's size; with Y's u8
 * codes too, cached as Y's copy in that layout (source_u8 finds them), when a Conv reads Y. */
static int fq_append(dn_compiler *c, const bd_value *y, int sbuf, const dnnl_memory_desc_t *smd,
                     const dn_native *nat)
{
    const dn_tensor *t = &c->t[y->index];
    if (!t->defined || t->strided_view || !dn_md_dense(&t->md) || !dn_md_dense(smd) ||
        dnnl_memory_desc_get_size(smd) != dnnl_memory_desc_get_size(&t->md))
        return dn_fail(c, BD_EBACKEND, "fake quantization of '%s' needs a dense output in its "
                       "input's layout", y->name);
    dn_arg a[3] = { { DNNL_ARG_SRC, sbuf, *smd }, { DNNL_ARG_DST, t->buf, t->md } };
    int na = 2, rc;
    static const int64_t whole[3] = { 0 };
    bool only;
    if (dn_int8_code_readers(c, y, &only) > 0) {
        dnnl_memory_desc_t cmd = t->md;                 /* the codes, in the result's layout */
        cmd.data_type = dnnl_u8;
        int cbuf;
        if ((rc = dn_temp(c, &cmd, &cbuf)) || (rc = dn_cache_copy(c, y, &cmd, whole, cbuf)))
            return rc;
        a[na++] = (dn_arg){ DNNL_ARG_DST_1, cbuf, cmd };
    }
    return dn_add_native(c, DN_STEP_FAKEQUANT, a, na, nat);
}

bool dn_fakequant_tail(const bd_node *n)
{
    return n->n_post > 0 && n->post[n->n_post - 1].kind == BD_POST_ELTWISE &&
           (n->post[n->n_post - 1].alg == BD_ELT_FAKEQUANT_U8 ||
            n->post[n->n_post - 1].alg == BD_ELT_FAKEQUANT_S8);
}

int dn_fakequant_tail_append(dn_compiler *c, const bd_node *n)
{
    const bd_postop *p = &n->post[n->n_post - 1];
    const dn_tensor *t = &c->t[n->outputs[0]->index];
    dn_native nat;
    fq_params(&nat, p->alpha, p->beta, p->alg == BD_ELT_FAKEQUANT_U8);
    return fq_append(c, n->outputs[0], t->buf, &t->md, &nat);
}

/* The node's scale, zero point and range; false when they are not a valid QDQ pair's. */
static bool attrs_of(const bd_node *n, float *s, int64_t *z, bool *u8)
{
    *s = bd_node_attr_float(n, "scale", 0.0f);
    *z = bd_node_attr_int(n, "zero_point", 0);
    int64_t to = bd_node_attr_int(n, "to", BD_DT_UINT8);
    *u8 = to == BD_DT_UINT8;
    return *s > 0.0f && isfinite(*s) && (to == BD_DT_UINT8 || to == BD_DT_INT8) &&
           *z >= (*u8 ? 0 : -128) && *z <= (*u8 ? 255 : 127);
}

bool dn_fakequant_postop_ok(const bd_postop *p)
{
    bool u8 = p->alg == BD_ELT_FAKEQUANT_U8;
    return p->alpha > 0.0f && isfinite(p->alpha) && p->beta == nearbyintf(p->beta) &&
           p->beta >= (u8 ? 0.0f : -128.0f) && p->beta <= (u8 ? 255.0f : 127.0f);
}

bool dn_fakequant_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    float s;
    int64_t z;
    bool u8;
    if (strcmp(n->domain, "braid") || n->n_inputs != 1 || n->n_outputs != 1)
        return dn_why(why, len, "FakeQuantize: braid's node of one input and one output");
    if (!attrs_of(n, &s, &z, &u8))
        return dn_why(why, len, "FakeQuantize: the scale must be a finite positive float and the "
                      "zero point in the range of 'to' (UINT8 or INT8)");
    if (!dn_no_post(n, why, len) || !dn_io_f32(n, 1, why, len))
        return false;
    return true;
}

int dn_fakequant_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    float s;
    int64_t z;
    bool u8;
    if (!attrs_of(n, &s, &z, &u8))
        return dn_fail(c, BD_EUNSUPPORTED, "FakeQuantize: invalid scale or zero point");
    int rc, sbuf, dbuf;
    if ((rc = dn_input(c, x, NULL, &sbuf)))
        return rc;
    dnnl_memory_desc_t md = c->t[x->index].md;
    if ((c->t[x->index].strided_view || !dn_md_dense(&md)) && (rc = dn_input_plain(c, x, &sbuf, &md)))
        return rc;
    rc = dn_can_reuse(c, x, &md) ? dn_define_view(c, y, sbuf, &md, false) : dn_output(c, y, &md, &dbuf);
    if (rc)
        return rc;
    dn_native nat;
    fq_params(&nat, s, (float)z, u8);
    return fq_append(c, y, sbuf, &md, &nat);
}
