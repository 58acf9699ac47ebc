/* Connection life: OPEN (reading, parsing, answering) -> LINGER (the last response is
 * written: half-close, discard what the client still sends until EOF or a short timer, so
 * an early error answer is not lost to a TCP reset) -> CLOSING (both handles closing; the
 * connection is freed when the second close callback runs). */
#include "http_server.h"

#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#define READ_CHUNK 4096
#define MAX_URL    8192              /* longer request targets get 414 */
#define LINGER_MS  2000

typedef struct conn conn;

struct bd_http_server {
    uv_loop_t      *loop;
    uv_tcp_t        listener;
    bd_http_limits  lim;
    bd_http_handler handler;
    void           *arg;
    int             port;
    conn           *conns;           /* every connection until its handles are closed */
    size_t          n_active;        /* connections not closing */
    bool            closing, listener_closed;
    void          (*done)(void *);
    void           *done_arg;
};

typedef enum { C_OPEN, C_LINGER, C_CLOSING } conn_state;

struct conn {
    uv_tcp_t        tcp;
    uv_timer_t      timer;
    uv_shutdown_t   shutdown;
    http_parser     parser;
    bd_http_server *srv;
    conn           *prev, *next;
    int             handles;         /* handles not yet closed */
    conn_state      state;
    bool            counted;         /* counted in srv->n_active */
    bool            paused;          /* parsing paused until the client reads our output */
    bool            finish;          /* answer what is queued, then close */
    bool            eof;             /* the client closed its side */
    int             reject;          /* the status a parser callback chose for a bad request */
    int             writes;          /* uv_write requests in flight */
    size_t          head_bytes, body_bytes, url_len;
    size_t          pending_len;     /* unparsed input kept while paused */
    char            url[MAX_URL + 1];
    char            pending[READ_CHUNK];
    char            rbuf[READ_CHUNK];
};

typedef struct wreq {
    uv_write_t req;
    conn      *c;
    char      *body;
    char       head[512];
} wreq;

void bd_http_limits_default(bd_http_limits *l)
{
    l->max_head_bytes   = 16 * 1024;
    l->max_body_bytes   = 64 * 1024;
    l->max_connections  = 256;
    l->max_unsent_bytes = 1024 * 1024;
    l->timeout_ms       = 30 * 1000;
}

/* ---- closing --------------------------------------------------------------------------- */

static void maybe_done(bd_http_server *s)
{
    if (!s->closing || !s->listener_closed || s->conns)
        return;
    void (*done)(void *) = s->done;
    void *arg = s->done_arg;
    free(s);
    if (done)
        done(arg);
}

static void on_conn_closed(uv_handle_t *h)
{
    conn *c = h->data;
    if (--c->handles > 0)
        return;
    bd_http_server *s = c->srv;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c);
    maybe_done(s);
}

static void close_conn(conn *c)
{
    if (c->state == C_CLOSING)
        return;
    c->state = C_CLOSING;
    if (c->counted) {
        c->counted = false;
        c->srv->n_active--;
    }
    /* pending writes and the shutdown request complete with UV_ECANCELED before the close
     * callbacks run, so their memory is released before the connection's */
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
}

static void on_timeout(uv_timer_t *t)
{
    close_conn(t->data);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    conn *c = h->data;
    *buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    conn *c = req->data;
    if (status < 0)
        close_conn(c);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* Every response is out: half-close and drain what the client still sends. */
static void linger(conn *c)
{
    if (c->state != C_OPEN)
        return;
    if (c->eof) {                    /* nothing left to drain */
        close_conn(c);
        return;
    }
    c->state = C_LINGER;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        close_conn(c);
        return;
    }
    uv_timer_start(&c->timer, on_timeout, LINGER_MS, 0);
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* ---- responses ------------------------------------------------------------------------- */

static void feed(conn *c, const char *data, size_t len);

static void on_write(uv_write_t *req, int status)
{
    wreq *w = (wreq *)req;
    conn *c = w->c;
    free(w->body);
    free(w);
    c->writes--;
    if (c->state == C_CLOSING)
        return;
    if (status < 0) {
        close_conn(c);
        return;
    }
    if (c->finish) {
        if (c->writes == 0)
            linger(c);
        return;
    }
    if (c->paused &&
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) <= c->srv->lim.max_unsent_bytes / 2) {
        /* the client caught up: parse what was held back, then read again */
        c->paused = false;
        http_parser_pause(&c->parser, 0);
        size_t n = c->pending_len;
        c->pending_len = 0;
        feed(c, c->pending, n);
        if (c->state == C_OPEN && !c->paused && !c->finish)
            uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
}

static void send_response(conn *c, bool head_only, bool keep_alive, bd_http_response *res)
{
    wreq *w = malloc(sizeof *w);
    if (!w) {
        free(res->body);
        close_conn(c);
        return;
    }
    w->c = c;
    size_t content_length = res->body ? res->len : 0;
    w->body = res->body;
    if (head_only) {                 /* HEAD: the GET response's headers, no body */
        free(res->body);
        w->body = NULL;
    }
    const char *reason = http_status_str((enum http_status)res->status);
    int n = snprintf(w->head, sizeof w->head,
                     "HTTP/1.1 %d %s\r\n"
                     "Content-Type: %s\r\n"
                     "Content-Length: %zu\r\n"
                     "Cache-Control: no-store\r\n"
                     "%s%s%s"
                     "Connection: %s\r\n"
                     "\r\n",
                     res->status, reason,
                     res->content_type ? res->content_type : "text/plain; charset=utf-8",
                     content_length,
                     res->allow ? "Allow: " : "", res->allow ? res->allow : "",
                     res->allow ? "\r\n" : "",
                     keep_alive ? "keep-alive" : "close");
    if (n < 0 || (size_t)n >= sizeof w->head)
        n = 0;      /* cannot happen with the static strings the handlers pass */
    uv_buf_t bufs[2] = { uv_buf_init(w->head, (unsigned)n), uv_buf_init(w->body, 0) };
    unsigned nbufs = 1;
    if (w->body && content_length) {
        bufs[1] = uv_buf_init(w->body, (unsigned)content_length);
        nbufs = 2;
    }
    if (n == 0 || uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, nbufs, on_write) != 0) {
        free(w->body);
        free(w);
        close_conn(c);
        return;
    }
    c->writes++;
}

