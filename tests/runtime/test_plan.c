/* Plans end to end with the real backend table: the q/k/v merge and its Split on oneDNN,
 * forced placement, the cost rule, the partition report, run-time shapes through the
 * executor. Cases needing ONNX Runtime are skipped when libonnxruntime.so.1 is absent. */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/ort/ort_backend.h"
#include "runtime/model.h"
#include "tests/lib/tl_graph.h"

static DLTensor input_tensor(float *data, int ndim, int64_t *shape)
{
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = ndim, .shape = shape,
                   .dtype = { kDLFloat, 32, 1 } };
    return t;
}

static bool have_ort(void)
{
    char why[256];
    if (bd_ort_available(why, sizeof why))
        return true;
    printf("    (skipped: %s)\n", why);
    return false;
}

/* ---- q/k/v merge on oneDNN ---------------------------------------------------------------- */

#define M 3
#define K 8
static const int64_t qkv_n[3] = { 4, 6, 2 };

static void qkv_weights(int i, float *w, float *b)
{
    for (int j = 0; j < K * qkv_n[i]; j++)
        w[j] = sinf((float)(7 * i + j)) * 0.5f;
    for (int j = 0; j < qkv_n[i]; j++)
        b[j] = 0.1f * (float)(i - j);
}

static bd_graph *qkv_model(void)
{
    bd_graph *g = bd_graph_create("qkv");
    bd_graph_set_opset(g, 13);
    int64_t xd[] = { 1, M, K };
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 3, xd);
    bd_graph_mark_input(g, x, NULL);
    const char *names[3] = { "q", "k", "v" };
    for (int i = 0; i < 3; i++) {
        char buf[32];
        int64_t wd[] = { K, qkv_n[i] }, yd[] = { 1, M, qkv_n[i] };
        float w[K * 6], b[6];
        qkv_weights(i, w, b);
        snprintf(buf, sizeof buf, "w%s", names[i]);
        bd_value *wv = tl_const(g, buf, BD_DT_FLOAT, 2, wd, w);
        snprintf(buf, sizeof buf, "b%s", names[i]);
        bd_value *bv = tl_const(g, buf, BD_DT_FLOAT, 1, &qkv_n[i], b);
        snprintf(buf, sizeof buf, "%s_mm", names[i]);
        bd_value *y = tl_value(g, buf, BD_DT_FLOAT, 3, yd);
        tl_op(g, buf, "MatMul", (bd_value *[]){ x, wv }, 2, y);
        bd_value *out = tl_value(g, names[i], BD_DT_FLOAT, 3, yd);
        snprintf(buf, sizeof buf, "%s_add", names[i]);
        tl_op(g, buf, "Add", (bd_value *[]){ y, bv }, 2, out);
        bd_graph_mark_output(g, out, NULL);
    }
    return g;
}

static void test_qkv_merge_runs_on_dnnl(void **state)
{
    bd_model *m;
    bd_error err = { 0 };
    assert_int_equal(bd_model_from_graph(qkv_model(), NULL, &m, &err), 0);
    float x[M * K];
    for (int i = 0; i < M * K; i++)
        x[i] = cosf((float)i);
    int64_t xs[] = { 1, M, K };
    DLTensor in = input_tensor(x, 3, xs);
    const bd_plan *p;
    assert_int_equal(bd_model_plan(m, &in, 1, &p, &err), 0);
    const bd_graph *g = bd_plan_graph(p);
    assert_int_equal(bd_plan_num_steps(p), 1);
    assert_int_equal(bd_graph_num_nodes(g), 2);          /* MatMul+Add, Split */
    assert_string_equal(bd_graph_node(g, 1)->op_type, "Split");
    assert_int_equal(bd_plan_partition(p)->n_fallback, 0);

    bd_exec *e;
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    assert_int_equal(bd_exec_run(e, &in, 1, &err), 0);
    for (int i = 0; i < 3; i++) {
        const DLTensor *y = bd_exec_output(e, (size_t)i);
        const float *yd = y->data;
        float w[K * 6], b[6];
        qkv_weights(i, w, b);
        for (int r = 0; r < M; r++)
            for (int c = 0; c < qkv_n[i]; c++) {
                float want = b[c];
                for (int k = 0; k < K; k++)
                    want += x[r * K + k] * w[k * qkv_n[i] + c];
                assert_float_equal(yd[r * qkv_n[i] + c], want, 1e-4);
            }
    }
    bd_exec_destroy(e);
    bd_model_close(m);
}

