/* braid's native engine: C kernels on plain row-major tensors of any numeric dtype for the
 * ops oneDNN has no primitive for (gathers, slices, masks, casts, shape arithmetic, the
 * element-wise and reduction ops oneDNN 2.6 lacks). It sits after the fast path and before
 * the framework fallbacks in placement order (runtime/engines.c), so the glue between
 * oneDNN regions stays in process instead of crossing into ONNX Runtime or TensorFlow.
 * docs/partitioning.md lists its ops; native_internal.h is its contract with its kernels. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_BACKEND_H
#define BD_BACKENDS_NATIVE_NATIVE_BACKEND_H

#include "core/backend.h"

extern const bd_backend bd_native_backend;

#endif
