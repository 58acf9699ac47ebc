/* Signal processing on float and double: DFT (opset 17: real or complex input, dft_length,
 * axis, inverse, onesided), STFT (frame_step, window, frame_length, onesided), the window
 * generators HannWindow, HammingWindow and BlackmanWindow (size, periodic, output_datatype)
 * and MelWeightMatrix.
 *
 * Transforms are computed directly, in double: each output bin sums every input sample times
 * its twiddle, whose angle 2 pi (k t mod n) / n keeps the argument small, so bins that are 0
 * come out 0 to the double's precision (numpy's FFT, which ONNX's expected outputs come from,
 * agrees to ~1e-13 where a float FFT is off by 1e-4). Zero padding up to dft_length adds
 * nothing, so a transform costs (its output) x (its input's length along the axis).
 *
 * Sizes, lengths and steps are scalars a request may supply: they size run-time-shaped outputs
 * (nv_output_shape), and a negative or zero one where ONNX needs a positive one, a window that
 * does not match frame_length, frames longer than the signal, or mel bins outside the
 * spectrogram are INVALID_ARGUMENT. The window generators compute in double and store in
 * output_datatype. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { SG_HANN, SG_HAMMING, SG_BLACKMAN };

#define SG_PI 3.14159265358979323846

/* The scalar integer in T (one element of INT32 or INT64) into *V. */
static int scalar_int(const nv_tensor *t, const char *what, int64_t *v, bd_error *err)
{
    int64_t count = nv_run_ints(t, v, 1, what, err);
    if (count < 0)
        return (int)count;
    return count == 1 ? 0 : bd_error_set(err, BD_EINVAL, "%s: expected one value, got none", what);
}

/* V holds one element (a scalar or a 1-element tensor) of a dtype in MASK, static. */
static bool scalar_ok(const bd_value *v, unsigned mask)
{
    return nv_value_ok(v, mask) && nv_shape_numel(&v->shape) == 1 && v->shape.rank <= 1;
}

#define SG_INTS (NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64))

/* X's sample T of line BASE (complex components C, stride ST along the axis) into RE, IM. */
static void sample(const nv_tensor *x, size_t base, size_t st, int64_t t, int c, double *re,
                   double *im)
{
    size_t at = base + (size_t)t * st;
    *re = nv_get_f(x->data, x->dtype, at * (size_t)c);
    *im = c == 2 ? nv_get_f(x->data, x->dtype, at * 2 + 1) : 0;
}

/* Bin K of the length-N transform of the LEN samples of line BASE (times the window W when
 * given), inverse or forward, into RE, IM. */
static void dft_bin(const nv_tensor *x, size_t base, size_t st, int c, int64_t len, int64_t n,
                    int64_t k, const nv_tensor *w, bool inverse, double *re, double *im)
{
    double sr = 0, si = 0, sign = inverse ? 1 : -1;
    int64_t m = len < n ? len : n;
    for (int64_t t = 0; t < m; t++) {
        double xr, xi;
        sample(x, base, st, t, c, &xr, &xi);
        if (w) {
            double wt = nv_get_f(w->data, w->dtype, (size_t)t);
            xr *= wt;
            xi *= wt;
        }
        /* k < 2^31 (a bin of a bounded output) and t < the input's length: no overflow */
        int64_t km = (int64_t)((uint64_t)k * (uint64_t)t % (uint64_t)n);
        double a = sign * 2 * SG_PI * (double)km / (double)n, cr = cos(a), ci = sin(a);
        sr += xr * cr - xi * ci;
        si += xr * ci + xi * cr;
    }
    *re = inverse ? sr / (double)n : sr;
    *im = inverse ? si / (double)n : si;
}

/* ---- DFT ------------------------------------------------------------------------------------ */

static bool dft_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || n->n_inputs > 2 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "DFT: expects input, optional dft_length and one output");
    const bd_value *x = n->inputs[0], *dl = bd_node_input(n, 1), *y = n->outputs[0];
    if (!nv_value_ok(x, NV_DT_FLOATS) || !nv_output_ok(y, NV_DT(x->dtype)))
        return nv_why(why, len, "DFT: a float or double input and output");
    int r = x->shape.rank, ax = nv_axis(bd_node_attr_int(n, "axis", 1), r);
    int64_t c = r > 0 ? x->shape.dims[r - 1] : 0;
    if (r < 2 || ax < 0 || ax == r - 1 || (c != 1 && c != 2))
        return nv_why(why, len, "DFT: [..., 1 or 2] input and an axis before the last");
    if (dl && !scalar_ok(dl, SG_INTS))
        return nv_why(why, len, "DFT: dft_length must be one INT32 or INT64");
    if (y->shape.rank >= 0 && y->shape.rank != r)
        return nv_why(why, len, "DFT: the output must have the input's rank");
    return true;
}

