/* libbraid-client: a C client for braidd (the Open Inference Protocol over gRPC).
 *
 *   braid_client *c;
 *   char msg[256];
 *   if (braid_client_connect("127.0.0.1:8001", NULL, &c, msg, sizeof msg)) { ...msg... }
 *   braid_tensor in = { "image", "FP32", shape, 4, data, nbytes };
 *   braid_infer_request req = { .model = "tinycnn", .inputs = &in, .n_inputs = 1 };
 *   braid_infer_result *r;
 *   if (braid_model_infer(c, &req, &r, msg, sizeof msg) == BRAID_OK) { ... }
 *   braid_infer_result_free(r);
 *   braid_client_close(c);
 *
 * Errors: every fallible function returns a braid_status: 0 (BRAID_OK), a gRPC status code
 * (positive, BRAID_NOT_FOUND ...) as the server or the transport answered, or a negative
 * client-side code (BRAID_E_*). On failure it writes a NUL-terminated message into the
 * caller's buffer ERR of ERRLEN bytes (ERR may be NULL) and leaves every out-parameter
 * untouched. On success ERR is set to "".
 *
 * Ownership: objects a call returns through an out-parameter belong to the caller and are
 * freed with their *_free function (NULL allowed). Strings passed in are copied or used
 * only during the call.
 *
 * Threads: one braid_client may be used from many threads at once; each call is
 * synchronous, with its own completion queue and the deadline from the options. A result
 * object may be read from any thread but freed once. */
#ifndef BD_CLIENT_BRAID_CLIENT_H
#define BD_CLIENT_BRAID_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------------------ */

typedef int braid_status;

enum {
    BRAID_OK                  = 0,
    /* gRPC status codes, as the server (or the transport) answered. */
    BRAID_CANCELLED           = 1,
    BRAID_UNKNOWN             = 2,
    BRAID_INVALID_ARGUMENT    = 3,
    BRAID_DEADLINE_EXCEEDED   = 4,
    BRAID_NOT_FOUND           = 5,
    BRAID_ALREADY_EXISTS      = 6,
    BRAID_PERMISSION_DENIED   = 7,
    BRAID_RESOURCE_EXHAUSTED  = 8,
    BRAID_FAILED_PRECONDITION = 9,
    BRAID_ABORTED             = 10,
    BRAID_OUT_OF_RANGE        = 11,
    BRAID_UNIMPLEMENTED       = 12,
    BRAID_INTERNAL            = 13,
    BRAID_UNAVAILABLE         = 14,   /* also: the server cannot be reached */
    BRAID_DATA_LOSS           = 15,
    BRAID_UNAUTHENTICATED     = 16,
    /* Client-side failures: nothing was sent, or the answer could not be read. */
    BRAID_E_ARG               = -1,   /* a bad argument (NULL, unknown dtype, strided tensor) */
    BRAID_E_NOMEM             = -2,   /* an allocation failed */
    BRAID_E_PROTOCOL          = -3,   /* the server's answer was malformed */
    BRAID_E_GRPC              = -4,   /* the gRPC library refused the call */
};

/* A stable name for STATUS ("OK", "NOT_FOUND", "E_ARG", ...); never NULL. */
const char *braid_status_name(braid_status status);

/* ---- the client ---------------------------------------------------------------------- */

typedef struct braid_client braid_client;

typedef struct braid_client_options {
    int    timeout_ms;          /* deadline of each call; 0 = 10000 */
    int    load_timeout_ms;     /* deadline of load/unload calls (they compile); 0 = 120000 */
    size_t max_message_bytes;   /* largest message sent or received; 0 = 256 MiB */
    bool   lazy;                /* true: do not wait for the connection in braid_client_connect */
    /* security (docs/security.md); NULL or "" = off */
    const char *tls_ca_file;    /* PEM CAs that sign braidd's certificate: speak TLS */
    const char *tls_cert_file;  /* PEM client certificate for mutual TLS (with tls_key_file) */
    const char *tls_key_file;
    const char *token;          /* bearer token sent as "authorization: Bearer TOKEN" */
} braid_client_options;

/* Open a channel to braidd at TARGET ("host:port"); OPTS may be NULL (defaults). Unless
 * OPTS->lazy, waits (up to timeout_ms) until the server answers a connection and fails
 * with BRAID_UNAVAILABLE if it does not. On success *OUT is closed with braid_client_close. */
braid_status braid_client_connect(const char *target, const braid_client_options *opts,
                                  braid_client **out, char *err, size_t errlen);
