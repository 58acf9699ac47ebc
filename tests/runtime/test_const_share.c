/* Weights laid out once per model (core/const_cache.h): a plan for a second input shape reads
 * the constants the first plan's kernels laid out instead of laying them out again (a model's
 * own initializer, keyed by address; a BatchNorm folded into a convolution's filter by each
 * plan anew, keyed by contents), and computes what a fresh model computes at that shape;
 * plans may outlive their model and still run; plans of new shapes may be built while
 * another shape runs. ASan (the debug build) checks that closing frees everything. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/model.h"
#include "tests/lib/tl_graph.h"

#define C_IN  3
#define HW    10
#define C1    16
#define K_IN  768      /* the MatMul's weight: 2.25 MiB, over the kernel's huge-page block bound */
#define K_OUT 768

static float frand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / (float)(1u << 24) - 0.5f;
}

static float *rand_floats(size_t n, uint32_t seed)
{
    float *p = malloc(n * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand(&seed);
    return p;
}

/* image[N,3,10,10] -> Conv -> BatchNormalization -> Relu -> out0, and
 * tokens[N,768] -> MatMul(768x768) -> Add(bias) -> Relu -> out1: one weight the passes make
 * per plan (the conv filter with the batch norm folded in) and one the model holds. */
static bd_model *open_model(void)
{
    bd_graph *g = bd_graph_create("share");
    bd_graph_set_opset(g, 13);
    bd_value *img = tl_input(g, "image", BD_DT_FLOAT, TL_DIMS(-1, C_IN, HW, HW));
    bd_value *tok = tl_input(g, "tokens", BD_DT_FLOAT, TL_DIMS(-1, K_IN));
    float *w = rand_floats(C1 * C_IN * 9, 1), *b = rand_floats(C1, 2), *sc = rand_floats(C1, 3),
          *sh = rand_floats(C1, 4), *mean = rand_floats(C1, 5), *var = rand_floats(C1, 6),
          *wm = rand_floats((size_t)K_IN * K_OUT, 7), *bm = rand_floats(K_OUT, 8);
    for (int i = 0; i < C1; i++)
        var[i] += 1.0f;
    bd_value *cw = tl_const(g, "w", BD_DT_FLOAT, TL_DIMS(C1, C_IN, 3, 3), w);
    bd_value *cb = tl_const(g, "b", BD_DT_FLOAT, TL_DIMS(C1), b);
    bd_value *bn[4] = {
        tl_const(g, "scale", BD_DT_FLOAT, TL_DIMS(C1), sc), tl_const(g, "shift", BD_DT_FLOAT, TL_DIMS(C1), sh),
        tl_const(g, "mean", BD_DT_FLOAT, TL_DIMS(C1), mean), tl_const(g, "var", BD_DT_FLOAT, TL_DIMS(C1), var),
    };
    bd_value *cwm = tl_const(g, "wm", BD_DT_FLOAT, TL_DIMS(K_IN, K_OUT), wm);
    bd_value *cbm = tl_const(g, "bm", BD_DT_FLOAT, TL_DIMS(K_OUT), bm);
    free(w); free(b); free(sc); free(sh); free(mean); free(var); free(wm); free(bm);

    bd_value *conv = tl_value(g, "conv", BD_DT_FLOAT, TL_DIMS(-1, C1, HW, HW));
    bd_value *norm = tl_value(g, "norm", BD_DT_FLOAT, TL_DIMS(-1, C1, HW, HW));
    bd_value *out0 = tl_value(g, "out0", BD_DT_FLOAT, TL_DIMS(-1, C1, HW, HW));
    bd_node *n = tl_op(g, "conv", "Conv", (bd_value *[]){ img, cw, cb }, 3, conv);
    tl_attr_ints(g, n, "pads", 4, (const int64_t[]){ 1, 1, 1, 1 });
    tl_attr_ints(g, n, "kernel_shape", 2, (const int64_t[]){ 3, 3 });
    tl_op(g, "bn", "BatchNormalization", (bd_value *[]){ conv, bn[0], bn[1], bn[2], bn[3] }, 5, norm);
    tl_op(g, "relu0", "Relu", &norm, 1, out0);
    tl_output(g, out0);

    bd_value *mm = tl_value(g, "mm", BD_DT_FLOAT, TL_DIMS(-1, K_OUT));
    bd_value *add = tl_value(g, "add", BD_DT_FLOAT, TL_DIMS(-1, K_OUT));
    bd_value *out1 = tl_value(g, "out1", BD_DT_FLOAT, TL_DIMS(-1, K_OUT));
    tl_op(g, "mm", "MatMul", (bd_value *[]){ tok, cwm }, 2, mm);
    tl_op(g, "add", "Add", (bd_value *[]){ mm, cbm }, 2, add);
    tl_op(g, "relu1", "Relu", &add, 1, out1);
    tl_output(g, out1);

    /* the fast path for every node, however small the test's regions */
    bd_model_options o = { .engine = "dnnl", .threads = 1 };
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("open: %s", err.msg);
    return m;
}

typedef struct inputs {
    int64_t  n;
    int64_t  ishape[4], tshape[2];
    float   *img, *tok;
    DLTensor dl[2];
} inputs;

static void inputs_make(inputs *in, int64_t n)
{
    in->n = n;
    memcpy(in->ishape, (int64_t[]){ n, C_IN, HW, HW }, sizeof in->ishape);
    memcpy(in->tshape, (int64_t[]){ n, K_IN }, sizeof in->tshape);
    in->img = rand_floats((size_t)n * C_IN * HW * HW, 100 + (uint32_t)n);
    in->tok = rand_floats((size_t)n * K_IN, 200 + (uint32_t)n);
    in->dl[0] = (DLTensor){ .data = in->img, .device = { kDLCPU, 0 }, .ndim = 4, .shape = in->ishape,
                            .dtype = { kDLFloat, 32, 1 } };
    in->dl[1] = (DLTensor){ .data = in->tok, .device = { kDLCPU, 0 }, .ndim = 2, .shape = in->tshape,
                            .dtype = { kDLFloat, 32, 1 } };
}

static void inputs_free(inputs *in)
{
    free(in->img);
    free(in->tok);
}

static const bd_plan *plan_for(bd_model *m, inputs *in)
{
    const bd_plan *p = NULL;
    bd_error err = { 0 };
    if (bd_model_plan_acquire(m, in->dl, 2, &p, &err))
        fail_msg("plan at batch %lld: %s", (long long)in->n, err.msg);
    return p;
}

/* Run P on IN; copies of its two outputs in OUT[0], OUT[1] (freed by the caller). */
static int run(const bd_plan *p, inputs *in, float *out[2])
{
    bd_exec *e;
    bd_error err = { 0 };
    if (bd_exec_create(p, &e, &err) || bd_exec_run(e, in->dl, 2, &err)) {
        fprintf(stderr, "run at batch %lld: %s\n", (long long)in->n, err.msg);
        return -1;
    }
    size_t n[2] = { (size_t)in->n * C1 * HW * HW, (size_t)in->n * K_OUT };
    for (int k = 0; k < 2; k++) {
        out[k] = malloc(n[k] * sizeof(float));
        memcpy(out[k], bd_exec_output(e, (size_t)k)->data, n[k] * sizeof(float));
    }
    bd_exec_destroy(e);
    return 0;
}

/* OUT (from a model that shared weights) against a fresh model's plan at the same shape. */
static bool same_as_fresh(inputs *in, float *out[2])
{
    bd_model *fresh = open_model();
    const bd_plan *p = plan_for(fresh, in);
    float *ref[2];
    bool ok = run(p, in, ref) == 0;
    size_t n[2] = { (size_t)in->n * C1 * HW * HW, (size_t)in->n * K_OUT };
    for (int k = 0; ok && k < 2; k++)
        for (size_t i = 0; i < n[k]; i++)
            if (fabsf(out[k][i] - ref[k][i]) > 1e-5f * (1.0f + fabsf(ref[k][i]))) {
                fprintf(stderr, "batch %lld output %d [%zu]: %g, fresh model %g\n", (long long)in->n, k, i,
                        (double)out[k][i], (double)ref[k][i]);
                ok = false;
                break;
            }
    if (ok) {
        free(ref[0]);
        free(ref[1]);
    }
    bd_plan_release(p);
    bd_model_close(fresh);
    return ok;
}

static void test_second_shape_reuses_weights(void **state)
{
    (void)state;
    bd_model *m = open_model();
    inputs a, b;
    inputs_make(&a, 1);
    inputs_make(&b, 3);
    const bd_plan *pa = plan_for(m, &a);
    const bd_kernel_stats *ra = &bd_plan_partition(pa)->run;
    assert_int_equal(ra->shared_consts, 0);
    assert_true(ra->const_bytes >= (size_t)K_IN * K_OUT * sizeof(float));
    bd_plan_cache_stats st;
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.consts_shared, 0);
    size_t first_consts = st.consts_bytes;
    assert_true(first_consts >= ra->const_bytes);

    const bd_plan *pb = plan_for(m, &b);
    const bd_kernel_stats *rb = &bd_plan_partition(pb)->run;
    /* the matmul's weight (the model's bytes) and the folded filter (made again by this plan)
     * at least: both read where the first plan laid them out */
    assert_true(rb->shared_consts >= 2);
    assert_true(rb->shared_const_bytes >= (size_t)K_IN * K_OUT * sizeof(float) + C1 * C_IN * 9 * sizeof(float));
    assert_true(rb->shared_const_bytes <= rb->const_bytes);
    bd_model_plan_cache_stats(m, &st);
    assert_int_equal(st.consts_shared, rb->shared_consts);
    assert_int_equal(st.consts_shared_bytes, rb->shared_const_bytes);
    /* the shared bytes are held once: what the second plan added is what it did not find */
    assert_true(st.consts_bytes < first_consts + rb->const_bytes);
    assert_true(bd_plan_bytes(pb) < bd_plan_bytes(pa) + rb->const_bytes - rb->shared_const_bytes);

    float *out[2];
    assert_int_equal(run(pb, &b, out), 0);
    assert_true(same_as_fresh(&b, out));
    free(out[0]);
    free(out[1]);
    bd_plan_release(pa);
    bd_plan_release(pb);
    inputs_free(&a);
    inputs_free(&b);
    bd_model_close(m);
}

