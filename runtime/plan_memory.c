/* How much tensor memory one run of a specialised graph needs at its peak, so that a request
 * whose shapes are legal but would need more memory than the machine has (an outer product of
 * a long vector with itself, a Tile by a large count) is refused before anything is compiled
 * or allocated, instead of driving the daemon into the OOM killer. */
#include "runtime/plan_internal.h"

#include <stdlib.h>

/* Saturating: a value whose byte count overflows counts as SIZE_MAX. */
static size_t tensor_bytes(const bd_value *v)
{
    int64_t n = bd_shape_numel(&v->shape);
    size_t bytes;
    if (n < 0 && bd_shape_is_static(&v->shape))
        return SIZE_MAX;
    if (n < 0)                              /* known only at run time: the engine checks it */
        return 0;
    if (__builtin_mul_overflow((uint64_t)n, (uint64_t)bd_dtype_size(v->dtype), &bytes))
        return SIZE_MAX;
    return bytes;
}

static size_t add_sat(size_t a, size_t b)
{
    size_t s;
    return __builtin_add_overflow(a, b, &s) ? SIZE_MAX : s;
}

int plan_peak_tensor_bytes(const bd_graph *g, size_t *out)
{
    size_t nv = bd_graph_num_values(g), nn = bd_graph_num_nodes(g);
    size_t *last_use = malloc((nv ? nv : 1) * sizeof *last_use);
    if (!last_use)
        return BD_ENOMEM;
    /* The node after which each value is dead; graph outputs live to the end (nn). */
    for (size_t i = 0; i < nv; i++) {
        const bd_value *v = bd_graph_value(g, i);
        last_use[i] = v->is_output ? nn : 0;
    }
    for (size_t k = 0; k < nn; k++) {
        const bd_node *node = bd_graph_node(g, k);
        for (size_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] && last_use[node->inputs[i]->index] < k)
                last_use[node->inputs[i]->index] = k;
    }
    /* Walk the nodes in order: inputs live from the start, a node's outputs from the node on;
     * a value is freed after its last reader. Constants are the model's, not the request's. */
    size_t live = 0, peak = 0;
    for (size_t i = 0; i < nv; i++) {
        const bd_value *v = bd_graph_value(g, i);
        if (v->is_input && !v->data)
            live = add_sat(live, tensor_bytes(v));
    }
    peak = live;
    for (size_t k = 0; k < nn; k++) {
        const bd_node *node = bd_graph_node(g, k);
        for (size_t o = 0; o < node->n_outputs; o++)
            if (!node->outputs[o]->data)
                live = add_sat(live, tensor_bytes(node->outputs[o]));
        if (live > peak)
            peak = live;
        if (live == SIZE_MAX)
            break;
        for (size_t i = 0; i < node->n_inputs; i++) {
            const bd_value *v = node->inputs[i];
            if (v && !v->data && last_use[v->index] == k) {
                live -= tensor_bytes(v) <= live ? tensor_bytes(v) : live;
                last_use[v->index] = SIZE_MAX;          /* freed once, even if read twice */
            }
        }
        for (size_t o = 0; o < node->n_outputs; o++) {   /* produced but never read */
            const bd_value *v = node->outputs[o];
            if (!v->data && !v->is_output && last_use[v->index] == 0 && v->producer == node) {
                live -= tensor_bytes(v) <= live ? tensor_bytes(v) : live;
                last_use[v->index] = SIZE_MAX;
            }
        }
    }
    free(last_use);
    *out = peak;
    return 0;
}
