/* braidd's gRPC server: the completion-queue thread, the hand-off to the libuv loop, and the
 * life of a call (see server.h for the threads and who frees what).
 *
 * A call's references: one for its close-on-server op, one for its reply (taken over by the
 * send batch), one for the handler while it runs, one per bd_call_hold. Whichever thread
 * drops the last one frees the call; only the count of live calls (which the close waits
 * on) is shared with the loop, under the server's lock. */
#include "daemon/grpc/server.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pb_decode.h>
#include <pb_encode.h>

#include "daemon/security/auth.h"
#include "daemon/log.h"
#include "daemon/stats/metrics.h"
#include "daemon/security/operation.h"
#include "daemon/registry/served_cache.h"
#include "daemon/grpc/status_map.h"
#include "daemon/security/tls_config.h"
#include "proto/wire_span.h"

#define UNREGISTERED (-1)

/* ---- objects ------------------------------------------------------------------------------ */

/* What a cq event's tag points at: which op of which call completed. */
typedef enum tag_kind { TAG_NEW, TAG_CLOSE, TAG_SEND, TAG_SHUTDOWN, TAG_READ, TAG_WRITE } tag_kind;

typedef struct srv_tag {
    tag_kind kind;
    bd_call *call;
} srv_tag;

/* What the cq thread (or a call's last release) hands to the loop. */
typedef enum loop_kind {
    LOOP_START,      /* a new call of a loop method: start it and run its handler */
    LOOP_HANDLER,    /* a fast handler passed its call on: run the loop handler */
    LOOP_SHUTDOWN,   /* gRPC's shutdown notification */
    LOOP_WAKE,       /* the last call was freed: maybe finish closing */
} loop_kind;

typedef struct loop_event {
    loop_kind kind;
    bd_call  *call;
} loop_event;

struct bd_call {
    bd_server          *srv;
    int                 method;          /* index into srv->methods, or UNREGISTERED */
    grpc_call          *call;
    gpr_timespec        deadline;        /* registered calls */
    grpc_call_details   details;         /* unregistered calls */
    grpc_metadata_array md;
    grpc_byte_buffer   *payload;
    grpc_slice          flat;            /* owned copy when the payload had to be flattened */
    bool                flat_owned;
    const uint8_t      *data;
    size_t              len;
    uint64_t            deadline_ns;
    uint64_t            cq_waited_ns;    /* the cq thread's wait for this call's arrival */
    srv_tag             tag_new, tag_close, tag_send;
    int                 close_cancelled; /* written by gRPC when the close op completes */
    atomic_bool         close_started;   /* the close op was asked for (alone or in the reply) */
    bool                close_in_reply;  /* ... as part of the reply batch */
    atomic_bool         cancelled;
    _Atomic(atomic_bool *) cancel_flag;  /* the handler's flag to set on cancellation */
    atomic_int          refs;
    atomic_bool         replied;
    grpc_byte_buffer   *send_buf;
    grpc_slice          status_details;
    bool                has_details;
    bd_wire_reader      rd;              /* decoded request: spans + heap fields */
    const pb_msgdesc_t *msg_fields;
    void               *msg;
    void               *state;
    void              (*state_free)(void *state);
    /* A local call (bd_server_dispatch) has no grpc_call: its request is LOCAL_PAYLOAD
     * (owned) and its answer goes to LOCAL_REPLY. */
    bd_dispatch_reply_fn local_reply;
    void               *local_arg;
    uint8_t            *local_payload;
    bd_dispatch_cancel *local_cancel;
    /* ... or LOCAL_REQUEST, a request in memory (bd_dispatch_call.request), answered in
     * memory too. */
    void               *local_request;
    void              (*local_request_free)(void *request);
    /* A stream (bd_call_stream_start): its hooks, its one read and one write, and its place
     * in the server's list of open streams (under the server's lock). */
    const bd_stream_hooks *stream;
    srv_tag             tag_read, tag_write;
    grpc_byte_buffer   *read_buf;
    grpc_byte_buffer   *write_buf;
    bool                initial_md_sent; /* with the first write: the final status must not repeat it */
    bd_call            *stream_prev, *stream_next;
};

struct bd_server {
    uv_loop_t              *loop;
    const bd_daemon_config *cfg;
    bd_registry            *reg;
    bd_scheduler           *sched;
    bd_served_cache        *served;       /* name -> serving version, for the cq thread */
    bd_server_stats        *stats;        /* the registry's counters (atomic: any thread) */
    bd_auth                *auth;         /* bearer tokens; NULL = authentication off */
    bd_tls_reloader        *tls;          /* gRPC TLS files; NULL = plaintext */
    grpc_server            *server;
    grpc_completion_queue  *cq;
    const bd_rpc_method    *methods;      /* what main() serves (rpc.c) */
    size_t                  n_methods;
    void                   *registered[BD_SERVER_MAX_METHODS];
    int                     port;
    pthread_t               thread;
    uv_async_t              async;
    uv_timer_t              timer;        /* bd_server_close: linger, then the grace period */
    uv_check_t              check;        /* refreshes SERVED after each loop iteration */
    _Atomic uint64_t        last_call_ns; /* when the newest call arrived */
    uint64_t                close_ns;     /* when bd_server_close was called */
    atomic_bool             grpc_shut;    /* grpc_server_shutdown_and_notify was called */
    atomic_bool             stopping;
    atomic_bool             ready;        /* bd_registry_ready as of the last loop iteration */
    int                     open_handles;
    pthread_mutex_t         lock;         /* guards queue/n/cap and live_calls */
    loop_event             *queue;
    size_t                  n, cap;
    loop_event             *spare;        /* the loop's batch buffer, swapped with queue */
    size_t                  spare_cap;
    size_t                  live_calls;   /* posted or running calls not yet freed */
    bd_call                *streams;      /* open streams (bd_call_stream_start), under LOCK */
    bd_dispatch             dispatch;     /* local calls: what the ports hand over (dispatch.h) */
    bool                    shutdown_seen, finished;   /* loop thread */
    srv_tag                 tag_shutdown;
    void                  (*done)(void *arg);
    void                   *done_arg;
};

