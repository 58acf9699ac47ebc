/* ModelStreamInfer: Triton's bidirectional stream of ModelInferRequest in,
 * ModelStreamInferResponse out (docs/protocol.md, "Streaming").
 *
 * Each request read runs as a local ModelInfer call (bd_server_dispatch: the same checks,
 * scheduler, statistics and limits as a unary call); its answer is wrapped — the
 * ModelInferResponse, or error_message with the request's id — and written in the order the
 * requests arrived, as Triton does for non-decoupled models. Every request gets exactly one
 * response; one request's error never ends the stream.
 *
 * Bounds: at most STREAM_MAX_IN_FLIGHT requests per stream are read but not yet answered
 * on the wire, holding at most about STREAM_MAX_HELD_BYTES of request and response bytes
 * (plus one message); at either limit the stream stops reading (HTTP/2 flow control then
 * holds the client back) until responses have been written. So a client that sends without
 * reading costs a bounded amount of memory.
 *
 * Endings: half-close -> the requests in flight finish, their responses are written, then
 * OK. Cancel / deadline / dead connection -> the requests in flight are cancelled (what is
 * still queued is dropped, what runs finishes), their responses discarded. Server stopping
 * -> no more reads; the requests in flight finish (or the drain drops them), their responses
 * are written, then UNAVAILABLE "braidd is shutting down".
 *
 * Threads: hooks on the cq thread (reads, writes, cancellation), the loop (stopping), the
 * workers (answers: a local call's reply). Everything below is under the stream's lock;
 * every entry holds the call, so the state (freed with the call) outlives the lock. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>

#include "proto/inference.pb.h"
#include "daemon/log.h"
#include "daemon/grpc/rpc.h"

#define STREAM_MAX_IN_FLIGHT  64
#define STREAM_MAX_HELD_BYTES ((size_t)64 << 20)
#define STREAM_MAX_ID         4096        /* longer ids are not echoed in error responses */

static const char infer_path[] = "/inference.GRPCInferenceService/ModelInfer";

typedef struct stream stream;

/* One request in flight, from its read until its response is handed to gRPC. */
typedef struct slot {
    stream          *st;
    bool             done;          /* answered: RSP is its response (NULL: none to write) */
    bd_call_msg     *rsp;
    bd_dispatch_cancel *cancel;
    size_t           bytes;         /* its request's and response's bytes, in HELD */
    char            *id;            /* for an error response; NULL: none readable */
} slot;

struct stream {
    pthread_mutex_t lock;
    bd_call        *call;
    slot            slots[STREAM_MAX_IN_FLIGHT];   /* a ring: [head, tail) in arrival order */
    uint64_t        head, tail;
    size_t          held;           /* bytes of the slots' requests and responses */
    bool            reading, writing;
    bool            no_more;        /* the client half-closed (or a read failed) */
    int             read_error;     /* BD_E* when a message could not be read */
    bool            stopping;       /* the server is shutting down */
    bool            cancelled;      /* the call is over: answers are dropped */
    bool            finished;       /* the status was sent */
};

static void stream_free(void *p)
{
    stream *st = p;
    pthread_mutex_destroy(&st->lock);
    free(st);
}

/* ---- request ids ----------------------------------------------------------------------------- */

static bool valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t b = s[i];
        size_t k = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : 4;
        if (b == 0 || k == 4 || (k == 1 && b < 0xC2) || n - i <= k)
            return false;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

/* The request's top-level `id` (field 3), read without decoding the rest: an error response
 * echoes it even when the request is malformed further on. NULL when absent, unreadable, too
 * long, not UTF-8 without NULs (a client could not parse it back), or out of memory. */
static char *request_id(const uint8_t *msg, size_t len)
{
    pb_istream_t is = pb_istream_from_buffer(msg, len);
    const uint8_t *id = NULL;
    uint32_t id_len = 0;
    pb_wire_type_t wt;
    uint32_t tag;
    bool eof;
    while (pb_decode_tag(&is, &wt, &tag, &eof)) {
        if (tag == inference_ModelInferRequest_id_tag && wt == PB_WT_STRING) {
            uint32_t n;
            if (!pb_decode_varint32(&is, &n) || n > is.bytes_left)
                break;
            id = (const uint8_t *)is.state;     /* proto3: the last one wins */
            id_len = n;
            if (!pb_read(&is, NULL, n))
                break;
        } else if (!pb_skip_field(&is, wt)) {
            break;
        }
    }
    if (!id || id_len > STREAM_MAX_ID || !valid_utf8(id, id_len))
        return NULL;
    char *out = malloc(id_len + 1u);
    if (out) {
        memcpy(out, id, id_len);
        out[id_len] = '\0';
    }
    return out;
}

