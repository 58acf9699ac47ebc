/* The backend-ops harness's shared part: the case table's types, the macros its rows are
 * written with, the references' view of tensors and the index helpers every reference uses.
 * The runner is test_backend_ops.c; the cases and their references live by family:
 *
 *   ops_float.c        the float cases the harness began with (oneDNN's ops, in their
 *                      original order), with the references of conv, pool, matmul, norms, resize
 *   ops_elementwise.c  unary and binary math, comparisons, logic, Where, Cast, Clip, variadics
 *   ops_movement.c     views, Transpose, Concat, Split, Slice, Expand, Tile, Pad, DepthToSpace,
 *                      SpaceToDepth, Trilu
 *   ops_indexing.c     Gather*, Scatter*, OneHot, NonZero
 *   ops_reduction.c    Reduce*, ArgMax/ArgMin, CumSum, TopK, Softmax/LogSoftmax/Hardmax
 *   ops_generate.c     Shape, Size, Range, ConstantOfShape, EyeLike, Einsum
 *   ops_norm.c         LayerNormalization, InstanceNormalization, MeanVarianceNormalization,
 *                      LpNormalization, LRN, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
 *   ops_resample.c     Resize, Upsample, GridSample, RoiAlign, MaxRoiPool
 *   ops_pool.c         MaxPool (Indices, integers), AveragePool, LpPool and the global pools
 *   ops_deconv.c       ConvTranspose
 *   ops_swish.c        Swish (SiLU) on the oneDNN backend's own kernel
 *   ops_dynshape.c     Reshape, Squeeze, Unsqueeze and ReduceSum shaped by fed tensors
 *   ops_signal.c       DFT, STFT, Hann/Hamming/BlackmanWindow, MelWeightMatrix
 *   ops_bcast.c        binary ops with a per-channel or last-axis operand, in the layouts
 *                      oneDNN picks
 *   ops_linalg.c       Gemm where oneDNN does not take it, Det
 *   ops_quant.c        QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and chains of
 *                      the dynamic-quantization pattern (-> MatMulInteger -> Cast -> Mul -> Add)
 *   ops_conv.c         Conv with fed weights, DOUBLE, 1-D and 3-D; ConvInteger
 *   ops_tfidf.c        TfIdfVectorizer
 *   ops_nms.c          NonMaxSuppression
 *   ops_rnn.c          RNN, GRU and LSTM where oneDNN does not take them
 *
 * A reference sees every input element both as a double (f) and as an int64 (i), computes in
 * double or int64, and writes each output element into f (float outputs) or i (integer and
 * BOOL outputs); the runner then rounds or wraps the result to the output's dtype, as the
 * kernel's own store would (an INT8 sum computed in int64 wraps to INT8 there). */
#ifndef BD_TESTS_BACKENDS_OPS_OPS_HARNESS_H
#define BD_TESTS_BACKENDS_OPS_OPS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/ir/dtype.h"

#define MAX_IN    10
#define MAX_OUT   4
#define MAX_ATTR  8
#define OPSET     17          /* the newest opset every engine maps (oneDNN: 7-17) */

/* ---- the case table ---------------------------------------------------------------------- */

typedef struct in_spec {
    int      dtype;           /* 0 = FLOAT */
    int      rank;
    int64_t  dims[BD_MAX_RANK];
    bool     constant;        /* an initializer (weights, shapes, indices), else a fed input */
    bool     omitted;         /* an omitted optional input (NULL in the node's inputs) */
    const int64_t *ivals;     /* values of an integer or BOOL input (a V list) */
    const float   *fvals;     /* values of a float input (a VF list) */
    float    lo, hi;          /* else random in [lo, hi] (integers: whole numbers); the default
                               * is [-1, 1] for floats, [-20, 20] signed, [0, 40] unsigned */
} in_spec;

typedef struct attr_spec {
    const char *name;         /* NULL ends the list */
    char        type;         /* 'i' int, 'f' float, 's' string, 'I' ints, 'F' floats, 'S'
                               * strings, 't' a one-element tensor of dtype DT holding I
                               * (integers, BOOL) or F (floats) */
    int64_t     i;
    float       f;
    const char *s;
    int         n;
    int64_t     ints[16];
    float       floats[8];
    const char *strs[8];
    int         dt;
} attr_spec;

typedef struct out_spec {
    int      dtype;           /* 0 ends the list */
    int      rank;
    int64_t  dims[BD_MAX_RANK];
} out_spec;

/* Engines a case treats apart, and why (written as a comment would be). */
typedef struct eng_note {
    const char *engine;       /* an engine, or several separated by commas; NULL = none */
    const char *why;
} eng_note;

