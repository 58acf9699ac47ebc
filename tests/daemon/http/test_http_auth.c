/* Bearer tokens on the HTTP status endpoint's request path (http_server.h, auth.h), fed
 * through bd_http_serve_bytes: no socket, deterministic. The handler routes, then asks
 * bd_http_authorize for its route's role: open paths need no token; others answer 401 with
 * WWW-Authenticate without or with a bad token, 403 for a weak role, and never run then. A
 * handler that forgets to ask fails closed (500, and it cannot defer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/security/auth.h"
#include "daemon/http/http_server.h"

#define INF "inference-token-0123456789"
#define ADM "admin-token-abcdefghijklmnop"

typedef struct out {
    char   text[8192];
    size_t len;
    int    handled;                 /* requests whose protected action ran */
    bool   forget;                  /* the handler skips bd_http_authorize */
} out;

static void sink(void *arg, const char *bytes, size_t n)
{
    out *o = arg;
    if (o->len + n < sizeof o->text) {
        memcpy(o->text + o->len, bytes, n);
        o->len += n;
        o->text[o->len] = '\0';
    }
}

static bd_role role_for(const char *path)
{
    if (!strcmp(path, "/v2/health/ready"))
        return BD_ROLE_NONE;
    return !strcmp(path, "/admin") ? BD_ROLE_ADMIN : BD_ROLE_INFERENCE;
}

static void handler(void *arg, const bd_http_request *req, bd_http_response *res)
{
    out *o = arg;
    if (!o->forget && !bd_http_authorize(req, role_for(req->path), res))
        return;
    o->handled++;
    res->status = 200;
    res->body = strdup("secret\n");
    res->len = strlen(res->body);
}

static bd_auth *tokens(void)
{
    static const char text[] = "inference " INF "\nadmin " ADM "\n";
    bd_auth *a = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_auth_parse(text, strlen(text), "tokens", &a, &err), 0);
    return a;
}

static out serve_as(bd_auth *a, const char *request, size_t chunk, bool forget)
{
    out o = { .len = 0, .forget = forget };
    bd_http_security sec = { .auth = a };
    bd_http_serve_bytes(NULL, &sec, handler, &o, request, strlen(request), chunk, sink, &o);
    return o;
}

static out serve(bd_auth *a, const char *request, size_t chunk)
{
    return serve_as(a, request, chunk, false);
}

static void test_open_path_needs_no_token(void **state)
{
    bd_auth *a = tokens();
    out o = serve(a, "GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n", 0);
    assert_non_null(strstr(o.text, "HTTP/1.1 200 OK\r\n"));
    assert_int_equal(o.handled, 1);
    bd_auth_destroy(a);
}

static void test_missing_and_bad_tokens_get_401(void **state)
{
    bd_auth *a = tokens();
    out o = serve(a, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 0);
    assert_non_null(strstr(o.text, "HTTP/1.1 401 Unauthorized\r\n"));
    assert_non_null(strstr(o.text, "WWW-Authenticate: Bearer realm=\"braidd\"\r\n"));
    assert_null(strstr(o.text, "secret"));
    o = serve(a, "GET /metrics HTTP/1.1\r\nAuthorization: Bearer " INF "x\r\n\r\n", 0);
    assert_non_null(strstr(o.text, "401"));
    assert_non_null(strstr(o.text, "error=\"invalid_token\""));
    /* two Authorization headers, even if one is valid */
    o = serve(a, "GET /metrics HTTP/1.1\r\nAuthorization: Bearer " INF "\r\n"
                 "Authorization: Bearer " INF "\r\n\r\n", 0);
    assert_non_null(strstr(o.text, "401"));
    /* a header value longer than any token */
    char big[4096];
    int n = snprintf(big, sizeof big, "GET /metrics HTTP/1.1\r\nAuthorization: Bearer %03000d\r\n\r\n", 0);
    assert_true(n > 0 && (size_t)n < sizeof big);
    o = serve(a, big, 0);
    assert_non_null(strstr(o.text, "401"));
    assert_int_equal(o.handled, 0);
    bd_auth_destroy(a);
}

static void test_weak_role_gets_403(void **state)
{
    bd_auth *a = tokens();
    out o = serve(a, "GET /admin HTTP/1.1\r\nAuthorization: Bearer " INF "\r\n\r\n", 0);
    assert_non_null(strstr(o.text, "HTTP/1.1 403 Forbidden\r\n"));
    assert_non_null(strstr(o.text, "error=\"insufficient_scope\""));
    assert_int_equal(o.handled, 0);
    o = serve(a, "GET /admin HTTP/1.1\r\nauthorization:  bearer " ADM " \r\n\r\n", 0);
    assert_non_null(strstr(o.text, "HTTP/1.1 200 OK\r\n"));
    assert_int_equal(o.handled, 1);
    bd_auth_destroy(a);
}

/* The header split across reads at every byte, and tokens per request on one connection. */
static void test_token_split_across_reads_and_per_request(void **state)
{
    bd_auth *a = tokens();
    const char *req = "GET /metrics HTTP/1.1\r\nAuthori"
                      "zation: Bearer " INF "\r\n\r\n"
                      "GET /metrics HTTP/1.1\r\n\r\n"
                      "GET /v2/status HTTP/1.1\r\nAuthorization: Bearer " ADM "\r\n\r\n";
    out o = serve(a, req, 1);
    assert_int_equal(o.handled, 2);
    const char *first = strstr(o.text, "200 OK");
    assert_non_null(first);
    const char *second = strstr(first + 1, "401");
    assert_non_null(second);
    assert_non_null(strstr(second, "200 OK"));
    bd_auth_destroy(a);
}

static void test_no_tokens_configured_serves_everything(void **state)
{
    out o = serve(NULL, "GET /admin HTTP/1.1\r\n\r\n", 3);
    assert_non_null(strstr(o.text, "HTTP/1.1 200 OK\r\n"));
    assert_int_equal(o.handled, 1);
}

/* A handler that never asks bd_http_authorize: its answer is replaced by 500 (even with a
 * valid admin token: no decision is no permission). Without tokens nothing is checked. */
static void test_handler_without_a_decision_fails_closed(void **state)
{
    bd_auth *a = tokens();
    out o = serve_as(a, "GET /admin HTTP/1.1\r\nAuthorization: Bearer " ADM "\r\n\r\n", 0, true);
    assert_non_null(strstr(o.text, "HTTP/1.1 500 Internal Server Error\r\n"));
    assert_null(strstr(o.text, "secret"));
    o = serve_as(a, "GET /admin HTTP/1.1\r\n\r\n", 0, true);
    assert_non_null(strstr(o.text, "HTTP/1.1 500 Internal Server Error\r\n"));
    bd_auth_destroy(a);
    o = serve_as(NULL, "GET /admin HTTP/1.1\r\n\r\n", 0, true);
    assert_non_null(strstr(o.text, "HTTP/1.1 200 OK\r\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_path_needs_no_token),
        cmocka_unit_test(test_missing_and_bad_tokens_get_401),
        cmocka_unit_test(test_weak_role_gets_403),
        cmocka_unit_test(test_token_split_across_reads_and_per_request),
        cmocka_unit_test(test_no_tokens_configured_serves_everything),
        cmocka_unit_test(test_handler_without_a_decision_fails_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
