#include "tests/lib/tl_compare.h"

#include <math.h>
#include <stdio.h>

tl_diff tl_diff_f32(const float *got, const float *ref, size_t n)
{
    tl_diff d = { .max_abs = 0, .max_ref = 1, .worst = 0 };
    for (size_t i = 0; i < n; i++)
        if (fabs(ref[i]) > d.max_ref)
            d.max_ref = fabs(ref[i]);
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        if (isnan(e))
            e = INFINITY;
        if (e > d.max_abs) {
            d.max_abs = e;
            d.worst = i;
        }
    }
    return d;
}

bool tl_close_f32(const char *what, const float *got, const float *ref, size_t n, double rel_tol)
{
    tl_diff d = tl_diff_f32(got, ref, n);
    printf("    %-44s n=%-7zu max abs err %.3g (rel %.3g)\n", what, n, d.max_abs,
           d.max_abs / d.max_ref);
    bool ok = d.max_abs <= rel_tol * d.max_ref;
    if (!ok)
        fprintf(stderr, "%s: element %zu got %g want %g\n", what, d.worst, got[d.worst],
                ref[d.worst]);
    return ok;
}
