/* Sampling ops whose output grid comes from another input: GridSample (the grid's spatial
 * dims), RoiAlign (one [C, output_height, output_width] window per region) and MaxRoiPool
 * (one [C, pooled_shape] window per region). */
#include "partitioner/shape/shape_rules.h"

/* GridSample(X [N, C, D1..Dk], grid [N, D1'..Dk', k]): Y [N, C, D1'..Dk'] (opset 16 is 2-D:
 * k = 2; later opsets any k). */
int shp_grid_sample(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, mode, pad;
    static const char *const modes[] = { "bilinear", "nearest", "bicubic", "linear", "cubic" };
    static const char *const pads[] = { "zeros", "border", "reflection" };
    bd_value *x = shp_in(n, 0), *grid = shp_in(n, 1), *out = n->outputs[0];
    int64_t align;
    if ((rc = shp_attr_choice(n, "mode", modes, 5, 0, &mode, err)) ||
        (rc = shp_attr_choice(n, "padding_mode", pads, 3, 0, &pad, err)) ||
        (rc = shp_attr_int(n, "align_corners", 0, &align, err)))
        return rc;
    if (shp_ranked(x) && x->shape.rank < 3)
        return shp_fail(err, n, "X '%s' must have rank >= 3 (N, C, spatial...), got %d", x->name,
                        x->shape.rank);
    if (shp_ranked(grid) && grid->shape.rank < 3)
        return shp_fail(err, n, "grid '%s' must have rank >= 3 (N, spatial..., k), got %d",
                        grid->name, grid->shape.rank);
    if (!shp_ranked(x) || !shp_ranked(grid)) {
        int rank = shp_ranked(x) ? x->shape.rank : shp_ranked(grid) ? grid->shape.rank : -1;
        if (rank < 0)
            shp_set_unknown(out, x->dtype);
        else
            shp_set_rank(out, x->dtype, rank);
        return 0;
    }
    const bd_shape *xs = &x->shape, *gs = &grid->shape;
    int r = xs->rank;
    if ((rc = shp_expect_rank(n, "grid", grid, r, err)) ||
        (rc = shp_expect_dim(n, "grid", grid, 0, xs->dims[0], "X's batch", err)) ||
        (rc = shp_expect_dim(n, "grid", grid, r - 1, r - 2, "X's spatial rank", err)))
        return rc;
    bd_shape s = shp_dynamic(0);
    shp_push(&s, xs->dims[0] >= 0 ? xs : gs, 0);
    shp_push(&s, xs, 1);
    for (int i = 1; i < r - 1; i++)
        shp_push(&s, gs, i);
    shp_set(out, x->dtype, &s);
    return 0;
}

/* RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]): Y [R, C, output_height,
 * output_width] (both 1 by default). */
int shp_roi_align(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc, mode, ctm;
    static const char *const modes[] = { "avg", "max" };
    static const char *const ctms[] = { "half_pixel", "output_half_pixel" };
    bd_value *x = shp_in(n, 0), *rois = shp_in(n, 1), *bi = shp_in(n, 2);
    int64_t oh, ow, ratio;
    float scale;
    if ((rc = shp_attr_choice(n, "mode", modes, 2, 0, &mode, err)) ||
        (rc = shp_attr_choice(n, "coordinate_transformation_mode", ctms, 2, 0, &ctm, err)) ||
        (rc = shp_attr_int(n, "output_height", 1, &oh, err)) ||
        (rc = shp_attr_int(n, "output_width", 1, &ow, err)) ||
        (rc = shp_attr_int(n, "sampling_ratio", 0, &ratio, err)) ||
        (rc = shp_attr_float(n, "spatial_scale", 1.0f, &scale, err)))
        return rc;
    if (oh < 1 || ow < 1)
        return shp_fail(err, n, "output_height %lld and output_width %lld must be >= 1",
                        (long long)oh, (long long)ow);
    if (ratio < 0)
        return shp_fail(err, n, "attribute 'sampling_ratio' = %lld is negative", (long long)ratio);
    if ((rc = shp_check_dtype(n, "batch_indices", bi, BD_DT_INT64, err)) ||
        (rc = shp_expect_rank(n, "X", x, 4, err)) ||
        (rc = shp_expect_rank(n, "rois", rois, 2, err)) ||
        (rc = shp_expect_rank(n, "batch_indices", bi, 1, err)))
        return rc;
    if (shp_ranked(rois) &&
        (rc = shp_expect_dim(n, "rois", rois, 1, 4, "x1, y1, x2, y2", err)))
        return rc;
    int64_t nr = shp_ranked(rois) ? rois->shape.dims[0] : -1;
    const char *nr_sym = shp_ranked(rois) ? rois->shape.sym[0] : NULL;
    if (shp_ranked(bi)) {
        if ((rc = shp_expect_dim(n, "batch_indices", bi, 0, nr, "the number of rois", err)))
            return rc;
        if (nr < 0) {
            nr = bi->shape.dims[0];
            nr_sym = bi->shape.sym[0];
        }
    }
    bd_shape s = shp_dynamic(4);
    s.dims[0] = nr;
    s.sym[0]  = nr < 0 ? nr_sym : NULL;
    s.dims[1] = shp_ranked(x) ? x->shape.dims[1] : -1;
    s.sym[1]  = shp_ranked(x) ? x->shape.sym[1] : NULL;
    s.dims[2] = oh;
    s.dims[3] = ow;
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}

/* MaxRoiPool(X [N, C, H, W], rois [R, 5]: batch index, x1, y1, x2, y2): Y [R, C, pooled_h,
 * pooled_w] (the required pooled_shape attribute). */
int shp_max_roi_pool(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0), *rois = shp_in(n, 1);
    const int64_t *ps;
    size_t nps;
    float scale;
    if ((rc = shp_attr_ints(n, "pooled_shape", &ps, &nps, err)) ||
        (rc = shp_attr_float(n, "spatial_scale", 1.0f, &scale, err)))
        return rc;
    if (nps != 2 || ps[0] < 1 || ps[1] < 1)
        return shp_fail(err, n, "attribute 'pooled_shape' must hold two sizes >= 1");
    if (!(scale > 0))
        return shp_fail(err, n, "attribute 'spatial_scale' = %g must be positive", scale);
    if ((rc = shp_expect_rank(n, "X", x, 4, err)) ||
        (rc = shp_expect_rank(n, "rois", rois, 2, err)))
        return rc;
    if (shp_ranked(rois) &&
        (rc = shp_expect_dim(n, "rois", rois, 1, 5, "batch index, x1, y1, x2, y2", err)))
        return rc;
    bd_shape s = shp_dynamic(4);
    s.dims[0] = shp_ranked(rois) ? rois->shape.dims[0] : -1;
    s.sym[0]  = shp_ranked(rois) && s.dims[0] < 0 ? rois->shape.sym[0] : NULL;
    s.dims[1] = shp_ranked(x) ? x->shape.dims[1] : -1;
    s.sym[1]  = shp_ranked(x) ? x->shape.sym[1] : NULL;
    s.dims[2] = ps[0];
    s.dims[3] = ps[1];
    shp_set(n->outputs[0], x->dtype, &s);
    return 0;
}
