/* Bearer tokens (daemon/security/auth.h): the token file's format and permission rules, the
 * Authorization value parser, roles, reload, and the constant-time comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "daemon/security/auth.h"
#include "daemon/security/operation.h"
#include "tests/daemon/daemon_testlib.h"

#define INF "inference-token-0123456789"
#define ADM "admin-token-abcdefghijklmnop"

static char dir[4096];

static int setup(void **state) { tl_mkdtemp(dir, sizeof dir); return 0; }
static int teardown(void **state) { tl_rmtree(dir); return 0; }

static const char *write_tokens(const char *name, const char *text, mode_t mode)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tl_write(path, text, (size_t)-1);
    chmod(path, mode);
    return path;
}

static bd_auth *parse_ok(const char *text)
{
    bd_auth *a = NULL;
    bd_error err = { 0 };
    int rc = bd_auth_parse(text, strlen(text), "tokens", &a, &err);
    if (rc)
        fail_msg("parse failed: %s", err.msg);
    return a;
}

static void parse_fails(const char *text, const char *words)
{
    bd_auth *a = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_auth_parse(text, strlen(text), "tokens", &a, &err), BD_EINVAL);
    assert_null(a);
    if (!strstr(err.msg, words))
        fail_msg("'%s' does not say '%s'", err.msg, words);
}

static bd_auth_result check(bd_auth *a, const char *header, bd_role need)
{
    return bd_auth_check(a, header, header ? strlen(header) : 0, need);
}

static void test_file_format(void **state)
{
    bd_auth *a = parse_ok("# comment\n\n   \ninference " INF "\r\n\tadmin\t" ADM "  \n"
                          "inference second-inference-token");     /* no final newline */
    size_t ni, na;
    bd_auth_count(a, &ni, &na);
    assert_int_equal(ni, 2);
    assert_int_equal(na, 1);
    assert_int_equal(check(a, "Bearer second-inference-token", BD_ROLE_INFERENCE), BD_AUTH_OK);
    bd_auth_destroy(a);
    bd_auth_destroy(NULL);
}

static void test_file_errors_name_the_line(void **state)
{
    parse_fails("", "no token");
    parse_fails("# only a comment\n", "no token");
    parse_fails("inference " INF "\nroot " ADM "\n", "line 2");
    parse_fails("admin\n", "exactly one token");
    parse_fails("admin " ADM " extra\n", "exactly one token");
    parse_fails("admin short\n", "16 to 1024");
    parse_fails("admin " ADM "\x01xx\n", "printable");
    parse_fails(ADM " admin\n", "role first");
    char big[1200];
    memset(big, 'x', sizeof big);
    memcpy(big, "admin ", 6);
    big[sizeof big - 1] = '\0';
    parse_fails(big, "16 to 1024");
}