static void on_async(uv_async_t *a);

/* ---- the hand-off to the loop ---------------------------------------------------------------- */

/* Queue an event for the loop; S->lock held. The caller then wakes the loop (uv_async_send). */
static void push_locked(bd_server *s, loop_kind kind, bd_call *c)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        loop_event *q = realloc(s->queue, cap * sizeof *q);
        if (!q) {
            /* Nothing sensible is left: losing an event would leak or hang a call. */
            bd_log(BD_LOG_ERROR, NULL, NULL, "server: out of memory queueing a gRPC event");
            abort();
        }
        s->queue = q;
        s->cap = cap;
    }
    s->queue[s->n++] = (loop_event){ kind, c };
}

/* From the cq thread: the wake-up comes after unlocking, so the loop does not wake up only to
 * wait for the lock. (The server outlives the cq thread: it is joined before the free.) */
static void to_loop(bd_server *s, loop_kind kind, bd_call *c)
{
    pthread_mutex_lock(&s->lock);
    push_locked(s, kind, c);
    pthread_mutex_unlock(&s->lock);
    uv_async_send(&s->async);
}

/* ---- calls ---------------------------------------------------------------------------------- */

static void maybe_finish(bd_server *s);
static void on_cq_event(bd_server *s, srv_tag *tag, int success, uint64_t waited_ns);

static void *cq_thread(void *arg)
{
    bd_server *s = arg;
    for (;;) {
        uint64_t t0 = bd_now_ns();
        grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE)
            on_cq_event(s, ev.tag, ev.success, bd_now_ns() - t0);
    }
    return NULL;
}

/* One call fewer. Any thread (a worker's unhold): when the count reaches 0 (only ever while
 * closing) the loop is woken under the lock, so once it has seen 0 (and may free the server)
 * this thread no longer touches it. */
static void live_calls_drop(bd_server *s)
{
    pthread_mutex_lock(&s->lock);
    if (--s->live_calls == 0) {
        push_locked(s, LOOP_WAKE, NULL);
        uv_async_send(&s->async);
    }
    pthread_mutex_unlock(&s->lock);
}

static int post_request(bd_server *s, int m)
{
    bd_call *c = calloc(1, sizeof *c);
    if (!c)
        return BD_ENOMEM;
    c->srv = s;
    c->method = m;
    c->tag_new = (srv_tag){ TAG_NEW, c };
    c->tag_close = (srv_tag){ TAG_CLOSE, c };
    c->tag_send = (srv_tag){ TAG_SEND, c };
    c->tag_read = (srv_tag){ TAG_READ, c };
    c->tag_write = (srv_tag){ TAG_WRITE, c };
    grpc_metadata_array_init(&c->md);
    pthread_mutex_lock(&s->lock);               /* counted before gRPC can complete it */
    s->live_calls++;
    pthread_mutex_unlock(&s->lock);
    grpc_call_error e;
    if (m == UNREGISTERED) {
        grpc_call_details_init(&c->details);
        e = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq, s->cq,
                                     &c->tag_new);
    } else {
        /* a stream's messages are read one by one (bd_call_stream_read): none comes with it */
        e = grpc_server_request_registered_call(s->server, s->registered[m], &c->call,
                                                &c->deadline, &c->md,
                                                s->methods[m].streaming ? NULL : &c->payload,
                                                s->cq, s->cq, &c->tag_new);
    }
    if (e != GRPC_CALL_OK) {
        if (m == UNREGISTERED)
            grpc_call_details_destroy(&c->details);
        grpc_metadata_array_destroy(&c->md);
        free(c);
        live_calls_drop(s);
        return BD_EINVAL;
    }
    return 0;
}

/* Any thread: whichever drops the last reference. */
static void call_free(bd_call *c)
{
    bd_server *s = c->srv;
    if (c->stream) {                            /* out of the list before anything goes */
        pthread_mutex_lock(&s->lock);
        if (c->stream_prev)
            c->stream_prev->stream_next = c->stream_next;
        else
            s->streams = c->stream_next;
        if (c->stream_next)
            c->stream_next->stream_prev = c->stream_prev;
        pthread_mutex_unlock(&s->lock);
    }
    if (c->local_cancel) {                      /* before the state holding the flag goes */
        bd_dispatch_cancel_watch(c->local_cancel, NULL);
        bd_dispatch_cancel_release(c->local_cancel);
    }
    if (c->msg) {
        pb_release(c->msg_fields, c->msg);
        free(c->msg);
    }
    bd_wire_reader_free(&c->rd);
    if (c->state_free)
        c->state_free(c->state);
    if (c->local_request_free)                  /* after the state that reads it */
        c->local_request_free(c->local_request);
    if (c->payload)
        grpc_byte_buffer_destroy(c->payload);
    if (c->flat_owned)
        grpc_slice_unref(c->flat);
    if (c->send_buf)
        grpc_byte_buffer_destroy(c->send_buf);
    if (c->read_buf)
        grpc_byte_buffer_destroy(c->read_buf);
    if (c->write_buf)
        grpc_byte_buffer_destroy(c->write_buf);
    if (c->has_details)
        grpc_slice_unref(c->status_details);
    grpc_metadata_array_destroy(&c->md);
    if (c->method == UNREGISTERED)
        grpc_call_details_destroy(&c->details);
    if (c->call)
        grpc_call_unref(c->call);
    free(c->local_payload);
    free(c);
    live_calls_drop(s);
}

static void call_release(bd_call *c)    /* any thread */
{
    if (atomic_fetch_sub(&c->refs, 1) == 1)
        call_free(c);
}

/* GPR deadline -> bd_now_ns() clock (0 = none). A deadline already past maps to "now", which
 * the scheduler treats as expired. */
