/* Internal to partitioner/shape: the per-op rule signature, the rules each file provides,
 * and the helpers they share (errors, checked attributes, dim arithmetic, constants). */
#ifndef BD_PARTITIONER_SHAPE_SHAPE_RULES_H
#define BD_PARTITIONER_SHAPE_SHAPE_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/ir/graph.h"

/* A rule sets dtype and shape of every output of N (and may fold constant data into them).
 * The driver has checked N's arity against the rule's table row (shape_infer.c) before the
 * rule runs. Inputs of unknown rank make the outputs unknown rather than failing. Returns 0 or a
 * negative BD_E* code with ERR filled. */
typedef int (*shp_rule_fn)(bd_graph *g, bd_node *n, bd_error *err);

/* Largest constant (in elements) that inference folds by computing it; shape arithmetic
 * tensors are tiny, and a bound keeps a hostile model from making inference allocate. */
#define SHP_FOLD_MAX 4096

/* ---- rules (one file per concept) -------------------------------------------------- */

/* shape_broadcast.c */
int shp_unary(bd_graph *g, bd_node *n, bd_error *err);        /* Relu, Sigmoid, Gelu, ... */
int shp_clip(bd_graph *g, bd_node *n, bd_error *err);
int shp_binary(bd_graph *g, bd_node *n, bd_error *err);       /* Add, Sub, Mul, Div, Pow  */
int shp_compare(bd_graph *g, bd_node *n, bd_error *err);      /* Equal, Less, Greater -> BOOL */
int shp_where(bd_graph *g, bd_node *n, bd_error *err);
int shp_dropout(bd_graph *g, bd_node *n, bd_error *err);
int shp_expand(bd_graph *g, bd_node *n, bd_error *err);
int shp_prelu(bd_graph *g, bd_node *n, bd_error *err);        /* slope broadcasts onto X  */
int shp_variadic(bd_graph *g, bd_node *n, bd_error *err);     /* Max, Min, Sum, Mean: 1..N */
int shp_unary_bool(bd_graph *g, bd_node *n, bd_error *err);   /* IsInf, IsNaN -> BOOL     */
int shp_logical(bd_graph *g, bd_node *n, bd_error *err);      /* And, Or, Xor (BOOL)      */
/* shape_pad.c */
int shp_pad(bd_graph *g, bd_node *n, bd_error *err);
/* shape_resize.c */
int shp_resize(bd_graph *g, bd_node *n, bd_error *err);
int shp_upsample(bd_graph *g, bd_node *n, bd_error *err);     /* opsets 7 and 9 */
/* shape_conv.c */
int shp_conv(bd_graph *g, bd_node *n, bd_error *err);
int shp_pool(bd_graph *g, bd_node *n, bd_error *err);         /* MaxPool, AveragePool     */
int shp_global_pool(bd_graph *g, bd_node *n, bd_error *err);
/* shape_deconv.c */
int shp_conv_transpose(bd_graph *g, bd_node *n, bd_error *err);
int shp_max_unpool(bd_graph *g, bd_node *n, bd_error *err);
/* shape_matmul.c */
int shp_matmul(bd_graph *g, bd_node *n, bd_error *err);
int shp_gemm(bd_graph *g, bd_node *n, bd_error *err);
int shp_det(bd_graph *g, bd_node *n, bd_error *err);          /* [..., M, M] -> [...] */
/* shape_norm.c */
int shp_softmax(bd_graph *g, bd_node *n, bd_error *err);      /* Softmax, LogSoftmax      */
int shp_layernorm(bd_graph *g, bd_node *n, bd_error *err);
int shp_batchnorm(bd_graph *g, bd_node *n, bd_error *err);
int shp_lrn(bd_graph *g, bd_node *n, bd_error *err);
int shp_instancenorm(bd_graph *g, bd_node *n, bd_error *err);
int shp_mvn(bd_graph *g, bd_node *n, bd_error *err);          /* MeanVarianceNormalization */
int shp_lpnorm(bd_graph *g, bd_node *n, bd_error *err);       /* LpNormalization          */
/* shape_reduce.c */
int shp_reduce(bd_graph *g, bd_node *n, bd_error *err);       /* ReduceMean, ReduceSum, ... */
int shp_argreduce(bd_graph *g, bd_node *n, bd_error *err);    /* ArgMax, ArgMin -> INT64  */
int shp_cumsum(bd_graph *g, bd_node *n, bd_error *err);
/* shape_view.c */
int shp_reshape(bd_graph *g, bd_node *n, bd_error *err);
int shp_flatten(bd_graph *g, bd_node *n, bd_error *err);
int shp_squeeze(bd_graph *g, bd_node *n, bd_error *err);
int shp_unsqueeze(bd_graph *g, bd_node *n, bd_error *err);
int shp_identity(bd_graph *g, bd_node *n, bd_error *err);
int shp_cast(bd_graph *g, bd_node *n, bd_error *err);
int shp_cast_like(bd_graph *g, bd_node *n, bd_error *err);
/* shape_rearrange.c */
int shp_transpose(bd_graph *g, bd_node *n, bd_error *err);
int shp_concat(bd_graph *g, bd_node *n, bd_error *err);
int shp_split(bd_graph *g, bd_node *n, bd_error *err);
int shp_tile(bd_graph *g, bd_node *n, bd_error *err);
int shp_depth_space(bd_graph *g, bd_node *n, bd_error *err);  /* DepthToSpace, SpaceToDepth */
int shp_reverse_sequence(bd_graph *g, bd_node *n, bd_error *err);
int shp_channel_shuffle(bd_graph *g, bd_node *n, bd_error *err);   /* braid.ChannelShuffle */
/* shape_index.c */
int shp_gather(bd_graph *g, bd_node *n, bd_error *err);
int shp_gather_elements(bd_graph *g, bd_node *n, bd_error *err);
int shp_slice(bd_graph *g, bd_node *n, bd_error *err);
int shp_gather_nd(bd_graph *g, bd_node *n, bd_error *err);
int shp_onehot(bd_graph *g, bd_node *n, bd_error *err);
/* shape_scatter.c */
int shp_scatter_nd(bd_graph *g, bd_node *n, bd_error *err);
int shp_scatter_elements(bd_graph *g, bd_node *n, bd_error *err);  /* and Scatter        */
/* shape_select.c */
int shp_topk(bd_graph *g, bd_node *n, bd_error *err);         /* values + INT64 indices */
int shp_nonzero(bd_graph *g, bd_node *n, bd_error *err);
int shp_nms(bd_graph *g, bd_node *n, bd_error *err);          /* NonMaxSuppression */
int shp_trilu(bd_graph *g, bd_node *n, bd_error *err);
int shp_compress(bd_graph *g, bd_node *n, bd_error *err);
int shp_unique(bd_graph *g, bd_node *n, bd_error *err);
/* shape_control.c */
int shp_if(bd_graph *g, bd_node *n, bd_error *err);           /* from both branches */
int shp_loop(bd_graph *g, bd_node *n, bd_error *err);         /* carried + scan outputs */
int shp_scan(bd_graph *g, bd_node *n, bd_error *err);         /* opset 9+ */
/* shape_einsum.c */
int shp_einsum(bd_graph *g, bd_node *n, bd_error *err);
/* shape_rnn.c */
int shp_rnn(bd_graph *g, bd_node *n, bd_error *err);          /* LSTM, GRU, RNN           */
/* shape_loss.c */
int shp_loss(bd_graph *g, bd_node *n, bd_error *err);  /* NegativeLogLikelihoodLoss, SoftmaxCE */
/* shape_sample.c */
int shp_grid_sample(bd_graph *g, bd_node *n, bd_error *err);
int shp_roi_align(bd_graph *g, bd_node *n, bd_error *err);
int shp_max_roi_pool(bd_graph *g, bd_node *n, bd_error *err);
/* shape_signal.c */
int shp_dft(bd_graph *g, bd_node *n, bd_error *err);          /* opset 17 */
int shp_stft(bd_graph *g, bd_node *n, bd_error *err);
int shp_window(bd_graph *g, bd_node *n, bd_error *err);       /* Hann, Hamming, Blackman */
int shp_mel_weight(bd_graph *g, bd_node *n, bd_error *err);   /* MelWeightMatrix */
/* shape_text.c */
int shp_tfidf(bd_graph *g, bd_node *n, bd_error *err);        /* TfIdfVectorizer */
/* shape_quant.c */
int shp_quantize(bd_graph *g, bd_node *n, bd_error *err);     /* QuantizeLinear, Dequantize */
int shp_dynamic_quantize(bd_graph *g, bd_node *n, bd_error *err);
int shp_integer_op(bd_graph *g, bd_node *n, bd_error *err);   /* MatMulInteger, ConvInteger,
                                                                 QLinearMatMul, QLinearConv */
