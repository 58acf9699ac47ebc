#include "core/ir/dtype.h"

#include <stdio.h>
#include <string.h>

static const struct {
    int         dtype;
    const char *name;
    size_t      size;
    uint8_t     dl_code;
    uint8_t     dl_bits;
} dtype_table[] = {
    { BD_DT_BOOL,     "BOOL",   1, kDLUInt,   8 },
    { BD_DT_UINT8,    "UINT8",  1, kDLUInt,   8 },
    { BD_DT_UINT16,   "UINT16", 2, kDLUInt,   16 },
    { BD_DT_UINT32,   "UINT32", 4, kDLUInt,   32 },
    { BD_DT_UINT64,   "UINT64", 8, kDLUInt,   64 },
    { BD_DT_INT8,     "INT8",   1, kDLInt,    8 },
    { BD_DT_INT16,    "INT16",  2, kDLInt,    16 },
    { BD_DT_INT32,    "INT32",  4, kDLInt,    32 },
    { BD_DT_INT64,    "INT64",  8, kDLInt,    64 },
    { BD_DT_FLOAT16,  "FP16",   2, kDLFloat,  16 },
    { BD_DT_BFLOAT16, "BF16",   2, kDLBfloat, 16 },
    { BD_DT_FLOAT,    "FP32",   4, kDLFloat,  32 },
    { BD_DT_DOUBLE,   "FP64",   8, kDLFloat,  64 },
    { BD_DT_STRING,   "BYTES",  0, 0,         0 },
};
#define N_DTYPES (sizeof dtype_table / sizeof dtype_table[0])

size_t bd_dtype_size(int dtype)
{
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype == dtype)
            return dtype_table[i].size;
    return 0;
}

const char *bd_dtype_name(int dtype)
{
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype == dtype)
            return dtype_table[i].name;
    return "?";
}

int bd_dtype_from_name(const char *name)
{
    for (size_t i = 0; name && i < N_DTYPES; i++)
        if (strcmp(dtype_table[i].name, name) == 0)
            return dtype_table[i].dtype;
    return BD_DT_UNDEFINED;
}

bool bd_dtype_to_dl(int dtype, DLDataType *out)
{
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype == dtype && dtype_table[i].dl_bits) {
            out->code  = dtype_table[i].dl_code;
            out->bits  = dtype_table[i].dl_bits;
            out->lanes = 1;
            return true;
        }
    return false;
}

int bd_dtype_from_dl(DLDataType t)
{
    if (t.lanes != 1)
        return BD_DT_UNDEFINED;
    /* UINT8 comes before BOOL's twin entry would: search skipping BOOL so uint8 maps back to UINT8. */
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype != BD_DT_BOOL && dtype_table[i].dl_bits == t.bits &&
            dtype_table[i].dl_code == t.code)
            return dtype_table[i].dtype;
    return BD_DT_UNDEFINED;
}

size_t bd_dl_elem_bytes(DLDataType t)
{
    return ((size_t)t.bits * t.lanes + 7u) / 8u;
}

size_t bd_dl_tensor_bytes(const DLTensor *t)
{
    size_t b = bd_dl_elem_bytes(t->dtype);
    for (int d = 0; d < t->ndim; d++)
        b *= (size_t)t->shape[d];
    return b;
}

int64_t bd_shape_numel(const bd_shape *s)
{
    if (s->rank < 0)
        return -1;
    int64_t n = 1;
    for (int i = 0; i < s->rank && i < BD_MAX_RANK; i++)
        if (s->dims[i] < 0 || __builtin_mul_overflow(n, s->dims[i], &n))
            return -1;
    return s->rank > BD_MAX_RANK ? -1 : n;
}

bool bd_shape_is_static(const bd_shape *s)
{
    return bd_shape_numel(s) >= 0;
}

bool bd_shape_equal(const bd_shape *a, const bd_shape *b)
{
    if (!bd_shape_is_static(a) || !bd_shape_is_static(b) || a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

char *bd_shape_str(const bd_shape *s, char *buf, size_t size)
{
    if (s->rank < 0) {
        snprintf(buf, size, "[?rank]");
        return buf;
    }
    size_t n = 0;
    n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "[");
    for (int i = 0; i < s->rank; i++) {
        const char *sep = i ? "," : "";
        if (s->dims[i] >= 0)
            n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%lld", sep, (long long)s->dims[i]);
        else
            n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", sep, s->sym[i] ? s->sym[i] : "?");
    }
    snprintf(buf + n, n < size ? size - n : 0, "]");
    return buf;
}

bd_shape bd_shape_make(int rank, const int64_t *dims)
{
    bd_shape s = { .rank = rank };
    for (int i = 0; i < rank && i < BD_MAX_RANK; i++)
        s.dims[i] = dims[i];
    return s;
}
