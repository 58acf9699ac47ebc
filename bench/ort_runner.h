/* ONNX Runtime as a peer under test: one CPU session over a model file, run on the caller's
 * inputs into preallocated outputs (so the timed path allocates nothing on our side).
 *
 * The library is loaded at run time (dlopen; see backends/ort/ort_api.h), so the benchmark
 * builds without it and says how to get it (scripts/fetch_ort.sh) when it is missing.
 * Single-threaded use: one thread calls everything on a runner. */
#ifndef BD_BENCH_ORT_RUNNER_H
#define BD_BENCH_ORT_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/bench_tensor.h"

typedef struct ort_runner ort_runner;

typedef struct ort_runner_options {
    const char *library;     /* path of libonnxruntime.so.1; NULL = the loader's search path */
    int         threads;     /* intra-op threads (inter-op is 1, execution sequential) */
    bool        spin;        /* let ORT's intra-op threads spin-wait between tasks */
} ort_runner_options;

/* Load the library, create an environment and a session for MODEL_PATH with graph
 * optimization level ALL. Returns 0, or -1 with the reason in WHY (WHY_LEN bytes). */
int  ort_runner_open(const char *model_path, const ort_runner_options *opts, ort_runner **out,
                     char *why, size_t why_len);
void ort_runner_close(ort_runner *r);                       /* NULL is allowed */

/* "1.30.0": the loaded library's version. */
const char *ort_runner_version(const ort_runner *r);

/* The session's inputs as declared by the model: name (owned by R), dtype (ONNX numbering),
 * rank and dims (dynamic dims are -1). */
size_t      ort_runner_num_inputs(const ort_runner *r);
const char *ort_runner_input_name(const ort_runner *r, size_t i);
void        ort_runner_input_type(const ort_runner *r, size_t i, int *dtype, int *rank, int64_t *dims);
size_t      ort_runner_num_outputs(const ort_runner *r);
const char *ort_runner_output_name(const ort_runner *r, size_t i);

/* Bind INPUTS (one per session input, in session order; R borrows them, they must outlive R
 * or the next prepare), run once to learn the output shapes and allocate the outputs that
 * every later run writes into. Returns 0, or -1 with WHY. */
int  ort_runner_prepare(ort_runner *r, const bench_tensor *inputs, size_t n_inputs,
                        char *why, size_t why_len);
/* One inference on the bound inputs into the bound outputs. Returns 0, or -1 with WHY. */
int  ort_runner_run(ort_runner *r, char *why, size_t why_len);
/* The same; PARK: ORT's spinning workers stop spinning once it returns
 * ("session.force_spinning_stop"), so they do not run into what the process does next. */
int  ort_runner_run_ex(ort_runner *r, bool park, char *why, size_t why_len);
/* Output I of the last run (owned by R). */
const bench_tensor *ort_runner_output(const ort_runner *r, size_t i);

#endif
