/* A masked fill with a constant mask, y = Where(C, x, c) or Where(C, c, x) with C a constant
 * BOOL tensor and c a constant FP32 scalar of magnitude at least 1e38 (-inf, or
 * torch.finfo(float32).min as Hugging Face models use), becomes y = Add(x, M) with the
 * constant M = c where the fill applies and 0 elsewhere: the same values for every |x| < 1e31
 * (x + c rounds to c there), and an Add that post-op fusion folds into the attention MatMul
 * producing x (GPT-2's causal mask) instead of a Where of its own. */
#include <math.h>
#include <string.h>

#include "partitioner/passes/match.h"
#include "partitioner/passes/passes.h"

/* Is V a constant BOOL tensor of static shape holding all its bytes? */
static bool const_mask(const bd_value *v)
{
    if (!v || !v->data || v->dtype != BD_DT_BOOL || !bd_shape_is_static(&v->shape))
        return false;
    int64_t n = bd_shape_numel(&v->shape);
    return n >= 0 && v->nbytes >= (size_t)n;
}

/* Is V a constant fill that an Add reproduces exactly (see the top)? */
static bool big_fill(const bd_value *v, float *c)
{
    return bd_const_scalar(v, c) && (isinf(*c) || fabsf(*c) >= 1e38f);
}

int bd_pass_where_mask(bd_graph *g, const bd_fuse_target *target, bd_error *err)
{
    (void)target;      /* the result is a plain ONNX Add: any engine runs it */
    int rewrites = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        bd_node *w = bd_graph_node(g, i);
        if (!bd_is_op(w, "Where") || w->n_inputs != 3 || w->n_outputs != 1 || !bd_fusable(w) ||
            !const_mask(w->inputs[0]) || !w->inputs[1] || !w->inputs[2])
            continue;
        float c;
        bool fill_true = big_fill(w->inputs[1], &c);     /* Where(C, c, x): fill where C */
        if (!fill_true && !big_fill(w->inputs[2], &c))
            continue;
        bd_value *x = w->inputs[fill_true ? 2 : 1], *mask = w->inputs[0], *y = w->outputs[0];
        if (x->data || x->dtype != BD_DT_FLOAT || y->dtype != BD_DT_FLOAT)
            continue;
        float *m;
        bd_value *mv = bd_pass_new_const(g, w->name, "_mask", BD_DT_FLOAT, &mask->shape, sizeof(float),
                                         (void **)&m, err);
        if (!mv)
            return err && err->code ? err->code : BD_ENOMEM;
        const uint8_t *cond = mask->data;
        for (int64_t k = 0; k < bd_shape_numel(&mask->shape); k++)
            m[k] = (cond[k] != 0) == fill_true ? c : 0.0f;
        const char *name = w->name;
        bd_graph_remove_node(g, w);
        bd_node *add;
        int rc = bd_graph_add_node(g, name, "Add", "", (bd_value *[]){ x, mv }, 2, &y, 1, &add, err);
        if (rc)
            return rc;
        if ((rc = bd_graph_toposort(g, err)))
            return rc;
        rewrites++;
        i = (size_t)-1;
    }
    return rewrites;
}
