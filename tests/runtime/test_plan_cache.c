/* The plan cache and the shapes a caller may send: LRU eviction by count and by bytes with
 * evicted plans kept alive by their execution contexts, one compile per shape however many
 * threads ask at once, declared input ranges checked before planning, and zero-size inputs
 * answered by a plan of no steps (no backend ever sees an empty tensor). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/ort/ort_backend.h"
#include "runtime/model.h"

/* x[1,n] -> Relu, or (CONCAT) x[n,4] -> Concat(x, a constant row) along axis 0. */
static bd_model *open_model(bool concat, const bd_model_options *o)
{
    bd_graph *g = bd_graph_create(concat ? "concat" : "relu");
    bd_graph_set_opset(g, 13);
    int64_t xd[2] = { concat ? -1 : 1, concat ? 4 : -1 };
    bd_shape xs = bd_shape_make(2, xd), ys = xs;
    if (concat)
        ys.dims[0] = -1;
    bd_value *x, *y, *row = NULL;
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, &xs, &x, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "y", BD_DT_FLOAT, &ys, &y, NULL), 0);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    bd_node *n;
    if (concat) {
        int64_t rd[2] = { 1, 4 };
        bd_shape rs = bd_shape_make(2, rd);
        assert_int_equal(bd_graph_add_value(g, "row", BD_DT_FLOAT, &rs, &row, NULL), 0);
        float *data = bd_graph_alloc(g, 4 * sizeof(float));
        for (int i = 0; i < 4; i++)
            data[i] = (float)i;
        row->data = data;
        row->nbytes = 4 * sizeof(float);
        assert_int_equal(bd_graph_add_node(g, "cat", "Concat", "", (bd_value *[]){ x, row }, 2, &y, 1, &n, NULL), 0);
        bd_attr a = { .name = "axis", .type = BD_ATTR_INT, .i = 0 };
        assert_int_equal(bd_node_add_attr(g, n, &a, NULL), 0);
    } else
        assert_int_equal(bd_graph_add_node(g, "relu", "Relu", "", &x, 1, &y, 1, &n, NULL), 0);
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, o, &m, &err))
        fail_msg("open: %s", err.msg);
    return m;
}

static DLTensor input(float *data, int64_t *shape)
{
    return (DLTensor){ .data = data, .device = { kDLCPU, 0 }, .ndim = 2, .shape = shape,
                       .dtype = { kDLFloat, 32, 1 } };
}

static const bd_plan *plan_n(bd_model *m, int64_t n, float *x)
{
    static int64_t shape[2];
    shape[0] = 1;
    shape[1] = n;
    DLTensor in = input(x, shape);
    const bd_plan *p = NULL;
    bd_error err = { 0 };
    if (bd_model_plan_acquire(m, &in, 1, &p, &err))
        fail_msg("plan [1,%lld]: %s", (long long)n, err.msg);
    return p;
}

static void test_lru_by_count_keeps_evicted_plan_alive(void **state)
{
    bd_model_options o = { .plan_cache_max_plans = 2 };
    bd_model *m = open_model(false, &o);
    float x[8] = { -1, 2, -3, 4, -5, 6, -7, 8 };
    const bd_plan *p3 = plan_n(m, 3, x);
    bd_exec *e;
    bd_error err = { 0 };
    assert_int_equal(bd_exec_create(p3, &e, &err), 0);
    bd_plan_release(p3);                     /* the context holds the only other reference */
    bd_plan_release(plan_n(m, 4, x));
    bd_plan_release(plan_n(m, 5, x));        /* [1,3] is the least recently used: evicted */
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.plans, 2);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(st.compiles, 3);
    assert_int_equal(st.max_plans, 2);
    assert_true(bd_plan_evicted(p3));

    int64_t shape[2] = { 1, 3 };
    DLTensor in = input(x, shape);
    assert_int_equal(bd_exec_run(e, &in, 1, &err), 0);   /* the evicted plan still runs */
    const float *y = bd_exec_output(e, 0)->data;
    assert_true(y[0] == 0 && y[1] == 2 && y[2] == 0);
    bd_exec_destroy(e);                      /* the last reference: freed here (ASan checks) */

    const bd_plan *p5 = plan_n(m, 5, x);     /* a hit moves [1,5] to the front */
    assert_false(bd_plan_evicted(p5));
    bd_plan_release(plan_n(m, 6, x));        /* evicts [1,4], not [1,5] */
    assert_false(bd_plan_evicted(p5));
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.evictions, 2);
    bd_plan_release(p5);
    bd_model_close(m);
}

