/* A small TensorFlow-framework IR graph for the engine tests, built by hand the way the TF
 * frontends build one (tf-domain nodes carrying their NodeDef bytes in node->origin):
 *
 *   x [2,3] f32 (input) ──▶ neg = Neg(x)                         tf    backend 1
 *   c [3]  f32 {10,20,30} ─▶ add = AddV2(neg, c) (+ "^neg", "^elsewhere") tf backend 1
 *                           mid = Relu(add)                      onnx  backend 0 (the test
 *                                                                      computes it itself)
 *                           idn:0 = Identity(mid)                tf    backend 1, shape unknown
 *
 * neg's NodeDef carries device "/device:GPU:0" and a `_class` colocation attr, both of which
 * the fallback GraphDef must drop. Two fallback steps: {neg, add} and {idn}. */
#ifndef BD_TESTS_BACKENDS_TF_TF_FIXTURE_H
#define BD_TESTS_BACKENDS_TF_TF_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ir/graph.h"

typedef struct fx_graph {
    bd_graph *g;
    bd_value *x, *c, *neg, *add, *mid, *idn;
    bd_node  *n_neg, *n_add, *n_mid, *n_idn;
} fx_graph;

/* Build the graph above (NULL-free: the test fails on any error). */
void fx_build(fx_graph *fx);

/* Encode a NodeDef (name, op, inputs, attr T = DT_FLOAT; DEVICE and a `_class` attr when
 * asked) into G's pool and make it N's origin. */
void fx_set_origin(bd_graph *g, bd_node *n, const char *name, const char *op,
                   const char *const *inputs, size_t n_inputs, const char *device, bool with_class);

/* C = -X + {10,20,30} per row, then Relu: what the fixture computes for X [2,3]. */
void fx_expected(const float *x, float *add, float *mid);

#endif
