/* Indexing: Gather, GatherElements, GatherND, ScatterND, ScatterElements (and opset 9's
 * Scatter, the same op), NonZero, on tensors of any dtype (elements are moved as opaque bytes;
 * only the scatter reductions read them as numbers).
 *
 * Every index comes from a tensor the request controls: each one is wrapped (a negative index
 * counts from the end) and checked against its bound before it addresses memory, and one out
 * of range is BD_EINVAL naming the indices tensor, the element, its value and the bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "backends/native/native_internal.h"

#define IDX_TYPES (NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64))

/* ---- shared helpers ---------------------------------------------------------------------- */

/* Loaded with memcpy (a plain load on x86): constant indices are an initializer's bytes, at
 * whatever offset they had in the model file. */
static int64_t index_at(const nv_tensor *t, size_t i)
{
    if (t->dtype == BD_DT_INT64) {
        int64_t v;
        memcpy(&v, (const char *)t->data + i * sizeof v, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, (const char *)t->data + i * sizeof v, sizeof v);
    return v;
}

/* Element I of the indices T (S's input K) as a position in [0, DIM). */
static int checked_index(const nv_step *s, int k, const nv_tensor *t, size_t i, int64_t dim,
                         int64_t *out, bd_error *err)
{
    int64_t v = index_at(t, i), w = v < 0 ? v + dim : v;   /* v + dim cannot overflow: dim >= 0 */
    if (w < 0 || w >= dim)
        return bd_error_set(err, BD_EINVAL, "index %lld (element %zu of '%s') is out of range "
                            "[-%lld, %lld)", (long long)v, i, s->node->inputs[k]->name,
                            (long long)dim, (long long)dim);
    *out = w;
    return 0;
}

/* Copy one element or block; the common sizes become single moves instead of a call. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 0:  break;                      /* an empty tensor's pointer may be NULL */
    case 1:  memcpy(dst, src, 1); break;
    case 2:  memcpy(dst, src, 2); break;
    case 4:  memcpy(dst, src, 4); break;
    case 8:  memcpy(dst, src, 8); break;
    default: memcpy(dst, src, n); break;
    }
}

static size_t prod(const int64_t *dims, int from, int to)
{
    size_t p = 1;
    for (int d = from; d < to; d++)
        p *= (size_t)dims[d];
    return p;
}

static bool dims_equal(const int64_t *a, const int64_t *b, int n)
{
    for (int d = 0; d < n; d++)
        if (a[d] != b[d])
            return false;
    return true;
}

/* The scatter reductions (ScatterND and ScatterElements): opset 16's add and mul, 18's max and
 * min. Not hot (one element at a time), so in double for floats (exact for a float pair's sum
 * and product before the one rounding) and in wrapping 64-bit integers otherwise. */
typedef enum sc_red { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } sc_red;

static int reduction_of(const bd_node *n)
{
    static const char *const names[] = { "none", "add", "mul", "max", "min" };
    const char *r = bd_node_attr_string(n, "reduction", "none");
    for (int i = 0; i < 5; i++)
        if (!strcmp(r, names[i]))
            return i;
    return -1;
}

static void combine(void *y, size_t yi, const void *u, size_t ui, int dtype, int red)
{
    if (red == RED_NONE) {
        size_t es = bd_dtype_size(dtype);
        copy_bytes((char *)y + yi * es, (const char *)u + ui * es, es);
    } else if (nv_dtype_is_float(dtype)) {
        double a = nv_get_f(y, dtype, yi), b = nv_get_f(u, dtype, ui);
        nv_set_f(y, dtype, yi, red == RED_ADD ? a + b : red == RED_MUL ? a * b
                             : red == RED_MAX ? (a >= b ? a : b) : (a <= b ? a : b));
    } else {
        int64_t a = nv_get_i(y, dtype, yi), b = nv_get_i(u, dtype, ui);
        bool a_less = dtype == BD_DT_UINT64 ? (uint64_t)a < (uint64_t)b : a < b;
        nv_set_i(y, dtype, yi, red == RED_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
                             : red == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                             : red == RED_MAX ? (a_less ? b : a) : (a_less ? a : b));
    }
}

