/* Resampling cases and references: Resize (nearest with each nearest_mode, linear, cubic with
 * cubic_coeff_a and exclude_outside, every coordinate_transformation_mode, tf_crop_and_resize
 * with roi and extrapolation_value, scales or sizes, constant or fed (a run-time-shaped
 * output), N-d, integer and BOOL data, opset 10) and Upsample (opsets 7 and 9), GridSample and
 * RoiAlign.
 *
 * The Resize reference follows ONNX's own: per axis, the input coordinate of each output
 * coordinate, then the N nearest elements of the input padded with its edges (ties to the
 * lower index, so an integer coordinate is its left neighbour at ratio 1), weighted by the
 * mode's coefficients; the N-d result is the sum over every combination of one neighbour per
 * axis of the product of their weights. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

/* ---- Resize and Upsample --------------------------------------------------------------------- */

typedef struct rs_axis_ref {
    int64_t in, out;
    double  scale, roi0, roi1;
} rs_axis_ref;

typedef struct taps_ref {
    int     n;
    int64_t idx[4];
    double  w[4];
    bool    outside;
} taps_ref;

/* The N indexes of [0, LIMIT) nearest to X, ties to the lower, ascending, into OUT. */
static void nearest_indexes(double x, int n, int64_t limit, int64_t *out)
{
    bool *used = calloc((size_t)limit + 1, sizeof *used);
    for (int k = 0; k < n; k++) {
        int64_t best = -1;
        for (int64_t i = 0; i < limit; i++)
            if (!used[i] && (best < 0 || fabs(x - (double)i) < fabs(x - (double)best)))
                best = i;
        used[best] = true;
    }
    for (int64_t i = 0, k = 0; i < limit; i++)
        if (used[i])
            out[k++] = i;
    free(used);
}

