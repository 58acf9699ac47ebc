/* Models of an ONNX opset outside braid's oneDNN mapping (7-17) run whole on the ONNX Runtime
 * fallback: oneDNN declines every node naming the opset (the same node at opset 13 it takes,
 * and TensorFlow graphs are not judged by it), and the result is ORT's. Runs skip visibly
 * when libonnxruntime.so.1 is absent. */
#include <math.h>

#include "tests/backends/ort/ort_testlib.h"

#include "backends/dnnl/dnnl_backend.h"
#include "runtime/model.h"

/* Y = Elu(X) at opset 6 (ONNX Runtime has no kernels for opsets below 7 of many ops, Add
 * among them, but keeps Elu-6). */
static bd_graph *elu6(void)
{
    bd_graph *g = bd_graph_create("elu6");
    bd_graph_set_opset(g, 6);
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(2, 3, 4));
    bd_value *y = val(g, "Y", BD_DT_FLOAT, SHP(2, 3, 4));
    attr(g, node(g, "elu", "Elu", &x, 1, &y, 1),
         (bd_attr){ .name = "alpha", .type = BD_ATTR_FLOAT, .f = 0.5f });
    bd_error err = { 0 };
    assert_int_equal(bd_graph_mark_output(g, y, &err), 0);
    return g;
}

static void test_dnnl_declines_nodes_of_other_opsets(void **state)
{
    (void)state;
    static const int64_t outside[] = { 1, 6, 18, 21 };
    char why[160];
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        bd_graph *g = bd_graph_create("o");
        bd_graph_set_opset(g, outside[i]);
        bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(2, 8)), *y = val(g, "Y", BD_DT_FLOAT, SHP(2, 8));
        bd_node *relu = node(g, "relu", "Relu", &x, 1, &y, 1);
        why[0] = '\0';
        assert_false(bd_dnnl_backend.supports(g, relu, why, sizeof why));
        char want[96];
        snprintf(want, sizeof want, "opset %lld is outside the oneDNN mapping (7-17)",
                 (long long)outside[i]);
        assert_string_equal(why, want);
        bd_graph_set_opset(g, 13);                       /* the same node at opset 13 */
        assert_true(bd_dnnl_backend.supports(g, relu, why, sizeof why));
        bd_graph_set_opset(g, 900);                      /* TensorFlow records its producer */
        bd_graph_set_framework(g, "tensorflow");
        assert_true(bd_dnnl_backend.supports(g, relu, why, sizeof why));
        bd_graph_destroy(g);
    }
}

static void test_opset6_model_runs_whole_on_ort(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    bd_model *m = NULL;
    bd_error err = { 0 };
    /* oneDNN and ORT only: braid's native engine takes old opsets' Elu too */
    bd_model_options o = { .engine = "dnnl,ort" };
    if (bd_model_from_graph(elu6(), &o, &m, &err))
        fail_msg("open: %s", err.msg);
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)(i - 12) / 4.0f;
    int64_t xs[] = { 2, 3, 4 };
    DLTensor in = tensor(x, BD_DT_FLOAT, 3, xs);
    const bd_plan *p;
    bd_exec *e;
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err))
        fail_msg("plan: %s", err.msg);
    const bd_partition_report *rep = bd_plan_partition(p);
    assert_int_equal(rep->n_subgraphs, 1);
    assert_string_equal(rep->subgraphs[0].backend, "ort");
    assert_int_equal(rep->n_fallback, 1);
    print_message("elu: %s: %s\n", rep->fallback[0].reason, rep->fallback[0].detail);
    assert_non_null(strstr(rep->fallback[0].detail, "opset 6 is outside the oneDNN mapping"));
    if (bd_exec_run(e, &in, 1, &err))
        fail_msg("run: %s", err.msg);
    const DLTensor *y = bd_exec_output(e, 0);
    assert_int_equal(y->ndim, 3);
    const float *yv = y->data;
    for (int i = 0; i < 24; i++) {
        float want = x[i] >= 0 ? x[i] : 0.5f * (expf(x[i]) - 1.0f);
        assert_true(fabsf(yv[i] - want) < 1e-6f);
    }
    bd_exec_destroy(e);
    bd_model_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dnnl_declines_nodes_of_other_opsets),
        cmocka_unit_test(test_opset6_model_runs_whole_on_ort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
