/* The SavedModel importer without TensorFlow: real SavedModels (TensorFlow-made, the fuzz
 * seeds in tests/fuzz/corpus/savedmodel) through bd_tf_savedmodel_import with a stand-in for
 * the TensorFlow engine's variable reads. Checks what braid asks TensorFlow for (the
 * variables, their types and the restored copies), the names clients see (the signature's
 * keys), what a failing reader and a missing signature give, and that nothing leaks (the
 * sanitizer build runs this suite). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "partitioner/tf/tf_import.h"

static const char *corpus;    /* tests/fuzz/corpus/savedmodel */
static char dir[64];

/* DIR/saved_model.pb := CORPUS/NAME.pb */
static void stage(const char *name)
{
    char src[1024], dst[128];
    snprintf(src, sizeof src, "%s/%s.pb", corpus, name);
    snprintf(dst, sizeof dst, "%s/saved_model.pb", dir);
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

typedef struct reads {
    int    calls;
    size_t n;
    char   names[16][128];
    char   restored[16][128];
    int    dtypes[16];
    int    fail;               /* answer with this error instead */
} reads;

/* Every variable reads as a float32 [1] of value 0.5 (the types are checked by the test). */
static int fake_read(void *ctx, bd_saved_variable *vars, size_t n, bd_error *err)
{
    reads *r = ctx;
    r->calls++;
    r->n = n;
    for (size_t i = 0; i < n && i < 16; i++) {
        snprintf(r->names[i], sizeof r->names[i], "%s", vars[i].node);
        snprintf(r->restored[i], sizeof r->restored[i], "%s", vars[i].restored ? vars[i].restored : "");
        r->dtypes[i] = vars[i].dtype;
    }
    if (r->fail)
        return bd_error_set(err, r->fail, "fake TensorFlow refuses");
    for (size_t i = 0; i < n; i++) {
        size_t es = bd_dtype_size(vars[i].dtype);
        vars[i].shape.rank = 1;
        vars[i].shape.dims[0] = 1;
        vars[i].nbytes = es;
        vars[i].data = calloc(1, es);
        if (vars[i].dtype == BD_DT_FLOAT)
            *(float *)vars[i].data = 0.5f;
    }
    return 0;
}

static bool has_name(const reads *r, const char *name)
{
    for (size_t i = 0; i < r->n && i < 16; i++)
        if (strcmp(r->names[i], name) == 0)
            return true;
    return false;
}

static void test_two_io_is_named_by_its_signature_keys(void **state)
{
    (void)state;
    stage("two_io");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), 0);
    assert_string_equal(bd_graph_platform(g), "tensorflow_savedmodel");
    assert_string_equal(bd_graph_framework(g), "tensorflow");
    assert_int_equal(bd_graph_num_inputs(g), 2);
    assert_string_equal(bd_graph_input(g, 0)->name, "a");
    assert_string_equal(bd_graph_input(g, 1)->name, "b");
    assert_int_equal(bd_graph_num_outputs(g), 2);
    assert_string_equal(bd_graph_output(g, 0)->name, "hidden");
    assert_string_equal(bd_graph_output(g, 1)->name, "total");
    /* one read of the three variables the serving function uses (w, b, v), all float */
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.n, 3);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.dtypes[i], BD_DT_FLOAT);
        assert_string_equal(r.restored[i], "");       /* tf.Module variables: restored as is */
    }
    /* functions inlined: no call, no variable op is left */
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const char *op = bd_graph_node(g, i)->op_type;
        assert_string_not_equal(op, "StatefulPartitionedCall");
        assert_string_not_equal(op, "ReadVariableOp");
        assert_string_not_equal(op, "VarHandleOp");
    }
    bd_graph_destroy(g);
}

static void test_other_signature_and_unknown_signature(void **state)
{
    (void)state;
    stage("nondefault");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, "scores", fake_read, &r, &g, &err), 0);
    assert_int_equal(bd_graph_num_inputs(g), 1);
    assert_string_equal(bd_graph_input(g, 0)->name, "features");
    assert_string_equal(bd_graph_output(g, 0)->name, "best");
    assert_string_equal(bd_graph_output(g, 1)->name, "probabilities");
    bd_graph_destroy(g);
    g = NULL;
    assert_int_equal(bd_tf_savedmodel_import(dir, "nope", fake_read, &r, &g, &err), BD_ENOTFOUND);
    assert_null(g);
    assert_non_null(strstr(err.msg, "no signature 'nope'"));
    assert_non_null(strstr(err.msg, "'scores'"));
    assert_non_null(strstr(err.msg, "'serving_default'"));
}

static void test_tf1_variables_and_resource_gather(void **state)
{
    (void)state;
    stage("tf1");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), 0);
    assert_int_equal(r.n, 2);                     /* VariableV2 w and b */
    assert_true(has_name(&r, "w") && has_name(&r, "b"));
    assert_string_equal(bd_graph_input(g, 0)->name, "x");
    assert_string_equal(bd_graph_output(g, 0)->name, "y");
    bd_graph_destroy(g);

    stage("embed");
    memset(&r, 0, sizeof r);
    g = NULL;
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), 0);
    assert_int_equal(r.n, 2);                     /* the table (ResourceGather) and w */
    bool gather = false;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        gather |= strstr(bd_graph_node(g, i)->op_type, "Gather") != NULL;
    assert_true(gather);
    bd_graph_destroy(g);
}

static void test_reader_failure_and_no_reader(void **state)
{
    (void)state;
    stage("two_io");
    reads r = { .fail = BD_EINVAL };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), BD_EINVAL);
    assert_null(g);
    assert_non_null(strstr(err.msg, "fake TensorFlow refuses"));
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, NULL, NULL, &g, &err), BD_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "3 variables"));
}

static void test_truncations_fail_cleanly(void **state)
{
    (void)state;
    char src[1024], dst[128];
    snprintf(src, sizeof src, "%s/two_io.pb", corpus);
    snprintf(dst, sizeof dst, "%s/saved_model.pb", dir);
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    static unsigned char data[1 << 16];
    size_t len = fread(data, 1, sizeof data, in);
    fclose(in);
    assert_true(len > 1000 && len < sizeof data);
    for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
        FILE *out = fopen(dst, "wb");
        assert_non_null(out);
        assert_int_equal(fwrite(data, 1, cut, out), cut);
        fclose(out);
        reads r = { 0 };
        bd_graph *g = NULL;
        bd_error err = { 0 };
        int rc = bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err);
        assert_int_not_equal(rc, 0);
        assert_null(g);
        assert_true(err.msg[0] != '\0');
    }
}

int main(int argc, char **argv)
{
    const char *root = getenv("BRAID_SOURCE_ROOT");
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/savedmodel", argc > 1 ? argv[1] : root ? root : ".");
    corpus = path;
    snprintf(dir, sizeof dir, "/tmp/braid-test-sm-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_io_is_named_by_its_signature_keys),
        cmocka_unit_test(test_other_signature_and_unknown_signature),
        cmocka_unit_test(test_tf1_variables_and_resource_gather),
        cmocka_unit_test(test_reader_failure_and_no_reader),
        cmocka_unit_test(test_truncations_fail_cleanly),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char pb[128];
    snprintf(pb, sizeof pb, "%s/saved_model.pb", dir);
    unlink(pb);
    rmdir(dir);
    return rc;
}
