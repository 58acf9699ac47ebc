/* The native engine's internals: the compiled kernel, the tensors its steps read and write,
 * and the contract between the engine (native_backend.c) and the per-op kernels
 * (native_elementwise.c, native_movement.c, native_index.c, native_reduce.c, ...).
 *
 * The native engine runs, on plain row-major tensors of any numeric dtype, the ops oneDNN
 * has no primitive for: the glue of real models (shape arithmetic, gathers, slices, masks,
 * casts) and the element-wise and reduction ops oneDNN 2.6 lacks. A subgraph compiles into
 * a list of steps, one per node, over a table of tensor slots:
 *
 *   slot kinds   INPUT k / OUTPUT k   run()'s in[k] / out[k] (the plan's buffers, zero-copy)
 *                CONST                an initializer's bytes (graph-owned, read in place;
 *                                     copied at compile when unaligned for its dtype)
 *                ARENA                an intermediate in the context's arena (liveness-packed)
 *                ALIAS                a view (Reshape, Squeeze, ...): the bytes of another slot
 *
 * An op in the table (nv_op) has a supports() that decides at annotation from dtypes, static
 * shapes and attributes, and a prepare() that, at compile, reads the node's attributes and
 * static shapes into the step's parameters and picks the step's run function. Every input of
 * a native node has a static shape (nv_supports refuses any other, so a run-time-shaped value
 * never feeds a native step). An output's shape is static too, unless the op's supports()
 * accepts one only the run tells (nv_output_ok): NonZero, Compress and Unique, whose shapes
 * follow the data, and Slice, Pad, Tile, Expand, Range, ConstantOfShape, Split and MaxUnpool
 * when a run-time tensor holds their parameters. Their kernels compute the dims from the
 * run-time tensors with checked arithmetic and hand them to nv_output_shape, which checks a
 * static output against the plan and sizes a run-time one within bounds. Run functions never
 * allocate otherwise (scratch memory is reserved at compile: nv_step.scratch). Anything a
 * request can make wrong at run time — an index out of range, a negative count, a size
 * beyond the bounds — is an error, never an out-of-bounds access. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_INTERNAL_H
#define BD_BACKENDS_NATIVE_NATIVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend.h"

/* ---- tensors and steps ------------------------------------------------------------------ */

/* A run-time view of one tensor: plain row-major, DTYPE a bd_dtype (BOOL is one byte). */
typedef struct nv_tensor {
    void   *data;                  /* NULL: an omitted optional input */
    int     dtype;
    int     rank;
    int64_t dims[BD_MAX_RANK];
    size_t  numel;
} nv_tensor;

typedef struct nv_step  nv_step;
typedef struct nv_run_env nv_run_env;

/* Run step S on IN[s->n_in] and OUT[s->n_out]. Outputs with static shapes arrive with their
 * buffer; an output whose shape only the run tells arrives without usable memory (data NULL,
 * or the last run's) and gets its dims and memory from nv_output_shape (or nv_output_alloc).
 * Returns 0 or a negative BD_E* code with ERR set. */
typedef int (*nv_run_fn)(const nv_step *s, const nv_tensor *in, nv_tensor *out,
                         nv_run_env *env, bd_error *err);

#define NV_MAX_PARAMS 32

struct nv_step {
    const bd_node *node;           /* for messages (graph-owned, lives as long as the plan) */
    nv_run_fn      run;
    int           *in, *out;       /* slot per input / output; -1 = an omitted input */
    int            n_in, n_out;
    bool           dynamic_out;    /* some output's shape is only known at run time */
    size_t         scratch;        /* bytes of scratch memory the run uses (nv_scratch) */
    /* Parameters prepare() fills (what the node's attributes and static shapes say). */
    int            op;             /* which variant of the kernel (an enum of its file's) */
    int64_t        ip[NV_MAX_PARAMS];
    double         fp[4];
    void          *heap;           /* larger prepared data; freed with free() at release */
};

/* Memory for the run-time-shaped output K (its dims and rank already set): BYTES that stay
 * valid until the next run of this context. Returns NULL (and sets ERR) when out of memory. */
void *nv_output_alloc(nv_run_env *env, const nv_step *s, int k, size_t bytes, bd_error *err);

/* The bounds on a run-time-shaped output: at most NV_RUN_MAX_ELEMS elements, and no more
 * bytes than half the machine's memory. Its dims come from tensors a request supplies. */
#define NV_RUN_MAX_ELEMS ((int64_t)1 << 31)

