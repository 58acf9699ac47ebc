/* The oneDNN backend's table: which ops it runs (supports), the op -> builder map, and the
 * process-wide CPU engine. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backends/dnnl/dnnl_backend.h"
#include "backends/dnnl/dnnl_internal.h"

/* ---- engine ------------------------------------------------------------------------------ */

static dnnl_engine_t  g_engine;
static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;

static void engine_init(void)
{
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success)
        g_engine = NULL;
}

dnnl_engine_t dn_engine(void)
{
    pthread_once(&g_engine_once, engine_init);
    return g_engine;
}

/* ---- shared checks ---------------------------------------------------------------------- */

bool dn_why(char *why, size_t len, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return false;
}

bool dn_is_f32_static(const bd_value *v)
{
    return v && v->dtype == BD_DT_FLOAT && bd_shape_is_static(&v->shape) &&
           v->shape.rank <= DNNL_MAX_NDIMS;
}

static bool g_avx512;
static pthread_once_t g_avx512_once = PTHREAD_ONCE_INIT;

static void probe_avx512(void)
{
    __builtin_cpu_init();
    g_avx512 = __builtin_cpu_supports("avx512f");
}

bool dn_avx512(void)
{
    pthread_once(&g_avx512_once, probe_avx512);
    return g_avx512;
}

