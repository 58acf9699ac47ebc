/* The registry against a temporary repository holding the demo model (tinycnn): scan, load,
 * inference through the exec pool, hot reload while a reference is held, a failed reload
 * that leaves the old version serving, unload, uploads (confinement, symlinks, the private
 * directory), config.json, and the names braidd accepts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/registry/model_name.h"
#include "daemon/registry/registry.h"
#include "daemon/registry/registry_served_internal.h"
#include "tests/daemon/daemon_testlib.h"
#include "tests/lib/tl_file.h"

typedef struct fixture {
    uv_loop_t         loop;
    char              repo[4096];
    char              outside[4096];   /* a directory uploads must never reach */
    char              model_src[4096];
    bd_daemon_config  cfg;
    bd_registry      *reg;
} fixture;

typedef struct done_flag {
    int  calls;
    int  status;
    char msg[512];
} done_flag;

static void on_done(void *arg, int status, const char *message)
{
    done_flag *d = arg;
    d->calls++;
    d->status = status;
    snprintf(d->msg, sizeof d->msg, "%s", message);
}

/* Turn the loop until *CALLS is nonzero (bounded: 60 s). */
static void run_until(fixture *f, const int *calls)
{
    for (int i = 0; i < 60000 && *calls == 0; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (*calls)
            break;
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_true(*calls > 0);
}

static void add_version(fixture *f, const char *model, const char *version)
{
    char dst[8192];
    snprintf(dst, sizeof dst, "%s/%s/%s/model.onnx", f->repo, model, version);
    tl_copy(f->model_src, dst);
}

static void open_registry(fixture *f)
{
    bd_error err = { 0 };
    if (bd_registry_create(&f->loop, &f->cfg, &f->reg, &err))
        fail_msg("bd_registry_create: %s", err.msg);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    tl_mkdtemp(f->repo, sizeof f->repo);
    tl_mkdtemp(f->outside, sizeof f->outside);
    tl_source_path("daemon/demo-repository/tinycnn/1/model.onnx", f->model_src, sizeof f->model_src);
    add_version(f, "tinycnn", "1");
    bd_config_defaults(&f->cfg);
    snprintf(f->cfg.repository, sizeof f->cfg.repository, "%s", f->repo);
    f->cfg.threads_per_worker = 1;
    *state = f;
    return 0;
}

/* Every test ends here: registry freed, loop closed with no handle left, no version alive. */
static int teardown(void **state)
{
    fixture *f = *state;
    bd_registry_destroy(f->reg);
    for (int i = 0; i < 60000 && uv_run(&f->loop, UV_RUN_NOWAIT); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_int_equal(uv_loop_close(&f->loop), 0);
    assert_int_equal(served_live_count(), 0);
    tl_rmtree(f->repo);
    tl_rmtree(f->outside);
    free(f);
    return 0;
}

static int load_sync(fixture *f, const char *name, const char *config, const bd_upload *up, size_t n,
                     done_flag *d)
{
    memset(d, 0, sizeof *d);
    bd_error err = { 0 };
    int rc = bd_registry_load(f->reg, name, config, up, n, on_done, d, &err);
    if (rc) {
        snprintf(d->msg, sizeof d->msg, "%s", err.msg);
        return rc;
    }
    run_until(f, &d->calls);
    assert_int_equal(d->calls, 1);
    return d->status;
}

static const bd_registry_entry *entry_of(bd_registry_entry *e, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i].name, name) == 0)
            return &e[i];
    return NULL;
}

