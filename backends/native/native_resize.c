/* Resize (opsets 10 to 13 and on: scales or sizes, roi, every coordinate transformation mode,
 * nearest with every nearest_mode, linear, cubic with cubic_coeff_a and exclude_outside,
 * tf_crop_and_resize's extrapolation_value; N-d) and the legacy Upsample (opsets 7 and 9).
 *
 * The output's dims come from `sizes`, else from floor(in * scale); when either is a run-time
 * tensor the output's shape is only known at run time (nv_output_shape). Each output
 * coordinate maps back to an input coordinate per axis (coordinate_transformation_mode, with
 * the scale given, or out / in for sizes), and the output element is the sum, over every
 * combination of one tap per axis, of the taps' weights' product times the input element:
 *
 *   nearest  one tap: the rounded coordinate (nearest_mode; opset 10 and Upsample: truncated,
 *            or rounded up when the axis shrinks, as ONNX Runtime did)
 *   linear   two taps around the coordinate, cubic four (Keys' kernel with cubic_coeff_a);
 *            an integer coordinate is its left neighbour at ratio 1, as ONNX's reference
 *
 * Taps outside the input read the edge element (exclude_outside instead drops them and
 * renormalises), which is ONNX's reference: the input padded with its edges. Under
 * tf_crop_and_resize a coordinate outside the input gives extrapolation_value. Coordinates
 * are computed in double, as the reference does (align_corners and tf_crop_and_resize use
 * the output length scale * in, not its floor). Nearest moves elements of any dtype; linear and
 * cubic interpolate float and double. The loops split the output's rows across threads;
 * nothing is allocated (taps are computed per row and per element). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_TF_CROP };
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };

/* Parameters (ip): mode, ctm, nearest, exclude_outside, channels-last spatial lists, the
 * legacy form (opset 10, Upsample), the count of attribute axes, the axes; fp: cubic_coeff_a,
 * extrapolation_value. heap: Upsample-7's scales attribute (as floats, IP_NSCALES of them). */
enum { IP_MODE, IP_CTM, IP_NEAREST, IP_EXCLUDE, IP_LAST, IP_LEGACY, IP_NSCALES, IP_NAXES,
       IP_AXES };

static int mode_of(const char *m)
{
    return !strcmp(m, "nearest") ? RS_NEAREST : !strcmp(m, "linear") ? RS_LINEAR
         : !strcmp(m, "cubic") ? RS_CUBIC : -1;
}

static int ctm_of(const char *m)
{
    static const char *const names[] = { "half_pixel", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_half_pixel_for_nn",
                                         "tf_crop_and_resize" };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(m, names[i]))
            return i;
    return -1;
}

