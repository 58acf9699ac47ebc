/* A small HTTP/1.1 server on a libuv loop, for braidd's status endpoint and its REST port:
 * Node's classic http_parser over uv_tcp. Answers through one handler function; keeps
 * connections alive, serves pipelining, and bounds everything a client controls:
 * request-head size (431: every byte of the request line and the headers counts), URL length
 * (414), body size (413; bodies are discarded, or with keep_body collected — chunked ones
 * de-chunked — for the handler, a declared Content-Length over the limit refused before a
 * byte of the body is read), open connections, unsent output, unparsed input, and time (a
 * request must arrive within the timeout, and its head, then its body, at a minimum rate).
 *
 * Pipelining: requests are answered one at a time, in order, however their bytes are split
 * and whenever they arrive. What comes while a request is being answered waits unparsed in
 * the connection's backlog, up to max_pipeline_bytes; when the backlog is full the server
 * stops reading the socket (TCP backpressure) until it has parsed some. Bytes are never
 * dropped. Parsing waits while a deferred answer is computed, and while more than
 * max_unsent_bytes of output wait for the client to read them (it resumes at half that).
 *
 * Deferred answers (keep_body servers): a handler may answer later, from any thread
 * (bd_http_defer / bd_http_pending_finish): the REST port's inferences are answered by the
 * worker that ran them. Meanwhile the connection keeps reading into its backlog, so a client
 * that closes is seen at once (bd_http_pending_watch), and its request timer is stopped (the
 * run time is not the client's). A client that closes its side after its requests, with no
 * answer being computed, still gets the answers to every complete request it sent.
 *
 * At the connection limit a new connection does not wait or get refused while others idle
 * or stall: like nginx's reusable connections, the oldest connection that is between
 * requests (no request byte received, nothing being sent) is closed to make room; failing
 * that, the slowest stalled one (fewest bytes a second): a head still arriving, a body
 * behind the minimum rate, or answers its client has not read at the minimum rate for longer
 * than min_rate_grace_ms; failing that too, the new connection is closed. A connection
 * waiting for its deferred answer, sending one its client reads, or with a body arriving at
 * the minimum rate or faster is never closed for a newcomer. The same happens among one client address's
 * connections at the per-address cap (like nginx's limit_conn), so one address cannot push
 * out the others' connections either. Neither a flood of idle sockets nor one of trickled
 * bodies can keep a health probe out.
 *
 * Optional security (bd_http_server_set_security): TLS through OpenSSL memory BIOs
 * (http_tls.h) and bearer tokens (auth.h). With tokens, the handler routes the request first
 * and then asks bd_http_authorize for the role of the operation it will run (operation.h), so
 * authorization is decided on what is executed, never on the raw path: 401 with
 * WWW-Authenticate for a missing or unknown token, 403 for a role too weak. It fails closed:
 * bd_http_defer refuses a request that was not authorized, and a handler that returns without
 * a decision has its answer replaced by 500.
 *
 * Loop thread only. http_status.c puts braidd's routes on it. */
#ifndef BD_DAEMON_HTTP_HTTP_SERVER_H
#define BD_DAEMON_HTTP_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include <openssl/ssl.h>

#include "daemon/security/auth.h"
#include "core/error.h"

typedef struct bd_http_server bd_http_server;