typedef struct dft_job {
    const nv_step *s;
    const nv_tensor *x;
    nv_tensor     *y;
    int            ax, c;
    int64_t        len, n, bins;      /* the input's length along the axis, dft_length, bins */
    size_t         inner;             /* elements (of C components) after the axis */
} dft_job;

/* Lines [LO, LO + CNT): every (outer, inner) pair around the axis. */
static void dft_lines(void *vjob, size_t lo, size_t cnt)
{
    const dft_job *j = vjob;
    bool inverse = j->s->ip[1];
    for (size_t line = lo; line < lo + cnt; line++) {
        size_t o = line / j->inner, i = line % j->inner;
        size_t base = o * (size_t)j->len * j->inner + i;
        size_t ybase = o * (size_t)j->bins * j->inner + i;
        for (int64_t k = 0; k < j->bins; k++) {
            double re, im;
            dft_bin(j->x, base, j->inner, j->c, j->len, j->n, k, NULL, inverse, &re, &im);
            size_t at = (ybase + (size_t)k * j->inner) * 2;
            nv_set_f(j->y->data, j->y->dtype, at, re);
            nv_set_f(j->y->data, j->y->dtype, at + 1, im);
        }
    }
}

static int dft_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    const nv_tensor *x = &in[0];
    int r = x->rank, ax = (int)s->ip[0];
    dft_job j = { .s = s, .x = x, .y = &out[0], .ax = ax, .c = (int)x->dims[r - 1],
                  .len = x->dims[ax], .inner = 1 };
    j.n = j.len;
    if (s->n_in > 1 && s->in[1] >= 0) {
        int rc = scalar_int(&in[1], "DFT: dft_length", &j.n, err);
        if (rc)
            return rc;
        if (j.n < 1)
            return bd_error_set(err, BD_EINVAL, "DFT: dft_length %lld is not positive",
                                (long long)j.n);
    }
    j.bins = s->ip[2] ? j.n / 2 + 1 : j.n;
    int64_t dims[BD_MAX_RANK];
    memcpy(dims, x->dims, (size_t)r * sizeof *dims);
    dims[ax] = j.bins;
    dims[r - 1] = 2;
    int rc = nv_output_shape(env, s, out, 0, r, dims, err);
    if (rc || out[0].numel == 0)
        return rc;
    for (int d = ax + 1; d < r - 1; d++)
        j.inner *= (size_t)x->dims[d];
    size_t lines = out[0].numel / 2 / (size_t)j.bins;
    nv_parallel_for(lines, out[0].numel * (size_t)(j.len < j.n ? j.len : j.n), dft_lines, &j);
    return 0;
}

static int dft_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", 1), n->inputs[0]->shape.rank);
    s->ip[1] = bd_node_attr_int(n, "inverse", 0) != 0;
    s->ip[2] = bd_node_attr_int(n, "onesided", 0) != 0;
    s->run = dft_run;
    return 0;
}

/* ---- STFT ----------------------------------------------------------------------------------- */

static bool stft_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 2 || n->n_inputs > 4 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "STFT: expects signal, frame_step, optional window and "
                      "frame_length, and one output");
    const bd_value *x = n->inputs[0], *w = bd_node_input(n, 2), *fl = bd_node_input(n, 3);
    const bd_value *y = n->outputs[0];
    if (!nv_value_ok(x, NV_DT_FLOATS) || !nv_output_ok(y, NV_DT(x->dtype)))
        return nv_why(why, len, "STFT: a float or double signal and output");
    const bd_shape *xs = &x->shape;
    if (xs->rank != 3 || (xs->dims[2] != 1 && xs->dims[2] != 2))
        return nv_why(why, len, "STFT: the signal must be [batch, length, 1 or 2]");
    if (!scalar_ok(n->inputs[1], SG_INTS) || (fl && !scalar_ok(fl, SG_INTS)))
        return nv_why(why, len, "STFT: frame_step and frame_length must be one INT32 or INT64");
    if (w && (!nv_value_ok(w, NV_DT(x->dtype)) || w->shape.rank != 1))
        return nv_why(why, len, "STFT: the window must be a %s vector", bd_dtype_name(x->dtype));
    if (y->shape.rank >= 0 && y->shape.rank != 4)
        return nv_why(why, len, "STFT: the output must have rank 4");
    return true;
}

