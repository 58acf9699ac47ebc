/* Direct convolution of any spatial rank where oneDNN does not take the node: Conv on float and
 * double (weights and bias that are run-time tensors, DOUBLE, groups, dilations, strides,
 * pads or auto_pad), and ConvInteger (INT8/UINT8 data and weights, their zero points, INT32
 * output).
 *
 * Each output element sums, over its group's input channels and its window's taps inside the
 * input, input times weight (padding adds nothing; for ConvInteger the pad is the zero point,
 * which also adds nothing once subtracted), in double or int64; then the bias. The window
 * resolves as shape inference resolves it (native_window.h). Output planes (n, m) split across
 * the plan's threads. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_window.h"

#define CV_BYTES (NV_DT(BD_DT_INT8) | NV_DT(BD_DT_UINT8))

/* The window of N, from its weight's spatial dims, into G; false when the shapes do not fit. */
static bool conv_window(const bd_node *n, nv_window *g)
{
    const bd_shape *x = &n->inputs[0]->shape, *w = &n->inputs[1]->shape;
    int64_t group = bd_node_attr_int(n, "group", 1);
    if (x->rank < 3 || w->rank != x->rank || group < 1 || x->dims[1] % group ||
        w->dims[0] % group || w->dims[1] * group != x->dims[1])
        return false;
    return nv_window_resolve(n, x, w->dims + 2, g);
}

static bool conv_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool integer = !strcmp(n->op_type, "ConvInteger");
    if (n->n_inputs < 2 || n->n_inputs > (integer ? 4u : 3u) || !n->inputs[0] || !n->inputs[1] ||
        n->n_outputs != 1)
        return nv_why(why, len, "%s: expects X, W, optional %s and one output", n->op_type,
                      integer ? "zero points" : "B");
    const bd_value *x = n->inputs[0], *w = n->inputs[1], *y = n->outputs[0];
    const bd_value *b = integer ? NULL : bd_node_input(n, 2);
    const bd_value *xz = integer ? bd_node_input(n, 2) : NULL, *wz = integer ? bd_node_input(n, 3) : NULL;
    bool types = integer ? nv_value_ok(x, CV_BYTES) && nv_value_ok(w, CV_BYTES) &&
                           nv_value_ok(y, NV_DT(BD_DT_INT32))
                         : nv_value_ok(x, NV_DT_FLOATS) && nv_value_ok(w, NV_DT(x->dtype)) &&
                           nv_value_ok(y, NV_DT(x->dtype));
    if (!types)
        return nv_why(why, len, "%s: dtypes (X %s, W %s), or a shape only known at run time",
                      n->op_type, bd_dtype_name(x->dtype), bd_dtype_name(w->dtype));
    if (bd_node_attr(n, "data_format") || bd_node_attr(n, "filter_format"))
        return nv_why(why, len, "%s: a TensorFlow layout", n->op_type);
    nv_window win;
    if (!conv_window(n, &win))
        return nv_why(why, len, "%s: W, group and the window do not fit X", n->op_type);
    int64_t m = w->shape.dims[0], dims[BD_MAX_RANK] = { x->shape.dims[0], m };
    for (int i = 0; i < win.ns; i++)
        dims[2 + i] = win.out[i];
    bd_shape want = bd_shape_make(x->shape.rank, dims);
    if (!bd_shape_equal(&y->shape, &want))
        return nv_why(why, len, "%s: the output's shape is not what the window gives", n->op_type);
    if (b && (!nv_value_ok(b, NV_DT(x->dtype)) || b->shape.rank != 1 || b->shape.dims[0] != m))
        return nv_why(why, len, "Conv: B must be %s [M]", bd_dtype_name(x->dtype));
    if ((xz && (!nv_value_ok(xz, NV_DT(x->dtype)) || nv_shape_numel(&xz->shape) != 1)) ||
        (wz && (!nv_value_ok(wz, NV_DT(w->dtype)) || wz->shape.rank > 1 ||
                (nv_shape_numel(&wz->shape) != 1 && nv_shape_numel(&wz->shape) != (size_t)m))))
        return nv_why(why, len, "ConvInteger: x_zero_point must be one %s, w_zero_point one %s "
                      "or one per output channel", bd_dtype_name(x->dtype),
                      bd_dtype_name(w->dtype));
    return true;
}

typedef struct cv_job {
    const nv_step   *s;
    const nv_window *g;
    const nv_tensor *x, *w, *b, *xz, *wz;
    nv_tensor       *y;
    int64_t          c, m, group;
    size_t           plane_in, plane_out, taps;
} cv_job;

