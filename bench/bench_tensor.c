/* Host tensors for the benchmarks: allocation, deterministic fill, comparison. */
#include "bench/bench_tensor.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/dtype.h"

int bench_tensor_init(bench_tensor *t, const char *name, int dtype, int rank, const int64_t *dims,
                      char *why, size_t why_len)
{
    memset(t, 0, sizeof *t);
    size_t esize = bd_dtype_size(dtype);
    if (esize == 0) {
        snprintf(why, why_len, "tensor '%s': element type %d (%s) is not supported by the benchmark",
                 name, dtype, bd_dtype_name(dtype));
        return -1;
    }
    if (rank < 0 || rank > BENCH_MAX_RANK) {
        snprintf(why, why_len, "tensor '%s': rank %d is outside 0..%d", name, rank, BENCH_MAX_RANK);
        return -1;
    }
    size_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            snprintf(why, why_len, "tensor '%s': dim %d is dynamic (%lld); give it a size",
                     name, i, (long long)dims[i]);
            return -1;
        }
        t->dims[i] = dims[i];
        numel *= (size_t)dims[i];
    }
    t->dtype  = dtype;
    t->rank   = rank;
    t->numel  = numel;
    t->nbytes = numel * esize;
    t->name   = strdup(name);
    /* aligned_alloc wants a multiple of the alignment; +1 block keeps empty tensors valid. */
    size_t cap = (t->nbytes + 64) & ~(size_t)63;
    t->data = aligned_alloc(64, cap);
    if (!t->name || !t->data) {
        bench_tensor_free(t);
        snprintf(why, why_len, "tensor '%s': out of memory (%zu bytes)", name, t->nbytes);
        return -1;
    }
    memset(t->data, 0, cap);
    return 0;
}

void bench_tensor_free(bench_tensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

/* splitmix64: a tiny, well-mixed generator so both engines see bit-identical inputs. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void bench_tensor_fill(bench_tensor *t, uint64_t seed)
{
    bool mask = t->name && strstr(t->name, "mask") != NULL;
    uint64_t s = seed;
    for (size_t i = 0; i < t->numel; i++) {
        double u = (double)(next_u64(&s) >> 11) * 0x1.0p-53;      /* [0, 1) */
        double v = mask ? 1.0 : 2.0 * u - 1.0;
        int64_t k = mask ? 1 : (int64_t)(u * 100.0);
        switch (t->dtype) {
        case BD_DT_FLOAT:  ((float *)t->data)[i]   = (float)v; break;
        case BD_DT_DOUBLE: ((double *)t->data)[i]  = v; break;
        case BD_DT_INT64:  ((int64_t *)t->data)[i] = k; break;
        case BD_DT_INT32:  ((int32_t *)t->data)[i] = (int32_t)k; break;
        case BD_DT_INT8:   ((int8_t *)t->data)[i]  = (int8_t)k; break;
        case BD_DT_UINT8:  ((uint8_t *)t->data)[i] = (uint8_t)k; break;
        case BD_DT_BOOL:   ((uint8_t *)t->data)[i] = 1; break;
        default: break;    /* other types stay zero */
        }
    }
}

static double elem(const void *data, int dtype, size_t i)
{
    switch (dtype) {
    case BD_DT_FLOAT:  return ((const float *)data)[i];
    case BD_DT_DOUBLE: return ((const double *)data)[i];
    case BD_DT_INT64:  return (double)((const int64_t *)data)[i];
    case BD_DT_INT32:  return ((const int32_t *)data)[i];
    case BD_DT_INT8:   return ((const int8_t *)data)[i];
    case BD_DT_UINT8:
    case BD_DT_BOOL:   return ((const uint8_t *)data)[i];
    default:           return 0.0;
    }
}

double bench_tensor_max_abs_diff(const bench_tensor *a, const void *b_data, int b_dtype, size_t b_numel)
{
    if (a->dtype != b_dtype || a->numel != b_numel)
        return -1.0;
    double worst = 0.0;
    for (size_t i = 0; i < a->numel; i++) {
        double d = fabs(elem(a->data, a->dtype, i) - elem(b_data, b_dtype, i));
        if (isnan(d))
            return INFINITY;
        if (d > worst)
            worst = d;
    }
    return worst;
}

int bench_tensor_as_dl(const bench_tensor *t, DLTensor *out)
{
    memset(out, 0, sizeof *out);
    if (!bd_dtype_to_dl(t->dtype, &out->dtype))
        return -1;
    out->data   = t->data;
    out->device = (DLDevice){ kDLCPU, 0 };
    out->ndim   = t->rank;
    out->shape  = (int64_t *)t->dims;     /* DLPack 0.6 has no const here; braid only reads it */
    return 0;
}

char *bench_tensor_desc(int dtype, int rank, const int64_t *dims, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%s[", bd_dtype_name(dtype));
    for (int i = 0; i < rank && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}
