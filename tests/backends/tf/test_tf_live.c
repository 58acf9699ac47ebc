/* The engine against the REAL TensorFlow C API (tensorflow-cpu's libtensorflow_cc.so.2, found
 * by the engine's default search: scripts/fetch_tf.sh's venv; $BRAID_LIBTENSORFLOW overrides).
 * When no TensorFlow is installed at all it prints a loud SKIPPED line saying why and exits 77
 * (meson's SKIP); a TensorFlow that is found but unusable is a failure, not a skip.
 *
 * What it proves, each value checked against a reference computed here from the op's
 * definition:
 *   - the library is TensorFlow 2.x; a library without the C API is named with its missing
 *     symbol;
 *   - zero copy at the boundary: TF_NewTensor keeps braid's 64-byte-aligned buffer (and copies
 *     a misaligned one), a fed buffer travels through the session to an Identity's output
 *     unchanged in address, and TensorFlow never writes into a fed buffer;
 *   - the fixture's two fallback steps share one real session;
 *   - GraphDefs through the importer: Unique and Cumsum/Abs behind a braid step, with
 *     run-time-shaped outputs, at two input sizes; a TF1 while loop (Enter/Merge/Switch/
 *     LoopCond/NextIteration/Exit) run whole by TensorFlow; the same plan on two threads;
 *   - a TensorFlow error at run time (CheckNumerics on a NaN) comes back as BD_EBACKEND with
 *     TensorFlow's own message, and the next run works;
 *   - a GraphDef TensorFlow rejects fails to plan with BD_EINVAL naming the node and its op;
 *   - an output dtype the importer guessed wrong (Where's int64) is refused at plan time.
 * Usage: test_tf_live FIXTURE_DIR (the encoded tests/backends/tf/fixtures/live_*.pb), or
 * test_tf_live --no-home with HOME empty: the default search still finds the venv. */
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/tf/tf_backend.h"
#include "backends/tf/tfb_probe.h"
#include "backends/tf/tfb_runtime.h"
#include "backends/tf/tfb_session.h"
#include "runtime/model.h"
#include "tests/backends/tf/tf_fixture.h"

static const char *fixture_dir;

static DLTensor f32(float *data, int64_t *shape, int ndim)
{
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = ndim,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    return t;
}

static const tfb_lib *lib(void)
{
    const tfb_lib *l = tfb_runtime_get(NULL, 0);
    assert_non_null(l);
    return l;
}

/* ---- the library ------------------------------------------------------------------------- */

static void test_library_is_tensorflow_2(void **state)
{
    (void)state;
    const char *v = bd_tf_version();
    assert_non_null(v);
    assert_memory_equal(v, "2.", 2);
    printf("TensorFlow %s from %s\n", v, lib()->path);
}

/* libtensorflow_framework.so.2, beside the C API library, exports TF_* symbols but not the C
 * API's: opening it must name the first missing function. */
static void test_library_without_c_api_names_the_symbol(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s", lib()->path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        printf("SKIPPED: the library was found by name (%s), not in a directory\n", dir);
        skip();
    }
    *slash = '\0';
    snprintf(path, sizeof path, "%s/libtensorflow_framework.so.2", dir);
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
        printf("SKIPPED: no libtensorflow_framework.so.2 loaded beside %s\n", lib()->path);
        skip();
    }
    tfb_lib other;
    bd_error err = {0};
    assert_int_equal(tfb_lib_open(path, &other, &err), BD_ENOTFOUND);
    printf("%s\n", err.msg);
    char want[1200];
    snprintf(want, sizeof want, "libtensorflow.so.2 at %s lacks TF_", path);
    assert_non_null(strstr(err.msg, want));
    assert_null(other.handle);
}

/* ---- zero copy --------------------------------------------------------------------------- */

/* TF_NewTensor keeps the caller's buffer when it is aligned to EIGEN_MAX_ALIGN_BYTES and
 * copies it otherwise (then calls the deallocator at once). braid's arena aligns to 64. */
