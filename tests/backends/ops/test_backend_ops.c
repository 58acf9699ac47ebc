/* Every engine on one table of operator cases, in the spirit of ggml's test-backend-ops.
 *
 * Each case is one ONNX-domain node (op, attributes, input shapes and dtypes) built as a
 * one-node graph. For every engine of the registry (runtime/engines.c, bd_backends()) the
 * harness asks the engine's supports() whether it claims the node; if so it loads the graph
 * with the engine forced (bd_model_options.engine, docs/partitioning.md), runs it through the
 * runtime and compares the output with one naive reference per op written here, independent
 * of braid's kernels. A claimed case that fails to load, to run, or to match fails the test;
 * a declined case is reported as skipped with the engine's reason (a fallback engine whose
 * library is absent declines every node and says so). A case no engine runs is reported too.
 * A new engine is tested by registering it; a new case is one row of the table.
 *
 * Output: one line per case and engine, then a table case x engine -> ok / skip / FAIL. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "core/backend.h"
#include "core/ir/graph.h"
#include "runtime/engines.h"
#include "runtime/model.h"
#include "tests/lib/tl_compare.h"
#include "tests/lib/tl_graph.h"

#define MAX_IN    5
#define MAX_ATTR  6
#define MAX_ENG   8
#define OPSET     17          /* the newest opset every engine maps (oneDNN: 7-17) */

/* ---- the case table ---------------------------------------------------------------------- */

typedef struct in_spec {
    int      dtype;           /* 0 = FLOAT; BD_DT_INT64 for shapes, axes, indices */
    int      rank;
    int64_t  dims[BD_MAX_RANK];
    bool     constant;        /* an initializer (weights, shapes, indices), else a fed input */
    bool     omitted;         /* an omitted optional input (NULL in the node's inputs) */
    const int64_t *ivals;     /* INT64 values */
    const float   *fvals;     /* FLOAT values (else random in [lo, hi], [-1, 1] by default) */
    float    lo, hi;
} in_spec;

typedef struct attr_spec {
    const char *name;         /* NULL ends the list */
    char        type;         /* 'i' int, 'f' float, 's' string, 'I' ints */
    int64_t     i;
    float       f;
    const char *s;
    int         n;
    int64_t     ints[8];
} attr_spec;

typedef struct tensor {       /* a reference's view of an input */
    int            rank;
    const int64_t *dims;
    const float   *f;
    const int64_t *i;
} tensor;

typedef struct op_case op_case;
typedef void (*ref_fn)(const op_case *c, const tensor *in, float *out);

struct op_case {
    const char *name;
    const char *op;
    const char *domain;       /* NULL = ONNX */
    int         n_in;
    in_spec     in[MAX_IN];
    attr_spec   attr[MAX_ATTR];
    int         out_rank;
    int64_t     out_dims[BD_MAX_RANK];
    ref_fn      ref;
    double      tol;          /* relative to max(1, max |ref|); 0 = 1e-4 */
};

#define IN(...)   { .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                    .dims = { __VA_ARGS__ } }
#define INR(lo_, hi_, ...) { .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                    .dims = { __VA_ARGS__ }, .lo = (lo_), .hi = (hi_) }
#define W(...)    { .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                    .dims = { __VA_ARGS__ }, .constant = true }
#define WR(lo_, hi_, ...) { .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                    .dims = { __VA_ARGS__ }, .constant = true, .lo = (lo_), .hi = (hi_) }
#define WF(vals, ...) { .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                    .dims = { __VA_ARGS__ }, .constant = true, .fvals = (vals) }
#define I64(...)  { .dtype = BD_DT_INT64, .rank = 1, \
                    .dims = { (int64_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)) }, \
                    .constant = true, .ivals = (const int64_t[]){ __VA_ARGS__ } }
#define OMIT      { .omitted = true }
#define OUT(...)  .out_rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                  .out_dims = { __VA_ARGS__ }
#define AI(nm, v)    { .name = (nm), .type = 'i', .i = (v) }
#define AF(nm, v)    { .name = (nm), .type = 'f', .f = (v) }
#define AS(nm, v)    { .name = (nm), .type = 's', .s = (v) }
#define AINTS(nm, ...) { .name = (nm), .type = 'I', \
                         .n = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                         .ints = { __VA_ARGS__ } }

/* ---- attribute and index helpers for the references ---------------------------------------- */

static const attr_spec *find_attr(const op_case *c, const char *name)
{
    for (int i = 0; i < MAX_ATTR && c->attr[i].name; i++)
        if (strcmp(c->attr[i].name, name) == 0)
            return &c->attr[i];
    return NULL;
}

static int64_t attr_i(const op_case *c, const char *name, int64_t dflt)
{
    const attr_spec *a = find_attr(c, name);
    return a ? a->i : dflt;
}

static float attr_f(const op_case *c, const char *name, float dflt)
{
    const attr_spec *a = find_attr(c, name);
    return a ? a->f : dflt;
}

static const char *attr_s(const op_case *c, const char *name, const char *dflt)
{
    const attr_spec *a = find_attr(c, name);
    return a ? a->s : dflt;
}

