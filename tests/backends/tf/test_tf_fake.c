/* The TensorFlow engine end to end against a FAKE libtensorflow (fake_tf.c — not
 * TensorFlow): library loading through the engine's configure(), supports(), one GraphDef import and
 * one session shared by two fallback steps, zero-copy feeds, static outputs copied into the
 * caller's buffer, a run-time-shaped output handed over (and copied when it is a view of an
 * input), TensorFlow errors reported with the step, and clean teardown (no live session or
 * tensor left). What this proves is braid's side of the C API contract; TensorFlow's own
 * behaviour is only checked by test_tf_live, with a real library. */
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
#include "backends/tf/tfb_session.h"
#include "runtime/model.h"
#include "tests/backends/tf/tf_fixture.h"

typedef struct fake_tf_stats {          /* as in fake_tf.c */
    int imports, sessions_live, runs, tensors_live, wrapped_inputs, intra_threads, last_graph_nodes;
} fake_tf_stats;

static const fake_tf_stats *stats(void)
{
    void *h = dlopen(getenv("FAKE_TF_LIB"), RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    const fake_tf_stats *(*get)(void);
    void *sym = dlsym(h, "fake_tf_get_stats");
    assert_non_null(sym);
    memcpy(&get, &sym, sizeof sym);
    dlclose(h);
    return get();
}

static DLTensor f32(float *data, int64_t *shape, int ndim)
{
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = ndim,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    return t;
}

typedef struct steps {
    fx_graph     fx;
    bd_node     *a_nodes[2], *b_nodes[1];
    bd_value    *a_in[1], *a_out[1], *b_in[1], *b_out[1];
    bd_subgraph  a, b;
} steps;

static void make_steps(steps *s)
{
    fx_build(&s->fx);
    s->a_nodes[0] = s->fx.n_neg;
    s->a_nodes[1] = s->fx.n_add;
    s->a_in[0] = s->fx.x;
    s->a_out[0] = s->fx.add;
    s->b_nodes[0] = s->fx.n_idn;
    s->b_in[0] = s->fx.mid;
    s->b_out[0] = s->fx.idn;
    s->a = (bd_subgraph){ s->fx.g, s->a_nodes, 2, s->a_in, 1, s->a_out, 1, 0, NULL };
    s->b = (bd_subgraph){ s->fx.g, s->b_nodes, 1, s->b_in, 1, s->b_out, 1, 0, NULL };
}

static void test_supports_tensorflow_nodes_with_a_nodedef(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    char why[160] = "";
    assert_true(bd_tf_backend.supports(fx.g, fx.n_neg, why, sizeof why));
    assert_true(bd_tf_backend.supports(fx.g, fx.n_idn, why, sizeof why));
    /* a mapped op with its NodeDef can fall back (e.g. oneDNN refused its attributes) */
    assert_true(bd_tf_backend.supports(fx.g, fx.n_mid, why, sizeof why));
    /* ... but not when braid reshaped its inputs */
    static const char *const two[] = { "add", "other" };
    fx_set_origin(fx.g, fx.n_mid, "mid", "Relu", two, 2, NULL, false);
    assert_false(bd_tf_backend.supports(fx.g, fx.n_mid, why, sizeof why));
    assert_non_null(strstr(why, "IR inputs differ from its NodeDef's"));
    /* not a TensorFlow graph / no NodeDef: not ours, and WHY is left to the others */
    strcpy(why, "oneDNN: op Foo");
    fx.n_neg->origin = NULL;
    assert_false(bd_tf_backend.supports(fx.g, fx.n_neg, why, sizeof why));
    bd_graph_set_framework(fx.g, "onnx");
    assert_false(bd_tf_backend.supports(fx.g, fx.n_idn, why, sizeof why));
    assert_string_equal(why, "oneDNN: op Foo");
    bd_graph_destroy(fx.g);
}

static void test_two_steps_share_one_session(void **state)
{
    (void)state;
    steps s;
    make_steps(&s);
    const fake_tf_stats *st = stats();
    int imports0 = st->imports;
    bd_error err = {0};
    bd_kernel *ka = NULL, *kb = NULL;
    if (bd_tf_backend.compile(&s.a, &ka, &err) || bd_tf_backend.compile(&s.b, &kb, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(st->imports, imports0 + 1);          /* one import for the model */
    assert_int_equal(st->last_graph_nodes, 6);
    assert_int_equal(st->sessions_live, 1);
    assert_int_equal(tfb_session_count(), 1);
    assert_int_equal(st->intra_threads, 2);               /* from the engine's configure() */

    bd_kernel_ctx *ca = NULL, *cb = NULL;
    assert_int_equal(bd_tf_backend.ctx_create(ka, &ca, &err), 0);
    assert_int_equal(bd_tf_backend.ctx_create(kb, &cb, &err), 0);

    _Alignas(64) float x[6] = { 1, 2, 3, 4, 5, 60 };
    _Alignas(64) float add[6], mid[6], want_add[6], want_mid[6];
    int64_t shape[2] = { 2, 3 };
    fx_expected(x, want_add, want_mid);
    for (int round = 0; round < 2; round++) {
        int wrapped0 = st->wrapped_inputs;
        DLTensor in = f32(x, shape, 2), out = f32(add, shape, 2);
        if (bd_tf_backend.run(ca, &in, 1, &out, 1, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(st->wrapped_inputs, wrapped0 + 1);   /* fed by pointer, no copy */
        assert_memory_equal(add, want_add, sizeof add);
        for (int i = 0; i < 6; i++)                           /* oneDNN's step, by hand */
            mid[i] = add[i] > 0 ? add[i] : 0;

        int64_t got_shape[BD_MAX_RANK] = {0};
        DLTensor in2 = f32(mid, shape, 2), out2 = f32(NULL, got_shape, -1);
        if (bd_tf_backend.run(cb, &in2, 1, &out2, 1, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(out2.ndim, 2);
        assert_int_equal(got_shape[0], 2);
        assert_int_equal(got_shape[1], 3);
        assert_non_null(out2.data);
        /* Identity returned a view of the fed buffer: the engine must hand over a copy */
        assert_ptr_not_equal(out2.data, mid);
        assert_memory_equal(out2.data, want_mid, sizeof want_mid);
        assert_int_equal(st->tensors_live, 1);               /* only the handed-over output */
    }
    bd_tf_backend.ctx_destroy(ca);
    bd_tf_backend.ctx_destroy(cb);
    assert_int_equal(st->tensors_live, 0);
    bd_tf_backend.release(ka);
    assert_int_equal(st->sessions_live, 1);                   /* still used by kb */
    bd_tf_backend.release(kb);
    assert_int_equal(st->sessions_live, 0);
    assert_int_equal(tfb_session_count(), 0);
    bd_graph_destroy(s.fx.g);
}

static void test_tensorflow_errors_name_the_step(void **state)
{
    (void)state;
    steps s;
    make_steps(&s);
    static const char *const in[] = { "mid" };
    fx_set_origin(s.fx.g, s.fx.n_idn, "idn", "GatherTree", in, 1, NULL, false);
    bd_error err = {0};
    bd_kernel *kb = NULL;
    bd_kernel_ctx *cb = NULL;
    if (bd_tf_backend.compile(&s.b, &kb, &err) || bd_tf_backend.ctx_create(kb, &cb, &err))
        fail_msg("%s", err.msg);
    float mid[6] = {0};
    int64_t shape[2] = { 2, 3 }, got[BD_MAX_RANK];
    DLTensor i = f32(mid, shape, 2), o = f32(NULL, got, -1);
    assert_int_equal(bd_tf_backend.run(cb, &i, 1, &o, 1, &err), BD_EBACKEND);
    assert_non_null(strstr(err.msg, "step from 'idn': tensorflow: running the fallback step: "
                                    "fake: op GatherTree (node 'idn') is not implemented"));
    bd_tf_backend.ctx_destroy(cb);
    bd_tf_backend.release(kb);
    assert_int_equal(stats()->tensors_live, 0);
    assert_int_equal(tfb_session_count(), 0);
    bd_graph_destroy(s.fx.g);
}

static void test_static_output_of_the_wrong_shape_is_an_error(void **state)
{
    (void)state;
    steps s;
    make_steps(&s);
    bd_error err = {0};
    bd_kernel *ka = NULL;
    bd_kernel_ctx *ca = NULL;
    if (bd_tf_backend.compile(&s.a, &ka, &err) || bd_tf_backend.ctx_create(ka, &ca, &err))
        fail_msg("%s", err.msg);
    float x[6] = {0}, y[6];
    int64_t shape[2] = { 2, 3 }, wrong[2] = { 3, 2 };
    DLTensor i = f32(x, shape, 2), o = f32(y, wrong, 2);
    assert_int_equal(bd_tf_backend.run(ca, &i, 1, &o, 1, &err), BD_EBACKEND);
    assert_non_null(strstr(err.msg, "output 'add' has shape [2,3]"));
    bd_tf_backend.ctx_destroy(ca);
    bd_tf_backend.release(ka);
    assert_int_equal(stats()->tensors_live, 0);
    bd_graph_destroy(s.fx.g);
}

/* Through the runtime (annotate, partition, plan, executor), with the engine as registered. */
static void test_model_runs_through_the_plan(void **state)
{
    (void)state;
    /* runtime/engines.c registers the engine: a model cannot reach it otherwise. */
    assert_non_null(bd_backend_find("tf"));
    fx_graph fx;
    fx_build(&fx);
    for (size_t i = 0; i < bd_graph_num_nodes(fx.g); i++)
        bd_graph_node(fx.g, i)->backend = -1;
    bd_model *m = NULL;
    bd_error err = {0};
    if (bd_model_from_graph(fx.g, NULL, &m, &err))
        fail_msg("%s", err.msg);
    float x[6] = { 1, 2, 3, 4, 5, 60 }, want_add[6], want_mid[6];
    int64_t shape[2] = { 2, 3 };
    DLTensor in = f32(x, shape, 2);
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err) ||
        bd_exec_run(e, &in, 1, &err))
        fail_msg("%s", err.msg);
    printf("plan: %zu step(s)\n", bd_plan_num_steps(p));
    fx_expected(x, want_add, want_mid);
    const DLTensor *out = bd_exec_output(e, 0);
    assert_int_equal(out->ndim, 2);
    assert_memory_equal(out->data, want_mid, sizeof want_mid);
    bd_exec_destroy(e);
    bd_model_close(m);
    assert_int_equal(tfb_session_count(), 0);
}

int main(void)
{
    bd_error err = {0};
    if (bd_tf_backend.configure(&(bd_engine_config){ .library = getenv("FAKE_TF_LIB"), .threads = 2 }, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char why[256];
    if (!bd_tf_available(why, sizeof why)) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    printf("loaded FAKE libtensorflow (%s)\n", bd_tf_version());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supports_tensorflow_nodes_with_a_nodedef),
        cmocka_unit_test(test_two_steps_share_one_session),
        cmocka_unit_test(test_tensorflow_errors_name_the_step),
        cmocka_unit_test(test_static_output_of_the_wrong_shape_is_an_error),
        cmocka_unit_test(test_model_runs_through_the_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
