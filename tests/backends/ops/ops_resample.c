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

/* ---- GridSample ------------------------------------------------------------------------------ */

/* V reflected into [LO, HI], as PyTorch's reflect_coordinates. */
static double reflect_ref(double v, double lo, double hi)
{
    double rng = hi - lo;
    if (v < lo) {
        double dx = lo - v;
        int64_t n = (int64_t)(dx / rng);
        double r = dx - (double)n * rng;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        double dx = v - hi;
        int64_t n = (int64_t)(dx / rng);
        double r = dx - (double)n * rng;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return v;
}

/* The element at integer position I of an axis of LEN, by padding mode; -1 reads a zero. */
static int64_t pixel_ref(int64_t i, int64_t len, const char *pad, bool align)
{
    if (!strcmp(pad, "zeros"))
        return i >= 0 && i < len ? i : -1;
    if (!strcmp(pad, "border"))
        return i < 0 ? 0 : i >= len ? len - 1 : i;
    return (int64_t)reflect_ref((double)i, align ? 0 : -0.5, align ? (double)len - 1
                                                               : (double)len - 0.5);
}

static void ref_grid_sample(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0], *grid = &in[1];
    int ns = x->rank - 2;
    const char *mode = attr_s(c, "mode", "bilinear"), *pad = attr_s(c, "padding_mode", "zeros");
    bool align = attr_i(c, "align_corners", 0);
    int64_t o[BD_MAX_RANK], at[BD_MAX_RANK];
    size_t points = numel(ns, out->dims + 2);
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, o);
        size_t p = j % points, nb = (size_t)o[0];
        int64_t idx[6][4];
        double w[6][4];
        int nt[6];
        for (int d = 0; d < ns; d++) {
            double u = grid->f[(nb * points + p) * (size_t)ns + (size_t)(ns - 1 - d)];
            double len = (double)x->dims[2 + d];
            double v = align ? (u + 1) / 2 * (len - 1) : ((u + 1) * len - 1) / 2;
            if (grid->dtype == F32)
                v = (float)v;
            if (!strcmp(mode, "nearest"))
                v = ns == 3 ? (v >= 0 ? floor(v + 0.5) : ceil(v - 0.5)) : nearbyint(v);
            double lo = align ? 0 : -0.5, hi = align ? len - 1 : len - 0.5;
            if (v < lo || v > hi) {
                if (!strcmp(pad, "border"))
                    v = v < 0 ? 0 : v > len - 1 ? len - 1 : v;
                else if (!strcmp(pad, "reflection"))
                    v = reflect_ref(v, lo, hi);
            }
            if (!strcmp(mode, "nearest")) {
                nt[d] = 1;
                idx[d][0] = pixel_ref((int64_t)v, x->dims[2 + d], pad, align);
                w[d][0] = 1;
                continue;
            }
            double f = floor(v), t = v - f;
            bool cubic = !strcmp(mode, "bicubic") || !strcmp(mode, "cubic");
            nt[d] = cubic ? 4 : 2;
            if (cubic) {
                const double A = -0.75;
                double s2 = 1 - t;
                w[d][0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
                w[d][1] = ((A + 2) * t - (A + 3)) * t * t + 1;
                w[d][2] = ((A + 2) * s2 - (A + 3)) * s2 * s2 + 1;
                w[d][3] = ((A * (s2 + 1) - 5 * A) * (s2 + 1) + 8 * A) * (s2 + 1) - 4 * A;
            } else {
                w[d][0] = 1 - t;
                w[d][1] = t;
            }
            for (int k = 0; k < nt[d]; k++)
                idx[d][k] = pixel_ref((int64_t)f - (cubic ? 1 : 0) + k, x->dims[2 + d], pad, align);
        }
        int k[6] = { 0 };
        double acc = 0;
        for (;;) {
            double ww = 1;
            bool zero = false;
            at[0] = o[0];
            at[1] = o[1];
            for (int d = 0; d < ns; d++) {
                ww *= w[d][k[d]];
                zero = zero || idx[d][k[d]] < 0;
                at[2 + d] = idx[d][k[d]];
            }
            if (!zero)
                acc += ww * x->f[ravel(at, x->rank, x->dims)];
            int d = ns - 1;
            for (; d >= 0 && ++k[d] == nt[d]; d--)
                k[d] = 0;
            if (d < 0)
                break;
        }
        out->f[j] = acc;
    }
}

/* ---- RoiAlign and MaxRoiPool ----------------------------------------------------------------- */

/* One bilinear sample at (Y, X) of an H x W plane P, each corner weighted (the corners
 * themselves into V for the max mode). */
