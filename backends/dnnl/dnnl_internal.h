/* The oneDNN backend's internals: the compiled kernel, and the contract between the subgraph
 * compiler (dnnl_compile.c) and the per-op builders (dnnl_conv.c, dnnl_deconv.c, dnnl_matmul.c,
 * ...).
 *
 * Compilation walks the subgraph's nodes in order. Every IR value gets a dn_tensor: the
 * buffer that holds it and its oneDNN memory desc (its layout, which may be blocked such as
 * nChw16c, or a strided view such as a transpose). A builder:
 *   1. reads its inputs with dn_input()/dn_input_plain(): these return the buffer holding the
 *      value in the wanted layout, inserting a (cached) reorder step when needed;
 *   2. builds its fused post-ops (dn_postops_build) and creates its primitive desc with them
 *      (dn_pd_make), then asks dn_output() for the output buffer in the layout the primitive
 *      chose (a graph output in plain layout is bound to the caller's buffer);
 *   3. appends its step with dn_add_step() (which creates the primitive and scratchpad arg).
 * Buffers are external inputs/outputs, kernel-owned constants, or arena slots whose offsets
 * come from a liveness analysis once every step is known.
 *
 * Builders report failures with dn_fail()/dn_check(), which name the node; everything the
 * compiler holds is freed by the compiler on error. */
#ifndef BD_BACKENDS_DNNL_DNNL_INTERNAL_H
#define BD_BACKENDS_DNNL_DNNL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "core/backend.h"

/* ---- the compiled kernel (immutable after compile) ------------------------------------ */

typedef enum dn_buf_kind { DN_BUF_INPUT = 1, DN_BUF_OUTPUT, DN_BUF_CONST, DN_BUF_ARENA } dn_buf_kind;

typedef struct dn_buffer {
    dn_buf_kind kind;
    int         index;        /* INPUT/OUTPUT: position in run()'s in[]/out[] */
    size_t      size;         /* bytes */
    size_t      offset;       /* ARENA: offset in the arena (liveness planning) */
    void       *data;         /* CONST: kernel-owned, 64-byte aligned */
    bool        own;          /* CONST: DATA is a block of its own (else in the kernel's
                               * weights block) */
    int         first, last;  /* ARENA: first and last step that touch it (-1 = never) */
    int         pending;      /* compile only: readers still to come (for in-place decisions) */
} dn_buffer;

typedef struct dn_arg {
    int                arg;   /* DNNL_ARG_* */
    int                buf;   /* index into kernel->bufs */
    dnnl_memory_desc_t md;
} dn_arg;

typedef enum dn_step_kind {
    DN_STEP_PRIM = 1,         /* a oneDNN primitive */
    DN_STEP_ERF,              /* y = erf(x) elementwise on plain f32 (oneDNN has no erf eltwise) */
    DN_STEP_PAD,              /* constant Pad of plain f32 (oneDNN has no pad primitive) */
    DN_STEP_RESIZE,           /* Resize modes oneDNN's resampling cannot express, plain f32 */
    DN_STEP_SWISH,            /* y = x * sigmoid(alpha x) over a dense buffer (dnnl_swish.c) */
    DN_STEP_BCAST,            /* y = x op s[c], c the innermost axis of x (dnnl_bcast.c) */
    DN_STEP_RECURRENCE,       /* an LSTM's or GRU's recurrence at small batch (dnnl_recurrence.c) */
    DN_STEP_INTERLEAVE,       /* a ChannelShuffle of several parts (dnnl_interleave.c) */
    DN_STEP_DYNQUANT,         /* DynamicQuantizeLinear: f32 -> u8, scale, s32 zp (dnnl_integer.c) */
    DN_STEP_FAKEQUANT,        /* a QDQ pair's float result over a dense buffer (dnnl_fakequant.c) */
} dn_step_kind;

/* The ops of a BCAST step. */
typedef enum dn_bcast_op {
    DN_BCAST_ADD = 0, DN_BCAST_SUB, DN_BCAST_MUL, DN_BCAST_DIV, DN_BCAST_MAX, DN_BCAST_MIN
} dn_bcast_op;

/* Parameters of a native step (what its args' mds do not say).
 *   PAD:    ip[d] = begin pad of dim d; fp[0] = the fill value.
 *   SWISH:  fp[0] = alpha.
 *   BCAST:  ip[0] = dn_bcast_op, ip[1] = 1 for s op x (a swapped Sub), ip[2] = C (args: x, s,
 *           y; x and y dense with an innermost axis of C, s C floats).
 *   RESIZE: ip[0] = 1 linear / 0 nearest, ip[1] = dn_ctm, ip[2] = dn_nearest_mode,
 *           ip[3 + d] = 1 when dim d is resized; fp[d] = its scale (0: out/in from sizes). */
typedef struct dn_native {
    int64_t ip[2 * DNNL_MAX_NDIMS];
    float   fp[2 * DNNL_MAX_NDIMS];
} dn_native;

