/* Indexing ops: Gather, GatherElements and Slice. Gather and Slice fold when they pick from a
 * small integer constant with constant indices (the Shape -> Gather / Slice step of shape
 * arithmetic). */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

/* Indices of Gather and GatherElements are INT32 or INT64. */
static int check_indices(const bd_node *n, const bd_value *idx, bd_error *err)
{
    if (idx->dtype != BD_DT_INT64 && idx->dtype != BD_DT_INT32 && idx->dtype != BD_DT_UNDEFINED)
        return shp_fail(err, n, "indices '%s' must be INT32 or INT64, got %s", idx->name,
                        bd_dtype_name(idx->dtype));
    return 0;
}

/* ---- Gather ------------------------------------------------------------------------- */

static int fold_gather(bd_graph *g, bd_node *n, const bd_value *data, const bd_value *idx,
                       int ax, bd_value *out, bd_error *err)
{
    int64_t count, vals[SHP_FOLD_MAX];
    int rc = shp_numel(n, &out->shape, &count, err);
    if (rc || count < 0 || count > SHP_FOLD_MAX)
        return rc;
    if (count == 0)
        return shp_fold_ints(g, out, vals, 0, err);
    const bd_shape *ds = &data->shape;
    int64_t inner = 1, axis_dim = ds->dims[ax], n_idx = bd_shape_numel(&idx->shape);
    for (int i = ax + 1; i < ds->rank; i++)
        inner *= ds->dims[i];              /* a factor of DATA's (bounded) element count */
    int64_t at = 0, outer = count / (n_idx * inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < n_idx; j++) {
            int64_t k = shp_const_at(idx, j);
            k = k < 0 ? k + axis_dim : k;
            for (int64_t e = 0; e < inner; e++)
                vals[at++] = shp_const_at(data, (o * axis_dim + k) * inner + e);
        }
    return shp_fold_ints(g, out, vals, (size_t)at, err);
}

int shp_gather(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *data = shp_in(n, 0), *idx = shp_in(n, 1), *out = n->outputs[0];
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)))
        return rc;
    if ((rc = check_indices(n, idx, err)))
        return rc;
    if (!shp_ranked(data) || !shp_ranked(idx)) {
        shp_set_unknown(out, data->dtype);
        return 0;
    }
    const bd_shape *ds = &data->shape, *is = &idx->shape;
    int ax;
    if ((rc = shp_axis_of(n, "data", data, axis, &ax, err)))
        return rc;
    int r = ds->rank - 1 + is->rank;
    if (r > BD_MAX_RANK)
        return shp_unsupported(err, n, "output rank %d exceeds braid's maximum rank %d", r,
                               BD_MAX_RANK);
    /* Constant indices into a known dim are checked now rather than at run time. */
    bool const_idx = shp_is_int_const(idx);
    int64_t dim = ds->dims[ax];
    if (const_idx && dim >= 0) {
        int64_t count = bd_shape_numel(is);
        for (int64_t j = 0; j < count; j++) {
            int64_t k = shp_const_at(idx, j);
            if (k < -dim || k >= dim)
                return shp_fail(err, n, "index %lld is out of range for axis %d of size %lld",
                                (long long)k, ax, (long long)dim);
        }
    }
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i < ax; i++) {
        s.dims[s.rank] = ds->dims[i];
        s.sym[s.rank++] = ds->sym[i];
    }
    for (int i = 0; i < is->rank; i++) {
        s.dims[s.rank] = is->dims[i];
        s.sym[s.rank++] = is->sym[i];
    }
    for (int i = ax + 1; i < ds->rank; i++) {
        s.dims[s.rank] = ds->dims[i];
        s.sym[s.rank++] = ds->sym[i];
    }
    shp_set(out, data->dtype, &s);
    if (shp_is_int_const(data) && const_idx)
        return fold_gather(g, n, data, idx, ax, out, err);
    return 0;
}

/* ---- GatherElements ---------------------------------------------------------------- */

