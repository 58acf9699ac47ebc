/* Connection life: OPEN (reading, parsing, answering) -> LINGER (the last response is
 * written: half-close, discard what the client still sends until EOF or a short timer, so
 * an early error answer is not lost to a TCP reset) -> CLOSING (both handles closing; the
 * connection is freed when the second close callback runs).
 *
 * Input has one path: received bytes are appended to the connection's backlog (with TLS,
 * the plaintext OpenSSL decrypts from them), and pump() parses the backlog while nothing
 * holds the connection (a deferred answer, output the client has not read, a last request
 * answered). Reading goes on while the backlog has room and stops when it is full, so a
 * client can make braidd hold at most max_pipeline_bytes of its requests; bytes are never
 * dropped or overwritten, whenever they arrive. The parser pauses after every head (to
 * measure it: every byte counts) and after every request (so the loop decides whether the
 * next one is parsed now).
 *
 * Every response is encrypted with TLS and its ciphertext written (tls_flush). A detached
 * connection (bd_http_serve_bytes, bd_http_serve_reads) has no handles: reads and timers are
 * skipped, writes go to a sink, and it is freed by its caller. */
#include "daemon/http/http_server.h"

#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "daemon/http/http_tls.h"
#include "daemon/log.h"

#define READ_CHUNK 4096              /* the backlog's first size and its growth step */
#define MAX_URL    8192              /* longer request targets get 414 */
#define MAX_AUTHZ  2048              /* a longer Authorization header is an invalid token */
#define LINGER_MS  2000
#define BODY_RESERVE (1u << 20)      /* a declared body's buffer allocated before its bytes */

typedef struct conn conn;

/* Where deferred answers wait for the loop (bd_http_pending_finish from any thread). Lives
 * until the server and every pending answer let go of it. */
typedef struct mailbox {
    pthread_mutex_t  lock;
    int              refs;
    uv_async_t      *async;          /* NULL once the server is closing */
    bool             polled;         /* detached: answers wait here for the caller's loop */
    bd_http_pending *head, *tail;
} mailbox;

struct bd_http_pending {
    mailbox         *mb;
    conn            *c;              /* loop thread only: NULL once the connection closed */
    bool             head_only, keep_alive;
    bd_http_response res;
    bd_http_pending *next;
    void           (*gone)(void *);  /* bd_http_pending_watch */
    void           (*release)(void *);
    void            *watch_arg;
};

struct bd_http_server {
    uv_loop_t      *loop;
    uv_tcp_t        listener;
    bd_http_limits  lim;
    bd_http_handler handler;
    void           *arg;
    int             port;
    conn           *conns;           /* every connection until its handles are closed, newest
                                      * first */
    SSL_CTX        *tls;             /* NULL = plaintext */
    bd_auth        *auth;            /* NULL = no tokens */
    size_t          n_active;        /* connections not closing */
    mailbox        *mb;              /* deferred answers; NULL without keep_body */
    uv_async_t      async;           /* ... wakes the loop for them (not when detached) */
    bool            closing, listener_closed, async_closed;
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
    bool            paused;          /* parsing waits until the client reads our output */
    bool            finish;          /* answer what is queued, then close */
    bool            eof;             /* the client closed its side: parse what it sent, finish */
    bool            reading;         /* uv_read_start is in effect */
    bool            pumping;         /* pump() is on the stack: a nested call returns at once */
    bool            in_head;         /* the next bytes parsed belong to a head */
    bool            in_request;      /* a request's first byte came, its answer not yet */
    bool            head_done;       /* ... and its head is complete */
    bool            detached;        /* no socket (bd_http_serve_bytes/_reads) */
    bool            in_value;        /* the parser is inside a header value */
    bool            is_authz;        /* ... of the Authorization header */
    bool            authz_seen, authz_bad;
    bool            decided;         /* the handler called bd_http_authorize for this request */
    bool            allowed;         /* ... and the token holds the role it needs */
    size_t          field_len, authz_len;
    char            field[16];       /* the current header's name (its first bytes) */
    char            authz[MAX_AUTHZ];
    bd_tls_conn    *tls;             /* NULL = plaintext */
    unsigned char   peer[16];        /* the client's address (IPv4: 4 bytes), for the per-IP cap */
    size_t          peer_len;
    void          (*sink)(void *, const char *, size_t);   /* detached output */
    void           *sink_arg;
    int             reject;          /* the status a parser callback chose for a bad request */
    int             writes;          /* uv_write requests in flight */
    uint64_t        out_progress;    /* loop time the client last took output (a write done,
                                      * or the write queue seen shorter), or output began */
    size_t          out_left;        /* the write queue's length when last looked at
                                      * (SIZE_MAX: not looked at since output began) */
    size_t          head_bytes;      /* of the head being parsed, in earlier parser calls */
    size_t          trailer_bytes, body_bytes, url_len;
    const char     *exec_at;         /* where the running parser call began (head counting) */
    uint64_t        deadline;        /* loop time the request in progress must be in by */
    uint64_t        req_start;       /* loop time of its first byte */
    uint64_t        body_start;      /* ... and of the end of its head */
    char           *in;              /* the backlog: received bytes not yet parsed */
    size_t          in_len, in_cap;  /* in_cap grows up to max_pipeline_bytes */
    bd_http_pending *waiting;        /* the deferred answer this connection waits for */
    char           *body;            /* keep_body: the request body so far */
    size_t          body_cap;
    char           *hdrs;            /* keep_body: "name\0value\0" for every header */
    size_t          hdrs_len, hdrs_cap;
    int             hdr_state;       /* 0 before the first header, 1 in a name, 2 in a value */
    char            url[MAX_URL + 1];
    char            rbuf[READ_CHUNK];    /* TLS ciphertext; bytes discarded while lingering */
};

typedef struct wreq {
    uv_write_t req;
    conn      *c;
    char      *body;
    char       head[768];
} wreq;

