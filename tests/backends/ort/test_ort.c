/* The ONNX Runtime engine: serialization (round trip through braid's own importer), what it
 * accepts, runs against naive references (Relu, TopK and NonZero, the last two with run-time
 * shapes), zero-copy boundaries and weights, session sharing across batch sizes, errors,
 * Resize with a run-time `sizes`, subgraphs of constants only, and If/Loop bodies (written
 * back verbatim, reading outer values). argv[1] is tests/partitioner/onnx's build directory.
 * Tests that need libonnxruntime.so.1 print "SKIPPED: ..." and skip when it is absent. */
#include <math.h>

#include <pthread.h>

#include "tests/backends/ort/ort_testlib.h"

#include "backends/ort/ort_internal.h"
#include "backends/ort/ort_serialize.h"
#include "partitioner/onnx/onnx_import.h"

/* ---- serialization ----------------------------------------------------------------------- */

/* X -> MatMul(W) -> LeakyRelu -> Transpose -> TopK(K): attributes of every kind braid writes. */
static bd_graph *chain_graph(void)
{
    bd_graph *g = bd_graph_create("chain");
    float w[12];
    for (int i = 0; i < 12; i++)
        w[i] = (float)i * 0.5f - 2.0f;
    int64_t k = 2;
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(2, 3));
    bd_value *W = constant(g, "W", BD_DT_FLOAT, SHP(3, 4), w, sizeof w);
    bd_value *K = constant(g, "K", BD_DT_INT64, SHP(1), &k, sizeof k);
    bd_value *m = val(g, "M", BD_DT_FLOAT, SHP(2, 4)), *r = val(g, "R", BD_DT_FLOAT, SHP(2, 4));
    bd_value *t = val(g, "T", BD_DT_FLOAT, SHP(4, 2));
    bd_value *v = val(g, "V", BD_DT_FLOAT, SHP(4, 2)), *ix = val(g, "I", BD_DT_INT64, SHP(4, 2));
    node(g, "mm", "MatMul", (bd_value *[]){ x, W }, 2, &m, 1);
    attr(g, node(g, "lrelu", "LeakyRelu", &m, 1, &r, 1), (bd_attr){ .name = "alpha", .type = BD_ATTR_FLOAT, .f = 0.25f });
    static const int64_t perm[] = { 1, 0 };
    attr(g, node(g, "tr", "Transpose", &r, 1, &t, 1), (bd_attr){ .name = "perm", .type = BD_ATTR_INTS, .ints = perm, .n = 2 });
    bd_node *topk = node(g, "topk", "TopK", (bd_value *[]){ t, K }, 2, (bd_value *[]){ v, ix }, 2);
    attr(g, topk, (bd_attr){ .name = "axis", .type = BD_ATTR_INT, .i = 1 });
    /* Attribute kinds TopK does not have, for the round trip only (ORT would refuse them). */
    static const float fl[] = { 1.5f, -2.0f, 3.25f };
    static const char *strs[] = { "alpha", "", "gamma" };
    attr(g, topk, (bd_attr){ .name = "note", .type = BD_ATTR_STRING, .s = "hello", .s_len = 5 });
    attr(g, topk, (bd_attr){ .name = "fl", .type = BD_ATTR_FLOATS, .floats = fl, .n = 3 });
    attr(g, topk, (bd_attr){ .name = "strs", .type = BD_ATTR_STRINGS, .strings = strs, .n = 3 });
    bd_error err = { 0 };
    assert_int_equal(bd_graph_mark_output(g, v, &err), 0);
    assert_int_equal(bd_graph_mark_output(g, ix, &err), 0);
    return g;
}

static void assert_same_attr(const bd_attr *a, const bd_attr *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    switch (a->type) {
    case BD_ATTR_FLOAT: assert_true(a->f == b->f); break;
    case BD_ATTR_INT: assert_int_equal(a->i, b->i); break;
    case BD_ATTR_STRING:
        assert_int_equal(a->s_len, b->s_len);
        assert_memory_equal(a->s, b->s, a->s_len);
        break;
    case BD_ATTR_INTS:
        assert_int_equal(a->n, b->n);
        assert_memory_equal(a->ints, b->ints, a->n * sizeof *a->ints);
        break;
    case BD_ATTR_FLOATS:
        assert_int_equal(a->n, b->n);
        assert_memory_equal(a->floats, b->floats, a->n * sizeof *a->floats);
        break;
    case BD_ATTR_STRINGS:
        assert_int_equal(a->n, b->n);
        for (size_t i = 0; i < a->n; i++)
            assert_string_equal(a->strings[i], b->strings[i]);
        break;
    default: fail_msg("unexpected attribute type %d", (int)a->type);
    }
}

