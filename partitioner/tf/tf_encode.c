/* NodeDefs written with nanopb from node views: the origins of TF.js nodes that TensorFlow
 * must run (the fallback engine, backends/tf/tfb_subgraph_def.c, writes the GraphDef itself).
 * Every repeated or nested field of the schema is a callback (see tf_graph.options), so each
 * writer below is a callback that encodes one field from a view; nanopb calls them twice
 * (to size, then to write). */
#include "partitioner/tf/tf_internal.h"

#include <pb_encode.h>
#include <stdlib.h>
#include <string.h>

/* ---- field writers ------------------------------------------------------------------- */

/* TF.js has no float64: it computes in float32 where a graph says double, and stores such
 * weights as float32. TensorFlow must do the same, or those weights do not fit the node. */
static int tfjs_type(int type)
{
    return type == TF_DT_DOUBLE ? TF_DT_FLOAT : type;
}

typedef struct bytes_list { const tf_bytes *v; size_t n; } bytes_list;
typedef enum { P_I64, P_F32, P_BOOL, P_INT } packed_kind;
typedef struct packed { packed_kind kind; const void *v; size_t n; } packed;
typedef struct shape_list { const bd_shape *v; size_t n; } shape_list;
typedef struct tensor_list { const tf_tensor *v; size_t n; } tensor_list;

static bool w_bytes(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const tf_bytes *b = *arg;
    return pb_encode_tag_for_field(s, f) && pb_encode_string(s, b->p, b->n);
}

static bool w_bytes_list(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const bytes_list *l = *arg;
    for (size_t i = 0; i < l->n; i++)
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_string(s, l->v[i].p, l->v[i].n))
            return false;
    return true;
}

static bool packed_body(pb_ostream_t *s, const packed *p)
{
    for (size_t i = 0; i < p->n; i++) {
        bool ok;
        switch (p->kind) {
        case P_I64:  ok = pb_encode_varint(s, (uint64_t)((const int64_t *)p->v)[i]); break;
        case P_F32:  ok = pb_encode_fixed32(s, &((const float *)p->v)[i]); break;
        case P_BOOL: ok = pb_encode_varint(s, ((const bool *)p->v)[i]); break;
        default:     ok = pb_encode_varint(s, (uint64_t)(int64_t)tfjs_type(((const int *)p->v)[i])); break;
        }
        if (!ok)
            return false;
    }
    return true;
}

static bool w_packed(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const packed *p = *arg;
    if (p->n == 0)
        return true;
    pb_ostream_t sz = PB_OSTREAM_SIZING;
    if (!packed_body(&sz, p))
        return false;
    return pb_encode_tag(s, PB_WT_STRING, f->tag) && pb_encode_varint(s, sz.bytes_written) &&
           packed_body(s, p);
}

static bool w_dims(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const bd_shape *sh = *arg;
    for (int i = 0; i < sh->rank; i++) {
        tensorflow_TensorShapeProto_Dim d = { .has_size = true, .size = sh->dims[i] < 0 ? -1 : sh->dims[i] };
        if (!pb_encode_tag_for_field(s, f) ||
            !pb_encode_submessage(s, tensorflow_TensorShapeProto_Dim_fields, &d))
            return false;
    }
    return true;
}

static bool shape_msg(pb_ostream_t *s, const pb_field_t *f, const bd_shape *sh)
{
    tensorflow_TensorShapeProto m;
    memset(&m, 0, sizeof m);
    if (sh->rank < 0) {
        m.has_unknown_rank = true;
        m.unknown_rank = true;
    } else {
        m.dim.funcs.encode = w_dims;
        m.dim.arg = (void *)sh;
    }
    return pb_encode_tag_for_field(s, f) &&
           pb_encode_submessage(s, tensorflow_TensorShapeProto_fields, &m);
}

static bool w_shape(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    return shape_msg(s, f, *arg);
}

static bool w_shape_list(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const shape_list *l = *arg;
    for (size_t i = 0; i < l->n; i++)
        if (!shape_msg(s, f, &l->v[i]))
            return false;
    return true;
}

