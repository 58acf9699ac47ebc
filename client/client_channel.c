/* The client object: channel, registered methods, and the unary call every RPC uses. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <pb_decode.h>
#include <pb_encode.h>

#include "client/client_internal.h"
#include "proto/wire_span.h"

#define DEFAULT_TIMEOUT_MS   10000
#define DEFAULT_LOAD_TIMEOUT_MS 120000
#define DEFAULT_MAX_MESSAGE  ((size_t)256 << 20)

static const char *const method_paths[BC_N_METHODS] = {
    [BC_SERVER_LIVE]       = "/inference.GRPCInferenceService/ServerLive",
    [BC_SERVER_READY]      = "/inference.GRPCInferenceService/ServerReady",
    [BC_MODEL_READY]       = "/inference.GRPCInferenceService/ModelReady",
    [BC_SERVER_METADATA]   = "/inference.GRPCInferenceService/ServerMetadata",
    [BC_MODEL_METADATA]    = "/inference.GRPCInferenceService/ModelMetadata",
    [BC_MODEL_INFER]       = "/inference.GRPCInferenceService/ModelInfer",
    [BC_MODEL_STATISTICS]  = "/inference.GRPCInferenceService/ModelStatistics",
    [BC_REPOSITORY_INDEX]  = "/inference.GRPCInferenceService/RepositoryIndex",
    [BC_REPOSITORY_LOAD]   = "/inference.GRPCInferenceService/RepositoryModelLoad",
    [BC_REPOSITORY_UNLOAD] = "/inference.GRPCInferenceService/RepositoryModelUnload",
};

const char *braid_status_name(braid_status status)
{
    static const char *const grpc_names[] = {
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    if (status >= 0 && status <= 16)
        return grpc_names[status];
    switch (status) {
    case BRAID_E_ARG:      return "E_ARG";
    case BRAID_E_NOMEM:    return "E_NOMEM";
    case BRAID_E_PROTOCOL: return "E_PROTOCOL";
    case BRAID_E_GRPC:     return "E_GRPC";
    default:               return "UNKNOWN_STATUS";
    }
}

braid_status bc_fail(char *err, size_t errlen, braid_status status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

braid_status bc_ok(char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    return BRAID_OK;
}

char *bc_strdup(const char *s)
{
    return strdup(s ? s : "");
}

static gpr_timespec deadline_after(int ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* Wait until CH is connected, it fails, or DEADLINE passes. Returns the last state. */
static grpc_connectivity_state wait_connected(grpc_channel *ch, gpr_timespec deadline)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_connectivity_state st = grpc_channel_check_connectivity_state(ch, 1);
    int tag;
    /* Bounded: each round ends at a state change or at the deadline. */
    while (st != GRPC_CHANNEL_READY && st != GRPC_CHANNEL_TRANSIENT_FAILURE &&
           st != GRPC_CHANNEL_SHUTDOWN) {
        grpc_channel_watch_connectivity_state(ch, st, deadline, cq, &tag);
        grpc_event ev = grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE || !ev.success)
            break;   /* deadline */
        st = grpc_channel_check_connectivity_state(ch, 0);
    }
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
    return st;
}

