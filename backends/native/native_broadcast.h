/* Numpy broadcasting for the native engine's element-wise kernels, internal to
 * backends/native/: the output's dims collapsed into as few as possible, with each operand's
 * strides (0 along a broadcast dim), computed once at compile. A run walks the outer dims with
 * an odometer and hands each innermost row to a typed loop whose operand steps are 0 or 1. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_BROADCAST_H
#define BD_BACKENDS_NATIVE_NATIVE_BROADCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ir/dtype.h"

#define NV_BCAST_MAX_OPS 3

typedef struct nv_bcast {
    int     n_ops;                              /* operands (inputs) */
    int     rank;                               /* collapsed rank, >= 1 */
    int64_t dims[BD_MAX_RANK];
    int64_t st[NV_BCAST_MAX_OPS][BD_MAX_RANK];  /* element strides per operand; 0 = broadcast */
    size_t  numel;                              /* output elements */
} nv_bcast;

/* Plan broadcasting N_OPS operands of shapes SHAPES to OUT (which must be their broadcast
 * shape). Returns false when a shape does not broadcast to OUT. */
bool nv_bcast_plan(nv_bcast *b, int n_ops, const bd_shape *const *shapes, const bd_shape *out);

/* One innermost row: LEN elements; operand k starts at element offset OFF[k] and steps by
 * b->st[k][rank-1]; the output at element offset Y_OFF steps by 1. */
typedef void (*nv_row_fn)(const void *ctx, const size_t *off, size_t y_off, size_t len);

/* Call ROW for every innermost row of B's output, rows [first, first+count) of the total
 * (numel / innermost dim) in order: callers split rows across threads. */
void nv_bcast_rows(const nv_bcast *b, size_t first, size_t count, nv_row_fn row, const void *ctx);
/* Number of innermost rows. */
size_t nv_bcast_num_rows(const nv_bcast *b);
/* Every row of B, split across the OpenMP threads when the output has at least
 * NV_PARALLEL_MIN elements (a single long row is split into pieces). */
void nv_bcast_for(const nv_bcast *b, nv_row_fn row, const void *ctx);

#endif
