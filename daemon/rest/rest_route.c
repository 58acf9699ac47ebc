/* The REST router (rest_route.h): canonical paths only, one decision per request. */
#include "daemon/rest/rest_route.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <http_parser.h>

#define MAX_SEGS 8

static const char MODEL_PATHS[] =
    "unknown path: expected /v2/models/NAME[/versions/V][/ready|config|stats|infer]";
static const char SHM_PATHS[] =
    "unknown path: expected /v2/systemsharedmemory[/region/NAME]/status|unregister or "
    "/v2/systemsharedmemory/region/NAME/register";

static int hex(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Split PATH into percent-decoded segments in BUF (SIZE bytes). The count; -1 when the path
 * is not canonical (see rest_route.h), -2 when it has more than MAX_SEGS segments or does
 * not fit. */
static int split(const char *path, char *buf, size_t size, const char **seg)
{
    if (path[0] != '/')
        return -1;
    if (path[1] == '\0')
        return 0;
    int n = 0;
    size_t k = 0;
    const char *p = path + 1;
    for (;;) {
        if (n == MAX_SEGS)
            return -2;
        seg[n] = buf + k;
        size_t start = k;
        while (*p && *p != '/') {
            unsigned char ch = (unsigned char)*p++;
            if (ch == '%') {
                int hi = hex(p[0]), lo = hi < 0 ? -1 : hex(p[1]);
                if (hi < 0 || lo < 0)
                    return -1;
                ch = (unsigned char)(hi << 4 | lo);
                p += 2;
            }
            if (ch < 0x20 || ch == 0x7f || ch == '/')    /* NUL, controls, an encoded '/' */
                return -1;
            if (k + 2 >= size)
                return -2;
            buf[k++] = (char)ch;
        }
        buf[k++] = '\0';
        const char *s = seg[n++];
        if (k - 1 == start || !strcmp(s, ".") || !strcmp(s, ".."))
            return -1;                  /* an empty segment ("//", a trailing '/'), "." or ".." */
        if (!*p)
            return n;
        p++;                            /* the '/' */
    }
}

static void refuse(bd_rest_route *r, int status, const char *message)
{
    r->op = BD_OP_NONE;
    r->status = status;
    r->message = message;
}

/* OP when METHOD is one of those ALLOW names ("GET, HEAD" or "POST"), else 405. */
static void take(bd_rest_route *r, int method, const char *allow, bd_op op)
{
    bool get = method == HTTP_GET || method == HTTP_HEAD;
    bool ok = !strcmp(allow, "POST") ? method == HTTP_POST : get;
    if (!ok) {
        refuse(r, 405, !strcmp(allow, "POST") ? "method not allowed: use POST"
                                              : "method not allowed: use GET, HEAD");
        r->allow = allow;
        return;
    }
    r->op = op;
    r->status = 0;
}

/* /v2/models/NAME[/versions/V][/ACTION] */
static void model_route(bd_rest_route *r, int method, const char **seg, int n)
{
    r->model = seg[2];
    int i = 3;
    if (n > i + 1 && !strcmp(seg[i], "versions")) {
        r->version = seg[i + 1];
        i += 2;
    }
    const char *action = n == i + 1 ? seg[i] : n == i ? "" : NULL;
    if (!action)
        return refuse(r, 404, MODEL_PATHS);
    if (!strcmp(action, "infer"))
        return take(r, method, "POST", BD_OP_MODEL_INFER);
    if (!*action)
        return take(r, method, "GET, HEAD", BD_OP_MODEL_METADATA);
    if (!strcmp(action, "ready"))
        return take(r, method, "GET, HEAD", BD_OP_MODEL_READY);
    if (!strcmp(action, "config"))
        return take(r, method, "GET, HEAD", BD_OP_MODEL_CONFIG);
    if (!strcmp(action, "stats"))
        return take(r, method, "GET, HEAD", BD_OP_MODEL_STATISTICS);
    refuse(r, 404, MODEL_PATHS);
}

/* /v2/systemsharedmemory[/region/NAME]/status|register|unregister */
static void shm_route(bd_rest_route *r, int method, const char **seg, int n)
{
    if (!strcmp(seg[1], "cudasharedmemory")) {
        r->op = BD_OP_CUDA_SHM;         /* any method: answered "not supported" */
        r->status = 0;
        return;
    }
    const char *action = seg[n - 1];
    if (!(n == 3 || (n == 5 && !strcmp(seg[2], "region"))))
        return refuse(r, 404, SHM_PATHS);
    r->region = n == 5 ? seg[3] : "";
    if (!strcmp(action, "status"))
        return take(r, method, "GET, HEAD", BD_OP_SHM_STATUS);
    if (!strcmp(action, "unregister"))
        return take(r, method, "POST", BD_OP_SHM_UNREGISTER);
    if (!strcmp(action, "register") && n == 5)
        return take(r, method, "POST", BD_OP_SHM_REGISTER);
    refuse(r, 404, SHM_PATHS);
}

void bd_rest_route_resolve(int method, const char *path, bd_rest_route *r)
{
    memset(r, 0, offsetof(bd_rest_route, buf));
    r->model = r->version = r->region = "";
    const char *seg[MAX_SEGS];
    int n = split(path ? path : "", r->buf, sizeof r->buf, seg);
    if (n == -1)
        return refuse(r, 400, "malformed path: empty segments, '.' or '..', and encoded '/' or "
                      "control characters are refused (docs/protocol.md, \"HTTP/REST\")");
    if (n < 1 || strcmp(seg[0], "v2") != 0)
        return refuse(r, 404, "unknown path: the REST API lives under /v2 (docs/protocol.md)");
    if (n == 1)
        return take(r, method, "GET, HEAD", BD_OP_SERVER_METADATA);
    if (n == 3 && !strcmp(seg[1], "health")) {
        if (!strcmp(seg[2], "live"))
            return take(r, method, "GET, HEAD", BD_OP_SERVER_LIVE);
        if (!strcmp(seg[2], "ready"))
            return take(r, method, "GET, HEAD", BD_OP_SERVER_READY);
    }
    if (!strcmp(seg[1], "models")) {
        if (n == 2)
            return refuse(r, 404, "unknown path: /v2/models/NAME (or /v2/repository/index to "
                          "list the models)");
        if (n == 3 && !strcmp(seg[2], "stats"))
            return take(r, method, "GET, HEAD", BD_OP_MODEL_STATISTICS);
        return model_route(r, method, seg, n);
    }
    if (n == 3 && !strcmp(seg[1], "repository") && !strcmp(seg[2], "index"))
        return take(r, method, "POST", BD_OP_REPOSITORY_INDEX);
    if (n == 5 && !strcmp(seg[1], "repository") && !strcmp(seg[2], "models")) {
        r->model = seg[3];
        if (!strcmp(seg[4], "load"))
            return take(r, method, "POST", BD_OP_REPOSITORY_LOAD);
        if (!strcmp(seg[4], "unload"))
            return take(r, method, "POST", BD_OP_REPOSITORY_UNLOAD);
    }
    if (n >= 3 && (!strcmp(seg[1], "systemsharedmemory") || !strcmp(seg[1], "cudasharedmemory")))
        return shm_route(r, method, seg, n);
    refuse(r, 404, "unknown path (the REST API: docs/protocol.md, \"HTTP/REST\")");
}
