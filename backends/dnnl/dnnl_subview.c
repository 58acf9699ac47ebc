/* Split and Slice (unit steps): each output is a view of a sub-box of its input (a oneDNN
 * sub-memory), no step of its own. A consumer reads the view through the reorder it needs
 * anyway (into its own layout), so a slice costs nothing beyond that; the input keeps its
 * layout, blocked included, when the box's offsets fall on the blocks' edges, and is made
 * plain otherwise. The boxes come from the outputs' inferred shapes (and, for Slice, its
 * constant starts), so Split's sizes input or attribute needs no reading. */
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

/* Define Y as the box of X at offsets OFFS with Y's dims. */
static int define_box(dn_compiler *c, const bd_value *x, const bd_value *y, const int64_t *offs)
{
    const dn_tensor *t = dn_tensor_of(c, x);
    if (!t)
        return c->err ? c->err->code : BD_EBACKEND;
    int rank = x->shape.rank, buf = t->buf, rc;
    dnnl_dims_t dims, off;
    for (int d = 0; d < rank; d++) {
        dims[d] = y->shape.dims[d];
        off[d] = offs[d];
    }
    dnnl_memory_desc_t md = t->md, sub;
    if (t->strided_view || md.offset0 != 0 ||
        dnnl_memory_desc_init_submemory(&sub, &md, dims, off) != dnnl_success) {
        if ((rc = dn_input_plain(c, x, &buf, &md)))
            return rc;
        if ((rc = dn_check(c, dnnl_memory_desc_init_submemory(&sub, &md, dims, off),
                           "dnnl_memory_desc_init_submemory")))
            return rc;
    }
    return dn_define_view(c, y, buf, &sub, true);
}

/* ---- Split -------------------------------------------------------------------------------- */

bool dn_split_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 1 || !n->inputs[0] || n->n_outputs < 1)
        return dn_why(why, len, "Split needs an input and outputs");
    if (!dn_no_post(n, why, len))
        return false;
    const bd_value *x = n->inputs[0];
    if (!dn_is_f32_static(x))
        return dn_why(why, len, "input '%s' is not FP32 with a static shape", x->name);
    int rank = x->shape.rank, axis = norm_axis(bd_node_attr_int(n, "axis", 0), rank);
    if (rank < 1 || axis < 0 || axis >= rank)
        return dn_why(why, len, "Split axis out of range");
    int64_t sum = 0;
    for (size_t i = 0; i < n->n_outputs; i++) {
        const bd_value *y = n->outputs[i];
        if (!dn_is_f32_static(y) || y->shape.rank != rank)
            return dn_why(why, len, "output '%s' is not FP32 with a static shape", y->name);
        for (int d = 0; d < rank; d++)
            if (d != axis && y->shape.dims[d] != x->shape.dims[d])
                return dn_why(why, len, "output '%s' differs from the input off the split axis", y->name);
        if (y->shape.dims[axis] <= 0)
            return dn_why(why, len, "output '%s' is empty", y->name);
        sum += y->shape.dims[axis];
    }
    if (sum != x->shape.dims[axis])
        return dn_why(why, len, "Split outputs do not cover the input's axis %d", axis);
    return true;
}

int dn_split_build(dn_compiler *c, const bd_node *n)
{
    const bd_value *x = n->inputs[0];
    int rank = x->shape.rank, axis = norm_axis(bd_node_attr_int(n, "axis", 0), rank), rc = 0;
    int64_t offs[BD_MAX_RANK] = { 0 };
    for (size_t i = 0; i < n->n_outputs && !rc; i++) {
        rc = define_box(c, x, n->outputs[i], offs);
        offs[axis] += n->outputs[i]->shape.dims[axis];
    }
    return rc;
}

/* ---- Slice (opset 10+: starts, ends, axes, steps as inputs) ---------------------------------- */

/* The box's offsets of Slice N from its constant inputs, or false (steps other than 1, an
 * input that is not a constant INT64/INT32 vector, an axis out of range). */
static bool slice_offsets(const bd_node *n, int64_t *offs)
{
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    int rank = x->shape.rank;
    int64_t starts[BD_MAX_RANK], axes[BD_MAX_RANK], steps[BD_MAX_RANK];
    size_t ns = 0;
    for (size_t k = 1; k < 5 && k < n->n_inputs; k++) {
        const bd_value *v = n->inputs[k];
        if (!v)
            continue;
        if (!v->data || v->shape.rank != 1 || (v->dtype != BD_DT_INT64 && v->dtype != BD_DT_INT32) ||
            v->shape.dims[0] < 1 || v->shape.dims[0] > rank || v->nbytes < (size_t)v->shape.dims[0] * bd_dtype_size(v->dtype))
            return false;
        if (k == 1)
            ns = (size_t)v->shape.dims[0];
        else if ((size_t)v->shape.dims[0] != ns)
            return false;
        int64_t *dst = k == 1 ? starts : k == 3 ? axes : k == 4 ? steps : NULL;
        for (size_t i = 0; dst && i < ns; i++)
            if (v->dtype == BD_DT_INT64) {                     /* at any address in the file */
                memcpy(&dst[i], (const char *)v->data + i * 8, 8);
            } else {
                int32_t x;
                memcpy(&x, (const char *)v->data + i * 4, 4);
                dst[i] = x;
            }
    }
    if (!ns)
        return false;
    memset(offs, 0, sizeof *offs * (size_t)rank);
    for (size_t i = 0; i < ns; i++) {
        int a = n->n_inputs > 3 && n->inputs[3] ? norm_axis(axes[i], rank) : (int)i;
        if (a < 0 || a >= rank || (n->n_inputs > 4 && n->inputs[4] && steps[i] != 1))
            return false;
        int64_t d = x->shape.dims[a], s = starts[i] < 0 ? starts[i] + d : starts[i];
        offs[a] = s < 0 ? 0 : s > d ? d : s;      /* ONNX clamps starts into [0, dim] */
    }
    for (int d = 0; d < rank; d++)
        if (offs[d] + y->shape.dims[d] > x->shape.dims[d])
            return false;
    return true;
}

bool dn_slice_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs < 3 || !n->inputs[0] || n->n_outputs != 1)
        return dn_why(why, len, "Slice needs data, starts and ends inputs (opset 10+)");
    if (!dn_io_f32(n, 1, why, len) || !dn_no_post(n, why, len))
        return false;
    if (n->inputs[0]->shape.rank != n->outputs[0]->shape.rank)
        return dn_why(why, len, "Slice changes the rank");
    int64_t offs[BD_MAX_RANK];
    if (!slice_offsets(n, offs))
        return dn_why(why, len, "Slice: starts/axes/steps must be constant with unit steps");
    return true;
}

int dn_slice_build(dn_compiler *c, const bd_node *n)
{
    int64_t offs[BD_MAX_RANK];
    if (!slice_offsets(n, offs))
        return dn_fail(c, BD_EUNSUPPORTED, "Slice parameters changed after annotation");
    return define_box(c, n->inputs[0], n->outputs[0], offs);
}
