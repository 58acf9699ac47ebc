/* A loaded model and its compiled plans: the runtime's front door (plans: runtime/plan.h).
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
#ifndef BD_RUNTIME_MODEL_H
#define BD_RUNTIME_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "core/ir/graph.h"
#include "runtime/plan.h"

/* What a model's plan cache holds and has done (bd_model_plan_cache_stats). */
typedef struct bd_plan_cache_stats {
    size_t   plans;        /* cached now (compiles in progress not counted) */
    size_t   bytes;        /* bd_plan_bytes of the cached plans (constants one plan reads from
                            * another's kernels count in the plan that laid them out) */
    uint64_t hits;         /* lookups answered from the cache (or by waiting for a compile) */
    uint64_t compiles;     /* plans compiled (successful or not) */
    uint64_t evictions;    /* plans dropped to stay within the bounds */
    size_t   max_plans;    /* the bounds (bd_model_options); 0 = unbounded */
    size_t   max_bytes;
    size_t   weights_released; /* bytes of the model file's weights given back to the system
                                * between compiles (oneDNN holds its own copies) */
    size_t   consts_bytes;     /* constants laid out by the plans' kernels and alive now (some
                                * plan reads them), each counted once however many plans read
                                * it: those of evicted plans still running included */
    uint64_t consts_shared;    /* constants a compile read from another plan's kernels instead
                                * of laying them out again (core/const_cache.h) */
    uint64_t consts_shared_bytes; /* their bytes */
} bd_plan_cache_stats;

typedef struct bd_model bd_model;

/* Import the model at PATH (.onnx), validate it and prepare it for planning. OPTS may be
 * NULL for defaults. On failure returns a negative code, fills ERR, leaves *OUT untouched. */
int  bd_model_open(const char *path, const bd_model_options *opts, bd_model **out, bd_error *err);
/* Same, from a graph built in memory; takes ownership of G even on failure. */
int  bd_model_from_graph(bd_graph *g, const bd_model_options *opts, bd_model **out, bd_error *err);
void bd_model_close(bd_model *m);                      /* NULL is allowed */
/* The model's graph after import and passes (read-only). */
const bd_graph *bd_model_graph(const bd_model *m);
/* Where opening M went, wall clock in milliseconds (braid inspect and braid bench print it;
 * each plan's build has its own: bd_plan_build_timings). */
typedef struct bd_model_timings {
    double import_ms;     /* reading the file and decoding it into the IR (bd_model_open) */
    double prepare_ms;    /* aligning large weights, validation, symbolic shape inference */
} bd_model_timings;
const bd_model_timings *bd_model_open_timings(const bd_model *m);

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
/* Same as bd_model_plan_acquire, but the plan is borrowed from the cache: valid until the
 * model is closed only while the cache is unbounded (the default); with a bounded cache it
 * is valid only until the next plan of this model is compiled. For single-threaded tools. */
int  bd_model_plan(bd_model *m, const DLTensor *inputs, size_t n_inputs,
                   const bd_plan **out, bd_error *err);
/* A snapshot of the model's plan cache (any thread). */
void bd_model_plan_cache_stats(bd_model *m, bd_plan_cache_stats *out);

#endif
