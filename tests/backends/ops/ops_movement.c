/* Data movement cases and references: the views (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity), Transpose, Concat, Split, Slice, Expand, Tile, Pad, DepthToSpace, SpaceToDepth,
 * Trilu and braid's ChannelShuffle. Every reference moves elements with copy_el, so it holds
 * for any dtype. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: the same row-major elements. */
void ref_copy(const op_case *c, const tensor *in, tensor *out)
{
    for (size_t j = 0; j < out->n; j++)
        copy_el(out, j, &in[0], j);
}

/* perm, or the dims reversed without it. */
void ref_transpose(const op_case *c, const tensor *in, tensor *out)
{
    const attr_spec *perm = find_attr(c, "perm");
    int64_t idx[BD_MAX_RANK], src[BD_MAX_RANK];
    int r = out->rank;
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, r, out->dims, idx);
        for (int k = 0; k < r; k++)
            src[perm ? perm->ints[k] : r - 1 - k] = idx[k];
        copy_el(out, j, &in[0], ravel(src, in[0].rank, in[0].dims));
    }
}

/* braid's ChannelShuffle: axis 1 of [N, C, ...] viewed as [group, C/group], transposed; of
 * several inputs, their Concat on axis 1 shuffled. */
void ref_channel_shuffle(const op_case *c, const tensor *in, tensor *out)
{
    int64_t g = attr_i(c, "group", 2), ch = out->dims[1], per = ch / g;
    bool parts = c->n_in > 1;
    size_t S = numel(out->rank - 2, out->dims + 2), N = (size_t)out->dims[0];
    for (size_t n = 0; n < N; n++)
        for (int64_t k = 0; k < ch; k++) {      /* output channel k = (j, i) of [C/g, g] */
            int64_t src = (k % g) * per + k / g;                 /* in the concatenation */
            const tensor *t = parts ? &in[src / per] : &in[0];
            int64_t tc = parts ? per : ch, at = parts ? src % per : src;
            for (size_t s = 0; s < S; s++)
                copy_el(out, (n * (size_t)ch + (size_t)k) * S + s, t,
                        (n * (size_t)tc + (size_t)at) * S + s);
        }
}

void ref_concat(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), out->rank);
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        int k = 0;
        while (idx[axis] >= in[k].dims[axis])
            idx[axis] -= in[k++].dims[axis];
        copy_el(out, j, &in[k], ravel(idx, in[k].rank, in[k].dims));
    }
}

/* Split along axis into the outputs, each as long as its shape says. */
static void ref_split(const op_case *c, const tensor *in, tensor *out)
{
    int axis = norm_axis(attr_i(c, "axis", 0), in[0].rank);
    int64_t idx[BD_MAX_RANK], at = 0;
    for (int k = 0; k < MAX_OUT && out[k].dtype; k++) {
        for (size_t j = 0; j < out[k].n; j++) {
            unravel(j, out[k].rank, out[k].dims, idx);
            idx[axis] += at;
            copy_el(&out[k], j, &in[0], ravel(idx, in[0].rank, in[0].dims));
        }
        at += out[k].dims[axis];
    }
}

/* Slice: starts, ends, axes, steps (inputs 1-4, axes and steps optional); output index ->
 * start + index * step, with ONNX's clamping of the start. */
void ref_slice(const op_case *c, const tensor *in, tensor *out)
{
    int64_t start[BD_MAX_RANK] = { 0 }, step[BD_MAX_RANK];
    for (int k = 0; k < in[0].rank; k++)
        step[k] = 1;
    const attr_spec *as = find_attr(c, "starts"), *aa = find_attr(c, "axes");   /* opset < 10 */
    bool has_axes = as ? aa != NULL : c->n_in > 3 && in[3].n, has_steps = c->n_in > 4 && in[4].n;
    size_t count = as ? (size_t)as->n : in[1].n;
    for (size_t j = 0; j < count; j++) {
        int64_t axis = !has_axes ? (int64_t)j : as ? aa->ints[j] : in[3].i[j];
        int ax = norm_axis(axis, in[0].rank);
        int64_t d = in[0].dims[ax], st = has_steps ? in[4].i[j] : 1, s = as ? as->ints[j] : in[1].i[j];
        s = s < 0 ? s + d : s;
        s = st > 0 ? (s < 0 ? 0 : s > d ? d : s) : (s < 0 ? -1 : s > d - 1 ? d - 1 : s);
        start[ax] = s;
        step[ax] = st;
    }
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        for (int k = 0; k < out->rank; k++)
            idx[k] = start[k] + idx[k] * step[k];
        copy_el(out, j, &in[0], ravel(idx, in[0].rank, in[0].dims));
    }
}