static void test_serialize_round_trip(void **state)
{
    (void)state;
    bd_graph *g = chain_graph();
    bd_node *nodes[8];
    bd_value *in[] = { bd_graph_find_value(g, "X") };
    bd_value *out[] = { bd_graph_find_value(g, "V"), bd_graph_find_value(g, "I") };
    bd_subgraph sg = whole(g, nodes, in, 1, out, 2);

    for (int static_dims = 0; static_dims < 2; static_dims++) {
        ort_serialize_opts o = { .external_min_bytes = SIZE_MAX, .static_dims = static_dims };
        ort_model m = { 0 };
        bd_error err = { 0 };
        assert_int_equal(ort_serialize(&sg, &o, &m, &err), 0);
        assert_int_equal(m.n_external, 0);
        bd_graph *back = NULL;
        int rc = bd_onnx_import_memory(m.bytes, m.len, NULL, &back, &err);
        if (rc)
            fail_msg("import of the serialized subgraph failed: %s", err.msg);
        assert_int_equal(bd_graph_opset(back), 17);

        /* nodes: op, domain, wiring, attributes */
        assert_int_equal(bd_graph_num_nodes(back), 4);
        for (size_t i = 0; i < 4; i++) {
            const bd_node *a = nodes[i], *b = bd_graph_node(back, i);
            assert_string_equal(a->name, b->name);
            assert_string_equal(a->op_type, b->op_type);
            assert_string_equal(b->domain ? b->domain : "", "");
            assert_int_equal(a->n_inputs, b->n_inputs);
            assert_int_equal(a->n_outputs, b->n_outputs);
            for (size_t k = 0; k < a->n_inputs; k++)
                assert_string_equal(a->inputs[k]->name, b->inputs[k]->name);
            for (size_t k = 0; k < a->n_outputs; k++)
                assert_string_equal(a->outputs[k]->name, b->outputs[k]->name);
            assert_int_equal(a->n_attrs, b->n_attrs);
            for (size_t k = 0; k < a->n_attrs; k++)
                assert_same_attr(&a->attrs[k], bd_node_attr(b, a->attrs[k].name));
        }
        /* initializers: bytes and shapes */
        const char *inits[] = { "W", "K" };
        for (size_t i = 0; i < 2; i++) {
            const bd_value *a = bd_graph_find_value(g, inits[i]), *b = bd_graph_find_value(back, inits[i]);
            assert_non_null(b);
            assert_int_equal(a->dtype, b->dtype);
            assert_true(bd_shape_equal(&a->shape, &b->shape));
            assert_int_equal(a->nbytes, b->nbytes);
            assert_memory_equal(a->data, b->data, a->nbytes);
        }
        /* boundary: X in; V, I out; dims only when asked for */
        assert_int_equal(bd_graph_num_inputs(back), 1);
        const bd_value *x = bd_graph_input(back, 0);
        assert_string_equal(x->name, "X");
        assert_int_equal(x->dtype, BD_DT_FLOAT);
        assert_int_equal(x->shape.rank, 2);
        assert_int_equal(x->shape.dims[0], static_dims ? 2 : -1);
        assert_int_equal(x->shape.dims[1], static_dims ? 3 : -1);
        assert_int_equal(bd_graph_num_outputs(back), 2);
        assert_string_equal(bd_graph_output(back, 0)->name, "V");
        assert_string_equal(bd_graph_output(back, 1)->name, "I");
        assert_int_equal(bd_graph_output(back, 1)->dtype, BD_DT_INT64);
        bd_graph_destroy(back);
        ort_model_free(&m);
    }
    bd_graph_destroy(g);
}

/* Large initializers stay out of the bytes (handed to ORT in place); small ones go in. */
static void test_serialize_keeps_large_weights_external(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("ext");
    static float big[64 * 64];
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(1, 64));
    bd_value *w = constant(g, "W", BD_DT_FLOAT, SHP(64, 64), big, sizeof big);
    bd_value *b = constant(g, "B", BD_DT_FLOAT, SHP(64), big, 64 * sizeof(float));
    bd_value *y = val(g, "Y", BD_DT_FLOAT, SHP(1, 64)), *z = val(g, "Z", BD_DT_FLOAT, SHP(1, 64));
    node(g, "mm", "MatMul", (bd_value *[]){ x, w }, 2, &y, 1);
    node(g, "add", "Add", (bd_value *[]){ y, b }, 2, &z, 1);
    bd_node *nodes[2];
    bd_subgraph sg = whole(g, nodes, &x, 1, &z, 1);
    ort_model m = { 0 };
    bd_error err = { 0 };
    assert_int_equal(ort_serialize(&sg, NULL, &m, &err), 0);
    assert_int_equal(m.n_external, 1);
    assert_ptr_equal(m.external[0], w);
    assert_true(m.len < 1024);          /* 16 KiB of weights are not in there */
    ort_model_free(&m);
    bd_graph_destroy(g);
}

/* ---- supports ---------------------------------------------------------------------------- */

