/* Regions of run-time shapes (runtime/dynamic_region.c) through the real engine table: the
 * nodes after a NonZero run on braid's engine "dynamic", never on a framework, and their
 * shapes follow the data at every run of one execution context. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/model.h"
#include "tests/lib/tl_graph.h"

/* y = Transpose(NonZero(Relu(x))) + 10: [?, 2] int64, the row and column of each positive x. */
static bd_model *nonzero_tail(const char *engine)
{
    bd_graph *g = bd_graph_create("nonzero_tail");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { 2, 3 }, dyn2[] = { 2, -1 }, dyn[] = { -1, 2 }, one[] = { 1 };
    int64_t ten = 10;
    bd_value *x = tl_input(g, "x", BD_DT_FLOAT, 2, d), *r = tl_value(g, "r", BD_DT_FLOAT, 2, d);
    bd_value *idx = tl_value(g, "idx", BD_DT_INT64, 2, dyn2);
    bd_value *t = tl_value(g, "t", BD_DT_INT64, 2, dyn), *y = tl_value(g, "y", BD_DT_INT64, 2, dyn);
    bd_value *c = tl_const(g, "ten", BD_DT_INT64, 1, one, &ten);
    tl_output(g, y);
    tl_op(g, "relu", "Relu", &x, 1, r);
    tl_op(g, "nz", "NonZero", &r, 1, idx);
    tl_op(g, "tr", "Transpose", &idx, 1, t);
    bd_value *add_in[2] = { t, c };
    tl_op(g, "add", "Add", add_in, 2, y);
    bd_model *m;
    bd_error err = { 0 };
    bd_model_options o = { .min_dnnl_region_flops = -1, .engine = engine };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("model: %s", err.msg);
    return m;
}

static void test_region_shapes_follow_every_run(void **state)
{
    (void)state;
    bd_model *m = nonzero_tail("dnnl,native");
    float xv[6] = { 1, -2, 0, 3, 4, -1 };
    int64_t xs[] = { 2, 3 };
    DLTensor in = { .data = xv, .device = { kDLCPU, 0 }, .ndim = 2, .shape = xs,
                    .dtype = { kDLFloat, 32, 1 } };
    const bd_plan *p;
    bd_error err = { 0 };
    if (bd_model_plan(m, &in, 1, &p, &err))
        fail_msg("plan: %s", err.msg);
    const bd_partition_report *rep = bd_plan_partition(p);
    bool dynamic = false;
    for (size_t i = 0; i < rep->n_subgraphs; i++) {
        assert_string_not_equal(rep->subgraphs[i].backend, "ort");
        dynamic |= strcmp(rep->subgraphs[i].backend, "dynamic") == 0;
    }
    assert_true(dynamic);
    bd_exec *e[2];
    assert_int_equal(bd_exec_create(p, &e[0], &err), 0);
    assert_int_equal(bd_exec_create(p, &e[1], &err), 0);
    /* positives at (0,0) (1,0) (1,1); then x[1,1] negative: two; then all six; then none;
     * two contexts on one plan, interleaved */
    for (int round = 0; round < 8; round++) {
        int which = round / 4;
        int r = round % 4;
        float vals[4][6] = { { 1, -2, 0, 3, 4, -1 }, { 1, -2, 0, 3, -4, -1 },
                             { 1, 2, 3, 4, 5, 6 }, { -1, -1, -1, 0, 0, 0 } };
        memcpy(xv, vals[r], sizeof xv);
        if (bd_exec_run(e[which], &in, 1, &err))
            fail_msg("run %d: %s", round, err.msg);
        const DLTensor *y = bd_exec_output(e[which], 0);
        int64_t want[6][2], n = 0;
        for (int i = 0; i < 6; i++)
            if (vals[r][i] > 0)
                want[n][0] = i / 3 + 10, want[n][1] = i % 3 + 10, n++;
        assert_int_equal(y->ndim, 2);
        assert_int_equal(y->shape[0], n);
        assert_int_equal(y->shape[1], 2);
        const int64_t *v = y->data;
        for (int64_t i = 0; i < n; i++) {
            assert_int_equal(v[2 * i], want[i][0]);
            assert_int_equal(v[2 * i + 1], want[i][1]);
        }
    }
    bd_exec_destroy(e[0]);
    bd_exec_destroy(e[1]);
    bd_model_close(m);
}

/* Two threads, each with its own context on one plan, 500 runs each with shapes changing
 * every run: the region's plans and slots are per context, so each run's output is its own. */