/* Resize's coordinate_transformation_mode and nearest_mode (ONNX names). */
typedef enum dn_ctm {
    DN_CTM_HALF_PIXEL = 0, DN_CTM_PYTORCH_HALF_PIXEL, DN_CTM_ALIGN_CORNERS, DN_CTM_ASYMMETRIC,
    DN_CTM_TF_HALF_PIXEL_FOR_NN
} dn_ctm;
typedef enum dn_nearest_mode {
    DN_NEAREST_ROUND_PREFER_FLOOR = 0, DN_NEAREST_ROUND_PREFER_CEIL, DN_NEAREST_FLOOR,
    DN_NEAREST_CEIL
} dn_nearest_mode;

typedef struct dn_step {
    dn_step_kind      kind;
    int               threads;  /* 1: created and run on the calling thread alone (dnnl_threads.c);
                                 * 0: on the context's OpenMP threads */
    size_t            reorder_bytes; /* a reorder primitive: the bytes it writes; else 0 */
    dnnl_primitive_t  prim;
    dn_arg           *args;
    int               nargs;
    size_t            scratch;  /* scratchpad bytes this primitive needs */
    const char       *node;     /* node name for run-time errors (graph-owned) */
    dn_native         nat;      /* native steps only */
} dn_step;

struct bd_kernel {
    dn_step   *steps;
    int        n_steps;
    dn_buffer *bufs;
    int        n_bufs;
    size_t     arena_size;        /* bytes of one context's arena (after liveness reuse) */
    size_t     arena_naive;       /* sum of all arena buffers (what no reuse would need) */
    size_t     scratch_size;      /* max scratchpad over the steps */
    int        n_inputs, n_outputs;
    bd_shape  *in_shapes, *out_shapes;
    int       *io_dtypes;         /* bd_dtype of each input, then each output: FP32, or the
                                   * int8 pattern's UINT8/INT8/INT32 (dnnl_integer.c) */
    void      *weights;           /* every CONST buffer's data, packed (bd_big_alloc); or NULL
                                   * (none, or it is in HELD: the model's cache frees it) */
    size_t     weights_size;
    bd_const_block **held;        /* blocks of the model's constant cache this kernel reads
                                   * (its own, published, and other kernels'): one reference each */
    int        n_held;
    size_t     shared_consts, shared_bytes; /* constants read from other kernels' blocks */
    size_t     ref_steps;         /* steps on a reference implementation (dn_impl_is_cliff) */
    char      *impls;             /* "jit:avx2 x12, ..." (bd_kernel_stats.impls) */
    double     const_ms;          /* compile time spent laying out the constants */
};

/* The I-th float of an initializer's bytes, which may sit at any address of a model file. */
static inline float dn_f32_at(const void *p, int64_t i)
{
    float v;
    memcpy(&v, (const char *)p + i * (int64_t)sizeof v, sizeof v);
    return v;
}

/* The process-wide CPU engine (created once, thread-safe). NULL when oneDNN cannot create it. */
dnnl_engine_t dn_engine(void);

/* ---- the compiler's state (dnnl_compile.c) -------------------------------------------- */

struct dn_compiler;
typedef int (*dn_build_fn_t)(struct dn_compiler *c, const bd_node *n);

typedef struct dn_tensor {
    bool               defined;
    int                buf;
    dnnl_memory_desc_t md;
    bool               strided_view;  /* a permuted view (Transpose): only MatMul reads it as is */
    int                uses;          /* readers inside the subgraph (+1 if a subgraph output) */
    int                out_index;     /* position among the subgraph outputs, -1 if none */
    /* Kept as u8 codes by the int8 primitive that made it (dnnl_int8.c): value = scale *
     * (code - zp) in buffer q8_buf laid out as q8_md. Its f32 form, when some reader wants
     * one, is made then (dn_int8_dequant); until then DEFINED is false. */
    bool               q8;
    int                q8_buf;
    dnnl_memory_desc_t q8_md;
    float              q8_scale;
    int32_t            q8_zp;
} dn_tensor;

typedef struct dn_reorder_entry {
    int                value;  /* value index */
    int                buf;
    dnnl_memory_desc_t md;
    int64_t            pick[3];   /* a subsample's strides (dnnl_conv.c); zeros: all of it */
} dn_reorder_entry;

/* An initializer already laid out for a kernel (dn_const_value): the same initializer wanted
 * in the same layout again (one weight read by several nodes: tied or shared layers, an
 * unrolled RNN's steps) reuses its buffer instead of a second copy that would crowd the
 * caches (8 MatMuls sharing a 1024x1024 weight: 2.0 -> 0.39 ms at batch 1). */
typedef struct dn_const_entry {
    const void        *data;   /* the initializer's bytes (bd_value.data) */
    dnnl_memory_desc_t src, dst;
    int                buf;
} dn_const_entry;

/* What identifies a constant laid out for the model's cache (bd_subgraph.consts): the source
 * bytes (their address when the cache calls them stable, the model's own initializers; else a
 * hash of their contents: constants a plan's passes made, which every plan makes anew), how
 * they are read and the layout written. Zeroed before it is filled: compared byte for byte. */
