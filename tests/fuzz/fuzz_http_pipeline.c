/* Pipelining through the HTTP server without a socket (bd_http_serve_reads): a client's
 * valid requests, written back to back and read by the server in arbitrary pieces, some
 * answered at once and some deferred and answered reads later, as the REST port's
 * inferences are. Every complete request must reach the handler exactly once, in order, with
 * its own body, and be answered exactly once, in order: no byte lost, overwritten or parsed
 * twice, whatever the split, the deferrals and the backlog's bound.
 *
 * Input: byte 0 picks the server (bit 0: keep_body; bit 1: a 4 KiB backlog instead of
 * 64 KiB); then up to 48 requests of 2 bytes each (kind, parameter) until a 0xff byte; the
 * rest are the read sizes (each byte % 97, 0 = a read that brings nothing while time
 * passes), used in turn and again from the first.
 *
 * Kinds: GET; HEAD; GET answered later; POST with a Content-Length body; POST with a chunked
 * body; POST with Expect: 100-continue; GET after blank lines; POST answered later. The
 * parameter is the body's length or how many reads later a deferred answer comes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "daemon/http/http_server.h"

/* A broken invariant: say which, then crash for the fuzzer. */
static void fail(const char *why)
{
    fprintf(stderr, "fuzz_http_pipeline: %s\n", why);
    abort();
}

enum { MAX_REQUESTS = 48, K_GET = 0, K_HEAD, K_LATER, K_POST, K_CHUNKED, K_EXPECT, K_BLANK,
       K_POST_LATER, N_KINDS };

typedef struct out_buf {
    char  *data;
    size_t len, cap;
} out_buf;

typedef struct run {
    bool             keep_body;
    int              n;                      /* requests sent */
    uint8_t          kind[MAX_REQUESTS], param[MAX_REQUESTS];
    int              handled;                /* requests the handler saw, in order */
    bd_http_pending *later;                  /* the one deferred answer awaited */
    int              later_id, later_reads;
    out_buf          out;
} run;

