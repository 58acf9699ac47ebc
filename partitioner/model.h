/* A loaded model and its compiled plans: the core library's front door.
 *
 *   bd_model_open(path)            import + validate + shape inference + fusion passes
 *   bd_model_plan_acquire(model, inputs)
 *                                  the plan for these concrete input shapes (compiled once
 *                                  per distinct shape set, then cached; thread-safe)
 *   bd_exec_create(plan)           per-thread execution context (all memory allocated here)
 *   bd_exec_run(exec, inputs)      one inference; no allocation on this path
 *
 * Plans are reference counted. The model's cache holds one reference per cached plan and,
 * when bounded (plan_cache_max_plans / plan_cache_max_bytes), evicts the least recently used
 * plan past either bound; an evicted plan lives on until its last reference (a caller's, or
 * an execution context's: bd_exec_create takes one) is released. A plan is compiled outside
 * the model's lock: a request for a cached shape never waits for another shape's compile,
 * and concurrent requests for the same new shape compile it once (the others wait for that
 * compile and share its plan, or its error). Any number of threads may plan and run their
 * own bd_exec on shared plans concurrently. */
#ifndef BD_MODEL_H
#define BD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "error.h"
#include "ir/graph.h"

typedef struct bd_model_options {
    int threads;            /* oneDNN threads per execution context; 0 = all cores */
    /* Placement (docs/partitioning.md). Strings are copied by bd_model_open. */
    const char *fallback_ops;        /* comma-separated op types never run on oneDNN
                                      * ("Softmax,Erf"); NULL = none */
    const char *engine;              /* NULL or "auto": oneDNN first, fallback engines for the
                                      * rest; a backend name ("dnnl", "ort") runs every node */
    int64_t     min_dnnl_region_flops; /* a oneDNN island between fallback subgraphs with less
                                      * compute moves to the fallback; 0 = default, < 0 = never */
    /* The ONNX Runtime fallback engine (process-wide: the last model opened sets them). */
    const char *ort_library;         /* path of libonnxruntime.so.1; NULL = the default search */
    int         ort_threads;         /* ORT intra-op threads per session; 0 = ORT's default */
    /* The plan cache's bounds (least recently used plans evicted past either); 0 = unbounded. */
    size_t      plan_cache_max_plans;
    size_t      plan_cache_max_bytes;  /* by bd_plan_bytes' estimate */
    /* Input shapes whose run would need more tensor memory than this at its peak
     * (bd_plan_peak_tensor_bytes) are refused with BD_EINVAL before anything is compiled or
     * allocated; 0 = no limit. */
    size_t      max_run_memory_bytes;
} bd_model_options;

/* What a model's plan cache holds and has done (bd_model_plan_cache_stats). */
typedef struct bd_plan_cache_stats {
    size_t   plans;        /* cached now (compiles in progress not counted) */
    size_t   bytes;        /* bd_plan_bytes of the cached plans */
    uint64_t hits;         /* lookups answered from the cache (or by waiting for a compile) */
    uint64_t compiles;     /* plans compiled (successful or not) */
    uint64_t evictions;    /* plans dropped to stay within the bounds */
    size_t   max_plans;    /* the bounds (bd_model_options); 0 = unbounded */
    size_t   max_bytes;
} bd_plan_cache_stats;

typedef struct bd_model bd_model;
typedef struct bd_plan  bd_plan;
typedef struct bd_exec  bd_exec;

/* Import the model at PATH (.onnx), validate it and prepare it for planning. OPTS may be
 * NULL for defaults. On failure returns a negative code, fills ERR, leaves *OUT untouched. */
int  bd_model_open(const char *path, const bd_model_options *opts, bd_model **out, bd_error *err);
/* Same, from a graph built in memory; takes ownership of G even on failure. */
int  bd_model_from_graph(bd_graph *g, const bd_model_options *opts, bd_model **out, bd_error *err);
void bd_model_close(bd_model *m);                      /* NULL is allowed */
/* The model's graph after import and passes (read-only). */
const bd_graph *bd_model_graph(const bd_model *m);

/* Restrict input INPUT to shapes of rank RANK with MIN[d] <= dim d <= MAX[d] (MAX[d] < 0 =
 * no upper bound). Requests outside are BD_EINVAL naming the input, the dim and the range,
 * before any plan is built. Call before the model is shared between threads. BD_EINVAL when
 * INPUT is not an input, the rank contradicts the model or a range is empty. */
int  bd_model_set_input_range(bd_model *m, const char *input, int rank, const int64_t *min,
                              const int64_t *max, bd_error *err);

/* The plan for INPUTS' shapes and dtypes (one DLTensor per graph input, in signature
 * order; only dtype/ndim/shape are read), with one reference for the caller (release it
 * with bd_plan_release). Checks names/dtypes/shapes against the model's signature and the
 * declared input ranges (BD_EINVAL with a message naming the input and what was expected).
 * A zero-size input gets a plan of no steps whose outputs are the empty tensors shape
 * inference gives; BD_EINVAL when an output's shape cannot be known without running. */
int  bd_model_plan_acquire(bd_model *m, const DLTensor *inputs, size_t n_inputs,
                           const bd_plan **out, bd_error *err);
void bd_plan_retain(const bd_plan *p);                  /* one more reference */
void bd_plan_release(const bd_plan *p);                 /* NULL is allowed; the last frees */
/* Same as bd_model_plan_acquire, but the plan is borrowed from the cache: valid until the
 * model is closed only while the cache is unbounded (the default); with a bounded cache it
 * is valid only until the next plan of this model is compiled. For single-threaded tools. */
int  bd_model_plan(bd_model *m, const DLTensor *inputs, size_t n_inputs,
                   const bd_plan **out, bd_error *err);
/* A snapshot of the model's plan cache (any thread). */
void bd_model_plan_cache_stats(bd_model *m, bd_plan_cache_stats *out);
/* True once the cache dropped P: a pool of execution contexts should not keep P's. */
bool bd_plan_evicted(const bd_plan *p);
/* P's memory as the cache counts it: its arena (one execution context's worth), the
 * constants its passes created, the constants its oneDNN steps reorder into their own
 * layout, and a fixed per-step and per-node overhead for primitives and graph records.
 * An estimate (docs/architecture.md, "Plans and execution"). */
size_t bd_plan_bytes(const bd_plan *p);
/* The plan's specialised graph (shapes static except where they depend on data) — for
 * reports and tests. */
const bd_graph *bd_plan_graph(const bd_plan *p);
size_t          bd_plan_num_steps(const bd_plan *p);
/* Bytes of the per-context arena this plan's layout needs (liveness-packed). */
size_t          bd_plan_arena_size(const bd_plan *p);

/* ---- partition report: what runs where, and why ---------------------------------------- */

typedef struct bd_subgraph_info {
    const char      *backend;       /* "dnnl", "ort", ... */
    size_t           n_nodes;
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
size_t          bd_exec_num_outputs(const bd_exec *e);
/* Output I of the last run: a row-major tensor owned by E, valid until the next run. */
const DLTensor *bd_exec_output(const bd_exec *e, size_t i);
/* Nanoseconds the last run spent in each backend, by position in the backend table
 * (backends/registry.h): writes up to MAX entries into NS and returns how many. */
size_t          bd_exec_backend_ns(const bd_exec *e, uint64_t *ns, size_t max);

#endif