/* Expand: numpy broadcasting of the input to the output's shape. */
static void ref_expand(const op_case *c, const tensor *in, tensor *out)
{
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        copy_el(out, j, &in[0], bcast(&in[0], idx, out->rank));
    }
}

/* Tile: output index modulo the input's dims. */
static void ref_tile(const op_case *c, const tensor *in, tensor *out)
{
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        for (int k = 0; k < out->rank; k++)
            idx[k] %= in[0].dims[k];
        copy_el(out, j, &in[0], ravel(idx, in[0].rank, in[0].dims));
    }
}

/* Pad: pads input 1 (begins, then ends; negative ones crop), constant mode (value input 2,
 * else 0), edge (the nearest element) and reflect (mirrored without the edge). Before opset 11
 * the pads and the value are attributes. */
void ref_pad(const op_case *c, const tensor *in, tensor *out)
{
    int r = in[0].rank;
    const char *mode = attr_s(c, "mode", "constant");
    bool edge = !strcmp(mode, "edge"), reflect = !strcmp(mode, "reflect");
    bool has_value = c->n_in > 2 && in[2].n;
    const attr_spec *ap = find_attr(c, "pads");
    const int64_t *pads = ap ? ap->ints : in[1].i;
    double value = attr_f(c, "value", 0);
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, r, out->dims, idx);
        bool inside = true;
        for (int k = 0; k < r; k++) {
            int64_t d = in[0].dims[k];
            idx[k] -= pads[k];
            if (idx[k] >= 0 && idx[k] < d)
                continue;
            inside = false;
            if (reflect)
                idx[k] = idx[k] < 0 ? -idx[k] : 2 * (d - 1) - idx[k];
            else
                idx[k] = idx[k] < 0 ? 0 : d - 1;
        }
        if (inside || edge || reflect)
            copy_el(out, j, &in[0], ravel(idx, r, in[0].dims));
        else if (has_value)
            copy_el(out, j, &in[2], 0);
        else
            out->f[j] = value, out->i[j] = (int64_t)value;
    }
}

/* DepthToSpace (DCR: the depth is [B, B, C'], CRD: [C', B, B]) and SpaceToDepth (its
 * inverse, depth [B, B, C]) on NCHW. */
static void ref_depth_space(const op_case *c, const tensor *in, tensor *out)
{
    int64_t B = attr_i(c, "blocksize", 1), idx[4];
    bool to_depth = !strcmp(c->op, "SpaceToDepth");
    bool crd = !strcmp(attr_s(c, "mode", "DCR"), "CRD");
    const int64_t *xd = in[0].dims;
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, 4, out->dims, idx);
        int64_t n = idx[0], ch = idx[1], h = idx[2], w = idx[3], src[4];
        if (to_depth) {
            int64_t C = xd[1], b1 = ch / C / B, b2 = ch / C % B;
            src[0] = n, src[1] = ch % C, src[2] = h * B + b1, src[3] = w * B + b2;
        } else {
            int64_t Cp = out->dims[1], b1 = h % B, b2 = w % B;
            src[0] = n, src[2] = h / B, src[3] = w / B;
            src[1] = crd ? ch * B * B + b1 * B + b2 : (b1 * B + b2) * Cp + ch;
        }
        copy_el(out, j, &in[0], ravel(src, 4, xd));
    }
}

/* Trilu: keep the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims. */
static void ref_trilu(const op_case *c, const tensor *in, tensor *out)
{
    bool upper = attr_i(c, "upper", 1);
    int64_t k = c->n_in > 1 && in[1].n ? in[1].i[0] : 0, idx[BD_MAX_RANK];
    int r = out->rank;
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, r, out->dims, idx);
        int64_t diff = idx[r - 1] - idx[r - 2];
        if (upper ? diff >= k : diff <= k)
            copy_el(out, j, &in[0], j);
        else
            out->f[j] = 0, out->i[j] = 0;
    }
}