/* ---- forced placement, cost rule, report ---------------------------------------------- */

/* x[2,16] -> MatMul(w[16,16]) -> Softmax -> Relu -> Softmax -> y */
static bd_graph *chain_model(void)
{
    bd_graph *g = bd_graph_create("chain");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { 2, 16 }, wd[] = { 16, 16 };
    float w[256];
    for (int i = 0; i < 256; i++)
        w[i] = 0.05f * sinf((float)i);
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 2, d), *a = tl_value(g, "a", BD_DT_FLOAT, 2, d),
             *b = tl_value(g, "b", BD_DT_FLOAT, 2, d), *c = tl_value(g, "c", BD_DT_FLOAT, 2, d),
             *y = tl_value(g, "y", BD_DT_FLOAT, 2, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "mm", "MatMul", (bd_value *[]){ x, tl_const(g, "w", BD_DT_FLOAT, 2, wd, w) }, 2, a);
    tl_op(g, "sm1", "Softmax", &a, 1, b);
    tl_op(g, "relu", "Relu", &b, 1, c);
    tl_op(g, "sm2", "Softmax", &c, 1, y);
    return g;
}

static void chain_reference(const float *x, float *y)
{
    float a[32];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 16; c++) {
            a[r * 16 + c] = 0;
            for (int k = 0; k < 16; k++)
                a[r * 16 + c] += x[r * 16 + k] * 0.05f * sinf((float)(k * 16 + c));
        }
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < 2; r++) {
            float mx = -INFINITY, s = 0;
            for (int c = 0; c < 16; c++)
                mx = fmaxf(mx, a[r * 16 + c]);
            for (int c = 0; c < 16; c++)
                s += expf(a[r * 16 + c] - mx);
            for (int c = 0; c < 16; c++) {
                float v = expf(a[r * 16 + c] - mx) / s;
                a[r * 16 + c] = pass == 0 ? fmaxf(v, 0) : v;
            }
        }
    memcpy(y, a, sizeof a);
}

/* Plan CHAIN with OPTS, run it, compare with the reference; returns the plan's model. */
static bd_model *run_chain(const bd_model_options *opts, const bd_plan **plan)
{
    bd_model *m;
    bd_error err = { 0 };
    int rc = bd_model_from_graph(chain_model(), opts, &m, &err);
    if (rc)
        fail_msg("open: %s", err.msg);
    float x[32], want[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)(i % 7) - 3;
    chain_reference(x, want);
    int64_t xs[] = { 2, 16 };
    DLTensor in = input_tensor(x, 2, xs);
    if (bd_model_plan(m, &in, 1, plan, &err))
        fail_msg("plan: %s", err.msg);
    bd_exec *e;
    assert_int_equal(bd_exec_create(*plan, &e, &err), 0);
    for (int round = 0; round < 2; round++) {       /* a second run reuses everything */
        if (bd_exec_run(e, &in, 1, &err))
            fail_msg("run: %s", err.msg);
        const float *y = bd_exec_output(e, 0)->data;
        for (int i = 0; i < 32; i++)
            assert_float_equal(y[i], want[i], 1e-5);
    }
    bd_exec_destroy(e);
    return m;
}

static void test_all_on_dnnl_by_default(void **state)
{
    const bd_plan *p;
    bd_model *m = run_chain(NULL, &p);
    const bd_partition_report *r = bd_plan_partition(p);
    assert_int_equal(r->n_subgraphs, 1);
    assert_string_equal(r->subgraphs[0].backend, "dnnl");
    assert_int_equal(r->subgraphs[0].n_nodes, 4);
    assert_int_equal(r->n_fallback, 0);
    bd_model_close(m);
}

static void test_forced_softmax_alternates_engines(void **state)
{
    if (!have_ort())
        skip();
    const bd_plan *p;
    bd_model_options o = { .fallback_ops = "Softmax", .min_dnnl_region_flops = -1 };
    bd_model *m = run_chain(&o, &p);
    const bd_partition_report *r = bd_plan_partition(p);
    assert_int_equal(r->n_subgraphs, 4);
    const char *want[] = { "dnnl", "ort", "dnnl", "ort" };
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(r->subgraphs[i].backend, want[i]);
        assert_int_equal(r->subgraphs[i].n_inputs, 1);
        assert_int_equal(r->subgraphs[i].n_outputs, 1);
    }
    assert_string_equal(r->subgraphs[1].inputs[0]->name, "a");
    assert_int_equal(r->n_fallback, 2);
    assert_string_equal(r->fallback[0].node, "sm1");
    assert_string_equal(r->fallback[0].backend, "ort");
    assert_string_equal(r->fallback[0].reason, "forced");
    bd_model_close(m);
}