static void test_lru_by_bytes(void **state)
{
    bd_model_options o = { .plan_cache_max_bytes = 1 };   /* every plan is over: keep the newest */
    bd_model *m = open_model(false, &o);
    float x[8] = { 0 };
    for (int64_t n = 1; n <= 5; n++)
        bd_plan_release(plan_n(m, n, x));
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.plans, 1);
    assert_int_equal(st.evictions, 4);
    assert_true(st.bytes > 0);
    bd_model_close(m);
}

typedef struct racer {
    bd_model       *m;
    int64_t         n;
    pthread_barrier_t *go;
    const bd_plan  *plan;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    float x[64] = { 0 };
    int64_t shape[2] = { 1, r->n };
    DLTensor in = input(x, shape);
    bd_error err = { 0 };
    pthread_barrier_wait(r->go);
    if (bd_model_plan_acquire(r->m, &in, 1, &r->plan, &err))
        r->plan = NULL;
    return NULL;
}

/* However the threads interleave, one shape is compiled once and everyone shares it. */
static void test_one_compile_per_shape_under_contention(void **state)
{
    bd_model *m = open_model(false, NULL);
    enum { T = 8 };
    pthread_t th[T];
    racer r[T];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, T);
    for (int i = 0; i < T; i++) {
        r[i] = (racer){ .m = m, .n = i % 2 ? 17 : 33, .go = &go };
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.compiles, 2);
    assert_int_equal(st.plans, 2);
    assert_int_equal(st.hits, T - 2);
    for (int i = 0; i < T; i++) {
        assert_non_null(r[i].plan);
        assert_ptr_equal(r[i].plan, r[i % 2].plan);
        bd_plan_release(r[i].plan);
    }
    bd_model_close(m);
}

typedef struct bad_racer {
    bd_model          *m;
    pthread_barrier_t *go;
    int                rc;
    bd_error           err;
} bad_racer;

static void *race_bad(void *arg)
{
    bad_racer *r = arg;
    float x[4] = { 0 }, y[4] = { 0 };
    int64_t xs[1] = { 3 }, ys[1] = { 4 };
    DLTensor in[2] = {
        { .data = x, .device = { kDLCPU, 0 }, .ndim = 1, .shape = xs, .dtype = { kDLFloat, 32, 1 } },
        { .data = y, .device = { kDLCPU, 0 }, .ndim = 1, .shape = ys, .dtype = { kDLFloat, 32, 1 } },
    };
    const bd_plan *p = NULL;
    pthread_barrier_wait(r->go);
    r->rc = bd_model_plan_acquire(r->m, in, 2, &p, &r->err);
    return NULL;
}

/* x[n] + y[m] asked for with n=3, m=4 by many threads at once: every one gets the compile's
 * BD_EINVAL (those that waited for it share its message), and nothing leaks. */
static void test_failed_compile_shared_with_waiters(void **state)
{
    bd_graph *g = bd_graph_create("add");
    bd_graph_set_opset(g, 13);
    int64_t d[1] = { -1 };
    bd_shape s = bd_shape_make(1, d);
    bd_value *x, *y, *z;
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, &s, &x, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "y", BD_DT_FLOAT, &s, &y, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "z", BD_DT_FLOAT, &s, &z, NULL), 0);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_input(g, y, NULL);
    bd_graph_mark_output(g, z, NULL);
    bd_node *n;
    assert_int_equal(bd_graph_add_node(g, "add", "Add", "", (bd_value *[]){ x, y }, 2, &z, 1, &n, NULL), 0);
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, NULL, &m, &err))
        fail_msg("open: %s", err.msg);
    enum { T = 6 };
    pthread_t th[T];
    bad_racer r[T];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, T);
    for (int i = 0; i < T; i++) {
        r[i] = (bad_racer){ .m = m, .go = &go };
        assert_int_equal(pthread_create(&th[i], NULL, race_bad, &r[i]), 0);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < T; i++) {
        assert_int_equal(r[i].rc, BD_EINVAL);
        assert_non_null(strstr(r[i].err.msg, "do not fit"));
    }
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.plans, 0);             /* a failure is not cached */
    assert_true(st.compiles >= 1 && st.compiles <= T);
    bd_model_close(m);
}

