/* Control flow in braid: the engine that runs ONNX If, Loop and Scan by executing their bodies
 * as braid plans (docs/partitioning.md, "Control flow").
 *
 * It lives in runtime/ because it plans: a body runs as a plan of its own (plan_build) for the
 * shapes its inputs have at run time, or, when shapes inside it follow its data (an
 * EmbeddingBag's bag), node by node, each node a small plan for the shapes it meets, so it
 * still runs on oneDNN and the native engine; plans are cached per body and per node, and an
 * iteration with shapes seen before allocates nothing. The table
 * entry is registered in runtime/engines.c like every engine; its kind is BD_ENGINE_NATIVE
 * (no framework session, so crossing to it is free), and the engine option "native" allows
 * it with braid's other native kernels.
 *
 * Bounds: a Loop runs at most BD_CONTROL_MAX_ITERATIONS iterations (then BD_EINVAL naming the
 * node: a cond that never turns false with no M cannot hang a worker), and the outputs it
 * accumulates (scan outputs) at most the model's max_run_memory_bytes, or
 * BD_CONTROL_MAX_BYTES without one. Every body's output count is checked at compile. */
#ifndef BD_RUNTIME_CONTROL_H
#define BD_RUNTIME_CONTROL_H

#include "runtime/engines.h"

#define BD_CONTROL_MAX_ITERATIONS ((int64_t)1 << 20)
#define BD_CONTROL_MAX_BYTES      ((size_t)1 << 30)

/* The engine itself, bd_control_backend, is declared in runtime/engines.h (the registry). */

#endif