static size_t numel(int rank, const int64_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

static void unravel(size_t i, int rank, const int64_t *dims, int64_t *idx)
{
    for (int k = rank - 1; k >= 0; k--) {
        idx[k] = (int64_t)(i % (size_t)dims[k]);
        i /= (size_t)dims[k];
    }
}

static size_t ravel(const int64_t *idx, int rank, const int64_t *dims)
{
    size_t off = 0;
    for (int k = 0; k < rank; k++)
        off = off * (size_t)dims[k] + (size_t)idx[k];
    return off;
}

/* Offset in T of output index IDX (rank R), numpy broadcasting from the right. */
static size_t bcast(const tensor *t, const int64_t *idx, int r)
{
    size_t off = 0;
    for (int k = 0; k < t->rank; k++) {
        int64_t d = t->dims[k], j = idx[r - t->rank + k];
        off = off * (size_t)d + (size_t)(d == 1 ? 0 : j);
    }
    return off;
}

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

/* ---- references ------------------------------------------------------------------------------ */

static double unary(const op_case *c, double x)
{
    const char *op = c->op;
    if (!strcmp(op, "Relu"))      return x > 0 ? x : 0;
    if (!strcmp(op, "Sigmoid"))   return 1 / (1 + exp(-x));
    if (!strcmp(op, "Tanh"))      return tanh(x);
    if (!strcmp(op, "Erf"))       return erf(x);
    if (!strcmp(op, "Gelu"))      return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    if (!strcmp(op, "LeakyRelu")) return x >= 0 ? x : attr_f(c, "alpha", 0.01f) * x;
    if (!strcmp(op, "Elu"))       return x >= 0 ? x : attr_f(c, "alpha", 1.0f) * (exp(x) - 1);
    if (!strcmp(op, "Swish"))     return x / (1 + exp(-x));
    if (!strcmp(op, "HardSwish")) return x * fmin(1, fmax(0, x / 6 + 0.5));
    if (!strcmp(op, "HardSigmoid"))
        return fmin(1, fmax(0, attr_f(c, "alpha", 0.2f) * x + attr_f(c, "beta", 0.5f)));
    if (!strcmp(op, "Abs"))       return fabs(x);
    if (!strcmp(op, "Sqrt"))      return sqrt(x);
    if (!strcmp(op, "Exp"))       return exp(x);
    if (!strcmp(op, "Log"))       return log(x);
    if (!strcmp(op, "Softplus"))  return log1p(exp(x));
    if (!strcmp(op, "Neg"))       return -x;
    if (!strcmp(op, "Reciprocal")) return 1 / x;
    if (!strcmp(op, "Floor"))     return floor(x);
    if (!strcmp(op, "Sin"))       return sin(x);
    fprintf(stderr, "no unary reference for %s\n", op);
    abort();
}

static void ref_unary(const op_case *c, const tensor *in, float *out)
{
    size_t n = numel(in[0].rank, in[0].dims);
    for (size_t i = 0; i < n; i++)
        out[i] = (float)unary(c, in[0].f[i]);
}

/* Clip with min/max inputs (opset 11+). */
static void ref_clip(const op_case *c, const tensor *in, float *out)
{
    size_t n = numel(in[0].rank, in[0].dims);
    for (size_t i = 0; i < n; i++) {
        float x = in[0].f[i];
        x = x < in[1].f[0] ? in[1].f[0] : x;
        out[i] = x > in[2].f[0] ? in[2].f[0] : x;
    }
}

/* Pow with numpy broadcasting of the exponent. */
static void ref_pow(const op_case *c, const tensor *in, float *out)
{
    size_t n = numel(c->out_rank, c->out_dims);
    int64_t idx[BD_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        unravel(i, c->out_rank, c->out_dims, idx);
        out[i] = (float)pow(in[0].f[bcast(&in[0], idx, c->out_rank)], in[1].f[bcast(&in[1], idx, c->out_rank)]);
    }
}

static void ref_binary(const op_case *c, const tensor *in, float *out)
{
    size_t n = numel(c->out_rank, c->out_dims);
    int64_t idx[BD_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        unravel(i, c->out_rank, c->out_dims, idx);
        double a = in[0].f[bcast(&in[0], idx, c->out_rank)];
        double b = in[1].f[bcast(&in[1], idx, c->out_rank)];
        const char *op = c->op;
        out[i] = (float)(!strcmp(op, "Add") ? a + b : !strcmp(op, "Sub") ? a - b
                         : !strcmp(op, "Mul") ? a * b : !strcmp(op, "Div") ? a / b
                         : !strcmp(op, "Max") ? (a > b ? a : b) : (a < b ? a : b));
    }
}

static void ref_prelu(const op_case *c, const tensor *in, float *out)
{
    size_t n = numel(c->out_rank, c->out_dims);
    int64_t idx[BD_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        unravel(i, c->out_rank, c->out_dims, idx);
        float x = in[0].f[i], s = in[1].f[bcast(&in[1], idx, c->out_rank)];
        out[i] = x >= 0 ? x : s * x;
    }
}

/* MatMul with numpy broadcasting of the batch dims (both operands rank >= 2). */
static void ref_matmul(const op_case *c, const tensor *in, float *out)
{
    const tensor *a = &in[0], *b = &in[1];
    int R = c->out_rank;
    int64_t M = c->out_dims[R - 2], N = c->out_dims[R - 1], K = a->dims[a->rank - 1];
    size_t n = numel(R, c->out_dims);
    int64_t idx[BD_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        unravel(i, R, c->out_dims, idx);
        int64_t m = idx[R - 2], j = idx[R - 1];
        double acc = 0;
        for (int64_t k = 0; k < K; k++) {
            idx[R - 2] = m;
            idx[R - 1] = k;
            double x = a->f[bcast(a, idx, R)];
            idx[R - 2] = k;
            idx[R - 1] = j;
            acc += x * b->f[bcast(b, idx, R)];
        }
        out[i] = (float)acc;
    }
    (void)M;
    (void)N;
}

static void ref_gemm(const op_case *c, const tensor *in, float *out)
{
    bool ta = attr_i(c, "transA", 0), tb = attr_i(c, "transB", 0);
    double alpha = attr_f(c, "alpha", 1), beta = attr_f(c, "beta", 1);
    int64_t M = c->out_dims[0], N = c->out_dims[1];
    int64_t K = ta ? in[0].dims[0] : in[0].dims[1];
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (double)in[0].f[ta ? k * M + m : m * K + k] *
                       in[1].f[tb ? n * K + k : k * N + n];
            int64_t idx[2] = { m, n };
            double cterm = c->n_in > 2 ? in[2].f[bcast(&in[2], idx, 2)] : 0;
            out[m * N + n] = (float)(alpha * acc + beta * cterm);
        }
}

static void ints_or(const op_case *c, const char *name, int n, const int64_t *dflt, int64_t *v)
{
    const attr_spec *a = find_attr(c, name);
    for (int i = 0; i < n; i++)
        v[i] = a ? a->ints[i] : dflt[i];
}

/* 2-D convolution, NCHW, ONNX semantics (explicit pads, strides, dilations, group). */
static void ref_conv(const op_case *c, const tensor *in, float *out)
{
    const int64_t *xd = in[0].dims, *wd = in[1].dims;
    int64_t N = xd[0], C = xd[1], H = xd[2], Wd = xd[3], M = wd[0], KH = wd[2], KW = wd[3];
    int64_t G = attr_i(c, "group", 1), OH = c->out_dims[2], OW = c->out_dims[3];
    int64_t s[2], d[2], p[4];
    ints_or(c, "strides", 2, (const int64_t[]){ 1, 1 }, s);
    ints_or(c, "dilations", 2, (const int64_t[]){ 1, 1 }, d);
    ints_or(c, "pads", 4, (const int64_t[]){ 0, 0, 0, 0 }, p);
    int64_t cg = C / G, mg = M / G;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = c->n_in > 2 ? in[2].f[m] : 0;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t ih = oh * s[0] - p[0] + kh * d[0];
                                int64_t iw = ow * s[1] - p[1] + kw * d[1];
                                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                                    continue;
                                int64_t xc = (m / mg) * cg + ci;    /* its group's channel */
                                acc += (double)in[0].f[((n * C + xc) * H + ih) * Wd + iw] *
                                       in[1].f[((m * cg + ci) * KH + kh) * KW + kw];
                            }
                    out[((n * M + m) * OH + oh) * OW + ow] = (float)acc;
                }
}