static void send_error(conn *c, int status)
{
    char *body = NULL;
    const char *reason = http_status_str((enum http_status)status);
    size_t len = (size_t)asprintf(&body, "%d %s\n", status, reason);
    if (!body)
        len = 0;
    bd_http_response res = { .status = status, .body = body, .len = len };
    send_response(c, false, false, &res);
}

/* ---- parsing --------------------------------------------------------------------------- */

static int reject(conn *c, int status)
{
    c->reject = status;
    return 1;                        /* stops the parser with HPE_CB_* */
}

static int on_message_begin(http_parser *p)
{
    conn *c = p->data;
    c->head_bytes = c->body_bytes = c->url_len = 0;
    c->reject = 0;
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    c->head_bytes += len;
    if (c->url_len + len > MAX_URL)
        return reject(c, HTTP_STATUS_URI_TOO_LONG);
    if (c->head_bytes > c->srv->lim.max_head_bytes)
        return reject(c, HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE);
    memcpy(c->url + c->url_len, at, len);
    c->url_len += len;
    c->url[c->url_len] = '\0';
    return 0;
}

static int on_header_data(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    c->head_bytes += len;
    if (c->head_bytes > c->srv->lim.max_head_bytes)
        return reject(c, HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE);
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    c->body_bytes += len;
    if (c->body_bytes > c->srv->lim.max_body_bytes)
        return reject(c, HTTP_STATUS_PAYLOAD_TOO_LARGE);
    return 0;
}

static int on_message_complete(http_parser *p)
{
    conn *c = p->data;
    bd_http_server *s = c->srv;
    bool keep_alive = http_should_keep_alive(p) && !p->upgrade && !s->closing;

    struct http_parser_url u;
    http_parser_url_init(&u);
    char path[MAX_URL + 1] = "/", query[MAX_URL + 1] = "";
    if (http_parser_parse_url(c->url, c->url_len, 0, &u) != 0) {
        /* not a valid request target: answer 400 and stop */
        c->finish = true;
        http_parser_pause(p, 1);
        send_error(c, HTTP_STATUS_BAD_REQUEST);
        return 0;
    }
    if (u.field_set & (1 << UF_PATH)) {
        memcpy(path, c->url + u.field_data[UF_PATH].off, u.field_data[UF_PATH].len);
        path[u.field_data[UF_PATH].len] = '\0';
    }
    if (u.field_set & (1 << UF_QUERY)) {
        memcpy(query, c->url + u.field_data[UF_QUERY].off, u.field_data[UF_QUERY].len);
        query[u.field_data[UF_QUERY].len] = '\0';
    }

    bd_http_request req = { .method = (int)p->method, .path = path, .query = query };
    bd_http_response res = { .status = 500 };
    s->handler(s->arg, &req, &res);
    send_response(c, p->method == HTTP_HEAD, keep_alive, &res);
    if (c->state != C_OPEN)
        return 0;

    /* a completed request restarts the clock for the next one */
    uv_timer_start(&c->timer, on_timeout, s->lim.timeout_ms, 0);
    if (!keep_alive) {
        c->finish = true;
        http_parser_pause(p, 1);     /* ignore anything pipelined after it */
    } else if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > s->lim.max_unsent_bytes) {
        c->paused = true;            /* the client does not read: hold further requests */
        http_parser_pause(p, 1);
    }
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin    = on_message_begin,
    .on_url              = on_url,
    .on_header_field     = on_header_data,
    .on_header_value     = on_header_data,
    .on_body             = on_body,
    .on_message_complete = on_message_complete,
};