static void test_supports_onnx_nodes_only(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("sup");
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(4));
    bd_value *y = val(g, "Y", BD_DT_FLOAT, SHP(4)), *z = val(g, "Z", BD_DT_FLOAT, SHP(4));
    bd_value *s = val(g, "S", BD_DT_FLOAT, SHP(4));
    bd_node *relu = node(g, "relu", "Relu", &x, 1, &y, 1);
    bd_error err = { 0 };
    bd_node *comp = NULL, *odd = NULL;
    assert_int_equal(bd_graph_add_node(g, "gelu", "Gelu", "braid", &y, 1, &z, 1, &comp, &err), 0);
    assert_int_equal(bd_graph_add_node(g, "odd", "Foo", "com.example", &z, 1, &s, 1, &odd, &err), 0);
    char why[160];

    assert_false(bd_ort_backend.supports(g, comp, why, sizeof why));
    assert_non_null(strstr(why, "composite"));
    assert_false(bd_ort_backend.supports(g, odd, why, sizeof why));
    assert_non_null(strstr(why, "com.example"));
    relu->post[relu->n_post++] = (bd_postop){ .kind = BD_POST_ELTWISE, .alg = BD_ELT_RELU };
    assert_false(bd_ort_backend.supports(g, relu, why, sizeof why));
    relu->n_post = 0;
    bd_graph_set_framework(g, "tensorflow");
    assert_false(bd_ort_backend.supports(g, relu, why, sizeof why));
    assert_non_null(strstr(why, "tensorflow"));
    bd_graph_set_framework(g, "onnx");

    char avail[256];
    bool have = bd_ort_available(avail, sizeof avail);
    assert_int_equal(bd_ort_backend.supports(g, relu, why, sizeof why), have);
    if (!have)
        print_message("SKIPPED (positive case): %s\n", avail);
    bd_graph_destroy(g);
}

/* ---- runs -------------------------------------------------------------------------------- */

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

/* X -> Relu -> R;  TopK(R, K) -> V, I;  NonZero(R) -> NZ.  K is fed at run time, so TopK's and
 * NonZero's outputs have run-time shapes; R has a static one (written in place). */
typedef struct rtn {
    bd_graph     *g;
    bd_node      *nodes[3];
    bd_value     *in[2], *out[4];
    bd_subgraph   sg;
    bd_kernel    *k;
    bd_kernel_ctx *ctx;
} rtn;

static void rtn_build(rtn *t)
{
    t->g = bd_graph_create("rtn");
    bd_graph *g = t->g;
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(2, 5)), *k = input(g, "K", BD_DT_INT64, SHP(1));
    bd_value *r = val(g, "R", BD_DT_FLOAT, SHP(2, 5));
    bd_value *v = val(g, "V", BD_DT_FLOAT, SHP(2, -1)), *ix = val(g, "I", BD_DT_INT64, SHP(2, -1));
    bd_value *nz = val(g, "NZ", BD_DT_INT64, SHP(2, -1));
    node(g, "relu", "Relu", &x, 1, &r, 1);
    attr(g, node(g, "topk", "TopK", (bd_value *[]){ r, k }, 2, (bd_value *[]){ v, ix }, 2),
         (bd_attr){ .name = "axis", .type = BD_ATTR_INT, .i = 1 });
    node(g, "nz", "NonZero", &r, 1, &nz, 1);
    t->in[0] = x; t->in[1] = k;
    t->out[0] = r; t->out[1] = v; t->out[2] = ix; t->out[3] = nz;
    t->sg = whole(g, t->nodes, t->in, 2, t->out, 4);
    bd_error err = { 0 };
    if (bd_ort_backend.compile(&t->sg, &t->k, &err))
        fail_msg("compile: %s", err.msg);
    assert_int_equal(bd_ort_backend.ctx_create(t->k, &t->ctx, &err), 0);
}

static void rtn_free(rtn *t)
{
    bd_ort_backend.ctx_destroy(t->ctx);
    bd_ort_backend.release(t->k);
    bd_graph_destroy(t->g);
}

/* One run with input X and K, checked against the reference; returns nothing, asserts. */
static void rtn_check(rtn *t, const float *xin, int64_t kk)
{
    float x[10], r[10];
    int64_t kbuf = kk;
    memcpy(x, xin, sizeof x);
    int64_t xs[] = { 2, 5 }, ks[] = { 1 }, rs[] = { 2, 5 };
    int64_t vs[BD_MAX_RANK], is[BD_MAX_RANK], ns[BD_MAX_RANK];
    DLTensor in[] = { tensor(x, BD_DT_FLOAT, 2, xs), tensor(&kbuf, BD_DT_INT64, 1, ks) };
    DLTensor out[] = { tensor(r, BD_DT_FLOAT, 2, rs), tensor(NULL, BD_DT_FLOAT, 0, vs),
                       tensor(NULL, BD_DT_INT64, 0, is), tensor(NULL, BD_DT_INT64, 0, ns) };
    bd_error err = { 0 };
    if (bd_ort_backend.run(t->ctx, in, 2, out, 4, &err))
        fail_msg("run: %s", err.msg);

    /* Relu, written in place into the caller's buffer */
    float ref[10];
    for (int i = 0; i < 10; i++) {
        ref[i] = x[i] > 0 ? x[i] : 0;
        assert_true(r[i] == ref[i]);
    }
    /* TopK: run-time shape [2, K], largest first, indices point at the values */
    assert_int_equal(out[1].ndim, 2);
    assert_int_equal(vs[0], 2);
    assert_int_equal(vs[1], kk);
    assert_int_equal(is[1], kk);
    const float *v = out[1].data;
    const int64_t *ix = out[2].data;
    for (int row = 0; row < 2; row++) {
        float sorted[5];
        memcpy(sorted, ref + row * 5, sizeof sorted);
        qsort(sorted, 5, sizeof(float), cmp_desc);
        for (int j = 0; j < kk; j++) {
            assert_true(v[row * kk + j] == sorted[j]);
            assert_true(ref[row * 5 + ix[row * kk + j]] == sorted[j]);
        }
    }
    /* NonZero: [rank, nnz] coordinates in row-major order */
    int64_t nnz = 0;
    for (int i = 0; i < 10; i++)
        nnz += ref[i] != 0;
    assert_int_equal(out[3].ndim, 2);
    assert_int_equal(ns[0], 2);
    assert_int_equal(ns[1], nnz);
    const int64_t *nzv = out[3].data;
    int64_t j = 0;
    for (int i = 0; i < 10; i++)
        if (ref[i] != 0) {
            assert_int_equal(nzv[j], i / 5);
            assert_int_equal(nzv[nnz + j], i % 5);
            j++;
        }

    /* Zero copy: ORT's input values wrap braid's buffers, the static output is the caller's
     * buffer, and run-time-shaped outputs hand ORT's own memory over. */
    assert_ptr_equal(ort_ctx_input_data(t->ctx, 0), x);
    assert_ptr_equal(ort_ctx_input_data(t->ctx, 1), &kbuf);
    assert_ptr_equal(ort_ctx_output_data(t->ctx, 0), r);
    for (size_t o = 1; o < 4; o++)
        assert_ptr_equal(ort_ctx_output_data(t->ctx, o), out[o].data);
}