static int nearest_of(const char *m)
{
    static const char *const names[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil" };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(m, names[i]))
            return i;
    return -1;
}

/* Upsample, and Resize of opset 10 (X, scales): asymmetric coordinates, truncated nearest. */
static bool legacy(const bd_node *n)
{
    return !strcmp(n->op_type, "Upsample") || n->n_inputs == 2;
}

/* The channels-last layout braid's TensorFlow importer writes (data_format NHWC). */
static bool channels_last(const bd_node *n)
{
    const char *f = bd_node_attr_string(n, "data_format", "NCHW");
    return !strcmp(f, "NHWC") || !strcmp(f, "NWC") || !strcmp(f, "NDHWC");
}

/* ---- supports ------------------------------------------------------------------------------- */

static bool attrs_ok(const bd_node *n, char *why, size_t len)
{
    const char *mode = bd_node_attr_string(n, "mode", "nearest");
    const char *ctm = bd_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = bd_node_attr_string(n, "nearest_mode", "round_prefer_floor");
    const char *f = bd_node_attr_string(n, "data_format", "NCHW");
    if (mode_of(mode) < 0 || ctm_of(ctm) < 0 || nearest_of(nm) < 0)
        return nv_why(why, len, "%s: mode '%s', coordinate_transformation_mode '%s' or "
                      "nearest_mode '%s'", n->op_type, mode, ctm, nm);
    if (bd_node_attr_int(n, "antialias", 0) ||
        strcmp(bd_node_attr_string(n, "keep_aspect_ratio_policy", "stretch"), "stretch"))
        return nv_why(why, len, "%s: antialias and keep_aspect_ratio_policy are not "
                      "implemented", n->op_type);
    if (strcmp(f, "NCHW") && strcmp(f, "NCW") && strcmp(f, "NCDHW") && !channels_last(n))
        return nv_why(why, len, "%s: data_format '%s'", n->op_type, f);
    const int64_t *axes;
    size_t na = bd_node_attr_ints(n, "axes", &axes);
    int rank = n->inputs[0]->shape.rank;
    bool seen[BD_MAX_RANK] = { false };
    for (size_t k = 0; k < na; k++) {
        int a = nv_axis(axes[k], rank);
        if (a < 0 || rank == 0 || seen[a])
            return nv_why(why, len, "%s: an axis out of range or repeated", n->op_type);
        seen[a] = true;
    }
    return true;
}

/* The operands: Upsample-7's scales attribute, or a FLOAT scales input; Resize's roi (FLOAT or
 * DOUBLE), scales (FLOAT) and sizes (INT64), each a static 1-D tensor when present. */
static bool operands_ok(const bd_node *n, char *why, size_t len)
{
    bool up = !strcmp(n->op_type, "Upsample");
    if (up && n->n_inputs == 1) {
        const bd_attr *a = bd_node_attr(n, "scales");
        if (!a || a->type != BD_ATTR_FLOATS || a->n != (size_t)n->inputs[0]->shape.rank)
            return nv_why(why, len, "Upsample: a scales attribute of one float per axis");
        return true;
    }
    if (n->n_inputs < 2 || n->n_inputs > 4 || (up && n->n_inputs != 2))
        return nv_why(why, len, "%s: unexpected inputs", n->op_type);
    bool two = n->n_inputs == 2;
    const bd_value *roi = two ? NULL : bd_node_input(n, 1);
    const bd_value *scales = bd_node_input(n, two ? 1 : 2), *sizes = bd_node_input(n, 3);
    if (roi && (!nv_value_ok(roi, NV_DT_FLOATS) || roi->shape.rank != 1))
        return nv_why(why, len, "%s: roi must be a FLOAT or DOUBLE vector", n->op_type);
    if (scales && (!nv_value_ok(scales, NV_DT(BD_DT_FLOAT)) || scales->shape.rank != 1))
        return nv_why(why, len, "%s: scales must be a FLOAT vector", n->op_type);
    if (sizes && (!nv_value_ok(sizes, NV_DT(BD_DT_INT64)) || sizes->shape.rank != 1))
        return nv_why(why, len, "%s: sizes must be an INT64 vector", n->op_type);
    if (!(scales && scales->shape.dims[0] > 0) && !(sizes && sizes->shape.dims[0] > 0))
        return nv_why(why, len, "%s: neither scales nor sizes is given", n->op_type);
    return true;
}

static bool resize_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects X and one output", n->op_type);
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int mode = mode_of(bd_node_attr_string(n, "mode", "nearest"));
    unsigned mask = mode == RS_NEAREST ? NV_DT_ANY : NV_DT_FLOATS;
    if (!nv_value_ok(x, mask) || !nv_output_ok(y, NV_DT(x->dtype)))
        return nv_why(why, len, "%s: X must be %s with a static shape, Y of its dtype", n->op_type,
                      mode == RS_NEAREST ? "of any dtype" : "float or double");
    if (x->shape.rank < 1 || (y->shape.rank >= 0 && y->shape.rank != x->shape.rank))
        return nv_why(why, len, "%s: Y must have X's rank (>= 1)", n->op_type);
    if (!nv_dtype_is_float(x->dtype) && !(NV_DT_INTS & NV_DT(x->dtype)) &&
        bd_node_attr_float(n, "extrapolation_value", 0) != 0)
        return nv_why(why, len, "%s: an extrapolation_value on %s", n->op_type,
                      bd_dtype_name(x->dtype));
    return attrs_ok(n, why, len) && operands_ok(n, why, len);
}

/* ---- the geometry of one run ------------------------------------------------------------------- */

typedef struct rs_axis {
    int64_t in, out;
    double  scale, length;         /* the scale, and scale * in (the reference's output length) */
    double  roi0, roi1;            /* tf_crop_and_resize's window, in [0, 1] of the input */
} rs_axis;

/* The axes the COUNT values of scales, sizes or roi halves describe into WHICH: the attribute
 * axes, every axis, or the spatial ones (TensorFlow's size input). False when COUNT fits none. */
