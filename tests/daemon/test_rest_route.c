/* The REST router's decision (rest_route.h) against every route, every method and every
 * spelling an attacker would try: a request is authorized on the operation it routes to, so
 * the property that matters is that no spelling of a path runs another operation than the
 * canonical path's, and none of a control route's spellings but its percent-encoded twins
 * runs at all. Pure: no server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <http_parser.h>

#include "daemon/security/operation.h"
#include "daemon/rest/rest_route.h"

typedef struct canon {
    const char *path;
    bool        post;           /* else GET/HEAD */
    bd_op       op;
    const char *model, *version, *region;
} canon;

static const canon routes[] = {
    { "/v2/health/live",                              false, BD_OP_SERVER_LIVE,       "", "", "" },
    { "/v2/health/ready",                             false, BD_OP_SERVER_READY,      "", "", "" },
    { "/v2",                                          false, BD_OP_SERVER_METADATA,   "", "", "" },
    { "/v2/models/m1",                                false, BD_OP_MODEL_METADATA,    "m1", "", "" },
    { "/v2/models/m1/versions/3",                     false, BD_OP_MODEL_METADATA,    "m1", "3", "" },
    { "/v2/models/m1/ready",                          false, BD_OP_MODEL_READY,       "m1", "", "" },
    { "/v2/models/m1/versions/3/ready",               false, BD_OP_MODEL_READY,       "m1", "3", "" },
    { "/v2/models/m1/config",                         false, BD_OP_MODEL_CONFIG,      "m1", "", "" },
    { "/v2/models/m1/stats",                          false, BD_OP_MODEL_STATISTICS,  "m1", "", "" },
    { "/v2/models/stats",                             false, BD_OP_MODEL_STATISTICS,  "", "", "" },
    { "/v2/models/m1/infer",                          true,  BD_OP_MODEL_INFER,       "m1", "", "" },
    { "/v2/models/m1/versions/3/infer",               true,  BD_OP_MODEL_INFER,       "m1", "3", "" },
    { "/v2/repository/index",                         true,  BD_OP_REPOSITORY_INDEX,  "", "", "" },
    { "/v2/repository/models/m1/load",                true,  BD_OP_REPOSITORY_LOAD,   "m1", "", "" },
    { "/v2/repository/models/m1/unload",              true,  BD_OP_REPOSITORY_UNLOAD, "m1", "", "" },
    { "/v2/systemsharedmemory/status",                false, BD_OP_SHM_STATUS,        "", "", "" },
    { "/v2/systemsharedmemory/region/r1/status",      false, BD_OP_SHM_STATUS,        "", "", "r1" },
    { "/v2/systemsharedmemory/region/r1/register",    true,  BD_OP_SHM_REGISTER,      "", "", "r1" },
    { "/v2/systemsharedmemory/unregister",            true,  BD_OP_SHM_UNREGISTER,    "", "", "" },
    { "/v2/systemsharedmemory/region/r1/unregister",  true,  BD_OP_SHM_UNREGISTER,    "", "", "r1" },
};
#define N_ROUTES (sizeof routes / sizeof routes[0])

static const int methods[] = { HTTP_GET, HTTP_HEAD, HTTP_POST, HTTP_PUT, HTTP_DELETE, HTTP_PATCH,
                               HTTP_OPTIONS };

static bool allowed(const canon *c, int method)
{
    return c->post ? method == HTTP_POST : method == HTTP_GET || method == HTTP_HEAD;
}

/* The path part of URL as the HTTP server cuts it (http_server.c: http_parser_parse_url). */
static bool path_of(const char *url, char *out, size_t size)
{
    struct http_parser_url u;
    http_parser_url_init(&u);
    if (http_parser_parse_url(url, strlen(url), 0, &u) != 0 || !(u.field_set & (1 << UF_PATH)) ||
        u.field_data[UF_PATH].len >= size)
        return false;
    memcpy(out, url + u.field_data[UF_PATH].off, u.field_data[UF_PATH].len);
    out[u.field_data[UF_PATH].len] = '\0';
    return true;
}

static bd_rest_route route;            /* 8 KiB: not on cmocka's stack */

/* SPELLING of C, sent with C's method. MUST_RUN: it runs C's operation on C's arguments.
 * Else it runs C's operation, or nothing, or — when the spelling folds a separator into a
 * name ("m1\\ready" is a model's name) — an operation on another object that needs no
 * stronger role than C's: never a control operation from an inference path. */