static void test_relu_topk_nonzero_vs_reference(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    rtn t;
    rtn_build(&t);
    static const float a[10] = { 0.5f, -1.0f, 3.0f, 2.0f, -0.25f, 7.0f, 0.0f, -3.0f, 1.0f, 4.0f };
    static const float b[10] = { -1.0f, -2.0f, 9.0f, -3.0f, 6.0f, 1.5f, 2.5f, 3.5f, -4.5f, 0.0f };
    rtn_check(&t, a, 3);
    rtn_check(&t, b, 2);       /* other shapes on the same context: outputs re-handed */
    rtn_check(&t, a, 5);
    rtn_free(&t);
}

/* Weights reach ORT in place: changing braid's copy changes the next result. */
static void test_weights_read_in_place(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    enum { N = 300 };           /* 1200 bytes: above the external threshold */
    bd_graph *g = bd_graph_create("inplace");
    float c[N], x[N], y[N];
    for (int i = 0; i < N; i++) {
        c[i] = (float)i;
        x[i] = 1.0f;
    }
    bd_value *X = input(g, "X", BD_DT_FLOAT, SHP(1, N));
    bd_value *C = constant(g, "C", BD_DT_FLOAT, SHP(1, N), c, sizeof c);
    bd_value *Y = val(g, "Y", BD_DT_FLOAT, SHP(1, N));
    node(g, "add", "Add", (bd_value *[]){ X, C }, 2, &Y, 1);
    bd_node *nodes[1];
    bd_subgraph sg = whole(g, nodes, &X, 1, &Y, 1);
    bd_kernel *k;
    bd_kernel_ctx *ctx;
    bd_error err = { 0 };
    if (bd_ort_backend.compile(&sg, &k, &err))
        fail_msg("compile: %s", err.msg);
    assert_int_equal(bd_ort_backend.ctx_create(k, &ctx, &err), 0);
    int64_t s[] = { 1, N };
    DLTensor in = tensor(x, BD_DT_FLOAT, 2, s), out = tensor(y, BD_DT_FLOAT, 2, s);
    assert_int_equal(bd_ort_backend.run(ctx, &in, 1, &out, 1, &err), 0);
    for (int i = 0; i < N; i++)
        assert_true(y[i] == 1.0f + (float)i);
    ((float *)C->data)[7] = 1000.0f;       /* braid's copy of the weight */
    assert_int_equal(bd_ort_backend.run(ctx, &in, 1, &out, 1, &err), 0);
    print_message("after editing braid's weight: y[7] = %g (1001 = ORT read it in place)\n", y[7]);
    assert_true(y[7] == 1001.0f);
    bd_ort_backend.ctx_destroy(ctx);
    bd_ort_backend.release(k);
    bd_graph_destroy(g);
}

/* X[B,16] -> MatMul(W 16x16) -> Relu, weights from DATA. */
static bd_graph *mlp_graph(const float *w)
{
    bd_graph *g = bd_graph_create("mlp");
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(1, 16));
    bd_value *W = constant(g, "W", BD_DT_FLOAT, SHP(16, 16), w, 256 * sizeof(float));
    bd_value *y = val(g, "Y", BD_DT_FLOAT, SHP(1, 16)), *z = val(g, "Z", BD_DT_FLOAT, SHP(1, 16));
    node(g, "mm", "MatMul", (bd_value *[]){ x, W }, 2, &y, 1);
    node(g, "relu", "Relu", &y, 1, &z, 1);
    return g;
}

