/* Native steps for what oneDNN has no primitive for: constant Pad and the Resize coordinate
 * modes its resampling cannot express. Both work on plain (row-major) f32 memory; the
 * innermost dims that are neither padded nor resized are moved as contiguous blocks, which
 * for NHWC images means whole pixels (C floats) or rows (W*C floats) at a time. */
#include <math.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static void *mem_ptr(dnnl_memory_t m)
{
    void *p = NULL;
    dnnl_memory_get_data_handle(m, &p);
    return p;
}

static void fill(float *y, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        y[i] = v;
}

/* ---- Pad ------------------------------------------------------------------------------ */

typedef struct pad_geom {
    int            k;                         /* last padded dim: dims after it are a block */
    const int64_t *xd, *yd, *pb;
    size_t         xs[DNNL_MAX_NDIMS], ys[DNNL_MAX_NDIMS];   /* strides in elements */
    float          v;
} pad_geom;

static void pad_dim(const pad_geom *g, int d, const float *x, float *y)
{
    size_t xs = g->xs[d], ys = g->ys[d];
    int64_t before = g->pb[d], inside = g->xd[d], after = g->yd[d] - before - inside;
    if (d == g->k) {                          /* the rest is contiguous in both */
        fill(y, (size_t)before * ys, g->v);
        memcpy(y + (size_t)before * ys, x, (size_t)inside * xs * sizeof *x);
        fill(y + (size_t)(before + inside) * ys, (size_t)after * ys, g->v);
        return;
    }
    fill(y, (size_t)before * ys, g->v);
    for (int64_t i = 0; i < inside; i++)
        pad_dim(g, d + 1, x + (size_t)i * xs, y + (size_t)(before + i) * ys);
    fill(y + (size_t)(before + inside) * ys, (size_t)after * ys, g->v);
}

static void run_pad(const dn_step *s, const float *x, float *y)
{
    const dnnl_memory_desc_t *xm = &s->args[0].md, *ym = &s->args[1].md;
    int r = xm->ndims;
    pad_geom g = { .k = 0, .xd = xm->dims, .yd = ym->dims, .pb = s->nat.ip, .v = s->nat.fp[0] };
    for (int d = 0; d < r; d++)
        if (ym->dims[d] != xm->dims[d])
            g.k = d;
    size_t xs = 1, ys = 1;
    for (int d = r - 1; d >= 0; d--) {
        g.xs[d] = xs;
        g.ys[d] = ys;
        xs *= (size_t)xm->dims[d];
        ys *= (size_t)ym->dims[d];
    }
    if (xs == 0) {
        fill(y, ys, g.v);
        return;
    }
    pad_dim(&g, 0, x, y);
}

/* ---- Resize --------------------------------------------------------------------------- */

/* Source coordinate of output index Y along an axis IN -> OUT (ONNX's formulas). SCALE 0
 * means "from the sizes": the exact ratio OUT / IN. */
static double src_coord(int ctm, int64_t y, int64_t in, int64_t out, double scale)
{
    double inv = scale > 0 ? 1.0 / scale : (double)in / (double)out;
    switch (ctm) {
    case DN_CTM_PYTORCH_HALF_PIXEL:
        return out > 1 ? ((double)y + 0.5) * inv - 0.5 : 0.0;
    case DN_CTM_ALIGN_CORNERS:
        return out > 1 ? (double)y * (double)(in - 1) / (double)(out - 1) : 0.0;
    case DN_CTM_ASYMMETRIC:
        return (double)y * inv;
    case DN_CTM_TF_HALF_PIXEL_FOR_NN:
        return ((double)y + 0.5) * inv;
    default:                                  /* half_pixel */
        return ((double)y + 0.5) * inv - 0.5;
    }
}

static int64_t nearest(int mode, double x)
{
    double f = floor(x);
    switch (mode) {
    case DN_NEAREST_FLOOR:             return (int64_t)f;
    case DN_NEAREST_CEIL:              return (int64_t)ceil(x);
    case DN_NEAREST_ROUND_PREFER_CEIL: return (int64_t)floor(x + 0.5);
    default:                           return x - f == 0.5 ? (int64_t)f : (int64_t)floor(x + 0.5);
    }
}

