/* TensorProto -> a constant bd_value: checked dims, then data from exactly one source:
 * raw_data (referenced in place), a typed field (converted into the graph's pool), or an
 * external file (referenced inside its bytes, which the graph owns). */
#include "partitioner/onnx/onnx_internal.h"

#include <inttypes.h>
#include <string.h>

int ox_tensor_size(const char *name, int dtype, const int64_t *dims, size_t rank,
                   int64_t *numel, size_t *nbytes, bd_error *err)
{
    if (rank > BD_MAX_RANK)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': rank %zu exceeds braid's maximum of %d",
                            name, rank, BD_MAX_RANK);
    int64_t n = 1;
    for (size_t i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return bd_error_set(err, BD_EMODEL, "tensor '%s': dim %zu is negative (%" PRId64 ")",
                                name, i, dims[i]);
        if (__builtin_mul_overflow(n, dims[i], &n))
            return bd_error_set(err, BD_EMODEL, "tensor '%s': the product of its dims overflows",
                                name);
    }
    size_t bytes;
    if ((uint64_t)n > SIZE_MAX || __builtin_mul_overflow((size_t)n, bd_dtype_size(dtype), &bytes))
        return bd_error_set(err, BD_EMODEL, "tensor '%s': %" PRId64 " elements overflow its size in bytes",
                            name, n);
    *numel = n;
    *nbytes = bytes;
    return 0;
}

/* The typed field that carries DTYPE's values (ONNX's TensorProto rules). */
typedef enum { TF_NONE, TF_FLOAT, TF_INT32, TF_INT64, TF_DOUBLE, TF_UINT64 } typed_field;

static typed_field field_for(int dtype)
{
    switch (dtype) {
    case BD_DT_FLOAT:                                   return TF_FLOAT;
    case BD_DT_INT32: case BD_DT_INT16: case BD_DT_INT8:
    case BD_DT_UINT16: case BD_DT_UINT8: case BD_DT_BOOL:
    case BD_DT_FLOAT16: case BD_DT_BFLOAT16:            return TF_INT32;
    case BD_DT_INT64:                                   return TF_INT64;
    case BD_DT_DOUBLE:                                  return TF_DOUBLE;
    case BD_DT_UINT32: case BD_DT_UINT64:               return TF_UINT64;
    default:                                            return TF_NONE;
    }
}

static const char *const field_names[] = {
    "", "float_data", "int32_data", "int64_data", "double_data", "uint64_data",
};

/* Convert N typed values in SRC (as decoded: float, int64 for int32_data/int64_data,
 * double, uint64) into DST, laid out as DTYPE. */
static void convert(void *dst, const void *src, size_t n, int dtype)
{
    typed_field tf = field_for(dtype);
    size_t es = bd_dtype_size(dtype);
    if (tf != TF_INT32 && !(tf == TF_UINT64 && es == 4)) {
        memcpy(dst, src, n * es);   /* float, int64, double, uint64: same layout */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t x = tf == TF_UINT64 ? ((const uint64_t *)src)[i]
                                     : (uint64_t)((const int64_t *)src)[i];
        switch (es) {
        case 1: ((uint8_t *)dst)[i]  = (uint8_t)x;  break;
        case 2: ((uint16_t *)dst)[i] = (uint16_t)x; break;   /* fp16/bf16: the bit pattern */
        default: ((uint32_t *)dst)[i] = (uint32_t)x; break;
        }
    }
}

typedef struct tensor_msg {
    onnx_TensorProto t;
    ox_spans raw, strings;
    ox_vec   typed[6];           /* indexed by typed_field */
} tensor_msg;

static void tensor_msg_free(tensor_msg *m)
{
    pb_release(onnx_TensorProto_fields, &m->t);
    bd_pb_spans_free(&m->raw);
    bd_pb_spans_free(&m->strings);
    for (int i = 0; i < 6; i++)
        ox_vec_free(&m->typed[i]);
}

