/* Placement: which backend runs each node, and the subgraphs that result.
 *
 * The plan builder runs these steps on its specialised graph, in this order:
 *
 *   bd_place_pin        nodes the user forced to a fallback are pinned, so the composite
 *                       passes (composites.h) never fuse them
 *   bd_annotate         each node gets the first backend (table order) whose supports()
 *                       accepts it; every backend it passed over records a reason
 *   bd_region_merge     maximal connected regions of one backend whose contraction keeps the
 *                       region graph acyclic
 *   bd_cost_rule        a small fast-path island whose every neighbour is a fallback region
 *                       moves to that fallback (then regions are merged again)
 *   bd_partition        regions become subgraphs in a topological order, with their boundary
 *                       inputs and outputs
 *
 * What each backend is comes from its kind (core/backend.h), never from its place in the table:
 * "the fast path" below is the backend of kind BD_ENGINE_FAST_PATH, and the table's order is
 * only the order backends are offered a node (the registry puts the fast path first, so it takes
 * every node it supports). All functions take the backend table explicitly, so tests can use
 * fake backends. */
#ifndef BD_PARTITIONER_PASSES_PARTITION_H
#define BD_PARTITIONER_PASSES_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"
#include "core/ir/graph.h"

#define BD_PLACE_MAX_BACKENDS 8

/* node->backend of a node pinned to a framework fallback before annotation (bd_place_pin). */
#define BD_BACKEND_PINNED (-2)

/* Default for bd_placement_opts.min_dnnl_region_flops (docs/partitioning.md says why). */
#define BD_DEFAULT_MIN_DNNL_REGION_FLOPS 1000000

/* Why a backend did not get a node. */
typedef enum bd_reason {
    BD_REASON_NONE = 0,    /* accepted, or never asked (an earlier backend took the node) */
    BD_REASON_OP,          /* the backend has no kernel for the op */
    BD_REASON_ATTRIBUTE,   /* the op is known but not with these attributes / post-ops / shapes */
    BD_REASON_DTYPE,       /* a tensor's element type */
    BD_REASON_DYNAMIC,     /* a tensor it touches has a shape only known at run time */
    BD_REASON_FORCED,      /* the user's fallback_ops or engine option */
    BD_REASON_COST,        /* accepted, but an island too small to pay two boundary crossings */
    BD_REASON_REFERENCE,   /* the backend has only a reference (slow) kernel for it: the cliff
                            * guard's probe (docs/partitioning.md) */
} bd_reason;

/* "unsupported op", "attribute", "dtype", "dynamic shape", "forced", "cost", "reference
 * kernel", "" for NONE. */
const char *bd_reason_name(bd_reason r);

typedef struct bd_placement_opts {
    const char *fallback_ops;          /* comma-separated op types sent to a framework fallback
                                        * (never offered to the fast path or a native engine) */
    const char *engine;                /* NULL / "" / "auto": every backend; else the backends
                                        * allowed, comma-separated ("ort"; "dnnl,native") */
    int64_t     min_dnnl_region_flops; /* cost rule threshold; 0 = the default, < 0 = rule off */
    const char *prefer_fallback_ops;   /* op types a framework fallback runs faster (measured):
                                        * offered to the fallbacks first, and to the others only
                                        * when no fallback takes them (reason "cost") */
} bd_placement_opts;

/* What annotation decided for one node. */
typedef struct bd_node_place {
    int       backend;                             /* chosen backend, -1 = none accepted */
    bd_reason reason[BD_PLACE_MAX_BACKENDS];       /* per backend passed over */
    char      why[BD_PLACE_MAX_BACKENDS][112];     /* that backend's own words */
} bd_node_place;

/* One region after partitioning: a subgraph for one backend (arrays malloc'ed). */
typedef struct bd_part {
    int        backend;
    bd_node  **nodes;   size_t n_nodes;      /* graph (topological) order */
    bd_value **inputs;  size_t n_inputs;     /* non-constant values read, produced elsewhere */
    bd_value **outputs; size_t n_outputs;    /* values read by other parts or graph outputs */
} bd_part;