static void test_input_range_checked_before_planning(void **state)
{
    bd_model *m = open_model(false, NULL);
    bd_error err = { 0 };
    int64_t lo[2] = { 1, 2 }, hi[2] = { 1, 16 }, bad[1] = { 1 };
    assert_int_equal(bd_model_set_input_range(m, "nope", 2, lo, hi, &err), BD_EINVAL);
    assert_int_equal(bd_model_set_input_range(m, "x", 1, bad, bad, &err), BD_EINVAL);
    assert_int_equal(bd_model_set_input_range(m, "x", 2, hi, lo, &err), BD_EINVAL);
    assert_int_equal(bd_model_set_input_range(m, "x", 2, lo, hi, &err), 0);
    float x[32] = { 0 };
    int64_t shape[2] = { 1, 17 };
    DLTensor in = input(x, shape);
    const bd_plan *p = NULL;
    assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "input 'x': dim 1 is 17, outside the allowed range [2, 16]"));
    shape[1] = 0;
    assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), BD_EINVAL);
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.compiles, 0);
    shape[1] = 16;
    assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), 0);
    bd_plan_release(p);
    bd_model_close(m);
}

static void test_zero_size_input_gets_empty_outputs(void **state)
{
    bd_model *m = open_model(false, NULL);
    const bd_plan *p = plan_n(m, 0, NULL);
    assert_int_equal(bd_plan_num_steps(p), 0);   /* nothing for a backend to run */
    bd_exec *e;
    bd_error err = { 0 };
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    int64_t shape[2] = { 1, 0 };
    DLTensor in = input(NULL, shape);
    assert_int_equal(bd_exec_run(e, &in, 1, &err), 0);
    const DLTensor *y = bd_exec_output(e, 0);
    assert_int_equal(y->ndim, 2);
    assert_int_equal(y->shape[0], 1);
    assert_int_equal(y->shape[1], 0);
    bd_exec_destroy(e);
    bd_plan_release(p);
    bd_model_close(m);
}

/* An empty input whose output is not empty needs the model run on it: oneDNN refuses empty
 * tensors, so on oneDNN alone that is BD_EINVAL naming both; a fallback engine (when
 * present) computes it. */
static void test_zero_size_input_with_non_empty_output(void **state)
{
    bd_model_options o = { .engine = "dnnl" };
    bd_model *m = open_model(true, &o);
    int64_t shape[2] = { 0, 4 };
    DLTensor in = input(NULL, shape);
    const bd_plan *p = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "input 'x' [0,4] is empty"));
    assert_non_null(strstr(err.msg, "output 'y' would be [1,4]"));
    float x[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };    /* a real batch still works */
    shape[0] = 2;
    in.data = x;
    assert_int_equal(bd_model_plan_acquire(m, &in, 1, &p, &err), 0);
    bd_plan_release(p);
    bd_model_close(m);

    char why[256];
    if (!bd_ort_available(why, sizeof why)) {
        printf("    (fallback half skipped: %s)\n", why);
        return;
    }
    m = open_model(true, NULL);
    shape[0] = 0;
    in.data = NULL;
    if (bd_model_plan_acquire(m, &in, 1, &p, &err))
        fail_msg("plan: %s", err.msg);
    bd_exec *e;
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    if (bd_exec_run(e, &in, 1, &err))
        fail_msg("run: %s", err.msg);
    const DLTensor *y = bd_exec_output(e, 0);
    assert_int_equal(y->shape[0], 1);
    assert_int_equal(y->shape[1], 4);
    for (int i = 0; i < 4; i++)
        assert_true(((const float *)y->data)[i] == (float)i);
    bd_exec_destroy(e);
    bd_plan_release(p);
    bd_model_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru_by_count_keeps_evicted_plan_alive),
        cmocka_unit_test(test_lru_by_bytes),
        cmocka_unit_test(test_one_compile_per_shape_under_contention),
        cmocka_unit_test(test_failed_compile_shared_with_waiters),
        cmocka_unit_test(test_input_range_checked_before_planning),
        cmocka_unit_test(test_zero_size_input_gets_empty_outputs),
        cmocka_unit_test(test_zero_size_input_with_non_empty_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
