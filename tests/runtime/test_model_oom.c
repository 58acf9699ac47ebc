/* A whole model load when memory runs out: import, validation, shape inference, the passes,
 * placement and every engine's compile, with each of braid's allocations made to fail in
 * turn (the k-th malloc/calloc/realloc/aligned_alloc/strdup of bd_model_open + its first
 * plan returns NULL, k = 1, 2, ... until a load sees no failure). Each must end in an error
 * or a working plan, never a crash; under the sanitizer run (scripts/test.sh) LeakSanitizer
 * checks the failed ones leave nothing behind. The linker wraps the functions (meson:
 * -Wl,--wrap=...), so only braid's own code (statically linked here) sees the failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/model.h"
#include "runtime/plan.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t al, size_t n);
char *__real_strdup(const char *s);

static atomic_long g_countdown;   /* > 0: the allocation that brings it to 0 fails */

static bool fail_now(void)
{
    long c = atomic_load(&g_countdown);
    while (c > 0 && !atomic_compare_exchange_weak(&g_countdown, &c, c - 1))
        ;
    return c == 1;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return fail_now() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t al, size_t n) { return fail_now() ? NULL : __real_aligned_alloc(al, n); }
char *__wrap_strdup(const char *s) { return fail_now() ? NULL : __real_strdup(s); }

/* Open PATH and plan it for its own input shapes (dynamic dims = 1): 0, or an error. */
static int load(const char *path, bd_error *err)
{
    bd_model *m = NULL;
    int rc = bd_model_open(path, NULL, &m, err);
    if (rc)
        return rc;
    const bd_graph *g = bd_model_graph(m);
    size_t n = bd_graph_num_inputs(g);
    DLTensor in[8];
    int64_t shapes[8][BD_MAX_RANK];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        const bd_value *v = bd_graph_input(g, i);
        for (int d = 0; d < v->shape.rank; d++)
            shapes[i][d] = v->shape.dims[d] > 0 ? v->shape.dims[d] : 1;
        in[i] = (DLTensor){ .device = { kDLCPU, 0 }, .ndim = v->shape.rank, .shape = shapes[i],
                            .dtype = { kDLFloat, 32, 1 } };
    }
    const bd_plan *p = NULL;
    rc = bd_model_plan_acquire(m, in, n, &p, err);
    bd_plan_release(p);
    bd_model_close(m);
    return rc;
}

static void load_with_each_failure(const char *rel)
{
    char path[4096];
    const char *root = getenv("BRAID_SOURCE_ROOT");
    snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
    int failures = 0;
    for (long k = 1; k < 1000000; k++) {
        bd_error err = { 0 };
        atomic_store(&g_countdown, k);
        int rc = load(path, &err);
        long left = atomic_exchange(&g_countdown, 0);
        if (rc) {
            assert_true(err.msg[0] != '\0');
            failures++;
        }
        if (left > 0) {                         /* fewer than k allocations: none failed */
            if (rc)
                fprintf(stderr, "%s: %s\n", rel, err.msg);
            assert_int_equal(rc, 0);
            printf("    %s: %ld allocations per load; %d loads failed cleanly\n", rel, k - 1,
                   failures);
            return;
        }
    }
    fail_msg("%s: over a million allocations per load", rel);
}

static void test_demo_cnn(void **state)
{
    (void)state;
    load_with_each_failure("daemon/demo-repository/tinycnn/1/model.onnx");
}

static void test_shape_ops(void **state)
{
    (void)state;
    load_with_each_failure("tests/fuzz/corpus/onnx/shape_ops.onnx");
}

static void test_tf_graphdef(void **state)
{
    (void)state;
    load_with_each_failure("tests/fuzz/corpus/graphdef/relu_fallback.pb");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo_cnn),
        cmocka_unit_test(test_shape_ops),
        cmocka_unit_test(test_tf_graphdef),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