typedef struct bd_http_limits {
    size_t   max_head_bytes;     /* the request head, every byte: request line, headers with
                                  * their ':' and line ends, the blank line; 16 KiB (at most
                                  * http_parser's own 80 KiB). Chunked trailers: names and
                                  * values plus 2 bytes a line. */
    size_t   max_body_bytes;     /* request body (read and discarded); 64 KiB */
    size_t   max_connections;    /* open connections; 256 */
    size_t   max_connections_per_ip; /* open connections from one client address; 64
                                  * (0 = no cap) */
    size_t   max_unsent_bytes;   /* stop parsing while more output than this waits; 1 MiB */
    size_t   max_pipeline_bytes; /* received bytes held unparsed (pipelined requests, what
                                  * arrives during a deferred answer or unsent output): at
                                  * this many, reading stops until some are parsed; 64 KiB,
                                  * at least 4 KiB */
    uint64_t timeout_ms;         /* a whole request must arrive within this, counted from
                                  * the connection's start or the previous request; 30 s */
    size_t   min_rate_bytes_per_s; /* a request's head (from its first byte) and then its
                                  * body (from the head's end) must each arrive at this
                                  * average rate: a body behind it is stalled (may be closed
                                  * for a new connection at a limit), and a head or body
                                  * min_rate_grace_ms behind it is closed; and a client
                                  * must read its answers at this rate (one that has not
                                  * for longer than min_rate_grace_ms may be closed for a
                                  * new connection at a limit); 1 KiB/s (0 = no minimum:
                                  * nothing is ever stalled) */
    uint64_t min_rate_grace_ms;  /* see min_rate_bytes_per_s; 10 s */
    bool     keep_body;          /* collect the body and the headers for the handler
                                  * (bd_http_request's body, bd_http_request_header); false:
                                  * bodies are discarded. A Content-Length over
                                  * max_body_bytes is refused (413) before any body byte. */
    bool     json_errors;        /* the server's own errors (400, 413, 431...) as
                                  * {"error": "..."} (the REST port); false: plain text */
} bd_http_limits;

void bd_http_limits_default(bd_http_limits *l);

typedef struct bd_http_request {
    int         method;          /* enum http_method: HTTP_GET, HTTP_HEAD, ... */
    const char *path;            /* "/metrics" (no query, not decoded) */
    const char *query;           /* what followed '?', "" if nothing */
    const char *body;            /* keep_body: the body (de-chunked), NUL-terminated; else NULL */
    size_t      body_len;
    void       *conn_;           /* the server's (bd_http_request_header, bd_http_defer...) */
} bd_http_request;

/* keep_body: the value of REQ's header NAME (case-insensitive), NUL-terminated, or NULL.
 * A header sent twice gives its first value. Valid while the handler runs. */
const char *bd_http_request_header(const bd_http_request *req, const char *name);
/* keep_body: take REQ's body (malloc'ed, LEN = body_len, NUL after it); the caller frees
 * it. NULL when there is none. Handler only. */
char       *bd_http_request_take_body(const bd_http_request *req);

typedef struct bd_http_response {
    int         status;          /* 200, 404, ... */
    const char *content_type;    /* static string; NULL = "text/plain; charset=utf-8" */
    const char *allow;           /* static string for an Allow header (405), or NULL */
    const char *www_authenticate; /* static string for a WWW-Authenticate header, or NULL */
    char       *body;            /* malloc'ed; the server frees it; NULL = empty */
    size_t      len;
    char        headers[192];    /* more header lines, each ending in "\r\n"; "" = none */
} bd_http_response;

/* With tokens (bd_http_security.auth): check REQ's Authorization header against NEED, the
 * role of the operation the handler routed REQ to. True when it may run; false with RES set
 * to 401/403. Every handler of a server with tokens calls it once per request, before it
 * runs anything. Without tokens always true. Handler only. */
bool bd_http_authorize(const bd_http_request *req, bd_role need, bd_http_response *res);

/* Answer REQ later: called inside the handler (RES is then ignored), it returns the token
 * bd_http_pending_finish takes; NULL when the connection cannot wait (not keep_body,
 * bd_http_serve_bytes) or, with tokens, when bd_http_authorize did not allow REQ; then the
 * handler answers at once. The connection parses nothing more until the answer is sent. */
typedef struct bd_http_pending bd_http_pending;
bd_http_pending *bd_http_defer(const bd_http_request *req);
/* Have GONE(ARG) run (loop thread, at most once) if P's connection closes before its answer
 * is sent; RELEASE(ARG) runs when P is freed (any thread). Loop thread, right after
 * bd_http_defer. */
