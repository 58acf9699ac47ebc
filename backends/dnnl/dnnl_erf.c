/* Erf, the one elementwise op of BERT's exact GELU that oneDNN 2.6 has no primitive for
 * (dnnl_eltwise.c: its gelu_erf covers the whole GELU, not an Erf between quantization
 * pairs). Why not by hand: glibc's vector math library (libmvec, glibc >= 2.35) has an 8-wide
 * AVX2 erff as accurate as libm's, where a scalar erff call per element was 14% of a QDQ
 * BERT-base's run. Without libmvec at build time, or AVX2 at run time, libm's erff runs. */
#include <math.h>
#include <pthread.h>

#include "backends/dnnl/dnnl_internal.h"

#ifdef BD_HAVE_MVEC_ERFF
#include <immintrin.h>

/* The x86-64 vector function ABI's name for erff over 8 floats in an AVX2 register. */
__attribute__((target("avx2"))) __m256 _ZGVdN8v_erff(__m256 x);

static bool g_avx2;
static pthread_once_t g_avx2_once = PTHREAD_ONCE_INIT;

static void probe_avx2(void)
{
    __builtin_cpu_init();
    g_avx2 = __builtin_cpu_supports("avx2");
}

__attribute__((target("avx2")))
static void erf_avx2(const float *x, float *y, size_t n, const void *params)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _ZGVdN8v_erff(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        y[i] = erff(x[i]);
}
#endif

static void erf_scalar(const float *x, float *y, size_t n, const void *params)
{
    for (size_t i = 0; i < n; i++)
        y[i] = erff(x[i]);
}

void dn_erf(const float *x, float *y, size_t n)
{
    dn_range_fn range = erf_scalar;
#ifdef BD_HAVE_MVEC_ERFF
    pthread_once(&g_avx2_once, probe_avx2);
    if (g_avx2)
        range = erf_avx2;
#endif
    dn_elementwise(x, y, n, 16384, range, NULL);
}
