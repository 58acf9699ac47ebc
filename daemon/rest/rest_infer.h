/* The KServe v2 REST infer body, both ways, with Triton's binary tensor extension
 * (docs/protocol.md, "HTTP/REST").
 *
 *   bd_rest_json_check      bound a JSON text before cJSON allocates anything for it
 *   bd_rest_infer_request   a REST infer body -> the encoded inference.ModelInferRequest the
 *                           gRPC path decodes (so both transports share one binding, one
 *                           scheduler, one set of limits and statistics): JSON "data" is
 *                           converted to raw little-endian bytes, binary inputs are sliced
 *                           from the bytes after the JSON header
 *   bd_rest_infer_response  a ModelInferResponse -> the REST body: JSON "data" or, per
 *                           output, binary bytes after the JSON header
 *
 * Shared memory (Triton's extension): an input's or output's "shared_memory_region",
 * "shared_memory_byte_size" and "shared_memory_offset" parameters pass into the gRPC
 * message's tensor parameters (infer_bind.c checks them); such an input has no "data" and no
 * binary bytes, such an output no "data" in the response.
 *
 * Hostile input: the JSON text is scanned first (at most BD_REST_MAX_JSON_VALUES values,
 * nesting at most BD_REST_MAX_JSON_DEPTH), every tensor's elements are counted and checked
 * against its shape before its buffer is allocated, every binary_data_size must fit in the
 * bytes that follow the header and together use them exactly, and every product is
 * overflow-checked. Errors are BD_EINVAL naming the tensor (HTTP 400). No server state:
 * tests/fuzz/fuzz_rest.c runs exactly this code. */
#ifndef BD_DAEMON_REST_REST_INFER_H
#define BD_DAEMON_REST_REST_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/inference.pb.h"
#include "core/error.h"

#define BD_REST_MAX_JSON_VALUES (1u << 21)  /* JSON values in one body (cJSON: ~64 B each) */
#define BD_REST_MAX_JSON_DEPTH  64

/* How the response carries each output. Zero-initialize; free with bd_rest_outputs_free. */
typedef struct bd_rest_outputs {
    bool    binary_all;         /* request parameter binary_data_output */
    size_t  n;                  /* outputs the request names, in its order (0 = all) */
    bool   *binary;             /* per named output: its binary_data parameter */
    bool   *shm;                /* per named output: written to shared memory (no data); NULL = none */
    uint64_t timeout_us;        /* request parameter "timeout" (Triton's, microseconds); 0 = none */
} bd_rest_outputs;

void bd_rest_outputs_free(bd_rest_outputs *o);

/* TEXT[0..LEN) holds at most MAX_VALUES JSON values nested at most MAX_DEPTH deep (an upper
 * bound counted without parsing). BD_EINVAL saying which limit, else 0. */
int  bd_rest_json_check(const char *text, size_t len, size_t max_values, int max_depth,
                        bd_error *err);

/* Turn BODY[0..LEN) into an encoded ModelInferRequest for MODEL / VERSION ("" = the newest)
 * in *OUT (malloc'ed, *OUT_LEN bytes). HEADER_LENGTH: the Inference-Header-Content-Length
 * header's value (NULL = the whole body is JSON). OUTS receives the outputs' binary flags.
 * BD_EINVAL / BD_ENOMEM with ERR naming what to fix. */
int  bd_rest_infer_request(const char *body, size_t len, const char *header_length,
                           const char *model, const char *version, uint8_t **out,
                           size_t *out_len, bd_rest_outputs *outs, bd_error *err);

/* The REST body for RSP: JSON, then the binary outputs' bytes. *BODY is malloc'ed (*LEN
 * bytes); *JSON_LEN is the JSON's length, == *LEN when no output is binary. A body over
 * MAX_BYTES is refused (BD_EINVAL) before it is allocated whole. */
int  bd_rest_infer_response(const inference_ModelInferResponse *rsp, const bd_rest_outputs *outs,
                            size_t max_bytes, char **body, size_t *len, size_t *json_len,
                            bd_error *err);

#endif
