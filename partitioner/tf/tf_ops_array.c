/* TensorFlow's array ops (shapes, slices, gathers, packing, splitting, filling, block
 * rearrangements) as ONNX-semantic IR.
 *
 * StridedSlice follows TensorFlow's own algorithm (strided_slice_op.cc: the sparse spec of
 * begin/end/strides and five masks becomes a dense one): the dims before the ellipsis are
 * numbered from the front and those after it from the back (negative axes), so the input's
 * rank need not be known; one Slice takes every non-trivial range, a Squeeze drops the
 * shrunk dims and an Unsqueeze inserts the new ones. Shape-valued outputs are INT32 where
 * TensorFlow's are (a Cast after ONNX's INT64 Shape/Size/TopK/NonZero). */
#include "partitioner/tf/tf_mapkit.h"
#include "partitioner/tf/tf_ops.h"

#include <stdint.h>
#include <string.h>

static int t_dtype(const tf_mapctx *m) { return tf_a_dtype(m->v, "T", BD_DT_FLOAT); }

/* V as INT64 for an ONNX shape-like input: a constant copy, or a Cast of the computed value. */
static bd_value *as_i64(tf_mapctx *m, const char *suffix, bd_value *v, bd_error *err)
{
    int64_t k[TF_MAX_CONST_INTS];
    size_t n;
    if (v->dtype == BD_DT_INT64)
        return v;
    if (tf_const_ints(v, k, TF_MAX_CONST_INTS, &n))
        return tf_emit_const(m, suffix, BD_DT_INT64, &v->shape, k, n * sizeof *k, err);
    return tf_cast(m, suffix, v, BD_DT_INT64, NULL, err);
}

/* Output OUT_TYPE (attr KEY, default INT32) of an INT64 result Y into DST. */
static int to_out_type(tf_mapctx *m, const char *key, bd_value *y, bd_value *dst, bd_error *err)
{
    int ot = tf_a_dtype(m->v, key, BD_DT_INT32);
    if (ot == BD_DT_INT64)
        return tf_op1(m, NULL, "Identity", y, dst, NULL, 0, err) ? 0 : tf_rc(err);
    return tf_cast(m, NULL, y, ot, dst, err) ? 0 : tf_rc(err);
}

static bool int_out_type(const tf_mapctx *m, const char *key)
{
    int ot = tf_a_dtype(m->v, key, BD_DT_INT32);
    return ot == BD_DT_INT32 || ot == BD_DT_INT64;
}

/* ---- shapes ------------------------------------------------------------------------------ */

static int map_shape(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 1 || !int_out_type(m, "out_type"))
        return TF_DECLINE;
    bool size = strcmp(m->v->op, "Size") == 0;
    bd_value *y = tf_op1(m, size ? "size" : "shape", size ? "Size" : "Shape", m->in[0], NULL, NULL, 0, err);
    return y ? to_out_type(m, "out_type", y, m->out, err) : tf_rc(err);
}

/* ---- StridedSlice and Slice -------------------------------------------------------------- */

typedef struct dense_dim {
    int64_t axis;              /* >= 0 from the front, < 0 from the back */
    int64_t start, end, step;
    bool    shrink, trivial;
} dense_dim;

