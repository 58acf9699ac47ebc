/* Element-wise cases and references: unary math (float and double; Abs, Neg, Sign and Relu of
 * integers), Not, IsNaN, IsInf, Clip, Cast and CastLike, binary arithmetic, comparisons,
 * logic and BitShift with numpy broadcasting, the variadic Sum/Mean/Max/Min, and Where. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static bool op_is(const op_case *c, const char *op)
{
    return !strcmp(c->op, op);
}

/* ---- unary ----------------------------------------------------------------------------------- */

/* As ONNX's reference implementation computes them (numpy: maximum and minimum propagate a
 * NaN), every op maps NaN to NaN but ThresholdedRelu (where(x > alpha, x, 0)), which gives 0. */
static double unary_f(const op_case *c, double x)
{
    const char *op = c->op;
    double alpha;
    if (isnan(x))
        return strcmp(op, "ThresholdedRelu") ? x : 0;
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
    if (!strcmp(op, "Sign"))      return x > 0 ? 1 : x < 0 ? -1 : x;
    if (!strcmp(op, "Ceil"))      return ceil(x);
    if (!strcmp(op, "Round"))     return nearbyint(x);              /* halves to even */
    if (!strcmp(op, "Cos"))       return cos(x);
    if (!strcmp(op, "Tan"))       return tan(x);
    if (!strcmp(op, "Asin"))      return asin(x);
    if (!strcmp(op, "Acos"))      return acos(x);
    if (!strcmp(op, "Atan"))      return atan(x);
    if (!strcmp(op, "Sinh"))      return sinh(x);
    if (!strcmp(op, "Cosh"))      return cosh(x);
    if (!strcmp(op, "Asinh"))     return asinh(x);
    if (!strcmp(op, "Acosh"))     return acosh(x);
    if (!strcmp(op, "Atanh"))     return atanh(x);
    if (!strcmp(op, "Softsign"))  return x / (1 + fabs(x));
    if (!strcmp(op, "Mish"))      return x * tanh(log1p(exp(x)));
    if (!strcmp(op, "Selu")) {
        alpha = attr_f(c, "alpha", 1.67326319217681884765625f);
        double gamma = attr_f(c, "gamma", 1.05070102214813232421875f);
        return x <= 0 ? gamma * (alpha * exp(x) - alpha) : gamma * x;
    }
    if (!strcmp(op, "Celu")) {
        alpha = attr_f(c, "alpha", 1.0f);
        return fmax(0, x) + fmin(0, alpha * (exp(x / alpha) - 1));
    }
    if (!strcmp(op, "ThresholdedRelu"))
        return x > attr_f(c, "alpha", 1.0f) ? x : 0;
    fprintf(stderr, "no unary reference for %s\n", op);
    abort();
}

/* Abs, Neg, Sign, Relu of integers: negation in uint64, so INT_MIN wraps (the runner then
 * wraps the int64 result to the dtype: Abs(INT32_MIN) = INT32_MIN); UINT64 is never
 * negative. */
static int64_t unary_i(const op_case *c, int dt, int64_t x)
{
    if (dt == BD_DT_UINT64 && !op_is(c, "Neg"))
        return op_is(c, "Sign") ? x != 0 : x;
    if (op_is(c, "Abs"))  return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    if (op_is(c, "Neg"))  return (int64_t)(0 - (uint64_t)x);
    if (op_is(c, "Sign")) return (x > 0) - (x < 0);
    if (op_is(c, "Relu")) return x > 0 ? x : 0;
    fprintf(stderr, "no integer unary reference for %s\n", c->op);
    abort();
}

void ref_unary(const op_case *c, const tensor *in, tensor *out)
{
    bool fl = is_float_dt(in[0].dtype);
    for (size_t j = 0; j < out->n; j++)
        put(out, j, fl ? unary_f(c, in[0].f[j]) : 0, fl ? 0 : unary_i(c, in[0].dtype, in[0].i[j]));
}

/* Not, IsNaN, IsInf (detect_negative, detect_positive). */
static void ref_pred(const op_case *c, const tensor *in, tensor *out)
{
    bool neg = attr_i(c, "detect_negative", 1), pos = attr_i(c, "detect_positive", 1);
    for (size_t j = 0; j < out->n; j++) {
        double x = in[0].f[j];
        out->i[j] = op_is(c, "Not") ? !in[0].i[j] : op_is(c, "IsNaN") ? isnan(x)
                  : isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
    }
}

/* Shrink: x + bias below -lambd, x - bias above lambd, else 0 (integers: truncated). */
static void ref_shrink(const op_case *c, const tensor *in, tensor *out)
{
    double l = attr_f(c, "lambd", 0.5f), b = attr_f(c, "bias", 0.0f);
    for (size_t j = 0; j < out->n; j++) {
        double x = in[0].f[j], v = x < -l ? x + b : x > l ? x - b : 0;
        put(out, j, v, (int64_t)trunc(v));
    }
}

/* Clip with optional min/max inputs (opset 11+); an omitted or absent one is no bound. */
void ref_clip(const op_case *c, const tensor *in, tensor *out)
{
    bool has_lo = c->n_in > 1 && in[1].n, has_hi = c->n_in > 2 && in[2].n;
    for (size_t j = 0; j < out->n; j++) {
        if (is_float_dt(in[0].dtype)) {
            double x = in[0].f[j];
            x = has_lo && x < in[1].f[0] ? in[1].f[0] : x;
            out->f[j] = has_hi && x > in[2].f[0] ? in[2].f[0] : x;
        } else {                        /* compared in the dtype's order */
            int dt = in[0].dtype;
            int64_t x = in[0].i[j];
            x = has_lo && ordered(dt, x) < ordered(dt, in[1].i[0]) ? in[1].i[0] : x;
            out->i[j] = has_hi && ordered(dt, x) > ordered(dt, in[2].i[0]) ? in[2].i[0] : x;
        }
    }
}

/* ---- Cast -------------------------------------------------------------------------------------- */

/* A float to an integer dtype: truncated toward zero. ONNX leaves NaN and out-of-range values
 * undefined; braid's choice (backends/native/native_unary.c) is NaN -> 0 and saturation. */
static int64_t float_to_int(double v, int dtype)
{
    double lo, hi;
    switch (dtype) {
    case BD_DT_INT8:   lo = INT8_MIN;  hi = INT8_MAX;   break;
    case BD_DT_UINT8:  lo = 0;         hi = UINT8_MAX;  break;
    case BD_DT_INT16:  lo = INT16_MIN; hi = INT16_MAX;  break;
    case BD_DT_UINT16: lo = 0;         hi = UINT16_MAX; break;
    case BD_DT_INT32:  lo = INT32_MIN; hi = INT32_MAX;  break;
    case BD_DT_UINT32: lo = 0;         hi = UINT32_MAX; break;
    case BD_DT_UINT64:                  /* held as its bits */
        return isnan(v) || v <= 0 ? 0 : v >= 18446744073709551616.0 ? -1 : (int64_t)(uint64_t)v;
    default:                            /* INT64: 2^63 and up saturate to INT64_MAX */
        return isnan(v) ? 0 : v >= 9223372036854775808.0 ? INT64_MAX
             : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
    }
    return isnan(v) ? 0 : v <= lo ? (int64_t)lo : v >= hi ? (int64_t)hi : (int64_t)trunc(v);
}

/* Cast and CastLike: the output's dtype is the target; the runner rounds float results to it
 * (FLOAT16 by round-to-nearest-even) and wraps integer results (integer casts wrap). */
static void ref_cast(const op_case *c, const tensor *in, tensor *out)
{
    int from = in[0].dtype, to = out->dtype;
    bool ff = is_float_dt(from);
    for (size_t j = 0; j < out->n; j++) {
        if (to == BD_DT_BOOL)
            out->i[j] = ff ? in[0].f[j] != 0 : in[0].i[j] != 0;     /* NaN is true */
        else if (is_float_dt(to))
            out->f[j] = in[0].f[j];     /* an integer's value as a double (UINT64 too) */
        else
            out->i[j] = ff ? float_to_int(in[0].f[j], to) : in[0].i[j];
    }
}

/* ---- binary ---------------------------------------------------------------------------------- */

/* A float power stored into an integer output (Pow of integers): truncated, saturated. */
static int64_t pow_to_int(double v)
{
    return isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
}

