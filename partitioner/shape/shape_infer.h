/* Shape inference: the dtype and shape of every node output, from the graph inputs'
 * shapes, the initializers and each op's ONNX semantics (opsets 7-17).
 *
 * Small integer tensors computed from shapes (Shape -> Gather -> Concat -> Reshape chains
 * that dynamic-axis exports produce) are constant-folded while inferring: a folded output
 * gets value->data/nbytes (bytes in the graph's pool), its node stays in the graph, and the
 * plan builder treats the value as a constant. View ops (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity) of a constant share the constant's bytes.
 *
 * Inference is repeatable: each run first forgets the data it folded on node outputs, so a
 * clone re-inferred with other input shapes never sees stale constants. */
#ifndef BD_PARTITIONER_SHAPE_SHAPE_INFER_H
#define BD_PARTITIONER_SHAPE_SHAPE_INFER_H

#include <stdbool.h>

#include "core/ir/graph.h"

/* Infer dtype and shape of every node output, in topological order (call after
 * bd_graph_validate, which sorts). An ONNX graph of an opset outside 7-17 keeps the shapes
 * its file declares (no rule runs; with REQUIRE_STATIC it is BD_EUNSUPPORTED). Graph inputs' shapes are taken as given (dims may be -1 =
 * dynamic with a symbol). Dynamic dims propagate as -1, keeping the symbol where a dim is
 * passed through unchanged (e.g. batch). With REQUIRE_STATIC, any output left non-static or
 * any op without a rule is BD_EUNSUPPORTED naming the node and op; without it, unknown ops
 * leave their outputs at rank -1 (dtype as the model declared it) and inference continues.
 * Contradictions (mismatched broadcast dims, conv channel mismatch, reshape element-count
 * mismatch, bad axis, malformed attributes) are BD_EMODEL naming the node. A rank above
 * BD_MAX_RANK is BD_EUNSUPPORTED. On failure the shapes of nodes before the failing one are
 * already updated. */
int  bd_shape_infer(bd_graph *g, bool require_static, bd_error *err);

/* True when braid has a shape rule for OP_TYPE in DOMAIN ("" / "ai.onnx" / "braid"). */
bool bd_shape_has_rule(const char *domain, const char *op_type);

#endif
