/* The TensorFlow ops mapped to ONNX-semantic IR (tf_ops.c). Internal to the TensorFlow
 * frontends: tf_translate.c asks for a node's mapper and calls it. */
#ifndef BD_PARTITIONER_TF_TF_OPS_H
#define BD_PARTITIONER_TF_TF_OPS_H

#include "partitioner/tf/tf_emit.h"

/* A mapper emits IR nodes ending in M->out and returns 0, returns 1 when this node cannot be
 * mapped (it then goes to the TensorFlow fallback; nothing was emitted), or a negative code. */
typedef int (*tf_mapper)(tf_mapctx *m, bd_error *err);

/* The mapper for OP, NULL when OP always goes to the fallback. */
tf_mapper tf_op_mapper(const char *op);

#endif