static bool tensor_msg(pb_ostream_t *s, const pb_field_t *f, const tf_tensor *t)
{
    tensorflow_TensorProto m;
    memset(&m, 0, sizeof m);
    m.has_dtype = true;
    m.dtype = (tensorflow_DataType)t->tf_dtype;
    m.tensor_shape.funcs.encode = w_shape;
    m.tensor_shape.arg = (void *)&t->shape;
    tf_bytes content = { t->data, t->nbytes };
    bytes_list strings = { t->strings, t->n_strings };
    if (t->n_strings) {
        m.string_val.funcs.encode = w_bytes_list;
        m.string_val.arg = &strings;
    } else if (t->nbytes) {
        m.tensor_content.funcs.encode = w_bytes;
        m.tensor_content.arg = &content;
    }
    return pb_encode_tag_for_field(s, f) &&
           pb_encode_submessage(s, tensorflow_TensorProto_fields, &m);
}

static bool w_tensor(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    return tensor_msg(s, f, *arg);
}

static bool w_tensor_list(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const tensor_list *l = *arg;
    for (size_t i = 0; i < l->n; i++)
        if (!tensor_msg(s, f, &l->v[i]))
            return false;
    return true;
}

static bool w_list(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const tf_list *l = *arg;
    tensorflow_AttrValue_ListValue m;
    memset(&m, 0, sizeof m);
    bytes_list ss = { l->s, l->n_s };
    packed pi = { P_I64, l->i, l->n_i }, pf = { P_F32, l->f, l->n_f };
    packed pb = { P_BOOL, l->b, l->n_b }, pt = { P_INT, l->type, l->n_type };
    shape_list sh = { l->shape, l->n_shape };
    tensor_list te = { l->tensor, l->n_tensor };
    m.s.funcs.encode = w_bytes_list;      m.s.arg = &ss;
    m.i.funcs.encode = w_packed;          m.i.arg = &pi;
    m.f.funcs.encode = w_packed;          m.f.arg = &pf;
    m.b.funcs.encode = w_packed;          m.b.arg = &pb;
    m.type.funcs.encode = w_packed;       m.type.arg = &pt;
    m.shape.funcs.encode = w_shape_list;  m.shape.arg = &sh;
    m.tensor.funcs.encode = w_tensor_list; m.tensor.arg = &te;
    return pb_encode_tag_for_field(s, f) &&
           pb_encode_submessage(s, tensorflow_AttrValue_ListValue_fields, &m);
}

static bool w_attr_value(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const tf_attr *a = *arg;
    tensorflow_AttrValue m;
    memset(&m, 0, sizeof m);
    switch (a->kind) {
    case TF_ATTR_S:      m.s.funcs.encode = w_bytes;      m.s.arg = (void *)&a->s; break;
    case TF_ATTR_I:      m.has_i = true;    m.i = a->i; break;
    case TF_ATTR_F:      m.has_f = true;    m.f = a->f; break;
    case TF_ATTR_B:      m.has_b = true;    m.b = a->b; break;
    case TF_ATTR_TYPE:   m.has_type = true; m.type = (tensorflow_DataType)tfjs_type(a->type); break;
    case TF_ATTR_SHAPE:  m.shape.funcs.encode = w_shape;  m.shape.arg = (void *)&a->shape; break;
    case TF_ATTR_TENSOR: m.tensor.funcs.encode = w_tensor; m.tensor.arg = (void *)&a->tensor; break;
    case TF_ATTR_LIST:   m.list.funcs.encode = w_list;    m.list.arg = (void *)&a->list; break;
    default: break;
    }
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_fields, &m);
}

static bool w_attr(pb_ostream_t *s, const pb_field_t *f, const tf_attr *a)
{
    tensorflow_NodeDef_AttrEntry e;
    memset(&e, 0, sizeof e);
    e.key = (char *)a->key;
    e.value.funcs.encode = w_attr_value;
    e.value.arg = (void *)a;
    return pb_encode_tag_for_field(s, f) &&
           pb_encode_submessage(s, tensorflow_NodeDef_AttrEntry_fields, &e);
}

static const tf_attr *view_attr(const tf_nodeview *v, const char *key)
{
    for (size_t i = 0; i < v->n_attrs; i++)
        if (!strcmp(v->attrs[i].key, key))
            return &v->attrs[i];
    return NULL;
}