static int map_strided_slice(tf_mapctx *m, bd_error *err)
{
    int64_t b[TF_MAX_CONST_INTS], e[TF_MAX_CONST_INTS], st[TF_MAX_CONST_INTS];
    size_t nb, ne, ns;
    if (m->n_in != 4 || !tf_const_ints(m->in[1], b, TF_MAX_CONST_INTS, &nb) ||
        !tf_const_ints(m->in[2], e, TF_MAX_CONST_INTS, &ne) ||
        !tf_const_ints(m->in[3], st, TF_MAX_CONST_INTS, &ns) || nb != ne || nb != ns || nb > 32)
        return TF_DECLINE;
    uint64_t bm = (uint64_t)tf_a_i(m->v, "begin_mask", 0), em = (uint64_t)tf_a_i(m->v, "end_mask", 0),
             elm = (uint64_t)tf_a_i(m->v, "ellipsis_mask", 0), nm = (uint64_t)tf_a_i(m->v, "new_axis_mask", 0),
             sm = (uint64_t)tf_a_i(m->v, "shrink_axis_mask", 0);
    size_t n = nb, ell = n;                  /* no ellipsis: an implicit one after the last */
    for (size_t i = 0; i < n; i++)
        if (elm >> i & 1) {
            if (ell != n)
                return TF_DECLINE;           /* TensorFlow rejects two ellipses */
            ell = i;
        }
    const bd_shape *xs = &m->in[0]->shape;
    dense_dim d[32];
    size_t nd = 0;
    int64_t new_axes[32], squeeze[32];
    size_t n_new = 0, n_sq = 0;
    /* Dense entries after the ellipsis, to number them from the back. */
    size_t back_dense = 0;
    for (size_t i = ell + 1; i < n; i++)
        back_dense += !(nm >> i & 1);
    size_t front_final = 0, front_dense = 0, back_seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == ell)
            continue;
        bool front = i < ell;
        if (nm >> i & 1) {
            if (front)
                new_axes[n_new++] = (int64_t)front_final++;
            continue;
        }
        dense_dim *x = &d[nd++];
        x->axis = front ? (int64_t)front_dense++ : -(int64_t)(back_dense - back_seen);
        if (!front)
            back_seen++;
        x->step = st[i];
        x->shrink = sm >> i & 1;
        x->trivial = false;
        if (x->step == 0)
            return TF_DECLINE;
        /* The dim's size, when the translator knows it (for clamping a negative begin). */
        int64_t dim = -1;
        if (xs->rank >= 0) {
            int64_t a = x->axis < 0 ? xs->rank + x->axis : x->axis;
            if (a < 0 || a >= xs->rank)
                return TF_DECLINE;
            dim = xs->dims[a];
        }
        if (x->shrink) {
            if (x->step < 0)
                return TF_DECLINE;           /* TensorFlow: only stride 1 when indexing */
            x->start = b[i];
            x->end = b[i] == -1 ? INT64_MAX : b[i] + 1;
            x->step = 1;
            squeeze[n_sq++] = x->axis;
        } else {
            x->start = bm >> i & 1 ? (x->step > 0 ? 0 : INT64_MAX) : b[i];
            x->end = em >> i & 1 ? (x->step > 0 ? INT64_MAX : INT64_MIN) : e[i];
            /* TensorFlow clamps a backward begin to [-1, dim-1], ONNX to [0, dim-1]: a begin
             * before the front is an empty range in TensorFlow. */
            if (x->step < 0 && !(bm >> i & 1) && x->start < -1) {
                if (dim < 0)
                    return TF_DECLINE;
                if (x->start + dim < 0)
                    x->start = x->end = 0;
            }
            x->trivial = x->step == 1 && x->start == 0 && x->end == INT64_MAX;
        }
        if (front)
            front_final += !x->shrink;
    }
    /* New axes after the ellipsis, numbered from the back of the result. */
    size_t after = 0;
    for (size_t i = n; i-- > ell + 1;) {
        bool is_new = nm >> i & 1;
        if (is_new || !(sm >> i & 1))
            after++;
        if (is_new)
            new_axes[n_new++] = -(int64_t)after;
    }

    int64_t starts[32], ends[32], axes[32], steps[32];
    size_t k = 0;
    for (size_t i = 0; i < nd; i++)
        if (!d[i].trivial) {
            starts[k] = d[i].start;
            ends[k] = d[i].end;
            axes[k] = d[i].axis;
            steps[k++] = d[i].step;
        }
    bd_value *cur = m->in[0];
    bool last_slice = n_sq == 0 && n_new == 0;
    if (k) {
        bd_value *ins[5] = { cur, tf_k_i64(m, "starts", starts, k, err), tf_k_i64(m, "ends", ends, k, err),
                             tf_k_i64(m, "axes", axes, k, err), tf_k_i64(m, "steps", steps, k, err) };
        if (!ins[1] || !ins[2] || !ins[3] || !ins[4])
            return tf_rc(err);
        cur = tf_op(m, last_slice ? NULL : "slice", "Slice", ins, 5, last_slice ? m->out : NULL, NULL, err);
        if (!cur)
            return tf_rc(err);
    } else if (last_slice) {
        return tf_op1(m, NULL, "Identity", cur, m->out, NULL, 0, err) ? 0 : tf_rc(err);
    }
    if (n_sq) {
        bd_value *ax = tf_k_i64(m, "squeeze_axes", squeeze, n_sq, err);
        bd_value *ins[2] = { cur, ax };
        cur = ax ? tf_op(m, n_new ? "squeeze" : NULL, "Squeeze", ins, 2, n_new ? NULL : m->out, NULL, err) : NULL;
        if (!cur)
            return tf_rc(err);
    }
    if (n_new) {
        bd_value *ax = tf_k_i64(m, "new_axes", new_axes, n_new, err);
        bd_value *ins[2] = { cur, ax };
        if (!ax || !tf_op(m, NULL, "Unsqueeze", ins, 2, m->out, NULL, err))
            return tf_rc(err);
    }
    return 0;
}

