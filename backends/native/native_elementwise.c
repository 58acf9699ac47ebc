/* Element-wise kernels: binary arithmetic, comparisons and logic with numpy broadcasting,
 * Where, the variadic Sum/Mean/Max/Min, and Pow and Mod of any numeric dtype. Unary math and
 * Cast live in native_unary.c. Each (op, dtype) pair is a typed row loop chosen at compile,
 * so a run is one indirect call per innermost row of the (collapsed) output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_broadcast.h"
#include "backends/native/native_internal.h"

typedef enum ew_op {
    EW_ADD = 1, EW_SUB, EW_MUL, EW_DIV, EW_MAX, EW_MIN, EW_MOD, EW_FMOD, EW_POW,
    EW_EQ, EW_LT, EW_GT, EW_LE, EW_GE, EW_AND, EW_OR, EW_XOR, EW_SHL, EW_SHR, EW_WHERE,
} ew_op;

typedef struct ew_plan {
    nv_bcast  bc;
    nv_row_fn row;
} ew_plan;

/* What a row function reads: the operands, the output, the plan (for the row's steps). */
typedef struct ew_ctx {
    const void *a, *b, *c;
    void       *y;
    const nv_bcast *bc;
    int         ta, tb, ty;      /* dtypes, for the generic row */
    int         op;
} ew_ctx;

/* ---- typed rows ------------------------------------------------------------------------------ */

/* The innermost steps of operands A and B are 0 (broadcast) or 1: four loops, each simple
 * enough for the compiler to vectorise. */
#define BIN_ROW(name, TA, TY, EXPR)                                                           \
    static void name(const void *vc, const size_t *off, size_t yo, size_t len)              \
    {                                                                                         \
        const ew_ctx *c = vc;                                                                 \
        const TA *pa = (const TA *)c->a + off[0], *pb = (const TA *)c->b + off[1];            \
        TY *y = (TY *)c->y + yo;                                                              \
        int r = c->bc->rank - 1;                                                              \
        bool sa = c->bc->st[0][r] != 0, sb = c->bc->st[1][r] != 0;                            \
        if (sa && sb)                                                                         \
            for (size_t i = 0; i < len; i++) { TA x = pa[i], z = pb[i]; y[i] = (TY)(EXPR); } \
        else if (sb) {                                                                        \
            TA x = pa[0];                                                                     \
            for (size_t i = 0; i < len; i++) { TA z = pb[i]; y[i] = (TY)(EXPR); }            \
        } else if (sa) {                                                                      \
            TA z = pb[0];                                                                     \
            for (size_t i = 0; i < len; i++) { TA x = pa[i]; y[i] = (TY)(EXPR); }            \
        } else {                                                                              \
            TA x = pa[0], z = pb[0];                                                          \
            TY v = (TY)(EXPR);                                                                \
            for (size_t i = 0; i < len; i++) y[i] = v;                                        \
        }                                                                                     \
    }

/* Integer division and remainder that never trap: the divisor was checked for zero before the
 * run, and INT_MIN / -1 (which traps on x86) wraps like the negation it is. */
#define SDIV(T, UT, x, z) ((z) == -1 ? (T)(0 - (UT)(x)) : (T)((x) / (z)))
#define SMOD(T, x, z)     ((z) == -1 ? (T)0 : (T)((x) % (z)))
/* Python's remainder (fmod = 0): the sign of the divisor. */
#define PYMOD(T, x, z)    ((T)(SMOD(T, x, z) != 0 && ((SMOD(T, x, z) < 0) != ((z) < 0)) \
                           ? SMOD(T, x, z) + (z) : SMOD(T, x, z)))

#define MAXV(x, z) ((x) > (z) ? (x) : (z))
#define MINV(x, z) ((x) < (z) ? (x) : (z))