void bd_http_limits_default(bd_http_limits *l)
{
    l->max_head_bytes   = 16 * 1024;
    l->max_body_bytes   = 64 * 1024;
    l->max_connections  = 256;
    l->max_connections_per_ip = 64;
    l->max_unsent_bytes = 1024 * 1024;
    l->max_pipeline_bytes = 64 * 1024;
    l->timeout_ms       = 30 * 1000;
    l->min_rate_bytes_per_s = 1024;
    l->min_rate_grace_ms = 10 * 1000;
    l->keep_body        = false;
    l->json_errors      = false;
}

static void conn_free(conn *c)
{
    bd_tls_conn_free(c->tls);
    free(c->in);
    free(c->body);
    free(c->hdrs);
    free(c);
}

/* ---- the socket, or none --------------------------------------------------------------- */

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void on_timer(uv_timer_t *t);
static void close_conn(conn *c);

static void read_start(conn *c)
{
    if (c->detached || c->reading)
        return;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        close_conn(c);
        return;
    }
    c->reading = true;
}

static void read_stop(conn *c)
{
    if (c->detached || !c->reading)
        return;
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
}

/* The loop's time in ms; 0 without a loop (detached: no clocks). */
static uint64_t now_ms(const conn *c)
{
    return c->detached ? 0 : uv_now(c->srv->loop);
}

/* ---- the backlog ---------------------------------------------------------------------- */

static size_t backlog_limit(const bd_http_server *s)
{
    return s->lim.max_pipeline_bytes > READ_CHUNK ? s->lim.max_pipeline_bytes : READ_CHUNK;
}

/* Room at the backlog's end for the next read, growing it (up to the limit) when less than
 * a read's worth is left; 0 when it is full or cannot grow. */
static size_t backlog_room(conn *c)
{
    size_t limit = backlog_limit(c->srv);
    if (c->in_cap - c->in_len < READ_CHUNK && c->in_cap < limit) {
        size_t cap = c->in_cap ? 2 * c->in_cap : READ_CHUNK;
        if (cap > limit)
            cap = limit;
        char *b = realloc(c->in, cap);
        if (b) {
            c->in = b;
            c->in_cap = cap;
        }
    }
    return c->in_cap - c->in_len;
}

/* Drop the first N bytes: they are parsed. An emptied large backlog is given back. */
static void backlog_consume(conn *c, size_t n)
{
    if (n == 0)
        return;                      /* and c->in may be NULL */
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
    if (c->in_len == 0 && c->in_cap > READ_CHUNK) {
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
}

/* Read from the socket while the connection takes requests and the backlog has room: a full
 * backlog stops reading, and the client's TCP window closes (backpressure). */
static void update_reading(conn *c)
{
    if (c->state == C_OPEN && !c->finish && !c->eof && c->in_len < backlog_limit(c->srv))
        read_start(c);
    else if (c->state == C_OPEN)
        read_stop(c);
}

/* ---- time ----------------------------------------------------------------------------- */

/* When the request in progress falls behind the minimum rate by more than the grace: its
 * head counted from its first byte, its body from the head's end. UINT64_MAX when no
 * request is arriving or there is no minimum. */
static uint64_t rate_due(const conn *c)
{
    const bd_http_limits *l = &c->srv->lim;
    if (!c->in_request || !l->min_rate_bytes_per_s)
        return UINT64_MAX;
    uint64_t start = c->head_done ? c->body_start : c->req_start;
    uint64_t bytes = c->head_done ? c->body_bytes : c->head_bytes;
    return start + l->min_rate_grace_ms + bytes * 1000 / l->min_rate_bytes_per_s;
}

/* Arm the timer for the earlier of the request deadline and the rate check; stopped while a
 * deferred answer is computed (the run time is not the client's). */
static void arm_timer(conn *c)
{
    if (c->detached || c->state != C_OPEN)
        return;
    if (c->waiting) {
        uv_timer_stop(&c->timer);
        return;
    }
    uint64_t due = c->deadline, rate = rate_due(c), now = now_ms(c);
    if (rate < due)
        due = rate;
    uv_timer_start(&c->timer, on_timer, due > now ? due - now : 0, 0);
}

/* A new request, or the connection's first, must arrive within timeout_ms from now. */
static void restart_deadline(conn *c)
{
    c->deadline = now_ms(c) + c->srv->lim.timeout_ms;
    arm_timer(c);
}

static size_t write_queue(conn *c)
{
    return c->detached ? 0 : uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp);
}

/* ---- closing --------------------------------------------------------------------------- */

static void mailbox_unref(mailbox *mb)
{
    pthread_mutex_lock(&mb->lock);
    int left = --mb->refs;
    pthread_mutex_unlock(&mb->lock);
    if (left == 0) {
        pthread_mutex_destroy(&mb->lock);
        free(mb);
    }
}

static void pending_free(bd_http_pending *p)
{
    if (p->release)
        p->release(p->watch_arg);
    free(p->res.body);
    mailbox *mb = p->mb;
    free(p);
    if (mb)
        mailbox_unref(mb);
}

static void maybe_done(bd_http_server *s)
{
    if (!s->closing || !s->listener_closed || s->conns || (s->mb && !s->async_closed))
        return;
    if (s->mb)
        mailbox_unref(s->mb);
    void (*done)(void *) = s->done;
    void *arg = s->done_arg;
    SSL_CTX_free(s->tls);
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
    conn_free(c);
    maybe_done(s);
}

static void close_conn(conn *c)
{
    if (c->state == C_CLOSING)
        return;
    c->state = C_CLOSING;
    if (c->waiting) {                /* its answer will find no one */
        bd_http_pending *p = c->waiting;
        p->c = NULL;
        c->waiting = NULL;
        if (p->gone)
            p->gone(p->watch_arg);
    }
    if (c->counted) {
        c->counted = false;
        c->srv->n_active--;
    }
    if (c->detached)
        return;                      /* freed by bd_http_serve_bytes */
    /* pending writes and the shutdown request complete with UV_ECANCELED before the close
     * callbacks run, so their memory is released before the connection's */
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
}

