/* Expand and Tile of any dtype: both repeat blocks of the input, so one kernel runs both.
 * Expand is a Tile whose repeats are the output dim along each broadcast (size-1) dim. A run
 * copies the input's rows into their place in the output (each row a memcpy), then, from the
 * innermost repeated dim outwards, replicates each filled block with memcpy doubling: no
 * per-element work. Each run computes the output dims from the repeats or target shape (a
 * constant or a run-time tensor): a static output must get the plan's shape, a run-time-shaped
 * one is sized by them (nv_output_shape). */
#include <string.h>

#include "backends/native/native_movement.h"

/* The collapsed repetition: input dims X, each repeated REP times (output dim X * REP). */
typedef struct tile_plan {
    int     rank;
    int64_t x[BD_MAX_RANK], rep[BD_MAX_RANK];
} tile_plan;

enum { OP_EXPAND = 1, OP_TILE };

/* ---- the checks: what the shape or repeats give, against the plan ------------------------ */

/* Expand: X (rank XR) broadcast with SHAPE (LEN values) into DIMS, of rank *YR. */
static int expand_dims(int xr, const int64_t *xd, const int64_t *shape, int64_t len, int *yr,
                       int64_t *dims, bd_error *err)
{
    if (len > BD_MAX_RANK)
        return bd_error_set(err, BD_EINVAL, "Expand: shape has %lld values, at most %d",
                            (long long)len, BD_MAX_RANK);
    *yr = xr > len ? xr : (int)len;
    for (int d = 0; d < *yr; d++) {
        int64_t a = d >= *yr - xr ? xd[d - (*yr - xr)] : 1;
        int64_t b = d >= *yr - len ? shape[d - (*yr - len)] : 1;
        if (b < 0 || (a != b && a != 1 && b != 1))
            return bd_error_set(err, BD_EINVAL, "Expand: shape value %lld does not broadcast "
                                "with input dim %lld", (long long)b, (long long)a);
        dims[d] = a == 1 ? b : a;
    }
    return 0;
}

/* Tile: X (rank R) repeated by REPS (COUNT values) into DIMS. */
static int tile_dims(int r, const int64_t *xd, const int64_t *reps, int64_t count, int64_t *dims,
                     bd_error *err)
{
    if (count != r)
        return bd_error_set(err, BD_EINVAL, "Tile: %lld repeats for rank %d", (long long)count, r);
    for (int d = 0; d < r; d++)
        if (reps[d] < 0 || __builtin_mul_overflow(xd[d], reps[d], &dims[d]))
            return bd_error_set(err, BD_EINVAL, "Tile: repeats[%d] = %lld is invalid for dim "
                                "%lld", d, (long long)reps[d], (long long)xd[d]);
    return 0;
}

/* The output dims (*YR of them) the second input's values V (COUNT of them) give. */
static int target_dims(int op, const bd_shape *x, const int64_t *v, int64_t count, int *yr,
                       int64_t *dims, bd_error *err)
{
    *yr = x->rank;
    return op == OP_EXPAND ? expand_dims(x->rank, x->dims, v, count, yr, dims, err)
                           : tile_dims(x->rank, x->dims, v, count, dims, err);
}

/* Checks both ops share: the operands' form, and the target when it is a constant. The output
 * may be run-time-shaped when the target is a run-time tensor. */
static bool repeat_supports(const bd_node *n, int op, char *why, size_t len)
{
    if (n->n_inputs != 2 || !n->inputs[1])
        return nv_why(why, len, "%s: expects two inputs", n->op_type);
    if (!nv_move_io_ok(n, !nv_input_const(n, 1), why, len))
        return false;
    const bd_value *v = n->inputs[1];
    if (!nv_value_ok(v, NV_DT(BD_DT_INT64)) || v->shape.rank != 1 ||
        nv_shape_numel(&v->shape) > BD_MAX_RANK)
        return nv_why(why, len, "%s: input 2 must be a static INT64 vector of at most %d values",
                      n->op_type, BD_MAX_RANK);
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    int yr = op == OP_TILE ? x->rank : x->rank > v->shape.dims[0] ? x->rank : (int)v->shape.dims[0];
    if (y->rank >= 0 && y->rank != yr)
        return nv_why(why, len, "%s: output rank %d, the inputs give %d", n->op_type, y->rank, yr);
    if (!nv_input_const(n, 1))
        return true;                    /* checked at each run */
    int64_t vals[BD_MAX_RANK], dims[BD_MAX_RANK];
    int64_t count = nv_const_ints(v, vals, BD_MAX_RANK);
    bd_error err = { 0 };
    if (target_dims(op, x, vals, count, &yr, dims, &err))
        return nv_why(why, len, "%s", err.msg);
    if (memcmp(dims, y->dims, (size_t)y->rank * sizeof *dims))
        return nv_why(why, len, "%s: the output shape is not what input 2 gives", n->op_type);
    return true;
}

