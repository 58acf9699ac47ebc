/* TensorFlow DataType <-> braid dtype, half floats, shape sizes. */
#include "partitioner/tf/tf_internal.h"
#include "core/model_file.h"

#include <math.h>
#include <string.h>

static const struct { int tf; int bd; const char *name; } types[] = {
    { 0,  BD_DT_UNDEFINED, "DT_INVALID" },
    { 1,  BD_DT_FLOAT,     "DT_FLOAT" },      { 2,  BD_DT_DOUBLE,   "DT_DOUBLE" },
    { 3,  BD_DT_INT32,     "DT_INT32" },      { 4,  BD_DT_UINT8,    "DT_UINT8" },
    { 5,  BD_DT_INT16,     "DT_INT16" },      { 6,  BD_DT_INT8,     "DT_INT8" },
    { 7,  BD_DT_STRING,    "DT_STRING" },     { 8,  BD_DT_UNDEFINED, "DT_COMPLEX64" },
    { 9,  BD_DT_INT64,     "DT_INT64" },      { 10, BD_DT_BOOL,     "DT_BOOL" },
    { 11, BD_DT_UNDEFINED, "DT_QINT8" },      { 12, BD_DT_UNDEFINED, "DT_QUINT8" },
    { 13, BD_DT_UNDEFINED, "DT_QINT32" },     { 14, BD_DT_BFLOAT16, "DT_BFLOAT16" },
    { 15, BD_DT_UNDEFINED, "DT_QINT16" },     { 16, BD_DT_UNDEFINED, "DT_QUINT16" },
    { 17, BD_DT_UINT16,    "DT_UINT16" },     { 18, BD_DT_UNDEFINED, "DT_COMPLEX128" },
    { 19, BD_DT_FLOAT16,   "DT_HALF" },       { 20, BD_DT_UNDEFINED, "DT_RESOURCE" },
    { 21, BD_DT_UNDEFINED, "DT_VARIANT" },    { 22, BD_DT_UINT32,   "DT_UINT32" },
    { 23, BD_DT_UINT64,    "DT_UINT64" },     { 24, BD_DT_UNDEFINED, "DT_FLOAT8_E5M2" },
    { 25, BD_DT_UNDEFINED, "DT_FLOAT8_E4M3FN" }, { 29, BD_DT_UNDEFINED, "DT_INT4" },
    { 30, BD_DT_UNDEFINED, "DT_UINT4" },
};

int tf_dtype_to_bd(int tf_dtype)
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (types[i].tf == tf_dtype)
            return types[i].bd;
    return BD_DT_UNDEFINED;
}

const char *tf_dtype_name(int tf_dtype)
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (types[i].tf == tf_dtype)
            return types[i].name;
    return NULL;
}

int tf_dtype_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(types[i].name, name) == 0)
            return types[i].tf;
    return -1;
}

float tf_half_to_float(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);                       /* zero and subnormals */
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 0x400), e - 25);
    return s ? -v : v;
}

float tf_bfloat16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int tf_shape_size(const char *what, const bd_shape *s, size_t esize, int64_t *numel,
                  size_t *nbytes, bd_error *err)
{
    if (s->rank < 0)
        return bd_error_set(err, BD_EMODEL, "%s: the shape is unknown", what);
    uint64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0)
            return bd_error_set(err, BD_EMODEL, "%s: dim %d is %lld (a constant needs a static shape)",
                                what, i, (long long)s->dims[i]);
        if (s->dims[i] && n > (uint64_t)INT64_MAX / (uint64_t)s->dims[i])
            return bd_error_set(err, BD_EMODEL, "%s: the shape's element count overflows", what);
        n *= (uint64_t)s->dims[i];
    }
    if (esize && n > SIZE_MAX / esize)
        return bd_error_set(err, BD_EMODEL, "%s: the tensor's byte size overflows", what);
    *numel = (int64_t)n;
    *nbytes = (size_t)n * esize;
    return 0;
}

int tf_check_expand(bd_graph *g, const char *what, uint64_t numel, uint64_t given,
                    size_t esize, size_t last_len, bd_error *err)
{
    if (given >= numel)
        return 0;
    /* Each element costs ESIZE; each repeated string also its bytes once encoded again. */
    uint64_t per = (uint64_t)esize + (uint64_t)last_len, bytes;
    if (!__builtin_mul_overflow(numel, per, &bytes) &&
        bd_graph_charge_expanded(g, bytes, BD_MAX_EXPANDED_BYTES))
        return 0;
    return bd_error_set(err, BD_EMODEL, "%s: %llu value(s) fill %llu elements; the model's "
                        "expanded constants would take more than %zu MiB (braid's limit for "
                        "bytes the model file does not carry)", what, (unsigned long long)given,
                        (unsigned long long)numel, BD_MAX_EXPANDED_BYTES >> 20);
}

void tf_fill_repeat(void *p, size_t given, size_t numel, size_t esize)
{
    if (given == 0 || given >= numel)
        return;
    uint8_t *b = p;
    size_t done = given;
    memcpy(b + done * esize, b + (given - 1) * esize, esize);   /* one copy of the last */
    size_t run = 1;                                             /* copies of it so far */
    done++;
    while (done < numel) {
        size_t k = run < numel - done ? run : numel - done;
        memcpy(b + done * esize, b + (given - 1) * esize, k * esize);
        done += k;
        run += k;
    }
}