/* MaxPool / AveragePool (2-D, explicit pads) and the global pools. */
static void ref_pool(const op_case *c, const tensor *in, float *out)
{
    const int64_t *xd = in[0].dims;
    int64_t N = xd[0], C = xd[1], H = xd[2], Wd = xd[3], OH = c->out_dims[2], OW = c->out_dims[3];
    bool global = !strncmp(c->op, "Global", 6);
    bool is_max = strstr(c->op, "Max") != NULL;
    int64_t k[2] = { H, Wd }, s[2] = { 1, 1 }, p[4] = { 0, 0, 0, 0 };
    if (!global) {
        ints_or(c, "kernel_shape", 2, k, k);
        ints_or(c, "strides", 2, s, s);
        ints_or(c, "pads", 4, p, p);
    }
    bool count_pad = attr_i(c, "count_include_pad", 0);
    for (int64_t nc = 0; nc < N * C; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double acc = is_max ? -INFINITY : 0;
                int64_t cnt = 0;
                for (int64_t kh = 0; kh < k[0]; kh++)
                    for (int64_t kw = 0; kw < k[1]; kw++) {
                        int64_t ih = oh * s[0] - p[0] + kh, iw = ow * s[1] - p[1] + kw;
                        bool inside = ih >= 0 && ih < H && iw >= 0 && iw < Wd;
                        bool in_padded = ih < H + p[2] && iw < Wd + p[3];
                        if (!inside) {
                            cnt += count_pad && in_padded;
                            continue;
                        }
                        double x = in[0].f[(nc * H + ih) * Wd + iw];
                        acc = is_max ? (x > acc ? x : acc) : acc + x;
                        cnt++;
                    }
                out[(nc * OH + oh) * OW + ow] = (float)(is_max ? acc : acc / (double)cnt);
            }
}

/* outer x axis x inner around one axis of the input. */
static void split_axis(const tensor *t, int axis, size_t *outer, size_t *len, size_t *inner)
{
    *outer = numel(axis, t->dims);
    *len = (size_t)t->dims[axis];
    *inner = numel(t->rank - axis - 1, t->dims + axis + 1);
}

static void ref_softmax(const op_case *c, const tensor *in, float *out)
{
    size_t outer, len, inner;
    split_axis(&in[0], norm_axis(attr_i(c, "axis", -1), in[0].rank), &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < inner; j++) {
            const float *x = in[0].f + o * len * inner + j;
            double mx = -INFINITY, sum = 0;
            for (size_t a = 0; a < len; a++)
                mx = x[a * inner] > mx ? x[a * inner] : mx;
            for (size_t a = 0; a < len; a++)
                sum += exp(x[a * inner] - mx);
            for (size_t a = 0; a < len; a++)
                out[o * len * inner + a * inner + j] = (float)(exp(x[a * inner] - mx) / sum);
        }
}

static void ref_batchnorm(const op_case *c, const tensor *in, float *out)
{
    size_t N = (size_t)in[0].dims[0], C = (size_t)in[0].dims[1];
    size_t S = numel(in[0].rank - 2, in[0].dims + 2);
    double eps = attr_f(c, "epsilon", 1e-5f);
    for (size_t n = 0; n < N; n++)
        for (size_t ch = 0; ch < C; ch++) {
            double sc = in[1].f[ch] / sqrt(in[4].f[ch] + eps);
            for (size_t s = 0; s < S; s++) {
                size_t i = (n * C + ch) * S + s;
                out[i] = (float)((in[0].f[i] - in[3].f[ch]) * sc + in[2].f[ch]);
            }
        }
}

static void ref_layernorm(const op_case *c, const tensor *in, float *out)
{
    int axis = norm_axis(attr_i(c, "axis", -1), in[0].rank);
    size_t outer = numel(axis, in[0].dims), len = numel(in[0].rank - axis, in[0].dims + axis);
    double eps = attr_f(c, "epsilon", 1e-5f);
    for (size_t o = 0; o < outer; o++) {
        const float *x = in[0].f + o * len;
        double mean = 0, var = 0;
        for (size_t j = 0; j < len; j++)
            mean += x[j];
        mean /= (double)len;
        for (size_t j = 0; j < len; j++)
            var += (x[j] - mean) * (x[j] - mean);
        var /= (double)len;
        for (size_t j = 0; j < len; j++)
            out[o * len + j] = (float)((x[j] - mean) / sqrt(var + eps) * in[1].f[j] +
                                       (c->n_in > 2 ? in[2].f[j] : 0));
    }
}

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: the same row-major bytes. */
static void ref_copy(const op_case *c, const tensor *in, float *out)
{
    memcpy(out, in[0].f, numel(in[0].rank, in[0].dims) * sizeof(float));
}

static void ref_transpose(const op_case *c, const tensor *in, float *out)
{
    const attr_spec *perm = find_attr(c, "perm");
    int64_t idx[BD_MAX_RANK], src[BD_MAX_RANK];
    size_t n = numel(c->out_rank, c->out_dims);
    for (size_t i = 0; i < n; i++) {
        unravel(i, c->out_rank, c->out_dims, idx);
        for (int k = 0; k < c->out_rank; k++)
            src[perm->ints[k]] = idx[k];
        out[i] = in[0].f[ravel(src, in[0].rank, in[0].dims)];
    }
}

/* braid's ChannelShuffle: axis 1 of [N, C, ...] viewed as [group, C/group], transposed. */
static void ref_channel_shuffle(const op_case *c, const tensor *in, float *out)
{
    int64_t g = attr_i(c, "group", 2), C = in[0].dims[1], per = C / g;
    size_t N = (size_t)in[0].dims[0], S = numel(in[0].rank - 2, in[0].dims + 2);
    for (size_t n = 0; n < N; n++)
        for (int64_t k = 0; k < C; k++) {        /* output channel k = (j, i) of [C/g, g] */
            int64_t src = (k % g) * per + k / g;
            memcpy(out + (n * (size_t)C + (size_t)k) * S, in[0].f + (n * (size_t)C + (size_t)src) * S,
                   S * sizeof(float));
        }
}

