/* The TensorFlow frontends: a frozen GraphDef (.pb) or a TF.js graph model (model.json plus
 * its .bin weight shards) into braid's graph IR (framework "tensorflow").
 *
 * The IR follows these conventions (docs/architecture.md, "TensorFlow import"): mapped ops
 * become ONNX-semantic nodes that keep TensorFlow's layouts (data_format "NHWC", filter_format
 * "HWIO"/"HWCM"), Const nodes become initializers (GraphDef tensor_content and float32 TF.js
 * weights referenced in place, never copied; half/bfloat16 converted to float32, quantized
 * TF.js weights dequantized), Placeholders become inputs, Identity/NoOp/StopGradient are
 * folded away, and every other op becomes a node of domain "tf" whose `origin` holds its
 * NodeDef bytes for the TensorFlow fallback engine.
 *
 * A "tf" node's inputs correspond one to one, in order, to the NodeDef's data inputs
 * (control inputs "^x" are dropped); a NULL input is a loop back edge (Merge <- NextIteration)
 * that the IR leaves out to stay acyclic: keep the NodeDef's own name for it. Output i of a
 * "tf" node is TensorFlow tensor "<node name>:i" whatever the IR value is called.
 *
 * Anything the files control is checked: truncated or malformed protobuf/JSON, a shape
 * larger than the data present, a weight missing from the shards give BD_EMODEL (or
 * BD_EIO/BD_ENOTFOUND for files) with a message naming the node or weight; nothing crashes.
 * Sizes are overflow-checked, strings included; Consts whose few values fill a shape expand
 * to at most BD_MAX_EXPANDED_BYTES for the whole model (model_file.h), and model.json to
 * 16 MiB (docs/security.md, "Model files").
 * Imported graphs have passed bd_graph_validate. */
#ifndef BD_PARTITIONER_TF_TF_IMPORT_H
#define BD_PARTITIONER_TF_TF_IMPORT_H

#include <stddef.h>

#include "core/error.h"
#include "core/backend.h"
#include "core/ir/graph.h"

/* Import the frozen GraphDef at PATH (platform "tensorflow_graphdef"). The file is read
 * whole into private memory the graph owns (later changes on disk cannot reach it). Graph inputs are the Placeholders (file
 * order), outputs the nodes whose outputs no node consumes. On success *OUT owns everything;
 * on failure returns a negative BD_E* code, fills ERR (naming PATH), leaves *OUT untouched. */
int bd_tf_import_file(const char *path, bd_graph **out, bd_error *err);

/* Same from LEN bytes at DATA, which is not copied and must outlive the graph. */
int bd_tf_import_memory(const void *data, size_t len, bd_graph **out, bd_error *err);

/* Import the TF.js graph model whose model.json is at PATH (platform "tensorflow_tfjs"); the
 * weight shards are read from PATH's directory (read into memory the graph owns, confined to
 * that directory with symlinks resolved; float32 weights referenced in place). Outputs come from the model's signature when it has one. Same contract. */
int bd_tfjs_import_file(const char *path, bd_graph **out, bd_error *err);

/* Reads the N variables in VARS of a SavedModel being imported (fills shape, data, nbytes;
 * core/backend.h); on failure returns a negative code with ERR filled and leaves no data
 * allocated. The runtime provides one that asks the TensorFlow engine. */
typedef int (*bd_tf_variable_reader)(void *ctx, bd_saved_variable *vars, size_t n, bd_error *err);

/* Import the SavedModel in directory DIR (TF Serving's format: saved_model.pb + variables/;
 * platform "tensorflow_savedmodel"): its MetaGraphDef tagged "serve" and its SignatureDef
 * SIGNATURE (NULL or "": "serving_default"). The signature's functions are inlined, what
 * its outputs do not need is dropped, and every variable its outputs read is frozen into a
 * constant with the value READ returns (called once, with READ_CTX, only when there are
 * variables; NULL: a SavedModel with variables fails with BD_EUNSUPPORTED). saved_model.pb,
 * variables/ and every file in it must resolve inside DIR (symlinks followed). The graph's
 * inputs and outputs are named after the signature's keys, sorted. Same error contract as
 * above: BD_ENOTFOUND for a missing file or signature (the message lists the signatures). */
int bd_tf_savedmodel_import(const char *dir, const char *signature, bd_tf_variable_reader read,
                            void *read_ctx, bd_graph **out, bd_error *err);

#endif