/* ---- forcing --------------------------------------------------------------------------- */

/* Is OP one of the comma-separated names in LIST (blanks around names ignored)? */
bool bd_place_op_listed(const char *list, const char *op);

/* *ALLOWED = the set of backends (bit b = BACKENDS[b]) OPTS->engine allows: all of them for
 * automatic placement. Returns 0, or BD_EINVAL (with a message listing the known names) when
 * a name is no backend. */
int  bd_place_engines(const bd_placement_opts *opts, const bd_backend *const *backends, size_t nb,
                      unsigned *allowed, bd_error *err);
/* OPTS->fallback_ops when ALLOWED includes a framework fallback, else NULL: with only the fast
 * path and native engines allowed, fallback_ops has nowhere to send a node and is ignored. */
const char *bd_place_fallback_ops(const bd_placement_opts *opts, const bd_backend *const *backends,
                                  size_t nb, unsigned allowed);
/* True when OPTS sends N to a framework fallback: N's op is in fallback_ops. */
bool bd_place_forced_fallback(const bd_placement_opts *opts, const bd_node *n);
/* Set node->backend = BD_BACKEND_PINNED on every node forced to a fallback (others -1), so the
 * composite passes leave them alone. Returns how many were pinned. */
size_t bd_place_pin(bd_graph *g, const bd_placement_opts *opts);

/* ---- annotation ------------------------------------------------------------------------ */

/* Give every node of G a backend: the first in BACKENDS (NB of them, at most
 * BD_PLACE_MAX_BACKENDS) whose supports() accepts it, skipping those OPTS forbids (engines
 * not allowed; the fast path and native engines for a pinned node); a node touching a
 * non-static value is never offered to the fast path. Sets node->backend and fills
 * PLACES[node->index]. When some node has no backend, returns BD_EUNSUPPORTED with a
 * message naming the first few nodes, their ops and every backend's reason. */
int  bd_annotate(bd_graph *g, const bd_backend *const *backends, size_t nb,
                 const bd_placement_opts *opts, bd_node_place *places, bd_error *err);

/* ---- regions --------------------------------------------------------------------------- */

/* Group G's annotated nodes into regions: REGION[node index] receives a region id in
 * [0, *N_REGIONS). Two nodes share a region only if they have the same backend and are
 * connected through nodes of that backend, and the graph of regions stays acyclic (the
 * diamond A->B->D, A->C->D with B elsewhere keeps D apart from A,C). BD_ENOMEM on failure. */
int  bd_region_merge(const bd_graph *g, int *region, size_t *n_regions, bd_error *err);

/* ---- cost rule ------------------------------------------------------------------------- */

/* Rough floating-point operations of N as shaped (2*M*N*K for MatMul/Gemm, the same for
 * Conv's MACs, 0 for views, else one per output element; rank-unknown outputs count 0). */
double bd_node_flops(const bd_node *n);
/* Move every fast-path region whose total FLOPs are below MIN_FLOPS and whose neighbours
 * (regions it reads from or feeds; graph inputs, outputs and constants do not count) are all
 * framework-fallback regions, at least one, to the first such backend (table order) that
 * supports all its nodes. Moved nodes get reason COST for the fast path in PLACES. MIN_FLOPS <= 0 disables
 * the rule. Returns the number of nodes moved (>= 0). */
size_t bd_cost_rule(bd_graph *g, const bd_backend *const *backends, size_t nb, double min_flops,
                    const int *region, size_t n_regions, bd_node_place *places);

/* ---- partitioning ---------------------------------------------------------------------- */

/* One part per region, in a topological order of the region graph (ties: the region whose
 * first node comes first). *OUT is malloc'ed; free with bd_parts_free. */
int  bd_partition(const bd_graph *g, const int *region, size_t n_regions,
                  bd_part **out, size_t *n_out, bd_error *err);
void bd_parts_free(bd_part *parts, size_t n);   /* NULL is allowed */

#endif