static void test_cost_rule_folds_small_islands_into_ort(void **state)
{
    if (!have_ort())
        skip();
    const bd_plan *p;
    bd_model_options o = { .fallback_ops = "Softmax" };     /* default threshold: 1 MFLOP */
    bd_model *m = run_chain(&o, &p);
    const bd_partition_report *r = bd_plan_partition(p);
    /* the 1 KFLOP MatMul (next to the input and a Softmax) and the Relu between the two
     * Softmaxes are islands too small for two crossings: one ORT subgraph remains */
    assert_int_equal(r->n_subgraphs, 1);
    assert_string_equal(r->subgraphs[0].backend, "ort");
    assert_int_equal(r->subgraphs[0].n_nodes, 4);
    assert_int_equal(r->n_fallback, 4);
    assert_string_equal(r->fallback[0].node, "mm");
    assert_string_equal(r->fallback[0].reason, "cost");
    assert_string_equal(r->fallback[2].node, "relu");
    assert_string_equal(r->fallback[2].reason, "cost");
    assert_non_null(strstr(r->fallback[2].detail, "min_dnnl_region_flops"));
    bd_model_close(m);

    /* with a threshold below the MatMul's 1024 FLOPs, only the Relu moves */
    o.min_dnnl_region_flops = 100;
    m = run_chain(&o, &p);
    r = bd_plan_partition(p);
    assert_int_equal(r->n_subgraphs, 2);
    assert_string_equal(r->subgraphs[0].backend, "dnnl");
    assert_int_equal(r->subgraphs[1].n_nodes, 3);
    bd_model_close(m);
}

static void test_engine_runs_whole_model(void **state)
{
    bd_model *m;
    bd_error err = { 0 };
    bd_model_options bad = { .engine = "tvm" };
    assert_int_equal(bd_model_from_graph(chain_model(), &bad, &m, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "'tvm'"));
    if (!have_ort())
        skip();
    const bd_plan *p;
    bd_model_options o = { .engine = "ort" };
    m = run_chain(&o, &p);
    const bd_partition_report *r = bd_plan_partition(p);
    assert_int_equal(r->n_subgraphs, 1);
    assert_string_equal(r->subgraphs[0].backend, "ort");
    assert_int_equal(r->n_fallback, 4);
    assert_string_equal(r->fallback[0].reason, "forced");
    bd_model_close(m);
}

/* ---- run-time shapes ------------------------------------------------------------------ */

/* x[2,3] -> Relu -> NonZero -> idx (INT64 [2, ?]) with only oneDNN and ENGINE allowed: with
 * the cost rule off Relu stays on oneDNN and NonZero's output is only known when ENGINE has
 * run. */
