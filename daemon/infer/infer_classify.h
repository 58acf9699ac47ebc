/* Triton's classification extension: a requested output with the parameter
 * "classification" = K is answered not with the tensor but with its K highest classes, as a
 * BYTES tensor of strings "VALUE:INDEX" or "VALUE:INDEX:LABEL" (VALUE printed as C's "%f" for
 * floating point, as an integer otherwise, the way Triton prints them), highest first, ties in
 * index order. With BATCHED (the model's max_batch_size > 0) each entry of the first dim is
 * classified on its own and the result has shape [batch, K']; otherwise the whole tensor is
 * one list and the result has shape [K'] (K' = min(K, classes)).
 *
 * The result's wire size is computed before anything is written: over LIMIT bytes it is
 * BD_EINVAL (the request asks for more than a response may carry). Outputs whose dtype is not
 * a real number (BOOL, BYTES, FP16, BF16) are BD_EINVAL as in Triton. */
#ifndef BD_DAEMON_INFER_INFER_CLASSIFY_H
#define BD_DAEMON_INFER_INFER_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "daemon/infer/labels.h"

typedef struct bd_classified {
    uint8_t *data;        /* raw BYTES contents: per string a 4-byte little-endian length */
    size_t   bytes;
    int      ndim;        /* 1 or 2 */
    int64_t  shape[2];
} bd_classified;

/* Classify T (NAME for errors) into *OUT; LABELS may be NULL. Free OUT->data with free(). */
int bd_classify(const DLTensor *t, const char *name, bool batched, uint64_t k,
                const bd_labels *labels, size_t limit, bd_classified *out, bd_error *err);

#endif