/* Run one inference on S (a zero image): the probabilities of a softmax sum to 1. */
static void infer_ok(bd_served *s)
{
    static float image[3 * 32 * 32];
    int64_t shape[4] = { 1, 3, 32, 32 };
    DLTensor in = { .data = image, .device = { kDLCPU, 0 }, .ndim = 4,
                    .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    const bd_plan *plan = NULL;
    bd_exec *e = NULL;
    bd_error err = { 0 };
    if (bd_model_plan(bd_served_model(s), &in, 1, &plan, &err) || bd_served_exec_acquire(s, plan, &e, &err) ||
        bd_exec_run(e, &in, 1, &err))
        fail_msg("inference on %s v%s: %s", bd_served_name(s), bd_served_version(s), err.msg);
    const DLTensor *out = bd_exec_output(e, 0);
    assert_int_equal(out->shape[1], 10);
    float sum = 0;
    for (int i = 0; i < 10; i++)
        sum += ((const float *)out->data)[i];
    assert_true(sum > 0.99f && sum < 1.01f);
    bd_served_exec_release(s, e);
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_scan_then_load(void **state)
{
    fixture *f = *state;
    open_registry(f);
    tl_write(strcat(strcpy((char[8192]){ 0 }, f->repo), "/.hidden/1/model.onnx"), "x", 1);
    tl_write(strcat(strcpy((char[8192]){ 0 }, f->repo), "/README"), "not a model", (size_t)-1);
    bd_error err = { 0 };
    assert_int_equal(bd_registry_scan(f->reg, false, &err), 0);
    bd_registry_entry *snap = NULL;
    size_t n = bd_registry_snapshot(f->reg, &snap);
    assert_int_equal(n, 1);
    assert_string_equal(snap[0].name, "tinycnn");
    assert_int_equal(snap[0].state, BD_STATE_UNAVAILABLE);
    assert_null(snap[0].served);
    bd_registry_snapshot_free(snap, n);
    assert_true(bd_registry_ready(f->reg));

    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, &err), BD_EUNAVAIL);
    assert_int_equal(bd_registry_acquire(f->reg, "nope", NULL, &s, &err), BD_ENOTFOUND);

    done_flag d = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d, &err), 0);
    assert_true(bd_registry_ready(f->reg));       /* a load after start-up: the server stays ready */
    n = bd_registry_snapshot(f->reg, &snap);
    assert_int_equal(snap[0].state, BD_STATE_LOADING);
    bd_registry_snapshot_free(snap, n);
    run_until(f, &d.calls);
    assert_int_equal(d.status, 0);
    assert_true(bd_registry_ready(f->reg));

    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", "", &s, &err), 0);
    assert_string_equal(bd_served_name(s), "tinycnn");
    assert_string_equal(bd_served_version(s), "1");
    assert_string_equal(bd_served_platform(s), "onnx");
    assert_int_equal(bd_served_queue_limit(s), 64);
    const bd_partition_summary *sum = bd_served_summary(s);
    assert_int_equal(sum->nodes_imported, 9);
    assert_int_equal(sum->nodes_planned, 7);
    assert_int_equal(sum->nodes_per_backend[0], 7);          /* dnnl runs all of it */
    assert_int_equal(sum->fused_composites, 2);               /* Conv+Relu twice */
    assert_true(sum->steps >= 1);
    assert_true(sum->load_ms > 0);
    infer_ok(s);
    infer_ok(s);                                              /* the pooled context is reused */
    bd_served *s2 = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", "1", &s2, &err), 0);
    bd_served_release(s2);
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", "7", &s2, &err), BD_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no version '7'"));
    bd_served_release(s);
    assert_int_equal(bd_registry_server_stats(f->reg)->loads_ok, 1);
}

static void test_reload_keeps_old_version_alive_until_released(void **state)
{
    fixture *f = *state;
    open_registry(f);
    done_flag d;
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    bd_served *v1 = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &v1, NULL), 0);
    assert_int_equal(served_live_count(), 1);

    add_version(f, "tinycnn", "2");
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    bd_served *v2 = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &v2, NULL), 0);
    assert_string_equal(bd_served_version(v2), "2");
    assert_int_equal(served_live_count(), 2);                 /* v1 lives on our reference */
    infer_ok(v1);                                             /* and still runs */
    infer_ok(v2);
    bd_served_release(v1);
    assert_int_equal(served_live_count(), 1);                 /* freed on the last release */
    bd_served_release(v2);
}

static void test_failed_reload_keeps_serving(void **state)
{
    fixture *f = *state;
    open_registry(f);
    done_flag d;
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    char bad[8192];
    snprintf(bad, sizeof bad, "%s/tinycnn/2/model.onnx", f->repo);
    tl_write(bad, "this is not an onnx model", (size_t)-1);
    uint64_t gen = bd_registry_generation(f->reg);
    assert_true(load_sync(f, "tinycnn", NULL, NULL, 0, &d) < 0);
    assert_true(d.msg[0] != '\0');
    assert_int_equal(bd_registry_generation(f->reg), gen);   /* nothing was swapped */

    bd_registry_entry *snap = NULL;
    size_t n = bd_registry_snapshot(f->reg, &snap);
    const bd_registry_entry *e = entry_of(snap, n, "tinycnn");
    assert_int_equal(e->state, BD_STATE_READY);
    assert_string_equal(e->version, "1");
    assert_non_null(strstr(e->reason, "reload failed, version 1 keeps serving"));
    assert_non_null(strstr(e->reason, "tinycnn/2/model.onnx"));
    bd_registry_snapshot_free(snap, n);

    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, NULL), 0);
    assert_string_equal(bd_served_version(s), "1");
    infer_ok(s);
    bd_served_release(s);
    assert_int_equal(bd_registry_server_stats(f->reg)->loads_failed, 1);

    /* Fix version 2: the next reload picks it up and clears the reason. */
    add_version(f, "tinycnn", "2");
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    assert_true(bd_registry_generation(f->reg) > gen);       /* the swap is visible */
    n = bd_registry_snapshot(f->reg, &snap);
    assert_string_equal(snap[0].version, "2");
    assert_string_equal(snap[0].reason, "");
    bd_registry_snapshot_free(snap, n);
}