/* A plan outlives its model (an execution context holds it): the constants it reads, some laid
 * out by a plan already gone, stay until it goes. */
static void test_plans_outlive_model(void **state)
{
    (void)state;
    bd_model *m = open_model();
    inputs a, b;
    inputs_make(&a, 2);
    inputs_make(&b, 5);
    const bd_plan *pa = plan_for(m, &a), *pb = plan_for(m, &b);
    assert_true(bd_plan_partition(pb)->run.shared_consts >= 2);
    bd_exec *e;
    bd_error err = { 0 };
    assert_int_equal(bd_exec_create(pb, &e, &err), 0);
    bd_plan_release(pa);                   /* the plan that laid the weights out goes first */
    bd_plan_release(pb);
    bd_model_close(m);
    assert_int_equal(bd_exec_run(e, b.dl, 2, &err), 0);
    size_t n[2] = { (size_t)b.n * C1 * HW * HW, (size_t)b.n * K_OUT };
    float *out[2];
    for (int k = 0; k < 2; k++) {
        out[k] = malloc(n[k] * sizeof(float));
        memcpy(out[k], bd_exec_output(e, (size_t)k)->data, n[k] * sizeof(float));
    }
    bd_exec_destroy(e);                    /* the last reference: everything freed (ASan) */
    assert_true(same_as_fresh(&b, out));
    free(out[0]);
    free(out[1]);
    inputs_free(&a);
    inputs_free(&b);
}

