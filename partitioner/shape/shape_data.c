/* Reading and producing the constant integer tensors that shape arithmetic works on. */
#include "partitioner/shape/shape_rules.h"

#include <string.h>

bool shp_is_const(const bd_value *v)
{
    return v && v->data != NULL;
}

bool shp_foldable(int dtype)
{
    return dtype == BD_DT_INT64 || dtype == BD_DT_INT32 || dtype == BD_DT_BOOL;
}

bool shp_is_int_const(const bd_value *v)
{
    if (!shp_is_const(v) || !shp_foldable(v->dtype))
        return false;
    if (v->shape.rank < 0 || v->shape.rank > BD_MAX_RANK)
        return false;
    int64_t count = 1;
    for (int i = 0; i < v->shape.rank; i++)
        if (v->shape.dims[i] < 0 || !shp_mul(count, v->shape.dims[i], &count))
            return false;
    return count <= SHP_FOLD_MAX && (size_t)count * bd_dtype_size(v->dtype) == v->nbytes;
}

int64_t shp_const_at(const bd_value *v, int64_t i)
{
    const unsigned char *p = v->data;
    if (v->dtype == BD_DT_BOOL)
        return p[i] != 0;
    if (v->dtype == BD_DT_INT32) {
        int32_t x;
        memcpy(&x, p + (size_t)i * sizeof x, sizeof x);
        return x;
    }
    int64_t x;
    memcpy(&x, p + (size_t)i * sizeof x, sizeof x);
    return x;
}

int shp_const_ints(const bd_node *n, const char *what, const bd_value *v, int64_t *buf,
                   size_t cap, size_t *count, bd_error *err)
{
    if (!shp_is_int_const(v) || v->dtype == BD_DT_BOOL)
        return shp_fail(err, n, "%s '%s' must be a constant INT64 tensor", what,
                        v && v->name ? v->name : "?");
    if (v->shape.rank > 1)
        return shp_fail(err, n, "%s '%s' must be 1-D, got rank %d", what, v->name, v->shape.rank);
    size_t len = v->nbytes / bd_dtype_size(v->dtype);
    if (len > cap)
        return shp_fail(err, n, "%s '%s' has %zu elements, at most %zu expected", what, v->name,
                        len, cap);
    for (size_t i = 0; i < len; i++)
        buf[i] = shp_const_at(v, (int64_t)i);
    *count = len;
    return 0;
}

bool shp_const_number(const bd_value *v, double *out)
{
    size_t es = v ? bd_dtype_size(v->dtype) : 0;
    if (!shp_is_const(v) || !es || v->nbytes < es)
        return false;
    const unsigned char *p = v->data;
    union { float f; double d; int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32;
            uint32_t u32; int64_t i64; uint64_t u64; } x;
    memcpy(&x, p, es);                     /* initializers may be unaligned */
    switch (v->dtype) {
    case BD_DT_FLOAT:  *out = x.f;   return true;
    case BD_DT_DOUBLE: *out = x.d;   return true;
    case BD_DT_INT8:   *out = x.i8;  return true;
    case BD_DT_UINT8:  *out = x.u8;  return true;
    case BD_DT_BOOL:   *out = x.u8 != 0; return true;
    case BD_DT_INT16:  *out = x.i16; return true;
    case BD_DT_UINT16: *out = x.u16; return true;
    case BD_DT_INT32:  *out = x.i32; return true;
    case BD_DT_UINT32: *out = x.u32; return true;
    case BD_DT_INT64:  *out = (double)x.i64; return true;
    case BD_DT_UINT64: *out = (double)x.u64; return true;
    default:           return false;       /* FLOAT16/BFLOAT16: not read here */
    }
}

int shp_check_dtype(const bd_node *n, const char *what, const bd_value *v, int dtype,
                    bd_error *err)
{
    if (v->dtype != dtype && v->dtype != BD_DT_UNDEFINED)
        return shp_fail(err, n, "%s '%s' must be %s, got %s", what, v->name, bd_dtype_name(dtype),
                        bd_dtype_name(v->dtype));
    return 0;
}

int shp_axes_input(const bd_node *n, int64_t *axes, size_t *count, bool *known, bool *present,
                   bd_error *err)
{
    const int64_t *attr;
    bd_value *in = shp_in(n, 1);
    int rc = shp_attr_ints(n, "axes", &attr, count, err);
    if (rc)
        return rc;
    *known = true;
    *present = attr != NULL || in != NULL;
    if (attr && in)
        return shp_fail(err, n, "axes given both as attribute and as input");
    if (attr) {
        if (*count > BD_MAX_RANK)
            return shp_fail(err, n, "attribute 'axes' has %zu values, more than any rank", *count);
        memcpy(axes, attr, *count * sizeof *axes);
        return 0;
    }
    if (!in) {
        *count = 0;
        return 0;
    }
    if (!shp_is_const(in)) {
        *known = false;
        return 0;
    }
    return shp_const_ints(n, "axes", in, axes, BD_MAX_RANK, count, err);
}

void shp_set_shaped_by(bd_value *out, int dtype, const bd_value *sv)
{
    int64_t len = shp_len_1d(sv);
    if (len >= 0 && len <= BD_MAX_RANK)
        shp_set_rank(out, dtype, (int)len);
    else
        shp_set_unknown(out, dtype);
}

int shp_fold_ints(bd_graph *g, bd_value *out, const int64_t *vals, size_t count, bd_error *err)
{
    if (out->dtype != BD_DT_INT32 && out->dtype != BD_DT_BOOL)
        out->dtype = BD_DT_INT64;
    size_t nbytes = count * bd_dtype_size(out->dtype);
    unsigned char *p = bd_graph_alloc(g, nbytes);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory folding constant '%s'", out->name);
    for (size_t i = 0; i < count; i++) {
        if (out->dtype == BD_DT_BOOL) {
            p[i] = vals[i] != 0;
        } else if (out->dtype == BD_DT_INT32) {
            int32_t x = (int32_t)vals[i];
            memcpy(p + i * sizeof x, &x, sizeof x);
        } else {
            memcpy(p + i * sizeof *vals, &vals[i], sizeof *vals);
        }
    }
    out->data   = p;
    out->nbytes = nbytes;
    return 0;
}

void shp_fold_view(bd_value *out, const bd_value *in)
{
    out->data   = in->data;
    out->nbytes = in->nbytes;
}
