/* Cases and references of the ops that make tensors from shapes and a few values (Shape,
 * Size, Range, ConstantOfShape, EyeLike) and Einsum. Shape inference folds Shape and Size of
 * static shapes and Range and ConstantOfShape of small integer constants: the runner then
 * checks the folded constants and runs the node on the engine directly (test_backend_ops.c). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

/* Shape (dims [start, end), clamped like Slice) and Size. */
static void ref_shape(const op_case *c, const tensor *in, tensor *out)
{
    int64_t r = in[0].rank;
    if (!strcmp(c->op, "Size")) {
        out->i[0] = (int64_t)in[0].n;
        return;
    }
    int64_t b = attr_i(c, "start", 0), e = attr_i(c, "end", r);
    b = b < 0 ? b + r : b;
    e = e < 0 ? e + r : e;
    b = b < 0 ? 0 : b > r ? r : b;
    for (int64_t k = b; k < e && k < r; k++)
        out->i[k - b] = in[0].dims[k];
}

/* Range(start, limit, delta): start + j * delta. */
static void ref_range(const op_case *c, const tensor *in, tensor *out)
{
    for (size_t j = 0; j < out->n; j++)
        put(out, j, in[0].f[0] + (double)j * in[2].f[0],
            (int64_t)((uint64_t)in[0].i[0] + (uint64_t)j * (uint64_t)in[2].i[0]));
}

/* ConstantOfShape: the value attribute's one element everywhere (FLOAT 0 without it). */
static void ref_constant_of_shape(const op_case *c, const tensor *in, tensor *out)
{
    const attr_spec *v = find_attr(c, "value");
    for (size_t j = 0; j < out->n; j++)
        out->f[j] = v ? v->f : 0, out->i[j] = v ? v->i : 0;
}

/* EyeLike: ones on diagonal k of a 2-D output, zeros elsewhere. */
static void ref_eyelike(const op_case *c, const tensor *in, tensor *out)
{
    int64_t k = attr_i(c, "k", 0), cols = out->dims[1];
    for (size_t j = 0; j < out->n; j++) {
        bool one = (int64_t)j % cols - (int64_t)j / cols == k;
        out->f[j] = one, out->i[j] = one;
    }
}

/* ---- Einsum ------------------------------------------------------------------------------------ */

/* Labels are letters; the dims an ellipsis covers get the labels '0'.. (aligned from the
 * right across operands, numpy's broadcasting), so every term becomes a plain label string. */
#define ES_MAXL 64

typedef struct es_eq {
    int  n_ops;
    char term[MAX_IN][24];
    char out[24];
} es_eq;

/* TERM with its ellipsis (if any) replaced by the last N of the E ellipsis labels. */
static void es_expand(const char *term, size_t len, int n, int e, char *dst)
{
    size_t at = 0;
    for (size_t i = 0; i < len; i++) {
        if (term[i] == '.') {
            for (int k = e - n; k < e; k++)
                dst[at++] = (char)('0' + k);
            i += 2;
        } else {
            dst[at++] = term[i];
        }
    }
    dst[at] = '\0';
}

static void es_parse(const op_case *c, const tensor *in, es_eq *q)
{
    char eq[128];
    size_t n = 0;
    for (const char *p = attr_s(c, "equation", ""); *p && n + 1 < sizeof eq; p++)
        if (!isspace((unsigned char)*p))
            eq[n++] = *p;
    eq[n] = '\0';
    char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + n;
    const char *t = eq;
    int e = 0, ell[MAX_IN];
    const char *start[MAX_IN];
    size_t len[MAX_IN];
    q->n_ops = c->n_in;
    for (int k = 0; k < c->n_in; k++) {           /* each term and its ellipsis' dim count */
        const char *comma = strchr(t, ',');
        const char *end = comma && comma < lhs_end ? comma : lhs_end;
        start[k] = t;
        len[k] = (size_t)(end - t);
        int labels = 0;
        bool has = false;
        for (const char *p = t; p < end; p++)
            labels += isalpha((unsigned char)*p) != 0, has |= *p == '.';
        ell[k] = has ? in[k].rank - labels : 0;
        e = ell[k] > e ? ell[k] : e;
        t = end + 1;
    }
    for (int k = 0; k < c->n_in; k++)
        es_expand(start[k], len[k], ell[k], e, q->term[k]);
    if (arrow) {
        es_expand(arrow + 2, strlen(arrow + 2), e, e, q->out);
        return;
    }
    /* implicit: the ellipsis labels, then the letters used once, in ASCII order */
    size_t at = 0;
    for (int k = 0; k < e; k++)
        q->out[at++] = (char)('0' + k);
    for (int ch = 'A'; ch <= 'z'; ch++) {
        if (!isalpha(ch))
            continue;
        int uses = 0;
        for (int k = 0; k < c->n_in; k++)
            for (const char *p = q->term[k]; *p; p++)
                uses += *p == ch;
        if (uses == 1)
            q->out[at++] = (char)ch;
    }
    q->out[at] = '\0';
}

