/* Sampling by coordinates a tensor supplies, on float and double: GridSample (any spatial
 * rank; nearest, linear and cubic; zeros, border and reflection padding; align_corners),
 * RoiAlign (avg and max, half_pixel and output_half_pixel) and MaxRoiPool.
 *
 * GridSample follows PyTorch's grid_sampler as ONNX's reference does: each grid point's
 * normalised coordinates (innermost first) are denormalised per axis, a coordinate outside
 * the borders is clamped (border) or reflected (reflection), and the taps around it (one
 * for nearest: rint in 2-D, round half away in 3-D; two for linear; four for cubic with
 * A = -0.75) read the input, or 0 outside it for zeros padding. RoiAlign averages (or takes
 * the largest weighted corner of, as ONNX Runtime and the reference do) bilinear samples on a
 * grid in each bin; MaxRoiPool takes the maximum of each bin of a rounded region.
 *
 * The grid, the regions and the batch indices are a request's tensors: a batch index out of
 * range, a region that is not finite or whose sampling grid is beyond 2^24 points per bin is
 * INVALID_ARGUMENT. Loops split across the plan's threads by batch element or region. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

#define GS_SPATIAL (BD_MAX_RANK - 2)
#define ROI_MAX_SAMPLES ((int64_t)1 << 24)

/* ---- GridSample -------------------------------------------------------------------------------- */

static int gs_mode(const bd_node *n)
{
    const char *m = bd_node_attr_string(n, "mode", "bilinear");
    return !strcmp(m, "bilinear") || !strcmp(m, "linear") ? GS_LINEAR
         : !strcmp(m, "nearest") ? GS_NEAREST
         : !strcmp(m, "bicubic") || !strcmp(m, "cubic") ? GS_CUBIC : -1;
}

static int gs_padding(const bd_node *n)
{
    const char *m = bd_node_attr_string(n, "padding_mode", "zeros");
    return !strcmp(m, "zeros") ? GS_ZEROS : !strcmp(m, "border") ? GS_BORDER
         : !strcmp(m, "reflection") ? GS_REFLECTION : -1;
}

static bool grid_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "GridSample: expects X, grid and one output");
    if (!nv_io_ok(n, 2, NV_DT_FLOATS, why, len))
        return false;
    if (gs_mode(n) < 0 || gs_padding(n) < 0)
        return nv_why(why, len, "GridSample: mode '%s' or padding_mode '%s'",
                      bd_node_attr_string(n, "mode", ""), bd_node_attr_string(n, "padding_mode", ""));
    const bd_shape *x = &n->inputs[0]->shape, *gr = &n->inputs[1]->shape;
    const bd_value *y = n->outputs[0];
    int r = x->rank;
    if (r < 3 || gr->rank != r || gr->dims[0] != x->dims[0] || gr->dims[r - 1] != r - 2)
        return nv_why(why, len, "GridSample: X [N, C, D...] and grid [N, D'..., %d]", r - 2);
    int64_t dims[BD_MAX_RANK] = { x->dims[0], x->dims[1] };
    for (int d = 2; d < r; d++)
        dims[d] = gr->dims[d - 1];
    bd_shape want = bd_shape_make(r, dims);
    if (y->dtype != n->inputs[0]->dtype || !bd_shape_equal(&y->shape, &want))
        return nv_why(why, len, "GridSample: Y must be X's dtype, [N, C, D'...]");
    return true;
}

typedef struct gs_job {
    const nv_step *s;
    const nv_tensor *x, *grid;
    nv_tensor     *y;
    int            ns;
    size_t         c, plane, points;   /* channels, X's spatial elements, grid points */
} gs_job;

/* V reflected into [LO, HI] until inside (PyTorch's reflect_coordinates). */
static double reflect(double v, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0)
        return lo;
    if (v < lo) {
        double dx = lo - v, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2) == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        double dx = v - hi, n = floor(dx / range), r = dx - n * range;
        return fmod(n, 2) == 0 ? hi - r : lo + r;
    }
    return v;
}

/* The index a tap at I reads along an axis of LEN, or -1 for a zero (zeros padding). */
static int64_t tap_index(int64_t i, int64_t len, int pad, bool align)
{
    if (i >= 0 && i < len)
        return i;
    if (pad == GS_ZEROS)
        return -1;
    if (pad == GS_BORDER)
        return i < 0 ? 0 : len - 1;
    double lo = align ? 0 : -0.5, hi = align ? (double)len - 1 : (double)len - 0.5;
    int64_t r = (int64_t)reflect((double)i, lo, hi);
    return r < 0 ? 0 : r >= len ? len - 1 : r;
}

