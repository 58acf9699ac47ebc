/* braid's graph IR: values, nodes, attributes, initializers.
 *
 * One IR for every frontend (ONNX today, TensorFlow next). A graph owns everything it
 * points to: names, attribute payloads and node arrays live in its own allocation pool, and
 * initializer data points either into the model file's bytes (read once into private
 * memory the graph owns: no further copy of weights at import, and nothing on disk can
 * change them afterwards) or into the pool (small constants, folded values). Free it all with bd_graph_destroy.
 *
 * A graph is built single-threaded (import, passes); once compiled into a plan it is only
 * read, so any number of threads may read it. */
#ifndef BD_CORE_IR_GRAPH_H
#define BD_CORE_IR_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/ir/dtype.h"

typedef struct bd_graph bd_graph;
typedef struct bd_node  bd_node;

/* A tensor flowing through the graph: a graph input, an initializer, or a node output. */
typedef struct bd_value {
    const char *name;
    int         dtype;        /* bd_dtype */
    bd_shape    shape;        /* from the model, then refined by shape inference */
    bd_node    *producer;     /* NULL for graph inputs and initializers */
    const void *data;         /* initializer/constant bytes (row-major), else NULL */
    size_t      nbytes;       /* size of DATA */
    bool        is_input;     /* a graph input the caller feeds */
    bool        is_output;    /* a graph output the caller reads */
    int         index;        /* position in the graph's value table */
} bd_value;

typedef enum bd_attr_type {
    BD_ATTR_FLOAT = 1, BD_ATTR_INT = 2, BD_ATTR_STRING = 3, BD_ATTR_TENSOR = 4,
    BD_ATTR_GRAPH = 5, BD_ATTR_FLOATS = 6, BD_ATTR_INTS = 7, BD_ATTR_STRINGS = 8,
} bd_attr_type;   /* ONNX AttributeProto.AttributeType numbering */

typedef struct bd_attr {
    const char   *name;
    bd_attr_type  type;
    float         f;
    int64_t       i;
    const char   *s;          /* STRING (NUL-terminated; s_len for embedded NULs) */
    size_t        s_len;
    const float  *floats;     /* FLOATS */
    const int64_t *ints;      /* INTS */
    const char  **strings;    /* STRINGS */
    size_t        n;          /* element count of FLOATS/INTS/STRINGS */
    bd_value     *tensor;     /* TENSOR: a constant value owned by the graph (not in its value table) */
    const void   *graph;      /* GRAPH: the subgraph's serialized bytes (an ONNX GraphProto in the
                               * model file's bytes), opaque to braid, written back verbatim */
    size_t        graph_len;
} bd_attr;

/* Operations fused into a node as oneDNN-style post-ops, applied in order to its output. */
typedef enum bd_postop_kind {
    BD_POST_ELTWISE = 1,      /* y = f(y; alpha, beta)                                 */
    BD_POST_SUM     = 2,      /* y = y + scale * x, X the node input at `input` (same shape) */
    BD_POST_BINARY  = 3,      /* y = y (op) x, X the node input at `input` (broadcastable) */
} bd_postop_kind;

typedef enum bd_eltwise_alg {
    BD_ELT_RELU = 1,          /* alpha = negative slope (0 for Relu, LeakyRelu's alpha) */
    BD_ELT_CLIP,              /* alpha = min, beta = max */
    BD_ELT_SIGMOID,
    BD_ELT_TANH,
    BD_ELT_GELU_ERF,
    BD_ELT_GELU_TANH,
    BD_ELT_ERF,               /* not a oneDNN eltwise; only as a standalone node */
    BD_ELT_LINEAR,            /* y = alpha * y + beta */
    BD_ELT_ELU,               /* alpha = the ELU's alpha */
    BD_ELT_SWISH,             /* y * sigmoid(alpha * y): SiLU with alpha = 1 */
    BD_ELT_HARDSWISH,         /* y * clip(y / 6 + 1/2, 0, 1) */
    BD_ELT_HARDSIGMOID,       /* clip(alpha * y + beta, 0, 1) */
    BD_ELT_ABS,
    BD_ELT_SQRT,
    BD_ELT_EXP,
    BD_ELT_LOG,
    BD_ELT_SOFTPLUS,          /* log(1 + exp(y)) */
    BD_ELT_POW,               /* alpha * y ^ beta */
    BD_ELT_FAKEQUANT_U8,      /* (saturate(round(y / alpha) + beta) - beta) * alpha to UINT8's */
    BD_ELT_FAKEQUANT_S8,      /* ... and INT8's range: a QDQ pair (alpha = scale, beta = zero
                               * point); never a oneDNN post-op, always a chain's last */
} bd_eltwise_alg;

typedef enum bd_binary_alg { BD_BIN_ADD = 1, BD_BIN_SUB, BD_BIN_MUL, BD_BIN_DIV } bd_binary_alg;

typedef struct bd_postop {
    bd_postop_kind kind;
    int            alg;       /* bd_eltwise_alg or bd_binary_alg */
    float          alpha, beta, scale;
    int            input;     /* SUM/BINARY: index into the node's inputs */
} bd_postop;

