/* Direct convolution of any spatial rank where oneDNN does not take the node: Conv on float and
 * double (weights and bias that are run-time tensors, DOUBLE, groups, dilations, strides,
 * pads or auto_pad), ConvInteger (INT8/UINT8 data and weights, their zero points, INT32
 * output) and QLinearConv (the same, plus an INT32 bias, requantized to INT8/UINT8).
 *
 * Each output element sums, over its group's input channels and its window's taps inside the
 * input, input times weight (padding adds nothing; for the integer forms the pad is the zero
 * point, which also adds nothing once subtracted), in double or int64; then the bias.
 * QLinearConv scales that sum by x_scale * w_scale / y_scale (in float, per output channel
 * when w_scale is), adds y_zero_point, saturates and rounds half to even, as ONNX's reference
 * does. The window resolves as shape inference resolves it (native_window.h). 2-D float
 * convolutions take typed loops whose kernel ranges inside the input are found per output;
 * the other forms a generic walk over the window. Output planes (n, m) split across the
 * plan's threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_window.h"

#define CV_BYTES (NV_DT(BD_DT_INT8) | NV_DT(BD_DT_UINT8))

enum { CV_FLOAT, CV_INTEGER, CV_QLINEAR };

/* Where each operand is among the node's inputs (-1: the form has none). */
typedef struct cv_operands {
    int x, w, b, xz, wz, xs, ws, ys, yz;
} cv_operands;

static const cv_operands k_operands[] = {
    [CV_FLOAT]   = { 0, 1, 2, -1, -1, -1, -1, -1, -1 },
    [CV_INTEGER] = { 0, 1, -1, 2, 3, -1, -1, -1, -1 },
    [CV_QLINEAR] = { 0, 3, 8, 2, 5, 1, 4, 6, 7 },
};

static int form_of(const char *op)
{
    return !strcmp(op, "ConvInteger") ? CV_INTEGER : !strcmp(op, "QLinearConv") ? CV_QLINEAR
                                                                                : CV_FLOAT;
}

/* Input K of N, or NULL (absent, omitted, or K < 0). */
static const bd_value *operand(const bd_node *n, int k)
{
    return k < 0 ? NULL : bd_node_input(n, (size_t)k);
}

/* The window of N, from its weight's spatial dims, into G; false when the shapes do not fit. */
static bool conv_window(const bd_node *n, nv_window *g)
{
    const cv_operands *o = &k_operands[form_of(n->op_type)];
    const bd_shape *x = &n->inputs[o->x]->shape, *w = &n->inputs[o->w]->shape;
    int64_t group = bd_node_attr_int(n, "group", 1);
    if (x->rank < 3 || w->rank != x->rank || group < 1 || x->dims[1] % group ||
        w->dims[0] % group || w->dims[1] * group != x->dims[1])
        return false;
    return nv_window_resolve(n, x, w->dims + 2, g);
}

/* V is absent, or DTYPE (in MASK when DTYPE is 0) with one element or one per output channel
 * (M; when PER_CHANNEL). */
static bool param_ok(const bd_value *v, unsigned mask, bool per_channel, int64_t m)
{
    size_t count = v ? nv_shape_numel(&v->shape) : 1;
    return !v || (nv_value_ok(v, mask) && v->shape.rank <= 1 &&
                  (count == 1 || (per_channel && count == (size_t)m)));
}

static bool conv_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    int form = form_of(n->op_type);
    const cv_operands *o = &k_operands[form];
    size_t most = form == CV_FLOAT ? 3 : form == CV_INTEGER ? 4 : 9;
    size_t least = form == CV_QLINEAR ? 8 : 2;
    if (n->n_inputs < least || n->n_inputs > most || !n->inputs[o->x] || !n->inputs[o->w] ||
        n->n_outputs != 1)
        return nv_why(why, len, "%s: expects %zu to %zu inputs and one output", n->op_type,
                      least, most);
    const bd_value *x = n->inputs[o->x], *w = n->inputs[o->w], *y = n->outputs[0];
    const bd_value *yz = operand(n, o->yz);
    int out_dt = form == CV_FLOAT ? x->dtype : form == CV_INTEGER ? BD_DT_INT32
               : yz ? yz->dtype : BD_DT_UNDEFINED;
    bool types = form == CV_FLOAT ? nv_value_ok(x, NV_DT_FLOATS) && nv_value_ok(w, NV_DT(x->dtype))
                                  : nv_value_ok(x, CV_BYTES) && nv_value_ok(w, CV_BYTES);
    if (!types || (form == CV_QLINEAR && !(CV_BYTES & NV_DT(out_dt))) ||
        !nv_value_ok(y, NV_DT(out_dt)))
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
    const bd_value *b = operand(n, o->b);
    int b_dt = form == CV_FLOAT ? x->dtype : BD_DT_INT32;
    if (b && (!nv_value_ok(b, NV_DT(b_dt)) || b->shape.rank != 1 || b->shape.dims[0] != m))
        return nv_why(why, len, "%s: B must be %s [M]", n->op_type, bd_dtype_name(b_dt));
    if (form == CV_QLINEAR && (!operand(n, o->xs) || !operand(n, o->ws) || !operand(n, o->ys)))
        return nv_why(why, len, "QLinearConv: the scales are required");
    if (!param_ok(operand(n, o->xz), NV_DT(x->dtype), false, m) ||
        !param_ok(operand(n, o->wz), NV_DT(w->dtype), true, m) ||
        !param_ok(operand(n, o->xs), NV_DT(BD_DT_FLOAT), false, m) ||
        !param_ok(operand(n, o->ws), NV_DT(BD_DT_FLOAT), true, m) ||
        !param_ok(operand(n, o->ys), NV_DT(BD_DT_FLOAT), false, m) ||
        !param_ok(yz, CV_BYTES, false, m))
        return nv_why(why, len, "%s: the zero points and scales must be one value of their "
                      "dtype (the weight's: or one per output channel)", n->op_type);
    return true;
}

