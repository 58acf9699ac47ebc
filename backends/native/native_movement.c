/* Data movement on plain tensors of any dtype: the views (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity), which the engine turns into aliases of their input (no step) unless
 * they write a boundary tensor (a copy). */
#include <string.h>

#include "backends/native/native_internal.h"

static bool view_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "%s: expects an input and one output", n->op_type);
    if (!nv_io_ok(n, 1, NV_DT_ANY, why, len))
        return false;
    if (n->inputs[0]->dtype != n->outputs[0]->dtype ||
        nv_shape_numel(&n->inputs[0]->shape) != nv_shape_numel(&n->outputs[0]->shape))
        return nv_why(why, len, "%s changes the dtype or the element count", n->op_type);
    return true;
}

/* Views need no parameters: the engine aliases or copies them (native_backend.c). */
static int view_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    (void)n;
    (void)s;
    (void)err;
    return 0;
}

const nv_op nv_movement_ops[] = {
    { "Reshape", view_supports, view_prepare },   { "Flatten", view_supports, view_prepare },
    { "Squeeze", view_supports, view_prepare },   { "Unsqueeze", view_supports, view_prepare },
    { "Identity", view_supports, view_prepare },
};
const size_t nv_movement_n = sizeof nv_movement_ops / sizeof nv_movement_ops[0];
