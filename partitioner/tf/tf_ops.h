/* The TensorFlow ops mapped to ONNX-semantic IR. Internal to the TensorFlow frontends:
 * tf_translate.c asks for a node's mapper and calls it. The mappers live by family:
 * tf_ops.c (convolutions, matrix products, activations, pooling, layout ops), tf_ops_math.c
 * (element-wise math, comparisons, reductions, casts), tf_ops_array.c (shapes, slices,
 * gathers, packing, splitting, filling), tf_ops_deconv.c (Conv2DBackpropInput). */
#ifndef BD_PARTITIONER_TF_TF_OPS_H
#define BD_PARTITIONER_TF_TF_OPS_H

#include "partitioner/tf/tf_emit.h"

/* A mapper emits IR nodes ending in M->out (and M->outs[1..] for TF_MAP_MULTI_OUT ops) and
 * returns 0, returns 1 when this node cannot be mapped (it then goes to the TensorFlow
 * fallback; nothing was emitted), or a negative code. */
typedef int (*tf_mapper)(tf_mapctx *m, bd_error *err);

enum {
    TF_MAP_ANY_T     = 1,   /* attr T may be an integer or bool type, not only DT_FLOAT */
    TF_MAP_MULTI_OUT = 2,   /* every output the graph reads is in m->outs */
};

typedef struct tf_op_entry {
    const char *op;
    tf_mapper   fn;
    unsigned    flags;
} tf_op_entry;

/* The mapper for OP (its TF_MAP_* flags in *FLAGS, may be NULL), NULL when OP always goes to
 * the fallback. */
tf_mapper tf_op_mapper(const char *op, unsigned *flags);

/* Per-family tables, each ended by a { NULL } entry. */
extern const tf_op_entry tf_math_ops[];
extern const tf_op_entry tf_array_ops[];
extern const tf_op_entry tf_deconv_ops[];

#endif