/* The common checks: COUNT inputs all present, one output, input 0 and the output of one dtype
 * (any), every input static, the indices (input 1) INT32/INT64 of rank >= 1 (Gather's may be
 * a scalar: the shape gathers of exported models). */
static bool index_io_ok(const bd_node *n, size_t count, char *why, size_t len)
{
    if (n->n_inputs != count || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects %zu inputs and one output", n->op_type, count);
    for (size_t i = 0; i < count; i++)
        if (!n->inputs[i])
            return nv_why(why, len, "%s: input %zu is omitted", n->op_type, i);
    if (!nv_io_ok(n, count, NV_DT_ANY, why, len))
        return false;
    int min_rank = strcmp(n->op_type, "Gather") ? 1 : 0;
    if (!nv_value_ok(n->inputs[1], IDX_TYPES) || n->inputs[1]->shape.rank < min_rank)
        return nv_why(why, len, "%s: indices must be INT32 or INT64 of rank >= %d", n->op_type,
                      min_rank);
    if (n->inputs[0]->dtype != n->outputs[0]->dtype || n->inputs[0]->shape.rank < 1)
        return nv_why(why, len, "%s: the output's dtype must be the data's (of rank >= 1)",
                      n->op_type);
    if (count == 3 && n->inputs[2]->dtype != n->inputs[0]->dtype)
        return nv_why(why, len, "%s: updates of another dtype than the data", n->op_type);
    return true;
}

/* ---- Gather ------------------------------------------------------------------------------- */

/* Gather at AXIS is OUTER x DIM x INNER -> OUTER x N x INNER: each output row is one whole
 * inner block of the data, copied with memcpy (an embedding row, or one element). */
static bool gather_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!index_io_ok(n, 2, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *i = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", 0), x->rank);
    if (ax < 0)
        return nv_why(why, len, "Gather: axis out of range for rank %d", x->rank);
    bool fits = y->rank == x->rank - 1 + i->rank && dims_equal(y->dims, x->dims, ax) &&
                dims_equal(y->dims + ax, i->dims, i->rank) &&
                dims_equal(y->dims + ax + i->rank, x->dims + ax + 1, x->rank - ax - 1);
    return fits ? true : nv_why(why, len, "Gather: output shape does not match data and indices");
}

static int gather_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    (void)env;
    size_t outer = (size_t)s->ip[0], block = (size_t)s->ip[2], n = in[1].numel;
    int64_t dim = s->ip[1], w;
    for (size_t j = 0; j < n; j++) {           /* every index checked before any is used */
        int rc = checked_index(s, 1, &in[1], j, dim, &w, err);
        if (rc)
            return rc;
    }
    const char *x = in[0].data;
    char *y = out[0].data;
    size_t rows = outer * n;
    bool par = rows > 1 && rows * block >= 4 * (size_t)NV_PARALLEL_MIN && !omp_in_parallel();
    #pragma omp parallel for if (par) schedule(static)
    for (size_t r = 0; r < rows; r++) {
        size_t o = r / n;
        int64_t v = index_at(&in[1], r % n);
        size_t at = o * (size_t)dim + (size_t)(v < 0 ? v + dim : v);
        copy_bytes(y + r * block, x + at * block, block);
    }
    return 0;
}

static int gather_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const bd_shape *x = &n->inputs[0]->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", 0), x->rank);
    s->ip[0] = (int64_t)prod(x->dims, 0, ax);
    s->ip[1] = x->dims[ax];
    s->ip[2] = (int64_t)(prod(x->dims, ax + 1, x->rank) * bd_dtype_size(n->inputs[0]->dtype));
    s->run = gather_run;
    return 0;
}

/* ---- GatherElements, ScatterElements (and Scatter) ---------------------------------------- */

/* Both address, for element I of the indices, the data element with I's coordinates except
 * along the axis, where the index says. */
