/* The dynamic-quantization pattern onnxruntime's quantize_dynamic writes, on oneDNN:
 *
 *   x (f32) -> DynamicQuantizeLinear -> (x_q u8, x_scale, x_zp)
 *   MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast(to float) -> Mul(x_scale * W_scale) [-> Add(bias)]
 *
 * DynamicQuantizeLinear is a native step (AVX2 min/max, then quantize; ONNX Runtime's
 * semantics, dq_params). MatMulInteger is oneDNN's int8 matmul (gemm:jit on AVX2): src u8/s8,
 * weights s8 laid out once at compile, dst s32, and the src zero point a run-time zero point
 * (DNNL_RUNTIME_S32_VAL, the quantizer's output). oneDNN 2.6 takes no u8 weights
 * (dnnl_matmul_desc_init refuses u8 x u8) and only a common weights zero point, and without
 * VNNI its u8 x s8 kernel adds pairs of products in int16 with saturation, so the weights are
 * laid out as B less its zero point (one, or per column) split into s8 parts that multiply
 * exactly (dq_part_limit: |w| <= 64 without VNNI), stacked along K, with the src repeated as
 * many times: one matmul, exactly ONNX's product. The Cast to float of the s32 product is a
 * reorder. The partitioner's dynquant pass fuses MatMulInteger -> Cast -> Mul into one node,
 * braid::MatMulIntegerScaled(a, b, a_zp, b_zp, scale): the same matmul with dst f32 and SCALE
 * as run-time output scales (one, or one per column), whose bias Add and what follows become
 * post-ops (fuse_postops).
 *
 * x_zp is held as s32 inside a subgraph (the run-time zero point oneDNN reads); the int8
 * values may cross a subgraph's boundary (a node forced to a fallback): a oneDNN subgraph takes
 * UINT8/INT8/INT32 inputs and outputs as well as FP32. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "backends/dnnl/dnnl_internal.h"

/* ---- shapes and dtypes -------------------------------------------------------------------- */

static bool is_q8(int dt) { return dt == BD_DT_UINT8 || dt == BD_DT_INT8; }

static dnnl_data_type_t dt_of(int dt)
{
    switch (dt) {
    case BD_DT_UINT8: return dnnl_u8;
    case BD_DT_INT8:  return dnnl_s8;
    case BD_DT_INT32: return dnnl_s32;
    default:          return dnnl_f32;
    }
}

/* Plain row-major md of DIMS (rank 0: [1]) of data type DT. */
static void md_plain_dt(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_data_type_t dt)
{
    dn_md_plain(md, rank, dims);
    md->data_type = dt;
}

static bool is_static(const bd_value *v)
{
    return v && bd_shape_is_static(&v->shape) && v->shape.rank <= DNNL_MAX_NDIMS;
}

static int64_t numel(const bd_value *v) { return bd_shape_numel(&v->shape); }

static bool is_braid(const bd_node *n, const char *op)
{
    return n->domain && !strcmp(n->domain, "braid") && !strcmp(n->op_type, op);
}

static bool is_onnx(const bd_node *n, const char *op)
{
    return (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) && !strcmp(n->op_type, op);
}

/* The I-th element of integer constant V (u8, s8, s32) as an int. */
static int32_t int_at(const bd_value *v, int64_t i)
{
    const unsigned char *p = v->data;
    if (v->dtype == BD_DT_UINT8)
        return p[i];
    if (v->dtype == BD_DT_INT8)
        return (int8_t)p[i];
    int32_t x;
    memcpy(&x, p + i * 4, 4);
    return x;
}

/* ---- what each node of the pattern must be on its own ----------------------------------- */

static bool dq_local(const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 3)
        return dn_why(why, len, "DynamicQuantizeLinear: expects x and three outputs");
    const bd_value *x = n->inputs[0], *y = n->outputs[0], *s = n->outputs[1], *z = n->outputs[2];
    if (!dn_is_f32_static(x) || !is_static(y) || y->dtype != BD_DT_UINT8 ||
        !bd_shape_equal(&x->shape, &y->shape) || !dn_is_f32_static(s) || numel(s) != 1 ||
        !is_static(z) || z->dtype != BD_DT_UINT8 || numel(z) != 1)
        return dn_why(why, len, "DynamicQuantizeLinear: FLOAT x of a static shape, UINT8 y of its "
                      "shape, FLOAT scale and UINT8 zero point scalars");
    return dn_no_post(n, why, len);
}