static void put(out_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            fail("out of memory");
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_str(out_buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static char body_byte(int id, size_t j)
{
    return (char)('a' + (id + (int)j) % 26);
}

static bool deferred(int kind)
{
    return kind == K_LATER || kind == K_POST_LATER;
}

static bool has_body(int kind)
{
    return kind == K_POST || kind == K_CHUNKED || kind == K_EXPECT || kind == K_POST_LATER;
}

static void answer(int id, bd_http_response *res)
{
    res->status = 200;
    snprintf(res->headers, sizeof res->headers, "X-Id: %d\r\n", id);
    res->body = malloc(16);
    if (!res->body)
        fail("out of memory");
    res->len = (size_t)snprintf(res->body, 16, "%d", id);
}

static void handler(void *arg, const bd_http_request *req, bd_http_response *res)
{
    run *r = arg;
    int id = atoi(req->path + 3);            /* "/r/ID" */
    if (strncmp(req->path, "/r/", 3) || id != r->handled || id >= r->n)
        fail("out of order, twice, or not sent");
    r->handled++;
    int kind = r->kind[id];
    if (r->keep_body && has_body(kind)) {    /* the request's own body, whole */
        size_t want = r->param[id];
        if (req->body_len != want)
            fail("a body of the wrong length");
        for (size_t j = 0; j < want; j++)
            if (req->body[j] != body_byte(id, j))
                fail("a body with the wrong bytes");
    }
    if (deferred(kind)) {
        if (r->later)
            fail("parsed on while an answer was awaited");
        r->later = bd_http_defer(req);
        if (!r->later)
            fail("bd_http_defer refused");
        r->later_id = id;
        r->later_reads = r->param[id] % 8;
        return;
    }
    answer(id, res);
}

/* After each read: the deferred answer, once its reads have passed. */
static void between(void *arg)
{
    run *r = arg;
    if (!r->later || r->later_reads-- > 0)
        return;
    bd_http_response res = {0};
    answer(r->later_id, &res);
    bd_http_pending *p = r->later;
    r->later = NULL;
    bd_http_pending_finish(p, &res);
}

static void sink(void *arg, const char *bytes, size_t n)
{
    run *r = arg;
    if (r->out.len == 0 && (n < 9 || memcmp(bytes, "HTTP/1.1 ", 9)))
        fail("output that is not an answer");
    put(&r->out, bytes, n);
}

static void write_request(out_buf *w, int id, int kind, size_t param)
{
    char line[256];
    const char *method = kind == K_HEAD ? "HEAD" : has_body(kind) ? "POST" : "GET";
    if (kind == K_BLANK)
        put(w, "\r\n\r\n", 4);
    int n = snprintf(line, sizeof line, "%s /r/%d HTTP/1.1\r\nHost: fuzz\r\n", method, id);
    put(w, line, (size_t)n);
    if (!has_body(kind)) {
        put(w, "\r\n", 2);
        return;
    }
    char body[256];
    for (size_t j = 0; j < param; j++)
        body[j] = body_byte(id, j);
    if (kind == K_CHUNKED) {                 /* in up to three chunks */
        put_str(w, "Transfer-Encoding: chunked\r\n\r\n");
        for (size_t off = 0, i = 0; off < param; i++) {
            size_t c = i < 2 ? (param - off + 1) / 2 : param - off;
            n = snprintf(line, sizeof line, "%zx\r\n", c);
            put(w, line, (size_t)n);
            put(w, body + off, c);
            put(w, "\r\n", 2);
            off += c;
        }
        put(w, "0\r\n\r\n", 5);
        return;
    }
    if (kind == K_EXPECT)
        put_str(w, "Expect: 100-continue\r\n");
    n = snprintf(line, sizeof line, "Content-Length: %zu\r\n\r\n", param);
    put(w, line, (size_t)n);
    put(w, body, param);
}

/* Reading the server's output back: the X-Id of each final answer. */
typedef struct reader {
    run  *r;
    int   answers, status;
    long  id;
    bool  id_field, head;
} reader;

static int rd_field(http_parser *p, const char *at, size_t len)
{
    reader *d = p->data;
    d->id_field = len == 4 && !strncasecmp(at, "x-id", 4);
    return 0;
}

static int rd_value(http_parser *p, const char *at, size_t len)
{
    reader *d = p->data;
    if (d->id_field) {
        char v[16] = "";
        memcpy(v, at, len < 15 ? len : 15);
        d->id = strtol(v, NULL, 10);
    }
    return 0;
}

static int rd_headers(http_parser *p)
{
    reader *d = p->data;
    d->status = (int)p->status_code;
    return d->status >= 200 && d->head ? 1 : 0;   /* an answer to HEAD has no body */
}

static int rd_begin(http_parser *p)
{
    reader *d = p->data;
    d->id = -1;
    d->id_field = false;
    d->head = d->answers < d->r->n && d->r->kind[d->answers] == K_HEAD;
    return 0;
}

static int rd_complete(http_parser *p)
{
    reader *d = p->data;
    if (d->status == 100)
        return 0;                            /* interim: the final answer follows */
    if (d->status != 200 || d->id != d->answers)
        fail("wrong answer, out of order or twice");
    d->answers++;
    return 0;
}

static const http_parser_settings rd_settings = {
    .on_message_begin    = rd_begin,
    .on_header_field     = rd_field,
    .on_header_value     = rd_value,
    .on_headers_complete = rd_headers,
    .on_message_complete = rd_complete,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    run r = { .keep_body = data[0] & 1 };
    bd_http_limits lim;
    bd_http_limits_default(&lim);
    lim.keep_body = r.keep_body;
    lim.max_body_bytes = 1024;
    if (data[0] & 2)
        lim.max_pipeline_bytes = 4096;
    size_t i = 1;
    out_buf wire = {0};
    for (; i + 1 < size && data[i] != 0xff && r.n < MAX_REQUESTS; i += 2) {
        r.kind[r.n] = data[i] % N_KINDS;
        r.param[r.n] = data[i + 1];
        write_request(&wire, r.n, r.kind[r.n], has_body(r.kind[r.n]) ? data[i + 1] : 0);
        r.n++;
    }
    if (i < size && data[i] == 0xff)
        i++;
    size_t n_reads = size - i, *reads = malloc((n_reads ? n_reads : 1) * sizeof *reads);
    if (!reads)
        fail("out of memory");
    for (size_t k = 0; k < n_reads; k++)
        reads[k] = data[i + k] % 97;
    bool any = false;                        /* at least one read must bring bytes */
    for (size_t k = 0; k < n_reads; k++)
        any |= reads[k] != 0;
    if (!any) {
        reads[0] = 4096;
        n_reads = 1;
    }
    bd_http_serve_reads(&lim, NULL, handler, &r, wire.data, wire.len, reads, n_reads, between,
                        sink, &r);
    if (r.later)
        fail("every deferred answer was sent");
    if (r.handled != r.n)
        fail("a complete request never reached the handler");

    reader d = { .r = &r };
    http_parser p;
    http_parser_init(&p, HTTP_RESPONSE);
    p.data = &d;
    size_t used = http_parser_execute(&p, &rd_settings, r.out.data, r.out.len);
    if (HTTP_PARSER_ERRNO(&p) != HPE_OK || used != r.out.len || d.answers != r.n)
        fail("malformed output, or an answer missing");
    free(reads);
    free(wire.data);
    free(r.out.data);
    return 0;
}
