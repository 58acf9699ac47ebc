/* nanopb glue for the GraphDef: callbacks that record spans and numbers, and one decode
 * entry point that turns nanopb's failures into BD_EMODEL messages. */
#include "tf_internal.h"

#include <stdlib.h>
#include <string.h>

void tf_spans_init(tf_spans *l, const uint8_t *lo, size_t len)
{
    memset(l, 0, sizeof *l);
    l->lo = lo;
    l->hi = lo + len;
}

void tf_spans_free(tf_spans *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void tf_nums_free(tf_nums *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

/* Room for one more element. Every element costs the file at least one byte, so growth is
 * bounded by the buffer's size. */
static bool reserve(void **p, size_t *cap, size_t n, size_t esize)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    if (ncap > SIZE_MAX / esize)
        return false;
    void *q = realloc(*p, ncap * esize);
    if (!q)
        return false;
    *p = q;
    *cap = ncap;
    return true;
}

/* A length-delimited field: remember where it lies, skip it. A field sent with a scalar
 * wire type reaches us as a copy on nanopb's stack, which the bounds check rejects. */
static bool span_cb(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    tf_spans *l = *arg;
    const uint8_t *p = s->state;
    size_t n = s->bytes_left;
    if (p < l->lo || p > l->hi || n > (size_t)(l->hi - p))
        PB_RETURN_ERROR(s, "wrong wire type for a length-delimited field");
    if (!reserve((void **)&l->v, &l->cap, l->n, sizeof *l->v))
        PB_RETURN_ERROR(s, "out of memory");
    l->v[l->n++] = (tf_bytes){ p, n };
    return pb_read(s, NULL, n);
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
            if (!reserve((void **)&v->v, &v->cap, v->n, sizeof *v->v))      \
                PB_RETURN_ERROR(s, "out of memory");                        \
            v->v[v->n++] = (uint64_t)x;                                     \
        }                                                                   \
        return true;                                                        \
    }

NUMBER_CB(varint_cb,  uint64_t, pb_decode_varint(s, &x))
NUMBER_CB(fixed32_cb, uint32_t, pb_decode_fixed32(s, &x))
NUMBER_CB(fixed64_cb, uint64_t, pb_decode_fixed64(s, &x))

void tf_on_span(pb_callback_t *cb, tf_spans *l)    { cb->funcs.decode = span_cb;    cb->arg = l; }
void tf_on_varint(pb_callback_t *cb, tf_nums *v)   { cb->funcs.decode = varint_cb;  cb->arg = v; }
void tf_on_fixed32(pb_callback_t *cb, tf_nums *v)  { cb->funcs.decode = fixed32_cb; cb->arg = v; }
void tf_on_fixed64(pb_callback_t *cb, tf_nums *v)  { cb->funcs.decode = fixed64_cb; cb->arg = v; }

int tf_decode(const tf_bytes *sp, const pb_msgdesc_t *fields, void *msg, const char *what,
              bd_error *err)
{
    pb_istream_t s = pb_istream_from_buffer(sp->p, sp->n);
    if (!pb_decode_ex(&s, fields, msg, PB_DECODE_NOINIT)) {
        pb_release(fields, msg);
        const char *why = s.errmsg ? s.errmsg : "wrong wire type for a length-delimited field";
        return bd_error_set(err, BD_EMODEL, "%s: malformed protobuf (%s)", what, why);
    }
    /* nanopb stops quietly at a zero tag; a valid message never holds one. */
    if (s.bytes_left) {
        pb_release(fields, msg);
        return bd_error_set(err, BD_EMODEL, "%s: malformed protobuf (zero tag with %zu bytes left)",
                            what, s.bytes_left);
    }
    return 0;
}
