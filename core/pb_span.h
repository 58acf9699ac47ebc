/* nanopb callbacks that record where a length-delimited field's bytes sit in the buffer
 * being decoded (weights and sub-messages are never copied), and one decode entry point
 * that turns nanopb's failures into BD_EMODEL messages. Shared by the protobuf importers. */
#ifndef BD_CORE_PB_SPAN_H
#define BD_CORE_PB_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pb_decode.h>

#include "core/error.h"

/* A byte range of the buffer being decoded. */
typedef struct bd_pb_span {
    const uint8_t *p;
    size_t         n;
} bd_pb_span;

/* Spans recorded by bd_pb_on_span's callback; LO..HI bounds the buffer they must lie in. */
typedef struct bd_pb_spans {
    bd_pb_span    *v;
    size_t         n, cap;
    const uint8_t *lo, *hi;
} bd_pb_spans;

/* Empty list whose spans must lie in LO[0..LEN). */
void bd_pb_spans_init(bd_pb_spans *l, const uint8_t *lo, size_t len);
/* Frees the list's storage (not the buffer); the list is empty afterwards. */
void bd_pb_spans_free(bd_pb_spans *l);
/* Sets CB to append each occurrence of its field to L. A field sent with a scalar wire type
 * fails the decode (nanopb hands such a field over as a copy outside the buffer). */
void bd_pb_on_span(pb_callback_t *cb, bd_pb_spans *l);
/* Room for element N in *P (capacity *CAP elements of ESIZE bytes), doubling as needed;
 * false on overflow or out of memory (*P unchanged). Callers append one element per byte
 * or more of input, so growth is bounded by the buffer's size. */
bool bd_pb_reserve(void **p, size_t *cap, size_t n, size_t esize);
/* Decode SP as message FIELDS into MSG (zeroed, callbacks set by the caller). On failure
 * releases MSG and returns BD_EMODEL naming WHAT. The caller pb_releases MSG after use. */
int  bd_pb_decode(const bd_pb_span *sp, const pb_msgdesc_t *fields, void *msg, const char *what,
                  bd_error *err);

#endif
