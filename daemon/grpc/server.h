/* braidd's gRPC server: gRPC C core on its own completion-queue thread, the libuv loop for
 * everything that needs the registry.
 *
 *   cq thread   blocks in grpc_completion_queue_next and handles what needs no loop: op
 *               completions (send done, close — they only drop references; the last one frees
 *               the call), re-posting requests, and new calls of a method with a fast handler
 *               (ModelInfer: decoded, checked and started right here when the served-version
 *               table knows its model — served_cache.h; ServerLive, ServerReady, ModelReady,
 *               the metadata reads and health Check: answered here from the ready flag and
 *               that table). Everything else goes into a
 *               mutex-protected queue, then uv_async_send (coalesced: the loop drains it).
 *   loop        runs the handlers in rpc_*.c (and a fast handler's call it passed on),
 *               refreshes the served-version table after every registry change, and shuts
 *               the server down.
 *   workers     reply to ModelInfer themselves (bd_call_reply is thread-safe).
 *
 * Posted requests: grpc_server_request_registered_call kept posted for every method — 64 for
 * ModelInfer so concurrent clients never wait in gRPC's pending list — plus
 * grpc_server_request_call, whose calls get UNIMPLEMENTED.
 *
 * A streaming method (ModelStreamInfer) arrives with no message: its fast handler starts a
 * stream (bd_call_stream_start) and reads and writes messages one at a time; each read
 * request can run as a local call (bd_server_dispatch, from the cq thread too).
 *
 * A bd_call is one RPC. It is freed exactly once, by whichever thread drops its last
 * reference (reply sent, close-on-server op done, handler returned, holds released); the
 * handler's state (bd_call_set_state) is freed with it. */
#ifndef BD_DAEMON_GRPC_SERVER_H
#define BD_DAEMON_GRPC_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>
#include <pb.h>
#include <uv.h>

#include "daemon/config.h"
#include "core/error.h"
#include "daemon/dispatch/dispatch.h"
#include "daemon/registry/registry.h"
#include "daemon/sched/scheduler.h"

typedef struct bd_server bd_server;
typedef struct bd_call   bd_call;
typedef struct bd_rpc_method bd_rpc_method;   /* below */

/* ---- the server (loop thread) ---------------------------------------------------------- */

/* Listen on CFG->grpc_address (port 0 picks a free one) and start serving REG's models
 * through SCHED, with TLS and bearer tokens when CFG asks (tls_config.h, auth.h).
 * METHODS (at most BD_SERVER_MAX_METHODS; rpc.h has braidd's) are the gRPC methods served.
 * BD_EIO "cannot listen on ADDR: port in use?" when the address cannot be bound. METHODS,
 * REG, SCHED and CFG must outlive the server. */
int  bd_server_start(uv_loop_t *loop, const bd_daemon_config *cfg,
                     const bd_rpc_method *methods, size_t n_methods, bd_registry *reg,
                     bd_scheduler *sched, bd_server **out, bd_error *err);
/* The gRPC port actually bound. */
int  bd_server_port(const bd_server *s);
/* The bearer tokens loaded from CFG->auth_token_file at start (NULL when authentication
 * is off), shared with the HTTP port; bd_auth_reload re-reads them (SIGHUP). */
struct bd_auth *bd_server_auth(const bd_server *s);
/* Re-read the TLS certificate, key and client CAs (SIGHUP): connections opened afterwards
 * get them. On failure the ones in use stay and ERR says why. 0 when TLS is off. */
int  bd_server_reload_tls(bd_server *s, bd_error *err);
/* Stop taking new work (SIGTERM): from now on new ModelInfer and load/unload calls are
 * answered UNAVAILABLE "braidd is shutting down", readiness reports not ready, and calls
 * already received go on to finish. The port stays open meanwhile, so clients get that
 * clear answer instead of gRPC's CANCELLED for calls caught by a server shutdown.
 * Idempotent. */
void bd_server_stop(bd_server *s);
/* Shut the gRPC server down (grpc_server_shutdown_and_notify), wait until every call is
 * answered and freed (calls still open after a grace period are cancelled), destroy the
 * server and its thread, and free S; DONE(ARG) then runs on the loop. Call after
 * bd_server_stop and the scheduler's drain. */
void bd_server_close(bd_server *s, void (*done)(void *arg), void *arg);

/* ---- calls from another transport (rest/) or a stream's requests ---------------------------- */

/* The server's methods as a port sees them (daemon/dispatch/dispatch.h): a call run through
 * it takes the path a call arriving over gRPC takes — the same handler, scheduler, limits
 * and statistics — with its request as protobuf bytes or, for a handler that reads one, in
 * memory (ModelInfer: a bd_infer_request, no protobuf on the way; see
 * bd_call_local_request). Valid as long as the server. */