/* The references' view of a tensor: its elements as doubles and as int64s. */
typedef struct tensor {
    int            dtype;
    int            rank;
    const int64_t *dims;
    size_t         n;         /* elements; 0 for an omitted input */
    double        *f;         /* every element as a double */
    int64_t       *i;         /* every element as an int64 (floats: truncated, NaN as 0) */
} tensor;

typedef struct op_case op_case;
/* Fill OUT[k].f (float outputs) or OUT[k].i (the others) from IN. */
typedef void (*ref_fn)(const op_case *c, const tensor *in, tensor *out);
/* A case of several nodes (a pattern an engine takes whole): adds them to G, reading the case's
 * inputs IN and writing its outputs OUT (the runner made both), and returns the first node,
 * the one supports() is asked about. */
struct bd_graph;
struct bd_node;
struct bd_value;
typedef struct bd_node *(*chain_fn)(struct bd_graph *g, struct bd_value *const *in,
                                    struct bd_value *const *out);

struct op_case {
    const char *name;
    const char *op;
    const char *domain;       /* NULL = ONNX */
    int         n_in;
    in_spec     in[MAX_IN];
    attr_spec   attr[MAX_ATTR];
    out_spec    out[MAX_OUT]; /* OUT(...) is one FLOAT output */
    ref_fn      ref;
    double      tol;          /* floats: relative to max(1, max |ref|); 0 = 1e-4. Integers and
                               * BOOL are compared exactly */
    bool        expect_error; /* every engine that claims it must refuse it at load or at run
                               * (an index out of range, an integer division by zero) */
    bool        runtime_shape;/* the outputs are declared with unknown dims: the run tells them
                               * (NonZero); they must come out as OUT's dims */
    eng_note    skip;         /* not run on this engine: a known behaviour of it (why) */
    eng_note    known;        /* a known failure of this engine's kernel (why): printed, not
                               * failed; remove the flag once the kernel is fixed */
    int         threads;      /* the plan's threads; 0 = 1 (2 reaches the parallel loops of
                               * cases of 32768 elements and more) */
    int         opset;        /* the graph's ONNX opset; 0 = 17 (older ones reach the legacy
                               * forms: attributes that later became inputs) */
    const char *then;         /* a second node after output 0, to reach a fusion or a layout:
                               * an activation ("braid:Swish" for braid's domain), or a binary
                               * op whose other operand is the case's last input (THEN_IN =
                               * 1; its first operand with THEN_FIRST); the case's reference
                               * computes both */
    int         then_in;
    bool        then_first;
    const char *env;          /* "NAME=VALUE" set while the case runs on every engine: an
                               * engine's switch, e.g. BRAID_DNNL_LSTM=0 to reach oneDNN's
                               * LSTM primitive on any CPU */
    chain_fn    chain;        /* several nodes instead of OP (OP then only names the first);
                               * the case's reference computes the whole chain */
};

/* The usual reason ORT is skipped: ORT's supports() claims every ONNX node, but its CPU
 * provider registers each op for some dtypes only, and a session for another fails to load. */
#define ORT_NO_KERNEL(what) { "ort", "ONNX Runtime has no CPU kernel for " what }

/* A table of cases, one per family file. */
typedef struct case_table {
    const op_case *cases;
    size_t         n;
} case_table;

extern const case_table ops_float_table, ops_elementwise_table, ops_movement_table,
                        ops_indexing_table, ops_reduction_table, ops_generate_table,
                        ops_norm_table, ops_deconv_table,
                        ops_resample_table, ops_pool_table, ops_swish_table,
                        ops_dynshape_table, ops_signal_table, ops_bcast_table,
                        ops_linalg_table,
                        ops_quant_table,
                        ops_conv_table,
                        ops_tfidf_table,
                        ops_nms_table,
                        ops_rnn_table;

/* The dtypes, short. */
#define F16     BD_DT_FLOAT16
#define BF16    BD_DT_BFLOAT16
#define F32     BD_DT_FLOAT
#define F64     BD_DT_DOUBLE
#define INT8    BD_DT_INT8
#define UINT8   BD_DT_UINT8
#define INT16   BD_DT_INT16
#define UINT16  BD_DT_UINT16
#define INT32   BD_DT_INT32
#define UINT32  BD_DT_UINT32
#define INT64   BD_DT_INT64
#define UINT64  BD_DT_UINT64
#define BOOL    BD_DT_BOOL

/* Shapes: SHAPE(2, 3) is .rank = 2, .dims = { 2, 3 }. */
#define NDIMS(...)  ((int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)))
#define SHAPE(...)  .rank = NDIMS(__VA_ARGS__), .dims = { __VA_ARGS__ }
/* Values of an input: V(...) integers (and BOOL 0/1), VF(...) floats (NAN and INFINITY too).
 * Element 0 of either list is its count, which the runner checks against the input's shape. */
