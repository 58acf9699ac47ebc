/* The ONNX conformance runner's parts: one case of the ONNX backend node suite (a model and
 * its test data sets), the tolerance rule, and the two engines a case runs on — braid
 * (bd_model_open/plan/exec, fallback enabled) and ONNX Runtime itself (the baseline).
 *
 * Each engine runs one case in a child process (onnx_conformance.c), so a crash or a hang
 * costs one case, not the run. The runners below are single-threaded and report one line. */
#ifndef BD_TESTS_CONFORMANCE_CONFORMANCE_H
#define BD_TESTS_CONFORMANCE_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "partitioner/onnx/onnx_import.h"

/* Tolerances (documented in docs/conformance.md): a float element passes when
 * |got - want| <= ATOL + RTOL * |want| (numpy.isclose's rule; ONNX's backend tests use
 * rtol 1e-3 too), NaN equals NaN and infinities must match exactly. Integers and bools
 * must be equal. */
#define CF_RTOL 1e-3
#define CF_ATOL 1e-5

#define CF_MAX_TENSORS 64
#define CF_REASON_MAX  480

/* One test_data_set_N: inputs in file order (input_0.pb ...), expected outputs likewise. */
typedef struct cf_dataset {
    bd_onnx_tensor in[CF_MAX_TENSORS];
    size_t         n_in;
    bd_onnx_tensor out[CF_MAX_TENSORS];
    size_t         n_out;
} cf_dataset;

typedef struct cf_case {
    char        dir[1024];      /* .../node/test_add */
    const char *name;           /* "test_add" (points into DIR) */
    cf_dataset *sets;
    size_t      n_sets;
} cf_case;

/* The outcome of one engine on one case. */
typedef enum cf_status {
    CF_PASS = 0,
    CF_FAIL,                    /* wrong result, or an error while loading or running */
    CF_UNSUPPORTED_TYPE,        /* the case needs sequence/optional/string values */
} cf_status;

typedef struct cf_result {
    cf_status status;
    bool      dnnl_only;        /* braid: every node of every plan ran on oneDNN */
    bool      float_case;       /* braid: every expected output is FP32/FP64/FP16/BF16 */
    char      reason[CF_REASON_MAX];
} cf_result;

/* A tensor as both engines hand it back: dtype (bd_dtype), dims, row-major data. */
typedef struct cf_view {
    int            dtype;
    int            rank;
    const int64_t *dims;
    const void    *data;
} cf_view;

/* ---- cf_data.c ---------------------------------------------------------------------- */

/* Read every test_data_set_* of the case in DIR into C (sets in name order). Returns 0, or
 * a negative BD_E* code with the reason in ERR. */
int  cf_case_load(const char *dir, cf_case *c, bd_error *err);
void cf_case_free(cf_case *c);                       /* a zeroed C is allowed */
/* The input of SET meant for the model input NAME at position POS: by the tensor's own name
 * when the files carry names, else by position. NULL when there is none. */
const bd_onnx_tensor *cf_input_for(const cf_dataset *set, const char *name, size_t pos);

/* ---- cf_compare.c ------------------------------------------------------------------- */

/* Compare GOT with WANT (output NAME). Returns true when equal within the tolerances above;
 * otherwise false with a one-line reason in WHY ("output 'y': max abs diff ... at [3]"). */
bool cf_compare(const char *name, const cf_view *got, const cf_view *want, char *why, size_t len);

/* ---- cf_braid.c / cf_ort.c ---------------------------------------------------------- */

typedef struct cf_options {
    const char *ort_library;    /* libonnxruntime.so.1 for the ORT baseline */
    const char *engine;         /* braid: NULL = default placement, "ort" = force the fallback */
} cf_options;

/* Run the case in DIR through braid: open the model (fallback enabled), then read the test
 * data, plan per data set, run and compare. Fills R; never fails otherwise. */
void cf_run_braid(const char *dir, const cf_options *o, cf_result *r);
/* Run the case in DIR through ONNX Runtime itself (one CPU session, one thread), compare. */
void cf_run_ort(const char *dir, const cf_options *o, cf_result *r);
/* Record a failure: R->status = ST, R->reason = "STAGE: MSG" (truncated to fit). */
void cf_fail(cf_result *r, cf_status st, const char *stage, const char *msg);
/* True when an error message says the model needs sequence/optional/string/map values. */
bool cf_is_type_gap(const char *msg);

#endif
