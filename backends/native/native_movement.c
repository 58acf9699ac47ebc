/* Data movement on plain tensors of any dtype (elements moved as 1, 2, 4 or 8-byte units):
 *
 *   - the views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, and an inference Dropout),
 *     which the engine turns into aliases of their input (no step) unless they write a
 *     boundary tensor (a copy) or Dropout a mask;
 *   - the strided copies Transpose, DepthToSpace, SpaceToDepth and Slice: each is one view of
 *     the input (dims, a stride per dim, an offset) written contiguously, collapsed at compile
 *     so a run copies contiguous runs with memcpy, transposes tiles, or gathers rows;
 *   - the op table of the family, whose other ops live in native_concat.c (Concat, Split),
 *     native_tile.c (Expand, Tile) and native_pad.c (Pad, Trilu). */
#include "backends/native/native_movement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- family helpers (native_movement.h) ------------------------------------------------- */

bool nv_move_io_ok(const bd_node *n, bool runtime_out, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects an input and one output", n->op_type);
    const bd_value *y = n->outputs[0];
    if (!nv_value_ok(n->inputs[0], NV_DT_ANY) ||
        !(runtime_out ? nv_output_ok(y, NV_DT_ANY) : nv_value_ok(y, NV_DT_ANY)))
        return nv_why(why, len, "%s: a dtype or a shape only known at run time", n->op_type);
    if (n->inputs[0]->dtype != y->dtype)
        return nv_why(why, len, "%s: the output dtype differs from the input's", n->op_type);
    return true;
}

/* ---- views ------------------------------------------------------------------------------- */

static bool view_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects an input and one output", n->op_type);
    if (!nv_io_ok(n, 1, NV_DT_ANY, why, len))
        return false;
    if (n->inputs[0]->dtype != n->outputs[0]->dtype ||
        nv_shape_numel(&n->inputs[0]->shape) != nv_shape_numel(&n->outputs[0]->shape))
        return nv_why(why, len, "%s changes the dtype or the element count", n->op_type);
    return true;
}

/* Views need no parameters: the engine aliases or copies them (native_backend.c). */
static int view_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)s;
    (void)err;
    return 0;
}

/* ---- Dropout ----------------------------------------------------------------------------- */

/* Inference: the output is the input and the optional mask all ones. A training-mode Dropout
 * (opset < 7: is_test 0; opset >= 12: training_mode true) drops at random: refused when known
 * at compile, an error at run unless its ratio is 0 (then it too keeps every element). The
 * engine aliases the output like a view when there is no mask and nothing to check. */
/* RATIO is a constant 0 (then even a training-mode Dropout keeps every element: exporters
 * write training_mode = true, ratio = 0 for a dropout left in a module's forward). */
static bool zero_ratio(const bd_value *ratio)
{
    if (!ratio || !ratio->data)
        return false;
    if (ratio->dtype == BD_DT_FLOAT16 || ratio->dtype == BD_DT_BFLOAT16) {
        uint16_t h;
        memcpy(&h, ratio->data, sizeof h);
        return (h & 0x7fff) == 0;
    }
    if (ratio->dtype == BD_DT_DOUBLE) {
        double d;
        memcpy(&d, ratio->data, sizeof d);
        return d == 0;
    }
    float f;
    memcpy(&f, ratio->data, sizeof f);
    return f == 0;
}

