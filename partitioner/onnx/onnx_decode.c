/* nanopb glue: callbacks that record numbers (spans and decoding are pb_span.h's). */
#include "partitioner/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

void ox_vec_free(ox_vec *v)
{
    free(v->p);
    memset(v, 0, sizeof *v);
}

/* Packed or not, nanopb calls these with a stream holding whole elements; read them all. */
#define NUMBER_CB(fn, T, read)                                              \
    static bool fn(pb_istream_t *s, const pb_field_t *f, void **arg)        \
    {                                                                       \
        (void)f;                                                            \
        ox_vec *v = *arg;                                                   \
        while (s->bytes_left) {                                             \
            T x;                                                            \
            if (!(read))                                                    \
                return false;                                               \
            if (!bd_pb_reserve(&v->p, &v->cap, v->n, sizeof(T)))            \
                PB_RETURN_ERROR(s, "out of memory");                        \
            ((T *)v->p)[v->n++] = x;                                        \
        }                                                                   \
        return true;                                                        \
    }

NUMBER_CB(float_cb,  float,    pb_decode_fixed32(s, &x))
NUMBER_CB(double_cb, double,   pb_decode_fixed64(s, &x))
NUMBER_CB(uint64_cb, uint64_t, pb_decode_varint(s, &x))
/* int32 and int64 fields are both plain varints of the two's complement 64-bit value. */
NUMBER_CB(int64_cb,  int64_t,  pb_decode_varint(s, (uint64_t *)&x))

void ox_on_float(pb_callback_t *cb, ox_vec *v)    { cb->funcs.decode = float_cb;  cb->arg = v; }
void ox_on_double(pb_callback_t *cb, ox_vec *v)   { cb->funcs.decode = double_cb; cb->arg = v; }
void ox_on_int64(pb_callback_t *cb, ox_vec *v)    { cb->funcs.decode = int64_cb;  cb->arg = v; }
void ox_on_uint64(pb_callback_t *cb, ox_vec *v)   { cb->funcs.decode = uint64_cb; cb->arg = v; }