typedef struct gs_taps {
    int     n;
    int64_t idx[4];
    double  w[4];
} gs_taps;

static void cubic_weights(double t, double *w)
{
    const double A = -0.75;
    double s = 1 - t;
    w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    w[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

/* The taps of normalised coordinate U along an axis of LEN. */
static void grid_taps(const nv_step *s, double u, int64_t len, int ns, bool single, gs_taps *t)
{
    int mode = s->op, pad = (int)s->ip[0];
    bool align = s->ip[1];
    double x = align ? (u + 1) / 2 * (double)(len - 1) : ((u + 1) * (double)len - 1) / 2;
    if (single)
        x = (float)x;                   /* FLOAT grids denormalise in float, as the reference */
    if (mode == GS_NEAREST)
        x = ns == 3 ? round(x) : nearbyint(x);
    double lo = align ? 0 : -0.5, hi = align ? (double)len - 1 : (double)len - 0.5;
    if (x < lo || x > hi) {
        if (pad == GS_BORDER)
            x = x < 0 ? 0 : x > (double)(len - 1) ? (double)(len - 1) : x;
        else if (pad == GS_REFLECTION)
            x = reflect(x, lo, hi);
    }
    if (!isfinite(x))                   /* a NaN or infinite grid value reads nothing */
        x = -1e9;
    x = x < -1e9 ? -1e9 : x > 1e9 ? 1e9 : x;
    if (mode == GS_NEAREST) {
        t->n = 1;
        t->idx[0] = tap_index((int64_t)x, len, pad, align);
        t->w[0] = 1;
        return;
    }
    double f = floor(x);
    int64_t i0 = (int64_t)f;
    if (mode == GS_LINEAR) {
        t->n = 2;
        t->w[0] = 1 - (x - f);
        t->w[1] = x - f;
    } else {
        t->n = 4;
        i0--;
        cubic_weights(x - f, t->w);
    }
    for (int k = 0; k < t->n; k++)
        t->idx[k] = tap_index(i0 + k, len, pad, align);
}

/* Batch elements [LO, LO + CNT). */
static void grid_batches(void *vjob, size_t lo, size_t cnt)
{
    const gs_job *j = vjob;
    const nv_tensor *x = j->x, *grid = j->grid;
    int ns = j->ns;
    size_t es = bd_dtype_size(x->dtype);
    bool single = grid->dtype == BD_DT_FLOAT;
    int64_t xst[GS_SPATIAL];
    nv_strides(ns, x->dims + 2, xst);
    for (size_t nb = lo; nb < lo + cnt; nb++)
        for (size_t p = 0; p < j->points; p++) {
            gs_taps t[GS_SPATIAL];
            size_t gat = (nb * j->points + p) * (size_t)ns;
            for (int d = 0; d < ns; d++)      /* the grid's last dim lists the innermost first */
                grid_taps(j->s, nv_get_f(grid->data, grid->dtype, gat + (size_t)(ns - 1 - d)),
                          x->dims[2 + d], ns, single, &t[d]);
            for (size_t c = 0; c < j->c; c++) {
                const char *xp = (const char *)x->data + (nb * j->c + c) * j->plane * es;
                int k[GS_SPATIAL] = { 0 };
                double acc = 0;
                for (;;) {
                    double w = 1;
                    int64_t off = 0;
                    bool zero = false;
                    for (int d = 0; d < ns; d++) {
                        w *= t[d].w[k[d]];
                        zero = zero || t[d].idx[k[d]] < 0;
                        off += t[d].idx[k[d]] * xst[d];
                    }
                    if (!zero)
                        acc += w * nv_get_f(xp, x->dtype, (size_t)off);
                    int d = ns - 1;
                    for (; d >= 0 && ++k[d] == t[d].n; d--)
                        k[d] = 0;
                    if (d < 0)
                        break;
                }
                nv_set_f(j->y->data, j->y->dtype, (nb * j->c + c) * j->points + p, acc);
            }
        }
}

static int grid_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    gs_job j = { .s = s, .x = &in[0], .grid = &in[1], .y = &out[0], .ns = in[0].rank - 2,
                 .c = (size_t)in[0].dims[1], .plane = 1, .points = 1 };
    for (int d = 0; d < j.ns; d++) {
        j.plane *= (size_t)in[0].dims[2 + d];
        j.points *= (size_t)in[1].dims[1 + d];
    }
    if (out[0].numel == 0)
        return 0;
    if (j.plane == 0) {                 /* nothing to read: every tap is outside */
        memset(out[0].data, 0, out[0].numel * bd_dtype_size(out[0].dtype));
        return 0;
    }
    nv_parallel_for((size_t)in[0].dims[0], out[0].numel * (s->op == GS_CUBIC ? 16 : 4),
                    grid_batches, &j);
    return 0;
}

static int grid_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = gs_mode(n);
    s->ip[0] = gs_padding(n);
    s->ip[1] = bd_node_attr_int(n, "align_corners", 0) != 0;
    s->run = grid_run;
    return 0;
}