/* Dropout at inference: the input as it is, and a mask of ones. */
static void ref_dropout(const op_case *c, const tensor *in, tensor *out)
{
    for (size_t j = 0; j < out[0].n; j++)
        copy_el(&out[0], j, &in[0], j);
    for (size_t j = 0; out[1].dtype && j < out[1].n; j++)
        out[1].f[j] = 1, out[1].i[j] = 1;
}

/* ReverseSequence: in each batch entry b, the first sequence_lens[b] steps along the time
 * axis reversed, the rest as they are. */
static void ref_reverse_sequence(const op_case *c, const tensor *in, tensor *out)
{
    int tax = (int)attr_i(c, "time_axis", 0), bax = (int)attr_i(c, "batch_axis", 1);
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        int64_t len = in[1].i[idx[bax]];
        if (idx[tax] < len)
            idx[tax] = len - 1 - idx[tax];
        copy_el(out, j, &in[0], ravel(idx, in[0].rank, in[0].dims));
    }
}

/* ---- the cases ------------------------------------------------------------------------------- */

static const op_case k_cases[] = {
    /* views of other dtypes (a boundary output: run as a copy) */
    { "reshape_i64", "Reshape", NULL, 2, { FED(INT64, 2, 3, 4), I64(4, -1) }, NO_ATTR,
      OUTT(INT64, 4, 6), ref_copy },
    { "reshape_bool_zero_dim", "Reshape", NULL, 2, { FED(BOOL, 2, 3, 4), I64(0, 12) }, NO_ATTR,
      OUTT(BOOL, 2, 12), ref_copy },
    { "flatten_u8", "Flatten", NULL, 1, { FEDR(UINT8, 0, 255, 2, 3, 4) }, { AI("axis", 1) },
      OUTT(UINT8, 2, 12), ref_copy },
    { "flatten_f64_axis0", "Flatten", NULL, 1, { FED(F64, 2, 3, 4) }, { AI("axis", 0) },
      OUTT(F64, 1, 24), ref_copy },
    { "squeeze_bool", "Squeeze", NULL, 2, { FED(BOOL, 1, 3, 1, 4), I64(0, -2) }, NO_ATTR,
      OUTT(BOOL, 3, 4), ref_copy },
    { "squeeze_i32_all", "Squeeze", NULL, 1, { FED(INT32, 1, 3, 1) }, NO_ATTR, OUTT(INT32, 3),
      ref_copy },
    { "unsqueeze_i64", "Unsqueeze", NULL, 2, { FED(INT64, 3, 4), I64(-1, 0) }, NO_ATTR,
      OUTT(INT64, 1, 3, 4, 1), ref_copy },
    { "identity_f16", "Identity", NULL, 1, { FED(F16, 3, 4) }, NO_ATTR, OUTT(F16, 3, 4), ref_copy,
      1e-9 },
    { "identity_i8", "Identity", NULL, 1, { FEDR(INT8, -128, 127, 3, 4) }, NO_ATTR,
      OUTT(INT8, 3, 4), ref_copy },
    /* Dropout (inference): a copy, and a mask of ones */
    { "dropout_f32", "Dropout", NULL, 1, { IN(3, 4) }, NO_ATTR, OUT(3, 4), ref_dropout },
    { "dropout_f32_mask_ratio", "Dropout", NULL, 2, { IN(3, 4), CSTSF(F32, 0.3f) }, NO_ATTR,
      OUTS(O(F32, 3, 4), O(BOOL, 3, 4)), ref_dropout },
    { "dropout_f64_training_ratio0", "Dropout", NULL, 3,
      { FED(F64, 2, 5), FEDSF(F32, 0), FEDS(BOOL, 1) }, NO_ATTR, OUTS(O(F64, 2, 5), O(BOOL, 2, 5)),
      ref_dropout },
    /* torchvision's Swin exports F.dropout(p=0, training=True): both constants, inference */
    { "dropout_f32_training_const_ratio0", "Dropout", NULL, 3,
      { IN(2, 5), CSTSF(F32, 0), CSTS(BOOL, 1) }, NO_ATTR, OUTS(O(F32, 2, 5), O(BOOL, 2, 5)),
      ref_dropout },
    { "dropout_training_refused", "Dropout", NULL, 3, { IN(2, 5), CSTSF(F32, 0.5f), FEDS(BOOL, 1) },
      NO_ATTR, OUTS(O(F32, 2, 5), O(BOOL, 2, 5)), NULL, .expect_error = true,
      .skip = { "ort", "ORT drops elements at random in training mode; the native engine runs "
                "inference only and refuses it" } },
    { "dropout_u8_mask", "Dropout", NULL, 1, { FEDR(UINT8, 0, 255, 3, 4) }, NO_ATTR,
      OUTS(O(UINT8, 3, 4), O(BOOL, 3, 4)), ref_dropout,
      .skip = { "ort", "ONNX defines Dropout on floats only; ORT rejects the model (the native "
                "engine copies any dtype)" } },
    /* Transpose */
    { "transpose_i64_120", "Transpose", NULL, 1, { FED(INT64, 2, 3, 4) }, { AINTS("perm", 1, 2, 0) },
      OUTT(INT64, 3, 4, 2), ref_transpose },
    { "transpose_bool_default", "Transpose", NULL, 1, { FED(BOOL, 2, 3, 4) }, NO_ATTR,
      OUTT(BOOL, 4, 3, 2), ref_transpose },
    { "transpose_u8_0312", "Transpose", NULL, 1, { FEDR(UINT8, 0, 255, 2, 3, 4, 5) },
      { AINTS("perm", 0, 3, 1, 2) }, OUTT(UINT8, 2, 5, 3, 4), ref_transpose },
    { "transpose_f64_2d", "Transpose", NULL, 1, { FED(F64, 5, 7) }, { AINTS("perm", 1, 0) },
      OUTT(F64, 7, 5), ref_transpose },
    { "transpose_i16_5d", "Transpose", NULL, 1, { FEDR(INT16, -999, 999, 2, 3, 1, 4, 2) },
      { AINTS("perm", 4, 0, 3, 2, 1) }, OUTT(INT16, 2, 2, 4, 1, 3), ref_transpose },
    { "transpose_f16", "Transpose", NULL, 1, { FED(F16, 3, 5) }, NO_ATTR, OUTT(F16, 5, 3),
      ref_transpose, 1e-9 },
    { "transpose_bf16", "Transpose", NULL, 1, { FED(BF16, 2, 3, 4) }, { AINTS("perm", 2, 0, 1) },
      OUTT(BF16, 4, 2, 3), ref_transpose, 1e-9 },
    { "transpose_f32_tiles", "Transpose", NULL, 1, { IN(64, 96) }, NO_ATTR, OUT(96, 64),
      ref_transpose },
    { "transpose_f32_021_odd", "Transpose", NULL, 1, { IN(3, 50, 70) }, { AINTS("perm", 0, 2, 1) },
      OUT(3, 70, 50), ref_transpose },
    { "transpose_i64_parallel", "Transpose", NULL, 1, { FED(INT64, 256, 160) }, NO_ATTR,
      OUTT(INT64, 160, 256), ref_transpose, .threads = 2 },
    { "transpose_u8_2031", "Transpose", NULL, 1, { FEDR(UINT8, 0, 255, 3, 17, 5, 9) },
      { AINTS("perm", 2, 0, 3, 1) }, OUTT(UINT8, 5, 3, 9, 17), ref_transpose },
    { "transpose_unit_dims", "Transpose", NULL, 1, { IN(1, 5, 1, 7) }, { AINTS("perm", 2, 3, 0, 1) },
      OUT(1, 7, 1, 5), ref_transpose },
    /* Concat */
    { "concat_i64_axis0", "Concat", NULL, 3, { FED(INT64, 2, 3), CST(INT64, 1, 3), FED(INT64, 3, 3) },
      { AI("axis", 0) }, OUTT(INT64, 6, 3), ref_concat },
    { "concat_bool_neg_axis", "Concat", NULL, 2, { FED(BOOL, 2, 3, 1), FED(BOOL, 2, 3, 4) },
      { AI("axis", -1) }, OUTT(BOOL, 2, 3, 5), ref_concat },
    { "concat_u8_axis1", "Concat", NULL, 2, { FEDR(UINT8, 0, 255, 2, 2, 3), FEDR(UINT8, 0, 255, 2, 5, 3) },
      { AI("axis", 1) }, OUTT(UINT8, 2, 7, 3), ref_concat },
    { "concat_f64_one", "Concat", NULL, 1, { FED(F64, 2, 3) }, { AI("axis", 1) }, OUTT(F64, 2, 3),
      ref_concat },
    { "concat_i32_1d", "Concat", NULL, 3, { FED(INT32, 2), FED(INT32, 1), CST(INT32, 3) },
      { AI("axis", 0) }, OUTT(INT32, 6), ref_concat },
    { "concat_f16_axis0", "Concat", NULL, 2, { FED(F16, 1, 3), FED(F16, 2, 3) }, { AI("axis", 0) },
      OUTT(F16, 3, 3), ref_concat, 1e-9 },
    /* Split: sizes from the split input, or equal parts */
    { "split_f32_sizes", "Split", NULL, 2, { IN(2, 6, 3), I64(2, 3, 1) }, { AI("axis", 1) },
      OUTS(O(F32, 2, 2, 3), O(F32, 2, 3, 3), O(F32, 2, 1, 3)), ref_split },
    { "split_i64_equal", "Split", NULL, 1, { FED(INT64, 4, 3) }, NO_ATTR,
      OUTS(O(INT64, 2, 3), O(INT64, 2, 3)), ref_split },
    { "split_bool_neg_axis", "Split", NULL, 2, { FED(BOOL, 2, 5), I64(4, 1) }, { AI("axis", -1) },
      OUTS(O(BOOL, 2, 4), O(BOOL, 2, 1)), ref_split },
    { "split_u8_equal3", "Split", NULL, 1, { FEDR(UINT8, 0, 255, 3, 6) }, { AI("axis", 1) },
      OUTS(O(UINT8, 3, 2), O(UINT8, 3, 2), O(UINT8, 3, 2)), ref_split },
    { "split_f64_one", "Split", NULL, 1, { FED(F64, 3, 4) }, { AI("axis", 0) }, OUTT(F64, 3, 4),
      ref_split },
    /* Slice: negative steps, clamping, omitted axes, run-time parameters */
    { "slice_i64_neg_steps", "Slice", NULL, 5,
      { FED(INT64, 5, 6), I64(-1, 5), I64(-100, 0), I64(0, 1), I64(-2, -2) }, NO_ATTR,
      OUTT(INT64, 3, 3), ref_slice },
    { "slice_bool_neg_step_last", "Slice", NULL, 5,
      { FED(BOOL, 3, 7), I64(100), I64(-100), I64(-1), I64(-3) }, NO_ATTR, OUTT(BOOL, 3, 3),
      ref_slice },
    { "slice_u8_omitted_axes", "Slice", NULL, 5,
      { FEDR(UINT8, 0, 255, 4, 5), I64(1, 0), I64(4, 5), OMIT, I64(2, 2) }, NO_ATTR,
      OUTT(UINT8, 2, 3), ref_slice },
    { "slice_i32_step7_wide", "Slice", NULL, 5, { FED(INT32, 3, 100), I64(5), I64(95), I64(1), I64(7) },
      NO_ATTR, OUTT(INT32, 3, 13), ref_slice },
    { "slice_f32_3d_mixed", "Slice", NULL, 5,
      { IN(4, 5, 6), I64(3, 1, -1), I64(0, 5, 0), I64(0, 1, 2), I64(-1, 2, -2) }, NO_ATTR,
      OUT(3, 2, 3), ref_slice },
    { "slice_f64_step3", "Slice", NULL, 5, { FED(F64, 10, 2), I64(1), I64(10), I64(0), I64(3) },
      NO_ATTR, OUTT(F64, 3, 2), ref_slice },
    { "slice_i32_fed_params", "Slice", NULL, 4,
      { FED(INT32, 4, 6), FI64(1, -4), FI64(3, -1), FI64(0, 1) }, NO_ATTR, OUTT(INT32, 2, 3),
      ref_slice },
    { "slice_f32_int32_params", "Slice", NULL, 4,
      { IN(4, 6), CSTV(INT32, V(-3, 1), 2), CSTV(INT32, V(100, 5), 2), CSTV(INT32, V(0, 1), 2) },
      NO_ATTR, OUT(3, 4), ref_slice },
    /* Expand, Tile */
    { "expand_f32", "Expand", NULL, 2, { IN(3, 1), I64(2, 3, 4) }, NO_ATTR, OUT(2, 3, 4),
      ref_expand },
    { "expand_bool_lower_rank_shape", "Expand", NULL, 2, { FED(BOOL, 2, 1, 4), I64(3, 1) },
      NO_ATTR, OUTT(BOOL, 2, 3, 4), ref_expand },
    { "expand_i64_scalar", "Expand", NULL, 2, { FEDS(INT64, 7), I64(2, 3) }, NO_ATTR,
      OUTT(INT64, 2, 3), ref_expand },
    { "expand_u8_fed_shape", "Expand", NULL, 2, { FEDR(UINT8, 0, 255, 1, 3), FI64(2, 1) }, NO_ATTR,
      OUTT(UINT8, 2, 3), ref_expand },
    { "tile_i64", "Tile", NULL, 2, { FED(INT64, 2, 1, 3), I64(2, 3, 1) }, NO_ATTR,
      OUTT(INT64, 4, 3, 3), ref_tile },
    { "tile_bool", "Tile", NULL, 2, { FED(BOOL, 2, 3), I64(1, 2) }, NO_ATTR, OUTT(BOOL, 2, 6),
      ref_tile },
    { "tile_f32", "Tile", NULL, 2, { IN(3, 2), I64(2, 2) }, NO_ATTR, OUT(6, 4), ref_tile },
    { "tile_f64_fed_repeats", "Tile", NULL, 2, { FED(F64, 2, 3), FI64(3, 1) }, NO_ATTR,
      OUTT(F64, 6, 3), ref_tile },
    /* Pad: constant (a value, or 0), edge, reflect; negative pads crop */
    { "pad_constant_i32_value", "Pad", NULL, 3, { FED(INT32, 2, 3), I64(1, 0, 0, 2), CSTS(INT32, 7) },
      NO_ATTR, OUTT(INT32, 3, 5), ref_pad },
    { "pad_constant_bool_zero", "Pad", NULL, 2, { FED(BOOL, 2, 3), I64(1, 1, 1, 1) }, NO_ATTR,
      OUTT(BOOL, 4, 5), ref_pad },
    { "pad_constant_u8", "Pad", NULL, 3, { FEDR(UINT8, 0, 255, 2, 3), I64(0, 2, 1, 0), CSTS(UINT8, 200) },
      NO_ATTR, OUTT(UINT8, 3, 5), ref_pad },
    { "pad_reflect_f32", "Pad", NULL, 2, { IN(1, 2, 4, 5), I64(0, 0, 2, 1, 0, 0, 3, 4) },
      { AS("mode", "reflect") }, OUT(1, 2, 9, 10), ref_pad },
    { "pad_reflect_i64", "Pad", NULL, 2, { FED(INT64, 3, 4), I64(1, 2, 2, 3) },
      { AS("mode", "reflect") }, OUTT(INT64, 6, 9), ref_pad },
    { "pad_edge_i64", "Pad", NULL, 2, { FED(INT64, 3, 4), I64(2, 0, 1, 3) }, { AS("mode", "edge") },
      OUTT(INT64, 6, 7), ref_pad },
    { "pad_edge_u8", "Pad", NULL, 2, { FEDR(UINT8, 0, 255, 2, 3), I64(1, 1, 1, 1) },
      { AS("mode", "edge") }, OUTT(UINT8, 4, 5), ref_pad },
    { "pad_constant_crop", "Pad", NULL, 3, { IN(4, 5), I64(-1, 2, 1, -3), WF(VF(-9), 1) },
      NO_ATTR, OUT(4, 4), ref_pad },
    { "pad_reflect_max_f64", "Pad", NULL, 2, { FED(F64, 3, 4), I64(2, 3, 2, 3) },
      { AS("mode", "reflect") }, OUTT(F64, 7, 10), ref_pad },
    { "pad_edge_mixed_crop", "Pad", NULL, 2, { IN(4, 5), I64(1, -2, -1, 3) },
      { AS("mode", "edge") }, OUT(4, 6), ref_pad },
    { "pad_reflect_3d_u8", "Pad", NULL, 2, { FEDR(UINT8, 0, 255, 3, 4, 5), I64(1, 0, 2, 2, 3, 1) },
      { AS("mode", "reflect") }, OUTT(UINT8, 6, 7, 8), ref_pad },
    { "pad_constant_f64", "Pad", NULL, 3, { FED(F64, 2, 3), I64(1, 1, 0, 0), CSTSF(F64, 2.5f) },
      NO_ATTR, OUTT(F64, 3, 4), ref_pad },
    { "pad_fed_pads_i32", "Pad", NULL, 2, { FED(INT32, 2, 3), FI64(0, 1, 1, 0) }, NO_ATTR,
      OUTT(INT32, 3, 4), ref_pad },
    /* DepthToSpace, SpaceToDepth */
    { "depth_to_space_dcr_f32", "DepthToSpace", NULL, 1, { IN(1, 8, 2, 3) }, { AI("blocksize", 2) },
      OUT(1, 2, 4, 6), ref_depth_space },
    { "depth_to_space_crd_i64", "DepthToSpace", NULL, 1, { FED(INT64, 2, 8, 2, 3) },
      { AI("blocksize", 2), AS("mode", "CRD") }, OUTT(INT64, 2, 2, 4, 6), ref_depth_space,
      .skip = ORT_NO_KERNEL("DepthToSpace on INT64") },
    { "depth_to_space_dcr_u8_b3", "DepthToSpace", NULL, 1, { FEDR(UINT8, 0, 255, 1, 9, 2, 2) },
      { AI("blocksize", 3) }, OUTT(UINT8, 1, 1, 6, 6), ref_depth_space },
    { "space_to_depth_f32", "SpaceToDepth", NULL, 1, { IN(1, 2, 4, 6) }, { AI("blocksize", 2) },
      OUT(1, 8, 2, 3), ref_depth_space },
    { "space_to_depth_bool", "SpaceToDepth", NULL, 1, { FED(BOOL, 2, 3, 4, 2) },
      { AI("blocksize", 2) }, OUTT(BOOL, 2, 12, 2, 1), ref_depth_space,
      .skip = ORT_NO_KERNEL("SpaceToDepth on BOOL") },
    /* ReverseSequence: time and batch axes either way round */
    { "reverse_sequence_time0_f32", "ReverseSequence", NULL, 2, { IN(4, 3, 2), I64(4, 0, 2) },
      NO_ATTR, OUT(4, 3, 2), ref_reverse_sequence },
    { "reverse_sequence_batch0_i64", "ReverseSequence", NULL, 2,
      { FED(INT64, 3, 5), FEDV(INT64, V(5, 1, 3), 3) }, { AI("batch_axis", 0), AI("time_axis", 1) },
      OUTT(INT64, 3, 5), ref_reverse_sequence },
    { "reverse_sequence_bool", "ReverseSequence", NULL, 2,
      { FED(BOOL, 3, 2, 4), I64(3, 2) }, NO_ATTR, OUTT(BOOL, 3, 2, 4), ref_reverse_sequence },
    /* run-time-shaped outputs: the shapes come from fed inputs */
    { "split_fed_sizes_f32", "Split", NULL, 2, { IN(2, 6), FI64(2, 4) }, { AI("axis", 1) },
      OUTS(O(F32, 2, 2), O(F32, 2, 4)), ref_split, .runtime_shape = true },
    { "slice_fed_neg_step_i64", "Slice", NULL, 5,
      { FED(INT64, 5, 6), FI64(4), FI64(-100), FI64(0), FI64(-2) }, NO_ATTR, OUTT(INT64, 3, 6),
      ref_slice, .runtime_shape = true },
    { "expand_fed_shape_f32", "Expand", NULL, 2, { IN(3, 1), FI64(2, 1, 4) }, NO_ATTR,
      OUT(2, 3, 4), ref_expand, .runtime_shape = true },
    { "pad_fed_pads_bool", "Pad", NULL, 2, { FED(BOOL, 2, 3), FI64(1, 0, 2, 2) }, NO_ATTR,
      OUTT(BOOL, 5, 5), ref_pad, .runtime_shape = true },
    /* legacy forms (attributes that later became inputs) */
    { "slice_attrs_opset9", "Slice", NULL, 1, { FED(INT64, 4, 6) },
      { AINTS("starts", 1, -4), AINTS("ends", 3, 100), AINTS("axes", 0, 1) }, OUTT(INT64, 2, 4),
      ref_slice, .opset = 9 },
    { "slice_attrs_no_axes_opset9", "Slice", NULL, 1, { IN(4, 6) },
      { AINTS("starts", -3, 2), AINTS("ends", -1, 5) }, OUT(2, 3), ref_slice, .opset = 9 },
    { "pad_attrs_constant_opset10", "Pad", NULL, 1, { IN(2, 3) },
      { AINTS("pads", 1, 0, 0, 2), AF("value", 2.5f) }, OUT(3, 5), ref_pad, .opset = 10 },
    { "pad_attrs_edge_opset10", "Pad", NULL, 1, { IN(2, 3) },
      { AINTS("pads", 0, 2, 1, 1), AS("mode", "edge") }, OUT(3, 6), ref_pad, .opset = 10 },
    { "pad_attrs_reflect_i32_opset10", "Pad", NULL, 1, { FED(INT32, 3, 4) },
      { AINTS("pads", 2, 1, 0, 3), AS("mode", "reflect") }, OUTT(INT32, 5, 8), ref_pad,
      .opset = 10, .skip = { "ort", "ONNX's Pad-2 is defined on floats only; ORT rejects the model "
                             "(the native engine pads any dtype at any opset)" } },
    { "split_attr_opset11", "Split", NULL, 1, { IN(2, 6) }, { AI("axis", 1), AINTS("split", 1, 5) },
      OUTS(O(F32, 2, 1), O(F32, 2, 5)), ref_split, .opset = 11 },
    { "squeeze_attr_opset11", "Squeeze", NULL, 1, { FED(INT64, 1, 3, 1) }, { AINTS("axes", 0) },
      OUTT(INT64, 3, 1), ref_copy, .opset = 11 },
    { "unsqueeze_attr_opset11", "Unsqueeze", NULL, 1, { FED(BOOL, 3, 2) }, { AINTS("axes", 1, -1) },
      OUTT(BOOL, 3, 1, 2, 1), ref_copy, .opset = 11 },
    /* empty tensors: an empty input beside others, an empty result, nothing but empties */
    { "concat_empty_input_f32", "Concat", NULL, 3, { IN(2, 0, 3), IN(2, 4, 3), IN(2, 0, 3) },
      { AI("axis", 1) }, OUT(2, 4, 3), ref_concat },
    { "slice_empty_result_i64", "Slice", NULL, 4, { FED(INT64, 3, 4), I64(2), I64(1), I64(0) },
      NO_ATTR, OUTT(INT64, 0, 4), ref_slice },
    { "transpose_all_empty_u8", "Transpose", NULL, 1, { FED(UINT8, 0, 3) }, NO_ATTR,
      OUTT(UINT8, 3, 0), ref_transpose },
    { "pad_empty_input_constant", "Pad", NULL, 3, { FED(INT32, 0, 2), I64(1, 0, 1, 1), CSTS(INT32, 4) },
      NO_ATTR, OUTT(INT32, 2, 3), ref_pad },
    /* Trilu */
    { "trilu_upper_f32_batched", "Trilu", NULL, 1, { IN(2, 4, 5) }, NO_ATTR, OUT(2, 4, 5),
      ref_trilu },
    { "trilu_lower_k_neg_i64", "Trilu", NULL, 2, { FED(INT64, 4, 5), CSTS(INT64, -1) },
      { AI("upper", 0) }, OUTT(INT64, 4, 5), ref_trilu },
    { "trilu_upper_k2_bool", "Trilu", NULL, 2, { FED(BOOL, 3, 5), CSTS(INT64, 2) }, NO_ATTR,
      OUTT(BOOL, 3, 5), ref_trilu },
    { "trilu_lower_u8_tall", "Trilu", NULL, 1, { FEDR(UINT8, 1, 255, 5, 3) }, { AI("upper", 0) },
      OUTT(UINT8, 5, 3), ref_trilu, .skip = ORT_NO_KERNEL("Trilu on UINT8") },
    { "trilu_upper_f64_fed_k", "Trilu", NULL, 2, { FED(F64, 4, 4), FEDS(INT64, 1) }, NO_ATTR,
      OUTT(F64, 4, 4), ref_trilu },
};

const case_table ops_movement_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
