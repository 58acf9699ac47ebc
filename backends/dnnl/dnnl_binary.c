/* Add/Sub/Mul/Div/Max/Min (two inputs) with numpy broadcasting as a oneDNN binary primitive.
 * The full-shape operand is src0 (swapped for Add/Mul/Max/Min when needed) and keeps its
 * layout; a full-shape src1 is brought to src0's layout, a broadcast src1 too when src0 is
 * channel-blocked (oneDNN's jit binary wants them alike; a plain one runs on the reference
 * kernel), else it is read plain. A src1 along src0's innermost axis (per channel beside
 * channels-last data, a last-axis bias) runs on braid's kernel (dnnl_bcast.c). In place when
 * src0 dies here. */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static dnnl_alg_kind_t alg_of(const char *op, bool *commutes)
{
    *commutes = !strcmp(op, "Add") || !strcmp(op, "Mul") || !strcmp(op, "Max") || !strcmp(op, "Min");
    if (!strcmp(op, "Max")) return dnnl_binary_max;
    if (!strcmp(op, "Min")) return dnnl_binary_min;
    if (!strcmp(op, "Add")) return dnnl_binary_add;
    if (!strcmp(op, "Sub")) return dnnl_binary_sub;
    if (!strcmp(op, "Mul")) return dnnl_binary_mul;
    return dnnl_binary_div;
}

/* Which input is src0 (has the output's shape): 0, 1 (swapped), or -1. A swapped Sub is
 * computed as -(b - a) (a linear post-op negates). */
static int src0_index(const bd_node *n)
{
    bool commutes;
    alg_of(n->op_type, &commutes);
    const bd_shape *y = &n->outputs[0]->shape;
    if (bd_shape_equal(&n->inputs[0]->shape, y))
        return 0;
    if ((commutes || !strcmp(n->op_type, "Sub")) && bd_shape_equal(&n->inputs[1]->shape, y))
        return 1;
    return -1;
}

/* Y = A op B with B along A's innermost axis of C (dn_bcast_fits), on braid's kernel
 * (dnnl_bcast.c); REV: B op A (a swapped Sub). */
static int native_bcast(dn_compiler *c, const bd_node *n, const bd_value *a, int abuf,
                        const dnnl_memory_desc_t *amd, const bd_value *b, bool rev, int64_t C)
{
    const bd_value *y = n->outputs[0];
    const char *op = n->op_type;
    dn_native nat;
    memset(&nat, 0, sizeof nat);
    nat.ip[0] = !strcmp(op, "Add") ? DN_BCAST_ADD : !strcmp(op, "Sub") ? DN_BCAST_SUB :
                !strcmp(op, "Mul") ? DN_BCAST_MUL : !strcmp(op, "Div") ? DN_BCAST_DIV :
                !strcmp(op, "Max") ? DN_BCAST_MAX : DN_BCAST_MIN;
    nat.ip[1] = rev;
    nat.ip[2] = C;
    int rc, bbuf, dbuf;
    dnnl_memory_desc_t bmd;
    if ((rc = dn_input_plain(c, b, &bbuf, &bmd)))
        return rc;
    if (dn_can_reuse(c, a, amd)) {
        dbuf = abuf;
        rc = dn_define_view(c, y, dbuf, amd, false);
    } else {
        rc = dn_output(c, y, amd, &dbuf);
    }
    if (rc)
        return rc;
    dn_arg args[3] = { { DNNL_ARG_SRC_0, abuf, *amd }, { DNNL_ARG_SRC_1, bbuf, bmd },
                       { DNNL_ARG_DST, dbuf, *amd } };
    return dn_add_native(c, DN_STEP_BCAST, args, 3, &nat);
}

bool dn_binary_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    if (dn_num_op_inputs(n) != 2 || !n->inputs[0] || !n->inputs[1])
        return dn_why(why, len, "%s needs two inputs", n->op_type);
    if (!dn_io_f32(n, 2, why, len))
        return false;
    int s0 = src0_index(n);
    if (s0 < 0)
        return dn_why(why, len, "%s: the first input must have the output's shape", n->op_type);
    const bd_shape *x = &n->inputs[1 - s0]->shape, *y = &n->outputs[0]->shape;
    if (x->rank > y->rank)
        return dn_why(why, len, "%s: second input has a higher rank", n->op_type);
    for (int i = 0; i < x->rank; i++) {
        int64_t d = x->dims[x->rank - 1 - i];
        if (d != 1 && d != y->dims[y->rank - 1 - i])
            return dn_why(why, len, "%s: inputs do not broadcast", n->op_type);
    }
    /* The cliff guard's probe (dnnl_guard.c): a broadcast oneDNN runs only on its reference
     * kernel in the plain layout (the guard's own last layout), such as [2,3,4,5] by
     * [1,3,1,5], goes to the next engine (braid's native one) instead. */
    if (n->n_post == 0 && !bd_shape_equal(x, y)) {
        int64_t dims[BD_MAX_RANK];
        int off = y->rank - x->rank;
        for (int i = 0; i < y->rank; i++)
            dims[i] = i >= off ? x->dims[i - off] : 1;
        dnnl_memory_desc_t ymd, xmd;
        dnnl_binary_desc_t desc;
        bool commutes;
        dn_md_plain(&ymd, y->rank, y->dims);
        dn_md_plain(&xmd, y->rank, dims);
        if (dnnl_binary_desc_init(&desc, alg_of(n->op_type, &commutes), &ymd, &xmd, &ymd) == dnnl_success &&
            dn_probe_is_cliff(&desc))
            return dn_why(why, len, "%s: oneDNN has only a reference kernel for this broadcast", n->op_type);
    }
    return dn_postops_supported(g, n, why, len);
}

