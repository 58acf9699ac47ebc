/* The status endpoint as braidd runs it (daemon/http/http_status.h): bd_http over a live registry
 * holding the demo model (tinycnn) and a model that fails to load. Checks every route, the
 * content types, HEAD, 404/405, 100 keep-alive requests on one connection, and that
 * bd_http_close with a connection still open leaves the loop with no handle. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <uv.h>

#include "daemon/config.h"
#include "daemon/http/http_status.h"
#include "daemon/registry/registry.h"
#include "tests/daemon/http/http_client.h"

#ifndef BRAID_SOURCE_ROOT
#define BRAID_SOURCE_ROOT "."
#endif

typedef struct fixture {
    uv_loop_t        loop;
    uv_async_t       stop;
    uv_thread_t      thread;
    bd_daemon_config cfg;
    bd_registry     *reg;
    bd_http         *http;
    int              port;
    atomic_int       closed;
    char             repo[PATH_MAX];
} fixture;

static void run_loop(void *arg)
{
    fixture *f = arg;
    uv_run(&f->loop, UV_RUN_DEFAULT);
}

static void on_http_closed(void *arg)
{
    fixture *f = arg;
    bd_registry_destroy(f->reg);
    atomic_fetch_add(&f->closed, 1);
}

static void on_stop(uv_async_t *a)
{
    fixture *f = a->data;
    bd_http_close(f->http, on_http_closed, f);
    uv_close((uv_handle_t *)&f->stop, NULL);
}

static void copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* A repository with the demo model and a model whose file is not ONNX. */
static void make_repo(fixture *f)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(f->repo, sizeof f->repo, "%s/braid-ops-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    assert_non_null(mkdtemp(f->repo));
    char path[PATH_MAX + 64], src[PATH_MAX];
    const char *root = getenv("BRAID_SOURCE_ROOT");
    snprintf(src, sizeof src, "%s/daemon/demo-repository/tinycnn/1/model.onnx",
             root && root[0] ? root : BRAID_SOURCE_ROOT);
    const char *dirs[] = { "tinycnn", "tinycnn/1", "broken", "broken/1" };
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", f->repo, dirs[i]);
        assert_int_equal(mkdir(path, 0755), 0);
    }
    snprintf(path, sizeof path, "%s/tinycnn/1/model.onnx", f->repo);
    copy_file(src, path);
    snprintf(path, sizeof path, "%s/broken/1/model.onnx", f->repo);
    FILE *b = fopen(path, "wb");
    assert_non_null(b);
    fputs("this is not an ONNX model", b);
    fclose(b);
}

static void remove_repo(fixture *f)
{
    char path[PATH_MAX + 64];
    const char *files[] = { "tinycnn/1/model.onnx", "tinycnn/1", "tinycnn",
                            "broken/1/model.onnx", "broken/1", "broken", "" };
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "%s/%s", f->repo, files[i]);
        remove(path);
    }
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    make_repo(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    bd_config_defaults(&f->cfg);
    snprintf(f->cfg.repository, sizeof f->cfg.repository, "%s", f->repo);
    bd_error err = {0};
    if (bd_registry_create(&f->loop, &f->cfg, &f->reg, &err) != 0)
        fail_msg("registry: %s", err.msg);
    if (bd_http_start(&f->loop, "127.0.0.1:0", f->reg, &f->http, &err) != 0)
        fail_msg("http: %s", err.msg);
    f->port = bd_http_port(f->http);
    assert_true(f->port > 0);
    if (bd_registry_scan(f->reg, true, &err) != 0)
        fail_msg("scan: %s", err.msg);
    uv_async_init(&f->loop, &f->stop, on_stop);
    f->stop.data = f;
    assert_int_equal(uv_thread_create(&f->thread, run_loop, f), 0);

    /* the loads run off the loop; /v2/health/ready turns 200 when they are done */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int ready = 0;
    while (!ready && ms_since(&t0) < 60000) {
        tc_response r;
        assert_int_equal(tc_get(f->port, "GET", "/v2/health/ready", &r), 0);
        assert_true(r.status == 200 || r.status == 503);
        ready = r.status == 200;
        tc_response_free(&r);
        if (!ready)
            usleep(20 * 1000);
    }
    assert_true(ready);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    uv_async_send(&f->stop);
    uv_thread_join(&f->thread);
    assert_int_equal(atomic_load(&f->closed), 1);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    remove_repo(f);
    free(f);
    return 0;
}

static tc_response get(fixture *f, const char *method, const char *path)
{
    tc_response r;
    assert_int_equal(tc_get(f->port, method, path, &r), 0);
    return r;
}

static void test_health_routes(void **state)
{
    fixture *f = *state;
    tc_response r = get(f, "GET", "/v2/health/live");
    assert_int_equal(r.status, 200);
    tc_response_free(&r);
    r = get(f, "GET", "/v2/health/ready");
    assert_int_equal(r.status, 200);
    tc_response_free(&r);
}

static void test_metrics_route(void **state)
{
    fixture *f = *state;
    tc_response r = get(f, "GET", "/metrics");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
    const char *want[] = {
        "# TYPE braid_requests_total counter\n",
        "# TYPE braid_request_duration_seconds histogram\n",
        "braid_up 1\n",
        "braid_models_loaded 1\n",
        "braid_model_state{model=\"tinycnn\",state=\"READY\"} 1\n",
        "braid_model_state{model=\"broken\",state=\"UNAVAILABLE\"} 1\n",
        "braid_model_loads_total{result=\"ok\"} 1\n",
        "braid_model_loads_total{result=\"failed\"} 1\n",
        "braid_requests_total{model=\"tinycnn\",version=\"1\",outcome=\"success\"} 0\n",
        "braid_request_duration_seconds_bucket{model=\"tinycnn\",version=\"1\",phase=\"total\",le=\"+Inf\"} 0\n",
        "braid_backend_seconds_total{model=\"tinycnn\",version=\"1\",backend=\"dnnl\"} ",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(r.body, want[i]))
            fail_msg("/metrics lacks '%s'", want[i]);
    /* a real process has memory */
    const char *rss = strstr(r.body, "\nbraid_process_resident_memory_bytes ");
    assert_non_null(rss);
    assert_true(strtoull(rss + 37, NULL, 10) > 1000000);
    tc_response_free(&r);
}

