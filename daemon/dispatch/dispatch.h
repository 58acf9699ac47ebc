/* How a port hands an operation to the daemon's handlers: the contract both ports keep.
 *
 * A port (rest/, or grpc/ for a stream's requests) gives a bd_dispatch_call: the method it
 * routed the request to (its gRPC path, "/inference.GRPCInferenceService/ModelInfer", the
 * name every operation has), the request — as the method's protobuf bytes, or in memory for
 * a method whose handler reads one (ModelInfer: the neutral request,
 * daemon/infer/infer_request.h) — the deadline, a cancellation, and where the answer goes.
 * What it gets back is exactly one answer through REPLY: the same handler, scheduler, limits,
 * authorization, statistics and error statuses as a call arriving over gRPC.
 *
 * Whoever runs the methods fills a bd_dispatch (today the gRPC server, bd_server_dispatch in
 * grpc/server.h); a port holds only that, never the server. */
#ifndef BD_DAEMON_DISPATCH_DISPATCH_H
#define BD_DAEMON_DISPATCH_DISPATCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/status.h>
#include <pb.h>

/* The answer, exactly once, on the thread that answers it (the loop, a worker, or the cq
 * thread): STATUS OK with MSG (FIELDS describes it; valid only during the callback, tensor
 * spans included; FIELDS NULL for a call made with its request in memory: MSG is then the
 * method's answer in memory, ModelInfer: a bd_infer_reply, daemon/infer/infer_reply.h), or
 * an error STATUS with MESSAGE (FIELDS and MSG NULL). STATUS is the protocol's status code
 * (gRPC's numbering, which REST turns into an HTTP code). */
typedef void (*bd_dispatch_reply_fn)(void *arg, grpc_status_code status, const char *message,
                                     const pb_msgdesc_t *fields, const void *msg);

/* A call's cancellation: the port keeps one reference, the call another. Firing it (when the
 * client went away) cancels the call's work still queued, as a gRPC client's cancellation
 * does; work already running finishes. Any thread; NULL is allowed everywhere. */
typedef struct bd_dispatch_cancel bd_dispatch_cancel;
bd_dispatch_cancel *bd_dispatch_cancel_new(void);    /* one reference; NULL when out of memory */
void                bd_dispatch_cancel_fire(bd_dispatch_cancel *k);
void                bd_dispatch_cancel_release(bd_dispatch_cancel *k);
/* The handlers' side: take a reference for the call; have the cancellation set *FLAG (at once
 * when it already fired; FLAG NULL = no longer: clear it before FLAG's memory goes). */
void                bd_dispatch_cancel_retain(bd_dispatch_cancel *k);
void                bd_dispatch_cancel_watch(bd_dispatch_cancel *k, atomic_bool *flag);

/* What a port gives. Exactly one of PAYLOAD and REQUEST is the request; both are taken. */
typedef struct bd_dispatch_call {
    const char          *method;       /* the operation's gRPC path */
    uint8_t             *payload;      /* protobuf bytes, malloc'ed (NULL = an empty message) */
    size_t               len;
    void                *request;      /* or the request in memory ... */
    void               (*request_free)(void *request);   /* ... freed with the call */
    uint64_t             deadline_ns;  /* bd_now_ns() clock; 0 = none */
    bd_dispatch_cancel  *cancel;       /* NULL = none; the call takes a reference */
    bd_dispatch_reply_fn reply;
    void                *arg;          /* REPLY's */
} bd_dispatch_call;

/* The handlers' side: RUN(IMPL, CALL) as bd_dispatch_run says. */
typedef struct bd_dispatch {
    int  (*run)(void *impl, const bd_dispatch_call *call);
    void  *impl;
} bd_dispatch;

/* Run CALL through D: the answer goes to CALL->reply (possibly before this returns). Loop
 * thread (the method's loop handler runs at once; models run on the workers, never here), or
 * the cq thread in a stream's hook (the method's fast handler runs first, as for a call
 * arriving over gRPC). BD_ENOTFOUND for an unknown method, BD_ENOMEM: REPLY not called, the
 * request freed; 0 otherwise. */
int bd_dispatch_run(const bd_dispatch *d, const bd_dispatch_call *call);

#endif
