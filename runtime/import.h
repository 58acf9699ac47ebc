/* One entry point for every model format braid reads. */
#ifndef BD_RUNTIME_IMPORT_H
#define BD_RUNTIME_IMPORT_H

#include "core/error.h"
#include "core/ir/graph.h"

/* Import the model at PATH, choosing the frontend by its name: "*.onnx" → ONNX;
 * "*.pb" / "*.graphdef" → TensorFlow frozen GraphDef; "model.json" / "*.json" → TF.js
 * graph model (weights from the shards beside it); a directory, or a file named
 * "saved_model.pb", → TensorFlow SavedModel (its variables read through the TensorFlow
 * engine, which needs TensorFlow installed). Anything else is tried as ONNX. The graph is
 * validated. On failure returns a negative code, fills ERR (naming PATH). */
int bd_import_file(const char *path, bd_graph **out, bd_error *err);

/* The same; a SavedModel's inputs and outputs are those of its SignatureDef SIGNATURE (NULL:
 * "serving_default"), named after the signature's keys. SIGNATURE is ignored for the other
 * formats. A SavedModel braid or TensorFlow refuses is BD_EINVAL (the other formats' malformed
 * files are BD_EMODEL). */
int bd_import_model(const char *path, const char *signature, bd_graph **out, bd_error *err);

/* The Triton platform string for G's format: "onnx", "tensorflow_graphdef",
 * "tensorflow_savedmodel", "tensorflow_tfjs". */
const char *bd_import_platform(const bd_graph *g);

#endif
