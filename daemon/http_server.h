/* A small HTTP/1.1 server on a libuv loop, for braidd's status endpoint: Node's classic
 * http_parser over uv_tcp. Answers GET and HEAD through one handler function; keeps
 * connections alive, tolerates pipelining, and bounds everything a client controls:
 * request-head size (431), URL length (414), body size (413, bodies are discarded), open
 * connections, unsent output (reading pauses while the client does not read), and time (a
 * connection that does not complete a request within the timeout is closed).
 *
 * Loop thread only. http_status.c puts braidd's routes on it. */
#ifndef BD_HTTP_SERVER_H
#define BD_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "partitioner/error.h"

typedef struct bd_http_server bd_http_server;

typedef struct bd_http_limits {
    size_t   max_head_bytes;     /* request line + headers; 16 KiB */
    size_t   max_body_bytes;     /* request body (read and discarded); 64 KiB */
    size_t   max_connections;    /* connections beyond this are closed at once; 256 */
    size_t   max_unsent_bytes;   /* stop reading while more output than this waits; 1 MiB */
    uint64_t timeout_ms;         /* a whole request must arrive within this, counted from
                                  * the connection's start or the previous request; 30 s */
} bd_http_limits;

void bd_http_limits_default(bd_http_limits *l);

typedef struct bd_http_request {
    int         method;          /* enum http_method: HTTP_GET, HTTP_HEAD, ... */
    const char *path;            /* "/metrics" (no query, not decoded) */
    const char *query;           /* what followed '?', "" if nothing */
} bd_http_request;

typedef struct bd_http_response {
    int         status;          /* 200, 404, ... */
    const char *content_type;    /* static string; NULL = "text/plain; charset=utf-8" */
    const char *allow;           /* static string for an Allow header (405), or NULL */
    char       *body;            /* malloc'ed; the server frees it; NULL = empty */
    size_t      len;
} bd_http_response;

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

/* Parse "HOST:PORT" ("[v6]:PORT" for IPv6 literals) into ADDR. 0 or BD_EINVAL. */
int    bd_http_parse_address(const char *address, struct sockaddr_storage *addr, bd_error *err);

#endif
