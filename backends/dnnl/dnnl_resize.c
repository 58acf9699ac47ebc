/* Resize (nearest, linear) over the spatial dims of an NCHW or NHWC (data_format) tensor.
 * Linear with half_pixel coordinates (TF's half_pixel_centers, ONNX's default; also
 * pytorch_half_pixel when no output dim is 1) is oneDNN's resampling, whose linear mode uses
 * exactly those coordinates, in the input's layout. Every other combination (nearest in any
 * coordinate/rounding mode; linear with align_corners, asymmetric or tf_half_pixel_for_nn)
 * is an exact native step on plain memory (dnnl_native.c). Cubic, antialias,
 * exclude_outside, roi (tf_crop_and_resize) and resizing N or C are not supported. */
#include <math.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

typedef struct resize_geom {
    int     rank;
    bool    last, linear;
    int     ctm, nearest;
    int64_t xd[BD_MAX_RANK], yd[BD_MAX_RANK];   /* channels-first dims */
    float   scale[BD_MAX_RANK];                 /* IR order; 0 = from sizes */
} resize_geom;

static int ctm_of(const char *s)
{
    static const char *const names[] = { "half_pixel", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_half_pixel_for_nn" };
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static int nearest_of(const char *s)
{
    static const char *const names[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static bool geom(const bd_node *n, resize_geom *g, char *why, size_t len)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = x->shape.rank;
    memset(g, 0, sizeof *g);
    if (rank < 3 || rank > 5 || y->shape.rank != rank)
        return dn_why(why, len, "Resize needs a 1D, 2D or 3D spatial input");
    if (!dn_data_format_ok(n, why, len))
        return false;
    const char *mode = bd_node_attr_string(n, "mode", "nearest");
    g->linear = !strcmp(mode, "linear") || !strcmp(mode, "bilinear");
    if (!g->linear && strcmp(mode, "nearest"))
        return dn_why(why, len, "Resize mode '%s' is not supported", mode);
    const char *ctm = bd_node_attr_string(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = bd_node_attr_string(n, "nearest_mode", "round_prefer_floor");
    g->ctm = ctm_of(ctm);
    g->nearest = nearest_of(nm);
    if (g->ctm < 0)
        return dn_why(why, len, "Resize coordinate_transformation_mode '%s' is not supported", ctm);
    if (g->nearest < 0)
        return dn_why(why, len, "Resize nearest_mode '%s' is not supported", nm);
    if (bd_node_attr_int(n, "antialias", 0) || bd_node_attr_int(n, "exclude_outside", 0))
        return dn_why(why, len, "Resize antialias/exclude_outside are not supported");
    if (bd_node_attr(n, "axes"))
        return dn_why(why, len, "Resize axes attribute is not supported");
    g->rank = rank;
    g->last = dn_channels_last(n);
    dn_dims_cf(&x->shape, g->last, g->xd);
    dn_dims_cf(&y->shape, g->last, g->yd);
    if (g->xd[0] != g->yd[0] || g->xd[1] != g->yd[1])
        return dn_why(why, len, "Resize of the batch or channel dim is not supported");
    /* explicit scales (when sizes are not given) drive the coordinates */
    size_t nin = dn_num_op_inputs(n);
    const bd_value *sc = nin == 2 ? n->inputs[1] : nin > 2 ? n->inputs[2] : NULL;
    const bd_value *sz = nin > 3 ? n->inputs[3] : NULL;
    if (sz && bd_shape_numel(&sz->shape) == 0)
        sz = NULL;
    if (sc && bd_shape_numel(&sc->shape) == 0)
        sc = NULL;
    if (!sz && sc) {
        int64_t cnt = bd_shape_numel(&sc->shape);
        if (!sc->data || sc->dtype != BD_DT_FLOAT || (cnt != rank && cnt != rank - 2) ||
            sc->nbytes < (size_t)cnt * sizeof(float))
            return dn_why(why, len, "Resize scales '%s' must be constant FP32", sc->name);
        for (int64_t i = 0; i < cnt; i++) {
            int ax = cnt == rank ? (int)i : (int)i + (g->last ? 1 : 2);
            memcpy(&g->scale[ax], (const char *)sc->data + i * 4, 4);
            if (!(g->scale[ax] > 0))
                return dn_why(why, len, "Resize scales must be positive");
        }
        int cax = g->last ? rank - 1 : 1;
        if ((g->scale[0] != 0 && g->scale[0] != 1.0f) || (g->scale[cax] != 0 && g->scale[cax] != 1.0f))
            return dn_why(why, len, "Resize of the batch or channel dim is not supported");
    } else if (!sz) {
        return dn_why(why, len, "Resize needs constant scales or sizes");
    }
    return true;
}

/* oneDNN's linear resampling uses half-pixel coordinates (and clamps at the edges). */
static bool onednn_can(const resize_geom *g)
{
    if (!g->linear)
        return false;
    if (g->ctm == DN_CTM_HALF_PIXEL)
        return true;
    if (g->ctm != DN_CTM_PYTORCH_HALF_PIXEL)
        return false;
    for (int i = 2; i < g->rank; i++)
        if (g->yd[i] == 1)
            return false;
    return true;
}

bool dn_resize_supports(const bd_graph *gr, const bd_node *n, char *why, size_t len)
{
    (void)gr;
    if (n->n_inputs < 1 || !n->inputs[0])
        return dn_why(why, len, "Resize needs an input");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    resize_geom g;
    return geom(n, &g, why, len);
}

static int build_native(dn_compiler *c, const bd_node *n, const resize_geom *g)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = x->shape.rank, rc, sbuf, dbuf;
    dn_native nat;
    memset(&nat, 0, sizeof nat);
    nat.ip[0] = g->linear;
    nat.ip[1] = g->ctm;
    nat.ip[2] = g->nearest;
    for (int d = 0; d < rank; d++) {
        bool spatial = g->last ? d >= 1 && d < rank - 1 : d >= 2;
        nat.ip[3 + d] = spatial;
        nat.fp[d] = g->scale[d];
    }
    dnnl_memory_desc_t smd, dmd;
    if ((rc = dn_input_plain(c, x, &sbuf, &smd)))
        return rc;
    dn_md_of_shape(&dmd, y);
    if ((rc = dn_output(c, y, &dmd, &dbuf)))
        return rc;
    dn_arg a[2] = { { DNNL_ARG_SRC, sbuf, smd }, { DNNL_ARG_DST, dbuf, dmd } };
    return dn_add_native(c, DN_STEP_RESIZE, a, 2, &nat);
}

int dn_resize_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    char why[160];
    resize_geom g;
    if (!geom(n, &g, why, sizeof why))
        return dn_fail(c, BD_EUNSUPPORTED, "%s", why);
    if (!onednn_can(&g))
        return build_native(c, n, &g);
    int rank = x->shape.rank, nsp = rank - 2, rc, sbuf, dbuf;
    float factors[3];
    for (int i = 0; i < nsp; i++) {
        float s = g.scale[g.last ? 1 + i : 2 + i];
        factors[i] = s > 0 ? s : (float)g.yd[2 + i] / (float)g.xd[2 + i];
    }
    dnnl_memory_desc_t smd, dany, dir;
    if ((rc = dn_input_cf(c, x, g.last, &sbuf, &smd)))
        return rc;
    dn_md_any(&dany, rank, g.yd);
    dnnl_resampling_desc_t desc;
    dnnl_primitive_desc_t pd;
    rc = dn_pd_make(c, dnnl_resampling_forward_desc_init(&desc, dnnl_forward_inference, dnnl_resampling_linear,
                                                         factors, &smd, &dany),
                    "dnnl_resampling_forward_desc_init", &desc, NULL, 1.0f, &pd);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *dmd = dn_pd_md(pd, dnnl_query_dst_md);
    if ((rc = dn_md_ir(c, g.last, &dir, dmd)) || (rc = dn_output(c, y, &dir, &dbuf))) {
        dnnl_primitive_desc_destroy(pd);
        return rc;
    }
    dn_arg args[2] = { { DNNL_ARG_SRC, sbuf, smd }, { DNNL_ARG_DST, dbuf, *dmd } };
    return dn_add_step(c, pd, args, 2);
}