static void test_failed_first_load_is_unavailable(void **state)
{
    fixture *f = *state;
    char bad[8192];
    snprintf(bad, sizeof bad, "%s/broken/1/model.onnx", f->repo);
    tl_write(bad, "garbage", (size_t)-1);
    snprintf(bad, sizeof bad, "%s/empty", f->repo);
    mkdir(bad, 0755);
    open_registry(f);
    bd_error err = { 0 };
    assert_int_equal(bd_registry_scan(f->reg, true, &err), 0);    /* start-up: load everything */
    bd_registry_entry *snap = NULL;
    size_t n = 0;
    for (int i = 0; i < 60000; i++) {                              /* bounded: until loads end */
        if (bd_registry_ready(f->reg))
            break;
        uv_run(&f->loop, UV_RUN_NOWAIT);
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_true(bd_registry_ready(f->reg));    /* failed models do not hold readiness back */
    n = bd_registry_snapshot(f->reg, &snap);
    assert_int_equal(n, 3);
    const bd_registry_entry *b = entry_of(snap, n, "broken"), *e = entry_of(snap, n, "empty"),
                            *t = entry_of(snap, n, "tinycnn");
    assert_int_equal(b->state, BD_STATE_UNAVAILABLE);
    assert_true(b->reason[0] != '\0');
    assert_int_equal(e->state, BD_STATE_UNAVAILABLE);
    assert_non_null(strstr(e->reason, "no version directory"));
    assert_int_equal(t->state, BD_STATE_READY);
    bd_registry_snapshot_free(snap, n);
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "broken", NULL, &s, &err), BD_EUNAVAIL);
    assert_non_null(strstr(err.msg, "not ready"));
    assert_int_equal(bd_registry_server_stats(f->reg)->loads_failed, 2);

    /* A rescan loads only what changed: nothing is in flight afterwards for tinycnn. */
    add_version(f, "tinycnn", "3");
    assert_int_equal(bd_registry_scan(f->reg, true, &err), 0);
    assert_true(bd_registry_ready(f->reg));       /* a rescan's loads do not unready the server */
    for (int i = 0; i < 60000 && bd_registry_loads_running(f->reg) > 0; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", "3", &s, &err), 0);
    bd_served_release(s);
}

static void test_unload(void **state)
{
    fixture *f = *state;
    open_registry(f);
    done_flag d;
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    bd_served *held = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &held, NULL), 0);
    memset(&d, 0, sizeof d);
    bd_error err = { 0 };
    uint64_t gen = bd_registry_generation(f->reg);
    assert_int_equal(bd_registry_unload(f->reg, "tinycnn", on_done, &d, &err), 0);
    assert_true(bd_registry_generation(f->reg) > gen);       /* visible before the callback */
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, &err), BD_ENOTFOUND);  /* at once */
    assert_int_equal(d.calls, 0);                              /* the callback is not re-entrant */
    run_until(f, &d.calls);
    assert_int_equal(d.status, 0);
    infer_ok(held);                                           /* a running request finishes */
    bd_served_release(held);
    assert_int_equal(served_live_count(), 0);

    bd_registry_entry *snap = NULL;
    size_t n = bd_registry_snapshot(f->reg, &snap);
    assert_int_equal(snap[0].state, BD_STATE_UNAVAILABLE);
    assert_string_equal(snap[0].reason, "unloaded");
    bd_registry_snapshot_free(snap, n);
    assert_int_equal(bd_registry_unload(f->reg, "ghost", NULL, NULL, &err), BD_ENOTFOUND);
    /* Loading again brings it back. */
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, &err), 0);
    bd_served_release(s);
}