/* Every assignment of every label: the product of the operands' elements added into the
 * output element its output labels name. */
static void ref_einsum(const op_case *c, const tensor *in, tensor *out)
{
    es_eq q;
    es_parse(c, in, &q);
    char labels[ES_MAXL + 1];
    int64_t size[ES_MAXL], val[ES_MAXL];
    int nl = 0;
    for (int k = 0; k < q.n_ops; k++)
        for (int d = 0; q.term[k][d]; d++) {
            int l = 0;
            while (l < nl && labels[l] != q.term[k][d])
                l++;
            if (l == nl) {
                labels[nl] = q.term[k][d];
                size[nl++] = 1;
            }
            size[l] = in[k].dims[d] > size[l] ? in[k].dims[d] : size[l];   /* 1 broadcasts */
        }
    labels[nl] = '\0';
    size_t total = 1;
    for (int l = 0; l < nl; l++)
        total *= (size_t)size[l];
    for (size_t it = 0; it < total; it++) {
        size_t rest = it;
        for (int l = nl - 1; l >= 0; l--) {
            val[l] = (int64_t)(rest % (size_t)size[l]);
            rest /= (size_t)size[l];
        }
        double prod = 1;
        for (int k = 0; k < q.n_ops; k++) {
            size_t off = 0;
            for (int d = 0; q.term[k][d]; d++) {
                int l = (int)(strchr(labels, q.term[k][d]) - labels);
                off = off * (size_t)in[k].dims[d] + (size_t)(in[k].dims[d] == 1 ? 0 : val[l]);
            }
            prod *= in[k].f[off];
        }
        size_t o = 0;
        for (int d = 0; q.out[d]; d++) {
            int l = (int)(strchr(labels, q.out[d]) - labels);
            o = o * (size_t)out->dims[d] + (size_t)val[l];
        }
        out->f[o] += prod;
    }
}

/* ---- the cases ------------------------------------------------------------------------------- */

