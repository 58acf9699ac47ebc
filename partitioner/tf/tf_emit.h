/* What an op mapper works with: the node being mapped, its inputs resolved to IR values, and
 * emitters that add IR named after the node (tf_emit.c). Internal to the TensorFlow
 * frontends. */
#ifndef BD_PARTITIONER_TF_TF_EMIT_H
#define BD_PARTITIONER_TF_TF_EMIT_H

#include "partitioner/tf/tf_internal.h"

/* Inputs of the node being mapped, resolved to IR values; consts known when present. */
typedef struct tf_mapctx {
    bd_graph          *g;
    const tf_nodeview *v;
    bd_value         **in;          /* n_in resolved data inputs */
    size_t             n_in;
    bd_value          *out;         /* the value output 0 must end in (named after the node) */
    bd_value         **outs;        /* n_outs values outputs 0.. must end in (outs[0] == out) */
    size_t             n_outs;      /* 1 unless the op's entry says TF_MAP_MULTI_OUT */
} tf_mapctx;

/* A new IR value named "<node>:<suffix>" (unique). */
bd_value *tf_emit_temp(tf_mapctx *m, const char *suffix, bd_error *err);
/* A new initializer named "<node>:<suffix>" (unique) holding a copy of DATA. */
bd_value *tf_emit_const(tf_mapctx *m, const char *suffix, int dtype, const bd_shape *shape,
                        const void *data, size_t nbytes, bd_error *err);
/* Add an IR node (domain "") named "<node>" when it makes m->out, else after its first output
 * (a unique "<node>:<suffix>" temp); SUFFIX is kept for the callers' readability. */
int tf_emit_node(tf_mapctx *m, const char *suffix, const char *op, bd_value *const *in,
                 size_t n_in, bd_value *out, bd_node **node, bd_error *err);

/* The same with N_OUT outputs. */
int tf_emit_node_n(tf_mapctx *m, const char *suffix, const char *op, bd_value *const *in,
                   size_t n_in, bd_value *const *out, size_t n_out, bd_node **node, bd_error *err);

#endif
