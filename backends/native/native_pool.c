/* Pooling on NCHW-ordered tensors of any spatial rank: MaxPool (with its INT64 Indices output,
 * storage_order, on float, double and integers), AveragePool (count_include_pad), LpPool, and
 * GlobalAveragePool, GlobalMaxPool and GlobalLpPool. oneDNN takes the FP32 forms it has
 * primitives for; these kernels take the rest.
 *
 * The window (kernel_shape, strides, dilations, pads or auto_pad, ceil_mode) is resolved at
 * compile as shape inference resolves it, and the output's shape must be the one it gives.
 * Each output element folds the taps of its window that fall inside the input: the first
 * maximum (its flat index into X, row-major, or column-major over the spatial dims with
 * storage_order 1), the mean over the taps inside (count_include_pad: over the taps inside
 * the padded input), or (sum |x|^p)^(1/p). A window with no tap inside gives 0 (and index
 * -1), as ONNX's reference. Planes (n, c) split across the plan's threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_window.h"

enum { PL_MAX, PL_AVG, PL_LP };

typedef struct pl_geom {
    nv_window w;
    bool      include_pad, col_major;
    double    p;
} pl_geom;

static int kind_of(const char *op)
{
    return strstr(op, "Max") ? PL_MAX : strstr(op, "Lp") ? PL_LP : PL_AVG;
}

static bool is_global(const char *op)
{
    return !strncmp(op, "Global", 6);
}

/* The window of N over X (static) into G: the whole spatial extent for the global pools;
 * false when it does not resolve or a pad reaches a whole window. */
static bool resolve(const bd_node *n, const bd_shape *x, pl_geom *g)
{
    memset(g, 0, sizeof *g);
    g->include_pad = bd_node_attr_int(n, "count_include_pad", 0) != 0;
    g->col_major = bd_node_attr_int(n, "storage_order", 0) != 0;
    g->p = (double)bd_node_attr_int(n, "p", 2);
    nv_window *w = &g->w;
    if (is_global(n->op_type)) {
        if (x->rank < 3 || x->rank > BD_MAX_RANK)
            return false;
        w->ns = x->rank - 2;
        for (int i = 0; i < w->ns; i++) {
            w->in[i] = w->k[i] = x->dims[2 + i];
            w->st[i] = w->dil[i] = w->out[i] = 1;
        }
        return true;
    }
    if (!nv_window_resolve(n, x, NULL, w))
        return false;
    for (int i = 0; i < w->ns; i++)
        if (w->pb[i] >= (w->k[i] - 1) * w->dil[i] + 1 || w->pe[i] >= (w->k[i] - 1) * w->dil[i] + 1)
            return false;
    return true;
}

static bool pool_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    int kind = kind_of(n->op_type);
    bool indices = kind == PL_MAX && !is_global(n->op_type) && n->n_outputs == 2;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs < 1 || n->n_outputs > 1u + indices)
        return nv_why(why, len, "%s: expects X and %s", n->op_type,
                      kind == PL_MAX ? "Y and optional Indices" : "one output");
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    unsigned mask = kind == PL_MAX ? NV_DT_NUMERIC & ~(NV_DT(BD_DT_INT64) | NV_DT(BD_DT_UINT64))
                                   : NV_DT_FLOATS;
    if (!nv_value_ok(x, mask) || !nv_value_ok(y, NV_DT(x->dtype)) ||
        (indices && !nv_value_ok(n->outputs[1], NV_DT(BD_DT_INT64))))
        return nv_why(why, len, "%s: dtypes (X %s), or a shape only known at run time",
                      n->op_type, bd_dtype_name(x->dtype));
    const char *f = bd_node_attr_string(n, "data_format", "NCHW");
    if (strcmp(f, "NCHW") && strcmp(f, "NCW") && strcmp(f, "NCDHW"))
        return nv_why(why, len, "%s: data_format '%s'", n->op_type, f);
    pl_geom geom;
    if (x->shape.rank < 3 || !resolve(n, &x->shape, &geom))
        return nv_why(why, len, "%s: the window does not fit X (rank >= 3), or a pad reaches a "
                      "whole window", n->op_type);
    if (kind == PL_LP && geom.p < 1)
        return nv_why(why, len, "%s: p = %g, expected >= 1", n->op_type, geom.p);
    int64_t dims[BD_MAX_RANK] = { x->shape.dims[0], x->shape.dims[1] };
    for (int i = 0; i < geom.w.ns; i++)
        dims[2 + i] = geom.w.out[i];
    bd_shape want = bd_shape_make(x->shape.rank, dims);
    for (size_t k = 0; k < n->n_outputs; k++)
        if (!bd_shape_equal(&n->outputs[k]->shape, &want))
            return nv_why(why, len, "%s: the output's shape is not what the window gives",
                          n->op_type);
    return true;
}

/* ---- the kernel ------------------------------------------------------------------------------- */

typedef struct pl_job {
    const nv_step *s;
    const pl_geom *g;
    const void    *x;
    void          *y;
    int64_t       *idx;           /* MaxPool's Indices, or NULL */
    int            dtype;
    size_t         plane_in, plane_out;
} pl_job;