static void axis_ref(const op_case *c, bool legacy, const rs_axis_ref *a, int64_t x, taps_ref *t)
{
    const char *mode = attr_s(c, "mode", "nearest");
    const char *ctm = legacy ? "asymmetric" : attr_s(c, "coordinate_transformation_mode",
                                                     "half_pixel");
    const char *nm = attr_s(c, "nearest_mode", "round_prefer_floor");
    double in = (double)a->in, len = a->scale * in, xo, A = attr_f(c, "cubic_coeff_a", -0.75f);
    if (!strcmp(ctm, "align_corners"))
        xo = len == 1 ? 0 : (double)x * (in - 1) / (len - 1);
    else if (!strcmp(ctm, "asymmetric"))
        xo = (double)x / a->scale;
    else if (!strcmp(ctm, "tf_half_pixel_for_nn"))
        xo = ((double)x + 0.5) / a->scale;
    else if (!strcmp(ctm, "pytorch_half_pixel"))
        xo = len == 1 ? -0.5 : ((double)x + 0.5) / a->scale - 0.5;
    else if (!strcmp(ctm, "tf_crop_and_resize"))
        xo = (len == 1 ? (a->roi1 - a->roi0) * (in - 1) / 2
                       : (double)x * (a->roi1 - a->roi0) * (in - 1) / (len - 1)) + a->roi0 * (in - 1);
    else
        xo = ((double)x + 0.5) / a->scale - 0.5;
    t->outside = !strcmp(ctm, "tf_crop_and_resize") && (xo < 0 || xo > in - 1);
    if (legacy && !strcmp(mode, "nearest")) {     /* ONNX Runtime's opset-10 rounding */
        double i = a->scale < 1 ? ceil(xo) : trunc(xo);
        t->n = 1;
        t->idx[0] = i < 0 ? 0 : i > in - 1 ? a->in - 1 : (int64_t)i;
        t->w[0] = 1;
        return;
    }
    double ratio = xo == floor(xo) ? 1 : xo - floor(xo), co[4];
    int n;
    if (!strcmp(mode, "nearest")) {
        n = 2;
        bool up = ratio == 1 || !strcmp(nm, "ceil") ? true : !strcmp(nm, "floor") ? false
                : !strcmp(nm, "round_prefer_ceil") ? ratio >= 0.5 : ratio > 0.5;
        co[0] = !up;
        co[1] = up;
    } else if (!strcmp(mode, "linear")) {
        n = 2;
        co[0] = 1 - ratio;
        co[1] = ratio;
    } else {
        n = 4;
        double r = ratio, s = 1 - ratio;
        co[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
        co[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        co[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
        co[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
    }
    int pad = (n + 1) / 2;
    int64_t idx[4];
    nearest_indexes(xo + pad, n, a->in + 2 * pad, idx);
    double sum = 0;
    for (int k = 0; k < n; k++) {
        idx[k] -= pad;
        if (attr_i(c, "exclude_outside", 0) && (idx[k] < 0 || idx[k] >= a->in))
            co[k] = 0;
        sum += co[k];
    }
    t->n = n;
    for (int k = 0; k < n; k++) {
        t->idx[k] = idx[k] < 0 ? 0 : idx[k] >= a->in ? a->in - 1 : idx[k];
        t->w[k] = attr_i(c, "exclude_outside", 0) ? co[k] / sum : co[k];
    }
}

/* Resize: inputs X, roi, scales, sizes (opset 11+) or X, scales (opset 10); Upsample: X and
 * scales (opset 9) or the scales attribute (opset 7). */
static void ref_resize_nd(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    int r = x->rank;
    bool legacy = !strcmp(c->op, "Upsample") || c->n_in == 2;
    const tensor *roi = !legacy && c->n_in > 1 && in[1].n ? &in[1] : NULL;
    const tensor *sizes = c->n_in > 3 && in[3].n ? &in[3] : NULL;
    const tensor *scales = legacy ? (c->n_in > 1 ? &in[1] : NULL) : c->n_in > 2 && in[2].n ? &in[2] : NULL;
    const attr_spec *sa = find_attr(c, "scales");
    rs_axis_ref ax[BD_MAX_RANK];
    for (int d = 0; d < r; d++) {
        ax[d].in = x->dims[d];
        ax[d].out = out->dims[d];
        ax[d].scale = sizes ? (double)sizes->i[d] / (double)x->dims[d]
                    : scales ? scales->f[d] : sa->floats[d];
        ax[d].roi0 = roi ? roi->f[d] : 0;
        ax[d].roi1 = roi ? roi->f[r + d] : 1;
    }
    int64_t o[BD_MAX_RANK], xi[BD_MAX_RANK];
    taps_ref t[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, r, out->dims, o);
        bool outside = false;
        for (int d = 0; d < r; d++) {
            axis_ref(c, legacy, &ax[d], o[d], &t[d]);
            outside = outside || t[d].outside;
        }
        if (outside) {
            put(out, j, attr_f(c, "extrapolation_value", 0), (int64_t)attr_f(c, "extrapolation_value", 0));
            continue;
        }
        int k[BD_MAX_RANK] = { 0 };
        double acc = 0;
        int64_t any = 0;
        for (;;) {
            double w = 1;
            for (int d = 0; d < r; d++) {
                xi[d] = t[d].idx[k[d]];
                w *= t[d].w[k[d]];
            }
            size_t at = ravel(xi, r, x->dims);
            if (w != 0)
                any = x->i[at];            /* nearest: the one element of weight 1 */
            acc += w * x->f[at];
            int d = r - 1;
            for (; d >= 0 && ++k[d] == t[d].n; d--)
                k[d] = 0;
            if (d < 0)
                break;
        }
        put(out, j, acc, any);
    }
}

/* ---- the cases ------------------------------------------------------------------------------- */

#define k_sc_up       VF(1, 1, 2, 1.5f)
#define k_sc_mixed    VF(1, 1, 0.8f, 1.7f)
#define k_sc_down     VF(1, 1, 0.6f, 0.6f)
#define k_sc_5d       VF(1, 1, 1.5f, 2, 0.5f)
#define k_sc_neg      VF(1, 1, -2, 2)
#define k_roi         VF(0, 0, 0.2f, 0.1f, 1, 1, 0.9f, 1.3f)
#define k_roi_f64     VF(0.1f, 0.3f, 0.8f, 0.9f)

static const op_case k_cases[] = {
    /* nearest: each nearest_mode, constant scales (a static output oneDNN may take) */
    { "resize_nearest_up_const", "Resize", NULL, 3, { IN(1, 2, 3, 4), OMIT, WF(k_sc_up, 4) },
      NO_ATTR, OUT(1, 2, 6, 6), ref_resize_nd },
    { "resize_nearest_ceil_asym_i8", "Resize", NULL, 3, { FED(INT8, 2, 3, 5), OMIT,
      CSTF(F32, VF(1, 1.7f, 0.7f), 3) }, { AS("coordinate_transformation_mode", "asymmetric"),
      AS("nearest_mode", "ceil") }, OUTT(INT8, 2, 5, 3), ref_resize_nd },
    { "resize_nearest_prefer_ceil_tf_nn", "Resize", NULL, 4, { IN(1, 1, 4, 6), OMIT, OMIT,
      I64(1, 1, 7, 3) }, { AS("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
      AS("nearest_mode", "round_prefer_ceil") }, OUT(1, 1, 7, 3), ref_resize_nd },
    { "resize_nearest_floor_align_bool", "Resize", NULL, 4, { FED(BOOL, 1, 3, 4), OMIT, OMIT,
      I64(1, 5, 7) }, { AS("coordinate_transformation_mode", "align_corners"),
      AS("nearest_mode", "floor") }, OUTT(BOOL, 1, 5, 7), ref_resize_nd,
      .skip = ORT_NO_KERNEL("Resize on BOOL") },
    /* linear and cubic: sizes fed at run time (the output's shape follows them) */
    { "resize_linear_align_sizes_fed", "Resize", NULL, 4, { IN(1, 2, 4, 5), OMIT, OMIT,
      FI64(1, 2, 7, 3) }, { AS("mode", "linear"),
      AS("coordinate_transformation_mode", "align_corners") }, OUT(1, 2, 7, 3), ref_resize_nd,
      .runtime_shape = true },
    { "resize_linear_down_align_scales", "Resize", NULL, 3, { IN(1, 1, 2, 4), OMIT,
      WF(k_sc_down, 4) }, { AS("mode", "linear"),
      AS("coordinate_transformation_mode", "align_corners") }, OUT(1, 1, 1, 2), ref_resize_nd,
      .skip = { "ort", "ONNX Runtime's align_corners divides by the floored output length, not "
                "scale * in as ONNX's reference" },
      .known = { "dnnl", "oneDNN's align_corners divides by the floored output length, not "
                 "scale * in as ONNX's reference" } },
    { "resize_linear_pytorch_f64", "Resize", NULL, 4, { FED(F64, 2, 6, 4), OMIT, OMIT,
      I64(2, 1, 9) }, { AS("mode", "linear"),
      AS("coordinate_transformation_mode", "pytorch_half_pixel") }, OUTT(F64, 2, 1, 9),
      ref_resize_nd, .skip = ORT_NO_KERNEL("Resize on DOUBLE") },
    { "resize_cubic_exclude_mixed", "Resize", NULL, 3, { IN(1, 2, 5, 4), OMIT,
      WF(k_sc_mixed, 4) }, { AS("mode", "cubic"), AF("cubic_coeff_a", -0.5f),
      AI("exclude_outside", 1) }, OUT(1, 2, 4, 6), ref_resize_nd },
    { "resize_cubic_asym_scales_fed", "Resize", NULL, 3, { IN(1, 1, 4, 4), OMIT,
      FEDF(F32, k_sc_up, 4) }, { AS("mode", "cubic"),
      AS("coordinate_transformation_mode", "asymmetric") }, OUT(1, 1, 8, 6), ref_resize_nd,
      .runtime_shape = true },
    { "resize_trilinear_5d", "Resize", NULL, 3, { IN(1, 2, 4, 3, 6), OMIT, WF(k_sc_5d, 5) },
      { AS("mode", "linear") }, OUT(1, 2, 6, 6, 3), ref_resize_nd },
    /* tf_crop_and_resize: roi and extrapolation_value */
    { "resize_tf_crop_linear_extrapolate", "Resize", NULL, 4, { IN(1, 1, 5, 4),
      WF(k_roi, 8), OMIT, I64(1, 1, 4, 5) }, { AS("mode", "linear"),
      AS("coordinate_transformation_mode", "tf_crop_and_resize"),
      AF("extrapolation_value", 10) }, OUT(1, 1, 4, 5), ref_resize_nd },
    { "resize_tf_crop_nearest_roi_f64", "Resize", NULL, 4, { IN(6, 7),
      CSTF(F64, k_roi_f64, 4), OMIT, I64(3, 4) },
      { AS("coordinate_transformation_mode", "tf_crop_and_resize") }, OUT(3, 4), ref_resize_nd,
      .skip = { "ort", "ONNX Runtime reads a DOUBLE roi as FLOAT and refuses the session" } },
    /* a large output: the parallel loop */
    { "resize_linear_big_parallel", "Resize", NULL, 3, { IN(1, 4, 64, 64), OMIT,
      WF(VF(1, 1, 2, 2), 4) }, { AS("mode", "linear") }, OUT(1, 4, 128, 128), ref_resize_nd,
      .threads = 2 },
    /* the legacy forms: opset 10's Resize (asymmetric; nearest rounds up when shrinking),
     * Upsample with a scales input (opset 9) and attribute (opset 7) */
    { "resize_opset10_nearest_down", "Resize", NULL, 2, { IN(1, 1, 4, 6), WF(k_sc_down, 4) },
      NO_ATTR, OUT(1, 1, 2, 3), ref_resize_nd, .opset = 10 },
    { "upsample_opset9_nearest_i32", "Upsample", NULL, 2, { FED(INT32, 1, 2, 2, 3),
      WF(VF(1, 1, 2, 3), 4) }, NO_ATTR, OUTT(INT32, 1, 2, 4, 9), ref_resize_nd, .opset = 9 },
    { "upsample_opset7_linear", "Upsample", NULL, 1, { IN(1, 2, 3, 4) },
      { AS("mode", "linear"), AFLOATS("scales", 1, 1, 2, 2.5f) }, OUT(1, 2, 6, 10),
      ref_resize_nd, .opset = 7 },
    /* a negative scale is refused at run time */
    { "resize_negative_scale_fed", "Resize", NULL, 3, { IN(1, 1, 2, 2), OMIT,
      FEDF(F32, k_sc_neg, 4) }, NO_ATTR, OUT(1, 1, 4, 4), NULL, .expect_error = true,
      .runtime_shape = true },
};

const case_table ops_resample_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