void bd_http_pending_watch(bd_http_pending *p, void (*gone)(void *arg),
                           void (*release)(void *arg), void *arg);
/* Send RES (the server takes RES->body) for P's request, from any thread; P is freed. When
 * the connection or the server is gone meanwhile the response is dropped. */
void bd_http_pending_finish(bd_http_pending *p, bd_http_response *res);

/* Fill RES for REQ. For HEAD the server sends the headers of the GET response without its
 * body. Runs on the loop thread; must not block. */
typedef void (*bd_http_handler)(void *arg, const bd_http_request *req, bd_http_response *res);

/* Listen on ADDRESS ("127.0.0.1:8002", "[::1]:0", "localhost:8002"; port 0 picks a free
 * port). LIMITS may be NULL for the defaults. On failure returns a negative BD_E* code and
 * fills ERR; a listening handle may then still be closing on LOOP (run the loop to free
 * it). */
int    bd_http_server_start(uv_loop_t *loop, const char *address, const bd_http_limits *limits,
                            bd_http_handler handler, void *arg, bd_http_server **out,
                            bd_error *err);
/* The port actually bound. */
int    bd_http_server_port(const bd_http_server *s);
/* Connections open now (not counting those already closing). */
size_t bd_http_server_connections(const bd_http_server *s);
/* Stop listening and close every connection (responses in flight are dropped). DONE(ARG)
 * runs once every handle is closed; the server is freed before DONE runs. */
void   bd_http_server_close(bd_http_server *s, void (*done)(void *arg), void *arg);

/* What protects the port. TLS: NULL = plaintext, else the server takes a reference (the
 * caller may free its own). AUTH: NULL = no tokens; it must outlive the server. With AUTH
 * the handler decides each request's role itself (bd_http_authorize), from what it routed. */
typedef struct bd_http_security {
    SSL_CTX  *tls;
    bd_auth  *auth;
} bd_http_security;

/* Set S's security. Call right after bd_http_server_start, before the loop runs again (no
 * connection has been accepted yet). */
void   bd_http_server_set_security(bd_http_server *s, const bd_http_security *sec);

/* Serve one connection that has no socket (tests, fuzzing): DATA is fed to the request path
 * in pieces of CHUNK bytes (0 = all at once) — parsing, limits, tokens, the handler — then
 * the client's end of file; every byte the server would send goes to SINK. Plaintext only
 * (SEC->tls is ignored); LIMITS and SEC may be NULL. No loop, no handles: deterministic. */
void   bd_http_serve_bytes(const bd_http_limits *limits, const bd_http_security *sec,
                           bd_http_handler handler, void *arg, const char *data, size_t len,
                           size_t chunk, void (*sink)(void *sink_arg, const char *bytes, size_t n),
                           void *sink_arg);

/* bd_http_serve_bytes with deferred answers and uneven reads (tests, fuzzing): the
 * connection reads READS[0], READS[1], ... bytes of DATA (cycling; 0 = a read that brings
 * nothing, time passing), each capped by the room left in its backlog, as a socket read is.
 * After each read BETWEEN(ARG) runs (it may bd_http_pending_finish what handlers deferred,
 * on this thread), then the answers finished so far are sent. Once DATA is all read this
 * repeats while an answer is awaited (giving up after 1000 reads that change nothing), then
 * the client's end of file. Deferred answers finished after the call returns are dropped. */
void   bd_http_serve_reads(const bd_http_limits *limits, const bd_http_security *sec,
                           bd_http_handler handler, void *arg, const char *data, size_t len,
                           const size_t *reads, size_t n_reads, void (*between)(void *arg),
                           void (*sink)(void *sink_arg, const char *bytes, size_t n),
                           void *sink_arg);

/* Parse "HOST:PORT" ("[v6]:PORT" for IPv6 literals) into ADDR. 0 or BD_EINVAL. */
int    bd_http_parse_address(const char *address, struct sockaddr_storage *addr, bd_error *err);

#endif
