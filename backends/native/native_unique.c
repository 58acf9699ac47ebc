/* Unique of any numeric dtype or BOOL: the distinct elements of the flattened input, or the
 * distinct slices along an axis, in ascending (lexicographic) order or in the order they first
 * occur (sorted = 0), with the index of each one's first occurrence, the position in the
 * output of every input element or slice, and how often each occurs. How many are distinct is
 * the run's, so every output but the inverse indices is run-time-shaped (nv_output_shape).
 *
 * A run sorts the slice positions with a stable merge sort (values compared as numbers: -0 and
 * 0 are one value, NaN sorts last and equals NaN), walks the sorted runs of equal slices into
 * groups, each with its first (smallest) position and count, and orders the groups by value
 * or by first position. The sort's buffers are the step's scratch, reserved at compile. */
#include <math.h>
#include <string.h>

#include "backends/native/native_internal.h"

/* The input seen as [outer, A, inner]: A slices of outer x inner elements each. */
typedef struct uq_view {
    const void *x;
    int         dtype;
    size_t      outer, a, inner;
} uq_view;

static int cmp_num(double a, double b)
{
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    if (a == b)
        return 0;
    return isnan(a) ? (isnan(b) ? 0 : 1) : -1;     /* NaN after every number */
}

/* Elements I and J of X, by value. */
static int cmp_elem(const uq_view *v, size_t i, size_t j)
{
    switch (v->dtype) {
    case BD_DT_FLOAT:
    case BD_DT_DOUBLE:
        return cmp_num(nv_get_f(v->x, v->dtype, i), nv_get_f(v->x, v->dtype, j));
    case BD_DT_UINT64: {
        uint64_t a = ((const uint64_t *)v->x)[i], b = ((const uint64_t *)v->x)[j];
        return (a > b) - (a < b);
    }
    default: {
        int64_t a = nv_get_i(v->x, v->dtype, i), b = nv_get_i(v->x, v->dtype, j);
        return (a > b) - (a < b);
    }
    }
}

/* Slices J and K, lexicographically over their elements in row-major order. */
static int cmp_slices(const uq_view *v, int64_t j, int64_t k)
{
    for (size_t o = 0; o < v->outer; o++) {
        size_t bj = (o * v->a + (size_t)j) * v->inner, bk = (o * v->a + (size_t)k) * v->inner;
        for (size_t e = 0; e < v->inner; e++) {
            int c = cmp_elem(v, bj + e, bk + e);
            if (c)
                return c;
        }
    }
    return 0;
}

/* Sort the N positions in P (TMP as large) stably by slice; returns the buffer holding them. */
static int64_t *merge_sort(const uq_view *v, int64_t *p, int64_t *tmp, size_t n)
{
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = cmp_slices(v, p[a], p[b]) <= 0 ? p[a++] : p[b++];
            while (a < mid)
                tmp[o++] = p[a++];
            while (b < hi)
                tmp[o++] = p[b++];
        }
        int64_t *t = p;
        p = tmp;
        tmp = t;
    }
    return p;
}

#define UQ_TYPES (NV_DT_NUMERIC | NV_DT(BD_DT_BOOL))

static bool unique_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs < 1 || n->n_outputs > 4)
        return nv_why(why, len, "Unique: expects one input and 1 to 4 outputs");
    const bd_value *x = n->inputs[0];
    const bd_attr *a = bd_node_attr(n, "axis");
    int r = x->shape.rank;
    if (!nv_value_ok(x, UQ_TYPES))
        return nv_why(why, len, "Unique: input dtype %s or a shape only known at run time",
                      bd_dtype_name(x->dtype));
    if (a && (r < 1 || nv_axis(a->i, r) < 0))
        return nv_why(why, len, "Unique: axis %lld is out of range for rank %d", (long long)a->i,
                      r);
    for (size_t k = 0; k < n->n_outputs; k++) {
        const bd_value *y = n->outputs[k];
        int want = k == 0 && a ? r : 1;
        if (!nv_output_ok(y, k ? NV_DT(BD_DT_INT64) : NV_DT(x->dtype)) ||
            (y->shape.rank >= 0 && y->shape.rank != want))
            return nv_why(why, len, "Unique: output %zu must be %s of rank %d", k,
                          k ? "INT64" : bd_dtype_name(x->dtype), want);
    }
    return true;
}