/* Output K of S has the RANK dims DIMS, computed by the kernel from run-time tensors. When
 * the plan sized the output (a static shape), DIMS must be the plan's (BD_EINVAL otherwise)
 * and OUT[K] keeps its buffer. Otherwise DIMS must agree with what the plan knows (its rank,
 * its static dims), be non-negative and stay within the bounds above (BD_EINVAL); OUT[K]
 * then gets RANK, DIMS, numel and memory (nv_output_alloc; BD_ENOMEM). Returns 0 or the
 * negative code with ERR set. */
int   nv_output_shape(nv_run_env *env, const nv_step *s, nv_tensor *out, int k, int rank,
                      const int64_t *dims, bd_error *err);

/* The step's scratch memory: S->scratch bytes (aligned for any element), reserved with the
 * context, valid until the run function returns. */
void *nv_scratch(nv_run_env *env);

/* ---- the op table (native_backend.c) ------------------------------------------------------ */

typedef struct nv_op {
    const char *op;
    /* Can the engine run N (shapes from inference, static unless the op says otherwise)? */
    bool (*supports)(const bd_graph *g, const bd_node *n, char *why, size_t len);
    /* Fill S's parameters from N and pick S->run. Returns 0 or BD_EUNSUPPORTED/BD_ENOMEM. */
    int  (*prepare)(const bd_node *n, nv_step *s, bd_error *err);
} nv_op;

/* Each kernel file's part of the table; native_backend.c concatenates them. */
extern const nv_op nv_elementwise_ops[];   /* native_elementwise.c */
extern const size_t nv_elementwise_n;
extern const nv_op nv_unary_ops[];         /* native_unary.c */
extern const size_t nv_unary_n;
extern const nv_op nv_movement_ops[];      /* native_movement.c */
extern const size_t nv_movement_n;
extern const nv_op nv_index_ops[];         /* native_index.c */
extern const size_t nv_index_n;
extern const nv_op nv_reduce_ops[];        /* native_reduce.c */
extern const size_t nv_reduce_n;
extern const nv_op nv_generate_ops[];      /* native_generate.c */
extern const size_t nv_generate_n;
extern const nv_op nv_einsum_ops[];        /* native_einsum.c */
extern const size_t nv_einsum_n;
extern const nv_op nv_compress_ops[];      /* native_compress.c */
extern const size_t nv_compress_n;
extern const nv_op nv_unique_ops[];        /* native_unique.c */
extern const size_t nv_unique_n;
extern const nv_op nv_reverse_ops[];       /* native_reverse.c */
extern const size_t nv_reverse_n;
extern const nv_op nv_unpool_ops[];        /* native_unpool.c */
extern const size_t nv_unpool_n;
extern const nv_op nv_loss_ops[];          /* native_loss.c */
extern const size_t nv_loss_n;
extern const nv_op nv_norm_ops[];          /* native_norm.c */
extern const size_t nv_norm_n;
extern const nv_op nv_resize_ops[];        /* native_resize.c */
extern const size_t nv_resize_n;
extern const nv_op nv_pool_ops[];          /* native_pool.c */
extern const size_t nv_pool_n;
extern const nv_op nv_sample_ops[];        /* native_sample.c */
extern const size_t nv_sample_n;
extern const nv_op nv_dynshape_ops[];      /* native_dynshape.c */
extern const size_t nv_dynshape_n;
extern const nv_op nv_signal_ops[];        /* native_signal.c */
extern const size_t nv_signal_n;
extern const nv_op nv_linalg_ops[];        /* native_linalg.c */
extern const size_t nv_linalg_n;
extern const nv_op nv_quant_ops[];         /* native_quant.c */
extern const size_t nv_quant_n;
extern const nv_op nv_conv_ops[];          /* native_conv.c */
extern const size_t nv_conv_n;
extern const nv_op nv_tfidf_ops[];         /* native_tfidf.c */
extern const size_t nv_tfidf_n;
extern const nv_op nv_nms_ops[];           /* native_nms.c */
extern const size_t nv_nms_n;
extern const nv_op nv_rnn_ops[];           /* native_rnn.c */
extern const size_t nv_rnn_n;

/* ---- helpers every kernel file uses (native_tensor.c) -------------------------------------- */

