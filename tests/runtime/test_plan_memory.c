/* The run-memory guard: legal input shapes that would make a run hold more tensor memory than
 * allowed (an outer product of a long vector with itself) are refused before anything is
 * compiled, and plan_peak_tensor_bytes counts what a run holds at once, not the sum of
 * every tensor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/model.h"
#include "runtime/plan_internal.h"
#include "tests/lib/tl_graph.h"

/* x[n,1] -> y = x @ transpose(x): [n,n] from n floats. */
static bd_model *outer_product(size_t max_run_memory_bytes)
{
    bd_graph *g = bd_graph_create("outer");
    bd_graph_set_opset(g, 13);
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 2, (int64_t[]){ -1, 1 });
    bd_value *xt = tl_value(g, "xt", BD_DT_FLOAT, 2, (int64_t[]){ 1, -1 });
    bd_value *y = tl_value(g, "y", BD_DT_FLOAT, 2, (int64_t[]){ -1, -1 });
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "t", "Transpose", &x, 1, xt);
    tl_op(g, "mm", "MatMul", (bd_value *[]){ x, xt }, 2, y);
    bd_model_options o = { .max_run_memory_bytes = max_run_memory_bytes };
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("open: %s", err.msg);
    return m;
}

static int plan_outer(bd_model *m, int64_t n, bd_error *err)
{
    static float unread[1];                     /* planning reads shapes, never data */
    int64_t shape[2] = { n, 1 };
    DLTensor in = { .data = unread, .device = { kDLCPU, 0 }, .ndim = 2, .shape = shape,
                    .dtype = { kDLFloat, 32, 1 } };
    const bd_plan *p = NULL;
    int rc = bd_model_plan_acquire(m, &in, 1, &p, err);
    bd_plan_release(p);
    return rc;
}

static void test_outer_product_over_the_limit_is_refused(void **state)
{
    bd_model *m = outer_product((size_t)64 << 20);
    bd_error err = { 0 };
    assert_int_equal(plan_outer(m, 1000, &err), 0);             /* 4 MB: fine */
    assert_int_equal(plan_outer(m, 100000, &err), BD_EINVAL);   /* 40 GB: refused, nothing allocated */
    assert_non_null(strstr(err.msg, "max_run_memory_bytes"));
    memset(&err, 0, sizeof err);
    assert_int_equal(plan_outer(m, (int64_t)1 << 40, &err), BD_EINVAL);   /* overflows size_t */
    bd_model_close(m);
}

static void test_no_limit_by_default(void **state)
{
    bd_model *m = outer_product(0);
    bd_error err = { 0 };
    assert_int_equal(plan_outer(m, 3000, &err), 0);             /* 36 MB */
    bd_model_close(m);
}

/* a[1,N] -> Relu -> Relu -> Relu -> out: at most two tensors live at once, never four. */
static void test_peak_counts_live_tensors_not_all(void **state)
{
    enum { N = 1000 };
    bd_graph *g = bd_graph_create("chain");
    int64_t d[2] = { 1, N };
    bd_value *v[4];
    const char *names[4] = { "a", "b", "c", "out" };
    for (int i = 0; i < 4; i++)
        v[i] = tl_value(g, names[i], BD_DT_FLOAT, 2, d);
    bd_graph_mark_input(g, v[0], NULL);
    bd_graph_mark_output(g, v[3], NULL);
    tl_op(g, "r1", "Relu", &v[0], 1, v[1]);
    tl_op(g, "r2", "Relu", &v[1], 1, v[2]);
    tl_op(g, "r3", "Relu", &v[2], 1, v[3]);
    size_t peak = 0;
    assert_int_equal(plan_peak_tensor_bytes(g, &peak), 0);
    assert_int_equal(peak, 2 * N * sizeof(float));
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outer_product_over_the_limit_is_refused),
        cmocka_unit_test(test_no_limit_by_default),
        cmocka_unit_test(test_peak_counts_live_tensors_not_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