static bool value_axes(const nv_step *s, int rank, int64_t count, int *which)
{
    if (s->ip[IP_NAXES]) {
        for (int64_t k = 0; k < s->ip[IP_NAXES]; k++)
            which[k] = nv_axis(s->ip[IP_AXES + k], rank);
        return count == s->ip[IP_NAXES];
    }
    int first = count == rank ? 0 : s->ip[IP_LAST] ? 1 : 2;
    if (count != rank && (count != rank - 2 || rank < 3))
        return false;
    for (int k = 0; k < count; k++)
        which[k] = first + k;
    return true;
}

/* Each axis's input and output lengths, scale and roi from this run's operands. */
static int resize_geometry(const nv_step *s, const nv_tensor *in, rs_axis *ax, bd_error *err)
{
    const nv_tensor *x = &in[0];
    int rank = x->rank, which[BD_MAX_RANK];
    const nv_tensor *roi = s->n_in > 2 && s->in[1] >= 0 ? &in[1] : NULL;
    const nv_tensor *sc = s->n_in == 2 ? &in[1] : s->n_in > 2 && s->in[2] >= 0 ? &in[2] : NULL;
    const nv_tensor *sz = s->n_in > 3 && s->in[3] >= 0 ? &in[3] : NULL;
    for (int d = 0; d < rank; d++)
        ax[d] = (rs_axis){ x->dims[d], x->dims[d], 1, (double)x->dims[d], 0, 1 };
    if (sz && sz->numel > 0) {
        int64_t v[BD_MAX_RANK];
        int64_t count = nv_run_ints(sz, v, BD_MAX_RANK, "sizes", err);
        if (count < 0)
            return (int)count;
        if (!value_axes(s, rank, count, which))
            return bd_error_set(err, BD_EINVAL, "sizes has %lld values for an input of rank %d",
                                (long long)count, rank);
        for (int64_t k = 0; k < count; k++) {
            rs_axis *a = &ax[which[k]];
            if (v[k] < 0 || (a->in == 0 && v[k] != 0))
                return bd_error_set(err, BD_EINVAL, "sizes[%lld] = %lld for an axis of %lld",
                                    (long long)k, (long long)v[k], (long long)a->in);
            a->out = v[k];
            a->scale = a->in ? (double)v[k] / (double)a->in : 1;
        }
    } else {
        const float *f = s->heap;
        int64_t count = s->ip[IP_NSCALES];
        if (sc) {
            f = sc->data;
            count = (int64_t)sc->numel;
        }
        if (count > BD_MAX_RANK || !value_axes(s, rank, count, which))
            return bd_error_set(err, BD_EINVAL, "scales has %lld values for an input of rank %d",
                                (long long)count, rank);
        for (int64_t k = 0; k < count; k++) {
            rs_axis *a = &ax[which[k]];
            double v = f[k], o = floor(v * (double)a->in);
            if (!(v > 0) || !(o < (double)NV_RUN_MAX_ELEMS))
                return bd_error_set(err, BD_EINVAL, "scales[%lld] = %g, expected a positive "
                                    "scale within the bounds", (long long)k, v);
            a->scale = v;
            a->out = (int64_t)o;
        }
    }
    for (int d = 0; d < rank; d++)
        ax[d].length = ax[d].scale * (double)ax[d].in;
    if (s->ip[IP_CTM] == CT_TF_CROP && !s->ip[IP_LEGACY]) {
        int64_t half = roi ? (int64_t)roi->numel / 2 : -1;
        if (!roi || roi->numel % 2 || !value_axes(s, rank, half, which))
            return bd_error_set(err, BD_EINVAL, "tf_crop_and_resize needs a roi of 2 values "
                                "per resized axis, got %zu", roi ? roi->numel : 0);
        for (int64_t k = 0; k < half; k++) {
            ax[which[k]].roi0 = nv_get_f(roi->data, roi->dtype, (size_t)k);
            ax[which[k]].roi1 = nv_get_f(roi->data, roi->dtype, (size_t)(half + k));
        }
    }
    return 0;
}

/* ---- taps ------------------------------------------------------------------------------------ */

typedef struct rs_taps {
    int     n;
    bool    outside;                /* tf_crop_and_resize: the coordinate is off the input */
    int64_t idx[4];                 /* element offsets along the axis (times its stride) */
    double  w[4];
} rs_taps;

