/* Internal to runtime/: building and freeing one plan (model.c owns the cache), and the
 * plan's layout that its two halves share (plan.c builds it, plan_exec.c runs it). */
#ifndef BD_RUNTIME_PLAN_INTERNAL_H
#define BD_RUNTIME_PLAN_INTERNAL_H

#include <stdatomic.h>

#include "runtime/plan.h"
#include "partitioner/passes/partition.h"

/* ---- the layout (plan.c and plan_exec.c only) --------------------------------------------- */

typedef struct plan_step {
    const bd_backend *backend;
    int               backend_index;   /* position in the backend table */
    bd_kernel        *kernel;
    bd_node         **nodes;   size_t n_nodes;
    bd_value        **inputs;  size_t n_inputs;
    bd_value        **outputs; size_t n_outputs;
} plan_step;

#define NO_OFFSET SIZE_MAX

struct bd_plan {
    atomic_int  refs;          /* the cache's, callers', execution contexts' */
    atomic_bool evicted;       /* the cache dropped it */
    size_t      bytes;         /* bd_plan_bytes' estimate */
    bd_graph  *graph;          /* specialised clone: shapes inferred, folded nodes removed */
    plan_step *steps;
    size_t     n_steps;
    size_t    *offset;         /* per value index: arena offset, or NO_OFFSET */
    size_t     arena_size;
    int       *dyn_slot;       /* per value index: slot of a run-time-shaped value, or -1 */
    size_t     n_dyn;
    bd_shape  *input_shapes;
    size_t     n_inputs;
    int        threads;
    size_t     max_run_bytes;  /* the model's max_run_memory_bytes, for the steps (0: none) */
    bd_const_cache    *consts;     /* during the build: the model's cache, for the kernels */
    bd_node_place      *places;    /* per node index: what annotation decided */
    bd_subgraph_info   *sg_info;   /* the partition report's parts */
    bd_fallback_info   *fb_info;
    bd_partition_report report;
    bd_plan_timings     timings;
};

/* V's bytes (its shape static), saturating at SIZE_MAX. */
size_t plan_value_bytes(const bd_value *v);

/* ---- building ------------------------------------------------------------------------------- */

/* Specialise MODEL_GRAPH to INPUT_SHAPES (one per graph input), infer shapes (values whose
 * shape depends on data stay dynamic), fold nodes of constants (plan_fold_constants), drop
 * nodes folded to constants (inferring and folding again, a few rounds at most, while a fold
 * feeds a node of unknown shape), pin the nodes OPTS
 * forces off oneDNN, run the composite passes, annotate every node with a backend, merge
 * regions, apply the cost rule, partition into steps, lay out the arena of static boundary
 * tensors and compile each step's kernel. A zero-size input whose outputs are all empty gets
 * a plan of no steps; a failure for an empty input, or shape inference failing on these
 * shapes, is BD_EINVAL (the caller's shapes). MODEL_GRAPH must outlive the plan; OPTS is read
 * during the call only (NULL = defaults). CONSTS (may be NULL) is the model's cache of laid-out
 * constants: the kernels read what other plans of the model laid out and publish their own
 * (core/const_cache.h). The plan starts with one reference. */
int  plan_build(const bd_graph *model_graph, const bd_shape *input_shapes,
                const bd_model_options *opts, bd_const_cache *consts, bd_plan **out, bd_error *err);
void plan_destroy(bd_plan *p);           /* NULL is allowed; ignores references */
/* The options of the plan_build running on this thread (NULL outside one, or for defaults):
 * an engine compiling a step may plan subgraphs of its own with them (control flow). */
const bd_model_options *plan_building_options(void);
/* Around P's build, READ_MS went to reading the model's weights back and RELEASE_MS to
 * giving them and the heap's free pages back (bd_plan_timings). */
void plan_add_weights_ms(bd_plan *p, double read_ms, double release_ms);
/* The cache dropped P (bd_plan_evicted reads it). */
void plan_mark_evicted(const bd_plan *p);
/* A test hook before each compile: a no-op unless built with BD_TEST_HOOKS (plan.c). */
void plan_test_compile_gate(void);
/* The most tensor memory a run of G (shapes inferred) holds at once, walking its nodes in
 * order: non-constant inputs, then each node's outputs, each value freed after its last
 * reader. Saturates at SIZE_MAX; values shaped only at run time count 0. BD_ENOMEM only. */
int  plan_peak_tensor_bytes(const bd_graph *g, size_t *out);
/* Run every node of G whose inputs are all constants once, on the native engine or else on
 * the fast path where OPTS allows it for the node, and make its outputs constants (in G's
 * pool; a node no engine runs, or that fails on its constants, stays). *SPENT counts the
 * bytes folded into G so far, across calls: at most 64 MiB per graph. *REINFER tells whether
 * a folded value feeds a node whose output shapes are not all static (shape inference, run
 * again, may then learn them). Returns how many nodes were folded, or BD_ENOMEM. */
int  plan_fold_constants(bd_graph *g, const bd_placement_opts *opts, size_t *spent,
                         bool *reinfer, bd_error *err);
/* Call KEEP(data, CTX) for every constant a run of P reads: the constants of its steps on
 * engines that read them in place (every engine but the fast path, which copies its own at
 * compile) and constant graph outputs. */
void plan_run_constants(const bd_plan *p, void (*keep)(const void *data, size_t n, void *ctx),
                        void *ctx);
/* True when P was built for exactly these input shapes. */
bool plan_matches(const bd_plan *p, const bd_shape *input_shapes, size_t n);

#endif