static void test_status_route(void **state)
{
    fixture *f = *state;
    tc_response r = get(f, "GET", "/v2/status");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "application/json");
    cJSON *root = cJSON_Parse(r.body);
    assert_non_null(root);
    cJSON *srv = cJSON_GetObjectItem(root, "server");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(srv, "ready")));
    assert_string_equal(cJSON_GetObjectItem(srv, "name")->valuestring, "braid");
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(srv, "memory"), "rss_bytes")->valuedouble > 0);
    cJSON *models = cJSON_GetObjectItem(root, "models");
    assert_int_equal(cJSON_GetArraySize(models), 2);
    int seen = 0;
    cJSON *m;
    cJSON_ArrayForEach(m, models) {
        const char *name = cJSON_GetObjectItem(m, "name")->valuestring;
        const char *st = cJSON_GetObjectItem(m, "state")->valuestring;
        if (strcmp(name, "tinycnn") == 0) {
            seen |= 1;
            assert_string_equal(st, "READY");
            assert_string_equal(cJSON_GetObjectItem(m, "version")->valuestring, "1");
            assert_string_equal(cJSON_GetObjectItem(m, "platform")->valuestring, "onnx");
            cJSON *p = cJSON_GetObjectItem(m, "partition");
            assert_true(cJSON_GetObjectItem(p, "steps")->valuedouble >= 1);
            assert_true(cJSON_GetObjectItem(p, "nodes_imported")->valuedouble >= 1);
            assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "backends"), "dnnl")->valuedouble >= 1);
            cJSON *q = cJSON_GetObjectItem(m, "queue");
            assert_true(cJSON_GetObjectItem(q, "limit")->valuedouble == f->cfg.queue_limit);
            assert_true(cJSON_GetObjectItem(q, "queued")->valuedouble == 0);
            cJSON *s = cJSON_GetObjectItem(m, "stats");
            assert_true(cJSON_GetObjectItem(s, "inference_count")->valuedouble == 0);
            assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "failures"), "queue_full"));
        } else if (strcmp(name, "broken") == 0) {
            seen |= 2;
            assert_string_equal(st, "UNAVAILABLE");
            assert_true(strlen(cJSON_GetObjectItem(m, "reason")->valuestring) > 0);
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(m, "stats")));
        }
    }
    assert_int_equal(seen, 3);
    cJSON_Delete(root);
    tc_response_free(&r);

    r = get(f, "GET", "/v2/status?pretty");
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\n\t"));
    tc_response_free(&r);
}

static void test_head_404_405(void **state)
{
    fixture *f = *state;
    tc_response g = get(f, "GET", "/v2/health/live");
    tc_response r = get(f, "HEAD", "/v2/health/live");
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    assert_int_equal(r.content_length, (long)g.len);
    tc_response_free(&g);
    tc_response_free(&r);

    r = get(f, "HEAD", "/metrics");
    assert_int_equal(r.status, 200);
    assert_true(r.content_length > 100);
    assert_int_equal(r.len, 0);
    tc_response_free(&r);

    r = get(f, "GET", "/v2/nothing");
    assert_int_equal(r.status, 404);
    tc_response_free(&r);
    r = get(f, "GET", "/metrics/");
    assert_int_equal(r.status, 404);
    tc_response_free(&r);

    r = get(f, "POST", "/metrics");
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "GET, HEAD");
    tc_response_free(&r);
    r = get(f, "PUT", "/v2/status");
    assert_int_equal(r.status, 405);
    tc_response_free(&r);
}

static void test_100_keep_alive_requests(void **state)
{
    fixture *f = *state;
    tc_conn *c = malloc(sizeof *c);
    assert_int_equal(tc_connect(c, f->port, 10000), 0);
    const char *paths[] = { "/metrics", "/v2/status", "/v2/health/ready", "/v2/health/live" };
    for (int i = 0; i < 100; i++) {
        char req[256];
        int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", paths[i % 4]);
        assert_int_equal(tc_send(c, req, (size_t)n), 0);
        tc_response r;
        assert_int_equal(tc_read(c, false, &r), 0);
        assert_int_equal(r.status, 200);
        assert_string_equal(r.connection, "keep-alive");
        tc_response_free(&r);
    }
    tc_close(c);
    free(c);
}

static void test_close_with_idle_connection(void **state)
{
    fixture *f = *state;
    tc_conn *c = malloc(sizeof *c);
    assert_int_equal(tc_connect(c, f->port, 10000), 0);
    const char *req = "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(tc_send(c, req, strlen(req)), 0);
    tc_response r;
    assert_int_equal(tc_read(c, false, &r), 0);
    tc_response_free(&r);
    /* stop now, with the connection idle: teardown's uv_loop_close must return 0 */
    teardown(state);
    assert_int_equal(tc_wait_closed(c, 2000), 1);
    tc_close(c);
    free(c);
    *state = NULL;
}

static int teardown_if_running(void **state)
{
    return *state ? teardown(state) : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_health_routes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_route, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_route, setup, teardown),
        cmocka_unit_test_setup_teardown(test_head_404_405, setup, teardown),
        cmocka_unit_test_setup_teardown(test_100_keep_alive_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_with_idle_connection, setup, teardown_if_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
