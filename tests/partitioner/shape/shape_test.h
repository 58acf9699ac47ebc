/* Small builders for shape-inference tests: graphs of a few nodes, terse shapes, and
 * assertions on inferred shapes and error messages. Every helper fails the test (cmocka)
 * rather than returning an error. */
#ifndef BD_TESTS_PARTITIONER_SHAPE_SHAPE_TEST_H
#define BD_TESTS_PARTITIONER_SHAPE_SHAPE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "core/ir/graph.h"
#include "partitioner/shape/shape_infer.h"

/* A static shape from dims: S(1, 3, 224, 224). Use -1 for a dynamic dim. */
#define S(...) tshape((int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                      (int64_t[]){ __VA_ARGS__ })
bd_shape tshape(int rank, const int64_t *dims);
bd_shape tscalar(void);

/* A fresh graph (opset 13 unless changed with bd_graph_set_opset). */
bd_graph *tgraph(void);
/* Graph input NAME of DTYPE and SHAPE; SYM0 (may be NULL) names dim 0 when it is -1. */
bd_value *tinput(bd_graph *g, const char *name, int dtype, bd_shape shape, const char *sym0);
/* INT64 initializers: 1-D of COUNT values, or a scalar. */
bd_value *tints(bd_graph *g, const char *name, size_t count, const int64_t *vals);
bd_value *tint_scalar(bd_graph *g, const char *name, int64_t v);
#define TINTS(g, name, ...) tints(g, name, sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), \
                                  (int64_t[]){ __VA_ARGS__ })
/* A zero-filled FLOAT initializer of SHAPE. */
bd_value *tweight(bd_graph *g, const char *name, bd_shape shape);
/* Node OP (domain "") reading N_IN inputs, producing N_OUT fresh outputs named
 * "<node>:<k>". */
bd_node *tnode(bd_graph *g, const char *op, bd_value *const *in, size_t n_in, size_t n_out);
bd_node *tnode_d(bd_graph *g, const char *domain, const char *op, bd_value *const *in,
                 size_t n_in, size_t n_out);
#define TNODE(g, op, n_out, ...) tnode(g, op, (bd_value *[]){ __VA_ARGS__ }, \
                                       sizeof((bd_value *[]){ __VA_ARGS__ }) / sizeof(bd_value *), n_out)
/* Output K of N. */
bd_value *tout(const bd_node *n, size_t k);

void tattr_int(bd_graph *g, bd_node *n, const char *name, int64_t v);
void tattr_float(bd_graph *g, bd_node *n, const char *name, float v);
void tattr_str(bd_graph *g, bd_node *n, const char *name, const char *s);
void tattr_ints(bd_graph *g, bd_node *n, const char *name, size_t count, const int64_t *vals);
void tattr_floats(bd_graph *g, bd_node *n, const char *name, size_t count, const float *vals);
#define TATTR_INTS(g, n, name, ...) tattr_ints(g, n, name, \
        sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), (int64_t[]){ __VA_ARGS__ })
#define TATTR_FLOATS(g, n, name, ...) tattr_floats(g, n, name, \
        sizeof((float[]){ __VA_ARGS__ }) / sizeof(float), (float[]){ __VA_ARGS__ })

/* Validate and infer; assert success. */
void tinfer(bd_graph *g, bool require_static);
/* Validate and infer; assert failure with CODE and a message containing each of the
 * NULL-terminated substrings. */
void tinfer_fails(bd_graph *g, bool require_static, int code, ...);
/* Assert V's shape equals WANT (dims and rank; a dynamic dim compares as -1). */
void tassert_shape(const bd_value *v, bd_shape want);
/* Assert V is an INT64 constant with exactly these values. */
void tassert_ints(const bd_value *v, size_t count, const int64_t *vals);
#define TASSERT_INTS(v, ...) tassert_ints(v, sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), \
                                          (int64_t[]){ __VA_ARGS__ })

#endif
