/* Ops that rearrange or combine data: Transpose, Concat, Split, Tile. Transpose and Concat
 * of small integer constants are folded. */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

/* ---- Transpose ---------------------------------------------------------------------- */

/* Output element F of a transpose by P of the constant X (output shape OUT->shape). */
static int fold_transpose(bd_graph *g, bd_node *n, const bd_value *x, const int *p,
                          bd_value *out, bd_error *err)
{
    int64_t count, vals[SHP_FOLD_MAX], xstride[BD_MAX_RANK];
    int rc = shp_numel(n, &out->shape, &count, err);
    if (rc || count < 0 || count > SHP_FOLD_MAX)
        return rc;
    int r = x->shape.rank;
    for (int i = r - 1, st = 1; i >= 0; st *= (int)x->shape.dims[i], i--)
        xstride[i] = st;                   /* no overflow: X holds at most SHP_FOLD_MAX */
    for (int64_t f = 0; f < count; f++) {
        int64_t rem = f, off = 0;
        for (int i = r - 1; i >= 0; i--) {
            off += rem % out->shape.dims[i] * xstride[p[i]];
            rem /= out->shape.dims[i];
        }
        vals[f] = shp_const_at(x, off);
    }
    return shp_fold_ints(g, out, vals, (size_t)count, err);
}

int shp_transpose(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0);
    const int64_t *perm;
    size_t len;
    if ((rc = shp_attr_ints(n, "perm", &perm, &len, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int r = x->shape.rank;
    int p[BD_MAX_RANK];
    if (perm && len != (size_t)r)
        return shp_fail(err, n, "attribute 'perm' has %zu values for rank %d", len, r);
    bool seen[BD_MAX_RANK] = { false };
    for (int i = 0; i < r; i++) {
        int64_t v = perm ? perm[i] : r - 1 - i;   /* default: reverse the dims */
        if (v < 0 || v >= r || seen[v])
            return shp_fail(err, n, "attribute 'perm' is not a permutation of 0..%d", r - 1);
        seen[v] = true;
        p[i] = (int)v;
    }
    bd_shape s = shp_dynamic(r);
    for (int i = 0; i < r; i++) {
        s.dims[i] = x->shape.dims[p[i]];
        s.sym[i]  = x->shape.sym[p[i]];
    }
    shp_set(n->outputs[0], x->dtype, &s);
    if (shp_is_int_const(x))
        return fold_transpose(g, n, x, p, n->outputs[0], err);
    return 0;
}

/* ---- Concat ------------------------------------------------------------------------- */

static int fold_concat(bd_graph *g, bd_node *n, int ax, bd_value *out, bd_error *err)
{
    int64_t total, vals[SHP_FOLD_MAX];
    int rc = shp_numel(n, &out->shape, &total, err);
    if (rc || total < 0 || total > SHP_FOLD_MAX)
        return rc;
    int64_t outer = 1;
    if (total == 0)
        return shp_fold_ints(g, out, vals, 0, err);
    for (int i = 0; i < ax; i++)
        outer *= out->shape.dims[i];       /* no overflow: a factor of TOTAL */
    size_t at = 0, nin = shp_n_inputs(n);
    for (int64_t o = 0; o < outer; o++)
        for (size_t k = 0; k < nin; k++) {
            const bd_value *v = n->inputs[k];
            int64_t inner = 1;
            for (int i = ax; i < v->shape.rank; i++)
                inner *= v->shape.dims[i];
            for (int64_t e = 0; e < inner; e++)
                vals[at++] = shp_const_at(v, o * inner + e);
        }
    return shp_fold_ints(g, out, vals, at, err);
}

int shp_concat(bd_graph *g, bd_node *n, bd_error *err)
{
    size_t nin = shp_n_inputs(n);
    int rc;
    int64_t axis;
    const bd_attr *a = bd_node_attr(n, "axis");
    if (!a)
        return shp_fail(err, n, "attribute 'axis' is required");
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)))
        return rc;
    bd_value *x = n->inputs[0];
    const bd_value *ranked = NULL;
    bool all_ranked = true;
    for (size_t k = 0; k < nin; k++) {
        if (!n->inputs[k])
            return shp_fail(err, n, "input %zu is missing", k);
        if (n->inputs[k]->dtype != x->dtype && n->inputs[k]->dtype != BD_DT_UNDEFINED &&
            x->dtype != BD_DT_UNDEFINED)
            return shp_fail(err, n, "input '%s' is %s but '%s' is %s", n->inputs[k]->name,
                            bd_dtype_name(n->inputs[k]->dtype), x->name, bd_dtype_name(x->dtype));
        if (!shp_ranked(n->inputs[k]))
            all_ranked = false;
        else if (!ranked)
            ranked = n->inputs[k];
    }
    if (!all_ranked) {
        /* All inputs share one rank: a ranked one gives it. */
        if (!ranked || ranked->shape.rank == 0)
            return shp_all_unknown(n);
        shp_set_rank(n->outputs[0], x->dtype, ranked->shape.rank);
        return 0;
    }
    int r = x->shape.rank, ax;
    if (r == 0)
        return shp_fail(err, n, "cannot concatenate scalars");
    if ((rc = shp_axis(n, "axis", axis, r, &ax, err)))
        return rc;
    bd_shape s = x->shape;
    bool all_int_const = shp_foldable(x->dtype);
    for (size_t k = 0; k < nin; k++) {
        const bd_shape *ks = &n->inputs[k]->shape;
        all_int_const &= shp_is_int_const(n->inputs[k]);
        if (ks->rank != r)
            return shp_fail(err, n, "input '%s' has rank %d, expected %d like '%s'",
                            n->inputs[k]->name, ks->rank, r, x->name);
        if (k == 0)
            continue;
        for (int i = 0; i < r; i++) {
            int64_t d = ks->dims[i];
            if (i == ax) {
                if (s.dims[i] >= 0 && (d < 0 || __builtin_add_overflow(s.dims[i], d, &s.dims[i])))
                    s.dims[i] = -1;
                s.sym[i] = NULL;
            } else if (s.dims[i] >= 0 && d >= 0 && s.dims[i] != d) {
                char s0[96], sk[96];
                return shp_fail(err, n, "input '%s' %s does not match '%s' %s outside axis %d",
                                n->inputs[k]->name, shp_str(ks, sk, sizeof sk), x->name,
                                shp_str(&x->shape, s0, sizeof s0), ax);
            } else if (s.dims[i] < 0 && d >= 0) {
                s.dims[i] = d;
            } else if (s.dims[i] < 0 && d < 0 && s.sym[i] && ks->sym[i] &&
                       strcmp(s.sym[i], ks->sym[i]) != 0) {
                s.sym[i] = NULL;
            }
        }
    }
    shp_set(n->outputs[0], x->dtype, &s);
    if (all_int_const)
        return fold_concat(g, n, ax, n->outputs[0], err);
    return 0;
}