/* Arithmetic for float types (NaN propagates through Max/Min as numpy's maximum does). */
#define FLOAT_ROWS(sfx, T, FMOD)                                                              \
    BIN_ROW(add_##sfx, T, T, x + z)                                                           \
    BIN_ROW(sub_##sfx, T, T, x - z)                                                           \
    BIN_ROW(mul_##sfx, T, T, x * z)                                                           \
    BIN_ROW(div_##sfx, T, T, x / z)                                                           \
    BIN_ROW(max_##sfx, T, T, (x != x || z != z) ? x + z : MAXV(x, z))                        \
    BIN_ROW(min_##sfx, T, T, (x != x || z != z) ? x + z : MINV(x, z))                        \
    BIN_ROW(fmod_##sfx, T, T, FMOD(x, z))                                                     \
    BIN_ROW(mod_##sfx, T, T, (FMOD(x, z) != 0 && ((FMOD(x, z) < 0) != (z < 0))) ? FMOD(x, z) + z \
                                                                                : FMOD(x, z)) \
    BIN_ROW(eq_##sfx, T, uint8_t, x == z)                                                     \
    BIN_ROW(lt_##sfx, T, uint8_t, x < z)                                                      \
    BIN_ROW(gt_##sfx, T, uint8_t, x > z)                                                      \
    BIN_ROW(le_##sfx, T, uint8_t, x <= z)                                                     \
    BIN_ROW(ge_##sfx, T, uint8_t, x >= z)

FLOAT_ROWS(f32, float, fmodf)
FLOAT_ROWS(f64, double, fmod)

/* Signed arithmetic is done in the unsigned type, so overflow wraps instead of being undefined;
 * unsigned arithmetic wraps by itself. */
#define INT_COMMON_ROWS(sfx, T, UT)                                                           \
    BIN_ROW(add_##sfx, T, T, (T)((UT)x + (UT)z))                                              \
    BIN_ROW(sub_##sfx, T, T, (T)((UT)x - (UT)z))                                              \
    BIN_ROW(mul_##sfx, T, T, (T)((UT)x * (UT)z))                                              \
    BIN_ROW(max_##sfx, T, T, MAXV(x, z))                                                      \
    BIN_ROW(min_##sfx, T, T, MINV(x, z))                                                      \
    BIN_ROW(eq_##sfx, T, uint8_t, x == z)                                                     \
    BIN_ROW(lt_##sfx, T, uint8_t, x < z)                                                      \
    BIN_ROW(gt_##sfx, T, uint8_t, x > z)                                                      \
    BIN_ROW(le_##sfx, T, uint8_t, x <= z)                                                     \
    BIN_ROW(ge_##sfx, T, uint8_t, x >= z)
#define SIGNED_ROWS(sfx, T, UT)                                                               \
    INT_COMMON_ROWS(sfx, T, UT)                                                               \
    BIN_ROW(div_##sfx, T, T, SDIV(T, UT, x, z))                                               \
    BIN_ROW(fmod_##sfx, T, T, SMOD(T, x, z))                                                  \
    BIN_ROW(mod_##sfx, T, T, PYMOD(T, x, z))
#define UNSIGNED_ROWS(sfx, T)                                                                 \
    INT_COMMON_ROWS(sfx, T, T)                                                                \
    BIN_ROW(div_##sfx, T, T, x / z)                                                           \
    BIN_ROW(fmod_##sfx, T, T, x % z)                                                          \
    BIN_ROW(mod_##sfx, T, T, x % z)

SIGNED_ROWS(i8, int8_t, uint8_t)
UNSIGNED_ROWS(u8, uint8_t)
SIGNED_ROWS(i16, int16_t, uint16_t)
UNSIGNED_ROWS(u16, uint16_t)
SIGNED_ROWS(i32, int32_t, uint32_t)
UNSIGNED_ROWS(u32, uint32_t)
SIGNED_ROWS(i64, int64_t, uint64_t)
UNSIGNED_ROWS(u64, uint64_t)

BIN_ROW(and_b, uint8_t, uint8_t, (x != 0) & (z != 0))
BIN_ROW(or_b, uint8_t, uint8_t, (x != 0) | (z != 0))
BIN_ROW(xor_b, uint8_t, uint8_t, (x != 0) ^ (z != 0))
BIN_ROW(eq_b, uint8_t, uint8_t, (x != 0) == (z != 0))

/* BitShift on unsigned types; a shift by the width or more gives 0 (C leaves it undefined). */
#define SHIFT_ROWS(sfx, T, BITS)                                                              \
    BIN_ROW(shl_##sfx, T, T, (uint64_t)z >= BITS ? (T)0 : (T)(x << z))                        \
    BIN_ROW(shr_##sfx, T, T, (uint64_t)z >= BITS ? (T)0 : (T)(x >> z))
SHIFT_ROWS(u8, uint8_t, 8)
SHIFT_ROWS(u16, uint16_t, 16)
SHIFT_ROWS(u32, uint32_t, 32)
SHIFT_ROWS(u64, uint64_t, 64)

/* Pow of any pair of numeric dtypes (ONNX lets base and exponent differ), in double. */
static void pow_row(const void *vc, const size_t *off, size_t yo, size_t len)
{
    const ew_ctx *c = vc;
    int r = c->bc->rank - 1;
    size_t sa = (size_t)c->bc->st[0][r], sb = (size_t)c->bc->st[1][r];
    for (size_t i = 0; i < len; i++) {
        double v = pow(nv_get_f(c->a, c->ta, off[0] + i * sa), nv_get_f(c->b, c->tb, off[1] + i * sb));
        if (nv_dtype_is_float(c->ty))
            nv_set_f(c->y, c->ty, yo + i, v);
        else    /* an integer power: exact below 2^53, saturated beyond (never undefined) */
            nv_set_i(c->y, c->ty, yo + i, v != v ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN
                                                                               : (int64_t)v);
    }
}

/* Where(cond, x, y) by element size: the values are moved, never interpreted. */
#define WHERE_ROW(name, T)                                                                    \
    static void name(const void *vc, const size_t *off, size_t yo, size_t len)              \
    {                                                                                         \
        const ew_ctx *c = vc;                                                                 \
        const uint8_t *m = (const uint8_t *)c->a + off[0];                                    \
        const T *px = (const T *)c->b + off[1], *pz = (const T *)c->c + off[2];               \
        T *y = (T *)c->y + yo;                                                                \
        int r = c->bc->rank - 1;                                                              \
        size_t sm = (size_t)c->bc->st[0][r], sx = (size_t)c->bc->st[1][r];                    \
        size_t sz = (size_t)c->bc->st[2][r];                                                  \
        if (sm && sx && sz)                                                                   \
            for (size_t i = 0; i < len; i++) y[i] = m[i] ? px[i] : pz[i];                     \
        else                                                                                  \
            for (size_t i = 0; i < len; i++) y[i] = m[i * sm] ? px[i * sx] : pz[i * sz];      \
    }
WHERE_ROW(where_1, uint8_t)
WHERE_ROW(where_2, uint16_t)
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)

/* ---- the (op, dtype) -> row table ---------------------------------------------------------- */

#define ROWS_OF(sfx) { [EW_ADD] = add_##sfx, [EW_SUB] = sub_##sfx, [EW_MUL] = mul_##sfx,       \
                       [EW_DIV] = div_##sfx, [EW_MAX] = max_##sfx, [EW_MIN] = min_##sfx,       \
                       [EW_MOD] = mod_##sfx, [EW_FMOD] = fmod_##sfx, [EW_EQ] = eq_##sfx,       \
                       [EW_LT] = lt_##sfx, [EW_GT] = gt_##sfx, [EW_LE] = le_##sfx,             \
                       [EW_GE] = ge_##sfx }

static const nv_row_fn k_rows[][EW_WHERE + 1] = {
    [BD_DT_FLOAT] = ROWS_OF(f32),  [BD_DT_DOUBLE] = ROWS_OF(f64),
    [BD_DT_INT8]  = ROWS_OF(i8),   [BD_DT_UINT8]  = ROWS_OF(u8),
    [BD_DT_INT16] = ROWS_OF(i16),  [BD_DT_UINT16] = ROWS_OF(u16),
    [BD_DT_INT32] = ROWS_OF(i32),  [BD_DT_UINT32] = ROWS_OF(u32),
    [BD_DT_INT64] = ROWS_OF(i64),  [BD_DT_UINT64] = ROWS_OF(u64),
    [BD_DT_BOOL]  = { [EW_AND] = and_b, [EW_OR] = or_b, [EW_XOR] = xor_b, [EW_EQ] = eq_b },
};

static nv_row_fn row_for(int op, int dtype)
{
    if (op == EW_SHL || op == EW_SHR) {
        switch (dtype) {
        case BD_DT_UINT8:  return op == EW_SHL ? shl_u8 : shr_u8;
        case BD_DT_UINT16: return op == EW_SHL ? shl_u16 : shr_u16;
        case BD_DT_UINT32: return op == EW_SHL ? shl_u32 : shr_u32;
        case BD_DT_UINT64: return op == EW_SHL ? shl_u64 : shr_u64;
        }
        return NULL;
    }
    if (op == EW_POW)
        return pow_row;
    if (op == EW_WHERE) {
        switch (bd_dtype_size(dtype)) {
        case 1: return where_1;
        case 2: return where_2;
        case 4: return where_4;
        case 8: return where_8;
        }
        return NULL;
    }
    if (dtype <= 0 || (size_t)dtype >= sizeof k_rows / sizeof k_rows[0])
        return NULL;
    return k_rows[dtype][op];
}

/* ---- the ops --------------------------------------------------------------------------------- */

typedef struct ew_name {
    const char *op;
    int         code;
} ew_name;

static const ew_name k_names[] = {
    { "Add", EW_ADD }, { "Sub", EW_SUB }, { "Mul", EW_MUL }, { "Div", EW_DIV },
    { "Max", EW_MAX }, { "Min", EW_MIN }, { "Sum", EW_ADD }, { "Mean", EW_ADD },
    { "Mod", EW_MOD }, { "Pow", EW_POW },
    { "Equal", EW_EQ }, { "Less", EW_LT }, { "Greater", EW_GT }, { "LessOrEqual", EW_LE },
    { "GreaterOrEqual", EW_GE }, { "And", EW_AND }, { "Or", EW_OR }, { "Xor", EW_XOR },
    { "BitShift", EW_SHL }, { "Where", EW_WHERE },
};

static int code_of(const bd_node *n)
{
    for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
        if (!strcmp(k_names[i].op, n->op_type)) {
            int code = k_names[i].code;
            if (code == EW_MOD && bd_node_attr_int(n, "fmod", 0))
                code = EW_FMOD;
            if (code == EW_SHL && !strcmp(bd_node_attr_string(n, "direction", ""), "RIGHT"))
                code = EW_SHR;
            return code;
        }
    return 0;
}

static bool variadic(const bd_node *n)
{
    return !strcmp(n->op_type, "Sum") || !strcmp(n->op_type, "Mean") ||
           ((!strcmp(n->op_type, "Max") || !strcmp(n->op_type, "Min")) && n->n_inputs != 2);
}

static bool ew_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    int code = code_of(n);
    bool where = code == EW_WHERE, pow_ = code == EW_POW;
    size_t want = where ? 3 : 2;
    if (n->n_outputs != 1 || (variadic(n) ? n->n_inputs < 1 : n->n_inputs != want))
        return nv_why(why, len, "%s: unexpected input or output count", n->op_type);
    for (size_t i = 0; i < n->n_inputs; i++)
        if (!n->inputs[i])
            return nv_why(why, len, "%s: an omitted input", n->op_type);
    if (bd_node_attr(n, "broadcast") || bd_node_attr(n, "axis"))
        return nv_why(why, len, "%s: the legacy broadcast attribute (opset < 7)", n->op_type);
    if (!nv_io_ok(n, n->n_inputs, NV_DT_NUMERIC | NV_DT(BD_DT_BOOL) |
                  (where ? NV_DT_ANY : 0), why, len))
        return false;
    int t = n->inputs[where ? 1 : 0]->dtype;
    if (where && n->inputs[0]->dtype != BD_DT_BOOL)
        return nv_why(why, len, "Where: the condition must be BOOL");
    for (size_t i = where ? 1 : 0; !pow_ && i < n->n_inputs; i++)
        if (n->inputs[i]->dtype != t)
            return nv_why(why, len, "%s: inputs of different dtypes", n->op_type);
    if (!pow_ && !row_for(code, t))
        return nv_why(why, len, "%s on %s is not supported by the native engine", n->op_type,
                      bd_dtype_name(t));
    if (pow_ && n->outputs[0]->dtype != t)
        return nv_why(why, len, "Pow: the output dtype must be the base's");
    if (n->inputs[0]->shape.rank > BD_MAX_RANK || n->outputs[0]->shape.rank > BD_MAX_RANK)
        return nv_why(why, len, "rank too large");
    if (variadic(n) && !strcmp(n->op_type, "Mean") && !nv_dtype_is_float(t))
        return nv_why(why, len, "Mean of %s", bd_dtype_name(t));
    return true;
}

/* The operands for integer division: no zero divisor may reach the loop (SIGFPE). */
static int check_divisor(const nv_tensor *b, bd_error *err)
{
    for (size_t i = 0; i < b->numel; i++)
        if (nv_get_i(b->data, b->dtype, i) == 0)
            return bd_error_set(err, BD_EINVAL, "integer division by zero (element %zu of the divisor)", i);
    return 0;
}

static int binary_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    const ew_plan *p = s->heap;
    if ((s->op == EW_DIV || s->op == EW_MOD || s->op == EW_FMOD) && !nv_dtype_is_float(in[1].dtype)) {
        int rc = check_divisor(&in[1], err);
        if (rc)
            return rc;
    }
    ew_ctx c = { .a = in[0].data, .b = in[1].data, .c = s->n_in > 2 ? in[2].data : NULL,
                 .y = out[0].data, .bc = &p->bc, .ta = in[0].dtype, .tb = in[1].dtype,
                 .ty = out[0].dtype, .op = s->op };
    nv_bcast_for(&p->bc, p->row, &c);
    return 0;
}

/* Copy X broadcast into Y (the first operand of a variadic op). */
#define COPY_ROW(name, T)                                                                     \
    static void name(const void *vc, const size_t *off, size_t yo, size_t len)              \
    {                                                                                         \
        const ew_ctx *c = vc;                                                                 \
        const T *x = (const T *)c->a + off[0];                                                \
        T *y = (T *)c->y + yo;                                                                \
        size_t sx = (size_t)c->bc->st[0][c->bc->rank - 1];                                    \
        for (size_t i = 0; i < len; i++) y[i] = x[i * sx];                                    \
    }
COPY_ROW(copy_1, uint8_t)
COPY_ROW(copy_2, uint16_t)
COPY_ROW(copy_4, uint32_t)
COPY_ROW(copy_8, uint64_t)

static nv_row_fn copy_row(size_t size)
{
    return size == 1 ? copy_1 : size == 2 ? copy_2 : size == 4 ? copy_4 : size == 8 ? copy_8 : NULL;
}

/* Variadic: plan 0 copies input 0 into the output, plan k (k >= 1) folds input k into it. */
static int variadic_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                        bd_error *err)
{
    (void)env;
    (void)err;
    const ew_plan *p = s->heap;
    ew_ctx c = { .a = in[0].data, .y = out[0].data, .bc = &p[0].bc };
    nv_bcast_for(&p[0].bc, p[0].row, &c);
    for (int k = 1; k < s->n_in; k++) {
        c = (ew_ctx){ .a = out[0].data, .b = in[k].data, .y = out[0].data, .bc = &p[k].bc };
        nv_bcast_for(&p[k].bc, p[k].row, &c);
    }
    if (!strcmp(s->node->op_type, "Mean")) {
        double inv = 1.0 / s->n_in;
        for (size_t i = 0; i < out[0].numel; i++)
            nv_set_f(out[0].data, out[0].dtype, i, nv_get_f(out[0].data, out[0].dtype, i) * inv);
    }
    return 0;
}

static int ew_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    s->op = code_of(n);
    const bd_shape *y = &n->outputs[0]->shape;
    int t = n->inputs[s->op == EW_WHERE ? 1 : 0]->dtype;
    if (variadic(n)) {
        ew_plan *p = calloc(n->n_inputs, sizeof *p);
        if (!p)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        s->heap = p;
        const bd_shape *first[1] = { &n->inputs[0]->shape };
        if (!nv_bcast_plan(&p[0].bc, 1, first, y) || !(p[0].row = copy_row(bd_dtype_size(t))))
            return bd_error_set(err, BD_EUNSUPPORTED, "inputs do not broadcast to the output");
        for (size_t k = 1; k < n->n_inputs; k++) {
            const bd_shape *ops[2] = { y, &n->inputs[k]->shape };
            if (!nv_bcast_plan(&p[k].bc, 2, ops, y) || !(p[k].row = row_for(s->op, t)))
                return bd_error_set(err, BD_EUNSUPPORTED, "inputs do not broadcast to the output");
        }
        s->run = variadic_run;
        return 0;
    }
    ew_plan *p = calloc(1, sizeof *p);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    s->heap = p;
    const bd_shape *ops[3] = { &n->inputs[0]->shape, &n->inputs[1]->shape,
                               n->n_inputs > 2 ? &n->inputs[2]->shape : NULL };
    if (!nv_bcast_plan(&p->bc, (int)n->n_inputs, ops, y))
        return bd_error_set(err, BD_EUNSUPPORTED, "inputs do not broadcast to the output");
    p->row = row_for(s->op, t);
    s->run = binary_run;
    return p->row ? 0 : bd_error_set(err, BD_EUNSUPPORTED, "no kernel for %s", bd_dtype_name(t));
}

const nv_op nv_elementwise_ops[] = {
    { "Add", ew_supports, ew_prepare },         { "Sub", ew_supports, ew_prepare },
    { "Mul", ew_supports, ew_prepare },         { "Div", ew_supports, ew_prepare },
    { "Max", ew_supports, ew_prepare },         { "Min", ew_supports, ew_prepare },
    { "Sum", ew_supports, ew_prepare },         { "Mean", ew_supports, ew_prepare },
    { "Mod", ew_supports, ew_prepare },         { "Pow", ew_supports, ew_prepare },
    { "Equal", ew_supports, ew_prepare },       { "Less", ew_supports, ew_prepare },
    { "Greater", ew_supports, ew_prepare },     { "LessOrEqual", ew_supports, ew_prepare },
    { "GreaterOrEqual", ew_supports, ew_prepare }, { "And", ew_supports, ew_prepare },
    { "Or", ew_supports, ew_prepare },          { "Xor", ew_supports, ew_prepare },
    { "BitShift", ew_supports, ew_prepare },    { "Where", ew_supports, ew_prepare },
};
const size_t nv_elementwise_n = sizeof nv_elementwise_ops / sizeof nv_elementwise_ops[0];
