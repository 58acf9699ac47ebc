/* Internals shared by the TensorFlow frontends' files (not a public header).
 *
 * Both frontends (frozen GraphDef in protobuf, TF.js graph model in JSON) first turn each
 * node into the same frontend-neutral view (tf_nodeview: name, op, data inputs, control
 * inputs, decoded attributes with tensors already resolved to bytes), then hand the views
 * to one translator (tf_translate.h) that builds the IR tf_import.h describes. The
 * translator asks tf_ops.h for each op's mapper; mappers emit IR through tf_emit.h, so the
 * three files depend on each other in one direction only.
 * Everything a view points to lives in the graph's pool or in file bytes the graph owns, so
 * views need no freeing of their own. */
#ifndef BD_PARTITIONER_TF_TF_INTERNAL_H
#define BD_PARTITIONER_TF_TF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pb_decode.h>

#include "core/error.h"
#include "core/pb_span.h"
#include "core/ir/graph.h"
#include "proto/tf_graph.pb.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "TensorFlow tensor_content and TF.js shards are little-endian and referenced in place"
#endif

/* TensorFlow's DataType numbers braid names in code (tf_graph.proto has them all). */
enum {
    TF_DT_FLOAT = 1, TF_DT_DOUBLE = 2, TF_DT_INT32 = 3, TF_DT_UINT8 = 4, TF_DT_INT16 = 5,
    TF_DT_INT8 = 6, TF_DT_STRING = 7, TF_DT_INT64 = 9, TF_DT_BOOL = 10, TF_DT_BFLOAT16 = 14,
    TF_DT_UINT16 = 17, TF_DT_HALF = 19, TF_DT_UINT32 = 22, TF_DT_UINT64 = 23,
};

/* The producer (GraphDef version) a graph gets when its file states none or one below the
 * minimum (the graph's opset holds it: tf_translate.c). */
enum { TF_DEFAULT_PRODUCER = 1205, TF_DEFAULT_PRODUCER_MIN = 13 };

/* A byte range (a span of the model buffer, or pool bytes). Not NUL-terminated. */
typedef bd_pb_span tf_bytes;

/* A tensor with its bytes resolved: row-major, DTYPE a bd_dtype. DATA points into file
 * bytes the graph owns or into the graph's pool. For DT_STRING, DATA is NULL and the
 * elements are in STRINGS (N = numel). */
typedef struct tf_tensor {
    int         tf_dtype;      /* TensorFlow DataType */
    int         dtype;         /* bd_dtype, BD_DT_UNDEFINED when the IR has none */
    bd_shape    shape;
    const void *data;
    size_t      nbytes;
    tf_bytes   *strings;
    size_t      n_strings;
} tf_tensor;

/* An AttrValue's list(...) members (only one is normally set). */
typedef struct tf_list {
    tf_bytes  *s;       size_t n_s;
    int64_t   *i;       size_t n_i;
    float     *f;       size_t n_f;
    bool      *b;       size_t n_b;
    int       *type;    size_t n_type;    /* TensorFlow DataType */
    bd_shape  *shape;   size_t n_shape;
    tf_tensor *tensor;  size_t n_tensor;
} tf_list;

typedef enum tf_attr_kind {
    TF_ATTR_NONE = 0, TF_ATTR_S, TF_ATTR_I, TF_ATTR_F, TF_ATTR_B, TF_ATTR_TYPE,
    TF_ATTR_SHAPE, TF_ATTR_TENSOR, TF_ATTR_LIST, TF_ATTR_OTHER,   /* func, placeholder */
} tf_attr_kind;

typedef struct tf_attr {
    const char  *key;
    tf_attr_kind kind;
    tf_bytes     s;
    int64_t      i;
    float        f;
    bool         b;
    int          type;
    bd_shape     shape;     /* rank -1: unknown rank */
    tf_tensor    tensor;
    tf_list      list;
} tf_attr;

/* One TensorFlow node, whichever file it came from. */
typedef struct tf_nodeview {
    const char  *name;
    const char  *op;
    const char **inputs;     /* data inputs in order: "x", "x:1" */
    size_t       n_inputs;
    const char **ctrl;       /* control inputs, without the '^' */
    size_t       n_ctrl;
    tf_attr     *attrs;
    size_t       n_attrs;
    const void  *origin;     /* the NodeDef's bytes in the file (GraphDef); NULL: tf_translate
                              * encodes one from the view when TensorFlow must run the node */
    size_t       origin_len;
} tf_nodeview;

/* The model's declared signature (TF.js), as TensorFlow tensor names ("x:0" or "x"). */
typedef struct tf_signature {
    const char **inputs;  size_t n_inputs;
    const char **outputs; size_t n_outputs;
} tf_signature;

