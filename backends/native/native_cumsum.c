/* CumSum: running sums along an axis that input 1 gives (read at every run: it may be a
 * run-time tensor), inclusive or exclusive, forward or reversed. Along the axis each step adds
 * one contiguous row of INNER elements to the previous row of sums, so the loop vectorises;
 * floats sum in their own type, in order, as numpy's cumsum does. */
#include "backends/native/native_reduce.h"

/* Integers add in the unsigned type, so an overflow wraps instead of being undefined. */
#define CUMSUM_KERNEL(sfx, T, UT)                                                             \
    static void cumsum_##sfx(const void *vx, void *vy, nv_split sp, bool excl, bool rev)     \
    {                                                                                         \
        for (size_t o = 0; o < sp.outer; o++) {                                               \
            const T *x = (const T *)vx + o * sp.n * sp.inner;                                 \
            T *y = (T *)vy + o * sp.n * sp.inner;                                             \
            for (size_t k = 0; k < sp.n; k++) {                                               \
                size_t r = rev ? sp.n - 1 - k : k, prev = rev ? r + 1 : r - 1;                \
                T *yr = y + r * sp.inner;                                                     \
                if (k == 0) {                                                                 \
                    for (size_t i = 0; i < sp.inner; i++)                                     \
                        yr[i] = excl ? (T)0 : x[r * sp.inner + i];                            \
                    continue;                                                                 \
                }                                                                             \
                const T *yp = y + prev * sp.inner, *xs = x + (excl ? prev : r) * sp.inner;   \
                _Pragma("omp simd")            /* rows r and prev never overlap */             \
                for (size_t i = 0; i < sp.inner; i++)                                         \
                    yr[i] = (T)((UT)yp[i] + (UT)xs[i]);                                       \
            }                                                                                 \
        }                                                                                     \
    }
CUMSUM_KERNEL(f32, float, float)
CUMSUM_KERNEL(f64, double, double)
CUMSUM_KERNEL(i32, int32_t, uint32_t)
CUMSUM_KERNEL(u32, uint32_t, uint32_t)
CUMSUM_KERNEL(i64, int64_t, uint64_t)
CUMSUM_KERNEL(u64, uint64_t, uint64_t)

typedef void (*cumsum_fn)(const void *, void *, nv_split, bool, bool);

static const cumsum_fn k_cumsum[] = {
    [BD_DT_FLOAT] = cumsum_f32, [BD_DT_DOUBLE] = cumsum_f64, [BD_DT_INT32] = cumsum_i32,
    [BD_DT_UINT32] = cumsum_u32, [BD_DT_INT64] = cumsum_i64, [BD_DT_UINT64] = cumsum_u64,
};

#define CUMSUM_TYPES (NV_DT_FLOATS | NV_DT(BD_DT_INT32) | NV_DT(BD_DT_UINT32) | \
                      NV_DT(BD_DT_INT64) | NV_DT(BD_DT_UINT64))

bool nv_cumsum_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "CumSum: expects x, axis and one output");
    if (!nv_io_ok(n, 1, CUMSUM_TYPES, why, len))
        return false;
    const bd_value *x = n->inputs[0], *ax = n->inputs[1];
    if (!nv_value_ok(ax, NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64)) || nv_shape_numel(&ax->shape) != 1)
        return nv_why(why, len, "CumSum: axis must be one INT32 or INT64 value");
    if (x->shape.rank < 1 || !bd_shape_equal(&x->shape, &n->outputs[0]->shape) ||
        x->dtype != n->outputs[0]->dtype)
        return nv_why(why, len, "CumSum: the output must be the input's dtype and shape (rank >= 1)");
    return true;
}

static int cumsum_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    int64_t axis = nv_int_at(in[1].data, in[1].dtype, 0);     /* may be a constant's bytes */
    int ax = nv_axis(axis, in[0].rank);
    if (ax < 0)
        return bd_error_set(err, BD_EINVAL, "axis %lld is out of range for rank %d",
                            (long long)axis, in[0].rank);
    k_cumsum[in[0].dtype](in[0].data, out[0].data, nv_split_at(in[0].dims, in[0].rank, ax),
                          s->ip[0], s->ip[1]);
    return 0;
}

int nv_cumsum_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "exclusive", 0) != 0;
    s->ip[1] = bd_node_attr_int(n, "reverse", 0) != 0;
    s->run = cumsum_run;
    return 0;
}
