/* Swish (SiLU, x * sigmoid(alpha * x)) as a native step. oneDNN 2.6's swish costs 0.4-0.6 ns
 * per element on these Zen 4 cores as a fused post-op (a 16->96 channel 1x1 conv over 112x112:
 * 0.39 ms alone, 0.87 ms with swish) and 0.63 ns as an eltwise primitive; this AVX-512
 * kernel (sigmoid of dnnl_avx512_math.h) costs 0.23 ns, within 4e-6 of x / (1 + exp(-alpha
 * x)). So where AVX-512 is present, a swish that ends a node's post-ops is taken out of its
 * primitive and runs here, in place over the node's output (every element of the buffer: a
 * blocked layout's padding holds zeros, and swish(0) = 0), and a standalone Swish node runs
 * here too. EfficientNet-B0 has 4.2 million such elements per inference. */
#include <math.h>
#include <string.h>

#include <immintrin.h>

#include "backends/dnnl/dnnl_avx512_math.h"
#include "backends/dnnl/dnnl_internal.h"


bool dn_swish_tail(const bd_node *n)
{
    return n->n_post > 0 && n->post[n->n_post - 1].kind == BD_POST_ELTWISE &&
           n->post[n->n_post - 1].alg == BD_ELT_SWISH && dn_avx512();
}

/* x * sigmoid(a x) */
__attribute__((target("avx512f")))
static inline __m512 swish16(__m512 x, __m512 a)
{
    return _mm512_mul_ps(x, dn_sigmoid16(_mm512_mul_ps(x, a)));
}

__attribute__((target("avx512f")))
static void swish_range(const float *x, float *y, size_t n, float alpha)
{
    __m512 a = _mm512_set1_ps(alpha);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
        __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
        _mm512_storeu_ps(y + i, swish16(v0, a));
        _mm512_storeu_ps(y + i + 16, swish16(v1, a));
        _mm512_storeu_ps(y + i + 32, swish16(v2, a));
        _mm512_storeu_ps(y + i + 48, swish16(v3, a));
    }
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, swish16(_mm512_loadu_ps(x + i), a));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, swish16(_mm512_maskz_loadu_ps(m, x + i), a));
    }
}

static void swish_scalar(const float *x, float *y, size_t n, float alpha)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] / (1.0f + expf(-alpha * x[i]));
}

#define DN_SWISH_CHUNK 8192                 /* elements per task when split across threads */

static void swish_task(const float *x, float *y, size_t n, const void *alpha)
{
    swish_range(x, y, n, *(const float *)alpha);
}

void dn_swish_run(const float *x, float *y, size_t n, float alpha)
{
    if (!dn_avx512()) {
        swish_scalar(x, y, n, alpha);
        return;
    }
    dn_elementwise(x, y, n, DN_SWISH_CHUNK, swish_task, &alpha);
}

int dn_swish_append(dn_compiler *c, const bd_value *y, int sbuf, const dnnl_memory_desc_t *smd,
                    float alpha)
{
    const dn_tensor *t = &c->t[y->index];
    if (!t->defined || t->strided_view || !dn_md_dense(&t->md) || !dn_md_dense(smd) ||
        dnnl_memory_desc_get_size(smd) != dnnl_memory_desc_get_size(&t->md))
        return dn_fail(c, BD_EBACKEND, "swish of '%s' needs a dense output in its input's layout",
                       y->name);
    dn_native nat;
    memset(&nat, 0, sizeof nat);
    nat.fp[0] = alpha;
    dn_arg a[2] = { { DNNL_ARG_SRC, sbuf, *smd }, { DNNL_ARG_DST, t->buf, t->md } };
    return dn_add_native(c, DN_STEP_SWISH, a, 2, &nat);
}
