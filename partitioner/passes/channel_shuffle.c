/* ShuffleNet's channel shuffle as PyTorch exports it — Reshape [.., C, ..] -> [.., g, C/g, ..],
 * Transpose swapping those two axes, Reshape back to the input's shape — becomes one node
 * ChannelShuffle (domain "braid", attributes axis and group = g): one oneDNN shuffle
 * primitive in whatever layout the data has, instead of two reorders through plain memory. */
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* Does Reshape R1 split axis A of X (C channels) into [G, C/G]? Sets *A and *G. */
static bool splits_axis(const bd_value *x, const bd_value *r, int *a, int64_t *g)
{
    const bd_shape *xs = &x->shape, *rs = &r->shape;
    if (!bd_shape_is_static(xs) || !bd_shape_is_static(rs) || rs->rank != xs->rank + 1)
        return false;
    int k = 0;
    while (k < xs->rank && xs->dims[k] == rs->dims[k])
        k++;
    if (k >= xs->rank || rs->dims[k] < 2 || rs->dims[k] * rs->dims[k + 1] != xs->dims[k] || rs->dims[k + 1] < 2)
        return false;
    for (int d = k + 1; d < xs->rank; d++)
        if (xs->dims[d] != rs->dims[d + 1])
            return false;
    *a = k;
    *g = rs->dims[k];
    return true;
}

/* Is T a Transpose that swaps axes A and A+1 of its rank-R input, nothing else? */
static bool swaps(const bd_node *t, int a, int rank)
{
    const int64_t *perm = NULL;
    if (bd_node_attr_ints(t, "perm", &perm) != (size_t)rank)
        return false;
    for (int d = 0; d < rank; d++) {
        int64_t want = d == a ? a + 1 : d == a + 1 ? a : d;
        if (perm[d] != want)
            return false;
    }
    return true;
}

int bd_pass_channel_shuffle(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *r1 = bd_graph_node(g, i);
        if (!bd_is_op(r1, "Reshape") || r1->n_inputs < 1 || !r1->inputs[0] || r1->n_outputs != 1)
            continue;
        bd_value *x = r1->inputs[0];
        int a;
        int64_t groups;
        if (!splits_axis(x, r1->outputs[0], &a, &groups))
            continue;
        bd_node *t = bd_sole_consumer(g, r1->outputs[0]);
        if (!bd_is_op(t, "Transpose") || !swaps(t, a, x->shape.rank + 1))
            continue;
        bd_node *r2 = bd_sole_consumer(g, t->outputs[0]);
        if (!bd_is_op(r2, "Reshape") || r2->n_outputs != 1 ||
            !bd_shape_equal(&r2->outputs[0]->shape, &x->shape) ||
            !bd_fusable(r1) || !bd_fusable(t) || !bd_fusable(r2))
            continue;
        bd_value *y = r2->outputs[0];
        bd_attr attrs[2] = {
            { .name = "axis", .type = BD_ATTR_INT, .i = a },
            { .name = "group", .type = BD_ATTR_INT, .i = groups },
        };
        bd_node probe = { .name = r1->name, .op_type = "ChannelShuffle", .domain = "braid",
                          .inputs = &x, .n_inputs = 1, .outputs = &y, .n_outputs = 1,
                          .attrs = attrs, .n_attrs = 2, .backend = -1, .index = -1 };
        if (!bd_fuse_accepts(target, g, &probe))
            continue;
        const char *name = r1->name;
        bd_graph_remove_node(g, r2);
        bd_graph_remove_node(g, t);
        bd_graph_remove_node(g, r1);
        bd_node *cs;
        int rc = bd_graph_add_node(g, name, "ChannelShuffle", "braid", &x, 1, &y, 1, &cs, err);
        for (int k = 0; rc == 0 && k < 2; k++)
            rc = bd_node_add_attr(g, cs, &attrs[k], err);
        if (rc)
            return rc;
        cs->composite = "Reshape+Transpose+Reshape";
        rewrites++;
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
        i = (size_t)-1;   /* node order changed: rescan */
    }
    return rewrites;
}