/* How large |w| may be in an s8 weight the int8 matmul multiplies exactly: without VNNI,
 * oneDNN's (and MLAS's) u8 x s8 kernels add pairs of products in 16 bits with saturation
 * (vpmaddubsw), so 255 * w1 + 255 * w2 must stay within int16: |w| <= 64. With VNNI (vpdpbusd)
 * products accumulate in 32 bits: 127. BRAID_DNNL_INT8_EXACT=0 takes 127 everywhere: one part,
 * ~2.3x faster on BERT without VNNI, and pairs of large products saturate as in ONNX Runtime's
 * own kernel there (docs/performance.md). */
static int32_t dq_part_limit(void)
{
    const char *exact = getenv("BRAID_DNNL_INT8_EXACT");
    if (exact && !strcmp(exact, "0"))
        return 127;
    return dn_cpu_has_vnni() ? 127 : DN_INT8_NO_VNNI_MAX;
}

/* The operands of a MatMulInteger (SCALED: MatMulIntegerScaled) as oneDNN takes them. */
typedef struct mi_form {
    const bd_value *a, *b, *az, *bz, *scale;
    int64_t         m, k, n;      /* A collapsed to [M, K] (all leading dims are rows) */
    int             parts;        /* B less its zero point as PARTS s8 matrices (mi_parts) */
    bool            scaled;
} mi_form;

/* B's I-th element less its zero point (one, or its column's): the weights the matmul reads. */
static int32_t mi_w(const mi_form *f, int64_t i)
{
    int32_t z = !f->bz ? 0 : int_at(f->bz, numel(f->bz) == 1 ? 0 : i % f->n);
    return int_at(f->b, i) - z;
}

