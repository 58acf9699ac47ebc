/* bd_subgraph -> ONNX ModelProto bytes with nanopb (see ort_serialize.h).
 *
 * The encoder's message structs (onnx_enc.pb.h) use heap-pointer fields for names and lists,
 * so the model is built as plain C structs pointing into the IR (nothing is copied but the
 * small arrays of structs, freed after encoding) and encoded in one pass. Byte payloads and
 * attribute lists are callbacks: nanopb's pointer bytes are limited to 64 KiB. */
#include "backends/ort/ort_serialize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_encode.h>

#include "backends/ort/onnx_enc.pb.h"

#define IR_VERSION      8       /* ONNX 1.10+: what opsets up to 18 are written for */
#define DEFAULT_OPSET   17      /* a hand-built graph that recorded none */

/* Every allocation of one serialization, freed together. */
typedef struct scratch {
    void  **p;
    size_t  n, cap;
} scratch;

static void *sc_alloc(scratch *s, size_t count, size_t size)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        void **p = realloc(s->p, cap * sizeof *p);
        if (!p)
            return NULL;
        s->p = p;
        s->cap = cap;
    }
    void *q = calloc(count ? count : 1, size);
    if (q)
        s->p[s->n++] = q;
    return q;
}

static void sc_free(scratch *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i]);
    free(s->p);
}

/* ---- callbacks: bytes and attribute lists ------------------------------------------- */

typedef struct span {
    const void *p;
    size_t      n;
} span;

static bool enc_bytes(pb_ostream_t *st, const pb_field_t *f, void *const *arg)
{
    const span *sp = *arg;
    return pb_encode_tag_for_field(st, f) && pb_encode_string(st, sp->p, sp->n);
}

static bool enc_ints(pb_ostream_t *st, const pb_field_t *f, void *const *arg)
{
    const bd_attr *a = *arg;
    for (size_t i = 0; i < a->n; i++)
        if (!pb_encode_tag_for_field(st, f) || !pb_encode_varint(st, (uint64_t)a->ints[i]))
            return false;
    return true;
}

static bool enc_floats(pb_ostream_t *st, const pb_field_t *f, void *const *arg)
{
    const bd_attr *a = *arg;
    for (size_t i = 0; i < a->n; i++)
        if (!pb_encode_tag_for_field(st, f) || !pb_encode_fixed32(st, &a->floats[i]))
            return false;
    return true;
}

static bool enc_strings(pb_ostream_t *st, const pb_field_t *f, void *const *arg)
{
    const bd_attr *a = *arg;
    for (size_t i = 0; i < a->n; i++) {
        const char *s = a->strings[i] ? a->strings[i] : "";
        if (!pb_encode_tag_for_field(st, f) || !pb_encode_string(st, (const pb_byte_t *)s, strlen(s)))
            return false;
    }
    return true;
}

static void on_bytes(pb_callback_t *cb, span *sp)
{
    cb->funcs.encode = enc_bytes;
    cb->arg = sp;
}

/* ---- pieces ------------------------------------------------------------------------- */

static const char *norm_domain(const char *d)
{
    return (!d || strcmp(d, "ai.onnx") == 0) ? "" : d;
}

int64_t ort_opset_for(const bd_graph *g, const char *domain)
{
    domain = norm_domain(domain);
    if (domain[0] == '\0') {
        int64_t v = g ? bd_graph_opset(g) : 0;
        return v > 0 ? v : DEFAULT_OPSET;
    }
    /* The IR records only the default domain's opset: these are the versions ONNX 1.12
     * (the exporters' generation braid imports) writes. */
    if (strcmp(domain, "ai.onnx.ml") == 0)
        return 3;
    if (strcmp(domain, "com.microsoft") == 0)
        return 1;
    return 0;
}

/* The IR version ONNX released with OPSET (older opsets are fine with IR 8). */
static int64_t ir_for_opset(int64_t opset)
{
    return opset <= 18 ? IR_VERSION : opset <= 20 ? 9 : opset <= 22 ? 10 : 11;
}

static int too_many(bd_error *err, const char *what, size_t n)
{
    return bd_error_set(err, BD_EUNSUPPORTED, "%s has %zu entries; at most %u can be serialized "
                        "for onnxruntime", what, n, (unsigned)PB_SIZE_MAX);
}