/* ---- RoiAlign and MaxRoiPool ------------------------------------------------------------------ */

/* X [N, C, H, W], rois [R, COLS] of X's float type, and Y [R, C, OH, OW]; batch_indices [R]
 * INT64 when given (RoiAlign). */
static bool roi_shapes_ok(const bd_node *n, int64_t cols, int64_t oh, int64_t ow)
{
    const bd_value *x = n->inputs[0], *rois = n->inputs[1], *bi = bd_node_input(n, 2);
    const bd_shape *xs = &x->shape, *rs = &rois->shape;
    if (xs->rank != 4 || rs->rank != 2 || rs->dims[1] != cols || rois->dtype != x->dtype)
        return false;
    if (bi && (!nv_value_ok(bi, NV_DT(BD_DT_INT64)) || bi->shape.rank != 1 ||
               bi->shape.dims[0] != rs->dims[0]))
        return false;
    int64_t dims[4] = { rs->dims[0], xs->dims[1], oh, ow };
    bd_shape want = bd_shape_make(4, dims);
    return n->outputs[0]->dtype == x->dtype && bd_shape_equal(&n->outputs[0]->shape, &want);
}

static bool roialign_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs != 3 || !n->inputs[0] || !n->inputs[1] || !n->inputs[2] || n->n_outputs != 1)
        return nv_why(why, len, "RoiAlign: expects X, rois, batch_indices and one output");
    if (!nv_io_ok(n, 2, NV_DT_FLOATS, why, len))
        return false;
    const char *mode = bd_node_attr_string(n, "mode", "avg");
    const char *ctm = bd_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if ((strcmp(mode, "avg") && strcmp(mode, "max")) ||
        (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel")))
        return nv_why(why, len, "RoiAlign: mode '%s' or coordinate_transformation_mode '%s'",
                      mode, ctm);
    if (bd_graph_opset(g) < 16 && !bd_node_attr(n, "coordinate_transformation_mode"))
        return nv_why(why, len, "RoiAlign: opset %lld's output_half_pixel default is not "
                      "implemented", (long long)bd_graph_opset(g));
    int64_t oh = bd_node_attr_int(n, "output_height", 1), ow = bd_node_attr_int(n, "output_width", 1);
    if (oh < 1 || ow < 1 || bd_node_attr_int(n, "sampling_ratio", 0) < 0)
        return nv_why(why, len, "RoiAlign: output_height, output_width or sampling_ratio");
    if (!roi_shapes_ok(n, 4, oh, ow))
        return nv_why(why, len, "RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] and "
                      "Y [R, C, %lld, %lld]", (long long)oh, (long long)ow);
    return true;
}

typedef struct roi_job {
    const nv_step *s;
    const nv_tensor *x, *rois;
    nv_tensor     *y;
    const int64_t *batch;            /* per region, checked */
    int64_t        c, h, w, oh, ow;
} roi_job;

/* One bilinear sample of RoiAlign at (Y, X): four positions and weights (all 0 outside). */
typedef struct roi_sample {
    int64_t pos[4];
    double  w[4];
} roi_sample;

static void roi_bilinear(double y, double x, int64_t h, int64_t w, roi_sample *s)
{
    memset(s, 0, sizeof *s);
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w)
        return;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) {
        yh = yl = h - 1;
        y = (double)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= w - 1) {
        xh = xl = w - 1;
        x = (double)xl;
    } else {
        xh = xl + 1;
    }
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
    s->pos[0] = yl * w + xl;
    s->pos[1] = yl * w + xh;
    s->pos[2] = yh * w + xl;
    s->pos[3] = yh * w + xh;
    s->w[0] = hy * hx;
    s->w[1] = hy * lx;
    s->w[2] = ly * hx;
    s->w[3] = ly * lx;
}

