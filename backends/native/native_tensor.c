/* Small helpers the native kernels share: support checks, reading integer constants and
 * run-time parameters, axes and strides, element access by dtype for the kernels that are
 * not type-specialised, replication, and the one parallel loop. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "backends/native/native_internal.h"

bool nv_why(char *why, size_t len, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return false;
}

size_t nv_shape_numel(const bd_shape *s)
{
    int64_t n = bd_shape_numel(s);
    return n < 0 ? 0 : (size_t)n;
}

bool nv_value_ok(const bd_value *v, unsigned mask)
{
    return v && v->dtype > 0 && v->dtype < 32 && (mask & NV_DT(v->dtype)) &&
           bd_shape_is_static(&v->shape) && bd_shape_numel(&v->shape) >= 0;
}

bool nv_output_ok(const bd_value *v, unsigned mask)
{
    if (!v || v->dtype <= 0 || v->dtype >= 32 || !(mask & NV_DT(v->dtype)) ||
        v->shape.rank > BD_MAX_RANK)
        return false;
    for (int d = 0; d < v->shape.rank; d++)
        if (v->shape.dims[d] < -1)
            return false;
    return true;
}

bool nv_io_ok(const bd_node *n, size_t nin, unsigned mask, char *why, size_t len)
{
    for (size_t i = 0; i < nin && i < n->n_inputs; i++) {
        const bd_value *v = n->inputs[i];
        if (v && !nv_value_ok(v, mask))
            return nv_why(why, len, "input '%s' (%s): dtype or a shape only known at run time",
                          v->name, bd_dtype_name(v->dtype));
    }
    for (size_t i = 0; i < n->n_outputs; i++)
        if (!nv_value_ok(n->outputs[i], mask))
            return nv_why(why, len, "output '%s' (%s): dtype or a shape only known at run time",
                          n->outputs[i]->name, bd_dtype_name(n->outputs[i]->dtype));
    return true;
}

bool nv_input_const(const bd_node *n, size_t i)
{
    const bd_value *v = bd_node_input(n, i);
    return v && v->data && bd_shape_is_static(&v->shape);
}

int64_t nv_read_ints(const void *data, int dtype, size_t numel, int64_t *out, size_t max)
{
    if ((dtype != BD_DT_INT64 && dtype != BD_DT_INT32) || numel > max || (numel && !data))
        return -1;
    const char *p = data;
    for (size_t i = 0; i < numel; i++) {
        if (dtype == BD_DT_INT64) {
            memcpy(&out[i], p + i * sizeof(int64_t), sizeof(int64_t));
        } else {
            int32_t v;
            memcpy(&v, p + i * sizeof v, sizeof v);
            out[i] = v;
        }
    }
    return (int64_t)numel;
}

int64_t nv_run_ints(const nv_tensor *t, int64_t *out, size_t max, const char *what,
                    bd_error *err)
{
    int64_t count = nv_read_ints(t->data, t->dtype, t->numel, out, max);
    if (count < 0)
        return bd_error_set(err, BD_EINVAL, "%s: %zu %s values, expected at most %zu INT32 or "
                            "INT64", what, t->numel, bd_dtype_name(t->dtype), max);
    return count;
}

int64_t nv_const_ints(const bd_value *v, int64_t *out, size_t max)
{
    if (!v || !v->data || !bd_shape_is_static(&v->shape))
        return -1;
    size_t n = nv_shape_numel(&v->shape);
    if (v->nbytes < n * bd_dtype_size(v->dtype))
        return -1;
    return nv_read_ints(v->data, v->dtype, n, out, max);
}

int nv_axis(int64_t axis, int rank)
{
    if (axis < -(int64_t)rank || axis >= (int64_t)(rank ? rank : 1))
        return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

void nv_strides(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

bool nv_dtype_is_float(int dtype)
{
    return dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE;
}

double nv_get_f(const void *p, int dtype, size_t i)
{
    switch (dtype) {
    case BD_DT_FLOAT:  return ((const float *)p)[i];
    case BD_DT_DOUBLE: return ((const double *)p)[i];
    case BD_DT_INT8:   return ((const int8_t *)p)[i];
    case BD_DT_UINT8:  case BD_DT_BOOL: return ((const uint8_t *)p)[i];
    case BD_DT_INT16:  return ((const int16_t *)p)[i];
    case BD_DT_UINT16: return ((const uint16_t *)p)[i];
    case BD_DT_INT32:  return ((const int32_t *)p)[i];
    case BD_DT_UINT32: return ((const uint32_t *)p)[i];
    case BD_DT_INT64:  return (double)((const int64_t *)p)[i];
    case BD_DT_UINT64: return (double)((const uint64_t *)p)[i];
    }
    return 0;
}

int64_t nv_f2i(double v)
{
    if (v != v)
        return 0;
    if (v <= -9223372036854775808.0)          /* -2^63 */
        return INT64_MIN;
    return v >= 9223372036854775808.0 ? INT64_MAX : (int64_t)v;
}