/* ip[0]: the axis, or -1 for the flattened input; ip[1]: sorted. */
static int unique_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                      bd_error *err)
{
    const nv_tensor *x = &in[0];
    int ax = (int)s->ip[0];
    uq_view v = { x->data, x->dtype, 1, x->numel, 1 };
    if (ax >= 0) {
        v.a = (size_t)x->dims[ax];
        for (int d = 0; d < ax; d++)
            v.outer *= (size_t)x->dims[d];
        for (int d = ax + 1; d < x->rank; d++)
            v.inner *= (size_t)x->dims[d];
    }
    size_t n = v.a, groups = 0;
    int64_t *perm = nv_scratch(env), *tmp = perm + n, *gid = tmp + n, *first = gid + n;
    int64_t *count = first + n, *pos = count + n;
    for (size_t i = 0; i < n; i++)
        perm[i] = (int64_t)i;
    perm = merge_sort(&v, perm, tmp, n);
    for (size_t p = 0; p < n; p++) {
        if (p == 0 || cmp_slices(&v, perm[p - 1], perm[p]) != 0) {
            first[groups] = perm[p];    /* stable: the smallest position of its group */
            count[groups++] = 0;
        }
        gid[perm[p]] = (int64_t)groups - 1;
        count[groups - 1]++;
    }
    if (s->ip[1]) {                     /* each group's place in the outputs */
        for (size_t g = 0; g < groups; g++)
            pos[g] = (int64_t)g;
    } else {
        int64_t next = 0;
        for (size_t i = 0; i < n; i++)
            if (first[gid[i]] == (int64_t)i)
                pos[gid[i]] = next++;
    }
    int64_t dims[BD_MAX_RANK] = { (int64_t)groups };
    int rank = 1, rc;
    if (ax >= 0) {
        memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
        dims[ax] = (int64_t)groups;
        rank = x->rank;
    }
    int64_t ng = (int64_t)groups, nn = (int64_t)n;
    if ((rc = nv_output_shape(env, s, out, 0, rank, dims, err)) ||
        (s->n_out > 1 && (rc = nv_output_shape(env, s, out, 1, 1, &ng, err))) ||
        (s->n_out > 2 && (rc = nv_output_shape(env, s, out, 2, 1, &nn, err))) ||
        (s->n_out > 3 && (rc = nv_output_shape(env, s, out, 3, 1, &ng, err))))
        return rc;
    size_t row = v.inner * bd_dtype_size(x->dtype);
    for (size_t g = 0; g < groups && row; g++)
        for (size_t o = 0; o < v.outer; o++)
            memcpy((char *)out[0].data + (o * groups + (size_t)pos[g]) * row,
                   (const char *)x->data + (o * n + (size_t)first[g]) * row, row);
    for (size_t g = 0; g < groups; g++) {
        if (s->n_out > 1)
            ((int64_t *)out[1].data)[pos[g]] = first[g];
        if (s->n_out > 3)
            ((int64_t *)out[3].data)[pos[g]] = count[g];
    }
    for (size_t i = 0; s->n_out > 2 && i < n; i++)
        ((int64_t *)out[2].data)[i] = pos[gid[i]];
    return 0;
}

static int unique_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    const bd_attr *a = bd_node_attr(n, "axis");
    const bd_shape *x = &n->inputs[0]->shape;
    int ax = a ? nv_axis(a->i, x->rank) : -1;
    size_t slices = ax >= 0 ? (size_t)x->dims[ax] : nv_shape_numel(x);
    s->ip[0] = ax;
    s->ip[1] = bd_node_attr_int(n, "sorted", 1) != 0;
    s->scratch = 6 * slices * sizeof(int64_t);     /* perm, tmp, gid, first, count, pos */
    s->run = unique_run;
    return 0;
}

const nv_op nv_unique_ops[] = {
    { "Unique", unique_supports, unique_prepare },
};
const size_t nv_unique_n = sizeof nv_unique_ops / sizeof nv_unique_ops[0];