static int deallocs;
static void count_dealloc(void *data, size_t len, void *arg) { (void)data; (void)len; (void)arg; deallocs++; }

static void test_new_tensor_keeps_aligned_buffers(void **state)
{
    (void)state;
    const tfb_lib *l = lib();
    _Alignas(64) static float buf[64 + 16];
    int64_t dims[1] = { 16 };
    int smallest_kept = 0;
    for (int off = 64; off >= 4; off /= 2) {
        float *p = (float *)((char *)buf + off);
        deallocs = 0;
        TF_Tensor *t = l->TF_NewTensor(TF_FLOAT, dims, 1, p, 16 * sizeof(float), count_dealloc, NULL);
        assert_non_null(t);
        bool kept = l->TF_TensorData(t) == p;
        printf("buffer at 64k+%-2d: %s\n", off % 64, kept ? "kept (zero copy)" : "copied by TensorFlow");
        if (kept && (smallest_kept == 0 || off < smallest_kept))
            smallest_kept = off;
        assert_int_equal(deallocs, kept ? 0 : 1);    /* a copy hands the buffer back at once */
        l->TF_DeleteTensor(t);
        assert_int_equal(deallocs, 1);
        if (off == 64)
            assert_true(kept);                       /* braid's alignment: never copied */
        if (off == 4)
            assert_false(kept);                      /* below any Eigen alignment */
    }
    printf("TensorFlow keeps buffers aligned to %d bytes and copies less aligned ones\n", smallest_kept);
}