typedef struct cv_job {
    const nv_step   *s;
    const nv_window *g;
    const nv_tensor *x, *w, *b, *xz, *wz, *xs, *ws, *ys, *yz;
    nv_tensor       *y;
    int64_t          c, m, group;
    size_t           plane_in, plane_out, taps;
} cv_job;

/* Element K of the per-tensor or per-channel parameter P (present). */
static double param_f(const nv_tensor *p, int64_t k)
{
    return nv_get_f(p->data, p->dtype, p->numel == 1 ? 0 : (size_t)k);
}

static int64_t param_i(const nv_tensor *p, int64_t k)
{
    return p ? nv_get_i(p->data, p->dtype, p->numel == 1 ? 0 : (size_t)k) : 0;
}

/* QLinearConv's requantization of the sum ACC of output channel M. */
static int64_t requantize(const cv_job *j, int64_t m, int64_t acc)
{
    float scale = (float)param_f(j->xs, 0) * (float)param_f(j->ws, m);
    scale /= (float)param_f(j->ys, 0);
    double v = (double)acc * (double)scale + (double)param_i(j->yz, 0);
    double lo = j->y->dtype == BD_DT_INT8 ? -128 : 0, hi = j->y->dtype == BD_DT_INT8 ? 127 : 255;
    v = v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
    return (int64_t)nearbyint(v);
}

/* Output planes [LO, LO + CNT) of N x M. */
static void conv_planes(void *vjob, size_t lo, size_t cnt)
{
    const cv_job *j = vjob;
    const nv_window *g = j->g;
    int ns = g->ns, form = j->s->op;
    int64_t cg = j->c / j->group, mg = j->m / j->group, xz = param_i(j->xz, 0);
    for (size_t pl = lo; pl < lo + cnt; pl++) {
        int64_t nb = (int64_t)pl / j->m, m = (int64_t)pl % j->m, c0 = m / mg * cg;
        int64_t wz = param_i(j->wz, m);
        double bias = j->b ? nv_get_f(j->b->data, j->b->dtype, (size_t)m) : 0;
        int64_t o[NV_SPATIAL] = { 0 };
        for (size_t q = 0; q < j->plane_out; q++) {
            double acc = bias;
            int64_t iacc = j->b ? nv_get_i(j->b->data, j->b->dtype, (size_t)m) : 0;
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
                    if (form != CV_FLOAT)
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
            if (form == CV_FLOAT)
                nv_set_f(j->y->data, j->y->dtype, at, acc);
            else
                nv_set_i(j->y->data, j->y->dtype, at,
                         form == CV_QLINEAR ? requantize(j, m, iacc) : iacc);
            for (int i = ns - 1; i >= 0 && ++o[i] == g->out[i]; i--)
                o[i] = 0;
        }
    }
}

/* Float and double 2-D convolution with typed loads: for each output, the kernel rows and
 * columns inside the input are found once, so the inner loop is a plain multiply-add. */