static bool elements_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool scatter = strcmp(n->op_type, "GatherElements") != 0;
    if (!index_io_ok(n, scatter ? 3 : 2, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *i = &n->inputs[1]->shape, *y = &n->outputs[0]->shape;
    int ax = nv_axis(bd_node_attr_int(n, "axis", 0), x->rank);
    if (ax < 0 || i->rank != x->rank)
        return nv_why(why, len, "%s: axis out of range, or indices of another rank than the data",
                      n->op_type);
    for (int d = 0; d < x->rank; d++)
        if (d != ax && i->dims[d] > x->dims[d])
            return nv_why(why, len, "%s: indices dim %d (%lld) exceeds the data's (%lld)",
                          n->op_type, d, (long long)i->dims[d], (long long)x->dims[d]);
    const bd_shape *want = scatter ? x : i;
    if (scatter && !bd_shape_equal(&n->inputs[2]->shape, i))
        return nv_why(why, len, "%s: updates and indices differ in shape", n->op_type);
    if (!bd_shape_equal(y, want))
        return nv_why(why, len, "%s: unexpected output shape", n->op_type);
    int red = reduction_of(n);
    if (red < 0 || (red != RED_NONE && !nv_value_ok(n->inputs[0], NV_DT_NUMERIC)))
        return nv_why(why, len, "%s: reduction '%s' on %s", n->op_type,
                      bd_node_attr_string(n, "reduction", ""), bd_dtype_name(n->inputs[0]->dtype));
    return true;
}

/* Walk the indices IDX row by row (all dims but the last): for GatherElements, Y[i] = the
 * addressed element of X; for ScatterElements (UPD given), combine UPD[i] into it in Y. */
static int elements_walk(const nv_step *s, const nv_tensor *x, const nv_tensor *idx,
                         const nv_tensor *upd, void *y, bd_error *err)
{
    int r = idx->rank, ax = (int)s->ip[0];
    int64_t st[BD_MAX_RANK];
    nv_strides(r, x->dims, st);
    size_t cols = (size_t)idx->dims[r - 1], rows = cols ? idx->numel / cols : 0;
    size_t es = bd_dtype_size(x->dtype);
    for (size_t row = 0; row < rows; row++) {
        size_t base = 0, rest = row;
        for (int d = r - 2; d >= 0; d--) {
            size_t c = rest % (size_t)idx->dims[d];
            rest /= (size_t)idx->dims[d];
            base += d == ax ? 0 : c * (size_t)st[d];
        }
        for (size_t col = 0; col < cols; col++) {
            size_t i = row * cols + col;
            int64_t w = 0;
            int rc = checked_index(s, 1, idx, i, x->dims[ax], &w, err);
            if (rc)
                return rc;
            size_t at = base + (ax == r - 1 ? 0 : col * (size_t)st[r - 1]) +
                        (size_t)w * (size_t)st[ax];
            if (upd)
                combine(y, at, upd->data, i, x->dtype, s->op);
            else
                copy_bytes((char *)y + i * es, (const char *)x->data + at * es, es);
        }
    }
    return 0;
}

static int gather_elements_run(const nv_step *s, const nv_tensor *in, nv_tensor *out,
                               nv_run_env *env, bd_error *err)
{
    (void)env;
    return elements_walk(s, &in[0], &in[1], NULL, out[0].data, err);
}

static int scatter_elements_run(const nv_step *s, const nv_tensor *in, nv_tensor *out,
                                nv_run_env *env, bd_error *err)
{
    (void)env;
    if (out[0].data != in[0].data)
        copy_bytes(out[0].data, in[0].data, in[0].numel * bd_dtype_size(in[0].dtype));
    return elements_walk(s, &in[0], &in[1], &in[2], out[0].data, err);
}

static int elements_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->ip[0] = nv_axis(bd_node_attr_int(n, "axis", 0), n->inputs[0]->shape.rank);
    s->op = reduction_of(n);
    s->run = strcmp(n->op_type, "GatherElements") ? scatter_elements_run : gather_elements_run;
    return 0;
}

/* ---- GatherND, ScatterND ------------------------------------------------------------------ */

/* Both read tuples of K indices (the indices' last dim) that address a block of the data: the
 * dims after the K indexed ones. GatherND's batch_dims leading dims are shared by data and
 * indices; ScatterND has none. Parameters: ip[0] batches, ip[1] tuples per batch, ip[2] K,
 * ip[3] block elements, ip[4] data elements per batch, ip[5 + j] indexed dim j and ip[13 + j]
 * its stride. */
