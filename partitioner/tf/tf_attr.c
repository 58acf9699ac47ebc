/* AttrValue, TensorProto and TensorShapeProto (protobuf) into the frontend-neutral views.
 * A tensor's tensor_content is referenced where it lies; typed value fields (float_val,
 * int_val, ...) are converted into the graph's pool. */
#include "partitioner/tf/tf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pool copy of N elements of ESIZE bytes (NULL for N == 0). */
static void *pool_array(bd_graph *g, size_t n, size_t esize, bool *oom)
{
    if (n == 0)
        return NULL;
    void *p = n > SIZE_MAX / esize ? NULL : bd_graph_alloc(g, n * esize);
    if (!p)
        *oom = true;
    return p;
}

int tf_shape_decode(const uint8_t *lo, size_t len, const tf_bytes *sp, bd_shape *s,
                    const char *what, bd_error *err)
{
    tensorflow_TensorShapeProto m;
    tf_spans dims;
    memset(&m, 0, sizeof m);
    memset(s, 0, sizeof *s);
    bd_pb_spans_init(&dims, lo, len);
    bd_pb_on_span(&m.dim, &dims);
    int rc = bd_pb_decode(sp, tensorflow_TensorShapeProto_fields, &m, what, err);
    if (rc == 0 && m.unknown_rank) {
        s->rank = -1;
    } else if (rc == 0 && dims.n > BD_MAX_RANK) {
        rc = bd_error_set(err, BD_EUNSUPPORTED, "%s: rank %zu exceeds braid's maximum of %d",
                          what, dims.n, BD_MAX_RANK);
    } else if (rc == 0) {
        s->rank = (int)dims.n;
        for (size_t i = 0; i < dims.n && rc == 0; i++) {
            tensorflow_TensorShapeProto_Dim d;
            memset(&d, 0, sizeof d);
            rc = bd_pb_decode(&dims.v[i], tensorflow_TensorShapeProto_Dim_fields, &d, what, err);
            if (rc == 0 && d.size < -1)
                rc = bd_error_set(err, BD_EMODEL, "%s: dim %zu is %lld (expected >= -1)", what, i,
                                  (long long)d.size);
            s->dims[i] = d.size;
        }
    }
    bd_pb_spans_free(&dims);
    return rc;
}

/* The recorded typed values of a TensorProto, by field. */
typedef struct tensor_msg {
    tensorflow_TensorProto t;
    tf_spans shape, content, strings;
    tf_nums  half, f, d, i32, i64, b, u32, u64;
} tensor_msg;

static void tensor_msg_free(tensor_msg *m)
{
    bd_pb_spans_free(&m->shape);
    bd_pb_spans_free(&m->content);
    bd_pb_spans_free(&m->strings);
    tf_nums *nums[] = { &m->half, &m->f, &m->d, &m->i32, &m->i64, &m->b, &m->u32, &m->u64 };
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        tf_nums_free(nums[i]);
}

/* Store word W of a typed field as one element of bd_dtype DTYPE at P. */
static void put_elem(void *p, size_t k, int dtype, uint64_t w)
{
    switch (dtype) {
    case BD_DT_FLOAT:  { uint32_t u = (uint32_t)w; memcpy((uint32_t *)p + k, &u, 4); break; }
    case BD_DT_DOUBLE: case BD_DT_INT64: case BD_DT_UINT64: ((uint64_t *)p)[k] = w; break;
    case BD_DT_INT32: case BD_DT_UINT32: ((uint32_t *)p)[k] = (uint32_t)w; break;
    case BD_DT_INT16: case BD_DT_UINT16: case BD_DT_FLOAT16: case BD_DT_BFLOAT16:
        ((uint16_t *)p)[k] = (uint16_t)w; break;
    case BD_DT_INT8: case BD_DT_UINT8: ((uint8_t *)p)[k] = (uint8_t)w; break;
    case BD_DT_BOOL: ((uint8_t *)p)[k] = w != 0; break;
    default: break;
    }
}

