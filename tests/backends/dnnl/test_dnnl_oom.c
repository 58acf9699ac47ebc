/* The oneDNN backend's compile when memory runs out: each of braid's allocations during a
 * compile is made to fail in turn (the k-th malloc/calloc/realloc/aligned_alloc of the
 * compile returns NULL, k = 1, 2, ... until a compile sees no failure). Every such compile
 * must return an error or succeed, never crash; under the sanitizer run (scripts/test.sh)
 * LeakSanitizer checks that the failed ones leave nothing behind. The graphs cover the
 * compiler's own allocations: strided 1x1 convolutions (the shared subsample), a Winograd
 * convolution with a residual, braid's LSTM and GRU recurrences (on AVX-512 machines; the
 * oneDNN primitives elsewhere), a pooling and an eltwise chain.
 *
 * The linker wraps the allocation functions (meson: -Wl,--wrap=...), so only calls made from
 * braid's own code (statically linked here) can fail; oneDNN's own are untouched. */
#include <stdatomic.h>

#pragma GCC diagnostic ignored "-Wunused-function"   /* the test library has more helpers */

#include "tests/backends/dnnl/dnnl_testlib.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t al, size_t n);

static atomic_long g_countdown;   /* > 0: the allocation that brings it to 0 fails */
static atomic_long g_failed;      /* allocations made to fail */

static bool fail_now(void)
{
    long c = atomic_load(&g_countdown);
    while (c > 0 && !atomic_compare_exchange_weak(&g_countdown, &c, c - 1))
        ;
    if (c == 1) {
        atomic_fetch_add(&g_failed, 1);
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return fail_now() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t al, size_t n) { return fail_now() ? NULL : __real_aligned_alloc(al, n); }

/* Compile T's graph with the k-th allocation failing, for every k; returns how many compiles
 * failed. The last compile (no failure reached) must succeed. */
static int compile_with_each_failure(tg *t)
{
    size_t nn = bd_graph_num_nodes(t->g), ni = bd_graph_num_inputs(t->g), no = bd_graph_num_outputs(t->g);
    bd_node **nodes = calloc(nn + 1, sizeof *nodes);
    bd_value **ins = calloc(ni + 1, sizeof *ins), **outs = calloc(no + 1, sizeof *outs);
    assert_non_null(nodes);
    for (size_t i = 0; i < nn; i++)
        nodes[i] = bd_graph_node(t->g, i);
    for (size_t i = 0; i < ni; i++)
        ins[i] = bd_graph_input(t->g, i);
    for (size_t i = 0; i < no; i++)
        outs[i] = bd_graph_output(t->g, i);
    bd_subgraph sg = { t->g, nodes, nn, ins, ni, outs, no, 0, NULL };
    int failures = 0;
    for (long k = 1; k < 100000; k++) {
        bd_kernel *kernel = NULL;
        bd_error err = { 0 };
        atomic_store(&g_failed, 0);
        atomic_store(&g_countdown, k);
        int rc = bd_dnnl_backend.compile(&sg, &kernel, &err);
        long left = atomic_exchange(&g_countdown, 0);
        if (rc == 0) {
            assert_non_null(kernel);
            bd_dnnl_backend.release(kernel);
        } else {
            assert_null(kernel);
            assert_true(err.msg[0] != '\0');
            assert_int_equal(atomic_load(&g_failed), 1);   /* an error only where one failed */
            failures++;
        }
        if (left > 0) {                     /* the compile made fewer than k allocations */
            assert_int_equal(rc, 0);
            printf("    %ld allocations per compile; %d of the failed ones failed the compile\n",
                   k - 1, failures);
            break;
        }
    }
    free(nodes);
    free(ins);
    free(outs);
    return failures;
}

static void test_convolutions(void **state)
{
    (void)state;
    tg *t = tg_new();
    bd_value *x = t_input(t, SHAPE(1, 32, 16, 16));
    bd_value *a = t_val(t, SHAPE(1, 16, 8, 8)), *b = t_val(t, SHAPE(1, 64, 8, 8));
    ATTR_INTS(t, NODE(t, "Conv", a, x, t_const(t, SHAPE(16, 32, 1, 1))), "strides", 2, 2);
    ATTR_INTS(t, NODE(t, "Conv", b, x, t_const(t, SHAPE(64, 32, 1, 1)), t_const(t, SHAPE(64))),
              "strides", 2, 2);
    bd_value *c = t_val(t, SHAPE(1, 64, 8, 8)), *r = t_val(t, SHAPE(1, 64, 8, 8));
    bd_node *wino = NODE(t, "Conv", c, a, t_const(t, SHAPE(64, 16, 3, 3)));
    ATTR_INTS(t, wino, "pads", 1, 1, 1, 1);
    NODE(t, "Add", r, c, b);
    bd_value *p = t_val(t, SHAPE(1, 64, 4, 4)), *y = t_val(t, SHAPE(1, 64, 4, 4));
    bd_node *pool = NODE(t, "MaxPool", p, r);
    ATTR_INTS(t, pool, "kernel_shape", 2, 2);
    ATTR_INTS(t, pool, "strides", 2, 2);
    NODE(t, "Relu", y, p);
    t_output(t, y);
    assert_true(compile_with_each_failure(t) > 0);
    tg_free(t);
}

static void test_recurrences(void **state)
{
    (void)state;
    tg *t = tg_new();
    const int64_t T = 5, B = 2, I = 8, H = 16;
    bd_value *x = t_input(t, SHAPE(T, B, I));
    bd_value *ly = t_val(t, SHAPE(T, 2, B, H));
    bd_node *lstm = NODE(t, "LSTM", ly, x, t_const(t, SHAPE(2, 4 * H, I)), t_const(t, SHAPE(2, 4 * H, H)),
                         t_const(t, SHAPE(2, 8 * H)));
    t_attr_i(t, lstm, "hidden_size", H);
    t_attr_s(t, lstm, "direction", "bidirectional");
    bd_value *gy = t_val(t, SHAPE(T, 1, B, H));
    bd_node *gru = NODE(t, "GRU", gy, x, t_const(t, SHAPE(1, 3 * H, I)), t_const(t, SHAPE(1, 3 * H, H)),
                        t_const(t, SHAPE(1, 6 * H)));
    t_attr_i(t, gru, "hidden_size", H);
    t_attr_i(t, gru, "linear_before_reset", 1);
    t_output(t, ly);
    t_output(t, gy);
    assert_true(compile_with_each_failure(t) > 0);
    tg_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convolutions),
        cmocka_unit_test(test_recurrences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