static int map_slice(tf_mapctx *m, bd_error *err)
{
    int64_t b[TF_MAX_CONST_INTS], sz[TF_MAX_CONST_INTS], e[TF_MAX_CONST_INTS], ax[TF_MAX_CONST_INTS];
    size_t nb, ns;
    if (m->n_in != 3 || !tf_const_ints(m->in[1], b, BD_MAX_RANK, &nb) ||
        !tf_const_ints(m->in[2], sz, BD_MAX_RANK, &ns) || nb != ns)
        return TF_DECLINE;
    for (size_t i = 0; i < nb; i++) {
        if (b[i] < 0 || sz[i] < -1)
            return TF_DECLINE;
        e[i] = sz[i] == -1 ? INT64_MAX : b[i] + sz[i];
        ax[i] = (int64_t)i;
    }
    bd_value *ins[4] = { m->in[0], tf_k_i64(m, "starts", b, nb, err), tf_k_i64(m, "ends", e, nb, err),
                         tf_k_i64(m, "axes", ax, nb, err) };
    if (!ins[1] || !ins[2] || !ins[3])
        return tf_rc(err);
    return tf_op(m, NULL, "Slice", ins, 4, m->out, NULL, err) ? 0 : tf_rc(err);
}

/* ---- packing and splitting --------------------------------------------------------------- */

static int map_pack(tf_mapctx *m, bd_error *err)
{
    if (m->n_in < 1 || m->n_in > 4096)
        return TF_DECLINE;
    int64_t axis = tf_a_i(m->v, "axis", 0);
    bd_value *ax = tf_k_i64(m, "axis", &axis, 1, err);
    if (!ax)
        return tf_rc(err);
    if (m->n_in == 1) {
        bd_value *ins[2] = { m->in[0], ax };
        return tf_op(m, NULL, "Unsqueeze", ins, 2, m->out, NULL, err) ? 0 : tf_rc(err);
    }
    bd_value **parts = bd_graph_alloc(m->g, m->n_in * sizeof *parts);
    if (!parts)
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
    for (size_t k = 0; k < m->n_in; k++) {
        bd_value *ins[2] = { m->in[k], ax };
        if (!(parts[k] = tf_op(m, "expand", "Unsqueeze", ins, 2, NULL, NULL, err)))
            return tf_rc(err);
    }
    bd_node *n = NULL;
    if (!tf_op(m, NULL, "Concat", parts, m->n_in, m->out, &n, err))
        return tf_rc(err);
    return tf_set_int(m, n, "axis", axis, err);
}

/* Split X along AXIS into COUNT parts (SIZES[COUNT] or equal when NULL), the parts the graph
 * reads ending in m->outs; with SQUEEZE each part loses the axis (Unpack). */
