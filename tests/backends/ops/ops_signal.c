/* Signal-processing cases and references: DFT (real and complex input, an inner axis, inverse,
 * onesided, dft_length constant or fed, padding and truncating), STFT (window, frame_length,
 * two-sided complex), the window generators (periodic and symmetric, output_datatype) and
 * MelWeightMatrix. The references are the textbook sums in double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

#define PI 3.14159265358979323846

/* Sample T of a line (LEN samples, stride ST, C components) of X at BASE, 0 past its end. */
static void sample_ref(const tensor *x, size_t base, size_t st, int c, int64_t len, int64_t t,
                       double *re, double *im)
{
    *re = *im = 0;
    if (t >= len)
        return;
    size_t at = base + (size_t)t * st;
    *re = x->f[at * (size_t)c];
    if (c == 2)
        *im = x->f[at * 2 + 1];
}

static void ref_dft(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    int r = x->rank, ax = norm_axis(attr_i(c, "axis", 1), r), comp = (int)x->dims[r - 1];
    bool inverse = attr_i(c, "inverse", 0);
    int64_t len = x->dims[ax], n = c->n_in > 1 ? in[1].i[0] : len, bins = out->dims[ax];
    size_t inner = numel(r - ax - 2, x->dims + ax + 1), outer = numel(ax, x->dims);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++)
            for (int64_t k = 0; k < bins; k++) {
                double sr = 0, si = 0;
                for (int64_t t = 0; t < n; t++) {
                    double xr, xi, a = (inverse ? 2 : -2) * PI * (double)k * (double)t / (double)n;
                    sample_ref(x, o * (size_t)len * inner + i, inner, comp, len, t, &xr, &xi);
                    sr += xr * cos(a) - xi * sin(a);
                    si += xr * sin(a) + xi * cos(a);
                }
                size_t at = ((o * (size_t)bins + (size_t)k) * inner + i) * 2;
                out->f[at] = inverse ? sr / (double)n : sr;
                out->f[at + 1] = inverse ? si / (double)n : si;
            }
}

static void ref_stft(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    bool win = c->n_in > 2 && !c->in[2].omitted;
    int comp = (int)x->dims[2];
    int64_t step = in[1].i[0], len = x->dims[1];
    int64_t frame = c->n_in > 3 ? in[3].i[0] : win ? in[2].dims[0] : len;
    int64_t frames = out->dims[1], bins = out->dims[2];
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t f = 0; f < frames; f++)
            for (int64_t k = 0; k < bins; k++) {
                double sr = 0, si = 0;
                for (int64_t t = 0; t < frame; t++) {
                    double xr, xi, w = win ? in[2].f[t] : 1, a = -2 * PI * (double)(k * t) / (double)frame;
                    sample_ref(x, (size_t)(b * len + f * step), 1, comp, len - f * step, t, &xr, &xi);
                    sr += w * (xr * cos(a) - xi * sin(a));
                    si += w * (xr * sin(a) + xi * cos(a));
                }
                size_t at = (size_t)(((b * frames + f) * bins + k) * 2);
                out->f[at] = sr;
                out->f[at + 1] = si;
            }
}

static void ref_window(const op_case *c, const tensor *in, tensor *out)
{
    (void)in;
    double n1 = (double)(attr_i(c, "periodic", 1) ? out->dims[0] : out->dims[0] - 1);
    for (size_t i = 0; i < out->n; i++) {
        double a = 2 * PI * (double)i / n1, v;
        if (!strcmp(c->op, "HannWindow"))
            v = sin(PI * (double)i / n1) * sin(PI * (double)i / n1);
        else if (!strcmp(c->op, "HammingWindow"))
            v = 25.0 / 46 - 21.0 / 46 * cos(a);
        else
            v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        put(out, i, v, (int64_t)v);
    }
}

/* MelWeightMatrix: triangles between consecutive mel-spaced spectrogram bins. */
static void ref_mel(const op_case *c, const tensor *in, tensor *out)
{
    (void)c;
    int64_t mels = in[0].i[0], dft = in[1].i[0], rate = in[2].i[0];
    double lo = 2595 * log10(1 + in[3].f[0] / 700), hi = 2595 * log10(1 + in[4].f[0] / 700);
    int64_t *f = calloc((size_t)mels + 2, sizeof *f);
    for (int64_t k = 0; k < mels + 2; k++) {
        double hz = 700 * (pow(10, ((double)k * (hi - lo) / (double)(mels + 2) + lo) / 2595) - 1);
        f[k] = (int64_t)floor((double)(dft + 1) * hz / (double)rate);
    }
    for (int64_t i = 0; i < mels; i++) {
        if (f[i + 1] == f[i])
            out->f[f[i + 1] * mels + i] = 1;
        else
            for (int64_t j = f[i]; j <= f[i + 1]; j++)
                out->f[j * mels + i] = (double)(j - f[i]) / (double)(f[i + 1] - f[i]);
        for (int64_t j = f[i + 1]; j < f[i + 2]; j++)
            out->f[j * mels + i] = (double)(f[i + 2] - j) / (double)(f[i + 2] - f[i + 1]);
    }
    free(f);
}