#define CONV2D_PLANES(sfx, T)                                                                 \
    static void planes2d_##sfx(void *vjob, size_t lo, size_t cnt)                            \
    {                                                                                         \
        const cv_job *j = vjob;                                                               \
        const nv_window *g = j->g;                                                            \
        const T *x = j->x->data, *w = j->w->data, *b = j->b ? j->b->data : NULL;              \
        T *y = j->y->data;                                                                    \
        int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];                   \
        int64_t KH = g->k[0], KW = g->k[1], sh = g->st[0], sw = g->st[1];                     \
        int64_t dh = g->dil[0], dw = g->dil[1], ph = g->pb[0], pw = g->pb[1];                 \
        int64_t cg = j->c / j->group, mg = j->m / j->group;                                   \
        for (size_t pl = lo; pl < lo + cnt; pl++) {                                           \
            int64_t nb = (int64_t)pl / j->m, m = (int64_t)pl % j->m, c0 = m / mg * cg;        \
            const T *xn = x + (nb * j->c + c0) * H * W, *wm = w + m * cg * KH * KW;           \
            for (int64_t oh = 0; oh < OH; oh++) {                                             \
                int64_t h0 = oh * sh - ph, kh0 = 0, kh1 = KH;                                 \
                while (kh0 < KH && h0 + kh0 * dh < 0)                                         \
                    kh0++;                                                                    \
                while (kh1 > kh0 && h0 + (kh1 - 1) * dh >= H)                                 \
                    kh1--;                                                                    \
                for (int64_t ow = 0; ow < OW; ow++) {                                         \
                    int64_t w0 = ow * sw - pw, kw0 = 0, kw1 = KW;                             \
                    while (kw0 < KW && w0 + kw0 * dw < 0)                                     \
                        kw0++;                                                                \
                    while (kw1 > kw0 && w0 + (kw1 - 1) * dw >= W)                             \
                        kw1--;                                                                \
                    double acc = b ? (double)b[m] : 0;                                        \
                    for (int64_t c = 0; c < cg; c++) {                                        \
                        const T *xc = xn + c * H * W, *wc = wm + c * KH * KW;                 \
                        for (int64_t kh = kh0; kh < kh1; kh++) {                              \
                            const T *xr = xc + (h0 + kh * dh) * W + w0, *wr = wc + kh * KW;   \
                            for (int64_t kw = kw0; kw < kw1; kw++)                            \
                                acc += (double)xr[kw * dw] * (double)wr[kw];                  \
                        }                                                                     \
                    }                                                                         \
                    y[(int64_t)pl * OH * OW + oh * OW + ow] = (T)acc;                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }
CONV2D_PLANES(f32, float)
CONV2D_PLANES(f64, double)

/* Run-time tensor K of the step, or NULL (absent or omitted). */
static const nv_tensor *tensor_at(const nv_step *s, const nv_tensor *in, int k)
{
    return k >= 0 && k < s->n_in && s->in[k] >= 0 ? &in[k] : NULL;
}

static int conv_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    const cv_operands *o = &k_operands[s->op];
    const nv_window *g = s->heap;
    cv_job j = { .s = s, .g = g, .x = &in[o->x], .w = &in[o->w], .y = &out[0],
                 .b = tensor_at(s, in, o->b), .xz = tensor_at(s, in, o->xz),
                 .wz = tensor_at(s, in, o->wz), .xs = tensor_at(s, in, o->xs),
                 .ws = tensor_at(s, in, o->ws), .ys = tensor_at(s, in, o->ys),
                 .yz = tensor_at(s, in, o->yz), .c = in[o->x].dims[1], .m = in[o->w].dims[0],
                 .group = s->ip[0], .plane_in = 1, .plane_out = 1, .taps = 1 };
    for (int i = 0; i < g->ns; i++) {
        j.plane_in *= (size_t)g->in[i];
        j.plane_out *= (size_t)g->out[i];
        j.taps *= (size_t)g->k[i];
    }
    size_t planes = (size_t)(in[o->x].dims[0] * j.m);
    nv_range_fn fn = conv_planes;
    if (s->op == CV_FLOAT && g->ns == 2)
        fn = out[0].dtype == BD_DT_FLOAT ? planes2d_f32 : planes2d_f64;
    if (planes && j.plane_out)
        nv_parallel_for(planes, out[0].numel * j.taps * (size_t)(j.c / j.group + 1), fn, &j);
    return 0;
}

static int conv_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    nv_window *g = malloc(sizeof *g);
    if (!g)
        return bd_error_set(err, BD_ENOMEM, "out of memory preparing %s", n->op_type);
    conv_window(n, g);
    s->heap = g;
    s->op = form_of(n->op_type);
    s->ip[0] = bd_node_attr_int(n, "group", 1);
    s->run = conv_run;
    return 0;
}

const nv_op nv_conv_ops[] = {
    { "Conv", conv_supports, conv_prepare },
    { "ConvInteger", conv_supports, conv_prepare },
    { "QLinearConv", conv_supports, conv_prepare },
};
const size_t nv_conv_n = sizeof nv_conv_ops / sizeof nv_conv_ops[0];