/* The input coordinate of output coordinate X along axis A. */
static double source_coord(int ctm, const rs_axis *a, int64_t x)
{
    double xf = (double)x, in = (double)a->in;
    switch (ctm) {
    case CT_ALIGN:   return a->length == 1 ? 0 : xf * (in - 1) / (a->length - 1);
    case CT_ASYM:    return xf / a->scale;
    case CT_TF_NN:   return (xf + 0.5) / a->scale;
    case CT_PYTORCH: return a->length == 1 ? -0.5 : (xf + 0.5) / a->scale - 0.5;
    case CT_TF_CROP: {
        double c = a->length == 1 ? (a->roi1 - a->roi0) * (in - 1) / 2
                                   : xf * (a->roi1 - a->roi0) * (in - 1) / (a->length - 1);
        return c + a->roi0 * (in - 1);
    }
    }
    return (xf + 0.5) / a->scale - 0.5;
}

static void cubic_coeffs(double r, double A, double *c)
{
    double s = 1 - r;
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

static int64_t clamp_idx(double v, int64_t n)
{
    return v < 0 ? 0 : v > (double)(n - 1) ? n - 1 : (int64_t)v;
}

/* The taps of output coordinate X along axis A (input stride ST). */
static void axis_taps(const nv_step *s, const rs_axis *a, int64_t st, int64_t x, rs_taps *t)
{
    int ctm = s->ip[IP_LEGACY] ? CT_ASYM : (int)s->ip[IP_CTM];
    double c = source_coord(ctm, a, x);
    t->outside = ctm == CT_TF_CROP && (c < 0 || c > (double)(a->in - 1));
    if (s->ip[IP_MODE] == RS_NEAREST) {
        double f = floor(c), r = c - f, i;
        switch (s->ip[IP_LEGACY] ? NM_SIMPLE : (int)s->ip[IP_NEAREST]) {
        case NM_SIMPLE:      i = a->scale < 1 ? ceil(c) : trunc(c); break;
        case NM_FLOOR:       i = f; break;
        case NM_CEIL:        i = r == 0 ? f : f + 1; break;
        case NM_ROUND_CEIL:  i = r < 0.5 ? f : f + 1; break;
        default:             i = r <= 0.5 ? f : f + 1; break;
        }
        t->n = 1;
        t->idx[0] = clamp_idx(i, a->in) * st;
        t->w[0] = 1;
        return;
    }
    double base = c == floor(c) ? c - 1 : floor(c), r = c - base, w[4];
    int n = s->ip[IP_MODE] == RS_LINEAR ? 2 : 4;
    double first = n == 2 ? base : base - 1, sum = 0;
    if (n == 2) {
        w[0] = 1 - r;
        w[1] = r;
    } else {
        cubic_coeffs(r, s->fp[0], w);
    }
    for (int k = 0; k < n; k++) {
        if (s->ip[IP_EXCLUDE] && (first + k < 0 || first + k >= (double)a->in))
            w[k] = 0;
        sum += w[k];
    }
    t->n = 0;
    for (int k = 0; k < n; k++) {
        double wk = s->ip[IP_EXCLUDE] ? w[k] / sum : w[k];
        if (wk == 0)
            continue;               /* a zero tap adds nothing (an integer coordinate) */
        t->idx[t->n] = clamp_idx(first + k, a->in) * st;
        t->w[t->n++] = wk;
    }
}

/* ---- the kernel ---------------------------------------------------------------------------- */

typedef struct rs_job {
    const nv_step *s;
    const nv_tensor *x;
    nv_tensor     *y;
    const rs_axis *ax;
    int64_t        st[BD_MAX_RANK];   /* input strides */
    char           extra[8];          /* extrapolation_value in Y's dtype */
} rs_job;

/* Y's element at byte P from the taps of every axis: one element copied (nearest), the
 * extrapolation value, or the weighted sum over every combination of taps. */
static void resize_element(const rs_job *j, const rs_taps *t, int rank, char *p)
{
    const nv_tensor *x = j->x;
    size_t es = bd_dtype_size(x->dtype);
    bool outside = false;
    for (int d = 0; d < rank; d++)
        outside = outside || t[d].outside;
    if (outside) {
        memcpy(p, j->extra, es);
        return;
    }
    if (j->s->ip[IP_MODE] == RS_NEAREST) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += t[d].idx[0];
        memcpy(p, (const char *)x->data + off * (int64_t)es, es);
        return;
    }
    int c[BD_MAX_RANK] = { 0 };
    double acc = 0;
    for (;;) {
        int64_t off = 0;
        double w = 1;
        for (int d = 0; d < rank; d++) {
            off += t[d].idx[c[d]];
            w *= t[d].w[c[d]];
        }
        acc += w * nv_get_f(x->data, x->dtype, (size_t)off);
        int d = rank - 1;
        for (; d >= 0 && ++c[d] == t[d].n; d--)
            c[d] = 0;
        if (d < 0)
            break;
    }
    nv_set_f(p, x->dtype, 0, acc);
}