typedef struct stft_job {
    const nv_tensor *x, *w;
    nv_tensor     *y;
    int64_t        step, frame, frames, bins, len;
} stft_job;

/* Frames [LO, LO + CNT) of every batch element (batch-major). */
static void stft_frames(void *vjob, size_t lo, size_t cnt)
{
    const stft_job *j = vjob;
    int c = (int)j->x->dims[2];
    for (size_t q = lo; q < lo + cnt; q++) {
        size_t b = q / (size_t)j->frames, f = q % (size_t)j->frames;
        size_t base = b * (size_t)j->len + f * (size_t)j->step;
        for (int64_t k = 0; k < j->bins; k++) {
            double re, im;
            dft_bin(j->x, base, 1, c, j->frame, j->frame, k, j->w, false, &re, &im);
            size_t at = (q * (size_t)j->bins + (size_t)k) * 2;
            nv_set_f(j->y->data, j->y->dtype, at, re);
            nv_set_f(j->y->data, j->y->dtype, at + 1, im);
        }
    }
}

static int stft_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    const nv_tensor *x = &in[0];
    const nv_tensor *w = s->n_in > 2 && s->in[2] >= 0 ? &in[2] : NULL;
    stft_job j = { .x = x, .w = w, .y = &out[0], .len = x->dims[1] };
    int rc = scalar_int(&in[1], "STFT: frame_step", &j.step, err);
    if (rc)
        return rc;
    j.frame = w ? w->dims[0] : j.len;
    if (s->n_in > 3 && s->in[3] >= 0) {
        if ((rc = scalar_int(&in[3], "STFT: frame_length", &j.frame, err)))
            return rc;
        if (w && j.frame != w->dims[0])
            return bd_error_set(err, BD_EINVAL, "STFT: frame_length %lld, but the window holds "
                                "%lld", (long long)j.frame, (long long)w->dims[0]);
    }
    if (j.step < 1 || j.frame < 1 || j.frame > j.len)
        return bd_error_set(err, BD_EINVAL, "STFT: frame_step %lld and frame_length %lld for a "
                            "signal of %lld", (long long)j.step, (long long)j.frame,
                            (long long)j.len);
    j.frames = 1 + (j.len - j.frame) / j.step;
    j.bins = s->ip[0] ? j.frame / 2 + 1 : j.frame;
    int64_t dims[4] = { x->dims[0], j.frames, j.bins, 2 };
    if ((rc = nv_output_shape(env, s, out, 0, 4, dims, err)) || out[0].numel == 0)
        return rc;
    nv_parallel_for((size_t)(x->dims[0] * j.frames), out[0].numel * (size_t)j.frame, stft_frames,
                    &j);
    return 0;
}

static int stft_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "onesided", 1) != 0;
    s->run = stft_run;
    return 0;
}

/* ---- windows -------------------------------------------------------------------------------- */

/* The output's dtype: output_datatype (default FLOAT), any numeric one. */
static bool datatype_ok(const bd_node *n)
{
    int64_t dt = bd_node_attr_int(n, "output_datatype", BD_DT_FLOAT);
    return dt > 0 && dt < 32 && (NV_DT_NUMERIC & NV_DT(dt)) && n->outputs[0]->dtype == dt;
}

static bool window_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects size and one output", n->op_type);
    if (!scalar_ok(n->inputs[0], SG_INTS) || !datatype_ok(n) ||
        !nv_output_ok(n->outputs[0], NV_DT_NUMERIC) || n->outputs[0]->shape.rank > 1)
        return nv_why(why, len, "%s: one INT32 or INT64 size and a numeric vector of "
                      "output_datatype", n->op_type);
    return true;
}

static int window_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    int64_t size;
    int rc = scalar_int(&in[0], s->node->op_type, &size, err);
    if (rc)
        return rc;
    if (size < 0)
        return bd_error_set(err, BD_EINVAL, "%s: size %lld is negative", s->node->op_type,
                            (long long)size);
    if ((rc = nv_output_shape(env, s, out, 0, 1, &size, err)))
        return rc;
    double n1 = (double)(s->ip[0] ? size : size - 1);
    for (int64_t i = 0; i < size; i++) {
        double a = 2 * SG_PI * (double)i / n1, v;
        switch (s->op) {
        case SG_HANN:    v = 0.5 - 0.5 * cos(a); break;
        case SG_HAMMING: v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(a); break;
        default:         v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a); break;
        }
        nv_set_f(out[0].data, out[0].dtype, (size_t)i, v);
    }
    return 0;
}