static void run_fixture(bool check_identity)
{
    fx_graph fx;
    fx_build(&fx);
    bd_node *a_nodes[2] = { fx.n_neg, fx.n_add }, *b_nodes[1] = { fx.n_idn };
    bd_value *a_in[1] = { fx.x }, *a_out[1] = { fx.add }, *b_in[1] = { fx.mid }, *b_out[1] = { fx.idn };
    bd_subgraph a = { fx.g, a_nodes, 2, a_in, 1, a_out, 1, 0, NULL };
    bd_subgraph b = { fx.g, b_nodes, 1, b_in, 1, b_out, 1, 0, NULL };
    bd_kernel *ka = NULL, *kb = NULL;
    bd_kernel_ctx *ca = NULL, *cb = NULL;
    bd_error err = {0};
    if (bd_tf_backend.compile(&a, &ka, &err) || bd_tf_backend.compile(&b, &kb, &err) ||
        bd_tf_backend.ctx_create(ka, &ca, &err) || bd_tf_backend.ctx_create(kb, &cb, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(tfb_session_count(), 1);        /* both steps: one import, one session */
    _Alignas(64) float x[6] = { 1, 2, 3, 4, 5, 60 }, x_before[6], add[6], want_add[6], want_mid[6];
    _Alignas(64) float mid[6];
    memcpy(x_before, x, sizeof x);
    int64_t shape[2] = { 2, 3 }, got[BD_MAX_RANK] = {0};
    fx_expected(x, want_add, want_mid);
    for (int rep = 0; rep < 3; rep++) {
        DLTensor i = f32(x, shape, 2), o = f32(add, shape, 2);
        if (bd_tf_backend.run(ca, &i, 1, &o, 1, &err))
            fail_msg("%s", err.msg);
        assert_memory_equal(add, want_add, sizeof add);
        assert_memory_equal(x, x_before, sizeof x);  /* TensorFlow never writes a fed buffer */
        assert_ptr_equal(tfb_ctx_fed_data(ca, 0), x); /* fed without a copy */
        for (int k = 0; k < 6; k++)
            mid[k] = add[k] > 0 ? add[k] : 0;
        DLTensor i2 = f32(mid, shape, 2), o2 = f32(NULL, got, -1);
        if (bd_tf_backend.run(cb, &i2, 1, &o2, 1, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(o2.ndim, 2);
        assert_int_equal(got[0], 2);
        assert_int_equal(got[1], 3);
        assert_memory_equal(o2.data, want_mid, sizeof want_mid);
        if (check_identity) {
            /* Pointer identity through the real session: Identity's output IS braid's fed
             * buffer. The engine then copies it (a later step may reuse that buffer). */
            assert_ptr_equal(tfb_ctx_fed_data(cb, 0), mid);
            assert_ptr_equal(tfb_ctx_fetched_data(cb, 0), mid);
            assert_ptr_not_equal(o2.data, mid);
        }
    }
    bd_tf_backend.ctx_destroy(ca);
    bd_tf_backend.ctx_destroy(cb);
    bd_tf_backend.release(ka);
    bd_tf_backend.release(kb);
    assert_int_equal(tfb_session_count(), 0);
    bd_graph_destroy(fx.g);
}

static void test_fixture_runs_zero_copy_in_real_tensorflow(void **state)
{
    (void)state;
    run_fixture(true);
}

/* A misaligned input still runs right: TF_NewTensor copies it (see above). */
static void test_misaligned_input_is_copied_and_correct(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    bd_node *a_nodes[2] = { fx.n_neg, fx.n_add };
    bd_value *a_in[1] = { fx.x }, *a_out[1] = { fx.add };
    bd_subgraph a = { fx.g, a_nodes, 2, a_in, 1, a_out, 1, 0, NULL };
    bd_kernel *ka = NULL;
    bd_kernel_ctx *ca = NULL;
    bd_error err = {0};
    if (bd_tf_backend.compile(&a, &ka, &err) || bd_tf_backend.ctx_create(ka, &ca, &err))
        fail_msg("%s", err.msg);
    _Alignas(64) float store[8];
    float *x = store + 1, add[6], want_add[6], want_mid[6];
    const float xv[6] = { -1, 0.5f, 3, 4, -5, 6 };
    memcpy(x, xv, sizeof xv);
    fx_expected(x, want_add, want_mid);
    int64_t shape[2] = { 2, 3 };
    DLTensor i = f32(x, shape, 2), o = f32(add, shape, 2);
    if (bd_tf_backend.run(ca, &i, 1, &o, 1, &err))
        fail_msg("%s", err.msg);
    assert_memory_equal(add, want_add, sizeof add);
    assert_ptr_not_equal(tfb_ctx_fed_data(ca, 0), x);
    bd_tf_backend.ctx_destroy(ca);
    bd_tf_backend.release(ka);
    bd_graph_destroy(fx.g);
}

/* ---- GraphDefs through the importer ----------------------------------------------------- */

static bd_model *open_fixture(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.pb", fixture_dir, name);
    bd_model *m = NULL;
    bd_error err = {0};
    if (bd_model_open(path, NULL, &m, &err))
        fail_msg("%s: %s", path, err.msg);
    return m;
}

static size_t tf_steps(const bd_plan *p)
{
    const bd_partition_report *r = bd_plan_partition(p);
    size_t n = 0;
    for (size_t i = 0; i < r->n_subgraphs; i++)
        n += strcmp(r->subgraphs[i].backend, "tf") == 0;
    return n;
}

static const DLTensor *output(const bd_exec *e, const bd_graph *g, const char *name)
{
    for (size_t i = 0; i < bd_exec_num_outputs(e); i++)
        if (strcmp(bd_graph_output(g, i)->name, name) == 0)
            return bd_exec_output(e, i);
    fail_msg("no output '%s'", name);
    return NULL;
}

/* unique(relu(x)) in order of first appearance, and |exclusive reverse cumsum(relu(x))|. */
static void check_ops(const bd_exec *e, const bd_graph *g, const float *x, int64_t n)
{
    float r[64], uniq[64], acc = 0, a[64];
    int64_t nu = 0;
    for (int64_t i = 0; i < n; i++) {
        r[i] = x[i] > 0 ? x[i] : 0;
        int64_t j = 0;
        while (j < nu && uniq[j] != r[i])
            j++;
        if (j == nu)
            uniq[nu++] = r[i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        a[i] = acc < 0 ? -acc : acc;
        acc += r[i];
    }
    const DLTensor *u = output(e, g, "u"), *ab = output(e, g, "a");
    assert_int_equal(u->ndim, 1);
    assert_int_equal(u->shape[0], nu);
    assert_memory_equal(u->data, uniq, (size_t)nu * sizeof(float));
    assert_int_equal(ab->ndim, 1);
    assert_int_equal(ab->shape[0], n);
    for (int64_t i = 0; i < n; i++)
        assert_float_equal(((const float *)ab->data)[i], a[i], 1e-5);
}

static void run_ops(bd_model *m, const float *x, int64_t n)
{
    int64_t shape[1] = { n };
    DLTensor in = f32((float *)x, shape, 1);
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    bd_error err = {0};
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err))
        fail_msg("%s", err.msg);
    assert_true(tf_steps(p) >= 1);
    for (int rep = 0; rep < 2; rep++) {
        if (bd_exec_run(e, &in, 1, &err))
            fail_msg("%s", err.msg);
        check_ops(e, bd_model_graph(m), x, n);
    }
    bd_exec_destroy(e);
}

static void test_unique_and_cumsum_behind_a_braid_step(void **state)
{
    (void)state;
    bd_model *m = open_fixture("live_ops");
    _Alignas(64) static const float x6[6] = { 1, -2, 3, 0, 3, 5 };
    _Alignas(64) static const float x9[9] = { 2, 2, -1, 7, 0.5f, 7, -3, 2, 0 };
    run_ops(m, x6, 6);
    run_ops(m, x9, 9);          /* another input size: another plan, the same session */
    bd_model_close(m);
    assert_int_equal(tfb_session_count(), 0);
}

typedef struct worker { bd_model *m; const float *x; int64_t n; int runs; int failed; } worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    int64_t shape[1] = { w->n };
    DLTensor in = f32((float *)w->x, shape, 1);
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    bd_error err = {0};
    if (bd_model_plan_acquire(w->m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err)) {
        w->failed = 1;
        bd_plan_release(p);
        return NULL;
    }
    for (int i = 0; i < w->runs && !w->failed; i++) {
        if (bd_exec_run(e, &in, 1, &err)) {
            w->failed = 1;
            break;
        }
        const DLTensor *u = bd_exec_output(e, 0);
        w->failed = u->ndim != 1 || u->shape[0] != 4 || ((const float *)u->data)[3] != 5.0f;
    }
    bd_exec_destroy(e);
    bd_plan_release(p);
    return NULL;
}

/* Two threads, each with its own context, on one plan and so one shared TF session. */
static void test_two_threads_share_the_session(void **state)
{
    (void)state;
    bd_model *m = open_fixture("live_ops");
    _Alignas(64) static const float x6[6] = { 1, -2, 3, 0, 3, 5 };
    worker w[2] = { { m, x6, 6, 200, 0 }, { m, x6, 6, 200, 0 } };
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, run_worker, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(w[0].failed, 0);
    assert_int_equal(w[1].failed, 0);
    assert_int_equal(bd_graph_output(bd_model_graph(m), 0)->name[0], 'u');
    bd_model_close(m);
}

static void run_loop(bd_model *m, int32_t n)
{
    _Alignas(64) float x[3] = { 1, 2, 3 };
    _Alignas(64) int32_t nv = n;
    int64_t s3[1] = { 3 };
    DLTensor in[2] = { f32(x, s3, 1),
                       { .data = &nv, .device = { kDLCPU, 0 }, .ndim = 0, .dtype = { kDLInt, 32, 1 } } };
    const bd_graph *g = bd_model_graph(m);
    if (strcmp(bd_graph_input(g, 0)->name, "x") != 0) {     /* signature order */
        DLTensor t = in[0];
        in[0] = in[1];
        in[1] = t;
    }
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    bd_error err = {0};
    if (bd_model_plan(m, in, 2, &p, &err) || bd_exec_create(p, &e, &err) || bd_exec_run(e, in, 2, &err))
        fail_msg("%s", err.msg);
    assert_true(tf_steps(p) >= 1);
    const DLTensor *sum = output(e, g, "sum"), *count = output(e, g, "count");
    int32_t k = n > 0 ? n : 0;
    float tri = (float)k * (float)(k - 1) / 2;
    assert_int_equal(*(const int32_t *)count->data, k);
    for (int i = 0; i < 3; i++)
        assert_float_equal(((const float *)sum->data)[i], x[i] * tri, 1e-4);
    bd_exec_destroy(e);
}

static void test_while_loop_runs_whole_in_tensorflow(void **state)
{
    (void)state;
    bd_model *m = open_fixture("live_loop");
    run_loop(m, 4);
    run_loop(m, 0);
    run_loop(m, 17);
    bd_model_close(m);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_run_time_error_carries_tensorflows_message(void **state)
{
    (void)state;
    bd_model *m = open_fixture("live_check");
    _Alignas(64) float x[4] = { 1, 0.0f / 0.0f, 3, 4 };
    int64_t s4[1] = { 4 };
    DLTensor in = f32(x, s4, 1);
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    bd_error err = {0};
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err))
        fail_msg("%s", err.msg);
    int rc = bd_exec_run(e, &in, 1, &err);
    printf("run error: %s\n", err.msg);
    assert_int_equal(rc, BD_EBACKEND);          /* braidd answers INTERNAL (daemon/grpc/status_map.c) */
    assert_non_null(strstr(err.msg, "braid-live-check : Tensor had NaN values"));
    assert_non_null(strstr(err.msg, "step from 'z'"));
    x[1] = 2;                                   /* the context still works after an error */
    err = (bd_error){0};
    if (bd_exec_run(e, &in, 1, &err))
        fail_msg("%s", err.msg);
    assert_memory_equal(bd_exec_output(e, 0)->data, x, sizeof x);
    bd_exec_destroy(e);
    bd_model_close(m);
}

static void test_graphdef_tensorflow_rejects_names_the_node(void **state)
{
    (void)state;
    bd_model *m = open_fixture("live_rejected");
    _Alignas(64) float x[4] = { 1, 2, 3, 4 };
    int64_t s4[1] = { 4 };
    DLTensor in = f32(x, s4, 1);
    const bd_plan *p = NULL;
    bd_error err = {0};
    int rc = bd_model_plan(m, &in, 1, &p, &err);
    printf("load error: %s\n", err.msg);
    assert_int_equal(rc, BD_EINVAL);
    assert_non_null(strstr(err.msg, "TensorFlow rejects node 'bogus' (BraidNoSuchOp)"));
    assert_non_null(strstr(err.msg, "Op type not registered 'BraidNoSuchOp'"));
    bd_model_close(m);
    assert_int_equal(tfb_session_count(), 0);
}

/* Run with HOME empty (as a service under systemd may be): the default search must still find
 * the venv, under the user's home directory from the password database. */
static int check_lookup_without_home(void)
{
    const char *home = getenv("HOME");
    if (home && home[0]) {
        fprintf(stderr, "tf_live --no-home: run me with HOME empty\n");
        return 2;
    }
    struct passwd *pw = getpwuid(geteuid());
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/.cache/braid/tf-venv/lib/python3.*/site-packages/"
             "tensorflow/libtensorflow_cc.so.2", pw ? pw->pw_dir : "/nonexistent");
    glob_t gl;
    bool there = glob(pattern, 0, NULL, &gl) == 0;
    if (there)
        globfree(&gl);
    if (!there || getenv("BRAID_LIBTENSORFLOW") || getenv("BRAID_TF_VENV")) {
        printf("SKIPPED: tf_live --no-home: no TensorFlow venv under this user's home directory "
               "(%s), or the search is overridden\n", pw ? pw->pw_dir : "no password entry");
        return 77;
    }
    char why[1024] = "";
    if (!bd_tf_available(why, sizeof why)) {
        fprintf(stderr, "tf_live --no-home: HOME unset and the venv under %s was not found: %s\n",
                pw->pw_dir, why);
        return 1;
    }
    printf("HOME unset: found TensorFlow %s at %s\n", bd_tf_version(), lib()->path);
    return strncmp(lib()->path, pw->pw_dir, strlen(pw->pw_dir)) == 0 ? 0 : 1;
}

