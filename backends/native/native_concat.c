/* Concat and Split of any dtype along one axis. Seen as [outer, axis x inner] rows, each
 * input (Concat) or output (Split) owns one contiguous block of every outer row, so a run is
 * one memcpy per (tensor, outer index): no per-element work, no threads (memcpy-bound). */
#include <string.h>

#include "backends/native/native_movement.h"

/* V has Y's rank and dims except on axis AX; its size on AX is added to *SUM. */
static bool fits_beside(const bd_shape *v, const bd_shape *y, int ax, int64_t *sum)
{
    if (v->rank != y->rank)
        return false;
    for (int d = 0; d < y->rank; d++)
        if (d != ax && v->dims[d] != y->dims[d])
            return false;
    return !__builtin_add_overflow(*sum, v->dims[ax], sum);
}

/* Elements before axis AX (the outer rows). */
static size_t outer_of(const nv_tensor *t, int ax)
{
    size_t outer = 1;
    for (int d = 0; d < ax; d++)
        outer *= (size_t)t->dims[d];
    return outer;
}

/* ---- Concat ------------------------------------------------------------------------------ */

bool nv_concat_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || n->n_outputs != 1)
        return nv_why(why, len, "Concat: expects inputs and one output");
    if (!nv_io_ok(n, n->n_inputs, NV_DT_ANY, why, len))
        return false;
    const bd_attr *a = bd_node_attr(n, "axis");
    if (!a && bd_graph_opset(g) >= 4)
        return nv_why(why, len, "Concat: the axis attribute is required");
    const bd_shape *y = &n->outputs[0]->shape;
    int ax = nv_axis(a ? a->i : 1, y->rank);       /* opset < 4: axis 1 by default */
    if (ax < 0 || y->rank < 1)
        return nv_why(why, len, "Concat: axis %lld out of range for rank %d",
                      (long long)(a ? a->i : 1), y->rank);
    int64_t sum = 0;
    for (size_t k = 0; k < n->n_inputs; k++)
        if (!n->inputs[k] || n->inputs[k]->dtype != n->outputs[0]->dtype ||
            !fits_beside(&n->inputs[k]->shape, y, ax, &sum))
            return nv_why(why, len, "Concat: input %zu is omitted or does not fit the output", k);
    if (sum != y->dims[ax])
        return nv_why(why, len, "Concat: the inputs add up to %lld on axis %d, the output has %lld",
                      (long long)sum, ax, (long long)y->dims[ax]);
    return true;
}

static int concat_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    (void)err;
    size_t es = bd_dtype_size(out[0].dtype), outer = outer_of(&out[0], (int)s->ip[0]);
    if (out[0].numel == 0)
        return 0;
    size_t y_row = out[0].numel / outer * es, at = 0;
    char *y = out[0].data;
    for (int k = 0; k < s->n_in; k++) {
        size_t row = in[k].numel / outer * es;
        const char *x = in[k].data;
        for (size_t o = 0; row && o < outer; o++)
            memcpy(y + o * y_row + at, x + o * row, row);
        at += row;
    }
    return 0;
}

int nv_concat_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", 1), n->outputs[0]->shape.rank);
    s->run = concat_run;
    return 0;
}

/* ---- Split ------------------------------------------------------------------------------- */

/* The sizes N's split attribute (opset < 13) or constant input (opset >= 13) gives match its
 * outputs on axis AX; true when neither is given and the outputs are equal parts. */
static bool split_sizes_fit(const bd_node *n, int ax, const bd_shape *x)
{
    const int64_t *attr;
    int64_t vals[64];
    size_t count = bd_node_attr_ints(n, "split", &attr), nout = n->n_outputs;
    const bd_value *sv = bd_node_input(n, 1);
    if (sv && nv_input_const(n, 1)) {
        int64_t c = nv_const_ints(sv, vals, 64);
        if (c < 0)
            return false;
        attr = vals;
        count = (size_t)c;
    } else if (sv) {
        return true;                    /* a run-time input: split_run checks it */
    }
    bool given = attr || bd_node_attr(n, "split");
    if (given && count != nout)
        return false;
    for (size_t k = 0; k < nout; k++) {
        int64_t want = given ? attr[k] : x->dims[ax] / (int64_t)nout;
        if (n->outputs[k]->shape.dims[ax] != want)
            return false;
    }
    return true;
}