static void dynamic_output_from(const char *engine)
{
    bd_graph *g = bd_graph_create("nonzero");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { 2, 3 };
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 2, d), *r = tl_value(g, "r", BD_DT_FLOAT, 2, d);
    bd_shape unknown = { .rank = -1 };
    bd_value *idx;
    assert_int_equal(bd_graph_add_value(g, "idx", BD_DT_INT64, &unknown, &idx, NULL), 0);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, idx, NULL);
    tl_op(g, "relu", "Relu", &x, 1, r);
    tl_op(g, "nz", "NonZero", &r, 1, idx);
    bd_model *m;
    bd_error err = { 0 };
    char engines[32];
    snprintf(engines, sizeof engines, "dnnl,%s", engine);
    bd_model_options o = { .min_dnnl_region_flops = -1, .engine = engines };
    assert_int_equal(bd_model_from_graph(g, &o, &m, &err), 0);
    float xv[6] = { 1, -2, 0, 3, 4, -1 };          /* after Relu: nonzero at (0,0) (1,0) (1,1) */
    int64_t xs[] = { 2, 3 };
    DLTensor in = input_tensor(xv, 2, xs);
    const bd_plan *p;
    if (bd_model_plan(m, &in, 1, &p, &err))
        fail_msg("plan: %s", err.msg);
    const bd_partition_report *rep = bd_plan_partition(p);
    assert_int_equal(rep->n_subgraphs, 2);
    assert_string_equal(rep->subgraphs[1].backend, engine);
    bd_exec *e;
    assert_int_equal(bd_exec_create(p, &e, &err), 0);
    /* three nonzeros, then two (x[1,1] made negative), then three again: the output's
     * shape follows every run */
    const int64_t counts[3] = { 3, 2, 3 };
    for (int round = 0; round < 3; round++) {
        xv[4] = round == 1 ? -4 : 4;
        if (bd_exec_run(e, &in, 1, &err))
            fail_msg("run: %s", err.msg);
        const DLTensor *y = bd_exec_output(e, 0);
        assert_int_equal(y->ndim, 2);
        assert_int_equal(y->shape[0], 2);
        assert_int_equal(y->shape[1], counts[round]);
        const int64_t *v = y->data;
        if (round != 1) {
            int64_t want[6] = { 0, 1, 1, 0, 0, 1 };
            for (int i = 0; i < 6; i++)
                assert_int_equal(v[i], want[i]);
        }
    }
    bd_exec_destroy(e);
    bd_model_close(m);
}

static void test_dynamic_output_from_fallback(void **state)
{
    (void)state;
    if (!have_ort())
        skip();
    dynamic_output_from("ort");
}

static void test_dynamic_output_from_native(void **state)
{
    (void)state;
    dynamic_output_from("native");
}

/* ---- constant folding -------------------------------------------------------------------- */

/* y = x + Gather(Transpose(W), idx): the Gather of a transposed constant folds at plan time;
 * the graph keeps only the Add, which reads the folded constant. */
static void test_constant_subexpressions_fold(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("fold");
    bd_graph_set_opset(g, 13);
    float w[6] = { 1, 2, 3, 4, 5, 6 };                     /* W [2,3]; W^T [3,2] */
    int64_t idx[2] = { 2, -3 };                            /* rows 2 and 0 of W^T */
    bd_value *x = tl_input(g, "x", BD_DT_FLOAT, TL_DIMS(2, 2));
    bd_value *wv = tl_const(g, "w", BD_DT_FLOAT, TL_DIMS(2, 3), w);
    bd_value *iv = tl_const(g, "idx", BD_DT_INT64, TL_DIMS(2), idx);
    bd_value *wt = tl_value(g, "wt", BD_DT_FLOAT, TL_DIMS(3, 2));
    bd_value *rows = tl_value(g, "rows", BD_DT_FLOAT, TL_DIMS(2, 2));
    bd_value *y = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(2, 2));
    tl_attr_ints(g, tl_op(g, "t", "Transpose", &wv, 1, wt), "perm", 2, (int64_t[]){ 1, 0 });
    tl_op(g, "gather", "Gather", (bd_value *[]){ wt, iv }, 2, rows);
    tl_op(g, "add", "Add", (bd_value *[]){ x, rows }, 2, y);
    tl_output(g, y);
    bd_model *m;
    bd_error err = { 0 };
    assert_int_equal(bd_model_from_graph(g, NULL, &m, &err), 0);
    float xv[4] = { 10, 20, 30, 40 };
    int64_t xs[] = { 2, 2 };
    DLTensor in = input_tensor(xv, 2, xs);
    const bd_plan *p;
    bd_exec *e;
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err))
        fail_msg("plan: %s", err.msg);
    const bd_graph *pg = bd_plan_graph(p);
    assert_int_equal(bd_graph_num_nodes(pg), 1);                     /* only the Add is left */
    assert_string_equal(bd_graph_node(pg, 0)->op_type, "Add");
    assert_int_equal(bd_exec_run(e, &in, 1, &err), 0);
    const float *yv = bd_exec_output(e, 0)->data;
    const float want[4] = { 10 + 3, 20 + 6, 30 + 1, 40 + 4 };       /* W^T rows 2 and 0 */
    for (int i = 0; i < 4; i++)
        assert_true(yv[i] == want[i]);
    bd_exec_destroy(e);
    bd_model_close(m);
}

/* A constant expression that fails on its constants (a GatherElements index out of range,
 * which shape inference does not look at) is not folded: the run reports the error, as it
 * would without folding. */