static void test_check_header_forms(void **state)
{
    bd_auth *a = parse_ok("inference " INF "\nadmin " ADM "\n");
    assert_int_equal(check(a, NULL, BD_ROLE_INFERENCE), BD_AUTH_MISSING);
    assert_int_equal(check(a, "Bearer " INF, BD_ROLE_INFERENCE), BD_AUTH_OK);
    assert_int_equal(check(a, "bearer " INF, BD_ROLE_INFERENCE), BD_AUTH_OK);
    assert_int_equal(check(a, "BEARER \t " INF " \t", BD_ROLE_INFERENCE), BD_AUTH_OK);
    assert_int_equal(check(a, "Bearer", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer ", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer    ", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer" INF, BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Basic " INF, BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, INF, BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    /* prefixes, extensions and near misses of a valid token */
    assert_int_equal(check(a, "Bearer inference-token-012345678", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer " INF "0", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer Inference-token-0123456789", BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer " INF " " ADM, BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    /* the header's length is what counts, not a NUL inside it */
    assert_int_equal(bd_auth_check(a, "Bearer " INF "\0junk", strlen("Bearer " INF) + 5,
                                   BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    bd_auth_destroy(a);
}

static void test_roles(void **state)
{
    bd_auth *a = parse_ok("inference " INF "\nadmin " ADM "\n");
    assert_int_equal(check(a, "Bearer " INF, BD_ROLE_ADMIN), BD_AUTH_FORBIDDEN);
    assert_int_equal(check(a, "Bearer " ADM, BD_ROLE_ADMIN), BD_AUTH_OK);
    assert_int_equal(check(a, "Bearer " ADM, BD_ROLE_INFERENCE), BD_AUTH_OK);
    assert_int_equal(check(a, NULL, BD_ROLE_NONE), BD_AUTH_OK);
    assert_int_equal(check(a, "Bearer wrong-token-0000000000", BD_ROLE_NONE), BD_AUTH_OK);
    assert_int_equal(check(NULL, NULL, BD_ROLE_ADMIN), BD_AUTH_OK);       /* tokens off */
    bd_auth_destroy(a);
    /* one token listed under both roles has the stronger one */
    a = parse_ok("inference " ADM "\nadmin " ADM "\n");
    assert_int_equal(check(a, "Bearer " ADM, BD_ROLE_ADMIN), BD_AUTH_OK);
    bd_auth_destroy(a);
}

static void test_grpc_method_roles(void **state)
{
#define ROLE(m) bd_op_role(bd_op_from_grpc(m, strlen(m)))
    assert_int_equal(ROLE("/inference.GRPCInferenceService/ServerLive"), BD_ROLE_NONE);
    assert_int_equal(ROLE("/inference.GRPCInferenceService/ServerReady"), BD_ROLE_NONE);
    assert_int_equal(ROLE("/grpc.health.v1.Health/Check"), BD_ROLE_NONE);
    assert_int_equal(ROLE("/inference.GRPCInferenceService/ModelInfer"), BD_ROLE_INFERENCE);
    assert_int_equal(ROLE("/inference.GRPCInferenceService/RepositoryIndex"), BD_ROLE_INFERENCE);
    assert_int_equal(ROLE("/inference.GRPCInferenceService/RepositoryModelLoad"), BD_ROLE_ADMIN);
    assert_int_equal(ROLE("/inference.GRPCInferenceService/RepositoryModelUnload"), BD_ROLE_ADMIN);
    assert_int_equal(ROLE("/inference.GRPCInferenceService/ServerLiveX"), BD_ROLE_INFERENCE);
    assert_int_equal(bd_op_role(bd_op_from_grpc("/grpc.health.v1.Health/Check", 10)), BD_ROLE_INFERENCE);
#undef ROLE
}

static void test_constant_time_compare(void **state)
{
    unsigned char x[32], y[32];
    memset(x, 7, sizeof x);
    memcpy(y, x, sizeof y);
    assert_int_equal(bd_auth_ct_compare(x, y, sizeof x), 0);
    y[31] ^= 1;
    assert_int_not_equal(bd_auth_ct_compare(x, y, sizeof x), 0);
    y[31] ^= 1;
    y[0] ^= 0x80;
    assert_int_not_equal(bd_auth_ct_compare(x, y, sizeof x), 0);
    assert_int_equal(bd_auth_ct_compare(x, y, 0), 0);
}

static void test_file_permissions(void **state)
{
    bd_auth *a = NULL;
    bd_error err = { 0 };
    const char *text = "admin " ADM "\n";
    assert_int_equal(bd_auth_load(write_tokens("world", text, 0644), &a, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "chmod 600"));
    assert_int_equal(bd_auth_load(write_tokens("groupw", text, 0620), &a, &err), BD_EINVAL);
    assert_int_equal(bd_auth_load(write_tokens("otherw", text, 0602), &a, &err), BD_EINVAL);
    assert_null(a);
    assert_int_equal(bd_auth_load(dir, &a, &err), BD_EINVAL);           /* a directory */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    assert_int_equal(bd_auth_load(missing, &a, &err), BD_EIO);
    assert_int_equal(bd_auth_load(write_tokens("group", text, 0640), &a, &err), 0);
    bd_auth_destroy(a);
    a = NULL;
    assert_int_equal(bd_auth_load(write_tokens("own", text, 0600), &a, &err), 0);
    assert_int_equal(check(a, "Bearer " ADM, BD_ROLE_ADMIN), BD_AUTH_OK);
    bd_auth_destroy(a);
}

static void test_reload(void **state)
{
    bd_auth *a = NULL;
    bd_error err = { 0 };
    const char *path = write_tokens("tokens", "admin " ADM "\n", 0600);
    assert_int_equal(bd_auth_load(path, &a, &err), 0);
    write_tokens("tokens", "inference " INF "\n", 0600);
    assert_int_equal(bd_auth_reload(a, &err), 0);
    assert_int_equal(check(a, "Bearer " ADM, BD_ROLE_INFERENCE), BD_AUTH_INVALID);
    assert_int_equal(check(a, "Bearer " INF, BD_ROLE_INFERENCE), BD_AUTH_OK);
    /* a bad file (or bad mode) keeps the tokens in force */
    write_tokens("tokens", "inference short\n", 0600);
    assert_int_equal(bd_auth_reload(a, &err), BD_EINVAL);
    assert_int_equal(check(a, "Bearer " INF, BD_ROLE_INFERENCE), BD_AUTH_OK);
    write_tokens("tokens", "admin " ADM "\n", 0644);
    assert_int_equal(bd_auth_reload(a, &err), BD_EINVAL);
    assert_int_equal(check(a, "Bearer " INF, BD_ROLE_INFERENCE), BD_AUTH_OK);
    bd_auth_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_format),
        cmocka_unit_test(test_file_errors_name_the_line),
        cmocka_unit_test(test_check_header_forms),
        cmocka_unit_test(test_roles),
        cmocka_unit_test(test_grpc_method_roles),
        cmocka_unit_test(test_constant_time_compare),
        cmocka_unit_test(test_file_permissions),
        cmocka_unit_test(test_reload),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
