/* A model's weights are held once (runtime/weights.h): after a compile, the model file's bytes
 * of the weights oneDNN copied are given back; a second plan reads them back from the file;
 * a weight a run reads in place (a native Gather's table) is never given back; and a model
 * file changed on disk makes the next compile fail with a clear error instead of computing
 * with other weights.
 *
 * The model is built by hand: y = (x @ W) + Gather(E, idx), W [256, 1024] and E [1024, 256]
 * FP32 (1 MiB each) in one buffer that the graph adopts as "the model file", written to a
 * temporary file first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/model.h"
#include "tests/lib/tl_graph.h"

#define K   256
#define N   1024
#define ROWS 1024

typedef struct fixture {
    char      path[64];
    float    *file;          /* W then E, as written to PATH */
    size_t    bytes;
    bd_model *model;
} fixture;

static float w_at(size_t i) { return (float)((i * 7919u) % 97) / 97.0f - 0.5f; }
static float e_at(size_t i) { return (float)((i * 104729u) % 89) / 89.0f; }

/* The graph: x [B, K] input, idx [B] INT64 input, W and E initializers in BUF. */
static bd_graph *build(float *buf, size_t bytes, const char *path)
{
    bd_graph *g = bd_graph_create("weights");
    bd_graph_set_opset(g, 13);
    assert_int_equal(bd_graph_adopt_buffer(g, buf), 0);
    assert_int_equal(bd_graph_buffer_source(g, buf, bytes, path, 0), 0);
    bd_value *x = tl_input(g, "x", BD_DT_FLOAT, TL_DIMS(-1, K));
    bd_value *idx = tl_input(g, "idx", BD_DT_INT64, TL_DIMS(-1));
    bd_value *w = tl_value(g, "W", BD_DT_FLOAT, TL_DIMS(K, N));
    bd_value *e = tl_value(g, "E", BD_DT_FLOAT, TL_DIMS(ROWS, N));
    w->data = buf;
    w->nbytes = (size_t)K * N * sizeof(float);
    e->data = buf + (size_t)K * N;
    e->nbytes = (size_t)ROWS * N * sizeof(float);
    bd_value *mm = tl_value(g, "mm", BD_DT_FLOAT, TL_DIMS(-1, N));
    bd_value *rows = tl_value(g, "rows", BD_DT_FLOAT, TL_DIMS(-1, N));
    bd_value *y = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(-1, N));
    tl_op(g, "mm", "MatMul", (bd_value *[]){ x, w }, 2, mm);
    tl_op(g, "gather", "Gather", (bd_value *[]){ e, idx }, 2, rows);
    tl_op(g, "add", "Add", (bd_value *[]){ mm, rows }, 2, y);
    tl_output(g, y);
    return g;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->bytes = ((size_t)K * N + (size_t)ROWS * N) * sizeof(float);
    f->file = malloc(f->bytes);
    for (size_t i = 0; i < (size_t)K * N; i++)
        f->file[i] = w_at(i);
    for (size_t i = 0; i < (size_t)ROWS * N; i++)
        f->file[(size_t)K * N + i] = e_at(i);
    snprintf(f->path, sizeof f->path, "/tmp/braid-test-weights-XXXXXX");
    int fd = mkstemp(f->path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f->file, f->bytes), (ssize_t)f->bytes);
    close(fd);
    float *buf = malloc(f->bytes);               /* the graph's own copy, as an importer makes */
    memcpy(buf, f->file, f->bytes);
    bd_error err = { 0 };
    bd_model_options o = { .engine = "dnnl,native", .threads = 1 };
    if (bd_model_from_graph(build(buf, f->bytes, f->path), &o, &f->model, &err))
        fail_msg("open: %s", err.msg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    bd_model_close(f->model);
    unlink(f->path);
    free(f->file);
    free(f);
    return 0;
}

