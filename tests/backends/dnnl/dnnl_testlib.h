/* Helpers for the oneDNN backend tests: build small graphs by hand, run them through the
 * backend table, and compare with naive references. Header-only (one test executable). */
#ifndef BD_TESTS_BACKENDS_DNNL_DNNL_TESTLIB_H
#define BD_TESTS_BACKENDS_DNNL_DNNL_TESTLIB_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "backends/dnnl/dnnl_backend.h"
#include "core/ir/graph.h"
#include "tests/lib/tl_compare.h"
#include "tests/lib/tl_graph.h"

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define NDIMS(...) ((int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)))
#define SHAPE(...) NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__)

typedef struct tg {
    bd_graph *g;
    int       counter;
    uint32_t  seed;
} tg;

static float t_rand(tg *t)
{
    t->seed = t->seed * 1664525u + 1013904223u;
    return ((float)(t->seed >> 8) / (float)(1u << 24)) * 2.0f - 1.0f;
}

static tg *tg_new(void)
{
    tg *t = calloc(1, sizeof *t);
    t->g = bd_graph_create("test");
    t->seed = 12345;
    assert_non_null(t->g);
    return t;
}

static void tg_free(tg *t)
{
    bd_graph_destroy(t->g);
    free(t);
}

static bd_value *t_val(tg *t, int rank, const int64_t *dims)
{
    char name[32];
    snprintf(name, sizeof name, "v%d", t->counter++);
    bd_shape s = bd_shape_make(rank, dims);
    bd_value *v = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_graph_add_value(t->g, name, BD_DT_FLOAT, &s, &v, &err), 0);
    return v;
}

static bd_value *t_input(tg *t, int rank, const int64_t *dims)
{
    bd_value *v = t_val(t, rank, dims);
    bd_error err = { 0 };
    assert_int_equal(bd_graph_mark_input(t->g, v, &err), 0);
    v->is_input = true;
    return v;
}

static void t_output(tg *t, bd_value *v)
{
    bd_error err = { 0 };
    assert_int_equal(bd_graph_mark_output(t->g, v, &err), 0);
    v->is_output = true;
}

/* A constant with random values in [lo, hi]. */
static bd_value *t_const_range(tg *t, int rank, const int64_t *dims, float lo, float hi)
{
    bd_value *v = t_val(t, rank, dims);
    size_t n = (size_t)bd_shape_numel(&v->shape);
    float *d = bd_graph_alloc(t->g, n * sizeof(float) + 4);
    for (size_t i = 0; i < n; i++)
        d[i] = lo + (t_rand(t) + 1.0f) * 0.5f * (hi - lo);
    v->data = d;
    v->nbytes = n * sizeof(float);
    return v;
}

static bd_value *t_const(tg *t, int rank, const int64_t *dims)
{
    return t_const_range(t, rank, dims, -1.0f, 1.0f);
}

static bd_value *t_const_i64(tg *t, int n, const int64_t *vals)
{
    char name[32];
    snprintf(name, sizeof name, "v%d", t->counter++);
    int64_t d = n;
    bd_shape s = bd_shape_make(1, &d);
    bd_value *v = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_graph_add_value(t->g, name, BD_DT_INT64, &s, &v, &err), 0);
    int64_t *p = bd_graph_alloc(t->g, sizeof *p * (size_t)(n ? n : 1));
    memcpy(p, vals, sizeof *p * (size_t)n);
    v->data = p;
    v->nbytes = sizeof *p * (size_t)n;
    return v;
}

static const float *t_data(const bd_value *v) { return v->data; }

static bd_node *t_node(tg *t, const char *op, const char *domain, int nin, bd_value **ins,
                       bd_value *out)
{
    char name[32];
    snprintf(name, sizeof name, "%s_%d", op, t->counter++);
    bd_node *n = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_graph_add_node(t->g, name, op, domain, ins, (size_t)nin, &out, 1, &n, &err), 0);
    return n;
}

#define NODE(t, op, out, ...) \
    t_node((t), (op), "", (int)(sizeof((bd_value *[]){ __VA_ARGS__ }) / sizeof(bd_value *)), \
           (bd_value *[]){ __VA_ARGS__ }, (out))

