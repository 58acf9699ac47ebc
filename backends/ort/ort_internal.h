/* What tests may look at inside the ORT engine (not for the rest of braid). */
#ifndef BD_BACKENDS_ORT_ORT_INTERNAL_H
#define BD_BACKENDS_ORT_ORT_INTERNAL_H

#include <stddef.h>

#include "core/backend.h"

/* The ORT session behind K (shared between kernels of the same subgraph). */
const void *ort_kernel_session(const bd_kernel *k);
/* Number of ORT sessions alive in the process-wide cache. */
size_t      ort_cached_sessions(void);
/* The data pointer ORT sees (GetTensorMutableData) in the value CTX passed as input I /
 * output I in its last run; NULL if none. */
void       *ort_ctx_input_data(const bd_kernel_ctx *ctx, size_t i);
void       *ort_ctx_output_data(const bd_kernel_ctx *ctx, size_t i);

#endif