/* ---- Split -------------------------------------------------------------------------- */

/* Sizes from the 'split' attribute (opset < 13) or constant input 1 (opset >= 13), else
 * equal parts, one per output. */
int shp_split(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *sv = shp_in(n, 1);
    int64_t axis, sizes[64];
    const int64_t *attr;
    size_t count, nout = n->n_outputs;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)) ||
        (rc = shp_attr_ints(n, "split", &attr, &count, err)))
        return rc;
    if (sv && !shp_is_const(sv)) {
        if (!shp_ranked(x))
            return shp_all_unknown(n);
        for (size_t k = 0; k < nout; k++)
            shp_set_rank(n->outputs[k], x->dtype, x->shape.rank);
        return 0;
    }
    if (sv) {
        if ((rc = shp_const_ints(n, "split", sv, sizes, 64, &count, err)))
            return rc;
        attr = sizes;
    }
    if (attr && count != nout)
        return shp_fail(err, n, "split has %zu sizes for %zu outputs", count, nout);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis(n, "axis", axis, x->shape.rank, &ax, err)))
        return rc;
    int64_t dim = x->shape.dims[ax], total = 0;
    if (attr) {
        for (size_t k = 0; k < nout; k++) {
            if (attr[k] < 0 || __builtin_add_overflow(total, attr[k], &total))
                return shp_fail(err, n, "split size %lld is invalid", (long long)attr[k]);
            sizes[k] = attr[k];
        }
        if (dim >= 0 && total != dim)
            return shp_fail(err, n, "split sizes add up to %lld, axis %d has %lld",
                            (long long)total, ax, (long long)dim);
    } else {
        if (dim >= 0 && dim % (int64_t)nout != 0)
            return shp_fail(err, n, "axis %d of size %lld does not split into %zu equal parts",
                            ax, (long long)dim, nout);
        for (size_t k = 0; k < nout; k++)
            sizes[k] = dim >= 0 ? dim / (int64_t)nout : -1;
    }
    for (size_t k = 0; k < nout; k++) {
        bd_shape s = x->shape;
        s.dims[ax] = sizes[k];
        s.sym[ax]  = NULL;
        shp_set(n->outputs[k], x->dtype, &s);
    }
    return 0;
}

