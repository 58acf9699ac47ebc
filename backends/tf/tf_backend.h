/* The TensorFlow fallback engine: runs, through TensorFlow's C API, the nodes of a
 * TensorFlow model that oneDNN cannot (ops braid does not map, control flow, lookup tables,
 * GatherTree, ...).
 *
 *   supports()  a node of a "tensorflow" graph that carries its original NodeDef
 *               (node->origin): every "tf"-domain node, and a mapped (ONNX-semantic) node
 *               whose NodeDef has the same data inputs as the IR node (so an op oneDNN
 *               rejects for its attributes or dtype falls back) — provided libtensorflow.so.2
 *               loads. Otherwise false, with the reason ("TensorFlow fallback not available:
 *               libtensorflow.so.2 not found (set BRAID_LIBTENSORFLOW)").
 *   compile()   serializes ALL the model's fallback nodes (not just this subgraph's) as one
 *               GraphDef (tfb_subgraph_def.h) and takes the model's session from the cache
 *               (tfb_session.h): the GraphDef is imported and the session created once, by the
 *               first fallback subgraph compiled; every other fallback subgraph of the model
 *               (and of its other plans) shares it. The kernel then only holds its feeds and
 *               fetches (TF_Output handles into that graph).
 *   run()       one TF_SessionRun with this subgraph's feeds and fetches. Inputs cross without
 *               a copy (TF_NewTensor over braid's buffer with a no-op deallocator; TensorFlow
 *               copies a buffer that is not 64-byte aligned — braid's arena is). Outputs are
 *               allocated by TensorFlow (the C API has no way to fetch into a caller's
 *               buffer): a static-shaped output is copied into the caller's buffer; a
 *               run-time-shaped one is handed over as TensorFlow's own tensor, kept alive
 *               until the next run on the context (copied only if TensorFlow returned a view
 *               of an input buffer, which braid may reuse).
 *
 * configure() (core/backend.h) takes where to load libtensorflow.so.2 from (NULL =
 * $BRAID_LIBTENSORFLOW, else dlopen("libtensorflow.so.2"), as tfb_runtime.h says) and the
 * intra-op threads of sessions created from then on (<= 0 = TensorFlow's default); it fails
 * with BD_EBUSY when the library is already loaded from another path. */
#ifndef BD_BACKENDS_TF_TF_BACKEND_H
#define BD_BACKENDS_TF_TF_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/backend.h"

extern const bd_backend bd_tf_backend;     /* name "tf" */

/* Whether the TensorFlow fallback can run (loads the library on first call); when not,
 * the reason goes into WHY. */
bool        bd_tf_available(char *why, size_t why_len);
/* TF_Version() of the loaded library, or NULL when it is not loaded. */
const char *bd_tf_version(void);

#endif
