/* AttributeProto -> bd_attr (payloads copied into the graph's pool, tensors and subgraph
 * bodies referenced in the model buffer), and Constant nodes folded into initializers. */
#include "partitioner/onnx/onnx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct attr_msg {
    onnx_AttributeProto a;
    ox_spans s, t, strings, tensors, graphs, sparse, types;
    ox_vec   floats, ints;
} attr_msg;

static void attr_msg_free(attr_msg *m)
{
    pb_release(onnx_AttributeProto_fields, &m->a);
    bd_pb_spans_free(&m->s);
    bd_pb_spans_free(&m->t);
    bd_pb_spans_free(&m->strings);
    bd_pb_spans_free(&m->tensors);
    bd_pb_spans_free(&m->graphs);
    bd_pb_spans_free(&m->sparse);
    bd_pb_spans_free(&m->types);
    ox_vec_free(&m->floats);
    ox_vec_free(&m->ints);
}

static int attr_decode(ox_ctx *c, const ox_span *sp, attr_msg *m, const char *node, size_t idx,
                       bd_error *err)
{
    memset(m, 0, sizeof *m);
    ox_spans *lists[] = { &m->s, &m->t, &m->strings, &m->tensors, &m->graphs, &m->sparse, &m->types };
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        bd_pb_spans_init(lists[i], c->base, c->len);
    bd_pb_on_span(&m->a.s, &m->s);
    bd_pb_on_span(&m->a.t, &m->t);
    bd_pb_on_span(&m->a.strings, &m->strings);
    bd_pb_on_span(&m->a.tensors, &m->tensors);
    bd_pb_on_span(&m->a.g, &m->graphs);
    bd_pb_on_span(&m->a.graphs, &m->graphs);
    bd_pb_on_span(&m->a.sparse_tensor, &m->sparse);
    bd_pb_on_span(&m->a.sparse_tensors, &m->sparse);
    bd_pb_on_span(&m->a.tp, &m->types);
    bd_pb_on_span(&m->a.type_protos, &m->types);
    ox_on_float(&m->a.floats, &m->floats);
    ox_on_int64(&m->a.ints, &m->ints);
    char what[160];
    snprintf(what, sizeof what, "node '%s': attribute #%zu", node, idx);
    int rc = bd_pb_decode(sp, onnx_AttributeProto_fields, &m->a, what, err);
    if (rc)
        return rc;
    if (!m->a.name || !*m->a.name)
        return bd_error_set(err, BD_EMODEL, "node '%s': attribute #%zu has no name", node, idx);
    if (m->a.ref_attr_name && *m->a.ref_attr_name)
        return bd_error_set(err, BD_EUNSUPPORTED, "node '%s': attribute '%s' refers to a function "
                            "attribute ('%s'), which is only valid inside functions",
                            node, m->a.name, m->a.ref_attr_name);
    return 0;
}

/* The attribute's type: declared, or (IR version 1 files) guessed from the field present. */
static int attr_type(const attr_msg *m)
{
    if (m->a.has_type && m->a.type != onnx_AttributeProto_AttributeType_UNDEFINED)
        return m->a.type;
    if (m->a.has_f)       return BD_ATTR_FLOAT;
    if (m->a.has_i)       return BD_ATTR_INT;
    if (m->s.n)           return BD_ATTR_STRING;
    if (m->t.n)           return BD_ATTR_TENSOR;
    if (m->graphs.n)      return BD_ATTR_GRAPH;
    if (m->floats.n)      return BD_ATTR_FLOATS;
    if (m->ints.n)        return BD_ATTR_INTS;
    if (m->strings.n)     return BD_ATTR_STRINGS;
    if (m->tensors.n)     return onnx_AttributeProto_AttributeType_TENSORS;
    if (m->sparse.n)      return onnx_AttributeProto_AttributeType_SPARSE_TENSOR;
    return onnx_AttributeProto_AttributeType_UNDEFINED;
}

static const char *type_name(int t)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS", "STRINGS",
        "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS",
    };
    return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

/* Copy N elements of ESIZE from SRC into the pool (a non-NULL pointer even when N == 0). */
static const void *pool_copy(bd_graph *g, const void *src, size_t n, size_t esize)
{
    void *d = bd_graph_alloc(g, n * esize);
    if (d && n)
        memcpy(d, src, n * esize);
    return d;
}

