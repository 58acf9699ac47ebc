/* Text features: TfIdfVectorizer(X [C] or [B, C]) -> FLOAT [max(ngram_indexes) + 1], or
 * [B, max(ngram_indexes) + 1]. */
#include "partitioner/shape/shape_rules.h"

int shp_tfidf(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    const int64_t *idx;
    size_t ni;
    bd_value *x = shp_in(n, 0);
    if ((rc = shp_attr_ints(n, "ngram_indexes", &idx, &ni, err)))
        return rc;
    if (ni == 0)
        return shp_fail(err, n, "attribute 'ngram_indexes' is required");
    int64_t out = 0;
    for (size_t i = 0; i < ni; i++) {
        if (idx[i] < 0 || idx[i] >= INT32_MAX)
            return shp_fail(err, n, "ngram_indexes[%zu] = %lld is out of range", i,
                            (long long)idx[i]);
        out = idx[i] + 1 > out ? idx[i] + 1 : out;
    }
    if (shp_ranked(x) && (x->shape.rank < 1 || x->shape.rank > 2))
        return shp_fail(err, n, "input '%s' must be [C] or [B, C], got rank %d", x->name,
                        x->shape.rank);
    bd_shape s = shp_dynamic(0);
    if (!shp_ranked(x)) {
        shp_set_unknown(n->outputs[0], BD_DT_FLOAT);
        return 0;
    }
    if (x->shape.rank == 2)
        shp_push(&s, &x->shape, 0);
    shp_push_dim(&s, out);
    shp_set(n->outputs[0], BD_DT_FLOAT, &s);
    return 0;
}