static void t_attr_i(tg *t, bd_node *n, const char *name, int64_t v)
{
    tl_attr_int(t->g, n, name, v);
}

static void t_attr_f(tg *t, bd_node *n, const char *name, float v)
{
    tl_attr_float(t->g, n, name, v);
}

static void t_attr_s(tg *t, bd_node *n, const char *name, const char *v)
{
    tl_attr_str(t->g, n, name, v);
}

static void t_attr_ints(tg *t, bd_node *n, const char *name, int cnt, const int64_t *v)
{
    tl_attr_ints(t->g, n, name, (size_t)cnt, v);
}

#define ATTR_INTS(t, n, name, ...) t_attr_ints((t), (n), (name), NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

/* ---- running ------------------------------------------------------------------------------ */

typedef struct trun {
    bd_kernel *k;
    bd_subgraph sg;
    float *in[8], *out[8];
    DLTensor tin[8], tout[8];
    int64_t in_shape[8][BD_MAX_RANK], out_shape[8][BD_MAX_RANK];
} trun;

static void t_fill_tensor(DLTensor *d, int64_t *shape, const bd_value *v, float *data)
{
    memset(d, 0, sizeof *d);
    for (int i = 0; i < v->shape.rank; i++)
        shape[i] = v->shape.dims[i];
    d->data = data;
    d->device = (DLDevice){ kDLCPU, 0 };
    d->ndim = v->shape.rank;
    d->dtype = (DLDataType){ kDLFloat, 32, 1 };
    d->shape = shape;
}

/* Check supports() for every node, compile the whole graph as one subgraph, create random
 * inputs. Returns the run state (inputs filled). */
static trun *t_compile(tg *t)
{
    trun *r = calloc(1, sizeof *r);
    size_t nn = bd_graph_num_nodes(t->g);
    bd_node **nodes = calloc(nn + 1, sizeof *nodes);
    for (size_t i = 0; i < nn; i++) {
        nodes[i] = bd_graph_node(t->g, i);
        char why[256] = "";
        bool ok = bd_dnnl_backend.supports(t->g, nodes[i], why, sizeof why);
        if (!ok)
            fprintf(stderr, "supports(%s) = false: %s\n", nodes[i]->name, why);
        assert_true(ok);
    }
    size_t ni = bd_graph_num_inputs(t->g), no = bd_graph_num_outputs(t->g);
    bd_value **ins = calloc(ni + 1, sizeof *ins), **outs = calloc(no + 1, sizeof *outs);
    for (size_t i = 0; i < ni; i++)
        ins[i] = bd_graph_input(t->g, i);
    for (size_t i = 0; i < no; i++)
        outs[i] = bd_graph_output(t->g, i);
    r->sg = (bd_subgraph){ t->g, nodes, nn, ins, ni, outs, no, 0, NULL };
    bd_error err = { 0 };
    int rc = bd_dnnl_backend.compile(&r->sg, &r->k, &err);
    if (rc)
        fprintf(stderr, "compile failed: %s\n", err.msg);
    assert_int_equal(rc, 0);
    for (size_t i = 0; i < ni; i++) {
        size_t n = (size_t)bd_shape_numel(&ins[i]->shape);
        r->in[i] = malloc(n * sizeof(float) + 4);
        for (size_t j = 0; j < n; j++)
            r->in[i][j] = t_rand(t);
        t_fill_tensor(&r->tin[i], r->in_shape[i], ins[i], r->in[i]);
    }
    for (size_t i = 0; i < no; i++) {
        size_t n = (size_t)bd_shape_numel(&outs[i]->shape);
        r->out[i] = calloc(n + 1, sizeof(float));
        t_fill_tensor(&r->tout[i], r->out_shape[i], outs[i], r->out[i]);
    }
    return r;
}