int tf_tensor_decode(bd_graph *g, const uint8_t *lo, size_t len, const tf_bytes *sp,
                     tf_tensor *out, const char *what, bd_error *err)
{
    tensor_msg m;
    memset(&m, 0, sizeof m);
    memset(out, 0, sizeof *out);
    tf_spans *spans[] = { &m.shape, &m.content, &m.strings };
    for (size_t i = 0; i < 3; i++)
        bd_pb_spans_init(spans[i], lo, len);
    bd_pb_on_span(&m.t.tensor_shape, &m.shape);
    bd_pb_on_span(&m.t.tensor_content, &m.content);
    bd_pb_on_span(&m.t.string_val, &m.strings);
    tf_on_varint(&m.t.half_val, &m.half);
    tf_on_fixed32(&m.t.float_val, &m.f);
    tf_on_fixed64(&m.t.double_val, &m.d);
    tf_on_varint(&m.t.int_val, &m.i32);
    tf_on_varint(&m.t.int64_val, &m.i64);
    tf_on_varint(&m.t.bool_val, &m.b);
    tf_on_varint(&m.t.uint32_val, &m.u32);
    tf_on_varint(&m.t.uint64_val, &m.u64);
    int rc = bd_pb_decode(sp, tensorflow_TensorProto_fields, &m.t, what, err);
    if (rc) {
        tensor_msg_free(&m);
        return rc;
    }
    out->tf_dtype = m.t.dtype;
    out->dtype = tf_dtype_to_bd(m.t.dtype);
    const char *tname = tf_dtype_name(m.t.dtype);
    if (m.shape.n)      /* a repeated occurrence of a message field merges; the last dims win */
        rc = tf_shape_decode(lo, len, &m.shape.v[m.shape.n - 1], &out->shape, what, err);
    if (rc == 0 && out->shape.rank < 0)
        rc = bd_error_set(err, BD_EMODEL, "%s: a tensor of unknown rank", what);
    int64_t numel = 0;
    size_t esize = out->dtype == BD_DT_STRING ? 0 : bd_dtype_size(out->dtype);
    if (rc == 0 && out->dtype == BD_DT_UNDEFINED)
        rc = bd_error_set(err, BD_EUNSUPPORTED, "%s: tensors of type %s are not supported", what,
                          tname ? tname : "(unknown DataType)");
    if (rc == 0)
        rc = tf_shape_size(what, &out->shape, esize, &numel, &out->nbytes, err);

    tf_nums *vals = NULL;
    switch (out->dtype) {
    case BD_DT_FLOAT: vals = &m.f; break;
    case BD_DT_DOUBLE: vals = &m.d; break;
    case BD_DT_INT32: case BD_DT_INT16: case BD_DT_INT8: case BD_DT_UINT8: case BD_DT_UINT16:
        vals = &m.i32; break;
    case BD_DT_INT64: vals = &m.i64; break;
    case BD_DT_BOOL: vals = &m.b; break;
    case BD_DT_FLOAT16: case BD_DT_BFLOAT16: vals = &m.half; break;
    case BD_DT_UINT32: vals = &m.u32; break;
    case BD_DT_UINT64: vals = &m.u64; break;
    default: break;
    }
    bool oom = false;
    if (rc) {
        /* reported */
    } else if (out->dtype == BD_DT_STRING) {
        size_t k = m.strings.n;
        if (k > (uint64_t)numel || (k && k < (uint64_t)numel && k != 1))
            rc = bd_error_set(err, BD_EMODEL, "%s: %zu strings for %lld elements", what, k,
                              (long long)numel);
        else if ((rc = tf_check_expand(g, what, (uint64_t)numel, k, sizeof *out->strings,
                                       k ? m.strings.v[k - 1].n : 0, err))) {
            /* reported */
        } else {
            out->n_strings = (size_t)numel;
            out->strings = pool_array(g, out->n_strings, sizeof *out->strings, &oom);
            for (size_t e = 0; e < out->n_strings && out->strings; e++)
                out->strings[e] = k ? m.strings.v[e < k ? e : k - 1] : (tf_bytes){ NULL, 0 };
        }
    } else if (m.content.n) {
        const tf_bytes *c = &m.content.v[m.content.n - 1];
        if (c->n != out->nbytes)
            rc = bd_error_set(err, BD_EMODEL, "%s: tensor_content holds %zu bytes, the shape needs %zu",
                              what, c->n, out->nbytes);
        out->data = c->p;
    } else {
        size_t k = vals ? vals->n : 0;
        if (k > (uint64_t)numel)
            rc = bd_error_set(err, BD_EMODEL, "%s: %zu values for %lld elements", what, k,
                              (long long)numel);
        else if ((rc = tf_check_expand(g, what, (uint64_t)numel, k, esize, 0, err))) {
            /* reported */
        } else if (numel) {
            /* TensorFlow fills the rest with the last value given (zeros if none). */
            void *p = pool_array(g, (size_t)numel, esize, &oom);
            for (size_t e = 0; p && e < k; e++)
                put_elem(p, e, out->dtype, vals->v[e]);
            if (p)
                tf_fill_repeat(p, k, (size_t)numel, esize);
            out->data = p;
        }
    }
    if (rc == 0 && oom)
        rc = bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
    tensor_msg_free(&m);
    return rc;
}

