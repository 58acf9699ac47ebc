/* libbraid-client against a real braidd: every client function, the demo model's output
 * against its PyTorch reference, hot load/unload, statistics, many threads on one client,
 * and a clean SIGTERM exit.
 *
 * braidd: argv[1], else $BRAIDD (set by tests/client/meson.build). It runs on free loopback
 * ports (--port-file) with a temporary copy of daemon/demo-repository and uploads allowed. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/braid_client.h"
#include "core/npy.h"
#include "tests/lib/tl_file.h"

extern char **environ;

#define START_TIMEOUT_S 60
#define STOP_TIMEOUT_S  60

static const char *braidd_path;
static char        tmpdir[256], repo[300], logpath[300], target[64];
static pid_t       braidd_pid = -1;
static braid_client *client;
static bd_npy      image, want;       /* tests/fixtures/demo */
static int         infers_done;       /* tinycnn inferences that succeeded (for statistics) */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void dump_log(void)
{
    FILE *f = fopen(logpath, "r");
    if (!f)
        return;
    fprintf(stderr, "---- braidd log (%s) ----\n", logpath);
    char line[1024];
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fclose(f);
}

static int write_whole(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int rc = fwrite(data, 1, size, f) == size ? 0 : -1;
    return fclose(f) ? -1 : rc;
}

static const char *demo_model_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/daemon/demo-repository/tinycnn/1/model.onnx", getenv("BRAID_SOURCE_ROOT"));
    return path;
}

/* A temporary repository holding a copy of the demo model. */
static int make_repository(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/braid-client-e2e-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(repo, sizeof repo, "%s/repo", tmpdir);
    snprintf(logpath, sizeof logpath, "%s/braidd.log", tmpdir);
    char dir[512];
    size_t size;
    char *model = tl_read_file(demo_model_path(), &size);
    int rc = model ? 0 : -1;
    rc = rc || mkdir(repo, 0755);
    snprintf(dir, sizeof dir, "%s/tinycnn", repo);
    rc = rc || mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/tinycnn/1", repo);
    rc = rc || mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/tinycnn/1/model.onnx", repo);
    rc = rc || write_whole(dir, model, size);
    free(model);
    return rc;
}

static void remove_tree(void)
{
    char cmd[400];
    if (tmpdir[0] && strncmp(tmpdir, "/tmp/braid-client-e2e-", 22) == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "warning: could not remove %s\n", tmpdir);
    }
}