static int load(ox_ctx *c, tensor_msg *m, bd_value *v, const char *what, bd_error *err)
{
    const onnx_TensorProto *t = &m->t;
    const char *name = t->name && *t->name ? t->name : what;
    if (t->name && *t->name && !(v->name = bd_graph_strdup(c->g, t->name, (size_t)-1)))
        return bd_error_set(err, BD_ENOMEM, "out of memory loading tensor '%s'", name);

    int dtype = t->has_data_type ? t->data_type : BD_DT_UNDEFINED;
    int rc = ox_check_dtype(name, dtype, false, err);
    if (rc)
        return rc;
    if (dtype == BD_DT_STRING)
        return bd_error_set(err, BD_EUNSUPPORTED, "tensor '%s': string tensors are not supported", name);
    if (t->has_segment)
        return bd_error_set(err, BD_EUNSUPPORTED, "tensor '%s': segmented tensors are not supported", name);

    int64_t numel;
    size_t nbytes;
    if ((rc = ox_tensor_size(name, dtype, t->dims, t->dims_count, &numel, &nbytes, err)))
        return rc;
    v->dtype = dtype;
    v->shape = bd_shape_make((int)t->dims_count, t->dims);
    v->nbytes = nbytes;

    typed_field want = field_for(dtype);
    int n_sources = m->raw.n > 0;
    for (int f = TF_FLOAT; f <= TF_UINT64; f++) {
        if (!m->typed[f].n)
            continue;
        if (f != (int)want)
            return bd_error_set(err, BD_EMODEL, "tensor '%s': a %s tensor cannot carry %s",
                                name, bd_dtype_name(dtype), field_names[f]);
        n_sources++;
    }
    bool external = t->has_data_location && t->data_location == onnx_TensorProto_DataLocation_EXTERNAL;
    if (n_sources + external > 1)
        return bd_error_set(err, BD_EMODEL, "tensor '%s' has its data in more than one place "
                            "(raw_data, %s, external)", name, field_names[want]);

    if (external)
        return ox_external_data(c, name, t->external_data, t->external_data_count, nbytes,
                                &v->data, err);
    if (m->raw.n) {
        const ox_span *raw = &m->raw.v[m->raw.n - 1];   /* protobuf: the last one wins */
        if (raw->n != nbytes)
            return bd_error_set(err, BD_EMODEL, "tensor '%s': raw_data holds %zu bytes, but %s %" PRId64
                                " elements need %zu", name, raw->n, bd_dtype_name(dtype), numel, nbytes);
        /* Referenced in place: an empty tensor still needs a non-NULL marker. */
        v->data = nbytes ? (const void *)raw->p : bd_graph_alloc(c->g, 1);
        return v->data ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory loading tensor '%s'", name);
    }
    const ox_vec *typed = &m->typed[want];
    if (typed->n != (size_t)numel) {
        if (typed->n == 0)
            return bd_error_set(err, BD_EMODEL, "tensor '%s' (%s, %" PRId64 " elements) has no data",
                                name, bd_dtype_name(dtype), numel);
        return bd_error_set(err, BD_EMODEL, "tensor '%s': %s holds %zu values, but its dims need %" PRId64,
                            name, field_names[want], typed->n, numel);
    }
    void *dst = bd_graph_alloc(c->g, nbytes);
    if (!dst)
        return bd_error_set(err, BD_ENOMEM, "out of memory loading tensor '%s' (%zu bytes)", name, nbytes);
    if (nbytes)
        convert(dst, typed->p, typed->n, dtype);
    v->data = dst;
    return 0;
}

int ox_tensor_load(ox_ctx *c, const ox_span *sp, bd_value *v, const char *what, bd_error *err)
{
    tensor_msg m;
    memset(&m, 0, sizeof m);
    bd_pb_spans_init(&m.raw, c->base, c->len);
    bd_pb_spans_init(&m.strings, c->base, c->len);
    bd_pb_on_span(&m.t.raw_data, &m.raw);
    bd_pb_on_span(&m.t.string_data, &m.strings);
    ox_on_float(&m.t.float_data, &m.typed[TF_FLOAT]);
    ox_on_int64(&m.t.int32_data, &m.typed[TF_INT32]);
    ox_on_int64(&m.t.int64_data, &m.typed[TF_INT64]);
    ox_on_double(&m.t.double_data, &m.typed[TF_DOUBLE]);
    ox_on_uint64(&m.t.uint64_data, &m.typed[TF_UINT64]);

    int rc = bd_pb_decode(sp, onnx_TensorProto_fields, &m.t, what, err);
    if (rc == 0)
        rc = load(c, &m, v, what, err);
    tensor_msg_free(&m);
    return rc;
}