/* The region's sampling: start, bin size and grid per axis (y then x). */
typedef struct roi_grid {
    double  start[2], bin[2];
    int64_t n[2];
} roi_grid;

static int roi_grid_of(const nv_step *s, const nv_tensor *rois, size_t r, int64_t oh, int64_t ow,
                       roi_grid *gr, bd_error *err)
{
    double scale = s->fp[0], off = s->ip[2] ? 0.5 : 0, v[4];
    for (int k = 0; k < 4; k++) {
        v[k] = nv_get_f(rois->data, rois->dtype, r * 4 + (size_t)k) * scale - off;
        if (!isfinite(v[k]))
            return bd_error_set(err, BD_EINVAL, "RoiAlign: region %zu is not finite", r);
    }
    double rw = v[2] - v[0], rh = v[3] - v[1];
    if (!s->ip[2]) {                    /* output_half_pixel: malformed regions become 1 x 1 */
        rw = rw > 1 ? rw : 1;
        rh = rh > 1 ? rh : 1;
    }
    int64_t ratio = s->ip[1], out[2] = { oh, ow };
    double size[2] = { rh, rw };
    gr->start[0] = v[1];
    gr->start[1] = v[0];
    for (int a = 0; a < 2; a++) {
        gr->bin[a] = size[a] / (double)out[a];
        double g = ratio > 0 ? (double)ratio : ceil(size[a] / (double)out[a]);
        if (g > (double)ROI_MAX_SAMPLES)
            return bd_error_set(err, BD_EINVAL, "RoiAlign: region %zu needs a sampling grid of "
                                "%g points per bin", r, g);
        gr->n[a] = g > 0 ? (int64_t)g : 0;
    }
    if (gr->n[0] * gr->n[1] > ROI_MAX_SAMPLES)
        return bd_error_set(err, BD_EINVAL, "RoiAlign: region %zu needs %lld samples per bin", r,
                            (long long)(gr->n[0] * gr->n[1]));
    return 0;
}

/* Regions [LO, LO + CNT): every bin of every channel. */
static void roialign_regions(void *vjob, size_t lo, size_t cnt)
{
    const roi_job *j = vjob;
    const nv_tensor *x = j->x;
    bool max = j->s->op;
    size_t es = bd_dtype_size(x->dtype), plane = (size_t)(j->h * j->w);
    size_t bins = (size_t)(j->oh * j->ow);
    for (size_t r = lo; r < lo + cnt; r++) {
        roi_grid gr;
        roi_grid_of(j->s, j->rois, r, j->oh, j->ow, &gr, NULL);   /* checked before */
        const char *xb = (const char *)x->data + (size_t)j->batch[r] * (size_t)j->c * plane * es;
        int64_t count = gr.n[0] * gr.n[1] > 1 ? gr.n[0] * gr.n[1] : 1;
        for (size_t b = 0; b < bins; b++) {
            int64_t ph = (int64_t)b / j->ow, pw = (int64_t)b % j->ow;
            for (int64_t c = 0; c < j->c; c++)
                nv_set_f(j->y->data, j->y->dtype, (r * (size_t)j->c + (size_t)c) * bins + b, 0);
            for (int64_t iy = 0; iy < gr.n[0]; iy++)
                for (int64_t ix = 0; ix < gr.n[1]; ix++) {
                    double yy = gr.start[0] + (double)ph * gr.bin[0] +
                                ((double)iy + 0.5) * gr.bin[0] / (double)gr.n[0];
                    double xx = gr.start[1] + (double)pw * gr.bin[1] +
                                ((double)ix + 0.5) * gr.bin[1] / (double)gr.n[1];
                    roi_sample sm;
                    roi_bilinear(yy, xx, j->h, j->w, &sm);
                    bool first = iy == 0 && ix == 0;
                    for (int64_t c = 0; c < j->c; c++) {
                        const char *xc = xb + (size_t)c * plane * es;
                        size_t at = (r * (size_t)j->c + (size_t)c) * bins + b;
                        double v[4], acc = nv_get_f(j->y->data, j->y->dtype, at);
                        for (int k = 0; k < 4; k++)
                            v[k] = sm.w[k] * nv_get_f(xc, x->dtype, (size_t)sm.pos[k]);
                        if (max) {
                            double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                            acc = first || m > acc ? m : acc;
                        } else {
                            acc += v[0] + v[1] + v[2] + v[3];
                        }
                        nv_set_f(j->y->data, j->y->dtype, at, acc);
                    }
                }
            for (int64_t c = 0; !max && c < j->c; c++) {
                size_t at = (r * (size_t)j->c + (size_t)c) * bins + b;
                nv_set_f(j->y->data, j->y->dtype, at,
                         nv_get_f(j->y->data, j->y->dtype, at) / (double)count);
            }
        }
    }
}