/* Writes a printf-style reason into WHY and returns false. */
bool    nv_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Elements of a static shape (the caller checked it is static). */
size_t  nv_shape_numel(const bd_shape *s);
/* V is present with a static shape and a dtype in MASK (a bit per bd_dtype: NV_DT(x)). */
#define NV_DT(t) (1u << (t))
#define NV_DT_FLOATS  (NV_DT(BD_DT_FLOAT) | NV_DT(BD_DT_DOUBLE))
#define NV_DT_INTS    (NV_DT(BD_DT_INT8) | NV_DT(BD_DT_UINT8) | NV_DT(BD_DT_INT16) | \
                       NV_DT(BD_DT_UINT16) | NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64) | \
                       NV_DT(BD_DT_UINT32) | NV_DT(BD_DT_UINT64))
#define NV_DT_NUMERIC (NV_DT_FLOATS | NV_DT_INTS)
/* Every dtype whose elements are moved as opaque bytes (data movement ops). */
#define NV_DT_ANY     (NV_DT_NUMERIC | NV_DT(BD_DT_BOOL) | NV_DT(BD_DT_FLOAT16) | \
                       NV_DT(BD_DT_BFLOAT16))
bool    nv_value_ok(const bd_value *v, unsigned mask);
/* V is of a dtype in MASK and its shape may be known only at run time: any dim, or the rank,
 * unknown (an output an op computes from run-time tensors; see nv_output_shape). */
bool    nv_output_ok(const bd_value *v, unsigned mask);
/* Check N's inputs [0, NIN) (present ones) and every output against MASK; WHY names the first
 * that is not static or not of a dtype in MASK. */
bool    nv_io_ok(const bd_node *n, size_t nin, unsigned mask, char *why, size_t len);
/* N's input I is an initializer (constant bytes known at compile). */
bool    nv_input_const(const bd_node *n, size_t i);
/* The elements of the integer tensor T (INT32 or INT64) as int64 into OUT[max]; returns the
 * count, or -1 when T is not an integer tensor or holds more than MAX. DATA may be unaligned
 * (an initializer's bytes sit where they were in the model file). */
int64_t nv_read_ints(const void *data, int dtype, size_t numel, int64_t *out, size_t max);
/* ... of a constant value V (an initializer), same rules. */
int64_t nv_const_ints(const bd_value *v, int64_t *out, size_t max);
/* ... of the run-time tensor T: the count, or a negative BD_EINVAL naming WHAT when T is not
 * an integer tensor or holds more than MAX values. */
int64_t nv_run_ints(const nv_tensor *t, int64_t *out, size_t max, const char *what,
                    bd_error *err);
/* AXIS normalised into [0, RANK), or -1 when out of range. */
int     nv_axis(int64_t axis, int rank);
/* Row-major strides (in elements) of DIMS. */
void    nv_strides(int rank, const int64_t *dims, int64_t *strides);
/* The element as double / int64, and stored back, for any numeric dtype or BOOL. A float
 * read or stored as an integer saturates to the integer's range, NaN as 0 (a plain C cast
 * of such a value is undefined); UINT64 above INT64_MAX reads as its two's complement. */
double  nv_get_f(const void *data, int dtype, size_t i);
int64_t nv_get_i(const void *data, int dtype, size_t i);
void    nv_set_f(void *data, int dtype, size_t i, double v);
void    nv_set_i(void *data, int dtype, size_t i, int64_t v);
/* V as int64: truncated toward zero, saturated, NaN as 0. */
int64_t nv_f2i(double v);
bool    nv_dtype_is_float(int dtype);
/* The element 1 of DTYPE (any of NV_DT_ANY) into BYTES (8 of them; the rest zero). */
void    nv_one_bits(int dtype, void *bytes);
/* DST holds one UNIT-byte pattern: repeat it until DST holds COUNT of them (memcpy doubling). */
void    nv_replicate(void *dst, size_t unit, size_t count);

/* ---- threads (native_tensor.c) ------------------------------------------------------------- */

/* Loops run on the calling thread below this many elements (a parallel region's fork/join
 * costs more than the loop): measured on this machine, see docs/performance.md. */
#define NV_PARALLEL_MIN 32768

/* Items [LO, LO + CNT) of a loop, with the caller's JOB. */
typedef void (*nv_range_fn)(void *job, size_t lo, size_t cnt);
/* Run FN over items [0, N): in one call on this thread when WORK (the elements the loop
 * touches) is below NV_PARALLEL_MIN, N < 2 or a parallel region is already running, else in
 * one contiguous chunk per thread of the plan. */
void    nv_parallel_for(size_t n, size_t work, nv_range_fn fn, void *job);

#endif
