/* The engine against a REAL libtensorflow.so.2: runs only when one is found
 * ($BRAID_LIBTENSORFLOW, else the default library path); otherwise prints a SKIPPED line and
 * exits 77 (meson's SKIP). The fixture's two fallback steps (Neg + AddV2 with a Const; an
 * Identity with a run-time shape) run through one real session and are checked against the
 * values computed here. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/tf/tf_backend.h"
#include "backends/tf/tf_session.h"
#include "tests/backends/tf/tf_fixture.h"

static DLTensor f32(float *data, int64_t *shape, int ndim)
{
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = ndim,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    return t;
}

static void test_fixture_runs_in_real_tensorflow(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    bd_node *a_nodes[2] = { fx.n_neg, fx.n_add }, *b_nodes[1] = { fx.n_idn };
    bd_value *a_in[1] = { fx.x }, *a_out[1] = { fx.add }, *b_in[1] = { fx.mid }, *b_out[1] = { fx.idn };
    bd_subgraph a = { fx.g, a_nodes, 2, a_in, 1, a_out, 1 };
    bd_subgraph b = { fx.g, b_nodes, 1, b_in, 1, b_out, 1 };
    bd_kernel *ka = NULL, *kb = NULL;
    bd_kernel_ctx *ca = NULL, *cb = NULL;
    bd_error err = {0};
    if (bd_tf_backend.compile(&a, &ka, &err) || bd_tf_backend.compile(&b, &kb, &err) ||
        bd_tf_backend.ctx_create(ka, &ca, &err) || bd_tf_backend.ctx_create(kb, &cb, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(tf_session_count(), 1);
    _Alignas(64) float x[6] = { 1, 2, 3, 4, 5, 60 }, add[6], mid[6], want_add[6], want_mid[6];
    int64_t shape[2] = { 2, 3 }, got[BD_MAX_RANK] = {0};
    fx_expected(x, want_add, want_mid);
    DLTensor i = f32(x, shape, 2), o = f32(add, shape, 2);
    if (bd_tf_backend.run(ca, &i, 1, &o, 1, &err))
        fail_msg("%s", err.msg);
    assert_memory_equal(add, want_add, sizeof add);
    for (int k = 0; k < 6; k++)
        mid[k] = add[k] > 0 ? add[k] : 0;
    DLTensor i2 = f32(mid, shape, 2), o2 = f32(NULL, got, -1);
    if (bd_tf_backend.run(cb, &i2, 1, &o2, 1, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(o2.ndim, 2);
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], 3);
    assert_memory_equal(o2.data, want_mid, sizeof want_mid);
    bd_tf_backend.ctx_destroy(ca);
    bd_tf_backend.ctx_destroy(cb);
    bd_tf_backend.release(ka);
    bd_tf_backend.release(kb);
    assert_int_equal(tf_session_count(), 0);
    bd_graph_destroy(fx.g);
}

int main(void)
{
    const char *env = getenv("BRAID_LIBTENSORFLOW");
    if (!env || !env[0]) {
        void *h = dlopen("libtensorflow.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            printf("SKIPPED: tf_live: no libtensorflow.so.2 found (set "
                   "BRAID_LIBTENSORFLOW=/path/libtensorflow.so.2 to run the live TensorFlow tests)\n");
            return 77;
        }
        dlclose(h);
    }
    char why[512];
    if (!bd_tf_available(why, sizeof why)) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    printf("live TensorFlow %s\n", bd_tf_version());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_runs_in_real_tensorflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
