/* Scatters: ScatterND, ScatterElements and its opset 9-10 name Scatter. Each writes updates into
 * a copy of data, so the output is data's shape and dtype; the rules check that indices and
 * updates fit data as the spec requires, and the 'reduction' attribute. */
#include "partitioner/shape/shape_rules.h"

static int check_reduction(const bd_node *n, bd_error *err)
{
    static const char *const kinds[] = { "none", "add", "mul", "max", "min" };
    int kind;
    return shp_attr_choice(n, "reduction", kinds, 5, 0, &kind, err);
}

static int check_types(const bd_node *n, const bd_value *data, const bd_value *idx,
                       const bd_value *upd, bool int32_ok, bd_error *err)
{
    if (idx->dtype != BD_DT_INT64 && (!int32_ok || idx->dtype != BD_DT_INT32) &&
        idx->dtype != BD_DT_UNDEFINED)
        return shp_fail(err, n, "indices '%s' must be %s, got %s", idx->name,
                        int32_ok ? "INT32 or INT64" : "INT64", bd_dtype_name(idx->dtype));
    if (data->dtype != BD_DT_UNDEFINED && upd->dtype != BD_DT_UNDEFINED && data->dtype != upd->dtype)
        return shp_fail(err, n, "updates '%s' is %s but data '%s' is %s", upd->name,
                        bd_dtype_name(upd->dtype), data->name, bd_dtype_name(data->dtype));
    return 0;
}

/* ScatterND(data [r], indices [q], updates): indices.shape[-1] = m in [1, r], and updates has
 * the shape indices.shape[:-1] + data.shape[m:]. */
int shp_scatter_nd(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *data = shp_in(n, 0), *idx = shp_in(n, 1), *upd = shp_in(n, 2);
    if ((rc = check_reduction(n, err)) || (rc = check_types(n, data, idx, upd, false, err)))
        return rc;
    if (shp_ranked(data) && data->shape.rank < 1)
        return shp_fail(err, n, "data '%s' must have rank >= 1", data->name);
    if (shp_ranked(idx) && idx->shape.rank < 1)
        return shp_fail(err, n, "indices '%s' must have rank >= 1", idx->name);
    if (shp_ranked(data) && shp_ranked(idx) && idx->shape.dims[idx->shape.rank - 1] >= 0) {
        const bd_shape *ds = &data->shape, *is = &idx->shape;
        int r = ds->rank, q = is->rank;
        int64_t m = is->dims[q - 1];
        if (m < 1 || m > r)
            return shp_fail(err, n, "indices' last dim %lld must be between 1 and data's rank %d",
                            (long long)m, r);
        if (shp_ranked(upd)) {
            bd_shape want = shp_dynamic(0);
            for (int i = 0; i < q - 1; i++)
                shp_push(&want, is, i);
            for (int i = (int)m; i < r && want.rank < BD_MAX_RANK; i++)
                shp_push(&want, ds, i);
            bool fits = q - 1 + r - (int)m == upd->shape.rank;
            for (int i = 0; fits && i < want.rank; i++)
                fits = want.dims[i] < 0 || upd->shape.dims[i] < 0 || want.dims[i] == upd->shape.dims[i];
            if (!fits) {
                char su[96], sw[96];
                return shp_fail(err, n, "updates '%s' %s must be indices.shape[:-1] + "
                                "data.shape[%lld:] = %s", upd->name,
                                shp_str(&upd->shape, su, sizeof su), (long long)m,
                                shp_str(&want, sw, sizeof sw));
            }
        }
    }
    return shp_pass_through(n);
}

/* ScatterElements / Scatter(data, indices, updates): all three of one rank, indices and updates
 * of one shape, 'axis' (default 0) a dim of data. */
int shp_scatter_elements(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *data = shp_in(n, 0), *idx = shp_in(n, 1), *upd = shp_in(n, 2);
    int64_t axis;
    if ((rc = shp_attr_int(n, "axis", 0, &axis, err)) || (rc = check_reduction(n, err)) ||
        (rc = check_types(n, data, idx, upd, true, err)))
        return rc;
    const bd_value *vs[3] = { data, idx, upd };
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (shp_ranked(vs[i]) && shp_ranked(vs[j]) && vs[i]->shape.rank != vs[j]->shape.rank)
                return shp_fail(err, n, "'%s' (rank %d) and '%s' (rank %d) must have the same "
                                "rank", vs[i]->name, vs[i]->shape.rank, vs[j]->name,
                                vs[j]->shape.rank);
    if (shp_ranked(idx) && shp_ranked(upd))
        for (int i = 0; i < idx->shape.rank; i++)
            if ((rc = shp_expect_dim(n, "updates", upd, i, idx->shape.dims[i],
                                     "the indices' dim", err)))
                return rc;
    if (!shp_ranked(data))
        return shp_all_unknown(n);
    int ax;
    if ((rc = shp_axis_of(n, "data", data, axis, &ax, err)))
        return rc;
    return shp_pass_through(n);
}
