/* Graph rewrites run once when a model is opened, before any plan is built.
 * Each pass keeps the graph valid and topologically sorted, and returns the number of
 * rewrites it made (>= 0) or a negative BD_E* code with ERR filled. */
#ifndef BD_PASSES_H
#define BD_PASSES_H

#include "../../backends/backend.h"
#include "../ir/graph.h"

/* Conv followed by an inference BatchNormalization whose parameters are constants: scale
 * and shift folded into new conv weights and bias (new initializers in G's pool). */
int bd_pass_fold_batchnorm(bd_graph *g, bd_error *err);

/* The exported GELU chain x * 0.5 * (1 + Erf(x / sqrt(2))) (any operand order) becomes one
 * node Gelu (domain "braid"). */
int bd_pass_gelu(bd_graph *g, bd_error *err);

/* The opset-13 decomposed layer norm — ReduceMean, Sub, Pow(2), ReduceMean, Add(eps), Sqrt,
 * Div, Mul(gamma), Add(beta) over the last axis — becomes one LayerNormalization node. */
int bd_pass_layernorm(bd_graph *g, bd_error *err);

/* Merge composites into Conv / MatMul / Gemm nodes as post-ops when BACKEND accepts the
 * result: bias Add, activations (Relu, LeakyRelu, Clip, Sigmoid, Tanh, Gelu), scaling by a
 * constant scalar (Mul/Div), residual Add of a same-shaped tensor (SUM) and a broadcast Add
 * of a non-constant tensor (BINARY, e.g. an attention mask). Only single-use intermediates
 * that are not graph outputs are absorbed. */
int bd_pass_fuse_postops(bd_graph *g, const bd_backend *backend, bd_error *err);

/* All of the above, in order, fusing post-ops for BACKEND. Returns 0 or a negative code. */
int bd_passes_run(bd_graph *g, const bd_backend *backend, bd_error *err);

#endif