static bool dropout_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_inputs > 3 || n->n_outputs < 1 ||
        n->n_outputs > 2)
        return nv_why(why, len, "Dropout: expects data (ratio, training_mode) and 1 or 2 outputs");
    const bd_value *x = n->inputs[0], *ratio = bd_node_input(n, 1), *train = bd_node_input(n, 2);
    if (!nv_value_ok(x, NV_DT_ANY) || n->outputs[0]->dtype != x->dtype ||
        !bd_shape_equal(&x->shape, &n->outputs[0]->shape))
        return nv_why(why, len, "Dropout: the output must have the input's dtype and shape");
    const bd_value *mask = n->n_outputs > 1 ? n->outputs[1] : NULL;
    if (mask && (!nv_value_ok(mask, NV_DT_ANY) || !bd_shape_equal(&x->shape, &mask->shape)))
        return nv_why(why, len, "Dropout: the mask must have the input's shape");
    if (bd_graph_opset(g) < 7 && !bd_node_attr_int(n, "is_test", 0))
        return nv_why(why, len, "Dropout: training mode (is_test = 0 before opset 7)");
    if ((ratio && (!nv_value_ok(ratio, NV_DT_FLOATS | NV_DT(BD_DT_FLOAT16) |
                                NV_DT(BD_DT_BFLOAT16)) || nv_shape_numel(&ratio->shape) != 1)) ||
        (train && (!nv_value_ok(train, NV_DT(BD_DT_BOOL)) || nv_shape_numel(&train->shape) != 1)))
        return nv_why(why, len, "Dropout: ratio must be one float, training_mode one BOOL");
    if (train && train->data && *(const uint8_t *)train->data && !zero_ratio(ratio))
        return nv_why(why, len, "Dropout: training_mode is true with a ratio that is not a "
                      "constant 0 (inference only)");
    return true;
}

/* The ratio (input 1, a float of any width; 0.5 when omitted) is not 0. */
static bool ratio_nonzero(const nv_tensor *r)
{
    if (!r->data)
        return true;
    if (r->dtype == BD_DT_FLOAT16 || r->dtype == BD_DT_BFLOAT16)
        return (*(const uint16_t *)r->data & 0x7fff) != 0;
    return nv_get_f(r->data, r->dtype, 0) != 0;
}

static int dropout_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                       bd_error *err)
{
    (void)env;
    nv_tensor none = { 0 };
    const nv_tensor *ratio = s->n_in > 1 ? &in[1] : &none, *train = s->n_in > 2 ? &in[2] : &none;
    if (train->data && *(const uint8_t *)train->data && ratio_nonzero(ratio))
        return bd_error_set(err, BD_EINVAL, "Dropout: training_mode is true with a non-zero "
                            "ratio (the engine runs inference only)");
    size_t es = bd_dtype_size(in[0].dtype);
    if (out[0].data != in[0].data && in[0].numel)
        memcpy(out[0].data, in[0].data, in[0].numel * es);
    if (s->n_out > 1 && out[1].numel) {
        size_t ms = bd_dtype_size(out[1].dtype);
        memcpy(out[1].data, &s->ip[0], ms);
        nv_replicate(out[1].data, ms, out[1].numel);
    }
    return 0;
}

static int dropout_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    if (n->n_outputs > 1)
        nv_one_bits(n->outputs[1]->dtype, &s->ip[0]);
    s->run = dropout_run;
    return 0;
}

/* ---- strided copies ---------------------------------------------------------------------- */

/* Output element (i0, ..., i[rank-1]), row-major in DIMS, is input element
 * OFF + sum(i[d] * ST[d]). Strides are in elements and may be negative (Slice's steps). */
typedef struct mv_view {
    int     rank;
    int64_t dims[BD_MAX_RANK];
    int64_t st[BD_MAX_RANK];
    int64_t off;
    size_t  numel;
} mv_view;

/* Drop size-1 dims and merge dim d into d-1 when the input is contiguous across the pair, so
 * a run sees the fewest and longest rows. */
static void view_collapse(mv_view *v)
{
    int r = 0;
    v->numel = 1;
    for (int d = 0; d < v->rank; d++)
        v->numel *= (size_t)v->dims[d];
    for (int d = 0; d < v->rank; d++) {
        if (v->dims[d] == 1)
            continue;
        if (r > 0 && v->st[r - 1] == v->st[d] * v->dims[d]) {
            v->dims[r - 1] *= v->dims[d];
            v->st[r - 1] = v->st[d];
        } else {
            v->dims[r] = v->dims[d];
            v->st[r++] = v->st[d];
        }
    }
    if (r == 0) {                       /* one element */
        v->dims[0] = 1;
        v->st[0] = 1;
        r = 1;
    }
    v->rank = r;
}

/* The view writing X (rank R, dims XD) permuted: output dim k is input dim PERM[k]. */
static void view_permute(mv_view *v, int r, const int64_t *xd, const int64_t *perm)
{
    int64_t xst[BD_MAX_RANK];
    nv_strides(r, xd, xst);
    v->rank = r;
    v->off = 0;
    for (int k = 0; k < r; k++) {
        v->dims[k] = xd[perm[k]];
        v->st[k] = xst[perm[k]];
    }
    view_collapse(v);
}