#define BD_MAX_POSTOPS 6

struct bd_node {
    const char *name;         /* unique within the graph (the importer invents one if missing) */
    const char *op_type;      /* "Conv", "MatMul", ... */
    const char *domain;       /* "" for ai.onnx, "braid" for composites braid creates */
    bd_value  **inputs;       /* n_inputs entries; NULL marks an omitted optional input */
    size_t      n_inputs;
    size_t      cap_inputs;   /* room in INPUTS (bd_node_append_input doubles it); 0 = copy first */
    bd_value  **outputs;      /* n_outputs entries, never NULL */
    size_t      n_outputs;
    bd_attr    *attrs;
    size_t      n_attrs;
    size_t      cap_attrs;    /* room in ATTRS (bd_node_add_attr doubles it); 0 = shared, copy first */
    bd_postop   post[BD_MAX_POSTOPS]; /* fused post-ops (composite), applied to outputs[0] */
    int         n_post;
    const char *composite;    /* e.g. "Conv+Relu+Add" after pattern merging, else NULL */
    const void *origin;       /* the frontend's own definition of this node (a TensorFlow
                               * NodeDef's bytes), kept so a fallback engine can re-serialize
                               * it exactly; NULL when the IR node is the definition (ONNX) */
    size_t      origin_len;
    size_t      n_implicit;   /* the last n_implicit inputs are values a GRAPH attribute's body
                               * reads from the enclosing graph (If/Loop/Scan): not operands of
                               * the op, listed so ordering, liveness and partition boundaries
                               * see them */
    int         backend;      /* index of the backend chosen by annotation, -1 = none yet */
    int         index;        /* position in the graph's node list */
};

/* The most nodes and values one graph may hold. A node costs ~300 bytes of IR and a value
 * ~200 whatever few bytes of a file describe them, so these bound what any model file can
 * make braid allocate for its graph (~1.1 GB at worst); real models are far below. */
#define BD_MAX_NODES  (1 << 20)
#define BD_MAX_VALUES (1 << 22)

/* ---- graph lifetime ------------------------------------------------------------------ */

/* An empty graph named NAME (copied). Returns NULL when out of memory. */
bd_graph   *bd_graph_create(const char *name);
/* Free the graph, its pool and the model bytes it adopted. NULL is allowed. */
void        bd_graph_destroy(bd_graph *g);
/* A copy of G that shares G's payloads (names, attribute data, initializer bytes): G must
 * outlive the clone. Values, nodes and shapes are the clone's own, so passes and shape
 * specialisation on the clone leave G untouched. Returns NULL on allocation failure. */
bd_graph   *bd_graph_clone(const bd_graph *g);
/* Hand the graph a heap buffer (malloc'ed) to free when it is destroyed: the model file's
 * bytes that initializers point into. On BD_ENOMEM the buffer is freed at once. NULL is
 * allowed (nothing to adopt). */
int         bd_graph_adopt_buffer(bd_graph *g, void *buf);
/* Record that the adopted buffer BUF holds the LEN bytes of the file PATH (copied) from
 * OFFSET on, so the runtime may give those bytes back to the system and read them again
 * (runtime/weights.h). BD_ENOTFOUND when BUF is not adopted, BD_ENOMEM. */
int         bd_graph_buffer_source(bd_graph *g, const void *buf, size_t len, const char *path,
                                   uint64_t offset);
/* True when the N bytes at P lie in an adopted buffer of G (or of the graph G was cloned
 * from) whose file is recorded: *PATH and *OFFSET (in that file) tell where. */
bool        bd_graph_source_of(const bd_graph *g, const void *p, size_t n, const char **path,
                               uint64_t *offset);
/* Allocate SIZE zeroed bytes that live as long as G (8-byte aligned, or 64 when SIZE>=64).
 * Returns NULL when out of memory. */
void       *bd_graph_alloc(bd_graph *g, size_t size);
/* Charge BYTES of constant data an importer expanded beyond what the model file carries (a
 * fill) against G's budget LIMIT for the whole model: false, charging nothing, when the total
 * would exceed LIMIT. */
bool        bd_graph_charge_expanded(bd_graph *g, uint64_t bytes, uint64_t limit);
/* Copy a string (LEN bytes, or strlen when LEN == (size_t)-1) into G's pool. */
const char *bd_graph_strdup(bd_graph *g, const char *s, size_t len);

/* ---- reading ------------------------------------------------------------------------- */

const char *bd_graph_name(const bd_graph *g);
size_t      bd_graph_num_nodes(const bd_graph *g);
bd_node    *bd_graph_node(const bd_graph *g, size_t i);
size_t      bd_graph_num_values(const bd_graph *g);
bd_value   *bd_graph_value(const bd_graph *g, size_t i);
size_t      bd_graph_num_inputs(const bd_graph *g);    /* fed inputs (initializers excluded) */
bd_value   *bd_graph_input(const bd_graph *g, size_t i);
size_t      bd_graph_num_outputs(const bd_graph *g);
bd_value   *bd_graph_output(const bd_graph *g, size_t i);
/* The value named NAME, or NULL. */
bd_value   *bd_graph_find_value(const bd_graph *g, const char *name);
/* Give V the name NAME (copied into G's pool). BD_EMODEL when another value has it, or it is
 * empty; BD_ENOMEM. Names of nodes are unchanged. */
