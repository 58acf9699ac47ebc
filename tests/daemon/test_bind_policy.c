/* Where braidd may listen unprotected (daemon/security/bind_policy.h): loopback addresses pass; any
 * other address needs TLS on that port and a token file, or --allow-insecure-bind (which
 * passes with a warning). No socket is opened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/security/bind_policy.h"
#include "daemon/config.h"
#include "daemon/log.h"

static void test_loopback_addresses(void **state)
{
    assert_true(bd_address_is_loopback("127.0.0.1:8001"));
    assert_true(bd_address_is_loopback("127.9.8.7:0"));
    assert_true(bd_address_is_loopback("[::1]:8001"));
    assert_true(bd_address_is_loopback("localhost:8001"));
    assert_false(bd_address_is_loopback("0.0.0.0:8001"));
    assert_false(bd_address_is_loopback("[::]:8001"));
    assert_false(bd_address_is_loopback(":8001"));
    assert_false(bd_address_is_loopback("10.1.2.3:8001"));
    assert_false(bd_address_is_loopback("[::ffff:10.1.2.3]:8001"));
    assert_true(bd_address_is_loopback("[::ffff:127.0.0.1]:8001"));
    assert_false(bd_address_is_loopback("8001"));
    assert_false(bd_address_is_loopback(NULL));
}

static void test_exposed_port_needs_tls_and_tokens(void **state)
{
    bd_daemon_config cfg;
    bd_config_defaults(&cfg);
    bd_error err = { 0 };
    assert_int_equal(bd_bind_policy_check(&cfg, &err), 0);       /* the loopback defaults */

    snprintf(cfg.grpc_address, sizeof cfg.grpc_address, "0.0.0.0:8001");
    assert_int_equal(bd_bind_policy_check(&cfg, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "gRPC port"));
    assert_non_null(strstr(err.msg, "TLS and a token file"));

    snprintf(cfg.auth_token_file, sizeof cfg.auth_token_file, "/etc/braid/tokens");
    assert_int_equal(bd_bind_policy_check(&cfg, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "without TLS"));

    snprintf(cfg.tls_cert_file, sizeof cfg.tls_cert_file, "/etc/braid/server.pem");
    snprintf(cfg.tls_key_file, sizeof cfg.tls_key_file, "/etc/braid/server.key");
    assert_int_equal(bd_bind_policy_check(&cfg, &err), 0);

    /* the HTTP port is judged on its own certificate */
    snprintf(cfg.http_address, sizeof cfg.http_address, "[::]:8002");
    assert_int_equal(bd_bind_policy_check(&cfg, &err), 0);       /* inherits the TLS files */
    cfg.auth_token_file[0] = '\0';
    assert_int_equal(bd_bind_policy_check(&cfg, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "a token file"));
    cfg.http_address[0] = '\0';                                   /* HTTP off */
    assert_int_equal(bd_bind_policy_check(&cfg, &err), BD_EINVAL); /* gRPC still lacks tokens */
}

static void test_allow_insecure_bind_passes(void **state)
{
    bd_daemon_config cfg;
    bd_config_defaults(&cfg);
    bd_error err = { 0 };
    snprintf(cfg.grpc_address, sizeof cfg.grpc_address, "0.0.0.0:8001");
    snprintf(cfg.http_address, sizeof cfg.http_address, "0.0.0.0:8002");
    cfg.allow_insecure_bind = true;
    assert_int_equal(bd_bind_policy_check(&cfg, &err), 0);       /* and warns in the log */
}

static void test_model_control_modes(void **state)
{
    bd_daemon_config cfg;
    bd_config_defaults(&cfg);
    assert_int_equal(bd_config_model_control(&cfg), BD_MODEL_CONTROL_EXPLICIT);
    char *argv[] = { "braidd", "--model-control-mode", "poll", "--repository-poll-secs", "3", NULL };
    bd_error err = { 0 };
    assert_int_equal(bd_config_parse_args(&cfg, 5, argv, &err), 0);
    assert_int_equal(bd_config_model_control(&cfg), BD_MODEL_CONTROL_POLL);
    assert_int_equal(cfg.repository_poll_secs, 3);
    snprintf(cfg.model_control_mode, sizeof cfg.model_control_mode, "none");
    assert_int_equal(bd_config_model_control(&cfg), BD_MODEL_CONTROL_NONE);
    snprintf(cfg.model_control_mode, sizeof cfg.model_control_mode, "NONE");
    assert_int_equal(bd_config_model_control(&cfg), -1);
    char *bad[] = { "braidd", "--repository-poll-secs", "0", NULL };
    assert_int_equal(bd_config_parse_args(&cfg, 3, bad, &err), BD_EINVAL);
}

int main(void)
{
    bd_log_set_level(BD_LOG_ERROR);          /* keep the expected warnings out of the output */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loopback_addresses),
        cmocka_unit_test(test_exposed_port_needs_tls_and_tokens),
        cmocka_unit_test(test_allow_insecure_bind_passes),
        cmocka_unit_test(test_model_control_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