typedef struct worker {
    const bd_plan *plan;
    int            seed;
    int            bad;      /* runs whose output was wrong */
    char           msg[BD_ERROR_MSG_MAX + 32];
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    bd_exec *e;
    bd_error err = { 0 };
    if (bd_exec_create(w->plan, &e, &err)) {
        snprintf(w->msg, sizeof w->msg, "exec: %s", err.msg);
        w->bad = -1;
        return NULL;
    }
    float xv[6];
    int64_t xs[] = { 2, 3 };
    DLTensor in = { .data = xv, .device = { kDLCPU, 0 }, .ndim = 2, .shape = xs,
                    .dtype = { kDLFloat, 32, 1 } };
    unsigned r = (unsigned)w->seed;
    for (int run = 0; run < 500; run++) {
        int64_t want = 0;
        for (int i = 0; i < 6; i++) {
            r = r * 1103515245u + 12345u;
            xv[i] = (r >> 16) & 1 ? 1.0f + (float)i : -1.0f;
            want += xv[i] > 0;
        }
        if (bd_exec_run(e, &in, 1, &err)) {
            snprintf(w->msg, sizeof w->msg, "run %d: %s", run, err.msg);
            w->bad++;
            continue;
        }
        const DLTensor *y = bd_exec_output(e, 0);
        const int64_t *v = y->data;
        bool ok = y->ndim == 2 && y->shape[0] == want;
        for (int64_t i = 0, k = 0; ok && i < 6; i++)
            if (xv[i] > 0) {
                ok = v[2 * k] == i / 3 + 10 && v[2 * k + 1] == i % 3 + 10;
                k++;
            }
        w->bad += !ok;
    }
    bd_exec_destroy(e);
    return NULL;
}

static void test_region_contexts_run_in_parallel(void **state)
{
    (void)state;
    bd_model *m = nonzero_tail("dnnl,native");
    float xv[6] = { 1, 1, 1, 1, 1, 1 };
    int64_t xs[] = { 2, 3 };
    DLTensor in = { .data = xv, .device = { kDLCPU, 0 }, .ndim = 2, .shape = xs,
                    .dtype = { kDLFloat, 32, 1 } };
    const bd_plan *p;
    bd_error err = { 0 };
    if (bd_model_plan(m, &in, 1, &p, &err))
        fail_msg("plan: %s", err.msg);
    worker w[2] = { { .plan = p, .seed = 1 }, { .plan = p, .seed = 2 } };
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        if (w[i].bad)
            fail_msg("thread %d: %d bad run(s) %s", i, w[i].bad, w[i].msg);
    bd_model_close(m);
}

/* "native" alone allows the region (braid's own execution): its plans stay on native. */
static void test_region_runs_with_native_alone(void **state)
{
    (void)state;
    bd_model *m = nonzero_tail("native");
    float xv[6] = { 1, -2, 0, 3, 4, -1 };
    int64_t xs[] = { 2, 3 };
    DLTensor in = { .data = xv, .device = { kDLCPU, 0 }, .ndim = 2, .shape = xs,
                    .dtype = { kDLFloat, 32, 1 } };
    const bd_plan *p;
    bd_error err = { 0 };
    if (bd_model_plan(m, &in, 1, &p, &err))
        fail_msg("plan: %s", err.msg);
    bd_exec *e;
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    assert_int_equal(bd_exec_run(e, &in, 1, &err), 0);
    assert_int_equal(bd_exec_output(e, 0)->shape[0], 3);
    bd_exec_destroy(e);
    bd_model_close(m);
}

/* y = Unsqueeze(q, 1) x Unsqueeze(q, 0) for q = Compress(x, mask): the outer product of a
 * vector whose length only the run tells. 2^20 kept elements make it 4 TiB: refused when the
 * region's plan is built (max_run_memory_bytes), before anything is allocated. */
