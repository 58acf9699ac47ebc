/* Small queries the pattern passes share. */
#ifndef BD_PARTITIONER_PASSES_MATCH_H
#define BD_PARTITIONER_PASSES_MATCH_H

#include <stdbool.h>

#include "core/ir/graph.h"

/* The only node reading V, or NULL when V has no reader, several, or is a graph output. */
bd_node *bd_sole_consumer(const bd_graph *g, const bd_value *v);
/* The distinct nodes reading V into OUT (a node reading it twice counts once) and their number
 * into *N; false when V is a graph output or more than MAX nodes read it. */
bool     bd_consumers(const bd_graph *g, const bd_value *v, bd_node **out, size_t max, size_t *n);
/* True when V is a constant holding exactly one float (any shape of one element); *OUT gets it. */
bool     bd_const_scalar(const bd_value *v, float *out);
/* True when N is an ai.onnx (default domain) node of type OP. */
bool     bd_is_op(const bd_node *n, const char *op);
/* False when N is pinned off the fast path (bd_place_pin): composites never absorb it. */
bool     bd_fusable(const bd_node *n);
/* The input of binary node N that is not X (NULL if N does not read X). */
bd_value *bd_other_input(const bd_node *n, const bd_value *x);
/* A new value of G named BASE+SUFFIX (numbered when taken). NULL with ERR set on failure. */
bd_value *bd_pass_new_value(bd_graph *g, const char *base, const char *suffix, int dtype,
                            const bd_shape *shape, bd_error *err);
/* The same, made a constant: *DATA receives its zeroed buffer (G's pool, ELEM bytes each). */
bd_value *bd_pass_new_const(bd_graph *g, const char *base, const char *suffix, int dtype,
                            const bd_shape *shape, size_t elem, void **data, bd_error *err);

#endif
