/* Comparing a result with a reference in tests. */
#ifndef BD_TESTS_LIB_TL_COMPARE_H
#define BD_TESTS_LIB_TL_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tl_diff {
    double max_abs;   /* max |got - ref|; +inf when any element is NaN on either side */
    double max_ref;   /* max(1, max |ref|): the scale a relative tolerance applies to */
    size_t worst;     /* index of the element with the largest error */
} tl_diff;

/* Element-wise difference of N floats. */
tl_diff tl_diff_f32(const float *got, const float *ref, size_t n);

/* True when max |got - ref| <= REL_TOL * max(1, max |ref|). Prints one line naming WHAT, N and
 * the errors to stdout; on failure also the worst element to stderr. */
bool tl_close_f32(const char *what, const float *got, const float *ref, size_t n, double rel_tol);

#endif