typedef struct dn_const_key {
    uint8_t            src[BD_CONST_HASH_BYTES];   /* the address, or the contents' hash */
    uint64_t           by_address;
    uint64_t           src_bytes;
    dnnl_memory_desc_t src_md, dst_md;
} dn_const_key;

/* A constant this kernel laid out, to publish when the compile succeeds. */
typedef struct dn_made_const {
    dn_const_key key;
    int          buf;
} dn_made_const;

typedef struct dn_compiler {
    const bd_subgraph *sg;
    const bd_node     *node;        /* node being built (error messages) */
    dnnl_engine_t      eng;
    dnnl_stream_t      stream;      /* compile-time stream for weight reorders */
    dn_tensor         *t;           /* indexed by bd_value.index */
    size_t             n_t;
    dn_step           *steps;
    int                n_steps, cap_steps;
    dn_buffer         *bufs;
    int                n_bufs, cap_bufs;
    dn_reorder_entry  *cache;
    int                n_cache, cap_cache;
    dn_const_entry    *consts;
    int                n_consts, cap_consts;
    bool              *out_bound;   /* output j's caller buffer already written by a step */
    bd_error          *err;
    double             const_ms;    /* spent in dn_const so far (bd_kernel_stats.const_ms) */
    char              *block;       /* the constants' block (bd_big_alloc), taken larger than
                                     * needed at the start and cut to BLOCK_USED at the end */
    size_t             block_size, block_used;
    bd_const_cache    *shared;      /* the model's cache (bd_subgraph.consts), or NULL */
    bd_const_block   **held;        /* blocks of it the kernel reads, one reference each */
    int                n_held, cap_held;
    dn_made_const     *made;        /* constants laid out here, published at the end */
    int                n_made, cap_made;
    size_t             shared_consts, shared_bytes;
    bool               tail_fused;  /* the node being built took its native tail (a fake
                                     * quantization) into its own primitive (dnnl_int8.c) */
} dn_compiler;

/* The subgraph compiler and kernel teardown (dnnl_compile.c), contexts (dnnl_exec.c). */
int  dn_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err);
void dn_kernel_release(bd_kernel *k);
void dn_kernel_stats(const bd_kernel *k, bd_kernel_stats *out);
int  dn_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err);
int  dn_run(bd_kernel_ctx *ctx, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
            bd_error *err);
void dn_ctx_destroy(bd_kernel_ctx *ctx);
/* The builder for N's op, or NULL (dnnl_backend.c). */
dn_build_fn_t dn_builder_for(const bd_node *n);
/* The first input or output of N with a zero-size dim, or NULL (none may reach oneDNN). */
const bd_value *dn_empty_tensor(const bd_node *n);

/* Fail the current node with BD_EBACKEND/BD_EUNSUPPORTED and a message naming it. */
int  dn_fail(dn_compiler *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 0 if S is dnnl_success, else fail naming the node and WHAT (the dnnl call). */
int  dn_check(dn_compiler *c, dnnl_status_t s, const char *what);

/* The oneDNN data type of a subgraph input or output of bd_dtype DT (f32, u8, s8, s32); false
 * for the others. */
bool dn_boundary_dt(int dt, dnnl_data_type_t *out);
/* Plain row-major f32 md of DIMS (rank 0 becomes [1]). */
void dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims);
/* Plain md of V's (static) shape. */
void dn_md_of_shape(dnnl_memory_desc_t *md, const bd_value *v);
/* True when MD is dense row-major f32 (strides of size-1 dims ignored). */
bool dn_md_is_plain(const dnnl_memory_desc_t *md);
/* MD with RANK dims, left-padded with 1s (numpy broadcasting), same memory. MD must be
 * strided (no inner blocks). Returns false if it is not. */
bool dn_md_expand(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md, int rank);
/* Reinterpret the dense plain MD as RANK dims DIMS (same bytes). */
void dn_md_reshape_plain(dnnl_memory_desc_t *out, int rank, const int64_t *dims);
/* A format_tag_any md of DIMS. */
void dn_md_any(dnnl_memory_desc_t *md, int rank, const int64_t *dims);
/* Same md? */
bool dn_md_equal(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b);
/* MD is f32 and covers its buffer densely from offset 0 (every element its dims and padding
 * name, no gaps): a kernel may run over its bytes as one flat array. */
bool dn_md_dense(const dnnl_memory_desc_t *md);

/* The current tensor of V (constants are materialised on first use). NULL on failure. */
const dn_tensor *dn_tensor_of(dn_compiler *c, const bd_value *v);
/* Buffer holding V in layout WANT (NULL = as it is; strided views are made plain unless
 * ALLOW_VIEW). Reorders are cached per (value, md); constants are reordered at compile. */
int  dn_input(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *want, int *buf);
/* A derived copy of V made once and read by several steps: V's pixels at strides PICK (3
 * values; all zero for V whole) in layout MD. dn_cached_copy gives its buffer, or -1 if none
 * was made yet; dn_cache_copy records BUF as that copy and keeps it from being overwritten. */
int  dn_cached_copy(const dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md,
                    const int64_t *pick);