int dn_binary_build(dn_compiler *c, const bd_node *n)
{
    bool commutes;
    dnnl_alg_kind_t alg = alg_of(n->op_type, &commutes);
    int s0 = src0_index(n);
    if (s0 < 0)
        return dn_fail(c, BD_EUNSUPPORTED, "the first input must have the output's shape");
    const bd_value *a = n->inputs[s0], *b = n->inputs[1 - s0], *y = n->outputs[0];
    int rc, abuf, bbuf, dbuf;
    if ((rc = dn_input(c, a, NULL, &abuf)))
        return rc;
    dnnl_memory_desc_t amd = c->t[a->index].md, bmd;
    if (c->t[a->index].strided_view)
        dn_md_of_shape(&amd, a);
    if (bd_shape_equal(&b->shape, &y->shape)) {
        bmd = amd;
        rc = dn_input(c, b, &bmd, &bbuf);
    } else if (n->n_post == 0 && !c->t[a->index].strided_view && dn_bcast_fits(&amd, &b->shape)) {
        return native_bcast(c, n, a, abuf, &amd, b, s0 == 1 && !commutes,
                            dn_bcast_fits(&amd, &b->shape));
    } else {
        int64_t dims[BD_MAX_RANK];
        int R = y->shape.rank, off = R - b->shape.rank;
        for (int i = 0; i < R; i++)
            dims[i] = i >= off ? b->shape.dims[i - off] : 1;
        dn_md_plain(&bmd, R, dims);
        dnnl_memory_desc_t like;
        dn_md_like(&like, &amd, dims);
        if (like.format_desc.blocking.inner_nblks && b->data) {
            rc = dn_const_value(c, b, &bmd, &like, &bbuf);    /* in A's blocked layout: jit */
            bmd = like;
        } else if (like.format_desc.blocking.inner_nblks && b->shape.rank == R) {
            rc = dn_input(c, b, &like, &bbuf);
            bmd = like;
        } else {
            dnnl_memory_desc_t plain;
            rc = dn_input_plain(c, b, &bbuf, &plain);
        }
    }
    if (rc)
        return rc;
    dnnl_post_ops_t po = NULL;
    dn_post_args pa;
    if (s0 == 1 && !commutes) {   /* a - b computed as -(b - a) */
        rc = dn_check(c, dnnl_post_ops_create(&po), "dnnl_post_ops_create");
        if (!rc)
            rc = dn_check(c, dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, -1.0f, 0.0f),
                          "dnnl_post_ops_append_eltwise");
        if (rc) {
            if (po)
                dnnl_post_ops_destroy(po);
            return rc;
        }
    }
    if ((rc = dn_postops_build(c, 0, amd.ndims, amd.dims, &po, &pa)))
        return rc;
    dnnl_binary_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_binary_desc_init(&desc, alg, &amd, &bmd, &amd), "dnnl_binary_desc_init",
                    &desc, po, 1.0f, &pd);
    if (rc)
        return rc;
    /* not in place over padded channels with post-ops: oneDNN 2.6's jit binary then leaves
     * its destination unwritten (dnnl_deconv.c) */
    bool padded = false;
    for (int i = 0; i < amd.ndims; i++)
        padded |= amd.padded_dims[i] != amd.dims[i];
    bool post = (s0 == 1 && !commutes) || n->n_post > (dn_native_tail(n) ? 1 : 0);
    if (pa.residual)
        rc = dn_output_with_residual(c, y, &amd, pa.residual, &dbuf);
    else if (!(padded && post) && dn_can_reuse(c, a, &amd)) {
        dbuf = abuf;
        rc = dn_define_view(c, y, dbuf, &amd, false);
    } else
        rc = dn_output(c, y, &amd, &dbuf);
    if (rc) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[3 + BD_MAX_POSTOPS];
    int na = 0;
    args[na++] = (dn_arg){ DNNL_ARG_SRC_0, abuf, amd };
    args[na++] = (dn_arg){ DNNL_ARG_SRC_1, bbuf, bmd };
    args[na++] = (dn_arg){ DNNL_ARG_DST, dbuf, amd };
    for (int i = 0; i < pa.nargs; i++)
        args[na++] = pa.args[i];
    return dn_add_step(c, pd, args, na);
}