static uint64_t deadline_ns(gpr_timespec d)
{
    if (gpr_time_cmp(d, gpr_inf_future(d.clock_type)) == 0)
        return 0;
    gpr_timespec left = gpr_time_sub(d, gpr_now(d.clock_type));
    uint64_t now = bd_now_ns();
    if (left.tv_sec < 0 || (left.tv_sec == 0 && left.tv_nsec <= 0))
        return now ? now : 1;
    if (left.tv_sec > 100L * 365 * 24 * 3600)       /* effectively none */
        return 0;
    return now + (uint64_t)left.tv_sec * 1000000000u + (uint64_t)left.tv_nsec;
}

static const char *call_method_name(bd_call *c, char *buf, size_t size)
{
    if (c->method != UNREGISTERED)
        return c->srv->methods[c->method].path;
    size_t n = GRPC_SLICE_LENGTH(c->details.method);
    if (n >= size)
        n = size - 1;
    memcpy(buf, GRPC_SLICE_START_PTR(c->details.method), n);
    buf[n] = '\0';
    return buf;
}

/* Make the request bytes contiguous: in place for one uncompressed slice, else flattened
 * once (the reader also decompresses). */
static int flatten_payload(bd_call *c)
{
    static const uint8_t empty[1];
    grpc_byte_buffer *bb = c->payload;
    c->data = empty;
    c->len = 0;
    if (!bb)
        return 0;
    if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE &&
        bb->data.raw.slice_buffer.count <= 1) {
        if (bb->data.raw.slice_buffer.count == 1) {
            grpc_slice *sl = &bb->data.raw.slice_buffer.slices[0];
            c->data = GRPC_SLICE_START_PTR(*sl);
            c->len = GRPC_SLICE_LENGTH(*sl);
        }
        return 0;
    }
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb))
        return BD_EINVAL;
    c->flat = grpc_byte_buffer_reader_readall(&reader);
    c->flat_owned = true;
    grpc_byte_buffer_reader_destroy(&reader);
    c->data = GRPC_SLICE_START_PTR(c->flat);
    c->len = GRPC_SLICE_LENGTH(c->flat);
    return 0;
}

/* Ask for the call's close (it completes when the call ends or the client cancels: that is
 * how cancellation is noticed) unless it was asked for already — alone, or inside the reply
 * batch, which saves a batch and a completion when the reply comes first. */
static void start_close(bd_call *c)
{
    if (atomic_exchange(&c->close_started, true))
        return;
    grpc_op op = { .op = GRPC_OP_RECV_CLOSE_ON_SERVER };
    op.data.recv_close_on_server.cancelled = &c->close_cancelled;
    if (grpc_call_start_batch(c->call, &op, 1, &c->tag_close, NULL) != GRPC_CALL_OK)
        call_release(c);                        /* never the last: the caller holds one */
}

/* ---- authentication (auth.h, docs/security.md) ------------------------------------------------ */

/* Check the call's "authorization: Bearer ..." metadata against the role its method needs.
 * False when the call was answered: UNAUTHENTICATED (no or unknown token) or
 * PERMISSION_DENIED (a token whose role is too weak). Any thread. */
static bool call_authorized(bd_server *s, bd_call *c)
{
    if (!s->auth)
        return true;
    char name[256];
    const char *path = call_method_name(c, name, sizeof name);
    bd_role need = bd_op_role(bd_op_from_grpc(path, strlen(path)));
    const char *value = NULL;
    size_t len = 0;
    for (size_t i = 0; i < c->md.count; i++)
        if (grpc_slice_str_cmp(c->md.metadata[i].key, "authorization") == 0) {
            value = (const char *)GRPC_SLICE_START_PTR(c->md.metadata[i].value);
            len = GRPC_SLICE_LENGTH(c->md.metadata[i].value);
            break;
        }
    char msg[256];
    switch (bd_auth_check(s->auth, value, len, need)) {
    case BD_AUTH_OK:
        return true;
    case BD_AUTH_MISSING:
        bd_call_fail_status(c, GRPC_STATUS_UNAUTHENTICATED, "this braidd needs a token: send "
                            "metadata 'authorization: Bearer <token>'");
        return false;
    case BD_AUTH_INVALID:
        bd_call_fail_status(c, GRPC_STATUS_UNAUTHENTICATED, "invalid token (expected "
                            "'authorization: Bearer <token>' with a token of the token file)");
        return false;
    case BD_AUTH_FORBIDDEN:
        snprintf(msg, sizeof msg, "%s needs a token of role '%s'", path, bd_role_name(need));
        bd_call_fail_status(c, GRPC_STATUS_PERMISSION_DENIED, msg);
        return false;
    }
    return false;
}

bd_auth *bd_server_auth(const bd_server *s) { return s->auth; }

int bd_server_reload_tls(bd_server *s, bd_error *err)
{
    return s->tls ? bd_tls_reloader_reload(s->tls, err) : 0;
}

/* Start a new call: answer what needs no handler, then run the handler — FAST on the cq
 * thread (ON_CQ) when the method has one, else FN (on the loop). A fast handler that answers
 * at once (inline run, bad request) sends the close op with its reply; otherwise the close op
 * starts as soon as it returns. */
