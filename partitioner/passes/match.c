#include "partitioner/passes/match.h"

#include <stdio.h>
#include <string.h>

#include "partitioner/passes/partition.h"
#include "partitioner/passes/passes.h"

bool bd_consumers(const bd_graph *g, const bd_value *v, bd_node **out, size_t max, size_t *n)
{
    *n = 0;
    if (v->is_output)
        return false;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *node = bd_graph_node(g, i);
        for (size_t k = 0; k < node->n_inputs; k++)
            if (node->inputs[k] == v) {
                if (*n == max)
                    return false;
                out[(*n)++] = node;
                break;
            }
    }
    return true;
}

bd_node *bd_sole_consumer(const bd_graph *g, const bd_value *v)
{
    if (v->is_output)
        return NULL;
    bd_node *found = NULL;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *n = bd_graph_node(g, i);
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v) {
                if (found)
                    return NULL;
                found = n;
            }
    }
    return found;
}

bool bd_const_scalar(const bd_value *v, float *out)
{
    if (!v || !v->data || bd_shape_numel(&v->shape) != 1)
        return false;
    if (v->dtype == BD_DT_FLOAT && v->nbytes >= 4) {
        memcpy(out, v->data, sizeof *out);
        return true;
    }
    if (v->dtype == BD_DT_DOUBLE && v->nbytes >= 8) {
        double d;
        memcpy(&d, v->data, sizeof d);
        *out = (float)d;
        return true;
    }
    return false;
}

bool bd_is_op(const bd_node *n, const char *op)
{
    return n && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

bd_value *bd_other_input(const bd_node *n, const bd_value *x)
{
    if (n->n_inputs != 2)
        return NULL;
    if (n->inputs[0] == x)
        return n->inputs[1];
    if (n->inputs[1] == x)
        return n->inputs[0];
    return NULL;
}

bool bd_fusable(const bd_node *n)
{
    return n && n->backend != BD_BACKEND_PINNED;
}

bool bd_fuse_accepts(const bd_fuse_target *target, const bd_graph *g, const bd_node *probe)
{
    if (!target)
        return true;
    if (bd_place_op_listed(target->forced_ops, probe->op_type))
        return false;
    char why[128];
    return !target->backend || target->backend->supports(g, probe, why, sizeof why);
}

bd_value *bd_pass_new_value(bd_graph *g, const char *base, const char *suffix, int dtype,
                            const bd_shape *shape, bd_error *err)
{
    char name[256];
    bd_value *v = NULL;
    for (int k = 0; k < 1000 && !v; k++) {
        snprintf(name, sizeof name, "%s%s%s%.0d", base, suffix, k ? "_" : "", k);
        if (!bd_graph_find_value(g, name) && bd_graph_add_value(g, name, dtype, shape, &v, err))
            return NULL;
    }
    if (!v)
        bd_error_set(err, BD_EMODEL, "no free value name for '%s%s'", base, suffix);
    return v;
}

bd_value *bd_pass_new_const(bd_graph *g, const char *base, const char *suffix, int dtype,
                            const bd_shape *shape, size_t elem, void **data, bd_error *err)
{
    bd_value *v = bd_pass_new_value(g, base, suffix, dtype, shape, err);
    int64_t n = bd_shape_numel(shape);
    size_t bytes;
    if (!v)
        return NULL;
    if (n < 0 || __builtin_mul_overflow((size_t)n, elem, &bytes) || !(*data = bd_graph_alloc(g, bytes ? bytes : 1))) {
        bd_error_set(err, BD_ENOMEM, "out of memory for the constant '%s%s'", base, suffix);
        return NULL;
    }
    v->data = *data;
    v->nbytes = bytes;
    return v;
}