static void check_spelling(const canon *c, const char *spelling, bool must_run)
{
    int method = c->post ? HTTP_POST : HTTP_GET;
    char path[BD_REST_PATH_MAX + 1];
    if (!path_of(spelling, path, sizeof path))
        return;                           /* the HTTP server answers 400 before any routing */
    bd_rest_route_resolve(method, path, &route);
    if (route.op == BD_OP_NONE) {
        if (must_run)
            fail_msg("'%s' (a spelling of %s) was refused: %d %s", spelling, c->path,
                     route.status, route.message);
        assert_true(route.status == 400 || route.status == 404 || route.status == 405);
        return;
    }
    assert_int_equal(route.status, 0);
    if (route.op != c->op) {
        if (must_run || bd_op_role(route.op) > bd_op_role(c->op) ||
            (!strcmp(route.model, c->model) && !strcmp(route.version, c->version) &&
             !strcmp(route.region, c->region)))
            fail_msg("'%s' runs %s on '%s%s', its canonical path %s runs %s", spelling,
                     bd_op_name(route.op), route.model, route.region, c->path, bd_op_name(c->op));
        return;
    }
    if (strcmp(route.model, c->model) || strcmp(route.version, c->version) ||
        strcmp(route.region, c->region)) {
        /* a different model or region named: only by a different spelling of a name */
        if (must_run)
            fail_msg("'%s' names model '%s' version '%s' region '%s', %s names '%s' '%s' '%s'",
                     spelling, route.model, route.version, route.region, c->path, c->model,
                     c->version, c->region);
    }
}

static void test_every_route_runs_its_operation_with_its_role(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROUTES; i++) {
        const canon *c = &routes[i];
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
            bd_rest_route_resolve(methods[m], c->path, &route);
            if (allowed(c, methods[m])) {
                assert_int_equal(route.op, c->op);
                assert_int_equal(route.status, 0);
                assert_string_equal(route.model, c->model);
                assert_string_equal(route.version, c->version);
                assert_string_equal(route.region, c->region);
            } else {
                assert_int_equal(route.op, BD_OP_NONE);
                assert_int_equal(route.status, 405);
                assert_non_null(route.allow);
            }
        }
        bd_role want = c->op == BD_OP_REPOSITORY_LOAD || c->op == BD_OP_REPOSITORY_UNLOAD
                     ? BD_ROLE_ADMIN
                     : c->op == BD_OP_SERVER_LIVE || c->op == BD_OP_SERVER_READY ? BD_ROLE_NONE
                     : BD_ROLE_INFERENCE;
        assert_int_equal(bd_op_role(c->op), want);
    }
}

/* Every character of every route percent-encoded in turn (upper and lower hex): the same
 * operation on the same arguments. An encoded '/' (%2F, %2f) is refused. */
static void test_percent_encoding_any_character_is_the_same_route(void **state)
{
    (void)state;
    char s[512];
    for (size_t i = 0; i < N_ROUTES; i++) {
        const char *p = routes[i].path;
        for (size_t k = 0; p[k]; k++) {
            for (int lower = 0; lower < 2; lower++) {
                snprintf(s, sizeof s, lower ? "%.*s%%%02x%s" : "%.*s%%%02X%s", (int)k, p,
                         (unsigned char)p[k], p + k + 1);
                if (p[k] == '/') {
                    char path[512];
                    if (!path_of(s, path, sizeof path))
                        continue;                 /* "%2Fv2...": not a path at all (400) */
                    bd_rest_route_resolve(routes[i].post ? HTTP_POST : HTTP_GET, path, &route);
                    assert_int_equal(route.op, BD_OP_NONE);
                    continue;
                }
                check_spelling(&routes[i], s, true);
            }
        }
    }
}

/* Spellings that change the path's shape: each is refused or, where it still names the same
 * route, runs it; none runs another operation. */
