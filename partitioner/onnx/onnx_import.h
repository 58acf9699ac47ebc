/* The ONNX importer: an .onnx file (ModelProto) into braid's graph IR.
 *
 * Accepted: IR versions 3-11 and default-domain opsets 1-26 (what ONNX Runtime 1.30 runs;
 * braid's oneDNN mapping and shape rules cover opsets 7-17, and a model of another opset is
 * placed on the fallback engine whole); tensor-typed inputs and outputs;
 * initializers stored as raw_data (referenced in place, never copied), as typed fields
 * (converted into the graph's pool) or as external data next to the model file. Constant
 * nodes are folded into initializers. Subgraph attributes (If/Loop/Scan bodies) are kept as
 * opaque GraphProto bytes (bd_attr.graph) and the values a body reads from the enclosing
 * graph become the node's trailing implicit inputs (bd_node.n_implicit); bd_onnx_import_body
 * turns a body into a graph of its own (shape inference and braid's control-flow engine). Lists of subgraphs (GRAPHS), sparse tensors, string tensors and
 * model-local functions are reported as BD_EUNSUPPORTED.
 *
 * Anything the file controls is checked: a truncated or malformed file, a size larger than
 * the data present, a dims/data mismatch or an absurd rank give BD_EMODEL with a message
 * that names the tensor or node; nothing crashes and no allocation is larger than the file
 * justifies. The imported graph has passed bd_graph_validate. */
#ifndef BD_PARTITIONER_ONNX_ONNX_IMPORT_H
#define BD_PARTITIONER_ONNX_ONNX_IMPORT_H

#include <stddef.h>

#include "core/error.h"
#include "core/ir/graph.h"

/* Import the model at PATH. The file is read whole into private memory the graph owns
 * (initializer data points into it: later changes to the file on disk cannot reach the
 * graph); external data files are looked up in PATH's directory, confined to it (symlinks
 * resolved), and read the same way. On success *OUT owns everything (bd_graph_destroy);
 * on failure returns a negative BD_E* code, fills ERR and leaves *OUT untouched. */
int bd_onnx_import_file(const char *path, bd_graph **out, bd_error *err);

/* Import a model held in memory. DATA is not copied and must outlive the graph (initializer
 * data points into it). BASE_DIR is the directory external data is read from; NULL means a
 * model with external data is rejected. Same result and failure contract as above. */
int bd_onnx_import_memory(const void *data, size_t len, const char *base_dir,
                          bd_graph **out, bd_error *err);

/* Import the body of NODE (an If/Loop/Scan of OUTER): the GraphProto in BODY..BODY+LEN, which
 * lies in OUTER's model bytes and must outlive the result. The body's N_FORMALS declared inputs
 * become the graph's first inputs, typed like FORMALS (an entry may be NULL: the body's own
 * declaration stands); BD_EMODEL when the body declares another number. The values the body
 * reads from enclosing scopes (NODE's inputs, implicit or not, or OUTER's values, by name)
 * are added by name: a constant keeps its bytes (shared, not copied), any other becomes a
 * further graph input, in name order. The body gets OUTER's opset and framework and has
 * passed bd_graph_validate. External data in a body is refused. Same failure contract as
 * the imports above; the message names NODE. */
int bd_onnx_import_body(const bd_graph *outer, const bd_node *node, const void *body, size_t len,
                        const bd_value *const *formals, size_t n_formals, bd_graph **out,
                        bd_error *err);

/* ---- standalone tensors (onnx_tensor_file.c) ------------------------------------------ */

/* A tensor decoded from a serialized TensorProto, owning its bytes (row-major, 64-byte
 * aligned, never NULL even when empty). Free with bd_onnx_tensor_free. */
typedef struct bd_onnx_tensor {
    char    *name;       /* "" when the file names none */
    int      dtype;      /* bd_dtype */
    bd_shape shape;      /* static */
    void    *data;
    size_t   nbytes;
} bd_onnx_tensor;

/* Decode the TensorProto file at PATH (e.g. the ONNX test suite's input_0.pb) into *OUT.
 * Same checks as an initializer; string and external-data tensors are BD_EUNSUPPORTED. On
 * failure returns a negative BD_E* code, fills ERR and leaves *OUT untouched. */
int  bd_onnx_tensor_read_file(const char *path, bd_onnx_tensor *out, bd_error *err);
/* Same, from LEN bytes at DATA (copied; DATA may be freed afterwards). */
int  bd_onnx_tensor_from_memory(const void *data, size_t len, bd_onnx_tensor *out, bd_error *err);
void bd_onnx_tensor_free(bd_onnx_tensor *t);            /* zeroes T; NULL is allowed */

#endif