/* Plan and run batch B; check every output against the file's weights. */
static int run_batch(fixture *f, int64_t b, bd_error *err)
{
    float *x = malloc((size_t)b * K * sizeof *x), *want = malloc((size_t)b * N * sizeof *want);
    int64_t *idx = malloc((size_t)b * sizeof *idx);
    for (int64_t r = 0; r < b; r++) {
        idx[r] = (r * 37) % ROWS;
        for (int k = 0; k < K; k++)
            x[r * K + k] = (float)((r + k) % 5) - 2.0f;
    }
    for (int64_t r = 0; r < b; r++)
        for (int n = 0; n < N; n++) {
            double acc = f->file[(size_t)K * N + (size_t)idx[r] * N + (size_t)n];
            for (int k = 0; k < K; k++)
                acc += (double)x[r * K + k] * f->file[(size_t)k * N + (size_t)n];
            want[r * N + n] = (float)acc;
        }
    int64_t xs[2] = { b, K }, is[1] = { b };
    DLTensor in[2] = {
        { .data = x, .device = { kDLCPU, 0 }, .ndim = 2, .shape = xs, .dtype = { kDLFloat, 32, 1 } },
        { .data = idx, .device = { kDLCPU, 0 }, .ndim = 1, .shape = is, .dtype = { kDLInt, 64, 1 } },
    };
    const bd_plan *p;
    bd_exec *e = NULL;
    int rc = bd_model_plan(f->model, in, 2, &p, err);
    if (rc == 0)
        rc = bd_exec_create(p, &e, err);
    if (rc == 0)
        rc = bd_exec_run(e, in, 2, err);
    if (rc == 0) {
        const float *y = bd_exec_output(e, 0)->data;
        for (int64_t i = 0; i < b * N; i++)
            if (y[i] < want[i] - 1e-3f || y[i] > want[i] + 1e-3f)
                fail_msg("batch %lld: y[%lld] = %g, want %g", (long long)b, (long long)i, y[i], want[i]);
    }
    bd_exec_destroy(e);
    free(x);
    free(want);
    free(idx);
    return rc;
}

static size_t released(fixture *f)
{
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(f->model, &st);
    return st.weights_released;
}

static void test_weights_given_back_and_read_back(void **state)
{
    fixture *f = *state;
    bd_error err = { 0 };
    assert_int_equal(released(f), 0);
    assert_int_equal(run_batch(f, 2, &err), 0);
    size_t first = released(f);
    print_message("after the first plan: %zu bytes given back\n", first);
    /* W's pages, not E's: the Gather reads E in place at every run */
    assert_true(first >= (size_t)K * N * sizeof(float) - 8192);
    assert_true(first <= (size_t)K * N * sizeof(float));
    assert_int_equal(run_batch(f, 2, &err), 0);          /* cached plan: nothing read back */
    assert_int_equal(run_batch(f, 3, &err), 0);          /* a new plan: W read back, right values */
    assert_int_equal(released(f), first);                /* and given back again */
}

static void test_changed_file_fails_the_next_compile(void **state)
{
    fixture *f = *state;
    bd_error err = { 0 };
    assert_int_equal(run_batch(f, 1, &err), 0);
    FILE *fp = fopen(f->path, "r+b");                    /* one weight of W changes on disk */
    assert_non_null(fp);
    float bad = 1234.5f;
    assert_int_equal(fseek(fp, 4096 * 3 + 8, SEEK_SET), 0);
    assert_int_equal(fwrite(&bad, sizeof bad, 1, fp), 1);
    fclose(fp);
    int rc = run_batch(f, 4, &err);
    print_message("compile after the change: %s: %s\n", bd_status_name(rc), err.msg);
    assert_int_equal(rc, BD_EIO);
    assert_non_null(strstr(err.msg, "changed on disk"));
    assert_non_null(strstr(err.msg, f->path));
    assert_int_equal(run_batch(f, 1, &err), 0);          /* the cached plan still serves */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_weights_given_back_and_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_file_fails_the_next_compile, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
