/* Tensor payloads referenced in place: the nanopb callback behind every bd_wire_spans
 * field, and the reader (decode context + arena) that owns the span lists.
 *
 * Why an arena: nanopb releases a message itself when decoding fails, and it knows nothing
 * about callback storage, so span lists allocated per field would leak on malformed input
 * (they can sit inside heap-allocated repeated submessages such as inputs[i].contents).
 * Owning them in the reader makes cleanup one call whatever happened.
 *
 * Why a thread-local reader: nanopb hands a non-packed repeated scalar to the callback
 * through a stream over a copy on its own stack, which carries no link to our buffer. The
 * reader bound for the duration of bd_wire_decode is where such values are copied to. */
#include "proto/wire_span.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_common.h>
#include <pb_decode.h>
#include <pb_encode.h>

struct bd_wire_chunk {
    struct bd_wire_chunk *next;
    size_t                cap;
    size_t                used;
    max_align_t           mem[];    /* cap bytes */
};

enum { CHUNK_MIN = 4096, LIST_MIN = 4 };

static _Thread_local bd_wire_reader *bound_reader;   /* set only inside bd_wire_decode */

/* ---- arena ------------------------------------------------------------------------------ */

static unsigned char *chunk_mem(struct bd_wire_chunk *c) { return (unsigned char *)c->mem; }

static void *arena_alloc(bd_wire_reader *rd, size_t n, size_t align)
{
    struct bd_wire_chunk *c = rd->chunks;
    if (c) {
        size_t off = (c->used + align - 1) & ~(align - 1);
        if (off <= c->cap && n <= c->cap - off) {
            c->used = off + n;
            return chunk_mem(c) + off;
        }
    }
    size_t cap = n < CHUNK_MIN ? CHUNK_MIN : n;
    if (cap > SIZE_MAX - sizeof *c)
        return NULL;
    c = malloc(sizeof *c + cap);
    if (!c)
        return NULL;
    c->next = rd->chunks;
    c->cap = cap;
    c->used = n;
    rd->chunks = c;
    return chunk_mem(c);
}

/* Grow the most recent arena allocation P (SIZE bytes, ending at the arena top) by N bytes
 * in place; false if P is not at the top or the chunk is full. */
static bool arena_extend(bd_wire_reader *rd, const uint8_t *p, size_t size, size_t n)
{
    struct bd_wire_chunk *c = rd->chunks;
    if (!c || p + size != chunk_mem(c) + c->used || n > c->cap - c->used)
        return false;
    c->used += n;
    return true;
}

