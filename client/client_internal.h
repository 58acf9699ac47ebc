/* libbraid-client internals: the client object and the one unary-call helper every RPC
 * goes through. Not installed. */
#ifndef BD_CLIENT_CLIENT_INTERNAL_H
#define BD_CLIENT_CLIENT_INTERNAL_H

#include <stdarg.h>

#include <grpc/grpc.h>
#include <pb.h>
#include <pb_decode.h>

#include "client/braid_client.h"
#include "proto/wire_span.h"

/* The RPCs, indexing braid_client.methods (registered once per channel). */
typedef enum bc_method {
    BC_SERVER_LIVE,
    BC_SERVER_READY,
    BC_MODEL_READY,
    BC_SERVER_METADATA,
    BC_MODEL_METADATA,
    BC_MODEL_INFER,
    BC_MODEL_STATISTICS,
    BC_REPOSITORY_INDEX,
    BC_REPOSITORY_LOAD,
    BC_REPOSITORY_UNLOAD,
    BC_N_METHODS
} bc_method;

struct braid_client {
    grpc_channel *channel;
    void         *methods[BC_N_METHODS];   /* grpc_channel_register_call handles */
    char         *target;
    int           timeout_ms;
    int           load_timeout_ms;
    char         *authz;                   /* "Bearer TOKEN", or NULL */
};

/* Write a printf-style message into ERR (may be NULL) and return STATUS. */
braid_status bc_fail(char *err, size_t errlen, braid_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Mark success: ERR = "" (when given); returns BRAID_OK. */
braid_status bc_ok(char *err, size_t errlen);

/* The received bytes behind a decoded response: tensor payload spans point into BUF and
 * their lists live in RD, so a reply outlives the reading of its spans. */
typedef struct bc_reply {
    grpc_slice     buf;
    bd_wire_reader rd;
} bc_reply;

/* Free REPLY's buffer and span lists (after pb_release of the message). NULL allowed. */
void bc_reply_free(bc_reply *reply);

/* A request: REQ encoded with FIELDS, then TAIL[0..N_TAIL) appended as-is (borrowed
 * slices carrying pre-framed repeated fields, so tensor bytes are not copied). */
typedef struct bc_request {
    const pb_msgdesc_t *fields;
    const void         *msg;
    const grpc_slice   *tail;
    size_t              n_tail;
    int                 timeout_ms;   /* 0: the client's timeout_ms */
} bc_request;

/* Run METHOD on C with C's deadline. On BRAID_OK decodes the answer into RESP
 * (RESP_FIELDS; zero-initialized by the caller, who pb_releases it whatever the outcome) and fills
 * *REPLY (the caller frees it with bc_reply_free; REPLY NULL: freed here, so RESP must not
 * hold spans). Non-OK gRPC statuses come back with the server's message in ERR; a
 * transport failure names the target. */
braid_status bc_unary(braid_client *c, bc_method method, const bc_request *req,
                      const pb_msgdesc_t *resp_fields, void *resp, bc_reply *reply,
                      char *err, size_t errlen);

/* bc_unary for a plain request message with no tail and a reply freed at once. */
braid_status bc_simple(braid_client *c, bc_method method,
                       const pb_msgdesc_t *req_fields, const void *req,
                       const pb_msgdesc_t *resp_fields, void *resp,
                       char *err, size_t errlen);

/* strdup that turns NULL into "". Returns NULL only when out of memory. */
char *bc_strdup(const char *s);

#endif