/* Output planes [LO, LO + CNT) of N x M. */
static void conv_planes(void *vjob, size_t lo, size_t cnt)
{
    const cv_job *j = vjob;
    const nv_window *g = j->g;
    int ns = g->ns;
    bool integer = j->y->dtype == BD_DT_INT32;
    int64_t cg = j->c / j->group, mg = j->m / j->group;
    int64_t xz = j->xz ? nv_get_i(j->xz->data, j->xz->dtype, 0) : 0;
    for (size_t pl = lo; pl < lo + cnt; pl++) {
        int64_t nb = (int64_t)pl / j->m, m = (int64_t)pl % j->m, c0 = m / mg * cg;
        int64_t wz = !j->wz ? 0 : nv_get_i(j->wz->data, j->wz->dtype, j->wz->numel == 1 ? 0 : (size_t)m);
        double bias = j->b ? nv_get_f(j->b->data, j->b->dtype, (size_t)m) : 0;
        int64_t o[NV_SPATIAL] = { 0 };
        for (size_t q = 0; q < j->plane_out; q++) {
            double acc = bias;
            int64_t iacc = 0;
            int64_t t[NV_SPATIAL] = { 0 };
            for (size_t tq = 0; tq < j->taps; tq++) {
                int64_t off = 0;
                bool in = true;
                for (int i = 0; i < ns && in; i++) {
                    int64_t p = o[i] * g->st[i] - g->pb[i] + t[i] * g->dil[i];
                    in = p >= 0 && p < g->in[i];
                    off = off * g->in[i] + p;
                }
                for (int64_t c = 0; in && c < cg; c++) {
                    size_t xi = ((size_t)(nb * j->c + c0 + c)) * j->plane_in + (size_t)off;
                    size_t wi = ((size_t)(m * cg + c)) * j->taps + tq;
                    if (integer)
                        iacc += (nv_get_i(j->x->data, j->x->dtype, xi) - xz) *
                                (nv_get_i(j->w->data, j->w->dtype, wi) - wz);
                    else
                        acc += nv_get_f(j->x->data, j->x->dtype, xi) *
                               nv_get_f(j->w->data, j->w->dtype, wi);
                }
                for (int i = ns - 1; i >= 0 && ++t[i] == g->k[i]; i--)
                    t[i] = 0;
            }
            size_t at = pl * j->plane_out + q;
            if (integer)
                nv_set_i(j->y->data, BD_DT_INT32, at, iacc);
            else
                nv_set_f(j->y->data, j->y->dtype, at, acc);
            for (int i = ns - 1; i >= 0 && ++o[i] == g->out[i]; i--)
                o[i] = 0;
        }
    }
}

static int conv_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    bool integer = out[0].dtype == BD_DT_INT32;
    const nv_window *g = s->heap;
    cv_job j = { .s = s, .g = g, .x = &in[0], .w = &in[1], .y = &out[0], .c = in[0].dims[1],
                 .m = in[1].dims[0], .group = s->ip[0], .plane_in = 1, .plane_out = 1,
                 .taps = 1 };
    if (!integer && s->n_in > 2 && s->in[2] >= 0)
        j.b = &in[2];
    if (integer && s->n_in > 2 && s->in[2] >= 0)
        j.xz = &in[2];
    if (integer && s->n_in > 3 && s->in[3] >= 0)
        j.wz = &in[3];
    for (int i = 0; i < g->ns; i++) {
        j.plane_in *= (size_t)g->in[i];
        j.plane_out *= (size_t)g->out[i];
        j.taps *= (size_t)g->k[i];
    }
    size_t planes = (size_t)(in[0].dims[0] * j.m);
    if (planes && j.plane_out)
        nv_parallel_for(planes, out[0].numel * j.taps * (size_t)(j.c / j.group + 1), conv_planes,
                        &j);
    return 0;
}

static int conv_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    nv_window *g = malloc(sizeof *g);
    if (!g)
        return bd_error_set(err, BD_ENOMEM, "out of memory preparing %s", n->op_type);
    conv_window(n, g);
    s->heap = g;
    s->ip[0] = bd_node_attr_int(n, "group", 1);
    s->run = conv_run;
    return 0;
}

const nv_op nv_conv_ops[] = {
    { "Conv", conv_supports, conv_prepare },
    { "ConvInteger", conv_supports, conv_prepare },
};
const size_t nv_conv_n = sizeof nv_conv_ops / sizeof nv_conv_ops[0];