static const op_case k_cases[] = {
    /* Shape, Size (folded by shape inference: run directly) */
    { "shape_f32", "Shape", NULL, 1, { IN(2, 3, 4) }, NO_ATTR, OUTT(INT64, 3), ref_shape },
    { "shape_bool_start_end", "Shape", NULL, 1, { FED(BOOL, 2, 3, 4, 5) },
      { AI("start", 1), AI("end", -1) }, OUTT(INT64, 2), ref_shape },
    { "shape_u8_start_neg", "Shape", NULL, 1, { FED(UINT8, 2, 3, 4) }, { AI("start", -2) },
      OUTT(INT64, 2), ref_shape },
    { "size_i64", "Size", NULL, 1, { FED(INT64, 2, 3, 4) }, NO_ATTR, OUT0(INT64), ref_shape },
    { "size_f16", "Size", NULL, 1, { FED(F16, 5, 7) }, NO_ATTR, OUT0(INT64), ref_shape },
    /* Range */
    { "range_f32", "Range", NULL, 3, { CSTSF(F32, 1.5f), CSTSF(F32, 7), CSTSF(F32, 0.75f) }, NO_ATTR,
      OUT(8), ref_range },
    { "range_f64_neg_delta", "Range", NULL, 3, { CSTSF(F64, 5), CSTSF(F64, -2), CSTSF(F64, -1.5f) },
      NO_ATTR, OUTT(F64, 5), ref_range },
    { "range_i64_folded", "Range", NULL, 3, { CSTS(INT64, -3), CSTS(INT64, 10), CSTS(INT64, 4) },
      NO_ATTR, OUTT(INT64, 4), ref_range },
    { "range_i32_neg_delta", "Range", NULL, 3, { CSTS(INT32, 10), CSTS(INT32, 1), CSTS(INT32, -3) },
      NO_ATTR, OUTT(INT32, 3), ref_range },
    { "range_i16", "Range", NULL, 3, { CSTS(INT16, 2), CSTS(INT16, 9), CSTS(INT16, 2) }, NO_ATTR,
      OUTT(INT16, 4), ref_range },
    { "range_i32_long", "Range", NULL, 3, { CSTS(INT32, 0), CSTS(INT32, 5000), CSTS(INT32, 1) },
      NO_ATTR, OUTT(INT32, 5000), ref_range },
    { "range_f32_fed", "Range", NULL, 3, { FEDSF(F32, 0.5f), FEDSF(F32, 3), FEDSF(F32, 0.5f) },
      NO_ATTR, OUT(5), ref_range },
    { "range_i64_fed", "Range", NULL, 3, { FEDS(INT64, 2), FEDS(INT64, 11), FEDS(INT64, 3) }, NO_ATTR,
      OUTT(INT64, 3), ref_range, .runtime_shape = true },
    { "range_i32_fed_empty", "Range", NULL, 3, { FEDS(INT32, 5), FEDS(INT32, 1), FEDS(INT32, 2) },
      NO_ATTR, OUTT(INT32, 0), ref_range, .runtime_shape = true },
    { "range_f64_fed_neg", "Range", NULL, 3, { FEDSF(F64, 1), FEDSF(F64, -2), FEDSF(F64, -0.75f) },
      NO_ATTR, OUTT(F64, 4), ref_range, .runtime_shape = true },
    { "range_fed_delta_zero", "Range", NULL, 3, { FEDS(INT64, 0), FEDS(INT64, 5), FEDS(INT64, 0) },
      NO_ATTR, OUTT(INT64, 5), NULL, .runtime_shape = true, .expect_error = true },
    /* ConstantOfShape */
    { "constant_of_shape_f32", "ConstantOfShape", NULL, 1, { I64(2, 3) },
      { ATF("value", F32, 1.5f) }, OUT(2, 3), ref_constant_of_shape },
    { "constant_of_shape_default", "ConstantOfShape", NULL, 1, { I64(3, 2) }, NO_ATTR, OUT(3, 2),
      ref_constant_of_shape },
    { "constant_of_shape_i64", "ConstantOfShape", NULL, 1, { I64(2, 2) },
      { ATI("value", INT64, -7) }, OUTT(INT64, 2, 2), ref_constant_of_shape },
    { "constant_of_shape_bool", "ConstantOfShape", NULL, 1, { I64(2, 3) },
      { ATI("value", BOOL, 1) }, OUTT(BOOL, 2, 3), ref_constant_of_shape },
    { "constant_of_shape_f64", "ConstantOfShape", NULL, 1, { I64(4) },
      { ATF("value", F64, -0.25f) }, OUTT(F64, 4), ref_constant_of_shape },
    { "constant_of_shape_i32_large", "ConstantOfShape", NULL, 1, { I64(70, 70) },
      { ATI("value", INT32, 3) }, OUTT(INT32, 70, 70), ref_constant_of_shape },
    { "constant_of_shape_fed_shape", "ConstantOfShape", NULL, 1, { FI64(2, 3) },
      { ATI("value", INT8, -3) }, OUTT(INT8, 2, 3), ref_constant_of_shape },
    /* EyeLike */
    { "eyelike_f32", "EyeLike", NULL, 1, { IN(3, 4) }, NO_ATTR, OUT(3, 4), ref_eyelike },
    { "eyelike_i64_k1", "EyeLike", NULL, 1, { FED(INT64, 4, 3) }, { AI("k", 1) },
      OUTT(INT64, 4, 3), ref_eyelike },
    { "eyelike_bool_dtype_kneg", "EyeLike", NULL, 1, { IN(4, 4) },
      { AI("dtype", BOOL), AI("k", -2) }, OUTT(BOOL, 4, 4), ref_eyelike,
      .skip = ORT_NO_KERNEL("EyeLike with a BOOL output") },
    { "eyelike_f64_k_outside", "EyeLike", NULL, 1, { FED(F64, 2, 3) }, { AI("k", 5) },
      OUTT(F64, 2, 3), ref_eyelike },
    { "eyelike_i32_dtype", "EyeLike", NULL, 1, { IN(3, 3) }, { AI("dtype", INT32) },
      OUTT(INT32, 3, 3), ref_eyelike },
    /* Einsum: contractions, transposes, diagonals, broadcast ellipses, implicit outputs */
    { "einsum_matmul", "Einsum", NULL, 2, { IN(3, 4), IN(4, 5) }, { AS("equation", "ij,jk->ik") },
      OUT(3, 5), ref_einsum },
    { "einsum_batched", "Einsum", NULL, 2, { IN(2, 3, 4), IN(2, 4, 2) },
      { AS("equation", "bij,bjk->bik") }, OUT(2, 3, 2), ref_einsum },
    { "einsum_transpose", "Einsum", NULL, 1, { IN(3, 4) }, { AS("equation", "ij->ji") }, OUT(4, 3),
      ref_einsum },
    { "einsum_trace", "Einsum", NULL, 1, { IN(4, 4) }, { AS("equation", "ii->") }, OUT0(F32),
      ref_einsum },
    { "einsum_diagonal", "Einsum", NULL, 1, { IN(4, 4) }, { AS("equation", "ii->i") }, OUT(4),
      ref_einsum },
    { "einsum_outer", "Einsum", NULL, 2, { IN(3), IN(4) }, { AS("equation", "i,j->ij") },
      OUT(3, 4), ref_einsum },
    { "einsum_implicit", "Einsum", NULL, 2, { IN(3, 4), IN(4, 5) }, { AS("equation", "ij,jk") },
      OUT(3, 5), ref_einsum },
    { "einsum_ellipsis_bcast", "Einsum", NULL, 2, { IN(2, 1, 3, 4), IN(3, 4, 2) },
      { AS("equation", "...ij,...jk->...ik") }, OUT(2, 3, 3, 2), ref_einsum,
      .skip = { "ort", "ORT's Einsum does not broadcast ellipsis dims of different sizes "
                "(\"Ellipsis represents incompatible dimensions\")" } },
    { "einsum_ellipsis_batch", "Einsum", NULL, 2, { IN(2, 3, 4), IN(2, 4, 5) },
      { AS("equation", "...ij,...jk->...ik") }, OUT(2, 3, 5), ref_einsum },
    { "einsum_sum_all", "Einsum", NULL, 1, { IN(3, 4) }, { AS("equation", "ij->") }, OUT0(F32),
      ref_einsum },
    { "einsum_three", "Einsum", NULL, 3, { IN(2, 3), IN(3, 4), IN(4, 2) },
      { AS("equation", "ij,jk,kl->il") }, OUT(2, 2), ref_einsum },
    { "einsum_bilinear_f64", "Einsum", NULL, 3, { FED(F64, 2, 3), FED(F64, 4, 3, 5), FED(F64, 2, 5) },
      { AS("equation", "bn,anm,bm->ba") }, OUTT(F64, 2, 4), ref_einsum, 1e-9 },
    { "einsum_dot", "Einsum", NULL, 2, { IN(7), IN(7) }, { AS("equation", "i,i->") }, OUT0(F32),
      ref_einsum },
    { "einsum_batch_diagonal", "Einsum", NULL, 1, { IN(2, 3, 3) }, { AS("equation", "bii->bi") },
      OUT(2, 3), ref_einsum },
    { "einsum_repeated_in_two", "Einsum", NULL, 2, { IN(3, 3, 4), IN(4, 3) },
      { AS("equation", "iij,ji->j") }, OUT(4), ref_einsum },
    { "einsum_batch_diag_ellipsis", "Einsum", NULL, 1, { IN(2, 3, 3) },
      { AS("equation", "...ii->...i") }, OUT(2, 3), ref_einsum },
    { "einsum_leading_label_ellipsis", "Einsum", NULL, 2, { IN(3, 2, 4), IN(3) },
      { AS("equation", "i...,i->...") }, OUT(2, 4), ref_einsum },
    { "einsum_hadamard_upper", "Einsum", NULL, 2, { IN(3, 4), IN(3, 4) },
      { AS("equation", "Ab,Ab->bA") }, OUT(4, 3), ref_einsum },
    { "einsum_implicit_ellipsis", "Einsum", NULL, 2, { IN(2, 3, 4), IN(4, 3) },
      { AS("equation", "...ij,jk") }, OUT(2, 3, 3), ref_einsum },
};

const case_table ops_generate_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
