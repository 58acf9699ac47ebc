/* The minimum-subgraph rule: a fast-path island surrounded by framework-fallback regions pays
 * two boundary crossings (a fallback session run each side instead of one); when the island's
 * own compute is tiny it runs as well on the fallback, so it moves there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partitioner/passes/partition.h"

static double numel(const bd_value *v)
{
    return v && bd_shape_is_static(&v->shape) ? (double)bd_shape_numel(&v->shape) : 0.0;
}

static bool is(const bd_node *n, const char *op)
{
    return strcmp(n->op_type, op) == 0;
}

double bd_node_flops(const bd_node *n)
{
    if (n->n_outputs == 0)
        return 0;
    const bd_value *y = n->outputs[0];
    if (is(n, "Reshape") || is(n, "Flatten") || is(n, "Squeeze") || is(n, "Unsqueeze") ||
        is(n, "Identity"))
        return 0;
    if ((is(n, "MatMul") || is(n, "Gemm")) && n->n_inputs >= 2 && n->inputs[0]) {
        const bd_shape *a = &n->inputs[0]->shape;
        if (a->rank < 1 || !bd_shape_is_static(a))
            return 0;
        int64_t k = a->dims[a->rank - 1];
        if (is(n, "Gemm") && bd_node_attr_int(n, "transA", 0) && a->rank == 2)
            k = a->dims[0];
        return 2.0 * numel(y) * (double)k;
    }
    if (is(n, "Conv") && n->n_inputs >= 2 && n->inputs[1]) {
        const bd_shape *w = &n->inputs[1]->shape;     /* [OC, IC/group, k...] */
        if (w->rank < 2 || !bd_shape_is_static(w) || w->dims[0] <= 0)
            return 0;
        return 2.0 * numel(y) * (numel(n->inputs[1]) / (double)w->dims[0]);
    }
    return numel(y);
}

/* Regions adjacent to region R (through values, either direction): set bits in ADJ. */
static void neighbours(const bd_graph *g, const int *region, int r, bool *adj)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *n = bd_graph_node(g, i);
        for (size_t k = 0; k < n->n_inputs; k++) {
            const bd_node *p = n->inputs[k] ? n->inputs[k]->producer : NULL;
            if (!p)
                continue;
            int rp = region[p->index], rn = region[n->index];
            if (rn == r && rp != r)
                adj[rp] = true;
            if (rp == r && rn != r)
                adj[rn] = true;
        }
    }
}

static bool all_supported(bd_graph *g, const bd_backend *b, const int *region, int r)
{
    char why[112];
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *n = bd_graph_node(g, i);
        if (region[n->index] == r && !b->supports(g, n, why, sizeof why))
            return false;
    }
    return true;
}

/* Is table entry B (a node's backend index; -1 = none) of KIND? */
static bool kind_is(const bd_backend *const *backends, size_t nb, int b, bd_engine_kind kind)
{
    return b >= 0 && (size_t)b < nb && backends[b]->kind == kind;
}

static bool fast_path(const bd_backend *const *backends, size_t nb, int b)
{
    return kind_is(backends, nb, b, BD_ENGINE_FAST_PATH);
}

/* A framework fallback: crossing into it costs a session run. A native engine runs in
 * process on the same buffers, so a fast-path region next to it is no island. */
static bool fallback(const bd_backend *const *backends, size_t nb, int b)
{
    return kind_is(backends, nb, b, BD_ENGINE_FALLBACK);
}

size_t bd_cost_rule(bd_graph *g, const bd_backend *const *backends, size_t nb, double min_flops,
                    const int *region, size_t n_regions, bd_node_place *places)
{
    if (min_flops <= 0 || n_regions < 2)
        return 0;
    size_t n = bd_graph_num_nodes(g), moved = 0;
    int    *backend_of = malloc(n_regions * sizeof *backend_of);
    double *flops      = calloc(n_regions, sizeof *flops);
    size_t *count      = calloc(n_regions, sizeof *count);
    bool   *adj        = calloc(n_regions, sizeof *adj);
    if (!backend_of || !flops || !count || !adj)
        goto done;      /* the rule is an optimisation: without memory, skip it */
    for (size_t i = 0; i < n; i++) {
        const bd_node *nd = bd_graph_node(g, i);
        backend_of[region[i]] = nd->backend;
        flops[region[i]] += bd_node_flops(nd);
        count[region[i]]++;
    }
    for (size_t r = 0; r < n_regions; r++) {
        int from = backend_of[r];
        if (!fast_path(backends, nb, from) || flops[r] >= min_flops)
            continue;
        memset(adj, 0, n_regions * sizeof *adj);
        neighbours(g, region, (int)r, adj);
        bool any = false, only_others = true;
        for (size_t q = 0; q < n_regions; q++)
            if (adj[q]) {
                any = true;
                only_others &= fallback(backends, nb, backend_of[q]);
            }
        if (!any || !only_others)
            continue;
        /* the first fallback, in table order, among the neighbours that runs every node */
        int to = -1;
        for (size_t b = 0; b < nb && to < 0; b++) {
            if (!fallback(backends, nb, (int)b))
                continue;
            bool adjacent = false;
            for (size_t q = 0; q < n_regions; q++)
                adjacent |= adj[q] && backend_of[q] == (int)b;
            if (adjacent && all_supported(g, backends[b], region, (int)r))
                to = (int)b;
        }
        if (to < 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            bd_node *nd = bd_graph_node(g, i);
            if (region[i] != (int)r)
                continue;
            nd->backend = to;
            bd_node_place *pl = &places[i];
            pl->backend = to;
            pl->reason[from] = BD_REASON_COST;
            snprintf(pl->why[from], sizeof pl->why[from],
                     "island of %zu node(s), %.0f FLOPs < min_dnnl_region_flops %.0f", count[r],
                     flops[r], min_flops);
            moved++;
        }
        backend_of[r] = to;   /* later islands see this region as a fallback neighbour */
    }
done:
    free(backend_of);
    free(flops);
    free(count);
    free(adj);
    return moved;
}
