/* braidd's status routes (http_status.h) on the small HTTP server of http_server.h. */
#include "daemon/http/http_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "daemon/http/http_server.h"
#include "daemon/security/operation.h"
#include "daemon/log.h"
#include "daemon/stats/prometheus.h"
#include "daemon/stats/status_json.h"
#include "daemon/stats/status_view.h"

struct bd_http {
    bd_http_server *srv;
    bd_registry    *reg;
    void          (*done)(void *);
    void           *done_arg;
};

static void text(bd_http_response *res, int status, const char *fmt, const char *arg)
{
    char *body = NULL;
    int n = asprintf(&body, fmt, arg);
    res->status = status;
    res->content_type = "text/plain; charset=utf-8";
    res->body = n < 0 ? NULL : body;
    res->len = n < 0 ? 0 : (size_t)n;
}

typedef enum { R_METRICS, R_LIVE, R_READY, R_STATUS, R_NONE } route;

static route find_route(const char *path)
{
    static const char *const paths[] = { "/metrics", "/v2/health/live", "/v2/health/ready",
                                         "/v2/status" };
    for (int i = 0; i < R_NONE; i++)
        if (strcmp(path, paths[i]) == 0)
            return (route)i;
    return R_NONE;
}

/* The operation a route runs (operation.h: its role is the table's, the same as over REST and
 * gRPC: the health probes are open, metrics and status need the inference role). */
static bd_op route_op(route r)
{
    static const bd_op ops[] = { [R_METRICS] = BD_OP_METRICS, [R_LIVE] = BD_OP_SERVER_LIVE,
                                 [R_READY] = BD_OP_SERVER_READY, [R_STATUS] = BD_OP_STATUS,
                                 [R_NONE] = BD_OP_NONE };
    return ops[r];
}

/* "pretty" anywhere among the query's parameters ("?pretty", "?pretty=1") */
static int wants_pretty(const char *query)
{
    for (const char *p = query; (p = strstr(p, "pretty")); p += 6)
        if ((p == query || p[-1] == '&') && (p[6] == '\0' || p[6] == '=' || p[6] == '&'))
            return 1;
    return 0;
}

static void handle(void *arg, const bd_http_request *req, bd_http_response *res)
{
    bd_http *h = arg;
    route r = find_route(req->path);
    if (!bd_http_authorize(req, bd_op_role(route_op(r)), res))
        return;
    if (r == R_NONE) {
        text(res, 404, "not found: %s (try /metrics, /v2/status, /v2/health/live, "
                       "/v2/health/ready)\n", req->path);
        return;
    }
    if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
        text(res, 405, "method %s not allowed: use GET or HEAD\n",
             http_method_str((enum http_method)req->method));
        res->allow = "GET, HEAD";
        return;
    }

    switch (r) {
    case R_LIVE:
        text(res, 200, "%s", "live\n");
        return;
    case R_READY: {
        /* The registry's answer, the same ServerReady gives (one source of truth). */
        const char *why = bd_registry_not_ready_reason(h->reg);
        if (!why)
            text(res, 200, "%s", "ready\n");
        else
            text(res, 503, "not ready: %s (see /v2/status)\n", why);
        return;
    }
    default:
        break;
    }

    bd_status_view view;
    int rc = bd_status_view_collect(h->reg, &view);
    char *body = NULL;
    size_t len = 0;
    if (rc == 0) {
        if (r == R_METRICS)
            rc = bd_prometheus_render(&view, &body, &len);
        else
            rc = bd_status_json_render(&view, wants_pretty(req->query), &body, &len);
    }
    bd_status_view_release(&view);
    if (rc != 0) {
        text(res, 500, "%s", "out of memory while rendering the status\n");
        return;
    }
    res->status = 200;
    res->content_type = r == R_METRICS ? BD_PROMETHEUS_CONTENT_TYPE : "application/json";
    res->body = body;
    res->len = len;
}

int bd_http_start(uv_loop_t *loop, const char *address, bd_registry *reg, bd_http **out,
                  bd_error *err)
{
    bd_http *h = calloc(1, sizeof *h);
    if (!h)
        return bd_error_set(err, BD_ENOMEM, "status endpoint: out of memory");
    h->reg = reg;
    int rc = bd_http_server_start(loop, address, NULL, handle, h, &h->srv, err);
    if (rc) {
        free(h);
        return rc;
    }
    /* ADDRESS with the port actually bound ("127.0.0.1:0" -> "127.0.0.1:40123") */
    const char *colon = strrchr(address, ':');
    int host_len = colon ? (int)(colon - address) : (int)strlen(address);
    bd_log(BD_LOG_INFO, NULL, NULL, "status endpoint listening on %.*s:%d: /metrics /v2/status "
           "/v2/health/live /v2/health/ready", host_len, address, bd_http_server_port(h->srv));
    *out = h;
    return 0;
}

void bd_http_set_security(bd_http *h, SSL_CTX *tls, bd_auth *auth)
{
    bd_http_security sec = { .tls = tls, .auth = auth };
    bd_http_server_set_security(h->srv, &sec);
}

int bd_http_port(const bd_http *h)
{
    return bd_http_server_port(h->srv);
}

static void server_closed(void *arg)
{
    bd_http *h = arg;
    void (*done)(void *) = h->done;
    void *done_arg = h->done_arg;
    free(h);
    if (done)
        done(done_arg);
}

void bd_http_close(bd_http *h, void (*done)(void *arg), void *arg)
{
    if (!h) {
        if (done)
            done(arg);
        return;
    }
    h->done = done;
    h->done_arg = arg;
    bd_http_server_close(h->srv, server_closed, h);
}