static int emit_split(tf_mapctx *m, bd_value *x, int64_t axis, size_t count, const int64_t *sizes,
                      bool squeeze, bd_error *err)
{
    if (count < 1 || count > 4096 || m->n_outs > count)
        return TF_DECLINE;
    if (count == 1 && !squeeze)
        return tf_op1(m, NULL, "Identity", x, m->out, NULL, 0, err) ? 0 : tf_rc(err);
    bd_value **parts = bd_graph_alloc(m->g, count * sizeof *parts);
    if (!parts)
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
    for (size_t k = 0; k < count; k++) {
        parts[k] = !squeeze && k < m->n_outs ? m->outs[k] : tf_emit_temp(m, "part", err);
        if (!parts[k])
            return tf_rc(err);
    }
    bd_value *ins[2] = { x, NULL };
    if (sizes && !(ins[1] = tf_k_i64(m, "split", sizes, count, err)))
        return tf_rc(err);
    bd_node *n = NULL;
    int rc = count == 1 ? tf_emit_node(m, "split", "Identity", ins, 1, parts[0], &n, err)
                        : tf_emit_node_n(m, "split", "Split", ins, sizes ? 2 : 1, parts, count, &n, err);
    if (rc == 0 && count > 1)
        rc = tf_set_int(m, n, "axis", axis, err);
    if (rc || !squeeze)
        return rc;
    bd_value *ax = tf_k_i64(m, "axis", &axis, 1, err);
    for (size_t k = 0; ax && k < m->n_outs; k++) {
        bd_value *sq[2] = { parts[k], ax };
        if (!tf_op(m, NULL, "Squeeze", sq, 2, m->outs[k], NULL, err))
            return tf_rc(err);
    }
    return ax ? 0 : tf_rc(err);
}

static int map_unpack(tf_mapctx *m, bd_error *err)
{
    int64_t num = tf_a_i(m->v, "num", -1);
    if (m->n_in != 1 || num < 1)
        return TF_DECLINE;
    return emit_split(m, m->in[0], tf_a_i(m->v, "axis", 0), (size_t)num, NULL, true, err);
}

static int map_split(tf_mapctx *m, bd_error *err)
{
    int64_t axis, num = tf_a_i(m->v, "num_split", -1);
    size_t na;
    if (m->n_in != 2 || !tf_const_ints(m->in[0], &axis, 1, &na) || na != 1 || num < 1)
        return TF_DECLINE;
    return emit_split(m, m->in[1], axis, (size_t)num, NULL, false, err);
}

static int map_split_v(tf_mapctx *m, bd_error *err)
{
    int64_t sizes[TF_MAX_CONST_INTS], axis;
    size_t n, na;
    if (m->n_in != 3 || !tf_const_ints(m->in[1], sizes, TF_MAX_CONST_INTS, &n) ||
        !tf_const_ints(m->in[2], &axis, 1, &na) || na != 1 || n == 0)
        return TF_DECLINE;
    /* One size may be -1: the rest of the dim, known only from a static input shape. */
    int64_t sum = 0, open = -1;
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] == -1 && open < 0)
            open = (int64_t)i;
        else if (sizes[i] < 0)
            return TF_DECLINE;
        else
            sum += sizes[i];
    }
    if (open >= 0) {
        const bd_shape *s = &m->in[0]->shape;
        int64_t a = axis < 0 ? axis + s->rank : axis;
        if (s->rank < 0 || a < 0 || a >= s->rank || s->dims[a] < sum)
            return TF_DECLINE;
        sizes[open] = s->dims[a] - sum;
    }
    return emit_split(m, m->in[0], axis, n, sizes, false, err);
}

/* ---- filling and broadcasting ------------------------------------------------------------ */

static int map_tile(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *r = as_i64(m, "repeats", m->in[1], err);
    return r && tf_op2(m, NULL, "Tile", m->in[0], r, m->out, err) ? 0 : tf_rc(err);
}

static int map_fill(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *s = as_i64(m, "dims", m->in[0], err);
    return s && tf_op2(m, NULL, "Expand", m->in[1], s, m->out, err) ? 0 : tf_rc(err);
}

static int map_broadcast_to(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *s = as_i64(m, "shape", m->in[1], err);
    return s && tf_op2(m, NULL, "Expand", m->in[0], s, m->out, err) ? 0 : tf_rc(err);
}

static int map_zeros_ones_like(tf_mapctx *m, bd_error *err)
{
    int dt = t_dtype(m);
    if (m->n_in != 1 || dt == BD_DT_UNDEFINED)
        return TF_DECLINE;
    bd_value *k = tf_k_scalar(m, "value", dt, strcmp(m->v->op, "OnesLike") == 0 ? 1.0 : 0.0, err);
    bd_value *s = k ? tf_op1(m, "shape", "Shape", m->in[0], NULL, NULL, 0, err) : NULL;
    return s && tf_op2(m, NULL, "Expand", k, s, m->out, err) ? 0 : tf_rc(err);
}