/* F->parts for F's weights (dq_part_limit). */
static void mi_parts(mi_form *f)
{
    int32_t lo = 0, hi = 0;
    for (int64_t i = 0; i < f->k * f->n; i++) {
        int32_t v = mi_w(f, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    int32_t big = -lo > hi ? -lo : hi, lim = dq_part_limit();
    f->parts = big <= lim ? 1 : (int)((big + lim - 1) / lim);
}

static bool mi_local(const bd_node *n, mi_form *f, char *why, size_t len)
{
    memset(f, 0, sizeof *f);
    f->scaled = is_braid(n, "MatMulIntegerScaled");
    size_t nin = dn_num_op_inputs(n);
    if (nin < 2 || nin > (f->scaled ? 5u : 4u) || n->n_outputs != 1 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "%s: expects A, B, optional zero points%s and one output", n->op_type,
                      f->scaled ? ", a scale" : "");
    f->a = n->inputs[0];
    f->b = n->inputs[1];
    f->az = dn_op_input(n, 2);
    f->bz = dn_op_input(n, 3);
    f->scale = f->scaled ? dn_op_input(n, 4) : NULL;
    const bd_value *a = f->a, *b = f->b, *y = n->outputs[0];
    if (!is_static(a) || !is_q8(a->dtype) || a->shape.rank < 2 || !is_static(y))
        return dn_why(why, len, "%s: A must be INT8/UINT8 of a static shape, rank 2 or more", n->op_type);
    if (!b->data || !is_q8(b->dtype) || b->shape.rank != 2)
        return dn_why(why, len, "%s: oneDNN takes a constant 2-D INT8/UINT8 B only", n->op_type);
    f->k = b->shape.dims[0];
    f->n = b->shape.dims[1];
    f->m = f->k > 0 ? numel(a) / f->k : 0;
    if (a->shape.dims[a->shape.rank - 1] != f->k || (size_t)(f->k * f->n) > b->nbytes ||
        y->shape.rank != a->shape.rank || y->shape.dims[y->shape.rank - 1] != f->n ||
        numel(y) != f->m * f->n)
        return dn_why(why, len, "%s: operand shapes do not match the output", n->op_type);
    if (f->az && (f->az->dtype != a->dtype || !is_static(f->az) || numel(f->az) != 1))
        return dn_why(why, len, "%s: A's zero point must be one element of A's type", n->op_type);
    if (f->bz) {
        int64_t cnt = numel(f->bz);
        if (f->bz->dtype != b->dtype || !f->bz->data || (cnt != 1 && cnt != f->n) ||
            f->bz->nbytes < (size_t)cnt)
            return dn_why(why, len, "%s: B's zero point must be a constant of B's type, one or one per "
                          "column", n->op_type);
    }
    f->parts = 1;                 /* mi_parts: at build (a scan of B) */
    if (!f->scaled) {
        if (y->dtype != BD_DT_INT32)
            return dn_why(why, len, "MatMulInteger: the output must be INT32");
        return dn_no_post(n, why, len);
    }
    const bd_value *s = f->scale;
    if (!s || !dn_is_f32_static(s) || (numel(s) != 1 && (numel(s) != f->n || s->shape.rank < 1 ||
                                                         s->shape.dims[s->shape.rank - 1] != f->n)))
        return dn_why(why, len, "MatMulIntegerScaled: the scale must be FP32, one element or one per column");
    if (y->dtype != BD_DT_FLOAT)
        return dn_why(why, len, "MatMulIntegerScaled: the output must be FP32");
    return true;
}

static bool cast_local(const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return dn_why(why, len, "Cast: expects one input and one output");
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    if (bd_node_attr_int(n, "to", 0) != BD_DT_FLOAT || !dn_is_f32_static(y))
        return dn_why(why, len, "Cast: oneDNN runs casts to FLOAT only");
    if (!is_static(x) || (x->dtype != BD_DT_INT32 && !is_q8(x->dtype)) || !bd_shape_equal(&x->shape, &y->shape))
        return dn_why(why, len, "Cast: oneDNN casts INT32, INT8 and UINT8 of a static shape");
    const bd_node *p = x->producer;   /* the integer pattern's only: other casts stay where they were */
    if (!p || !(is_onnx(p, "MatMulInteger") || is_braid(p, "MatMulIntegerScaled") ||
                is_onnx(p, "DynamicQuantizeLinear")))
        return dn_why(why, len, "Cast: oneDNN casts the outputs of MatMulInteger and DynamicQuantizeLinear only");
    return dn_no_post(n, why, len);
}

/* ---- the matmul's primitive ------------------------------------------------------------ */

/* The attr of F's matmul: user scratchpad, PO (may be NULL; not consumed), the run-time src
 * zero point (when A has one), the weights zero point, run-time output scales (scaled). */
static dnnl_primitive_attr_t mi_attr(const mi_form *f, const_dnnl_post_ops_t po)
{
    dnnl_primitive_attr_t attr = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
        return NULL;
    int zsrc = DNNL_RUNTIME_S32_VAL;
    float rs = DNNL_RUNTIME_F32_VAL;
    bool ok = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
              (!po || dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success) &&
              (!f->az || dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &zsrc) == dnnl_success) &&
              (!f->scaled || dnnl_primitive_attr_set_output_scales(attr, numel(f->scale) == 1 ? 1 : f->n,
                                                                   numel(f->scale) == 1 ? 0 : 1 << 1,
                                                                   &rs) == dnnl_success);
    if (!ok) {
        dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    return attr;
}

static void mi_mds(const mi_form *f, dnnl_memory_desc_t *src, dnnl_memory_desc_t *wei,
                   dnnl_memory_desc_t *dst)
{
    int64_t kk = f->k * f->parts, sd[2] = { f->m, kk }, dd[2] = { f->m, f->n };
    dnnl_dims_t wdims = { kk, f->n };
    md_plain_dt(src, 2, sd, dt_of(f->a->dtype));
    dnnl_memory_desc_init_by_tag(wei, 2, wdims, dnnl_s8, dnnl_format_tag_any);
    md_plain_dt(dst, 2, dd, f->scaled ? dnnl_f32 : dnnl_s32);
}

/* The pd of N's matmul probed at supports() (its post-ops' operands as plain broadcasts):
 * false with WHY when oneDNN has none or only a reference one. */
static bool mi_probe(const bd_node *n, const mi_form *f, char *why, size_t len)
{
    dnnl_memory_desc_t src, wei, dst, x;
    mi_mds(f, &src, &wei, &dst);
    dnnl_post_ops_t po = NULL;
    bool ok = dnnl_post_ops_create(&po) == dnnl_success;
    for (int i = 0; ok && i < n->n_post; i++) {
        const bd_postop *p = &n->post[i];
        if (p->kind == BD_POST_SUM) {
            ok = dnnl_post_ops_append_sum(po, p->scale) == dnnl_success;
        } else if (p->kind == BD_POST_BINARY) {
            const bd_shape *s = &n->inputs[p->input]->shape;
            int64_t d[2] = { 1, s->rank ? s->dims[s->rank - 1] : 1 };
            if (bd_shape_numel(s) != d[1])
                d[0] = f->m;
            dn_md_plain(&x, 2, d);
            ok = dnnl_post_ops_append_binary(po, dnnl_binary_add, &x) == dnnl_success;
        }
    }
    dnnl_primitive_attr_t attr = ok ? mi_attr(f, po) : NULL;
    dnnl_matmul_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    const char *impl = NULL;
    if (attr && dnnl_matmul_desc_init(&d, &src, &wei, NULL, &dst) == dnnl_success &&
        dnnl_primitive_desc_create(&pd, &d, attr, dn_engine(), NULL) == dnnl_success)
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    bool fast = impl && !dn_impl_is_cliff(dnnl_matmul, impl);
    if (!pd)
        dn_why(why, len, "%s: oneDNN has no int8 matmul for these operands", n->op_type);
    else if (!fast)
        dn_why(why, len, "%s: oneDNN's int8 matmul here is a reference kernel (%s)", n->op_type,
               impl ? impl : "?");
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (po)
        dnnl_post_ops_destroy(po);
    return fast;
}

/* ---- supports() --------------------------------------------------------------------------- */

bool dn_dynquant_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    return dq_local(n, why, len);
}

bool dn_mmi_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    mi_form f;
    if (!mi_local(n, &f, why, len))
        return false;
    if (n->n_post && !dn_postops_supported(g, n, why, len))
        return false;
    if (n->n_post && !dn_postops_collapsible(n))
        return dn_why(why, len, "MatMulIntegerScaled: post-ops that do not apply to the output as [M, N]");
    return mi_probe(n, &f, why, len);
}

