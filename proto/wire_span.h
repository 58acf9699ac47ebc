/* Tensor payloads on the wire, referenced in place.
 *
 * The big fields of inference.proto (raw_input_contents, raw_output_contents, every field
 * of InferTensorContents, ModelRepositoryParameter.bytes_param) are nanopb FT_CALLBACK
 * fields whose storage is a bd_wire_spans list (see proto/inference.options). They are
 * never copied into nanopb structs and never limited in size:
 *
 *   decode  bd_wire_decode() parses a contiguous buffer; each payload becomes a span that
 *           points INTO that buffer (no copy). The buffer must outlive the spans.
 *   encode  the server points a list at its own memory (bd_wire_spans_borrow) and
 *           pb_encode streams it out; or, for zero copy onto a gRPC byte buffer, it leaves
 *           the list empty, encodes the rest, and appends bd_wire_field_header() + its
 *           tensor memory as separate slices.
 *
 * Span meaning depends on the field's protobuf type:
 *   bytes fields    one span per repeated element, in wire order (raw_input_contents[i]
 *                   belongs to inputs[i]); an empty element is an empty span.
 *   numeric fields  the spans concatenated are the packed payload: little-endian values for
 *                   float/double (fp32_contents, fp64_contents: directly the array), varints
 *                   for bool/int/uint fields. Decode them with bd_wire_spans_* readers or
 *                   pb_decode_varint over each span.
 * Spans are byte-aligned only: copy (memcpy) before treating them as float arrays if the
 * consumer needs alignment.
 *
 * Hostile input: before nanopb allocates anything, bd_wire_decode walks the message once
 * with its descriptors (bd_wire_check) and refuses a string holding a NUL byte (nanopb's
 * char * would silently cut it there), nesting deeper than BD_WIRE_MAX_DEPTH, and, when the
 * reader carries limits, repeated fields with more elements than they allow.
 *
 * Thread safety: a reader is used by one thread at a time; different readers are
 * independent. The one callback, bd_wire_spans_callback, is what nanopb calls for these
 * fields (bound by name in the generated code), so nothing needs to be set per message. */
#ifndef BD_PROTO_WIRE_SPAN_H
#define BD_PROTO_WIRE_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pb.h>

/* One payload, or one chunk of a packed payload. */
typedef struct bd_wire_span {
    const uint8_t *data;            /* NULL only when size == 0 */
    size_t         size;
} bd_wire_span;

struct bd_wire_chunk;

/* What one message may make nanopb allocate: its repeated fields and maps (each element is a
 * struct of its own). Tensor payloads (bd_wire_spans fields of a numeric type) are not
 * counted: they are referenced in place, no bigger than their bytes on the wire. A repeated
 * bytes payload field (raw_input_contents, bytes_contents) counts one element per entry. */
typedef struct bd_wire_limits {
    size_t max_repeated;            /* elements of one repeated field or map of one message */
    size_t max_elements;            /* elements of every repeated field and map, nested ones
                                     * included, in the whole message */
} bd_wire_limits;

/* What braidd accepts in a request (docs/protocol.md, "Limits on a request"). */
#define BD_WIRE_REQUEST_MAX_REPEATED 1024
#define BD_WIRE_REQUEST_MAX_ELEMENTS 65536
extern const bd_wire_limits bd_wire_request_limits;

/* Deepest nesting of submessages bd_wire_check follows (braid's schemas need 4). */
#define BD_WIRE_MAX_DEPTH 16

/* Decode context: remembers the buffer being parsed and owns every span list (and the
 * rare copied bytes) created while decoding it. Zero-initialize (BD_WIRE_READER_INIT),
 * pass to bd_wire_decode, free with bd_wire_reader_free once the message is done. */
typedef struct bd_wire_reader {
    const uint8_t        *base;     /* the buffer given to bd_wire_decode */
    const uint8_t        *end;
    struct bd_wire_chunk *chunks;   /* arena blocks, newest first */
    const char           *error;    /* text from nanopb or this module on failure (static or
                                     * in error_text; valid while RD is) */
    const bd_wire_limits *limits;   /* set before bd_wire_decode; NULL = no count limits */
    char                  error_text[160];
} bd_wire_reader;

#define BD_WIRE_READER_INIT {NULL, NULL, NULL, NULL, NULL, {0}}

/* The storage of one callback field. Its two-member shape matches the {{NULL}, NULL}
 * initializer nanopb emits for custom callback types (all-zero means empty). */
typedef struct bd_wire_spans {
    struct {
        bd_wire_span *items;
        size_t        count;
        size_t        cap;          /* 0 when items is borrowed from the caller */
    } list;
    bd_wire_reader *reader;         /* arena that owns list.items; NULL when borrowed */
} bd_wire_spans;