static void start_call(bd_server *s, bd_call *c, bool on_cq)
{
    atomic_init(&c->refs, 3);                   /* close op + reply + the handler running */
    atomic_store(&s->last_call_ns, bd_now_ns());
    atomic_fetch_add(&s->stats->rpc_total, 1);
    c->deadline_ns = deadline_ns(c->method == UNREGISTERED ? c->details.deadline : c->deadline);
    bool fast = on_cq && c->method != UNREGISTERED && c->srv->methods[c->method].fast;
    if (!fast)
        start_close(c);

    if (!call_authorized(s, c)) {
        /* answered UNAUTHENTICATED / PERMISSION_DENIED */
    } else if (c->method == UNREGISTERED) {
        char name[256], msg[512];
        const char *path = call_method_name(c, name, sizeof name);
        if (atomic_load(&s->stopping)) {
            bd_call_fail_status(c, GRPC_STATUS_UNAVAILABLE, "braidd is shutting down");
        } else {
            atomic_fetch_add(&s->stats->rpc_unimplemented, 1);
            snprintf(msg, sizeof msg, "unknown method %s: braidd serves the methods of "
                     "inference.GRPCInferenceService and grpc.health.v1.Health/Check", path);
            bd_call_fail_status(c, GRPC_STATUS_UNIMPLEMENTED, msg);
        }
    } else if (atomic_load(&s->stopping) && c->srv->methods[c->method].refused_when_stopping) {
        bd_call_fail_status(c, GRPC_STATUS_UNAVAILABLE, "braidd is shutting down");
    } else if (flatten_payload(c) != 0) {
        bd_call_fail_status(c, GRPC_STATUS_INVALID_ARGUMENT, "cannot read the request message");
    } else if (!fast) {
        c->srv->methods[c->method].fn(c);
    } else if (!c->srv->methods[c->method].fast(c)) {
        start_close(c);
        to_loop(s, LOOP_HANDLER, c);            /* the handler's reference goes with it */
        return;
    }
    if (fast)
        start_close(c);                         /* no-op when the reply carried it */
    call_release(c);                            /* the handler's */
}

/* The close op completed: note a cancellation, drop the op's reference. */
static void closed(bd_call *c)
{
    if (c->close_cancelled) {
        atomic_store(&c->cancelled, true);
        atomic_bool *flag = atomic_load(&c->cancel_flag);
        if (flag)
            atomic_store(flag, true);
        if (c->stream)
            c->stream->cancelled(c);
    }
    call_release(c);
}

static void stream_read_done(bd_call *c, int success);

/* The cq thread: completions are handled here (they only drop references); new calls of a
 * method with a fast handler start here; everything else goes to the loop. */
static void on_cq_event(bd_server *s, srv_tag *tag, int success, uint64_t waited_ns)
{
    bd_call *c = tag->call;
    switch (tag->kind) {
    case TAG_NEW:
        if (!success) {                         /* the server is shutting down */
            call_free(c);
            return;
        }
        c->cq_waited_ns = waited_ns;
        int m = c->method;
        if (m != UNREGISTERED && s->methods[m].fast)
            start_call(s, c, true);             /* may answer (and free) C */
        else
            to_loop(s, LOOP_START, c);
        /* Post the replacement only now: off the answer's path (the others stay posted). */
        if (!atomic_load(&s->grpc_shut) && post_request(s, m) != 0)
            bd_log(BD_LOG_ERROR, NULL, NULL, "server: cannot post a request for %s",
                   m == UNREGISTERED ? "unknown methods" : s->methods[m].path);
        return;
    case TAG_CLOSE:
        closed(c);
        return;
    case TAG_SEND:
        if (c->close_in_reply)
            closed(c);
        call_release(c);
        return;
    case TAG_SHUTDOWN:
        to_loop(s, LOOP_SHUTDOWN, NULL);
        return;
    case TAG_READ:
        stream_read_done(c, success);
        call_release(c);                        /* the read's */
        return;
    case TAG_WRITE:
        grpc_byte_buffer_destroy(c->write_buf);
        c->write_buf = NULL;
        c->stream->written(c, success != 0);
        call_release(c);                        /* the write's */
        return;
    }
}

static void on_loop_event(bd_server *s, loop_event ev)
{
    switch (ev.kind) {
    case LOOP_START:
        start_call(s, ev.call, false);
        return;
    case LOOP_HANDLER:
        s->methods[ev.call->method].fn(ev.call);
        call_release(ev.call);                  /* the handler's */
        return;
    case LOOP_SHUTDOWN:
        s->shutdown_seen = true;
        maybe_finish(s);
        return;
    case LOOP_WAKE:
        maybe_finish(s);
        return;
    }
}

static void on_async(uv_async_t *a)
{
    bd_server *s = a->data;
    /* Drain everything queued so far in one batch (uv_async_send coalesces wake-ups). */
    for (int rounds = 0; rounds < 1000; rounds++) {
        pthread_mutex_lock(&s->lock);
        loop_event *batch = s->queue;
        size_t n = s->n, cap = s->cap;
        s->queue = s->spare;
        s->cap = s->spare_cap;
        s->n = 0;
        pthread_mutex_unlock(&s->lock);
        s->spare = batch;
        s->spare_cap = cap;
        if (n == 0)
            return;
        for (size_t i = 0; i < n; i++)
            on_loop_event(s, batch[i]);
        if (s->finished)
            return;
    }
}

/* After every loop iteration: registry changes (a swap, an unload) reach the cq thread's
 * table before anything else runs. */
static void on_check(uv_check_t *h)
{
    bd_server *s = h->data;
    bd_served_cache_refresh(s->served);
    if (!atomic_load_explicit(&s->ready, memory_order_relaxed) && bd_registry_ready(s->reg))
        atomic_store(&s->ready, true);          /* only start-up makes it true (server.h) */
}

/* ---- call API (rpc_*.c) ----------------------------------------------------------------------- */

bd_registry            *bd_call_registry(const bd_call *c)   { return c->srv->reg; }
bd_scheduler           *bd_call_scheduler(const bd_call *c)  { return c->srv->sched; }
const bd_daemon_config *bd_call_config(const bd_call *c)     { return c->srv->cfg; }
uint64_t                bd_call_deadline_ns(const bd_call *c) { return c->deadline_ns; }
bool                    bd_call_cancelled(const bd_call *c)  { return atomic_load(&c->cancelled); }
uint64_t                bd_call_cq_waited_ns(const bd_call *c) { return c->cq_waited_ns; }

const uint8_t *bd_call_payload(const bd_call *c, size_t *len)
{
    *len = c->len;
    return c->data;
}

void bd_call_set_state(bd_call *c, void *state, void (*free_fn)(void *state))
{
    c->state = state;
    c->state_free = free_fn;
}

void *bd_call_state(const bd_call *c) { return c->state; }

/* Races with the close completion on the cq thread: each side stores, then reads the other's
 * store (sequentially consistent), so at least one of them sets FLAG. */
