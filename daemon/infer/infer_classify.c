#include "daemon/infer/infer_classify.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/dtype.h"

typedef enum { K_F32, K_F64, K_SIGNED, K_UNSIGNED } kind;

typedef struct entry {
    double  key;          /* ordering: the value as a double, NaN lowest */
    size_t  index;
    union { double f; int64_t i; uint64_t u; } v;
} entry;

static bool dtype_kind(DLDataType dt, kind *k)
{
    if (dt.lanes != 1)
        return false;
    if (dt.code == kDLFloat && (dt.bits == 32 || dt.bits == 64)) {
        *k = dt.bits == 32 ? K_F32 : K_F64;
        return true;
    }
    if ((dt.code == kDLInt || dt.code == kDLUInt) &&
        (dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64)) {
        *k = dt.code == kDLInt ? K_SIGNED : K_UNSIGNED;
        return true;
    }
    return false;
}

static entry read_entry(const void *base, DLDataType dt, kind k, size_t i)
{
    entry e = { .index = i };
    switch (k) {
    case K_F32: e.v.f = ((const float *)base)[i]; e.key = e.v.f; break;
    case K_F64: e.v.f = ((const double *)base)[i]; e.key = e.v.f; break;
    case K_SIGNED:
        e.v.i = dt.bits == 8 ? ((const int8_t *)base)[i] : dt.bits == 16 ? ((const int16_t *)base)[i]
              : dt.bits == 32 ? ((const int32_t *)base)[i] : ((const int64_t *)base)[i];
        e.key = (double)e.v.i;
        break;
    case K_UNSIGNED:
        e.v.u = dt.bits == 8 ? ((const uint8_t *)base)[i] : dt.bits == 16 ? ((const uint16_t *)base)[i]
              : dt.bits == 32 ? ((const uint32_t *)base)[i] : ((const uint64_t *)base)[i];
        e.key = (double)e.v.u;
        break;
    }
    if (isnan(e.key))
        e.key = -INFINITY;
    return e;
}

