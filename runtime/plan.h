/* A compiled plan: one model specialised to one set of input shapes, partitioned into steps
 * over the engines, and the execution contexts that run it (runtime/model.h makes and caches
 * plans; plan_internal.h builds them). Two halves: the plan (plan.c builds it) and its
 * execution (plan_exec.c, from bd_exec_create on).
 *
 *   bd_exec_create(plan)           per-thread execution context (all memory allocated here)
 *   bd_exec_run(exec, inputs)      one inference; no allocation on this path
 *   bd_exec_run_into(exec, ...)    the same, writing outputs straight into caller memory
 *
 * Plans are reference counted: bd_exec_create takes one reference, and the plan lives until
 * its last reference is released. Any number of threads may run their own bd_exec on a
 * shared plan concurrently. */
#ifndef BD_RUNTIME_PLAN_H
#define BD_RUNTIME_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/backend.h"
#include "core/error.h"
#include "core/ir/graph.h"

/* How a model is planned and run (bd_model_open reads it; every plan of the model uses it).
 * The engines' own settings (library paths, their threads) are process-wide, not per model:
 * bd_engines_configure (runtime/engines.h) sets them once, before the first model is opened. */
typedef struct bd_model_options {
    int threads;            /* oneDNN threads per execution context; 0 = all cores */
    /* Placement (docs/partitioning.md). Strings are copied by bd_model_open. */
    const char *fallback_ops;        /* comma-separated op types never run on oneDNN
                                      * ("Softmax,Erf"); NULL = none */
    const char *engine;              /* NULL or "auto": oneDNN first, fallback engines for the
                                      * rest; a backend name ("dnnl", "ort") runs every node */
    int64_t     min_dnnl_region_flops; /* a oneDNN island between fallback subgraphs with less
                                      * compute moves to the fallback; 0 = default, < 0 = never */
    /* The plan cache's bounds (least recently used plans evicted past either); 0 = unbounded. */
    size_t      plan_cache_max_plans;
    size_t      plan_cache_max_bytes;  /* by bd_plan_bytes' estimate */
    /* Input shapes whose run would need more tensor memory than this at its peak
     * (plan_peak_tensor_bytes) are refused with BD_EINVAL before anything is compiled or
     * allocated; 0 = no limit. */
    size_t      max_run_memory_bytes;
    /* A TensorFlow SavedModel's SignatureDef to serve (bd_import_model); NULL =
     * "serving_default". Read by bd_model_open only. */
    const char *signature;
} bd_model_options;

typedef struct bd_plan  bd_plan;
typedef struct bd_exec  bd_exec;

void bd_plan_retain(const bd_plan *p);                  /* one more reference */
void bd_plan_release(const bd_plan *p);                 /* NULL is allowed; the last frees */
/* True once the cache dropped P: a pool of execution contexts should not keep P's. */
bool bd_plan_evicted(const bd_plan *p);
/* P's memory as the cache counts it: its arena (one execution context's worth), the
 * constants its passes created, the constants its oneDNN steps laid out into their own
 * layout (not those they read from an earlier plan of the model, counted in that plan: a
 * weight shared by several plans counts once), and a fixed per-step and per-node overhead
 * for primitives and graph records. An estimate (docs/architecture.md, "Plans and
 * execution"). */
size_t bd_plan_bytes(const bd_plan *p);
/* The plan's specialised graph (shapes static except where they depend on data) — for
 * reports and tests. */
const bd_graph *bd_plan_graph(const bd_plan *p);
size_t          bd_plan_num_steps(const bd_plan *p);
/* Bytes of the per-context arena this plan's layout needs (liveness-packed). */
size_t          bd_plan_arena_size(const bd_plan *p);

/* Where building P went, wall clock in milliseconds, phase by phase (braid inspect and braid
 * bench print it; docs/performance.md, "Memory and load time"). */
typedef struct bd_plan_timings {
    double weights_ms;     /* the model's weights read back (and checked) from its file: every
                            * plan after the first (runtime/weights.c) */
    double infer_ms;       /* clone and shape inference, every round */
    double fold_ms;        /* constant folding: nodes of constants run once */
    double rewrite_ms;     /* composites and post-op fusion */
    double partition_ms;   /* annotate, region merge, cost rule, partition, arena layout */
    double compile_ms;     /* every step's kernel */
    double consts_ms;      /* of compile_ms: kernels laying out their constants (weight
                            * reorders, packing), for engines that say */
    double release_ms;     /* after the compile: weights no run reads and the heap's free
                            * pages given back (runtime/weights.c, bd_heap_trim) */
    double total_ms;       /* all of the above and the rest (the report, estimates) */
} bd_plan_timings;
const bd_plan_timings *bd_plan_build_timings(const bd_plan *p);

