/* A ChannelShuffle of G parts (the Concat of ShuffleNet's two branches, shuffled; see
 * partitioner/passes/channel_shuffle.c) as one native step: output channel j * G + i is part
 * i's channel j. oneDNN has no such primitive; as its Concat then its shuffle reorder it cost
 * 7.2 + 4.2 us per ShuffleNetV2 unit at 14x14x96 (the Concat copying 48 floats per pixel per
 * part), where this reads each part once and writes the output once.
 *
 * Every tensor is seen channels-last: the shuffled axis has stride 1 and the other dims run
 * through memory as one flat "pixel" index with a constant stride, which is how the
 * convolutions before it leave their outputs (NHWC, or a channel slice of NHWC: the Split
 * half ShuffleNet passes through is read where it lies). A part in another layout is
 * reordered to dense channels-last first. */
#include <omp.h>
#include <string.h>

#include <immintrin.h>

#include "backends/dnnl/dnnl_internal.h"

enum { IP_G, IP_M, IP_PIXELS, IP_STRIDES };   /* ip[IP_STRIDES + i]: part i's pixel stride */

#define IL_PARALLEL_FLOATS (1 << 16)           /* below this the step runs on one thread */

/* MD's pixel stride when AXIS has stride 1 and its other dims, in order, step through memory
 * as one index of that stride; 0 when they do not (blocked layouts among them). */
static int64_t pixel_stride(const dnnl_memory_desc_t *md, int axis)
{
    if (md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0 ||
        md->data_type != dnnl_f32)
        return 0;
    const int64_t *st = md->format_desc.blocking.strides;
    if (md->dims[axis] > 1 && st[axis] != 1)
        return 0;
    int64_t ps = 0, next = 0;
    for (int d = md->ndims - 1; d >= 0; d--) {
        if (d == axis || md->dims[d] == 1)
            continue;
        if (!ps)
            ps = st[d];
        else if (st[d] != next)
            return 0;
        next = st[d] * md->dims[d];
    }
    if (!ps)
        ps = md->dims[axis];                   /* one pixel */
    return ps >= md->dims[axis] ? ps : 0;
}

/* Dense channels-last md of SHAPE with AXIS innermost. */
static int channels_last(dn_compiler *c, const bd_shape *shape, int axis, dnnl_memory_desc_t *md)
{
    dnnl_dims_t dims, strides;
    int64_t s = shape->dims[axis];
    for (int d = shape->rank - 1; d >= 0; d--) {
        dims[d] = shape->dims[d];
        if (d != axis) {
            strides[d] = s;
            s *= shape->dims[d];
        }
    }
    strides[axis] = 1;
    return dn_check(c, dnnl_memory_desc_init_by_strides(md, shape->rank, dims, dnnl_f32, strides),
                    "dnnl_memory_desc_init_by_strides");
}

bool dn_interleave_fits(const bd_node *n, int axis, int64_t groups, char *why, size_t len)
{
    const bd_value *y = n->outputs[0];
    if ((int64_t)n->n_inputs != groups || groups > DN_INTERLEAVE_MAX_PARTS)
        return dn_why(why, len, "ChannelShuffle of %zu parts: the parts must be its %lld groups "
                      "(at most %d)", n->n_inputs, (long long)groups, DN_INTERLEAVE_MAX_PARTS);
    for (size_t k = 0; k < n->n_inputs; k++) {
        const bd_value *p = n->inputs[k];
        if (!p || !dn_is_f32_static(p) || p->shape.rank != y->shape.rank)
            return dn_why(why, len, "ChannelShuffle: part %zu is not FP32 of the output's rank", k);
        for (int d = 0; d < y->shape.rank; d++)
            if (p->shape.dims[d] * (d == axis ? groups : 1) != y->shape.dims[d])
                return dn_why(why, len, "ChannelShuffle: part %zu's shape does not fit the output", k);
    }
    return true;
}