/* Close C; calls still running on other threads must have returned. NULL is allowed. */
void         braid_client_close  (braid_client *c);
/* The target C was opened with (owned by C). */
const char  *braid_client_target (const braid_client *c);

/* ---- server ------------------------------------------------------------------------- */

braid_status braid_server_live (braid_client *c, bool *live,  char *err, size_t errlen);
braid_status braid_server_ready(braid_client *c, bool *ready, char *err, size_t errlen);

typedef struct braid_server_info {
    char   *name;
    char   *version;
    char  **extensions;         /* "model_repository", "statistics", ... */
    size_t  n_extensions;
} braid_server_info;

/* The server's name, version and protocol extensions; free with braid_server_info_free. */
braid_status braid_server_metadata (braid_client *c, braid_server_info **out, char *err, size_t errlen);
void         braid_server_info_free(braid_server_info *info);

/* ---- models --------------------------------------------------------------------------- */
/* VERSION arguments may be NULL or "": the server picks its newest ready version. */

typedef struct braid_tensor_info {
    char    *name;
    char    *datatype;          /* "FP32", "INT64", "BYTES", ... */
    int64_t *shape;             /* -1 marks a variable dimension */
    int      ndim;
} braid_tensor_info;

typedef struct braid_model_info {
    char              *name;
    char              *platform;  /* "onnx", ... */
    char             **versions;
    size_t             n_versions;
    braid_tensor_info *inputs;
    size_t             n_inputs;
    braid_tensor_info *outputs;
    size_t             n_outputs;
} braid_model_info;

/* MODEL's signature; free with braid_model_info_free. */
braid_status braid_model_metadata  (braid_client *c, const char *model, const char *version,
                                    braid_model_info **out, char *err, size_t errlen);
void         braid_model_info_free (braid_model_info *info);
braid_status braid_model_ready     (braid_client *c, const char *model, const char *version,
                                    bool *ready, char *err, size_t errlen);

/* Load (or hot-reload) MODEL from the server's repository. CONFIG_JSON (may be NULL) is a
 * model configuration sent as the "config" parameter. Returns once the server has
 * finished loading (a failed load reports the server's reason). */
braid_status braid_model_load      (braid_client *c, const char *model, const char *config_json,
                                    char *err, size_t errlen);
/* Upload BYTES (an ONNX model) as MODEL's version VERSION ("file:<VERSION>/model.onnx") and
 * load it; CONFIG_JSON as for braid_model_load. The server must allow uploads. */
braid_status braid_model_load_bytes(braid_client *c, const char *model, const char *version,
                                    const void *bytes, size_t nbytes, const char *config_json,
                                    char *err, size_t errlen);
/* One file of a model upload: PATH inside the version directory ("model.pb",
 * "model.savedmodel/variables/variables.index"), its NBYTES bytes (borrowed). */
typedef struct braid_model_file {
    const char *path;
    const void *bytes;
    size_t      nbytes;
} braid_model_file;
/* Upload the N FILES (at most 1000) as MODEL's version VERSION ("file:<VERSION>/<path>" each:
 * a SavedModel directory, a TF.js model and its shards, ...) and load it; CONFIG_JSON as for
 * braid_model_load. The server must allow uploads. */
braid_status braid_model_load_files(braid_client *c, const char *model, const char *version,
                                    const braid_model_file *files, size_t n,
                                    const char *config_json, char *err, size_t errlen);
/* Unload MODEL; requests already running on the server finish first. */
braid_status braid_model_unload    (braid_client *c, const char *model, char *err, size_t errlen);

typedef struct braid_repository_entry {
    char *name;
    char *version;              /* "" when the model has no loaded version */
    char *state;                /* "READY", "LOADING", "UNAVAILABLE" */
    char *reason;               /* why it is not ready, "" otherwise */
} braid_repository_entry;

typedef struct braid_repository_list {
    braid_repository_entry *models;
    size_t                  n_models;
} braid_repository_list;

/* Every model in the server's repository (READY ones only if READY_ONLY); free with
 * braid_repository_list_free. */
braid_status braid_repository_index     (braid_client *c, bool ready_only,
                                         braid_repository_list **out, char *err, size_t errlen);
void         braid_repository_list_free(braid_repository_list *index);

/* ---- statistics ---------------------------------------------------------------------- */

typedef struct braid_duration {
    uint64_t count;
    uint64_t ns;                /* cumulative nanoseconds */
} braid_duration;