/* Typed kernels per element size: a strided row gather, and rows [A0, A1) of an A x B
 * transpose (y[a][b] = x[a + b * S]) walked in TILE-wide column blocks, so the lines of X a
 * block reads stay in cache while the block is written. */
enum { TILE = 32 };

typedef void (*gather_fn)(const void *x, int64_t s, void *y, size_t n);
typedef void (*tile_fn)(const void *x, int64_t s, void *y, size_t b_len, size_t a0, size_t a1);

#define MV_KERNELS(sfx, T)                                                                    \
    static void gather_##sfx(const void *xv, int64_t s, void *yv, size_t n)                  \
    {                                                                                         \
        const T *x = xv;                                                                      \
        T *y = yv;                                                                            \
        for (size_t i = 0; i < n; i++)                                                        \
            y[i] = x[(int64_t)i * s];                                                         \
    }                                                                                         \
    static void tile_##sfx(const void *xv, int64_t s, void *yv, size_t b_len, size_t a0,     \
                           size_t a1)                                                         \
    {                                                                                         \
        const T *x = xv;                                                                      \
        T *y = yv;                                                                            \
        for (size_t b0 = 0; b0 < b_len; b0 += TILE) {                                         \
            size_t b1 = b0 + TILE < b_len ? b0 + TILE : b_len;                                \
            for (size_t a = a0; a < a1; a++)                                                  \
                for (size_t b = b0; b < b1; b++)                                              \
                    y[a * b_len + b] = x[(int64_t)a + (int64_t)b * s];                        \
        }                                                                                     \
    }
MV_KERNELS(1, uint8_t)
MV_KERNELS(2, uint16_t)
MV_KERNELS(4, uint32_t)
MV_KERNELS(8, uint64_t)

typedef struct mv_kernels {
    gather_fn gather;
    tile_fn   tile;
} mv_kernels;

static const mv_kernels k_kernels[9] = {
    [1] = { gather_1, tile_1 }, [2] = { gather_2, tile_2 },
    [4] = { gather_4, tile_4 }, [8] = { gather_8, tile_8 },
};

typedef struct copy_job {
    const mv_view    *v;
    const char       *x;
    char             *y;
    size_t            es;
    const mv_kernels *k;
} copy_job;

/* Input offset of the index Q of the view's leading K dims (row-major). */
static int64_t lead_offset(const mv_view *v, int k, size_t q)
{
    int64_t off = v->off;
    for (int d = k - 1; d >= 0; d--) {
        off += (int64_t)(q % (size_t)v->dims[d]) * v->st[d];
        q /= (size_t)v->dims[d];
    }
    return off;
}

/* Rows [LO, LO + CNT) of the innermost dim: memcpy when contiguous, else a gather. An
 * odometer over the outer dims carries the input offset from row to row. */
static void copy_rows(void *job, size_t lo, size_t cnt)
{
    const copy_job *j = job;
    const mv_view *v = j->v;
    int r = v->rank;
    size_t len = (size_t)v->dims[r - 1], bytes = len * j->es;
    int64_t s = v->st[r - 1], idx[BD_MAX_RANK], off = v->off;
    size_t q = lo;
    for (int d = r - 2; d >= 0; d--) {     /* the odometer at row LO */
        idx[d] = (int64_t)(q % (size_t)v->dims[d]);
        q /= (size_t)v->dims[d];
        off += idx[d] * v->st[d];
    }
    char *y = j->y + lo * bytes;
    for (size_t i = 0; i < cnt; i++, y += bytes) {
        const char *x = j->x + off * (int64_t)j->es;
        if (s == 1)
            memcpy(y, x, bytes);
        else
            j->k->gather(x, s, y, len);
        for (int d = r - 2; d >= 0; d--) {
            off += v->st[d];
            if (++idx[d] < v->dims[d])
                break;
            off -= v->st[d] * v->dims[d];
            idx[d] = 0;
        }
    }
}

