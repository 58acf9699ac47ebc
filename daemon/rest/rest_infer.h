/* The KServe v2 REST infer body, both ways, with Triton's binary tensor extension
 * (docs/protocol.md, "HTTP/REST").
 *
 *   bd_rest_json_check      bound a JSON text before cJSON allocates anything for it
 *   bd_rest_infer_request   a REST infer body -> the neutral request both ports hand to the
 *                           one ModelInfer handler (daemon/infer/infer_request.h: one
 *                           binding, one scheduler, one set of limits and statistics; no
 *                           protobuf on the way): JSON "data" is converted to raw
 *                           little-endian bytes, binary inputs are views into the bytes after
 *                           the JSON header
 *   bd_rest_infer_response  the handler's answer (daemon/infer/infer_reply.h) -> the REST
 *                           body: JSON "data" or, per output, binary bytes after the JSON
 *                           header
 *
 * Shared memory (Triton's extension): an input's or output's "shared_memory_region",
 * "shared_memory_byte_size" and "shared_memory_offset" parameters become the tensor's shm
 * reference (infer_bind.c checks it); such an input has no "data" and no binary bytes, such
 * an output no "data" in the response.
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

#include "core/error.h"
#include "daemon/infer/infer_reply.h"
#include "daemon/infer/infer_request.h"

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

/* A REST infer request: the neutral request and what its views point into. */
typedef struct bd_rest_request bd_rest_request;

/* Read BODY[0..LEN) (NUL after it) as a request for MODEL / VERSION (NULL or "" = the newest;
 * both copied) into *OUT. HEADER_LENGTH: the Inference-Header-Content-Length header's value
 * (NULL = the whole body is JSON). OUTS receives the outputs' binary flags. BODY must outlive
 * *OUT: its binary inputs are views into it (bd_rest_request_adopt hands it over).
 * BD_EINVAL / BD_ENOMEM with ERR naming what to fix; *OUT is then NULL. */
int  bd_rest_infer_request(const char *body, size_t len, const char *header_length,
                           const char *model, const char *version, bd_rest_request **out,
                           bd_rest_outputs *outs, bd_error *err);
const bd_infer_request *bd_rest_request_get(const bd_rest_request *r);
/* R frees BODY (malloc'ed, the one it was read from; NULL = nothing to free) with itself. */
void bd_rest_request_adopt(bd_rest_request *r, char *body);
void bd_rest_request_free(bd_rest_request *r);                      /* NULL is allowed */

/* The REST body for RSP: JSON, then the binary outputs' bytes. *BODY is malloc'ed (*LEN
 * bytes); *JSON_LEN is the JSON's length, == *LEN when no output is binary. A body over
 * MAX_BYTES is refused (BD_EINVAL) before it is allocated whole. */
int  bd_rest_infer_response(const bd_infer_reply *rsp, const bd_rest_outputs *outs,
                            size_t max_bytes, char **body, size_t *len, size_t *json_len,
                            bd_error *err);

#endif