static void test_failing_constant_expression_is_left_to_the_run(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("fold_bad");
    bd_graph_set_opset(g, 13);
    float w[4] = { 1, 2, 3, 4 };
    int64_t idx[4] = { 0, 7, 1, 0 };                                 /* 7: out of range of 2 */
    bd_value *x = tl_input(g, "x", BD_DT_FLOAT, TL_DIMS(2, 2));
    bd_value *wv = tl_const(g, "w", BD_DT_FLOAT, TL_DIMS(2, 2), w);
    bd_value *iv = tl_const(g, "idx", BD_DT_INT64, TL_DIMS(2, 2), idx);
    bd_value *picked = tl_value(g, "picked", BD_DT_FLOAT, TL_DIMS(2, 2));
    bd_value *y = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(2, 2));
    tl_attr_int(g, tl_op(g, "ge", "GatherElements", (bd_value *[]){ wv, iv }, 2, picked), "axis", 0);
    tl_op(g, "add", "Add", (bd_value *[]){ x, picked }, 2, y);
    tl_output(g, y);
    bd_model *m;
    bd_error err = { 0 };
    bd_model_options o = { .engine = "dnnl,native" };
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("open: %s", err.msg);
    float xv[4] = { 1, 2, 3, 4 };
    int64_t xs[] = { 2, 2 };
    DLTensor in = input_tensor(xv, 2, xs);
    const bd_plan *p;
    bd_exec *e;
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err))
        fail_msg("plan: %s", err.msg);
    assert_int_equal(bd_graph_num_nodes(bd_plan_graph(p)), 2);
    assert_int_equal(bd_exec_run(e, &in, 1, &err), BD_EINVAL);
    print_message("run: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "7"));
    bd_exec_destroy(e);
    bd_model_close(m);
}

/* TensorFlow's Tensordot then BiasAdd, an activation and a residual Add: x[4,8] -> Gemm ->
 * Reshape [1,4,6] -> Add(bias [1,1,6]) -> Relu -> Add(res) . The Reshape sinks below the
 * three (sink_reshape.c) and they become the Gemm's post-ops: one oneDNN primitive, same
 * values as computed here. */
static void test_tensordot_epilogue_fuses(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("tensordot");
    bd_graph_set_opset(g, 13);
    int64_t xd[] = { 4, 8 }, wd[] = { 8, 6 }, yd[] = { 4, 6 }, zd[] = { 1, 4, 6 }, bd3[] = { 1, 1, 6 },
            sd[] = { 3 };
    float w[48], b[6], x[32], res[24];
    for (int i = 0; i < 48; i++)
        w[i] = 0.1f * sinf((float)i);
    for (int i = 0; i < 6; i++)
        b[i] = 0.25f * (float)(i - 3);
    for (int i = 0; i < 32; i++)
        x[i] = (float)(i % 5) - 2;
    for (int i = 0; i < 24; i++)
        res[i] = 0.5f * cosf((float)i);
    int64_t to[3] = { 1, 4, 6 };
    bd_value *xv = tl_value(g, "x", BD_DT_FLOAT, 2, xd), *rv = tl_value(g, "res", BD_DT_FLOAT, 3, zd),
             *y = tl_value(g, "y", BD_DT_FLOAT, 2, yd), *z = tl_value(g, "z", BD_DT_FLOAT, 3, zd),
             *zb = tl_value(g, "zb", BD_DT_FLOAT, 3, zd), *zr = tl_value(g, "zr", BD_DT_FLOAT, 3, zd),
             *out = tl_value(g, "out", BD_DT_FLOAT, 3, zd);
    bd_graph_mark_input(g, xv, NULL);
    bd_graph_mark_input(g, rv, NULL);
    bd_graph_mark_output(g, out, NULL);
    tl_op(g, "mm", "Gemm", (bd_value *[]){ xv, tl_const(g, "w", BD_DT_FLOAT, 2, wd, w) }, 2, y);
    tl_op(g, "rs", "Reshape", (bd_value *[]){ y, tl_const(g, "to", BD_DT_INT64, 1, sd, to) }, 2, z);
    tl_op(g, "bias", "Add", (bd_value *[]){ z, tl_const(g, "b", BD_DT_FLOAT, 3, bd3, b) }, 2, zb);
    tl_op(g, "relu", "Relu", (bd_value *[]){ zb }, 1, zr);
    tl_op(g, "residual", "Add", (bd_value *[]){ rv, zr }, 2, out);
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, NULL, &m, &err))
        fail_msg("open: %s", err.msg);
    int64_t xs[] = { 4, 8 }, rs[] = { 1, 4, 6 };
    DLTensor in[2] = { input_tensor(x, 2, xs), input_tensor(res, 3, rs) };
    const bd_plan *p;
    bd_exec *e;
    if (bd_model_plan(m, in, 2, &p, &err) || bd_exec_create(p, &e, &err) || bd_exec_run(e, in, 2, &err))
        fail_msg("plan/run: %s", err.msg);
    const bd_partition_report *r = bd_plan_partition(p);
    assert_int_equal(r->n_subgraphs, 1);
    const bd_graph *pg = bd_plan_graph(p);
    int fused = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(pg); i++) {
        const bd_node *n = bd_graph_node(pg, i);
        printf("    %s %s %s\n", n->op_type, n->name, n->composite ? n->composite : "");
        fused += n->composite && !strcmp(n->composite, "Gemm+Add+Relu+Add");
    }
    assert_int_equal(fused, 1);                         /* the Gemm with 3 post-ops */
    const DLTensor *o = bd_exec_output(e, 0);
    assert_int_equal(o->ndim, 3);
    const float *got = o->data;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) {
            float acc = 0;
            for (int k = 0; k < 8; k++)
                acc += x[i * 8 + k] * w[k * 6 + j];
            float want = res[i * 6 + j] + fmaxf(acc + b[j], 0);
            assert_float_equal(got[i * 6 + j], want, 1e-5);
        }
    bd_exec_destroy(e);
    bd_model_close(m);
}