/* Loads and unloads of one model asked for while a load runs wait their turn, in order. */
static void test_operations_on_one_model_queue_in_order(void **state)
{
    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    done_flag first = { 0 }, second = { 0 }, unload = { 0 }, third = { 0 };
    add_version(f, "tinycnn", "2");          /* before the loads: a copy is not atomic */
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &first, &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &second, &err), 0);
    assert_int_equal(bd_registry_unload(f->reg, "tinycnn", on_done, &unload, &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &third, &err), 0);
    assert_int_equal(bd_registry_loads_running(f->reg), 1);      /* one at a time */
    run_until(f, &first.calls);
    assert_int_equal(second.calls + unload.calls + third.calls, 0);   /* nothing jumped ahead */
    run_until(f, &second.calls);
    run_until(f, &unload.calls);
    run_until(f, &third.calls);
    assert_int_equal(first.status, 0);
    assert_int_equal(second.status, 0);
    assert_int_equal(unload.status, 0);
    assert_int_equal(third.status, 0);
    assert_int_equal(bd_registry_loads_running(f->reg), 0);
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, &err), 0);
    assert_string_equal(bd_served_version(s), "2");
    bd_served_release(s);
    bd_server_stats *st = bd_registry_server_stats(f->reg);
    assert_int_equal(st->loads_ok, 3);
    assert_int_equal(st->unloads, 1);

    /* Destroy with operations still queued: none is told, nothing leaks (teardown checks). */
    done_flag late1 = { 0 }, late2 = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &late1, &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &late2, &err), 0);
    bd_registry_destroy(f->reg);
    f->reg = NULL;
    for (int i = 0; i < 60000 && uv_run(&f->loop, UV_RUN_NOWAIT); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_int_equal(late1.calls + late2.calls, 0);
}

static void test_load_unknown_model(void **state)
{
    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "missing", NULL, NULL, 0, NULL, NULL, &err), BD_ENOTFOUND);
    assert_non_null(strstr(err.msg, "missing"));
}

static void test_model_names(void **state)
{
    const char *bad[] = { "", ".hidden", "a/b", "..", "sp ace", "semi;colon", "é" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(model_name_check(bad[i], NULL), BD_EINVAL);
    char long_name[130];
    memset(long_name, 'a', 129);
    long_name[129] = '\0';
    assert_int_equal(model_name_check(long_name, NULL), BD_EINVAL);
    long_name[128] = '\0';
    assert_int_equal(model_name_check(long_name, NULL), 0);
    assert_int_equal(model_name_check("resnet-50_v1.5", NULL), 0);

    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "../etc", NULL, NULL, 0, NULL, NULL, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "model name"));
}

static void read_file(const char *path, char *buf, size_t size)
{
    char *text = tl_read_text(path);
    assert_non_null(text);
    snprintf(buf, size, "%s", text);
    free(text);
}

static size_t model_bytes(fixture *f, char **out)
{
    FILE *fp = fopen(f->model_src, "rb");
    assert_non_null(fp);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    *out = buf;
    return n;
}

static void test_uploads_need_permission(void **state)
{
    fixture *f = *state;
    open_registry(f);
    char *bytes;
    size_t len = model_bytes(f, &bytes);
    bd_upload up = { "1/model.onnx", bytes, len };
    bd_error err = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "up", NULL, &up, 1, NULL, NULL, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "--allow-uploads"));
}

static void test_upload_then_serve(void **state)
{
    fixture *f = *state;
    f->cfg.allow_uploads = true;
    open_registry(f);
    char *bytes;
    size_t len = model_bytes(f, &bytes);
    bd_upload up = { "1/model.onnx", bytes, len };
    done_flag d;
    if (load_sync(f, "up", "{\"queue_limit\": 3, \"max_batch_size\": 8}", &up, 1, &d))
        fail_msg("upload load: %s", d.msg);
    char path[8192];
    snprintf(path, sizeof path, "%s/up/1/model.onnx", f->repo);
    assert_true(tl_exists(path));
    snprintf(path, sizeof path, "%s/up/config.json", f->repo);   /* uploads on: stored */
    char text[256];
    read_file(path, text, sizeof text);
    assert_non_null(strstr(text, "queue_limit"));
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "up", NULL, &s, NULL), 0);
    assert_int_equal(bd_served_queue_limit(s), 3);
    infer_ok(s);
    bd_served_release(s);
    /* No temporary files left next to the upload. */
    snprintf(path, sizeof path, "%s/up/1", f->repo);
    int entries = 0;
    DIR *dir = opendir(path);
    for (struct dirent *de; (de = readdir(dir)) != NULL;)
        entries += de->d_name[0] != '.';
    closedir(dir);
    assert_int_equal(entries, 1);
}

static void test_upload_paths_are_confined(void **state)
{
    fixture *f = *state;
    f->cfg.allow_uploads = true;
    open_registry(f);
    const char *bad[] = { "../escape.onnx", "/etc/passwd", "1//model.onnx", "1/../../x", "./1/model.onnx",
                          "", "1/", "1/..", };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bd_upload up = { bad[i], "x", 1 };
        bd_error err = { 0 };
        if (bd_registry_load(f->reg, "tinycnn", NULL, &up, 1, NULL, NULL, &err) != BD_EINVAL)
            fail_msg("upload path '%s' was accepted", bad[i]);
    }
}