bool dn_cast_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    return cast_local(n, why, len);
}

/* ---- DynamicQuantizeLinear -------------------------------------------------------------- */

int dn_dynquant_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0];
    dnnl_memory_desc_t xmd, ymd, smd, zmd;
    int rc, xbuf, ybuf, sbuf, zbuf;
    int64_t one = 1;
    if ((rc = dn_input_plain(c, x, &xbuf, &xmd)))
        return rc;
    md_plain_dt(&ymd, x->shape.rank, x->shape.dims, dnnl_u8);
    dn_md_plain(&smd, 1, &one);
    md_plain_dt(&zmd, 1, &one, dnnl_s32);     /* the run-time zero point oneDNN reads */
    if ((rc = dn_output(c, n->outputs[0], &ymd, &ybuf)) || (rc = dn_output(c, n->outputs[1], &smd, &sbuf)) ||
        (rc = dn_output(c, n->outputs[2], &zmd, &zbuf)))
        return rc;
    const dn_tensor *ts = dn_tensor_of(c, n->outputs[1]);
    if (!ts)
        return c->err ? c->err->code : BD_EBACKEND;
    dn_arg args[4] = {
        { DNNL_ARG_SRC, xbuf, xmd }, { DNNL_ARG_DST, ybuf, ymd },
        { DNNL_ARG_DST_1, sbuf, ts->md }, { DNNL_ARG_DST_2, zbuf, zmd },
    };
    return dn_add_native(c, DN_STEP_DYNQUANT, args, 4, NULL);
}