static bool w_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const tf_nodeview *v = *arg;
    /* TF.js writes explicit_paddings on depthwise convolutions too; TensorFlow's
     * _FusedDepthwiseConv2dNative has no such attr (it warns, then ignores it) */
    bool depthwise = !strcmp(v->op, "FusedDepthwiseConv2dNative") ||
                     !strcmp(v->op, "_FusedDepthwiseConv2dNative");
    for (size_t i = 0; i < v->n_attrs; i++)
        if (!(depthwise && !strcmp(v->attrs[i].key, "explicit_paddings")) && !w_attr(s, f, &v->attrs[i]))
            return false;
    /* TensorFlow's _FusedConv2D requires TArgs (the types of its extra inputs), which the
     * TF.js converter leaves out: num_args inputs of type T. */
    const tf_attr *t = view_attr(v, "T"), *num = view_attr(v, "num_args");
    enum { MAX_ARGS = 8 };
    if (!strcmp(v->op, "_FusedConv2D") && !view_attr(v, "TArgs") && t && t->kind == TF_ATTR_TYPE &&
        num && num->kind == TF_ATTR_I && num->i >= 0 && num->i <= MAX_ARGS) {
        int types[MAX_ARGS];
        for (int64_t k = 0; k < num->i; k++)
            types[k] = t->type;
        tf_attr targs = { .key = "TArgs", .kind = TF_ATTR_LIST };
        targs.list.type = types;
        targs.list.n_type = (size_t)num->i;
        if (!w_attr(s, f, &targs))
            return false;
    }
    return true;
}

/* ---- the NodeDef --------------------------------------------------------------------- */

/* The NodeDef's inputs are V's data inputs, then its control inputs as "^x". */
int tf_encode_view(bd_graph *g, const tf_nodeview *v, const void **out, size_t *out_len,
                   bd_error *err)
{
    size_t n_in = v->n_inputs + v->n_ctrl;
    char **in = n_in ? calloc(n_in, sizeof *in) : NULL;
    int rc = n_in && !in ? bd_error_set(err, BD_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; rc == 0 && i < v->n_inputs; i++)
        in[i] = (char *)v->inputs[i];
    for (size_t i = 0; rc == 0 && i < v->n_ctrl; i++) {
        size_t len = strlen(v->ctrl[i]);
        in[v->n_inputs + i] = malloc(len + 2);
        if (!in[v->n_inputs + i]) {
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
            break;
        }
        in[v->n_inputs + i][0] = '^';
        memcpy(in[v->n_inputs + i] + 1, v->ctrl[i], len + 1);
    }
    if (rc == 0 && n_in > 65535)
        rc = bd_error_set(err, BD_EUNSUPPORTED, "node '%s': %zu inputs (at most 65535)", v->name, n_in);
    tensorflow_NodeDef nd;
    memset(&nd, 0, sizeof nd);
    nd.name = (char *)v->name;
    /* TF.js's name for TensorFlow's _FusedDepthwiseConv2dNative */
    nd.op = (char *)(strcmp(v->op, "FusedDepthwiseConv2dNative") ? v->op : "_FusedDepthwiseConv2dNative");
    nd.input = in;
    nd.input_count = (pb_size_t)n_in;
    nd.attr.funcs.encode = w_attrs;
    nd.attr.arg = (void *)v;
    size_t size = 0;
    if (rc == 0 && !pb_get_encoded_size(&size, tensorflow_NodeDef_fields, &nd))
        rc = bd_error_set(err, BD_EINVAL, "NodeDef '%s': cannot be encoded", v->name);
    uint8_t *p = rc == 0 ? bd_graph_alloc(g, size ? size : 1) : NULL;
    if (rc == 0 && !p)
        rc = bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", v->name);
    if (rc == 0) {
        pb_ostream_t s = pb_ostream_from_buffer(p, size);
        if (pb_encode(&s, tensorflow_NodeDef_fields, &nd)) {
            *out = p;
            *out_len = s.bytes_written;
        } else {
            rc = bd_error_set(err, BD_EINVAL, "NodeDef '%s': encoding failed (%s)", v->name,
                              PB_GET_ERROR(&s));
        }
    }
    for (size_t i = 0; in && i < v->n_ctrl; i++)
        free(in[v->n_inputs + i]);
    free(in);
    return rc;
}