static const op_case k_cases[] = {
    /* DFT */
    { "dft_real_axis1", "DFT", NULL, 1, { IN(2, 8, 1) }, NO_ATTR, OUT(2, 8, 2), ref_dft },
    { "dft_complex_inverse_axis2_f64", "DFT", NULL, 1, { FED(F64, 2, 3, 5, 2) },
      { AI("axis", 2), AI("inverse", 1) }, OUTT(F64, 2, 3, 5, 2), ref_dft,
      .skip = ORT_NO_KERNEL("DFT on DOUBLE") },
    { "dft_length_fed_onesided", "DFT", NULL, 2, { IN(3, 6, 1), FEDS(INT64, 9) },
      { AI("onesided", 1) }, OUT(3, 5, 2), ref_dft, .runtime_shape = true },
    { "dft_length_truncates", "DFT", NULL, 2, { IN(2, 10, 2), CSTS(INT64, 4) }, NO_ATTR,
      OUT(2, 4, 2), ref_dft },
    /* STFT */
    { "stft_window_onesided", "STFT", NULL, 3, { IN(2, 16, 1), CSTS(INT64, 4), W(8) },
      NO_ATTR, OUT(2, 3, 5, 2), ref_stft },
    { "stft_fed_step_complex_two_sided", "STFT", NULL, 4, { FED(F64, 1, 12, 2),
      FEDS(INT64, 5), OMIT, CSTS(INT64, 6) }, { AI("onesided", 0) }, OUTT(F64, 1, 2, 6, 2),
      ref_stft, .runtime_shape = true, .skip = ORT_NO_KERNEL("STFT on DOUBLE") },
    { "stft_frame_longer_than_signal", "STFT", NULL, 4, { IN(1, 4, 1), FEDS(INT64, 1), OMIT,
      FEDS(INT64, 6) }, NO_ATTR, OUT(1, 1, 4, 2), NULL, .runtime_shape = true,
      .expect_error = true },
    /* the window generators */
    { "hannwindow_fed", "HannWindow", NULL, 1, { FEDS(INT64, 10) }, NO_ATTR, OUT(10),
      ref_window, .runtime_shape = true },
    { "hammingwindow_symmetric_f64", "HammingWindow", NULL, 1, { CSTS(INT32, 7) },
      { AI("periodic", 0), AI("output_datatype", F64) }, OUTT(F64, 7), ref_window },
    { "blackmanwindow_fed_i32", "BlackmanWindow", NULL, 1, { FEDS(INT32, 9) }, NO_ATTR,
      OUT(9), ref_window, .runtime_shape = true },
    { "hannwindow_negative_size", "HannWindow", NULL, 1, { FEDS(INT64, -3) }, NO_ATTR, OUT(3),
      NULL, .runtime_shape = true, .expect_error = true },
    { "blackmanwindow_size_beyond_bounds", "BlackmanWindow", NULL, 1,
      { FEDS(INT64, 1099511627776) }, NO_ATTR, OUT(1), NULL, .runtime_shape = true,
      .expect_error = true, .skip = { "ort", "ONNX Runtime would try to allocate 4 TB" } },
    { "dft_length_beyond_bounds", "DFT", NULL, 2, { IN(1, 4, 1), FEDS(INT64, 1099511627776) },
      NO_ATTR, OUT(1, 1, 2), NULL, .runtime_shape = true, .expect_error = true,
      .skip = { "ort", "ONNX Runtime would try to allocate 16 TB" } },
    /* MelWeightMatrix */
    { "melweightmatrix", "MelWeightMatrix", NULL, 5, { FEDS(INT64, 8), FEDS(INT64, 16),
      FEDS(INT64, 8192), FEDSF(F32, 0), FEDSF(F32, 4096) }, NO_ATTR, OUT(9, 8), ref_mel,
      .runtime_shape = true },
    { "melweightmatrix_bins_beyond_spectrogram", "MelWeightMatrix", NULL, 5, { FEDS(INT64, 8),
      FEDS(INT64, 16), FEDS(INT64, 100), FEDSF(F32, 0), FEDSF(F32, 4096) }, NO_ATTR,
      OUT(9, 8), NULL, .runtime_shape = true, .expect_error = true },
};

const case_table ops_signal_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
