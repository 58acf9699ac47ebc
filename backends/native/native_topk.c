/* TopK: the K largest (or smallest) elements along an axis, values and INT64 indices, best
 * first; equal values rank by lower index, as ONNX specifies. K is opset 1's attribute or a
 * 1-element input (from opset 10), read at run time when it is not a constant and checked
 * against the planned output.
 *
 * Nothing is allocated: each slice keeps its K candidates as a binary heap (worst at the root)
 * in the output buffers themselves, then sorts them there (heapsort): O(N log K) per slice.
 * A NaN ranks above every number (as numpy's sorts place it). */
#include "backends/native/native_reduce.h"

/* Heap element J of a slice lives at V[J * ST], I[J * ST] (the outputs' stride along the axis). */
#define TOPK_KERNEL(sfx, T)                                                                   \
    static bool before_##sfx(T a, int64_t ia, T b, int64_t ib, bool largest)                 \
    {                                                                                         \
        bool agt = a != a ? b == b : a > b, bgt = b != b ? a == a : b > a;                   \
        if (agt != bgt)                                                                       \
            return largest ? agt : bgt;                                                       \
        return ia < ib;                                                                       \
    }                                                                                         \
    static void swap_##sfx(T *v, int64_t *i, size_t a, size_t b)                              \
    {                                                                                         \
        T tv = v[a]; v[a] = v[b]; v[b] = tv;                                                  \
        int64_t ti = i[a]; i[a] = i[b]; i[b] = ti;                                            \
    }                                                                                         \
    /* Move element J down until both children rank before it. */                           \
    static void sift_down_##sfx(T *v, int64_t *i, size_t st, size_t size, size_t j, bool lg)  \
    {                                                                                         \
        for (;;) {                                                                            \
            size_t worst = j, l = 2 * j + 1, r = l + 1;                                       \
            if (l < size && before_##sfx(v[worst * st], i[worst * st], v[l * st], i[l * st], lg)) \
                worst = l;                                                                    \
            if (r < size && before_##sfx(v[worst * st], i[worst * st], v[r * st], i[r * st], lg)) \
                worst = r;                                                                    \
            if (worst == j)                                                                   \
                return;                                                                       \
            swap_##sfx(v, i, j * st, worst * st);                                             \
            j = worst;                                                                        \
        }                                                                                     \
    }                                                                                         \
    static void slice_##sfx(const T *x, size_t n, size_t st, T *v, int64_t *i, size_t k,      \
                            bool lg)                                                          \
    {                                                                                         \
        for (size_t r = 0, size = 0; r < n && k > 0; r++) {                                   \
            T xr = x[r * st];                                                                 \
            if (size < k) {               /* append, then up while the parent is better */   \
                size_t j = size++;                                                            \
                v[j * st] = xr;                                                               \
                i[j * st] = (int64_t)r;                                                       \
                while (j > 0 && before_##sfx(v[(j - 1) / 2 * st], i[(j - 1) / 2 * st],        \
                                             v[j * st], i[j * st], lg)) {                     \
                    swap_##sfx(v, i, j * st, (j - 1) / 2 * st);                               \
                    j = (j - 1) / 2;                                                          \
                }                                                                             \
            } else if (before_##sfx(xr, (int64_t)r, v[0], i[0], lg)) {                       \
                v[0] = xr;                                                                    \
                i[0] = (int64_t)r;                                                            \
                sift_down_##sfx(v, i, st, k, 0, lg);                                          \
            }                                                                                 \
        }                                                                                     \
        for (size_t end = k; end > 1; end--) {      /* the worst left goes to the end */      \
            swap_##sfx(v, i, 0, (end - 1) * st);                                              \
            sift_down_##sfx(v, i, st, end - 1, 0, lg);                                        \
        }                                                                                     \
    }                                                                                         \
    static void topk_##sfx(const void *vx, void *vv, int64_t *vi, nv_split sp, size_t k,      \
                           bool lg)                                                           \
    {                                                                                         \
        for (size_t o = 0; o < sp.outer; o++)                                                 \
            for (size_t j = 0; j < sp.inner; j++)                                             \
                slice_##sfx((const T *)vx + o * sp.n * sp.inner + j, sp.n, sp.inner,          \
                            (T *)vv + o * k * sp.inner + j, vi + o * k * sp.inner + j, k, lg); \
    }
