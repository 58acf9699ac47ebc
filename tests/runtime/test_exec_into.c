/* bd_exec_run_into (runtime/plan.h): graph outputs written straight into caller memory when
 * the contract allows it, and into the arena (the caller copies) whenever it does not:
 * misaligned, too small, overlapping an input or another output, a run-time shape, read by a
 * node (caller memory may be a client's shared region: no kernel reads it). Each case
 * checks the values against a reference computed here, and that memory not taken was not
 * written. The ONNX conformance suite runs every one of its cases through run_into too
 * (tests/conformance/cf_braid.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/ort/ort_backend.h"
#include "runtime/model.h"
#include "tests/lib/tl_graph.h"

#define ROWS 2
#define COLS 16
#define N (ROWS * COLS)
#define POISON 0xa5

/* x[2,16] -> Relu -> a (an output, and read by the next step) -> ArgMax(axis 0) -> y[1,16]
 * int64 (an output). Relu runs on oneDNN, ArgMax (no oneDNN primitive) on the native engine:
 * A crosses between them. */
static bd_model *open_model(const char *engine)
{
    bd_graph *g = bd_graph_create("two_outputs");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { ROWS, COLS };
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 2, d), *a = tl_value(g, "a", BD_DT_FLOAT, 2, d),
             *y = tl_value(g, "y", BD_DT_INT64, 2, (int64_t[]){ 1, COLS });
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, a, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "relu", "Relu", &x, 1, a);
    tl_op(g, "argmax", "ArgMax", &a, 1, y);
    bd_model_options o = { .engine = engine, .min_dnnl_region_flops = -1 };
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("open: %s", err.msg);
    return m;
}

static void reference(const float *x, float *a, int64_t *y)
{
    for (int i = 0; i < N; i++)
        a[i] = fmaxf(x[i], 0);
    for (int c = 0; c < COLS; c++) {
        y[c] = 0;                               /* the first maximum, as ONNX's default */
        for (int r = 1; r < ROWS; r++)
            if (a[r * COLS + c] > a[y[c] * COLS + c])
                y[c] = r;
    }
}

typedef struct fixture {
    bd_model      *model;
    const bd_plan *plan;
    bd_exec       *exec;
    float         *x;                 /* inside BUF, so a destination can overlap it */
    int64_t        shape[2];
    DLTensor       in;
    unsigned char *buf;               /* 64-aligned: x at 0, then room for destinations */
    float          want_a[N];
    int64_t        want_y[COLS];
} fixture;

#define BUF_BYTES 4096
#define OFF_A 512                     /* aligned destinations within BUF */
#define OFF_Y 1024

static void setup(fixture *f, const char *engine)
{
    memset(f, 0, sizeof *f);
    f->buf = aligned_alloc(64, BUF_BYTES);
    assert_non_null(f->buf);
    memset(f->buf, POISON, BUF_BYTES);
    f->x = (float *)f->buf;
    for (int i = 0; i < N; i++)
        f->x[i] = (float)((i * 7) % 11) - 5;
    reference(f->x, f->want_a, f->want_y);
    f->shape[0] = ROWS;
    f->shape[1] = COLS;
    f->in = (DLTensor){ .data = f->x, .device = { kDLCPU, 0 }, .ndim = 2, .shape = f->shape,
                        .dtype = { kDLFloat, 32, 1 } };
    f->model = open_model(engine);
    bd_error err = { 0 };
    if (bd_model_plan_acquire(f->model, &f->in, 1, &f->plan, &err) || bd_exec_create(f->plan, &f->exec, &err))
        fail_msg("plan: %s", err.msg);
}

static void teardown(fixture *f)
{
    bd_exec_destroy(f->exec);
    bd_plan_release(f->plan);
    bd_model_close(f->model);
    free(f->buf);
}

static void expect_a(const float *got, const float *want)
{
    for (int i = 0; i < N; i++)
        assert_float_equal(got[i], want[i], 0);
}

static void expect_y(const int64_t *got, const int64_t *want)
{
    for (int c = 0; c < COLS; c++)
        assert_int_equal(got[c], want[c]);
}

static bool untouched(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != POISON)
            return false;
    return true;
}

/* y in caller memory; a (read by ArgMax) never: a node must not read memory a client can
 * rewrite. Then a plain run goes back to the arena, intact. */
static void outputs_land_in_caller_memory(const char *engine, size_t steps)
{
    fixture f;
    setup(&f, engine);
    assert_int_equal(bd_plan_num_steps(f.plan), steps);
    bd_error err = { 0 };
    bd_exec_dest dest[2] = { { f.buf + OFF_A, N * sizeof(float) }, { f.buf + OFF_Y, COLS * sizeof(int64_t) } };
    for (int round = 0; round < 2; round++) {
        memset(f.buf + OFF_A, POISON, BUF_BYTES - OFF_A);
        if (bd_exec_run_into(f.exec, &f.in, 1, dest, 2, &err))
            fail_msg("run_into: %s", err.msg);
        assert_ptr_not_equal(bd_exec_output(f.exec, 0)->data, dest[0].data);
        assert_true(untouched(dest[0].data, N * sizeof(float)));
        assert_ptr_equal(bd_exec_output(f.exec, 1)->data, dest[1].data);
        expect_a(bd_exec_output(f.exec, 0)->data, f.want_a);
        expect_y(dest[1].data, f.want_y);

        memset(f.buf + OFF_A, POISON, BUF_BYTES - OFF_A);
        if (bd_exec_run(f.exec, &f.in, 1, &err))
            fail_msg("run: %s", err.msg);
        assert_ptr_not_equal(bd_exec_output(f.exec, 0)->data, dest[0].data);
        assert_ptr_not_equal(bd_exec_output(f.exec, 1)->data, dest[1].data);
        expect_a(bd_exec_output(f.exec, 0)->data, f.want_a);
        expect_y(bd_exec_output(f.exec, 1)->data, f.want_y);
        assert_true(untouched(f.buf + OFF_A, BUF_BYTES - OFF_A));
    }
    teardown(&f);
}