/* x[2,64] -> MatMul(w) -> Relu -> MatMul(w) -> y with ONE initializer w read twice: oneDNN
 * lays w out once for both (dn_const_shared), so the kernel holds one copy fewer (its
 * const_bytes) than for the same chain with two initializers of equal bytes; both give the
 * reference's values. */
static size_t shared_weight_plan(bool shared, float *y_out)
{
    enum { D = 64 };
    bd_graph *g = bd_graph_create("shared_weight");
    bd_graph_set_opset(g, 13);
    int64_t xd[] = { 2, D }, wd[] = { D, D };
    static float w[D * D];
    for (int i = 0; i < D * D; i++)
        w[i] = 0.02f * sinf((float)i);
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 2, xd), *a = tl_value(g, "a", BD_DT_FLOAT, 2, xd),
             *r = tl_value(g, "r", BD_DT_FLOAT, 2, xd), *y = tl_value(g, "y", BD_DT_FLOAT, 2, xd);
    bd_value *w1 = tl_const(g, "w1", BD_DT_FLOAT, 2, wd, w);
    bd_value *w2 = shared ? w1 : tl_const(g, "w2", BD_DT_FLOAT, 2, wd, w);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    tl_op(g, "mm1", "MatMul", (bd_value *[]){ x, w1 }, 2, a);
    tl_op(g, "relu", "Relu", &a, 1, r);
    tl_op(g, "mm2", "MatMul", (bd_value *[]){ r, w2 }, 2, y);
    bd_model *m;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, NULL, &m, &err))
        fail_msg("open: %s", err.msg);
    float xv[2 * D];
    for (int i = 0; i < 2 * D; i++)
        xv[i] = (float)(i % 9) - 4;
    DLTensor in = input_tensor(xv, 2, xd);
    const bd_plan *p;
    bd_exec *e;
    if (bd_model_plan(m, &in, 1, &p, &err) || bd_exec_create(p, &e, &err) || bd_exec_run(e, &in, 1, &err))
        fail_msg("plan/run: %s", err.msg);
    size_t bytes = bd_plan_partition(p)->run.const_bytes;
    memcpy(y_out, bd_exec_output(e, 0)->data, sizeof(float) * 2 * D);
    float h[2 * D];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < D; j++) {
            float acc = 0;
            for (int k = 0; k < D; k++)
                acc += xv[i * D + k] * w[k * D + j];
            h[i * D + j] = fmaxf(acc, 0);
        }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < D; j++) {
            float acc = 0;
            for (int k = 0; k < D; k++)
                acc += h[i * D + k] * w[k * D + j];
            assert_float_equal(y_out[i * D + j], acc, 1e-4);
        }
    bd_exec_destroy(e);
    bd_model_close(m);
    return bytes;
}

