/* Element types and shapes of the IR. Codes follow ONNX's TensorProto.DataType numbering so
 * the importer maps them without a table; other frontends translate into it. */
#ifndef BD_CORE_IR_DTYPE_H
#define BD_CORE_IR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

typedef enum bd_dtype {
    BD_DT_UNDEFINED = 0,
    BD_DT_FLOAT     = 1,
    BD_DT_UINT8     = 2,
    BD_DT_INT8      = 3,
    BD_DT_UINT16    = 4,
    BD_DT_INT16     = 5,
    BD_DT_INT32     = 6,
    BD_DT_INT64     = 7,
    BD_DT_STRING    = 8,
    BD_DT_BOOL      = 9,
    BD_DT_FLOAT16   = 10,
    BD_DT_DOUBLE    = 11,
    BD_DT_UINT32    = 12,
    BD_DT_UINT64    = 13,
    BD_DT_BFLOAT16  = 16,
} bd_dtype;

/* Bytes per element; 0 for UNDEFINED, STRING and unknown codes. */
size_t      bd_dtype_size(int dtype);
/* Upper-case name as the inference protocol spells it ("FP32", "INT64", "BOOL"); "?" if unknown. */
const char *bd_dtype_name(int dtype);
/* Parse a protocol name back; returns BD_DT_UNDEFINED when NAME is not one. */
int         bd_dtype_from_name(const char *name);
/* DLPack equivalent of DTYPE. Returns false for types DLPack 0.6 cannot express (STRING);
 * BOOL travels as uint8 (DLPack 0.6 has no kDLBool). */
bool        bd_dtype_to_dl(int dtype, DLDataType *out);
/* IR dtype of a DLPack type, BD_DT_UNDEFINED if none. */
int         bd_dtype_from_dl(DLDataType t);
/* Bytes of one element of a DLPack type: bits x lanes, rounded up to whole bytes. */
size_t      bd_dl_elem_bytes(DLDataType t);
/* Bytes of T's elements, row-major: bd_dl_elem_bytes x every dim (for shapes checked or
 * planned already: no overflow check). */
size_t      bd_dl_tensor_bytes(const DLTensor *t);

#define BD_MAX_RANK 8

/* A tensor shape. rank < 0 means "rank unknown". A dim < 0 is dynamic; when dynamic, sym[i]
 * may name it (e.g. "batch"; the string is owned by the graph that holds the shape). */
typedef struct bd_shape {
    int         rank;
    int64_t     dims[BD_MAX_RANK];
    const char *sym[BD_MAX_RANK];
} bd_shape;

/* Number of elements; -1 if the rank or any dim is unknown, or the product overflows int64.
 * A rank-0 shape has 1 element. */
int64_t bd_shape_numel(const bd_shape *s);
/* True when the rank and every dim are known. */
bool    bd_shape_is_static(const bd_shape *s);
/* True when both shapes are static and identical. */
bool    bd_shape_equal(const bd_shape *a, const bd_shape *b);
/* Render as "[1,3,224,224]" (dynamic dims as their symbol or "?") into BUF; returns BUF. */
char   *bd_shape_str(const bd_shape *s, char *buf, size_t size);
/* Build a static shape from RANK dims. */
bd_shape bd_shape_make(int rank, const int64_t *dims);

#endif
