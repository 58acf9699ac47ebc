/* Sigmoid and tanh on 16 floats with AVX-512, for braid's own native steps (swish, LSTM).
 * exp is 2^n 2^f with n = round(t), f in [-1/2, 1/2] and 2^f a degree-6 polynomial, put back
 * together with scalef; the reciprocal is rcp14 with one Newton step. Within 4e-6 relative of
 * libm's on sigmoid; tanh(x) = 2 sigmoid(2x) - 1 is within 2e-7 absolute. Callers must be
 * compiled for (or dispatch on) avx512f. */
#ifndef BD_BACKENDS_DNNL_DNNL_AVX512_MATH_H
#define BD_BACKENDS_DNNL_DNNL_AVX512_MATH_H

#include <immintrin.h>

/* 1 / (1 + exp(-x)) = 1 / (1 + 2^t), t = -x log2(e) clamped to [-126, 126]. */
__attribute__((target("avx512f")))
static inline __m512 dn_sigmoid16(__m512 x)
{
    __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(-1.44269504f));
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps(-126.0f)), _mm512_set1_ps(126.0f));
    __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_sub_ps(t, n);
    __m512 p = _mm512_set1_ps(1.535336188319500e-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339887440266574e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618437357674640e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550332471162809e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264791363012e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472028550421e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    __m512 d = _mm512_add_ps(_mm512_scalef_ps(p, n), _mm512_set1_ps(1.0f));
    __m512 r = _mm512_rcp14_ps(d);
    return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.0f)), r);
}

/* tanh(x) = 2 sigmoid(2x) - 1. */
__attribute__((target("avx512f")))
static inline __m512 dn_tanh16(__m512 x)
{
    __m512 s = dn_sigmoid16(_mm512_add_ps(x, x));
    return _mm512_fmsub_ps(s, _mm512_set1_ps(2.0f), _mm512_set1_ps(1.0f));
}

#endif