/* Work items [LO, LO + CNT) of a batched transpose: item = (matrix, strip of TILE rows). */
static void copy_tiles(void *job, size_t lo, size_t cnt)
{
    const copy_job *j = job;
    const mv_view *v = j->v;
    int r = v->rank;
    size_t a_len = (size_t)v->dims[r - 2], b_len = (size_t)v->dims[r - 1];
    size_t strips = (a_len + TILE - 1) / TILE, mat = a_len * b_len * j->es;
    for (size_t it = lo; it < lo + cnt; it++) {
        size_t m = it / strips, a0 = it % strips * TILE;
        const char *x = j->x + lead_offset(v, r - 2, m) * (int64_t)j->es;
        j->k->tile(x, v->st[r - 1], j->y + m * mat, b_len, a0,
                   a0 + TILE < a_len ? a0 + TILE : a_len);
    }
}

/* Write view V of X into Y (elements of ES bytes). */
static void view_copy(const mv_view *v, const void *x, void *y, size_t es)
{
    if (v->numel == 0)
        return;
    int r = v->rank;
    copy_job j = { v, x, y, es, &k_kernels[es] };
    if (r == 1 && v->st[0] == 1) {
        memcpy(y, j.x + v->off * (int64_t)es, v->numel * es);
        return;
    }
    /* the input's contiguous dim is the output's second-to-last: a batch of matrices to
     * transpose (the last-two-dims swap, NCHW <-> NHWC after collapsing) */
    if (r >= 2 && v->st[r - 2] == 1 && v->dims[r - 2] >= 4 && v->dims[r - 1] >= 4) {
        size_t strips = ((size_t)v->dims[r - 2] + TILE - 1) / TILE;
        nv_parallel_for(v->numel / ((size_t)v->dims[r - 2] * (size_t)v->dims[r - 1]) * strips,
                        v->numel, copy_tiles, &j);
        return;
    }
    /* long contiguous rows are memcpy-bound: one thread streams them as fast as several */
    size_t rows = v->numel / (size_t)v->dims[r - 1];
    bool memcpy_bound = v->st[r - 1] == 1 && (size_t)v->dims[r - 1] * es >= 256;
    nv_parallel_for(rows, memcpy_bound ? 0 : v->numel, copy_rows, &j);
}

static int view_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    view_copy(s->heap, in[0].data, out[0].data, bd_dtype_size(in[0].dtype));
    return 0;
}

static int view_step(nv_step *s, const mv_view *v, bd_error *err)
{
    mv_view *p = malloc(sizeof *p);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    *p = *v;
    s->heap = p;
    s->run = view_run;
    return 0;
}

/* ---- Transpose --------------------------------------------------------------------------- */

/* The perm attribute (default: the dims reversed) into PERM; false unless a permutation. */
static bool transpose_perm(const bd_node *n, int r, int64_t *perm)
{
    const int64_t *p;
    size_t count = bd_node_attr_ints(n, "perm", &p);
    bool given = bd_node_attr(n, "perm") != NULL, seen[BD_MAX_RANK] = { false };
    if (given && (count != (size_t)r || (r && !p)))
        return false;
    for (int k = 0; k < r; k++) {
        perm[k] = given ? p[k] : r - 1 - k;
        if (perm[k] < 0 || perm[k] >= r || seen[perm[k]])
            return false;
        seen[perm[k]] = true;
    }
    return true;
}

static bool transpose_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!nv_move_io_ok(n, false, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    int64_t perm[BD_MAX_RANK];
    if (!transpose_perm(n, x->rank, perm))
        return nv_why(why, len, "Transpose: perm is not a permutation of %d axes", x->rank);
    bool ok = y->rank == x->rank;
    for (int k = 0; ok && k < x->rank; k++)
        ok = y->dims[k] == x->dims[perm[k]];
    return ok ? true : nv_why(why, len, "Transpose: the output shape is not the permuted input's");
}

static int transpose_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    const bd_shape *x = &n->inputs[0]->shape;
    int64_t perm[BD_MAX_RANK];
    mv_view v;
    transpose_perm(n, x->rank, perm);
    view_permute(&v, x->rank, x->dims, perm);
    return view_step(s, &v, err);
}

/* ---- DepthToSpace, SpaceToDepth ---------------------------------------------------------- */

