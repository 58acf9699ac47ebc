/* Expand and Tile of any dtype: both repeat blocks of the input, so one kernel runs both.
 * Expand is a Tile whose repeats are the output dim along each broadcast (size-1) dim. A run
 * copies the input's rows into their place in the output (each row a memcpy), then, from the
 * innermost repeated dim outwards, replicates each filled block with memcpy doubling: no
 * per-element work. The repeats or target shape may be run-time tensors: the plan's output
 * shape fixes the copy, and each run checks the tensors give exactly that shape. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_movement.h"

void nv_replicate(void *dst, size_t unit, size_t count)
{
    char *p = dst;
    for (size_t have = 1; have < count;) {
        size_t more = have < count - have ? have : count - have;
        memcpy(p + have * unit, p, more * unit);
        have += more;
    }
}

/* The collapsed repetition: input dims X, each repeated REP times (output dim X * REP). */
typedef struct tile_plan {
    int     rank;
    int64_t x[BD_MAX_RANK], rep[BD_MAX_RANK];
} tile_plan;

enum { OP_EXPAND = 1, OP_TILE };

/* ---- the checks: what the shape or repeats give, against the plan ------------------------ */

/* Expand: X (rank XR) broadcast with SHAPE (LEN values) into DIMS, of rank YR. */
static int expand_dims(int xr, const int64_t *xd, const int64_t *shape, int64_t len, int yr,
                       int64_t *dims, bd_error *err)
{
    if ((xr > len ? xr : len) != yr)
        return bd_error_set(err, BD_EINVAL, "Expand: shape has %lld values for an input of rank "
                            "%d, the plan's output has rank %d", (long long)len, xr, yr);
    for (int d = 0; d < yr; d++) {
        int64_t a = d >= yr - xr ? xd[d - (yr - xr)] : 1;
        int64_t b = d >= yr - len ? shape[d - (yr - len)] : 1;
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

/* The output dims N's (or the run's) second input V (COUNT values) gives. */
static int target_dims(int op, const bd_shape *x, const int64_t *v, int64_t count, int yr,
                       int64_t *dims, bd_error *err)
{
    return op == OP_EXPAND ? expand_dims(x->rank, x->dims, v, count, yr, dims, err)
                           : tile_dims(x->rank, x->dims, v, count, dims, err);
}

/* Checks both ops share: the operands' form, and the target when it is a constant. */
static bool repeat_supports(const bd_node *n, int op, char *why, size_t len)
{
    if (n->n_inputs != 2 || !n->inputs[1])
        return nv_why(why, len, "%s: expects two inputs", n->op_type);
    if (!nv_move_io_ok(n, why, len))
        return false;
    const bd_value *v = n->inputs[1];
    if (!nv_value_ok(v, NV_DT(BD_DT_INT64)) || v->shape.rank != 1 ||
        nv_shape_numel(&v->shape) > BD_MAX_RANK)
        return nv_why(why, len, "%s: input 2 must be a static INT64 vector of at most %d values",
                      n->op_type, BD_MAX_RANK);
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    if (y->rank < x->rank || (op == OP_TILE && y->rank != x->rank))
        return nv_why(why, len, "%s: output rank %d for input rank %d", n->op_type, y->rank,
                      x->rank);
    if (!nv_input_const(n, 1))
        return true;                    /* checked at each run */
    int64_t vals[BD_MAX_RANK], dims[BD_MAX_RANK];
    int64_t count = nv_const_ints(v, vals, BD_MAX_RANK);
    bd_error err = { 0 };
    if (target_dims(op, x, vals, count, y->rank, dims, &err))
        return nv_why(why, len, "%s", err.msg);
    if (memcmp(dims, y->dims, (size_t)y->rank * sizeof *dims))
        return nv_why(why, len, "%s: the output shape is not what input 2 gives", n->op_type);
    return true;
}

bool nv_expand_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!repeat_supports(n, OP_EXPAND, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    for (int d = 0; d < x->rank; d++) {     /* a run-time shape can only repeat size-1 dims */
        int64_t a = x->dims[d], b = y->dims[d + y->rank - x->rank];
        if (a != b && a != 1)
            return nv_why(why, len, "Expand: input dim %lld cannot become %lld", (long long)a,
                          (long long)b);
    }
    return true;
}

bool nv_tile_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (!repeat_supports(n, OP_TILE, why, len))
        return false;
    const bd_shape *x = &n->inputs[0]->shape, *y = &n->outputs[0]->shape;
    for (int d = 0; d < x->rank; d++)
        if (x->dims[d] ? y->dims[d] % x->dims[d] != 0 : y->dims[d] != 0)
            return nv_why(why, len, "Tile: output dim %lld is not a multiple of input dim %lld",
                          (long long)y->dims[d], (long long)x->dims[d]);
    return true;
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

static int tile_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    int64_t vals[BD_MAX_RANK], dims[BD_MAX_RANK];
    int64_t count = nv_run_ints(&in[1], vals, BD_MAX_RANK, s->node->op_type, err);
    if (count < 0)
        return (int)count;
    bd_shape x = bd_shape_make(in[0].rank, in[0].dims);
    int rc = target_dims(s->op, &x, vals, count, out[0].rank, dims, err);
    if (rc || (rc = nv_dims_match(&out[0], dims, s->node->op_type, err)))
        return rc;
    if (out[0].numel)
        tile_fill(s->heap, in[0].data, out[0].data, bd_dtype_size(in[0].dtype));
    return 0;
}

/* Pad X's dims to the output's rank, drop dims that neither exist nor repeat, and merge
 * neighbours that are both unrepeated (one longer row) or both size 1 (one larger repeat). */
int nv_tile_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    const bd_shape *xs = &n->inputs[0]->shape, *ys = &n->outputs[0]->shape;
    tile_plan *p = calloc(1, sizeof *p);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    for (int d = 0; d < ys->rank; d++) {
        int64_t x = d >= ys->rank - xs->rank ? xs->dims[d - (ys->rank - xs->rank)] : 1;
        int64_t rep = x ? ys->dims[d] / x : 1;
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
    s->op = strcmp(n->op_type, "Expand") ? OP_TILE : OP_EXPAND;
    s->heap = p;
    s->run = tile_run;
    return 0;
}
