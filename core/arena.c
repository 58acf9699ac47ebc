#include "core/arena.h"

#include <stdlib.h>
#include <stdint.h>

typedef struct sized { size_t size, index; } sized;

static int by_size_desc(const void *a, const void *b)
{
    const sized *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;   /* stable: deterministic layout */
}

static size_t align_up(size_t x)
{
    return (x + BD_ARENA_ALIGN - 1) & ~(size_t)(BD_ARENA_ALIGN - 1);
}

size_t bd_arena_plan(const bd_arena_req *reqs, size_t n, size_t *offsets)
{
    if (n == 0)
        return 0;
    sized  *order  = malloc(n * sizeof *order);
    size_t *placed = malloc(n * sizeof *placed);   /* indices already assigned, by offset */
    if (!order || !placed) {
        free(order);
        free(placed);
        return (size_t)-1;
    }
    /* Every offset is at most the sum of the aligned sizes: when that sum fits, nothing below
     * can overflow. */
    size_t sum = 0;
    for (size_t i = 0; i < n; i++)
        if (reqs[i].size > SIZE_MAX / 2 || __builtin_add_overflow(sum, align_up(reqs[i].size ? reqs[i].size : 1), &sum)) {
            free(order);
            free(placed);
            return (size_t)-1;
        }
    for (size_t i = 0; i < n; i++)
        order[i] = (sized){ reqs[i].size, i };
    qsort(order, n, sizeof *order, by_size_desc);

    size_t total = 0, n_placed = 0;
    for (size_t oi = 0; oi < n; oi++) {
        size_t i = order[oi].index, size = align_up(reqs[i].size ? reqs[i].size : 1);
        size_t off = 0;
        /* Bump OFF past every live-overlapping block it collides with, until it fits. */
        for (int moved = 1; moved;) {
            moved = 0;
            for (size_t k = 0; k < n_placed; k++) {
                size_t j = placed[k];
                if (reqs[j].last < reqs[i].first || reqs[i].last < reqs[j].first)
                    continue;                               /* lifetimes disjoint */
                size_t jend = offsets[j] + align_up(reqs[j].size ? reqs[j].size : 1);
                if (off + size <= offsets[j] || jend <= off)
                    continue;                               /* no memory overlap */
                off = jend;
                moved = 1;
            }
        }
        offsets[i] = off;
        if (off + size > total)
            total = off + size;
        /* insert I into PLACED keeping offset order */
        size_t at = n_placed;
        while (at > 0 && offsets[placed[at - 1]] > off) {
            placed[at] = placed[at - 1];
            at--;
        }
        placed[at] = i;
        n_placed++;
    }
    free(order);
    free(placed);
    return total;
}