/* ---- partition report: what runs where, and why ---------------------------------------- */

typedef struct bd_subgraph_info {
    const char      *backend;       /* "dnnl", "ort", ... */
    size_t           n_nodes;
    bd_kernel_stats  run;           /* what its kernel runs per inference (core/backend.h);
                                     * steps 1, no reorders for an engine that does not say */
    const char      *first_node;    /* name of its first node (topological order) */
    bd_value *const *inputs;        /* boundary tensors it reads, in run() order */
    size_t           n_inputs;
    bd_value *const *outputs;       /* boundary tensors it writes, in run() order */
    size_t           n_outputs;
} bd_subgraph_info;

typedef struct bd_fallback_info {   /* a node not on oneDNN */
    const char *node;
    const char *op_type;
    const char *backend;            /* where it runs */
    const char *reason;             /* "unsupported op", "attribute", "dtype", "dynamic shape",
                                     * "forced", "cost" */
    const char *detail;             /* oneDNN's (or the rule's) own words */
} bd_fallback_info;

typedef struct bd_partition_report {
    const bd_subgraph_info *subgraphs;    /* in execution order (= the plan's steps) */
    size_t                  n_subgraphs;
    bd_kernel_stats         run;          /* the subgraphs' run stats, summed */
    const bd_fallback_info *fallback;     /* in graph order */
    size_t                  n_fallback;
} bd_partition_report;

/* P's partition report; owned by P (strings included) and valid as long as P. */
const bd_partition_report *bd_plan_partition(const bd_plan *p);

/* A context for P; it holds a reference to P until bd_exec_destroy. */
int  bd_exec_create(const bd_plan *p, bd_exec **out, bd_error *err);
void bd_exec_destroy(bd_exec *e);                       /* NULL is allowed */
/* Run one inference. INPUTS must match the plan's shapes and dtypes (checked, BD_EINVAL). */
int  bd_exec_run(bd_exec *e, const DLTensor *inputs, size_t n_inputs, bd_error *err);
/* Caller memory offered for one graph output (bd_exec_run_into). */
typedef struct bd_exec_dest {
    void  *data;                    /* NULL: the output stays in the context's arena */
    size_t bytes;                   /* capacity of DATA */
} bd_exec_dest;
/* Run one inference as bd_exec_run does, but let the steps that produce graph output I write
 * it straight into DEST[I].data (I < N_DEST), so a caller whose result must land in memory
 * of its own (a shared-memory region) needs no copy. An output is placed there only when
 * all of these hold, else it stays in the arena as with bd_exec_run and the caller copies:
 * its shape is known before the run (not data-dependent), its bytes fit DEST[I].bytes,
 * DATA is 64-byte aligned (BD_ARENA_ALIGN in core/arena.h: kernels assume arena
 * alignment), DATA's bytes overlap no input's and no other placed output's (a step
 * must not overwrite what it still reads), and no step reads the output (DEST may be a
 * client's shared memory, which no kernel may read: docs/security.md).
 * Whether it was placed: bd_exec_output(e, I)->data == DEST[I].data afterwards. DEST[I] is
 * written only during this call; the next run on E uses the arena again unless given it.
 * N_DEST > the number of outputs is BD_EINVAL. */
int  bd_exec_run_into(bd_exec *e, const DLTensor *inputs, size_t n_inputs,
                      const bd_exec_dest *dest, size_t n_dest, bd_error *err);
size_t          bd_exec_num_outputs(const bd_exec *e);
/* Output I of the last run: a row-major tensor owned by E, valid until the next run. */
const DLTensor *bd_exec_output(const bd_exec *e, size_t i);
/* Nanoseconds the last run spent in each backend, by position in the backend table
 * (runtime/engines.h): writes up to MAX entries into NS and returns how many. */
size_t          bd_exec_backend_ns(const bd_exec *e, uint64_t *ns, size_t max);

#endif