static void test_upload_refuses_symlinks(void **state)
{
    fixture *f = *state;
    f->cfg.allow_uploads = true;
    char link[8192], target[8192];
    /* 1. the model directory itself is a link out of the repository */
    snprintf(link, sizeof link, "%s/linked", f->repo);
    assert_int_equal(symlink(f->outside, link), 0);
    /* 2. a version directory inside a model is a link */
    snprintf(link, sizeof link, "%s/tinycnn/9", f->repo);
    assert_int_equal(symlink(f->outside, link), 0);
    /* 3. the file itself is a link to a file outside */
    snprintf(target, sizeof target, "%s/victim", f->outside);
    tl_write(target, "precious", (size_t)-1);
    snprintf(link, sizeof link, "%s/tinycnn/1/evil.onnx", f->repo);
    assert_int_equal(symlink(target, link), 0);
    open_registry(f);

    struct { const char *model, *path; } cases[] = {
        { "linked", "1/model.onnx" }, { "tinycnn", "9/model.onnx" }, { "tinycnn", "1/evil.onnx" },
    };
    for (size_t i = 0; i < 3; i++) {
        bd_upload up = { cases[i].path, "pwned", 5 };
        done_flag d;
        int rc = load_sync(f, cases[i].model, NULL, &up, 1, &d);
        if (rc == 0)
            fail_msg("upload %s/%s through a symlink was accepted", cases[i].model, cases[i].path);
        assert_non_null(strstr(d.msg, "symlink"));
    }
    char text[64];
    read_file(target, text, sizeof text);
    assert_string_equal(text, "precious");
    DIR *dir = opendir(f->outside);
    int entries = 0;
    for (struct dirent *de; (de = readdir(dir)) != NULL;)
        entries += de->d_name[0] != '.';
    closedir(dir);
    assert_int_equal(entries, 1);                      /* only the victim: nothing was written */
}

static void test_private_upload_dir_without_repository(void **state)
{
    fixture *f = *state;
    f->cfg.repository[0] = '\0';
    f->cfg.allow_uploads = true;
    open_registry(f);
    bd_error err = { 0 };
    assert_int_equal(bd_registry_scan(f->reg, true, &err), 0);   /* nothing to scan */
    char *bytes;
    size_t len = model_bytes(f, &bytes);
    bd_upload up = { "1/model.onnx", bytes, len };
    done_flag d;
    if (load_sync(f, "mem", NULL, &up, 1, &d))
        fail_msg("upload without repository: %s", d.msg);
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "mem", NULL, &s, NULL), 0);
    infer_ok(s);
    bd_served_release(s);
    /* The private directory goes away with the registry (checked after teardown's loop run). */
    bd_registry_destroy(f->reg);
    f->reg = NULL;
    for (int i = 0; i < 1000 && uv_run(&f->loop, UV_RUN_NOWAIT); i++)
        ;
    char tmpl[4200];
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s", tmp && tmp[0] ? tmp : "/tmp");
    /* No braidd-models-* directory of ours remains: the path was logged; check via glob. */
    char pattern[4300];
    snprintf(pattern, sizeof pattern, "%s/braidd-models-*/mem", tmpl);
    glob_t g;
    int found = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    assert_int_equal(found, 0);
}

static void test_config_applied_in_memory_without_uploads(void **state)
{
    fixture *f = *state;
    open_registry(f);
    done_flag d;
    bd_error err = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", "{\"bogus\": 1}", NULL, 0, NULL, NULL, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key 'bogus'"));
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", "{\"queue_limit\": \"x\"}", NULL, 0, NULL, NULL, &err),
                     BD_EINVAL);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", "{\"name\": \"other\"}", NULL, 0, NULL, NULL, &err),
                     BD_EINVAL);
    assert_int_equal(load_sync(f, "tinycnn", "{\"queue_limit\": 5, \"threads\": 1}", NULL, 0, &d), 0);
    char path[8192];
    snprintf(path, sizeof path, "%s/tinycnn/config.json", f->repo);
    assert_false(tl_exists(path));                     /* uploads off: not written */
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, NULL), 0);
    assert_int_equal(bd_served_queue_limit(s), 5);
    bd_served_release(s);
    /* A plain reload keeps the in-memory config. */
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d), 0);
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, NULL), 0);
    assert_int_equal(bd_served_queue_limit(s), 5);
    bd_served_release(s);
}