/* Parse DATA (which may be c->pending itself) and act on the outcome. */
static void feed(conn *c, const char *data, size_t len)
{
    size_t n = http_parser_execute(&c->parser, &settings, data, len);
    if (c->state != C_OPEN)
        return;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (c->finish) {                                   /* answered the last request */
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (c->writes == 0)
            linger(c);
        return;
    }
    if (e == HPE_PAUSED) {                             /* backlog: keep the rest for later */
        memmove(c->pending, data + n, len - n);
        c->pending_len = len - n;
        uv_read_stop((uv_stream_t *)&c->tcp);
        return;
    }
    if (e != HPE_OK || c->parser.upgrade) {
        int status = c->reject ? c->reject
                   : e == HPE_HEADER_OVERFLOW ? HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE
                   : HTTP_STATUS_BAD_REQUEST;
        c->finish = true;
        uv_read_stop((uv_stream_t *)&c->tcp);
        if (e != HPE_OK)
            send_error(c, status);
        else if (c->writes == 0)
            linger(c);
    }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = stream->data;
    if (nread == 0 || c->state == C_CLOSING)
        return;
    if (c->state == C_LINGER) {                        /* discard until EOF */
        if (nread < 0)
            close_conn(c);
        return;
    }
    if (nread < 0) {
        /* EOF after pipelined requests: finish sending their answers, then close */
        if (nread == UV_EOF && c->writes > 0) {
            c->finish = c->eof = true;
            uv_read_stop(stream);
        } else {
            close_conn(c);
        }
        return;
    }
    feed(c, buf->base, (size_t)nread);
}

/* ---- listening ------------------------------------------------------------------------- */

static void on_connection(uv_stream_t *listener, int status)
{
    bd_http_server *s = listener->data;
    if (status < 0 || s->closing)
        return;
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return;                      /* the connection waits in the backlog */
    c->srv = s;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles = 2;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0 ||
        s->n_active >= s->lim.max_connections) {
        close_conn(c);
        return;
    }
    c->counted = true;
    s->n_active++;
    uv_tcp_nodelay(&c->tcp, 1);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    uv_timer_start(&c->timer, on_timeout, s->lim.timeout_ms, 0);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
        close_conn(c);
}

int bd_http_parse_address(const char *address, struct sockaddr_storage *addr, bd_error *err)
{
    const char *colon = address ? strrchr(address, ':') : NULL;
    if (!colon)
        return bd_error_set(err, BD_EINVAL, "address '%s': expected HOST:PORT",
                            address ? address : "");
    char host[256];
    size_t hl = (size_t)(colon - address);
    if (hl >= sizeof host)
        return bd_error_set(err, BD_EINVAL, "address '%s': host name too long", address);
    memcpy(host, address, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {   /* [::1] */
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535)
        return bd_error_set(err, BD_EINVAL, "address '%s': port must be 0..65535", address);

    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host[0] ? host : NULL, "0", &hints, &res);
    if (rc != 0 || !res)
        return bd_error_set(err, BD_EINVAL, "address '%s': cannot resolve host '%s': %s",
                            address, host, gai_strerror(rc));
    memset(addr, 0, sizeof *addr);
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (addr->ss_family == AF_INET)
        ((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
    else if (addr->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
    else
        return bd_error_set(err, BD_EINVAL, "address '%s': not an IPv4/IPv6 address", address);
    return 0;
}

static void free_on_close(uv_handle_t *h)
{
    free(h->data);
}

int bd_http_server_start(uv_loop_t *loop, const char *address, const bd_http_limits *limits,
                         bd_http_handler handler, void *arg, bd_http_server **out,
                         bd_error *err)
{
    struct sockaddr_storage addr;
    int rc = bd_http_parse_address(address, &addr, err);
    if (rc)
        return rc;
    bd_http_server *s = calloc(1, sizeof *s);
    if (!s)
        return bd_error_set(err, BD_ENOMEM, "status endpoint: out of memory");
    s->loop = loop;
    s->handler = handler;
    s->arg = arg;
    if (limits)
        s->lim = *limits;
    else
        bd_http_limits_default(&s->lim);
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;

    struct sockaddr_storage bound;
    int len = sizeof bound;
    if ((rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0)) != 0 ||
        (rc = uv_listen((uv_stream_t *)&s->listener, 128, on_connection)) != 0 ||
        (rc = uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &len)) != 0) {
        uv_close((uv_handle_t *)&s->listener, free_on_close);
        return bd_error_set(err, BD_EIO, "status endpoint: cannot listen on %s: %s",
                            address, uv_strerror(rc));
    }
    s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    *out = s;
    return 0;
}

int bd_http_server_port(const bd_http_server *s)
{
    return s->port;
}

size_t bd_http_server_connections(const bd_http_server *s)
{
    return s->n_active;
}

static void on_listener_closed(uv_handle_t *h)
{
    bd_http_server *s = h->data;
    s->listener_closed = true;
    maybe_done(s);
}

void bd_http_server_close(bd_http_server *s, void (*done)(void *arg), void *arg)
{
    if (!s || s->closing)
        return;
    s->closing = true;
    s->done = done;
    s->done_arg = arg;
    for (conn *c = s->conns; c; c = c->next)
        close_conn(c);               /* unlinks only in its close callback */
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
}