/* Run once in a fresh context. */
static void t_exec(trun *r)
{
    bd_kernel_ctx *ctx = NULL;
    bd_error err = { 0 };
    int rc = bd_dnnl_backend.ctx_create(r->k, &ctx, &err);
    if (rc)
        fprintf(stderr, "ctx_create failed: %s\n", err.msg);
    assert_int_equal(rc, 0);
    rc = bd_dnnl_backend.run(ctx, r->tin, r->sg.n_inputs, r->tout, r->sg.n_outputs, &err);
    if (rc)
        fprintf(stderr, "run failed: %s\n", err.msg);
    assert_int_equal(rc, 0);
    bd_dnnl_backend.ctx_destroy(ctx);
}

static trun *t_run(tg *t)
{
    trun *r = t_compile(t);
    t_exec(r);
    return r;
}

static void t_run_free(trun *r)
{
    bd_dnnl_backend.release(r->k);
    for (size_t i = 0; i < r->sg.n_inputs; i++)
        free(r->in[i]);
    for (size_t i = 0; i < r->sg.n_outputs; i++)
        free(r->out[i]);
    free((void *)r->sg.nodes);
    free((void *)r->sg.inputs);
    free((void *)r->sg.outputs);
    free(r);
}

/* Compare N floats; tolerance 1e-4 relative to the reference's magnitude. */
static void t_compare(const char *what, const float *got, const float *ref, size_t n)
{
    assert_true(tl_close_f32(what, got, ref, n, 1e-4));
}

/* ---- references ---------------------------------------------------------------------------- */

/* Offset of output element I (dims OUT, rank R) in an input of rank r (dims IN) broadcast
 * numpy-style. */
static size_t bcast_off(size_t i, int R, const int64_t *out, int r, const int64_t *in)
{
    size_t off = 0, stride = 1;
    for (int k = R - 1; k >= 0; k--) {
        int64_t c = (int64_t)(i % (size_t)out[k]);
        i /= (size_t)out[k];
        int ki = k - (R - r);
        if (ki >= 0) {
            if (in[ki] != 1)
                off += (size_t)c * stride;
            stride *= (size_t)in[ki];
        }
    }
    return off;
}

/* 2-D (or 1-D with H=1) convolution, NCHW, ONNX semantics. */
static void ref_conv2d(const float *x, int64_t N, int64_t C, int64_t H, int64_t W,
                       const float *w, int64_t M, int64_t KH, int64_t KW, const float *b,
                       int64_t G, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                       int64_t dh, int64_t dw, float *y, int64_t OH, int64_t OW)
{
    int64_t cg = C / G, mg = M / G;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t g = m / mg;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = b ? b[m] : 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t ih = oh * sh - ph + kh * dh, iw = ow * sw - pw + kw * dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                acc += (double)x[((n * C + g * cg + c) * H + ih) * W + iw] *
                                       w[((m * cg + c) * KH + kh) * KW + kw];
                            }
                    y[((n * M + m) * OH + oh) * OW + ow] = (float)acc;
                }
        }
}

/* Batched matmul with broadcast: A [..., M, K] (rank ra), B [..., K, N] (rank rb) -> Y rank R. */
static inline void ref_matmul(const float *a, int ra, const int64_t *ad, const float *b, int rb,
                       const int64_t *bd, float *y, int R, const int64_t *yd)
{
    int64_t M = yd[R - 2], N = yd[R - 1], K = ad[ra - 1];
    size_t batches = 1;
    for (int i = 0; i < R - 2; i++)
        batches *= (size_t)yd[i];
    for (size_t bi = 0; bi < batches; bi++) {
        /* offsets of this batch in A and B via broadcasting on the batch dims */
        size_t ao = bcast_off(bi, R - 2, yd, ra - 2, ad) * (size_t)(M * K);
        size_t bo = bcast_off(bi, R - 2, yd, rb - 2, bd) * (size_t)(K * N);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0;
                for (int64_t k = 0; k < K; k++)
                    acc += (double)a[ao + (size_t)(m * K + k)] * b[bo + (size_t)(k * N + n)];
                y[bi * (size_t)(M * N) + (size_t)(m * N + n)] = (float)acc;
            }
    }
}

static inline float ref_gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x / sqrtf(2.0f))); }
static inline float ref_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

#endif