static int start_braidd(void)
{
    char ports[400];
    snprintf(ports, sizeof ports, "%s/ports", tmpdir);
    char *argv[] = { (char *)braidd_path, "--repository", repo, "--grpc-address", "127.0.0.1:0",
                     "--http-address", "127.0.0.1:0", "--rest-address", "127.0.0.1:0", "--port-file", ports,
                     "--allow-uploads", NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawn(&braidd_pid, braidd_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        fprintf(stderr, "cannot start %s: %s\n", braidd_path, strerror(rc));
        braidd_pid = -1;
        return -1;
    }
    /* Bounded wait for "grpc_port http_port\n". */
    for (double end = now_s() + START_TIMEOUT_S; now_s() < end; sleep_ms(20)) {
        size_t size;
        char *text = tl_read_file(ports, &size);
        int grpc_port = 0, http_port = 0;
        if (text && size && text[size - 1] == '\n' && sscanf(text, "%d %d", &grpc_port, &http_port) == 2) {
            free(text);
            snprintf(target, sizeof target, "127.0.0.1:%d", grpc_port);
            return 0;
        }
        free(text);
        int status;
        if (waitpid(braidd_pid, &status, WNOHANG) == braidd_pid) {
            fprintf(stderr, "braidd exited (status 0x%x) before writing its port file\n", status);
            braidd_pid = -1;
            dump_log();
            return -1;
        }
    }
    fprintf(stderr, "braidd wrote no port file within %d s\n", START_TIMEOUT_S);
    kill(braidd_pid, SIGKILL);
    waitpid(braidd_pid, NULL, 0);
    braidd_pid = -1;
    dump_log();
    return -1;
}

/* SIGTERM and a bounded wait; returns the exit status (or -1 when it had to be killed). */
static int stop_braidd(void)
{
    if (braidd_pid <= 0)
        return -1;
    kill(braidd_pid, SIGTERM);
    for (double end = now_s() + STOP_TIMEOUT_S; now_s() < end; sleep_ms(20)) {
        int status;
        if (waitpid(braidd_pid, &status, WNOHANG) == braidd_pid) {
            braidd_pid = -1;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
    }
    kill(braidd_pid, SIGKILL);
    waitpid(braidd_pid, NULL, 0);
    braidd_pid = -1;
    return -1;
}

/* Bounded wait until MODEL is ready (NOT_FOUND while it loads counts as not yet). */
static int wait_model_ready(const char *model)
{
    char msg[512];
    for (double end = now_s() + START_TIMEOUT_S; now_s() < end; sleep_ms(20)) {
        bool ready = false;
        if (braid_model_ready(client, model, NULL, &ready, msg, sizeof msg) == BRAID_OK && ready)
            return 0;
    }
    return -1;
}

static int group_setup(void **state)
{
    bd_error err = { 0 };
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/demo/image.npy", getenv("BRAID_SOURCE_ROOT"));
    if (bd_npy_read(path, &image, &err))
        return fprintf(stderr, "%s\n", err.msg), -1;
    snprintf(path, sizeof path, "%s/tests/fixtures/demo/probabilities.npy", getenv("BRAID_SOURCE_ROOT"));
    if (bd_npy_read(path, &want, &err))
        return fprintf(stderr, "%s\n", err.msg), -1;
    if (make_repository() || start_braidd())
        return -1;
    char msg[512];
    braid_client_options o = { .timeout_ms = 30000 };
    if (braid_client_connect(target, &o, &client, msg, sizeof msg))
        return fprintf(stderr, "connect: %s\n", msg), -1;
    if (wait_model_ready("tinycnn"))
        return fprintf(stderr, "tinycnn did not become ready\n"), dump_log(), -1;
    return 0;
}

static int group_teardown(void **state)
{
    braid_client_close(client);
    client = NULL;
    int status = stop_braidd();
    bd_npy_free(&image);
    bd_npy_free(&want);
    if (status != 0) {
        fprintf(stderr, "braidd exit status after SIGTERM: %d (expected 0)\n", status);
        dump_log();
    }
    remove_tree();
    return status == 0 ? 0 : -1;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static braid_tensor image_tensor(int64_t *dims)
{
    for (int d = 0; d < image.shape.rank; d++)
        dims[d] = image.shape.dims[d];
    return (braid_tensor){ "image", "FP32", dims, image.shape.rank, image.data, image.nbytes };
}

/* Largest |got - want| over the demo's probabilities; INFINITY when the datatype, shape,
 * size or alignment is wrong. Asserts nothing, so worker threads may call it. */
static double error_of(const braid_infer_result *r, size_t i)
{
    int ndim;
    size_t nbytes;
    const int64_t *shape = braid_infer_result_shape(r, i, &ndim);
    const float *got = braid_infer_result_data(r, i, &nbytes);
    const char *dt = braid_infer_result_datatype(r, i);
    if (!dt || strcmp(dt, "FP32") || ndim != want.shape.rank || nbytes != want.nbytes || (uintptr_t)got % 64)
        return INFINITY;
    for (int d = 0; d < ndim; d++)
        if (shape[d] != want.shape.dims[d])
            return INFINITY;
    double e = 0;
    for (size_t k = 0; k < nbytes / 4; k++)
        e = fmax(e, fabs((double)got[k] - (double)((const float *)want.data)[k]));
    return e;
}

static double max_error(const braid_infer_result *r, size_t i)
{
    double e = error_of(r, i);
    if (isinf(e))
        fail_msg("output %zu is not FP32 %s-shaped like the reference (or not 64-byte aligned)", i, "probabilities");
    return e;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_server_health_and_metadata(void **state)
{
    char msg[512];
    bool live = false, ready = false;
    assert_int_equal(braid_server_live(client, &live, msg, sizeof msg), BRAID_OK);
    assert_true(live);
    assert_int_equal(braid_server_ready(client, &ready, msg, sizeof msg), BRAID_OK);
    assert_true(ready);
    braid_server_info *info = NULL;
    assert_int_equal(braid_server_metadata(client, &info, msg, sizeof msg), BRAID_OK);
    assert_true(info->name[0] != '\0');
    assert_true(info->version[0] != '\0');
    bool repo_ext = false;
    for (size_t i = 0; i < info->n_extensions; i++)
        repo_ext |= strcmp(info->extensions[i], "model_repository") == 0;
    assert_true(repo_ext);
    braid_server_info_free(info);
}

static void test_model_metadata_and_ready(void **state)
{
    char msg[512];
    braid_model_info *m = NULL;
    assert_int_equal(braid_model_metadata(client, "tinycnn", NULL, &m, msg, sizeof msg), BRAID_OK);
    assert_string_equal(m->name, "tinycnn");
    assert_string_equal(m->platform, "onnx");
    assert_true(m->n_versions >= 1);
    assert_int_equal(m->n_inputs, 1);
    assert_string_equal(m->inputs[0].name, "image");
    assert_string_equal(m->inputs[0].datatype, "FP32");
    assert_int_equal(m->inputs[0].ndim, image.shape.rank);
    assert_int_equal(m->n_outputs, 1);
    assert_string_equal(m->outputs[0].name, "probabilities");
    braid_model_info_free(m);

    bool ready = false;
    assert_int_equal(braid_model_ready(client, "tinycnn", "1", &ready, msg, sizeof msg), BRAID_OK);
    assert_true(ready);
    m = NULL;
    assert_int_equal(braid_model_metadata(client, "no-such-model", NULL, &m, msg, sizeof msg), BRAID_NOT_FOUND);
    assert_null(m);
    assert_non_null(strstr(msg, "no-such-model"));
}

static void test_repository_index_lists_demo(void **state)
{
    char msg[512];
    braid_repository_list *idx = NULL;
    assert_int_equal(braid_repository_index(client, false, &idx, msg, sizeof msg), BRAID_OK);
    bool found = false;
    for (size_t i = 0; i < idx->n_models; i++)
        if (strcmp(idx->models[i].name, "tinycnn") == 0) {
            found = true;
            assert_string_equal(idx->models[i].state, "READY");
        }
    assert_true(found);
    braid_repository_list_free(idx);
}

static void test_infer_matches_pytorch(void **state)
{
    char msg[512];
    int64_t dims[8];
    braid_tensor in = image_tensor(dims);
    braid_infer_request req = { .model = "tinycnn", .id = "req-42", .inputs = &in, .n_inputs = 1 };
    braid_infer_result *r = NULL;
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_OK);
    infers_done++;
    assert_string_equal(braid_infer_result_model(r), "tinycnn");
    assert_string_equal(braid_infer_result_id(r), "req-42");
    assert_int_equal(braid_infer_result_num_outputs(r), 1);
    assert_string_equal(braid_infer_result_name(r, 0), "probabilities");
    assert_int_equal(braid_infer_result_find(r, "probabilities"), 0);
    assert_int_equal(braid_infer_result_find(r, "nope"), -1);
    double e = max_error(r, 0);
    fprintf(stderr, "tinycnn over gRPC: max abs error vs PyTorch %.3g\n", e);
    assert_true(e <= 1e-5);
    braid_infer_result_free(r);

    /* Requested outputs by name. */
    const char *outs[] = { "probabilities" };
    req.outputs = outs;
    req.n_outputs = 1;
    req.version = "1";
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_OK);
    infers_done++;
    assert_int_equal(braid_infer_result_num_outputs(r), 1);
    braid_infer_result_free(r);
}

static void test_infer_dlpack_in_and_out(void **state)
{
    char msg[512];
    DLTensor t;
    bd_npy_as_dltensor(&image, &t);
    const char *names[] = { "image" };
    braid_infer_result *r = NULL;
    assert_int_equal(braid_model_infer_dl(client, "tinycnn", NULL, names, &t, 1, &r, msg, sizeof msg), BRAID_OK);
    infers_done++;
    DLManagedTensor *mt = NULL;
    assert_int_equal(braid_infer_result_dl(r, 0, &mt, msg, sizeof msg), BRAID_OK);
    double e = max_error(r, 0);
    braid_infer_result_free(r);   /* the managed tensor keeps the memory alive */
    assert_int_equal(mt->dl_tensor.dtype.code, kDLFloat);
    assert_int_equal(mt->dl_tensor.dtype.bits, 32);
    assert_int_equal(mt->dl_tensor.device.device_type, kDLCPU);
    assert_null(mt->dl_tensor.strides);
    size_t n = 1;
    for (int d = 0; d < mt->dl_tensor.ndim; d++)
        n *= (size_t)mt->dl_tensor.shape[d];
    double e2 = 0;
    for (size_t k = 0; k < n; k++)
        e2 = fmax(e2, fabs((double)((float *)mt->dl_tensor.data)[k] - (double)((const float *)want.data)[k]));
    assert_true(e <= 1e-5 && e2 == e);
    mt->deleter(mt);
}

static void test_bad_requests_get_server_status(void **state)
{
    char msg[512];
    int64_t dims[8];
    braid_tensor in = image_tensor(dims);
    in.name = "not_an_input";
    braid_infer_request req = { .model = "tinycnn", .inputs = &in, .n_inputs = 1 };
    braid_infer_result *r = NULL;
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_INVALID_ARGUMENT);
    assert_null(r);
    assert_non_null(strstr(msg, "not_an_input"));
    in.name = "image";
    req.model = "no-such-model";
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_NOT_FOUND);
    req.model = "tinycnn";
    req.version = "99";
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_NOT_FOUND);
    assert_null(r);
    /* A tensor far above gRPC's 4 MiB default crosses both message limits and is judged by
     * its shape, not its size. */
    int64_t big_dims[4] = { 1, 3, 1024, 1024 };
    size_t big_bytes = 3u * 1024 * 1024 * sizeof(float);
    float *big = calloc(1, big_bytes);
    assert_non_null(big);
    braid_tensor big_in = { "image", "FP32", big_dims, 4, big, big_bytes };
    braid_infer_request big_req = { .model = "tinycnn", .inputs = &big_in, .n_inputs = 1 };
    assert_int_equal(braid_model_infer(client, &big_req, &r, msg, sizeof msg), BRAID_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "image"));
    free(big);
    /* The server keeps serving. */
    req.version = NULL;
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_OK);
    infers_done++;
    braid_infer_result_free(r);
}