void bd_call_watch_cancel(bd_call *c, atomic_bool *flag)
{
    if (c->local_cancel)
        bd_dispatch_cancel_watch(c->local_cancel, flag);
    atomic_store(&c->cancel_flag, flag);
    if (flag && atomic_load(&c->cancelled))
        atomic_store(flag, true);
}

int bd_call_decode(bd_call *c, const pb_msgdesc_t *fields, size_t size, void **msg,
                   const char *what, bd_error *err)
{
    *msg = NULL;
    if (c->msg)
        return bd_error_set(err, BD_EINVAL, "%s decoded twice", what);
    c->msg = calloc(1, size);
    if (!c->msg)
        return bd_error_set(err, BD_ENOMEM, "out of memory decoding %s", what);
    c->msg_fields = fields;
    c->rd.limits = &bd_wire_request_limits;     /* counts bounded, NULs refused: wire_span.h */
    if (!bd_wire_decode(&c->rd, c->data, c->len, fields, c->msg))
        return bd_error_set(err, BD_EINVAL, "malformed %s: %s", what,
                            c->rd.error ? c->rd.error : "cannot decode the protobuf message");
    *msg = c->msg;
    return 0;
}

void *bd_call_decode_or_fail(bd_call *c, const pb_msgdesc_t *fields, size_t size, const char *what)
{
    bd_error err = {0};
    void *msg = NULL;
    if (bd_call_decode(c, fields, size, &msg, what, &err) != 0) {
        bd_call_fail(c, err.code, err.msg);
        return NULL;
    }
    return msg;
}

bool bd_call_server_stopping(const bd_call *c) { return atomic_load(&c->srv->stopping); }

int bd_call_server_ready_hint(const bd_call *c)
{
    if (atomic_load(&c->srv->stopping))
        return 0;
    return atomic_load(&c->srv->ready) ? 1 : -1;
}

void *bd_call_message(const bd_call *c) { return c->msg; }

bd_served *bd_call_cached_served(const bd_call *c, const char *name, const char *version)
{
    return bd_served_cache_get(c->srv->served, name, version);
}

void bd_call_remember_served(bd_call *c, bd_served *s)
{
    bd_served_cache_put(c->srv->served, s);
}

void bd_call_hold(bd_call *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void bd_call_unhold(bd_call *c)
{
    call_release(c);
}

/* Send the reply batch; the call's reply reference moves to it. Any thread. */
static void send_reply(bd_call *c, grpc_status_code status, const char *message,
                       grpc_byte_buffer *buf)
{
    if (atomic_exchange(&c->replied, true)) {
        bd_log(BD_LOG_ERROR, NULL, NULL, "server: a call was answered twice (ignored)");
        if (buf)
            grpc_byte_buffer_destroy(buf);
        return;
    }
    if (c->local_reply) {                       /* no gRPC: hand the answer over */
        c->local_reply(c->local_arg, status, message, NULL, NULL);
        call_release(c);
        return;
    }
    c->send_buf = buf;
    c->status_details = message && message[0] ? grpc_slice_from_copied_string(message) : grpc_empty_slice();
    c->has_details = true;

    grpc_op ops[4];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!atomic_exchange(&c->close_started, true)) {
        c->close_in_reply = true;               /* TAG_SEND then completes both */
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->close_cancelled;
    }
    if (!c->initial_md_sent)                    /* a stream sent it with its first message */
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (buf) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = buf;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = status;
    ops[n++].data.send_status_from_server.status_details = &c->status_details;
    if (grpc_call_start_batch(c->call, ops, n, &c->tag_send, NULL) != GRPC_CALL_OK) {
        if (c->close_in_reply)                  /* as its completion would have */
            call_release(c);
        call_release(c);
    }
}

void bd_call_fail_status(bd_call *c, grpc_status_code status, const char *message)
{
    send_reply(c, status, message, NULL);
}

void bd_call_fail(bd_call *c, int code, const char *message)
{
    send_reply(c, bd_status_to_grpc(code), message, NULL);
}

/* Replies up to this size are encoded in one pass into a slice of this size (no sizing pass,
 * no copy: the reply is a sub-slice of it); larger ones are sized first. */
#define REPLY_FIRST_TRY 16384

/* A reply of SIZE bytes over the send limit: answer RESOURCE_EXHAUSTED (as gRPC would, but
 * before the reply is allocated) and return true. */
static bool reply_too_big(bd_call *c, size_t size)
{
    if (size <= c->srv->cfg->max_message_bytes)
        return false;
    char text[160];
    snprintf(text, sizeof text, "the response is %zu bytes, over the send limit of %zu bytes "
             "(max_message_bytes)", size, c->srv->cfg->max_message_bytes);
    bd_call_fail_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, text);
    return true;
}

/* A local call's answer: the transport encodes it its own way. */
static void reply_local(bd_call *c, const pb_msgdesc_t *fields, const void *msg)
{
    if (atomic_exchange(&c->replied, true)) {
        bd_log(BD_LOG_ERROR, NULL, NULL, "server: a call was answered twice (ignored)");
        return;
    }
    c->local_reply(c->local_arg, GRPC_STATUS_OK, NULL, fields, msg);
    call_release(c);
}

void bd_call_reply_in_memory(bd_call *c, const void *msg)
{
    reply_local(c, NULL, msg);
}

void bd_call_reply_sized(bd_call *c, const pb_msgdesc_t *fields, const void *msg, size_t size,
                         void (*write)(const void *msg, uint8_t *dst))
{
    if (c->local_reply) {
        reply_local(c, fields, msg);
        return;
    }
    if (reply_too_big(c, size))
        return;
    grpc_slice sl = grpc_slice_malloc(size);
    write(msg, GRPC_SLICE_START_PTR(sl));
    grpc_byte_buffer *buf = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    send_reply(c, GRPC_STATUS_OK, NULL, buf);
}