int         bd_graph_rename_value(bd_graph *g, bd_value *v, const char *name, bd_error *err);
/* Number of node inputs that read V (counting repeats), plus 1 if V is a graph output. */
size_t      bd_graph_use_count(const bd_graph *g, const bd_value *v);
/* The framework the graph was imported from: "onnx" (default), "tensorflow" (GraphDef or
 * TF.js). Fallback engines only accept nodes of their own framework. The string must
 * outlive G (a literal, or bd_graph_strdup'ed). */
const char *bd_graph_framework(const bd_graph *g);
void        bd_graph_set_framework(bd_graph *g, const char *framework);
/* The file format the graph came from, as Triton names platforms: "onnx" (the default:
 * the framework's name), "tensorflow_graphdef", "tensorflow_tfjs". Same lifetime rule. */
const char *bd_graph_platform(const bd_graph *g);
void        bd_graph_set_platform(bd_graph *g, const char *platform);
/* Metadata the frontend recorded: producer name, opset of the default domain, IR version. */
int64_t     bd_graph_opset(const bd_graph *g);
void        bd_graph_set_opset(bd_graph *g, int64_t opset);

/* ---- attributes ---------------------------------------------------------------------- */

const bd_attr *bd_node_attr(const bd_node *n, const char *name);   /* NULL if absent */
int64_t     bd_node_attr_int(const bd_node *n, const char *name, int64_t dflt);
float       bd_node_attr_float(const bd_node *n, const char *name, float dflt);
const char *bd_node_attr_string(const bd_node *n, const char *name, const char *dflt);
/* INTS attribute: number of elements, *OUT set to the array (NULL, 0 if absent). */
size_t      bd_node_attr_ints(const bd_node *n, const char *name, const int64_t **out);
/* Input I, or NULL if absent/omitted. */
bd_value   *bd_node_input(const bd_node *n, size_t i);
/* Does N (an ONNX op) only move or select elements of its input 0 into its one output
 * (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, MaxPool, Identity)? Then a quantization
 * grid passes through it: its output values are some of its input's. */
bool        bd_node_moves_values(const bd_node *n);

/* ---- building (single-threaded) ------------------------------------------------------ */

/* Add a value NAME (copied). Fails with BD_EMODEL on a duplicate name or past BD_MAX_VALUES. */
int bd_graph_add_value(bd_graph *g, const char *name, int dtype, const bd_shape *shape,
                       bd_value **out, bd_error *err);
/* The value named NAME, created (dtype undefined, rank unknown) if it does not exist yet. */
bd_value *bd_graph_get_or_add_value(bd_graph *g, const char *name, bd_error *err);
/* Mark V as a graph input / output (order of calls = signature order). */
int bd_graph_mark_input(bd_graph *g, bd_value *v, bd_error *err);
int bd_graph_mark_output(bd_graph *g, bd_value *v, bd_error *err);
/* Add a node; INPUTS/OUTPUTS arrays are copied; attrs are added with bd_node_add_attr.
 * Sets each output's producer; fails with BD_EMODEL if an output already has one, or past
 * BD_MAX_NODES. */
int bd_graph_add_node(bd_graph *g, const char *name, const char *op_type, const char *domain,
                      bd_value *const *inputs, size_t n_inputs,
                      bd_value *const *outputs, size_t n_outputs,
                      bd_node **out, bd_error *err);
/* Append attribute A (shallow copy: payloads must already live in G's pool). */
int bd_node_add_attr(bd_graph *g, bd_node *n, const bd_attr *a, bd_error *err);
/* Append INPUT to N's inputs (used when fusing a post-op that reads another tensor);
 * returns its index, or a negative code. */
int bd_node_append_input(bd_graph *g, bd_node *n, bd_value *input, bd_error *err);
/* Replace every use of OLD_V (node inputs and the graph-output list) with NEW_V. */
void bd_graph_replace_uses(bd_graph *g, bd_value *old_v, bd_value *new_v);
/* Remove node N (its outputs lose their producer); node indices are renumbered. */
void bd_graph_remove_node(bd_graph *g, bd_node *n);
/* Make OUT the sole output of N in place of N's current output 0 (fusing a chain into
 * one node: the fused node now produces the chain's last value). */
void bd_node_set_output(bd_node *n, size_t i, bd_value *out);

/* ---- checking ------------------------------------------------------------------------ */

/* Check the IR's invariants: every node input is produced, an initializer or a graph input
 * (dangling inputs), no value has two producers, node names are unique, every graph output
 * has a producer or is an input/initializer, and the graph is acyclic. Reorders the nodes
 * topologically as a side effect. Messages name the offending node and value. */
int bd_graph_validate(bd_graph *g, bd_error *err);

/* Sort nodes topologically (stable for already-sorted graphs). BD_EMODEL on a cycle,
 * naming a node on it. */
int bd_graph_toposort(bd_graph *g, bd_error *err);

#endif