typedef struct builder {
    bd_model      *m;
    inputs        *in;
    const bd_plan *plan;
    pthread_barrier_t *go;
} builder;

static void *build_one(void *arg)
{
    builder *b = arg;
    bd_error err = { 0 };
    pthread_barrier_wait(b->go);
    if (bd_model_plan_acquire(b->m, b->in->dl, 2, &b->plan, &err))
        b->plan = NULL;
    return NULL;
}

typedef struct runner {
    const bd_plan *plan;
    inputs        *in;
    const float   *want[2];
    pthread_barrier_t *go;
    volatile int  *stop;
    int            runs, bad;
} runner;

static void *run_loop(void *arg)
{
    runner *r = arg;
    bd_exec *e;
    bd_error err = { 0 };
    size_t n[2] = { (size_t)r->in->n * C1 * HW * HW, (size_t)r->in->n * K_OUT };
    if (bd_exec_create(r->plan, &e, &err)) {
        r->bad++;
        pthread_barrier_wait(r->go);
        return NULL;
    }
    pthread_barrier_wait(r->go);
    while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE) || r->runs < 2) {
        if (bd_exec_run(e, r->in->dl, 2, &err) ||
            memcmp(bd_exec_output(e, 0)->data, r->want[0], n[0] * sizeof(float)) ||
            memcmp(bd_exec_output(e, 1)->data, r->want[1], n[1] * sizeof(float)))
            r->bad++;
        r->runs++;
    }
    bd_exec_destroy(e);
    return NULL;
}