/* GatherElements(data, indices): the output has the indices' shape and the data's type. */
int shp_gather_elements(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *data = shp_in(n, 0), *idx = shp_in(n, 1);
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)))
        return rc;
    if ((rc = check_indices(n, idx, err)))
        return rc;
    if (shp_ranked(data) && shp_ranked(idx)) {
        int ax;
        if (data->shape.rank != idx->shape.rank)
            return shp_fail(err, n, "data '%s' (rank %d) and indices '%s' (rank %d) must have "
                            "the same rank", data->name, data->shape.rank, idx->name,
                            idx->shape.rank);
        if ((rc = shp_axis_of(n, "data", data, axis, &ax, err)))
            return rc;
    }
    if (!shp_ranked(idx)) {
        shp_set_unknown(n->outputs[0], data->dtype);
        return 0;
    }
    shp_set(n->outputs[0], data->dtype, &idx->shape);
    return 0;
}

/* ---- Slice -------------------------------------------------------------------------- */

/* Starts/ends/axes/steps from attributes (opset < 10) or inputs 1..4. *KNOWN is false when
 * a needed input is not constant. */
static int slice_params(const bd_node *n, int64_t *starts, int64_t *ends, int64_t *axes,
                        int64_t *steps, size_t *count, bool *known, bd_error *err)
{
    const int64_t *a_starts, *a_ends, *a_axes;
    size_t ns, ne, na;
    int rc;
    *known = true;
    *count = 0;
    if ((rc = shp_attr_ints(n, "starts", &a_starts, &ns, err)) ||
        (rc = shp_attr_ints(n, "ends", &a_ends, &ne, err)) ||
        (rc = shp_attr_ints(n, "axes", &a_axes, &na, err)))
        return rc;
    if (a_starts || a_ends) {
        if (ns != ne || (a_axes && na != ns) || ns > BD_MAX_RANK)
            return shp_fail(err, n, "attributes starts/ends/axes have %zu/%zu/%zu values", ns, ne,
                            a_axes ? na : ns);
        for (size_t i = 0; i < ns; i++) {
            starts[i] = a_starts[i];
            ends[i]   = a_ends[i];
            axes[i]   = a_axes ? a_axes[i] : (int64_t)i;
            steps[i]  = 1;
        }
        *count = ns;
        return 0;
    }
    if (!shp_in(n, 1) || !shp_in(n, 2))
        return shp_fail(err, n, "starts and ends are required");
    for (size_t i = 1; i < 5; i++)
        if (shp_in(n, i) && !shp_is_const(shp_in(n, i))) {
            *known = false;
            return 0;
        }
    if ((rc = shp_const_ints(n, "starts", shp_in(n, 1), starts, BD_MAX_RANK, &ns, err)) ||
        (rc = shp_const_ints(n, "ends", shp_in(n, 2), ends, BD_MAX_RANK, &ne, err)))
        return rc;
    na = ns;
    size_t nst = ns;
    if (shp_in(n, 3) && (rc = shp_const_ints(n, "axes", shp_in(n, 3), axes, BD_MAX_RANK, &na, err)))
        return rc;
    if (shp_in(n, 4) && (rc = shp_const_ints(n, "steps", shp_in(n, 4), steps, BD_MAX_RANK, &nst, err)))
        return rc;
    if (ns != ne || na != ns || nst != ns)
        return shp_fail(err, n, "starts/ends/axes/steps have %zu/%zu/%zu/%zu values", ns, ne, na,
                        nst);
    for (size_t i = 0; i < ns; i++) {
        if (!shp_in(n, 3))
            axes[i] = (int64_t)i;
        if (!shp_in(n, 4))
            steps[i] = 1;
    }
    *count = ns;
    return 0;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int fold_slice(bd_graph *g, bd_node *n, const bd_value *x, const int64_t *start,
                      const int64_t *step, bd_value *out, bd_error *err)
{
    int64_t count, vals[SHP_FOLD_MAX];
    int rc = shp_numel(n, &out->shape, &count, err);
    if (rc || count < 0 || count > SHP_FOLD_MAX)
        return rc;
    const bd_shape *xs = &x->shape, *os = &out->shape;
    for (int64_t f = 0; f < count; f++) {
        int64_t rem = f, off = 0, stride = 1;
        for (int i = os->rank - 1; i >= 0; i--) {
            int64_t idx = rem % os->dims[i];
            rem /= os->dims[i];
            off += (start[i] + idx * step[i]) * stride;
            stride *= xs->dims[i];
        }
        vals[f] = shp_const_at(x, off);
    }
    return shp_fold_ints(g, out, vals, (size_t)count, err);
}

int shp_slice(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *out = n->outputs[0];
    int64_t starts[BD_MAX_RANK], ends[BD_MAX_RANK], axes[BD_MAX_RANK], steps[BD_MAX_RANK];
    size_t count;
    bool known;
    if ((rc = slice_params(n, starts, ends, axes, steps, &count, &known, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int r = x->shape.rank;
    if (!known) {
        shp_set_rank(out, x->dtype, r);
        return 0;
    }
    /* Per-dim start and step of the selection (whole dim, step 1, unless sliced). */
    int64_t start[BD_MAX_RANK] = { 0 }, step[BD_MAX_RANK];
    bool sliced[BD_MAX_RANK] = { false };
    bd_shape s = x->shape;
    for (int i = 0; i < r; i++)
        step[i] = 1;
    for (size_t k = 0; k < count; k++) {
        int ax;
        if ((rc = shp_axis(n, "axis", axes[k], r, &ax, err)))
            return rc;
        if (sliced[ax])
            return shp_fail(err, n, "axis %d is sliced twice", ax);
        sliced[ax] = true;
        if (steps[k] == 0)
            return shp_fail(err, n, "step for axis %d is 0", ax);
        int64_t d = x->shape.dims[ax], b = starts[k], e = ends[k], st = steps[k];
        s.sym[ax] = NULL;
        if (d < 0) {
            s.dims[ax] = -1;
            continue;
        }
        if (d == 0) {                      /* nothing to select (the clamps below need d > 0) */
            s.dims[ax] = 0;
            step[ax] = st;
            continue;
        }
        b = b < 0 ? b + d : b;             /* b >= INT64_MIN and d >= 0: no overflow */
        e = e < 0 ? e + d : e;
        if (st > 0) {
            b = clamp(b, 0, d);
            e = clamp(e, 0, d);
            s.dims[ax] = e > b ? (e - b - 1) / st + 1 : 0;
        } else {
            b = clamp(b, 0, d - 1);
            e = clamp(e, -1, d - 1);
            s.dims[ax] = b > e ? (b - e - 1) / -(st == INT64_MIN ? st + 1 : st) + 1 : 0;
        }
        start[ax] = b;
        step[ax]  = st;
    }
    shp_set(out, x->dtype, &s);
    if (shp_is_int_const(x))
        return fold_slice(g, n, x, start, step, out, err);
    return 0;
}

/* ---- GatherND ----------------------------------------------------------------------- */

/* GatherND(data [r], indices [q], batch_dims b): indices.shape[:-1] + data.shape[b + m:],
 * m = indices.shape[-1] in [1, r - b]; the first b dims of both agree. An m known only at
 * run time leaves the rank unknown. */
int shp_gather_nd(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *data = shp_in(n, 0), *idx = shp_in(n, 1), *out = n->outputs[0];
    int64_t b;
    if ((rc = shp_attr_int(n, "batch_dims", 0, &b, err)) || (rc = check_indices(n, idx, err)))
        return rc;
    if (b < 0)
        return shp_fail(err, n, "attribute 'batch_dims' = %lld is negative", (long long)b);
    if (shp_ranked(data) && data->shape.rank < 1)
        return shp_fail(err, n, "data '%s' must have rank >= 1", data->name);
    if (shp_ranked(idx) && idx->shape.rank < 1)
        return shp_fail(err, n, "indices '%s' must have rank >= 1", idx->name);
    if (!shp_ranked(data) || !shp_ranked(idx)) {
        shp_set_unknown(out, data->dtype);
        return 0;
    }
    const bd_shape *ds = &data->shape, *is = &idx->shape;
    int r = ds->rank, q = is->rank;
    if (b >= (r < q ? r : q))
        return shp_fail(err, n, "batch_dims %lld must be less than the ranks of data (%d) and "
                        "indices (%d)", (long long)b, r, q);
    for (int i = 0; i < (int)b; i++)
        if ((rc = shp_expect_dim(n, "indices", idx, i, ds->dims[i], "data's batch dim", err)))
            return rc;
    int64_t m = is->dims[q - 1];
    if (m < 0) {
        shp_set_unknown(out, data->dtype);
        return 0;
    }
    if (m < 1 || m > r - b)
        return shp_fail(err, n, "indices' last dim %lld must be between 1 and rank - batch_dims "
                        "= %lld", (long long)m, (long long)(r - b));
    int rank = q - 1 + r - (int)b - (int)m;
    if (rank > BD_MAX_RANK)
        return shp_unsupported(err, n, "output rank %d exceeds braid's maximum rank %d", rank,
                               BD_MAX_RANK);
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i < q - 1; i++) {
        if (i < (int)b && is->dims[i] < 0 && ds->dims[i] >= 0)
            shp_push(&s, ds, i);           /* a batch dim data knows */
        else
            shp_push(&s, is, i);
    }
    for (int i = (int)(b + m); i < r; i++)
        shp_push(&s, ds, i);
    shp_set(out, data->dtype, &s);
    return 0;
}

/* ---- OneHot ------------------------------------------------------------------------- */

/* OneHot(indices, depth, values): the indices' shape with depth inserted at 'axis' (default
 * -1, in [-r-1, r]), of the values' dtype. depth is one element of any numeric type (a float
 * is truncated); values holds [off, on]. A depth known only at run time keeps the dim the
 * model declared for the output, if any (the native engine checks it against each run's
 * depth), else leaves it dynamic. */
int shp_onehot(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *dv = shp_in(n, 1), *vals = shp_in(n, 2), *out = n->outputs[0];
    int64_t axis, count, depth = -1;
    if ((rc = shp_attr_int(n, "axis", -1, &axis, err)))
        return rc;
    if (shp_ranked(dv)) {
        if ((rc = shp_numel(n, &dv->shape, &count, err)))
            return rc;
        if (dv->shape.rank > 1 || (count >= 0 && count != 1))
            return shp_fail(err, n, "depth '%s' must hold one value", dv->name);
    }
    if (shp_ranked(vals)) {
        if ((rc = shp_numel(n, &vals->shape, &count, err)))
            return rc;
        if (vals->shape.rank != 1 || (count >= 0 && count != 2))
            return shp_fail(err, n, "values '%s' must be 1-D with 2 values [off, on]", vals->name);
    }
    double d;
    if (shp_is_static(&dv->shape) && shp_const_number(dv, &d)) {
        if (!(d >= 0 && d < 9.0e18))
            return shp_fail(err, n, "depth %g is negative or too large", d);
        depth = (int64_t)d;
    }
    if (!shp_ranked(x)) {
        shp_set_unknown(out, vals->dtype);
        return 0;
    }
    int r = x->shape.rank, ax;
    if (r + 1 > BD_MAX_RANK)
        return shp_unsupported(err, n, "output rank %d exceeds braid's maximum rank %d", r + 1,
                               BD_MAX_RANK);
    if ((rc = shp_axis(n, "axis", axis, r + 1, &ax, err)))
        return rc;
    if (depth < 0 && out->shape.rank == r + 1 && out->shape.dims[ax] >= 0)
        depth = out->shape.dims[ax];
    bd_shape s = shp_dynamic(0);
    for (int i = 0; i <= r; i++) {
        if (i == ax)
            shp_push_dim(&s, depth);
        if (i < r)
            shp_push(&s, &x->shape, i);
    }
    shp_set(out, vals->dtype, &s);
    return 0;
}