/* The request deadline passed, the request fell too far behind the minimum rate, or the
 * linger time is over: close. Otherwise the rate deadline moved on with new bytes: re-arm. */
static void on_timer(uv_timer_t *t)
{
    conn *c = t->data;
    uint64_t now = now_ms(c);
    if (c->state != C_OPEN || now >= c->deadline || now >= rate_due(c))
        close_conn(c);
    else
        arm_timer(c);
}

/* Plaintext is read straight into the backlog; TLS ciphertext (and what a lingering
 * connection discards) into rbuf. */
static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    conn *c = h->data;
    (void)hint;
    if (c->state == C_OPEN && !c->tls) {
        size_t room = backlog_room(c);
        *buf = uv_buf_init(room ? c->in + c->in_len : NULL, (unsigned)room);
        return;
    }
    *buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    conn *c = req->data;
    if (status < 0)
        close_conn(c);
}

static void tls_flush(conn *c);

/* Every response is out: half-close and drain what the client still sends. */
static void linger(conn *c)
{
    if (c->state != C_OPEN)
        return;
    if (c->eof || c->detached) {     /* nothing left to drain */
        close_conn(c);
        return;
    }
    if (c->tls) {                    /* close_notify goes out before the FIN */
        bd_tls_conn_shutdown(c->tls);
        tls_flush(c);
        if (c->state != C_OPEN)
            return;
    }
    c->state = C_LINGER;
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        close_conn(c);
        return;
    }
    uv_timer_start(&c->timer, on_timer, LINGER_MS, 0);
    read_start(c);                   /* into rbuf, discarded */
}

/* ---- responses ------------------------------------------------------------------------- */

static void pump(conn *c);

static void on_write(uv_write_t *req, int status)
{
    wreq *w = (wreq *)req;
    conn *c = w->c;
    free(w->body);
    free(w);
    c->writes--;
    c->out_progress = now_ms(c);     /* the client took a whole answer's bytes */
    c->out_left = SIZE_MAX;
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
    if (c->paused && write_queue(c) <= c->srv->lim.max_unsent_bytes / 2) {
        c->paused = false;           /* the client caught up: parse what it sent meanwhile */
        pump(c);
    }
}

/* Write BUFS (N of them) for W: to the socket, or for a detached connection to the sink,
 * completing at once. On failure W and its body are freed and the connection closed. */
static void conn_write(conn *c, wreq *w, uv_buf_t *bufs, unsigned n)
{
    if (c->writes == 0) {
        c->out_progress = now_ms(c); /* nothing was waiting: the client's reading clock starts */
        c->out_left = SIZE_MAX;
    }
    c->writes++;
    if (c->detached) {
        for (unsigned i = 0; i < n; i++)
            if (bufs[i].len)
                c->sink(c->sink_arg, bufs[i].base, bufs[i].len);
        on_write(&w->req, 0);
        return;
    }
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, bufs, n, on_write) != 0) {
        c->writes--;
        free(w->body);
        free(w);
        close_conn(c);
    }
}

/* Send the ciphertext OpenSSL has produced (handshake, responses, alerts). */
static void tls_flush(conn *c)
{
    char *out = NULL;
    size_t len = 0;
    if (bd_tls_conn_take(c->tls, &out, &len) != 0) {
        close_conn(c);
        return;
    }
    if (!out)
        return;
    wreq *w = malloc(sizeof *w);
    if (!w) {
        free(out);
        close_conn(c);
        return;
    }
    w->c = c;
    w->body = out;
    uv_buf_t buf = uv_buf_init(out, (unsigned)len);
    conn_write(c, w, &buf, 1);
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
                     "%s%s%s"
                     "%s"
                     "Connection: %s\r\n"
                     "\r\n",
                     res->status, reason,
                     res->content_type ? res->content_type : "text/plain; charset=utf-8",
                     content_length,
                     res->allow ? "Allow: " : "", res->allow ? res->allow : "",
                     res->allow ? "\r\n" : "",
                     res->www_authenticate ? "WWW-Authenticate: " : "",
                     res->www_authenticate ? res->www_authenticate : "",
                     res->www_authenticate ? "\r\n" : "",
                     res->headers,
                     keep_alive ? "keep-alive" : "close");
    if (n <= 0 || (size_t)n >= sizeof w->head) {
        free(w->body);      /* cannot happen with the static strings the handlers pass */
        free(w);
        close_conn(c);
        return;
    }
    size_t body_len = w->body ? content_length : 0;
    if (c->tls) {
        /* encrypt head and body; the ciphertext goes out as one write */
        int bad = bd_tls_conn_write(c->tls, w->head, (size_t)n) ||
                  (body_len && bd_tls_conn_write(c->tls, w->body, body_len));
        free(w->body);
        free(w);
        if (bad)
            close_conn(c);
        else
            tls_flush(c);
        return;
    }
    uv_buf_t bufs[2] = { uv_buf_init(w->head, (unsigned)n), uv_buf_init(w->body, 0) };
    unsigned nbufs = 1;
    if (body_len) {
        bufs[1] = uv_buf_init(w->body, (unsigned)body_len);
        nbufs = 2;
    }
    conn_write(c, w, bufs, nbufs);
}

/* An interim "100 Continue": a client that sent Expect: 100-continue (curl does for bodies
 * over 1 KiB) sends its body at once instead of after a second's wait. */
static void send_continue(conn *c)
{
    static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
    if (c->tls) {
        if (bd_tls_conn_write(c->tls, line, sizeof line - 1) != 0)
            close_conn(c);
        else
            tls_flush(c);
        return;
    }
    wreq *w = malloc(sizeof *w);
    if (!w) {
        close_conn(c);
        return;
    }
    w->c = c;
    w->body = NULL;
    memcpy(w->head, line, sizeof line);
    uv_buf_t buf = uv_buf_init(w->head, sizeof line - 1);
    conn_write(c, w, &buf, 1);
}