#define V(...)      ((const int64_t[]){ NDIMS(__VA_ARGS__), __VA_ARGS__ })
#define VF(...)     ((const float[]){ (float)NDIMS(__VA_ARGS__), __VA_ARGS__ })

/* FLOAT inputs: fed (IN), fed in a range (INR), constant (W, WR), constant values (WF). */
#define IN(...)               { SHAPE(__VA_ARGS__) }
#define INR(lo_, hi_, ...)    { SHAPE(__VA_ARGS__), .lo = (lo_), .hi = (hi_) }
#define W(...)                { SHAPE(__VA_ARGS__), .constant = true }
#define WR(lo_, hi_, ...)     { SHAPE(__VA_ARGS__), .constant = true, .lo = (lo_), .hi = (hi_) }
#define WF(vals, ...)         { SHAPE(__VA_ARGS__), .constant = true, .fvals = (vals) }
/* Inputs of dtype DT: fed random, in a range, with integer values V, with float values VF;
 * the same as constants (CST...); scalars (rank 0) of one value. */
#define FED(dt, ...)          { .dtype = (dt), SHAPE(__VA_ARGS__) }
#define FEDR(dt, lo_, hi_, ...) { .dtype = (dt), SHAPE(__VA_ARGS__), .lo = (lo_), .hi = (hi_) }
#define FEDV(dt, v, ...)      { .dtype = (dt), SHAPE(__VA_ARGS__), .ivals = (v) }
#define FEDF(dt, v, ...)      { .dtype = (dt), SHAPE(__VA_ARGS__), .fvals = (v) }
#define CST(dt, ...)          { .dtype = (dt), SHAPE(__VA_ARGS__), .constant = true }
#define CSTR(dt, lo_, hi_, ...) { .dtype = (dt), SHAPE(__VA_ARGS__), .constant = true, \
                                  .lo = (lo_), .hi = (hi_) }
#define CSTV(dt, v, ...)      { .dtype = (dt), SHAPE(__VA_ARGS__), .constant = true, .ivals = (v) }
#define CSTF(dt, v, ...)      { .dtype = (dt), SHAPE(__VA_ARGS__), .constant = true, .fvals = (v) }
#define FEDS(dt, v)           { .dtype = (dt), .ivals = V(v) }
#define FEDSF(dt, v)          { .dtype = (dt), .fvals = VF(v) }
#define CSTS(dt, v)           { .dtype = (dt), .constant = true, .ivals = V(v) }
#define CSTSF(dt, v)          { .dtype = (dt), .constant = true, .fvals = VF(v) }
/* 1-D INT64 vectors written inline: constant (shapes, axes, pads) and fed. */
#define I64(...)    { .dtype = BD_DT_INT64, .rank = 1, .dims = { NDIMS(__VA_ARGS__) }, \
                      .constant = true, .ivals = V(__VA_ARGS__) }
#define FI64(...)   { .dtype = BD_DT_INT64, .rank = 1, .dims = { NDIMS(__VA_ARGS__) }, \
                      .ivals = V(__VA_ARGS__) }
#define OMIT        { .omitted = true }

/* Outputs: one FLOAT (OUT), one of dtype DT (OUTT), a scalar (OUT0), several (OUTS of O). */
#define OUT(...)        .out = { { .dtype = BD_DT_FLOAT, SHAPE(__VA_ARGS__) } }
#define OUTT(dt, ...)   .out = { { .dtype = (dt), SHAPE(__VA_ARGS__) } }
#define OUT0(dt)        .out = { { .dtype = (dt) } }
#define O(dt, ...)      { .dtype = (dt), SHAPE(__VA_ARGS__) }
#define OUTS(...)       .out = { __VA_ARGS__ }

#define NO_ATTR         { { 0 } }
#define AI(nm, v)       { .name = (nm), .type = 'i', .i = (v) }
#define AF(nm, v)       { .name = (nm), .type = 'f', .f = (v) }
#define AS(nm, v)       { .name = (nm), .type = 's', .s = (v) }
#define AINTS(nm, ...)  { .name = (nm), .type = 'I', .n = NDIMS(__VA_ARGS__), .ints = { __VA_ARGS__ } }
#define AFLOATS(nm, ...) { .name = (nm), .type = 'F', \
                          .n = (int)(sizeof((float[]){ __VA_ARGS__ }) / sizeof(float)), \
                          .floats = { __VA_ARGS__ } }
#define ASTRS(nm, ...)  { .name = (nm), .type = 'S', \
                          .n = (int)(sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(char *)), \
                          .strs = { __VA_ARGS__ } }