/* TensorProto for V (static shape, bytes in V->data) named NAME. */
static int fill_tensor(scratch *sc, onnx_enc_TensorProto *t, const bd_value *v, const char *name,
                       bool external, bd_error *err)
{
    if (v->shape.rank < 0 || !bd_shape_is_static(&v->shape))
        return bd_error_set(err, BD_EUNSUPPORTED, "constant '%s' has no static shape", v->name);
    if (v->dtype == BD_DT_STRING || bd_dtype_size(v->dtype) == 0)
        return bd_error_set(err, BD_EUNSUPPORTED, "constant '%s' has dtype %s, which braid "
                            "cannot hand to onnxruntime", v->name, bd_dtype_name(v->dtype));
    t->name = (char *)name;
    t->has_data_type = true;
    t->data_type = v->dtype;
    t->dims_count = (pb_size_t)v->shape.rank;
    t->dims = sc_alloc(sc, (size_t)v->shape.rank, sizeof *t->dims);
    if (!t->dims)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing '%s'", v->name);
    memcpy(t->dims, v->shape.dims, (size_t)v->shape.rank * sizeof *t->dims);
    if (!external) {
        span *sp = sc_alloc(sc, 1, sizeof *sp);
        if (!sp)
            return bd_error_set(err, BD_ENOMEM, "out of memory serializing '%s'", v->name);
        *sp = (span){ v->data, v->data ? v->nbytes : 0 };
        on_bytes(&t->raw_data, sp);
        return 0;
    }
    /* The bytes stay in braid's memory: ORT gets them through AddExternalInitializers. The
     * entries only have to make a valid external-data record. */
    onnx_enc_StringStringEntryProto *kv = sc_alloc(sc, 3, sizeof *kv);
    char *len = sc_alloc(sc, 24, 1);
    if (!kv || !len)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing '%s'", v->name);
    snprintf(len, 24, "%zu", v->nbytes);
    kv[0] = (onnx_enc_StringStringEntryProto){ (char *)"location", (char *)BD_ORT_EXTERNAL_LOCATION };
    kv[1] = (onnx_enc_StringStringEntryProto){ (char *)"offset", (char *)"0" };
    kv[2] = (onnx_enc_StringStringEntryProto){ (char *)"length", len };
    t->external_data = kv;
    t->external_data_count = 3;
    t->has_data_location = true;
    t->data_location = onnx_enc_TensorProto_DataLocation_EXTERNAL;
    return 0;
}

static int fill_attr(scratch *sc, onnx_enc_AttributeProto *p, const bd_attr *a, const bd_node *n,
                     bd_error *err)
{
    p->name = (char *)a->name;
    p->has_type = true;
    p->type = (onnx_enc_AttributeProto_AttributeType)a->type;
    switch (a->type) {
    case BD_ATTR_FLOAT:  p->has_f = true; p->f = a->f; return 0;
    case BD_ATTR_INT:    p->has_i = true; p->i = a->i; return 0;
    case BD_ATTR_INTS:   p->ints.funcs.encode = enc_ints; p->ints.arg = (void *)a; return 0;
    case BD_ATTR_FLOATS: p->floats.funcs.encode = enc_floats; p->floats.arg = (void *)a; return 0;
    case BD_ATTR_STRINGS: p->strings.funcs.encode = enc_strings; p->strings.arg = (void *)a; return 0;
    case BD_ATTR_STRING: {
        span *sp = sc_alloc(sc, 1, sizeof *sp);
        if (!sp)
            return bd_error_set(err, BD_ENOMEM, "out of memory serializing node '%s'", n->name);
        *sp = (span){ a->s ? a->s : "", a->s_len ? a->s_len : (a->s ? strlen(a->s) : 0) };
        on_bytes(&p->s, sp);
        return 0;
    }
    case BD_ATTR_GRAPH: {              /* an If/Loop/Scan body, as the model file holds it */
        if (!a->graph)
            break;
        span *sp = sc_alloc(sc, 1, sizeof *sp);
        if (!sp)
            return bd_error_set(err, BD_ENOMEM, "out of memory serializing node '%s'", n->name);
        *sp = (span){ a->graph, a->graph_len };
        on_bytes(&p->g, sp);           /* a sub-message is length-delimited bytes on the wire */
        return 0;
    }
    case BD_ATTR_TENSOR:
        if (!a->tensor)
            break;
        p->t = sc_alloc(sc, 1, sizeof *p->t);
        if (!p->t)
            return bd_error_set(err, BD_ENOMEM, "out of memory serializing node '%s'", n->name);
        return fill_tensor(sc, p->t, a->tensor, NULL, false, err);
    default:
        break;
    }
    return bd_error_set(err, BD_EUNSUPPORTED, "node '%s' (%s): attribute '%s' (type %d) cannot be "
                        "serialized for onnxruntime", n->name, n->op_type, a->name, (int)a->type);
}