bool nv_expand_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    return repeat_supports(n, OP_EXPAND, why, len);
}

bool nv_tile_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    return repeat_supports(n, OP_TILE, why, len);
}

/* ---- the kernel -------------------------------------------------------------------------- */

/* An index over the leading M dims of DIMS, with its byte offset by strides ST. */
typedef struct odometer {
    int     m;
    int64_t idx[BD_MAX_RANK];
    size_t  off;
} odometer;

/* Step O to the next index; false after the last one. */
static bool odo_next(odometer *o, const int64_t *dims, const size_t *st)
{
    for (int d = o->m - 1; d >= 0; d--) {
        o->off += st[d];
        if (++o->idx[d] < dims[d])
            return true;
        o->off -= st[d] * (size_t)dims[d];
        o->idx[d] = 0;
    }
    return false;
}

static void tile_fill(const tile_plan *p, const char *x, char *y, size_t es)
{
    int r = p->rank, k = r;
    size_t st[BD_MAX_RANK], acc = es, run = es;
    for (int d = r - 1; d >= 0; d--) {          /* the output's byte strides */
        st[d] = acc;
        acc *= (size_t)(p->x[d] * p->rep[d]);
    }
    while (k > 0 && p->rep[k - 1] == 1)        /* the unrepeated tail: contiguous in both */
        run *= (size_t)p->x[--k];
    odometer o = { .m = k };
    do {                                        /* the input's rows into their first copy */
        memcpy(y + o.off, x, run);
        x += run;
    } while (odo_next(&o, p->x, st));
    for (int d = k - 1; d >= 0; d--) {          /* then each repeated dim, inside out */
        if (p->rep[d] == 1)
            continue;
        o = (odometer){ .m = d };
        do
            nv_replicate(y + o.off, (size_t)p->x[d] * st[d], (size_t)p->rep[d]);
        while (odo_next(&o, p->x, st));
    }
}

/* The repetition of X (rank XR) into Y (rank YR >= XR): X's dims padded to YR, dims that
 * neither exist nor repeat dropped, and neighbours merged that are both unrepeated (one
 * longer row) or both size 1 (one larger repeat). */
static void tile_plan_make(int xr, const int64_t *xd, int yr, const int64_t *yd, tile_plan *p)
{
    p->rank = 0;
    for (int d = 0; d < yr; d++) {
        int64_t x = d >= yr - xr ? xd[d - (yr - xr)] : 1;
        int64_t rep = x ? yd[d] / x : 1;
        int r = p->rank;
        if (x == 1 && rep == 1)
            continue;
        if (r > 0 && rep == 1 && p->rep[r - 1] == 1)
            p->x[r - 1] *= x;
        else if (r > 0 && x == 1 && p->x[r - 1] == 1)
            p->rep[r - 1] *= rep;
        else {
            p->x[r] = x;
            p->rep[r] = rep;
            p->rank++;
        }
    }
}

static int tile_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    int64_t vals[BD_MAX_RANK], dims[BD_MAX_RANK];
    int yr;
    int64_t count = nv_run_ints(&in[1], vals, BD_MAX_RANK, s->node->op_type, err);
    if (count < 0)
        return (int)count;
    bd_shape x = bd_shape_make(in[0].rank, in[0].dims);
    int rc = target_dims(s->op, &x, vals, count, &yr, dims, err);
    if (rc || (rc = nv_output_shape(env, s, out, 0, yr, dims, err)) || out[0].numel == 0)
        return rc;
    tile_plan p;
    tile_plan_make(in[0].rank, in[0].dims, yr, dims, &p);
    tile_fill(&p, in[0].data, out[0].data, bd_dtype_size(in[0].dtype));
    return 0;
}

int nv_tile_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)err;
    s->op = strcmp(n->op_type, "Expand") ? OP_TILE : OP_EXPAND;
    s->run = tile_run;
    return 0;
}