static void send_error(conn *c, int status)
{
    char *body = NULL;
    const char *reason = http_status_str((enum http_status)status);
    bool json = c->srv->lim.json_errors;
    int n = json ? asprintf(&body, "{\"error\":\"%d %s\"}", status, reason)
                 : asprintf(&body, "%d %s\n", status, reason);
    size_t len = n > 0 ? (size_t)n : 0;
    if (n < 0)
        body = NULL;
    bd_http_response res = { .status = status, .body = body, .len = len,
                             .content_type = json ? "application/json" : NULL };
    send_response(c, false, false, &res);
}

/* ---- parsing --------------------------------------------------------------------------- */

static int reject(conn *c, int status)
{
    c->reject = status;
    return 1;                        /* stops the parser with HPE_CB_* */
}

/* The head so far, up to END in the running parser call, is within the limit. Every byte
 * counts: the calls that began in this head brought head_bytes, and this call began in it at
 * exec_at. Trailers (after a chunked body) count their names and values and 2 bytes a line
 * (':' and a line end) against the same limit. */
static bool head_fits(conn *c, const char *end, size_t len, bool new_line)
{
    size_t n = c->in_head ? c->head_bytes + (size_t)(end - c->exec_at)
                          : (c->trailer_bytes += len + (new_line ? 2 : 0));
    return n <= c->srv->lim.max_head_bytes;
}

static int on_message_begin(http_parser *p)
{
    conn *c = p->data;
    c->body_bytes = c->trailer_bytes = c->url_len = 0;
    c->reject = 0;
    c->in_request = true;
    c->req_start = now_ms(c);
    arm_timer(c);                    /* the minimum rate applies from now */
    c->head_done = false;
    c->in_value = c->is_authz = c->authz_seen = c->authz_bad = false;
    c->decided = c->allowed = false;
    c->field_len = c->authz_len = 0;
    c->hdrs_len = 0;
    c->hdr_state = 0;
    return 0;
}

/* keep_body: append LEN bytes (or a NUL when AT is NULL) to the header store, whose size
 * bounds it (every header byte is counted against max_head_bytes first). */
static int hdr_put(conn *c, const char *at, size_t len)
{
    if (!c->srv->lim.keep_body)
        return 0;
    if (!c->hdrs) {
        c->hdrs_cap = 3 * c->srv->lim.max_head_bytes + 4;   /* 2 NULs a header, 1+ byte each */
        if (!(c->hdrs = malloc(c->hdrs_cap)))
            return reject(c, HTTP_STATUS_INTERNAL_SERVER_ERROR);
    }
    size_t n = at ? len : 1;
    if (c->hdrs_len + n > c->hdrs_cap)
        return reject(c, HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE);
    if (at)
        memcpy(c->hdrs + c->hdrs_len, at, len);
    else
        c->hdrs[c->hdrs_len] = '\0';
    c->hdrs_len += n;
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (c->url_len + len > MAX_URL)
        return reject(c, HTTP_STATUS_URI_TOO_LONG);
    if (!head_fits(c, at + len, len, false))
        return reject(c, HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE);
    memcpy(c->url + c->url_len, at, len);
    c->url_len += len;
    c->url[c->url_len] = '\0';
    return 0;
}

/* Header names and values come in pieces: the name's first bytes are kept to recognise
 * Authorization, whose value is kept (bounded) for the token check. */
static int on_header_field(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (!head_fits(c, at + len, len, c->hdr_state != 1))
        return reject(c, HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE);
    if (c->in_value) {               /* a new header begins */
        c->in_value = false;
        c->field_len = 0;
    }
    if (c->hdr_state == 2 && hdr_put(c, NULL, 0))
        return 1;
    c->hdr_state = 1;
    if (hdr_put(c, at, len))
        return 1;
    if (c->field_len + len <= sizeof c->field)
        memcpy(c->field + c->field_len, at, len);
    c->field_len += len;             /* bounded by max_head_bytes */
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (!head_fits(c, at + len, len, false))
        return reject(c, HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE);
    if (c->hdr_state == 1 && hdr_put(c, NULL, 0))
        return 1;
    c->hdr_state = 2;
    if (hdr_put(c, at, len))
        return 1;
    if (!c->in_value) {
        c->in_value = true;
        c->is_authz = c->field_len == 13 && strncasecmp(c->field, "authorization", 13) == 0;
        if (c->is_authz) {
            c->authz_bad |= c->authz_seen;     /* two Authorization headers: refuse both */
            c->authz_seen = true;
            c->authz_len = 0;
        }
    }
    if (c->is_authz) {
        if (c->authz_len + len > sizeof c->authz) {
            c->authz_bad = true;
        } else {
            memcpy(c->authz + c->authz_len, at, len);
            c->authz_len += len;
        }
    }
    return 0;
}

/* The parser pauses here: head_complete() runs once the head's size is known. */
static int on_headers_complete(http_parser *p)
{
    conn *c = p->data;
    if (c->in_head) {
        c->in_head = false;
        http_parser_pause(p, 1);
    }
    if (c->srv->lim.keep_body && c->hdr_state == 2 && hdr_put(c, NULL, 0))
        return -1;
    c->hdr_state = 0;
    return 0;
}

/* The parser paused at the end of a head of HEAD_LEN bytes: refuse it (431, or 413 for a
 * declared body over the limit, before any of it is read or stored), or prepare for its body.
 * False when refused. */
static bool head_complete(conn *c, size_t head_len)
{
    http_parser *p = &c->parser;
    bd_http_server *s = c->srv;
    c->head_bytes = head_len;
    if (head_len > s->lim.max_head_bytes) {
        c->reject = HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE;
        return false;
    }
    c->head_done = true;
    c->body_start = now_ms(c);
    arm_timer(c);                    /* the body's minimum rate counts from now */
    if (!s->lim.keep_body)
        return true;
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > s->lim.max_body_bytes) {
        c->reject = HTTP_STATUS_PAYLOAD_TOO_LARGE;
        return false;
    }
    /* room for a declared body, up to BODY_RESERVE at once: a client that declares a large
     * body and sends nothing holds no large buffer; on_body grows it as bytes arrive */
    size_t want = (p->flags & F_CONTENTLENGTH) ? (size_t)p->content_length + 1 : 0;
    if (want > BODY_RESERVE)
        want = BODY_RESERVE;
    if (want > c->body_cap) {
        free(c->body);
        c->body_cap = 0;
        if (!(c->body = malloc(want))) {
            c->reject = HTTP_STATUS_PAYLOAD_TOO_LARGE;
            return false;
        }
        c->body_cap = want;
    }
    const char *expect = NULL;
    bd_http_request probe = { .conn_ = c };
    if (p->http_major == 1 && p->http_minor >= 1 &&
        (expect = bd_http_request_header(&probe, "expect")) && !strcasecmp(expect, "100-continue"))
        send_continue(c);
    return c->state == C_OPEN;
}

