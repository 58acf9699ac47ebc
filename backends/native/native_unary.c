/* Unary element-wise kernels: the math oneDNN 2.6 has no eltwise for (or not in double),
 * integer Abs/Neg/Sign, Not, IsNaN/IsInf, Clip and Shrink of any numeric dtype, and Cast
 * between every pair of numeric dtypes, BOOL, FLOAT16 and BFLOAT16. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

typedef enum un_op {
    UN_ABS = 1, UN_NEG, UN_SIGN, UN_EXP, UN_LOG, UN_SQRT, UN_RECIP, UN_FLOOR, UN_CEIL, UN_ROUND,
    UN_SIN, UN_COS, UN_TAN, UN_ASIN, UN_ACOS, UN_ATAN, UN_SINH, UN_COSH, UN_ASINH, UN_ACOSH,
    UN_ATANH, UN_ERF, UN_RELU, UN_SIGMOID, UN_TANH, UN_SOFTPLUS, UN_SOFTSIGN, UN_HARDSIGMOID,
    UN_HARDSWISH, UN_ELU, UN_SELU, UN_CELU, UN_LEAKYRELU, UN_THRESHOLDEDRELU, UN_MISH,
    UN_COUNT
} un_op;

typedef struct un_name {
    const char *op;
    int         code;
    double      alpha, beta;   /* attribute defaults (ONNX) */
    bool        ints;          /* defined on integers too */
} un_name;

static const un_name k_unary[] = {
    { "Abs", UN_ABS, 0, 0, true },      { "Neg", UN_NEG, 0, 0, true },
    { "Sign", UN_SIGN, 0, 0, true },    { "Exp", UN_EXP, 0, 0, false },
    { "Log", UN_LOG, 0, 0, false },     { "Sqrt", UN_SQRT, 0, 0, false },
    { "Reciprocal", UN_RECIP, 0, 0, false }, { "Floor", UN_FLOOR, 0, 0, false },
    { "Ceil", UN_CEIL, 0, 0, false },   { "Round", UN_ROUND, 0, 0, false },
    { "Sin", UN_SIN, 0, 0, false },     { "Cos", UN_COS, 0, 0, false },
    { "Tan", UN_TAN, 0, 0, false },     { "Asin", UN_ASIN, 0, 0, false },
    { "Acos", UN_ACOS, 0, 0, false },   { "Atan", UN_ATAN, 0, 0, false },
    { "Sinh", UN_SINH, 0, 0, false },   { "Cosh", UN_COSH, 0, 0, false },
    { "Asinh", UN_ASINH, 0, 0, false }, { "Acosh", UN_ACOSH, 0, 0, false },
    { "Atanh", UN_ATANH, 0, 0, false }, { "Erf", UN_ERF, 0, 0, false },
    { "Relu", UN_RELU, 0, 0, true },    { "Sigmoid", UN_SIGMOID, 0, 0, false },
    { "Tanh", UN_TANH, 0, 0, false },   { "Softplus", UN_SOFTPLUS, 0, 0, false },
    { "Softsign", UN_SOFTSIGN, 0, 0, false },
    { "HardSigmoid", UN_HARDSIGMOID, 0.2, 0.5, false },
    { "HardSwish", UN_HARDSWISH, 0, 0, false },
    { "Elu", UN_ELU, 1.0, 0, false },
    { "Selu", UN_SELU, 1.67326319217681884765625, 1.05070102214813232421875, false },
    { "Celu", UN_CELU, 1.0, 0, false }, { "LeakyRelu", UN_LEAKYRELU, 0.01, 0, false },
    { "ThresholdedRelu", UN_THRESHOLDEDRELU, 1.0, 0, false }, { "Mish", UN_MISH, 0, 0, false },
};

static const un_name *unary_of(const char *op)
{
    for (size_t i = 0; i < sizeof k_unary / sizeof k_unary[0]; i++)
        if (!strcmp(k_unary[i].op, op))
            return &k_unary[i];
    return NULL;
}