static int map_range(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 3)
        return TF_DECLINE;
    return tf_op(m, NULL, "Range", m->in, 3, m->out, NULL, err) ? 0 : tf_rc(err);
}

/* SparseToDense with no sparse values (what converters leave of a Where over constants) is the
 * default value filled to output_shape; anything else is left to TensorFlow. */
static int map_sparse_to_dense(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 4 || !m->in[2]->data || m->in[2]->nbytes != 0 || m->in[3]->shape.rank != 0)
        return TF_DECLINE;
    bd_value *s = as_i64(m, "shape", m->in[1], err);
    return s && tf_op2(m, NULL, "Expand", m->in[3], s, m->out, err) ? 0 : tf_rc(err);
}

/* ---- gathers ----------------------------------------------------------------------------- */

static int map_gather(tf_mapctx *m, bd_error *err)
{
    bool v2 = strcmp(m->v->op, "GatherV2") == 0;
    int64_t axis = 0;
    size_t na;
    if (m->n_in != (v2 ? 3u : 2u) || (v2 && (!tf_const_ints(m->in[2], &axis, 1, &na) || na != 1)) ||
        tf_a_i(m->v, "batch_dims", 0) != 0)
        return TF_DECLINE;
    bd_node *n = NULL;
    if (!tf_op(m, NULL, "Gather", m->in, 2, m->out, &n, err))
        return tf_rc(err);
    return tf_set_int(m, n, "axis", axis, err);
}

static int map_gather_nd(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2)
        return TF_DECLINE;
    bd_value *idx = as_i64(m, "indices", m->in[1], err);
    return idx && tf_op2(m, NULL, "GatherND", m->in[0], idx, m->out, err) ? 0 : tf_rc(err);
}

static int map_top_k(tf_mapctx *m, bd_error *err)
{
    if (m->n_in != 2 || !tf_a_b(m->v, "sorted", true))
        return TF_DECLINE;
    int64_t k;
    size_t nk;
    bd_value *kv;
    if (tf_const_ints(m->in[1], &k, 1, &nk) && nk == 1) {
        kv = tf_k_i64(m, "k", &k, 1, err);
    } else {
        int64_t one = 1;
        bd_value *s = tf_k_i64(m, "k_shape", &one, 1, err);
        bd_value *c = s ? tf_cast(m, "k64", m->in[1], BD_DT_INT64, NULL, err) : NULL;
        kv = c ? tf_op2(m, "k", "Reshape", c, s, NULL, err) : NULL;
    }
    bd_value *idx = kv ? tf_emit_temp(m, "indices64", err) : NULL;
    if (!idx)
        return tf_rc(err);
    bd_value *outs[2] = { m->out, idx };
    bd_value *ins[2] = { m->in[0], kv };
    bd_node *n = NULL;
    int rc = tf_emit_node_n(m, NULL, "TopK", ins, 2, outs, 2, &n, err);
    if (rc == 0)
        rc = tf_set_int(m, n, "axis", -1, err);
    if (rc == 0 && m->n_outs > 1)
        rc = tf_cast(m, "indices", idx, BD_DT_INT32, m->outs[1], err) ? 0 : tf_rc(err);
    return rc;
}

/* ---- block rearrangements ---------------------------------------------------------------- */

static int map_depth_space(tf_mapctx *m, bd_error *err)
{
    int64_t bs = tf_a_i(m->v, "block_size", 0);
    const tf_attr *df = tf_view_attr(m->v, "data_format");
    if (m->n_in != 1 || bs < 2 || (df && !tf_a_s_is(m->v, "data_format", "NHWC")))
        return TF_DECLINE;
    const char *op = strcmp(m->v->op, "DepthToSpace") == 0 ? "DepthToSpace" : "SpaceToDepth";
    static const int64_t to_nchw[4] = { 0, 3, 1, 2 }, to_nhwc[4] = { 0, 2, 3, 1 };
    bd_node *n = NULL;
    bd_value *x = tf_op(m, "nchw", "Transpose", &m->in[0], 1, NULL, &n, err);
    if (!x || tf_set_ints(m, n, "perm", to_nchw, 4, err))
        return tf_rc(err);
    bd_value *y = tf_op1(m, "block", op, x, NULL, "blocksize", bs, err);
    if (!y)
        return tf_rc(err);
    if (strcmp(op, "DepthToSpace") == 0 && tf_set_str(m, y->producer, "mode", "DCR", err))
        return tf_rc(err);
    if (!tf_op(m, NULL, "Transpose", &y, 1, m->out, &n, err))
        return tf_rc(err);
    return tf_set_ints(m, n, "perm", to_nhwc, 4, err);
}