bool bd_http_authorize(const bd_http_request *req, bd_role need, bd_http_response *res)
{
    conn *c = req->conn_;
    bd_http_server *s = c->srv;
    c->decided = true;
    c->allowed = !s->auth;
    if (!s->auth)
        return true;
    bd_auth_result r = c->authz_bad ? BD_AUTH_INVALID
                     : bd_auth_check(s->auth, c->authz_seen ? c->authz : NULL, c->authz_len, need);
    const char *msg = NULL;
    switch (r) {
    case BD_AUTH_OK:
        c->allowed = true;
        return true;
    case BD_AUTH_MISSING:
        res->status = 401;
        res->www_authenticate = "Bearer realm=\"braidd\"";
        msg = "401 Unauthorized: send 'Authorization: Bearer <token>'\n";
        break;
    case BD_AUTH_INVALID:
        res->status = 401;
        res->www_authenticate = "Bearer realm=\"braidd\", error=\"invalid_token\"";
        msg = "401 Unauthorized: invalid token\n";
        break;
    case BD_AUTH_FORBIDDEN:
        res->status = 403;
        res->www_authenticate = "Bearer realm=\"braidd\", error=\"insufficient_scope\"";
        msg = "403 Forbidden: this operation needs a token of another role\n";
        break;
    }
    free(res->body);
    res->content_type = NULL;
    res->body = strdup(msg);
    res->len = res->body ? strlen(res->body) : 0;
    return false;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    size_t have = c->body_bytes;
    c->body_bytes += len;
    if (c->body_bytes > c->srv->lim.max_body_bytes)
        return reject(c, HTTP_STATUS_PAYLOAD_TOO_LARGE);
    if (!c->srv->lim.keep_body)
        return 0;
    if (c->body_bytes + 1 > c->body_cap) {          /* chunked: grow, bounded by the limit */
        size_t cap = c->body_cap ? c->body_cap : 4096;
        while (cap < c->body_bytes + 1)
            cap *= 2;
        if (cap > c->srv->lim.max_body_bytes + 1)
            cap = c->srv->lim.max_body_bytes + 1;
        if ((p->flags & F_CONTENTLENGTH) && cap > c->body_bytes + p->content_length + 1)
            cap = c->body_bytes + (size_t)p->content_length + 1;   /* what is declared, no more */
        char *b = realloc(c->body, cap);
        if (!b)
            return reject(c, HTTP_STATUS_PAYLOAD_TOO_LARGE);
        c->body = b;
        c->body_cap = cap;
    }
    memcpy(c->body + have, at, len);
    return 0;
}

const char *bd_http_request_header(const bd_http_request *req, const char *name)
{
    conn *c = req->conn_;
    if (!c || !c->hdrs)
        return NULL;
    for (size_t i = 0; i < c->hdrs_len;) {
        const char *n = c->hdrs + i;
        size_t nl = strnlen(n, c->hdrs_len - i);
        if (i + nl + 1 >= c->hdrs_len)
            break;
        const char *v = n + nl + 1;
        size_t vl = strnlen(v, c->hdrs_len - (i + nl + 1));
        if (!strcasecmp(n, name))
            return v;
        i += nl + 1 + vl + 1;
    }
    return NULL;
}

char *bd_http_request_take_body(const bd_http_request *req)
{
    conn *c = req->conn_;
    if (!c || !req->body)
        return NULL;
    char *b = c->body;
    c->body = NULL;
    c->body_cap = 0;
    return b;
}

bd_http_pending *bd_http_defer(const bd_http_request *req)
{
    conn *c = req->conn_;
    if (!c || !c->srv->mb || c->waiting || (c->detached && !c->srv->mb->polled))
        return NULL;
    if (c->srv->auth && !(c->decided && c->allowed))
        return NULL;                 /* fail closed: nothing runs later on an unchecked token */
    bd_http_pending *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    mailbox *mb = c->srv->mb;
    pthread_mutex_lock(&mb->lock);
    mb->refs++;
    pthread_mutex_unlock(&mb->lock);
    p->mb = mb;
    p->c = c;
    c->waiting = p;
    return p;
}

void bd_http_pending_watch(bd_http_pending *p, void (*gone)(void *arg),
                           void (*release)(void *arg), void *arg)
{
    p->gone = gone;
    p->release = release;
    p->watch_arg = arg;
}

void bd_http_pending_finish(bd_http_pending *p, bd_http_response *res)
{
    p->res = *res;
    res->body = NULL;
    mailbox *mb = p->mb;
    pthread_mutex_lock(&mb->lock);
    if (!mb->async && !mb->polled) { /* the server is closing: nobody will send it */
        pthread_mutex_unlock(&mb->lock);
        pending_free(p);
        return;
    }
    if (mb->tail)
        mb->tail->next = p;
    else
        mb->head = p;
    mb->tail = p;
    if (mb->async)
        uv_async_send(mb->async);    /* under the lock: the handle cannot be closing */
    pthread_mutex_unlock(&mb->lock);
}

/* After a response went out for a request of C: the clock restarts, and the parser stops
 * after a last request or while the client does not read. */
static void after_response(conn *c, bool keep_alive)
{
    if (!keep_alive)
        c->finish = true;            /* anything pipelined after it is ignored */
    else if (write_queue(c) > c->srv->lim.max_unsent_bytes)
        c->paused = true;            /* the client does not read: hold further requests */
    restart_deadline(c);
}

