/* Building small IR graphs by hand in C tests. Every builder aborts the test process with a
 * message naming the value or node when the IR refuses it: a refused builder call is a bug in
 * the test, not a result to check (tests of the IR's own refusals call core/ir directly). */
#ifndef BD_TESTS_LIB_TL_GRAPH_H
#define BD_TESTS_LIB_TL_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "core/ir/graph.h"

/* Dims as a compound literal and their count: tl_value(g, "x", BD_DT_FLOAT, TL_DIMS(1, 3)). */
#define TL_NDIMS(...) ((int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)))
#define TL_DIMS(...) TL_NDIMS(__VA_ARGS__), ((const int64_t[]){ __VA_ARGS__ })

/* Value NAME of DTYPE and shape RANK/DIMS (a dim may be -1; DIMS may be NULL for rank 0). */
bd_value *tl_value(bd_graph *g, const char *name, int dtype, int rank, const int64_t *dims);
/* The same, marked as a graph input. */
bd_value *tl_input(bd_graph *g, const char *name, int dtype, int rank, const int64_t *dims);
/* Mark V as a graph output. */
void tl_output(bd_graph *g, bd_value *v);
/* An initializer holding a copy of DATA (numel x dtype size bytes, in the graph's pool). */
bd_value *tl_const(bd_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
                   const void *data);
/* Node NAME of OP_TYPE in DOMAIN ("" for ONNX) reading IN, writing OUT. */
bd_node *tl_node(bd_graph *g, const char *name, const char *op_type, const char *domain,
                 bd_value *const *in, size_t n_in, bd_value *const *out, size_t n_out);
/* One ONNX-domain node with one output. */
bd_node *tl_op(bd_graph *g, const char *name, const char *op_type, bd_value *const *in,
               size_t n_in, bd_value *out);

void tl_attr_int(bd_graph *g, bd_node *n, const char *name, int64_t v);
void tl_attr_float(bd_graph *g, bd_node *n, const char *name, float v);
void tl_attr_str(bd_graph *g, bd_node *n, const char *name, const char *s);
void tl_attr_ints(bd_graph *g, bd_node *n, const char *name, size_t count, const int64_t *v);
void tl_attr_floats(bd_graph *g, bd_node *n, const char *name, size_t count, const float *v);
/* A TENSOR attribute (ConstantOfShape's value): a copy of DATA (numel x dtype size bytes) of
 * DTYPE and shape RANK/DIMS, in the graph's pool and outside its value table. */
void tl_attr_tensor(bd_graph *g, bd_node *n, const char *name, int dtype, int rank,
                    const int64_t *dims, const void *data);

#endif