bool dn_cpu_has_vnni(void)
{
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();   /* each VNNI ISA holds one of these */
    return (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni ||
           (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

bool dn_io_f32(const bd_node *n, size_t nin, char *why, size_t len)
{
    if (n->n_outputs < 1)
        return dn_why(why, len, "no output");
    for (size_t i = 0; i < nin && i < n->n_inputs; i++)
        if (n->inputs[i] && !dn_is_f32_static(n->inputs[i]))
            return dn_why(why, len, "input '%s' is not FP32 with a static shape", n->inputs[i]->name);
    if (!dn_is_f32_static(n->outputs[0]))
        return dn_why(why, len, "output '%s' is not FP32 with a static shape", n->outputs[0]->name);
    return true;
}

size_t dn_num_op_inputs(const bd_node *n)
{
    size_t num = n->n_inputs;
    for (int i = 0; i < n->n_post; i++)
        if ((n->post[i].kind == BD_POST_SUM || n->post[i].kind == BD_POST_BINARY) &&
            n->post[i].input >= 0 && (size_t)n->post[i].input < num)
            num = (size_t)n->post[i].input;
    return num;
}

const bd_value *dn_op_input(const bd_node *n, size_t i)
{
    return i < dn_num_op_inputs(n) ? bd_node_input(n, i) : NULL;
}

bool dn_no_post(const bd_node *n, char *why, size_t len)
{
    if (n->n_post > 0)
        return dn_why(why, len, "fused post-ops are not supported on %s", n->op_type);
    return true;
}

bool dn_spatial_pads(const bd_node *n, int nsp, const int64_t *in, const int64_t *out,
                     const int64_t *ext, const int64_t *stride, int64_t *pl, int64_t *pr)
{
    const char *ap = bd_node_attr_string(n, "auto_pad", "NOTSET");
    const int64_t *pads = NULL;
    size_t np = bd_node_attr_ints(n, "pads", &pads);
    bool same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
    if (!same_upper && !same_lower && strcmp(ap, "VALID") && strcmp(ap, "NOTSET") && ap[0])
        return false;
    if (np && np != (size_t)(2 * nsp))
        return false;
    for (int i = 0; i < nsp; i++) {
        if (same_upper || same_lower) {
            int64_t total = (out[i] - 1) * stride[i] + ext[i] - in[i];
            if (total < 0)
                total = 0;
            pl[i] = same_upper ? total / 2 : total - total / 2;
            pr[i] = total - pl[i];
        } else if (!strcmp(ap, "VALID")) {
            pl[i] = pr[i] = 0;
        } else {
            pl[i] = np ? pads[i] : 0;
            pr[i] = np ? pads[i + nsp] : 0;
        }
        if (pl[i] < 0 || pr[i] < 0)
            return false;
        /* ceil_mode (pooling): widen the right pad so the last window exists */
        if ((in[i] + pl[i] + pr[i] - ext[i]) / stride[i] + 1 != out[i])
            pr[i] = (out[i] - 1) * stride[i] + ext[i] - in[i] - pl[i];
        if (pr[i] < 0 || (in[i] + pl[i] + pr[i] - ext[i]) / stride[i] + 1 != out[i])
            return false;
    }
    return true;
}

/* ---- the op table ----------------------------------------------------------------------- */

typedef struct dn_op {
    const char   *op;
    bool        (*supports)(const bd_graph *g, const bd_node *n, char *why, size_t len);
    dn_build_fn_t build;
} dn_op;

static const dn_op k_ops[] = {
    { "Conv",               dn_conv_supports,      dn_conv_build },
    { "ConvTranspose",      dn_deconv_supports,    dn_deconv_build },
    { "MatMul",             dn_matmul_supports,    dn_matmul_build },
    { "Gemm",               dn_gemm_supports,      dn_gemm_build },
    { "Relu",               dn_eltwise_supports,   dn_eltwise_build },
    { "LeakyRelu",          dn_eltwise_supports,   dn_eltwise_build },
    { "Elu",                dn_eltwise_supports,   dn_eltwise_build },
    { "Clip",               dn_eltwise_supports,   dn_eltwise_build },
    { "Sigmoid",            dn_eltwise_supports,   dn_eltwise_build },
    { "Tanh",               dn_eltwise_supports,   dn_eltwise_build },
    { "Erf",                dn_eltwise_supports,   dn_eltwise_build },
    { "Gelu",               dn_eltwise_supports,   dn_eltwise_build },
    { "Swish",              dn_eltwise_supports,   dn_eltwise_build },
    { "HardSwish",          dn_eltwise_supports,   dn_eltwise_build },
    { "HardSigmoid",        dn_eltwise_supports,   dn_eltwise_build },
    { "Abs",                dn_eltwise_supports,   dn_eltwise_build },
    { "Sqrt",               dn_eltwise_supports,   dn_eltwise_build },
    { "Exp",                dn_eltwise_supports,   dn_eltwise_build },
    { "Log",                dn_eltwise_supports,   dn_eltwise_build },
    { "Softplus",           dn_eltwise_supports,   dn_eltwise_build },
    { "Neg",                dn_eltwise_supports,   dn_eltwise_build },
    { "Reciprocal",         dn_eltwise_supports,   dn_eltwise_build },
    { "Round",              dn_eltwise_supports,   dn_eltwise_build },
    { "Pow",                dn_eltwise_supports,   dn_eltwise_build },
    { "Add",                dn_binary_supports,    dn_binary_build },
    { "Sub",                dn_binary_supports,    dn_binary_build },
    { "Mul",                dn_binary_supports,    dn_binary_build },
    { "Div",                dn_binary_supports,    dn_binary_build },
    { "Max",                dn_binary_supports,    dn_binary_build },
    { "Min",                dn_binary_supports,    dn_binary_build },
    { "PRelu",              dn_prelu_supports,     dn_prelu_build },
    { "Pad",                dn_pad_supports,       dn_pad_build },
    { "Resize",             dn_resize_supports,    dn_resize_build },
    { "ReduceMean",         dn_reduce_supports,    dn_reduce_build },
    { "ReduceSum",          dn_reduce_supports,    dn_reduce_build },
    { "ReduceMax",          dn_reduce_supports,    dn_reduce_build },
    { "ReduceMin",          dn_reduce_supports,    dn_reduce_build },
    { "BatchNormalization", dn_bnorm_supports,     dn_bnorm_build },
    { "MaxPool",            dn_pool_supports,      dn_pool_build },
    { "AveragePool",        dn_pool_supports,      dn_pool_build },
    { "GlobalAveragePool",  dn_pool_supports,      dn_pool_build },
    { "GlobalMaxPool",      dn_pool_supports,      dn_pool_build },
    { "Softmax",            dn_softmax_supports,   dn_softmax_build },
    { "LayerNormalization", dn_lnorm_supports,     dn_lnorm_build },
    { "Reshape",            dn_view_supports,      dn_view_build },
    { "Flatten",            dn_view_supports,      dn_view_build },
    { "Squeeze",            dn_view_supports,      dn_view_build },
    { "Unsqueeze",          dn_view_supports,      dn_view_build },
    { "Identity",           dn_view_supports,      dn_view_build },
    { "Transpose",          dn_transpose_supports, dn_transpose_build },
    { "Concat",             dn_concat_supports,    dn_concat_build },
    { "Split",              dn_split_supports,     dn_split_build },
    { "Slice",              dn_slice_supports,     dn_slice_build },
    { "ChannelShuffle",     dn_shuffle_supports,   dn_shuffle_build },
    { "FakeQuantize",       dn_fakequant_supports, dn_fakequant_build },
    { "LSTM",               dn_rnn_supports,       dn_rnn_build },
    { "GRU",                dn_rnn_supports,       dn_rnn_build },
    { "RNN",                dn_rnn_supports,       dn_rnn_build },
    { "DynamicQuantizeLinear", dn_dynquant_supports, dn_dynquant_build },
    { "MatMulInteger",      dn_mmi_supports,       dn_mmi_build },
    { "MatMulIntegerScaled", dn_mmi_supports,      dn_mmi_build },   /* braid's (dynquant pass) */
    { "Cast",               dn_cast_supports,      dn_cast_build },
};

static const dn_op *find_op(const bd_node *n)
{
    const char *d = n->domain ? n->domain : "";
    if (d[0] && strcmp(d, "ai.onnx") && strcmp(d, "braid"))
        return NULL;
    for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; i++)
        if (!strcmp(k_ops[i].op, n->op_type))
            return &k_ops[i];
    return NULL;
}

dn_build_fn_t dn_builder_for(const bd_node *n)
{
    const dn_op *op = find_op(n);
    return op ? op->build : NULL;
}

/* The ONNX opsets whose semantics braid's oneDNN mapping (and shape inference) implements.
 * A model of another opset runs entirely on the fallback engine, so no op is ever given
 * semantics its opset does not have (e.g. opset 6's legacy broadcast attribute). */
enum { DN_ONNX_OPSET_MIN = 7, DN_ONNX_OPSET_MAX = 17 };

/* The first tensor of N with a zero-size dim, or NULL: oneDNN's primitive descriptors divide
 * by dims (SIGFPE on an empty batch), so no empty tensor ever reaches one. */
const bd_value *dn_empty_tensor(const bd_node *n)
{
    for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
        const bd_value *v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
        for (int d = 0; v && d < v->shape.rank && d < BD_MAX_RANK; d++)
            if (v->shape.dims[d] == 0)
                return v;
    }
    return NULL;
}

static bool dn_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    int64_t opset = bd_graph_opset(g);
    if (strcmp(bd_graph_framework(g), "onnx") == 0 && opset > 0 &&
        (opset < DN_ONNX_OPSET_MIN || opset > DN_ONNX_OPSET_MAX))
        return dn_why(why, len, "opset %lld is outside the oneDNN mapping (%d-%d)", (long long)opset,
                      DN_ONNX_OPSET_MIN, DN_ONNX_OPSET_MAX);
    const dn_op *op = find_op(n);
    if (!op)
        return dn_why(why, len, "op %s%s%s is not supported by oneDNN", n->domain && n->domain[0] ? n->domain : "",
                      n->domain && n->domain[0] ? "::" : "", n->op_type);
    if (n->n_post < 0 || n->n_post > BD_MAX_POSTOPS)
        return dn_why(why, len, "bad post-op count %d", n->n_post);
    const bd_value *empty = dn_empty_tensor(n);
    if (empty)
        return dn_why(why, len, "tensor '%s' is empty (a zero-size dim): oneDNN primitives need at least "
                      "one element", empty->name);
    return op->supports(g, n, why, len);
}

const bd_backend bd_dnnl_backend = {
    .name        = "dnnl",
    .kind        = BD_ENGINE_FAST_PATH,
    .supports    = dn_supports,
    .compile     = dn_compile,
    .ctx_create  = dn_ctx_create,
    .run         = dn_run,
    .ctx_destroy = dn_ctx_destroy,
    .release     = dn_kernel_release,
    .stats       = dn_kernel_stats,
};
