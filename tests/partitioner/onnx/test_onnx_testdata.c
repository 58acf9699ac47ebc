/* Every node model of the ONNX backend test suite (libonnx-testdata) goes through the
 * importer: none may crash, every failure carries a message, and most import. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "partitioner/onnx/onnx_import.h"

#define TESTDATA "/usr/share/libonnx-testdata/data/node/*/model.onnx"

static void test_import_every_onnx_node_test_model(void **state)
{
    (void)state;
    glob_t gl;
    if (glob(TESTDATA, 0, NULL, &gl) != 0) {
        print_message("no models under %s (libonnx-testdata missing)\n", TESTDATA);
        skip();
    }
    size_t ok = 0, by_code[16] = { 0 };
    for (size_t i = 0; i < gl.gl_pathc && i < 100000; i++) {
        bd_graph *g = NULL;
        bd_error err = { 0 };
        int rc = bd_onnx_import_file(gl.gl_pathv[i], &g, &err);
        if (rc == 0) {
            assert_non_null(g);
            assert_true(bd_graph_num_outputs(g) > 0);
            ok++;
        } else {
            assert_null(g);
            if (!err.msg[0])
                fail_msg("%s: %s without a message", gl.gl_pathv[i], bd_status_name(rc));
            if (getenv("BRAID_VERBOSE"))
                print_message("%s: %s\n", bd_status_name(rc), err.msg);
            by_code[-rc < 16 ? -rc : 15]++;
        }
        bd_graph_destroy(g);
    }
    print_message("libonnx-testdata: %zu of %zu node models imported; failed: %zu EMODEL, "
                  "%zu EUNSUPPORTED, %zu other\n", ok, gl.gl_pathc, by_code[-BD_EMODEL],
                  by_code[-BD_EUNSUPPORTED],
                  gl.gl_pathc - ok - by_code[-BD_EMODEL] - by_code[-BD_EUNSUPPORTED]);
    assert_true(ok * 4 >= gl.gl_pathc * 3);   /* most of them */
    globfree(&gl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_every_onnx_node_test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