/* Every region's batch index into BATCH (checked against N) and its grid (checked). */
static int roi_check(const nv_step *s, const nv_tensor *in, int64_t *batch, bd_error *err)
{
    size_t nr = (size_t)in[1].dims[0];
    for (size_t r = 0; r < nr; r++) {
        int64_t b = nv_get_i(in[2].data, in[2].dtype, r);
        if (b < 0 || b >= in[0].dims[0])
            return bd_error_set(err, BD_EINVAL, "RoiAlign: batch index %lld of region %zu is "
                                "outside the batch of %lld", (long long)b, r,
                                (long long)in[0].dims[0]);
        batch[r] = b;
        roi_grid gr;
        int rc = roi_grid_of(s, &in[1], r, s->ip[3], s->ip[4], &gr, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int roialign_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                        bd_error *err)
{
    int64_t *batch = nv_scratch(env);
    int rc = roi_check(s, in, batch, err);
    if (rc || out[0].numel == 0)
        return rc;
    if (in[0].dims[2] == 0 || in[0].dims[3] == 0)
        return bd_error_set(err, BD_EINVAL, "RoiAlign: X has no pixel to sample");
    roi_job j = { .s = s, .x = &in[0], .rois = &in[1], .y = &out[0], .batch = batch,
                  .c = in[0].dims[1], .h = in[0].dims[2], .w = in[0].dims[3], .oh = s->ip[3],
                  .ow = s->ip[4] };
    nv_parallel_for((size_t)in[1].dims[0], out[0].numel * 16, roialign_regions, &j);
    return 0;
}

static int roialign_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(bd_node_attr_string(n, "mode", "avg"), "max");
    s->fp[0] = bd_node_attr_float(n, "spatial_scale", 1.0f);
    s->ip[1] = bd_node_attr_int(n, "sampling_ratio", 0);
    s->ip[2] = !strcmp(bd_node_attr_string(n, "coordinate_transformation_mode", "half_pixel"),
                       "half_pixel");
    s->ip[3] = bd_node_attr_int(n, "output_height", 1);
    s->ip[4] = bd_node_attr_int(n, "output_width", 1);
    s->scratch = (size_t)n->inputs[1]->shape.dims[0] * sizeof(int64_t);
    s->run = roialign_run;
    return 0;
}

/* ---- MaxRoiPool ------------------------------------------------------------------------------- */

static bool roipool_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "MaxRoiPool: expects X, rois and one output");
    if (!nv_io_ok(n, 2, NV_DT_FLOATS, why, len))
        return false;
    const int64_t *ps;
    if (bd_node_attr_ints(n, "pooled_shape", &ps) != 2 || ps[0] < 1 || ps[1] < 1)
        return nv_why(why, len, "MaxRoiPool: pooled_shape must be two sizes >= 1");
    if (!(bd_node_attr_float(n, "spatial_scale", 1.0f) > 0))
        return nv_why(why, len, "MaxRoiPool: spatial_scale must be positive");
    if (!roi_shapes_ok(n, 5, ps[0], ps[1]))
        return nv_why(why, len, "MaxRoiPool: X [N, C, H, W], rois [R, 5] and Y [R, C, %lld, %lld]",
                      (long long)ps[0], (long long)ps[1]);
    return true;
}

/* Region R's corner (a coordinate times the scale, rounded half away from zero), computed in
 * X's precision; false when it is not finite or beyond int32. */
