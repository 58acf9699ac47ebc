/* What TensorFlow saw in a fallback step's last run: the observables the zero-copy tests
 * check against the real library (tests/backends/tf/test_tf_live.c). Internal to backends/tf
 * and its tests; the engine's public face is tf_backend.h. */
#ifndef BD_BACKENDS_TF_TFB_PROBE_H
#define BD_BACKENDS_TF_TFB_PROBE_H

#include <stddef.h>

#include "core/backend.h"

/* TF_TensorData of input I's TF_Tensor as TF_NewTensor built it in the last run: braid's own
 * buffer when TensorFlow did not copy it. NULL before a run or when I is out of range. */
const void *tfb_ctx_fed_data(const bd_kernel_ctx *ctx, size_t i);
/* TF_TensorData of output I as TF_SessionRun returned it in the last run, before braid copied
 * or adopted it (NULL for an empty tensor, before a run, or when I is out of range). */
const void *tfb_ctx_fetched_data(const bd_kernel_ctx *ctx, size_t i);

#endif