enum { ND_DIMS = 5, ND_STRIDES = 13 };

static bool nd_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    bool scatter = !strcmp(n->op_type, "ScatterND");
    if (!index_io_ok(n, scatter ? 3 : 2, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *i = &n->inputs[1]->shape;
    int64_t b = scatter ? 0 : bd_node_attr_int(n, "batch_dims", 0), k = i->dims[i->rank - 1];
    if (b < 0 || b >= i->rank || b >= x->rank || !dims_equal(x->dims, i->dims, (int)b))
        return nv_why(why, len, "%s: batch_dims %lld does not fit the shapes", n->op_type,
                      (long long)b);
    if (k < 1 || k > x->rank - b)
        return nv_why(why, len, "%s: index tuples of %lld for data of rank %d", n->op_type,
                      (long long)k, x->rank);
    /* The gathered (GatherND's output) or scattered (ScatterND's updates) shape. */
    bd_shape want = { .rank = i->rank - 1 + x->rank - (int)(b + k) };
    memcpy(want.dims, i->dims, (size_t)(i->rank - 1) * sizeof want.dims[0]);
    memcpy(want.dims + i->rank - 1, x->dims + b + k,
           (size_t)(x->rank - b - k) * sizeof want.dims[0]);
    if (!bd_shape_equal(scatter ? &n->inputs[2]->shape : &n->outputs[0]->shape, &want) ||
        (scatter && !bd_shape_equal(&n->outputs[0]->shape, x)))
        return nv_why(why, len, "%s: shapes of data, indices and %s do not match", n->op_type,
                      scatter ? "updates" : "output");
    int red = reduction_of(n);
    if (red < 0 || (red != RED_NONE && !nv_value_ok(n->inputs[0], NV_DT_NUMERIC)))
        return nv_why(why, len, "%s: reduction '%s' on %s", n->op_type,
                      bd_node_attr_string(n, "reduction", ""), bd_dtype_name(n->inputs[0]->dtype));
    return true;
}

/* The data element (within its batch) that tuple T of the indices addresses. */
static int nd_offset(const nv_step *s, const nv_tensor *idx, size_t t, size_t *at, bd_error *err)
{
    size_t k = (size_t)s->ip[2], off = 0;
    for (size_t j = 0; j < k; j++) {
        int64_t w = 0;
        int rc = checked_index(s, 1, idx, t * k + j, s->ip[ND_DIMS + j], &w, err);
        if (rc)
            return rc;
        off += (size_t)w * (size_t)s->ip[ND_STRIDES + j];
    }
    *at = off;
    return 0;
}

static int gathernd_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                        bd_error *err)
{
    (void)env;
    size_t tuples = (size_t)(s->ip[0] * s->ip[1]), es = bd_dtype_size(in[0].dtype);
    size_t block = (size_t)s->ip[3] * es, batch = (size_t)s->ip[4] * es;
    for (size_t t = 0; t < tuples; t++) {
        size_t at;
        int rc = nd_offset(s, &in[1], t, &at, err);
        if (rc)
            return rc;
        copy_bytes((char *)out[0].data + t * block,
                   (const char *)in[0].data + (t / (size_t)s->ip[1]) * batch + at * es, block);
    }
    return 0;
}

static int scatternd_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                         bd_error *err)
{
    (void)env;
    size_t tuples = (size_t)s->ip[1], block = (size_t)s->ip[3], es = bd_dtype_size(in[0].dtype);
    if (out[0].data != in[0].data)
        copy_bytes(out[0].data, in[0].data, in[0].numel * es);
    for (size_t t = 0; t < tuples; t++) {
        size_t at;
        int rc = nd_offset(s, &in[1], t, &at, err);
        if (rc)
            return rc;
        if (s->op == RED_NONE)
            copy_bytes((char *)out[0].data + at * es, (const char *)in[2].data + t * block * es,
                       block * es);
        else
            for (size_t e = 0; e < block; e++)
                combine(out[0].data, at + e, in[2].data, t * block + e, in[0].dtype, s->op);
    }
    return 0;
}