static void run_resize(const dn_step *s, const float *x, float *y)
{
    const dnnl_memory_desc_t *xm = &s->args[0].md, *ym = &s->args[1].md;
    const int64_t *p = s->nat.ip;
    int r = xm->ndims, k = -1;
    bool linear = p[0] == 1;
    for (int d = 0; d < r; d++)
        if (p[3 + d])
            k = d;
    size_t xs[DNNL_MAX_NDIMS], block = 1, outer = 1;
    for (int d = r - 1; d >= 0; d--) {
        xs[d] = d == r - 1 ? 1 : xs[d + 1] * (size_t)xm->dims[d + 1];
        if (d > k)
            block *= (size_t)ym->dims[d];
        else
            outer *= (size_t)ym->dims[d];
    }
    for (size_t o = 0; o < outer; o++) {
        int64_t lo[DNNL_MAX_NDIMS], hi[DNNL_MAX_NDIMS];
        float w[DNNL_MAX_NDIMS];
        int lin[DNNL_MAX_NDIMS], m = 0;
        size_t rem = o;
        for (int d = k; d >= 0; d--) {
            int64_t yi = (int64_t)(rem % (size_t)ym->dims[d]), in = xm->dims[d];
            rem /= (size_t)ym->dims[d];
            lo[d] = hi[d] = yi;
            w[d] = 0.0f;
            if (!p[3 + d])
                continue;
            double c = src_coord((int)p[1], yi, in, ym->dims[d], s->nat.fp[d]);
            if (linear) {
                c = c < 0 ? 0 : c > (double)(in - 1) ? (double)(in - 1) : c;
                lo[d] = (int64_t)floor(c);
                hi[d] = lo[d] + 1 < in ? lo[d] + 1 : in - 1;
                w[d] = (float)(c - (double)lo[d]);
                if (w[d] != 0.0f && hi[d] != lo[d])
                    lin[m++] = d;
            } else {
                int64_t i = nearest((int)p[2], c);
                lo[d] = hi[d] = i < 0 ? 0 : i >= in ? in - 1 : i;
            }
        }
        size_t base = 0;
        for (int d = 0; d <= k; d++)
            base += (size_t)lo[d] * xs[d];
        float *dst = y + o * block;
        if (m == 0) {
            memcpy(dst, x + base, block * sizeof *dst);
            continue;
        }
        for (int corner = 0; corner < (1 << m); corner++) {
            float cw = 1.0f;
            size_t off = base;
            for (int j = 0; j < m; j++) {
                int d = lin[j];
                if (corner >> j & 1) {
                    cw *= w[d];
                    off += (size_t)(hi[d] - lo[d]) * xs[d];
                } else {
                    cw *= 1.0f - w[d];
                }
            }
            const float *src = x + off;
            if (corner == 0)
                for (size_t i = 0; i < block; i++)
                    dst[i] = cw * src[i];
            else
                for (size_t i = 0; i < block; i++)
                    dst[i] += cw * src[i];
        }
    }
}

void dn_native_run(const dn_step *s, dnnl_memory_t *mems)
{
    const float *x = mem_ptr(mems[0]);
    float *y = mem_ptr(mems[1]);
    if (s->kind == DN_STEP_PAD)
        run_pad(s, x, y);
    else if (s->kind == DN_STEP_RESIZE)
        run_resize(s, x, y);
    else if (s->kind == DN_STEP_BCAST)
        dn_bcast_run(s, mems);
    else if (s->kind == DN_STEP_RECURRENCE)
        dn_rec_run(s, mems);
    else if (s->kind == DN_STEP_INTERLEAVE)
        dn_interleave_run(s, mems);
    else if (s->kind == DN_STEP_DYNQUANT)
        dn_dynquant_run(s, mems);
    else if (s->kind == DN_STEP_FAKEQUANT)
        dn_fakequant_run(s, mems);
    else if (s->kind == DN_STEP_SWISH)
        dn_swish_run(x, y, dnnl_memory_desc_get_size(&s->args[0].md) / sizeof(float), s->nat.fp[0]);
}
