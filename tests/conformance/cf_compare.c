/* The tolerance rule of the conformance runner (see conformance.h and docs/conformance.md). */
#include "tests/conformance/conformance.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_float(int dt)
{
    return dt == BD_DT_FLOAT || dt == BD_DT_DOUBLE || dt == BD_DT_FLOAT16 || dt == BD_DT_BFLOAT16;
}

/* DLPack 0.6 has no bool (braid hands BOOL back as uint8), and ONNX's test data stores
 * BFLOAT16 results as UINT16 words: both pairs carry the same bytes. */
static int canonical(int dt)
{
    return dt == BD_DT_UINT8 ? BD_DT_BOOL : dt == BD_DT_UINT16 ? BD_DT_BFLOAT16 : dt;
}

static double as_double(const void *p, int dt, size_t i)
{
    switch (dt) {
    case BD_DT_FLOAT:   return ((const float *)p)[i];
    case BD_DT_DOUBLE:  return ((const double *)p)[i];
    case BD_DT_FLOAT16: { _Float16 h; memcpy(&h, (const uint16_t *)p + i, 2); return (double)h; }
    case BD_DT_BFLOAT16: {
        uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    default: return 0.0;
    }
}

/* Integers and bools compare as their bytes: exact, whatever the width. */
static bool same_bits(const void *a, const void *b, size_t es, size_t i)
{
    return memcmp((const char *)a + i * es, (const char *)b + i * es, es) == 0;
}

static void dims_str(const cf_view *v, char *buf, size_t len)
{
    bd_shape s = bd_shape_make(v->rank, v->dims);
    bd_shape_str(&s, buf, len);
}

bool cf_compare(const char *name, const cf_view *got, const cf_view *want, char *why, size_t len)
{
    char gs[96], ws[96];
    if (canonical(got->dtype) != canonical(want->dtype)) {
        snprintf(why, len, "output '%s': dtype %s, expected %s", name, bd_dtype_name(got->dtype),
                 bd_dtype_name(want->dtype));
        return false;
    }
    bool shape_ok = got->rank == want->rank;
    for (int d = 0; shape_ok && d < got->rank; d++)
        shape_ok = got->dims[d] == want->dims[d];
    if (!shape_ok) {
        dims_str(got, gs, sizeof gs);
        dims_str(want, ws, sizeof ws);
        snprintf(why, len, "output '%s': shape %s, expected %s", name, gs, ws);
        return false;
    }
    size_t n = 1;
    for (int d = 0; d < want->rank; d++)
        n *= (size_t)want->dims[d];
    int dt = want->dtype == BD_DT_UINT16 && got->dtype == BD_DT_BFLOAT16 ? BD_DT_BFLOAT16 : got->dtype;
    size_t es = bd_dtype_size(dt);

    size_t bad = 0, first = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        bool ok;
        if (is_float(dt)) {
            double a = as_double(got->data, dt, i), b = as_double(want->data, dt, i);
            if (isnan(a) || isnan(b))
                ok = isnan(a) && isnan(b);
            else if (isinf(a) || isinf(b))
                ok = a == b;
            else
                ok = fabs(a - b) <= CF_ATOL + CF_RTOL * fabs(b);
            if (!ok && !(fabs(a - b) <= worst))
                worst = fabs(a - b);    /* NaN/inf mismatches make WORST NaN or inf */
        } else {
            ok = same_bits(got->data, want->data, es, i);
        }
        if (!ok && bad++ == 0)
            first = i;
    }
    if (bad == 0)
        return true;
    if (is_float(dt))
        snprintf(why, len, "output '%s': %zu of %zu elements differ (max abs diff %.3g; first at "
                 "%zu: got %.6g, expected %.6g)", name, bad, n, worst, first,
                 as_double(got->data, dt, first), as_double(want->data, dt, first));
    else {
        int64_t a = 0, b = 0;
        memcpy(&a, (const char *)got->data + first * es, es < 8 ? es : 8);
        memcpy(&b, (const char *)want->data + first * es, es < 8 ? es : 8);
        snprintf(why, len, "output '%s': %zu of %zu elements differ (first at %zu: got %" PRId64
                 ", expected %" PRId64 ")", name, bad, n, first, a, b);
    }
    return false;
}
