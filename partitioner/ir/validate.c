/* IR invariants and topological order. */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

void bd_graph_set_node_order_(bd_graph *g, bd_node **order);   /* graph.c */

/* Kahn's algorithm over producer edges; ties keep the current order so sorted graphs stay put. */
int bd_graph_toposort(bd_graph *g, bd_error *err)
{
    size_t n = bd_graph_num_nodes(g);
    if (n == 0)
        return 0;
    size_t   *pending = calloc(n, sizeof *pending);   /* unresolved producer edges per node */
    bd_node **order   = calloc(n, sizeof *order);
    bool     *done    = calloc(n, sizeof *done);
    if (!pending || !order || !done) {
        free(pending); free(order); free(done);
        return bd_error_set(err, BD_ENOMEM, "out of memory sorting graph '%s'", bd_graph_name(g));
    }
    for (size_t i = 0; i < n; i++) {
        bd_node *nd = bd_graph_node(g, i);
        for (size_t k = 0; k < nd->n_inputs; k++)
            pending[i] += nd->inputs[k] && nd->inputs[k]->producer;
    }
    size_t placed = 0;
    /* Repeated stable sweeps: O(n * depth) in the worst case, O(n) for sorted input. */
    bool progress = true;
    while (placed < n && progress) {
        progress = false;
        for (size_t i = 0; i < n; i++) {
            if (done[i] || pending[i])
                continue;
            bd_node *nd = bd_graph_node(g, i);
            done[i] = true;
            order[placed++] = nd;
            progress = true;
            for (size_t j = 0; j < n; j++) {
                if (done[j])
                    continue;
                bd_node *c = bd_graph_node(g, j);
                for (size_t k = 0; k < c->n_inputs; k++)
                    if (c->inputs[k] && c->inputs[k]->producer == nd)
                        pending[j]--;
            }
        }
    }
    int rc = 0;
    if (placed < n) {
        const bd_node *stuck = NULL;
        for (size_t i = 0; i < n && !stuck; i++)
            if (!done[i])
                stuck = bd_graph_node(g, i);
        rc = bd_error_set(err, BD_EMODEL, "graph '%s' has a cycle through node '%s' (%s)",
                          bd_graph_name(g), stuck->name, stuck->op_type);
    } else {
        bd_graph_set_node_order_(g, order);
    }
    free(pending);
    free(order);
    free(done);
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