/* Where's output is int64 whatever its T: the importer's float guess is caught at plan time. */
static void test_wrong_dtype_guess_is_refused_at_plan(void **state)
{
    (void)state;
    bd_model *m = open_fixture("live_where");
    _Alignas(64) float x[4] = { 1, 0, 3, 0 };
    int64_t s4[1] = { 4 };
    DLTensor in = f32(x, s4, 1);
    const bd_plan *p = NULL;
    bd_error err = {0};
    int rc = bd_model_plan(m, &in, 1, &p, &err);
    printf("plan error: %s\n", err.msg);
    if (rc == 0) {      /* the importer learnt Where's dtype: then it must run right */
        bd_exec *e = NULL;
        if (bd_exec_create(p, &e, &err) || bd_exec_run(e, &in, 1, &err))
            fail_msg("%s", err.msg);
        const DLTensor *w = bd_exec_output(e, 0);
        assert_int_equal(w->dtype.code, kDLInt);
        assert_int_equal(w->dtype.bits, 64);
        assert_int_equal(w->shape[0], 2);
        assert_int_equal(((const int64_t *)w->data)[0], 0);
        assert_int_equal(((const int64_t *)w->data)[1], 2);
        bd_exec_destroy(e);
    } else {
        assert_int_equal(rc, BD_EUNSUPPORTED);
        assert_non_null(strstr(err.msg, "output 'w' (op 'w'): TensorFlow gives INT64"));
        assert_non_null(strstr(err.msg, "assumed FP32"));
    }
    bd_model_close(m);
    assert_int_equal(tfb_session_count(), 0);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--no-home") == 0)
        return check_lookup_without_home();
    if (argc != 2) {
        fprintf(stderr, "usage: test_tf_live FIXTURE_DIR | --no-home\n");
        return 2;
    }
    fixture_dir = argv[1];
    char why[1024];
    if (!bd_tf_available(why, sizeof why)) {
        /* SKIP only when no TensorFlow is there at all; a broken one is a failure. */
        if (strstr(why, " not found")) {
            printf("\n************************************************************************\n"
                   "SKIPPED: tf_live: NO TENSORFLOW INSTALLED, the live TensorFlow engine is NOT "
                   "tested.\n  %s\n  Install it with scripts/fetch_tf.sh (tensorflow-cpu 2.21.0 "
                   "into ~/.cache/braid/tf-venv).\n"
                   "************************************************************************\n", why);
            return 77;
        }
        fprintf(stderr, "tf_live: TensorFlow is there but unusable: %s\n", why);
        return 1;
    }
    printf("live TensorFlow %s (%s)\n", bd_tf_version(), lib()->path);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_is_tensorflow_2),
        cmocka_unit_test(test_library_without_c_api_names_the_symbol),
        cmocka_unit_test(test_new_tensor_keeps_aligned_buffers),
        cmocka_unit_test(test_fixture_runs_zero_copy_in_real_tensorflow),
        cmocka_unit_test(test_misaligned_input_is_copied_and_correct),
        cmocka_unit_test(test_unique_and_cumsum_behind_a_braid_step),
        cmocka_unit_test(test_two_threads_share_the_session),
        cmocka_unit_test(test_while_loop_runs_whole_in_tensorflow),
        cmocka_unit_test(test_run_time_error_carries_tensorflows_message),
        cmocka_unit_test(test_graphdef_tensorflow_rejects_names_the_node),
        cmocka_unit_test(test_wrong_dtype_guess_is_refused_at_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