static int window_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = !strcmp(n->op_type, "HannWindow") ? SG_HANN
          : !strcmp(n->op_type, "HammingWindow") ? SG_HAMMING : SG_BLACKMAN;
    s->ip[0] = bd_node_attr_int(n, "periodic", 1) != 0;
    s->run = window_run;
    return 0;
}

/* ---- MelWeightMatrix ------------------------------------------------------------------------ */

static bool mel_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 5 || n->n_outputs != 1)
        return nv_why(why, len, "MelWeightMatrix: expects five scalars and one output");
    for (size_t i = 0; i < 5; i++)
        if (!n->inputs[i] || !scalar_ok(n->inputs[i], i < 3 ? SG_INTS : NV_DT_FLOATS))
            return nv_why(why, len, "MelWeightMatrix: input %zu must be one %s", i,
                          i < 3 ? "INT32 or INT64" : "float or double");
    if (!datatype_ok(n) || !nv_output_ok(n->outputs[0], NV_DT_NUMERIC) ||
        n->outputs[0]->shape.rank > 2 || n->outputs[0]->shape.rank == 1 ||
        n->outputs[0]->shape.rank == 0)
        return nv_why(why, len, "MelWeightMatrix: a 2-D numeric output of output_datatype");
    return true;
}

static int mel_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                   bd_error *err)
{
    int64_t mels, dft, rate;
    int rc;
    if ((rc = scalar_int(&in[0], "MelWeightMatrix: num_mel_bins", &mels, err)) ||
        (rc = scalar_int(&in[1], "MelWeightMatrix: dft_length", &dft, err)) ||
        (rc = scalar_int(&in[2], "MelWeightMatrix: sample_rate", &rate, err)))
        return rc;
    double lo = nv_get_f(in[3].data, in[3].dtype, 0), hi = nv_get_f(in[4].data, in[4].dtype, 0);
    if (mels < 1 || dft < 1 || rate < 1 || mels > NV_RUN_MAX_ELEMS)
        return bd_error_set(err, BD_EINVAL, "MelWeightMatrix: num_mel_bins %lld, dft_length "
                            "%lld and sample_rate %lld must be positive", (long long)mels,
                            (long long)dft, (long long)rate);
    int64_t bins = dft / 2 + 1, dims[2] = { bins, mels };
    if ((rc = nv_output_shape(env, s, out, 0, 2, dims, err)))
        return rc;
    memset(out[0].data, 0, out[0].numel * bd_dtype_size(out[0].dtype));
    double lo_mel = 2595 * log10(1 + lo / 700), hi_mel = 2595 * log10(1 + hi / 700);
    double step = (hi_mel - lo_mel) / (double)(mels + 2);
    int64_t f[3];
    for (int64_t i = 0; i < mels; i++) {
        for (int k = 0; k < 3; k++) {           /* the left, centre and right bins */
            double hz = 700 * (pow(10, ((double)(i + k) * step + lo_mel) / 2595) - 1);
            double b = floor((double)(dft + 1) * hz / (double)rate);
            if (!(b >= 0 && b < (double)bins))
                return bd_error_set(err, BD_EINVAL, "MelWeightMatrix: mel bin %lld falls "
                                    "outside the %lld spectrogram bins", (long long)(i + k),
                                    (long long)bins);
            f[k] = (int64_t)b;
        }
        size_t col = (size_t)i, nm = (size_t)mels;
        if (f[1] == f[0])
            nv_set_f(out[0].data, out[0].dtype, (size_t)f[1] * nm + col, 1);
        for (int64_t b = f[0]; f[1] > f[0] && b <= f[1]; b++)
            nv_set_f(out[0].data, out[0].dtype, (size_t)b * nm + col,
                     (double)(b - f[0]) / (double)(f[1] - f[0]));
        for (int64_t b = f[1]; b < f[2]; b++)
            nv_set_f(out[0].data, out[0].dtype, (size_t)b * nm + col,
                     (double)(f[2] - b) / (double)(f[2] - f[1]));
    }
    return 0;
}

static int mel_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)err;
    s->run = mel_run;
    return 0;
}

const nv_op nv_signal_ops[] = {
    { "DFT", dft_supports, dft_prepare },
    { "STFT", stft_supports, stft_prepare },
    { "HannWindow", window_supports, window_prepare },
    { "HammingWindow", window_supports, window_prepare },
    { "BlackmanWindow", window_supports, window_prepare },
    { "MelWeightMatrix", mel_supports, mel_prepare },
};
const size_t nv_signal_n = sizeof nv_signal_ops / sizeof nv_signal_ops[0];
