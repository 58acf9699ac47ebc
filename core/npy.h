/* NumPy .npy files: read into, and write from, plain row-major tensors.
 *
 * Reads format versions 1.0, 2.0 and 3.0, little-endian (or byte-order-free) numeric and
 * bool dtypes ('<f4' '<f8' '<f2' '<i8' '<i4' '<i2' '|i1' '<u8' '<u4' '<u2' '|u1' '|b1'),
 * C order only, rank <= BD_MAX_RANK. Writes version 1.0 (2.0 when the header needs it).
 * The header dict is parsed strictly: anything unexpected is an error naming the file. */
#ifndef BD_CORE_NPY_H
#define BD_CORE_NPY_H

#include <stddef.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "core/ir/dtype.h"

/* An array read from a .npy file. DATA is 64-byte aligned, owned by the array, and holds
 * NBYTES bytes of C-order elements of DTYPE (a bd_dtype). */
typedef struct bd_npy {
    int      dtype;
    bd_shape shape;
    void    *data;
    size_t   nbytes;
} bd_npy;

/* Read PATH into *OUT. On failure returns BD_EIO (cannot open/read, truncated),
 * BD_EINVAL (malformed header), BD_EUNSUPPORTED (Fortran order, big-endian, unknown dtype,
 * rank too high) or BD_ENOMEM, fills ERR, and leaves *OUT zeroed. */
int  bd_npy_read(const char *path, bd_npy *out, bd_error *err);

/* Write T (CPU, row-major: strides NULL or compact) to PATH. BOOL cannot be told apart
 * from UINT8 in DLPack 0.6, so uint8 tensors are written as '|u1'. Returns BD_EINVAL for a
 * tensor it cannot express, BD_EIO on a write failure (the partial file is removed). */
int  bd_npy_write(const char *path, const DLTensor *t, bd_error *err);

/* Write A to PATH, keeping its exact dtype (BOOL as '|b1'). Errors as bd_npy_write. */
int  bd_npy_write_array(const char *path, const bd_npy *a, bd_error *err);

/* Free A's data and zero it. NULL is allowed. */
void bd_npy_free(bd_npy *a);

/* Describe A as a DLTensor that borrows A's data and shape (valid while A lives). */
void bd_npy_as_dltensor(bd_npy *a, DLTensor *t);

/* The .npy descr string for DTYPE ("<f4", "|b1"), or NULL when .npy cannot hold it. */
const char *bd_npy_descr(int dtype);

#endif