/* ---- float math, one loop per op and type ---------------------------------------------------- */

#define F_LOOP(name, T, EXPR)                                                                 \
    static void name(const T *restrict xs, T *restrict y, size_t n, T a, T b)                \
    {                                                                                         \
        (void)a; (void)b;                                                                     \
        for (size_t i = 0; i < n; i++) { T x = xs[i]; y[i] = (EXPR); }                       \
    }

#define F_MATH(sfx, T, F)                                                                     \
    F_LOOP(abs_##sfx, T, F(fabs)(x))                                                          \
    F_LOOP(neg_##sfx, T, -x)                                                                  \
    F_LOOP(sign_##sfx, T, x > 0 ? (T)1 : x < 0 ? (T)-1 : x)                                   \
    F_LOOP(exp_##sfx, T, F(exp)(x))                                                           \
    F_LOOP(log_##sfx, T, F(log)(x))                                                           \
    F_LOOP(sqrt_##sfx, T, F(sqrt)(x))                                                         \
    F_LOOP(recip_##sfx, T, (T)1 / x)                                                          \
    F_LOOP(floor_##sfx, T, F(floor)(x))                                                       \
    F_LOOP(ceil_##sfx, T, F(ceil)(x))                                                         \
    F_LOOP(round_##sfx, T, F(nearbyint)(x))                                                   \
    F_LOOP(sin_##sfx, T, F(sin)(x))                                                           \
    F_LOOP(cos_##sfx, T, F(cos)(x))                                                           \
    F_LOOP(tan_##sfx, T, F(tan)(x))                                                           \
    F_LOOP(asin_##sfx, T, F(asin)(x))                                                         \
    F_LOOP(acos_##sfx, T, F(acos)(x))                                                         \
    F_LOOP(atan_##sfx, T, F(atan)(x))                                                         \
    F_LOOP(sinh_##sfx, T, F(sinh)(x))                                                         \
    F_LOOP(cosh_##sfx, T, F(cosh)(x))                                                         \
    F_LOOP(asinh_##sfx, T, F(asinh)(x))                                                       \
    F_LOOP(acosh_##sfx, T, F(acosh)(x))                                                       \
    F_LOOP(atanh_##sfx, T, F(atanh)(x))                                                       \
    F_LOOP(erf_##sfx, T, F(erf)(x))                                                           \
    F_LOOP(relu_##sfx, T, x < 0 ? (T)0 : x)                          /* NaN stays NaN */      \
    F_LOOP(sigmoid_##sfx, T, (T)1 / ((T)1 + F(exp)(-x)))                                      \
    F_LOOP(tanh_##sfx, T, F(tanh)(x))                                                         \
    F_LOOP(softplus_##sfx, T, x > (T)20 ? x : F(log1p)(F(exp)(x)))                            \
    F_LOOP(softsign_##sfx, T, x / ((T)1 + F(fabs)(x)))                                        \
    F_LOOP(hardsigmoid_##sfx, T, x != x ? x : F(fmax)((T)0, F(fmin)((T)1, a * x + b)))        \
    F_LOOP(hardswish_##sfx, T, x * F(fmax)((T)0, F(fmin)((T)1, x / (T)6 + (T)0.5)))           \
    F_LOOP(elu_##sfx, T, x < 0 ? a * (F(exp)(x) - (T)1) : x)                                  \
    F_LOOP(selu_##sfx, T, x <= 0 ? b * (a * F(exp)(x) - a) : b * x)                           \
    F_LOOP(celu_##sfx, T, x != x ? x : F(fmax)((T)0, x) + F(fmin)((T)0, a * (F(exp)(x / a) - (T)1))) \
    F_LOOP(leakyrelu_##sfx, T, x < 0 ? a * x : x)                                             \
    F_LOOP(thresholdedrelu_##sfx, T, x > a ? x : (T)0)                                        \
    F_LOOP(mish_##sfx, T, x * F(tanh)(x > (T)20 ? x : F(log1p)(F(exp)(x))))

#define FN_F32(fn) fn##f
#define FN_F64(fn) fn
F_MATH(f32, float, FN_F32)
F_MATH(f64, double, FN_F64)

typedef void (*f32_fn)(const float *, float *, size_t, float, float);
typedef void (*f64_fn)(const double *, double *, size_t, double, double);

#define TABLE_OF(sfx) {                                                                       \
    [UN_ABS] = abs_##sfx, [UN_NEG] = neg_##sfx, [UN_SIGN] = sign_##sfx, [UN_EXP] = exp_##sfx, \
    [UN_LOG] = log_##sfx, [UN_SQRT] = sqrt_##sfx, [UN_RECIP] = recip_##sfx,                   \
    [UN_FLOOR] = floor_##sfx, [UN_CEIL] = ceil_##sfx, [UN_ROUND] = round_##sfx,               \
    [UN_SIN] = sin_##sfx, [UN_COS] = cos_##sfx, [UN_TAN] = tan_##sfx, [UN_ASIN] = asin_##sfx, \
    [UN_ACOS] = acos_##sfx, [UN_ATAN] = atan_##sfx, [UN_SINH] = sinh_##sfx,                   \
    [UN_COSH] = cosh_##sfx, [UN_ASINH] = asinh_##sfx, [UN_ACOSH] = acosh_##sfx,               \
    [UN_ATANH] = atanh_##sfx, [UN_ERF] = erf_##sfx, [UN_RELU] = relu_##sfx,                   \
    [UN_SIGMOID] = sigmoid_##sfx, [UN_TANH] = tanh_##sfx, [UN_SOFTPLUS] = softplus_##sfx,     \
    [UN_SOFTSIGN] = softsign_##sfx, [UN_HARDSIGMOID] = hardsigmoid_##sfx,                     \
    [UN_HARDSWISH] = hardswish_##sfx, [UN_ELU] = elu_##sfx, [UN_SELU] = selu_##sfx,           \
    [UN_CELU] = celu_##sfx, [UN_LEAKYRELU] = leakyrelu_##sfx,                                 \
    [UN_THRESHOLDEDRELU] = thresholdedrelu_##sfx, [UN_MISH] = mish_##sfx }

static const f32_fn k_f32[UN_COUNT] = TABLE_OF(f32);
static const f64_fn k_f64[UN_COUNT] = TABLE_OF(f64);

/* Integer Abs/Neg/Sign/Relu, through the unsigned type so INT_MIN wraps instead of trapping. */
static void int_unary(int op, const void *x, void *y, int dtype, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = nv_get_i(x, dtype, i), r;
        switch (op) {
        case UN_ABS:  r = v < 0 ? (int64_t)(0 - (uint64_t)v) : v; break;
        case UN_NEG:  r = (int64_t)(0 - (uint64_t)v); break;
        case UN_SIGN: r = dtype == BD_DT_UINT64 ? ((const uint64_t *)x)[i] != 0 : (v > 0) - (v < 0); break;
        default:      r = v > 0 ? v : 0; break;      /* Relu */
        }
        if (dtype == BD_DT_UINT64 && op != UN_SIGN)
            ((uint64_t *)y)[i] = op == UN_NEG ? 0 - ((const uint64_t *)x)[i] : ((const uint64_t *)x)[i];
        else
            nv_set_i(y, dtype, i, r);
    }
}

/* A float math loop over one tensor, split across the threads (nv_parallel_for). */
typedef struct un_job {
    const void *x;
    void       *y;
    double      a, b;
    int         op;
} un_job;

static void f32_range(void *job, size_t lo, size_t cnt)
{
    const un_job *j = job;
    k_f32[j->op]((const float *)j->x + lo, (float *)j->y + lo, cnt, (float)j->a, (float)j->b);
}

static void f64_range(void *job, size_t lo, size_t cnt)
{
    const un_job *j = job;
    k_f64[j->op]((const double *)j->x + lo, (double *)j->y + lo, cnt, j->a, j->b);
}

static int unary_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    (void)env;
    (void)err;
    int t = in[0].dtype;
    un_job j = { in[0].data, out[0].data, s->fp[0], s->fp[1], s->op };
    if (t == BD_DT_FLOAT || t == BD_DT_DOUBLE) {
        nv_parallel_for(in[0].numel, in[0].numel, t == BD_DT_FLOAT ? f32_range : f64_range, &j);
    } else {
        int_unary(s->op, in[0].data, out[0].data, t, in[0].numel);
    }
    return 0;
}

static bool unary_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    const un_name *u = unary_of(n->op_type);
    if (n->n_inputs != 1 || n->n_outputs != 1 || !n->inputs[0])
        return nv_why(why, len, "%s: expects one input and one output", n->op_type);
    unsigned mask = NV_DT_FLOATS | (u->ints ? NV_DT(BD_DT_INT8) | NV_DT(BD_DT_INT16) |
                                    NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64) : 0);
    if (u->ints && u->code != UN_NEG)
        mask |= NV_DT(BD_DT_UINT8) | NV_DT(BD_DT_UINT16) | NV_DT(BD_DT_UINT32) | NV_DT(BD_DT_UINT64);
    if (!nv_io_ok(n, 1, mask, why, len))
        return false;
    if (n->inputs[0]->dtype != n->outputs[0]->dtype)
        return nv_why(why, len, "%s: output dtype differs from the input's", n->op_type);
    return true;
}

static int unary_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const un_name *u = unary_of(n->op_type);
    s->op = u->code;
    s->fp[0] = bd_node_attr_float(n, "alpha", (float)u->alpha);
    s->fp[1] = bd_node_attr_float(n, u->code == UN_SELU ? "gamma" : "beta", (float)u->beta);
    s->run = unary_run;
    return 0;
}

/* ---- Not, IsNaN, IsInf ----------------------------------------------------------------------- */

static bool pred_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool is_not = !strcmp(n->op_type, "Not");
    if (n->n_inputs != 1 || n->n_outputs != 1 || !n->inputs[0])
        return nv_why(why, len, "%s: expects one input and one output", n->op_type);
    if (!nv_io_ok(n, 1, is_not ? NV_DT(BD_DT_BOOL) : NV_DT_FLOATS | NV_DT(BD_DT_BOOL), why, len))
        return false;
    if (n->outputs[0]->dtype != BD_DT_BOOL || (!is_not && n->inputs[0]->dtype == BD_DT_BOOL))
        return nv_why(why, len, "%s: unexpected dtypes", n->op_type);
    return true;
}

static int pred_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    uint8_t *y = out[0].data;
    bool neg = s->ip[0], pos = s->ip[1];
    for (size_t i = 0; i < in[0].numel; i++) {
        if (s->op == 0) {
            y[i] = !((const uint8_t *)in[0].data)[i];
            continue;
        }
        double v = nv_get_f(in[0].data, in[0].dtype, i);
        y[i] = s->op == 1 ? v != v : isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
    }
    return 0;
}

static int pred_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(n->op_type, "Not") ? 0 : !strcmp(n->op_type, "IsNaN") ? 1 : 2;
    s->ip[0] = bd_node_attr_int(n, "detect_negative", 1);
    s->ip[1] = bd_node_attr_int(n, "detect_positive", 1);
    s->run = pred_run;
    return 0;
}

/* ---- Clip of any numeric dtype (min and max are optional scalar inputs) ------------------------ */

static bool clip_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || n->n_inputs > 3 || n->n_outputs != 1 || !n->inputs[0])
        return nv_why(why, len, "Clip: unexpected inputs");
    if (!nv_io_ok(n, 3, NV_DT_NUMERIC, why, len))
        return false;
    for (size_t i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] && (n->inputs[i]->dtype != n->inputs[0]->dtype ||
                             nv_shape_numel(&n->inputs[i]->shape) != 1))
            return nv_why(why, len, "Clip: min and max must be scalars of the input's dtype");
    if (bd_node_attr(n, "min") || bd_node_attr(n, "max"))
        return nv_why(why, len, "Clip: min/max attributes (opset < 11)");
    return n->outputs[0]->dtype == n->inputs[0]->dtype ? true
                                                       : nv_why(why, len, "Clip: output dtype");
}

static int clip_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)s;
    (void)env;
    (void)err;
    int t = in[0].dtype;
    bool has_lo = s->n_in > 1 && in[1].data, has_hi = s->n_in > 2 && in[2].data;
    if (nv_dtype_is_float(t)) {
        double lo = has_lo ? nv_get_f(in[1].data, t, 0) : -INFINITY;
        double hi = has_hi ? nv_get_f(in[2].data, t, 0) : INFINITY;
        for (size_t i = 0; i < in[0].numel; i++) {
            double v = nv_get_f(in[0].data, t, i);
            nv_set_f(out[0].data, t, i, v < lo ? lo : v > hi ? hi : v);
        }
        return 0;
    }
    bool u64 = t == BD_DT_UINT64;
    for (size_t i = 0; i < in[0].numel; i++) {
        if (u64) {
            uint64_t v = ((const uint64_t *)in[0].data)[i];
            if (has_lo && v < ((const uint64_t *)in[1].data)[0])
                v = ((const uint64_t *)in[1].data)[0];
            if (has_hi && v > ((const uint64_t *)in[2].data)[0])
                v = ((const uint64_t *)in[2].data)[0];
            ((uint64_t *)out[0].data)[i] = v;
            continue;
        }
        int64_t v = nv_get_i(in[0].data, t, i);
        if (has_lo && v < nv_get_i(in[1].data, t, 0))
            v = nv_get_i(in[1].data, t, 0);
        if (has_hi && v > nv_get_i(in[2].data, t, 0))
            v = nv_get_i(in[2].data, t, 0);
        nv_set_i(out[0].data, t, i, v);
    }
    return 0;
}

static int clip_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)err;
    s->run = clip_run;
    return 0;
}

/* ---- Shrink of any numeric dtype --------------------------------------------------------------- */

/* y = x + bias below -lambd, x - bias above lambd, 0 between (in double for every dtype; an
 * integer result saturates). */
static bool shrink_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || n->n_outputs != 1 || !n->inputs[0])
        return nv_why(why, len, "Shrink: expects one input and one output");
    if (!nv_io_ok(n, 1, NV_DT_NUMERIC, why, len))
        return false;
    return n->outputs[0]->dtype == n->inputs[0]->dtype ? true
                                                       : nv_why(why, len, "Shrink: output dtype");
}

static int shrink_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    (void)err;
    double lambd = s->fp[0], bias = s->fp[1];
    int t = in[0].dtype;
    if (t == BD_DT_FLOAT) {
        const float *x = in[0].data;
        float *y = out[0].data, l = (float)lambd, b = (float)bias;
        for (size_t i = 0; i < in[0].numel; i++)
            y[i] = x[i] < -l ? x[i] + b : x[i] > l ? x[i] - b : 0.0f;
        return 0;
    }
    for (size_t i = 0; i < in[0].numel; i++) {
        double v = nv_get_f(in[0].data, t, i);
        nv_set_f(out[0].data, t, i, v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
    }
    return 0;
}

static int shrink_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->fp[0] = bd_node_attr_float(n, "lambd", 0.5f);
    s->fp[1] = bd_node_attr_float(n, "bias", 0.0f);
    s->run = shrink_run;
    return 0;
}

/* ---- Cast ------------------------------------------------------------------------------------ */

/* IEEE half and bfloat16 <-> float (round to nearest even; NaN stays NaN). */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (man) {                     /* subnormal: normalise */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else
        bits = sign;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {                       /* subnormal or zero */
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        int shift = 14 - e;
        uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
        half++;                         /* may carry into the exponent: still correct */
    return (uint16_t)(sign | half);
}

static float bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* A float value as an integer of DTYPE without undefined behaviour: NaN is 0, values out of
 * range saturate (ONNX leaves them undefined; C would too). */
static int64_t float_to_int(double v, int dtype)
{
    if (v != v)
        return 0;
    int64_t lo, hi;
    switch (dtype) {
    case BD_DT_INT8:   lo = INT8_MIN;  hi = INT8_MAX;  break;
    case BD_DT_UINT8:  lo = 0;         hi = UINT8_MAX; break;
    case BD_DT_INT16:  lo = INT16_MIN; hi = INT16_MAX; break;
    case BD_DT_UINT16: lo = 0;         hi = UINT16_MAX; break;
    case BD_DT_INT32:  lo = INT32_MIN; hi = INT32_MAX; break;
    case BD_DT_UINT32: lo = 0;         hi = UINT32_MAX; break;
    default:                           /* +-2^63 are exact doubles; 2^63 itself is past INT64 */
        return v < -9223372036854775808.0 ? INT64_MIN : v >= 9223372036854775808.0 ? INT64_MAX : (int64_t)v;
    }
    return v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v;
}

static double load_f(const void *p, int t, size_t i)
{
    if (t == BD_DT_FLOAT16)
        return half_to_float(((const uint16_t *)p)[i]);
    if (t == BD_DT_BFLOAT16)
        return bf16_to_float(((const uint16_t *)p)[i]);
    return nv_get_f(p, t, i);
}

static void store_f(void *p, int t, size_t i, double v)
{
    if (t == BD_DT_FLOAT16)
        ((uint16_t *)p)[i] = float_to_half((float)v);
    else if (t == BD_DT_BFLOAT16)
        ((uint16_t *)p)[i] = float_to_bf16((float)v);
    else if (nv_dtype_is_float(t) || t == BD_DT_BOOL)
        nv_set_f(p, t, i, v);
    else if (t == BD_DT_UINT64)
        ((uint64_t *)p)[i] = v != v || v <= 0 ? 0 : v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)v;
    else
        nv_set_i(p, t, i, float_to_int(v, t));
}

static bool is_floatish(int t)
{
    return nv_dtype_is_float(t) || t == BD_DT_FLOAT16 || t == BD_DT_BFLOAT16;
}

static int cast_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)s;
    (void)env;
    (void)err;
    int ts = in[0].dtype, td = out[0].dtype;
    const void *x = in[0].data;
    void *y = out[0].data;
    size_t n = in[0].numel;
    if (ts == td) {
        memcpy(y, x, n * bd_dtype_size(ts));
        return 0;
    }
    /* the common glue casts, vectorisable */
    if (ts == BD_DT_INT64 && td == BD_DT_FLOAT) {
        for (size_t i = 0; i < n; i++) ((float *)y)[i] = (float)((const int64_t *)x)[i];
        return 0;
    }
    if (ts == BD_DT_BOOL && td == BD_DT_FLOAT) {
        for (size_t i = 0; i < n; i++) ((float *)y)[i] = ((const uint8_t *)x)[i] ? 1.0f : 0.0f;
        return 0;
    }
    if (ts == BD_DT_INT32 && td == BD_DT_INT64) {
        for (size_t i = 0; i < n; i++) ((int64_t *)y)[i] = ((const int32_t *)x)[i];
        return 0;
    }
    if (ts == BD_DT_INT64 && td == BD_DT_INT32) {
        for (size_t i = 0; i < n; i++) ((int32_t *)y)[i] = (int32_t)((const int64_t *)x)[i];
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (td == BD_DT_BOOL)
            ((uint8_t *)y)[i] = is_floatish(ts) ? load_f(x, ts, i) != 0 : nv_get_i(x, ts, i) != 0;
        else if (is_floatish(ts) || is_floatish(td))
            store_f(y, td, i, ts == BD_DT_UINT64 ? (double)((const uint64_t *)x)[i] : load_f(x, ts, i));
        else if (ts == BD_DT_UINT64 || td == BD_DT_UINT64)   /* integer to integer: wraps */
            nv_set_i(y, td, i, (int64_t)(ts == BD_DT_UINT64 ? ((const uint64_t *)x)[i]
                                                            : (uint64_t)nv_get_i(x, ts, i)));
        else
            nv_set_i(y, td, i, nv_get_i(x, ts, i));
    }
    return 0;
}

#define CAST_TYPES (NV_DT_NUMERIC | NV_DT(BD_DT_BOOL) | NV_DT(BD_DT_FLOAT16) | NV_DT(BD_DT_BFLOAT16))

static bool cast_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || n->n_outputs != 1 || !n->inputs[0])
        return nv_why(why, len, "%s: unexpected inputs", n->op_type);
    if (!nv_io_ok(n, 1, CAST_TYPES, why, len))
        return false;
    if (!strcmp(n->op_type, "CastLike") && (n->n_inputs != 2 || !n->inputs[1] ||
                                            n->inputs[1]->dtype != n->outputs[0]->dtype))
        return nv_why(why, len, "CastLike: the output must have the second input's dtype");
    return true;
}

static int cast_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)err;
    s->run = cast_run;
    return 0;
}

const nv_op nv_unary_ops[] = {
    { "Abs", unary_supports, unary_prepare },      { "Neg", unary_supports, unary_prepare },
    { "Sign", unary_supports, unary_prepare },     { "Exp", unary_supports, unary_prepare },
    { "Log", unary_supports, unary_prepare },      { "Sqrt", unary_supports, unary_prepare },
    { "Reciprocal", unary_supports, unary_prepare }, { "Floor", unary_supports, unary_prepare },
    { "Ceil", unary_supports, unary_prepare },     { "Round", unary_supports, unary_prepare },
    { "Sin", unary_supports, unary_prepare },      { "Cos", unary_supports, unary_prepare },
    { "Tan", unary_supports, unary_prepare },      { "Asin", unary_supports, unary_prepare },
    { "Acos", unary_supports, unary_prepare },     { "Atan", unary_supports, unary_prepare },
    { "Sinh", unary_supports, unary_prepare },     { "Cosh", unary_supports, unary_prepare },
    { "Asinh", unary_supports, unary_prepare },    { "Acosh", unary_supports, unary_prepare },
    { "Atanh", unary_supports, unary_prepare },    { "Erf", unary_supports, unary_prepare },
    { "Relu", unary_supports, unary_prepare },     { "Sigmoid", unary_supports, unary_prepare },
    { "Tanh", unary_supports, unary_prepare },     { "Softplus", unary_supports, unary_prepare },
    { "Softsign", unary_supports, unary_prepare }, { "HardSigmoid", unary_supports, unary_prepare },
    { "HardSwish", unary_supports, unary_prepare }, { "Elu", unary_supports, unary_prepare },
    { "Selu", unary_supports, unary_prepare },     { "Celu", unary_supports, unary_prepare },
    { "LeakyRelu", unary_supports, unary_prepare }, { "ThresholdedRelu", unary_supports, unary_prepare },
    { "Mish", unary_supports, unary_prepare },
    { "Not", pred_supports, pred_prepare },     { "IsNaN", pred_supports, pred_prepare },
    { "IsInf", pred_supports, pred_prepare },   { "Clip", clip_supports, clip_prepare },
    { "Shrink", shrink_supports, shrink_prepare },
    { "Cast", cast_supports, cast_prepare },    { "CastLike", cast_supports, cast_prepare },
};
const size_t nv_unary_n = sizeof nv_unary_ops / sizeof nv_unary_ops[0];
