/* Ops whose outputs are (or describe) constants: Shape (folded when the dims it reports are
 * static), Constant, ConstantOfShape. */
#include "shape_rules.h"

#include <string.h>

/* Shape: INT64 [end - start] (start/end from opset 15, clamped like Slice). */
int shp_shape(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
    bd_value *x = shp_in(n, 0), *out = n->outputs[0];
    int64_t start, end;
    if ((rc = shp_attr_int(n, "start", 0, &start, err)) ||
        (rc = shp_attr_int(n, "end", INT64_MAX, &end, err)))
        return rc;
    if (!shp_ranked(x)) {
        bd_shape s = shp_dynamic(1);
        shp_set(out, BD_DT_INT64, &s);
        return 0;
    }
    int64_t r = x->shape.rank;
    start = start < 0 ? start + r : start;
    end   = end < 0 ? end + r : end;
    start = start < 0 ? 0 : start > r ? r : start;
    end   = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    bd_shape s = shp_dynamic(1);
    s.dims[0] = len;
    shp_set(out, BD_DT_INT64, &s);
    int64_t vals[BD_MAX_RANK];
    for (int64_t i = 0; i < len; i++) {
        vals[i] = x->shape.dims[start + i];
        if (vals[i] < 0)
            return 0;                      /* a dynamic dim: known only at run time */
    }
    return shp_fold_int64(g, out, vals, (size_t)len, err);
}

/* Constant: the value of its one attribute (value, value_int(s), value_float(s)). */
int shp_constant(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 0, 0, 1, err);
    if (rc)
        return rc;
    bd_value *out = n->outputs[0];
    const bd_attr *a;
    bd_shape s = shp_dynamic(0);
    if ((a = bd_node_attr(n, "value"))) {
        if (a->type != BD_ATTR_TENSOR || !a->tensor)
            return shp_fail(err, n, "attribute 'value' must be a TENSOR");
        const bd_value *t = a->tensor;
        int64_t count;
        if ((rc = shp_numel(n, &t->shape, &count, err)))
            return rc;
        size_t esize = bd_dtype_size(t->dtype);
        if (count < 0 || !esize || (uint64_t)count > SIZE_MAX / esize ||
            (size_t)count * esize != t->nbytes || (count > 0 && !t->data))
            return shp_fail(err, n, "attribute 'value' has %zu bytes, not what its type and "
                            "shape need", t->nbytes);
        shp_set(out, t->dtype, &t->shape);
        out->data   = t->data ? t->data : bd_graph_alloc(g, 1);
        out->nbytes = t->nbytes;
        return out->data ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    if ((a = bd_node_attr(n, "value_int"))) {
        if (a->type != BD_ATTR_INT)
            return shp_fail(err, n, "attribute 'value_int' must be an INT");
        shp_set(out, BD_DT_INT64, &s);
        return shp_fold_int64(g, out, &a->i, 1, err);
    }
    if ((a = bd_node_attr(n, "value_ints"))) {
        if (a->type != BD_ATTR_INTS || (a->n && !a->ints))
            return shp_fail(err, n, "attribute 'value_ints' must be INTS");
        s.rank = 1;
        s.dims[0] = (int64_t)a->n;
        shp_set(out, BD_DT_INT64, &s);
        return shp_fold_int64(g, out, a->ints, a->n, err);
    }
    bool scalar = (a = bd_node_attr(n, "value_float")) != NULL;
    if (scalar || (a = bd_node_attr(n, "value_floats"))) {
        if (scalar ? a->type != BD_ATTR_FLOAT : a->type != BD_ATTR_FLOATS || (a->n && !a->floats))
            return shp_fail(err, n, "attribute '%s' must be %s", a->name,
                            scalar ? "a FLOAT" : "FLOATS");
        size_t count = scalar ? 1 : a->n;
        float *p = bd_graph_alloc(g, count * sizeof *p);
        if (!p)
            return bd_error_set(err, BD_ENOMEM, "out of memory folding '%s'", out->name);
        if (scalar)
            p[0] = a->f;
        else if (count)
            memcpy(p, a->floats, count * sizeof *p);
        if (!scalar) {
            s.rank = 1;
            s.dims[0] = (int64_t)count;
        }
        shp_set(out, BD_DT_FLOAT, &s);
        out->data   = p;
        out->nbytes = count * sizeof *p;
        return 0;
    }
    return shp_unsupported(err, n, "no supported value attribute (value, value_int(s), "
                           "value_float(s))");
}

/* ConstantOfShape: shape from a constant INT64 input, type from the 'value' tensor (FLOAT
 * 0 by default). Not folded: the output can be large; it runs as a node. */
int shp_constant_of_shape(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc = shp_arity(n, 1, 1, 1, err);
    if (rc)
        return rc;
    bd_value *in = shp_in(n, 0), *out = n->outputs[0];
    const bd_attr *a = bd_node_attr(n, "value");
    int dtype = BD_DT_FLOAT;
    if (a) {
        if (a->type != BD_ATTR_TENSOR || !a->tensor)
            return shp_fail(err, n, "attribute 'value' must be a TENSOR");
        dtype = a->tensor->dtype;
    }
    if (!shp_is_const(in)) {
        if (shp_ranked(in) && in->shape.rank == 1 && in->shape.dims[0] >= 0 &&
            in->shape.dims[0] <= BD_MAX_RANK) {
            bd_shape s = shp_dynamic((int)in->shape.dims[0]);
            shp_set(out, dtype, &s);
        } else {
            shp_set_unknown(out, dtype);
        }
        return 0;
    }
    int64_t dims[BD_MAX_RANK];
    size_t len;
    if ((rc = shp_const_ints(n, "shape", in, dims, BD_MAX_RANK, &len, err)))
        return rc;
    for (size_t i = 0; i < len; i++)
        if (dims[i] < 0)
            return shp_fail(err, n, "shape[%zu] = %lld is negative", i, (long long)dims[i]);
    bd_shape s = bd_shape_make((int)len, dims);
    shp_set(out, dtype, &s);
    return 0;
}
