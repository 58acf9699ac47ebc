/* Span callbacks and the decode entry point for the protobuf importers (see pb_span.h). */
#include "core/pb_span.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <pb_common.h>

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

/* A zeroed stand-in message for nanopb's field iterator, which reads the struct it walks:
 * any message is at most PB_SIZE_MAX bytes. */
static const max_align_t zero_msg[(PB_SIZE_MAX + sizeof(max_align_t)) / sizeof(max_align_t)];

#define NUL_WALK_MAX_DEPTH 32

/* The offset in S's buffer of the first NUL inside a string field of message DESC or of the
 * submessages nanopb decodes with it (callback fields are decoded, and checked, on their own
 * bd_pb_decode); -1 when there is none or the bytes are malformed (pb_decode says so then).
 * nanopb keeps strings as C strings: a NUL would cut a name ("x\0junk" read as "x") silently. */
static long first_nul(pb_istream_t *s, const uint8_t *base, const pb_msgdesc_t *desc, int depth)
{
    pb_field_iter_t it;
    bool has_fields = pb_field_iter_begin_const(&it, desc, zero_msg);
    while (s->bytes_left) {
        pb_wire_type_t wt;
        uint32_t tag;
        bool eof;
        if (!pb_decode_tag(s, &wt, &tag, &eof) || eof)
            return -1;
        if (wt != PB_WT_STRING || !has_fields || !pb_field_iter_find(&it, tag)) {
            if (!pb_skip_field(s, wt))
                return -1;
            continue;
        }
        pb_istream_t sub;
        if (!pb_make_string_substream(s, &sub))
            return -1;
        const uint8_t *at = sub.state;
        pb_type_t type = it.type;
        long nul = -1;
        if (PB_LTYPE(type) == PB_LTYPE_STRING) {
            const uint8_t *z = memchr(at, 0, sub.bytes_left);
            nul = z ? (long)(z - base) : -1;
        } else if (PB_LTYPE_IS_SUBMSG(type) && PB_ATYPE(type) != PB_ATYPE_CALLBACK &&
                   it.submsg_desc && depth < NUL_WALK_MAX_DEPTH) {
            nul = first_nul(&sub, base, it.submsg_desc, depth + 1);
        }
        if (nul >= 0)
            return nul;
        if (!pb_close_string_substream(s, &sub))     /* skips the rest: no copy */
            return -1;
    }
    return -1;
}

int bd_pb_decode(const bd_pb_span *sp, const pb_msgdesc_t *fields, void *msg, const char *what,
                 bd_error *err)
{
    pb_istream_t walk = pb_istream_from_buffer(sp->p, sp->n);
    long nul = first_nul(&walk, sp->p, fields, 0);
    if (nul >= 0)
        return bd_error_set(err, BD_EMODEL, "%s: a NUL byte in a string (at byte %ld of it); names "
                            "and strings must not contain NUL", what, nul);
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
