/* Without TensorFlow: the engine declines every node with a reason that names the library
 * and how to provide it, compile() fails the same way, and (the engine being registered in
 * runtime/engines.c) a model with GatherTree or control flow fails to load naming those ops
 * and the missing library. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/engines.h"
#include "backends/tf/tf_backend.h"
#include "runtime/model.h"
#include "tests/backends/tf/tf_fixture.h"

/* meson runs this test with BRAID_TF_VENV pointing nowhere, so the default search (the
 * loader path, then the venv) fails unless a libtensorflow.so.2 is installed system-wide. */
#define NO_VENV "TensorFlow fallback not available: libtensorflow.so.2 not found, nor " \
                "tensorflow-cpu in /nonexistent/braid-tf-venv (run scripts/fetch_tf.sh, or " \
                "set BRAID_LIBTENSORFLOW)"

static void test_default_search_names_the_library(void **state)
{
    (void)state;
    void *real = dlopen("libtensorflow.so.2", RTLD_NOW | RTLD_LOCAL);
    const char *venv = getenv("BRAID_TF_VENV");
    if (real || getenv("BRAID_LIBTENSORFLOW") || !venv || strcmp(venv, "/nonexistent/braid-tf-venv")) {
        if (real)
            dlclose(real);
        printf("SKIPPED: a libtensorflow.so.2 is reachable here (or BRAID_TF_VENV is not "
               "/nonexistent/braid-tf-venv); the not-found message is not tested\n");
        skip();
    }
    assert_int_equal(bd_tf_backend.configure(&(bd_engine_config){ 0 }, NULL), 0);
    fx_graph fx;
    fx_build(&fx);
    char why[320] = "";
    assert_false(bd_tf_backend.supports(fx.g, fx.n_idn, why, sizeof why));
    assert_string_equal(why, NO_VENV);
    /* a mapped node oneDNN refused keeps oneDNN's reason first */
    strcpy(why, "attribute foo unsupported");
    assert_false(bd_tf_backend.supports(fx.g, fx.n_mid, why, sizeof why));
    assert_string_equal(why, "attribute foo unsupported; " NO_VENV);
    bd_graph_destroy(fx.g);
}

static void test_explicit_path_is_named(void **state)
{
    (void)state;
    bd_engine_config cfg = { .library = "/nonexistent/dir/libtensorflow.so.2" };
    assert_int_equal(bd_tf_backend.configure(&cfg, NULL), 0);
    fx_graph fx;
    fx_build(&fx);
    char why[160] = "";
    assert_false(bd_tf_backend.supports(fx.g, fx.n_idn, why, sizeof why));
    assert_string_equal(why, "TensorFlow fallback not available: libtensorflow.so.2 not found at "
                             "'/nonexistent/dir/libtensorflow.so.2'");
    assert_false(bd_tf_available(NULL, 0));
    assert_null(bd_tf_version());

    bd_node *nodes[1] = { fx.n_idn };
    bd_value *in[1] = { fx.mid }, *out[1] = { fx.idn };
    bd_subgraph sg = { fx.g, nodes, 1, in, 1, out, 1, 0, NULL };
    bd_kernel *k = NULL;
    bd_error err = {0};
    assert_int_equal(bd_tf_backend.compile(&sg, &k, &err), BD_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "libtensorflow.so.2 not found"));
    assert_null(k);
    bd_graph_destroy(fx.g);
}

/* x [2,3] -> Relu (oneDNN) -> GatherTree (tf) -> LoopCond (tf) -> output */
static void test_model_with_gathertree_fails_to_load(void **state)
{
    (void)state;
    /* runtime/engines.c registers the engine: a model cannot reach it otherwise. */
    assert_non_null(bd_backend_find("tf"));
    bd_engine_config cfg = { .library = "/nonexistent/libtensorflow.so.2" };
    assert_int_equal(bd_tf_backend.configure(&cfg, NULL), 0);
    bd_graph *g = bd_graph_create("beam");
    bd_graph_set_framework(g, "tensorflow");
    int64_t d23[2] = { 2, 3 };
    bd_shape s23 = bd_shape_make(2, d23), unknown = { .rank = -1 };
    bd_value *x, *r, *gt, *lc;
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, &s23, &x, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "r", BD_DT_FLOAT, &s23, &r, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "gt", BD_DT_FLOAT, &unknown, &gt, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "lc", BD_DT_BOOL, &unknown, &lc, NULL), 0);
    assert_int_equal(bd_graph_mark_input(g, x, NULL), 0);
    assert_int_equal(bd_graph_mark_output(g, lc, NULL), 0);
    bd_node *n;
    assert_int_equal(bd_graph_add_node(g, "r", "Relu", "", &x, 1, &r, 1, &n, NULL), 0);
    assert_int_equal(bd_graph_add_node(g, "gt", "GatherTree", "tf", &r, 1, &gt, 1, &n, NULL), 0);
    static const char *const r_in[] = { "r" }, *const gt_in[] = { "gt" };
    fx_set_origin(g, n, "gt", "GatherTree", r_in, 1, NULL, false);
    assert_int_equal(bd_graph_add_node(g, "lc", "LoopCond", "tf", &gt, 1, &lc, 1, &n, NULL), 0);
    fx_set_origin(g, n, "lc", "LoopCond", gt_in, 1, NULL, false);

    bd_model *m = NULL;
    bd_error err = {0};
    int rc = bd_model_from_graph(g, NULL, &m, &err);
    if (rc == 0) {
        float xv[6] = {0};
        DLTensor t = { .data = xv, .device = { kDLCPU, 0 }, .ndim = 2,
                       .dtype = { kDLFloat, 32, 1 }, .shape = d23 };
        const bd_plan *p = NULL;
        rc = bd_model_plan(m, &t, 1, &p, &err);
        bd_model_close(m);
    }
    printf("load error: %s\n", err.msg);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.msg, "GatherTree"));
    assert_non_null(strstr(err.msg, "LoopCond"));
    assert_non_null(strstr(err.msg, "libtensorflow.so.2 not found"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_search_names_the_library),
        cmocka_unit_test(test_explicit_path_is_named),
        cmocka_unit_test(test_model_with_gathertree_fails_to_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