void bd_call_reply(bd_call *c, const pb_msgdesc_t *fields, const void *msg)
{
    if (c->local_reply) {
        reply_local(c, fields, msg);
        return;
    }
    grpc_slice first = grpc_slice_malloc(REPLY_FIRST_TRY);
    pb_ostream_t fs = pb_ostream_from_buffer(GRPC_SLICE_START_PTR(first), REPLY_FIRST_TRY);
    if (pb_encode(&fs, fields, msg)) {
        if (reply_too_big(c, fs.bytes_written)) {
            grpc_slice_unref(first);
            return;
        }
        grpc_slice used = grpc_slice_sub(first, 0, fs.bytes_written);
        grpc_slice_unref(first);
        grpc_byte_buffer *buf = grpc_raw_byte_buffer_create(&used, 1);
        grpc_slice_unref(used);
        send_reply(c, GRPC_STATUS_OK, NULL, buf);
        return;
    }
    grpc_slice_unref(first);                    /* too big (or bad): size it, then encode */
    size_t size = 0;
    if (!pb_get_encoded_size(&size, fields, msg)) {
        bd_call_fail_status(c, GRPC_STATUS_INTERNAL, "cannot encode the response");
        return;
    }
    if (reply_too_big(c, size))                 /* never allocate what gRPC would refuse */
        return;
    grpc_slice sl = grpc_slice_malloc(size);
    pb_ostream_t os = pb_ostream_from_buffer(GRPC_SLICE_START_PTR(sl), size);
    if (!pb_encode(&os, fields, msg)) {
        char text[256];
        snprintf(text, sizeof text, "cannot encode the response: %s", PB_GET_ERROR(&os));
        grpc_slice_unref(sl);
        bd_call_fail_status(c, GRPC_STATUS_INTERNAL, text);
        return;
    }
    grpc_byte_buffer *buf = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    send_reply(c, GRPC_STATUS_OK, NULL, buf);
}

/* ---- streams (server.h) ---------------------------------------------------------------------- */

bd_server *bd_call_server(const bd_call *c) { return c->srv; }

void bd_call_stream_start(bd_call *c, const bd_stream_hooks *hooks)
{
    bd_server *s = c->srv;
    c->stream = hooks;
    pthread_mutex_lock(&s->lock);
    c->stream_next = s->streams;
    if (s->streams)
        s->streams->stream_prev = c;
    s->streams = c;
    pthread_mutex_unlock(&s->lock);
    if (atomic_load(&s->stopping))              /* bd_server_stop may have missed it */
        hooks->stopping(c);
}

bool bd_call_stream_read(bd_call *c)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->read_buf;
    bd_call_hold(c);                            /* the read's: released after its hook */
    if (grpc_call_start_batch(c->call, &op, 1, &c->tag_read, NULL) != GRPC_CALL_OK) {
        call_release(c);                        /* never the last: the caller holds one */
        return false;
    }
    return true;
}

/* The read completed (cq thread): hand the message over as one malloc'ed buffer (the reader
 * also decompresses). */
static void stream_read_done(bd_call *c, int success)
{
    grpc_byte_buffer *bb = c->read_buf;
    c->read_buf = NULL;
    if (!success || !bb) {                      /* half-closed, or the call is over */
        if (bb)
            grpc_byte_buffer_destroy(bb);
        c->stream->read(c, NULL, 0, 0);
        return;
    }
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb)) {
        grpc_byte_buffer_destroy(bb);
        c->stream->read(c, NULL, 0, BD_EINVAL);
        return;
    }
    grpc_slice sl = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    grpc_byte_buffer_destroy(bb);
    size_t len = GRPC_SLICE_LENGTH(sl);
    uint8_t *msg = malloc(len ? len : 1);
    if (msg)
        memcpy(msg, GRPC_SLICE_START_PTR(sl), len);
    grpc_slice_unref(sl);
    c->stream->read(c, msg, msg ? len : 0, msg ? 0 : BD_ENOMEM);
}

int bd_call_msg_encode(const bd_call *c, const pb_msgdesc_t *fields, const void *msg,
                       bd_call_msg **out, bd_error *err)
{
    *out = NULL;
    size_t size = 0;
    if (!pb_get_encoded_size(&size, fields, msg))   /* streams nothing: no tensor copied */
        return bd_error_set(err, BD_EIO, "cannot encode the response");
    if (size > c->srv->cfg->max_message_bytes)
        return bd_error_set(err, BD_EINVAL, "the response is %zu bytes, over the send limit of "
                            "%zu bytes (max_message_bytes)", size, c->srv->cfg->max_message_bytes);
    grpc_slice sl = grpc_slice_malloc(size);
    pb_ostream_t os = pb_ostream_from_buffer(GRPC_SLICE_START_PTR(sl), size);
    if (!pb_encode(&os, fields, msg)) {
        grpc_slice_unref(sl);
        return bd_error_set(err, BD_EIO, "cannot encode the response: %s", PB_GET_ERROR(&os));
    }
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    if (!bb)
        return bd_error_set(err, BD_ENOMEM, "out of memory encoding the response");
    *out = (bd_call_msg *)bb;
    return 0;
}

size_t bd_call_msg_size(const bd_call_msg *m)
{
    return grpc_byte_buffer_length((grpc_byte_buffer *)m);
}

void bd_call_msg_free(bd_call_msg *m)
{
    if (m)
        grpc_byte_buffer_destroy((grpc_byte_buffer *)m);
}

bool bd_call_stream_write(bd_call *c, bd_call_msg *m)
{
    grpc_op ops[2];
    size_t n = 0;
    memset(ops, 0, sizeof ops);
    if (!c->initial_md_sent)
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = (grpc_byte_buffer *)m;
    c->write_buf = (grpc_byte_buffer *)m;
    bd_call_hold(c);                            /* the write's: released after its hook */
    if (grpc_call_start_batch(c->call, ops, n, &c->tag_write, NULL) != GRPC_CALL_OK) {
        c->write_buf = NULL;
        grpc_byte_buffer_destroy((grpc_byte_buffer *)m);
        call_release(c);                        /* never the last: the caller holds one */
        return false;
    }
    c->initial_md_sent = true;
    return true;
}