static int map_mirror_pad(tf_mapctx *m, bd_error *err)
{
    int64_t p[2 * BD_MAX_RANK], pads[2 * BD_MAX_RANK];
    size_t np;
    if (m->n_in != 2 || !tf_a_s_is(m->v, "mode", "REFLECT") ||
        !tf_const_ints(m->in[1], p, 2 * BD_MAX_RANK, &np) || np % 2)
        return TF_DECLINE;
    size_t r = np / 2;
    for (size_t i = 0; i < r; i++) {
        pads[i] = p[2 * i];
        pads[r + i] = p[2 * i + 1];
    }
    bd_value *pv = tf_k_i64(m, "pads", pads, np, err);
    bd_node *n = NULL;
    bd_value *ins[2] = { m->in[0], pv };
    if (!pv || !tf_op(m, NULL, "Pad", ins, 2, m->out, &n, err))
        return tf_rc(err);
    return tf_set_str(m, n, "mode", "reflect", err);
}

/* A two-operand Einsum that is a batched matrix product (every letter once per term; the
 * batch letters in all three terms, one contracted letter, one free letter per operand),
 * as Keras' MultiHeadAttention writes ("BTNH,BSNH->BNTS", "BNTS,BSNH->BTNH"): Transposes
 * around one MatMul, which oneDNN runs. Returns 1 when EQ is not of that form. */
