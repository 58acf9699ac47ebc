/* tf_encode_view (partitioner/tf/tf_encode.c): a TF.js node re-encoded as the NodeDef
 * TensorFlow runs. TensorFlow refuses a _FusedConv2D without TArgs, which the TF.js converter
 * leaves out: the encoder adds num_args entries of T — and, for a hostile num_args (negative
 * or past the 8 a fused conv can have), adds none and still encodes (TensorFlow then refuses
 * the node by name, an INVALID_ARGUMENT at load, tested with the live engine). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "partitioner/tf/tf_internal.h"

/* How many times NEEDLE occurs in the N bytes at P. */
static int count(const void *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    int c = 0;
    for (size_t i = 0; i + k <= n; i++)
        c += memcmp((const char *)p + i, needle, k) == 0;
    return c;
}

/* The NodeDef of a _FusedConv2D (T = DT_FLOAT) with NUM_ARGS (absent when INT64_MIN) and,
 * when GIVEN_TARGS, its own TArgs. */
static void encode(bd_graph *g, int64_t num_args, bool given_targs, const void **out, size_t *len)
{
    static const char *inputs[] = { "x", "w", "b" };
    static int float_types[] = { 1 };
    tf_attr attrs[3] = {
        { .key = "T", .kind = TF_ATTR_TYPE, .type = 1 },
        { .key = "num_args", .kind = TF_ATTR_I, .i = num_args },
        { .key = "TArgs", .kind = TF_ATTR_LIST },
    };
    attrs[2].list.type = float_types;
    attrs[2].list.n_type = 1;
    tf_nodeview v = { .name = "conv", .op = "_FusedConv2D", .inputs = inputs, .n_inputs = 3,
                      .attrs = attrs, .n_attrs = num_args == INT64_MIN ? 1 : given_targs ? 3 : 2 };
    bd_error err = { 0 };
    if (tf_encode_view(g, &v, out, len, &err))
        fail_msg("tf_encode_view: %s", err.msg);
}

static void test_fused_conv_gets_targs(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("encode");
    const void *nd;
    size_t len;
    encode(g, 1, false, &nd, &len);
    assert_int_equal(count(nd, len, "TArgs"), 1);
    assert_int_equal(count(nd, len, "num_args"), 1);
    encode(g, 1, true, &nd, &len);              /* given already: not written twice */
    assert_int_equal(count(nd, len, "TArgs"), 1);
    bd_graph_destroy(g);
}

static void test_hostile_num_args_encodes_without_targs(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("encode");
    const int64_t hostile[] = { -1, 9, INT64_MAX, INT64_MIN + 1 };
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        const void *nd;
        size_t len;
        encode(g, hostile[i], false, &nd, &len);
        assert_true(len > 0);
        assert_int_equal(count(nd, len, "TArgs"), 0);
        assert_int_equal(count(nd, len, "num_args"), 1);   /* kept as given, for TF to judge */
    }
    const void *nd;
    size_t len;
    encode(g, INT64_MIN, false, &nd, &len);       /* no num_args at all */
    assert_int_equal(count(nd, len, "TArgs"), 0);
    bd_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_conv_gets_targs),
        cmocka_unit_test(test_hostile_num_args_encodes_without_targs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
