/* The ORT engine without ONNX Runtime: configured to a library that does not exist, it
 * refuses every node with a reason naming the library and how to get it, and compile fails
 * the same way. Its own process, because a process loads ORT at most once. Never skipped. */
#include "tests/backends/ort/ort_testlib.h"

#define BOGUS "/nonexistent/braid-test/libonnxruntime.so.1"

static void test_absent_library_is_named(void **state)
{
    (void)state;
    bd_error err = { 0 };
    assert_int_equal(bd_ort_backend.configure(&(bd_engine_config){ .library = BOGUS, .threads = 1 }, &err), 0);

    char why[160];
    assert_false(bd_ort_available(why, sizeof why));
    assert_null(bd_ort_version());
    print_message("reason: %s\n", why);
    assert_non_null(strstr(why, "ONNX Runtime not available"));
    assert_non_null(strstr(why, "libonnxruntime.so.1"));
    assert_non_null(strstr(why, "fetch_ort.sh"));

    bd_graph *g = bd_graph_create("absent");
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(4));
    bd_value *y = val(g, "Y", BD_DT_FLOAT, SHP(4));
    bd_node *n = node(g, "nz", "NonZero", &x, 1, &y, 1);
    char reason[160] = "";
    assert_false(bd_ort_backend.supports(g, n, reason, sizeof reason));
    assert_string_equal(reason, why);

    bd_node *nodes[1];
    bd_subgraph sg = whole(g, nodes, &x, 1, &y, 1);
    bd_kernel *k = NULL;
    assert_int_equal(bd_ort_backend.compile(&sg, &k, &err), BD_EUNSUPPORTED);
    assert_null(k);
    assert_non_null(strstr(err.msg, "libonnxruntime.so.1"));
    bd_graph_destroy(g);
}

/* The default message, when nothing is configured and nothing is found. */
static void test_default_search_message(void **state)
{
    (void)state;
    bd_error err = { 0 };
    setenv("HOME", "/nonexistent/braid-home", 1);
    unsetenv("BRAID_ORT_DIR");
    unsetenv("BRAID_ORT_LIBRARY");
    assert_int_equal(bd_ort_backend.configure(&(bd_engine_config){ .library = NULL, .threads = 1 }, &err), 0);
    char why[160];
    if (bd_ort_available(why, sizeof why)) {
        print_message("SKIPPED: libonnxruntime.so.1 is on the loader's path here\n");
        skip();
    }
    assert_string_equal(why, "ONNX Runtime not available: libonnxruntime.so.1 not found "
                             "(run scripts/fetch_ort.sh or set BRAID_ORT_LIBRARY)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent_library_is_named),
        cmocka_unit_test(test_default_search_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