/* Longest tag + length prefix of a length-delimited field (two varints). */
#define BD_WIRE_HEADER_MAX 16

/* ---- decoding ------------------------------------------------------------------------ */

/* Decode the protobuf message in BUF[0..LEN) into MSG (described by FIELDS, e.g.
 * inference_ModelInferRequest_fields). MSG must be zero-initialized (its *_init_zero).
 * Tensor payload spans point into BUF; their lists live in RD. bd_wire_check runs first
 * (with RD->limits). Returns false on malformed or refused input with RD->error set;
 * nanopb has then already released MSG's heap fields. Either way the caller later calls
 * pb_release(FIELDS, MSG) (harmless after failure) and bd_wire_reader_free(RD). RD must
 * not be in use by another decode. */
bool bd_wire_decode(bd_wire_reader *rd, const uint8_t *buf, size_t len,
                    const pb_msgdesc_t *fields, void *msg);

/* Walk the message in BUF[0..LEN) (FIELDS) without decoding it: false, with a reason in
 * WHY, when a string field holds a NUL byte, submessages nest deeper than
 * BD_WIRE_MAX_DEPTH, a repeated field or the message exceeds LIMITS (NULL = no count
 * limits), or the wire is malformed where the walk reads it. The reason names the field by
 * its path of .proto field numbers, element indexes in brackets: "5[0].1" is the name of
 * ModelInferRequest.inputs[0]. ZEROED is a zero-initialized message of FIELDS' type (only
 * read). Allocates nothing, whatever the input. */
bool bd_wire_check(const uint8_t *buf, size_t len, const pb_msgdesc_t *fields, const void *zeroed,
                   const bd_wire_limits *limits, char *why, size_t why_size);

/* Free every span list and copy RD owns; RD returns to its initial state. NULL is allowed.
 * Spans decoded through RD must not be used afterwards. */
void bd_wire_reader_free(bd_wire_reader *rd);

/* true if every span of S lies inside RD's decoded buffer (nothing was copied). */
bool bd_wire_spans_in_place(const bd_wire_spans *s, const bd_wire_reader *rd);

/* Total payload bytes over all spans of S. */
size_t bd_wire_spans_bytes(const bd_wire_spans *s);

/* Gather the packed little-endian fixed-width payload of S (fp32_contents: WIDTH 4,
 * fp64_contents: WIDTH 8) into DST, which holds DST_COUNT elements. Returns the number of
 * elements, or -1 if the byte count is not a multiple of WIDTH or exceeds DST_COUNT. */
long bd_wire_spans_read_fixed(const bd_wire_spans *s, unsigned width, void *dst, size_t dst_count);

/* Number of values in the packed varint payload of S (bytes that end a varint); a
 * malformed payload is caught by the reader below. */
size_t bd_wire_spans_count_varints(const bd_wire_spans *s);

/* Decode the packed varint payload of S (bool/int32/int64/uint32/uint64 contents) into
 * DST as uint64 (int32/int64 values are two's complement: cast to int64_t). Returns the
 * number of values, or -1 on a malformed varint or more than DST_COUNT values. */
long bd_wire_spans_read_varints(const bd_wire_spans *s, uint64_t *dst, size_t dst_count);

/* ---- encoding ------------------------------------------------------------------------ */

/* Make S refer to the caller's ITEMS[0..N) (not copied; they and their bytes must stay
 * valid until encoding is done). Nothing to free. */
void bd_wire_spans_borrow(bd_wire_spans *s, bd_wire_span *items, size_t n);

/* Write V as a protobuf varint into OUT (room for 10 bytes); returns the bytes written. */
size_t bd_wire_put_varint(uint8_t *out, uint64_t v);
/* The bytes bd_wire_put_varint writes for V (1 to 10; an int64 below zero takes 10). */
size_t bd_wire_varint_size(uint64_t v);

/* Write the tag and length that precede a length-delimited field FIELD_NUMBER carrying
 * PAYLOAD_SIZE bytes (e.g. inference_ModelInferResponse_raw_output_contents_tag) into OUT;
 * returns the number of bytes written (<= BD_WIRE_HEADER_MAX). Appending this header and
 * the payload after an encoded message adds one element to that repeated field. */
size_t bd_wire_field_header(uint8_t out[BD_WIRE_HEADER_MAX], uint32_t field_number,
                            uint64_t payload_size);

/* ---- nanopb binding ------------------------------------------------------------------ */

/* The field callback nanopb calls for every bd_wire_spans field (named by the
 * callback_function option in inference.options). Not called directly. */
bool bd_wire_spans_callback(pb_istream_t *istream, pb_ostream_t *ostream, const pb_field_t *field);

#endif