/* Python's remainder (the divisor's sign) and C's (the dividend's), INT_MIN % -1 = 0. */
static double pymod_f(double a, double b)
{
    double r = fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

static int64_t mod_i(int64_t a, int64_t b, bool c_style)
{
    if (b == 0)
        return 0;                       /* an expected-error case: never compared */
    int64_t r = b == -1 ? 0 : a % b;
    return !c_style && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

/* Integer division truncates toward zero; INT_MIN / -1 wraps (the negation in uint64). */
static int64_t div_i(int64_t a, int64_t b)
{
    return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}

/* One element of a binary op on floats (A, B) or integers (X, Y) of dtype DT: into OUT[J]. */
static void binary_el(const op_case *c, int dt, tensor *out, size_t j, double a, double b,
                      int64_t x, int64_t y)
{
    const char *op = c->op;
    bool fl = is_float_dt(dt), u64 = dt == BD_DT_UINT64;
    int64_t xo = ordered(dt, x), yo = ordered(dt, y);      /* integers compare in these */
    if (!strcmp(op, "Equal"))          { out->i[j] = fl ? a == b : x == y;   return; }
    if (!strcmp(op, "Less"))           { out->i[j] = fl ? a < b : xo < yo;   return; }
    if (!strcmp(op, "Greater"))        { out->i[j] = fl ? a > b : xo > yo;   return; }
    if (!strcmp(op, "LessOrEqual"))    { out->i[j] = fl ? a <= b : xo <= yo; return; }
    if (!strcmp(op, "GreaterOrEqual")) { out->i[j] = fl ? a >= b : xo >= yo; return; }
    if (!strcmp(op, "And"))            { out->i[j] = (x != 0) && (y != 0); return; }
    if (!strcmp(op, "Or"))             { out->i[j] = (x != 0) || (y != 0); return; }
    if (!strcmp(op, "Xor"))            { out->i[j] = (x != 0) != (y != 0); return; }
    if (!strcmp(op, "BitShift")) {     /* unsigned; a shift by the width or more gives 0 */
        bool right = !strcmp(attr_s(c, "direction", ""), "RIGHT");
        uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
        out->i[j] = uy >= 64 ? 0 : (int64_t)(right ? ux >> uy : ux << uy);
        return;
    }
    if (!strcmp(op, "Pow")) {          /* any pair of dtypes: in double, output of the base's */
        double v = pow(a, b);
        put(out, j, v, pow_to_int(v));
        return;
    }
    bool c_mod = attr_i(c, "fmod", 0);
    if (fl) {
        out->f[j] = !strcmp(op, "Add") ? a + b : !strcmp(op, "Sub") ? a - b
                  : !strcmp(op, "Mul") ? a * b : !strcmp(op, "Div") ? a / b
                  : !strcmp(op, "Mod") ? (c_mod ? fmod(a, b) : pymod_f(a, b))
                  : isnan(a) || isnan(b) ? NAN                 /* Max, Min propagate NaN */
                  : !strcmp(op, "Max") ? (a > b ? a : b) : (a < b ? a : b);
        return;
    }
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;         /* wraps, then to the dtype */
    if (u64 && uy && (!strcmp(op, "Div") || !strcmp(op, "Mod"))) {
        out->i[j] = (int64_t)(!strcmp(op, "Div") ? ux / uy : ux % uy);
        return;
    }
    out->i[j] = !strcmp(op, "Add") ? (int64_t)(ux + uy) : !strcmp(op, "Sub") ? (int64_t)(ux - uy)
              : !strcmp(op, "Mul") ? (int64_t)(ux * uy) : !strcmp(op, "Div") ? div_i(x, y)
              : !strcmp(op, "Mod") ? mod_i(x, y, c_mod)
              : !strcmp(op, "Max") ? (xo > yo ? x : y) : (xo < yo ? x : y);
}

/* Binary ops with numpy broadcasting: arithmetic, Mod (fmod 0/1), Pow, comparisons, logic,
 * BitShift. Floats compute in double, integers in int64. */
void ref_binary(const op_case *c, const tensor *in, tensor *out)
{
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        size_t ka = bcast(&in[0], idx, out->rank), kb = bcast(&in[1], idx, out->rank);
        binary_el(c, in[0].dtype, out, j, in[0].f[ka], in[1].f[kb], in[0].i[ka], in[1].i[kb]);
    }
}

/* Sum, Mean, Max, Min of any number of inputs, broadcast together. */
static void ref_variadic(const op_case *c, const tensor *in, tensor *out)
{
    bool mean = op_is(c, "Mean");
    const char *fold = op_is(c, "Max") ? "Max" : op_is(c, "Min") ? "Min" : "Add";
    op_case as_binary = *c;
    as_binary.op = fold;
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        size_t k0 = bcast(&in[0], idx, out->rank);
        double a = in[0].f[k0];
        int64_t x = in[0].i[k0];
        for (int k = 1; k < c->n_in; k++) {
            size_t kk = bcast(&in[k], idx, out->rank);
            binary_el(&as_binary, in[0].dtype, out, j, a, in[k].f[kk], x, in[k].i[kk]);
            a = out->f[j];
            x = out->i[j];
        }
        put(out, j, mean ? a / c->n_in : a, x);
    }
}

/* Where(cond, x, y), broadcast together; values of any dtype. */
static void ref_where(const op_case *c, const tensor *in, tensor *out)
{
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        const tensor *pick = in[0].i[bcast(&in[0], idx, out->rank)] ? &in[1] : &in[2];
        copy_el(out, j, pick, bcast(pick, idx, out->rank));
    }
}

/* ---- the cases ------------------------------------------------------------------------------- */

/* A unary op on a fed input of dtype DT in [LO, HI], shape [3, 7]; SKIP an engine note. */
#define UNARY(nm, op_, dt, lo_, hi_, ...) \
    { nm, op_, NULL, 1, { FEDR(dt, lo_, hi_, 3, 7) }, NO_ATTR, OUTT(dt, 3, 7), ref_unary, \
      __VA_ARGS__ }
/* ... on NaN and a few numbers in every op's domain (NM the case's name); a note may follow. */
#define UNARY_NAN(nm, op_, ...) \
    { nm, op_, NULL, 1, { FEDF(F32, VF(NAN, -0.5f, 0.5f, 0.25f, -NAN), 5) }, NO_ATTR, \
      OUTT(F32, 5), ref_unary, __VA_ARGS__ }
/* ... with no ORT kernel for DOUBLE. */
#define UNARY_F64(nm, op_, lo_, hi_) \
    UNARY(nm, op_, F64, lo_, hi_, .skip = ORT_NO_KERNEL(op_ " on DOUBLE"))

/* Binary OP of inputs IN0 and IN1 -> an output of dtype DY and the dims that follow. */
#define BIN(nm, op_, in0, in1, dy, ...) \
    { nm, op_, NULL, 2, { in0, in1 }, NO_ATTR, OUTT(dy, __VA_ARGS__), ref_binary }

/* Why ORT is skipped on the integer divisions that trap. */
#define ORT_SIGFPE { "ort", "ORT's integer Div/Mod kernels do not check the divisor: a zero " \
                     "(or INT_MIN / -1) raises SIGFPE and kills the process" }
#define ORT_MISH { "ort", "Mish is an opset-18 op; the harness builds opset-17 graphs, which ORT " \
                   "checks against the opset (the native engine runs Mish at any opset)" }
#define ORT_SUM_INTS { "ort", "ONNX defines Sum on floats only; ORT rejects the model (the native " \
                       "engine sums any numeric dtype)" }
/* KNOWN FAILURES with NaN. ONNX's reference implementation computes these ops with numpy,
 * whose maximum/minimum/clip propagate a NaN (ORT and the native engine agree); oneDNN's
 * kernels drop it: Relu gives 0, HardSigmoid an arbitrary number (801594368, 1.8e25 from run
 * to run), Exp inf, Clip the lower bound (docs/partitioning.md, "NaN"). */
#define KNOWN_DNNL_RELU_NAN { "dnnl", "oneDNN's Relu(NaN) gives 0; ONNX's reference and ORT give NaN" }
#define KNOWN_DNNL_HARDSIGMOID_NAN { "dnnl", "oneDNN's HardSigmoid(NaN) gives an arbitrary number; " \
                                     "ONNX's reference and ORT give NaN" }
#define KNOWN_DNNL_EXP_NAN { "dnnl", "oneDNN's Exp(NaN) gives inf" }
#define KNOWN_DNNL_CLIP_NAN { "dnnl", "oneDNN's Clip(NaN) gives the lower bound, not NaN" }
/* KNOWN FAILURE (oneDNN, not a native kernel): its binary max/min return the other operand
 * where one is NaN (x86 maxps); numpy's maximum, ONNX's reference, ORT and the native engine
 * propagate the NaN. Remove once the oneDNN engine declines or fixes NaN-sensitive Max/Min. */
