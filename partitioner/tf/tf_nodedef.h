/* Writing TensorFlow NodeDefs and GraphDefs with braid's schema (tf_graph.proto), for the
 * TensorFlow fallback engine: it builds one GraphDef per model from the "tf" nodes' origin
 * NodeDefs (inputs renamed to the fallback graph's tensors), the Consts they read and
 * Placeholders for the tensors that cross in from oneDNN.
 *
 * A GraphDef is the concatenation of its fields, so a GraphDef is built by appending
 * nodes (and, once, the versions) to one buffer in any order. */
#ifndef BD_TF_NODEDEF_H
#define BD_TF_NODEDEF_H

#include <stddef.h>
#include <stdint.h>

#include "../error.h"
#include "../ir/dtype.h"

/* A growing byte buffer (heap; free with bd_tf_buf_free). Zero-initialize before use. */
typedef struct bd_tf_buf {
    uint8_t *p;
    size_t   n, cap;
} bd_tf_buf;

void bd_tf_buf_free(bd_tf_buf *b);                  /* zeroes B; NULL is allowed */

/* TensorFlow's DataType for a bd_dtype; 0 (DT_INVALID) when TensorFlow has none. */
int  bd_tf_dtype_from_bd(int dtype);

/* Append NodeDef ORIGIN (LEN bytes, e.g. a "tf" node's origin) to GraphDef GD, with its name
 * replaced by NAME (NULL keeps it) and its inputs by INPUTS (N_INPUTS strings, "x", "x:1" or
 * "^x"; INPUTS NULL keeps the original ones). op, device and every attr are kept byte for
 * byte. BD_EMODEL if ORIGIN is not a NodeDef. */
int  bd_tf_graphdef_add_nodedef(bd_tf_buf *gd, const void *origin, size_t len, const char *name,
                                const char *const *inputs, size_t n_inputs, bd_error *err);

/* Append a Placeholder named NAME of bd_dtype DTYPE and SHAPE (rank < 0: unknown; dims < 0
 * unknown) to GD. BD_EUNSUPPORTED for a dtype TensorFlow lacks. */
int  bd_tf_graphdef_add_placeholder(bd_tf_buf *gd, const char *name, int dtype,
                                    const bd_shape *shape, bd_error *err);

/* Append a Const named NAME holding NBYTES of DATA (row-major, bd_dtype DTYPE, static SHAPE;
 * copied into the buffer as tensor_content) to GD. */
int  bd_tf_graphdef_add_const(bd_tf_buf *gd, const char *name, int dtype, const bd_shape *shape,
                              const void *data, size_t nbytes, bd_error *err);

/* Append GraphDef.versions (producer, min_consumer) to GD. A GraphDef imported by braid
 * recorded its producer as bd_graph_opset(). */
int  bd_tf_graphdef_add_versions(bd_tf_buf *gd, int producer, int min_consumer, bd_error *err);

#endif