/* Deferred answers arrived: send each to its connection if it is still open, and parse what
 * its client sent meanwhile. */
static void deliver_mail(bd_http_server *s)
{
    pthread_mutex_lock(&s->mb->lock);
    bd_http_pending *p = s->mb->head;
    s->mb->head = s->mb->tail = NULL;
    pthread_mutex_unlock(&s->mb->lock);
    while (p) {
        bd_http_pending *next = p->next;
        conn *c = p->c;
        if (c && c->state == C_OPEN) {
            c->waiting = NULL;
            send_response(c, p->head_only, p->keep_alive, &p->res);
            p->res.body = NULL;
            if (c->state == C_OPEN) {
                after_response(c, p->keep_alive);
                pump(c);
            }
        }
        pending_free(p);
        p = next;
    }
}

static void on_mail(uv_async_t *a)
{
    deliver_mail(a->data);
}

/* A request is in: answer it (or defer the answer). The parser pauses, so the parse loop
 * decides whether the next request is parsed now. */
static int on_message_complete(http_parser *p)
{
    conn *c = p->data;
    bd_http_server *s = c->srv;
    bool keep_alive = http_should_keep_alive(p) && !p->upgrade && !s->closing;
    http_parser_pause(p, 1);
    c->in_head = true;               /* the bytes after it start the next head */
    c->head_bytes = 0;

    struct http_parser_url u;
    http_parser_url_init(&u);
    char path[MAX_URL + 1] = "/", query[MAX_URL + 1] = "";
    if (http_parser_parse_url(c->url, c->url_len, 0, &u) != 0) {
        /* not a valid request target: answer 400 and stop */
        c->finish = true;
        c->in_request = false;
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

    bd_http_request req = { .method = (int)p->method, .path = path, .query = query,
                            .conn_ = c };
    if (s->lim.keep_body) {
        if (!c->body && !(c->body = malloc(c->body_cap = 1)))
            c->body_cap = 0;
        if (c->body) {
            c->body[c->body_bytes] = '\0';
            req.body = c->body;
            req.body_len = c->body_bytes;
        }
    }
    bd_http_response res = { .status = 500 };
    c->in_request = false;
    s->handler(s->arg, &req, &res);
    if (s->auth && !c->decided) {    /* a handler that forgot the check: fail closed */
        free(res.body);
        res = (bd_http_response){ .status = 500 };
        res.body = strdup("500 Internal Server Error: no authorization decision\n");
        res.len = res.body ? strlen(res.body) : 0;
    }
    if (c->body && c->body_cap > 65536) {     /* keep a small buffer, not a big one */
        free(c->body);
        c->body = NULL;
        c->body_cap = 0;
    }
    if (c->waiting) {                /* answered later (deliver_mail): parse nothing meanwhile */
        free(res.body);
        c->waiting->head_only = p->method == HTTP_HEAD;
        c->waiting->keep_alive = keep_alive;
        arm_timer(c);                /* stopped: the model's run time is not the client's */
        return 0;
    }
    send_response(c, p->method == HTTP_HEAD, keep_alive, &res);
    if (c->state != C_OPEN)
        return 0;
    after_response(c, keep_alive);  /* a completed request restarts the clock */
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin    = on_message_begin,
    .on_url              = on_url,
    .on_header_field     = on_header_field,
    .on_header_value     = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body             = on_body,
    .on_message_complete = on_message_complete,
};

/* Parse the backlog while nothing holds the connection: a deferred answer, output the
 * client has not read, a last request answered. */
static void parse_backlog(conn *c)
{
    size_t off = 0;
    while (off < c->in_len && c->state == C_OPEN && !c->finish && !c->waiting && !c->paused) {
        bool was_in_head = c->in_head;
        c->exec_at = c->in + off;
        size_t n = http_parser_execute(&c->parser, &settings, c->exec_at, c->in_len - off);
        off += n;
        if (c->state != C_OPEN)
            break;
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e == HPE_PAUSED) {
            http_parser_pause(&c->parser, 0);
            /* paused at a head's end: the final LF is left for the next call */
            if (was_in_head && !c->in_head && !head_complete(c, c->head_bytes + n + 1))
                e = HPE_CB_headers_complete;
        } else if (e == HPE_OK && was_in_head) {
            c->head_bytes += n;      /* a head still arriving: its bytes so far */
            if (c->head_bytes > c->srv->lim.max_head_bytes) {
                c->reject = HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE;
                e = HPE_CB_headers_complete;
            }
        }
        if (c->state != C_OPEN || c->finish)
            break;
        if (e != HPE_OK && e != HPE_PAUSED) {
            int status = c->reject ? c->reject
                       : e == HPE_HEADER_OVERFLOW ? HTTP_STATUS_REQUEST_HEADER_FIELDS_TOO_LARGE
                       : HTTP_STATUS_BAD_REQUEST;
            c->finish = true;
            send_error(c, status);
            break;
        }
        if (n == 0 && e == HPE_OK)
            break;                   /* cannot happen: the parser takes all it is given */
    }
    if (c->state != C_CLOSING)
        backlog_consume(c, off);
}

/* TLS: decrypt what OpenSSL holds into the backlog's room. True when plaintext was added.
 * The client's close_notify is its end of file; a failed session finishes the connection. */
static void client_eof(conn *c);
static bool tls_decrypt(conn *c)
{
    bool added = false;
    while (c->state == C_OPEN && c->in_len < backlog_limit(c->srv)) {
        size_t room = backlog_room(c);
        if (room == 0)
            break;
        ssize_t n = bd_tls_conn_read(c->tls, c->in + c->in_len, room);
        if (n > 0) {
            c->in_len += (size_t)n;
            added = true;
            continue;
        }
        if (n == BD_TLS_FAILED) {
            bd_log(BD_LOG_DEBUG, NULL, NULL, "status endpoint: TLS failed: %s",
                   bd_tls_conn_error(c->tls));
            tls_flush(c);            /* the alert, if any */
            if (c->state != C_OPEN)
                break;
            c->finish = true;
            if (c->writes == 0)
                close_conn(c);
        } else if (n == BD_TLS_CLOSED) {
            client_eof(c);
        }
        break;                       /* else: OpenSSL needs more input */
    }
    return added;
}

