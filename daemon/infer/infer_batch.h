/* Dynamic batching's data movement (Triton's dynamic batcher; docs/config.md): requests
 * bound to one model (infer_bind.h) are concatenated along dim 0 into one set of inputs, and
 * the run's outputs are cut back into each request's rows. No server, no plan: unit tested
 * on its own (tests/daemon/test_batch.c).
 *
 *   bd_batch_joins    may two bound requests run as one: same inputs, same dtypes, equal
 *                     dims but dim 0 (rank >= 1 everywhere)
 *   bd_batch_gather   the concatenated inputs, in buffers this owns, sized rows x row bytes
 *                     (every product overflow-checked, total rows at most MAX_ROWS)
 *   bd_batch_slice    a view of rows [OFFSET, OFFSET + ROWS) of a run's output (no copy) */
#ifndef BD_DAEMON_INFER_INFER_BATCH_H
#define BD_DAEMON_INFER_INFER_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "daemon/infer/infer_bind.h"

/* True when A and B (bound to the same graph) can be concatenated along dim 0. */
bool bd_batch_joins(const bd_infer_binding *a, const bd_infer_binding *b);

/* Inputs gathered from several requests. Zero-initialize; free with bd_batch_inputs_free. */
typedef struct bd_batch_inputs {
    size_t     n;                          /* inputs (the graph's, in signature order) */
    DLTensor  *t;                          /* t[i].data: 64-byte aligned, owned here */
    int64_t  (*shapes)[BD_MAX_RANK];
    uint64_t   rows;                       /* dim 0 of every input: the members' rows summed */
} bd_batch_inputs;

/* Concatenate MEMBERS[0..N) (N >= 1, pairwise bd_batch_joins) along dim 0 into OUT. BD_EINVAL
 * when they do not join or their rows exceed MAX_ROWS, BD_ENOMEM when out of memory; OUT must
 * be freed either way. */
int  bd_batch_gather(const bd_infer_binding *const *members, size_t n, uint64_t max_rows,
                     bd_batch_inputs *out, bd_error *err);
void bd_batch_inputs_free(bd_batch_inputs *in);               /* NULL is allowed; zeroes IN */

/* VIEW (its shape stored in SHAPE, BD_MAX_RANK entries) = rows [OFFSET, OFFSET + ROWS) of
 * FULL, a contiguous tensor of rank >= 1; the data stays FULL's. BD_EBACKEND when FULL is
 * not such a tensor or has fewer rows (the model did not keep the batch on dim 0). */
int  bd_batch_slice(const DLTensor *full, uint64_t offset, uint64_t rows, DLTensor *view,
                    int64_t *shape, bd_error *err);

#endif