int  dn_cache_copy(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md,
                   const int64_t *pick, int buf);
/* A whole copy of V of data type DT, of V's own dims, in any layout (its md in *MD): its
 * buffer, or -1. */
int  dn_cached_copy_typed(const dn_compiler *c, const bd_value *v, dnnl_data_type_t dt,
                          dnnl_memory_desc_t *md);
/* Buffer holding V in plain layout; *MD receives that plain md. */
int  dn_input_plain(dn_compiler *c, const bd_value *v, int *buf, dnnl_memory_desc_t *md);
/* Buffer holding V as it is, strided views included (for MatMul); *MD its md. */
int  dn_input_any(dn_compiler *c, const bd_value *v, int *buf, dnnl_memory_desc_t *md);
/* A new buffer for output V in layout MD: the caller's output buffer when V is a subgraph
 * output and MD is plain, else an arena slot. Defines V's tensor. */
int  dn_output(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md, int *buf);
/* Like dn_output, but the buffer must already hold RESIDUAL (a sum post-op): reuses the
 * residual's arena buffer in place when it dies here with the same layout, else copies it in
 * with a reorder step. */
int  dn_output_with_residual(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *md,
                             const bd_value *residual, int *buf);
/* A new arena buffer of MD's size for an intermediate no IR value names (a builder's own
 * temporary between two of its steps). */
int  dn_temp(dn_compiler *c, const dnnl_memory_desc_t *md, int *buf);
/* Define V as a view of BUF with layout MD (no step). */
int  dn_define_view(dn_compiler *c, const bd_value *v, int buf, const dnnl_memory_desc_t *md,
                    bool strided_view);
/* Can V's output alias input X's buffer (X dies at this node, arena, same layout MD)? */
bool dn_can_reuse(dn_compiler *c, const bd_value *x, const dnnl_memory_desc_t *md);
/* dn_const for initializer V, checking that V holds at least SRC_MD's bytes. */
int  dn_const_value(dn_compiler *c, const bd_value *v, const dnnl_memory_desc_t *src_md,
                    const dnnl_memory_desc_t *dst_md, int *buf);
/* dn_const for DATA that lives as long as the graph (an initializer's bytes, never a builder's
 * temporary, whose address may come back with other contents): the same DATA wanted in the
 * same layout again shares the first buffer (dn_const_entry). */
int  dn_const_shared(dn_compiler *c, const void *data, const dnnl_memory_desc_t *src_md,
                     const dnnl_memory_desc_t *dst_md, int *buf);
/* A kernel-owned constant buffer holding DATA (plain f32 of SRC_MD) reordered to DST_MD. */
int  dn_const(dn_compiler *c, const void *data, const dnnl_memory_desc_t *src_md,
              const dnnl_memory_desc_t *dst_md, int *buf);

/* Append a step running the primitive of PD (PD is consumed: destroyed here in all cases)
 * with ARGS (copied); adds the scratchpad arg. A PD on a reference implementation goes
 * through the cliff guard first (dn_guard_add), which may append other steps instead. */
int  dn_add_step(dn_compiler *c, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs);
/* dn_add_step without the guard: PD's primitive as it is. */
int  dn_push_prim(dn_compiler *c, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs);

/* ---- the cliff guard (dnnl_guard.c) ---------------------------------------------------- */

/* Is IMPL, oneDNN's implementation of a primitive of KIND, a reference kernel braid does not
 * accept on the hot path (a "ref" name not on the guard's allowlist)? */
bool dn_impl_is_cliff(dnnl_primitive_kind_t kind, const char *impl);
bool dn_pd_is_cliff(const_dnnl_primitive_desc_t pd);
/* The probe at annotate: would the op DESC (an initialised *_desc_t, its operands plain, no
 * post-ops) run on a cliff? A supports() that sees it refuses the node with a reason saying
 * "reference kernel", so annotation offers it to the next engine. False when oneDNN cannot
 * create it at all (compile reports that). */
bool dn_probe_is_cliff(const void *desc);
/* Append PD (consumed) with ARGS: as it is when it is no cliff; else the first of its
 * alternatives (plain layouts, post-ops split off, both) with no cliff in it; else as it is
 * (the kernel's statistics count it). BRAID_DNNL_GUARD=0 turns the alternatives off. */
int  dn_guard_add(dn_compiler *c, dnnl_primitive_desc_t pd, const dn_arg *args, int nargs);
/* Append a native step (ERF, PAD, RESIZE) reading/writing ARGS with parameters NAT (may be
 * NULL). */
int  dn_add_native(dn_compiler *c, dn_step_kind kind, const dn_arg *args, int nargs,
                   const dn_native *nat);
