/* braidd's configuration: defaults, the JSON file, flags overriding it, and the errors a user
 * meets when a key, a type or a flag is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/ort/ort_backend.h"
#include "backends/tf/tf_backend.h"
#include "daemon/config.h"
#include "daemon/log.h"
#include "daemon/sched/cpu_budget.h"
#include "daemon/sched/memory_budget.h"
#include "tests/daemon/daemon_testlib.h"

static char dir[4096];

static int setup(void **state) { tl_mkdtemp(dir, sizeof dir); return 0; }
static int teardown(void **state) { tl_rmtree(dir); return 0; }

static const char *write_json(const char *name, const char *text)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tl_write(path, text, (size_t)-1);
    return path;
}

static int parse(bd_daemon_config *cfg, bd_error *err, int argc, ...)
{
    char *argv[32] = { "braidd" };
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc && i < 31; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return bd_config_parse_args(cfg, argc, argv, err);
}

static void test_defaults(void **state)
{
    bd_daemon_config c;
    bd_config_defaults(&c);
    assert_string_equal(c.grpc_address, "127.0.0.1:8001");
    assert_string_equal(c.http_address, "127.0.0.1:8002");
    assert_string_equal(c.repository, "");
    assert_int_equal(c.workers, 0);
    assert_int_equal(c.threads_per_worker, 0);
    assert_int_equal(c.queue_limit, 64);
    assert_int_equal(c.max_message_bytes, 256u << 20);
    assert_false(c.allow_uploads);
    assert_int_equal(c.exit_timeout_ms, 30000);
    assert_int_equal(c.load_queue_limit, 4);
    assert_int_equal(c.max_pending_upload_bytes, 1u << 30);
    assert_int_equal(c.log_level, BD_LOG_INFO);
    assert_true(c.load_all_at_start);
    assert_string_equal(c.config_path, "");
    assert_int_equal(c.plan_cache_max_plans, 64);
    assert_int_equal(c.plan_cache_max_bytes, (size_t)1 << 30);
}

static void test_file_sets_every_key(void **state)
{
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    const char *p = write_json("all.json",
        "{\"grpc_address\":\"0.0.0.0:9001\",\"http_address\":\"\",\"repository\":\"/srv/models\","
        "\"workers\":3,\"threads_per_worker\":2,\"queue_limit\":5,\"max_message_bytes\":1048576,"
        "\"allow_uploads\":true,\"exit_timeout_secs\":7,\"log_level\":\"debug\",\"load_all_at_start\":false,"
        "\"load_queue_limit\":0,\"max_pending_upload_bytes\":4096}");
    assert_int_equal(bd_config_load_file(&c, p, &err), 0);
    assert_string_equal(c.grpc_address, "0.0.0.0:9001");
    assert_string_equal(c.http_address, "");
    assert_string_equal(c.repository, "/srv/models");
    assert_int_equal(c.workers, 3);
    assert_int_equal(c.threads_per_worker, 2);
    assert_int_equal(c.queue_limit, 5);
    assert_int_equal(c.max_message_bytes, 1048576);
    assert_true(c.allow_uploads);
    assert_int_equal(c.exit_timeout_secs, 7);
    assert_int_equal(c.load_queue_limit, 0);
    assert_int_equal(c.max_pending_upload_bytes, 4096);
    bd_config_resolve(&c, 2);
    assert_int_equal(c.exit_timeout_ms, 7000);
    assert_int_equal(c.log_level, BD_LOG_DEBUG);
    assert_false(c.load_all_at_start);
    assert_string_equal(c.config_path, p);
}

static void test_file_errors_name_the_key(void **state)
{
    struct { const char *json, *want; } cases[] = {
        { "{\"workerz\":1}",              "unknown key 'workerz'" },
        { "{\"workers\":\"two\"}",        "workers: expected an integer" },
        { "{\"workers\":1.5}",            "workers: expected an integer" },
        { "{\"queue_limit\":0}",          "queue_limit: expected an integer in [1," },
        { "{\"allow_uploads\":1}",        "allow_uploads: expected true or false" },
        { "{\"log_level\":\"loud\"}",     "log_level: expected debug, info, warn or error" },
        { "{\"repository\":7}",           "repository: expected a string" },
        { "[1,2]",                        "expected a JSON object" },
        { "{\"workers\":1,",              "not valid JSON" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bd_daemon_config c;
        bd_error err = { 0 };
        bd_config_defaults(&c);
        const char *p = write_json("bad.json", cases[i].json);
        assert_int_equal(bd_config_load_file(&c, p, &err), BD_EINVAL);
        if (!strstr(err.msg, cases[i].want))
            fail_msg("%s: got '%s', want '%s'", cases[i].json, err.msg, cases[i].want);
    }
    bd_daemon_config c;
    bd_error err = { 0 };
    assert_int_equal(bd_config_load_file(&c, "/nonexistent/braidd.json", &err), BD_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/braidd.json"));
}

static void test_flags_override_file(void **state)
{
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    const char *p = write_json("base.json", "{\"workers\":3,\"queue_limit\":7,\"repository\":\"/a\"}");
    char cfgpath[4200];
    snprintf(cfgpath, sizeof cfgpath, "%s", p);
    /* The flag comes before --config on the command line and still wins. */
    int rc = parse(&c, &err, 10, "--workers", "1", "--config", cfgpath, "--allow-uploads",
                   "--no-load-at-start", "--grpc-address=127.0.0.1:0", "--log-level", "warn");
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(c.workers, 1);
    assert_int_equal(c.queue_limit, 7);
    assert_string_equal(c.repository, "/a");
    assert_true(c.allow_uploads);
    assert_false(c.load_all_at_start);
    assert_string_equal(c.grpc_address, "127.0.0.1:0");
    assert_int_equal(c.log_level, BD_LOG_WARN);
    assert_string_equal(c.config_path, cfgpath);

    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 15, "--repository", "/m", "--http-address", "", "--threads-per-worker", "2",
                           "--queue-limit", "9", "--max-message-bytes", "65536", "--drain-timeout-ms", "5",
                           "--workers", "2"), 0);
    assert_string_equal(c.repository, "/m");
    assert_string_equal(c.http_address, "");
    assert_int_equal(c.threads_per_worker, 2);
    assert_int_equal(c.queue_limit, 9);
    assert_int_equal(c.max_message_bytes, 65536);
    assert_int_equal(c.drain_timeout_ms, 5);
    bd_config_resolve(&c, 2);
    assert_int_equal(c.exit_timeout_ms, 5);       /* the deprecated alias still works */
}

