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
#include "wire_span.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- decoding ----------------------------------------------------------------------------- */

bool bd_wire_decode(bd_wire_reader *rd, const uint8_t *buf, size_t len,
                    const pb_msgdesc_t *fields, void *msg)
{
    bd_wire_reader *outer = bound_reader;
    pb_istream_t in = pb_istream_from_buffer(buf, len);

    rd->base = buf;
    rd->end = buf ? buf + len : buf;
    rd->error = NULL;
    bound_reader = rd;
    bool ok = pb_decode(&in, fields, msg);
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

static bool is_packable(pb_type_t type) { return PB_LTYPE(type) <= PB_LTYPE_LAST_PACKABLE; }

static size_t fixed_width(pb_type_t type)
{
    return PB_LTYPE(type) == PB_LTYPE_FIXED32 ? 4 : PB_LTYPE(type) == PB_LTYPE_FIXED64 ? 8 : 0;
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

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

size_t bd_wire_field_header(uint8_t out[BD_WIRE_HEADER_MAX], uint32_t field_number,
                            uint64_t payload_size)
{
    size_t n = put_varint(out, ((uint64_t)field_number << 3) | PB_WT_STRING);
    return n + put_varint(out + n, payload_size);
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
