/* The BYOC backend contract: what every execution engine (oneDNN, ONNX Runtime, TensorFlow)
 * implements. The partitioner and the plan executor know backends only through this table.
 *
 * Lifecycle:  supports() during annotation
 *             compile(subgraph) -> kernel        once per plan (shapes are static here)
 *             ctx_create(kernel) -> kernel_ctx   once per execution context (per worker)
 *             run(ctx, in, out)                  per inference; must not allocate
 *             ctx_destroy, release               teardown
 * A kernel is immutable after compile and may be shared by many contexts on many threads
 * at once; a kernel_ctx is used by one thread at a time. */
#ifndef BD_BACKEND_H
#define BD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include <dlpack/dlpack.h>

#include "../partitioner/error.h"
#include "../partitioner/ir/graph.h"

/* A connected piece of a graph handed to one backend. Shape inference ran for the plan's
 * concrete input shapes, so most values have static shapes; a value whose shape depends on
 * data (NonZero, NonMaxSuppression, a TensorFlow op without a shape rule) has a non-static
 * value->shape, and only backends that say so in supports() (the fallback engines) get
 * nodes touching such values. Initializers it reads are not listed as inputs: the backend
 * reads their bytes from value->data at compile. */
typedef struct bd_subgraph {
    const bd_graph  *graph;
    bd_node *const  *nodes;       /* topological order */
    size_t           n_nodes;
    bd_value *const *inputs;      /* boundary tensors fed at run time, in run() order */
    size_t           n_inputs;
    bd_value *const *outputs;     /* boundary tensors produced, in run() order */
    size_t           n_outputs;
} bd_subgraph;

typedef struct bd_kernel     bd_kernel;       /* defined by each backend */
typedef struct bd_kernel_ctx bd_kernel_ctx;   /* defined by each backend */

typedef struct bd_backend {
    const char *name;                                        /* "dnnl", "ort", "tf" */
    /* Can this backend run NODE (with its fused post-ops) as shaped in G? When not, write a
     * short reason ("op GatherTree", "attribute auto_pad=VALID unsupported") into WHY. */
    bool (*supports)(const bd_graph *g, const bd_node *node, char *why, size_t why_len);
    /* Build an immutable kernel for SG (weights reordered/packed once here). */
    int  (*compile)(const bd_subgraph *sg, bd_kernel **out, bd_error *err);
    /* Per-thread state: scratch arena, streams, memory objects. All allocation happens here. */
    int  (*ctx_create)(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err);
    /* Run once. IN/OUT are plain row-major CPU tensors matching SG's inputs/outputs in
     * order and dtypes. An output whose value has a static shape comes with a caller-owned
     * buffer (out[k].data != NULL) that the backend writes in place. An output whose shape
     * is only known at run time comes with out[k].data == NULL and out[k].shape pointing
     * at BD_MAX_RANK writable int64s: the backend sets ndim, the dims and data (memory it
     * owns, valid until the next run on this ctx). Inputs may likewise have run-time
     * shapes: read in[k].ndim/shape, never value->shape, for those. */
    int  (*run)(bd_kernel_ctx *ctx, const DLTensor *in, size_t n_in,
                DLTensor *out, size_t n_out, bd_error *err);
    void (*ctx_destroy)(bd_kernel_ctx *ctx);                 /* NULL is allowed */
    void (*release)(bd_kernel *k);                           /* NULL is allowed */
} bd_backend;

#endif