static void test_config_file_in_repository(void **state)
{
    fixture *f = *state;
    char path[8192];
    snprintf(path, sizeof path, "%s/tinycnn/config.json", f->repo);
    tl_write(path, "{\"platform\": \"onnx\", \"queue_limit\": 2, \"default_model_filename\": \"net.onnx\"}",
             (size_t)-1);
    snprintf(path, sizeof path, "%s/tinycnn/1/net.onnx", f->repo);
    tl_copy(f->model_src, path);
    snprintf(path, sizeof path, "%s/tinycnn/1/model.onnx", f->repo);
    tl_write(path, "garbage: proves net.onnx is the one read", (size_t)-1);
    open_registry(f);
    done_flag d;
    if (load_sync(f, "tinycnn", NULL, NULL, 0, &d))
        fail_msg("%s", d.msg);
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, NULL), 0);
    assert_int_equal(bd_served_queue_limit(s), 2);
    bd_served_release(s);

    snprintf(path, sizeof path, "%s/tinycnn/config.json", f->repo);
    tl_write(path, "{\"threads\": -1}", (size_t)-1);
    assert_true(load_sync(f, "tinycnn", NULL, NULL, 0, &d) == BD_EINVAL);
    assert_non_null(strstr(d.msg, "threads"));
}

/* config.json's plan cache bounds and input ranges reach the model; malformed ones are
 * BD_EINVAL naming the key before anything loads. */
static void test_config_plan_cache_and_input_shapes(void **state)
{
    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    static const char *const bad[] = {
        "{\"plan_cache_max_plans\": -1}",
        "{\"plan_cache_max_bytes\": 1.5}",
        "{\"input_shapes\": []}",
        "{\"input_shapes\": {\"image\": {\"min\": [1, 3], \"max\": [4]}}}",
        "{\"input_shapes\": {\"image\": {\"min\": [4], \"max\": [1]}}}",
        "{\"input_shapes\": {\"image\": {\"min\": [-1], \"max\": [1]}}}",
        "{\"input_shapes\": {\"image\": {\"min\": [1], \"max\": [1], \"extra\": 1}}}",
        /* label files: a plain name in the model's folder, one per output, strings only */
        "{\"labels\": [\"labels.txt\"]}",
        "{\"labels\": {\"probabilities\": 7}}",
        "{\"labels\": {\"probabilities\": \"../../etc/passwd\"}}",
        "{\"labels\": {\"probabilities\": \"..\"}}",
        "{\"labels\": {\"probabilities\": \"\"}}",
        "{\"labels\": {\"probabilities\": \"a.txt\", \"probabilities\": \"b.txt\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(bd_registry_load(f->reg, "tinycnn", bad[i], NULL, 0, NULL, NULL, &err), BD_EINVAL);
        assert_true(strstr(err.msg, "plan_cache") || strstr(err.msg, "input_shapes") ||
                    strstr(err.msg, "labels"));
    }
    done_flag d;
    if (load_sync(f, "tinycnn", "{\"plan_cache_max_plans\": 2, \"plan_cache_max_bytes\": 0, \"input_shapes\": "
                  "{\"image\": {\"min\": [2, 3, 32, 32], \"max\": [4, 3, 32, 32]}}}", NULL, 0, &d))
        fail_msg("%s", d.msg);   /* the warm-up ran inside the range (batch 2) */
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, NULL), 0);
    bd_model *m = bd_served_model(s);
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.max_plans, 2);
    assert_int_equal(st.max_bytes, 0);
    assert_int_equal(st.compiles, 1);
    static float img[5 * 3 * 32 * 32];
    int64_t shape[4] = { 5, 3, 32, 32 };
    DLTensor in = { .data = img, .device = { kDLCPU, 0 }, .ndim = 4, .shape = shape, .dtype = { kDLFloat, 32, 1 } };
    const bd_plan *p = NULL;
    assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "input 'image': dim 0 is 5, outside the allowed range [2, 4]"));
    for (int64_t b = 2; b <= 4; b++) {      /* three shapes through a cache of two */
        shape[0] = b;
        bd_exec *e = NULL;
        assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), 0);
        assert_int_equal(bd_served_exec_acquire(s, p, &e, &err), 0);
        bd_plan_release(p);
        assert_int_equal(bd_exec_run(e, &in, 1, &err), 0);
        bd_served_exec_release(s, e);
    }
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.plans, 2);
    assert_int_equal(st.evictions, 1);
    bd_served_release(s);
}

/* ---- readiness, shutdown, bounds ------------------------------------------------------------ */