void bd_wire_reader_free(bd_wire_reader *rd)
{
    if (!rd)
        return;
    for (struct bd_wire_chunk *c = rd->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    *rd = (bd_wire_reader)BD_WIRE_READER_INIT;
}

/* ---- checking before decoding ------------------------------------------------------------- */

const bd_wire_limits bd_wire_request_limits = {
    .max_repeated = BD_WIRE_REQUEST_MAX_REPEATED,
    .max_elements = BD_WIRE_REQUEST_MAX_ELEMENTS,
};

/* A zeroed stand-in for a heap-allocated submessage: nanopb's field iterator reads the message
 * it walks (a pointer field's value), so it needs memory of the submessage's size, which is at
 * most PB_SIZE_MAX (an element's data_size is a pb_size_t). */
static const max_align_t zero_msg[(PB_SIZE_MAX + sizeof(max_align_t)) / sizeof(max_align_t)];

enum { CHECK_COUNTED_FIELDS = 64 };     /* fields past this index share the last counter */

typedef struct check {
    const bd_wire_limits *limits;
    size_t elements;                    /* counted so far in the whole message */
    char  *why;
    size_t why_size;
    struct {                            /* where the walk is; printed only on failure */
        uint32_t tag;
        size_t   index;                 /* SIZE_MAX: not a repeated element */
    } path[BD_WIRE_MAX_DEPTH + 2];
} check;

static bool is_packable(pb_type_t type) { return PB_LTYPE(type) <= PB_LTYPE_LAST_PACKABLE; }

static size_t fixed_width(pb_type_t type)
{
    return PB_LTYPE(type) == PB_LTYPE_FIXED32 ? 4 : PB_LTYPE(type) == PB_LTYPE_FIXED64 ? 8 : 0;
}

/* Record why the walk stopped, at the field whose path is the first PATH_LEN entries of
 * C->path (none when 0). Returns false. */
__attribute__((format(printf, 3, 4)))
static bool check_fail(check *c, size_t path_len, const char *fmt, ...)
{
    char what[128], path[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!c->why_size)
        return false;
    size_t at = 0;
    path[0] = '\0';
    for (size_t i = 0; i < path_len && at < sizeof path; i++) {
        int w = c->path[i].index == SIZE_MAX
                    ? snprintf(path + at, sizeof path - at, "%s%u", i ? "." : "", c->path[i].tag)
                    : snprintf(path + at, sizeof path - at, "%s%u[%zu]", i ? "." : "", c->path[i].tag,
                               c->path[i].index);
        at += w > 0 ? (size_t)w : 0;
    }
    if (path_len)
        snprintf(c->why, c->why_size, "field %s: %s", path, what);
    else
        snprintf(c->why, c->why_size, "%s", what);
    return false;
}

static bool check_malformed(check *c, size_t path_len, pb_istream_t *s)
{
    return check_fail(c, path_len, "%s", PB_GET_ERROR(s));
}

/* The path at LEN entries, one deeper: field TAG (element INDEX when REPEATED). Returns the
 * new length (nesting is bounded by BD_WIRE_MAX_DEPTH, checked before this overflows). */
static size_t path_push(check *c, size_t len, uint32_t tag, bool repeated, size_t index)
{
    if (len >= sizeof c->path / sizeof *c->path)
        return len;
    c->path[len].tag = tag;
    c->path[len].index = repeated ? index : SIZE_MAX;
    return len + 1;
}

/* N more elements in the field counted by *COUNT and in the message; false past a limit. */
static bool check_count(check *c, size_t path_len, uint32_t *count, size_t n)
{
    size_t max_field = c->limits ? c->limits->max_repeated : UINT32_MAX;
    size_t max_total = c->limits ? c->limits->max_elements : SIZE_MAX;
    if (n > max_field - *count || n > UINT32_MAX - *count)
        return check_fail(c, path_len, "more than %zu elements in one repeated field (the limit)",
                          max_field);
    *count += (uint32_t)n;
    if (n > max_total - c->elements)
        return check_fail(c, path_len, "more than %zu repeated elements in the message (the limit)",
                          max_total);
    c->elements += n;
    return true;
}

/* Elements in a packed payload of LEN bytes at P: varints end on a byte < 0x80. */
static size_t packed_count(pb_type_t type, const uint8_t *p, size_t len)
{
    if (fixed_width(type))
        return len / fixed_width(type);
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += p[i] < 0x80;
    return n;
}

/* Walk one message of type DESC in S (ZEROED: a zeroed struct of that type, for the field
 * iterator), at nesting DEPTH, its path the first PATH_LEN bytes of C->path. */
static bool check_message(check *c, pb_istream_t *s, const pb_msgdesc_t *desc, const void *zeroed,
                          int depth, size_t path_len)
{
    uint32_t counts[CHECK_COUNTED_FIELDS] = {0};
    pb_field_iter_t it;
    bool has_fields = pb_field_iter_begin_const(&it, desc, zeroed);

    if (depth > BD_WIRE_MAX_DEPTH)
        return check_fail(c, path_len, "submessages nested deeper than %d", BD_WIRE_MAX_DEPTH);
    while (s->bytes_left) {
        pb_wire_type_t wt;
        uint32_t tag;
        bool eof;
        if (!pb_decode_tag(s, &wt, &tag, &eof))
            return check_malformed(c, path_len, s);
        if (tag == 0)
            return check_fail(c, path_len, "zero tag");
        if (!has_fields || !pb_field_iter_find(&it, tag)) {
            if (!pb_skip_field(s, wt))                 /* unknown: skipped, as nanopb does */
                return check_malformed(c, path_len, s);
            continue;
        }
        pb_type_t type = it.type;
        bool repeated = PB_HTYPE(type) == PB_HTYPE_REPEATED;
        bool payload = PB_ATYPE(type) == PB_ATYPE_CALLBACK && is_packable(type);
        uint32_t *count = &counts[it.index < CHECK_COUNTED_FIELDS ? it.index : CHECK_COUNTED_FIELDS - 1];
        size_t index = *count;
        if (wt != PB_WT_STRING || payload) {
            /* one scalar element, or a tensor payload (in place: not counted) */
            if (repeated && !payload && !check_count(c, path_push(c, path_len, tag, false, 0), count, 1))
                return false;
            if (!pb_skip_field(s, wt))
                return check_malformed(c, path_len, s);
            continue;
        }

        pb_istream_t sub;
        if (!pb_make_string_substream(s, &sub))
            return check_malformed(c, path_len, s);
        const uint8_t *at = sub.state;          /* a buffer stream's read position */
        size_t len = sub.bytes_left;
        size_t here = path_push(c, path_len, tag, repeated && !is_packable(type), index);
        bool ok = !repeated || check_count(c, here, count, is_packable(type) ? packed_count(type, at, len) : 1);
        const uint8_t *nul = ok && len && PB_LTYPE(type) == PB_LTYPE_STRING ? memchr(at, 0, len) : NULL;
        if (nul)
            ok = check_fail(c, here, "a NUL byte in a string (at offset %zu); strings must not contain NUL",
                            (size_t)(nul - at));
        else if (ok && PB_LTYPE_IS_SUBMSG(type) && it.submsg_desc)
            ok = check_message(c, &sub, it.submsg_desc,
                               PB_ATYPE(type) == PB_ATYPE_POINTER ? (const void *)zero_msg : it.pData,
                               depth + 1, here);
        else if (ok && !pb_read(&sub, NULL, sub.bytes_left))
            ok = check_malformed(c, here, &sub);
        if (!ok)
            return false;
        if (!pb_close_string_substream(s, &sub))
            return check_malformed(c, path_len, s);
    }
    return true;
}

bool bd_wire_check(const uint8_t *buf, size_t len, const pb_msgdesc_t *fields, const void *zeroed,
                   const bd_wire_limits *limits, char *why, size_t why_size)
{
    check c = { .limits = limits, .why = why, .why_size = why_size };
    pb_istream_t in = pb_istream_from_buffer(buf, len);
    if (why_size)
        why[0] = '\0';
    return check_message(&c, &in, fields, zeroed, 0, 0);
}

/* ---- decoding ----------------------------------------------------------------------------- */

bool bd_wire_decode(bd_wire_reader *rd, const uint8_t *buf, size_t len,
                    const pb_msgdesc_t *fields, void *msg)
{
    bd_wire_reader *outer = bound_reader;
    pb_istream_t in = pb_istream_from_buffer(buf, len);

    rd->base = buf;
    rd->end = buf ? buf + len : buf;
    rd->error = NULL;
    if (!bd_wire_check(buf, len, fields, msg, rd->limits, rd->error_text, sizeof rd->error_text)) {
        rd->error = rd->error_text;
        return false;
    }
    bound_reader = rd;
    /* MSG is zeroed (the contract), and zero is every field's default unless the message
     * declares others (proto2 [default]): then nanopb's pass setting defaults is redundant. */
    bool ok = pb_decode_ex(&in, fields, msg, fields->default_value ? 0 : PB_DECODE_NOINIT);
    bound_reader = outer;
    if (!ok)
        rd->error = PB_GET_ERROR(&in);
    return ok;
}

/* [P, P+N) lies inside the buffer RD decodes. Compared as integers: P may point anywhere. */
static bool within(const bd_wire_reader *rd, const uint8_t *p, size_t n)
{
    uintptr_t b = (uintptr_t)rd->base, e = (uintptr_t)rd->end, a = (uintptr_t)p;
    return rd->base && a >= b && a <= e && n <= e - a;
}

/* A stream over memory keeps its read position in 'state'; only such streams can be
 * referenced, and only when that memory is the buffer being decoded. */
static bool reads_from(const pb_istream_t *stream, const bd_wire_reader *rd)
{
    const pb_istream_t mem = pb_istream_from_buffer(NULL, 0);
    return stream->callback == mem.callback && within(rd, stream->state, stream->bytes_left);
}

/* Make room for one more span in S (so an allocation made right after stays the arena top). */
static bool reserve_span(bd_wire_reader *rd, bd_wire_spans *s)
{
    if (s->list.count < s->list.cap)
        return true;
    size_t cap = s->list.cap ? s->list.cap * 2 : LIST_MIN;
    if (cap > SIZE_MAX / sizeof(bd_wire_span))
        return false;
    bd_wire_span *items = arena_alloc(rd, cap * sizeof(bd_wire_span), _Alignof(bd_wire_span));
    if (!items)
        return false;
    if (s->list.count)
        memcpy(items, s->list.items, s->list.count * sizeof(bd_wire_span));
    s->list.items = items;          /* the old array stays in the arena until the reader is freed */
    s->list.cap = cap;
    return true;
}

static bool decode_spans(pb_istream_t *stream, const pb_field_t *field, bd_wire_spans *s)
{
    bd_wire_reader *rd = bound_reader;
    size_t n = stream->bytes_left;

    if (!rd)
        PB_RETURN_ERROR(stream, "tensor payload decoded outside bd_wire_decode");
    if (!s->reader && s->list.count == 0)
        s->reader = rd;
    if (s->reader != rd)
        PB_RETURN_ERROR(stream, "payload list not zero-initialized before decoding");
    if (fixed_width(field->type) && n % fixed_width(field->type))
        PB_RETURN_ERROR(stream, "packed payload is not a whole number of elements");

    if (reads_from(stream, rd)) {
        const uint8_t *at = stream->state;
        if (!reserve_span(rd, s))
            PB_RETURN_ERROR(stream, "out of memory");
        s->list.items[s->list.count++] = (bd_wire_span){at, n};
        return pb_read(stream, NULL, n);    /* a memory stream just advances */
    }

    /* A non-packed scalar nanopb copied to its stack: keep a copy, appended to the previous
     * copy while that is still the newest arena allocation (one span for the run). */
    bd_wire_span *last = s->list.count ? &s->list.items[s->list.count - 1] : NULL;
    bool last_is_copy = last && last->data && !within(rd, last->data, last->size);
    if (is_packable(field->type) && last_is_copy && arena_extend(rd, last->data, last->size, n)) {
        uint8_t *tail = (uint8_t *)last->data + last->size;
        last->size += n;
        return pb_read(stream, tail, n);
    }
    if (!reserve_span(rd, s))
        PB_RETURN_ERROR(stream, "out of memory");
    uint8_t *copy = arena_alloc(rd, n ? n : 1, 1);
    if (!copy)
        PB_RETURN_ERROR(stream, "out of memory");
    s->list.items[s->list.count++] = (bd_wire_span){copy, n};
    return pb_read(stream, copy, n);
}

bool bd_wire_spans_in_place(const bd_wire_spans *s, const bd_wire_reader *rd)
{
    for (size_t i = 0; i < s->list.count; i++) {
        const bd_wire_span *sp = &s->list.items[i];
        if (sp->size && !within(rd, sp->data, sp->size))
            return false;
    }
    return true;
}

size_t bd_wire_spans_bytes(const bd_wire_spans *s)
{
    size_t total = 0;
    for (size_t i = 0; i < s->list.count; i++)
        total += s->list.items[i].size;
    return total;
}

long bd_wire_spans_read_fixed(const bd_wire_spans *s, unsigned width, void *dst, size_t dst_count)
{
    size_t bytes = bd_wire_spans_bytes(s);
    if (width == 0 || bytes % width || bytes / width > dst_count || bytes / width > (size_t)LONG_MAX)
        return -1;
    unsigned char *out = dst;
    for (size_t i = 0; i < s->list.count; i++) {
        if (s->list.items[i].size)
            memcpy(out, s->list.items[i].data, s->list.items[i].size);
        out += s->list.items[i].size;
    }
    return (long)(bytes / width);
}

size_t bd_wire_spans_count_varints(const bd_wire_spans *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->list.count; i++)
        n += packed_count(PB_LTYPE_VARINT, s->list.items[i].data, s->list.items[i].size);
    return n;
}