typedef struct list_msg {
    tensorflow_AttrValue_ListValue l;
    tf_spans s, shape, tensor;
    tf_nums  i, f, b, type;
} list_msg;

static int list_decode(bd_graph *g, const uint8_t *lo, size_t len, const tf_bytes *sp,
                       tf_list *out, const char *what, bd_error *err)
{
    list_msg m;
    memset(&m, 0, sizeof m);
    bd_pb_spans_init(&m.s, lo, len);
    bd_pb_spans_init(&m.shape, lo, len);
    bd_pb_spans_init(&m.tensor, lo, len);
    bd_pb_on_span(&m.l.s, &m.s);
    bd_pb_on_span(&m.l.shape, &m.shape);
    bd_pb_on_span(&m.l.tensor, &m.tensor);
    tf_on_varint(&m.l.i, &m.i);
    tf_on_fixed32(&m.l.f, &m.f);
    tf_on_varint(&m.l.b, &m.b);
    tf_on_varint(&m.l.type, &m.type);
    int rc = bd_pb_decode(sp, tensorflow_AttrValue_ListValue_fields, &m.l, what, err);
    bool oom = false;
    if (rc == 0) {
        out->n_s = m.s.n;
        out->s = pool_array(g, m.s.n, sizeof *out->s, &oom);
        for (size_t k = 0; out->s && k < m.s.n; k++)
            out->s[k] = m.s.v[k];
        out->n_i = m.i.n;
        out->i = pool_array(g, m.i.n, sizeof *out->i, &oom);
        for (size_t k = 0; out->i && k < m.i.n; k++)
            out->i[k] = (int64_t)m.i.v[k];
        out->n_f = m.f.n;
        out->f = pool_array(g, m.f.n, sizeof *out->f, &oom);
        for (size_t k = 0; out->f && k < m.f.n; k++) {
            uint32_t u = (uint32_t)m.f.v[k];
            memcpy(&out->f[k], &u, 4);
        }
        out->n_b = m.b.n;
        out->b = pool_array(g, m.b.n, sizeof *out->b, &oom);
        for (size_t k = 0; out->b && k < m.b.n; k++)
            out->b[k] = m.b.v[k] != 0;
        out->n_type = m.type.n;
        out->type = pool_array(g, m.type.n, sizeof *out->type, &oom);
        for (size_t k = 0; out->type && k < m.type.n; k++)
            out->type[k] = (int)m.type.v[k];
        out->n_shape = m.shape.n;
        out->shape = pool_array(g, m.shape.n, sizeof *out->shape, &oom);
        for (size_t k = 0; rc == 0 && out->shape && k < m.shape.n; k++)
            rc = tf_shape_decode(lo, len, &m.shape.v[k], &out->shape[k], what, err);
        out->n_tensor = m.tensor.n;
        out->tensor = pool_array(g, m.tensor.n, sizeof *out->tensor, &oom);
        for (size_t k = 0; rc == 0 && out->tensor && k < m.tensor.n; k++)
            rc = tf_tensor_decode(g, lo, len, &m.tensor.v[k], &out->tensor[k], what, err);
        if (rc == 0 && oom)
            rc = bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
    }
    bd_pb_spans_free(&m.s);
    bd_pb_spans_free(&m.shape);
    bd_pb_spans_free(&m.tensor);
    tf_nums_free(&m.i);
    tf_nums_free(&m.f);
    tf_nums_free(&m.b);
    tf_nums_free(&m.type);
    return rc;
}

