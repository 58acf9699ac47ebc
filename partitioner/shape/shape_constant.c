/* Ops whose outputs are (or describe) constants: Shape and Size (folded when the dims they
 * report are static), Constant, ConstantOfShape, Range. */
#include "partitioner/shape/shape_rules.h"

#include <math.h>
#include <string.h>

/* Shape: INT64 [end - start] (start/end from opset 15, clamped like Slice). */
int shp_shape(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *x = shp_in(n, 0), *out = n->outputs[0];
    int64_t start, end;
    if ((rc = shp_attr_int(n, "start", 0, &start, err)) ||
        (rc = shp_attr_int(n, "end", INT64_MAX, &end, err)))
        return rc;
    if (!shp_ranked(x)) {
        shp_set_rank(out, BD_DT_INT64, 1);
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
    return shp_fold_ints(g, out, vals, (size_t)len, err);
}

/* Size: INT64 scalar, the element count of the input; folded when the input's shape is
 * static. */
int shp_size(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *x = shp_in(n, 0), *out = n->outputs[0];
    bd_shape s = shp_dynamic(0);
    shp_set(out, BD_DT_INT64, &s);
    if (!shp_ranked(x))
        return 0;
    int64_t count;
    int rc = shp_numel(n, &x->shape, &count, err);
    if (rc || count < 0)
        return rc;
    return shp_fold_ints(g, out, &count, 1, err);
}

/* Constant: the value of its one attribute (value, value_int(s), value_float(s)). */
int shp_constant(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
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
        return shp_fold_ints(g, out, &a->i, 1, err);
    }
    if ((a = bd_node_attr(n, "value_ints"))) {
        if (a->type != BD_ATTR_INTS || (a->n && !a->ints))
            return shp_fail(err, n, "attribute 'value_ints' must be INTS");
        s.rank = 1;
        s.dims[0] = (int64_t)a->n;
        shp_set(out, BD_DT_INT64, &s);
        return shp_fold_ints(g, out, a->ints, a->n, err);
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

/* ConstantOfShape: shape from a constant INT64 input, type and fill from the 'value'
 * tensor (FLOAT 0 by default). Folded only when small and of an integer type (the
 * ConstantOfShape -> Mul -> Equal -> Where chains of exported expand()). */
int shp_constant_of_shape(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *in = shp_in(n, 0), *out = n->outputs[0];
    const bd_attr *a = bd_node_attr(n, "value");
    int dtype = BD_DT_FLOAT;
    if (a) {
        if (a->type != BD_ATTR_TENSOR || !a->tensor)
            return shp_fail(err, n, "attribute 'value' must be a TENSOR");
        dtype = a->tensor->dtype;
    }
    if (!shp_is_const(in)) {
        shp_set_shaped_by(out, dtype, in);
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
    int64_t count, vals[SHP_FOLD_MAX];
    if (!a || !shp_is_int_const(a->tensor) || bd_shape_numel(&a->tensor->shape) != 1 ||
        (rc = shp_numel(n, &s, &count, err)) || count < 0 || count > SHP_FOLD_MAX)
        return rc;
    for (int64_t i = 0; i < count; i++)
        vals[i] = shp_const_at(a->tensor, 0);
    return shp_fold_ints(g, out, vals, (size_t)count, err);
}

/* A FLOAT or DOUBLE scalar constant as a double; false when V is not one. */
static bool float_scalar(const bd_value *v, double *out)
{
    if (!shp_is_const(v) || bd_shape_numel(&v->shape) != 1)
        return false;
    if (v->dtype == BD_DT_FLOAT && v->nbytes == sizeof(float)) {
        float f;
        memcpy(&f, v->data, sizeof f);
        *out = f;
        return true;
    }
    if (v->dtype == BD_DT_DOUBLE && v->nbytes == sizeof(double)) {
        memcpy(out, v->data, sizeof *out);
        return true;
    }
    return false;
}

/* Floating-point Range: only the length is inferred (values are computed at run time). */
static int range_float(bd_node *n, bd_value *const *in, bd_shape *s, bd_error *err)
{
    double v[3];
    for (int i = 0; i < 3; i++)
        if (!float_scalar(in[i], &v[i]))
            return 0;
    double len = ceil((v[1] - v[0]) / v[2]);
    if (v[2] == 0 || !isfinite(len) || len > (double)SHP_FOLD_MAX * SHP_FOLD_MAX)
        return shp_fail(err, n, "range(%g, %g, %g) has no valid length", v[0], v[1], v[2]);
    s->dims[0] = len > 0 ? (int64_t)len : 0;
    return 0;
}

/* Range(start, limit, delta): 1-D of max(ceil((limit - start) / delta), 0) elements; the
 * length is known when all three are constants, and integer values are folded. */
int shp_range(bd_graph *g, bd_node *n, bd_error *err)
{
    int rc;
    bd_value *in[3] = { shp_in(n, 0), shp_in(n, 1), shp_in(n, 2) }, *out = n->outputs[0];
    int dtype = in[0]->dtype;
    int64_t v[3];
    bd_shape s = shp_dynamic(1);
    if (dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE) {
        for (int i = 0; i < 3; i++)
            if (in[i]->dtype != dtype)
                return shp_fail(err, n, "inputs must share one type ('%s' is %s, '%s' is %s)",
                                in[0]->name, bd_dtype_name(dtype), in[i]->name,
                                bd_dtype_name(in[i]->dtype));
        if ((rc = range_float(n, in, &s, err)))
            return rc;
        shp_set(out, dtype, &s);
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        if (in[i]->dtype != dtype)
            return shp_fail(err, n, "inputs must share one type ('%s' is %s, '%s' is %s)",
                            in[0]->name, bd_dtype_name(dtype), in[i]->name,
                            bd_dtype_name(in[i]->dtype));
        if (shp_ranked(in[i]) && in[i]->shape.rank > 1)
            return shp_fail(err, n, "input '%s' must be a scalar", in[i]->name);
        if (!shp_is_int_const(in[i]) || dtype == BD_DT_BOOL ||
            bd_shape_numel(&in[i]->shape) != 1) {
            shp_set(out, dtype, &s);
            return 0;
        }
        v[i] = shp_const_at(in[i], 0);
    }
    if (v[2] == 0)
        return shp_fail(err, n, "delta is 0");
    /* |limit - start| in unsigned arithmetic: no overflow for any int64 pair. */
    bool up = v[2] > 0;
    uint64_t span = up ? (v[1] > v[0] ? (uint64_t)v[1] - (uint64_t)v[0] : 0)
                       : (v[0] > v[1] ? (uint64_t)v[0] - (uint64_t)v[1] : 0);
    uint64_t step = up ? (uint64_t)v[2] : 0 - (uint64_t)v[2];
    uint64_t len = span / step + (span % step != 0);
    if (len > (uint64_t)INT64_MAX)
        return shp_fail(err, n, "range length overflows int64");
    s.dims[0] = (int64_t)len;
    shp_set(out, dtype, &s);
    if (len > SHP_FOLD_MAX)
        return 0;
    int64_t vals[SHP_FOLD_MAX];
    for (uint64_t i = 0; i < len; i++)
        vals[i] = (int64_t)((uint64_t)v[0] + i * (uint64_t)v[2]);   /* in range by construction */
    return shp_fold_ints(g, out, vals, (size_t)len, err);
}

/* EyeLike: a 2-D input's shape, of the 'dtype' attribute's type (the input's by default). */
int shp_eye_like(bd_graph *g, bd_node *n, bd_error *err)
{
    (void)g;
    int rc;
    bd_value *x = shp_in(n, 0);
    int64_t dtype, k;
    if ((rc = shp_attr_int(n, "dtype", x->dtype, &dtype, err)) ||
        (rc = shp_attr_int(n, "k", 0, &k, err)))
        return rc;
    if (dtype < 0 || dtype > BD_DT_BFLOAT16 || (dtype != BD_DT_UNDEFINED &&
                                                 bd_dtype_size((int)dtype) == 0))
        return shp_fail(err, n, "attribute 'dtype' = %lld is not a numeric type", (long long)dtype);
    if (!shp_ranked(x)) {
        shp_set_rank(n->outputs[0], (int)dtype, 2);       /* EyeLike is 2-D only */
        return 0;
    }
    if (x->shape.rank != 2)
        return shp_fail(err, n, "input '%s' must be 2-D, got rank %d", x->name, x->shape.rank);
    shp_set(n->outputs[0], (int)dtype, &x->shape);
    return 0;
}