/* ---- the pump ---------------------------------------------------------------------------------- */

/* Do what the state allows now: write the oldest answered response, read the next request,
 * or end the call. ST->lock held; the caller holds the call. */
static void pump(stream *st)
{
    /* responses, in arrival order; after a cancellation they are only dropped */
    while (!st->writing && st->head != st->tail && st->slots[st->head % STREAM_MAX_IN_FLIGHT].done) {
        slot *sl = &st->slots[st->head % STREAM_MAX_IN_FLIGHT];
        bd_call_msg *m = sl->rsp;
        sl->rsp = NULL;
        st->held -= sl->bytes;
        bd_dispatch_cancel_release(sl->cancel);
        sl->cancel = NULL;
        free(sl->id);
        sl->id = NULL;
        st->head++;
        if (st->cancelled || st->finished || !m) {
            bd_call_msg_free(m);
            continue;
        }
        if (bd_call_stream_write(st->call, m))
            st->writing = true;
        else
            st->cancelled = true;       /* gRPC refused: the call is over */
    }
    /* the next request, while under the bounds */
    if (!st->reading && !st->no_more && !st->stopping && !st->cancelled && !st->finished &&
        st->tail - st->head < STREAM_MAX_IN_FLIGHT && st->held < STREAM_MAX_HELD_BYTES) {
        if (bd_call_stream_read(st->call))
            st->reading = true;
        else
            st->cancelled = true;
    }
    /* the end: nothing in flight, nothing being written, nothing more to read */
    if (!st->finished && !st->writing && st->head == st->tail &&
        (st->no_more || st->stopping || st->cancelled)) {
        st->finished = true;
        if (st->cancelled)
            bd_call_fail_status(st->call, GRPC_STATUS_CANCELLED, "cancelled");
        else if (st->read_error)
            bd_call_fail(st->call, st->read_error, "cannot read a request message of the stream");
        else if (st->stopping && !st->no_more)
            bd_call_fail_status(st->call, GRPC_STATUS_UNAVAILABLE, "braidd is shutting down");
        else
            bd_call_fail_status(st->call, GRPC_STATUS_OK, NULL);
    }
}

/* Fire the cancellation of every request in flight. ST->lock held. */
static void cancel_in_flight(stream *st)
{
    for (uint64_t q = st->head; q != st->tail; q++) {
        slot *sl = &st->slots[q % STREAM_MAX_IN_FLIGHT];
        if (!sl->done)
            bd_dispatch_cancel_fire(sl->cancel);
    }
}

/* ---- answers (bd_dispatch_reply_fn: a worker, the cq thread or the loop) ------------------------- */

static void on_answer(void *arg, grpc_status_code status, const char *message,
                      const pb_msgdesc_t *fields, const void *msg)
{
    slot *sl = arg;
    stream *st = sl->st;
    bd_call *call = st->call;
    inference_ModelStreamInferResponse rsp = { .has_infer_response = true };
    bd_error err = {0};
    bd_call_msg *m = NULL;
    int rc = -1;
    if (status == GRPC_STATUS_OK && fields == inference_ModelInferResponse_fields && msg) {
        rsp.infer_response = *(const inference_ModelInferResponse *)msg;   /* borrowed */
        rc = bd_call_msg_encode(call, inference_ModelStreamInferResponse_fields, &rsp, &m, &err);
        message = err.msg;              /* when it failed: too big for the send limit */
    } else if (status == GRPC_STATUS_OK) {
        message = "internal error: ModelInfer answered without a response";
    }
    if (rc != 0) {                      /* an error: its message and the request's id */
        memset(&rsp, 0, sizeof rsp);
        rsp.error_message = (char *)(message && message[0] ? message : "request failed");
        rsp.has_infer_response = true;
        rsp.infer_response.id = sl->id;     /* NULL: none */
        if (bd_call_msg_encode(call, inference_ModelStreamInferResponse_fields, &rsp, &m, &err) != 0)
            bd_log(BD_LOG_ERROR, NULL, NULL, "ModelStreamInfer: cannot encode an error response: %s "
                   "(the request goes unanswered)", err.msg);
    }
    pthread_mutex_lock(&st->lock);
    sl->done = true;
    sl->rsp = m;
    size_t n = m ? bd_call_msg_size(m) : 0;
    sl->bytes += n;
    st->held += n;
    pump(st);
    pthread_mutex_unlock(&st->lock);
    bd_call_unhold(call);               /* the request's */
}