static bool roi_corner(const nv_tensor *rois, size_t r, int k, double scale, int64_t *out)
{
    double v = nv_get_f(rois->data, rois->dtype, r * 5 + (size_t)k);
    v = rois->dtype == BD_DT_FLOAT ? (double)((float)v * (float)scale) : v * scale;
    if (!(fabs(v) < 1e9))
        return false;
    *out = (int64_t)round(v);
    return true;
}

/* Bin edge I of size BIN, in X's precision (FLOAT rounds the product as the reference does). */
static double bin_edge(int dtype, int64_t i, double bin)
{
    return dtype == BD_DT_FLOAT ? (double)((float)i * (float)bin) : (double)i * bin;
}

static int roipool_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                       bd_error *err)
{
    (void)env;
    const nv_tensor *x = &in[0], *rois = &in[1];
    int64_t c = x->dims[1], h = x->dims[2], w = x->dims[3], oh = s->ip[0], ow = s->ip[1];
    size_t es = bd_dtype_size(x->dtype), plane = (size_t)(h * w), bins = (size_t)(oh * ow);
    for (size_t r = 0; r < (size_t)rois->dims[0]; r++) {
        double bv = nv_get_f(rois->data, rois->dtype, r * 5);
        int64_t b = bv > -2 && bv < 9e18 ? (int64_t)bv : -1, e[4];
        if (b < 0 || b >= x->dims[0])
            return bd_error_set(err, BD_EINVAL, "MaxRoiPool: batch index %g of region %zu is "
                                "outside the batch of %lld", bv, r, (long long)x->dims[0]);
        for (int k = 0; k < 4; k++)
            if (!roi_corner(rois, r, k + 1, s->fp[0], &e[k]))
                return bd_error_set(err, BD_EINVAL, "MaxRoiPool: region %zu is not finite or "
                                    "too large", r);
        int64_t rw = e[2] - e[0] + 1 > 1 ? e[2] - e[0] + 1 : 1;
        int64_t rh = e[3] - e[1] + 1 > 1 ? e[3] - e[1] + 1 : 1;
        double bh = (double)rh / (double)oh, bw = (double)rw / (double)ow;
        if (x->dtype == BD_DT_FLOAT) {
            bh = (float)bh;
            bw = (float)bw;
        }
        for (size_t q = 0; q < bins; q++) {
            int64_t ph = (int64_t)q / ow, pw = (int64_t)q % ow;
            int64_t h0 = (int64_t)floor(bin_edge(x->dtype, ph, bh)) + e[1];
            int64_t h1 = (int64_t)ceil(bin_edge(x->dtype, ph + 1, bh)) + e[1];
            int64_t w0 = (int64_t)floor(bin_edge(x->dtype, pw, bw)) + e[0];
            int64_t w1 = (int64_t)ceil(bin_edge(x->dtype, pw + 1, bw)) + e[0];
            h0 = h0 < 0 ? 0 : h0 > h ? h : h0;
            h1 = h1 < 0 ? 0 : h1 > h ? h : h1;
            w0 = w0 < 0 ? 0 : w0 > w ? w : w0;
            w1 = w1 < 0 ? 0 : w1 > w ? w : w1;
            for (int64_t ch = 0; ch < c; ch++) {
                const char *xc = (const char *)x->data + ((size_t)b * (size_t)c + (size_t)ch) * plane * es;
                double m = 0;
                bool any = false;
                for (int64_t yy = h0; yy < h1; yy++)
                    for (int64_t xx = w0; xx < w1; xx++) {
                        double v = nv_get_f(xc, x->dtype, (size_t)(yy * w + xx));
                        m = !any || v > m ? v : m;
                        any = true;
                    }
                nv_set_f(out[0].data, out[0].dtype, (r * (size_t)c + (size_t)ch) * bins + q, m);
            }
        }
    }
    return 0;
}

static int roipool_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const int64_t *ps;
    bd_node_attr_ints(n, "pooled_shape", &ps);
    s->ip[0] = ps[0];
    s->ip[1] = ps[1];
    s->fp[0] = bd_node_attr_float(n, "spatial_scale", 1.0f);
    s->run = roipool_run;
    return 0;
}

const nv_op nv_sample_ops[] = {
    { "GridSample", grid_supports, grid_prepare },
    { "RoiAlign", roialign_supports, roialign_prepare },
    { "MaxRoiPool", roipool_supports, roipool_prepare },
};
const size_t nv_sample_n = sizeof nv_sample_ops / sizeof nv_sample_ops[0];