const bd_dispatch *bd_server_dispatch(bd_server *s);

/* ---- one RPC (handlers in rpc_*.c) ------------------------------------------------------- */

/* A handler on the loop thread. */
typedef void (*bd_rpc_handler)(bd_call *c);
/* A handler on the cq thread: must not block or read the registry. Returns true when it took
 * care of the call (answered it, or handed it to a worker), false to have the method's loop
 * handler run next with the call as it is (decoded, state set). */
typedef bool (*bd_rpc_fast_handler)(bd_call *c);

/* One served method. POSTED: how many requests are kept posted for it. A call that arrives
 * while none is posted waits in gRPC's pending list, and a shutdown kills that list with
 * CANCELLED, so the hot method keeps enough posted for every concurrent client to be matched
 * at once (a matched call always runs to its answer, even during shutdown). FAST: a handler
 * the cq thread runs itself; it returns false to pass the call on to FN on the loop (which
 * then finds the call as FAST left it). Methods without one go to the loop. */
struct bd_rpc_method {
    const char         *path;
    bd_rpc_handler      fn;
    bd_rpc_fast_handler fast;                 /* NULL: always on the loop */
    int                 posted;
    bool                refused_when_stopping;   /* work that would delay the shutdown */
    bool                streaming;    /* bidirectional stream: FAST starts it (bd_call_stream_start) */
};
#define BD_SERVER_MAX_METHODS 32

bd_registry            *bd_call_registry(const bd_call *c);
bd_scheduler           *bd_call_scheduler(const bd_call *c);
const bd_daemon_config *bd_call_config(const bd_call *c);
/* The received request message, contiguous (in place when it arrived in one slice, else
 * flattened once). Valid until the call is freed. */
const uint8_t          *bd_call_payload(const bd_call *c, size_t *len);
/* The call's deadline on the bd_now_ns() clock; 0 = none. */
uint64_t                bd_call_deadline_ns(const bd_call *c);
/* True once the client cancelled (or the connection died). */
bool                    bd_call_cancelled(const bd_call *c);
/* How long the cq thread had been idle, waiting for events, when this call arrived: near 0
 * when other events were already pending (the thread is behind). Fast handlers only. */
uint64_t                bd_call_cq_waited_ns(const bd_call *c);
/* Attach handler state: FREE_FN(STATE) runs when the call is freed, on any thread. The
 * handler's thread, once per call. */
void  bd_call_set_state(bd_call *c, void *state, void (*free_fn)(void *state));
void *bd_call_state(const bd_call *c);      /* NULL until set */
/* Have the call set *FLAG when the client cancels (it is set at once if it already has).
 * FLAG must live as long as the call (e.g. inside its state). The handler's thread. */
void bd_call_watch_cancel(bd_call *c, atomic_bool *flag);

/* The version serving NAME/VERSION from the server's served-version table, with one reference
 * for the caller, or NULL when only the registry can tell (then ask it on the loop). Any
 * thread (served_cache.h: never a version the registry had already swapped out or unloaded). */
bd_served *bd_call_cached_served(const bd_call *c, const char *name, const char *version);
/* Tell the table S (just acquired from the registry) serves its name. Loop thread. */
void       bd_call_remember_served(bd_call *c, bd_served *s);

/* The request in memory a local call carries (bd_dispatch_call.request), or NULL when the
 * call came with bytes. */
void *bd_call_local_request(const bd_call *c);
/* Answer a call that carried its request in memory with MSG, its answer in memory (the
 * method's type), exactly once, from any thread. */
void  bd_call_reply_in_memory(bd_call *c, const void *msg);

/* Decode the request into a zeroed message of SIZE bytes the call owns (*MSG; FIELDS e.g.
 * inference_ModelReadyRequest_fields), tensor payloads referenced in place. The message, its
 * heap fields and spans live until the call is freed. BD_EINVAL "malformed <WHAT>: ..." on
 * a bad message (*MSG is then NULL). The handler's thread, at most once per call. */
int  bd_call_decode(bd_call *c, const pb_msgdesc_t *fields, size_t size, void **msg,
                    const char *what, bd_error *err);
/* The message bd_call_decode decoded for this call, or NULL before: a loop handler finds
 * there what its fast handler decoded before passing the call on. */