/* Highest first; equal values (and all NaNs, which rank lowest) in index order. */
static int by_value_desc(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* A binary heap over by_value_desc with the lowest-ranked entry at the root. */
static void heap_swap(entry *h, size_t a, size_t b)
{
    entry t = h[a];
    h[a] = h[b];
    h[b] = t;
}

static void heap_up(entry *h, size_t i)
{
    while (i > 0 && by_value_desc(&h[i], &h[(i - 1) / 2]) > 0) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(entry *h, size_t n, size_t i)
{
    for (;;) {
        size_t worst = i, l = 2 * i + 1, r = l + 1;
        if (l < n && by_value_desc(&h[l], &h[worst]) > 0)
            worst = l;
        if (r < n && by_value_desc(&h[r], &h[worst]) > 0)
            worst = r;
        if (worst == i)
            return;
        heap_swap(h, i, worst);
        i = worst;
    }
}

/* The text of E into BUF (NULL: only its length), as Triton prints it. */
static int format_entry(char *buf, size_t size, const entry *e, kind k, const char *label)
{
    const char *sep = label ? ":" : "", *lab = label ? label : "";
    switch (k) {
    case K_F32:
    case K_F64:    return snprintf(buf, size, "%f:%zu%s%s", e->v.f, e->index, sep, lab);
    case K_SIGNED: return snprintf(buf, size, "%" PRId64 ":%zu%s%s", e->v.i, e->index, sep, lab);
    default:       return snprintf(buf, size, "%" PRIu64 ":%zu%s%s", e->v.u, e->index, sep, lab);
    }
}

int bd_classify(const DLTensor *t, const char *name, bool batched, uint64_t k,
                const bd_labels *labels, size_t limit, bd_classified *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    kind kd;
    if (!dtype_kind(t->dtype, &kd))
        return bd_error_set(err, BD_EINVAL, "output '%s': classification needs a numeric output "
                            "(FP32, FP64 or an integer type)", name);
    if (k == 0)
        return bd_error_set(err, BD_EINVAL, "output '%s': classification count must be at least 1", name);
    size_t numel = 1;
    for (int d = 0; d < t->ndim; d++)
        numel *= (size_t)t->shape[d];                /* the run's own shape: already checked */
    size_t rows = 1, classes = numel;
    if (batched) {
        if (t->ndim < 1)
            return bd_error_set(err, BD_EINVAL, "output '%s': classification of a batched model "
                                "needs a batch dim", name);
        rows = (size_t)t->shape[0];
        classes = rows ? numel / rows : 0;
    }
    size_t kk = k < classes ? (size_t)k : classes;
    out->ndim = batched ? 2 : 1;
    out->shape[0] = batched ? (int64_t)rows : (int64_t)kk;
    out->shape[1] = (int64_t)kk;

    /* Every string costs at least 4 + strlen("0:0") bytes: refuse a K that cannot fit
     * before allocating for it. */
    if (rows && kk && (rows > limit / 7 / kk))
        return bd_error_set(err, BD_EINVAL, "output '%s': %zu x %zu classes cannot fit in %zu "
                            "bytes, the send limit (max_message_bytes): ask for fewer classes",
                            name, rows, kk, limit);
    /* Each row's best KK kept in a heap whose root is the worst of them (memory KK entries,
     * not the row's); the kept entries of every row stay for the writing pass. */
    entry *heap = malloc((kk ? kk : 1) * sizeof *heap);
    entry *top = malloc((rows && kk ? rows * kk : 1) * sizeof *top);
    if (!heap || !top) {
        free(heap);
        free(top);
        return bd_error_set(err, BD_ENOMEM, "output '%s': out of memory classifying", name);
    }
    const uint8_t *base = (const uint8_t *)t->data + t->byte_offset;
    size_t elem = bd_dl_elem_bytes(t->dtype), total = 0;
    for (size_t r = 0; r < rows && total <= limit; r++) {
        const void *p = base + r * classes * elem;
        size_t m = 0;
        for (size_t c = 0; c < classes && kk; c++) {
            entry e = read_entry(p, t->dtype, kd, c);
            if (m < kk) {
                heap[m++] = e;
                heap_up(heap, m - 1);
            } else if (by_value_desc(&e, &heap[0]) < 0) {
                heap[0] = e;
                heap_down(heap, m, 0);
            }
        }
        qsort(heap, m, sizeof *heap, by_value_desc);
        memcpy(top + r * kk, heap, kk * sizeof *heap);
        for (size_t c = 0; c < kk; c++) {
            int len = format_entry(NULL, 0, &heap[c], kd, bd_labels_get(labels, heap[c].index));
            total += 4 + (size_t)(len > 0 ? len : 0);
        }
    }
    free(heap);
    if (total > limit) {
        free(top);
        return bd_error_set(err, BD_EINVAL, "output '%s': the classification would be over %zu "
                            "bytes, the send limit (max_message_bytes): ask for fewer classes",
                            name, limit);
    }
    out->data = malloc(total + 1);               /* +1: snprintf's terminator after the last */
    if (!out->data) {
        free(top);
        return bd_error_set(err, BD_ENOMEM, "output '%s': out of memory classifying", name);
    }
    uint8_t *w = out->data;
    for (size_t i = 0; i < rows * kk; i++) {
        const char *label = bd_labels_get(labels, top[i].index);
        uint32_t len = (uint32_t)format_entry(NULL, 0, &top[i], kd, label);
        w[0] = (uint8_t)len;
        w[1] = (uint8_t)(len >> 8);
        w[2] = (uint8_t)(len >> 16);
        w[3] = (uint8_t)(len >> 24);
        format_entry((char *)w + 4, len + 1, &top[i], kd, label);
        w += 4 + len;
    }
    out->bytes = total;
    free(top);
    return 0;
}