TOPK_KERNEL(f32, float)
TOPK_KERNEL(f64, double)
TOPK_KERNEL(i8, int8_t)
TOPK_KERNEL(u8, uint8_t)
TOPK_KERNEL(i16, int16_t)
TOPK_KERNEL(u16, uint16_t)
TOPK_KERNEL(i32, int32_t)
TOPK_KERNEL(u32, uint32_t)
TOPK_KERNEL(i64, int64_t)
TOPK_KERNEL(u64, uint64_t)

typedef void (*topk_fn)(const void *, void *, int64_t *, nv_split, size_t, bool);

static const topk_fn k_topk[] = {
    [BD_DT_FLOAT] = topk_f32, [BD_DT_DOUBLE] = topk_f64, [BD_DT_INT8] = topk_i8,
    [BD_DT_UINT8] = topk_u8,  [BD_DT_INT16] = topk_i16,  [BD_DT_UINT16] = topk_u16,
    [BD_DT_INT32] = topk_i32, [BD_DT_UINT32] = topk_u32, [BD_DT_INT64] = topk_i64,
    [BD_DT_UINT64] = topk_u64,
};

/* K when the node fixes it at compile (the attribute, or a constant input), else -1. */
static int64_t const_k(const bd_node *n)
{
    const bd_value *kv = bd_node_input(n, 1);
    if (!kv)
        return bd_node_attr_int(n, "k", -1);
    return kv->data && kv->nbytes >= sizeof(int64_t) ? nv_int_at(kv->data, kv->dtype, 0) : -1;
}

bool nv_topk_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    const bd_value *kv = bd_node_input(n, 1);
    if (n->n_inputs < 1 || n->n_inputs > 2 || !n->inputs[0] || n->n_outputs != 2)
        return nv_why(why, len, "TopK: expects X, K and two outputs");
    if (kv ? !nv_value_ok(kv, NV_DT(BD_DT_INT64)) || nv_shape_numel(&kv->shape) != 1
           : !bd_node_attr(n, "k"))
        return nv_why(why, len, "TopK: K must be one INT64 value (input 1, or attribute k)");
    if (!nv_value_ok(n->inputs[0], NV_DT_NUMERIC) || !nv_value_ok(n->outputs[1], NV_DT(BD_DT_INT64)) ||
        !nv_value_ok(n->outputs[0], NV_DT(n->inputs[0]->dtype)))
        return nv_why(why, len, "TopK: numeric X, values of its dtype and INT64 indices, of "
                      "static shapes");
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", -1), x->rank);
    if (ax < 0 || x->rank < 1)
        return nv_why(why, len, "TopK: axis out of range for rank %d", x->rank);
    bd_shape want = *x;
    want.dims[ax] = y->rank == x->rank ? y->dims[ax] : -1;
    int64_t k = const_k(n);
    if (!bd_shape_equal(&want, y) || !bd_shape_equal(y, &n->outputs[1]->shape) ||
        y->dims[ax] > x->dims[ax] || (k >= 0 && k != y->dims[ax]))
        return nv_why(why, len, "TopK: output shapes do not match X and K");
    return true;
}

static int topk_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    int ax = (int)s->ip[0];
    int64_t k = s->ip[2];
    if (k < 0)
        k = nv_int_at(in[1].data, in[1].dtype, 0);    /* one INT64 value: supports() checked */
    if (k != out[0].dims[ax])
        return bd_error_set(err, BD_EINVAL, "K = %lld, but the plan's output has %lld along "
                            "axis %d", (long long)k, (long long)out[0].dims[ax], ax);
    k_topk[in[0].dtype](in[0].data, out[0].data, out[1].data,
                        nv_split_at(in[0].dims, in[0].rank, ax), (size_t)k, s->ip[1]);
    return 0;
}

int nv_topk_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", -1), n->inputs[0]->shape.rank);
    s->ip[1] = bd_node_attr_int(n, "largest", 1) != 0;
    s->ip[2] = const_k(n);            /* sorted=0 leaves the order open: sorted is one answer */
    s->run = topk_run;
    return 0;
}
