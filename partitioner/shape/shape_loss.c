/* Losses: NegativeLogLikelihoodLoss(input, target, weight) and SoftmaxCrossEntropyLoss(scores,
 * labels, weights) -> (loss, log_prob). The input/scores are [N, C, d1...] (rank >= 2), the
 * target/labels [N, d1...] (INT32 or INT64), the weights [C]. The loss is [N, d1...] with
 * reduction 'none' and a scalar with 'mean' (the default) or 'sum'; log_prob has the scores'
 * shape. */
#include "partitioner/shape/shape_rules.h"

int shp_loss(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, reduction;
    static const char *const kinds[] = { "none", "sum", "mean" };
    bd_value *x = shp_in(n, 0), *t = shp_in(n, 1), *w = shp_in(n, 2);
    int64_t ignore;
    if ((rc = shp_attr_choice(n, "reduction", kinds, 3, 2, &reduction, err)) ||
        (rc = shp_attr_int(n, "ignore_index", 0, &ignore, err)))
        return rc;
    if (t->dtype != BD_DT_INT64 && t->dtype != BD_DT_INT32 && t->dtype != BD_DT_UNDEFINED)
        return shp_fail(err, n, "target '%s' must be INT32 or INT64, got %s", t->name,
                        bd_dtype_name(t->dtype));
    if (w && x->dtype != BD_DT_UNDEFINED && w->dtype != BD_DT_UNDEFINED && w->dtype != x->dtype)
        return shp_fail(err, n, "weight '%s' is %s but input '%s' is %s", w->name,
                        bd_dtype_name(w->dtype), x->name, bd_dtype_name(x->dtype));
    if (shp_ranked(x) && x->shape.rank < 2)
        return shp_fail(err, n, "input '%s' must have rank >= 2 (N, C, ...), got %d", x->name,
                        x->shape.rank);
    if ((rc = shp_expect_rank(n, "weight", w, 1, err)))
        return rc;
    if (shp_ranked(x) && shp_ranked(w) &&
        (rc = shp_expect_dim(n, "weight", w, 0, x->shape.dims[1], "the classes", err)))
        return rc;
    /* The target has the input's shape without C. */
    bd_shape ts = shp_dynamic(-1);
    if (shp_ranked(x)) {
        ts = shp_dynamic(0);
        for (int i = 0; i < x->shape.rank; i++)
            if (i != 1)
                shp_push(&ts, &x->shape, i);
    }
    if (shp_ranked(t)) {
        if (ts.rank >= 0 && t->shape.rank != ts.rank)
            return shp_fail(err, n, "target '%s' must have rank %d (the input's without C), got "
                            "%d", t->name, ts.rank, t->shape.rank);
        for (int i = 0; i < ts.rank; i++) {
            if ((rc = shp_expect_dim(n, "target", t, i, ts.dims[i], "the input's dim", err)))
                return rc;
            if (ts.dims[i] < 0) {
                ts.dims[i] = t->shape.dims[i];
                ts.sym[i]  = t->shape.dims[i] < 0 && !ts.sym[i] ? t->shape.sym[i] : ts.sym[i];
            }
        }
        if (ts.rank < 0)
            ts = t->shape;
    }
    bd_shape scalar = shp_dynamic(0);
    if (reduction != 0)
        shp_set(n->outputs[0], x->dtype, &scalar);
    else if (ts.rank >= 0)
        shp_set(n->outputs[0], x->dtype, &ts);
    else
        shp_set_unknown(n->outputs[0], x->dtype);
    if (n->n_outputs > 1) {
        if (shp_ranked(x))
            shp_set(n->outputs[1], x->dtype, &x->shape);
        else
            shp_set_unknown(n->outputs[1], x->dtype);
    }
    return 0;
}