/* Both are a 6-D transpose of the NCHW input (B the blocksize):
 *   DepthToSpace DCR  [N, B, B, C/B², H, W]  perm (0, 3, 4, 1, 5, 2) -> [N, C/B², H*B, W*B]
 *   DepthToSpace CRD  [N, C/B², B, B, H, W]  perm (0, 1, 4, 2, 5, 3)
 *   SpaceToDepth      [N, C, H/B, B, W/B, B] perm (0, 3, 5, 1, 2, 4) -> [N, C*B², H/B, W/B]
 * Fills the 6-D input dims D6, the PERM and the output dims YD; false when the attributes or
 * the input's dims do not fit. */
static bool block_view(const bd_node *n, int64_t *d6, int64_t *perm, int64_t *yd)
{
    const bd_shape *x = &n->inputs[0]->shape;
    int64_t b = bd_node_attr_int(n, "blocksize", 0), N, C, H, W;
    if (x->rank != 4 || b < 1)
        return false;
    N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    if (!strcmp(n->op_type, "SpaceToDepth")) {
        if (b > H || b > W || H % b || W % b)
            return false;
        memcpy(d6, (int64_t[]){ N, C, H / b, b, W / b, b }, 6 * sizeof *d6);
        memcpy(perm, (int64_t[]){ 0, 3, 5, 1, 2, 4 }, 6 * sizeof *perm);
        memcpy(yd, (int64_t[]){ N, C * b * b, H / b, W / b }, 4 * sizeof *yd);
        return true;
    }
    const char *mode = bd_node_attr_string(n, "mode", "DCR");
    bool crd = !strcmp(mode, "CRD");
    if ((!crd && strcmp(mode, "DCR")) || b > C || C % b || C / b % b)
        return false;                   /* C % (b * b), without computing b * b */
    int64_t c = C / b / b;
    memcpy(d6, crd ? (int64_t[]){ N, c, b, b, H, W } : (int64_t[]){ N, b, b, c, H, W },
           6 * sizeof *d6);
    memcpy(perm, crd ? (int64_t[]){ 0, 1, 4, 2, 5, 3 } : (int64_t[]){ 0, 3, 4, 1, 5, 2 },
           6 * sizeof *perm);
    memcpy(yd, (int64_t[]){ N, c, H * b, W * b }, 4 * sizeof *yd);
    return true;
}

static bool block_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    int64_t d6[6], perm[6], yd[4];
    if (!nv_move_io_ok(n, false, why, len))
        return false;
    if (!block_view(n, d6, perm, yd))
        return nv_why(why, len, "%s: needs a 4-D input, a valid blocksize and mode that divide "
                      "its dims", n->op_type);
    const bd_shape *y = &n->outputs[0]->shape;
    if (y->rank != 4 || memcmp(y->dims, yd, sizeof yd))
        return nv_why(why, len, "%s: the output shape does not match the input's", n->op_type);
    return true;
}

static int block_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    int64_t d6[6], perm[6], yd[4];
    mv_view v;
    block_view(n, d6, perm, yd);
    view_permute(&v, 6, d6, perm);
    return view_step(s, &v, err);
}

/* ---- Slice ------------------------------------------------------------------------------- */

/* Slice's parameters as given: starts, ends, and axes and steps (NULL: 0..count-1, all 1). */
typedef struct slice_args {
    int64_t buf[4][BD_MAX_RANK];
    const int64_t *p[4];        /* starts, ends, axes, steps */
    int64_t count[4];
} slice_args;

static const char *const k_slice_names[4] = { "starts", "ends", "axes", "steps" };

/* Start and length on an axis of size DIM for [B, E) by ST (ONNX's clamping). */
static void slice_axis(int64_t dim, int64_t b, int64_t e, int64_t st, int64_t *start,
                       int64_t *size)
{
    if (dim == 0) {                     /* nothing to select (the clamps below assume dim > 0) */
        *start = *size = 0;
        return;
    }
    b = b < 0 ? b + dim : b;            /* b >= INT64_MIN, dim >= 0: no overflow */
    e = e < 0 ? e + dim : e;
    if (st > 0) {
        b = b < 0 ? 0 : b > dim ? dim : b;
        e = e < 0 ? 0 : e > dim ? dim : e;
        *size = e > b ? (e - b - 1) / st + 1 : 0;
    } else {
        b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
        e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
        *size = b > e ? (b - e - 1) / -(st == INT64_MIN ? st + 1 : st) + 1 : 0;
    }
    *start = b;
}