/* ONNX Runtime's DynamicQuantizeLinear (GetQuantizationParameter, MlasQuantizeLinear): the
 * range [min(0, xmin), max(0, xmax)] (NaNs skipped), scale = range / 255 (1 when the range is
 * empty: all zeros), zp = round_half_even(clamp(-min / scale, 0, 255)), and y =
 * saturate(round_half_even(x / scale) + zp), the division in float. */
static void dq_params(float lo, float hi, float *scale, int32_t *zp)
{
    lo = lo < 0 ? lo : 0;
    hi = hi > 0 ? hi : 0;
    *scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float z = -lo / *scale;
    z = z < 0 ? 0 : z > 255 ? 255 : z;
    *zp = (int32_t)nearbyintf(z);
}

static uint8_t dq_one(float x, float scale, float zp)
{
    float q = nearbyintf(x / scale) + zp;
    return q > 0 ? (q < 255 ? (uint8_t)q : 255) : 0;        /* NaN: 0 */
}

static void dq_range_scalar(const float *x, size_t n, float *lo, float *hi)
{
    float a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = x[i] < a ? x[i] : a;
        b = x[i] > b ? x[i] : b;
    }
    *lo = a;
    *hi = b;
}

__attribute__((target("avx2")))
static void dq_range_avx2(const float *x, size_t n, float *lo, float *hi)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {           /* min/max(v, acc) keep acc when v is NaN */
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        a0 = _mm256_min_ps(v0, a0);
        a1 = _mm256_min_ps(v1, a1);
        b0 = _mm256_max_ps(v0, b0);
        b1 = _mm256_max_ps(v1, b1);
    }
    float la[8], hb[8];
    _mm256_storeu_ps(la, _mm256_min_ps(a0, a1));
    _mm256_storeu_ps(hb, _mm256_max_ps(b0, b1));
    float l, h;
    dq_range_scalar(x + i, n - i, &l, &h);
    for (int k = 0; k < 8; k++) {
        l = la[k] < l ? la[k] : l;
        h = hb[k] > h ? hb[k] : h;
    }
    *lo = l;
    *hi = h;
}

__attribute__((target("avx2")))
static void dq_quant_avx2(const float *x, uint8_t *y, size_t n, float scale, float zp)
{
    __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp), zero = _mm256_setzero_ps();
    __m256 top = _mm256_set1_ps(255.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 q = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), s),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, z), zero), top);   /* NaN -> 0 */
        __m256i v = _mm256_cvtps_epi32(q);
        __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(w, w));
    }
    for (; i < n; i++)
        y[i] = dq_one(x[i], scale, zp);
}

static bool g_avx2;
static pthread_once_t g_avx2_once = PTHREAD_ONCE_INIT;

static void probe_avx2(void)
{
    __builtin_cpu_init();
    g_avx2 = __builtin_cpu_supports("avx2");
}

void dn_dynquant_run(const dn_step *s, dnnl_memory_t *mems)
{
    void *p[4] = { NULL, NULL, NULL, NULL };
    for (int i = 0; i < 4; i++)
        dnnl_memory_get_data_handle(mems[i], &p[i]);
    const float *x = p[0];
    size_t n = dnnl_memory_desc_get_size(&s->args[0].md) / sizeof(float);
    pthread_once(&g_avx2_once, probe_avx2);
    float lo, hi, scale;
    int32_t zp;
    if (g_avx2)
        dq_range_avx2(x, n, &lo, &hi);
    else
        dq_range_scalar(x, n, &lo, &hi);
    dq_params(lo, hi, &scale, &zp);
    if (g_avx2) {
        dq_quant_avx2(x, p[1], n, scale, (float)zp);
    } else {
        uint8_t *y = p[1];
        for (size_t i = 0; i < n; i++)
            y[i] = dq_one(x[i], scale, (float)zp);
    }
    *(float *)p[2] = scale;
    *(int32_t *)p[3] = zp;
}

/* ---- MatMulInteger and MatMulIntegerScaled ---------------------------------------------- */

/* A's zero point as the s32 [1] buffer oneDNN reads at run time: DynamicQuantizeLinear's (held
 * as s32, dn_dynquant_build), another tensor's converted, or a constant's value. */