/* Run native step S on its arguments' memories MEMS (dnnl_exec.c calls it; dnnl_native.c). */
void dn_native_run(const dn_step *s, dnnl_memory_t *mems);
/* An attr with user scratchpad mode (and POST_OPS if not NULL). NULL on failure (reported). */
dnnl_primitive_attr_t dn_attr(dn_compiler *c, const_dnnl_post_ops_t post_ops);
/* The pd of an op: DESC was initialised by a *_desc_init call that returned INIT (INIT_WHAT
 * names it in the error). The attr has user scratchpad mode, post-ops PO (may be NULL) and,
 * unless OUT_SCALE is 1, that common output scale. PO is consumed: destroyed here on every
 * path, so builders hold nothing to release when this fails. *PD NULL on failure (reported). */
int  dn_pd_make(dn_compiler *c, dnnl_status_t init, const char *init_what, const void *desc,
                dnnl_post_ops_t po, float out_scale, dnnl_primitive_desc_t *pd);
/* A reorder pd from SRC to DST (user scratchpad mode); WHAT names it in the error. */
int  dn_reorder_pd(dn_compiler *c, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst,
                   const char *what, dnnl_primitive_desc_t *pd);
/* The md a pd chose for WHAT (dnnl_query_*_md, index 0). */
const dnnl_memory_desc_t *dn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what);

/* ---- post-ops (dnnl_postops.c) -------------------------------------------------------- */

/* The post-op arguments a builder must add to its step. */
typedef struct dn_post_args {
    dn_arg  args[BD_MAX_POSTOPS];
    int     nargs;
    const bd_value *residual;   /* SUM post-op input, or NULL */
    int     sum_index;          /* oneDNN's index of the SUM post-op, -1 without one */
    int     residual_arg;       /* built with SUM_AS_BINARY: the arg in ARGS that reads the
                                 * residual as a binary add's src1 (dn_postops_bind_residual
                                 * binds it), else -1 */
} dn_post_args;

/* Can oneDNN apply NODE's post-ops to an output of rank OUT_RANK? Writes WHY if not. */
bool dn_postops_supported(const bd_graph *g, const bd_node *node, char *why, size_t why_len);
/* Can the binary post-ops of N be expressed on its output collapsed to 2D [M, N]? */
bool dn_postops_collapsible(const bd_node *n);
/* Append node->post[FIRST..] to *PO (created when NULL and needed; callers initialise it to
 * NULL or to post-ops of their own, whose count offsets the argument indices) for a destination of RANK dims
 * DST_DIMS (the primitive's dst view). Binary inputs are bound as plain broadcast mds. */
int  dn_postops_build(dn_compiler *c, int first, int rank, const int64_t *dst_dims,
                      dnnl_post_ops_t *po, dn_post_args *pa);
/* dn_postops_build for a primitive that sees a channels-last output as [N, C, spatial...]
 * (LAST): DST_DIMS are the IR's order, binary operands are bound through permuted mds. */
int  dn_postops_build_ex(dn_compiler *c, int first, int rank, const int64_t *dst_dims, bool last,
                         dnnl_post_ops_t *po, dn_post_args *pa);
/* dn_postops_build_ex with the SUM post-op, when SUM_SRC1 is given and the sum's scale is 1,
 * appended as a binary add of the residual read through SUM_SRC1 (the primitive's dst md, or
 * format_any of its dims: oneDNN then gives it the dst's layout). oneDNN 2.6's AVX2
 * convolution and gemm matmul kernels take a sum only as the first post-op (they start their
 * accumulators from dst) and fall to ref:any otherwise; a binary add reads the residual
 * wherever it sits in the chain. The builder then binds the residual with
 * dn_postops_bind_residual and writes its dst to a buffer of its own. */
int  dn_postops_build_as(dn_compiler *c, int first, int rank, const int64_t *dst_dims, bool last,
                         const dnnl_memory_desc_t *sum_src1, dnnl_post_ops_t *po, dn_post_args *pa);
/* Should PD, built with PA's post-ops, be built again with the sum as a binary add? True when
 * the sum is not oneDNN's first post-op and oneDNN fell back to a ref: implementation. */
bool dn_postops_sum_fell_to_ref(const_dnnl_primitive_desc_t pd, const dn_post_args *pa);
/* Bind the residual of PA (built with SUM_AS_BINARY) as the src1 PD chose, read through
 * RESIDUAL_MD (its md in the IR's dim order). The src1 must be laid out as DST_MD (the pd's
 * dst); returns BD_EBACKEND otherwise. */
int  dn_postops_bind_residual(dn_compiler *c, const_dnnl_primitive_desc_t pd,
                              const dnnl_memory_desc_t *dst_md, const dnnl_memory_desc_t *residual_md,
                              dn_post_args *pa);

/* ---- the builders (one per op family) -------------------------------------------------- */

