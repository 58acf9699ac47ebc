/* The fallback GraphDef: a model's TensorFlow-fallback nodes serialized as ONE GraphDef,
 * which the engine imports once into a TF_Graph (tfb_session.h).
 *
 * What goes in:
 *   - every fallback node, from its original NodeDef (node->origin) with three changes:
 *     its data inputs are rewritten to name the tensors of THIS GraphDef (data input i is
 *     the IR node's input i: the TF frontends keep TF's input order), control inputs
 *     ("^x") to nodes outside the GraphDef are dropped, and the `device` field and the
 *     `_class` colocation attr are dropped (they may name devices or nodes that are not
 *     here). A data input with no IR value (the frontend leaves a loop's back edge,
 *     NextIteration -> Merge, out of the IR) keeps its original reference, which must name
 *     another fallback node. Everything else (attrs, op, name) is kept byte for byte, but
 *     for _FusedDepthwiseConv2dNative with a bias and at most one activation, which runs in
 *     TensorFlow only where its oneDNN is on (not on AVX2-only CPUs): it is written as the
 *     ops it fuses, DepthwiseConv2dNative -> BiasAdd -> activation, the last one keeping its
 *     name (tfb_subgraph_def.c says why);
 *   - one Const per initializer those nodes read, re-emitted from value->data as a
 *     TensorProto with tensor_content (named braid_const/<value name>);
 *   - one Placeholder per boundary tensor they read that no fallback node produces (a
 *     graph input, or an output of a oneDNN step), named braid_feed/<value name>, with the
 *     value's dtype and its rank (dims left unknown, -1, so that plans for other input
 *     shapes produce the same bytes and share the session).
 * A fallback node's output i is tensor "<NodeDef name>:i" — i from the IR value's name
 * when it is "<node>:<i>", else its position in node->outputs.
 *
 * Names of generated nodes are made unique against the model's own node names. */
#ifndef BD_BACKENDS_TF_TFB_SUBGRAPH_DEF_H
#define BD_BACKENDS_TF_TFB_SUBGRAPH_DEF_H

#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"

/* TF GraphDef producer version written when the IR carries none (bd_graph_opset of a
 * TensorFlow graph = the model's own VersionDef.producer when the frontend records it). */
#define BD_TFB_DEFAULT_PRODUCER 1205

typedef struct tfb_graphdef {
    uint8_t *bytes;          /* the serialized GraphDef (malloc'd) */
    size_t   len;
    size_t   n_values;       /* = bd_graph_num_values of the graph it was built from */
    char   **op_name;        /* [n_values]: the op whose output holds value i here, or NULL */
    int     *out_index;      /* [n_values]: which output of op_name[i] */
    size_t   n_nodes;        /* fallback nodes emitted */
    size_t   n_placeholders;
    size_t   n_consts;
} tfb_graphdef;

/* The model's fallback nodes for SG: every node of SG->graph annotated with the backend of
 * SG's nodes (so all fallback subgraphs of one plan yield the same set), or SG's own nodes
 * when SG is not annotated (backend < 0). *OUT is malloc'd (free it), in graph order. */
int  tfb_fallback_nodes(const bd_subgraph *sg, bd_node ***out, size_t *n, bd_error *err);

/* Serialize NODES (topological order, all from G, each with an origin NodeDef) as described
 * above. PRODUCER = VersionDef.producer. On failure (BD_EMODEL: a NodeDef that does not
 * decode or whose data inputs disagree with the IR node; BD_EUNSUPPORTED: a string
 * constant or a boundary dtype TensorFlow cannot be fed) fills ERR and leaves OUT empty. */
int  tfb_graphdef_build(const bd_graph *g, bd_node *const *nodes, size_t n, int producer,
                        tfb_graphdef *out, bd_error *err);
void tfb_graphdef_free(tfb_graphdef *gd);            /* NULL is allowed */

/* Decode the NodeDef at ORIGIN far enough to count its data (non-control) inputs. */
int  tfb_nodedef_data_inputs(const void *origin, size_t len, size_t *n, bd_error *err);

#endif
