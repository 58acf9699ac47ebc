#include "tests/daemon/http/http_client.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    tc_conn *c = p->data;
    size_t n = len < sizeof c->hdr - 1 ? len : sizeof c->hdr - 1;
    memcpy(c->hdr, at, n);
    c->hdr[n] = '\0';
    return 0;
}

static void copy_lower(char *dst, size_t cap, const char *at, size_t len)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)tolower((unsigned char)at[i]);
    dst[n] = '\0';
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    tc_conn *c = p->data;
    tc_response *r = c->cur;
    char v[128];
    size_t n = len < sizeof v - 1 ? len : sizeof v - 1;
    memcpy(v, at, n);
    v[n] = '\0';
    if (strcasecmp(c->hdr, "content-type") == 0)
        snprintf(r->content_type, sizeof r->content_type, "%s", v);
    else if (strcasecmp(c->hdr, "connection") == 0)
        copy_lower(r->connection, sizeof r->connection, at, len);
    else if (strcasecmp(c->hdr, "allow") == 0)
        snprintf(r->allow, sizeof r->allow, "%s", v);
    else if (strcasecmp(c->hdr, "content-length") == 0)
        r->content_length = strtol(v, NULL, 10);
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    tc_conn *c = p->data;
    c->cur->status = (int)p->status_code;
    return c->head ? 1 : 0;          /* 1 = this response has no body (HEAD) */
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    tc_conn *c = p->data;
    tc_response *r = c->cur;
    char *b = realloc(r->body, r->len + len + 1);
    if (!b)
        return 1;
    memcpy(b + r->len, at, len);
    r->len += len;
    b[r->len] = '\0';
    r->body = b;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    tc_conn *c = p->data;
    c->done = true;
    http_parser_pause(p, 1);         /* one response per tc_read */
    return 0;
}

static const http_parser_settings settings = {
    .on_header_field     = on_header_field,
    .on_header_value     = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body             = on_body,
    .on_message_complete = on_message_complete,
};

int tc_socket_from(const char *source, int port, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (source) {
        struct sockaddr_in src = { .sin_family = AF_INET };
        if (inet_pton(AF_INET, source, &src.sin_addr) != 1 ||
            bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int tc_connect_from(tc_conn *c, const char *source, int port, int timeout_ms)
{
    memset(c, 0, sizeof *c);
    c->fd = tc_socket_from(source, port, timeout_ms);
    if (c->fd < 0)
        return -1;
    http_parser_init(&c->parser, HTTP_RESPONSE);
    c->parser.data = c;
    return 0;
}

int tc_connect(tc_conn *c, int port, int timeout_ms)
{
    return tc_connect_from(c, NULL, port, timeout_ms);
}

void tc_close(tc_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int tc_send(tc_conn *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int tc_read(tc_conn *c, bool head, tc_response *out)
{
    memset(out, 0, sizeof *out);
    out->content_length = -1;
    c->cur = out;
    c->head = head;
    c->done = false;
    for (int rounds = 0; rounds < 100000; rounds++) {
        if (c->off < c->len) {
            size_t n = http_parser_execute(&c->parser, &settings, c->buf + c->off,
                                           c->len - c->off);
            c->off += n;
            if (HTTP_PARSER_ERRNO(&c->parser) == HPE_PAUSED)
                http_parser_pause(&c->parser, 0);
            else if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK)
                return -1;
            if (c->done)
                return 0;
        }
        ssize_t n = recv(c->fd, c->buf, sizeof c->buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {                /* EOF may complete a response without a length */
            http_parser_execute(&c->parser, &settings, NULL, 0);
            return c->done ? 0 : -1;
        }
        c->off = 0;
        c->len = (size_t)n;
    }
    return -1;
}

void tc_response_free(tc_response *r)
{
    free(r->body);
    r->body = NULL;
}

int tc_wait_closed(tc_conn *c, int timeout_ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
    char sink[4096];
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms > timeout_ms)
            return 0;
        int rc = poll(&pfd, 1, 50);
        if (rc < 0 && errno != EINTR)
            return 0;
        if (rc > 0) {
            ssize_t n = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                return 1;
        }
    }
}

int tc_get(int port, const char *method, const char *path, tc_response *out)
{
    tc_conn *c = malloc(sizeof *c);
    if (!c || tc_connect(c, port, 10000) != 0) {
        free(c);
        return -1;
    }
    char req[1024];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                     method, path);
    int rc = tc_send(c, req, (size_t)n) == 0 ? tc_read(c, strcmp(method, "HEAD") == 0, out) : -1;
    tc_close(c);
    free(c);
    return rc;
}