static void test_shared_weight_laid_out_once(void **state)
{
    (void)state;
    float a[128], b[128];
    size_t one = shared_weight_plan(true, a), two = shared_weight_plan(false, b);
    printf("    weights held: one initializer read twice %zu bytes, two equal ones %zu\n", one, two);
    assert_true(one >= 64 * 64 * sizeof(float));
    assert_int_equal(two, 2 * one);
    assert_memory_equal(a, b, sizeof a);
}

/* The partition report counts the reference kernels a plan runs (bd_kernel_stats.ref_steps:
 * the cliff guard's, docs/partitioning.md) and names each subgraph's implementations. A
 * softmax over axis 1 of [1,24,6,6] is oneDNN 2.6's `ref:any` in the row-major layout: with
 * the guard it runs with that axis innermost (0 left); without it (BRAID_DNNL_GUARD=0) the
 * count is whatever this CPU's oneDNN picked, and the total is the subgraphs' sum. */
static size_t softmax_ref_steps(bool guard, char *impls, size_t len)
{
    bd_graph *g = bd_graph_create("softmax_axis1");
    bd_graph_set_opset(g, 13);
    int64_t d[] = { 1, 24, 6, 6 };
    bd_value *x = tl_value(g, "x", BD_DT_FLOAT, 4, d), *y = tl_value(g, "y", BD_DT_FLOAT, 4, d);
    bd_graph_mark_input(g, x, NULL);
    bd_graph_mark_output(g, y, NULL);
    bd_node *n = tl_op(g, "softmax", "Softmax", &x, 1, y);
    tl_attr_int(g, n, "axis", 1);
    bd_error err = { 0 };
    if (!guard)
        setenv("BRAID_DNNL_GUARD", "0", 1);
    bd_model_options o = { .engine = "dnnl" };
    bd_model *m;
    if (bd_model_from_graph(g, &o, &m, &err))
        fail_msg("open: %s", err.msg);
    static float xv[24 * 36];
    for (int i = 0; i < 24 * 36; i++)
        xv[i] = (float)(i % 7) - 3;
    DLTensor in = input_tensor(xv, 4, d);
    const bd_plan *p;
    if (bd_model_plan(m, &in, 1, &p, &err))
        fail_msg("plan: %s", err.msg);
    unsetenv("BRAID_DNNL_GUARD");
    const bd_partition_report *r = bd_plan_partition(p);
    size_t sum = 0;
    for (size_t i = 0; i < r->n_subgraphs; i++)
        sum += r->subgraphs[i].run.ref_steps;
    assert_int_equal(r->n_subgraphs, 1);
    assert_int_equal(r->run.ref_steps, sum);
    assert_non_null(r->subgraphs[0].run.impls);
    snprintf(impls, len, "%s", r->subgraphs[0].run.impls);
    printf("    guard %s: %zu reference kernel(s); implementations: %s\n", guard ? "on" : "off",
           r->run.ref_steps, impls);
    bd_model_close(m);
    return sum;
}

static void test_report_counts_reference_kernels(void **state)
{
    (void)state;
    char on[256], off[256];
    assert_int_equal(softmax_ref_steps(true, on, sizeof on), 0);
    assert_null(strstr(on, "ref:"));
    if (softmax_ref_steps(false, off, sizeof off) > 0)
        assert_non_null(strstr(off, "ref:any softmax"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qkv_merge_runs_on_dnnl),
        cmocka_unit_test(test_all_on_dnnl_by_default),
        cmocka_unit_test(test_forced_softmax_alternates_engines),
        cmocka_unit_test(test_cost_rule_folds_small_islands_into_ort),
        cmocka_unit_test(test_engine_runs_whole_model),
        cmocka_unit_test(test_dynamic_output_from_fallback),
        cmocka_unit_test(test_dynamic_output_from_native),
        cmocka_unit_test(test_constant_subexpressions_fold),
        cmocka_unit_test(test_failing_constant_expression_is_left_to_the_run),
        cmocka_unit_test(test_tensordot_epilogue_fuses),
        cmocka_unit_test(test_shared_weight_laid_out_once),
        cmocka_unit_test(test_report_counts_reference_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
