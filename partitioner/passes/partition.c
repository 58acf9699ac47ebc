/* Partitioning: regions become subgraphs, ordered so that every subgraph runs after the
 * subgraphs producing its inputs, each with the boundary tensors it reads and writes. */
#include <stdlib.h>
#include <string.h>

#include "partitioner/passes/partition.h"

static int push_unique(bd_value ***arr, size_t *n, bd_value *v)
{
    for (size_t i = 0; i < *n; i++)
        if ((*arr)[i] == v)
            return 0;
    bd_value **p = realloc(*arr, (*n + 1) * sizeof *p);
    if (!p)
        return BD_ENOMEM;
    p[(*n)++] = v;
    *arr = p;
    return 0;
}

void bd_parts_free(bd_part *parts, size_t n)
{
    for (size_t i = 0; parts && i < n; i++) {
        free(parts[i].nodes);
        free(parts[i].inputs);
        free(parts[i].outputs);
    }
    free(parts);
}

/* Region order: Kahn's algorithm over region edges, the ready region with the earliest first
 * node first (keeps a single-region graph's order and makes the order deterministic). */
static int order_regions(const bd_graph *g, const int *region, size_t nr, int *order)
{
    size_t n = bd_graph_num_nodes(g);
    size_t *indeg = calloc(nr, sizeof *indeg);
    bool   *edge  = calloc(nr * nr, sizeof *edge);     /* edge[a*nr+b]: a feeds b */
    int    *first = malloc(nr * sizeof *first);
    bool   *done  = calloc(nr, sizeof *done);
    int rc = indeg && edge && first && done ? 0 : BD_ENOMEM;
    for (size_t r = 0; rc == 0 && r < nr; r++)
        first[r] = -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const bd_node *c = bd_graph_node(g, i);
        if (first[region[i]] < 0)
            first[region[i]] = (int)i;
        for (size_t k = 0; k < c->n_inputs; k++) {
            const bd_node *p = c->inputs[k] ? c->inputs[k]->producer : NULL;
            if (!p)
                continue;
            size_t a = (size_t)region[p->index], b = (size_t)region[i];
            if (a != b && !edge[a * nr + b]) {
                edge[a * nr + b] = true;
                indeg[b]++;
            }
        }
    }
    for (size_t k = 0; rc == 0 && k < nr; k++) {
        int pick = -1;
        for (size_t r = 0; r < nr; r++)
            if (!done[r] && indeg[r] == 0 && (pick < 0 || first[r] < first[pick]))
                pick = (int)r;
        if (pick < 0) {
            rc = BD_EMODEL;     /* regions depend on each other both ways */
            break;
        }
        done[pick] = true;
        order[k] = pick;
        for (size_t b = 0; b < nr; b++)
            if (edge[(size_t)pick * nr + b])
                indeg[b]--;
    }
    free(indeg);
    free(edge);
    free(first);
    free(done);
    return rc;
}

static bool read_outside(const bd_graph *g, const int *region, int r, const bd_value *v)
{
    if (v->is_output)
        return true;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        if (region[i] == r)
            continue;
        const bd_node *c = bd_graph_node(g, i);
        for (size_t k = 0; k < c->n_inputs; k++)
            if (c->inputs[k] == v)
                return true;
    }
    return false;
}

static int fill_part(const bd_graph *g, const int *region, int r, bd_part *pt)
{
    size_t n = bd_graph_num_nodes(g);
    for (size_t i = 0; i < n; i++)
        pt->n_nodes += region[i] == r;
    pt->nodes = malloc((pt->n_nodes ? pt->n_nodes : 1) * sizeof *pt->nodes);
    if (!pt->nodes)
        return BD_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (region[i] != r)
            continue;
        bd_node *nd = bd_graph_node(g, i);
        pt->nodes[at++] = nd;
        pt->backend = nd->backend;
        for (size_t k = 0; k < nd->n_inputs; k++) {
            bd_value *v = nd->inputs[k];
            if (v && !v->data && !(v->producer && region[v->producer->index] == r) &&
                push_unique(&pt->inputs, &pt->n_inputs, v))
                return BD_ENOMEM;
        }
        for (size_t k = 0; k < nd->n_outputs; k++)
            if (read_outside(g, region, r, nd->outputs[k]) &&
                push_unique(&pt->outputs, &pt->n_outputs, nd->outputs[k]))
                return BD_ENOMEM;
    }
    return 0;
}

int bd_partition(const bd_graph *g, const int *region, size_t n_regions,
                 bd_part **out, size_t *n_out, bd_error *err)
{
    bd_part *parts = calloc(n_regions ? n_regions : 1, sizeof *parts);
    int *order = malloc((n_regions ? n_regions : 1) * sizeof *order);
    int rc = parts && order ? order_regions(g, region, n_regions, order) : BD_ENOMEM;
    for (size_t k = 0; rc == 0 && k < n_regions; k++)
        rc = fill_part(g, region, order[k], &parts[k]);
    free(order);
    if (rc) {
        bd_parts_free(parts, n_regions);
        return rc == BD_EMODEL
            ? bd_error_set(err, BD_EMODEL, "partitioning: the regions of graph '%s' form a cycle",
                           bd_graph_name(g))
            : bd_error_set(err, rc, "out of memory partitioning");
    }
    *out = parts;
    *n_out = n_regions;
    return 0;
}
