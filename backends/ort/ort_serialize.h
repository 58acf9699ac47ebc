/* A subgraph as a standalone ONNX model (ModelProto bytes), written with nanopb's encoder
 * (onnx_enc.options generates it from Debian's onnx.proto).
 *
 * The model holds the subgraph's nodes (op type, domain, attributes, inputs/outputs), the
 * initializers they read, its boundary inputs (element type and rank; dims unknown unless
 * asked for, so one model serves every batch size, except the length of a short 1-D integer
 * input: a list of sizes or axes, which ONNX's shape inference needs) and outputs (element
 * type; ORT infers the shape) as graph inputs and outputs, and opset imports for the domains
 * its nodes use.
 *
 * Large initializers can stay out of the bytes ("external"): the model declares them with
 * data_location EXTERNAL and the caller hands their memory to ONNX Runtime
 * (AddExternalInitializers + AddInitializer, ort_session.c), so weights are never copied.
 * Small ones (shapes, axes, K) are written inline: ORT's graph-load shape inference reads them. */
#ifndef BD_BACKENDS_ORT_ORT_SERIALIZE_H
#define BD_BACKENDS_ORT_ORT_SERIALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"

typedef struct ort_serialize_opts {
    /* Initializers of at least this many bytes (and aligned to their element size) are
     * external; SIZE_MAX writes every initializer into the bytes. */
    size_t external_min_bytes;
    /* Write the boundary tensors' static dims instead of symbolic ones. */
    bool   static_dims;
} ort_serialize_opts;

/* The serialized model. */
typedef struct ort_model {
    uint8_t          *bytes;      /* malloc'd ModelProto */
    size_t            len;
    const bd_value  **external;   /* initializers kept out of BYTES, in the graph's memory */
    size_t            n_external;
    /* Constants written as extra graph inputs after the boundary inputs, which the caller
     * must feed (their bytes, in this order) on every run. Only for a subgraph without
     * boundary inputs: ONNX Runtime folds a graph of constants down to nothing and then
     * refuses the session ("OrtValue indexes should have been populated"). */
    const bd_value  **fed;
    size_t            n_fed;
} ort_model;

/* The name under which an external initializer's location is recorded in the model. */
#define BD_ORT_EXTERNAL_LOCATION "braid-memory"

/* Serialize SG into *OUT (free with ort_model_free). OPTS may be NULL: every initializer
 * of 1 KiB or more external, symbolic dims. GRAPH attributes (If/Loop/Scan bodies) are written
 * back verbatim; a node's implicit inputs (bd_node.n_implicit) are not listed as its inputs
 * but are values of the model (boundary inputs, initializers or other nodes' outputs), which
 * the bodies name. Fails with BD_EUNSUPPORTED on what ONNX cannot express here (string
 * tensors, a list longer than 65535) and BD_ENOMEM. */
int  ort_serialize(const bd_subgraph *sg, const ort_serialize_opts *opts,
                   ort_model *out, bd_error *err);
void ort_model_free(ort_model *m);     /* NULL is allowed */

/* Opset version written for DOMAIN ("" = the graph's default-domain opset, else a fixed
 * version per known domain); 0 for a domain braid cannot serialize. */
int64_t ort_opset_for(const bd_graph *g, const char *domain);

#endif
