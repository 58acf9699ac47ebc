/* IR invariants and topological order. */
#include "core/ir/graph_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A min-heap of node indexes: the ready node that comes first in the current order is placed
 * first, so a sorted graph keeps its order. */
static void heap_push(size_t *h, size_t *n, size_t x)
{
    size_t i = (*n)++;
    while (i && h[(i - 1) / 2] > x) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static size_t heap_pop(size_t *h, size_t *n)
{
    size_t top = h[0], x = h[--*n], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= x)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = x;
    return top;
}

/* The position of V's producer in G, or N when V has none; SIZE_MAX for a producer that is
 * not one of G's nodes (an edge that can never resolve: reported as a cycle). */
static size_t producer_at(const bd_graph *g, size_t n, const bd_value *v)
{
    if (!v || !v->producer)
        return n;
    const bd_node *p = v->producer;
    return p->index >= 0 && (size_t)p->index < n && bd_graph_node(g, (size_t)p->index) == p
               ? (size_t)p->index : SIZE_MAX;
}

/* Kahn's algorithm over producer edges, with the consumers of each node in one flat array
 * (CSR): O((nodes + edges) log nodes) whatever the graph's shape. */
int bd_graph_toposort(bd_graph *g, bd_error *err)
{
    size_t n = bd_graph_num_nodes(g), n_edges = 0;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const bd_node *nd = bd_graph_node(g, i);
        for (size_t k = 0; k < nd->n_inputs; k++)
            n_edges += nd->inputs[k] && nd->inputs[k]->producer;
    }
    size_t   *pending = calloc(n, sizeof *pending);        /* unresolved producer edges */
    size_t   *start   = calloc(n + 1, sizeof *start);      /* consumers of i: cons[start[i]..] */
    size_t   *cons    = malloc((n_edges ? n_edges : 1) * sizeof *cons);
    size_t   *heap    = malloc(n * sizeof *heap);
    bd_node **order   = malloc(n * sizeof *order);
    int rc = 0;
    if (!pending || !start || !cons || !heap || !order) {
        rc = bd_error_set(err, BD_ENOMEM, "out of memory sorting graph '%s'", bd_graph_name(g));
        goto out;
    }
    /* Number the nodes by position (graph.c keeps index in step; renumbered to be sure). */
    for (size_t i = 0; i < n; i++)
        bd_graph_node(g, i)->index = (int)i;
    for (size_t i = 0; i < n; i++) {
        const bd_node *nd = bd_graph_node(g, i);
        for (size_t k = 0; k < nd->n_inputs; k++) {
            size_t p = producer_at(g, n, nd->inputs[k]);
            pending[i] += p != n;
            if (p < n)
                start[p + 1]++;
        }
    }
    for (size_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    for (size_t i = 0; i < n; i++) {
        const bd_node *nd = bd_graph_node(g, i);
        for (size_t k = 0; k < nd->n_inputs; k++) {
            size_t p = producer_at(g, n, nd->inputs[k]);
            if (p < n)
                cons[start[p]++] = i;
        }
    }
    for (size_t i = n; i > 0; i--)          /* the fill advanced each start: shift back */
        start[i] = start[i - 1];
    start[0] = 0;
    size_t n_heap = 0, placed = 0;
    for (size_t i = 0; i < n; i++)
        if (!pending[i])
            heap_push(heap, &n_heap, i);
    while (n_heap) {
        size_t i = heap_pop(heap, &n_heap);
        order[placed++] = bd_graph_node(g, i);
        for (size_t e = start[i]; e < start[i + 1]; e++)
            if (--pending[cons[e]] == 0)
                heap_push(heap, &n_heap, cons[e]);
    }
    if (placed < n) {
        const bd_node *stuck = NULL;
        for (size_t i = 0; i < n && !stuck; i++)
            if (pending[i])
                stuck = bd_graph_node(g, i);
        rc = bd_error_set(err, BD_EMODEL, "graph '%s' has a cycle through node '%s' (%s)",
                          bd_graph_name(g), stuck->name, stuck->op_type);
    } else {
        graph_set_node_order(g, order);
    }
out:
    free(pending);
    free(start);
    free(cons);
    free(heap);
    free(order);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int check_names_unique(const bd_graph *g, bd_error *err)
{
    size_t n = bd_graph_num_nodes(g);
    /* Names are checked pairwise through a sorted copy of pointers. */
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        names[i] = bd_graph_node(g, i)->name;
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            int rc = bd_error_set(err, BD_EMODEL, "graph '%s': two nodes are named '%s'",
                                  bd_graph_name(g), names[i]);
            free(names);
            return rc;
        }
    free(names);
    return 0;
}

int bd_graph_validate(bd_graph *g, bd_error *err)
{
    const char *gname = bd_graph_name(g);
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *nd = bd_graph_node(g, i);
        for (size_t k = 0; k < nd->n_inputs; k++) {
            const bd_value *v = nd->inputs[k];
            if (v && !v->producer && !v->data && !v->is_input)
                return bd_error_set(err, BD_EMODEL,
                                    "graph '%s': node '%s' (%s) reads '%s', which no node produces "
                                    "and which is neither a graph input nor an initializer",
                                    gname, nd->name, nd->op_type, v->name);
        }
    }
    if (bd_graph_num_outputs(g) == 0)
        return bd_error_set(err, BD_EMODEL, "graph '%s' declares no outputs", gname);
    for (size_t i = 0; i < bd_graph_num_outputs(g); i++) {
        const bd_value *v = bd_graph_output(g, i);
        if (!v->producer && !v->data && !v->is_input)
            return bd_error_set(err, BD_EMODEL,
                                "graph '%s': output '%s' is not produced by any node", gname, v->name);
    }
    int rc = check_names_unique(g, err);
    if (rc)
        return rc;
    return bd_graph_toposort(g, err);
}
