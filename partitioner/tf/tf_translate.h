/* TensorFlow node views -> braid IR (tf_translate.c), shared by the GraphDef and TF.js
 * frontends. Internal to the TensorFlow frontends. */
#ifndef BD_PARTITIONER_TF_TF_TRANSLATE_H
#define BD_PARTITIONER_TF_TF_TRANSLATE_H

#include "partitioner/tf/tf_internal.h"

/* Translate N views into G (framework "tensorflow"): Const -> initializers, Placeholders ->
 * inputs, Identity/NoOp/StopGradient folded, mapped ops -> ONNX-semantic nodes, anything
 * else -> "tf"-domain nodes carrying their origin. SIG (may be NULL) names inputs and
 * outputs; without one, outputs are the nodes no other node consumes. Validates G. */
int tf_translate(bd_graph *g, const tf_nodeview *nodes, size_t n, const tf_signature *sig,
                 bd_error *err);

#endif
