/* MaxUnpool of any dtype: zeros, then each input element written where its index says. The
 * pooling attributes invert to a shape, N, C, (in - 1) * stride - pads + kernel, in which the
 * indices are flat positions (MaxPool's Indices are such positions). The output has that shape,
 * or the output_shape input's when given (a run-time tensor sizes a run-time-shaped output):
 * no smaller on any axis, it holds the inferred block at its origin and zeros beyond, as
 * ONNX's reference does. Every index is checked against the inferred shape's size. */
#include <string.h>

#include "backends/native/native_internal.h"

/* The default output dims of N (its X's static shape) into DIMS; false when the attributes do
 * not fit X's rank or give a negative or overflowing size. */
static bool unpool_dims(const bd_node *n, int64_t *dims)
{
    const bd_shape *x = &n->inputs[0]->shape;
    const int64_t *k, *st, *pads;
    int sp = x->rank - 2;
    size_t nk = bd_node_attr_ints(n, "kernel_shape", &k);
    size_t ns = bd_node_attr_ints(n, "strides", &st);
    size_t np = bd_node_attr_ints(n, "pads", &pads);
    if (sp < 1 || nk != (size_t)sp || (ns && ns != (size_t)sp) || (np && np != 2 * (size_t)sp))
        return false;
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int d = 0; d < sp; d++) {
        int64_t s = ns ? st[d] : 1, pb = np ? pads[d] : 0, pe = np ? pads[sp + d] : 0, v;
        if (k[d] < 1 || s < 1 || pb < 0 || pe < 0 || x->dims[d + 2] < 1 ||
            __builtin_mul_overflow(x->dims[d + 2] - 1, s, &v) || __builtin_add_overflow(v, k[d], &v))
            return false;
        if (__builtin_sub_overflow(v, pb, &v) || __builtin_sub_overflow(v, pe, &v) || v < 0)
            return false;
        dims[d + 2] = v;
    }
    return true;
}

static bool unpool_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 2 || n->n_inputs > 3 || !n->inputs[0] || !n->inputs[1] ||
        n->n_outputs != 1)
        return nv_why(why, len, "MaxUnpool: expects X, I (and output_shape) and one output");
    const bd_value *x = n->inputs[0], *idx = n->inputs[1], *os = bd_node_input(n, 2);
    const bd_value *y = n->outputs[0];
    bool runtime = os && !nv_input_const(n, 2);
    int64_t dims[BD_MAX_RANK];
    if (!nv_value_ok(x, NV_DT_ANY) || y->dtype != x->dtype ||
        !(runtime ? nv_output_ok(y, NV_DT_ANY) : nv_value_ok(y, NV_DT_ANY)))
        return nv_why(why, len, "MaxUnpool: dtypes, or a shape only known at run time");
    if (!nv_value_ok(idx, NV_DT(BD_DT_INT64)) || !bd_shape_equal(&idx->shape, &x->shape))
        return nv_why(why, len, "MaxUnpool: I must be INT64 of X's shape");
    if (!unpool_dims(n, dims))
        return nv_why(why, len, "MaxUnpool: kernel_shape, strides or pads do not fit X");
    if (os && (!nv_value_ok(os, NV_DT(BD_DT_INT64)) || os->shape.rank != 1 ||
               os->shape.dims[0] != x->shape.rank))
        return nv_why(why, len, "MaxUnpool: output_shape must hold %d INT64 dims", x->shape.rank);
    if (os && !runtime && nv_const_ints(os, dims, BD_MAX_RANK) != x->shape.rank)
        return nv_why(why, len, "MaxUnpool: output_shape is malformed");
    if (y->shape.rank >= 0 && y->shape.rank != x->shape.rank)
        return nv_why(why, len, "MaxUnpool: the output rank differs from X's");
    if (!runtime && memcmp(dims, y->shape.dims, (size_t)x->shape.rank * sizeof *dims))
        return nv_why(why, len, "MaxUnpool: the output shape is not what the %s gives",
                      os ? "output_shape" : "attributes");
    return true;
}

/* ip[0..rank): the inferred dims. */
static int unpool_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    const nv_tensor *x = &in[0];
    const int64_t *inf = s->ip;
    int64_t dims[BD_MAX_RANK], ost[BD_MAX_RANK];
    int r = x->rank;
    memcpy(dims, inf, (size_t)r * sizeof *dims);
    if (s->n_in > 2 && s->in[2] >= 0) {
        int64_t count = nv_run_ints(&in[2], dims, BD_MAX_RANK, "MaxUnpool: output_shape", err);
        if (count < 0)
            return (int)count;
        if (count != r)
            return bd_error_set(err, BD_EINVAL, "MaxUnpool: output_shape has %lld dims for "
                                "rank %d", (long long)count, r);
    }
    bool same = true;
    size_t inf_numel = 1;
    for (int d = 0; d < r; d++) {
        if (dims[d] < inf[d])
            return bd_error_set(err, BD_EINVAL, "MaxUnpool: output_shape[%d] = %lld is less than "
                                "the %lld the pooling gives", d, (long long)dims[d],
                                (long long)inf[d]);
        same = same && dims[d] == inf[d];
        inf_numel *= (size_t)inf[d];    /* at most X's size times the kernel: a static size */
    }
    int rc = nv_output_shape(env, s, out, 0, r, dims, err);
    if (rc)
        return rc;
    size_t es = bd_dtype_size(x->dtype);
    const int64_t *idx = in[1].data;
    if (out[0].numel)
        memset(out[0].data, 0, out[0].numel * es);      /* zero bytes are zero in every dtype */
    nv_strides(r, dims, ost);
    for (size_t i = 0; i < x->numel; i++) {
        if (idx[i] < 0 || (uint64_t)idx[i] >= inf_numel)
            return bd_error_set(err, BD_EINVAL, "MaxUnpool: index %lld is outside the %zu "
                                "elements of the unpooled shape", (long long)idx[i], inf_numel);
        int64_t at = idx[i];
        if (!same) {                    /* the inferred block's coordinates in the output */
            int64_t q = at;
            at = 0;
            for (int d = r - 1; d >= 0; d--) {
                at += q % inf[d] * ost[d];
                q /= inf[d];
            }
        }
        memcpy((char *)out[0].data + (size_t)at * es, (const char *)x->data + i * es, es);
    }
    return 0;
}

static int unpool_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    unpool_dims(n, s->ip);
    s->run = unpool_run;
    return 0;
}

const nv_op nv_unpool_ops[] = {
    { "MaxUnpool", unpool_supports, unpool_prepare },
};
const size_t nv_unpool_n = sizeof nv_unpool_ops / sizeof nv_unpool_ops[0];
