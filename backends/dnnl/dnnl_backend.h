/* The oneDNN backend: runs f32 subgraphs of conv/matmul/eltwise/binary/pool/norm/shape ops as
 * oneDNN primitives with fused post-ops, blocked layouts inside a subgraph, weights packed
 * once at compile, and a liveness-planned arena per execution context.
 *
 * Thread count: oneDNN uses OpenMP; the caller sets it (omp_set_num_threads) per thread.
 * A kernel may be shared by many contexts running concurrently on different threads. */
#ifndef BD_BACKENDS_DNNL_DNNL_BACKEND_H
#define BD_BACKENDS_DNNL_DNNL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/backend.h"

extern const bd_backend bd_dnnl_backend;

/* Bytes of one execution context's arena for K (after liveness reuse), and what the same
 * tensors would take without reuse (both for tests and statistics). */
void bd_dnnl_kernel_arena(const bd_kernel *k, size_t *arena, size_t *without_reuse);
/* Number of steps (primitives + reorders) K runs per inference. */
int  bd_dnnl_kernel_num_steps(const bd_kernel *k);
/* The implementation oneDNN chose for step I of K ("jit:avx2", "ref:any", ...; "native" for
 * braid's own steps); owned by K. */
const char *bd_dnnl_kernel_step_impl(const bd_kernel *k, int i);
/* Is step I of K on a reference implementation the cliff guard does not accept (a `ref:`
 * name not on its allowlist, backends/dnnl/dnnl_guard.c)? Tests assert it never is. */
bool bd_dnnl_kernel_step_is_cliff(const bd_kernel *k, int i);
/* The op types (comma-separated) this backend runs slower on this CPU than ONNX Runtime does
 * (measured, docs/performance.md): the plan offers them to a framework fallback first. */
const char *bd_dnnl_slower_ops(void);

#endif
