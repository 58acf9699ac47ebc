/* Composite passes (MergeComposite): graph rewrites run once per plan, on its specialised
 * graph, before annotation. Each pass keeps the graph valid and topologically sorted, and
 * returns the number of rewrites it made (>= 0) or a negative BD_E* code with ERR filled.
 *
 * Placement rules every pass follows: a node pinned off the fast path (bd_place_pin in
 * partition.h) is never absorbed into a composite, and a composite that only the fast path
 * can express (braid-domain Gelu, post-ops, LayerNormalization below opset 17, the q/k/v
 * merge) is only created when the target accepts it (bd_fuse_target). */
#ifndef BD_PARTITIONER_PASSES_PASSES_H
#define BD_PARTITIONER_PASSES_PASSES_H

#include "core/backend.h"
#include "core/ir/graph.h"

/* What composites are made for: the backend that will run them (it must accept each fused
 * node; NULL = no check, for tests of the matching alone) and the op types the user forced
 * off it (a composite of such a type is never created). */
typedef struct bd_fuse_target {
    const bd_backend *backend;
    const char       *forced_ops;     /* comma-separated, as bd_placement_opts.fallback_ops */
} bd_fuse_target;

/* Would TARGET run PROBE (a fused node being considered, not yet in the graph)? True when
 * TARGET is NULL. */
bool bd_fuse_accepts(const bd_fuse_target *target, const bd_graph *g, const bd_node *probe);

/* An activation's QuantizeLinear -> DequantizeLinear pair (the QDQ format's every edge), both
 * per tensor with the same scale and zero point, becomes one node FakeQuantize (domain "braid";
 * float scale, int zero_point, int to = UINT8 or INT8) computing the pair's float result on
 * the QuantizeLinear's input. The QuantizeLinear stays while other nodes read its output. */
int bd_pass_qdq(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* QLinearConv and QLinearMatMul (onnxruntime's QOperator format) with per-tensor activation
 * quantization and constant weights become the QDQ form that defines them: DequantizeLinear
 * on each quantized operand, the float Conv (INT32 bias as floats) or MatMul, QuantizeLinear
 * on the result; the qdq pass then joins the pairs between them. */
int bd_pass_qlinear(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* Conv followed by an inference BatchNormalization whose parameters are constants: scale
 * and shift folded into new conv weights and bias (new initializers in G's pool). */
int bd_pass_fold_batchnorm(bd_graph *g, bd_error *err);

/* A Pad by a constant zero of the spatial axes only, read by nothing but a Conv whose padding
 * is explicit or VALID, folds into that Conv's pads (the Pad node goes) when TARGET accepts
 * the result. The Conv loses its TensorFlow origin: that NodeDef no longer describes it. */
int bd_pass_fold_pad(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* The exported GELU chain x * 0.5 * (1 + Erf(x / sqrt(2))) (any operand order), or
 * TensorFlow's (0.5 * x) * (1 - Erf(-x * (1 / sqrt(2)))), becomes one node Gelu (domain
 * "braid"). */
int bd_pass_gelu(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* x * 1, x + 0 and x - 0 with a constant 1 or 0 that leaves x's shape are removed, their
 * readers reading x (not when the result is a graph output). */
int bd_pass_identity_arith(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* SiLU, x * Sigmoid(x) (either operand order), becomes one node Swish (domain "braid"). */
int bd_pass_swish(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* The channel shuffle Reshape (split an axis into [g, C/g]) -> Transpose (swap the two) ->
 * Reshape (back) becomes one node ChannelShuffle (domain "braid"; ints axis, group = g). */
int bd_pass_channel_shuffle(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* A masked fill Where(C, x, c) / Where(C, c, x) with a constant BOOL mask C and a constant
 * fill c of magnitude >= 1e38 becomes Add(x, M), M = c where filled and 0 elsewhere (equal
 * values for |x| < 1e31), which post-op fusion then folds into x's MatMul. */
int bd_pass_where_mask(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* The opset-13 decomposed layer norm — ReduceMean, Sub, Pow(2), ReduceMean, Add(eps), Sqrt,
 * Div, Mul(gamma), Add(beta) over the last axis — and Keras's as TensorFlow freezes it
 * (layernorm.c) become one LayerNormalization node. */
int bd_pass_layernorm(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* Attention's q/k/v projections: two or more MatMuls reading the same tensor X with constant
 * FP32 weights [K, N_i] (each optionally followed by an Add of a constant bias [N_i]) become
 * one MatMul with the weights concatenated to [K, sum N_i] (and one bias Add), followed by a
 * Split along the last axis back into the original output tensors — the batch-matmul merge of
 * the PyTorch/TVM BERT work: one large GEMM instead of three small ones. */
int bd_pass_qkv_merge(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* A Reshape between a Conv / MatMul / Gemm (or the elementwise ops already below it) and an
 * elementwise op is moved below that op when it keeps the last dim and the op's other operands
 * are constants varying along the last dim only or tensors of the Reshape's output shape
 * (TensorFlow's Tensordot, then BiasAdd and an activation): post-op fusion then sees them. */
int bd_pass_sink_reshape(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* onnxruntime's dynamic quantization tail, MatMulInteger -> Cast(to FLOAT) -> Mul(scale) with a
 * scale of one element or one per column, becomes one node MatMulIntegerScaled(a, b, a_zp,
 * b_zp, scale) (domain "braid"): an int8 matmul with an f32 output scaled by SCALE, which
 * post-op fusion then extends with the bias Add (dynquant.c). */
int bd_pass_dynquant(bd_graph *g, const bd_fuse_target *target, bd_error *err);

/* Merge composites into Conv / MatMul / Gemm (and braid's MatMulIntegerScaled) nodes as post-ops when BACKEND accepts the
 * result: bias Add, activations (Relu, LeakyRelu, Clip, Sigmoid, Tanh, Gelu, Swish, HardSwish,
 * HardSigmoid, Abs, Sqrt, Exp, Log, Softplus), scaling by a
 * constant scalar (Mul/Div), residual Add of a same-shaped tensor (SUM), a broadcast Add
 * of a non-constant tensor (BINARY, e.g. an attention mask) and, last of a chain, a
 * FakeQuantize. Only single-use intermediates that are not graph outputs are absorbed. */
int bd_pass_fuse_postops(bd_graph *g, const bd_backend *backend, bd_error *err);

/* ---- the pattern table of each kind of engine (composites.c) ---------------------------- */

typedef struct bd_composite {
    const char *name;                                   /* "gelu", "qkv_merge", ... */
    int (*run)(bd_graph *g, const bd_fuse_target *target, bd_error *err);
} bd_composite;

/* The composite patterns merged for engines of KIND, in the order they run; *N receives the
 * count (0 for the fallback engines: their runtimes fuse on their own). */
const bd_composite *bd_composites_for(bd_engine_kind kind, size_t *n);

/* Run the composite patterns of TARGET's backend's kind in order, then re-validate the graph.
 * Returns 0 or a negative code. */
int bd_passes_run(bd_graph *g, const bd_fuse_target *target, bd_error *err);

#endif