/* exit_timeout_secs (Triton's name) wins over the deprecated drain_timeout_ms, whatever the
 * order they come in. */
/* The fallback engines' keys: read from the file and flags, range-checked, and handed to the
 * engines by bd_config_configure_engines (a path that does not exist is the one named when
 * the engine cannot load). */
static void test_engine_keys_reach_the_engines(void **state)
{
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    assert_string_equal(c.tf_library, "");
    assert_int_equal(c.tf_threads, 0);
    const char *p = write_json("engines.json", "{\"ort_library\":\"/nonexistent/ort/libonnxruntime.so.1\","
                               "\"ort_threads\":2,\"tf_library\":\"/a/libtensorflow.so.2\",\"tf_threads\":3}");
    char cfgpath[4200];
    snprintf(cfgpath, sizeof cfgpath, "%s", p);
    int rc = parse(&c, &err, 5, "--config", cfgpath, "--tf-library", "/nonexistent/tf/libtensorflow.so.2");
    if (rc)
        fail_msg("%s", err.msg);
    assert_string_equal(c.ort_library, "/nonexistent/ort/libonnxruntime.so.1");
    assert_int_equal(c.ort_threads, 2);
    assert_string_equal(c.tf_library, "/nonexistent/tf/libtensorflow.so.2");
    assert_int_equal(c.tf_threads, 3);

    assert_int_equal(bd_config_configure_engines(&c, &err), 0);
    char why[256] = "";
    assert_false(bd_ort_available(why, sizeof why));
    if (!strstr(why, "/nonexistent/ort/libonnxruntime.so.1"))
        fail_msg("ORT's reason does not name the configured path: %s", why);
    why[0] = '\0';
    assert_false(bd_tf_available(why, sizeof why));
    if (!strstr(why, "/nonexistent/tf/libtensorflow.so.2"))
        fail_msg("TensorFlow's reason does not name the configured path: %s", why);

    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--tf-threads", "1025"), BD_EINVAL);
    assert_non_null(strstr(err.msg, "tf-threads"));
}

