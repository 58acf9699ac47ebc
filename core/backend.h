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
#ifndef BD_CORE_BACKEND_H
#define BD_CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include <dlpack/dlpack.h>

#include "core/const_cache.h"
#include "core/error.h"
#include "core/ir/graph.h"

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
    size_t           max_run_bytes; /* the model's max_run_memory_bytes (0: none): an output
                                     * sized at run time larger than this is an error */
    bd_const_cache  *consts;        /* the model's constants laid out by its other kernels, to
                                     * read instead of laying them out again, and to publish
                                     * this kernel's in (core/const_cache.h); NULL: none */
} bd_subgraph;

typedef struct bd_kernel     bd_kernel;       /* defined by each backend */
typedef struct bd_kernel_ctx bd_kernel_ctx;   /* defined by each backend */

/* What an engine is, which decides how the partitioner uses it (docs/partitioning.md). */
typedef enum bd_engine_kind {
    BD_ENGINE_FAST_PATH = 1,  /* fused kernels; takes every node it supports, first */
    BD_ENGINE_NATIVE,         /* braid's own kernels for the glue between fast-path regions */
    BD_ENGINE_FALLBACK,       /* the model's own framework: runs what the others refuse */
} bd_engine_kind;

/* What a compiled kernel does per run, for reports (bd_backend.stats). */
typedef struct bd_kernel_stats {
    size_t steps;            /* primitives or kernels run per inference */
    size_t reorders;         /* of which layout conversions (data moved, nothing computed) */
    size_t reorder_bytes;    /* bytes those write per inference */
    size_t const_bytes;      /* constants the kernel holds in its own layout (weights) */
    size_t ref_steps;        /* of the steps, those on a reference implementation the engine
                              * does not accept on the hot path (oneDNN's `ref:` kernels,
                              * docs/partitioning.md "The cliff guard"); target 0 */
    const char *impls;       /* the implementations its steps run, deduplicated with counts,
                              * most used first ("jit:avx2 x12, native x2"); owned by the
                              * kernel; NULL when the engine does not say */
    double const_ms;         /* compile time spent laying those out (weight reorders, packing);
                              * 0 for an engine that does not say */
    size_t shared_consts;    /* of the constants, those another kernel of the model had laid
                              * out already (bd_subgraph.consts): read, not laid out again */
    size_t shared_const_bytes; /* their bytes (in const_bytes too, but held once) */
    size_t products;         /* of the steps, convolutions and matrix products */
    size_t int8_products;    /* of those, the ones on int8 data (a QDQ model's, where exact:
                              * docs/partitioning.md "Quantized models"); the rest run in FP32 */
} bd_kernel_stats;

/* Process-wide settings for one engine (bd_backend.configure). */
typedef struct bd_engine_config {
    const char *library;      /* the engine's shared library; NULL = its default search */
    int         threads;      /* its own intra-op threads per session; <= 0 = its default */
} bd_engine_config;

/* One variable of a framework's saved model, read by bd_backend.read_variables. */
typedef struct bd_saved_variable {
    const char *node;       /* in: the variable's node in the saved graph (TensorFlow: a
                             * VarHandleOp, or a VariableV2 of a TF1 graph) */
    const char *restored;   /* in, may be NULL: the variable the SavedModel's saver restores
                             * whose initializer copies NODE (Keras 3 objects saved with
                             * tf.saved_model.save leave NODE itself unrestored): read it when
                             * NODE is not initialized after the restore */
    int         dtype;      /* in: its element type, bd_dtype */
    bd_shape    shape;      /* out: its shape */
    void       *data;       /* out: its bytes, row-major (malloc'ed: the caller frees) */
    size_t      nbytes;     /* out */
} bd_saved_variable;

typedef struct bd_backend {
    const char    *name;                                     /* "dnnl", "ort", "tf" */
    bd_engine_kind kind;
    /* Optional (NULL: nothing to configure): apply CFG to sessions created from now on. The
     * runtime calls it once per process, before the first model is opened. */
    int  (*configure)(const bd_engine_config *cfg, bd_error *err);
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
    /* Optional (NULL: the kernel is one opaque step): what K runs per inference. */
    void (*stats)(const bd_kernel *k, bd_kernel_stats *out);
    /* Optional (NULL: the engine reads no saved model of its own): load the framework's saved
     * model in DIR under TAG (TensorFlow: a SavedModel directory, tag "serve") the way the
     * framework does, and read the current value of each of the N variables in VARS. The
     * framework's refusal of the model is BD_EINVAL with its message; a missing library is
     * BD_EUNSUPPORTED saying what to install. On failure no VARS[i].data is left allocated. */
    int  (*read_variables)(const char *dir, const char *tag, bd_saved_variable *vars, size_t n,
                           bd_error *err);
} bd_backend;

#endif
