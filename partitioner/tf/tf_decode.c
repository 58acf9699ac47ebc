/* nanopb glue for the GraphDef: callbacks that record numbers (spans and decoding are
 * pb_span.h's). */
#include "partitioner/tf/tf_internal.h"

#include <stdlib.h>
#include <string.h>

void tf_nums_free(tf_nums *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

/* Packed or not, nanopb hands these a stream of whole elements; read them all. */
#define NUMBER_CB(fn, T, read)                                              \
    static bool fn(pb_istream_t *s, const pb_field_t *f, void **arg)        \
    {                                                                       \
        (void)f;                                                            \
        tf_nums *v = *arg;                                                  \
        while (s->bytes_left) {                                             \
            T x = 0;                                                        \
            if (!(read))                                                    \
                return false;                                               \
            if (!bd_pb_reserve((void **)&v->v, &v->cap, v->n, sizeof *v->v))   \
                PB_RETURN_ERROR(s, "out of memory");                        \
            v->v[v->n++] = (uint64_t)x;                                     \
        }                                                                   \
        return true;                                                        \
    }

NUMBER_CB(varint_cb,  uint64_t, pb_decode_varint(s, &x))
NUMBER_CB(fixed32_cb, uint32_t, pb_decode_fixed32(s, &x))
NUMBER_CB(fixed64_cb, uint64_t, pb_decode_fixed64(s, &x))

void tf_on_varint(pb_callback_t *cb, tf_nums *v)   { cb->funcs.decode = varint_cb;  cb->arg = v; }
void tf_on_fixed32(pb_callback_t *cb, tf_nums *v)  { cb->funcs.decode = fixed32_cb; cb->arg = v; }
void tf_on_fixed64(pb_callback_t *cb, tf_nums *v)  { cb->funcs.decode = fixed64_cb; cb->arg = v; }
