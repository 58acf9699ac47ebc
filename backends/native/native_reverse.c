/* ReverseSequence of any dtype: in each batch entry b, the first sequence_lens[b] steps along
 * the time axis in reverse order, the rest as they are. The time and batch axes are 0 and 1
 * (either way round), so every (time, batch) pair owns one contiguous block of the trailing
 * dims: a run is one memcpy per pair. Each length is a run-time value, checked to lie in
 * [0, max_time]. */
#include <string.h>

#include "backends/native/native_internal.h"

static bool reverse_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "ReverseSequence: expects input, sequence_lens and one output");
    if (!nv_io_ok(n, 1, NV_DT_ANY, why, len))
        return false;
    const bd_value *x = n->inputs[0], *sl = n->inputs[1];
    int64_t tax = bd_node_attr_int(n, "time_axis", 0), bax = bd_node_attr_int(n, "batch_axis", 1);
    if (x->shape.rank < 2 || !bd_shape_equal(&x->shape, &n->outputs[0]->shape) ||
        n->outputs[0]->dtype != x->dtype)
        return nv_why(why, len, "ReverseSequence: needs rank >= 2 and the output of the input's "
                      "dtype and shape");
    if (!((tax == 0 && bax == 1) || (tax == 1 && bax == 0)))
        return nv_why(why, len, "ReverseSequence: time_axis %lld and batch_axis %lld must be 0 "
                      "and 1", (long long)tax, (long long)bax);
    if (!nv_value_ok(sl, NV_DT(BD_DT_INT64) | NV_DT(BD_DT_INT32)) || sl->shape.rank != 1 ||
        sl->shape.dims[0] != x->shape.dims[bax])
        return nv_why(why, len, "ReverseSequence: sequence_lens must hold one INT64 per batch "
                      "entry");
    return true;
}

/* ip[0]: the time axis (0 or 1; the batch axis is the other). */
static int reverse_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                       bd_error *err)
{
    (void)env;
    const nv_tensor *x = &in[0];
    int tax = (int)s->ip[0];
    size_t T = (size_t)x->dims[tax], B = (size_t)x->dims[1 - tax];
    if (x->numel == 0)
        return 0;
    size_t block = x->numel / (T * B) * bd_dtype_size(x->dtype);
    for (size_t b = 0; b < B; b++) {
        int64_t len;
        nv_read_ints((const char *)in[1].data + b * bd_dtype_size(in[1].dtype), in[1].dtype, 1,
                     &len, 1);
        if (len < 0 || (uint64_t)len > T)
            return bd_error_set(err, BD_EINVAL, "ReverseSequence: sequence_lens[%zu] = %lld is "
                                "outside [0, %zu]", b, (long long)len, T);
        for (size_t t = 0; t < T; t++) {
            size_t from = t < (size_t)len ? (size_t)len - 1 - t : t;
            size_t yo = tax == 0 ? t * B + b : b * T + t;
            size_t xo = tax == 0 ? from * B + b : b * T + from;
            memcpy((char *)out[0].data + yo * block, (const char *)x->data + xo * block, block);
        }
    }
    return 0;
}

static int reverse_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = bd_node_attr_int(n, "time_axis", 0);
    s->run = reverse_run;
    return 0;
}

const nv_op nv_reverse_ops[] = {
    { "ReverseSequence", reverse_supports, reverse_prepare },
};
const size_t nv_reverse_n = sizeof nv_reverse_ops / sizeof nv_reverse_ops[0];