long bd_wire_spans_read_varints(const bd_wire_spans *s, uint64_t *dst, size_t dst_count)
{
    size_t n = 0;
    for (size_t i = 0; i < s->list.count; i++) {
        pb_istream_t in = pb_istream_from_buffer(s->list.items[i].data, s->list.items[i].size);
        while (in.bytes_left) {
            if (n == dst_count || n == (size_t)LONG_MAX || !pb_decode_varint(&in, &dst[n]))
                return -1;
            n++;
        }
    }
    return (long)n;
}

/* ---- encoding ----------------------------------------------------------------------------- */

void bd_wire_spans_borrow(bd_wire_spans *s, bd_wire_span *items, size_t n)
{
    s->list.items = items;
    s->list.count = n;
    s->list.cap = 0;
    s->reader = NULL;
}

size_t bd_wire_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

size_t bd_wire_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t bd_wire_field_header(uint8_t out[BD_WIRE_HEADER_MAX], uint32_t field_number,
                            uint64_t payload_size)
{
    size_t n = bd_wire_put_varint(out, ((uint64_t)field_number << 3) | PB_WT_STRING);
    return n + bd_wire_put_varint(out + n, payload_size);
}

static bool encode_spans(pb_ostream_t *stream, const pb_field_t *field, const bd_wire_spans *s)
{
    if (!is_packable(field->type)) {          /* bytes: one element per span */
        for (size_t i = 0; i < s->list.count; i++) {
            const bd_wire_span *sp = &s->list.items[i];
            if (!pb_encode_tag_for_field(stream, field) || !pb_encode_string(stream, sp->data, sp->size))
                return false;
        }
        return true;
    }

    /* numeric: the spans are one packed payload */
    size_t total = bd_wire_spans_bytes(s);
    if (total == 0)
        return true;
    if (fixed_width(field->type) && total % fixed_width(field->type))
        PB_RETURN_ERROR(stream, "packed payload is not a whole number of elements");
    if (!pb_encode_tag(stream, PB_WT_STRING, field->tag) || !pb_encode_varint(stream, total))
        return false;
    for (size_t i = 0; i < s->list.count; i++)
        if (!pb_write(stream, s->list.items[i].data, s->list.items[i].size))
            return false;
    return true;
}

bool bd_wire_spans_callback(pb_istream_t *istream, pb_ostream_t *ostream, const pb_field_t *field)
{
    if (istream)
        return decode_spans(istream, field, field->pData);
    if (ostream)
        return encode_spans(ostream, field, field->pData);
    return true;
}