/* Parse what came, then decide about reading: the one place that does. Runs after every
 * event that may let parsing go on: bytes read, an answer delivered, output drained. */
static void pump(conn *c)
{
    if (c->pumping)
        return;                      /* the outer call loops again */
    c->pumping = true;
    for (int guard = 0; guard < 1024 && c->state == C_OPEN; guard++) {
        parse_backlog(c);
        if (!c->tls || c->state != C_OPEN || c->finish || !tls_decrypt(c))
            break;
    }
    c->pumping = false;
    if (c->state != C_OPEN)
        return;
    if (c->tls)
        tls_flush(c);                /* handshake messages, alerts */
    if (c->state != C_OPEN)
        return;
    if (c->eof && !c->waiting && !c->paused)
        c->finish = true;            /* what is left is no complete request */
    if (c->finish) {
        read_stop(c);
        if (c->writes == 0)
            linger(c);
        return;
    }
    update_reading(c);
}

/* The client closed its side (end of file, close_notify). While its answer is still being
 * computed it has gone: close, which cancels the request if it is still queued
 * (bd_http_pending_watch). Otherwise what it sent before is still answered, then the
 * connection closes. */
static void client_eof(conn *c)
{
    if (c->waiting) {
        close_conn(c);
        return;
    }
    c->eof = true;
    read_stop(c);
    pump(c);
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
        if (nread == UV_EOF)
            client_eof(c);
        else
            close_conn(c);
        return;
    }
    if (!c->tls) {
        c->in_len += (size_t)nread;                    /* on_alloc gave the backlog's room */
    } else if (bd_tls_conn_put(c->tls, buf->base, (size_t)nread) != 0) {
        close_conn(c);
        return;
    }
    pump(c);
}

/* ---- listening ------------------------------------------------------------------------- */

/* C's request is stalled at NOW: its head is still arriving, or its body is behind the
 * minimum rate (fewer bytes than min_rate_bytes_per_s times the seconds since the head).
 * *RATE: the bytes a second it has managed, to find the slowest. */
static bool stalled(const conn *c, uint64_t now, uint64_t *rate)
{
    uint64_t min_rate = c->srv->lim.min_rate_bytes_per_s;
    uint64_t start = c->head_done ? c->body_start : c->req_start;
    uint64_t bytes = c->head_done ? c->body_bytes : c->head_bytes;
    uint64_t ms = now > start ? now - start : 0;
    *rate = bytes * 1000 / (ms ? ms : 1);
    return !c->head_done || bytes * 1000 < min_rate * ms;
}

/* A client that does not read its answers: output waits for it and it has taken none for
 * longer than the grace (no write completed, the write queue not shorter than when last
 * looked at). RATE is 0 for such a connection. */
static bool reader_stalled(conn *c, uint64_t now, uint64_t *rate)
{
    const bd_http_limits *l = &c->srv->lim;
    size_t left = write_queue(c);
    if (c->out_left != SIZE_MAX && left < c->out_left)
        c->out_progress = now;       /* shorter than when last looked at (not at a first look) */
    c->out_left = left;
    *rate = 0;
    return c->writes > 0 && l->min_rate_bytes_per_s && now > c->out_progress &&
           now - c->out_progress > l->min_rate_grace_ms;
}

/* At a limit: the connection to close for a new one (http_server.h), or NULL; among those
 * of the new connection's address only when SAME_PEER is given. First the oldest idle one
 * (the list is newest first, so the last match); else the slowest stalled one, the older on
 * a tie: a head still arriving, a body behind the minimum rate, or answers the client has
 * not been reading for longer than the grace. Never one waiting for its deferred answer,
 * nor one sending answers that its client reads. */
static conn *reusable(bd_http_server *s, const conn *same_peer)
{
    uint64_t now = uv_now(s->loop), rate = 0, slowest = UINT64_MAX;
    conn *idle = NULL, *slow = NULL;
    for (conn *c = s->conns; c; c = c->next) {
        if (c->state != C_OPEN || !c->counted || c->waiting)
            continue;
        if (same_peer && (c->peer_len != same_peer->peer_len ||
                          memcmp(c->peer, same_peer->peer, c->peer_len) != 0))
            continue;
        bool sending = c->writes > 0 || c->finish || c->paused;
        if (sending) {
            if (reader_stalled(c, now, &rate) && rate <= slowest) {
                slow = c;
                slowest = rate;
            }
        } else if (!c->in_request) {
            idle = c;
        } else if (stalled(c, now, &rate) && rate <= slowest) {
            slow = c;
            slowest = rate;
        }
    }
    return idle ? idle : slow;
}

/* Remember C's peer address; how many other open connections come from it. */
static size_t same_peer_count(bd_http_server *s, conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) != 0)
        return 0;
    if (ss.ss_family == AF_INET) {
        memcpy(c->peer, &((struct sockaddr_in *)&ss)->sin_addr, 4);
        c->peer_len = 4;
    } else if (ss.ss_family == AF_INET6) {
        memcpy(c->peer, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
        c->peer_len = 16;
    }
    size_t n = 0;
    for (conn *o = s->conns; o; o = o->next)
        n += o != c && o->counted && o->peer_len == c->peer_len &&
             memcmp(o->peer, c->peer, c->peer_len) == 0;
    return n;
}