/* After bd_registry_destroy: turn the loop until its handles are closed (bounded). */
static void run_until_loop_idle(fixture *f)
{
    for (int i = 0; i < 60000 && uv_run(&f->loop, UV_RUN_NOWAIT); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
}

static void run_until_no_load(fixture *f)
{
    for (int i = 0; i < 60000 && bd_registry_loads_running(f->reg) > 0; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    uv_run(&f->loop, UV_RUN_NOWAIT);                   /* deliver posted callbacks */
    assert_int_equal(bd_registry_loads_running(f->reg), 0);
}

/* Ready = the start-up loads finished and no shutdown began; nothing else moves it. */
static void test_readiness_is_start_up_done_and_not_draining(void **state)
{
    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    assert_false(bd_registry_ready(f->reg));                      /* not scanned yet */
    assert_non_null(strstr(bd_registry_not_ready_reason(f->reg), "starting up"));
    assert_int_equal(bd_registry_scan(f->reg, true, &err), 0);
    assert_false(bd_registry_ready(f->reg));                      /* its load has not come back */
    run_until_no_load(f);
    assert_true(bd_registry_ready(f->reg));
    assert_null(bd_registry_not_ready_reason(f->reg));

    done_flag d = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d, &err), 0);
    assert_true(bd_registry_ready(f->reg));                       /* reload: still ready */
    run_until(f, &d.calls);
    assert_int_equal(d.status, 0);

    bd_registry_shutdown(f->reg);
    assert_false(bd_registry_ready(f->reg));
    assert_string_equal(bd_registry_not_ready_reason(f->reg), "shutting down");
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d, &err), BD_EUNAVAIL);
    assert_non_null(strstr(err.msg, "shutting down"));
    assert_int_equal(bd_registry_unload(f->reg, "tinycnn", on_done, &d, &err), BD_EUNAVAIL);
    bd_registry_shutdown(f->reg);                                 /* idempotent */
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, &err), 0);   /* still serves */
    bd_served_release(s);
}

/* The waiting line behind a running load is bounded (load_queue_limit); the whole registry
 * too. Deterministic: a load only finishes (after_load) when the test turns the loop. */
static void test_operations_waiting_per_model_are_bounded(void **state)
{
    fixture *f = *state;
    f->cfg.load_queue_limit = 2;
    open_registry(f);
    bd_error err = { 0 };
    done_flag d[4] = { { 0 } }, un = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d[0], &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d[1], &err), 0);
    assert_int_equal(bd_registry_unload(f->reg, "tinycnn", on_done, &un, &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d[2], &err), BD_EBUSY);
    assert_non_null(strstr(err.msg, "load_queue_limit 2"));
    assert_int_equal(bd_registry_unload(f->reg, "tinycnn", on_done, &d[3], &err), BD_EBUSY);
    assert_non_null(strstr(err.msg, "unload refused"));
    run_until(f, &d[0].calls);
    run_until(f, &d[1].calls);
    run_until(f, &un.calls);
    assert_int_equal(d[0].status + d[1].status + un.status, 0);
    assert_int_equal(d[2].calls + d[3].calls, 0);                 /* refused: never called */
    /* Room again once the line moved. */
    assert_int_equal(load_sync(f, "tinycnn", NULL, NULL, 0, &d[2]), 0);

    /* load_queue_limit 0: nothing may wait. */
    bd_registry_destroy(f->reg);
    f->reg = NULL;
    run_until_loop_idle(f);
    f->cfg.load_queue_limit = 0;
    open_registry(f);
    memset(d, 0, sizeof d);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d[0], &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d[1], &err), BD_EBUSY);
    run_until(f, &d[0].calls);
}

/* Uploaded bytes held by unfinished loads are bounded (max_pending_upload_bytes). */
static void test_pending_upload_bytes_are_bounded(void **state)
{
    fixture *f = *state;
    f->cfg.allow_uploads = true;
    char *bytes;
    size_t len = model_bytes(f, &bytes);
    f->cfg.max_pending_upload_bytes = len + len / 2;              /* one upload fits, not two */
    open_registry(f);
    bd_error err = { 0 };
    bd_upload up = { "1/model.onnx", bytes, len };
    done_flag a = { 0 }, b = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "one", NULL, &up, 1, on_done, &a, &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "two", NULL, &up, 1, on_done, &b, &err), BD_EBUSY);
    assert_non_null(strstr(err.msg, "max_pending_upload_bytes"));
    run_until(f, &a.calls);
    assert_int_equal(a.status, 0);
    /* Freed with the finished load: the second fits now. */
    assert_int_equal(load_sync(f, "two", NULL, &up, 1, &b), 0);
    /* Larger than the bound on its own: refused, saying so. */
    bd_upload two[2] = { up, { "1/extra.bin", bytes, len } };
    assert_int_equal(bd_registry_load(f->reg, "three", NULL, two, 2, on_done, &b, &err), BD_EBUSY);
    assert_non_null(strstr(err.msg, "smaller files or a larger limit"));
}