static void ref_concat(const op_case *c, const tensor *in, float *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), c->out_rank);
    int64_t idx[BD_MAX_RANK];
    size_t n = numel(c->out_rank, c->out_dims);
    for (size_t i = 0; i < n; i++) {
        unravel(i, c->out_rank, c->out_dims, idx);
        int k = 0;
        while (idx[axis] >= in[k].dims[axis])
            idx[axis] -= in[k++].dims[axis];
        out[i] = in[k].f[ravel(idx, in[k].rank, in[k].dims)];
    }
}

/* Slice: starts, ends, axes, steps (constants); output index -> start + index * step. */
static void ref_slice(const op_case *c, const tensor *in, float *out)
{
    int64_t start[BD_MAX_RANK] = { 0 }, step[BD_MAX_RANK];
    for (int k = 0; k < in[0].rank; k++)
        step[k] = 1;
    size_t na = (size_t)in[1].dims[0];
    for (size_t j = 0; j < na; j++) {
        int ax = c->n_in > 3 ? norm_axis(in[3].i[j], in[0].rank) : (int)j;
        int64_t d = in[0].dims[ax], st = c->n_in > 4 ? in[4].i[j] : 1, s = in[1].i[j];
        s = s < 0 ? s + d : s;
        s = st > 0 ? (s < 0 ? 0 : s > d ? d : s) : (s < 0 ? -1 : s > d - 1 ? d - 1 : s);
        start[ax] = s;
        step[ax] = st;
    }
    int64_t idx[BD_MAX_RANK];
    size_t n = numel(c->out_rank, c->out_dims);
    for (size_t i = 0; i < n; i++) {
        unravel(i, c->out_rank, c->out_dims, idx);
        for (int k = 0; k < c->out_rank; k++)
            idx[k] = start[k] + idx[k] * step[k];
        out[i] = in[0].f[ravel(idx, in[0].rank, in[0].dims)];
    }
}

static void ref_gather(const op_case *c, const tensor *in, float *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), in[0].rank);
    size_t outer, len, inner, ni = numel(in[1].rank, in[1].dims);
    split_axis(&in[0], axis, &outer, &len, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < ni; j++) {
            int64_t g = in[1].i[j] < 0 ? in[1].i[j] + (int64_t)len : in[1].i[j];
            memcpy(out + (o * ni + j) * inner, in[0].f + (o * len + (size_t)g) * inner,
                   inner * sizeof(float));
        }
}

/* ReduceMean/ReduceSum/ReduceMax/ReduceMin over axes (attribute, or input 1 for ReduceSum). */
static void ref_reduce(const op_case *c, const tensor *in, float *out)
{
    bool red[BD_MAX_RANK] = { false };
    const attr_spec *a = find_attr(c, "axes");
    int na = a ? a->n : c->n_in > 1 ? (int)in[1].dims[0] : 0;
    for (int j = 0; j < na; j++)
        red[norm_axis(a ? a->ints[j] : in[1].i[j], in[0].rank)] = true;
    if (na == 0)
        for (int k = 0; k < in[0].rank; k++)
            red[k] = true;
    int64_t kd[BD_MAX_RANK], idx[BD_MAX_RANK];
    for (int k = 0; k < in[0].rank; k++)
        kd[k] = red[k] ? 1 : in[0].dims[k];
    size_t no = numel(in[0].rank, kd), n = numel(in[0].rank, in[0].dims);
    bool is_max = !strcmp(c->op, "ReduceMax"), is_min = !strcmp(c->op, "ReduceMin");
    double *acc = calloc(no, sizeof *acc);
    for (size_t o = 0; o < no; o++)
        acc[o] = is_max ? -INFINITY : is_min ? INFINITY : 0;
    for (size_t i = 0; i < n; i++) {
        unravel(i, in[0].rank, in[0].dims, idx);
        for (int k = 0; k < in[0].rank; k++)
            idx[k] = red[k] ? 0 : idx[k];
        size_t o = ravel(idx, in[0].rank, kd);
        double x = in[0].f[i];
        acc[o] = is_max ? (x > acc[o] ? x : acc[o]) : is_min ? (x < acc[o] ? x : acc[o])
                                                             : acc[o] + x;
    }
    for (size_t o = 0; o < no; o++)
        out[o] = (float)(!strcmp(c->op, "ReduceMean") ? acc[o] / (double)(n / no) : acc[o]);
    free(acc);
}

/* Pad, constant mode (value input 2, default 0) and edge mode; pads input 1. */
static void ref_pad(const op_case *c, const tensor *in, float *out)
{
    int r = in[0].rank;
    bool edge = !strcmp(attr_s(c, "mode", "constant"), "edge");
    float value = c->n_in > 2 ? in[2].f[0] : 0;
    int64_t idx[BD_MAX_RANK];
    size_t n = numel(c->out_rank, c->out_dims);
    for (size_t i = 0; i < n; i++) {
        unravel(i, r, c->out_dims, idx);
        bool inside = true;
        for (int k = 0; k < r; k++) {
            idx[k] -= in[1].i[k];
            if (idx[k] < 0 || idx[k] >= in[0].dims[k]) {
                inside = false;
                idx[k] = idx[k] < 0 ? 0 : in[0].dims[k] - 1;
            }
        }
        out[i] = inside || edge ? in[0].f[ravel(idx, r, in[0].dims)] : value;
    }
}

/* The input coordinate of output coordinate X along an axis of IN -> OUT elements (scale from
 * the scales input), per coordinate_transformation_mode. */