/* Two new shapes built at once while a third runs: each gets the first plan's weights, the
 * runs are not disturbed, and the new plans compute what fresh models do. */
static void test_concurrent_builds_while_running(void **state)
{
    (void)state;
    bd_model *m = open_model();
    inputs a, b, c;
    inputs_make(&a, 1);
    inputs_make(&b, 4);
    inputs_make(&c, 6);
    const bd_plan *pa = plan_for(m, &a);
    float *want[2];
    assert_int_equal(run(pa, &a, want), 0);

    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 3);
    volatile int stop = 0;
    runner r = { .plan = pa, .in = &a, .want = { want[0], want[1] }, .go = &go, .stop = &stop };
    builder bb = { .m = m, .in = &b, .go = &go }, bc = { .m = m, .in = &c, .go = &go };
    pthread_t t[3];
    assert_int_equal(pthread_create(&t[0], NULL, run_loop, &r), 0);
    assert_int_equal(pthread_create(&t[1], NULL, build_one, &bb), 0);
    assert_int_equal(pthread_create(&t[2], NULL, build_one, &bc), 0);
    pthread_join(t[1], NULL);
    pthread_join(t[2], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t[0], NULL);
    pthread_barrier_destroy(&go);
    assert_int_equal(r.bad, 0);
    assert_true(r.runs >= 2);
    assert_non_null(bb.plan);
    assert_non_null(bc.plan);
    assert_true(bd_plan_partition(bb.plan)->run.shared_consts >= 2);
    assert_true(bd_plan_partition(bc.plan)->run.shared_consts >= 2);
    inputs *ins[2] = { &b, &c };
    const bd_plan *ps[2] = { bb.plan, bc.plan };
    for (int k = 0; k < 2; k++) {
        float *out[2];
        assert_int_equal(run(ps[k], ins[k], out), 0);
        assert_true(same_as_fresh(ins[k], out));
        free(out[0]);
        free(out[1]);
        bd_plan_release(ps[k]);
    }
    free(want[0]);
    free(want[1]);
    bd_plan_release(pa);
    inputs_free(&a);
    inputs_free(&b);
    inputs_free(&c);
    bd_model_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_shape_reuses_weights),
        cmocka_unit_test(test_plans_outlive_model),
        cmocka_unit_test(test_concurrent_builds_while_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