#define ATI(nm, dt_, v) { .name = (nm), .type = 't', .dt = (dt_), .i = (v) }
#define ATF(nm, dt_, v) { .name = (nm), .type = 't', .dt = (dt_), .f = (v) }

/* ---- helpers for the references ------------------------------------------------------------ */

static inline const attr_spec *find_attr(const op_case *c, const char *name)
{
    for (int i = 0; i < MAX_ATTR && c->attr[i].name; i++)
        if (strcmp(c->attr[i].name, name) == 0)
            return &c->attr[i];
    return NULL;
}

static inline int64_t attr_i(const op_case *c, const char *name, int64_t dflt)
{
    const attr_spec *a = find_attr(c, name);
    return a ? a->i : dflt;
}

static inline float attr_f(const op_case *c, const char *name, float dflt)
{
    const attr_spec *a = find_attr(c, name);
    return a ? a->f : dflt;
}

static inline const char *attr_s(const op_case *c, const char *name, const char *dflt)
{
    const attr_spec *a = find_attr(c, name);
    return a ? a->s : dflt;
}

/* The ints attribute NAME (N values) into V, else DFLT. */
static inline void ints_or(const op_case *c, const char *name, int n, const int64_t *dflt,
                           int64_t *v)
{
    const attr_spec *a = find_attr(c, name);
    for (int i = 0; i < n; i++)
        v[i] = a ? a->ints[i] : dflt[i];
}

static inline bool is_float_dt(int dtype)
{
    return dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE || dtype == BD_DT_FLOAT16 ||
           dtype == BD_DT_BFLOAT16;
}

static inline size_t numel(int rank, const int64_t *dims)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

static inline void unravel(size_t i, int rank, const int64_t *dims, int64_t *idx)
{
    for (int k = rank - 1; k >= 0; k--) {
        idx[k] = (int64_t)(i % (size_t)dims[k]);
        i /= (size_t)dims[k];
    }
}

static inline size_t ravel(const int64_t *idx, int rank, const int64_t *dims)
{
    size_t off = 0;
    for (int k = 0; k < rank; k++)
        off = off * (size_t)dims[k] + (size_t)idx[k];
    return off;
}

/* Offset in T of output index IDX (rank R), numpy broadcasting from the right. */
static inline size_t bcast(const tensor *t, const int64_t *idx, int r)
{
    size_t off = 0;
    for (int k = 0; k < t->rank; k++) {
        int64_t d = t->dims[k], j = idx[r - t->rank + k];
        off = off * (size_t)d + (size_t)(d == 1 ? 0 : j);
    }
    return off;
}

static inline int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

/* outer x axis x inner around one axis of DIMS. */
static inline void split_axis(int rank, const int64_t *dims, int axis, size_t *outer,
                              size_t *len, size_t *inner)
{
    *outer = numel(axis, dims);
    *len = (size_t)dims[axis];
    *inner = numel(rank - axis - 1, dims + axis + 1);
}

/* An integer element of dtype DT as an int64 whose signed order is the element's order:
 * UINT64 (held as its bits) with the sign bit flipped, the others as they are. */
static inline int64_t ordered(int dt, int64_t v)
{
    return dt == BD_DT_UINT64 ? (int64_t)((uint64_t)v ^ (UINT64_C(1) << 63)) : v;
}

/* Output element J: the numeric result, as F for a float output and as I for the others. */
static inline void put(tensor *t, size_t j, double f, int64_t i)
{
    if (is_float_dt(t->dtype))
        t->f[j] = f;
    else
        t->i[j] = i;
}

/* Output element J is element K of S, whatever the dtype. */
static inline void copy_el(tensor *t, size_t j, const tensor *s, size_t k)
{
    t->f[j] = s->f[k];
    t->i[j] = s->i[k];
}

/* References shared by several family files. */
void ref_unary(const op_case *c, const tensor *in, tensor *out);
void ref_binary(const op_case *c, const tensor *in, tensor *out);
void ref_clip(const op_case *c, const tensor *in, tensor *out);
void ref_copy(const op_case *c, const tensor *in, tensor *out);
void ref_transpose(const op_case *c, const tensor *in, tensor *out);
void ref_concat(const op_case *c, const tensor *in, tensor *out);
void ref_slice(const op_case *c, const tensor *in, tensor *out);
void ref_pad(const op_case *c, const tensor *in, tensor *out);
void ref_channel_shuffle(const op_case *c, const tensor *in, tensor *out);
void ref_gather(const op_case *c, const tensor *in, tensor *out);
void ref_reduce(const op_case *c, const tensor *in, tensor *out);
void ref_softmax(const op_case *c, const tensor *in, tensor *out);
void ref_conv(const op_case *c, const tensor *in, tensor *out);
void ref_conv_transpose(const op_case *c, const tensor *in, tensor *out);

#endif