/* ---- tf_types.c: DataType, shapes, half floats ---------------------------------------- */

/* bd_dtype of a TensorFlow DataType, BD_DT_UNDEFINED when the IR has no equivalent. */
int         tf_dtype_to_bd(int tf_dtype);
/* "DT_FLOAT" for 1, ...; NULL when unknown. */
const char *tf_dtype_name(int tf_dtype);
/* The DataType named NAME ("DT_FLOAT"), or -1. */
int         tf_dtype_from_name(const char *name);
float       tf_half_to_float(uint16_t h);
float       tf_bfloat16_to_float(uint16_t h);
/* Element count and byte size of shape S for element size ESIZE; BD_EMODEL naming WHAT
 * for a negative dim or an overflow. */
int         tf_shape_size(const char *what, const bd_shape *s, size_t esize, int64_t *numel,
                          size_t *nbytes, bd_error *err);

/* A tensor of NUMEL elements whose file gives only GIVEN values (TensorFlow repeats the
 * last, or fills zeros): charge its expansion (ESIZE bytes per element, plus LAST_LEN bytes
 * per repeated string; strings: ESIZE = sizeof(tf_bytes)) to G's budget of
 * BD_MAX_EXPANDED_BYTES for the whole model (model_file.h); BD_EMODEL naming WHAT when it
 * does not fit. 0 when GIVEN >= NUMEL. */
int         tf_check_expand(bd_graph *g, const char *what, uint64_t numel, uint64_t given,
                            size_t esize, size_t last_len, bd_error *err);

/* P holds GIVEN (>= 1) elements of ESIZE bytes and room for NUMEL: repeat the last one into
 * the rest (TensorFlow's fill), by doubling copies. Nothing when GIVEN is 0 or >= NUMEL. */
void        tf_fill_repeat(void *p, size_t given, size_t numel, size_t esize);

/* ---- tf_decode.c: nanopb glue for the GraphDef -------------------------------------- */

/* Spans recorded by a callback field (pb_span.h: bd_pb_spans_init/bd_pb_on_span/
 * bd_pb_spans_free; messages are decoded with bd_pb_decode). */
typedef bd_pb_spans tf_spans;

/* Numbers of a repeated scalar field, decoded as 64-bit words (fixed32 floats keep their
 * bit pattern in the low half). */
typedef struct tf_nums {
    uint64_t *v;
    size_t    n, cap;
} tf_nums;

void tf_nums_free(tf_nums *v);
void tf_on_varint(pb_callback_t *cb, tf_nums *v);      /* int32/int64/uint/bool/enum */
void tf_on_fixed32(pb_callback_t *cb, tf_nums *v);     /* float */
void tf_on_fixed64(pb_callback_t *cb, tf_nums *v);     /* double */

/* ---- tf_attr.c: AttrValue / TensorProto / TensorShapeProto (protobuf) -> views -------- */

/* Decode the AttrValue in SP into A (payloads in G's pool or the buffer LO..LO+LEN). */
int tf_attr_decode(bd_graph *g, const uint8_t *lo, size_t len, const tf_bytes *sp, tf_attr *a,
                   const char *what, bd_error *err);
int tf_shape_decode(const uint8_t *lo, size_t len, const tf_bytes *sp, bd_shape *s,
                    const char *what, bd_error *err);
int tf_tensor_decode(bd_graph *g, const uint8_t *lo, size_t len, const tf_bytes *sp,
                     tf_tensor *t, const char *what, bd_error *err);
/* V's attribute KEY, or NULL; a repeated key: the last one wins. */
const tf_attr *tf_view_attr(const tf_nodeview *v, const char *key);

/* ---- tf_graphdef.c: NodeDef -> view ------------------------------------------------------ */

/* Decode the NodeDef in SP (node #I, for messages; its bytes lie in BASE..BASE+LEN) into V,
 * names and inputs copied into G's pool, V->origin = SP's bytes. */
int tf_nodedef_decode(bd_graph *g, const uint8_t *base, size_t len, size_t i, const tf_bytes *sp,
                      tf_nodeview *v, bd_error *err);

/* ---- tf_encode.c: views -> NodeDef bytes (TF.js origins) ----------------------------- */

/* Encode V as a NodeDef (control inputs as "^x") into G's pool; *OUT is valid while G lives.
 * BD_EUNSUPPORTED over 65535 inputs, BD_ENOMEM. */
int tf_encode_view(bd_graph *g, const tf_nodeview *v, const void **out, size_t *out_len,
                   bd_error *err);

#endif