static int nd_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    bool scatter = !strcmp(n->op_type, "ScatterND");
    const bd_shape *x = &n->inputs[0]->shape, *i = &n->inputs[1]->shape;
    int b = scatter ? 0 : (int)bd_node_attr_int(n, "batch_dims", 0);
    int k = (int)i->dims[i->rank - 1];
    int64_t st[BD_MAX_RANK];
    nv_strides(x->rank, x->dims, st);
    s->ip[0] = (int64_t)prod(x->dims, 0, b);
    s->ip[1] = (int64_t)prod(i->dims, b, i->rank - 1);
    s->ip[2] = k;
    s->ip[3] = (int64_t)prod(x->dims, b + k, x->rank);
    s->ip[4] = (int64_t)prod(x->dims, b, x->rank);
    for (int j = 0; j < k; j++) {
        s->ip[ND_DIMS + j] = x->dims[b + j];
        s->ip[ND_STRIDES + j] = st[b + j];
    }
    s->op = reduction_of(n);
    s->run = scatter ? scatternd_run : gathernd_run;
    return 0;
}

/* ---- NonZero ------------------------------------------------------------------------------ */

/* The one op whose output shape only the run tells: INT64 [rank, count], the coordinates of
 * each non-zero element in row-major order (a float -0.0 is zero, a NaN is not). */
static bool nonzero_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "NonZero: expects one input and one output");
    if (!nv_value_ok(n->inputs[0], NV_DT_ANY))
        return nv_why(why, len, "NonZero: input of a dtype or a shape only known at run time");
    if (n->inputs[0]->shape.rank < 1)
        return nv_why(why, len, "NonZero of a scalar (engines disagree on its shape)");
    const bd_value *y = n->outputs[0];
    if (y->dtype != BD_DT_INT64 || (y->shape.rank >= 0 && y->shape.rank != 2))
        return nv_why(why, len, "NonZero: the output must be INT64 of rank 2");
    return true;
}

static bool is_nonzero(const void *p, int dtype, size_t i)
{
    switch (dtype) {
    case BD_DT_FLOAT:    return ((const float *)p)[i] != 0;
    case BD_DT_DOUBLE:   return ((const double *)p)[i] != 0;
    case BD_DT_FLOAT16:
    case BD_DT_BFLOAT16: return (((const uint16_t *)p)[i] & 0x7fff) != 0;   /* +-0 are zero */
    }
    return nv_get_i(p, dtype, i) != 0;
}

static int nonzero_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                       bd_error *err)
{
    const nv_tensor *x = &in[0];
    size_t count = 0;
    for (size_t i = 0; i < x->numel; i++)
        count += is_nonzero(x->data, x->dtype, i);
    out[0].rank = 2;
    out[0].dims[0] = x->rank;
    out[0].dims[1] = (int64_t)count;
    out[0].numel = (size_t)x->rank * count;
    int64_t *y = nv_output_alloc(env, s, 0, out[0].numel * sizeof *y, err);
    if (!y)
        return BD_ENOMEM;
    out[0].data = y;
    int64_t c[BD_MAX_RANK] = { 0 };         /* coordinates of element i, an odometer */
    for (size_t i = 0, k = 0; i < x->numel; i++) {
        if (is_nonzero(x->data, x->dtype, i)) {
            for (int d = 0; d < x->rank; d++)
                y[(size_t)d * count + k] = c[d];
            k++;
        }
        for (int d = x->rank - 1; d >= 0 && ++c[d] == x->dims[d]; d--)
            c[d] = 0;
    }
    return 0;
}

static int nonzero_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)err;
    s->run = nonzero_run;
    return 0;
}

const nv_op nv_index_ops[] = {
    { "Gather", gather_supports, gather_prepare },
    { "GatherElements", elements_supports, elements_prepare },
    { "ScatterElements", elements_supports, elements_prepare },
    { "Scatter", elements_supports, elements_prepare },
    { "GatherND", nd_supports, nd_prepare },
    { "ScatterND", nd_supports, nd_prepare },
    { "NonZero", nonzero_supports, nonzero_prepare },
};
const size_t nv_index_n = sizeof nv_index_ops / sizeof nv_index_ops[0];
