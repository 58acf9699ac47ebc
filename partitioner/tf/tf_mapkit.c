/* Attribute readers, attribute writers and small emitters for the op-family mappers. */
#include "partitioner/tf/tf_mapkit.h"

#include <string.h>

bool tf_a_b(const tf_nodeview *v, const char *key, bool dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_B ? a->b : dflt;
}

int64_t tf_a_i(const tf_nodeview *v, const char *key, int64_t dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_I ? a->i : dflt;
}

float tf_a_f(const tf_nodeview *v, const char *key, float dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_F ? a->f : dflt;
}

bool tf_a_s_is(const tf_nodeview *v, const char *key, const char *want)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_S && a->s.n == strlen(want) && memcmp(a->s.p, want, a->s.n) == 0;
}

const int64_t *tf_a_ints(const tf_nodeview *v, const char *key, size_t *n)
{
    const tf_attr *a = tf_view_attr(v, key);
    *n = a && a->kind == TF_ATTR_LIST ? a->list.n_i : 0;
    return *n ? a->list.i : NULL;
}

int tf_a_dtype(const tf_nodeview *v, const char *key, int dflt)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_TYPE ? tf_dtype_to_bd(a->type) : dflt;
}

bool tf_ints_of(int dtype, const void *data, size_t nbytes, int64_t *out, size_t max, size_t *n)
{
    if (!data || (dtype != BD_DT_INT32 && dtype != BD_DT_INT64))
        return false;
    size_t esize = dtype == BD_DT_INT32 ? 4 : 8, k = nbytes / esize;
    if (k > max)
        return false;
    for (size_t i = 0; i < k; i++) {
        if (esize == 4) {
            int32_t x;
            memcpy(&x, (const uint8_t *)data + 4 * i, 4);
            out[i] = x;
        } else {
            memcpy(&out[i], (const uint8_t *)data + 8 * i, 8);
        }
    }
    *n = k;
    return true;
}

bool tf_const_ints(const bd_value *v, int64_t *out, size_t max, size_t *n)
{
    return v && tf_ints_of(v->dtype, v->data, v->nbytes, out, max, n);
}

bool tf_const_scalar(const bd_value *v, double *out)
{
    if (!v || !v->data)
        return false;
    if (v->dtype == BD_DT_FLOAT && v->nbytes == 4) {
        float f;
        memcpy(&f, v->data, 4);
        *out = f;
        return true;
    }
    int64_t i;
    size_t n;
    if (tf_const_ints(v, &i, 1, &n) && n == 1) {
        *out = (double)i;
        return true;
    }
    return false;
}

int tf_set_int(tf_mapctx *m, bd_node *n, const char *name, int64_t i, bd_error *err)
{
    bd_attr a = { .name = name, .type = BD_ATTR_INT, .i = i };
    return bd_node_add_attr(m->g, n, &a, err);
}

int tf_set_float(tf_mapctx *m, bd_node *n, const char *name, float f, bd_error *err)
{
    bd_attr a = { .name = name, .type = BD_ATTR_FLOAT, .f = f };
    return bd_node_add_attr(m->g, n, &a, err);
}

int tf_set_str(tf_mapctx *m, bd_node *n, const char *name, const char *s, bd_error *err)
{
    bd_attr a = { .name = name, .type = BD_ATTR_STRING, .s = s, .s_len = strlen(s) };
    return bd_node_add_attr(m->g, n, &a, err);
}

int tf_set_ints(tf_mapctx *m, bd_node *n, const char *name, const int64_t *v, size_t k,
                bd_error *err)
{
    int64_t *p = bd_graph_alloc(m->g, k ? k * sizeof *p : 1);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", m->v->name);
    if (k)
        memcpy(p, v, k * sizeof *p);
    bd_attr a = { .name = name, .type = BD_ATTR_INTS, .ints = p, .n = k };
    return bd_node_add_attr(m->g, n, &a, err);
}

bd_value *tf_k_i64(tf_mapctx *m, const char *suffix, const int64_t *v, size_t k, bd_error *err)
{
    bd_shape s = { .rank = 1, .dims = { (int64_t)k } };
    return tf_emit_const(m, suffix, BD_DT_INT64, &s, v, k * sizeof *v, err);
}

bd_value *tf_k_scalar(tf_mapctx *m, const char *suffix, int dtype, double val, bd_error *err)
{
    bd_shape s = { .rank = 0 };
    union { float f; int32_t i32; int64_t i64; uint8_t u8; } u;
    size_t size;
    switch (dtype) {
    case BD_DT_FLOAT: u.f = (float)val; size = 4; break;
    case BD_DT_INT32: u.i32 = (int32_t)val; size = 4; break;
    case BD_DT_INT64: u.i64 = (int64_t)val; size = 8; break;
    case BD_DT_BOOL:
    case BD_DT_UINT8: u.u8 = (uint8_t)val; size = 1; break;
    default:
        bd_error_set(err, BD_EUNSUPPORTED, "node '%s': no constant of dtype %d", m->v->name, dtype);
        return NULL;
    }
    return tf_emit_const(m, suffix, dtype, &s, &u, size, err);
}

bd_value *tf_op(tf_mapctx *m, const char *suffix, const char *op, bd_value *const *in,
                size_t n_in, bd_value *out, bd_node **node, bd_error *err)
{
    if (!out && !(out = tf_emit_temp(m, suffix ? suffix : op, err)))
        return NULL;
    bd_node *n = NULL;
    if (tf_emit_node(m, suffix, op, in, n_in, out, &n, err))
        return NULL;
    if (node)
        *node = n;
    return out;
}

bd_value *tf_op1(tf_mapctx *m, const char *suffix, const char *op, bd_value *a, bd_value *out,
                 const char *attr, int64_t ival, bd_error *err)
{
    bd_node *n = NULL;
    bd_value *y = tf_op(m, suffix, op, &a, 1, out, &n, err);
    if (y && attr && tf_set_int(m, n, attr, ival, err))
        return NULL;
    return y;
}

bd_value *tf_op2(tf_mapctx *m, const char *suffix, const char *op, bd_value *a, bd_value *b,
                 bd_value *out, bd_error *err)
{
    bd_value *in[2] = { a, b };
    return tf_op(m, suffix, op, in, 2, out, NULL, err);
}

bd_value *tf_cast(tf_mapctx *m, const char *suffix, bd_value *a, int dtype, bd_value *out,
                  bd_error *err)
{
    return tf_op1(m, suffix, "Cast", a, out, "to", dtype, err);
}
