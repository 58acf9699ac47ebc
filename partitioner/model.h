/* A loaded model and its compiled plans: the core library's front door.
 *
 *   bd_model_open(path)            import + validate + shape inference + fusion passes
 *   bd_model_plan(model, inputs)   the plan for these concrete input shapes (compiled once
 *                                  per distinct shape set, then cached; thread-safe)
 *   bd_exec_create(plan)           per-thread execution context (all memory allocated here)
 *   bd_exec_run(exec, inputs)      one inference; no allocation on this path
 *
 * A model owns its graph and its plans; plans live until the model is closed. Any number of
 * threads may call bd_model_plan and run their own bd_exec on shared plans concurrently. */
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
} bd_model_options;

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

/* The plan for INPUTS' shapes and dtypes (one DLTensor per graph input, in signature
 * order; only dtype/ndim/shape are read). Checks names/dtypes/shapes against the model's
 * signature (BD_EINVAL with a message naming the input and what was expected). */
int  bd_model_plan(bd_model *m, const DLTensor *inputs, size_t n_inputs,
                   const bd_plan **out, bd_error *err);
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