/* ---- local calls (another transport: REST; a stream's requests) ------------------------------ */

void *bd_call_local_request(const bd_call *c) { return c->local_request; }

/* A local call (dispatch.h, bd_server_dispatch): its request PAYLOAD (bytes) or REQUEST (in
 * memory), both taken. */
static int call_local(void *impl, const bd_dispatch_call *d)
{
    bd_server *s = impl;
    int m = -1;
    for (size_t i = 0; i < s->n_methods; i++)
        if (!strcmp(s->methods[i].path, d->method))
            m = (int)i;
    bd_call *c = m < 0 ? NULL : calloc(1, sizeof *c);
    if (!c) {
        free(d->payload);
        if (d->request_free)
            d->request_free(d->request);
        return m < 0 ? BD_ENOTFOUND : BD_ENOMEM;
    }
    static const uint8_t empty[1];
    c->srv = s;
    c->method = m;
    c->local_reply = d->reply;
    c->local_arg = d->arg;
    c->local_payload = d->payload;
    c->local_request = d->request;
    c->local_request_free = d->request_free;
    if (d->cancel) {
        bd_dispatch_cancel_retain(d->cancel);
        c->local_cancel = d->cancel;
    }
    c->data = d->payload ? d->payload : empty;
    c->len = d->payload ? d->len : 0;
    c->deadline_ns = d->deadline_ns;
    grpc_metadata_array_init(&c->md);
    atomic_init(&c->refs, 2);                   /* reply + the handler running */
    pthread_mutex_lock(&s->lock);
    s->live_calls++;
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add(&s->stats->rpc_total, 1);
    if (atomic_load(&s->stopping) && s->methods[m].refused_when_stopping) {
        bd_call_fail_status(c, GRPC_STATUS_UNAVAILABLE, "braidd is shutting down");
    } else if (s->methods[m].fast && pthread_equal(pthread_self(), s->thread)) {
        /* a stream's request, on the cq thread: as a call arriving over gRPC */
        if (!s->methods[m].fast(c)) {
            to_loop(s, LOOP_HANDLER, c);        /* the handler's reference goes with it */
            return 0;
        }
    } else {
        s->methods[m].fn(c);
    }
    call_release(c);                            /* the handler's */
    return 0;
}

const bd_dispatch *bd_server_dispatch(bd_server *s) { return &s->dispatch; }

/* ---- server lifecycle -------------------------------------------------------------------------- */

static void on_handle_closed(uv_handle_t *h)
{
    bd_server *s = h->data;
    if (--s->open_handles > 0)
        return;
    void (*done)(void *) = s->done;
    void *arg = s->done_arg;
    free(s->queue);
    free(s->spare);
    bd_served_cache_destroy(s->served);
    bd_auth_destroy(s->auth);
    bd_tls_reloader_destroy(s->tls);
    pthread_mutex_destroy(&s->lock);
    free(s);
    grpc_shutdown();
    if (done)
        done(arg);
}

static void maybe_finish(bd_server *s)
{
    if (!atomic_load(&s->grpc_shut) || !s->shutdown_seen || s->finished)
        return;
    pthread_mutex_lock(&s->lock);     /* a thread freeing the last call queues LOOP_WAKE under it */
    size_t live = s->live_calls;
    pthread_mutex_unlock(&s->lock);
    if (live > 0)
        return;
    s->finished = true;
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->cq);
    pthread_join(s->thread, NULL);
    grpc_completion_queue_destroy(s->cq);
    uv_close((uv_handle_t *)&s->timer, on_handle_closed);
    uv_close((uv_handle_t *)&s->check, on_handle_closed);
    uv_close((uv_handle_t *)&s->async, on_handle_closed);
}

int bd_server_port(const bd_server *s) { return s->port; }

/* Take a reference on C unless its last one is already gone (it is being freed). */
static bool call_try_hold(bd_call *c)
{
    int r = atomic_load(&c->refs);
    while (r > 0)
        if (atomic_compare_exchange_weak(&c->refs, &r, r + 1))
            return true;
    return false;
}

void bd_server_stop(bd_server *s)
{
    if (atomic_exchange(&s->stopping, true))
        return;
    /* Open streams hear of it (a stream waiting for its client's next message would
     * otherwise stay open until the grace period cancels it). They are held, then told
     * outside the lock: a hook may end its call. A stream starting meanwhile sees STOPPING
     * itself (bd_call_stream_start). */
    pthread_mutex_lock(&s->lock);
    size_t n = 0;
    for (bd_call *c = s->streams; c; c = c->stream_next)
        n++;
    bd_call **held = n ? malloc(n * sizeof *held) : NULL;
    size_t k = 0;
    for (bd_call *c = s->streams; held && c; c = c->stream_next)
        if (call_try_hold(c))
            held[k++] = c;
    pthread_mutex_unlock(&s->lock);
    if (n && !held)
        bd_log(BD_LOG_ERROR, NULL, NULL, "server: out of memory telling %zu stream(s) of the "
               "shutdown: they end at the grace period", n);
    for (size_t i = 0; i < k; i++) {
        held[i]->stream->stopping(held[i]);
        call_release(held[i]);
    }
    free(held);
}

/* Shutting gRPC down turns every call that reaches the server afterwards — including one a
 * client sent just before it heard of the shutdown — into CANCELLED, which a client cannot
 * tell from a request that ran. So the server lingers first, answering UNAVAILABLE ("braidd
 * is shutting down", safe to retry elsewhere), until no call has arrived for LINGER_QUIET_MS
 * (at most LINGER_MAX_MS). Calls still open GRACE_MS after the gRPC shutdown are cancelled
 * (a client that stopped reading); not at once, since an answered call may still be
 * flushing its response. */
#define LINGER_QUIET_MS 300          /* a client thread starved on a busy machine still gets its answer */
#define LINGER_MAX_MS   2000
#define GRACE_MS        5000