typedef struct worker {
    int ok, failed;
    char msg[512];
} worker;

static void *infer_loop(void *arg)
{
    worker *w = arg;
    int64_t dims[8];
    braid_tensor in = image_tensor(dims);
    braid_infer_request req = { .model = "tinycnn", .inputs = &in, .n_inputs = 1 };
    for (int i = 0; i < 25; i++) {
        braid_infer_result *r = NULL;
        if (braid_model_infer(client, &req, &r, w->msg, sizeof w->msg) == BRAID_OK && error_of(r, 0) <= 1e-5)
            w->ok++;
        else
            w->failed++;
        braid_infer_result_free(r);
    }
    return NULL;
}

static void test_one_client_many_threads(void **state)
{
    enum { N = 4 };
    pthread_t th[N];
    worker w[N];
    memset(w, 0, sizeof w);
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, infer_loop, &w[i]), 0);
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        if (w[i].failed)
            fprintf(stderr, "thread %d: %d failed (last: %s)\n", i, w[i].failed, w[i].msg);
        assert_int_equal(w[i].failed, 0);
        infers_done += w[i].ok;
    }
}

static void test_statistics_count_inferences(void **state)
{
    char msg[512];
    braid_statistics *s = NULL;
    assert_int_equal(braid_model_statistics(client, "tinycnn", NULL, &s, msg, sizeof msg), BRAID_OK);
    uint64_t inferences = 0, successes = 0, compute_ns = 0;
    for (size_t i = 0; i < s->n_models; i++) {
        assert_string_equal(s->models[i].name, "tinycnn");
        inferences += s->models[i].inference_count;
        successes += s->models[i].success.count;
        compute_ns += s->models[i].compute_infer.ns;
    }
    assert_true(inferences >= (uint64_t)infers_done);
    assert_true(successes >= (uint64_t)infers_done);
    assert_true(compute_ns > 0);
    braid_statistics_free(s);
    s = NULL;
    assert_int_equal(braid_model_statistics(client, NULL, NULL, &s, msg, sizeof msg), BRAID_OK);
    assert_true(s->n_models >= 1);
    braid_statistics_free(s);
}

