/* The HTTP status endpoint's request path without a socket (bd_http_serve_bytes): the
 * parser, the limits, the Authorization header and the token check, routing by role, the
 * response writer. The first input byte picks how the bytes are split into reads (1..63
 * bytes, or whole) and whether tokens are required; the rest is what a client sends. The
 * same bytes then go to the token check as a header value and to bd_auth_parse as a token
 * file.
 *
 * Checked beyond the sanitizers: nothing is written before a status line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "daemon/security/auth.h"
#include "daemon/http/http_server.h"

static bd_auth *tokens;

static const char token_file[] =
    "# fuzz tokens\n"
    "inference  inference-token-0123456789\n"
    "admin      admin-token-0123456789abcdef\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    bd_error err = { 0 };
    if (bd_auth_parse(token_file, strlen(token_file), "fuzz tokens", &tokens, &err) != 0) {
        fprintf(stderr, "fuzz_http: %s\n", err.msg);
        abort();
    }
    return 0;
}

static bd_role role_for(const char *path)
{
    if (!strncmp(path, "/v2/health/", 11))
        return BD_ROLE_NONE;
    if (!strncmp(path, "/admin", 6))
        return BD_ROLE_ADMIN;
    return BD_ROLE_INFERENCE;
}

typedef struct run {
    bool   auth_on;
    size_t out_bytes, answers;
} run;

static void handler(void *arg, const bd_http_request *req, bd_http_response *res)
{
    (void)arg;
    if (!bd_http_authorize(req, role_for(req->path), res))
        return;
    if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
        res->status = 405;
        res->allow = "GET, HEAD";
        return;
    }
    res->status = strcmp(req->path, "/missing") ? 200 : 404;
    size_t n = strlen(req->path) + strlen(req->query) + 2;
    res->body = malloc(n);
    if (res->body)
        res->len = (size_t)snprintf(res->body, n, "%s?%s", req->path, req->query);
}

static void sink(void *arg, const char *bytes, size_t n)
{
    run *r = arg;
    /* a write either starts a response or continues one (a body) */
    if (n >= 9 && !memcmp(bytes, "HTTP/1.1 ", 9))
        r->answers++;
    else if (r->answers == 0)
        abort();                     /* output that is not an answer */
    r->out_bytes += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = data[0] & 63;     /* 0 = as one read */
    run r = { .auth_on = (data[0] & 64) != 0 };
    bd_http_limits lim;
    bd_http_limits_default(&lim);
    lim.max_head_bytes = 2048;       /* small limits reach the 413/414/431 paths quickly */
    lim.max_body_bytes = 1024;
    bd_http_security sec = { .auth = r.auth_on ? tokens : NULL };
    bd_http_serve_bytes(&lim, &sec, handler, &r, (const char *)data + 1, size - 1, chunk, sink, &r);

    /* the token check on its own, with the input as a header value */
    (void)bd_auth_check(tokens, (const char *)data + 1, size - 1, BD_ROLE_INFERENCE);

    /* the input as a token file: a table that parses must hold what a check can use */
    bd_auth *a = NULL;
    bd_error err = { 0 };
    if (bd_auth_parse((const char *)data + 1, size - 1, "fuzz file", &a, &err) == 0) {
        size_t ni = 0, na = 0;
        bd_auth_count(a, &ni, &na);
        if (ni + na == 0)
            abort();                 /* an empty table must be an error */
        (void)bd_auth_check(a, "Bearer inference-token-0123456789", 33, BD_ROLE_ADMIN);
        bd_auth_destroy(a);
    } else if (a || err.code == 0 || !err.msg[0]) {
        abort();                     /* a failure leaves *OUT alone and says why */
    }
    return 0;
}
