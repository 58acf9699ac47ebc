/* The REST router and its role decision (daemon/rest/rest_route.h, operation.h), the code that
 * decides which operation a request runs and so which role its token needs.
 *
 * Input: byte 0 is the HTTP method (http_parser's enum, taken modulo 8); the rest, up to the
 * first NUL, is the request path.
 *
 * Checked beyond the sanitizers:
 *   - every answer is complete: an operation with status 0, or none with 400/404/405 and a
 *     message (405 with its Allow list);
 *   - a control operation (load, unload) needs the admin role, is reached only by POST, and
 *     only by a path that percent-decodes to exactly /v2/repository/models/NAME/load|unload —
 *     so no spelling of anything else, and no other method, reaches it with an inference token;
 *   - the decision is canonical: the operation's own canonical path, built from its arguments,
 *     routes to the same operation with the same arguments.
 * Deterministic, no I/O. Seeds: tests/fuzz/corpus/rest_route. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "daemon/security/operation.h"
#include "daemon/rest/rest_route.h"

static bd_rest_route got, again;

/* PATH percent-decoded into OUT (SIZE bytes); false when malformed or too long. */
static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool decode(const char *path, char *out, size_t size)
{
    size_t k = 0;
    for (const char *p = path; *p; p++) {
        char ch = *p;
        if (ch == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (lo < 0)
                return false;
            ch = (char)(hi << 4 | lo);
            p += 2;
        }
        if (k + 1 >= size)
            return false;
        out[k++] = ch;
    }
    out[k] = '\0';
    return true;
}

/* Percent-encode every byte of S that is not unreserved, so the path has exactly its segments. */
static size_t put_segment(char *out, size_t at, size_t size, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s && at + 4 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '~') {
            out[at++] = (char)c;
        } else {
            out[at++] = '%';
            out[at++] = hex[c >> 4];
            out[at++] = hex[c & 15];
        }
    }
    out[at] = '\0';
    return at;
}

/* The canonical path of R's operation ("" when it has none to rebuild). */
static void canonical(const bd_rest_route *r, char *out, size_t size)
{
    size_t at = 0;
    out[0] = '\0';
#define LIT(s) (at += (size_t)snprintf(out + at, size - at, "%s", s), at = at < size ? at : size - 1)
#define SEG(s) (at = put_segment(out, at, size, s))
    switch (r->op) {
    case BD_OP_REPOSITORY_LOAD:
    case BD_OP_REPOSITORY_UNLOAD:
        LIT("/v2/repository/models/"); SEG(r->model);
        LIT(r->op == BD_OP_REPOSITORY_LOAD ? "/load" : "/unload");
        break;
    case BD_OP_MODEL_INFER:
    case BD_OP_MODEL_READY:
    case BD_OP_MODEL_CONFIG:
    case BD_OP_MODEL_METADATA:
        LIT("/v2/models/"); SEG(r->model);
        if (r->version[0]) {
            LIT("/versions/"); SEG(r->version);
        }
        LIT(r->op == BD_OP_MODEL_INFER ? "/infer" : r->op == BD_OP_MODEL_READY ? "/ready"
            : r->op == BD_OP_MODEL_CONFIG ? "/config" : "");
        break;
    default:
        break;
    }
#undef LIT
#undef SEG
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const int methods[] = { HTTP_DELETE, HTTP_GET, HTTP_HEAD, HTTP_POST, HTTP_PUT,
                                   HTTP_PATCH, HTTP_OPTIONS, HTTP_CONNECT };
    int method = methods[data[0] % 8];
    char *path = malloc(size);
    if (!path)
        return 0;
    memcpy(path, data + 1, size - 1);
    path[size - 1] = '\0';                       /* the path stops at the first NUL */

    bd_rest_route_resolve(method, path, &got);
    if (got.op == BD_OP_NONE) {
        if ((got.status != 400 && got.status != 404 && got.status != 405) || !got.message ||
            (got.status == 405 && !got.allow))
            abort();
    } else if (got.status != 0 || got.op >= BD_OP_COUNT) {
        abort();
    }

    if (got.op == BD_OP_REPOSITORY_LOAD || got.op == BD_OP_REPOSITORY_UNLOAD) {
        if (bd_op_role(got.op) != BD_ROLE_ADMIN || method != HTTP_POST)
            abort();
        /* the decoded path is exactly the control path, with a name free of '/' and controls */
        char plain[BD_REST_PATH_MAX + 64], want[BD_REST_PATH_MAX + 64];
        snprintf(want, sizeof want, "/v2/repository/models/%s/%s", got.model,
                 got.op == BD_OP_REPOSITORY_LOAD ? "load" : "unload");
        if (!decode(path, plain, sizeof plain) || strcmp(plain, want) != 0)
            abort();
        for (const char *c = got.model; *c; c++)
            if (*c == '/' || (unsigned char)*c < 0x20 || *c == 0x7f)
                abort();
        if (!got.model[0] || !strcmp(got.model, ".") || !strcmp(got.model, ".."))
            abort();
    }

    /* canonical round trip */
    static char canon[3 * BD_REST_PATH_MAX + 64];
    canonical(&got, canon, sizeof canon);
    if (canon[0] && strlen(canon) < BD_REST_PATH_MAX) {
        bd_rest_route_resolve(method, canon, &again);
        if (again.op != got.op || strcmp(again.model, got.model) ||
            strcmp(again.version, got.version)) {
            fprintf(stderr, "fuzz_rest_route: '%s' -> %s, its canonical '%s' -> %s\n", path,
                    bd_op_name(got.op), canon, bd_op_name(again.op));
            abort();
        }
    }
    free(path);
    return 0;
}