static void test_exit_timeout_and_its_deprecated_alias(void **state)
{
    (void)state;
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 5, "--exit-timeout-secs", "3", "--drain-timeout-ms", "9000"), 0);
    bd_config_resolve(&c, 2);
    assert_int_equal(c.exit_timeout_ms, 3000);
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--exit-timeout-secs", "0"), 0);
    bd_config_resolve(&c, 2);
    assert_int_equal(c.exit_timeout_ms, 0);
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--exit-timeout-secs", "3601"), BD_EINVAL);
    assert_non_null(strstr(err.msg, "--exit-timeout-secs: expected an integer in [0, 3600]"));
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--max-pending-upload-bytes", "-1"), BD_EINVAL);
}

static void test_flag_errors(void **state)
{
    struct { int argc; const char *a, *b, *want; } cases[] = {
        { 2, "--bogus", NULL, "unknown option '--bogus'" },
        { 3, "--workers", "x", "--workers: expected an integer, got 'x'" },
        { 3, "--workers", "-1", "--workers: expected an integer in [0, 1024]" },
        { 3, "--queue-limit", "0", "--queue-limit: expected an integer in [1," },
        { 3, "--log-level", "chatty", "--log-level: expected debug, info, warn or error" },
        { 2, "--workers", NULL, "needs a value" },
        { 2, "stray", NULL, "unexpected argument 'stray'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bd_daemon_config c;
        bd_error err = { 0 };
        bd_config_defaults(&c);
        assert_int_equal(parse(&c, &err, cases[i].argc, cases[i].a, cases[i].b), BD_EINVAL);
        if (!strstr(err.msg, cases[i].want))
            fail_msg("%s: got '%s', want '%s'", cases[i].a, err.msg, cases[i].want);
    }
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--config", "/nonexistent.json"), BD_EIO);
}

static void test_help_and_version_exit_zero(void **state)
{
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    /* --help prints to stdout; the test only checks the contract (1 = handled). */
    assert_int_equal(parse(&c, &err, 2, "--help"), 1);
    assert_int_equal(parse(&c, &err, 2, "--version"), 1);
}

static void test_resolve_auto(void **state)
{
    bd_daemon_config c;
    bd_config_defaults(&c);
    bd_config_resolve(&c, 2);                            /* this machine: 2 workers x 1 thread */
    assert_int_equal(c.workers, 2);
    assert_int_equal(c.threads_per_worker, 1);

    bd_config_defaults(&c);
    bd_config_resolve(&c, 6);
    assert_int_equal(c.workers, 2);
    assert_int_equal(c.threads_per_worker, 3);

    bd_config_defaults(&c);
    bd_config_resolve(&c, 1);
    assert_int_equal(c.workers * c.threads_per_worker, 1);

    bd_config_defaults(&c);
    bd_config_resolve(&c, 16);
    assert_true(c.workers * c.threads_per_worker <= 16);
    assert_int_equal(c.workers, 4);
    assert_int_equal(c.threads_per_worker, 4);

    bd_config_defaults(&c);
    c.threads_per_worker = 4;
    bd_config_resolve(&c, 8);
    assert_int_equal(c.workers, 2);

    bd_config_defaults(&c);
    c.workers = 3;
    bd_config_resolve(&c, 2);
    assert_int_equal(c.threads_per_worker, 1);          /* never 0 */

    bd_config_defaults(&c);
    c.workers = 2;
    c.threads_per_worker = 5;
    bd_config_resolve(&c, 2);                            /* explicit values are kept */
    assert_int_equal(c.workers, 2);
    assert_int_equal(c.threads_per_worker, 5);
}

static void test_plan_cache_keys(void **state)
{
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    const char *p = write_json("pc.json", "{\"plan_cache_max_plans\":0,\"plan_cache_max_bytes\":4294967296}");
    assert_int_equal(bd_config_load_file(&c, p, &err), 0);
    assert_int_equal(c.plan_cache_max_plans, 0);
    assert_int_equal(c.plan_cache_max_bytes, (size_t)4 << 30);
    assert_int_equal(parse(&c, &err, 5, "--plan-cache-max-plans", "16", "--plan-cache-max-bytes", "1048576"), 0);
    assert_int_equal(c.plan_cache_max_plans, 16);
    assert_int_equal(c.plan_cache_max_bytes, 1048576);
    assert_int_equal(parse(&c, &err, 3, "--plan-cache-max-plans", "-1"), BD_EINVAL);
    assert_non_null(strstr(err.msg, "plan-cache-max-plans"));
}

static void test_run_memory_auto_and_cgroup(void **state)
{
    bd_daemon_config cfg;
    bd_config_defaults(&cfg);
    assert_int_equal(cfg.max_run_memory_bytes, 0);              /* auto */
    bd_config_resolve_memory(&cfg, (size_t)8 << 30);
    assert_int_equal(cfg.max_run_memory_bytes, (size_t)4 << 30); /* half the budget */
    bd_config_defaults(&cfg);
    const char *argv[] = { "braidd", "--max-run-memory-bytes", "1048576" };
    bd_error err = { 0 };
    assert_int_equal(bd_config_parse_args(&cfg, 3, (char **)argv, &err), 0);
    bd_config_resolve_memory(&cfg, (size_t)8 << 30);
    assert_int_equal(cfg.max_run_memory_bytes, 1048576);         /* explicit kept */

    assert_int_equal(bd_memory_parse_cgroup_max("max\n"), 0);
    assert_int_equal(bd_memory_parse_cgroup_max("8589934592\n"), (size_t)8 << 30);
    assert_int_equal(bd_memory_parse_cgroup_max("12abc\n"), 0);
    assert_int_equal(bd_memory_parse_cgroup_max(""), 0);
    assert_true(bd_memory_budget() > 0);
}

/* The CPU budget's cgroup parsers (the live reading is tested against real cgroups and
 * affinity masks by tests/e2e/test_cpu_budget.py). */
static void test_cpu_quota_parsers(void **state)
{
    (void)state;
    assert_true(bd_cpu_parse_cgroup_max("max 100000\n") == 0);
    assert_true(bd_cpu_parse_cgroup_max("150000 100000\n") == 1.5);
    assert_true(bd_cpu_parse_cgroup_max("200000 100000") == 2.0);
    assert_true(bd_cpu_parse_cgroup_max("50000\n") == 0.5);          /* the default period */
    assert_true(bd_cpu_parse_cgroup_max("abc 100000\n") == 0);
    assert_true(bd_cpu_parse_cgroup_max("100000 0\n") == 0);
    assert_true(bd_cpu_parse_cgroup_max("-5 100000\n") == 0);
    assert_true(bd_cpu_parse_cgroup_max("100000 100000 junk") == 0);
    assert_true(bd_cpu_parse_cgroup_max(NULL) == 0);
    assert_true(bd_cpu_parse_cfs("-1\n", "100000\n") == 0);          /* unlimited */
    assert_true(bd_cpu_parse_cfs("250000\n", "100000\n") == 2.5);
    assert_true(bd_cpu_parse_cfs("x", "100000") == 0);
    assert_true(bd_cpu_parse_cfs("100000", NULL) == 0);
    bd_cpu_budget b;
    bd_cpu_budget_read(&b);
    assert_true(b.cores >= 1 && b.cores <= b.online);
}

/* KServe's Triton runtime (config/runtimes/kserve-tritonserver.yaml) starts its container
 * with these arguments, exactly; braidd takes them as given. */
static void test_kserve_triton_arguments_as_given(void **state)
{
    bd_daemon_config c;
    bd_error err = {0};
    bd_config_defaults(&c);
    const char *cfgpath = write_json("container.json",
        "{\"grpc_address\": \"0.0.0.0:8001\", \"http_address\": \"0.0.0.0:8002\", "
        "\"rest_address\": \"0.0.0.0:8000\"}");
    char cfgarg[4300];
    snprintf(cfgarg, sizeof cfgarg, "--config=%s", cfgpath);
    assert_int_equal(parse(&c, &err, 7, cfgarg, "--model-store=/mnt/models", "--grpc-port=9000",
                           "--http-port=8080", "--allow-grpc=true", "--allow-http=true"), 0);
    assert_string_equal(c.repository, "/mnt/models");
    assert_string_equal(c.grpc_address, "0.0.0.0:9000");     /* the host of the file stays */
    assert_string_equal(c.rest_address, "0.0.0.0:8080");     /* Triton's HTTP = REST port */
    assert_string_equal(c.http_address, "0.0.0.0:8002");     /* metrics stay where they were */

    /* without a file: braidd's own default host, loopback */
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 5, "--model-store=/mnt/models", "--grpc-port=9000",
                           "--http-port=8080", "--allow-http=true"), 0);
    assert_string_equal(c.grpc_address, "127.0.0.1:9000");
    assert_string_equal(c.rest_address, "127.0.0.1:8080");
}

