/* The engine registry (runtime/engines.h) as the partitioner relies on it: every engine has a
 * kind, exactly one is the fast path and it is the first offered every node; and engine
 * configuration: bd_engines_configure reaches an engine's configure() hook, and refuses a name
 * no engine has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/ort/ort_backend.h"
#include "partitioner/passes/partition.h"
#include "runtime/engines.h"

static void test_exactly_one_fast_path_and_it_comes_first(void **state)
{
    (void)state;
    size_t nb, n_fast = 0;
    const bd_backend *const *b = bd_backends(&nb);
    assert_true(nb >= 2);
    assert_true(nb <= BD_PLACE_MAX_BACKENDS);
    for (size_t i = 0; i < nb; i++) {
        assert_non_null(b[i]->name);
        assert_true(b[i]->kind == BD_ENGINE_FAST_PATH || b[i]->kind == BD_ENGINE_NATIVE ||
                    b[i]->kind == BD_ENGINE_FALLBACK);
        n_fast += b[i]->kind == BD_ENGINE_FAST_PATH;
        assert_ptr_equal(bd_backend_find(b[i]->name), b[i]);
        /* annotation order: the fast path, then native engines, then the fallbacks */
        if (i > 0)
            assert_true(b[i - 1]->kind <= b[i]->kind);
    }
    assert_int_equal(n_fast, 1);
    assert_ptr_equal(bd_engines_fast_path(), b[0]);
    assert_null(bd_backend_find("tvm"));
}

/* A plain static Relu is the fast path's: annotation offers it the node before anyone else. */
static void test_annotation_offers_the_fast_path_first(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("relu");
    int64_t dims[] = { 1, 8 };
    bd_shape s = bd_shape_make(2, dims);
    bd_value *x, *y;
    bd_node *relu;
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, &s, &x, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "y", BD_DT_FLOAT, &s, &y, NULL), 0);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    assert_int_equal(bd_graph_add_node(g, "relu", "Relu", "", &x, 1, &y, 1, &relu, NULL), 0);
    assert_int_equal(bd_graph_validate(g, NULL), 0);
    size_t nb;
    const bd_backend *const *b = bd_backends(&nb);
    bd_node_place pl[1];
    assert_int_equal(bd_annotate(g, b, nb, NULL, pl, NULL), 0);
    assert_true(relu->backend >= 0);
    assert_ptr_equal(b[relu->backend], bd_engines_fast_path());
    assert_int_equal(pl[relu->index].reason[relu->backend], BD_REASON_NONE);
    bd_graph_destroy(g);
}

static void test_configure_reaches_the_hook(void **state)
{
    (void)state;
    static const char bogus[] = "/nonexistent/braid-test/libonnxruntime.so.1";
    bd_error err = { 0 };
    assert_int_equal(bd_engines_configure("ort", &(bd_engine_config){ .library = bogus, .threads = 1 }, &err), 0);
    char why[256] = "";
    assert_false(bd_ort_available(why, sizeof why));
    if (!strstr(why, bogus))
        fail_msg("the configured library is not the one ORT tried: %s", why);
    /* an engine without a hook has nothing to configure */
    const bd_backend *fast = bd_engines_fast_path();
    if (!fast->configure)
        assert_int_equal(bd_engines_configure(fast->name, &(bd_engine_config){ 0 }, &err), 0);
}

static void test_configure_unknown_engine_fails_cleanly(void **state)
{
    (void)state;
    bd_error err = { 0 };
    assert_int_equal(bd_engines_configure("tvm", &(bd_engine_config){ .library = "/x.so" }, &err), BD_EINVAL);
    assert_int_equal(err.code, BD_EINVAL);
    assert_non_null(strstr(err.msg, "'tvm'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: configuring fails once an engine has loaded its library from elsewhere */
        cmocka_unit_test(test_configure_reaches_the_hook),
        cmocka_unit_test(test_configure_unknown_engine_fails_cleanly),
        cmocka_unit_test(test_exactly_one_fast_path_and_it_comes_first),
        cmocka_unit_test(test_annotation_offers_the_fast_path_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