static void set_batch(bd_graph *g, int64_t b)
{
    const char *names[] = { "X", "Y", "Z" };
    for (size_t i = 0; i < 3; i++)
        bd_graph_find_value(g, names[i])->shape.dims[0] = b;
}

static bd_kernel *compile_mlp(bd_graph *g)
{
    static bd_node *nodes[2];
    bd_value *x = bd_graph_find_value(g, "X"), *z = bd_graph_find_value(g, "Z");
    bd_subgraph sg = whole(g, nodes, &x, 1, &z, 1);
    bd_kernel *k = NULL;
    bd_error err = { 0 };
    if (bd_ort_backend.compile(&sg, &k, &err))
        fail_msg("compile: %s", err.msg);
    return k;
}

static void run_mlp(bd_kernel *k, const float *w, int64_t batch)
{
    float x[4 * 16], z[4 * 16];
    for (int i = 0; i < batch * 16; i++)
        x[i] = (float)((i * 7) % 11) - 5.0f;
    int64_t s[] = { batch, 16 };
    DLTensor in = tensor(x, BD_DT_FLOAT, 2, s), out = tensor(z, BD_DT_FLOAT, 2, s);
    bd_kernel_ctx *ctx;
    bd_error err = { 0 };
    assert_int_equal(bd_ort_backend.ctx_create(k, &ctx, &err), 0);
    if (bd_ort_backend.run(ctx, &in, 1, &out, 1, &err))
        fail_msg("run: %s", err.msg);
    double max_err = 0;
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < 16; j++) {
            double acc = 0;
            for (int i = 0; i < 16; i++)
                acc += (double)x[b * 16 + i] * w[i * 16 + j];
            double ref = acc > 0 ? acc : 0, e = fabs(ref - z[b * 16 + j]);
            max_err = e > max_err ? e : max_err;
        }
    print_message("mlp batch %lld: max abs error %.3g\n", (long long)batch, max_err);
    assert_true(max_err < 1e-4);
    bd_ort_backend.ctx_destroy(ctx);
}

/* Two plans of one model (graph clones at batch 1 and 4) share one session; another model
 * with other weights gets its own; the last release frees it. */
static void test_session_shared_across_batch_sizes(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    float w[256], w2[256];
    for (int i = 0; i < 256; i++) {
        w[i] = (float)((i * 13) % 17) / 8.0f - 1.0f;
        w2[i] = -w[i];
    }
    size_t base = ort_cached_sessions();
    bd_graph *model = mlp_graph(w), *other = mlp_graph(w2);
    bd_graph *p1 = bd_graph_clone(model), *p4 = bd_graph_clone(model);
    set_batch(p4, 4);
    bd_kernel *k1 = compile_mlp(p1), *k4 = compile_mlp(p4);
    assert_ptr_equal(ort_kernel_session(k1), ort_kernel_session(k4));
    assert_int_equal(ort_cached_sessions(), base + 1);
    bd_kernel *ko = compile_mlp(other);
    assert_ptr_not_equal(ort_kernel_session(ko), ort_kernel_session(k1));
    assert_int_equal(ort_cached_sessions(), base + 2);

    run_mlp(k1, w, 1);
    run_mlp(k4, w, 4);
    run_mlp(ko, w2, 3);

    bd_ort_backend.release(k1);
    assert_int_equal(ort_cached_sessions(), base + 2);   /* k4 still holds it */
    bd_ort_backend.release(k4);
    bd_ort_backend.release(ko);
    assert_int_equal(ort_cached_sessions(), base);
    bd_graph_destroy(p1);
    bd_graph_destroy(p4);
    bd_graph_destroy(model);
    bd_graph_destroy(other);
}

/* One kernel (one shared session), one context per thread, runs at the same time. */
typedef struct worker {
    bd_kernel  *k;
    const float *w;
    int         batch;
    int         bad;
} worker;

static void *worker_main(void *arg)
{
    worker *wk = arg;
    bd_kernel_ctx *ctx;
    bd_error err = { 0 };
    if (bd_ort_backend.ctx_create(wk->k, &ctx, &err)) {
        wk->bad = 1;
        return NULL;
    }
    float x[4 * 16], z[4 * 16];
    int64_t s[] = { wk->batch, 16 };
    for (int it = 0; it < 50 && !wk->bad; it++) {
        for (int i = 0; i < wk->batch * 16; i++)
            x[i] = (float)((i + it) % 5) - 2.0f;
        DLTensor in = tensor(x, BD_DT_FLOAT, 2, s), out = tensor(z, BD_DT_FLOAT, 2, s);
        if (bd_ort_backend.run(ctx, &in, 1, &out, 1, &err)) {
            wk->bad = 1;
            break;
        }
        for (int b = 0; b < wk->batch; b++)
            for (int j = 0; j < 16; j++) {
                float acc = 0;
                for (int i = 0; i < 16; i++)
                    acc += x[b * 16 + i] * wk->w[i * 16 + j];
                if (fabsf((acc > 0 ? acc : 0) - z[b * 16 + j]) > 1e-4f)
                    wk->bad = 1;
            }
    }
    bd_ort_backend.ctx_destroy(ctx);
    return NULL;
}