static double roi_sample_ref(const double *p, int64_t h, int64_t w, double y, double x, double *v)
{
    v[0] = v[1] = v[2] = v[3] = 0;
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w)
        return 0;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= h - 1) {
        y0 = y1 = h - 1;
        y = (double)y0;
    }
    if (x0 >= w - 1) {
        x0 = x1 = w - 1;
        x = (double)x0;
    }
    double ly = y - (double)y0, lx = x - (double)x0;
    v[0] = (1 - ly) * (1 - lx) * p[y0 * w + x0];
    v[1] = (1 - ly) * lx * p[y0 * w + x1];
    v[2] = ly * (1 - lx) * p[y1 * w + x0];
    v[3] = ly * lx * p[y1 * w + x1];
    return v[0] + v[1] + v[2] + v[3];
}

static void ref_roi_align(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], OH = out->dims[2], OW = out->dims[3];
    bool half = !strcmp(attr_s(c, "coordinate_transformation_mode", "half_pixel"), "half_pixel");
    bool max = !strcmp(attr_s(c, "mode", "avg"), "max");
    double scale = attr_f(c, "spatial_scale", 1), off = half ? 0.5 : 0;
    int64_t ratio = attr_i(c, "sampling_ratio", 0);
    for (int64_t r = 0; r < out->dims[0]; r++) {
        const double *roi = in[1].f + r * 4;
        double x0 = roi[0] * scale - off, y0 = roi[1] * scale - off;
        double rw = roi[2] * scale - off - x0, rh = roi[3] * scale - off - y0;
        if (!half) {
            rw = fmax(rw, 1);
            rh = fmax(rh, 1);
        }
        double bh = rh / (double)OH, bw = rw / (double)OW;
        int64_t gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)OH);
        int64_t gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)OW);
        double count = (double)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t ch = 0; ch < C; ch++) {
            const double *p = x->f + (in[2].i[r] * C + ch) * H * W;
            for (int64_t ph = 0; ph < OH; ph++)
                for (int64_t pw = 0; pw < OW; pw++) {
                    double acc = 0, v[4];
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double s = roi_sample_ref(p, H, W, yy, xx, v);
                            double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                            acc = !max ? acc + s : (iy == 0 && ix == 0) || m > acc ? m : acc;
                        }
                    out->f[((r * C + ch) * OH + ph) * OW + pw] = max ? acc : acc / count;
                }
        }
    }
}

