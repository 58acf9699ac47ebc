/* nanopb glue: callbacks that record spans and numbers, and one decode entry point that
 * turns nanopb's failures into BD_EMODEL messages. */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

void ox_spans_init(ox_spans *l, const ox_ctx *c)
{
    memset(l, 0, sizeof *l);
    l->lo = c->base;
    l->hi = c->base + c->len;
}

void ox_spans_free(ox_spans *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void ox_vec_free(ox_vec *v)
{
    free(v->p);
    memset(v, 0, sizeof *v);
}

/* Room for one more element of ESIZE bytes. Growth is driven by bytes actually present in
 * the buffer (every element costs at least one), so a file cannot ask for more than it has. */
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

/* A length-delimited field (bytes or a sub-message): remember where it lies, skip it. For
 * a field sent with a scalar wire type nanopb hands us a copy on its stack instead of the
 * buffer, which the bounds check rejects: that is how a wrong wire type is caught here. */
static bool span_cb(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    ox_spans *l = *arg;
    const uint8_t *p = s->state;
    size_t n = s->bytes_left;
    if (p < l->lo || p > l->hi || n > (size_t)(l->hi - p))
        PB_RETURN_ERROR(s, "wrong wire type for a length-delimited field");
    if (!reserve((void **)&l->v, &l->cap, l->n, sizeof *l->v))
        PB_RETURN_ERROR(s, "out of memory");
    l->v[l->n++] = (ox_span){ p, n };
    return pb_read(s, NULL, n);
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
            if (!reserve(&v->p, &v->cap, v->n, sizeof(T)))                  \
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

void ox_on_span(pb_callback_t *cb, ox_spans *l)   { cb->funcs.decode = span_cb;   cb->arg = l; }
void ox_on_float(pb_callback_t *cb, ox_vec *v)    { cb->funcs.decode = float_cb;  cb->arg = v; }
void ox_on_double(pb_callback_t *cb, ox_vec *v)   { cb->funcs.decode = double_cb; cb->arg = v; }
void ox_on_int64(pb_callback_t *cb, ox_vec *v)    { cb->funcs.decode = int64_cb;  cb->arg = v; }
void ox_on_uint64(pb_callback_t *cb, ox_vec *v)   { cb->funcs.decode = uint64_cb; cb->arg = v; }

int ox_decode(const ox_span *sp, const pb_msgdesc_t *fields, void *msg, const char *what,
              bd_error *err)
{
    pb_istream_t s = pb_istream_from_buffer(sp->p, sp->n);
    if (!pb_decode_ex(&s, fields, msg, PB_DECODE_NOINIT)) {
        pb_release(fields, msg);
        /* Only a callback handed a scalar (the wrong wire type) fails without a message. */
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