static void test_into_across_dnnl_and_native(void **state)
{
    (void)state;
    outputs_land_in_caller_memory(NULL, 2);
}

static void test_into_on_onnxruntime(void **state)
{
    (void)state;
    char why[256];
    if (!bd_ort_available(why, sizeof why)) {
        printf("    (skipped: %s)\n", why);
        skip();
    }
    outputs_land_in_caller_memory("ort", 1);
}

/* Output y offered DEST; a stays in the arena (not offered). Y must stay in the arena and
 * DEST must be left alone. */
static void expect_declined(fixture *f, bd_exec_dest dest, const unsigned char *watch, size_t watch_n)
{
    bd_error err = { 0 };
    bd_exec_dest both[2] = { { NULL, 0 }, dest };
    if (bd_exec_run_into(f->exec, &f->in, 1, both, 2, &err))
        fail_msg("run_into: %s", err.msg);
    assert_ptr_not_equal(bd_exec_output(f->exec, 1)->data, dest.data);
    expect_a(bd_exec_output(f->exec, 0)->data, f->want_a);
    expect_y(bd_exec_output(f->exec, 1)->data, f->want_y);
    if (watch)
        assert_true(untouched(watch, watch_n));
}

static void test_declined_when_the_contract_does_not_hold(void **state)
{
    (void)state;
    fixture f;
    setup(&f, NULL);
    size_t bytes = COLS * sizeof(int64_t);     /* y's */
    /* misaligned */
    expect_declined(&f, (bd_exec_dest){ f.buf + OFF_Y + 4, bytes }, f.buf + OFF_Y, BUF_BYTES - OFF_Y);
    /* one byte too small */
    expect_declined(&f, (bd_exec_dest){ f.buf + OFF_Y, bytes - 1 }, f.buf + OFF_Y, BUF_BYTES - OFF_Y);
    /* overlapping the input x (x's own bytes must stay x) */
    expect_declined(&f, (bd_exec_dest){ f.buf + 64, bytes }, NULL, 0);
    for (int i = 0; i < N; i++)
        assert_float_equal(f.x[i], (float)((i * 7) % 11) - 5, 0);

    /* a, which ArgMax reads, is declined even where it fits */
    bd_error err = { 0 };
    bd_exec_dest both[2] = { { f.buf + OFF_A, N * sizeof(float) }, { NULL, 0 } };
    memset(f.buf + OFF_A, POISON, BUF_BYTES - OFF_A);
    if (bd_exec_run_into(f.exec, &f.in, 1, both, 2, &err))
        fail_msg("run_into: %s", err.msg);
    assert_ptr_not_equal(bd_exec_output(f.exec, 0)->data, both[0].data);
    assert_true(untouched(f.buf + OFF_A, BUF_BYTES - OFF_A));
    expect_a(bd_exec_output(f.exec, 0)->data, f.want_a);
    expect_y(bd_exec_output(f.exec, 1)->data, f.want_y);

    /* more destinations than outputs */
    bd_exec_dest three[3] = { { 0 } };
    assert_int_equal(bd_exec_run_into(f.exec, &f.in, 1, three, 3, &err), BD_EINVAL);
    teardown(&f);
}

/* A data-dependent output (NonZero) keeps the backend's memory: the destination is unused. */
static void test_declined_for_a_runtime_shape(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("nonzero");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { 2, 3 };
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 2, d);
    bd_shape unknown = { .rank = -1 };
    bd_value *idx;
    assert_int_equal(bd_graph_add_value(g, "idx", BD_DT_INT64, &unknown, &idx, NULL), 0);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, idx, NULL);
    tl_op(g, "nz", "NonZero", &x, 1, idx);
    bd_model *m;
    bd_error err = { 0 };
    bd_model_options o = { .engine = "dnnl,native" };
    assert_int_equal(bd_model_from_graph(g, &o, &m, &err), 0);
    float xv[6] = { 1, 0, 0, 3, 4, 0 };
    int64_t xs[] = { 2, 3 };
    DLTensor in = { .data = xv, .device = { kDLCPU, 0 }, .ndim = 2, .shape = xs,
                    .dtype = { kDLFloat, 32, 1 } };
    const bd_plan *p;
    bd_exec *e;
    if (bd_model_plan_acquire(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err))
        fail_msg("plan: %s", err.msg);
    _Alignas(64) unsigned char buf[256];
    memset(buf, POISON, sizeof buf);
    bd_exec_dest dest = { buf, sizeof buf };
    if (bd_exec_run_into(e, &in, 1, &dest, 1, &err))
        fail_msg("run_into: %s", err.msg);
    const DLTensor *y = bd_exec_output(e, 0);
    assert_ptr_not_equal(y->data, buf);
    assert_int_equal(y->shape[1], 3);
    const int64_t want[6] = { 0, 1, 1, 0, 0, 1 };
    for (int i = 0; i < 6; i++)
        assert_int_equal(((const int64_t *)y->data)[i], want[i]);
    assert_true(untouched(buf, sizeof buf));
    bd_exec_destroy(e);
    bd_plan_release(p);
    bd_model_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_into_across_dnnl_and_native),
        cmocka_unit_test(test_into_on_onnxruntime),
        cmocka_unit_test(test_declined_when_the_contract_does_not_hold),
        cmocka_unit_test(test_declined_for_a_runtime_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