/* ---- Tile --------------------------------------------------------------------------- */

/* Tile(x, repeats): dim i becomes dims[i] * repeats[i]; repeats is a constant INT64 of X's
 * rank (a run-time repeats keeps only the rank). */
int shp_tile(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *rv = shp_in(n, 1);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (!shp_is_const(rv)) {
        shp_set_rank(n->outputs[0], x->dtype, x->shape.rank);
        return 0;
    }
    bd_shape s = shp_dynamic(x->shape.rank);
    int64_t reps[BD_MAX_RANK];
    size_t count;
    if ((rc = shp_const_ints(n, "repeats", rv, reps, BD_MAX_RANK, &count, err)))
        return rc;
    if (count != (size_t)x->shape.rank)
        return shp_fail(err, n, "repeats has %zu values for rank %d", count, x->shape.rank);
    for (int i = 0; i < s.rank; i++) {
        int64_t d = x->shape.dims[i];
        if (reps[i] < 0)
            return shp_fail(err, n, "repeats[%d] = %lld is negative", i, (long long)reps[i]);
        if (reps[i] == 1) {
            s.dims[i] = d;
            s.sym[i]  = x->shape.sym[i];
        } else if (d >= 0 && !shp_mul(d, reps[i], &s.dims[i])) {
            return shp_fail(err, n, "dim %d (%lld x %lld) overflows int64", i, (long long)d,
                            (long long)reps[i]);
        } else if (d < 0) {
            s.dims[i] = reps[i] == 0 ? 0 : -1;
        }
    }
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* ---- DepthToSpace / SpaceToDepth ---------------------------------------------------- */

/* [N, C, H, W] -> DepthToSpace [N, C/(b*b), H*b, W*b] (mode DCR or CRD), SpaceToDepth
 * [N, C*b*b, H/b, W/b]; 'blocksize' b is required. */
int shp_depth_space(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    bool to_space = strcmp(n->op_type, "DepthToSpace") == 0;
    int64_t b, bb;
    if (!bd_node_attr(n, "blocksize"))
        return shp_fail(err, n, "attribute 'blocksize' is required");
    if ((rc = shp_attr_int(n, "blocksize", 1, &b, err)))
        return rc;
    if (to_space) {
        static const char *const modes[] = { "DCR", "CRD" };
        int mode;
        if ((rc = shp_attr_choice(n, "mode", modes, 2, 0, &mode, err)))
            return rc;
    }
    if (b < 1 || !shp_mul(b, b, &bb))
        return shp_fail(err, n, "attribute 'blocksize' = %lld, expected >= 1", (long long)b);
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank != 4)
        return shp_fail(err, n, "input '%s' must have rank 4 (N, C, H, W), got %d", x->name,
                        x->shape.rank);
    bd_shape s = x->shape;
    int64_t c = x->shape.dims[1];
    if (to_space) {
        if (c >= 0 && c % bb != 0)
            return shp_fail(err, n, "%lld channels are not divisible by blocksize^2 = %lld",
                            (long long)c, (long long)bb);
        s.dims[1] = c >= 0 ? c / bb : -1;
        for (int i = 2; i < 4; i++) {
            int64_t d = x->shape.dims[i];
            if (d >= 0 && !shp_mul(d, b, &s.dims[i]))
                return shp_fail(err, n, "dim %d (%lld x %lld) overflows int64", i, (long long)d,
                                (long long)b);
        }
    } else {
        if (c >= 0 && !shp_mul(c, bb, &s.dims[1]))
            return shp_fail(err, n, "%lld channels x blocksize^2 overflows int64", (long long)c);
        for (int i = 2; i < 4; i++) {
            int64_t d = x->shape.dims[i];
            if (d >= 0 && d % b != 0)
                return shp_fail(err, n, "dim %d of size %lld is not divisible by blocksize %lld",
                                i, (long long)d, (long long)b);
            s.dims[i] = d >= 0 ? d / b : -1;
        }
    }
    for (int i = 1; i < 4; i++)
        if (b != 1)
            s.sym[i] = NULL;
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* ---- ReverseSequence ---------------------------------------------------------------- */

/* ReverseSequence(input, sequence_lens): the input's shape; batch_axis and time_axis are 0 and
 * 1 in some order; sequence_lens is [batch]. */
int shp_reverse_sequence(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *lens = shp_in(n, 1);
    int64_t batch_axis, time_axis;
    if ((rc = shp_attr_int(n, "batch_axis", 1, &batch_axis, err)) ||
        (rc = shp_attr_int(n, "time_axis", 0, &time_axis, err)))
        return rc;
    if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) ||
        batch_axis == time_axis)
        return shp_fail(err, n, "batch_axis %lld and time_axis %lld must be 0 and 1 in some order",
                        (long long)batch_axis, (long long)time_axis);
    if (lens->dtype != BD_DT_INT64 && lens->dtype != BD_DT_INT32 && lens->dtype != BD_DT_UNDEFINED)
        return shp_fail(err, n, "sequence_lens '%s' must be INT32 or INT64, got %s", lens->name,
                        bd_dtype_name(lens->dtype));
    if ((rc = shp_expect_rank(n, "sequence_lens", lens, 1, err)))
        return rc;
    if (!shp_ranked(x))
        return shp_all_unknown(n);
    if (x->shape.rank < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2, got %d", x->name, x->shape.rank);
    if (shp_ranked(lens) &&
        (rc = shp_expect_dim(n, "sequence_lens", lens, 0, x->shape.dims[batch_axis],
                             "the batch size", err)))
        return rc;
    return shp_pass_through(n);
}