/* The selection Slice A makes in X (rank R, dims XD): per dim its START, STEP and SIZE (the
 * output's dims); BD_EINVAL when A is malformed. */
static int slice_sizes(const slice_args *a, int r, const int64_t *xd, int64_t *start,
                       int64_t *step, int64_t *size, bd_error *err)
{
    bool seen[BD_MAX_RANK] = { false };
    int64_t count = a->count[0];
    for (int i = 1; i < 4; i++)
        if (a->p[i] ? a->count[i] != count : i == 1)
            return bd_error_set(err, BD_EINVAL, "Slice: %lld starts but %lld %s", (long long)count,
                                (long long)a->count[i], k_slice_names[i]);
    if (count > r)
        return bd_error_set(err, BD_EINVAL, "Slice: %lld axes for rank %d", (long long)count, r);
    for (int d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
        size[d] = xd[d];
    }
    for (int64_t k = 0; k < count; k++) {
        int64_t axis = a->p[2] ? a->p[2][k] : k, st = a->p[3] ? a->p[3][k] : 1;
        int ax = nv_axis(axis, r);
        if (ax < 0 || seen[ax] || st == 0)
            return bd_error_set(err, BD_EINVAL, "Slice: axis %lld (step %lld) is out of range, "
                                "repeated or has step 0", (long long)axis, (long long)st);
        seen[ax] = true;
        slice_axis(xd[ax], a->p[0][k], a->p[1][k], st, &start[ax], &size[ax]);
        step[ax] = st;
    }
    return 0;
}

/* The view of X (rank R, dims XD) that selects SIZE elements per dim from START by STEP. */
static void slice_view(int r, const int64_t *xd, const int64_t *start, const int64_t *step,
                       const int64_t *size, mv_view *v)
{
    int64_t xst[BD_MAX_RANK];
    nv_strides(r, xd, xst);
    v->rank = r;
    v->off = 0;
    for (int d = 0; d < r; d++) {
        v->dims[d] = size[d];
        v->st[d] = size[d] > 1 ? xst[d] * step[d] : xst[d];   /* |step| < dim: no overflow */
        v->off += size[d] > 0 ? start[d] * xst[d] : 0;
    }
    view_collapse(v);
}

/* The view Slice A selects in X (rank R, dims XD), which must have the plan's dims YD. */
static int slice_plan(const slice_args *a, int r, const int64_t *xd, const int64_t *yd,
                      mv_view *v, bd_error *err)
{
    int64_t start[BD_MAX_RANK], step[BD_MAX_RANK], size[BD_MAX_RANK];
    int rc = slice_sizes(a, r, xd, start, step, size, err);
    if (rc)
        return rc;
    for (int d = 0; d < r; d++)
        if (size[d] != yd[d])
            return bd_error_set(err, BD_EINVAL, "Slice selects %lld elements on axis %d, the plan "
                                "has %lld", (long long)size[d], d, (long long)yd[d]);
    slice_view(r, xd, start, step, size, v);
    return 0;
}

/* Slice's parameters when known at compile (attributes before opset 10, else constant
 * inputs) into A; 1 when an input is only known at run time, < 0 when malformed. */
static int slice_const_args(const bd_node *n, slice_args *a, bd_error *err)
{
    memset(a, 0, sizeof *a);
    if (bd_node_attr(n, "starts")) {
        for (int i = 0; i < 3; i++) {
            const bd_attr *at = bd_node_attr(n, k_slice_names[i]);
            if (at && at->type != BD_ATTR_INTS)
                return bd_error_set(err, BD_EINVAL, "Slice: attribute %s must be INTS",
                                    k_slice_names[i]);
            a->count[i] = (int64_t)bd_node_attr_ints(n, k_slice_names[i], &a->p[i]);
            if (at && !a->p[i])
                a->p[i] = a->buf[i];    /* an empty list */
        }
        return 0;
    }
    for (int i = 0; i < 4; i++) {
        if (!bd_node_input(n, (size_t)i + 1))
            continue;
        if (!nv_input_const(n, (size_t)i + 1))
            return 1;
        a->count[i] = nv_const_ints(n->inputs[i + 1], a->buf[i], BD_MAX_RANK);
        if (a->count[i] < 0)
            return bd_error_set(err, BD_EINVAL, "Slice: %s has more than %d values or is not "
                                "an integer tensor", k_slice_names[i], BD_MAX_RANK);
        a->p[i] = a->buf[i];
    }
    return 0;
}