static void ref_max_roi_pool(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], OH = out->dims[2], OW = out->dims[3];
    float scale = attr_f(c, "spatial_scale", 1);
    for (int64_t r = 0; r < out->dims[0]; r++) {
        const double *roi = in[1].f + r * 5;
        int64_t b = (int64_t)roi[0];
        int64_t x0 = (int64_t)roundf((float)roi[1] * scale), y0 = (int64_t)roundf((float)roi[2] * scale);
        int64_t x1 = (int64_t)roundf((float)roi[3] * scale), y1 = (int64_t)roundf((float)roi[4] * scale);
        float bh = (float)(y1 - y0 + 1 > 1 ? y1 - y0 + 1 : 1) / (float)OH;
        float bw = (float)(x1 - x0 + 1 > 1 ? x1 - x0 + 1 : 1) / (float)OW;
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t ph = 0; ph < OH; ph++)
                for (int64_t pw = 0; pw < OW; pw++) {
                    int64_t hs = (int64_t)floorf((float)ph * bh) + y0;
                    int64_t he = (int64_t)ceilf((float)(ph + 1) * bh) + y0;
                    int64_t ws = (int64_t)floorf((float)pw * bw) + x0;
                    int64_t we = (int64_t)ceilf((float)(pw + 1) * bw) + x0;
                    hs = hs < 0 ? 0 : hs > H ? H : hs;
                    he = he < 0 ? 0 : he > H ? H : he;
                    ws = ws < 0 ? 0 : ws > W ? W : ws;
                    we = we < 0 ? 0 : we > W ? W : we;
                    double m = 0;
                    bool any = false;
                    for (int64_t yy = hs; yy < he; yy++)
                        for (int64_t xx = ws; xx < we; xx++) {
                            double v = x->f[((b * C + ch) * H + yy) * W + xx];
                            m = !any || v > m ? v : m;
                            any = true;
                        }
                    out->f[((r * C + ch) * OH + ph) * OW + pw] = m;
                }
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
    /* GridSample: each mode and padding mode, align_corners, DOUBLE, a 3-D grid */
    { "gridsample_bilinear_zeros", "GridSample", NULL, 2, { IN(1, 2, 4, 5),
      INR(-1.2f, 1.2f, 1, 3, 4, 2) }, NO_ATTR, OUT(1, 2, 3, 4), ref_grid_sample },
    { "gridsample_nearest_border_align", "GridSample", NULL, 2, { IN(2, 3, 5, 4),
      INR(-1.5f, 1.5f, 2, 4, 3, 2) }, { AS("mode", "nearest"), AS("padding_mode", "border"),
      AI("align_corners", 1) }, OUT(2, 3, 4, 3), ref_grid_sample },
    { "gridsample_bicubic_reflection", "GridSample", NULL, 2, { IN(1, 2, 6, 5),
      INR(-2.5f, 2.5f, 1, 4, 4, 2) }, { AS("mode", "bicubic"), AS("padding_mode", "reflection") },
      OUT(1, 2, 4, 4), ref_grid_sample },
    { "gridsample_bilinear_reflection_align_f64", "GridSample", NULL, 2, { FED(F64, 1, 3, 4, 4),
      FEDR(F64, -2, 2, 1, 5, 2, 2) }, { AS("padding_mode", "reflection"), AI("align_corners", 1) },
      OUTT(F64, 1, 3, 5, 2), ref_grid_sample, .skip = ORT_NO_KERNEL("GridSample on DOUBLE") },
    { "gridsample_3d_bilinear_border", "GridSample", NULL, 2, { IN(1, 2, 3, 4, 5),
      INR(-1.2f, 1.2f, 1, 2, 3, 2, 3) }, { AS("padding_mode", "border") }, OUT(1, 2, 2, 3, 2),
      ref_grid_sample, .skip = { "ort", "ONNX Runtime's GridSample of opset 16 is 2-D only" } },
    /* RoiAlign: avg with half_pixel, max with output_half_pixel and an adaptive grid */
    { "roialign_avg_half_pixel", "RoiAlign", NULL, 3, { IN(2, 3, 6, 7),
      WF(VF(0.5f, 1, 4.5f, 5, 1, 0.2f, 6.3f, 3.1f, -1, -1, 2, 2), 3, 4), CSTV(INT64, V(0, 1, 1), 3) },
      { AI("output_height", 3), AI("output_width", 2), AI("sampling_ratio", 2) },
      OUT(3, 3, 3, 2), ref_roi_align },
    { "roialign_max_output_half_pixel", "RoiAlign", NULL, 3, { IN(2, 2, 8, 8),
      FEDF(F32, VF(1, 2, 12, 14, 0, 0, 15, 9), 2, 4), FEDV(INT64, V(1, 0), 2) },
      { AS("mode", "max"), AS("coordinate_transformation_mode", "output_half_pixel"),
        AF("spatial_scale", 0.5f), AI("output_height", 2), AI("output_width", 3) },
      OUT(2, 2, 2, 3), ref_roi_align },
    { "roialign_batch_index_out_of_range", "RoiAlign", NULL, 3, { IN(2, 2, 4, 4),
      FEDF(F32, VF(0, 0, 2, 2), 1, 4), FEDV(INT64, V(2), 1) }, NO_ATTR, OUT(1, 2, 1, 1), NULL,
      .expect_error = true },
    /* MaxRoiPool */
    { "maxroipool", "MaxRoiPool", NULL, 2, { INR(0.1f, 1, 2, 3, 8, 9),
      FEDF(F32, VF(0, 1, 1, 5, 6, 1, 0, 2, 8, 7.6f, 1, 3, 3, 3, 3), 3, 5) },
      { AINTS("pooled_shape", 2, 3) }, OUT(3, 3, 2, 3), ref_max_roi_pool },
    { "maxroipool_scaled_f64", "MaxRoiPool", NULL, 2, { FED(F64, 1, 2, 6, 6),
      FEDF(F64, VF(0, 2, 1, 9, 11), 1, 5) }, { AINTS("pooled_shape", 3, 2),
      AF("spatial_scale", 0.5f) }, OUTT(F64, 1, 2, 3, 2), ref_max_roi_pool,
      .skip = ORT_NO_KERNEL("MaxRoiPool on DOUBLE") },
    { "maxroipool_batch_out_of_range", "MaxRoiPool", NULL, 2, { IN(1, 1, 4, 4),
      FEDF(F32, VF(1, 0, 0, 2, 2), 1, 5) }, { AINTS("pooled_shape", 1, 1) }, OUT(1, 1, 1, 1),
      NULL, .expect_error = true },
    /* sizes of 2^40 elements, and a region that is not finite, are refused at run time */
    { "resize_sizes_fed_beyond_bounds", "Resize", NULL, 4, { IN(1, 1, 2, 2), OMIT, OMIT,
      FI64(1, 1, 1048576, 1048576) }, NO_ATTR, OUT(1, 1, 1, 1), NULL, .expect_error = true,
      .runtime_shape = true, .skip = { "ort", "ONNX Runtime would try to allocate 4 TB" } },
    { "roialign_region_not_finite", "RoiAlign", NULL, 3, { IN(1, 2, 4, 4),
      FEDF(F32, VF(0, 0, INFINITY, 2), 1, 4), FEDV(INT64, V(0), 1) }, NO_ATTR, OUT(1, 2, 1, 1),
      NULL, .expect_error = true },
    /* a negative scale is refused at run time */
    { "resize_negative_scale_fed", "Resize", NULL, 3, { IN(1, 1, 2, 2), OMIT,
      FEDF(F32, k_sc_neg, 4) }, NO_ATTR, OUT(1, 1, 4, 4), NULL, .expect_error = true,
      .runtime_shape = true },
};

const case_table ops_resample_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