static void test_triton_spellings(void **state)
{
    bd_daemon_config c;
    bd_error err = {0};

    /* --model-repository (Triton's current name) and --model-store are --repository */
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--model-repository", "/models"), 0);
    assert_string_equal(c.repository, "/models");
    assert_int_equal(parse(&c, &err, 3, "--model-store", "/m2"), 0);
    assert_string_equal(c.repository, "/m2");

    /* the port replaces only the port: IPv6 hosts keep their brackets; flags apply in order */
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 5, "--grpc-address", "[::1]:1234", "--grpc-port", "0"), 0);
    assert_string_equal(c.grpc_address, "[::1]:0");
    assert_int_equal(parse(&c, &err, 5, "--http-port", "9", "--rest-address", "[::]:7"), 0);
    assert_string_equal(c.rest_address, "[::]:7");
    assert_int_equal(parse(&c, &err, 5, "--rest-address", "example.org", "--http-port", "80"), 0);
    assert_string_equal(c.rest_address, "example.org:80");
    assert_int_equal(parse(&c, &err, 5, "--http-address", "[::1]:1", "--metrics-port", "9"), 0);
    assert_string_equal(c.http_address, "[::1]:9");
    /* a switched-off port comes back on loopback */
    assert_int_equal(parse(&c, &err, 5, "--rest-address", "", "--http-port", "8080"), 0);
    assert_string_equal(c.rest_address, "127.0.0.1:8080");

    /* --allow-http=false turns the REST port off, --allow-metrics=false the status port;
     * --allow-grpc=false is refused */
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 2, "--allow-http=false"), 0);
    assert_string_equal(c.rest_address, "");
    assert_string_equal(c.http_address, "127.0.0.1:8002");
    assert_int_equal(parse(&c, &err, 2, "--allow-metrics=false"), 0);
    assert_string_equal(c.http_address, "");
    assert_int_equal(parse(&c, &err, 2, "--allow-grpc=false"), BD_EINVAL);
    assert_non_null(strstr(err.msg, "--allow-grpc=false: braidd always serves gRPC"));

    /* errors name the flag and what it expects */
    const struct { const char *a, *b, *want; } bad[] = {
        { "--grpc-port", "65536", "--grpc-port: expected a port in [0, 65535], got 65536" },
        { "--http-port", "-1",    "--http-port: expected a port in [0, 65535], got -1" },
        { "--http-port", "80x",   "--http-port: expected an integer, got '80x'" },
        { "--allow-http", "yes",  "--allow-http: expected true or false, got 'yes'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bd_config_defaults(&c);
        assert_int_equal(parse(&c, &err, 3, bad[i].a, bad[i].b), BD_EINVAL);
        if (!strstr(err.msg, bad[i].want))
            fail_msg("%s %s: got '%s', want '%s'", bad[i].a, bad[i].b, err.msg, bad[i].want);
    }
    char longhost[300];
    memset(longhost, 'h', sizeof longhost - 1);
    longhost[sizeof longhost - 1] = '\0';
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 5, "--grpc-address", longhost, "--grpc-port", "1"), BD_EINVAL);

    /* flag-only: no JSON key of these names */
    const char *cfgpath = write_json("triton.json", "{\"model_store\": \"/m\"}");
    bd_config_defaults(&c);
    assert_int_equal(bd_config_load_file(&c, cfgpath, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'model_store'"));
    assert_null(strstr(err.msg, "(null)"));
}

/* Triton's system shared memory: off by default, a flag to turn it on, its limits bounded. */
static void test_shared_memory_keys(void **state)
{
    (void)state;
    bd_daemon_config c;
    bd_error err = { 0 };
    bd_config_defaults(&c);
    assert_false(c.allow_shared_memory);
    assert_int_equal(c.shared_memory_max_regions, 64);
    assert_true(c.shared_memory_max_bytes == (size_t)16 << 30);
    int rc = parse(&c, &err, 6, "--allow-shared-memory", "--shared-memory-max-regions", "3",
                   "--shared-memory-max-bytes", "4096");
    if (rc)
        fail_msg("%s", err.msg);
    assert_true(c.allow_shared_memory);
    assert_int_equal(c.shared_memory_max_regions, 3);
    assert_int_equal(c.shared_memory_max_bytes, 4096);
    bd_config_defaults(&c);
    assert_int_equal(parse(&c, &err, 3, "--shared-memory-max-regions", "0"), BD_EINVAL);
    assert_int_equal(parse(&c, &err, 3, "--shared-memory-max-regions", "513"), BD_EINVAL);
    assert_int_equal(parse(&c, &err, 3, "--shared-memory-max-bytes", "0"), BD_EINVAL);
    bd_config_defaults(&c);
    const char *p = write_json("shm.json", "{\"allow_shared_memory\":true,\"shared_memory_max_regions\":5}");
    assert_int_equal(bd_config_load_file(&c, p, &err), 0);
    assert_true(c.allow_shared_memory);
    assert_int_equal(c.shared_memory_max_regions, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_file_sets_every_key),
        cmocka_unit_test(test_file_errors_name_the_key),
        cmocka_unit_test(test_flags_override_file),
        cmocka_unit_test(test_flag_errors),
        cmocka_unit_test(test_exit_timeout_and_its_deprecated_alias),
        cmocka_unit_test(test_engine_keys_reach_the_engines),
        cmocka_unit_test(test_help_and_version_exit_zero),
        cmocka_unit_test(test_resolve_auto),
        cmocka_unit_test(test_plan_cache_keys),
        cmocka_unit_test(test_run_memory_auto_and_cgroup),
        cmocka_unit_test(test_cpu_quota_parsers),
        cmocka_unit_test(test_kserve_triton_arguments_as_given),
        cmocka_unit_test(test_triton_spellings),
        cmocka_unit_test(test_shared_memory_keys),
    };
    return cmocka_run_group_tests_name("daemon config", tests, setup, teardown);
}