/* PATH's whole content, NUL-terminated (PEM is text); NULL when it cannot be read. */
static char *read_pem(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc((1 << 20) + 1);
    size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    if (!buf || n == 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static bool set(const char *s) { return s && *s; }

/* Channel credentials for O: TLS (with a client certificate) when a CA file is given. */
static braid_status credentials(const braid_client_options *o, grpc_channel_credentials **out,
                                char *err, size_t errlen)
{
    if (!set(o->tls_ca_file)) {
        if (set(o->tls_cert_file) || set(o->tls_key_file))
            return bc_fail(err, errlen, BRAID_E_ARG, "a client certificate needs TLS: give the "
                           "server's CA file too (--tls-ca)");
        *out = grpc_insecure_credentials_create();
        return BRAID_OK;
    }
    if (set(o->tls_cert_file) != set(o->tls_key_file))
        return bc_fail(err, errlen, BRAID_E_ARG, "a client certificate and its key go together "
                       "(--tls-cert and --tls-key)");
    const char *paths[3] = { o->tls_ca_file, o->tls_cert_file, o->tls_key_file };
    char *pem[3] = { NULL, NULL, NULL };
    braid_status rc = BRAID_OK;
    for (int i = 0; i < 3 && rc == BRAID_OK; i++)
        if (set(paths[i]) && !(pem[i] = read_pem(paths[i])))
            rc = bc_fail(err, errlen, BRAID_E_ARG, "cannot read %s", paths[i]);
    if (rc == BRAID_OK) {
        grpc_ssl_pem_key_cert_pair pair = { .private_key = pem[2], .cert_chain = pem[1] };
        *out = grpc_ssl_credentials_create(pem[0], pem[1] ? &pair : NULL, NULL, NULL);
        if (!*out)
            rc = bc_fail(err, errlen, BRAID_E_ARG, "cannot create TLS credentials from %s",
                         o->tls_ca_file);
    }
    for (int i = 0; i < 3; i++)
        free(pem[i]);
    return rc;
}

braid_status braid_client_connect(const char *target, const braid_client_options *opts,
                                  braid_client **out, char *err, size_t errlen)
{
    if (!target || !*target || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_client_connect: a target (host:port) and OUT are required");
    braid_client_options o = opts ? *opts : (braid_client_options){ 0 };
    if (o.timeout_ms < 0)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_client_connect: timeout_ms must be >= 0, got %d", o.timeout_ms);
    size_t max_msg = o.max_message_bytes ? o.max_message_bytes : DEFAULT_MAX_MESSAGE;
    braid_client *c = calloc(1, sizeof *c);
    if (!c || !(c->target = strdup(target))) {
        free(c);
        return bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    }
    c->timeout_ms = o.timeout_ms ? o.timeout_ms : DEFAULT_TIMEOUT_MS;
    c->load_timeout_ms = o.load_timeout_ms > 0 ? o.load_timeout_ms : DEFAULT_LOAD_TIMEOUT_MS;
    grpc_init();
    grpc_arg args[2] = {
        { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
          .value.integer = max_msg > INT_MAX ? INT_MAX : (int)max_msg },
        { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH,
          .value.integer = max_msg > INT_MAX ? INT_MAX : (int)max_msg },
    };
    grpc_channel_args cargs = { .num_args = 2, .args = args };
    if (set(o.token)) {
        if (strpbrk(o.token, "\r\n") || asprintf(&c->authz, "Bearer %s", o.token) < 0) {
            c->authz = NULL;
            braid_client_close(c);
            return bc_fail(err, errlen, BRAID_E_ARG, "the token must be one line of text");
        }
    }
    grpc_channel_credentials *creds = NULL;
    braid_status cst = credentials(&o, &creds, err, errlen);
    if (cst != BRAID_OK) {
        braid_client_close(c);
        return cst;
    }
    c->channel = grpc_channel_create(target, creds, &cargs);
    grpc_channel_credentials_release(creds);
    if (!c->channel) {
        braid_client_close(c);
        return bc_fail(err, errlen, BRAID_E_GRPC, "cannot create a channel to '%s'", target);
    }
    for (int m = 0; m < BC_N_METHODS; m++)
        c->methods[m] = grpc_channel_register_call(c->channel, method_paths[m], NULL, NULL);
    if (!o.lazy) {
        grpc_connectivity_state st = wait_connected(c->channel, deadline_after(c->timeout_ms));
        if (st != GRPC_CHANNEL_READY) {
            braid_client_close(c);
            return bc_fail(err, errlen, BRAID_UNAVAILABLE, "cannot reach braidd at %s: %s", target,
                           st == GRPC_CHANNEL_TRANSIENT_FAILURE ? "connection failed"
                                                                : "no answer before the deadline");
        }
    }
    *out = c;
    return bc_ok(err, errlen);
}

void braid_client_close(braid_client *c)
{
    if (!c)
        return;
    if (c->channel) {
        grpc_channel_destroy(c->channel);
    }
    free(c->target);
    free(c->authz);
    free(c);
    /* Blocking: a process that exits right after close leaves no gRPC threads behind. */
    grpc_shutdown_blocking();
}

const char *braid_client_target(const braid_client *c)
{
    return c ? c->target : NULL;
}

/* Encode REQ into a fresh byte buffer (NULL when encoding fails; *WHY says why). */
static grpc_byte_buffer *encode(const bc_request *req, const char **why)
{
    size_t size = 0;
    if (!pb_get_encoded_size(&size, req->fields, req->msg)) {
        *why = "cannot size the request";
        return NULL;
    }
    grpc_slice slices[1 + 2 * 64];
    if (req->n_tail > sizeof slices / sizeof slices[0] - 1) {
        *why = "too many tensors in one request";
        return NULL;
    }
    slices[0] = grpc_slice_malloc(size);
    pb_ostream_t os = pb_ostream_from_buffer(GRPC_SLICE_START_PTR(slices[0]), size);
    if (!pb_encode(&os, req->fields, req->msg)) {
        *why = PB_GET_ERROR(&os);
        grpc_slice_unref(slices[0]);
        return NULL;
    }
    for (size_t i = 0; i < req->n_tail; i++)
        slices[1 + i] = req->tail[i];
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(slices, 1 + req->n_tail);
    grpc_slice_unref(slices[0]);
    return bb;
}

void bc_reply_free(bc_reply *reply)
{
    if (!reply)
        return;
    bd_wire_reader_free(&reply->rd);
    grpc_slice_unref(reply->buf);
    reply->buf = grpc_empty_slice();
}

/* Decode BB into MSG. Tensor payloads become spans into the received bytes, which
 * bd_wire_decode needs contiguous: one slice, or all of them joined (gRPC joins them
 * without a copy when the message arrived in one slice). */
static bool decode(grpc_byte_buffer *bb, const pb_msgdesc_t *fields, void *msg, bc_reply *reply,
                   const char **why)
{
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb)) {
        *why = "cannot read the response buffer";
        return false;
    }
    reply->buf = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    bool ok = bd_wire_decode(&reply->rd, GRPC_SLICE_START_PTR(reply->buf), GRPC_SLICE_LENGTH(reply->buf),
                             fields, msg);
    if (!ok)
        *why = reply->rd.error;
    return ok;
}

braid_status bc_unary(braid_client *c, bc_method method, const bc_request *req,
                      const pb_msgdesc_t *resp_fields, void *resp, bc_reply *reply,
                      char *err, size_t errlen)
{
    bc_reply own = { .buf = grpc_empty_slice(), .rd = BD_WIRE_READER_INIT };
    bc_reply *rp = reply ? reply : &own;
    *rp = own;
    const char *why = NULL;
    grpc_byte_buffer *send = encode(req, &why);
    if (!send)
        return bc_fail(err, errlen, BRAID_E_ARG, "cannot encode the request: %s", why ? why : "?");

    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_call *call = grpc_channel_create_registered_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                                          c->methods[method],
                                                          deadline_after(req->timeout_ms ? req->timeout_ms
                                                                                         : c->timeout_ms),
                                                          NULL);
    grpc_metadata_array initial_md, trailing_md;
    grpc_metadata_array_init(&initial_md);
    grpc_metadata_array_init(&trailing_md);
    grpc_byte_buffer *recv = NULL;
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    grpc_metadata authz;
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (c->authz) {
        memset(&authz, 0, sizeof authz);
        authz.key = grpc_slice_from_static_string("authorization");
        authz.value = grpc_slice_from_static_string(c->authz);
        ops[0].data.send_initial_metadata.count = 1;
        ops[0].data.send_initial_metadata.metadata = &authz;
    }
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[5].data.recv_status_on_client.status = &code;
    ops[5].data.recv_status_on_client.status_details = &details;

    braid_status rc;
    int tag;
    if (!call || grpc_call_start_batch(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
        rc = bc_fail(err, errlen, BRAID_E_GRPC, "cannot start the call %s", method_paths[method]);
    } else {
        /* The call's deadline bounds this wait. */
        grpc_event ev = grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE) {
            rc = bc_fail(err, errlen, BRAID_E_GRPC, "the call %s did not complete", method_paths[method]);
        } else if (code != GRPC_STATUS_OK) {
            char *msg = grpc_slice_to_c_string(details);
            /* A transport failure (nothing came back from braidd) names the target. */
            if (code == GRPC_STATUS_UNAVAILABLE && initial_md.count == 0 && strstr(msg, "connect"))
                rc = bc_fail(err, errlen, BRAID_UNAVAILABLE, "cannot reach braidd at %s: %s", c->target, msg);
            else
                rc = bc_fail(err, errlen, (braid_status)code, "%s", msg[0] ? msg : braid_status_name((int)code));
            gpr_free(msg);
        } else if (!recv) {
            rc = bc_fail(err, errlen, BRAID_E_PROTOCOL, "%s: the server sent no response message",
                         method_paths[method]);
        } else if (!decode(recv, resp_fields, resp, rp, &why)) {
            rc = bc_fail(err, errlen, BRAID_E_PROTOCOL, "%s: malformed response: %s",
                         method_paths[method], why ? why : "?");
        } else {
            rc = bc_ok(err, errlen);
        }
    }
    /* Unref the call before returning: borrowed tail slices must not outlive it. */
    if (call)
        grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
    grpc_byte_buffer_destroy(send);
    if (recv)
        grpc_byte_buffer_destroy(recv);
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&initial_md);
    grpc_metadata_array_destroy(&trailing_md);
    if (!reply || rc != BRAID_OK)
        bc_reply_free(rp);
    return rc;
}

braid_status bc_simple(braid_client *c, bc_method method,
                       const pb_msgdesc_t *req_fields, const void *req,
                       const pb_msgdesc_t *resp_fields, void *resp,
                       char *err, size_t errlen)
{
    bc_request r = { .fields = req_fields, .msg = req };
    return bc_unary(c, method, &r, resp_fields, resp, NULL, err, errlen);
}