typedef struct braid_model_stats {
    char          *name;
    char          *version;
    uint64_t       last_inference_ms;   /* milliseconds since the epoch, 0 = never */
    uint64_t       inference_count;
    uint64_t       execution_count;
    braid_duration success, fail, queue, compute_input, compute_infer, compute_output;
} braid_model_stats;

typedef struct braid_statistics {
    braid_model_stats *models;
    size_t             n_models;
} braid_statistics;

/* Counters of MODEL (NULL or "": every model) at VERSION; free with braid_statistics_free. */
braid_status braid_model_statistics(braid_client *c, const char *model, const char *version,
                                    braid_statistics **out, char *err, size_t errlen);
void         braid_statistics_free (braid_statistics *stats);

/* ---- inference ----------------------------------------------------------------------- */

/* One input as a raw, row-major buffer (borrowed for the duration of the call). A BYTES
 * element is a 4-byte little-endian length followed by its bytes. */
typedef struct braid_tensor {
    const char    *name;
    const char    *datatype;    /* "FP32", "INT64", ... */
    const int64_t *shape;
    int            ndim;
    const void    *data;
    size_t         nbytes;
} braid_tensor;

/* Describe the CPU, row-major DLTensor T (strides NULL or compact) as input NAME; OUT
 * borrows T's shape and data. Fails with BRAID_E_ARG for a dtype the protocol lacks, a
 * non-CPU device or strided memory. */
braid_status braid_tensor_from_dl(const char *name, const DLTensor *t, braid_tensor *out,
                                  char *err, size_t errlen);

/* The protocol datatype of DTYPE ("FP32"), or NULL; and back (false if unknown or BYTES). */
const char  *braid_datatype_from_dl(DLDataType dtype);
bool         braid_datatype_to_dl  (const char *datatype, DLDataType *out);
/* Bytes per element of DATATYPE; 0 for BYTES or an unknown name. */
size_t       braid_datatype_size   (const char *datatype);

typedef struct braid_infer_request {
    const char         *model;
    const char         *version;    /* NULL or "": newest ready */
    const char         *id;         /* NULL: none; echoed in the result */
    const braid_tensor *inputs;
    size_t              n_inputs;
    const char *const  *outputs;    /* names to return; NULL/0: every output */
    size_t              n_outputs;
} braid_infer_request;

typedef struct braid_infer_result braid_infer_result;

/* Run REQ on the server. On success *OUT holds the outputs; free it with
 * braid_infer_result_free. */
braid_status braid_model_infer   (braid_client *c, const braid_infer_request *req,
                                  braid_infer_result **out, char *err, size_t errlen);
/* As braid_model_infer, with the N inputs given as DLTensors named NAMES[i]. */
braid_status braid_model_infer_dl(braid_client *c, const char *model, const char *version,
                                  const char *const *names, const DLTensor *inputs, size_t n,
                                  braid_infer_result **out, char *err, size_t errlen);

const char  *braid_infer_result_model  (const braid_infer_result *r);
const char  *braid_infer_result_version(const braid_infer_result *r);
const char  *braid_infer_result_id     (const braid_infer_result *r);   /* "" if none */
size_t       braid_infer_result_num_outputs(const braid_infer_result *r);
/* Output I's name, datatype, shape (*NDIM dims, owned by R) and data (64-byte aligned,
 * *NBYTES bytes, owned by R). I out of range gives NULL. */
const char  *braid_infer_result_name    (const braid_infer_result *r, size_t i);
const char  *braid_infer_result_datatype(const braid_infer_result *r, size_t i);
const int64_t *braid_infer_result_shape (const braid_infer_result *r, size_t i, int *ndim);
const void  *braid_infer_result_data    (const braid_infer_result *r, size_t i, size_t *nbytes);
/* Index of the output called NAME, or -1. */
long         braid_infer_result_find    (const braid_infer_result *r, const char *name);
/* Output I as a DLManagedTensor that shares R's memory (no copy) and keeps it alive:
 * the caller calls (*OUT)->deleter(*OUT) when done, before or after freeing R. BYTES
 * outputs cannot be expressed (BRAID_E_ARG). */
braid_status braid_infer_result_dl      (braid_infer_result *r, size_t i, DLManagedTensor **out,
                                         char *err, size_t errlen);
/* Release the caller's reference to R (DLManagedTensors taken from it stay valid). */
void         braid_infer_result_free    (braid_infer_result *r);

#ifdef __cplusplus
}
#endif

#endif
