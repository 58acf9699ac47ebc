/* Host tensors for the benchmarks: a named, row-major, 64-byte-aligned buffer with an ONNX
 * element type, filled with the same deterministic random data for every engine under test.
 *
 * The one dtype numbering is ONNX's (TensorProto.DataType), which braid's bd_dtype and ORT's
 * ONNXTensorElementDataType share, so a tensor can be handed to either without a table. */
#ifndef BD_BENCH_BENCH_TENSOR_H
#define BD_BENCH_BENCH_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#define BENCH_MAX_RANK 8

typedef struct bench_tensor {
    char    *name;                    /* owned */
    int      dtype;                   /* ONNX numbering */
    int      rank;
    int64_t  dims[BENCH_MAX_RANK];
    size_t   numel;
    size_t   nbytes;
    void    *data;                    /* owned, 64-byte aligned, NBYTES long */
} bench_tensor;

/* Allocate a zeroed tensor. Dims must be >= 0 (resolve dynamic dims first). Returns 0, or
 * -1 with a message in WHY (WHY_LEN bytes) for an unsupported dtype, a bad shape, or no memory. */
int  bench_tensor_init(bench_tensor *t, const char *name, int dtype, int rank, const int64_t *dims,
                       char *why, size_t why_len);
void bench_tensor_free(bench_tensor *t);                 /* zeroes T; a zeroed T is allowed */

/* Fill T deterministically from SEED: a name containing "mask" gets all ones (attention
 * masks must stay valid); floats get uniform [-1, 1); integers get [0, 100); bools get 1. */
void bench_tensor_fill(bench_tensor *t, uint64_t seed);

/* Largest |a - b| over elements, converting both to double (dtypes and shapes must match:
 * returns -1 otherwise). NaN in either side counts as infinity. */
double bench_tensor_max_abs_diff(const bench_tensor *a, const void *b_data, int b_dtype, size_t b_numel);

/* A DLTensor view of T (CPU, row-major, no strides) that points into T: T must outlive it.
 * Returns -1 for a dtype DLPack 0.6 cannot express. */
int  bench_tensor_as_dl(const bench_tensor *t, DLTensor *out);

/* "FP32[1,3,224,224]" into BUF (dtype names as bd_dtype_name spells them); returns BUF. */
char *bench_tensor_desc(int dtype, int rank, const int64_t *dims, char *buf, size_t len);

#endif