static int fill_node(scratch *sc, onnx_enc_NodeProto *p, const bd_node *n, bd_error *err)
{
    /* Implicit inputs (what a body reads from this graph) are not the op's operands: they
     * reach ORT as values of the serialized graph, which the body names directly. */
    size_t n_in = n->n_implicit <= n->n_inputs ? n->n_inputs - n->n_implicit : n->n_inputs;
    if (n->n_inputs > PB_SIZE_MAX || n->n_outputs > PB_SIZE_MAX || n->n_attrs > PB_SIZE_MAX)
        return too_many(err, n->name, n->n_inputs + n->n_outputs + n->n_attrs);
    p->name = (char *)n->name;
    p->op_type = (char *)n->op_type;
    p->domain = (char *)norm_domain(n->domain);
    p->input = sc_alloc(sc, n_in, sizeof *p->input);
    p->output = sc_alloc(sc, n->n_outputs, sizeof *p->output);
    p->attribute = sc_alloc(sc, n->n_attrs, sizeof *p->attribute);
    if (!p->input || !p->output || !p->attribute)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing node '%s'", n->name);
    p->input_count = (pb_size_t)n_in;
    p->output_count = (pb_size_t)n->n_outputs;
    p->attribute_count = (pb_size_t)n->n_attrs;
    for (size_t i = 0; i < n_in; i++)            /* "" marks an omitted optional input */
        p->input[i] = (char *)(n->inputs[i] ? n->inputs[i]->name : "");
    for (size_t i = 0; i < n->n_outputs; i++)
        p->output[i] = (char *)n->outputs[i]->name;
    for (size_t i = 0; i < n->n_attrs; i++) {
        int rc = fill_attr(sc, &p->attribute[i], &n->attrs[i], n, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ValueInfoProto for a boundary tensor: element type, and (WITH_SHAPE) its rank; dims only
 * if asked. */
static int fill_info(scratch *sc, onnx_enc_ValueInfoProto *p, const bd_value *v, bool static_dims,
                     bool with_shape, bd_error *err)
{
    if (v->dtype == BD_DT_STRING || bd_dtype_size(v->dtype) == 0)
        return bd_error_set(err, BD_EUNSUPPORTED, "boundary tensor '%s' has dtype %s, which braid "
                            "cannot hand to onnxruntime", v->name, bd_dtype_name(v->dtype));
    p->name = (char *)v->name;
    p->type = sc_alloc(sc, 1, sizeof *p->type);
    if (!p->type)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing '%s'", v->name);
    p->type->which_value = onnx_enc_TypeProto_tensor_type_tag;
    onnx_enc_TypeProto_Tensor *tt = &p->type->value.tensor_type;
    tt->has_elem_type = true;
    tt->elem_type = v->dtype;
    if (!with_shape || v->shape.rank < 0)
        return 0;                      /* no shape at all: any rank */
    tt->has_shape = true;
    tt->shape.dim_count = (pb_size_t)v->shape.rank;
    tt->shape.dim = sc_alloc(sc, (size_t)v->shape.rank, sizeof *tt->shape.dim);
    if (!tt->shape.dim)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing '%s'", v->name);
    /* A short 1-D integer tensor is a list of sizes, axes, pads or a shape: its length is a
     * rank, not a batch size, and ONNX's shape inference misreads an unknown length as 0
     * (Resize's `sizes`: "Number of elements of input 'sizes' (0) must be same as rank of
     * input"). Longer ones (token ids) keep their length open, so sessions stay shared. */
    bool list = v->shape.rank == 1 && (v->dtype == BD_DT_INT64 || v->dtype == BD_DT_INT32) &&
                v->shape.dims[0] <= 2 * BD_MAX_RANK;
    for (int d = 0; d < v->shape.rank; d++) {
        /* A Dimension with neither value nor param is an unknown dim. */
        if ((static_dims || list) && v->shape.dims[d] >= 0) {
            tt->shape.dim[d].which_value = onnx_enc_TensorShapeProto_Dimension_dim_value_tag;
            tt->shape.dim[d].value.dim_value = v->shape.dims[d];
        }
    }
    return 0;
}

static bool is_boundary_input(const bd_subgraph *sg, const bd_value *v)
{
    for (size_t i = 0; i < sg->n_inputs; i++)
        if (sg->inputs[i] == v)
            return true;
    return false;
}

static bool want_external(const bd_value *v, const ort_serialize_opts *o)
{
    size_t align = bd_dtype_size(v->dtype);
    return v->data && v->nbytes >= o->external_min_bytes && o->external_min_bytes != SIZE_MAX &&
           align && (uintptr_t)v->data % align == 0;     /* ORT's kernels read them in place */
}

/* The initializers SG's nodes read (each once, in order of first use). */
static int collect_initializers(scratch *sc, const bd_subgraph *sg, const bd_value ***out, size_t *n,
                                bd_error *err)
{
    size_t nv = bd_graph_num_values(sg->graph), cap = 0;
    for (size_t i = 0; i < sg->n_nodes; i++)
        cap += sg->nodes[i]->n_inputs;
    bool *seen = sc_alloc(sc, nv, sizeof *seen);
    const bd_value **list = sc_alloc(sc, cap, sizeof *list);
    if (!seen || !list)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph");
    *n = 0;
    for (size_t i = 0; i < sg->n_nodes; i++)
        for (size_t k = 0; k < sg->nodes[i]->n_inputs; k++) {
            const bd_value *v = sg->nodes[i]->inputs[k];
            if (!v || !v->data || v->producer || is_boundary_input(sg, v))
                continue;
            if (v->index >= 0 && (size_t)v->index < nv) {
                if (seen[v->index])
                    continue;
                seen[v->index] = true;
            }
            list[(*n)++] = v;
        }
    *out = list;
    return 0;
}

static int fill_opsets(scratch *sc, onnx_enc_ModelProto *m, const bd_subgraph *sg, bd_error *err)
{
    m->opset_import = sc_alloc(sc, sg->n_nodes + 1, sizeof *m->opset_import);
    if (!m->opset_import)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph");
    m->opset_import[0] = (onnx_enc_OperatorSetIdProto){ (char *)"", true, ort_opset_for(sg->graph, "") };
    size_t n = 1;
    for (size_t i = 0; i < sg->n_nodes; i++) {
        const char *d = norm_domain(sg->nodes[i]->domain);
        bool have = false;
        for (size_t k = 0; k < n && !have; k++)
            have = strcmp(m->opset_import[k].domain, d) == 0;
        if (have)
            continue;
        int64_t v = ort_opset_for(sg->graph, d);
        if (v <= 0)
            return bd_error_set(err, BD_EUNSUPPORTED, "node '%s' (%s): domain '%s' is not one "
                                "onnxruntime runs", sg->nodes[i]->name, sg->nodes[i]->op_type, d);
        m->opset_import[n++] = (onnx_enc_OperatorSetIdProto){ (char *)d, true, v };
    }
    m->opset_import_count = (pb_size_t)n;
    return 0;
}

/* A subgraph that reads nothing but constants: write them as graph inputs (static shapes)
 * that the engine feeds on every run, so ONNX Runtime has something left to compute. */
static int feed_constants(scratch *sc, onnx_enc_GraphProto *g, const bd_value **inits,
                          size_t n_inits, ort_model *out, bd_error *err)
{
    if (n_inits > PB_SIZE_MAX)
        return too_many(err, "the subgraph's constant list", n_inits);
    g->input = sc_alloc(sc, n_inits, sizeof *g->input);
    out->fed = calloc(n_inits, sizeof *out->fed);
    if (!g->input || !out->fed)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph");
    g->input_count = (pb_size_t)n_inits;
    for (size_t i = 0; i < n_inits; i++) {
        const bd_value *v = inits[i];
        if (v->shape.rank < 0 || !bd_shape_is_static(&v->shape) ||
            v->nbytes != (size_t)bd_shape_numel(&v->shape) * bd_dtype_size(v->dtype))
            return bd_error_set(err, BD_EUNSUPPORTED, "constant '%s' has no static shape matching "
                                "its %zu bytes", v->name, v->nbytes);
        int rc = fill_info(sc, &g->input[i], v, true, true, err);
        if (rc)
            return rc;
        out->fed[out->n_fed++] = v;
    }
    return 0;
}

static int build(scratch *sc, const bd_subgraph *sg, const ort_serialize_opts *o,
                 onnx_enc_ModelProto *m, ort_model *out, bd_error *err)
{
    if (sg->n_nodes == 0)
        return bd_error_set(err, BD_EINVAL, "empty subgraph");
    if (sg->n_nodes > PB_SIZE_MAX || sg->n_inputs > PB_SIZE_MAX || sg->n_outputs > PB_SIZE_MAX)
        return too_many(err, "the subgraph", sg->n_nodes);
    onnx_enc_GraphProto *g = sc_alloc(sc, 1, sizeof *g);
    if (!g)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph");
    m->has_ir_version = true;
    m->ir_version = ir_for_opset(ort_opset_for(sg->graph, ""));
    m->producer_name = (char *)"braid";
    m->graph = g;
    int rc = fill_opsets(sc, m, sg, err);
    if (rc)
        return rc;

    g->name = (char *)sg->nodes[0]->name;
    g->node = sc_alloc(sc, sg->n_nodes, sizeof *g->node);
    g->input = sc_alloc(sc, sg->n_inputs, sizeof *g->input);
    g->output = sc_alloc(sc, sg->n_outputs, sizeof *g->output);
    if (!g->node || !g->input || !g->output)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph");
    g->node_count = (pb_size_t)sg->n_nodes;
    g->input_count = (pb_size_t)sg->n_inputs;
    g->output_count = (pb_size_t)sg->n_outputs;
    for (size_t i = 0; i < sg->n_nodes && !rc; i++)
        rc = fill_node(sc, &g->node[i], sg->nodes[i], err);
    for (size_t i = 0; i < sg->n_inputs && !rc; i++)
        rc = fill_info(sc, &g->input[i], sg->inputs[i], o->static_dims, true, err);
    /* Outputs carry their element type only: ORT infers their shapes itself, and a rank
     * braid inferred differently would fail the load instead of the (checked) run. */
    for (size_t i = 0; i < sg->n_outputs && !rc; i++)
        rc = fill_info(sc, &g->output[i], sg->outputs[i], o->static_dims, false, err);
    if (rc)
        return rc;

    const bd_value **inits = NULL;
    size_t n_inits = 0;
    rc = collect_initializers(sc, sg, &inits, &n_inits, err);
    if (rc)
        return rc;
    if (n_inits > PB_SIZE_MAX)
        return too_many(err, "the subgraph's initializer list", n_inits);
    if (sg->n_inputs == 0 && n_inits > 0)
        return feed_constants(sc, g, inits, n_inits, out, err);
    g->initializer = sc_alloc(sc, n_inits, sizeof *g->initializer);
    out->external = calloc(n_inits ? n_inits : 1, sizeof *out->external);
    if (!g->initializer || !out->external)
        return bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph");
    g->initializer_count = (pb_size_t)n_inits;
    for (size_t i = 0; i < n_inits && !rc; i++) {
        bool ext = want_external(inits[i], o);
        rc = fill_tensor(sc, &g->initializer[i], inits[i], inits[i]->name, ext, err);
        if (ext)
            out->external[out->n_external++] = inits[i];
    }
    return rc;
}

int ort_serialize(const bd_subgraph *sg, const ort_serialize_opts *opts, ort_model *out,
                  bd_error *err)
{
    static const ort_serialize_opts defaults = { .external_min_bytes = 1024 };
    const ort_serialize_opts *o = opts ? opts : &defaults;
    ort_model res = { 0 };
    scratch sc = { 0 };
    onnx_enc_ModelProto m = onnx_enc_ModelProto_init_zero;
    int rc = build(&sc, sg, o, &m, &res, err);
    size_t size = 0;
    if (!rc && !pb_get_encoded_size(&size, onnx_enc_ModelProto_fields, &m))
        rc = bd_error_set(err, BD_EUNSUPPORTED, "cannot serialize the subgraph at '%s': %s",
                          sg->nodes[0]->name, "nanopb size pass failed");
    if (!rc && !(res.bytes = malloc(size ? size : 1)))
        rc = bd_error_set(err, BD_ENOMEM, "out of memory serializing the subgraph (%zu bytes)", size);
    if (!rc) {
        pb_ostream_t st = pb_ostream_from_buffer(res.bytes, size);
        if (!pb_encode(&st, onnx_enc_ModelProto_fields, &m))
            rc = bd_error_set(err, BD_EUNSUPPORTED, "cannot serialize the subgraph at '%s': %s",
                              sg->nodes[0]->name, PB_GET_ERROR(&st));
        res.len = st.bytes_written;
    }
    sc_free(&sc);       /* the message structs only pointed into the IR and SC */
    if (rc) {
        ort_model_free(&res);
        return rc;
    }
    *out = res;
    return 0;
}

void ort_model_free(ort_model *m)
{
    if (!m)
        return;
    free(m->bytes);
    free(m->external);
    free(m->fed);
    *m = (ort_model){ 0 };
}
