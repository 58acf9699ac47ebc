/* Pooling cases and references: MaxPool (the Indices output, row- and column-major, integer
 * and DOUBLE data, dilations, ceil_mode, auto_pad, 1-D and 3-D), AveragePool
 * (count_include_pad with ceil_mode), LpPool, and the global pools on the types oneDNN does not
 * take. The reference walks every tap of every window, straight from the ONNX definitions:
 * window start o * stride - pad_begin, taps dilation apart, the ones inside the input folded
 * (the first maximum and its flat index; the mean over the taps inside, or with
 * count_include_pad over those inside the padded input; (sum |x|^p)^(1/p)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static void ref_pool_nd(const op_case *c, const tensor *in, tensor *out)
{
    const tensor *x = &in[0];
    int ns = x->rank - 2;
    bool global = !strncmp(c->op, "Global", 6), is_max = strstr(c->op, "Max") != NULL;
    bool is_lp = strstr(c->op, "Lp") != NULL, include = attr_i(c, "count_include_pad", 0);
    bool col = attr_i(c, "storage_order", 0);
    double p = (double)attr_i(c, "p", 2);
    int64_t k[6], s[6], d[6], pb[6], pe[6], ones[6] = { 1, 1, 1, 1, 1, 1 }, zeros[12] = { 0 };
    int64_t pads[12];
    const int64_t *xs = x->dims + 2, *os = out[0].dims + 2;
    if (global) {
        for (int i = 0; i < ns; i++) {
            k[i] = xs[i];
            s[i] = d[i] = 1;
            pb[i] = pe[i] = 0;
        }
    } else {
        ints_or(c, "kernel_shape", ns, ones, k);
        ints_or(c, "strides", ns, ones, s);
        ints_or(c, "dilations", ns, ones, d);
        ints_or(c, "pads", 2 * ns, zeros, pads);
        const char *ap = attr_s(c, "auto_pad", "NOTSET");
        for (int i = 0; i < ns; i++) {
            pb[i] = pads[i];
            pe[i] = pads[ns + i];
            if (!strncmp(ap, "SAME", 4)) {
                int64_t total = (os[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - xs[i];
                total = total > 0 ? total : 0;
                pb[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
                pe[i] = total - pb[i];
            }
        }
    }
    size_t plane_in = numel(ns, xs), plane_out = numel(ns, os);
    int64_t o[6], t[6], pos[6], best[6];
    for (size_t pl = 0; pl < (size_t)(x->dims[0] * x->dims[1]); pl++)
        for (size_t q = 0; q < plane_out; q++) {
            unravel(q, ns, os, o);
            double acc = 0, bv = 0;
            int64_t bi = 0;
            size_t inside = 0, padded = 0, taps = numel(ns, k);
            bool found = false;
            for (size_t tq = 0; tq < taps; tq++) {
                unravel(tq, ns, k, t);
                bool ok = true, ok_pad = true;
                for (int i = 0; i < ns; i++) {
                    pos[i] = o[i] * s[i] - pb[i] + t[i] * d[i];
                    ok = ok && pos[i] >= 0 && pos[i] < xs[i];
                    ok_pad = ok_pad && pos[i] < xs[i] + pe[i];
                }
                padded += ok_pad;
                if (!ok)
                    continue;
                size_t at = pl * plane_in + ravel(pos, ns, xs);
                double v = x->f[at];
                inside++;
                if (is_max) {
                    if (!found || v > bv) {
                        bv = v;
                        bi = ordered(x->dtype, x->i[at]);
                        memcpy(best, pos, sizeof pos);
                        found = true;
                    }
                } else {
                    acc += is_lp ? pow(fabs(v), p) : v;
                }
            }
            size_t j = pl * plane_out + q;
            if (is_max) {
                put(&out[0], j, bv, bi);
                if (c->out[1].dtype) {
                    int64_t flat = 0;           /* row-major, or column-major over the spatial dims */
                    for (int i = col ? ns - 1 : 0; col ? i >= 0 : i < ns; i += col ? -1 : 1)
                        flat = flat * xs[i] + best[i];
                    out[1].i[j] = (int64_t)(pl * plane_in) + flat;
                }
            } else {
                out[0].f[j] = is_lp ? pow(acc, 1 / p) : acc / (double)(include ? padded : inside);
            }
        }
}