int tf_attr_decode(bd_graph *g, const uint8_t *lo, size_t len, const tf_bytes *sp, tf_attr *a,
                   const char *what, bd_error *err)
{
    tensorflow_AttrValue m;
    tf_spans s, shape, tensor, list, ph;
    memset(&m, 0, sizeof m);
    tf_spans *all[] = { &s, &shape, &tensor, &list, &ph };
    for (size_t i = 0; i < 5; i++)
        bd_pb_spans_init(all[i], lo, len);
    bd_pb_on_span(&m.s, &s);
    bd_pb_on_span(&m.shape, &shape);
    bd_pb_on_span(&m.tensor, &tensor);
    bd_pb_on_span(&m.list, &list);
    bd_pb_on_span(&m.placeholder, &ph);
    int rc = bd_pb_decode(sp, tensorflow_AttrValue_fields, &m, what, err);
    a->kind = TF_ATTR_NONE;
    /* The oneof's last member on the wire wins; members are checked in an order that only
     * matters for a file that sets several, which TensorFlow never writes. */
    if (rc) {
        /* reported */
    } else if (list.n) {
        a->kind = TF_ATTR_LIST;
        rc = list_decode(g, lo, len, &list.v[list.n - 1], &a->list, what, err);
    } else if (tensor.n) {
        a->kind = TF_ATTR_TENSOR;
        rc = tf_tensor_decode(g, lo, len, &tensor.v[tensor.n - 1], &a->tensor, what, err);
    } else if (shape.n) {
        a->kind = TF_ATTR_SHAPE;
        rc = tf_shape_decode(lo, len, &shape.v[shape.n - 1], &a->shape, what, err);
    } else if (s.n) {
        a->kind = TF_ATTR_S;
        a->s = s.v[s.n - 1];
    } else if (m.has_i) {
        a->kind = TF_ATTR_I;
        a->i = m.i;
    } else if (m.has_f) {
        a->kind = TF_ATTR_F;
        a->f = m.f;
    } else if (m.has_b) {
        a->kind = TF_ATTR_B;
        a->b = m.b;
    } else if (m.has_type) {
        a->kind = TF_ATTR_TYPE;
        a->type = m.type;
    } else if (ph.n) {
        a->kind = TF_ATTR_OTHER;
    }
    for (size_t i = 0; i < 5; i++)
        bd_pb_spans_free(all[i]);
    return rc;
}

const tf_attr *tf_view_attr(const tf_nodeview *v, const char *key)
{
    for (size_t i = v->n_attrs; i-- > 0;)       /* a repeated map key: the last one wins */
        if (v->attrs[i].key && strcmp(v->attrs[i].key, key) == 0)
            return &v->attrs[i];
    return NULL;
}