int64_t nv_get_i(const void *p, int dtype, size_t i)
{
    switch (dtype) {
    case BD_DT_FLOAT:  return nv_f2i(((const float *)p)[i]);
    case BD_DT_DOUBLE: return nv_f2i(((const double *)p)[i]);
    case BD_DT_INT8:   return ((const int8_t *)p)[i];
    case BD_DT_UINT8:  case BD_DT_BOOL: return ((const uint8_t *)p)[i];
    case BD_DT_INT16:  return ((const int16_t *)p)[i];
    case BD_DT_UINT16: return ((const uint16_t *)p)[i];
    case BD_DT_INT32:  return ((const int32_t *)p)[i];
    case BD_DT_UINT32: return ((const uint32_t *)p)[i];
    case BD_DT_INT64:  return ((const int64_t *)p)[i];
    case BD_DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    }
    return 0;
}

void nv_set_f(void *p, int dtype, size_t i, double v)
{
    switch (dtype) {
    case BD_DT_FLOAT:  ((float *)p)[i] = (float)v; break;
    case BD_DT_DOUBLE: ((double *)p)[i] = v; break;
    case BD_DT_BOOL:   ((uint8_t *)p)[i] = v != 0; break;
    default:           nv_set_i(p, dtype, i, nv_f2i(v)); break;
    }
}

void nv_set_i(void *p, int dtype, size_t i, int64_t v)
{
    switch (dtype) {
    case BD_DT_FLOAT:  ((float *)p)[i] = (float)v; break;
    case BD_DT_DOUBLE: ((double *)p)[i] = (double)v; break;
    case BD_DT_INT8:   ((int8_t *)p)[i] = (int8_t)v; break;
    case BD_DT_UINT8:  ((uint8_t *)p)[i] = (uint8_t)v; break;
    case BD_DT_BOOL:   ((uint8_t *)p)[i] = v != 0; break;
    case BD_DT_INT16:  ((int16_t *)p)[i] = (int16_t)v; break;
    case BD_DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case BD_DT_INT32:  ((int32_t *)p)[i] = (int32_t)v; break;
    case BD_DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case BD_DT_INT64:  ((int64_t *)p)[i] = v; break;
    case BD_DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    }
}

void nv_one_bits(int dtype, void *bytes)
{
    memset(bytes, 0, 8);
    if (dtype == BD_DT_FLOAT16)
        memcpy(bytes, &(uint16_t){ 0x3c00 }, 2);
    else if (dtype == BD_DT_BFLOAT16)
        memcpy(bytes, &(uint16_t){ 0x3f80 }, 2);
    else
        nv_set_i(bytes, dtype, 0, 1);
}

void nv_replicate(void *dst, size_t unit, size_t count)
{
    char *p = dst;
    for (size_t have = 1; have < count;) {
        size_t more = have < count - have ? have : count - have;
        memcpy(p + have * unit, p, more * unit);
        have += more;
    }
}

void nv_parallel_for(size_t n, size_t work, nv_range_fn fn, void *job)
{
    int nt = work >= NV_PARALLEL_MIN && n > 1 && !omp_in_parallel() ? omp_get_max_threads() : 1;
    if (nt < 2) {
        fn(job, 0, n);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        size_t k = (size_t)omp_get_num_threads(), per = (n + k - 1) / k;
        size_t lo = (size_t)omp_get_thread_num() * per;
        if (lo < n)
            fn(job, lo, lo + per > n ? n - lo : per);
    }
}