/* The flat spatial index of POS (one coordinate per spatial dim), row- or column-major. */
static int64_t spatial_index(const pl_geom *g, const int64_t *pos)
{
    int64_t at = 0;
    if (g->col_major)
        for (int i = g->w.ns - 1; i >= 0; i--)
            at = at * g->w.in[i] + pos[i];
    else
        for (int i = 0; i < g->w.ns; i++)
            at = at * g->w.in[i] + pos[i];
    return at;
}

/* The output element at O (spatial coordinates) of plane X: its value, and for MaxPool the
 * flat spatial index of the maximum (-1 when no tap is inside). */
static double pool_window(const pl_job *j, const char *x, const int64_t *o, int64_t *arg)
{
    const pl_geom *g = j->g;
    int kind = j->s->op, ns = g->w.ns;
    int64_t t[NV_SPATIAL] = { 0 }, pos[NV_SPATIAL], best_pos[NV_SPATIAL];
    double acc = 0, best = 0;
    size_t inside = 0, padded = 0;
    bool found = false;
    for (int i = 0; i < ns; i++)
        if (g->w.k[i] == 0) {           /* a global pool over an empty axis */
            *arg = -1;
            return 0;
        }
    for (;;) {
        bool in = true, in_pad = true;
        int64_t off = 0;
        for (int i = 0; i < ns; i++) {
            pos[i] = o[i] * g->w.st[i] - g->w.pb[i] + t[i] * g->w.dil[i];
            in = in && pos[i] >= 0 && pos[i] < g->w.in[i];
            in_pad = in_pad && pos[i] < g->w.in[i] + g->w.pe[i];
            off = off * g->w.in[i] + pos[i];
        }
        padded += in_pad;
        if (in) {
            double v = nv_get_f(x, j->dtype, (size_t)off);
            inside++;
            if (kind == PL_MAX) {
                if (!found || v > best) {
                    best = v;
                    memcpy(best_pos, pos, sizeof pos);
                    found = true;
                }
            } else {
                acc += kind == PL_LP ? pow(fabs(v), g->p) : v;
            }
        }
        int i = ns - 1;
        for (; i >= 0 && ++t[i] == g->w.k[i]; i--)
            t[i] = 0;
        if (i < 0)
            break;
    }
    if (kind == PL_MAX) {
        *arg = found ? spatial_index(g, best_pos) : -1;
        return best;
    }
    if (kind == PL_LP)
        return pow(acc, 1 / g->p);
    size_t count = g->include_pad ? padded : inside;
    return count ? acc / (double)count : 0;
}

/* Planes [LO, LO + CNT) of N x C. */
static void pool_planes(void *vjob, size_t lo, size_t cnt)
{
    const pl_job *j = vjob;
    const pl_geom *g = j->g;
    size_t es = bd_dtype_size(j->dtype);
    for (size_t pl = lo; pl < lo + cnt; pl++) {
        const char *x = (const char *)j->x + pl * j->plane_in * es;
        int64_t o[NV_SPATIAL] = { 0 };
        for (size_t q = 0; q < j->plane_out; q++) {
            int64_t arg = -1;
            double v = pool_window(j, x, o, &arg);
            size_t at = pl * j->plane_out + q;
            nv_set_f(j->y, j->dtype, at, v);
            if (j->idx)
                j->idx[at] = arg < 0 ? -1 : (int64_t)(pl * j->plane_in) + arg;
            for (int i = g->w.ns - 1; i >= 0 && ++o[i] == g->w.out[i]; i--)
                o[i] = 0;
        }
    }
}

static int pool_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)env;
    (void)err;
    const pl_geom *g = s->heap;
    pl_job j = { .s = s, .g = g, .x = in[0].data, .y = out[0].data, .dtype = in[0].dtype,
                 .idx = s->n_out > 1 ? out[1].data : NULL, .plane_in = 1, .plane_out = 1 };
    for (int i = 0; i < g->w.ns; i++) {
        j.plane_in *= (size_t)g->w.in[i];
        j.plane_out *= (size_t)g->w.out[i];
    }
    size_t planes = (size_t)in[0].dims[0] * (size_t)in[0].dims[1], taps = 1;
    for (int i = 0; i < g->w.ns; i++)
        taps *= (size_t)g->w.k[i];
    if (planes && j.plane_out)
        nv_parallel_for(planes, planes * j.plane_out * taps, pool_planes, &j);
    return 0;
}

static int pool_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    pl_geom *g = malloc(sizeof *g);
    if (!g)
        return bd_error_set(err, BD_ENOMEM, "out of memory preparing %s", n->op_type);
    resolve(n, &n->inputs[0]->shape, g);
    s->heap = g;
    s->op = kind_of(n->op_type);
    s->run = pool_run;
    return 0;
}

const nv_op nv_pool_ops[] = {
    { "MaxPool", pool_supports, pool_prepare },
    { "AveragePool", pool_supports, pool_prepare },
    { "LpPool", pool_supports, pool_prepare },
    { "GlobalMaxPool", pool_supports, pool_prepare },
    { "GlobalAveragePool", pool_supports, pool_prepare },
    { "GlobalLpPool", pool_supports, pool_prepare },
};
const size_t nv_pool_n = sizeof nv_pool_ops / sizeof nv_pool_ops[0];