static void test_concurrent_contexts_share_a_session(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    float w[256];
    for (int i = 0; i < 256; i++)
        w[i] = (float)((i * 5) % 9) / 4.0f - 1.0f;
    bd_graph *g = mlp_graph(w);
    set_batch(g, 4);
    bd_kernel *k = compile_mlp(g);
    const float *wg = bd_graph_find_value(g, "W")->data;
    worker wk[3] = { { k, wg, 4, 0 }, { k, wg, 4, 0 }, { k, wg, 4, 0 } };
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &wk[i]), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(wk[i].bad, 0);
    }
    bd_ort_backend.release(k);
    bd_graph_destroy(g);
}

/* An ORT failure comes back as BD_EBACKEND naming onnxruntime and the subgraph's first node. */
static void test_run_error_names_node(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    float w[256] = { 0 };
    bd_graph *g = mlp_graph(w);
    bd_kernel *k = compile_mlp(g);
    bd_kernel_ctx *ctx;
    bd_error err = { 0 };
    assert_int_equal(bd_ort_backend.ctx_create(k, &ctx, &err), 0);
    float x[20], z[16];
    int64_t xs[] = { 1, 20 }, zs[] = { 1, 16 };     /* 20 columns cannot meet W's 16 rows */
    DLTensor in = tensor(x, BD_DT_FLOAT, 2, xs), out = tensor(z, BD_DT_FLOAT, 2, zs);
    memset(x, 0, sizeof x);
    assert_int_equal(bd_ort_backend.run(ctx, &in, 1, &out, 1, &err), BD_EBACKEND);
    print_message("error: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "onnxruntime"));
    assert_non_null(strstr(err.msg, "'mm'"));
    bd_ort_backend.ctx_destroy(ctx);
    bd_ort_backend.release(k);
    bd_graph_destroy(g);
}

/* Resize with a run-time `sizes` input and omitted roi/scales: the serialized model gives the
 * 1-D INT64 boundary input its length (ONNX's shape inference reads an unknown length as 0
 * and refuses the model), and the run matches nearest-neighbour upsampling. */
static void test_resize_runtime_sizes_input(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("resize");
    bd_value *x = input(g, "X", BD_DT_FLOAT, SHP(1, 1, 2, 2));
    bd_value *sz = input(g, "sizes", BD_DT_INT64, SHP(4));
    bd_value *y = val(g, "Y", BD_DT_FLOAT, SHP(-1, -1, -1, -1));
    attr(g, node(g, "resize", "Resize", (bd_value *[]){ x, NULL, NULL, sz }, 4, &y, 1),
         (bd_attr){ .name = "mode", .type = BD_ATTR_STRING, .s = "nearest", .s_len = 7 });
    bd_graph_set_opset(g, 13);
    bd_node *nodes[1];
    bd_value *in[] = { x, sz };
    bd_subgraph sg = whole(g, nodes, in, 2, &y, 1);

    ort_model m = { 0 };
    bd_error err = { 0 };
    assert_int_equal(ort_serialize(&sg, NULL, &m, &err), 0);
    bd_graph *back = NULL;
    if (bd_onnx_import_memory(m.bytes, m.len, NULL, &back, &err))
        fail_msg("import of the serialized subgraph failed: %s", err.msg);
    const bd_value *bx = bd_graph_find_value(back, "X"), *bs = bd_graph_find_value(back, "sizes");
    assert_int_equal(bx->shape.dims[2], -1);             /* data dims stay symbolic */
    assert_int_equal(bs->shape.rank, 1);
    assert_int_equal(bs->shape.dims[0], 4);              /* a list's length is written */
    const bd_node *bn = bd_graph_node(back, 0);
    assert_int_equal(bn->n_inputs, 4);
    assert_null(bn->inputs[1]);                          /* omitted stays omitted ("") */
    assert_null(bn->inputs[2]);
    bd_graph_destroy(back);
    ort_model_free(&m);

    char avail[256];
    if (!bd_ort_available(avail, sizeof avail)) {
        print_message("SKIPPED (run): %s\n", avail);
        bd_graph_destroy(g);
        return;
    }
    bd_kernel *k;
    bd_kernel_ctx *ctx;
    if (bd_ort_backend.compile(&sg, &k, &err))
        fail_msg("compile: %s", err.msg);
    assert_int_equal(bd_ort_backend.ctx_create(k, &ctx, &err), 0);
    float xv[4] = { 1, 2, 3, 4 };
    int64_t sizes[4] = { 1, 1, 4, 4 }, xs[] = { 1, 1, 2, 2 }, ss[] = { 4 }, ys[BD_MAX_RANK];
    DLTensor tin[] = { tensor(xv, BD_DT_FLOAT, 4, xs), tensor(sizes, BD_DT_INT64, 1, ss) };
    DLTensor tout = tensor(NULL, BD_DT_FLOAT, 0, ys);
    if (bd_ort_backend.run(ctx, tin, 2, &tout, 1, &err))
        fail_msg("run: %s", err.msg);
    assert_int_equal(tout.ndim, 4);
    assert_int_equal(ys[2], 4);
    assert_int_equal(ys[3], 4);
    const float *yv = tout.data;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            assert_true(yv[i * 4 + j] == xv[(i / 2) * 2 + j / 2]);
    bd_ort_backend.ctx_destroy(ctx);
    bd_ort_backend.release(k);
    bd_graph_destroy(g);
}

/* A subgraph that reads only constants (nothing fed at run time): ORT would fold it to
 * nothing and refuse the session, so its constants become inputs the engine feeds itself;
 * every run (and every context) computes the same result. */
static void test_all_constant_subgraph_runs(void **state)
{
    (void)state;
    bd_graph *g = bd_graph_create("consts");
    float a[6] = { 0.0f, 0.5f, 1.0f, -1.0f, 2.0f, 3.0f };
    int64_t two = 2;
    bd_value *c = constant(g, "C", BD_DT_FLOAT, SHP(2, 3), a, sizeof a);
    bd_value *k = constant(g, "K", BD_DT_INT64, SHP(1), &two, sizeof two);
    bd_value *s = val(g, "S", BD_DT_FLOAT, SHP(2, 3));
    bd_value *v = val(g, "V", BD_DT_FLOAT, SHP(2, 2)), *ix = val(g, "I", BD_DT_INT64, SHP(2, 2));
    node(g, "sin", "Sin", &c, 1, &s, 1);
    node(g, "topk", "TopK", (bd_value *[]){ s, k }, 2, (bd_value *[]){ v, ix }, 2);
    bd_node *nodes[2];
    bd_value *out[] = { v, ix };
    bd_subgraph sg = whole(g, nodes, NULL, 0, out, 2);

    ort_model m = { 0 };
    bd_error err = { 0 };
    assert_int_equal(ort_serialize(&sg, NULL, &m, &err), 0);
    assert_int_equal(m.n_fed, 2);
    assert_ptr_equal(m.fed[0], c);
    assert_ptr_equal(m.fed[1], k);
    ort_model_free(&m);

    char avail[256];
    if (!bd_ort_available(avail, sizeof avail)) {
        print_message("SKIPPED (run): %s\n", avail);
        bd_graph_destroy(g);
        return;
    }
    bd_kernel *kern;
    if (bd_ort_backend.compile(&sg, &kern, &err))
        fail_msg("compile: %s", err.msg);
    for (int round = 0; round < 2; round++) {
        bd_kernel_ctx *ctx;
        assert_int_equal(bd_ort_backend.ctx_create(kern, &ctx, &err), 0);
        for (int r = 0; r < 2; r++) {
            float vv[4] = { 0 };
            int64_t iv[4] = { 0 }, vs[] = { 2, 2 };
            DLTensor tout[] = { tensor(vv, BD_DT_FLOAT, 2, vs), tensor(iv, BD_DT_INT64, 2, vs) };
            if (bd_ort_backend.run(ctx, NULL, 0, tout, 2, &err))
                fail_msg("run: %s", err.msg);
            /* row 0: sin(1) > sin(0.5) > sin(0); row 1: sin(2) > sin(3) > sin(-1) */
            static const int64_t want_i[4] = { 2, 1, 1, 2 };
            for (int i = 0; i < 4; i++) {
                assert_int_equal(iv[i], want_i[i]);
                assert_true(fabsf(vv[i] - sinf(a[(i / 2) * 3 + want_i[i]])) < 1e-6f);
            }
        }
        bd_ort_backend.ctx_destroy(ctx);
    }
    bd_ort_backend.release(kern);
    bd_graph_destroy(g);
}

/* ---- subgraph attributes ----------------------------------------------------------------- */

static const char *onnx_models_dir;

static bd_graph *import_test_model(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", onnx_models_dir, file);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    if (bd_onnx_import_file(path, &g, &err))
        fail_msg("import %s: %s", path, err.msg);
    return g;
}

/* Compile G whole (its graph inputs in, its graph outputs out). */
static bd_kernel *compile_whole(bd_graph *g, bd_node **nodes, bd_value **in, bd_value **out,
                                bd_subgraph *sg)
{
    size_t n_in = bd_graph_num_inputs(g), n_out = bd_graph_num_outputs(g);
    for (size_t i = 0; i < n_in; i++)
        in[i] = bd_graph_input(g, i);
    for (size_t i = 0; i < n_out; i++)
        out[i] = bd_graph_output(g, i);
    *sg = whole(g, nodes, in, n_in, out, n_out);
    bd_kernel *k = NULL;
    bd_error err = { 0 };
    if (bd_ort_backend.compile(sg, &k, &err))
        fail_msg("compile: %s", err.msg);
    return k;
}

/* An If whose branches read 'x' from the main graph: the serialized node lists only its
 * condition, the branch bodies are the file's bytes, and 'x' is a graph input of the model
 * (re-imported, it is the node's implicit input again). ORT picks the branch. */
static void test_if_bodies_round_trip_and_run(void **state)
{
    (void)state;
    bd_graph *g = import_test_model("subgraph.onnx");
    bd_node *nodes[1];
    bd_value *in[2], *out[1];
    in[0] = bd_graph_input(g, 0);
    in[1] = bd_graph_input(g, 1);
    out[0] = bd_graph_output(g, 0);
    bd_subgraph sg = whole(g, nodes, in, 2, out, 1);
    ort_model m = { 0 };
    bd_error err = { 0 };
    assert_int_equal(ort_serialize(&sg, NULL, &m, &err), 0);
    bd_graph *back = NULL;
    if (bd_onnx_import_memory(m.bytes, m.len, NULL, &back, &err))
        fail_msg("import of the serialized subgraph failed: %s", err.msg);
    const bd_node *a = nodes[0], *b = bd_graph_node(back, 0);
    assert_string_equal(b->op_type, "If");
    assert_int_equal(b->n_inputs, 2);
    assert_int_equal(b->n_implicit, 1);
    assert_string_equal(b->inputs[1]->name, "x");
    assert_true(b->inputs[1]->is_input);                 /* a boundary input of the model */
    const char *branches[] = { "then_branch", "else_branch" };
    for (int i = 0; i < 2; i++) {
        const bd_attr *x = bd_node_attr(a, branches[i]), *y = bd_node_attr(b, branches[i]);
        assert_int_equal(x->graph_len, y->graph_len);
        assert_memory_equal(x->graph, y->graph, x->graph_len);   /* written back verbatim */
    }
    bd_graph_destroy(back);
    ort_model_free(&m);
    bd_graph_destroy(g);

    char avail[256];
    if (!bd_ort_available(avail, sizeof avail)) {
        print_message("SKIPPED (run): %s\n", avail);
        return;
    }
    g = import_test_model("subgraph.onnx");
    bd_kernel *k = compile_whole(g, nodes, in, out, &sg);
    bd_kernel_ctx *ctx;
    assert_int_equal(bd_ort_backend.ctx_create(k, &ctx, &err), 0);
    for (int c = 0; c < 2; c++) {
        uint8_t cond = (uint8_t)c;
        float x[2] = { 1.5f, -2.0f }, y[2] = { 0 };
        int64_t xs[] = { 2 };
        DLTensor tin[] = { tensor(&cond, BD_DT_BOOL, 0, NULL), tensor(x, BD_DT_FLOAT, 1, xs) };
        DLTensor tout = tensor(y, BD_DT_FLOAT, 1, xs);
        if (bd_ort_backend.run(ctx, tin, 2, &tout, 1, &err))
            fail_msg("run: %s", err.msg);
        for (int i = 0; i < 2; i++)
            assert_true(y[i] == (c ? x[i] : -x[i]));
    }
    bd_ort_backend.ctx_destroy(ctx);
    bd_ort_backend.release(k);
    bd_graph_destroy(g);
}

/* A Loop whose body holds an If reading the main graph's 'w' and 'z' two levels down:
 * v = v0 + 3 w after three iterations (the condition is omitted, so the then branch runs). */
static void test_nested_bodies_read_outer_values(void **state)
{
    (void)state;
    ORT_OR_SKIP();
    bd_graph *g = import_test_model("nested_subgraph.onnx");
    bd_node *nodes[1];
    bd_value *in[4], *out[1];
    bd_subgraph sg;
    bd_kernel *k = compile_whole(g, nodes, in, out, &sg);
    bd_kernel_ctx *ctx;
    bd_error err = { 0 };
    assert_int_equal(bd_ort_backend.ctx_create(k, &ctx, &err), 0);
    int64_t trips = 3, s2[] = { 2 };
    float v0[2] = { 1, 2 }, w[2] = { 10, 100 }, z[2] = { 7, 7 }, v[2] = { 0 };
    DLTensor tin[] = { tensor(&trips, BD_DT_INT64, 0, NULL), tensor(v0, BD_DT_FLOAT, 1, s2),
                       tensor(w, BD_DT_FLOAT, 1, s2), tensor(z, BD_DT_FLOAT, 1, s2) };
    DLTensor tout = tensor(v, BD_DT_FLOAT, 1, s2);
    if (bd_ort_backend.run(ctx, tin, 4, &tout, 1, &err))
        fail_msg("run: %s", err.msg);
    assert_true(v[0] == 31.0f && v[1] == 302.0f);
    bd_ort_backend.ctx_destroy(ctx);
    bd_ort_backend.release(k);
    bd_graph_destroy(g);
}

int main(int argc, char **argv)
{
    /* argv[1]: tests/partitioner/onnx's build directory (its generated models) */
    onnx_models_dir = argc > 1 ? argv[1] : "tests/partitioner/onnx";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serialize_round_trip),
        cmocka_unit_test(test_serialize_keeps_large_weights_external),
        cmocka_unit_test(test_supports_onnx_nodes_only),
        cmocka_unit_test(test_relu_topk_nonzero_vs_reference),
        cmocka_unit_test(test_weights_read_in_place),
        cmocka_unit_test(test_session_shared_across_batch_sizes),
        cmocka_unit_test(test_concurrent_contexts_share_a_session),
        cmocka_unit_test(test_run_error_names_node),
        cmocka_unit_test(test_resize_runtime_sizes_input),
        cmocka_unit_test(test_all_constant_subgraph_runs),
        cmocka_unit_test(test_if_bodies_round_trip_and_run),
        cmocka_unit_test(test_nested_bodies_read_outer_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
