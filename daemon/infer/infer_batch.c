/* Concatenating requests along dim 0 and cutting a run's outputs back (infer_batch.h). */
#include "daemon/infer/infer_batch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/dtype.h"

bool bd_batch_joins(const bd_infer_binding *a, const bd_infer_binding *b)
{
    if (a->n_inputs != b->n_inputs || a->n_inputs == 0)
        return false;
    for (size_t i = 0; i < a->n_inputs; i++) {
        const DLTensor *x = &a->inputs[i], *y = &b->inputs[i];
        if (x->ndim < 1 || x->ndim != y->ndim || x->dtype.code != y->dtype.code ||
            x->dtype.bits != y->dtype.bits || x->dtype.lanes != y->dtype.lanes ||
            x->shape[0] != a->inputs[0].shape[0] || y->shape[0] != b->inputs[0].shape[0])
            return false;
        for (int d = 1; d < x->ndim; d++)
            if (x->shape[d] != y->shape[d])
                return false;
    }
    return true;
}

void bd_batch_inputs_free(bd_batch_inputs *in)
{
    if (!in)
        return;
    for (size_t i = 0; in->t && i < in->n; i++)
        free(in->t[i].data);
    free(in->t);
    free(in->shapes);
    memset(in, 0, sizeof *in);
}

/* Bytes of one row (dims 1..) of T, overflow-checked. */
static bool row_bytes(const DLTensor *t, size_t *out)
{
    size_t b = bd_dl_elem_bytes(t->dtype);
    for (int d = 1; d < t->ndim; d++)
        if (t->shape[d] < 0 || __builtin_mul_overflow(b, (size_t)t->shape[d], &b))
            return false;
    *out = b;
    return true;
}

int bd_batch_gather(const bd_infer_binding *const *members, size_t n, uint64_t max_rows,
                    bd_batch_inputs *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return bd_error_set(err, BD_EINVAL, "batch: no request");
    const bd_infer_binding *first = members[0];
    uint64_t rows = 0;
    for (size_t k = 0; k < n; k++) {
        if (!bd_batch_joins(first, members[k]) || members[k]->inputs[0].shape[0] < 0)
            return bd_error_set(err, BD_EINVAL, "batch: request %zu's inputs do not match the "
                                "first request's but for dim 0", k);
        if (__builtin_add_overflow(rows, (uint64_t)members[k]->inputs[0].shape[0], &rows) ||
            rows > max_rows)
            return bd_error_set(err, BD_EINVAL, "batch: more than %" PRIu64 " rows", max_rows);
    }
    out->n = first->n_inputs;
    out->rows = rows;
    out->t = calloc(out->n, sizeof *out->t);
    out->shapes = calloc(out->n, sizeof *out->shapes);
    if (!out->t || !out->shapes)
        return bd_error_set(err, BD_ENOMEM, "batch: out of memory");
    for (size_t i = 0; i < out->n; i++) {
        const DLTensor *f = &first->inputs[i];
        DLTensor *t = &out->t[i];
        size_t rb, bytes;
        if (!row_bytes(f, &rb) || __builtin_mul_overflow(rb, (size_t)rows, &bytes) ||
            bytes > SIZE_MAX - 64)
            return bd_error_set(err, BD_EINVAL, "batch: input %zu: %" PRIu64 " rows are too large", i, rows);
        t->data = aligned_alloc(64, bytes ? (bytes + 63) & ~(size_t)63 : 64);
        if (!t->data)
            return bd_error_set(err, BD_ENOMEM, "batch: out of memory for %zu bytes of input %zu",
                                bytes, i);
        uint8_t *at = t->data;
        for (size_t k = 0; k < n; k++) {
            const DLTensor *m = &members[k]->inputs[i];
            size_t mb = rb * (size_t)m->shape[0];      /* <= bytes: no overflow */
            if (mb)
                memcpy(at, (const uint8_t *)m->data + m->byte_offset, mb);
            at += mb;
        }
        memcpy(out->shapes[i], f->shape, (size_t)f->ndim * sizeof *f->shape);
        out->shapes[i][0] = (int64_t)rows;
        t->device = (DLDevice){ kDLCPU, 0 };
        t->ndim = f->ndim;
        t->dtype = f->dtype;
        t->shape = out->shapes[i];
        t->strides = NULL;
        t->byte_offset = 0;
    }
    return 0;
}

int bd_batch_slice(const DLTensor *full, uint64_t offset, uint64_t rows, DLTensor *view,
                   int64_t *shape, bd_error *err)
{
    size_t rb;
    uint64_t end;
    if (!full || full->ndim < 1 || full->ndim > BD_MAX_RANK || full->shape[0] < 0 ||
        full->strides || !row_bytes(full, &rb))
        return bd_error_set(err, BD_EBACKEND, "batch: an output is not a contiguous tensor with a "
                            "batch dim");
    if (__builtin_add_overflow(offset, rows, &end) || end > (uint64_t)full->shape[0])
        return bd_error_set(err, BD_EBACKEND, "batch: an output has %" PRId64 " rows, expected at "
                            "least %" PRIu64 " (the model does not keep the batch on dim 0)",
                            full->shape[0], end);
    *view = *full;
    memcpy(shape, full->shape, (size_t)full->ndim * sizeof *shape);
    shape[0] = (int64_t)rows;
    view->shape = shape;
    view->data = (uint8_t *)full->data + full->byte_offset + rb * offset;  /* inside FULL */
    view->byte_offset = 0;
    return 0;
}