static double resize_coord(const char *ctm, int64_t x, int64_t in, int64_t out, double scale)
{
    if (!strcmp(ctm, "align_corners"))
        return out == 1 ? 0 : (double)x * (double)(in - 1) / (double)(out - 1);
    if (!strcmp(ctm, "asymmetric"))
        return (double)x / scale;
    if (!strcmp(ctm, "pytorch_half_pixel"))
        return out > 1 ? ((double)x + 0.5) / scale - 0.5 : 0;
    return ((double)x + 0.5) / scale - 0.5;                       /* half_pixel */
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Resize of the last two dims of a 4-D input: nearest or (bi)linear, scales input 2. */
static void ref_resize(const op_case *c, const tensor *in, float *out)
{
    const char *mode = attr_s(c, "mode", "nearest");
    const char *ctm = attr_s(c, "coordinate_transformation_mode", "half_pixel");
    const char *nm = attr_s(c, "nearest_mode", "round_prefer_floor");
    int64_t H = in[0].dims[2], Wd = in[0].dims[3], OH = c->out_dims[2], OW = c->out_dims[3];
    size_t NC = (size_t)(in[0].dims[0] * in[0].dims[1]);
    for (size_t nc = 0; nc < NC; nc++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                double y = resize_coord(ctm, oy, H, OH, in[2].f[2]);
                double x = resize_coord(ctm, ox, Wd, OW, in[2].f[3]);
                const float *p = in[0].f + nc * (size_t)(H * Wd);
                double v;
                if (!strcmp(mode, "linear")) {
                    y = y < 0 ? 0 : y > (double)(H - 1) ? (double)(H - 1) : y;
                    x = x < 0 ? 0 : x > (double)(Wd - 1) ? (double)(Wd - 1) : x;
                    int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(x);
                    int64_t y1 = clampi(y0 + 1, 0, H - 1), x1 = clampi(x0 + 1, 0, Wd - 1);
                    double fy = y - (double)y0, fx = x - (double)x0;
                    v = (1 - fy) * ((1 - fx) * p[y0 * Wd + x0] + fx * p[y0 * Wd + x1]) +
                        fy * ((1 - fx) * p[y1 * Wd + x0] + fx * p[y1 * Wd + x1]);
                } else {
                    double ry, rx;
                    if (!strcmp(nm, "floor")) {
                        ry = floor(y);
                        rx = floor(x);
                    } else if (!strcmp(nm, "ceil")) {
                        ry = ceil(y);
                        rx = ceil(x);
                    } else {            /* round_prefer_floor: halves go down */
                        ry = y - floor(y) == 0.5 ? floor(y) : round(y);
                        rx = x - floor(x) == 0.5 ? floor(x) : round(x);
                    }
                    v = p[clampi((int64_t)ry, 0, H - 1) * Wd + clampi((int64_t)rx, 0, Wd - 1)];
                }
                out[(nc * (size_t)OH + (size_t)oy) * (size_t)OW + (size_t)ox] = (float)v;
            }
}

/* ---- the cases ------------------------------------------------------------------------------- */

static const float k_scales2[] = { 1, 1, 2, 2 };
static const float k_scales_down[] = { 1, 1, 0.5f, 0.5f };
static const float k_lo[] = { -0.5f }, k_hi[] = { 0.25f };
static const float k_pad_value[] = { 1.5f };
static const float k_pow_exp[] = { 2.5f };

static const op_case k_cases[] = {
    /* element-wise */
    { "relu", "Relu", NULL, 1, { IN(2, 3, 4, 5) }, { { 0 } }, OUT(2, 3, 4, 5), ref_unary },
    { "sigmoid", "Sigmoid", NULL, 1, { INR(-4, 4, 2, 3, 8) }, { { 0 } }, OUT(2, 3, 8), ref_unary },
    { "tanh", "Tanh", NULL, 1, { INR(-3, 3, 4, 16) }, { { 0 } }, OUT(4, 16), ref_unary },
    { "erf", "Erf", NULL, 1, { INR(-3, 3, 4, 16) }, { { 0 } }, OUT(4, 16), ref_unary },
    { "gelu(braid)", "Gelu", "braid", 1, { INR(-3, 3, 2, 5, 7) }, { { 0 } }, OUT(2, 5, 7), ref_unary },
    { "leakyrelu", "LeakyRelu", NULL, 1, { IN(3, 17) }, { AF("alpha", 0.2f) }, OUT(3, 17), ref_unary },
    { "elu", "Elu", NULL, 1, { INR(-3, 3, 3, 17) }, { AF("alpha", 0.7f) }, OUT(3, 17), ref_unary },
    { "swish(braid)", "Swish", "braid", 1, { INR(-5, 5, 2, 8, 9) }, { { 0 } }, OUT(2, 8, 9), ref_unary },
    { "hardswish", "HardSwish", NULL, 1, { INR(-5, 5, 2, 8, 9) }, { { 0 } }, OUT(2, 8, 9), ref_unary },
    { "hardsigmoid", "HardSigmoid", NULL, 1, { INR(-5, 5, 3, 40) }, { AF("alpha", 0.3f),
      AF("beta", 0.4f) }, OUT(3, 40), ref_unary },
    { "abs", "Abs", NULL, 1, { IN(4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "sqrt", "Sqrt", NULL, 1, { INR(0.1f, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "exp", "Exp", NULL, 1, { INR(-4, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "log", "Log", NULL, 1, { INR(0.1f, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "softplus", "Softplus", NULL, 1, { INR(-6, 6, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "neg", "Neg", NULL, 1, { IN(4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "reciprocal", "Reciprocal", NULL, 1, { INR(0.5f, 3, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "floor", "Floor", NULL, 1, { INR(-4, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "sin", "Sin", NULL, 1, { INR(-4, 4, 4, 33) }, { { 0 } }, OUT(4, 33), ref_unary },
    { "pow_const", "Pow", NULL, 2, { INR(0.1f, 3, 4, 33), WF(k_pow_exp, 1) }, { { 0 } }, OUT(4, 33),
      ref_pow },
    { "clip", "Clip", NULL, 3, { IN(2, 33), WF(k_lo, 1), WF(k_hi, 1) }, { { 0 } }, OUT(2, 33),
      ref_clip },
    { "prelu_channel", "PRelu", NULL, 2, { IN(1, 4, 5, 5), W(4, 1, 1) }, { { 0 } },
      OUT(1, 4, 5, 5), ref_prelu },
    /* binary, with broadcasting */
    { "add_same", "Add", NULL, 2, { IN(2, 3, 4), IN(2, 3, 4) }, { { 0 } }, OUT(2, 3, 4), ref_binary },
    { "add_bcast_row", "Add", NULL, 2, { IN(2, 3, 4, 5), IN(5) }, { { 0 } }, OUT(2, 3, 4, 5),
      ref_binary },
    { "add_bcast_mid", "Add", NULL, 2, { IN(2, 3, 4, 5), IN(3, 1, 5) }, { { 0 } },
      OUT(2, 3, 4, 5), ref_binary },
    { "sub_bcast_const", "Sub", NULL, 2, { IN(2, 3, 4), W(3, 1) }, { { 0 } }, OUT(2, 3, 4),
      ref_binary },
    { "mul_bcast_both", "Mul", NULL, 2, { IN(2, 1, 4), IN(1, 3, 1) }, { { 0 } }, OUT(2, 3, 4),
      ref_binary },
    { "div", "Div", NULL, 2, { IN(2, 3, 4), INR(0.5f, 2, 2, 3, 4) }, { { 0 } }, OUT(2, 3, 4),
      ref_binary },
    { "div_bcast_scalar", "Div", NULL, 2, { IN(2, 3, 4), WR(0.5f, 2, 1) }, { { 0 } },
      OUT(2, 3, 4), ref_binary },
    { "max", "Max", NULL, 2, { IN(3, 8), IN(3, 8) }, { { 0 } }, OUT(3, 8), ref_binary },
    { "min_bcast", "Min", NULL, 2, { IN(3, 8), IN(8) }, { { 0 } }, OUT(3, 8), ref_binary },
    /* linear algebra */
    { "matmul_2d", "MatMul", NULL, 2, { IN(5, 7), W(7, 3) }, { { 0 } }, OUT(5, 3), ref_matmul },
    { "matmul_batched", "MatMul", NULL, 2, { IN(2, 3, 4), W(4, 5) }, { { 0 } }, OUT(2, 3, 5),
      ref_matmul },
    { "matmul_bcast", "MatMul", NULL, 2, { IN(2, 1, 3, 4), IN(3, 4, 5) }, { { 0 } },
      OUT(2, 3, 3, 5), ref_matmul },
    { "gemm_transb", "Gemm", NULL, 3, { IN(3, 4), W(5, 4), W(5) },
      { AI("transB", 1), AF("alpha", 0.5f), AF("beta", 2.0f) }, OUT(3, 5), ref_gemm },
    { "gemm_transa", "Gemm", NULL, 3, { IN(4, 3), W(4, 5), W(1, 5) }, { AI("transA", 1) },
      OUT(3, 5), ref_gemm },
    /* convolution */
    { "conv_pad1", "Conv", NULL, 3, { IN(1, 3, 8, 8), W(4, 3, 3, 3), W(4) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 4, 8, 8), ref_conv },
    { "conv_stride2_nobias", "Conv", NULL, 2, { IN(2, 3, 9, 9), W(6, 3, 3, 3) },
      { AINTS("strides", 2, 2) }, OUT(2, 6, 4, 4), ref_conv },
    { "conv_dilated_asym_pad", "Conv", NULL, 3, { IN(1, 2, 10, 10), W(3, 2, 3, 3), W(3) },
      { AINTS("dilations", 2, 2), AINTS("pads", 1, 2, 0, 1) }, OUT(1, 3, 7, 9), ref_conv },
    { "conv_depthwise", "Conv", NULL, 3, { IN(1, 4, 7, 7), W(4, 1, 3, 3), W(4) },
      { AI("group", 4), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 4, 7, 7), ref_conv },
    { "conv_grouped_1x1", "Conv", NULL, 2, { IN(1, 6, 5, 5), W(4, 3, 1, 1) }, { AI("group", 2) },
      OUT(1, 4, 5, 5), ref_conv },
    /* pooling */
    { "maxpool_3s2p1", "MaxPool", NULL, 1, { IN(1, 3, 9, 9) },
      { AINTS("kernel_shape", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) },
      OUT(1, 3, 5, 5), ref_pool },
    { "avgpool_2s2", "AveragePool", NULL, 1, { IN(2, 3, 8, 8) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2) }, OUT(2, 3, 4, 4), ref_pool },
    { "avgpool_pad_exclude", "AveragePool", NULL, 1, { IN(1, 2, 6, 6) },
      { AINTS("kernel_shape", 3, 3), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 2, 6, 6), ref_pool },
    { "avgpool_pad_include", "AveragePool", NULL, 1, { IN(1, 2, 6, 6) },
      { AINTS("kernel_shape", 3, 3), AINTS("pads", 1, 1, 1, 1), AI("count_include_pad", 1) },
      OUT(1, 2, 6, 6), ref_pool },
    { "global_avgpool", "GlobalAveragePool", NULL, 1, { IN(2, 5, 4, 6) }, { { 0 } },
      OUT(2, 5, 1, 1), ref_pool },
    { "global_maxpool", "GlobalMaxPool", NULL, 1, { IN(2, 5, 4, 6) }, { { 0 } },
      OUT(2, 5, 1, 1), ref_pool },
    /* normalization */
    { "softmax_last", "Softmax", NULL, 1, { INR(-4, 4, 2, 3, 10) }, { { 0 } }, OUT(2, 3, 10),
      ref_softmax },
    { "softmax_axis1", "Softmax", NULL, 1, { INR(-4, 4, 2, 6, 5) }, { AI("axis", 1) },
      OUT(2, 6, 5), ref_softmax },
    { "batchnorm", "BatchNormalization", NULL, 5,
      { IN(2, 3, 4, 4), W(3), W(3), W(3), WR(0.5f, 1.5f, 3) }, { AF("epsilon", 1e-3f) },
      OUT(2, 3, 4, 4), ref_batchnorm },
    { "layernorm_last", "LayerNormalization", NULL, 3, { IN(2, 3, 16), W(16), W(16) },
      { AI("axis", -1), AF("epsilon", 1e-5f) }, OUT(2, 3, 16), ref_layernorm, 1e-3 },
    /* data movement */
    { "reshape", "Reshape", NULL, 2, { IN(2, 3, 4), I64(4, -1) }, { { 0 } }, OUT(4, 6), ref_copy },
    { "flatten", "Flatten", NULL, 1, { IN(2, 3, 4, 5) }, { AI("axis", 2) }, OUT(6, 20), ref_copy },
    { "squeeze", "Squeeze", NULL, 2, { IN(2, 1, 4, 1), I64(1, 3) }, { { 0 } }, OUT(2, 4), ref_copy },
    { "unsqueeze", "Unsqueeze", NULL, 2, { IN(2, 4), I64(0, 2) }, { { 0 } }, OUT(1, 2, 1, 4),
      ref_copy },
    { "transpose_0213", "Transpose", NULL, 1, { IN(2, 3, 4, 5) }, { AINTS("perm", 0, 2, 1, 3) },
      OUT(2, 4, 3, 5), ref_transpose },
    { "transpose_nchw_nhwc", "Transpose", NULL, 1, { IN(2, 3, 4, 5) },
      { AINTS("perm", 0, 2, 3, 1) }, OUT(2, 4, 5, 3), ref_transpose },
    { "concat_axis1", "Concat", NULL, 3, { IN(2, 3, 4), IN(2, 1, 4), IN(2, 2, 4) },
      { AI("axis", 1) }, OUT(2, 6, 4), ref_concat },
    { "concat_last_const", "Concat", NULL, 2, { IN(2, 3), W(2, 2) }, { AI("axis", -1) },
      OUT(2, 5), ref_concat },
    { "channel_shuffle(braid)", "ChannelShuffle", "braid", 1, { IN(2, 6, 3, 4) },
      { AI("axis", 1), AI("group", 3) }, OUT(2, 6, 3, 4), ref_channel_shuffle },
    { "slice_channels", "Slice", NULL, 4, { IN(1, 40, 3, 3), I64(16), I64(40), I64(1) }, { { 0 } },
      OUT(1, 24, 3, 3), ref_slice },
    { "slice_axes", "Slice", NULL, 4, { IN(4, 6, 5), I64(1, 1), I64(3, 100), I64(0, 2) },
      { { 0 } }, OUT(2, 6, 4), ref_slice },
    { "slice_steps_neg", "Slice", NULL, 5,
      { IN(4, 7), I64(-1, 0), I64(-100, 7), I64(0, 1), I64(-1, 2) }, { { 0 } }, OUT(4, 4),
      ref_slice },
    { "gather_axis0", "Gather", NULL, 2, { IN(5, 4), I64(4, 0, -2) }, { { 0 } }, OUT(3, 4),
      ref_gather },
    { "gather_axis1", "Gather", NULL, 2, { IN(2, 5, 3), I64(1, 1, 4, 0) }, { AI("axis", 1) },
      OUT(2, 4, 3), ref_gather },
    /* reductions */
    { "reducemean_keep", "ReduceMean", NULL, 1, { IN(2, 3, 4, 5) },
      { AINTS("axes", 2, 3), AI("keepdims", 1) }, OUT(2, 3, 1, 1), ref_reduce },
    { "reducemean_drop", "ReduceMean", NULL, 1, { IN(2, 3, 4) },
      { AINTS("axes", 1), AI("keepdims", 0) }, OUT(2, 4), ref_reduce },
    { "reducesum_input_axes", "ReduceSum", NULL, 2, { IN(2, 3, 4), I64(-1) },
      { AI("keepdims", 0) }, OUT(2, 3), ref_reduce },
    { "reducemax", "ReduceMax", NULL, 1, { IN(3, 4, 5) }, { AINTS("axes", 0), AI("keepdims", 1) },
      OUT(1, 4, 5), ref_reduce },
    /* resize and pad */
    { "resize_linear_half_pixel", "Resize", NULL, 3,
      { IN(1, 2, 3, 4), OMIT, WF(k_scales2, 4) }, { AS("mode", "linear") }, OUT(1, 2, 6, 8),
      ref_resize },
    { "resize_linear_align_corners", "Resize", NULL, 3,
      { IN(1, 2, 3, 4), OMIT, WF(k_scales2, 4) },
      { AS("mode", "linear"), AS("coordinate_transformation_mode", "align_corners") },
      OUT(1, 2, 6, 8), ref_resize },
    { "resize_nearest_asym_floor", "Resize", NULL, 3,
      { IN(1, 2, 3, 4), OMIT, WF(k_scales2, 4) },
      { AS("mode", "nearest"), AS("coordinate_transformation_mode", "asymmetric"),
        AS("nearest_mode", "floor") }, OUT(1, 2, 6, 8), ref_resize },
    { "resize_nearest_down", "Resize", NULL, 3,
      { IN(1, 2, 6, 8), OMIT, WF(k_scales_down, 4) }, { AS("mode", "nearest") },
      OUT(1, 2, 3, 4), ref_resize },
    { "pad_constant", "Pad", NULL, 3, { IN(1, 2, 3, 4), I64(0, 0, 1, 2, 0, 0, 2, 1),
      WF(k_pad_value, 1) }, { { 0 } }, OUT(1, 2, 6, 7), ref_pad },
    { "pad_edge", "Pad", NULL, 2, { IN(1, 2, 3, 4), I64(0, 0, 1, 1, 0, 0, 1, 1) },
      { AS("mode", "edge") }, OUT(1, 2, 5, 6), ref_pad },
};

#define N_CASES (sizeof k_cases / sizeof k_cases[0])

/* ---- running one case on one engine ---------------------------------------------------------- */

typedef enum { R_OK, R_SKIP, R_FAIL } result;

typedef struct case_data {            /* the case's inputs, the same for every engine */
    float   *f[MAX_IN];
    int64_t *i[MAX_IN];
    float   *ref;
} case_data;

static uint32_t g_seed;

static float rnd(float lo, float hi)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return lo + (float)(g_seed >> 8) / (float)(1u << 24) * (hi - lo);
}

static void make_data(const op_case *c, size_t index, case_data *d)
{
    g_seed = 12345u + 7919u * (uint32_t)index;
    tensor t[MAX_IN] = { { 0 } };
    for (int k = 0; k < c->n_in; k++) {
        const in_spec *s = &c->in[k];
        if (s->omitted)
            continue;
        size_t n = numel(s->rank, s->dims);
        t[k] = (tensor){ .rank = s->rank, .dims = s->dims };
        if (s->dtype == BD_DT_INT64) {
            d->i[k] = malloc((n ? n : 1) * sizeof(int64_t));
            memcpy(d->i[k], s->ivals, n * sizeof(int64_t));
            t[k].i = d->i[k];
        } else {
            d->f[k] = malloc((n ? n : 1) * sizeof(float));
            bool ranged = s->lo != s->hi;
            for (size_t j = 0; j < n; j++)
                d->f[k][j] = s->fvals ? s->fvals[j] : rnd(ranged ? s->lo : -1, ranged ? s->hi : 1);
            t[k].f = d->f[k];
        }
    }
    d->ref = calloc(numel(c->out_rank, c->out_dims) + 1, sizeof(float));
    c->ref(c, t, d->ref);
}

static void free_data(const op_case *c, case_data *d)
{
    for (int k = 0; k < MAX_IN; k++) {
        free(d->f[k]);
        free(d->i[k]);
    }
    free(d->ref);
}

/* The case as a one-node graph; *NODE gets the node (for supports()). */
static bd_graph *build(const op_case *c, const case_data *d, bd_node **node)
{
    bd_graph *g = bd_graph_create(c->name);
    bd_graph_set_opset(g, OPSET);
    bd_value *in[MAX_IN] = { NULL };
    for (int k = 0; k < c->n_in; k++) {
        const in_spec *s = &c->in[k];
        char name[16];
        snprintf(name, sizeof name, "in%d", k);
        int dtype = s->dtype ? s->dtype : BD_DT_FLOAT;
        if (s->omitted)
            in[k] = NULL;
        else if (s->constant)
            in[k] = tl_const(g, name, dtype, s->rank, s->dims,
                             dtype == BD_DT_INT64 ? (const void *)d->i[k] : (const void *)d->f[k]);
        else
            in[k] = tl_input(g, name, dtype, s->rank, s->dims);
    }
    bd_value *y = tl_value(g, "y", BD_DT_FLOAT, c->out_rank, c->out_dims);
    tl_output(g, y);
    bd_node *n = tl_node(g, c->name, c->op, c->domain ? c->domain : "", in, (size_t)c->n_in, &y, 1);
    for (int a = 0; a < MAX_ATTR && c->attr[a].name; a++) {
        const attr_spec *s = &c->attr[a];
        switch (s->type) {
        case 'i': tl_attr_int(g, n, s->name, s->i); break;
        case 'f': tl_attr_float(g, n, s->name, s->f); break;
        case 's': tl_attr_str(g, n, s->name, s->s); break;
        default:  tl_attr_ints(g, n, s->name, (size_t)s->n, s->ints); break;
        }
    }
    *node = n;
    return g;
}

/* Load with ENGINE forced, plan, run once, compare. WHY gets the failure. */
static result run_forced(const op_case *c, const case_data *d, const char *engine, char *why,
                         size_t len)
{
    bd_node *n;
    bd_graph *g = build(c, d, &n);
    bd_model_options o = { .threads = 1, .engine = engine };   /* ORT: 1 thread by default */
    bd_model *m = NULL;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, &o, &m, &err)) {
        snprintf(why, len, "load: %s", err.msg);
        return R_FAIL;
    }
    DLTensor in[MAX_IN];
    size_t n_in = 0;
    for (int k = 0; k < c->n_in; k++) {
        const in_spec *s = &c->in[k];
        if (s->omitted || s->constant)
            continue;
        in[n_in++] = (DLTensor){ .data = d->f[k], .device = { kDLCPU, 0 }, .ndim = s->rank,
                                 .shape = (int64_t *)s->dims, .dtype = { kDLFloat, 32, 1 } };
    }
    result r = R_FAIL;
    const bd_plan *p = NULL;          /* owned by the model (bd_model_plan) */
    bd_exec *e = NULL;
    if (bd_model_plan(m, in, n_in, &p, &err) || bd_exec_create(p, &e, &err) ||
        bd_exec_run(e, in, n_in, &err)) {
        snprintf(why, len, "%s", err.msg);
        goto done;
    }
    const bd_partition_report *rep = bd_plan_partition(p);
    if (rep->n_subgraphs != 1 || strcmp(rep->subgraphs[0].backend, engine) != 0) {
        snprintf(why, len, "placed on %s, not on %s",
                 rep->n_subgraphs ? rep->subgraphs[0].backend : "nothing", engine);
        goto done;
    }
    const DLTensor *y = bd_exec_output(e, 0);
    bool shape_ok = y->ndim == c->out_rank && y->dtype.code == kDLFloat && y->dtype.bits == 32;
    for (int k = 0; shape_ok && k < c->out_rank; k++)
        shape_ok = y->shape[k] == c->out_dims[k];
    if (!shape_ok) {
        snprintf(why, len, "output has the wrong shape or dtype");
        goto done;
    }
    char what[96];
    snprintf(what, sizeof what, "%s on %s", c->name, engine);
    if (tl_close_f32(what, y->data, d->ref, numel(c->out_rank, c->out_dims),
                     c->tol > 0 ? c->tol : 1e-4))
        r = R_OK;
    else
        snprintf(why, len, "differs from the reference");
done:
    bd_exec_destroy(e);
    bd_model_close(m);
    return r;
}

int main(int argc, char **argv)
{
    size_t n_eng;
    const bd_backend *const *eng = bd_backends(&n_eng);
    if (n_eng > MAX_ENG)
        n_eng = MAX_ENG;
    static result res[N_CASES][MAX_ENG];
    static char first_skip[MAX_ENG][200];
    int fails = 0, unrun = 0;
    for (size_t ci = 0; ci < N_CASES; ci++) {
        const op_case *c = &k_cases[ci];
        if (argc > 1 && strcmp(argv[1], c->name) != 0)
            continue;
        case_data d;
        memset(&d, 0, sizeof d);
        make_data(c, ci, &d);
        bool ran = false;
        for (size_t ei = 0; ei < n_eng; ei++) {
            bd_node *n;
            bd_graph *g = build(c, &d, &n);
            char why[1024] = "";
            bool claims = eng[ei]->supports(g, n, why, sizeof why);
            bd_graph_destroy(g);
            if (!claims) {
                res[ci][ei] = R_SKIP;
                if (!why[0])
                    snprintf(why, sizeof why, "%s declines it without a reason", eng[ei]->name);
                printf("    %-44s skip on %s: %s\n", c->name, eng[ei]->name, why);
                if (!first_skip[ei][0])
                    snprintf(first_skip[ei], sizeof first_skip[ei], "%s: %s", c->name, why);
                continue;
            }
            ran = true;
            res[ci][ei] = run_forced(c, &d, eng[ei]->name, why, sizeof why);
            if (res[ci][ei] == R_FAIL) {
                fails++;
                fprintf(stderr, "FAIL: %s on %s (claimed by supports()): %s\n", c->name,
                        eng[ei]->name, why);
            }
        }
        if (!ran) {
            unrun++;
            printf("    %-44s NOT RUN: no engine here claims it\n", c->name);
        }
        free_data(c, &d);
    }

    printf("\n%-30s", "case");
    for (size_t ei = 0; ei < n_eng; ei++)
        printf(" %-6s", eng[ei]->name);
    printf("\n");
    static const char *const word[] = { "ok", "skip", "FAIL" };
    size_t counts[MAX_ENG][3] = { { 0 } };
    for (size_t ci = 0; ci < N_CASES; ci++) {
        if (argc > 1 && strcmp(argv[1], k_cases[ci].name) != 0)
            continue;
        printf("%-30s", k_cases[ci].name);
        for (size_t ei = 0; ei < n_eng; ei++) {
            printf(" %-6s", word[res[ci][ei]]);
            counts[ei][res[ci][ei]]++;
        }
        printf("\n");
    }
    for (size_t ei = 0; ei < n_eng; ei++)
        printf("%s: %zu ok, %zu skipped, %zu failed%s%s\n", eng[ei]->name, counts[ei][R_OK],
               counts[ei][R_SKIP], counts[ei][R_FAIL], first_skip[ei][0] ? "; first skip: " : "",
               first_skip[ei]);
    printf("%d case(s) no engine ran; %d failure(s)\n", unrun, fails);
    size_t ok = 0;
    for (size_t ei = 0; ei < n_eng; ei++)
        ok += counts[ei][R_OK];
    if (ok == 0) {                  /* oneDNN alone claims most cases: nothing ran = broken */
        fprintf(stderr, "FAIL: no case ran on any engine\n");
        return 1;
    }
    return fails ? 1 : 0;
}