/* Make room for C under the per-address cap, then the global one: false when C must go. */
static bool admit(bd_http_server *s, conn *c)
{
    if (s->lim.max_connections_per_ip &&
        same_peer_count(s, c) >= s->lim.max_connections_per_ip) {
        conn *victim = reusable(s, c);
        if (!victim)
            return false;
        close_conn(victim);
    }
    if (s->n_active >= s->lim.max_connections) {
        conn *victim = reusable(s, NULL);
        if (!victim)
            return false;
        close_conn(victim);
    }
    return true;
}

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
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0 || !admit(s, c)) {
        close_conn(c);
        return;
    }
    if (s->tls && !(c->tls = bd_tls_conn_new(s->tls))) {
        close_conn(c);
        return;
    }
    c->counted = true;
    s->n_active++;
    uv_tcp_nodelay(&c->tcp, 1);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->in_head = true;
    restart_deadline(c);
    update_reading(c);
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
    if (s->lim.keep_body) {          /* handlers may answer later, from other threads */
        mailbox *mb = calloc(1, sizeof *mb);
        if (!mb || uv_async_init(loop, &s->async, on_mail) != 0) {
            free(mb);
            s->closing = true;
            s->listener_closed = false;
            uv_close((uv_handle_t *)&s->listener, free_on_close);
            return bd_error_set(err, BD_ENOMEM, "HTTP server: cannot set up deferred answers");
        }
        pthread_mutex_init(&mb->lock, NULL);
        mb->refs = 1;
        mb->async = &s->async;
        s->async.data = s;
        s->mb = mb;
    }
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

static void on_async_closed(uv_handle_t *h)
{
    bd_http_server *s = h->data;
    s->async_closed = true;
    maybe_done(s);
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
    if (s->mb) {                     /* answers still to come are dropped from now on */
        pthread_mutex_lock(&s->mb->lock);
        s->mb->async = NULL;
        bd_http_pending *p = s->mb->head;
        s->mb->head = s->mb->tail = NULL;
        pthread_mutex_unlock(&s->mb->lock);
        while (p) {
            bd_http_pending *next = p->next;
            pending_free(p);
            p = next;
        }
        uv_close((uv_handle_t *)&s->async, on_async_closed);
    }
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
}

void bd_http_server_set_security(bd_http_server *s, const bd_http_security *sec)
{
    if (sec->tls)
        SSL_CTX_up_ref(sec->tls);
    SSL_CTX_free(s->tls);
    s->tls = sec->tls;
    s->auth = sec->auth;
}

/* ---- without a socket -------------------------------------------------------------------- */

/* One connection without a socket: DATA read in the sizes READS gives (cycling; 0 = a read
 * that brings nothing), each capped by the backlog's room as a socket read is; after each,
 * BETWEEN(ARG) and the deferred answers it finished. DEFER: handlers may defer. */
static void serve_detached(const bd_http_limits *limits, const bd_http_security *sec,
                           bd_http_handler handler, void *arg, bool defer,
                           const char *data, size_t len, const size_t *reads, size_t n_reads,
                           void (*between)(void *arg),
                           void (*sink)(void *sink_arg, const char *bytes, size_t n),
                           void *sink_arg)
{
    bd_http_server *s = calloc(1, sizeof *s);
    conn *c = calloc(1, sizeof *c);
    mailbox *mb = defer ? calloc(1, sizeof *mb) : NULL;
    if (!s || !c || (defer && !mb)) {
        free(s);
        free(c);
        free(mb);
        return;
    }
    if (limits)
        s->lim = *limits;
    else
        bd_http_limits_default(&s->lim);
    s->handler = handler;
    s->arg = arg;
    if (sec) {
        s->auth = sec->auth;
    }
    if (mb) {
        pthread_mutex_init(&mb->lock, NULL);
        mb->refs = 1;
        mb->polled = true;
        s->mb = mb;
    }
    c->srv = s;
    c->detached = true;
    c->sink = sink;
    c->sink_arg = sink_arg;
    c->counted = true;
    c->in_head = true;
    s->n_active = 1;
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    size_t off = 0, step = 0, still = 0;
    /* a socket would wait for the answer a handler deferred; give up after 1000 idle reads */
    while (c->state == C_OPEN && !c->finish && (off < len || c->waiting) && still < 1000) {
        size_t want = off < len && n_reads ? reads[step++ % n_reads] : 0, got = 0;
        if (want) {
            size_t room = backlog_room(c);
            got = want < room ? want : room;
            if (got > len - off)
                got = len - off;
            if (got) {
                memcpy(c->in + c->in_len, data + off, got);
                c->in_len += got;
                off += got;
            }
            pump(c);
        }
        bool was_waiting = c->waiting != NULL;
        if (between)
            between(arg);
        if (mb)
            deliver_mail(s);
        still = got || (was_waiting && !c->waiting) ? 0 : still + 1;
    }
    if (c->state == C_OPEN)
        client_eof(c);
    if (c->state != C_CLOSING)
        close_conn(c);
    if (mb) {                        /* answers finished later are dropped */
        pthread_mutex_lock(&mb->lock);
        mb->polled = false;
        bd_http_pending *p = mb->head;
        mb->head = mb->tail = NULL;
        pthread_mutex_unlock(&mb->lock);
        while (p) {
            bd_http_pending *next = p->next;
            pending_free(p);
            p = next;
        }
        mailbox_unref(mb);
    }
    conn_free(c);
    free(s);
}

void bd_http_serve_bytes(const bd_http_limits *limits, const bd_http_security *sec,
                         bd_http_handler handler, void *arg, const char *data, size_t len,
                         size_t chunk, void (*sink)(void *sink_arg, const char *bytes, size_t n),
                         void *sink_arg)
{
    if (chunk == 0 || chunk > READ_CHUNK)
        chunk = READ_CHUNK;          /* what a socket read would deliver at most */
    serve_detached(limits, sec, handler, arg, false, data, len, &chunk, 1, NULL, sink, sink_arg);
}

void bd_http_serve_reads(const bd_http_limits *limits, const bd_http_security *sec,
                         bd_http_handler handler, void *arg, const char *data, size_t len,
                         const size_t *reads, size_t n_reads, void (*between)(void *arg),
                         void (*sink)(void *sink_arg, const char *bytes, size_t n),
                         void *sink_arg)
{
    serve_detached(limits, sec, handler, arg, true, data, len, reads, n_reads, between, sink,
                   sink_arg);
}