void *bd_call_message(const bd_call *c);
/* bd_call_decode, or answer the error (INVALID_ARGUMENT) and return NULL. */
void *bd_call_decode_or_fail(bd_call *c, const pb_msgdesc_t *fields, size_t size, const char *what);
#define BD_CALL_DECODE(c, type, what) \
    ((type *)bd_call_decode_or_fail((c), type##_fields, sizeof(type), (what)))
/* True once the server stopped accepting calls (SIGTERM). */
bool bd_call_server_stopping(const bd_call *c);
/* Server readiness as the cq thread may answer it: 1 ready, 0 not ready (stopping), -1 only
 * the registry can tell (start-up not seen finished yet: ask bd_registry_ready on the loop).
 * The loop copies bd_registry_ready into an atomic after every loop iteration; readiness
 * only turns false again at shutdown, which bd_server_stop marks at once. Any thread. */
int  bd_call_server_ready_hint(const bd_call *c);

/* Keep the call (and its state) alive past its reply: a worker holds it while it still
 * touches the call's state after answering. Any thread, while the caller already owns a
 * reference (the handler, or an earlier hold); every hold needs one bd_call_unhold. */
void bd_call_hold(bd_call *c);
void bd_call_unhold(bd_call *c);

/* The server the call came to (for bd_server_dispatch). */
bd_server *bd_call_server(const bd_call *c);

/* ---- bidirectional streams (a method with .streaming; rpc_stream.c) -------------------------
 *
 * Its fast handler gets the call with no message, attaches its state, and calls
 * bd_call_stream_start. It then keeps at most one read and one write outstanding (gRPC's
 * rule); each holds the call until its hook has run. The call ends with one bd_call_fail_status
 * (OK included), from any thread, once no write is outstanding — also after a cancellation,
 * to release the reply's reference; a read may still be outstanding (it then fails).
 * Message sizes are limited as for unary calls (max_message_bytes; an oversized message
 * ends the call with RESOURCE_EXHAUSTED, gRPC's doing). */
typedef struct bd_stream_hooks {
    /* A read completed (cq thread): MSG (LEN bytes, malloc'ed: the hook takes it), or MSG
     * NULL when no message will come: STATUS 0 when the client half-closed or the call is
     * over, BD_ENOMEM when a message could not be copied. */
    void (*read)(bd_call *c, uint8_t *msg, size_t len, int status);
    /* A write completed (cq thread); !OK: the call is over (cancelled). */
    void (*written)(bd_call *c, bool ok);
    /* The client cancelled, its deadline passed or the connection died (cq thread). */
    void (*cancelled)(bd_call *c);
    /* bd_server_stop ran (the loop thread): stop reading, finish what is in flight, end
     * with UNAVAILABLE. Also at bd_call_stream_start when the server is stopping already. */
    void (*stopping)(bd_call *c);
} bd_stream_hooks;

/* Make C (a streaming method's call, in its fast handler, state set) a stream served by
 * HOOKS (static storage); from now on the hooks may run. */
void bd_call_stream_start(bd_call *c, const bd_stream_hooks *hooks);
/* Post the read of the next message; false when gRPC refused it (the call is over: no hook
 * runs). Any thread, never while one is outstanding. */
bool bd_call_stream_read(bd_call *c);
/* An encoded message for bd_call_stream_write. */
typedef struct bd_call_msg bd_call_msg;
/* Encode MSG (FIELDS) for a write on C: BD_EINVAL "... over the send limit ..." when it
 * exceeds max_message_bytes (nothing allocated), BD_ENOMEM, BD_EIO. Any thread. */
int    bd_call_msg_encode(const bd_call *c, const pb_msgdesc_t *fields, const void *msg,
                          bd_call_msg **out, bd_error *err);
size_t bd_call_msg_size(const bd_call_msg *m);
void   bd_call_msg_free(bd_call_msg *m);               /* NULL is allowed */
/* Write M (taken, also on failure); false when gRPC refused it (no hook runs). Any thread,
 * never while one is outstanding. */
bool bd_call_stream_write(bd_call *c, bd_call_msg *m);

/* Answer the call, exactly once, from any thread: */
/* ... with MSG encoded by FIELDS and status OK. An encoding failure answers INTERNAL. */
void bd_call_reply(bd_call *c, const pb_msgdesc_t *fields, const void *msg);
/* ... as bd_call_reply, with MSG's encoding written by WRITE(MSG, DST): exactly SIZE bytes,
 * for a message the caller encodes faster than nanopb (a local call still gets FIELDS and
 * MSG). SIZE over max_message_bytes answers RESOURCE_EXHAUSTED, as bd_call_reply. */
void bd_call_reply_sized(bd_call *c, const pb_msgdesc_t *fields, const void *msg, size_t size,
                         void (*write)(const void *msg, uint8_t *dst));
/* ... with the gRPC status for a BD_E* CODE (status_map.h) and MESSAGE. */
void bd_call_fail(bd_call *c, int code, const char *message);
/* ... with a gRPC status code directly (UNIMPLEMENTED and the like). */
void bd_call_fail_status(bd_call *c, grpc_status_code status, const char *message);

#endif