/* The outputs may be run-time-shaped when the split sizes are a run-time input. */
bool nv_split_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    bool inputs = bd_graph_opset(g) >= 13;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_inputs > (inputs ? 2u : 1u) || n->n_outputs < 1)
        return nv_why(why, len, "Split: expects an input%s and outputs",
                      inputs ? " (and the split sizes)" : "");
    if ((inputs && bd_node_attr(n, "split")) || bd_node_attr(n, "num_outputs"))
        return nv_why(why, len, "Split: attribute %s at opset %lld",
                      inputs ? "split" : "num_outputs", (long long)bd_graph_opset(g));
    if (!nv_value_ok(n->inputs[0], NV_DT_ANY))
        return nv_why(why, len, "Split: the input's dtype or a shape only known at run time");
    const bd_value *sv = bd_node_input(n, 1);
    if (sv && (!nv_value_ok(sv, NV_DT(BD_DT_INT64) | NV_DT(BD_DT_INT32)) ||
               nv_shape_numel(&sv->shape) != n->n_outputs))
        return nv_why(why, len, "Split: split must hold one INT64 size per output");
    bool runtime = sv && !nv_input_const(n, 1);
    const bd_shape *x = &n->inputs[0]->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", 0), x->rank);
    int64_t sum = 0;
    if (ax < 0 || x->rank < 1)
        return nv_why(why, len, "Split: axis out of range for rank %d", x->rank);
    bool all_static = true;
    for (size_t k = 0; k < n->n_outputs; k++) {
        const bd_value *y = n->outputs[k];
        bool fits = y->dtype == n->inputs[0]->dtype;
        if (nv_value_ok(y, NV_DT_ANY))
            fits = fits && fits_beside(&y->shape, x, ax, &sum);
        else                            /* sized by the run's split sizes (nv_output_shape) */
            fits = fits && runtime && nv_output_ok(y, NV_DT_ANY) &&
                   (y->shape.rank < 0 || y->shape.rank == x->rank);
        all_static = all_static && nv_value_ok(y, NV_DT_ANY);
        if (!fits)
            return nv_why(why, len, "Split: output %zu does not fit the input", k);
    }
    if (all_static && (sum != x->dims[ax] || !split_sizes_fit(n, ax, x)))
        return nv_why(why, len, "Split: the outputs' sizes on axis %d are not the split's", ax);
    return true;
}

/* Each output's dims: the input's, with the size on AX the split's (a run-time input; checked
 * non-negative and adding up to the input's) or the plan's (no split input). */
static int split_shapes(const nv_step *s, const nv_tensor *in, nv_tensor *out, int ax,
                        nv_run_env *env, bd_error *err)
{
    const nv_tensor *x = &in[0], *sv = &in[1];
    if ((sv->dtype != BD_DT_INT64 && sv->dtype != BD_DT_INT32) || sv->numel != (size_t)s->n_out)
        return bd_error_set(err, BD_EINVAL, "Split: split holds %zu %s values for %d outputs",
                            sv->numel, bd_dtype_name(sv->dtype), s->n_out);
    int64_t left = x->dims[ax], dims[BD_MAX_RANK];
    for (int k = 0; k < s->n_out; k++) {
        int64_t size;
        nv_read_ints((const char *)sv->data + (size_t)k * bd_dtype_size(sv->dtype), sv->dtype, 1,
                     &size, 1);
        if (size < 0 || size > left)
            return bd_error_set(err, BD_EINVAL, "Split: split[%d] = %lld is negative or more "
                                "than the %lld left of axis %d", k, (long long)size,
                                (long long)left, ax);
        left -= size;
        memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
        dims[ax] = size;
        int rc = nv_output_shape(env, s, out, k, x->rank, dims, err);
        if (rc)
            return rc;
    }
    if (left != 0)
        return bd_error_set(err, BD_EINVAL, "Split: the split sizes add up to %lld less than "
                            "axis %d's %lld", (long long)left, ax, (long long)x->dims[ax]);
    return 0;
}

static int split_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    int ax = (int)s->ip[0];
    if (s->n_in > 1 && s->in[1] >= 0) {
        int rc = split_shapes(s, in, out, ax, env, err);
        if (rc)
            return rc;
    }
    size_t es = bd_dtype_size(in[0].dtype), outer = outer_of(&in[0], ax);
    if (in[0].numel == 0)
        return 0;
    size_t x_row = in[0].numel / outer * es, at = 0;
    const char *x = in[0].data;
    for (int k = 0; k < s->n_out; k++) {
        size_t row = out[k].numel / outer * es;
        char *y = out[k].data;
        for (size_t o = 0; row && o < outer; o++)
            memcpy(y + o * row, x + o * x_row + at, row);
        at += row;
    }
    return 0;
}

int nv_split_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", 0), n->inputs[0]->shape.rank);
    s->run = split_run;
    return 0;
}