static void test_upload_reload_and_unload(void **state)
{
    char msg[512];
    size_t size;
    char *bytes = tl_read_file(demo_model_path(), &size);
    assert_non_null(bytes);
    assert_int_equal(braid_model_load_bytes(client, "uploaded", "3", bytes, size, "{}", msg, sizeof msg), BRAID_OK);
    free(bytes);
    assert_int_equal(wait_model_ready("uploaded"), 0);
    bool ready = false;
    assert_int_equal(braid_model_ready(client, "uploaded", "3", &ready, msg, sizeof msg), BRAID_OK);
    assert_true(ready);

    int64_t dims[8];
    braid_tensor in = image_tensor(dims);
    braid_infer_request req = { .model = "uploaded", .inputs = &in, .n_inputs = 1 };
    braid_infer_result *r = NULL;
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_OK);
    assert_string_equal(braid_infer_result_version(r), "3");
    assert_true(max_error(r, 0) <= 1e-5);
    braid_infer_result_free(r);

    /* Hot reload of a repository model by name; a broken upload leaves the old one serving. */
    assert_int_equal(braid_model_load(client, "tinycnn", NULL, msg, sizeof msg), BRAID_OK);
    assert_int_equal(wait_model_ready("tinycnn"), 0);
    assert_int_not_equal(braid_model_load_bytes(client, "uploaded", "4", "not onnx", 8, NULL, msg, sizeof msg),
                         BRAID_OK);
    assert_true(msg[0] != '\0');
    r = NULL;
    assert_int_equal(braid_model_infer(client, &req, &r, msg, sizeof msg), BRAID_OK);
    braid_infer_result_free(r);
    assert_int_not_equal(braid_model_load(client, "no-such-model", NULL, msg, sizeof msg), BRAID_OK);

    assert_int_equal(braid_model_unload(client, "uploaded", msg, sizeof msg), BRAID_OK);
    r = NULL;
    braid_status st = braid_model_infer(client, &req, &r, msg, sizeof msg);
    assert_true(st == BRAID_NOT_FOUND || st == BRAID_UNAVAILABLE);
    assert_null(r);
    ready = true;
    st = braid_model_ready(client, "uploaded", NULL, &ready, msg, sizeof msg);
    assert_true(st != BRAID_OK || !ready);
}

int main(int argc, char **argv)
{
    braidd_path = argc > 1 ? argv[1] : getenv("BRAIDD");
    if (!braidd_path || access(braidd_path, X_OK) != 0 || !getenv("BRAID_SOURCE_ROOT")) {
        fprintf(stderr, "skipped: set BRAIDD (or pass braidd's path) and BRAID_SOURCE_ROOT\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_health_and_metadata),
        cmocka_unit_test(test_model_metadata_and_ready),
        cmocka_unit_test(test_repository_index_lists_demo),
        cmocka_unit_test(test_infer_matches_pytorch),
        cmocka_unit_test(test_infer_dlpack_in_and_out),
        cmocka_unit_test(test_bad_requests_get_server_status),
        cmocka_unit_test(test_one_client_many_threads),
        cmocka_unit_test(test_statistics_count_inferences),
        cmocka_unit_test(test_upload_reload_and_unload),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