static int einsum_as_matmul(tf_mapctx *m, const char *eq, bd_error *err)
{
    char x[16], y[16], z[16];
    const char *comma = strchr(eq, ','), *arrow = strstr(eq, "->");
    if (!comma || !arrow || comma > arrow || strchr(comma + 1, ',') || strchr(eq, '.'))
        return TF_DECLINE;
    size_t nx = (size_t)(comma - eq), ny = (size_t)(arrow - comma - 1), nz = strlen(arrow + 2);
    if (nx < 2 || ny < 2 || nz < 2 || nx >= sizeof x || ny >= sizeof y || nz >= sizeof z ||
        nx > BD_MAX_RANK || ny > BD_MAX_RANK || nz > BD_MAX_RANK)
        return TF_DECLINE;
    memcpy(x, eq, nx); x[nx] = 0;
    memcpy(y, comma + 1, ny); y[ny] = 0;
    memcpy(z, arrow + 2, nz); z[nz] = 0;
    const char *terms[3] = { x, y, z };
    for (int t = 0; t < 3; t++)
        for (const char *c = terms[t]; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')) || strchr(c + 1, *c))
                return TF_DECLINE;
    char batch[16], k = 0, l = 0, r = 0;
    size_t nb = 0;
    for (const char *c = z; *c; c++) {
        bool in_x = strchr(x, *c), in_y = strchr(y, *c);
        if (in_x && in_y)
            batch[nb++] = *c;
        else if (in_x && !l)
            l = *c;
        else if (in_y && !r)
            r = *c;
        else
            return TF_DECLINE;
    }
    for (const char *c = x; *c; c++)
        if (!strchr(z, *c)) {
            if (k || !strchr(y, *c))
                return TF_DECLINE;
            k = *c;
        }
    for (const char *c = y; *c; c++)
        if (!strchr(z, *c) && *c != k)
            return TF_DECLINE;
    if (!k || !l || !r || nx != nb + 2 || ny != nb + 2 || nz != nb + 2)
        return TF_DECLINE;
    /* A' = X as [batch, l, k], B' = Y as [batch, k, r], MatMul -> [batch, l, r], then Z. */
    char want_a[16], want_b[16], prod[16];
    memcpy(want_a, batch, nb); want_a[nb] = l; want_a[nb + 1] = k;
    memcpy(want_b, batch, nb); want_b[nb] = k; want_b[nb + 1] = r;
    memcpy(prod, batch, nb); prod[nb] = l; prod[nb + 1] = r;
    int64_t pa[BD_MAX_RANK], pb[BD_MAX_RANK], pz[BD_MAX_RANK];
    bool ida = true, idb = true, idz = true;
    size_t n = nb + 2;
    for (size_t i = 0; i < n; i++) {
        pa[i] = strchr(x, want_a[i]) - x;
        pb[i] = strchr(y, want_b[i]) - y;
        pz[i] = memchr(prod, z[i], n) ? (const char *)memchr(prod, z[i], n) - prod : 0;
        ida &= pa[i] == (int64_t)i;
        idb &= pb[i] == (int64_t)i;
        idz &= pz[i] == (int64_t)i;
    }
    bd_value *a = m->in[0], *b = m->in[1];
    bd_node *node = NULL;
    if (!ida && (!(a = tf_op(m, "a", "Transpose", &m->in[0], 1, NULL, &node, err)) ||
                 tf_set_ints(m, node, "perm", pa, n, err)))
        return tf_rc(err);
    if (!idb && (!(b = tf_op(m, "b", "Transpose", &m->in[1], 1, NULL, &node, err)) ||
                 tf_set_ints(m, node, "perm", pb, n, err)))
        return tf_rc(err);
    bd_value *mm = tf_op2(m, idz ? NULL : "matmul", "MatMul", a, b, idz ? m->out : NULL, err);
    if (!mm)
        return tf_rc(err);
    if (idz)
        return 0;
    if (!tf_op(m, NULL, "Transpose", &mm, 1, m->out, &node, err))
        return tf_rc(err);
    return tf_set_ints(m, node, "perm", pz, n, err);
}

static int map_einsum(tf_mapctx *m, bd_error *err)
{
    const tf_attr *eq = tf_view_attr(m->v, "equation");
    if (m->n_in < 1 || m->n_in > 8 || !eq || eq->kind != TF_ATTR_S || eq->s.n == 0 || eq->s.n > 256)
        return TF_DECLINE;
    const char *s = bd_graph_strdup(m->g, (const char *)eq->s.p, eq->s.n);
    if (!s)
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
    for (size_t i = 0; i < eq->s.n; i++)
        if (s[i] == '\0')
            return TF_DECLINE;
    if (m->n_in == 2) {
        int rc = einsum_as_matmul(m, s, err);
        if (rc != TF_DECLINE)
            return rc;
    }
    bd_node *n = NULL;
    if (!tf_op(m, NULL, "Einsum", m->in, m->n_in, m->out, &n, err))
        return tf_rc(err);
    return tf_set_str(m, n, "equation", s, err);
}

#define ANY TF_MAP_ANY_T
#define MULTI TF_MAP_MULTI_OUT
const tf_op_entry tf_array_ops[] = {
    { "Shape", map_shape, ANY },              { "Size", map_shape, ANY },
    { "StridedSlice", map_strided_slice, ANY }, { "Slice", map_slice, ANY },
    { "Pack", map_pack, ANY },                { "Unpack", map_unpack, ANY | MULTI },
    { "Split", map_split, ANY | MULTI },      { "SplitV", map_split_v, ANY | MULTI },
    { "Tile", map_tile, ANY },                { "Fill", map_fill, ANY },
    { "BroadcastTo", map_broadcast_to, ANY }, { "ZerosLike", map_zeros_ones_like, ANY },
    { "OnesLike", map_zeros_ones_like, ANY }, { "Range", map_range, ANY },
    { "GatherV2", map_gather, ANY },          { "Gather", map_gather, ANY },
    { "GatherNd", map_gather_nd, ANY },       { "TopKV2", map_top_k, ANY | MULTI },
    { "DepthToSpace", map_depth_space, ANY }, { "SpaceToDepth", map_depth_space, ANY },
    { "MirrorPad", map_mirror_pad, ANY },     { "SparseToDense", map_sparse_to_dense, ANY },     { "Einsum", map_einsum, 0 },
    { NULL, NULL, 0 },
};
