/* Internals shared by the ONNX importer's files (not a public header).
 *
 * Decoding strategy: nanopb decodes one message at a time. Repeated sub-messages and large
 * payloads are callback fields whose callbacks only record where the bytes lie (ox_span);
 * the importer then decodes each span on its own with pb_istream_from_buffer. So a weight's
 * raw_data is a pointer into the model buffer, nothing is limited to nanopb's 64 Ki counts,
 * and the recursion depth of the decoder is fixed by the schema, not by the file. */
#ifndef BD_PARTITIONER_ONNX_ONNX_INTERNAL_H
#define BD_PARTITIONER_ONNX_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pb_decode.h>

#include "core/error.h"
#include "core/pb_span.h"
#include "core/ir/graph.h"
#include "partitioner/onnx/onnx.pb.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw_data is little-endian and is referenced in place: big-endian hosts are not supported"
#endif

/* A byte range of the model buffer, and the spans a callback field recorded (pb_span.h). */
typedef bd_pb_span  ox_span;
typedef bd_pb_spans ox_spans;

/* Numbers decoded by the ox_*_cb callbacks (a typed-data field, an INTS/FLOATS attribute). */
typedef struct ox_vec {
    void  *p;
    size_t n, cap;   /* elements */
} ox_vec;

/* An external-data file read once per import and adopted by the graph. */
typedef struct ox_extfile {
    char    *location;
    void    *addr;
    size_t   size;
    uint64_t dev, ino;   /* the file's identity: another name for it shares these bytes */
} ox_extfile;

/* State of one import. */
typedef struct ox_ctx {
    bd_graph      *g;
    const uint8_t *base;       /* the model buffer */
    size_t         len;
    const char    *base_dir;   /* external data directory, NULL = not allowed */
    ox_extfile    *ext;
    size_t         n_ext, cap_ext;
} ox_ctx;

/* ---- onnx_decode.c: nanopb glue ------------------------------------------------------ */

/* Spans are recorded with bd_pb_spans_init/bd_pb_on_span/bd_pb_spans_free and messages
 * decoded with bd_pb_decode (pb_span.h); only the number recorders are ONNX's own. */
void ox_vec_free(ox_vec *v);
/* Point a callback field at a number recorder. */
void ox_on_float(pb_callback_t *cb, ox_vec *v);    /* float  (fixed32) */
void ox_on_double(pb_callback_t *cb, ox_vec *v);   /* double (fixed64) */
void ox_on_int64(pb_callback_t *cb, ox_vec *v);    /* int64/int32 (varint) -> int64_t */
void ox_on_uint64(pb_callback_t *cb, ox_vec *v);   /* uint64 (varint) -> uint64_t */

/* ---- onnx_tensor.c: TensorProto -> dtype, shape, data -------------------------------- */

/* Decode the TensorProto in SP into V (name, dtype, shape, data, nbytes; names and
 * converted data live in the graph's pool, raw data points into the model buffer).
 * WHAT names the tensor's role for messages ("initializer #3"). */
int ox_tensor_load(ox_ctx *c, const ox_span *sp, bd_value *v, const char *what, bd_error *err);
/* NUMEL and NBYTES of a shape with DIMS, checking for negative dims and overflow. */
int ox_tensor_size(const char *name, int dtype, const int64_t *dims, size_t rank,
                   int64_t *numel, size_t *nbytes, bd_error *err);

/* ---- onnx_external.c: data_location = EXTERNAL --------------------------------------- */

/* Resolve tensor NAME's external data (ENTRIES: location/offset/length) holding NBYTES;
 * sets *DATA to the bytes inside the file's copy owned by the graph. */
int ox_external_data(ox_ctx *c, const char *name, const onnx_StringStringEntryProto *entries,
                     size_t n_entries, size_t nbytes, const void **data, bd_error *err);
/* Forget the cache of files read (the graph owns their bytes). */
void ox_external_free(ox_ctx *c);

/* ---- onnx_types.c: ValueInfoProto -> dtype, shape ------------------------------------ */

/* The dtype and shape that TYPE describes for value NAME. BD_EUNSUPPORTED for a non-tensor
 * type (sequence, map, optional, sparse). */
int ox_type_load(ox_ctx *c, const char *name, const onnx_TypeProto *type, int *dtype,
                 bd_shape *shape, bd_error *err);
/* Check an element type code from the file: BD_EMODEL if unknown, BD_EUNSUPPORTED for
 * complex types; 0 for UNDEFINED when ALLOW_UNDEFINED. */
int ox_check_dtype(const char *name, int64_t dtype, bool allow_undefined, bd_error *err);

/* ---- onnx_attr.c: AttributeProto -> bd_attr; Constant folding ------------------------ */

/* Decode node N's attributes (spans in ATTRS) and add them to N. */
int ox_node_attrs(ox_ctx *c, bd_node *n, const ox_spans *attrs, bd_error *err);
/* Fold a Constant node named NODE_NAME (its attribute spans in ATTRS) into OUT: sets
 * OUT's dtype, shape, data and nbytes. */
int ox_fold_constant(ox_ctx *c, const char *node_name, const ox_spans *attrs, bd_value *out,
                     bd_error *err);

/* ---- onnx_subgraph.c: what subgraph attributes read from enclosing scopes ----------- */

/* A set of value names (heap strings). */
typedef struct ox_names {
    char  **v;
    size_t  n, cap;
} ox_names;

void ox_names_free(ox_names *s);
/* Add to OUT (sorted, without duplicates) the names the GraphProto in GRAPH (an If/Loop/Scan
 * body) reads but does not define, including what its nested bodies read from it or beyond.
 * BD_EMODEL on a malformed body, BD_EUNSUPPORTED past a fixed nesting depth. */
int  ox_subgraph_outer_names(ox_ctx *c, const ox_span *graph, ox_names *out, bd_error *err);

#endif