static int mi_src_zp(dn_compiler *c, const bd_value *az, int *buf, dnnl_memory_desc_t *md)
{
    int64_t one = 1;
    md_plain_dt(md, 1, &one, dnnl_s32);
    if (az->data) {
        int32_t v = int_at(az, 0);
        return dn_const(c, &v, md, md, buf);
    }
    return dn_input(c, az, md, buf);
}

/* B less its zero point as PARTS s8 matrices stacked along K ([PARTS * K, N]) in the layout
 * WMD: part j of v is v / PARTS (toward zero) plus one of the remainder's units for the first
 * |remainder| parts, each within dq_part_limit. The src is A repeated PARTS times along K, so
 * the one matmul sums the parts' products: exactly A x (B - zero point). */
static int mi_weights(dn_compiler *c, const mi_form *f, const dnnl_memory_desc_t *wmd, int *buf)
{
    int64_t wd[2] = { f->k * f->parts, f->n };
    dnnl_memory_desc_t src;
    md_plain_dt(&src, 2, wd, dnnl_s8);
    if (f->parts == 1 && !f->bz && f->b->dtype == BD_DT_INT8)
        return dn_const_shared(c, f->b->data, &src, wmd, buf);     /* B as it is */
    size_t kn = (size_t)(f->k * f->n);
    int8_t *w = malloc(kn * (size_t)f->parts + 1);
    if (!w)
        return dn_fail(c, BD_ENOMEM, "out of memory for the weights of '%s'", f->b->name);
    for (size_t i = 0; i < kn; i++) {
        int32_t v = mi_w(f, (int64_t)i), base = v / f->parts, rem = v - base * f->parts;
        for (int j = 0; j < f->parts; j++)
            w[(size_t)j * kn + i] = (int8_t)(base + (j < abs(rem) ? (rem > 0 ? 1 : -1) : 0));
    }
    int rc = dn_const(c, w, &src, wmd, buf);
    free(w);
    return rc;
}

/* A's buffer as the matmul's src: A itself, or A repeated F->PARTS times along K (a concat
 * step, made once per A and shared by its matmuls: q, k and v read one). */
