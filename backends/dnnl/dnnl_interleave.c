/* Interleaving G parts along the innermost axis, as one native step. Two uses:
 *
 * A ChannelShuffle of G parts (the Concat of ShuffleNet's two branches, shuffled; see
 * partitioner/passes/channel_shuffle.c) as one native step: output channel j * G + i is part
 * i's channel j. oneDNN has no such primitive; as its Concat then its shuffle reorder it cost
 * 7.2 + 4.2 us per ShuffleNetV2 unit at 14x14x96 (the Concat copying 48 floats per pixel per
 * part), where this reads each part once and writes the output once.
 *
 * Every tensor is seen channels-last: the shuffled axis has stride 1 and the other dims run
 * through memory as one flat "pixel" index with a constant stride, which is how the
 * convolutions before it leave their outputs (NHWC, or a channel slice of NHWC: the Split
 * half ShuffleNet passes through is read where it lies). A part in another layout is
 * reordered to dense channels-last first.
 *
 * An RGB image in NCHW into a channels-last first convolution: its three planes are the parts
 * (one "channel" each, pixel stride 1). oneDNN's jit reorder writes 12-byte pixels at 3.3 G
 * floats/s (0.045 ms for 224x224, 4% of ShuffleNetV2 x0.5); three AVX-512 permutes per 16
 * floats out do it here. */
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

/* Is SRC -> DST an image's NCHW -> NHWC of batch 1 and 3 channels (dense f32 both)? */
bool dn_interleave_planes_fits(const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst)
{
    if (src->ndims != 4 || dst->ndims != 4 || src->data_type != dnnl_f32 ||
        dst->data_type != dnnl_f32 || src->dims[0] != 1 || src->dims[1] != 3 ||
        !dn_md_is_plain(src) || src->offset0 != 0 || dst->offset0 != 0 ||
        dst->format_kind != dnnl_blocked || dst->format_desc.blocking.inner_nblks != 0)
        return false;
    for (int d = 0; d < 4; d++)
        if (src->dims[d] != dst->dims[d])
            return false;
    const int64_t *st = dst->format_desc.blocking.strides, w = dst->dims[3], h = dst->dims[2];
    return st[1] == 1 && st[3] == 3 && st[2] == 3 * w && st[0] == 3 * w * h;
}

int dn_interleave_planes_add(dn_compiler *c, int src_buf, const dnnl_memory_desc_t *src,
                             int dst_buf, const dnnl_memory_desc_t *dst)
{
    int64_t plane = src->dims[2] * src->dims[3];
    dn_native nat = { .ip = { [IP_G] = 3, [IP_M] = 1, [IP_PIXELS] = plane, [IP_STRIDES] = 1,
                              [IP_STRIDES + 1] = 1, [IP_STRIDES + 2] = 1 } };
    dn_arg args[4];
    for (int i = 0; i < 3; i++) {
        args[i] = (dn_arg){ DNNL_ARG_MULTIPLE_SRC + i, src_buf, { 0 } };
        dn_md_plain(&args[i].md, 1, &plane);
        args[i].md.offset0 = i * plane;                /* plane i of the same buffer */
    }
    args[3] = (dn_arg){ DNNL_ARG_DST, dst_buf, *dst };
    int rc = dn_add_native(c, DN_STEP_INTERLEAVE, args, 4, &nat);
    if (rc == 0)
        c->steps[c->n_steps - 1].reorder_bytes = dnnl_memory_desc_get_size(dst);
    return rc;
}

/* ---- running ---------------------------------------------------------------------------- */

/* Three planes, pixels [P0, P1): 16 pixels of each become 48 interleaved floats. */
__attribute__((target("avx512f")))
static void interleave_planes3(const float *a, const float *b, const float *c, int64_t p0,
                               int64_t p1, float *y)
{
    /* output lane q of vector v is pixel (16v + q) / 3's channel (16v + q) % 3: channels 0
     * and 1 from a and b (a permute of the two), channel 2 from c (a masked permute) */
    int32_t ab[3][16], cc[3][16];
    __mmask16 from_c[3] = { 0, 0, 0 };
    for (int v = 0; v < 3; v++)
        for (int q = 0; q < 16; q++) {
            int e = 16 * v + q, px = e / 3, ch = e % 3;
            ab[v][q] = ch == 1 ? 16 + px : px;
            cc[v][q] = px;
            if (ch == 2)
                from_c[v] |= (__mmask16)(1u << q);
        }
    __m512i iab[3], ic[3];
    for (int v = 0; v < 3; v++) {
        iab[v] = _mm512_loadu_si512(ab[v]);
        ic[v] = _mm512_loadu_si512(cc[v]);
    }
    int64_t p = p0;
    for (; p + 16 <= p1; p += 16) {
        __m512 va = _mm512_loadu_ps(a + p), vb = _mm512_loadu_ps(b + p), vc = _mm512_loadu_ps(c + p);
        for (int v = 0; v < 3; v++) {
            __m512 t = _mm512_permutex2var_ps(va, iab[v], vb);
            _mm512_storeu_ps(y + 3 * p + 16 * v, _mm512_mask_permutexvar_ps(t, from_c[v], ic[v], vc));
        }
    }
    for (; p < p1; p++) {
        y[3 * p] = a[p];
        y[3 * p + 1] = b[p];
        y[3 * p + 2] = c[p];
    }
}


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
    if (g == 2 && dn_avx512())
        interleave2(x[0], xs[0], x[1], xs[1], m, p0, p1, y);
    else if (g == 3 && m == 1 && xs[0] == 1 && xs[1] == 1 && xs[2] == 1 && dn_avx512())
        interleave_planes3(x[0], x[1], x[2], p0, p1, y);
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