static const op_case k_cases[] = {
    /* MaxPool: Indices, storage_order, integer and DOUBLE data, the window's attributes */
    { "maxpool_indices_pads", "MaxPool", NULL, 1, { IN(1, 2, 5, 6) },
      { AINTS("kernel_shape", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) },
      OUTS(O(F32, 1, 2, 3, 3), O(INT64, 1, 2, 3, 3)), ref_pool_nd },
    { "maxpool_indices_col_major", "MaxPool", NULL, 1, { IN(2, 1, 4, 5) },
      { AINTS("kernel_shape", 2, 3), AI("storage_order", 1) },
      OUTS(O(F32, 2, 1, 3, 3), O(INT64, 2, 1, 3, 3)), ref_pool_nd },
    { "maxpool_u8_ceil", "MaxPool", NULL, 1, { FED(UINT8, 1, 3, 5, 5) },
      { AINTS("kernel_shape", 2, 2), AINTS("strides", 2, 2), AI("ceil_mode", 1) },
      OUTT(UINT8, 1, 3, 3, 3), ref_pool_nd },
    { "maxpool_i8_dilated_3d", "MaxPool", NULL, 1, { FED(INT8, 1, 2, 5, 5, 5) },
      { AINTS("kernel_shape", 2, 2, 2), AINTS("dilations", 2, 2, 2) },
      OUTS(O(INT8, 1, 2, 3, 3, 3), O(INT64, 1, 2, 3, 3, 3)), ref_pool_nd },
    { "maxpool_f64_same_lower", "MaxPool", NULL, 1, { FED(F64, 1, 2, 7, 6) },
      { AINTS("kernel_shape", 3, 2), AINTS("strides", 2, 2), AS("auto_pad", "SAME_LOWER") },
      OUTS(O(F64, 1, 2, 4, 3), O(INT64, 1, 2, 4, 3)), ref_pool_nd },
    { "maxpool_i32_1d", "MaxPool", NULL, 1, { FED(INT32, 1, 2, 10) },
      { AINTS("kernel_shape", 3), AINTS("strides", 3) }, OUTT(INT32, 1, 2, 3), ref_pool_nd,
      .skip = ORT_NO_KERNEL("MaxPool on INT32") },
    { "maxpool_big_parallel", "MaxPool", NULL, 1, { IN(2, 8, 64, 64) },
      { AINTS("kernel_shape", 3, 3), AINTS("pads", 1, 1, 1, 1) },
      OUTS(O(F32, 2, 8, 64, 64), O(INT64, 2, 8, 64, 64)), ref_pool_nd, .threads = 2 },
    /* AveragePool: DOUBLE, count_include_pad with ceil_mode, 1-D SAME_UPPER */
    { "avgpool_f64_include_pad_ceil", "AveragePool", NULL, 1, { FED(F64, 1, 1, 6, 7) },
      { AINTS("kernel_shape", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1),
        AI("count_include_pad", 1), AI("ceil_mode", 1) }, OUTT(F64, 1, 1, 4, 4), ref_pool_nd,
      .skip = ORT_NO_KERNEL("AveragePool on DOUBLE") },
    { "avgpool_include_pad_ceil", "AveragePool", NULL, 1, { IN(1, 1, 6, 7) },
      { AINTS("kernel_shape", 3, 3), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1),
        AI("count_include_pad", 1), AI("ceil_mode", 1) }, OUT(1, 1, 4, 4), ref_pool_nd,
      .known = { "dnnl", "oneDNN's avg_include_padding divides by the whole window where "
                 "ceil_mode extends it past the end pad (ONNX counts only the padded input)" } },
    { "avgpool_f64_exclude_pad", "AveragePool", NULL, 1, { FED(F64, 1, 2, 5, 5) },
      { AINTS("kernel_shape", 3, 3), AINTS("pads", 1, 1, 1, 1) }, OUTT(F64, 1, 2, 5, 5),
      ref_pool_nd, .skip = ORT_NO_KERNEL("AveragePool on DOUBLE") },
    { "avgpool_1d_same_upper", "AveragePool", NULL, 1, { IN(2, 3, 9) },
      { AINTS("kernel_shape", 4), AINTS("strides", 2), AS("auto_pad", "SAME_UPPER") },
      OUT(2, 3, 5), ref_pool_nd },
    /* LpPool and the global pools */
    { "lppool_p3_pads", "LpPool", NULL, 1, { IN(1, 2, 5, 5) },
      { AINTS("kernel_shape", 2, 2), AINTS("pads", 0, 0, 1, 1), AI("p", 3) }, OUT(1, 2, 5, 5),
      ref_pool_nd },
    { "lppool_p1_f64_strided", "LpPool", NULL, 1, { FED(F64, 1, 1, 6, 6) },
      { AINTS("kernel_shape", 3, 3), AINTS("strides", 2, 2), AI("p", 1) },
      OUTT(F64, 1, 1, 2, 2), ref_pool_nd, .skip = ORT_NO_KERNEL("LpPool on DOUBLE") },
    { "globallppool", "GlobalLpPool", NULL, 1, { IN(2, 3, 4, 5) }, NO_ATTR, OUT(2, 3, 1, 1),
      ref_pool_nd },
    { "globalmaxpool_f64", "GlobalMaxPool", NULL, 1, { FED(F64, 1, 2, 3, 4) }, NO_ATTR,
      OUTT(F64, 1, 2, 1, 1), ref_pool_nd, .skip = ORT_NO_KERNEL("GlobalMaxPool on DOUBLE") },
    { "globalavgpool_f64_3d", "GlobalAveragePool", NULL, 1, { FED(F64, 1, 2, 3, 2, 4) },
      NO_ATTR, OUTT(F64, 1, 2, 1, 1, 1), ref_pool_nd,
      .skip = ORT_NO_KERNEL("GlobalAveragePool on DOUBLE") },
};

const case_table ops_pool_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