/* Output rows [LO, LO + CNT) (every dim but the last). */
static void resize_rows(void *vjob, size_t lo, size_t cnt)
{
    const rs_job *j = vjob;
    const nv_tensor *y = j->y;
    int r = y->rank;
    int64_t o[BD_MAX_RANK], inner = y->dims[r - 1];
    size_t es = bd_dtype_size(y->dtype);
    rs_taps t[BD_MAX_RANK];
    for (size_t row = lo; row < lo + cnt; row++) {
        size_t q = row;
        for (int d = r - 2; d >= 0; d--) {
            o[d] = (int64_t)(q % (size_t)y->dims[d]);
            q /= (size_t)y->dims[d];
            axis_taps(j->s, &j->ax[d], j->st[d], o[d], &t[d]);
        }
        char *p = (char *)y->data + row * (size_t)inner * es;
        for (int64_t i = 0; i < inner; i++, p += es) {
            axis_taps(j->s, &j->ax[r - 1], j->st[r - 1], i, &t[r - 1]);
            resize_element(j, t, r, p);
        }
    }
}

static int resize_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    const nv_tensor *x = &in[0];
    rs_axis ax[BD_MAX_RANK];
    int64_t dims[BD_MAX_RANK];
    int rc = resize_geometry(s, in, ax, err);
    for (int d = 0; rc == 0 && d < x->rank; d++)
        dims[d] = ax[d].out;
    if (rc || (rc = nv_output_shape(env, s, out, 0, x->rank, dims, err)) || out[0].numel == 0)
        return rc;
    rs_job j = { .s = s, .x = x, .y = &out[0], .ax = ax };
    nv_strides(x->rank, x->dims, j.st);
    nv_set_f(j.extra, x->dtype, 0, s->fp[1]);
    size_t rows = out[0].numel / (size_t)out[0].dims[x->rank - 1];
    size_t taps = s->ip[IP_MODE] == RS_NEAREST ? 1 : s->ip[IP_MODE] == RS_LINEAR ? 4 : 16;
    nv_parallel_for(rows, out[0].numel * taps, resize_rows, &j);
    return 0;
}

static int resize_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    s->ip[IP_MODE] = mode_of(bd_node_attr_string(n, "mode", "nearest"));
    s->ip[IP_CTM] = ctm_of(bd_node_attr_string(n, "coordinate_transformation_mode", "half_pixel"));
    s->ip[IP_NEAREST] = nearest_of(bd_node_attr_string(n, "nearest_mode", "round_prefer_floor"));
    s->ip[IP_EXCLUDE] = bd_node_attr_int(n, "exclude_outside", 0) != 0;
    s->ip[IP_LAST] = channels_last(n);
    s->ip[IP_LEGACY] = legacy(n);
    const int64_t *axes;
    size_t na = bd_node_attr_ints(n, "axes", &axes);
    s->ip[IP_NAXES] = (int64_t)na;
    for (size_t k = 0; k < na && k < BD_MAX_RANK; k++)
        s->ip[IP_AXES + k] = axes[k];
    s->fp[0] = bd_node_attr_float(n, "cubic_coeff_a", -0.75f);
    s->fp[1] = bd_node_attr_float(n, "extrapolation_value", 0.0f);
    const bd_attr *a = bd_node_attr(n, "scales");
    if (n->n_inputs == 1 && a && a->type == BD_ATTR_FLOATS) {
        s->heap = malloc((a->n ? a->n : 1) * sizeof(float));
        if (!s->heap)
            return bd_error_set(err, BD_ENOMEM, "out of memory preparing %s", n->op_type);
        memcpy(s->heap, a->floats, a->n * sizeof(float));
        s->ip[IP_NSCALES] = (int64_t)a->n;
    }
    s->run = resize_run;
    return 0;
}

const nv_op nv_resize_ops[] = {
    { "Resize", resize_supports, resize_prepare },
    { "Upsample", resize_supports, resize_prepare },
};
const size_t nv_resize_n = sizeof nv_resize_ops / sizeof nv_resize_ops[0];