/* ---- stream hooks --------------------------------------------------------------------------- */

static void on_read(bd_call *c, uint8_t *msg, size_t len, int status)
{
    stream *st = bd_call_state(c);
    pthread_mutex_lock(&st->lock);
    st->reading = false;
    if (!msg) {
        st->no_more = true;
        st->read_error = status;
        pump(st);
        pthread_mutex_unlock(&st->lock);
        return;
    }
    if (st->cancelled || st->finished) {
        pthread_mutex_unlock(&st->lock);
        free(msg);
        return;
    }
    slot *sl = &st->slots[st->tail % STREAM_MAX_IN_FLIGHT];
    *sl = (slot){ .st = st, .bytes = len, .cancel = bd_dispatch_cancel_new(),
                  .id = request_id(msg, len) };
    st->tail++;
    st->held += len;
    bd_dispatch_cancel *k = sl->cancel;
    bd_call_hold(c);                    /* the request's: released by its answer */
    pump(st);                           /* read the next one meanwhile */
    pthread_mutex_unlock(&st->lock);
    /* Outside the lock: the answer may come before this returns (a malformed request, or a
     * model run on this thread). */
    bd_dispatch_call call = { .method = infer_path, .payload = msg, .len = len,
                              .deadline_ns = bd_call_deadline_ns(c), .cancel = k,
                              .reply = on_answer, .arg = sl };
    if (bd_dispatch_run(bd_server_dispatch(bd_call_server(c)), &call) != 0)
        on_answer(sl, GRPC_STATUS_INTERNAL, "internal error: ModelInfer is not served", NULL, NULL);
}

static void on_written(bd_call *c, bool ok)
{
    stream *st = bd_call_state(c);
    pthread_mutex_lock(&st->lock);
    st->writing = false;
    if (!ok && !st->cancelled) {
        st->cancelled = true;
        cancel_in_flight(st);
    }
    pump(st);
    pthread_mutex_unlock(&st->lock);
}

static void on_cancelled(bd_call *c)
{
    stream *st = bd_call_state(c);
    pthread_mutex_lock(&st->lock);
    if (!st->cancelled) {
        st->cancelled = true;
        cancel_in_flight(st);
    }
    pump(st);
    pthread_mutex_unlock(&st->lock);
}

static void on_stopping(bd_call *c)
{
    stream *st = bd_call_state(c);
    pthread_mutex_lock(&st->lock);
    st->stopping = true;
    pump(st);
    pthread_mutex_unlock(&st->lock);
}

static const bd_stream_hooks hooks = {
    .read = on_read,
    .written = on_written,
    .cancelled = on_cancelled,
    .stopping = on_stopping,
};

/* ---- the handler (cq thread) ------------------------------------------------------------------ */

bool bd_rpc_model_stream_infer(bd_call *c)
{
    stream *st = calloc(1, sizeof *st);
    if (!st) {
        bd_call_fail(c, BD_ENOMEM, "out of memory starting the stream");
        return true;
    }
    pthread_mutex_init(&st->lock, NULL);
    st->call = c;
    bd_call_set_state(c, st, stream_free);
    bd_call_stream_start(c, &hooks);
    pthread_mutex_lock(&st->lock);
    pump(st);                           /* the first read (or the end, when stopping) */
    pthread_mutex_unlock(&st->lock);
    return true;
}

void bd_rpc_model_stream_infer_loop(bd_call *c)
{
    /* never reached over gRPC (the fast handler takes every stream); a local call has no stream */
    bd_call_fail_status(c, GRPC_STATUS_UNIMPLEMENTED, "ModelStreamInfer is a gRPC stream: open it over gRPC");
}
