/* Broadcast planning and the row walker (native_broadcast.h). */
#include "backends/native/native_broadcast.h"

#include <string.h>

#include <omp.h>

#include "backends/native/native_internal.h"

bool nv_bcast_plan(nv_bcast *b, int n_ops, const bd_shape *const *shapes, const bd_shape *out)
{
    int R = out->rank;
    if (n_ops < 1 || n_ops > NV_BCAST_MAX_OPS || R < 0 || R > BD_MAX_RANK)
        return false;
    /* full-rank strides of every operand, numpy rules from the right */
    int64_t full[NV_BCAST_MAX_OPS][BD_MAX_RANK];
    for (int k = 0; k < n_ops; k++) {
        const bd_shape *s = shapes[k];
        if (s->rank > R)
            return false;
        int64_t stride = 1;
        for (int d = R - 1; d >= 0; d--) {
            int sd = d - (R - s->rank);
            int64_t dim = sd >= 0 ? s->dims[sd] : 1;
            if (dim != out->dims[d] && dim != 1)
                return false;
            full[k][d] = dim == 1 ? 0 : stride;
            stride *= dim;
        }
    }
    /* collapse: drop size-1 dims, then merge dim d into d+1 when every operand is contiguous
     * across the pair (stride[d] == stride[d+1] * dim[d+1]) or broadcast along both */
    memset(b, 0, sizeof *b);
    b->n_ops = n_ops;
    b->numel = 1;
    for (int d = 0; d < R; d++)
        b->numel *= (size_t)out->dims[d];
    int r = 0;
    for (int d = 0; d < R; d++) {
        if (out->dims[d] == 1)
            continue;
        bool merge = r > 0;
        for (int k = 0; k < n_ops && merge; k++) {
            int64_t prev = b->st[k][r - 1], cur = full[k][d];
            merge = (prev == 0 && cur == 0) || (cur != 0 && prev == cur * out->dims[d]);
        }
        if (merge) {
            b->dims[r - 1] *= out->dims[d];
            for (int k = 0; k < n_ops; k++)
                b->st[k][r - 1] = full[k][d];
        } else {
            b->dims[r] = out->dims[d];
            for (int k = 0; k < n_ops; k++)
                b->st[k][r] = full[k][d];
            r++;
        }
    }
    if (r == 0) {                      /* a scalar output: one row of one element */
        b->dims[0] = 1;
        for (int k = 0; k < n_ops; k++)
            b->st[k][0] = 0;
        r = 1;
    }
    b->rank = r;
    return true;
}

size_t nv_bcast_num_rows(const nv_bcast *b)
{
    size_t rows = 1;
    for (int d = 0; d < b->rank - 1; d++)
        rows *= (size_t)b->dims[d];
    return b->dims[b->rank - 1] ? rows : 0;
}

void nv_bcast_rows(const nv_bcast *b, size_t first, size_t count, nv_row_fn row, const void *ctx)
{
    int R = b->rank;
    size_t len = (size_t)b->dims[R - 1];
    if (len == 0 || count == 0)
        return;
    int64_t idx[BD_MAX_RANK] = { 0 };
    size_t rem = first;
    for (int d = R - 2; d >= 0; d--) {          /* the odometer at row FIRST */
        idx[d] = (int64_t)(rem % (size_t)b->dims[d]);
        rem /= (size_t)b->dims[d];
    }
    size_t off[NV_BCAST_MAX_OPS];
    for (int k = 0; k < b->n_ops; k++) {
        off[k] = 0;
        for (int d = 0; d < R - 1; d++)
            off[k] += (size_t)(idx[d] * b->st[k][d]);
    }
    size_t y = first * len;
    for (size_t i = 0; i < count; i++, y += len) {
        row(ctx, off, y, len);
        for (int d = R - 2; d >= 0; d--) {      /* advance the odometer */
            for (int k = 0; k < b->n_ops; k++)
                off[k] += (size_t)b->st[k][d];
            if (++idx[d] < b->dims[d])
                break;
            for (int k = 0; k < b->n_ops; k++)
                off[k] -= (size_t)(b->st[k][d] * b->dims[d]);
            idx[d] = 0;
        }
    }
}

void nv_bcast_for(const nv_bcast *b, nv_row_fn row, const void *ctx)
{
    size_t rows = nv_bcast_num_rows(b), len = (size_t)b->dims[b->rank - 1];
    int nt = omp_get_max_threads();
    if (b->numel < NV_PARALLEL_MIN || nt < 2 || omp_in_parallel()) {
        nv_bcast_rows(b, 0, rows, row, ctx);
        return;
    }
    if (rows == 1) {                  /* one long row: pieces of it */
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads();
            size_t per = (len + (size_t)n - 1) / (size_t)n, start = (size_t)t * per;
            if (start < len) {
                size_t off[NV_BCAST_MAX_OPS];
                for (int k = 0; k < b->n_ops; k++)
                    off[k] = start * (size_t)b->st[k][b->rank - 1];
                row(ctx, off, start, start + per > len ? len - start : per);
            }
        }
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        size_t per = (rows + (size_t)n - 1) / (size_t)n, first = (size_t)t * per;
        if (first < rows)
            nv_bcast_rows(b, first, first + per > rows ? rows - first : per, row, ctx);
    }
}
