/* The ONNX Runtime fallback engine: runs any ONNX node oneDNN does not, through ORT's C API.
 *
 *   supports()  ONNX graphs, domains "", "ai.onnx", "ai.onnx.ml", "com.microsoft"; no braid
 *               composites or fused post-ops; any shape, including run-time shapes; and only
 *               when libonnxruntime.so.1 can be loaded (else the reason names the library).
 *   compile()   serializes the subgraph as a standalone ONNX model (nanopb) and gets an ORT
 *               session for it from a process-wide cache: plans of one model at different
 *               batch sizes share one session, created when the first plan is built and
 *               released with the last (ort_session.h). Weights are not copied: initializers
 *               of 1 KiB or more are read by ORT in place, in braid's (mapped) memory.
 *   run()       inputs are wrapped in place (CreateTensorWithDataAsOrtValue over braid's
 *               buffers); outputs with static shapes are preallocated values over the caller's
 *               buffers that ORT writes into; run-time-shaped outputs are allocated by ORT and
 *               handed back (valid until the next run on the context). The wrappers are cached
 *               per context and only remade when a buffer address or shape changes.
 *
 * configure() (core/backend.h) takes where to load libonnxruntime.so.1 from (NULL = the
 * default search: $BRAID_ORT_LIBRARY, the loader's path, ~/.cache/braid/ort-1.30.0/) and the
 * intra-op threads of sessions created from then on; it fails with BD_EBUSY when ORT was
 * already loaded from another path.
 *
 * Threads: each session gets N intra-op threads (configure(); default 1, because braid's
 * worker pool already runs one request per core), one inter-op thread, sequential execution,
 * no spin-waiting. */
#ifndef BD_BACKENDS_ORT_ORT_BACKEND_H
#define BD_BACKENDS_ORT_ORT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/backend.h"

extern const bd_backend bd_ort_backend;

/* Is ONNX Runtime loadable? Loads it if not yet done. When not, writes the reason into WHY. */
bool bd_ort_available(char *why, size_t why_len);
/* The loaded library's version ("1.30.0"), or NULL when it is not available. */
const char *bd_ort_version(void);

#endif