static int mi_src(dn_compiler *c, const mi_form *f, const dn_tensor *ta, const dnnl_memory_desc_t *src,
                  int *buf)
{
    if (f->parts == 1) {
        *buf = ta->buf;
        return 0;
    }
    static const int64_t whole[3] = { 0 };
    if ((*buf = dn_cached_copy(c, f->a, src, whole)) >= 0)
        return 0;
    int64_t ad[2] = { f->m, f->k };
    dnnl_memory_desc_t one, srcs[8];
    md_plain_dt(&one, 2, ad, src->data_type);
    if (f->parts > 8)
        return dn_fail(c, BD_EUNSUPPORTED, "B's values need %d parts", f->parts);
    for (int j = 0; j < f->parts; j++)
        srcs[j] = one;
    dnnl_primitive_attr_t attr = dn_attr(c, NULL);
    if (!attr)
        return BD_EBACKEND;
    dnnl_primitive_desc_t pd = NULL;
    int rc = dn_check(c, dnnl_concat_primitive_desc_create(&pd, src, f->parts, 1, srcs, attr, c->eng),
                      "dnnl_concat_primitive_desc_create (int8 src)");
    dnnl_primitive_attr_destroy(attr);
    if (!rc)
        rc = dn_temp(c, src, buf);
    if (rc) {
        if (pd)
            dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[9];
    for (int j = 0; j < f->parts; j++)
        args[j] = (dn_arg){ DNNL_ARG_MULTIPLE_SRC + j, ta->buf, one };
    args[f->parts] = (dn_arg){ DNNL_ARG_DST, *buf, *src };
    if ((rc = dn_add_step(c, pd, args, f->parts + 1)))
        return rc;
    return dn_cache_copy(c, f->a, src, whole, *buf);
}

int dn_mmi_build(dn_compiler *c, const bd_node *n)
{
    mi_form f;
    char why[160];
    if (!mi_local(n, &f, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    mi_parts(&f);
    const bd_value *y = n->outputs[0];
    const dn_tensor *ta = dn_tensor_of(c, f.a);
    if (!ta)
        return c->err ? c->err->code : BD_EBACKEND;
    if (ta->md.data_type != dt_of(f.a->dtype) || ta->strided_view)
        return dn_fail(c, BD_EBACKEND, "A '%s' is not held as plain int8 data", f.a->name);
    dnnl_memory_desc_t src, wei, dst;
    mi_mds(&f, &src, &wei, &dst);
    dn_post_args pa;
    memset(&pa, 0, sizeof pa);
    dnnl_post_ops_t po = NULL;
    int rc = 0;
    if (f.scaled && (rc = dn_postops_build(c, 0, 2, dst.dims, &po, &pa)))
        return rc;
    dnnl_primitive_attr_t attr = mi_attr(&f, po);
    if (po)
        dnnl_post_ops_destroy(po);
    if (!attr)
        return dn_fail(c, BD_EBACKEND, "cannot make the int8 matmul's attributes");
    dnnl_matmul_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    rc = dn_check(c, dnnl_matmul_desc_init(&d, &src, &wei, NULL, &dst), "dnnl_matmul_desc_init (int8)");
    if (!rc)
        rc = dn_check(c, dnnl_primitive_desc_create(&pd, &d, attr, c->eng, NULL),
                      "dnnl_primitive_desc_create (int8 matmul)");
    dnnl_primitive_attr_destroy(attr);
    if (rc)
        return rc;
    if (dn_pd_is_cliff(pd)) {        /* supports() probed it; never run a ref: int8 matmul */
        const char *impl = "?";
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        rc = dn_fail(c, BD_EUNSUPPORTED, "oneDNN's int8 matmul is a reference kernel here (%s)", impl);
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    const dnnl_memory_desc_t *wmd = dn_pd_md(pd, dnnl_query_weights_md);
    dnnl_memory_desc_t yplain, zmd, smd;
    int wbuf, dbuf, zbuf = -1, sbuf = -1;
    md_plain_dt(&yplain, y->shape.rank, y->shape.dims, f.scaled ? dnnl_f32 : dnnl_s32);
    int abuf;
    rc = mi_weights(c, &f, wmd, &wbuf);
    if (!rc)
        rc = mi_src(c, &f, ta, &src, &abuf);
    if (!rc && f.az)
        rc = mi_src_zp(c, f.az, &zbuf, &zmd);
    if (!rc && f.scaled) {
        int64_t cnt = numel(f.scale);
        rc = dn_input_plain(c, f.scale, &sbuf, &smd);
        dn_md_plain(&smd, 1, &cnt);
    }
    if (!rc)
        rc = pa.residual ? dn_output_with_residual(c, y, &yplain, pa.residual, &dbuf)
                         : dn_output(c, y, &yplain, &dbuf);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[6 + BD_MAX_POSTOPS];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC, abuf, src };
    args[na++] = (dn_arg){ DNNL_ARG_WEIGHTS, wbuf, *wmd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, dst };
    if (f.az)
        args[na++] = (dn_arg){ DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zbuf, zmd };
    if (f.scaled)
        args[na++] = (dn_arg){ DNNL_ARG_ATTR_OUTPUT_SCALES, sbuf, smd };
    for (int i = 0; i < pa.nargs; i++)
        args[na++] = pa.args[i];
    return dn_push_prim(c, pd, args, na);
}

/* ---- Cast to float ------------------------------------------------------------------------ */

int dn_cast_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    const dn_tensor *t = dn_tensor_of(c, x);
    if (!t)
        return c->err ? c->err->code : BD_EBACKEND;
    dnnl_memory_desc_t src = t->md, dst;
    dn_md_of_shape(&dst, y);
    int rc, dbuf;
    dnnl_primitive_desc_t pd;
    if ((rc = dn_reorder_pd(c, &src, &dst, "dnnl_reorder_primitive_desc_create (Cast)", &pd)))
        return rc;
    if ((rc = dn_output(c, y, &dst, &dbuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg a[2] = { { DNNL_ARG_FROM, t->buf, src }, { DNNL_ARG_TO, dbuf, dst } };
    return dn_add_step(c, pd, a, 2);
}
