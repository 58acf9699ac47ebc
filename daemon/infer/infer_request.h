/* One inference request in memory, the same for both ports: the gRPC port builds it from a
 * decoded ModelInferRequest (grpc/rpc_infer_request.h), the REST port from a JSON body
 * (rest/rest_infer.h), and both hand it to the one ModelInfer handler (grpc/rpc_infer.c),
 * which binds it to a model (infer_bind.h). Nothing here is copied: names, shapes and tensor
 * bytes are views into what the port received (or converted from JSON), owned by the port's
 * request and valid until the call is freed.
 *
 * Every field is as the client sent it: hostile until infer_bind.c has checked it. A port
 * only reads its own syntax (protobuf parameters, JSON values) into these fields; what they
 * mean (datatypes, shapes, sizes, regions, outputs) is checked once, in the binding. */
#ifndef BD_DAEMON_INFER_INFER_REQUEST_H
#define BD_DAEMON_INFER_INFER_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/wire_span.h"

#define BD_INFER_SMALL 4            /* inputs/outputs kept without allocating */

/* A tensor's place in system shared memory (Triton's extension: the parameters
 * "shared_memory_region", "shared_memory_byte_size", "shared_memory_offset"). */
typedef struct bd_infer_shm_ref {
    const char *region;             /* NULL: the tensor does not use shared memory */
    uint64_t    offset, size;
    bool        has_size;
} bd_infer_shm_ref;

/* Typed values (gRPC's InferTensorContents): per kind, the packed protobuf payload of the
 * field that carries it (proto/wire_span.h); NULL or empty = not sent. */
enum bd_infer_value_kind {
    BD_VALUES_BOOL, BD_VALUES_INT, BD_VALUES_INT64, BD_VALUES_UINT, BD_VALUES_UINT64,
    BD_VALUES_FP32, BD_VALUES_FP64, BD_VALUES_BYTES, BD_VALUES_KINDS
};

/* One input: its bytes come from exactly one of RAW, VALUES or SHM (the binding refuses two). */
typedef struct bd_infer_input {
    const char    *name;            /* never NULL ("" when absent) */
    const char    *datatype;        /* never NULL; Triton's names ("FP32", "BYTES") */
    size_t         rank;            /* SHAPE's entries, as sent (not yet bounded) */
    const int64_t *shape;
    bool           has_raw;         /* RAW holds its bytes (gRPC raw_input_contents, REST
                                       binary data or JSON data converted to raw bytes) */
    bd_wire_span   raw;
    bool           has_values;      /* VALUES holds its typed values (gRPC only) */
    const bd_wire_spans *values[BD_VALUES_KINDS];
    bd_infer_shm_ref shm;           /* shm.region set: its bytes are in shared memory */
} bd_infer_input;

/* One requested output. */
typedef struct bd_infer_output {
    const char      *name;          /* never NULL */
    uint32_t         classify;      /* Triton's "classification": K classes, 0 = the tensor */
    bd_infer_shm_ref shm;           /* shm.region set: its bytes go to shared memory */
} bd_infer_output;

/* The request. Zero-initialize; bd_infer_request_alloc sizes the tensor arrays, and
 * bd_infer_request_free releases them (the strings and bytes stay the port's). */
typedef struct bd_infer_request {
    const char      *model;         /* never NULL */
    const char      *version;       /* NULL or "" = the newest */
    const char      *id;            /* NULL = none */
    size_t           n_inputs;
    bd_infer_input  *inputs;
    size_t           n_outputs;     /* 0 = every output of the model, in its order */
    bd_infer_output *outputs;
    /* A batching model's queue placement (Triton's request parameters "priority" and
     * "timeout", microseconds): read only when the model batches, so a malformed one is
     * refused only then (BAD_QUEUE_PARAM names it). */
    uint64_t         priority, timeout_us;
    const char      *bad_queue_param;
    bd_infer_input   inputs_small[BD_INFER_SMALL];
    bd_infer_output  outputs_small[BD_INFER_SMALL];
} bd_infer_request;

/* Zeroed arrays of N_INPUTS inputs and N_OUTPUTS outputs in R (its own storage when they
 * fit); false when out of memory (R is then as bd_infer_request_free leaves it). */
bool bd_infer_request_alloc(bd_infer_request *r, size_t n_inputs, size_t n_outputs);
void bd_infer_request_free(bd_infer_request *r);         /* NULL is allowed; R is zeroed */

#endif