/* The output may be run-time-shaped when starts, ends, axes or steps is a run-time input. */
static bool slice_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    bool legacy = bd_graph_opset(g) < 10;
    slice_args a;
    bd_error err = { 0 };
    int rc = legacy || n->n_inputs >= 3 ? slice_const_args(n, &a, &err) : -1;
    if (!nv_move_io_ok(n, rc == 1, why, len))
        return false;
    if (legacy ? !bd_node_attr(n, "starts") || !bd_node_attr(n, "ends") || n->n_inputs != 1
               : bd_node_attr(n, "starts") || n->n_inputs < 3 || n->n_inputs > 5 ||
                     !n->inputs[1] || !n->inputs[2])
        return nv_why(why, len, "Slice: starts and ends must be %s at opset %lld",
                      legacy ? "attributes" : "inputs", (long long)bd_graph_opset(g));
    for (size_t i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] && !nv_value_ok(n->inputs[i], NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64)))
            return nv_why(why, len, "Slice: input %zu must be a static INT32/INT64 tensor", i);
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    if (y->rank >= 0 && y->rank != x->rank)
        return nv_why(why, len, "Slice: the output rank differs from the input's");
    mv_view v;
    if (rc == 0)
        rc = slice_plan(&a, x->rank, x->dims, y->dims, &v, &err);
    return rc < 0 ? nv_why(why, len, "%s", err.msg) : true;    /* 1: checked at run time */
}

/* Slice whose parameters are run-time tensors: read, the output's dims computed (checked
 * against the plan when it has them), copied. */
static int slice_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    slice_args a = { 0 };
    mv_view v;
    int64_t start[BD_MAX_RANK], step[BD_MAX_RANK], size[BD_MAX_RANK];
    for (int i = 0; i < 4; i++) {
        if (i + 1 >= s->n_in || s->in[i + 1] < 0)
            continue;
        a.count[i] = nv_run_ints(&in[i + 1], a.buf[i], BD_MAX_RANK, k_slice_names[i], err);
        if (a.count[i] < 0)
            return (int)a.count[i];
        a.p[i] = a.buf[i];
    }
    int r = in[0].rank;
    int rc = slice_sizes(&a, r, in[0].dims, start, step, size, err);
    if (rc || (rc = nv_output_shape(env, s, out, 0, r, size, err)))
        return rc;
    slice_view(r, in[0].dims, start, step, size, &v);
    view_copy(&v, in[0].data, out[0].data, bd_dtype_size(in[0].dtype));
    return 0;
}

static int slice_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    slice_args a;
    mv_view v;
    int rc = slice_const_args(n, &a, err);
    if (rc == 1) {
        s->run = slice_run;
        return 0;
    }
    if (rc || (rc = slice_plan(&a, x->rank, x->dims, y->dims, &v, err)))
        return rc;
    return view_step(s, &v, err);
}

/* ---- the family's table ------------------------------------------------------------------ */

const nv_op nv_movement_ops[] = {
    { "Reshape", view_supports, view_prepare },   { "Flatten", view_supports, view_prepare },
    { "Squeeze", view_supports, view_prepare },   { "Unsqueeze", view_supports, view_prepare },
    { "Identity", view_supports, view_prepare },
    { "Dropout", dropout_supports, dropout_prepare },
    { "Transpose", transpose_supports, transpose_prepare },
    { "DepthToSpace", block_supports, block_prepare },
    { "SpaceToDepth", block_supports, block_prepare },
    { "Slice", slice_supports, slice_prepare },
    { "Concat", nv_concat_supports, nv_concat_prepare },
    { "Split", nv_split_supports, nv_split_prepare },
    { "Expand", nv_expand_supports, nv_tile_prepare },
    { "Tile", nv_tile_supports, nv_tile_prepare },
    { "Pad", nv_pad_supports, nv_pad_prepare },
    { "Trilu", nv_trilu_supports, nv_trilu_prepare },
};
const size_t nv_movement_n = sizeof nv_movement_ops / sizeof nv_movement_ops[0];
