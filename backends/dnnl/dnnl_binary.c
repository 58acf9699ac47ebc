/* Add/Sub/Mul/Div/Max/Min (two inputs) with numpy broadcasting as a oneDNN binary primitive.
 * The full-shape operand is src0 (swapped for Add/Mul/Max/Min when needed) and keeps its
 * layout; a full-shape src1 is brought to src0's layout, a broadcast src1 is read plain. In
 * place when src0 dies here. */
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
    } else {
        int64_t dims[BD_MAX_RANK];
        int R = y->shape.rank, off = R - b->shape.rank;
        for (int i = 0; i < R; i++)
            dims[i] = i >= off ? b->shape.dims[i - off] : 1;
        dnnl_memory_desc_t plain;
        rc = dn_input_plain(c, b, &bbuf, &plain);
        dn_md_plain(&bmd, R, dims);
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
    if (pa.residual)
        rc = dn_output_with_residual(c, y, &amd, pa.residual, &dbuf);
    else if (dn_can_reuse(c, a, &amd)) {
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