bool dn_conv_supports   (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_conv_build      (dn_compiler *c, const bd_node *n);

/* A convolution's geometry (dnnl_conv.c), channels-first whatever the data_format. */
typedef struct dn_conv_geom {
    int     nsp;
    bool    last;                 /* data_format NHWC */
    int64_t group;
    int64_t xd[BD_MAX_RANK], wd[BD_MAX_RANK], yd[BD_MAX_RANK];   /* channels-first, OIHW */
    int64_t stride[3], dil[3], ext[3], pl[3], pr[3];
} dn_conv_geom;
/* Build N (geometry G) as an int8 convolution when it reads a fake-quantized tensor, its
 * weights are integers times a scale per channel, and oneDNN sums them exactly on this CPU
 * (dnnl_int8.c); *BUILT false (and nothing appended) otherwise. */
int  dn_conv_int8_build (dn_compiler *c, const bd_node *n, const dn_conv_geom *g, bool *built);
/* A MatMul [M, K] x [K, N] with constant weights, collapsed to 2-D (dnnl_matmul.c). */
typedef struct dn_mm_int8 {
    int64_t             m, k, n;
    int                 src_buf;      /* X's plain f32 buffer, seen as SRC_MD [M, K] */
    dnnl_memory_desc_t  src_md;
    const void         *w;            /* [K, N] floats, row-major */
    const void         *bias;         /* [N] floats (the leading Add post-op), or NULL */
    int                 first_post;   /* the node's first post-op after that Add */
} dn_mm_int8;
/* Build N as an int8 matmul on the same terms as dn_conv_int8_build. */
int  dn_matmul_int8_build(dn_compiler *c, const bd_node *n, const dn_mm_int8 *mm, bool *built);
/* How many of the subgraph's Convs read Y as their source (and so want its u8 codes for an
 * int8 kernel); *ONLY false when anything else reads it too. 0 when BRAID_DNNL_INT8_CHAIN=0
 * turns the codes off (dnnl_int8.c). */
int  dn_int8_code_readers(const dn_compiler *c, const bd_value *y, bool *only);
/* V, kept as u8 codes (dn_tensor.q8), defined in f32 too: a reorder scaling the codes back,
 * appended where the first reader that wants f32 is built. */
int  dn_int8_dequant(dn_compiler *c, const bd_value *v);
bool dn_deconv_supports (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_deconv_build    (dn_compiler *c, const bd_node *n);
bool dn_matmul_supports (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_matmul_build    (dn_compiler *c, const bd_node *n);
bool dn_gemm_supports   (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_gemm_build      (dn_compiler *c, const bd_node *n);
bool dn_eltwise_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_eltwise_build   (dn_compiler *c, const bd_node *n);
bool dn_binary_supports (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_binary_build    (dn_compiler *c, const bd_node *n);
bool dn_pool_supports   (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_pool_build      (dn_compiler *c, const bd_node *n);
bool dn_softmax_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_softmax_build   (dn_compiler *c, const bd_node *n);
bool dn_lnorm_supports  (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_lnorm_build     (dn_compiler *c, const bd_node *n);
bool dn_bnorm_supports  (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_bnorm_build     (dn_compiler *c, const bd_node *n);
bool dn_view_supports   (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_view_build      (dn_compiler *c, const bd_node *n);
bool dn_transpose_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_transpose_build (dn_compiler *c, const bd_node *n);
bool dn_concat_supports (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_concat_build    (dn_compiler *c, const bd_node *n);
bool dn_prelu_supports  (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_prelu_build     (dn_compiler *c, const bd_node *n);
bool dn_pad_supports    (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_pad_build       (dn_compiler *c, const bd_node *n);
bool dn_reduce_supports (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_reduce_build    (dn_compiler *c, const bd_node *n);
bool dn_resize_supports (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_resize_build    (dn_compiler *c, const bd_node *n);
bool dn_split_supports  (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_split_build     (dn_compiler *c, const bd_node *n);
bool dn_slice_supports  (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_slice_build     (dn_compiler *c, const bd_node *n);
bool dn_shuffle_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_shuffle_build   (dn_compiler *c, const bd_node *n);
bool dn_rnn_supports    (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_rnn_build       (dn_compiler *c, const bd_node *n);
/* The dynamic-quantization pattern (dnnl_integer.c): DynamicQuantizeLinear, MatMulInteger and
 * braid::MatMulIntegerScaled (int8 matmul), Cast of their integers to float. */
bool dn_dynquant_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_dynquant_build  (dn_compiler *c, const bd_node *n);
bool dn_mmi_supports    (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_mmi_build       (dn_compiler *c, const bd_node *n);
bool dn_cast_supports   (const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_cast_build      (dn_compiler *c, const bd_node *n);
/* Run a DYNQUANT step on its arguments' memories (dnnl_native.c calls it). */
void dn_dynquant_run(const dn_step *s, dnnl_memory_t *mems);

/* ---- channels-last data and TF filters (dnnl_layout.c) --------------------------------- */

/* N's data_format is channels-last (NHWC, NWC, NDHWC). */
bool dn_channels_last(const bd_node *n);
/* N's data_format is absent or one the backend knows; writes WHY if not. */
bool dn_data_format_ok(const bd_node *n, char *why, size_t len);
/* S's dims in oneDNN's channels-first order [N, C, spatial...] (LAST: S is channels-last). */
void dn_dims_cf(const bd_shape *s, bool last, int64_t *dims);
/* An IR-order md of a channels-last tensor seen as [N, C, spatial...], and back. */
int  dn_md_to_cf(dn_compiler *c, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in);
int  dn_md_to_cl(dn_compiler *c, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in);
/* The same, or a copy when LAST is false. */
int  dn_md_cf(dn_compiler *c, bool last, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in);
int  dn_md_ir(dn_compiler *c, bool last, dnnl_memory_desc_t *out, const dnnl_memory_desc_t *in);
/* V's buffer as it is (strided views made plain) and its md in channels-first order. */
int  dn_input_cf(dn_compiler *c, const bd_value *v, bool last, int *buf, dnnl_memory_desc_t *md);

/* MD's layout as a tag, among those oneDNN picks for activations of rank 3-5 (plain,
 * channels-last, channels blocked by 8 or 16), else dnnl_format_tag_undef. */
dnnl_format_tag_t dn_md_tag(const dnnl_memory_desc_t *md);
/* An f32 md of DIMS (MD's rank) in MD's layout when dn_md_tag knows it, else plain. oneDNN's
 * jit binary kernels want a broadcast operand in the layout of the full one (a plain [1,C,1,1]
 * beside an nChw16c tensor runs on the reference kernel). */
void dn_md_like(dnnl_memory_desc_t *out, const dnnl_memory_desc_t *md, const int64_t *dims);

typedef enum dn_filter_format {
    DN_FILTER_UNKNOWN = 0, DN_FILTER_OIHW, DN_FILTER_HWIO, DN_FILTER_HWCM
} dn_filter_format;
dn_filter_format dn_filter_format_of(const bd_node *n);
/* Conv weight W of N as ONNX dims [O, I/group, k...] (HWIO, HWCM or OIHW). False when the
 * format is unknown or W's rank is below 3. */
bool dn_filter_oihw(const bd_node *n, const bd_shape *w, int64_t *dims);
/* The strided md of W's stored bytes in oneDNN's weights order ([G, O/G, I/G, k...] when
 * GROUP > 1, else [O, I, k...]). */
int  dn_filter_md(dn_compiler *c, const bd_node *n, const bd_shape *w, int64_t group,
                  dnnl_memory_desc_t *md);

/* ---- post-ops braid runs after the primitive (dnnl_postops.c) ------------------------- */

/* N's last post-op runs as braid's own step after N's primitive, in place over its output: a
 * swish on AVX-512 (dnnl_swish.c) or a fake quantization (dnnl_fakequant.c). dn_postops_build
 * leaves it out of the primitive; the compiler appends it with dn_native_tail_append. */
bool dn_native_tail(const bd_node *n);
int  dn_native_tail_append(dn_compiler *c, const bd_node *n);

/* ---- swish on braid's own kernel (dnnl_swish.c) -------------------------------------- */

/* N's last post-op is a swish the native kernel runs after N's primitive. */
bool dn_swish_tail(const bd_node *n);
/* Append a SWISH step from BUF (layout SMD, dense, the size of Y's) into Y's buffer. */
int  dn_swish_append(dn_compiler *c, const bd_value *y, int sbuf, const dnnl_memory_desc_t *smd,
                     float alpha);
/* Y[i] = X[i] * sigmoid(ALPHA X[i]) for N floats (X == Y allowed), on the current OpenMP
 * thread count when N is large. */
void dn_swish_run(const float *x, float *y, size_t n, float alpha);

/* ---- a QDQ pair's float result (dnnl_fakequant.c) -------------------------------------- */

bool dn_fakequant_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  dn_fakequant_build   (dn_compiler *c, const bd_node *n);
/* N's last post-op is a fake quantization (BD_ELT_FAKEQUANT_*), and P's parameters are valid. */
bool dn_fakequant_tail(const bd_node *n);
bool dn_fakequant_postop_ok(const bd_postop *p);
/* Append the step for N's last post-op, in place over N's output. */
int  dn_fakequant_tail_append(dn_compiler *c, const bd_node *n);
/* Run FAKEQUANT step S on its memories (X == Y allowed), on the OpenMP threads when large. */
void dn_fakequant_run(const dn_step *s, dnnl_memory_t *mems);

/* ---- binary ops with an innermost-axis operand (dnnl_bcast.c) -------------------------- */

/* The length C of the innermost axis of AMD (the channels of a channels-last tensor, the
 * last axis of a plain one) when B (right-aligned) varies along it alone, else 0. */
int64_t dn_bcast_fits(const dnnl_memory_desc_t *amd, const bd_shape *b);
/* Run BCAST step ST on its arguments' memories (dnnl_native.c calls it). */
void dn_bcast_run(const dn_step *st, dnnl_memory_t *mems);

/* ---- LSTM and GRU at small batch on braid's own recurrence (dnnl_recurrence.c) ------- */

#define DN_REC_MAX_BATCH 8     /* LSTM, bidirectional, hidden 256, 64 steps, 1 thread: 1.96 vs
                                * 2.77 ms at batch 1, 3.95 vs 4.41 at 4, a tie at 8 (both
                                * compute-bound), the primitive as fast or faster from 16 */

enum { DN_REC_LSTM = 1, DN_REC_GRU };

/* An LSTM, or a GRU with linear_before_reset, as dn_rnn_supports accepted it: T steps, batch
 * N, input I, hidden H, D directions. */
typedef struct dn_rec_geom {
    int     kind;                 /* DN_REC_LSTM, DN_REC_GRU */
    int64_t t, n, i, h, d;
    bool    reverse;              /* unidirectional, last step first */
} dn_rec_geom;

/* Does braid's recurrence run KIND at this batch size here (AVX-512, batch <=
 * DN_REC_MAX_BATCH, and not BRAID_DNNL_LSTM=0 / BRAID_DNNL_GRU=0)? */
bool dn_rec_native(int kind, int64_t batch);
/* N's steps: the input projection (a matmul primitive) and the recurrence. */
int  dn_rec_build(dn_compiler *c, const bd_node *n, const dn_rec_geom *g);
/* Run a RECURRENCE step on its arguments' memories (dnnl_native.c calls it). */
void dn_rec_run(const dn_step *s, dnnl_memory_t *mems);

/* ---- a ChannelShuffle of several parts (dnnl_interleave.c) ----------------------------- */

#define DN_INTERLEAVE_MAX_PARTS 16

/* Can N (a ChannelShuffle of n_inputs > 1 parts on AXIS, GROUPS groups) run as one
 * interleaving step? When not, WHY says what does not fit. */
bool dn_interleave_fits(const bd_node *n, int axis, int64_t groups, char *why, size_t len);
/* N's step: output channel j * GROUPS + i is part i's channel j. */
int  dn_interleave_build(dn_compiler *c, const bd_node *n, int axis, int64_t groups);
/* Is SRC -> DST an RGB image's NCHW -> NHWC (batch 1, 3 channels, dense f32)? */
bool dn_interleave_planes_fits(const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst);
/* That layout change as an INTERLEAVE step of the three planes of SRC_BUF into DST_BUF
 * (counted as a reorder in the kernel's statistics). */
int  dn_interleave_planes_add(dn_compiler *c, int src_buf, const dnnl_memory_desc_t *src,
                              int dst_buf, const dnnl_memory_desc_t *dst);
/* Run an INTERLEAVE step on its arguments' memories (dnnl_native.c calls it). */
void dn_interleave_run(const dn_step *s, dnnl_memory_t *mems);

/* ---- threads per step (dnnl_threads.c) ----------------------------------------------- */

/* Steps whose estimated time on one core is below this many microseconds run on one thread. */
double dn_serial_us(void);
/* Is node N (as shaped) below that? */
bool dn_serial_node(const bd_node *n);
/* Is a memory-bound step moving BYTES below that? */
bool dn_serial_bytes(size_t bytes);
/* An elementwise kernel over [X, X + N) into Y (X == Y allowed) with PARAMS. */
typedef void (*dn_range_fn)(const float *x, float *y, size_t n, const void *params);
/* RANGE over N floats, split into tasks of CHUNK floats on the OpenMP threads when there are
 * at least 4 of them (else on the calling thread). */
void dn_elementwise(const float *x, float *y, size_t n, size_t chunk, dn_range_fn range,
                    const void *params);

/* Y = erf(X) over N floats (X == Y allowed), on the OpenMP threads (dnnl_erf.c). */
void dn_erf(const float *x, float *y, size_t n);

/* ---- small shared checks (dnnl_backend.c) --------------------------------------------- */

/* Writes a printf-style reason into WHY and returns false. */
bool dn_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The CPU runs AVX-512 (avx512f): braid's own kernels (swish, bcast, recurrence,
 * interleave) need it, else the work stays oneDNN's. Probed once. */
bool dn_avx512(void);
/* The CPU has VNNI (oneDNN's effective ISA): its u8 x s8 kernels sum products in 32 bits.
 * Without it they add pairs of products in a saturating int16 (vpmaddubsw), exact only for
 * weights within +-DN_INT8_NO_VNNI_MAX (255 * 64 * 2 fits, 255 * 127 * 2 does not). */
bool dn_cpu_has_vnni(void);
#define DN_INT8_NO_VNNI_MAX 64
/* V is present, f32 and statically shaped. */
bool dn_is_f32_static(const bd_value *v);
/* All of N's non-omitted inputs and outputs are f32 with static shapes (first NIN inputs). */
bool dn_io_f32(const bd_node *n, size_t nin, char *why, size_t len);
/* How many of N's inputs are the op's own: post-op inputs are appended after them. */
size_t dn_num_op_inputs(const bd_node *n);
/* N's own input I (an optional input left empty, or past the op's own: NULL). */
const bd_value *dn_op_input(const bd_node *n, size_t i);
/* Node N has no post-ops. */
bool dn_no_post(const bd_node *n, char *why, size_t len);
/* Spatial pads for conv/pool: kernel K (extent incl. dilation), stride S, input IN, output
 * OUT, from auto_pad and pads attrs. Returns false on an unsupported auto_pad. */
bool dn_spatial_pads(const bd_node *n, int nsp, const int64_t *in, const int64_t *out,
                     const int64_t *ext, const int64_t *stride, int64_t *pl, int64_t *pr);

#endif
