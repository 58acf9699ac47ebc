/* Span callbacks and the decode entry point for the protobuf importers (see pb_span.h). */
#include "core/pb_span.h"

#include <stdlib.h>
#include <string.h>

void bd_pb_spans_init(bd_pb_spans *l, const uint8_t *lo, size_t len)
{
    memset(l, 0, sizeof *l);
    l->lo = lo;
    l->hi = lo + len;
}

void bd_pb_spans_free(bd_pb_spans *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

bool bd_pb_reserve(void **p, size_t *cap, size_t n, size_t esize)
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
    bd_pb_spans *l = *arg;
    const uint8_t *p = s->state;
    size_t n = s->bytes_left;
    if (p < l->lo || p > l->hi || n > (size_t)(l->hi - p))
        PB_RETURN_ERROR(s, "wrong wire type for a length-delimited field");
    if (!bd_pb_reserve((void **)&l->v, &l->cap, l->n, sizeof *l->v))
        PB_RETURN_ERROR(s, "out of memory");
    l->v[l->n++] = (bd_pb_span){ p, n };
    return pb_read(s, NULL, n);
}

void bd_pb_on_span(pb_callback_t *cb, bd_pb_spans *l)
{
    cb->funcs.decode = span_cb;
    cb->arg = l;
}

int bd_pb_decode(const bd_pb_span *sp, const pb_msgdesc_t *fields, void *msg, const char *what,
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