int shp_ms_quantized(bd_graph *g, bd_node *n, bd_error *err); /* com.microsoft QLinearAdd, QLinearMul,
                                                               * QLinearGlobalAveragePool, QGemm */
/* shape_constant.c */
int shp_shape(bd_graph *g, bd_node *n, bd_error *err);
int shp_size(bd_graph *g, bd_node *n, bd_error *err);
int shp_constant(bd_graph *g, bd_node *n, bd_error *err);
int shp_constant_of_shape(bd_graph *g, bd_node *n, bd_error *err);
int shp_range(bd_graph *g, bd_node *n, bd_error *err);
int shp_eye_like(bd_graph *g, bd_node *n, bd_error *err);

/* ---- errors, inputs and attributes (shape_dims.c) ------------------------------------- */

/* BD_EMODEL "node 'NAME' (OP): <message>". */
int  shp_fail(bd_error *err, const bd_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* BD_EUNSUPPORTED with the same prefix. */
int  shp_unsupported(bd_error *err, const bd_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Number of N's inputs before any appended for fused post-ops or as implicit inputs. */
size_t shp_n_inputs(const bd_node *n);
/* Input I when present and not a post-op operand, else NULL. */
bd_value *shp_in(const bd_node *n, size_t i);

/* INT attribute NAME into *OUT (DFLT when absent); BD_EMODEL when it has another type. */
int  shp_attr_int(const bd_node *n, const char *name, int64_t dflt, int64_t *out, bd_error *err);
/* INTS attribute NAME into *VALS and *COUNT (NULL/0 when absent); BD_EMODEL on another type. */
int  shp_attr_ints(const bd_node *n, const char *name, const int64_t **vals, size_t *count,
                   bd_error *err);
/* FLOAT attribute NAME into *OUT (DFLT when absent); BD_EMODEL when it has another type. */
int  shp_attr_float(const bd_node *n, const char *name, float dflt, float *out, bd_error *err);
/* STRING attribute NAME into *OUT (DFLT when absent); BD_EMODEL when it has another type. */
int  shp_attr_str(const bd_node *n, const char *name, const char *dflt, const char **out,
                  bd_error *err);
/* STRING attribute NAME as the index of one of the COUNT CHOICES into *OUT (DFLT when absent);
 * BD_EMODEL listing the choices on any other value or type. */
int  shp_attr_choice(const bd_node *n, const char *name, const char *const *choices,
                     size_t count, int dflt, int *out, bd_error *err);
/* Normalise AXIS into [0, RANK) (negative counts from the end); BD_EMODEL naming WHAT. */
int  shp_axis(const bd_node *n, const char *what, int64_t axis, int rank, int *out,
              bd_error *err);
/* shp_axis for attribute 'axis' over ranked X, which must have rank >= 1 (BD_EMODEL naming
 * ROLE and X otherwise: "input", "data"). */
int  shp_axis_of(const bd_node *n, const char *role, const bd_value *x, int64_t axis, int *out,
                 bd_error *err);
/* Mark the COUNT AXES (normalised against RANK) in MASK, which the caller zeroes; BD_EMODEL
 * on an axis out of range or listed twice. */
int  shp_axes_mask(const bd_node *n, const int64_t *axes, size_t count, int rank, bool *mask,
                   bd_error *err);

/* ---- shapes ------------------------------------------------------------------------- */

/* Set V's dtype (UNDEFINED keeps V's declared dtype) and shape. */
void shp_set(bd_value *v, int dtype, const bd_shape *s);
/* Set V to unknown rank with dtype DTYPE (UNDEFINED keeps V's declared dtype). */
void shp_set_unknown(bd_value *v, int dtype);
/* Every output of N to unknown rank, dtype of input 0 when known. Returns 0. */
int  shp_all_unknown(bd_node *n);
/* Set V to rank RANK with every dim dynamic (a shape known only at run time). */
void shp_set_rank(bd_value *v, int dtype, int rank);
/* Output 0 of N takes input 0's dtype and shape (all outputs unknown when it is unranked).
 * Returns 0. */
int  shp_pass_through(bd_node *n);
/* S without the dims MASK marks, or with them as 1 when KEEPDIMS (a reduction's shape). */
bd_shape shp_drop_dims(const bd_shape *s, const bool *mask, bool keepdims);
/* Length of V when it is a ranked 1-D tensor of known length, else -1. */
int64_t shp_len_1d(const bd_value *v);
/* True when S has a known rank and no dynamic dim (no element-count product: cannot
 * overflow, unlike bd_shape_is_static). */
bool shp_is_static(const bd_shape *s);
/* True when V is present and of known rank. */
bool shp_ranked(const bd_value *v);
/* A*B into *OUT; false on int64 overflow. Both must be >= 0. */
bool shp_mul(int64_t a, int64_t b, int64_t *out);
/* Element count of S into *OUT (-1 when any dim is dynamic or rank unknown); BD_EMODEL
 * naming N when the product overflows int64. */
int  shp_numel(const bd_node *n, const bd_shape *s, int64_t *out, bd_error *err);
/* A rank-R shape of dynamic dims without symbols. */
bd_shape shp_dynamic(int rank);
/* Multidirectional (numpy) broadcast of A and B into OUT; BD_EMODEL naming N on mismatch.
 * Dynamic dims broadcast against 1 keep their symbol; against a static d>1 become d. */
int  shp_broadcast(const bd_node *n, const bd_shape *a, const bd_shape *b, bd_shape *out,
                   bd_error *err);
/* Fail with BD_EMODEL unless dim AXIS of V (ranked, AXIS < its rank) is WANT or either is
 * dynamic; WHAT names V's role ("weight", "target") and MEANING what WANT is. */
int  shp_expect_dim(const bd_node *n, const char *what, const bd_value *v, int axis,
                    int64_t want, const char *meaning, bd_error *err);
/* Fail with BD_EMODEL unless V is unranked or has rank RANK; WHAT names its role. */
int  shp_expect_rank(const bd_node *n, const char *what, const bd_value *v, int rank,
                     bd_error *err);
/* Append dim I of FROM (with its symbol) to S, or the static dim D; S must have room. */
void shp_push(bd_shape *s, const bd_shape *from, int i);
void shp_push_dim(bd_shape *s, int64_t d);
/* Render S into BUF for messages. */
const char *shp_str(const bd_shape *s, char *buf, size_t size);

/* ---- window attributes (shape_conv.c) -------------------------------------------------- */

/* INTS attribute NAME that must have exactly WANT values, each >= MIN, into OUT; absent means
 * every value is DFLT (*PRESENT, when not NULL, says which). */
int  shp_window_attr(const bd_node *n, const char *name, size_t want, int64_t min, int64_t dflt,
                     int64_t *out, bool *present, bd_error *err);
enum { SHP_PAD_NOTSET, SHP_PAD_SAME_UPPER, SHP_PAD_SAME_LOWER, SHP_PAD_VALID };
/* N's 'auto_pad' as SHP_PAD_* into *MODE (NOTSET when absent or empty). */
int  shp_auto_pad(const bd_node *n, int *mode, bd_error *err);

/* ---- TF layouts (shape_layout.c) ----------------------------------------------------- */

/* *LAST = N's `data_format` puts channels last (NHWC, NWC, NDHWC); false when absent or
 * channels-first. BD_EMODEL naming N on another value. */
int  shp_channels_last(const bd_node *n, bool *last, bd_error *err);
/* [N, spatial..., C] -> [N, C, spatial...] and back (rank < 3 is copied as is; OUT may be IN). */
void shp_to_channels_first(const bd_shape *in, bd_shape *out);
void shp_to_channels_last(const bd_shape *in, bd_shape *out);
/* Conv weight shape W as ONNX [O, I/group, kernel...] from N's `filter_format`: HWIO
 * [k..., I, O] -> [O, I, k...]; HWCM [k..., C, M] -> [C*M, 1, k...]; absent or OIHW: W.
 * BD_EMODEL naming N on an unknown format or a rank below 3. */
int  shp_filter_oihw(const bd_node *n, const bd_shape *w, bd_shape *out, bd_error *err);

/* ---- constants (shape_data.c) -------------------------------------------------------- */

/* True when V carries constant bytes (an initializer or a folded value). */
bool shp_is_const(const bd_value *v);
/* True for the dtypes inference folds: INT64, INT32 and BOOL. */
bool shp_foldable(int dtype);
/* True when V is a constant of a foldable dtype with static shape and at most SHP_FOLD_MAX
 * elements whose byte size matches its shape. */
bool shp_is_int_const(const bd_value *v);
/* Element I of integer constant V as int64 (V must satisfy shp_is_int_const). Reads
 * unaligned bytes safely (initializers point into the mapped model file). */
int64_t shp_const_at(const bd_value *v, int64_t i);
/* Read integer constant V (INT64/INT32, 1-D or scalar) into BUF (capacity CAP) and *COUNT;
 * BD_EMODEL naming N and WHAT when V is not a constant integer tensor or has more than CAP
 * elements. */
int  shp_const_ints(const bd_node *n, const char *what, const bd_value *v, int64_t *buf,
                    size_t cap, size_t *count, bd_error *err);
/* Element 0 of constant V of any numeric dtype as a double into *OUT; false when V is not a
 * constant, is empty or its bytes are too few. */
bool shp_const_number(const bd_value *v, double *out);
/* Fail with BD_EMODEL naming N, WHAT and V unless V is DTYPE (or of unknown type). */
int  shp_check_dtype(const bd_node *n, const char *what, const bd_value *v, int dtype,
                     bd_error *err);
/* Axes from attribute 'axes' (before opset 13) or constant input 1 (from 13) into AXES
 * (capacity BD_MAX_RANK) and *COUNT. *KNOWN is false when input 1 is known only at run
 * time; *PRESENT false when neither is given. BD_EMODEL when both are given or too many. */
int  shp_axes_input(const bd_node *n, int64_t *axes, size_t *count, bool *known, bool *present,
                    bd_error *err);
/* OUT shaped by run-time 1-D shape tensor SV: its rank is SV's length when that is known
 * and at most BD_MAX_RANK, else unknown. */
void shp_set_shaped_by(bd_value *out, int dtype, const bd_value *sv);
/* Give OUT (shape and dtype set; INT32 or BOOL, anything else is written as INT64) the
 * COUNT VALS as constant data in G's pool, converted to its dtype. BD_ENOMEM on allocation
 * failure. */
int  shp_fold_ints(bd_graph *g, bd_value *out, const int64_t *vals, size_t count,
                   bd_error *err);
/* OUT becomes a view of constant IN's bytes (same dtype and element count). */
void shp_fold_view(bd_value *out, const bd_value *in);

#endif