static void test_region_plan_over_memory_limit_is_refused(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    bd_graph *g = bd_graph_create("outer");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { N }, dyn[] = { -1 }, col[] = { -1, 1 }, row[] = { 1, -1 }, sq[] = { -1, -1 };
    int64_t one = 1, zero = 0, ax[] = { 1 };
    bd_value *x = tl_input(g, "x", BD_DT_FLOAT, 1, d), *mask = tl_input(g, "mask", BD_DT_BOOL, 1, d);
    bd_value *q = tl_value(g, "q", BD_DT_FLOAT, 1, dyn), *qc = tl_value(g, "qc", BD_DT_FLOAT, 2, col);
    bd_value *qr = tl_value(g, "qr", BD_DT_FLOAT, 2, row), *y = tl_value(g, "y", BD_DT_FLOAT, 2, sq);
    bd_value *a1 = tl_const(g, "a1", BD_DT_INT64, 1, ax, &one);
    bd_value *a0 = tl_const(g, "a0", BD_DT_INT64, 1, ax, &zero);
    tl_output(g, y);
    bd_value *cin[2] = { x, mask }, *u1[2] = { q, a1 }, *u0[2] = { q, a0 }, *mm[2] = { qc, qr };
    tl_attr_int(g, tl_op(g, "compress", "Compress", cin, 2, q), "axis", 0);
    tl_op(g, "col", "Unsqueeze", u1, 2, qc);
    tl_op(g, "row", "Unsqueeze", u0, 2, qr);
    tl_op(g, "outer", "MatMul", mm, 2, y);
    bd_model *m;
    bd_error err = { 0 };
    bd_model_options o = { .engine = "dnnl,native", .max_run_memory_bytes = (size_t)1 << 30 };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("model: %s", err.msg);
    static float xv[N];
    static uint8_t mv[N];
    int64_t xs[] = { N };
    DLTensor in[2] = {
        { .data = xv, .device = { kDLCPU, 0 }, .ndim = 1, .shape = xs, .dtype = { kDLFloat, 32, 1 } },
        { .data = mv, .device = { kDLCPU, 0 }, .ndim = 1, .shape = xs, .dtype = { kDLUInt, 8, 1 } },
    };
    const bd_plan *p;
    if (bd_model_plan(m, in, 2, &p, &err))
        fail_msg("plan: %s", err.msg);
    bd_exec *e;
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    mv[0] = mv[5] = mv[9] = 1;                       /* three kept: a 3x3 product */
    xv[0] = 1, xv[5] = 2, xv[9] = 3;
    if (bd_exec_run(e, in, 2, &err))
        fail_msg("run: %s", err.msg);
    const DLTensor *out = bd_exec_output(e, 0);
    assert_int_equal(out->shape[0], 3);
    assert_int_equal(out->shape[1], 3);
    assert_true(((const float *)out->data)[8] == 9.0f);
    memset(mv, 1, sizeof mv);                        /* all kept: 2^40 floats */
    assert_int_equal(bd_exec_run(e, in, 2, &err), BD_EINVAL);
    printf("    refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "max_run_memory_bytes"));
    bd_exec_destroy(e);
    bd_model_close(m);
}

/* y = Expand(x, Compress(s, mask)): a shape the run makes. [40000, 25000] floats are 4 GB,
 * under half this machine's memory but over the model's max_run_memory_bytes of 1 GiB:
 * refused when the Expand sizes its output, nothing allocated; [4, 5] runs. */
static void test_region_expand_over_memory_limit_is_refused(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("expand");
    bd_graph_set_opset(g, 13);
    int64_t one[] = { 1 }, three[] = { 3 }, dyn[] = { -1 }, dyn2[] = { -1, -1 };
    bd_value *x = tl_input(g, "x", BD_DT_FLOAT, 1, one), *s = tl_input(g, "s", BD_DT_INT64, 1, three);
    bd_value *mask = tl_input(g, "mask", BD_DT_BOOL, 1, three);
    bd_value *shape = tl_value(g, "shape", BD_DT_INT64, 1, dyn), *y = tl_value(g, "y", BD_DT_FLOAT, 2, dyn2);
    tl_output(g, y);
    bd_value *cin[2] = { s, mask }, *ein[2] = { x, shape };
    tl_attr_int(g, tl_op(g, "compress", "Compress", cin, 2, shape), "axis", 0);
    tl_op(g, "expand", "Expand", ein, 2, y);
    bd_model *m;
    bd_error err = { 0 };
    bd_model_options o = { .engine = "dnnl,native", .max_run_memory_bytes = (size_t)1 << 30 };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("model: %s", err.msg);
    float xv[1] = { 2.5f };
    int64_t sv[3] = { 4, 7, 5 };
    uint8_t mv[3] = { 1, 0, 1 };
    int64_t n1[] = { 1 }, n3[] = { 3 };
    DLTensor in[3] = {
        { .data = xv, .device = { kDLCPU, 0 }, .ndim = 1, .shape = n1, .dtype = { kDLFloat, 32, 1 } },
        { .data = sv, .device = { kDLCPU, 0 }, .ndim = 1, .shape = n3, .dtype = { kDLInt, 64, 1 } },
        { .data = mv, .device = { kDLCPU, 0 }, .ndim = 1, .shape = n3, .dtype = { kDLUInt, 8, 1 } },
    };
    const bd_plan *p;
    if (bd_model_plan(m, in, 3, &p, &err))
        fail_msg("plan: %s", err.msg);
    bd_exec *e;
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    if (bd_exec_run(e, in, 3, &err))
        fail_msg("run: %s", err.msg);
    const DLTensor *out = bd_exec_output(e, 0);
    assert_int_equal(out->shape[0], 4);
    assert_int_equal(out->shape[1], 5);
    assert_true(((const float *)out->data)[19] == 2.5f);
    sv[0] = 40000, sv[2] = 25000;
    assert_int_equal(bd_exec_run(e, in, 3, &err), BD_EINVAL);
    printf("    refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "max_run_memory_bytes"));
    bd_exec_destroy(e);
    bd_model_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_shapes_follow_every_run),
        cmocka_unit_test(test_region_contexts_run_in_parallel),
        cmocka_unit_test(test_region_runs_with_native_alone),
        cmocka_unit_test(test_region_plan_over_memory_limit_is_refused),
        cmocka_unit_test(test_region_expand_over_memory_limit_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