static int tensor_attr(ox_ctx *c, const attr_msg *m, const char *node, bd_value **out,
                       bd_error *err)
{
    bd_value *v = bd_graph_alloc(c->g, sizeof *v);
    if (!v)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    char what[160];
    snprintf(what, sizeof what, "%s.%s", node, m->a.name);
    v->index = -1;   /* not in the value table */
    int rc = ox_tensor_load(c, &m->t.v[m->t.n - 1], v, what, err);
    if (rc)
        return rc;
    if (!v->name && !(v->name = bd_graph_strdup(c->g, what, (size_t)-1)))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    *out = v;
    return 0;
}

static int convert_attr(ox_ctx *c, const attr_msg *m, const bd_node *n, bd_attr *a, bd_error *err)
{
    bd_graph *g = c->g;
    memset(a, 0, sizeof *a);
    int type = attr_type(m);
    a->type = (bd_attr_type)type;
    if (!(a->name = bd_graph_strdup(g, m->a.name, (size_t)-1)))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    switch (type) {
    case BD_ATTR_FLOAT:
        a->f = m->a.f;
        return 0;
    case BD_ATTR_INT:
        a->i = m->a.i;
        return 0;
    case BD_ATTR_STRING: {
        const ox_span *s = m->s.n ? &m->s.v[m->s.n - 1] : &(ox_span){ (const uint8_t *)"", 0 };
        a->s = bd_graph_strdup(g, (const char *)s->p, s->n);
        a->s_len = s->n;
        return a->s ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    case BD_ATTR_TENSOR:
        if (!m->t.n)
            return bd_error_set(err, BD_EMODEL, "node '%s': TENSOR attribute '%s' holds no tensor",
                                n->name, a->name);
        return tensor_attr(c, m, n->name, &a->tensor, err);
    case BD_ATTR_FLOATS:
        a->n = m->floats.n;
        a->floats = pool_copy(g, m->floats.p, m->floats.n, sizeof(float));
        return a->floats ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    case BD_ATTR_INTS:
        a->n = m->ints.n;
        a->ints = pool_copy(g, m->ints.p, m->ints.n, sizeof(int64_t));
        return a->ints ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    case BD_ATTR_STRINGS: {
        const char **v = bd_graph_alloc(g, (m->strings.n + 1) * sizeof *v);
        if (!v)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        for (size_t i = 0; i < m->strings.n; i++)
            if (!(v[i] = bd_graph_strdup(g, (const char *)m->strings.v[i].p, m->strings.v[i].n)))
                return bd_error_set(err, BD_ENOMEM, "out of memory");
        a->strings = v;
        a->n = m->strings.n;
        return 0;
    }
    case BD_ATTR_GRAPH:
        /* The body stays where it is in the model buffer, opaque (onnx_subgraph.c reads what
         * it needs): only a fallback engine runs such a node, from these bytes. */
        if (!m->graphs.n)
            return bd_error_set(err, BD_EMODEL, "node '%s': GRAPH attribute '%s' holds no graph",
                                n->name, a->name);
        a->graph = m->graphs.v[m->graphs.n - 1].p;
        a->graph_len = m->graphs.v[m->graphs.n - 1].n;
        return 0;
    case onnx_AttributeProto_AttributeType_GRAPHS:
        return bd_error_set(err, BD_EUNSUPPORTED, "node '%s' (%s): attribute '%s': lists of "
                            "subgraphs (GRAPHS) are not supported", n->name, n->op_type, a->name);
    case onnx_AttributeProto_AttributeType_UNDEFINED:
        return bd_error_set(err, BD_EMODEL, "node '%s': attribute '%s' has no type and no value",
                            n->name, a->name);
    default:
        if (type > 0 && type <= onnx_AttributeProto_AttributeType_TYPE_PROTOS)
            return bd_error_set(err, BD_EUNSUPPORTED, "node '%s' (%s): attribute '%s' of type %s "
                                "is not supported", n->name, n->op_type, a->name, type_name(type));
        return bd_error_set(err, BD_EMODEL, "node '%s': attribute '%s' has unknown type %d",
                            n->name, a->name, type);
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A name given twice, found through a sorted copy (linear-logarithmic, whatever the count). */
static int check_unique(const bd_node *n, bd_error *err)
{
    if (n->n_attrs < 2)
        return 0;
    const char **names = malloc(n->n_attrs * sizeof *names);
    if (!names)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n->n_attrs; i++)
        names[i] = n->attrs[i].name;
    qsort(names, n->n_attrs, sizeof *names, cmp_name);
    int rc = 0;
    for (size_t i = 1; i < n->n_attrs && rc == 0; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            rc = bd_error_set(err, BD_EMODEL, "node '%s': attribute '%s' is given twice", n->name,
                              names[i]);
    free(names);
    return rc;
}

int ox_node_attrs(ox_ctx *c, bd_node *n, const ox_spans *attrs, bd_error *err)
{
    for (size_t i = 0; i < attrs->n; i++) {
        attr_msg m;
        bd_attr a;
        int rc = attr_decode(c, &attrs->v[i], &m, n->name, i, err);
        if (rc == 0)
            rc = convert_attr(c, &m, n, &a, err);
        if (rc == 0)
            rc = bd_node_add_attr(c->g, n, &a, err);
        attr_msg_free(&m);
        if (rc)
            return rc;
    }
    return check_unique(n, err);
}

/* A constant of DTYPE with RANK (0 or 1) and N elements copied from SRC. */
static int fold_numbers(ox_ctx *c, bd_value *out, int dtype, int rank, const void *src, size_t n)
{
    size_t es = bd_dtype_size(dtype);
    out->dtype = dtype;
    out->shape = bd_shape_make(rank, (const int64_t[]){ (int64_t)n });
    out->nbytes = n * es;
    out->data = pool_copy(c->g, src, n, es);
    return out->data ? 0 : BD_ENOMEM;
}

int ox_fold_constant(ox_ctx *c, const char *node_name, const ox_spans *attrs, bd_value *out,
                     bd_error *err)
{
    if (attrs->n != 1)
        return bd_error_set(err, BD_EMODEL, "Constant node '%s' must have exactly one attribute, has %zu",
                            node_name, attrs->n);
    attr_msg m;
    int rc = attr_decode(c, &attrs->v[0], &m, node_name, 0, err);
    if (rc) {
        attr_msg_free(&m);
        return rc;
    }
    const char *an = m.a.name;
    if (strcmp(an, "value") == 0 && m.t.n) {
        bd_value tmp = { 0 };
        rc = ox_tensor_load(c, &m.t.v[m.t.n - 1], &tmp, node_name, err);
        if (rc == 0) {
            out->dtype = tmp.dtype;
            out->shape = tmp.shape;
            out->data = tmp.data;
            out->nbytes = tmp.nbytes;
        }
    } else if (strcmp(an, "value_float") == 0 && m.a.has_f) {
        rc = fold_numbers(c, out, BD_DT_FLOAT, 0, &m.a.f, 1);
    } else if (strcmp(an, "value_int") == 0 && m.a.has_i) {
        rc = fold_numbers(c, out, BD_DT_INT64, 0, &m.a.i, 1);
    } else if (strcmp(an, "value_floats") == 0 && attr_type(&m) == BD_ATTR_FLOATS) {
        rc = fold_numbers(c, out, BD_DT_FLOAT, 1, m.floats.p, m.floats.n);
    } else if (strcmp(an, "value_ints") == 0 && attr_type(&m) == BD_ATTR_INTS) {
        rc = fold_numbers(c, out, BD_DT_INT64, 1, m.ints.p, m.ints.n);
    } else if (strcmp(an, "sparse_value") == 0 || strcmp(an, "value_string") == 0 ||
               strcmp(an, "value_strings") == 0) {
        rc = bd_error_set(err, BD_EUNSUPPORTED, "Constant node '%s': attribute '%s' is not supported "
                          "(sparse and string constants)", node_name, an);
    } else {
        rc = bd_error_set(err, BD_EMODEL, "Constant node '%s': attribute '%s' (%s) is not a valid "
                          "constant value", node_name, an, type_name(attr_type(&m)));
    }
    if (rc == BD_ENOMEM)
        bd_error_set(err, rc, "out of memory folding Constant node '%s'", node_name);
    attr_msg_free(&m);
    return rc;
}