int dn_interleave_build(dn_compiler *c, const bd_node *n, int axis, int64_t groups)
{
    const bd_value *y = n->outputs[0];
    int64_t m = n->inputs[0]->shape.dims[axis];
    dn_native nat = { .ip = { [IP_G] = groups, [IP_M] = m,
                              [IP_PIXELS] = m ? bd_shape_numel(&n->inputs[0]->shape) / m : 0 } };
    dn_arg args[DN_INTERLEAVE_MAX_PARTS + 1];
    int rc, buf;
    for (int64_t i = 0; i < groups; i++) {
        dnnl_memory_desc_t md;
        if ((rc = dn_input_any(c, n->inputs[i], &buf, &md)))
            return rc;
        if (!pixel_stride(&md, axis) &&
            ((rc = channels_last(c, &n->inputs[i]->shape, axis, &md)) || (rc = dn_input(c, n->inputs[i], &md, &buf))))
            return rc;
        nat.ip[IP_STRIDES + i] = pixel_stride(&md, axis);
        args[i] = (dn_arg){ DNNL_ARG_MULTIPLE_SRC + (int)i, buf, md };
    }
    dnnl_memory_desc_t ymd;
    if ((rc = channels_last(c, &y->shape, axis, &ymd)) || (rc = dn_output(c, y, &ymd, &buf)))
        return rc;
    args[groups] = (dn_arg){ DNNL_ARG_DST, buf, ymd };
    return dn_add_native(c, DN_STEP_INTERLEAVE, args, (int)groups + 1, &nat);
}

/* ---- running ---------------------------------------------------------------------------- */

/* Two parts, pixels [P0, P1): 16 channels of each become 32 interleaved ones. */
__attribute__((target("avx512f")))
static void interleave2(const float *a, int64_t as, const float *b, int64_t bs, int64_t m,
                        int64_t p0, int64_t p1, float *y)
{
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    for (int64_t p = p0; p < p1; p++) {
        const float *ap = a + p * as, *bp = b + p * bs;
        float *yp = y + p * 2 * m;
        int64_t j = 0;
        for (; j + 16 <= m; j += 16) {
            __m512 va = _mm512_loadu_ps(ap + j), vb = _mm512_loadu_ps(bp + j);
            _mm512_storeu_ps(yp + 2 * j, _mm512_permutex2var_ps(va, lo, vb));
            _mm512_storeu_ps(yp + 2 * j + 16, _mm512_permutex2var_ps(va, hi, vb));
        }
        if (j < m) {
            int64_t r = m - j, out = 2 * r;
            __mmask16 in = (__mmask16)((1u << r) - 1);
            __m512 va = _mm512_maskz_loadu_ps(in, ap + j), vb = _mm512_maskz_loadu_ps(in, bp + j);
            __mmask16 m1 = out >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << out) - 1);
            _mm512_mask_storeu_ps(yp + 2 * j, m1, _mm512_permutex2var_ps(va, lo, vb));
            if (out > 16)
                _mm512_mask_storeu_ps(yp + 2 * j + 16, (__mmask16)((1u << (out - 16)) - 1),
                                      _mm512_permutex2var_ps(va, hi, vb));
        }
    }
}

static void interleave_any(const float *const *x, const int64_t *xs, int64_t g, int64_t m,
                           int64_t p0, int64_t p1, float *y)
{
    for (int64_t p = p0; p < p1; p++)
        for (int64_t i = 0; i < g; i++) {
            const float *xp = x[i] + p * xs[i];
            float *yp = y + p * g * m + i;
            for (int64_t j = 0; j < m; j++)
                yp[j * g] = xp[j];
        }
}

static void run_range(const float *const *x, const int64_t *xs, int64_t g, int64_t m, int64_t p0,
                      int64_t p1, float *y)
{
    if (g == 2 && dn_swish_native())                        /* the AVX-512 probe */
        interleave2(x[0], xs[0], x[1], xs[1], m, p0, p1, y);
    else
        interleave_any(x, xs, g, m, p0, p1, y);
}

void dn_interleave_run(const dn_step *s, dnnl_memory_t *mems)
{
    const int64_t *ip = s->nat.ip;
    int64_t g = ip[IP_G], m = ip[IP_M], pixels = ip[IP_PIXELS];
    const float *x[DN_INTERLEAVE_MAX_PARTS];
    for (int64_t i = 0; i < g; i++) {
        void *p = NULL;
        dnnl_memory_get_data_handle(mems[i], &p);
        x[i] = (const float *)p + s->args[i].md.offset0;   /* a channel slice starts inside */
    }
    void *yv = NULL;
    dnnl_memory_get_data_handle(mems[g], &yv);
    float *y = yv;
    int threads = omp_get_max_threads();
    if (threads < 2 || pixels * g * m < IL_PARALLEL_FLOATS) {
        run_range(x, ip + IP_STRIDES, g, m, 0, pixels, y);
        return;
    }
    #pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t p0 = pixels * t / nt, p1 = pixels * (t + 1) / nt;
        run_range(x, ip + IP_STRIDES, g, m, p0, p1, y);
    }
}