/* ---- ChannelShuffle (braid) --------------------------------------------------------- */

/* braid's ChannelShuffle (passes/channel_shuffle.c): X's shape; 'group' divides dim 'axis'.
 * Of several parts (a Concat folded in), the parts are one shape and the output is them
 * side by side along 'axis'. */
int shp_channel_shuffle(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    size_t parts = shp_n_inputs(n);
    int64_t axis, group;
    if ((rc = shp_attr_int(n, "axis", 1, &axis, err)) ||
        (rc = shp_attr_int(n, "group", 1, &group, err)))
        return rc;
    if (group < 1)
        return shp_fail(err, n, "attribute 'group' = %lld, expected >= 1", (long long)group);
    for (size_t k = 0; k < parts; k++)
        if (!shp_ranked(n->inputs[k]))
            return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis_of(n, "input", x, axis, &ax, err)))
        return rc;
    bd_shape s = x->shape;
    for (size_t k = 1; k < parts; k++) {
        if (!bd_shape_equal(&n->inputs[k]->shape, &x->shape) || n->inputs[k]->dtype != x->dtype)
            return shp_fail(err, n, "part '%s' differs from '%s' in shape or type",
                            n->inputs[k]->name, x->name);
        if (s.dims[ax] >= 0 && __builtin_add_overflow(s.dims[ax], x->shape.dims[ax], &s.dims[ax]))
            return shp_fail(err, n, "the parts' dim %d overflows", ax);
    }
    if (s.dims[ax] >= 0 && s.dims[ax] % group != 0)
        return shp_fail(err, n, "dim %d of size %lld is not divisible by group %lld", ax,
                        (long long)s.dims[ax], (long long)group);
    if (parts == 1)
        return shp_pass_through(n);
    s.sym[ax] = NULL;
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
