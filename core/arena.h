/* Arena layout from liveness: pack tensors whose lifetimes do not overlap into one buffer.
 * Computed once per plan (or per compiled subgraph); execution contexts then allocate one
 * block of the resulting size, so the hot path never calls malloc. */
#ifndef BD_CORE_ARENA_H
#define BD_CORE_ARENA_H

#include <stddef.h>

#define BD_ARENA_ALIGN 64

typedef struct bd_arena_req {
    size_t size;     /* bytes needed */
    int    first;    /* step that writes it first */
    int    last;     /* last step that reads it (>= first) */
} bd_arena_req;

/* Assign OFFSETS[i] (BD_ARENA_ALIGN-aligned) to each of N requests so that two requests
 * whose [first,last] ranges intersect never overlap in memory. Greedy: largest first, each
 * at the lowest offset that fits. Returns the total size, or (size_t)-1 when out of memory or
 * when the sizes add up past SIZE_MAX / 2. */
size_t bd_arena_plan(const bd_arena_req *reqs, size_t n, size_t *offsets);

#endif