#define DNNL_NAN { "dnnl", "oneDNN's binary max/min drop a NaN operand instead of propagating it" }
#define ORT_CAST_UB { "ort", "ONNX leaves NaN and out-of-range float->int casts undefined; " \
                      "ORT's static_cast gives INT_MIN, braid saturates and maps NaN to 0" }

static const op_case k_cases[] = {
    /* unary math on FLOAT that the float table lacks */
    UNARY("sign_f32", "Sign", F32, -2, 2),
    UNARY("ceil_f32", "Ceil", F32, -4, 4),
    UNARY("cos_f32", "Cos", F32, -4, 4),
    UNARY("tan_f32", "Tan", F32, -1.2f, 1.2f),
    UNARY("asin_f32", "Asin", F32, -0.95f, 0.95f),
    UNARY("acos_f32", "Acos", F32, -0.95f, 0.95f),
    UNARY("atan_f32", "Atan", F32, -4, 4),
    UNARY("sinh_f32", "Sinh", F32, -3, 3),
    UNARY("cosh_f32", "Cosh", F32, -3, 3),
    UNARY("asinh_f32", "Asinh", F32, -4, 4),
    UNARY("acosh_f32", "Acosh", F32, 1.05f, 4),
    UNARY("atanh_f32", "Atanh", F32, -0.9f, 0.9f),
    UNARY("softsign_f32", "Softsign", F32, -4, 4),
    UNARY("mish_f32", "Mish", F32, -5, 5, .skip = ORT_MISH),
    UNARY("selu_f32", "Selu", F32, -3, 3),
    UNARY("celu_f32", "Celu", F32, -3, 3),
    UNARY("thresholdedrelu_f32", "ThresholdedRelu", F32, -3, 3),
    { "round_f32_halves", "Round", NULL, 1,
      { FEDF(F32, VF(0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.49f, 2.51f, -7.2f, 1e6f + 0.5f), 10) },
      NO_ATTR, OUTT(F32, 10), ref_unary },
    { "selu_f32_attrs", "Selu", NULL, 1, { FEDR(F32, -3, 3, 2, 9) },
      { AF("alpha", 2.0f), AF("gamma", 0.5f) }, OUTT(F32, 2, 9), ref_unary },
    { "celu_f32_alpha", "Celu", NULL, 1, { FEDR(F32, -3, 3, 2, 9) }, { AF("alpha", 0.5f) },
      OUTT(F32, 2, 9), ref_unary },
    { "thresholdedrelu_f32_alpha", "ThresholdedRelu", NULL, 1, { FEDR(F32, -3, 3, 2, 9) },
      { AF("alpha", 0.25f) }, OUTT(F32, 2, 9), ref_unary },
    /* unary math on DOUBLE: every op the native engine has */
    UNARY("abs_f64", "Abs", F64, -3, 3),
    UNARY("neg_f64", "Neg", F64, -3, 3),
    UNARY("sign_f64", "Sign", F64, -3, 3),
    UNARY("exp_f64", "Exp", F64, -5, 5),
    UNARY("log_f64", "Log", F64, 0.01f, 10),
    UNARY("sqrt_f64", "Sqrt", F64, 0, 10),
    UNARY("reciprocal_f64", "Reciprocal", F64, 0.5f, 4),
    UNARY("floor_f64", "Floor", F64, -4, 4),
    UNARY("ceil_f64", "Ceil", F64, -4, 4),
    UNARY("round_f64", "Round", F64, -4, 4),
    UNARY("sin_f64", "Sin", F64, -4, 4),
    UNARY("cos_f64", "Cos", F64, -4, 4),
    UNARY_F64("tan_f64", "Tan", -1.2f, 1.2f),
    UNARY_F64("asin_f64", "Asin", -0.95f, 0.95f),
    UNARY_F64("acos_f64", "Acos", -0.95f, 0.95f),
    UNARY_F64("atan_f64", "Atan", -4, 4),
    UNARY_F64("sinh_f64", "Sinh", -3, 3),
    UNARY_F64("cosh_f64", "Cosh", -3, 3),
    UNARY_F64("asinh_f64", "Asinh", -4, 4),
    UNARY_F64("acosh_f64", "Acosh", 1.05f, 4),
    UNARY_F64("atanh_f64", "Atanh", -0.9f, 0.9f),
    UNARY_F64("erf_f64", "Erf", -3, 3),
    UNARY("relu_f64", "Relu", F64, -3, 3),
    UNARY("sigmoid_f64", "Sigmoid", F64, -6, 6),
    UNARY("tanh_f64", "Tanh", F64, -3, 3),
    UNARY_F64("softplus_f64", "Softplus", -25, 25),
    UNARY_F64("softsign_f64", "Softsign", -4, 4),
    UNARY_F64("hardsigmoid_f64", "HardSigmoid", -5, 5),
    UNARY_F64("hardswish_f64", "HardSwish", -5, 5),
    UNARY_F64("elu_f64", "Elu", -3, 3),
    UNARY_F64("selu_f64", "Selu", -3, 3),
    UNARY("celu_f64", "Celu", F64, -3, 3,
          .skip = { "ort", "ONNX defines Celu on FLOAT only; ORT rejects the model" }),
    UNARY("leakyrelu_f64", "LeakyRelu", F64, -3, 3),
    UNARY_F64("thresholdedrelu_f64", "ThresholdedRelu", -3, 3),
    UNARY("mish_f64", "Mish", F64, -25, 25, .skip = ORT_MISH),
    /* NaN through every float unary op */
    UNARY_NAN("relu_f32_nan", "Relu", .known = KNOWN_DNNL_RELU_NAN),
    UNARY_NAN("celu_f32_nan", "Celu"),
    UNARY_NAN("hardsigmoid_f32_nan", "HardSigmoid", .known = KNOWN_DNNL_HARDSIGMOID_NAN),
    UNARY_NAN("exp_f32_nan", "Exp", .known = KNOWN_DNNL_EXP_NAN),
    UNARY_NAN("mish_f32_nan", "Mish", .skip = ORT_MISH),
    UNARY_NAN("leakyrelu_f32_nan", "LeakyRelu"), UNARY_NAN("elu_f32_nan", "Elu"),
    UNARY_NAN("selu_f32_nan", "Selu"), UNARY_NAN("hardswish_f32_nan", "HardSwish"),
    UNARY_NAN("thresholdedrelu_f32_nan", "ThresholdedRelu"),
    UNARY_NAN("softplus_f32_nan", "Softplus"), UNARY_NAN("softsign_f32_nan", "Softsign"),
    UNARY_NAN("sigmoid_f32_nan", "Sigmoid"), UNARY_NAN("tanh_f32_nan", "Tanh"),
    UNARY_NAN("sign_f32_nan", "Sign"), UNARY_NAN("abs_f32_nan", "Abs"),
    UNARY_NAN("neg_f32_nan", "Neg"), UNARY_NAN("floor_f32_nan", "Floor"),
    UNARY_NAN("ceil_f32_nan", "Ceil"), UNARY_NAN("round_f32_nan", "Round"),
    UNARY_NAN("log_f32_nan", "Log"), UNARY_NAN("sqrt_f32_nan", "Sqrt"),
    UNARY_NAN("reciprocal_f32_nan", "Reciprocal"), UNARY_NAN("erf_f32_nan", "Erf"),
    UNARY_NAN("sin_f32_nan", "Sin"), UNARY_NAN("cos_f32_nan", "Cos"),
    UNARY_NAN("tan_f32_nan", "Tan"), UNARY_NAN("asin_f32_nan", "Asin"),
    UNARY_NAN("acos_f32_nan", "Acos"), UNARY_NAN("atan_f32_nan", "Atan"),
    UNARY_NAN("sinh_f32_nan", "Sinh"), UNARY_NAN("cosh_f32_nan", "Cosh"),
    UNARY_NAN("asinh_f32_nan", "Asinh"), UNARY_NAN("acosh_f32_nan", "Acosh"),
    UNARY_NAN("atanh_f32_nan", "Atanh"),
    { "clip_f32_nan", "Clip", NULL, 3, { FEDF(F32, VF(NAN, -3, 0.1f, 3), 4), CSTSF(F32, -1), CSTSF(F32, 1) },
      NO_ATTR, OUTT(F32, 4), ref_clip,
      .known = KNOWN_DNNL_CLIP_NAN },
    /* integer Abs, Neg, Sign, Relu (INT_MIN wraps) */
    { "abs_i32_min", "Abs", NULL, 1, { FEDV(INT32, V(INT32_MIN, -7, 0, 7, INT32_MAX, -1), 6) },
      NO_ATTR, OUTT(INT32, 6), ref_unary },
    { "abs_i64_min", "Abs", NULL, 1, { FEDV(INT64, V(INT64_MIN, -7, 0, 7, INT64_MAX, -1), 6) },
      NO_ATTR, OUTT(INT64, 6), ref_unary },
    UNARY("abs_i8", "Abs", INT8, -128, 127),
    UNARY("abs_i16", "Abs", INT16, -32768, 32767),
    UNARY("abs_u8", "Abs", UINT8, 0, 255),
    { "neg_i8_min", "Neg", NULL, 1, { FEDV(INT8, V(-128, -7, 0, 7, 127, -1), 6) }, NO_ATTR,
      OUTT(INT8, 6), ref_unary },
    UNARY("neg_i32", "Neg", INT32, -1000, 1000),
    UNARY("neg_i64", "Neg", INT64, -1000, 1000),
    UNARY("sign_i32", "Sign", INT32, -3, 3),
    UNARY("sign_i64", "Sign", INT64, -3, 3),
    UNARY("sign_i8", "Sign", INT8, -3, 3),
    UNARY("sign_u8", "Sign", UINT8, 0, 3),
    UNARY("relu_i32", "Relu", INT32, -50, 50),
    UNARY("relu_i8", "Relu", INT8, -50, 50),
    UNARY("relu_i64", "Relu", INT64, -50, 50, .skip = ORT_NO_KERNEL("Relu on INT64")),
    { "abs_u64_big", "Abs", NULL, 1, { FEDV(UINT64, V(INT64_MIN, -1, 0, 7), 4) }, NO_ATTR,
      OUTT(UINT64, 4), ref_unary, .skip = ORT_NO_KERNEL("Abs on UINT64") },
    /* 2^63 and up are positive, though they read as negative int64 */
    { "sign_u64_big", "Sign", NULL, 1, { FEDV(UINT64, V(INT64_MIN, -1, 0, 7), 4) }, NO_ATTR,
      OUTT(UINT64, 4), ref_unary },
    /* Not, IsNaN, IsInf */
    { "not_bool", "Not", NULL, 1, { FED(BOOL, 3, 5) }, NO_ATTR, OUTT(BOOL, 3, 5), ref_pred },
    { "isnan_f32", "IsNaN", NULL, 1,
      { FEDF(F32, VF(NAN, 1, -INFINITY, 0, -NAN, INFINITY, 3.5f, -0.0f), 2, 4) }, NO_ATTR,
      OUTT(BOOL, 2, 4), ref_pred },
    { "isnan_f64", "IsNaN", NULL, 1, { FEDF(F64, VF(NAN, 1, -INFINITY, 0, -NAN, INFINITY), 6) },
      NO_ATTR, OUTT(BOOL, 6), ref_pred },
    { "isinf_f32", "IsInf", NULL, 1,
      { FEDF(F32, VF(NAN, 1, -INFINITY, 0, INFINITY, 3.5f, -1e38f, 1e38f), 8) }, NO_ATTR,
      OUTT(BOOL, 8), ref_pred },
    { "isinf_f32_pos_only", "IsInf", NULL, 1,
      { FEDF(F32, VF(NAN, 1, -INFINITY, 0, INFINITY, 3.5f), 6) }, { AI("detect_negative", 0) },
      OUTT(BOOL, 6), ref_pred },
    { "isinf_f64_neg_only", "IsInf", NULL, 1,
      { FEDF(F64, VF(NAN, 1, -INFINITY, 0, INFINITY, 3.5f), 6) }, { AI("detect_positive", 0) },
      OUTT(BOOL, 6), ref_pred },
    /* Clip of every numeric family, with bounds omitted */
    { "clip_i32", "Clip", NULL, 3, { FEDR(INT32, -50, 50, 3, 8), CSTS(INT32, -10), CSTS(INT32, 20) },
      NO_ATTR, OUTT(INT32, 3, 8), ref_clip },
    { "clip_i64_max_only", "Clip", NULL, 3, { FEDR(INT64, -50, 50, 3, 8), OMIT, CSTS(INT64, 7) },
      NO_ATTR, OUTT(INT64, 3, 8), ref_clip },
    { "clip_u8_min_only", "Clip", NULL, 2, { FEDR(UINT8, 0, 255, 3, 8), CSTS(UINT8, 100) }, NO_ATTR,
      OUTT(UINT8, 3, 8), ref_clip },
    { "clip_i8_fed_bounds", "Clip", NULL, 3, { FEDR(INT8, -128, 127, 3, 8), FEDS(INT8, -100),
      FEDS(INT8, 90) }, NO_ATTR, OUTT(INT8, 3, 8), ref_clip },
    { "clip_i16", "Clip", NULL, 3, { FEDR(INT16, -500, 500, 4, 5), CSTS(INT16, -200), CSTS(INT16, 300) },
      NO_ATTR, OUTT(INT16, 4, 5), ref_clip, .skip = ORT_NO_KERNEL("Clip on INT16") },
    { "clip_u64_big", "Clip", NULL, 3,
      { FEDV(UINT64, V(INT64_MIN, -1, 5, 1LL << 62, 0, 100), 6), CSTS(UINT64, 10),
        CSTS(UINT64, INT64_MIN) }, NO_ATTR, OUTT(UINT64, 6), ref_clip },
    { "clip_f64", "Clip", NULL, 3, { FEDR(F64, -2, 2, 4, 5), CSTSF(F64, -0.5f), CSTSF(F64, 1.25f) },
      NO_ATTR, OUTT(F64, 4, 5), ref_clip },
    { "clip_f32_no_bounds", "Clip", NULL, 1, { FEDR(F32, -2, 2, 4, 5) }, NO_ATTR, OUTT(F32, 4, 5),
      ref_clip },
    /* Shrink */
    { "shrink_f32", "Shrink", NULL, 1, { FEDR(F32, -2, 2, 3, 7) }, NO_ATTR, OUTT(F32, 3, 7),
      ref_shrink },
    { "shrink_f64_attrs", "Shrink", NULL, 1, { FEDR(F64, -3, 3, 3, 7) },
      { AF("lambd", 1), AF("bias", 0.5f) }, OUTT(F64, 3, 7), ref_shrink },
    { "shrink_i32", "Shrink", NULL, 1, { FEDR(INT32, -6, 6, 3, 7) }, { AF("lambd", 2), AF("bias", 1) },
      OUTT(INT32, 3, 7), ref_shrink },
    { "shrink_i8", "Shrink", NULL, 1, { FEDR(INT8, -128, 127, 3, 7) },
      { AF("lambd", 10), AF("bias", 3) }, OUTT(INT8, 3, 7), ref_shrink },
    /* Cast: float -> int truncates; braid saturates and maps NaN to 0 (ONNX: undefined) */
    { "cast_f32_i32", "Cast", NULL, 1,
      { FEDF(F32, VF(-2.7f, -0.5f, 0, 0.5f, 1.9f, 100.99f, -100.99f, 3), 8) }, { AI("to", INT32) },
      OUTT(INT32, 8), ref_cast },
    { "cast_f32_i8_saturate", "Cast", NULL, 1,
      { FEDF(F32, VF(300, -300, 127.9f, -128.9f, 1e10f, -1e10f, 5.5f, -5.5f), 8) },
      { AI("to", INT8) }, OUTT(INT8, 8), ref_cast, .skip = ORT_CAST_UB },
    { "cast_f32_u8_saturate", "Cast", NULL, 1,
      { FEDF(F32, VF(300, -3, 255.5f, 0.9f, -0.9f, 1e10f), 6) }, { AI("to", UINT8) }, OUTT(UINT8, 6),
      ref_cast, .skip = ORT_CAST_UB },
    { "cast_f32_i64_nan_inf", "Cast", NULL, 1,
      { FEDF(F32, VF(NAN, -NAN, INFINITY, -INFINITY, 1.5f, -1e19f, 1e19f, -3), 8) },
      { AI("to", INT64) }, OUTT(INT64, 8), ref_cast, .skip = ORT_CAST_UB },
    { "cast_f32_i32_nan", "Cast", NULL, 1, { FEDF(F32, VF(NAN, 3e9f, -3e9f, 2.5f), 4) },
      { AI("to", INT32) }, OUTT(INT32, 4), ref_cast, .skip = ORT_CAST_UB },
    { "cast_f64_i16", "Cast", NULL, 1, { FEDR(F64, -1000, 1000, 3, 7) }, { AI("to", INT16) },
      OUTT(INT16, 3, 7), ref_cast },
    { "cast_f32_bool", "Cast", NULL, 1,
      { FEDF(F32, VF(0, -0.0f, 1.5f, NAN, -2, 1e-30f, INFINITY, 0), 8) }, { AI("to", BOOL) },
      OUTT(BOOL, 8), ref_cast },
    { "cast_i64_bool", "Cast", NULL, 1, { FEDV(INT64, V(0, 1, -1, INT64_MIN, 1LL << 40), 5) },
      { AI("to", BOOL) }, OUTT(BOOL, 5), ref_cast },
    { "cast_f64_u8_saturate", "Cast", NULL, 1, { FEDF(F64, VF(-1, 255.9f, 256, 1e10f, 7.7f), 5) },
      { AI("to", UINT8) }, OUTT(UINT8, 5), ref_cast, .skip = ORT_CAST_UB },
    { "cast_bool_f32", "Cast", NULL, 1, { FED(BOOL, 3, 5) }, { AI("to", F32) }, OUTT(F32, 3, 5),
      ref_cast },
    { "cast_bool_i32", "Cast", NULL, 1, { FED(BOOL, 3, 5) }, { AI("to", INT32) }, OUTT(INT32, 3, 5),
      ref_cast },
    { "cast_i32_bool", "Cast", NULL, 1, { FEDR(INT32, -2, 2, 3, 5) }, { AI("to", BOOL) },
      OUTT(BOOL, 3, 5), ref_cast },
    { "cast_i64_f32", "Cast", NULL, 1,
      { FEDV(INT64, V(0, -1, 16777217, -16777219, 1LL << 40, INT64_MIN, INT64_MAX, 12345), 8) },
      { AI("to", F32) }, OUTT(F32, 8), ref_cast, 1e-7 },
    { "cast_i64_i32_wrap", "Cast", NULL, 1,
      { FEDV(INT64, V(0, -1, 2147483648LL + 5, -2147483648LL - 7, 1LL << 40, 123), 6) },
      { AI("to", INT32) }, OUTT(INT32, 6), ref_cast },
    { "cast_i32_i64", "Cast", NULL, 1, { FEDR(INT32, -100000, 100000, 3, 5) }, { AI("to", INT64) },
      OUTT(INT64, 3, 5), ref_cast },
    { "cast_u8_i8_wrap", "Cast", NULL, 1, { FEDV(UINT8, V(0, 127, 128, 200, 255, 1), 6) },
      { AI("to", INT8) }, OUTT(INT8, 6), ref_cast },
    { "cast_i8_u8_wrap", "Cast", NULL, 1, { FEDV(INT8, V(0, -1, -128, 127, 5, -5), 6) },
      { AI("to", UINT8) }, OUTT(UINT8, 6), ref_cast },
    { "cast_i16_i8_wrap", "Cast", NULL, 1, { FEDR(INT16, -1000, 1000, 3, 5) }, { AI("to", INT8) },
      OUTT(INT8, 3, 5), ref_cast },
    { "cast_i8_i64", "Cast", NULL, 1, { FEDR(INT8, -128, 127, 3, 5) }, { AI("to", INT64) },
      OUTT(INT64, 3, 5), ref_cast },
    { "cast_u8_f32", "Cast", NULL, 1, { FEDR(UINT8, 0, 255, 3, 5) }, { AI("to", F32) },
      OUTT(F32, 3, 5), ref_cast },
    { "cast_i64_f64", "Cast", NULL, 1, { FEDV(INT64, V(0, -1, 1LL << 53, -(1LL << 52) - 1, 77), 5) },
      { AI("to", F64) }, OUTT(F64, 5), ref_cast, 1e-12 },
    { "cast_u64_f64_big", "Cast", NULL, 1, { FEDV(UINT64, V(INT64_MIN, -1, 0, 12345, (1LL << 53) + 1), 5) },
      { AI("to", F64) }, OUTT(F64, 5), ref_cast, 1e-15 },
    { "cast_u64_i8_wrap", "Cast", NULL, 1, { FEDV(UINT64, V(INT64_MIN, -1, 255, 128, 1000), 5) },
      { AI("to", INT8) }, OUTT(INT8, 5), ref_cast },
    { "cast_f32_u64_saturate", "Cast", NULL, 1,
      { FEDF(F32, VF(-1, 1e19f, 3.5f, 1.8e19f, 2e19f, NAN, 9.3e18f), 7) }, { AI("to", UINT64) },
      OUTT(UINT64, 7), ref_cast, .skip = ORT_CAST_UB },
    { "cast_f64_f32", "Cast", NULL, 1, { FEDR(F64, -1000, 1000, 3, 5) }, { AI("to", F32) },
      OUTT(F32, 3, 5), ref_cast, 1e-7 },
    { "cast_f32_f64", "Cast", NULL, 1, { FEDR(F32, -1000, 1000, 3, 5) }, { AI("to", F64) },
      OUTT(F64, 3, 5), ref_cast, 1e-12 },
    /* FLOAT16: round to nearest even, overflow to inf, subnormals, NaN */
    { "cast_f32_f16", "Cast", NULL, 1,
      { FEDF(F32, VF(0.1f, -1.0009765625f, 65504, 70000, -70000, 1e-6f, 6e-8f, 2e-8f,
                     NAN, 1.00048828125f, 1.00146484375f, -0.0f), 12) },
      { AI("to", F16) }, OUTT(F16, 12), ref_cast, 1e-9 },
    { "cast_f32_f16_random", "Cast", NULL, 1, { FEDR(F32, -100, 100, 4, 9) }, { AI("to", F16) },
      OUTT(F16, 4, 9), ref_cast, 1e-9 },
    { "cast_f16_f32", "Cast", NULL, 1, { FEDR(F16, -100, 100, 4, 9) }, { AI("to", F32) },
      OUTT(F32, 4, 9), ref_cast, 1e-9 },
    { "cast_f16_f32_special", "Cast", NULL, 1,
      { FEDF(F16, VF(INFINITY, -INFINITY, NAN, 6e-8f, -0.0f, 65504), 6) }, { AI("to", F32) },
      OUTT(F32, 6), ref_cast, 1e-9 },
    { "cast_f16_i32", "Cast", NULL, 1, { FEDR(F16, -100, 100, 4, 9) }, { AI("to", INT32) },
      OUTT(INT32, 4, 9), ref_cast },
    { "cast_f16_f64", "Cast", NULL, 1, { FEDR(F16, -100, 100, 4, 9) }, { AI("to", F64) },
      OUTT(F64, 4, 9), ref_cast, 1e-12 },
    { "cast_f64_f16", "Cast", NULL, 1, { FEDR(F64, -100, 100, 4, 9) }, { AI("to", F16) },
      OUTT(F16, 4, 9), ref_cast, 1e-9 },
    { "cast_i32_f16", "Cast", NULL, 1,
      { FEDV(INT32, V(0, 1, -2049, 2049, 4097, 65504, 65520, -70000, 123), 9) }, { AI("to", F16) },
      OUTT(F16, 9), ref_cast, 1e-9 },
    { "cast_bool_f16", "Cast", NULL, 1, { FED(BOOL, 3, 4) }, { AI("to", F16) }, OUTT(F16, 3, 4),
      ref_cast, 1e-9 },
    { "cast_f16_bool", "Cast", NULL, 1, { FEDF(F16, VF(0, -0.0f, NAN, 6e-8f, -1, 0), 6) },
      { AI("to", BOOL) }, OUTT(BOOL, 6), ref_cast },
    /* BFLOAT16: round to nearest even */
    { "cast_f32_bf16", "Cast", NULL, 1,
      { FEDF(F32, VF(1.00390625f, 1.01171875f, 3e38f, -1e-40f, NAN, 65504, 0.1f, -7), 8) },
      { AI("to", BF16) }, OUTT(BF16, 8), ref_cast, 1e-9 },
    { "cast_bf16_f32", "Cast", NULL, 1, { FEDR(BF16, -100, 100, 4, 9) }, { AI("to", F32) },
      OUTT(F32, 4, 9), ref_cast, 1e-9 },
    { "cast_bf16_i64", "Cast", NULL, 1, { FEDR(BF16, -100, 100, 4, 9) }, { AI("to", INT64) },
      OUTT(INT64, 4, 9), ref_cast },
    { "castlike_f32_i64", "CastLike", NULL, 2, { FEDR(F32, -100, 100, 3, 5), CSTV(INT64, V(0), 1) },
      NO_ATTR, OUTT(INT64, 3, 5), ref_cast },
    /* binary arithmetic of every dtype, with broadcasting; integers wrap */
    BIN("add_f64_bcast", "Add", FED(F64, 2, 3, 4), FED(F64, 4), F64, 2, 3, 4),
    BIN("add_i8_wrap", "Add", FEDR(INT8, -120, 120, 3, 5), FEDR(INT8, -120, 120, 3, 5), INT8, 3, 5),
    BIN("add_u8_wrap", "Add", FEDR(UINT8, 0, 255, 2, 8), CSTR(UINT8, 100, 200, 8), UINT8, 2, 8),
    BIN("add_i16_bcast", "Add", FEDR(INT16, -30000, 30000, 4, 3), FEDR(INT16, -30000, 30000, 3),
        INT16, 4, 3),
    BIN("add_i32_bcast_both", "Add", FED(INT32, 2, 1, 4), FED(INT32, 3, 1), INT32, 2, 3, 4),
    BIN("add_i64_const", "Add", FED(INT64, 2, 3), CST(INT64, 1, 3), INT64, 2, 3),
    BIN("sub_i8_wrap", "Sub", FEDR(INT8, -128, 127, 3, 5), FEDR(INT8, -128, 127, 5), INT8, 3, 5),
    BIN("sub_u8_wrap", "Sub", FEDR(UINT8, 0, 50, 3, 5), FEDR(UINT8, 0, 255, 3, 5), UINT8, 3, 5),
    BIN("sub_i32", "Sub", FED(INT32, 3, 5), FED(INT32, 3, 5), INT32, 3, 5),
    BIN("sub_i64_bcast", "Sub", FED(INT64, 3, 1), FED(INT64, 1, 5), INT64, 3, 5),
    BIN("sub_f64", "Sub", FED(F64, 3, 5), FED(F64, 3, 5), F64, 3, 5),
    BIN("mul_i16_wrap", "Mul", FEDR(INT16, -1000, 1000, 3, 5), FEDR(INT16, -1000, 1000, 3, 5), INT16,
        3, 5),
    BIN("mul_i32_bcast", "Mul", FED(INT32, 2, 3, 4), FED(INT32, 3, 1), INT32, 2, 3, 4),
    BIN("mul_i64", "Mul", FEDR(INT64, -100000, 100000, 3, 5), FEDR(INT64, -100000, 100000, 3, 5),
        INT64, 3, 5),
    BIN("mul_u8_wrap", "Mul", FEDR(UINT8, 0, 40, 3, 5), FEDR(UINT8, 0, 40, 5), UINT8, 3, 5),
    BIN("mul_i8_wrap", "Mul", FEDR(INT8, -40, 40, 3, 5), FEDR(INT8, -40, 40, 3, 5), INT8, 3, 5),
    { "add_u16", "Add", NULL, 2, { FEDR(UINT16, 0, 65535, 3, 5), FEDR(UINT16, 0, 65535, 3, 5) },
      NO_ATTR, OUTT(UINT16, 3, 5), ref_binary, .skip = ORT_NO_KERNEL("Add on UINT16") },
    BIN("sub_u32_wrap", "Sub", FEDR(UINT32, 0, 1000, 3, 5), FEDR(UINT32, 0, 2000, 5), UINT32, 3, 5),
    BIN("mul_u64_wrap", "Mul", FEDV(UINT64, V(1LL << 40, 3, 1LL << 62, 7), 4),
        FEDV(UINT64, V(1LL << 30, 5, 4, 9), 4), UINT64, 4),
    BIN("div_u64_big", "Div", FEDV(UINT64, V(INT64_MIN, -1, -1, 100), 4),
        FEDV(UINT64, V(3, 2, INT64_MIN, 7), 4), UINT64, 4),
    { "mod_u64_big", "Mod", NULL, 2, { FEDV(UINT64, V(INT64_MIN, -1, -1, 100), 4),
      FEDV(UINT64, V(3, 1000, INT64_MIN, 7), 4) }, NO_ATTR, OUTT(UINT64, 4), ref_binary },
    BIN("less_u64_big", "Less", FEDV(UINT64, V(INT64_MIN, -1, 5, 0), 4),
        FEDV(UINT64, V(1, INT64_MIN, -2, 0), 4), BOOL, 4),
    BIN("max_u64_big", "Max", FEDV(UINT64, V(INT64_MIN, -1, 5, 0), 4),
        FEDV(UINT64, V(1, INT64_MIN, -2, 0), 4), UINT64, 4),
    BIN("add_i32_bcast_5d", "Add", FED(INT32, 2, 1, 3, 1, 4), FED(INT32, 5, 1, 6, 1), INT32, 2, 5, 3,
        6, 4),
    BIN("div_u32", "Div", FEDR(UINT32, 0, 100000, 3, 5), FEDR(UINT32, 1, 300, 3, 5), UINT32, 3, 5),
    BIN("mul_f64_bcast", "Mul", FED(F64, 3, 1), FED(F64, 4), F64, 3, 4),
    BIN("div_i32_trunc", "Div", FEDR(INT32, -50, 50, 3, 4), CSTV(INT32, V(3, -3, 7, -7), 4), INT32, 3, 4),
    BIN("div_i64_bcast", "Div", FEDR(INT64, -1000, 1000, 2, 3, 4), FEDV(INT64, V(2, -5, 9), 3, 1),
        INT64, 2, 3, 4),
    BIN("div_u8", "Div", FEDR(UINT8, 0, 255, 3, 5), FEDR(UINT8, 1, 20, 3, 5), UINT8, 3, 5),
    BIN("div_i8", "Div", FEDR(INT8, -128, 127, 3, 5), FEDV(INT8, V(1, -1, 3, -4, 127), 5), INT8, 3, 5),
    BIN("div_i16", "Div", FEDR(INT16, -3000, 3000, 3, 5), FEDR(INT16, 1, 30, 3, 5), INT16, 3, 5),
    BIN("div_f64", "Div", FED(F64, 3, 5), FEDR(F64, 0.5f, 2, 3, 5), F64, 3, 5),
    { "div_i32_by_zero", "Div", NULL, 2, { FED(INT32, 2, 3), FEDV(INT32, V(1, 0, 2), 3) }, NO_ATTR,
      OUTT(INT32, 2, 3), NULL, .expect_error = true, .skip = ORT_SIGFPE },
    { "div_i64_by_zero_const", "Div", NULL, 2, { FED(INT64, 2, 3), CSTV(INT64, V(0), 1) }, NO_ATTR,
      OUTT(INT64, 2, 3), NULL, .expect_error = true, .skip = ORT_SIGFPE },
    { "div_u8_by_zero", "Div", NULL, 2, { FED(UINT8, 2, 3), FEDV(UINT8, V(4, 2, 0), 3) }, NO_ATTR,
      OUTT(UINT8, 2, 3), NULL, .expect_error = true, .skip = ORT_SIGFPE },
    { "div_i32_int_min", "Div", NULL, 2,
      { FEDV(INT32, V(INT32_MIN, INT32_MIN, 7, -7, INT32_MIN, INT32_MAX), 6),
        FEDV(INT32, V(-1, 1, -1, -1, 2, -1), 6) }, NO_ATTR, OUTT(INT32, 6), ref_binary,
      .skip = ORT_SIGFPE },
    { "div_i64_int_min", "Div", NULL, 2,
      { FEDV(INT64, V(INT64_MIN, INT64_MIN, 7, -7, INT64_MIN, INT64_MAX), 6),
        FEDV(INT64, V(-1, 1, -1, -1, 2, -1), 6) }, NO_ATTR, OUTT(INT64, 6), ref_binary,
      .skip = ORT_SIGFPE },
    { "div_i8_int_min", "Div", NULL, 2,
      { FEDV(INT8, V(-128, -128, 7, -7), 4), FEDV(INT8, V(-1, 1, -1, -1), 4) }, NO_ATTR, OUTT(INT8, 4),
      ref_binary },
    /* Mod: fmod = 0 takes the divisor's sign (integers only), fmod = 1 the dividend's */
    { "mod_i32", "Mod", NULL, 2, { FEDR(INT32, -50, 50, 3, 4), CSTV(INT32, V(3, -3, 7, -7), 4) },
      NO_ATTR, OUTT(INT32, 3, 4), ref_binary },
    { "mod_i32_fmod", "Mod", NULL, 2, { FEDR(INT32, -50, 50, 3, 4), CSTV(INT32, V(3, -3, 7, -7), 4) },
      { AI("fmod", 1) }, OUTT(INT32, 3, 4), ref_binary },
    { "mod_i64_bcast", "Mod", NULL, 2, { FEDR(INT64, -1000, 1000, 2, 3, 4), FEDV(INT64, V(2, -5, 9), 3, 1) },
      NO_ATTR, OUTT(INT64, 2, 3, 4), ref_binary },
    { "mod_i8_min", "Mod", NULL, 2,
      { FEDV(INT8, V(-128, -128, 7, -7, 100, -100), 6), FEDV(INT8, V(-1, 3, -3, 3, -7, -7), 6) },
      NO_ATTR, OUTT(INT8, 6), ref_binary },
    { "mod_i32_fmod_int_min", "Mod", NULL, 2,
      { FEDV(INT32, V(INT32_MIN, INT32_MIN, 7), 3), FEDV(INT32, V(-1, 3, -1), 3) }, { AI("fmod", 1) },
      OUTT(INT32, 3), ref_binary, .skip = ORT_SIGFPE },
    { "mod_u8", "Mod", NULL, 2, { FEDR(UINT8, 0, 255, 3, 5), FEDR(UINT8, 1, 20, 3, 5) }, NO_ATTR,
      OUTT(UINT8, 3, 5), ref_binary },
    { "mod_i16_fmod", "Mod", NULL, 2, { FEDR(INT16, -3000, 3000, 3, 5), FEDR(INT16, -30, -1, 5) },
      { AI("fmod", 1) }, OUTT(INT16, 3, 5), ref_binary },
    { "mod_f32_fmod", "Mod", NULL, 2, { FEDR(F32, -10, 10, 3, 5), FEDF(F32, VF(2.5f, -1.5f, 3, -0.75f, 4), 5) },
      { AI("fmod", 1) }, OUTT(F32, 3, 5), ref_binary },
    { "mod_f64_fmod_bcast", "Mod", NULL, 2, { FEDR(F64, -10, 10, 3, 5), FEDF(F64, VF(2.5f, -1.5f, 3), 3, 1) },
      { AI("fmod", 1) }, OUTT(F64, 3, 5), ref_binary },
    { "mod_i64_by_zero", "Mod", NULL, 2, { FED(INT64, 2, 3), FEDV(INT64, V(1, 0, 2), 3) }, NO_ATTR,
      OUTT(INT64, 2, 3), NULL, .expect_error = true, .skip = ORT_SIGFPE },
    /* Max, Min of integers and doubles; NaN propagates */
    BIN("max_i32", "Max", FED(INT32, 3, 5), FED(INT32, 3, 5), INT32, 3, 5),
    BIN("min_u8_bcast", "Min", FEDR(UINT8, 0, 255, 3, 5), FEDR(UINT8, 0, 255, 5), UINT8, 3, 5),
    BIN("max_i8", "Max", FEDR(INT8, -128, 127, 3, 5), FEDR(INT8, -128, 127, 3, 5), INT8, 3, 5),
    BIN("min_i64_bcast", "Min", FED(INT64, 3, 1), FED(INT64, 1, 5), INT64, 3, 5),
    BIN("max_f64", "Max", FED(F64, 3, 5), FED(F64, 3, 5), F64, 3, 5),
    { "min_i16", "Min", NULL, 2, { FEDR(INT16, -3000, 3000, 3, 5), FEDR(INT16, -3000, 3000, 3, 5) },
      NO_ATTR, OUTT(INT16, 3, 5), ref_binary, .skip = ORT_NO_KERNEL("Min on INT16") },
    { "max_f32_nan", "Max", NULL, 2, { FEDF(F32, VF(NAN, 1, -2, NAN, 0.5f, -INFINITY), 6),
      FEDF(F32, VF(0, NAN, -3, NAN, 0.25f, 2), 6) }, NO_ATTR, OUTT(F32, 6), ref_binary,
      .known = DNNL_NAN },
    { "min_f32_nan", "Min", NULL, 2, { FEDF(F32, VF(NAN, 1, -2, NAN, 0.5f, -INFINITY), 6),
      FEDF(F32, VF(0, NAN, -3, NAN, 0.25f, 2), 6) }, NO_ATTR, OUTT(F32, 6), ref_binary,
      .known = DNNL_NAN },
    /* Pow: base and exponent of any numeric dtypes, the output of the base's */
    BIN("pow_f32_fed", "Pow", FEDR(F32, 0.1f, 3, 3, 5), FEDR(F32, -2, 3, 3, 5), F32, 3, 5),
    BIN("pow_f32_i64_exp", "Pow", FEDR(F32, -3, 3, 3, 4), CSTV(INT64, V(0, 1, 2, 3), 4), F32, 3, 4),
    BIN("pow_i32", "Pow", FEDR(INT32, -5, 5, 3, 5), FEDR(INT32, 0, 4, 3, 5), INT32, 3, 5),
    BIN("pow_i64_f32_exp", "Pow", FEDR(INT64, 0, 20, 3, 4), CSTF(F32, VF(0.5f, 1, 1.5f, 2), 4), INT64,
        3, 4),
    BIN("pow_f64_bcast", "Pow", FEDR(F64, 0.1f, 3, 3, 5), FEDR(F64, -2, 2, 5), F64, 3, 5),
    BIN("pow_f64_i32_exp", "Pow", FEDR(F64, -3, 3, 3, 4), CSTV(INT32, V(0, 1, 2, 3), 4), F64, 3, 4),
    /* comparisons -> BOOL */
    BIN("equal_i32_bcast", "Equal", FEDR(INT32, 0, 3, 3, 5), FEDR(INT32, 0, 3, 5), BOOL, 3, 5),
    BIN("equal_i64", "Equal", FEDR(INT64, 0, 3, 3, 5), FEDR(INT64, 0, 3, 3, 5), BOOL, 3, 5),
    BIN("equal_f32_nan", "Equal", FEDF(F32, VF(NAN, 1, -0.0f, 2, INFINITY), 5),
        FEDF(F32, VF(NAN, 1, 0, 3, INFINITY), 5), BOOL, 5),
    BIN("equal_bool", "Equal", FED(BOOL, 3, 5), FED(BOOL, 5), BOOL, 3, 5),
    BIN("equal_u8", "Equal", FEDR(UINT8, 0, 3, 3, 5), FEDR(UINT8, 0, 3, 3, 5), BOOL, 3, 5),
    BIN("less_f32", "Less", FED(F32, 3, 5), FED(F32, 3, 5), BOOL, 3, 5),
    BIN("less_i8", "Less", FEDR(INT8, -5, 5, 3, 5), FEDR(INT8, -5, 5, 3, 5), BOOL, 3, 5),
    BIN("less_i64_bcast", "Less", FEDR(INT64, -5, 5, 3, 1), FEDR(INT64, -5, 5, 5), BOOL, 3, 5),
    BIN("greater_u8", "Greater", FEDR(UINT8, 0, 5, 3, 5), FEDR(UINT8, 0, 5, 3, 5), BOOL, 3, 5),
    BIN("greater_f64_bcast", "Greater", FED(F64, 3, 5), FED(F64, 5), BOOL, 3, 5),
    BIN("greater_i32", "Greater", FEDR(INT32, -5, 5, 3, 5), FEDR(INT32, -5, 5, 3, 5), BOOL, 3, 5),
    BIN("less_or_equal_f32", "LessOrEqual", FEDR(F32, -2, 2, 3, 5), CSTR(F32, -2, 2, 5), BOOL, 3, 5),
    BIN("less_or_equal_i16", "LessOrEqual", FEDR(INT16, -3, 3, 3, 5), FEDR(INT16, -3, 3, 3, 5), BOOL, 3, 5),
    BIN("less_or_equal_i64", "LessOrEqual", FEDR(INT64, -3, 3, 3, 5), FEDR(INT64, -3, 3, 3, 5), BOOL, 3, 5),
    BIN("greater_or_equal_i64", "GreaterOrEqual", FEDR(INT64, -3, 3, 3, 5), FEDR(INT64, -3, 3, 1, 5),
        BOOL, 3, 5),
    BIN("greater_or_equal_f64", "GreaterOrEqual", FEDR(F64, -2, 2, 3, 5), FEDR(F64, -2, 2, 3, 5),
        BOOL, 3, 5),
    BIN("greater_or_equal_i32", "GreaterOrEqual", FEDR(INT32, -3, 3, 3, 5), FEDR(INT32, -3, 3, 3, 5),
        BOOL, 3, 5),
    /* logic */
    BIN("and_bool_bcast", "And", FED(BOOL, 2, 3, 4), FED(BOOL, 3, 1), BOOL, 2, 3, 4),
    BIN("or_bool", "Or", FED(BOOL, 3, 5), FED(BOOL, 3, 5), BOOL, 3, 5),
    BIN("xor_bool_bcast", "Xor", FED(BOOL, 3, 1), FED(BOOL, 1, 5), BOOL, 3, 5),
    /* BitShift on unsigned integers */
    { "bitshift_left_u8", "BitShift", NULL, 2, { FEDR(UINT8, 0, 255, 3, 8), FEDR(UINT8, 0, 7, 3, 8) },
      { AS("direction", "LEFT") }, OUTT(UINT8, 3, 8), ref_binary },
    { "bitshift_right_u32", "BitShift", NULL, 2,
      { FEDV(UINT32, V(0xffffffffLL, 1, 0x80000000LL, 12345, 7, 1000), 6), FEDV(UINT32, V(31, 0, 31, 3, 1, 4), 6) },
      { AS("direction", "RIGHT") }, OUTT(UINT32, 6), ref_binary },
    { "bitshift_left_u64_bcast", "BitShift", NULL, 2, { FEDR(UINT64, 0, 1000, 3, 4), CSTV(UINT64, V(0, 1, 40, 63), 4) },
      { AS("direction", "LEFT") }, OUTT(UINT64, 3, 4), ref_binary },
    { "bitshift_right_u16", "BitShift", NULL, 2, { FEDR(UINT16, 0, 65535, 3, 5), FEDR(UINT16, 0, 15, 5) },
      { AS("direction", "RIGHT") }, OUTT(UINT16, 3, 5), ref_binary,
      .skip = ORT_NO_KERNEL("BitShift on UINT16") },
    { "bitshift_left_u8_wide", "BitShift", NULL, 2, { FEDR(UINT8, 1, 255, 4), FEDV(UINT8, V(8, 9, 200, 255), 4) },
      { AS("direction", "LEFT") }, OUTT(UINT8, 4), ref_binary,
      .skip = { "ort", "a shift by the bit width or more is undefined in C++ and ONNX; braid gives "
                "0 as numpy does, ORT's result depends on the CPU's masking of the count" } },
    /* large enough (>= 32768 elements) for the parallel loops, on two threads */
    { "exp_f32_parallel", "Exp", NULL, 1, { FEDR(F32, -4, 4, 200, 200) }, NO_ATTR,
      OUTT(F32, 200, 200), ref_unary, .threads = 2 },
    { "sin_f64_parallel", "Sin", NULL, 1, { FEDR(F64, -4, 4, 40000) }, NO_ATTR, OUTT(F64, 40000),
      ref_unary, .threads = 2 },
    { "add_f32_bcast_parallel", "Add", NULL, 2, { IN(64, 640), IN(640) }, NO_ATTR, OUT(64, 640),
      ref_binary, .threads = 2 },
    { "mul_i32_bcast_parallel", "Mul", NULL, 2, { FED(INT32, 130, 1, 300), FED(INT32, 1, 2, 300) },
      NO_ATTR, OUTT(INT32, 130, 2, 300), ref_binary, .threads = 2 },
    { "where_f32_parallel", "Where", NULL, 3, { FED(BOOL, 200, 1), IN(200, 200), IN(200) }, NO_ATTR,
      OUT(200, 200), ref_where, .threads = 2 },
    /* variadic Sum, Mean, Max, Min (one to three inputs, broadcast together) */
    { "sum3_f32_bcast", "Sum", NULL, 3, { IN(2, 3, 4), IN(4), IN(3, 1) }, NO_ATTR, OUT(2, 3, 4),
      ref_variadic },
    { "sum3_i32", "Sum", NULL, 3, { FED(INT32, 3, 4), FED(INT32, 3, 4), FED(INT32, 1, 4) }, NO_ATTR,
      OUTT(INT32, 3, 4), ref_variadic, .skip = ORT_SUM_INTS },
    { "sum2_i64", "Sum", NULL, 2, { FED(INT64, 3, 4), CST(INT64, 4) }, NO_ATTR, OUTT(INT64, 3, 4),
      ref_variadic, .skip = ORT_SUM_INTS },
    { "sum1_f64", "Sum", NULL, 1, { FED(F64, 3, 4) }, NO_ATTR, OUTT(F64, 3, 4), ref_variadic },
    { "mean3_f64_bcast", "Mean", NULL, 3, { FED(F64, 3, 4), FED(F64, 4), FED(F64, 3, 1) }, NO_ATTR,
      OUTT(F64, 3, 4), ref_variadic, .skip = ORT_NO_KERNEL("Mean on DOUBLE") },
    { "mean2_f32", "Mean", NULL, 2, { IN(3, 4), IN(3, 4) }, NO_ATTR, OUT(3, 4), ref_variadic },
    { "max3_i64_bcast", "Max", NULL, 3, { FED(INT64, 3, 4), FED(INT64, 4), FED(INT64, 3, 1) }, NO_ATTR,
      OUTT(INT64, 3, 4), ref_variadic },
    { "max3_f32", "Max", NULL, 3, { IN(3, 4), IN(3, 4), IN(3, 4) }, NO_ATTR, OUT(3, 4),
      ref_variadic },
    { "min1_f32", "Min", NULL, 1, { IN(3, 4) }, NO_ATTR, OUT(3, 4), ref_variadic },
    { "min3_u8", "Min", NULL, 3, { FEDR(UINT8, 0, 255, 3, 4), FEDR(UINT8, 0, 255, 3, 4), FEDR(UINT8, 0, 255, 4) },
      NO_ATTR, OUTT(UINT8, 3, 4), ref_variadic },
    { "min3_i32_bcast", "Min", NULL, 3, { FED(INT32, 2, 1, 4), FED(INT32, 3, 1), FED(INT32, 1) }, NO_ATTR,
      OUTT(INT32, 2, 3, 4), ref_variadic },
    /* Where: the condition BOOL, values of any dtype */
    { "where_scalars", "Where", NULL, 3, { FEDS(BOOL, 1), FEDSF(F32, 2), IN(3) }, NO_ATTR, OUT(3),
      ref_where },
    { "add_empty_bcast", "Add", NULL, 2, { FED(INT32, 0, 3), FED(INT32, 3) }, NO_ATTR,
      OUTT(INT32, 0, 3), ref_binary },
    { "where_f32_bcast", "Where", NULL, 3, { FED(BOOL, 2, 1, 4), IN(3, 4), IN(1) }, NO_ATTR,
      OUT(2, 3, 4), ref_where },
    { "where_i64", "Where", NULL, 3, { FED(BOOL, 3, 4), FED(INT64, 3, 4), CST(INT64, 4) }, NO_ATTR,
      OUTT(INT64, 3, 4), ref_where },
    { "where_bool", "Where", NULL, 3, { FED(BOOL, 3, 4), FED(BOOL, 3, 4), FED(BOOL, 3, 1) }, NO_ATTR,
      OUTT(BOOL, 3, 4), ref_where, .skip = ORT_NO_KERNEL("Where on BOOL") },
    { "where_u8_bcast", "Where", NULL, 3, { FED(BOOL, 4), FEDR(UINT8, 0, 255, 3, 4), FEDR(UINT8, 0, 255, 3, 1) },
      NO_ATTR, OUTT(UINT8, 3, 4), ref_where },
    { "where_f64", "Where", NULL, 3, { FED(BOOL, 3, 4), FED(F64, 3, 4), FED(F64, 3, 4) }, NO_ATTR,
      OUTT(F64, 3, 4), ref_where },
    { "where_i32_const_cond", "Where", NULL, 3, { CST(BOOL, 3, 4), FED(INT32, 3, 4), FED(INT32, 3, 4) },
      NO_ATTR, OUTT(INT32, 3, 4), ref_where },
    { "where_f16", "Where", NULL, 3, { FED(BOOL, 3, 4), FED(F16, 3, 4), FED(F16, 4) }, NO_ATTR,
      OUTT(F16, 3, 4), ref_where, 1e-9 },
};

const case_table ops_elementwise_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