static void test_other_spellings_never_run_another_operation(void **state)
{
    (void)state;
    char s[1024];
    for (size_t i = 0; i < N_ROUTES; i++) {
        const canon *c = &routes[i];
        const char *p = c->path;
        size_t n = strlen(p);
        /* a trailing '/', "//" at every '/', "/./" and "/x/../" at every '/' */
        snprintf(s, sizeof s, "%s/", p);
        check_spelling(c, s, false);
        for (size_t k = 0; k < n; k++) {
            if (p[k] != '/')
                continue;
            const char *ins[] = { "/", "./", "../", "x/../", "%2e/", "%2E%2e/", "%00/", "%2F" };
            for (size_t j = 0; j < sizeof ins / sizeof ins[0]; j++) {
                snprintf(s, sizeof s, "%.*s%s%s", (int)(k + 1), p, ins[j], p + k + 1);
                check_spelling(c, s, false);
            }
            /* the '/' itself encoded, or replaced by a backslash */
            snprintf(s, sizeof s, "%.*s%%2F%s", (int)k, p, p + k + 1);
            check_spelling(c, s, false);
            snprintf(s, sizeof s, "%.*s\\%s", (int)k, p, p + k + 1);
            check_spelling(c, s, false);
        }
        /* every segment in upper case, then only the last */
        char up[512];
        snprintf(up, sizeof up, "%s", p);
        for (char *q = up; *q; q++)
            if (*q >= 'a' && *q <= 'z')
                *q = (char)(*q - 'a' + 'A');
        check_spelling(c, up, false);
        const char *last = strrchr(p, '/');
        snprintf(s, sizeof s, "%.*s%s", (int)(last - p), p, strrchr(up, '/'));
        check_spelling(c, s, false);
        /* query strings and fragments select nothing */
        const char *tails[] = { "?x=1", "?/load", "?a=/../unload", "#load", "?", "?%2F",
                                ";load", "%3Fload", "%23/load" };
        for (size_t j = 0; j < sizeof tails / sizeof tails[0]; j++) {
            snprintf(s, sizeof s, "%s%s", p, tails[j]);
            check_spelling(c, s, tails[j][0] == '?' || tails[j][0] == '#');
        }
        /* absolute-form targets, as a proxy would send them */
        snprintf(s, sizeof s, "http://braidd:8000%s", p);
        check_spelling(c, s, true);
    }
}

/* The audit's two bypasses, literally: both refused or routed to load itself (admin). */
static void test_audit_bypasses_need_admin(void **state)
{
    (void)state;
    const char *spellings[] = { "/v2/repository/models/m1/load/", "/v2/repository/models/m1/%6Coad",
                                "/v2/repository/models/m1/unload/", "/v2/repository/models/m1/%75nload",
                                "/v2/repository//models/m1/load", "/v2/repository/models/m1/./load",
                                "/v2/repository/models/m1%2Fload", "/v2/repository/models/m1/load%2F",
                                "/v2/repository/models/m1/load%00" };
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        bd_rest_route_resolve(HTTP_POST, spellings[i], &route);
        assert_true(route.op == BD_OP_NONE || bd_op_role(route.op) == BD_ROLE_ADMIN);
    }
}

static void test_hostile_paths_are_refused(void **state)
{
    (void)state;
    static char big[BD_REST_PATH_MAX * 2];
    memset(big, 'a', sizeof big - 1);
    big[0] = '/';
    const char *paths[] = { "", "v2", "/", "/v2/models/a%", "/v2/models/a%4", "/v2/models/a%zz",
                            "/v2/models/%00", "/v2/models/a%0a", "/v2/models/a%7f",
                            "/v2/a/b/c/d/e/f/g/h/i", big };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        bd_rest_route_resolve(HTTP_GET, paths[i], &route);
        assert_int_equal(route.op, BD_OP_NONE);
        assert_true(route.status == 400 || route.status == 404);
        assert_non_null(route.message);
    }
    bd_rest_route_resolve(HTTP_GET, NULL, &route);
    assert_int_equal(route.op, BD_OP_NONE);
    /* CUDA shared memory: known, any method, answered "not supported" by the handler */
    bd_rest_route_resolve(HTTP_POST, "/v2/cudasharedmemory/region/r/register", &route);
    assert_int_equal(route.op, BD_OP_CUDA_SHM);
    assert_int_equal(bd_op_role(route.op), BD_ROLE_INFERENCE);
}

/* The one table: every gRPC method maps to the operation whose method it is. */
static void test_grpc_methods_and_operations_agree(void **state)
{
    (void)state;
    for (int op = BD_OP_NONE + 1; op < BD_OP_COUNT; op++) {
        const char *m = bd_op_grpc_method((bd_op)op);
        if (m)
            assert_int_equal(bd_op_from_grpc(m, strlen(m)), op);
    }
    assert_int_equal(bd_op_from_grpc("/inference.GRPCInferenceService/RepositoryModelLoadX", 52),
                     BD_OP_NONE);
    assert_int_equal(bd_op_role(BD_OP_NONE), BD_ROLE_INFERENCE);
    assert_int_equal(bd_op_role((bd_op)-1), BD_ROLE_INFERENCE);
    assert_int_equal(bd_op_role(BD_OP_COUNT), BD_ROLE_INFERENCE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_route_runs_its_operation_with_its_role),
        cmocka_unit_test(test_percent_encoding_any_character_is_the_same_route),
        cmocka_unit_test(test_other_spellings_never_run_another_operation),
        cmocka_unit_test(test_audit_bypasses_need_admin),
        cmocka_unit_test(test_hostile_paths_are_refused),
        cmocka_unit_test(test_grpc_methods_and_operations_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
