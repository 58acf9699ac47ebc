/* Compress of any dtype: the slices along an axis (or the elements of the flattened input)
 * that a BOOL condition selects. The output's length on that axis is the number of true
 * conditions, so its shape is the run's (nv_output_shape). As ONNX Runtime does, a condition
 * longer than the axis is cut to it, and a shorter one selects nothing past its end. A run
 * counts, sizes the output, then copies each selected slice of each outer row with memcpy. */
#include <string.h>

#include "backends/native/native_internal.h"

static bool compress_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1] || n->n_outputs != 1)
        return nv_why(why, len, "Compress: expects input, condition and one output");
    const bd_value *x = n->inputs[0], *c = n->inputs[1], *y = n->outputs[0];
    if (!nv_value_ok(x, NV_DT_ANY) || !nv_output_ok(y, NV_DT_ANY) || y->dtype != x->dtype)
        return nv_why(why, len, "Compress: the output must have the input's dtype");
    if (!nv_value_ok(c, NV_DT(BD_DT_BOOL)) || c->shape.rank != 1)
        return nv_why(why, len, "Compress: the condition must be a 1-D BOOL tensor");
    const bd_attr *a = bd_node_attr(n, "axis");
    int r = x->shape.rank;
    if (a && (r < 1 || nv_axis(a->i, r) < 0))
        return nv_why(why, len, "Compress: axis %lld is out of range for rank %d",
                      (long long)a->i, r);
    if (y->shape.rank >= 0 && y->shape.rank != (a ? r : 1))
        return nv_why(why, len, "Compress: output rank %d, expected %d", y->shape.rank,
                      a ? r : 1);
    return true;
}

/* ip[0]: the axis, or -1 for the flattened input. */
static int compress_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                        bd_error *err)
{
    const nv_tensor *x = &in[0];
    const uint8_t *cond = in[1].data;
    int ax = (int)s->ip[0];
    size_t outer = 1, inner = 1, axis = x->numel;
    if (ax >= 0) {
        axis = (size_t)x->dims[ax];
        for (int d = 0; d < ax; d++)
            outer *= (size_t)x->dims[d];
        for (int d = ax + 1; d < x->rank; d++)
            inner *= (size_t)x->dims[d];
    }
    size_t valid = in[1].numel < axis ? in[1].numel : axis, count = 0;
    for (size_t j = 0; j < valid; j++)
        count += cond[j] != 0;
    int64_t dims[BD_MAX_RANK] = { (int64_t)count };
    int rank = 1;
    if (ax >= 0) {
        memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
        dims[ax] = (int64_t)count;
        rank = x->rank;
    }
    int rc = nv_output_shape(env, s, out, 0, rank, dims, err);
    if (rc || out[0].numel == 0)
        return rc;
    size_t row = inner * bd_dtype_size(x->dtype);
    const char *src = x->data;
    char *y = out[0].data;
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < valid; j++)
            if (cond[j]) {
                memcpy(y, src + (o * axis + j) * row, row);
                y += row;
            }
    return 0;
}

static int compress_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const bd_attr *a = bd_node_attr(n, "axis");
    s->ip[0] = a ? nv_axis(a->i, n->inputs[0]->shape.rank) : -1;
    s->run = compress_run;
    return 0;
}

const nv_op nv_compress_ops[] = {
    { "Compress", compress_supports, compress_prepare },
};
const size_t nv_compress_n = sizeof nv_compress_ops / sizeof nv_compress_ops[0];