static size_t count_live_calls(bd_server *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->live_calls;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void on_grace(uv_timer_t *t)
{
    bd_server *s = t->data;
    bd_log(BD_LOG_WARN, NULL, NULL, "server: %zu call(s) still open %d ms after shutdown: cancelling them",
           count_live_calls(s), GRACE_MS);
    grpc_server_cancel_all_calls(s->server);
}

static void on_linger(uv_timer_t *t)
{
    bd_server *s = t->data;
    uint64_t now = bd_now_ns();
    uint64_t last = atomic_load(&s->last_call_ns);
    if (now - last < LINGER_QUIET_MS * 1000000ull && now - s->close_ns < LINGER_MAX_MS * 1000000ull)
        return;
    uv_timer_stop(t);
    atomic_store(&s->grpc_shut, true);
    grpc_server_shutdown_and_notify(s->server, s->cq, &s->tag_shutdown);
    uv_timer_start(t, on_grace, GRACE_MS, 0);
    maybe_finish(s);
}

void bd_server_close(bd_server *s, void (*done)(void *arg), void *arg)
{
    bd_server_stop(s);
    s->done = done;
    s->done_arg = arg;
    s->close_ns = bd_now_ns();
    uv_timer_start(&s->timer, on_linger, 0, 20);
}

int bd_server_start(uv_loop_t *loop, const bd_daemon_config *cfg, const bd_rpc_method *methods,
                    size_t n_methods, bd_registry *reg, bd_scheduler *sched, bd_server **out,
                    bd_error *err)
{
    if (n_methods > BD_SERVER_MAX_METHODS)
        return bd_error_set(err, BD_EINVAL, "server: %zu methods, at most %d", n_methods,
                            BD_SERVER_MAX_METHODS);
    bd_server *s = calloc(1, sizeof *s);
    if (!s)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    s->methods = methods;
    s->n_methods = n_methods;
    s->loop = loop;
    s->dispatch = (bd_dispatch){ .run = call_local, .impl = s };
    s->cfg = cfg;
    s->reg = reg;
    s->sched = sched;
    s->stats = bd_registry_server_stats(reg);
    s->tag_shutdown = (srv_tag){ TAG_SHUTDOWN, NULL };
    int rc = bd_served_cache_create(reg, &s->served, err);
    if (rc) {
        free(s);
        return rc;
    }
    if (cfg->auth_token_file[0] && (rc = bd_auth_load(cfg->auth_token_file, &s->auth, err)) != 0) {
        bd_served_cache_destroy(s->served);
        free(s);
        return rc;
    }
    pthread_mutex_init(&s->lock, NULL);

    grpc_init();
    int max = cfg->max_message_bytes > INT_MAX ? INT_MAX : (int)cfg->max_message_bytes;
    grpc_arg args[3] = {
        { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, .value.integer = max },
        { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, .value.integer = max },
        /* gRPC sets SO_REUSEPORT by default, which would let two daemons share a port. */
        { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ALLOW_REUSEPORT, .value.integer = 0 },
    };
    grpc_channel_args chargs = { .num_args = 3, .args = args };
    s->server = grpc_server_create(&chargs, NULL);
    s->cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    for (size_t m = 0; m < n_methods; m++)
        s->registered[m] = grpc_server_register_method(s->server, methods[m].path, NULL,
                                                       methods[m].streaming ? GRPC_SRM_PAYLOAD_NONE
                                                       : GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);

    grpc_server_credentials *creds = NULL;
    if ((rc = bd_tls_grpc_credentials(cfg, &creds, &s->tls, err)) != 0)
        goto fail_server;
    s->port = grpc_server_add_http2_port(s->server, cfg->grpc_address, creds);
    grpc_server_credentials_release(creds);
    if (s->port <= 0) {
        rc = bd_error_set(err, BD_EIO, "cannot listen on %s: port in use? (or not a host:port "
                          "address)", cfg->grpc_address);
        goto fail_server;
    }
    if (uv_async_init(loop, &s->async, on_async) != 0) {
        rc = bd_error_set(err, BD_EIO, "cannot create the gRPC hand-off to the event loop");
        goto fail_server;
    }
    s->async.data = s;
    uv_timer_init(loop, &s->timer);
    s->timer.data = s;
    uv_check_init(loop, &s->check);
    s->check.data = s;
    uv_check_start(&s->check, on_check);
    uv_unref((uv_handle_t *)&s->check);     /* it alone does not keep the loop running */
    s->open_handles = 3;
    if (pthread_create(&s->thread, NULL, cq_thread, s) != 0) {
        rc = bd_error_set(err, BD_EIO, "cannot start the gRPC completion-queue thread");
        grpc_server_destroy(s->server);         /* never started */
        grpc_completion_queue_shutdown(s->cq);
        grpc_completion_queue_destroy(s->cq);
        uv_close((uv_handle_t *)&s->timer, on_handle_closed);
        uv_close((uv_handle_t *)&s->check, on_handle_closed);
        uv_close((uv_handle_t *)&s->async, on_handle_closed);  /* frees S, grpc_shutdown */
        return rc;
    }
    grpc_server_start(s->server);
    for (size_t m = 0; m < s->n_methods; m++)
        for (int k = 0; k < s->methods[m].posted; k++)
            if (post_request(s, (int)m) != 0)
                bd_log(BD_LOG_ERROR, NULL, NULL, "server: cannot post a request for %s", s->methods[m].path);
    for (int k = 0; k < 4; k++)
        post_request(s, UNREGISTERED);
    *out = s;
    return 0;

fail_server:
    grpc_server_destroy(s->server);     /* never started: no shutdown needed */
    grpc_completion_queue_shutdown(s->cq);
    grpc_completion_queue_destroy(s->cq);
    bd_served_cache_destroy(s->served);
    bd_auth_destroy(s->auth);
    bd_tls_reloader_destroy(s->tls);
    pthread_mutex_destroy(&s->lock);
    free(s);
    grpc_shutdown();
    return rc;
}