/* Shutdown: the waiting operations are answered UNAVAILABLE, the running load is cancelled
 * (its result discarded even when it had finished), every callback runs exactly once. */
static void test_shutdown_answers_and_cancels_every_load(void **state)
{
    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    done_flag run = { 0 }, wait1 = { 0 }, wait2 = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &run, &err), 0);
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &wait1, &err), 0);
    assert_int_equal(bd_registry_unload(f->reg, "tinycnn", on_done, &wait2, &err), 0);
    bd_registry_shutdown(f->reg);
    run_until(f, &run.calls);
    run_until(f, &wait1.calls);
    run_until(f, &wait2.calls);
    run_until_no_load(f);
    assert_int_equal(run.calls + wait1.calls + wait2.calls, 3);
    assert_int_equal(run.status, BD_EUNAVAIL);
    assert_non_null(strstr(run.msg, "cancelled"));
    assert_int_equal(wait1.status, BD_EUNAVAIL);
    assert_non_null(strstr(wait1.msg, "not started"));
    assert_int_equal(wait2.status, BD_EUNAVAIL);
    bd_served *s = NULL;
    assert_int_equal(bd_registry_acquire(f->reg, "tinycnn", NULL, &s, &err), BD_EUNAVAIL);
    assert_int_equal(served_live_count(), 0);                     /* the discarded version is freed */
}

/* Past the exit timeout: a running load's caller is answered now, once; the load's own end
 * later is silent. */
static void test_abandoned_load_is_answered_once(void **state)
{
    fixture *f = *state;
    open_registry(f);
    bd_error err = { 0 };
    done_flag d = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d, &err), 0);
    bd_registry_shutdown(f->reg);
    bd_registry_abandon_loads(f->reg);
    run_until(f, &d.calls);
    assert_int_equal(d.status, BD_EUNAVAIL);
    assert_non_null(strstr(d.msg, "abandoned"));
    run_until_no_load(f);
    assert_int_equal(d.calls, 1);
}

/* A load still writing its upload is not answered early: the bytes belong to the caller's
 * request until the callback runs. Its own end answers it, once. */
static void test_abandon_waits_for_the_upload_to_be_written(void **state)
{
    fixture *f = *state;
    f->cfg.allow_uploads = true;
    open_registry(f);
    char *bytes;
    size_t len = model_bytes(f, &bytes);
    bd_upload up = { "1/model.onnx", bytes, len };
    bd_error err = { 0 };
    done_flag d = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "up", NULL, &up, 1, on_done, &d, &err), 0);
    bd_registry_shutdown(f->reg);
    for (int i = 0; i < 60000 && d.calls == 0; i++) {     /* abandon over and over meanwhile */
        bd_registry_abandon_loads(f->reg);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        struct timespec ms = { 0, 100000 };
        nanosleep(&ms, NULL);
    }
    run_until_no_load(f);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.status, BD_EUNAVAIL);
}

static void test_destroy_with_load_in_flight(void **state)
{
    fixture *f = *state;
    open_registry(f);
    done_flag d = { 0 };
    assert_int_equal(bd_registry_load(f->reg, "tinycnn", NULL, NULL, 0, on_done, &d, NULL), 0);
    bd_registry_destroy(f->reg);                       /* teardown's loop run finishes the load */
    f->reg = NULL;
    for (int i = 0; i < 60000 && uv_run(&f->loop, UV_RUN_NOWAIT); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_int_equal(d.calls, 0);                      /* nobody is told after destroy */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scan_then_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_keeps_old_version_alive_until_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_reload_keeps_serving, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_first_load_is_unavailable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_operations_on_one_model_queue_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_unknown_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uploads_need_permission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_then_serve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_paths_are_confined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_refuses_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_upload_dir_without_repository, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_applied_in_memory_without_uploads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_file_in_repository, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_plan_cache_and_input_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readiness_is_start_up_done_and_not_draining, setup, teardown),
        cmocka_unit_test_setup_teardown(test_operations_waiting_per_model_are_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_upload_bytes_are_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown_answers_and_cancels_every_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandoned_load_is_answered_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandon_waits_for_the_upload_to_be_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_load_in_flight, setup, teardown),
    };
    return cmocka_run_group_tests_name("daemon registry", tests, NULL, NULL);
}
