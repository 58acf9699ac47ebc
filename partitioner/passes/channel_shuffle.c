/* ShuffleNet's channel shuffle as PyTorch exports it — Reshape [.., C, ..] -> [.., g, C/g, ..],
 * Transpose swapping those two axes, Reshape back to the input's shape — becomes one node
 * ChannelShuffle (domain "braid", attributes axis and group = g): one oneDNN shuffle
 * primitive in whatever layout the data has, instead of two reorders through plain memory.
 *
 * ShuffleNet shuffles the Concat of its two branches, which is the two branches' channels
 * interleaved: when the shuffled tensor is a Concat of g equal parts along the same axis, read
 * by nothing else, the ChannelShuffle takes the Concat's inputs instead (one pass over the
 * bytes where the Concat and the shuffle were two). */
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

#define SHUFFLE_MAX_PARTS 16

/* The Concat producing X from GROUPS equal parts along AXIS, read by nothing else, or NULL. */
static bd_node *concat_of_parts(const bd_graph *g, const bd_value *x, int axis, int64_t groups)
{
    bd_node *cat = x->producer;
    if (!bd_is_op(cat, "Concat") || !bd_fusable(cat) || cat->n_outputs != 1 ||
        cat->n_inputs != (size_t)groups || groups > SHUFFLE_MAX_PARTS || !bd_sole_consumer(g, x))
        return NULL;
    int64_t ca = bd_node_attr_int(cat, "axis", INT64_MIN), r = x->shape.rank;
    if (ca < 0 && ca >= -r)
        ca += r;
    if (ca != axis)
        return NULL;
    for (size_t k = 0; k < cat->n_inputs; k++) {
        const bd_value *p = cat->inputs[k];
        if (!p || !bd_shape_is_static(&p->shape) || !bd_shape_equal(&p->shape, &cat->inputs[0]->shape) ||
            p->dtype != x->dtype)
            return NULL;
    }
    return cat;
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
        bd_value *parts[SHUFFLE_MAX_PARTS] = { x };
        size_t n_parts = 1;
        bd_node *cat = concat_of_parts(g, x, a, groups);
        if (cat) {
            probe.inputs = cat->inputs;
            probe.n_inputs = cat->n_inputs;
            if (bd_fuse_accepts(target, g, &probe)) {
                n_parts = cat->n_inputs;
                memcpy(parts, cat->inputs, n_parts * sizeof *parts);
            } else {
                cat = NULL;
            }
        }
        const char *name = r1->name;
        bd_graph_remove_node(g, r2);
        bd_graph_remove_node(g, t);
        bd_graph_remove_node(g, r1);
        if (cat)
            bd_graph_remove_node(g, cat);
        bd_node *cs;
        int rc = bd_graph_add_node(g, name, "ChannelShuffle", "braid", parts, n_parts, &y, 1, &cs, err);
        for (int k = 0; rc == 0 && k < 2; k++)
            rc = bd_node_add_attr(g, cs, &attrs[k], err);
        if (rc)
            return rc;
        cs->composite = cat ? "Concat+Reshape+Transpose+Reshape" : "Reshape+Transpose+Reshape";
        rewrites++;
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
        i = (size_t)-1;   /* node order changed: rescan */
    }
    return rewrites;
}
