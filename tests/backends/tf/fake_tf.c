/* A FAKE libtensorflow.so.2 for testing braid's TensorFlow engine where the real library
 * cannot be installed. It is not TensorFlow: it implements the C API functions braid uses
 * (tf_api.h) with trivial semantics, enough to drive the engine's control flow end to end:
 *
 *   TF_GraphImportGraphDef  decodes the GraphDef (nanopb, proto/tf_graph.proto) and
 *                           rejects what TensorFlow would: duplicate node names, an input
 *                           naming a node that is not in the graph, a node with no op;
 *   TF_SessionRun           evaluates the fetches by recursion over the imported nodes, with
 *                           feeds overriding any tensor (as in TensorFlow); ops: Placeholder
 *                           (must be fed), Const (tensor_content), Identity (returns a VIEW of
 *                           its input, like TensorFlow's buffer forwarding), Neg, Relu and
 *                           AddV2 (float32, AddV2 broadcasting its second operand cyclically);
 *                           anything else fails with UNIMPLEMENTED.
 *   TF_NewTensor            wraps the caller's buffer without copying (counted).
 *
 * Built twice by tests/backends/tf/meson.build: complete, and with -DFAKE_TF_OMIT_SESSION_RUN
 * (exports everything but TF_SessionRun) to test the missing-symbol error. The counters in
 * fake_tf_stats let tests check what the engine did (imports, live sessions and tensors). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>

#include "backends/tf/tf_api.h"
#include "proto/tf_graph.pb.h"

#define EXPORT __attribute__((visibility("default")))

/* What the engine did, for the tests (looked up with dlsym). */
typedef struct fake_tf_stats {
    int imports;            /* successful TF_GraphImportGraphDef calls */
    int sessions_live;
    int runs;
    int tensors_live;       /* TF_Tensors not yet deleted */
    int wrapped_inputs;     /* TF_NewTensor calls (zero copy: the fake keeps the pointer) */
    int intra_threads;      /* from the last TF_SetConfig, -1 if never called */
    int last_graph_nodes;
} fake_tf_stats;

static fake_tf_stats stats = { .intra_threads = -1 };

EXPORT const fake_tf_stats *fake_tf_get_stats(void) { return &stats; }

struct TF_Status { TF_Code code; char msg[512]; };

typedef struct fake_node {
    char    *name, *op;
    char   **inputs;
    int      n_inputs;
    int      dtype;                 /* Const / Placeholder */
    uint8_t *content;               /* Const tensor_content (copy) */
    size_t   content_len;
    int64_t  dims[8];
    int      rank;
} fake_node;

struct TF_Operation { fake_node n; };
struct TF_Graph { TF_Operation *ops; size_t n; };
struct TF_ImportGraphDefOptions { int unused; };
struct TF_SessionOptions { int unused; };
struct TF_Session { TF_Graph *g; };
struct TF_Tensor {
    TF_DataType dt;
    int         nd;
    int64_t     dims[8];
    void       *data;
    size_t      len;
    tf_deallocator *dealloc;
    void       *arg;
    bool        owned;              /* data malloc'd by the fake */
};

static void set_status(TF_Status *s, TF_Code c, const char *msg)
{
    s->code = c;
    snprintf(s->msg, sizeof s->msg, "%s", msg);
}

/* ---- plain objects ------------------------------------------------------------------ */

tf_fn_TF_Version TF_Version;
#ifndef FAKE_TF_VERSION                     /* -DFAKE_TF_VERSION='"1.15.0-fake"': a TF 1 */
#define FAKE_TF_VERSION "2.0-fake (braid test double, not TensorFlow)"
#endif
EXPORT const char *TF_Version(void) { return FAKE_TF_VERSION; }

tf_fn_TF_NewStatus TF_NewStatus;
EXPORT TF_Status *TF_NewStatus(void) { return calloc(1, sizeof(TF_Status)); }
tf_fn_TF_DeleteStatus TF_DeleteStatus;
EXPORT void TF_DeleteStatus(TF_Status *s) { free(s); }
tf_fn_TF_GetCode TF_GetCode;
EXPORT TF_Code TF_GetCode(const TF_Status *s) { return s->code; }
tf_fn_TF_Message TF_Message;
EXPORT const char *TF_Message(const TF_Status *s) { return s->code ? s->msg : ""; }

static void free_buffer(void *d, size_t n) { (void)n; free(d); }
tf_fn_TF_NewBuffer TF_NewBuffer;
EXPORT TF_Buffer *TF_NewBuffer(void) { return calloc(1, sizeof(TF_Buffer)); }
tf_fn_TF_NewBufferFromString TF_NewBufferFromString;
EXPORT TF_Buffer *TF_NewBufferFromString(const void *p, size_t n)
{
    TF_Buffer *b = calloc(1, sizeof *b);
    void *d = malloc(n ? n : 1);
    memcpy(d, p, n);
    b->data = d;
    b->length = n;
    b->data_deallocator = free_buffer;
    return b;
}
tf_fn_TF_DeleteBuffer TF_DeleteBuffer;
EXPORT void TF_DeleteBuffer(TF_Buffer *b)
{
    if (b && b->data_deallocator)
        b->data_deallocator((void *)b->data, b->length);
    free(b);
}

tf_fn_TF_NewGraph TF_NewGraph;
EXPORT TF_Graph *TF_NewGraph(void) { return calloc(1, sizeof(TF_Graph)); }
tf_fn_TF_DeleteGraph TF_DeleteGraph;
EXPORT void TF_DeleteGraph(TF_Graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++) {
        fake_node *n = &g->ops[i].n;
        free(n->name);
        free(n->op);
        for (int k = 0; k < n->n_inputs; k++)
            free(n->inputs[k]);
        free(n->inputs);
        free(n->content);
    }
    free(g->ops);
    free(g);
}

tf_fn_TF_NewImportGraphDefOptions TF_NewImportGraphDefOptions;
EXPORT TF_ImportGraphDefOptions *TF_NewImportGraphDefOptions(void) { return calloc(1, sizeof(TF_ImportGraphDefOptions)); }
tf_fn_TF_DeleteImportGraphDefOptions TF_DeleteImportGraphDefOptions;
EXPORT void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions *o) { free(o); }
tf_fn_TF_ImportGraphDefOptionsSetPrefix TF_ImportGraphDefOptionsSetPrefix;
EXPORT void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions *o, const char *p) { (void)o; (void)p; }

/* ---- importing a GraphDef ---------------------------------------------------------------- */

static bool dec_dim(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    fake_node *n = *arg;
    tensorflow_TensorShapeProto_Dim d = tensorflow_TensorShapeProto_Dim_init_zero;
    if (!pb_decode(s, tensorflow_TensorShapeProto_Dim_fields, &d) || n->rank >= 8)
        return false;
    n->dims[n->rank++] = d.size;
    return true;
}

static bool dec_shape(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    tensorflow_TensorShapeProto sp = tensorflow_TensorShapeProto_init_zero;
    sp.dim.funcs.decode = dec_dim;
    sp.dim.arg = *arg;
    ((fake_node *)*arg)->rank = 0;
    return pb_decode(s, tensorflow_TensorShapeProto_fields, &sp);
}

static bool dec_content(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    fake_node *n = *arg;
    n->content_len = s->bytes_left;
    n->content = malloc(n->content_len ? n->content_len : 1);
    return n->content && pb_read(s, n->content, n->content_len);
}

static bool dec_tensor(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    fake_node *n = *arg;
    tensorflow_TensorProto t = tensorflow_TensorProto_init_zero;
    t.tensor_shape.funcs.decode = dec_shape;
    t.tensor_shape.arg = n;
    t.tensor_content.funcs.decode = dec_content;
    t.tensor_content.arg = n;
    if (!pb_decode(s, tensorflow_TensorProto_fields, &t))
        return false;
    n->dtype = t.dtype;
    return true;
}

/* An attr map entry {1: key, 2: AttrValue}: the value's type, tensor and shape are
 * recorded whatever the key (Const: dtype + value; Placeholder: dtype + shape). */
static bool dec_attr(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    fake_node *n = *arg;
    while (s->bytes_left) {
        pb_wire_type_t wt;
        uint32_t tag;
        bool eof;
        if (!pb_decode_tag(s, &wt, &tag, &eof))
            return false;
        if (tag != 2) {
            if (!pb_skip_field(s, wt))
                return false;
            continue;
        }
        pb_istream_t sub;
        if (!pb_make_string_substream(s, &sub))
            return false;
        tensorflow_AttrValue v = tensorflow_AttrValue_init_zero;
        v.tensor.funcs.decode = dec_tensor;
        v.tensor.arg = n;
        v.shape.funcs.decode = dec_shape;
        v.shape.arg = n;
        bool ok = pb_decode(&sub, tensorflow_AttrValue_fields, &v);
        if (ok && v.has_type)
            n->dtype = v.type;
        if (!pb_close_string_substream(s, &sub) || !ok)
            return false;
    }
    return true;
}

static bool dec_node(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    TF_Graph *g = *arg;
    TF_Operation *ops = realloc(g->ops, (g->n + 1) * sizeof *ops);
    if (!ops)
        return false;
    g->ops = ops;
    fake_node *n = &g->ops[g->n].n;
    memset(n, 0, sizeof *n);
    n->rank = -1;
    tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
    nd.attr.funcs.decode = dec_attr;
    nd.attr.arg = n;
    if (!pb_decode(s, tensorflow_NodeDef_fields, &nd))
        return false;
    n->name = strdup(nd.name ? nd.name : "");
    n->op = strdup(nd.op ? nd.op : "");
    n->n_inputs = nd.input_count;
    n->inputs = calloc(nd.input_count ? nd.input_count : 1, sizeof *n->inputs);
    for (pb_size_t i = 0; i < nd.input_count; i++)
        n->inputs[i] = strdup(nd.input[i]);
    pb_release(tensorflow_NodeDef_fields, &nd);
    g->n++;
    return true;
}

static TF_Operation *find_op(TF_Graph *g, const char *name, size_t len)
{
    for (size_t i = 0; i < g->n; i++)
        if (strlen(g->ops[i].n.name) == len && memcmp(g->ops[i].n.name, name, len) == 0)
            return &g->ops[i];
    return NULL;
}

/* "name", "name:3" or "^name" -> the op and output index. */
static TF_Operation *parse_input(TF_Graph *g, const char *in, int *index)
{
    if (in[0] == '^')
        in++;
    const char *colon = strrchr(in, ':');
    *index = colon ? atoi(colon + 1) : 0;
    return find_op(g, in, colon ? (size_t)(colon - in) : strlen(in));
}

tf_fn_TF_GraphImportGraphDef TF_GraphImportGraphDef;
EXPORT void TF_GraphImportGraphDef(TF_Graph *g, const TF_Buffer *gd,
                                   const TF_ImportGraphDefOptions *o, TF_Status *st)
{
    (void)o;
    tensorflow_GraphDef def = tensorflow_GraphDef_init_zero;
    def.node.funcs.decode = dec_node;
    def.node.arg = g;
    pb_istream_t is = pb_istream_from_buffer(gd->data, gd->length);
    if (!pb_decode(&is, tensorflow_GraphDef_fields, &def)) {
        set_status(st, 3, "fake: GraphDef does not decode");
        return;
    }
    char msg[400];
    for (size_t i = 0; i < g->n; i++) {
        fake_node *n = &g->ops[i].n;
        if (!n->name[0] || !n->op[0]) {
            set_status(st, 3, "fake: node without name or op");
            return;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(g->ops[j].n.name, n->name) == 0) {
                snprintf(msg, sizeof msg, "fake: duplicate node name '%s'", n->name);
                set_status(st, 3, msg);
                return;
            }
        for (int k = 0; k < n->n_inputs; k++) {
            int idx;
            if (!parse_input(g, n->inputs[k], &idx)) {
                snprintf(msg, sizeof msg, "fake: node '%s': input '%s' names no node", n->name,
                         n->inputs[k]);
                set_status(st, 3, msg);
                return;
            }
        }
    }
    stats.imports++;
    stats.last_graph_nodes = (int)g->n;
    set_status(st, TF_OK, "");
}

tf_fn_TF_GraphOperationByName TF_GraphOperationByName;
EXPORT TF_Operation *TF_GraphOperationByName(TF_Graph *g, const char *name)
{
    return find_op(g, name, strlen(name));
}

/* The fake evaluates float ops only: anything but a Const or Placeholder gives float. */
tf_fn_TF_OperationOutputType TF_OperationOutputType;
EXPORT TF_DataType TF_OperationOutputType(TF_Output out)
{
    return out.oper->n.dtype ? (TF_DataType)out.oper->n.dtype : TF_FLOAT;
}

/* ---- sessions ---------------------------------------------------------------------------- */

tf_fn_TF_NewSessionOptions TF_NewSessionOptions;
EXPORT TF_SessionOptions *TF_NewSessionOptions(void) { return calloc(1, sizeof(TF_SessionOptions)); }
tf_fn_TF_DeleteSessionOptions TF_DeleteSessionOptions;
EXPORT void TF_DeleteSessionOptions(TF_SessionOptions *o) { free(o); }
tf_fn_TF_SetConfig TF_SetConfig;
EXPORT void TF_SetConfig(TF_SessionOptions *o, const void *proto, size_t len, TF_Status *st)
{
    (void)o;
    pb_istream_t is = pb_istream_from_buffer(proto, len);
    stats.intra_threads = 0;
    while (is.bytes_left) {
        pb_wire_type_t wt;
        uint32_t tag;
        bool eof;
        uint64_t v;
        if (!pb_decode_tag(&is, &wt, &tag, &eof) || wt != PB_WT_VARINT || !pb_decode_varint(&is, &v)) {
            set_status(st, 3, "fake: ConfigProto does not decode");
            return;
        }
        if (tag == 2)
            stats.intra_threads = (int)v;
    }
    set_status(st, TF_OK, "");
}

tf_fn_TF_NewSession TF_NewSession;
EXPORT TF_Session *TF_NewSession(TF_Graph *g, const TF_SessionOptions *o, TF_Status *st)
{
    (void)o;
    TF_Session *s = calloc(1, sizeof *s);
    s->g = g;
    stats.sessions_live++;
    set_status(st, TF_OK, "");
    return s;
}
tf_fn_TF_CloseSession TF_CloseSession;
EXPORT void TF_CloseSession(TF_Session *s, TF_Status *st) { (void)s; set_status(st, TF_OK, ""); }
tf_fn_TF_DeleteSession TF_DeleteSession;
EXPORT void TF_DeleteSession(TF_Session *s, TF_Status *st)
{
    if (s)
        stats.sessions_live--;
    free(s);
    set_status(st, TF_OK, "");
}

/* ---- tensors ----------------------------------------------------------------------------- */

static size_t dt_size(TF_DataType dt)
{
    switch (dt) {
    case TF_FLOAT: case TF_INT32: case TF_UINT32: return 4;
    case TF_DOUBLE: case TF_INT64: case TF_UINT64: return 8;
    case TF_INT16: case TF_UINT16: case TF_HALF: case TF_BFLOAT16: return 2;
    case TF_INT8: case TF_UINT8: case TF_BOOL: return 1;
    default: return 0;
    }
}

static TF_Tensor *make(TF_DataType dt, const int64_t *dims, int nd, void *data, size_t len,
                       tf_deallocator *dealloc, void *arg, bool owned)
{
    TF_Tensor *t = calloc(1, sizeof *t);
    t->dt = dt;
    t->nd = nd;
    for (int i = 0; i < nd && i < 8; i++)
        t->dims[i] = dims[i];
    t->data = data;
    t->len = len;
    t->dealloc = dealloc;
    t->arg = arg;
    t->owned = owned;
    stats.tensors_live++;
    return t;
}

tf_fn_TF_NewTensor TF_NewTensor;
EXPORT TF_Tensor *TF_NewTensor(TF_DataType dt, const int64_t *dims, int nd, void *data, size_t len,
                               tf_deallocator *dealloc, void *arg)
{
    size_t n = dt_size(dt);
    for (int i = 0; i < nd; i++)
        n *= (size_t)dims[i];
    if (nd > 8 || n != len) {         /* as TensorFlow: inconsistent buffer -> NULL */
        if (dealloc)
            dealloc(data, len, arg);
        return NULL;
    }
    stats.wrapped_inputs++;
    return make(dt, dims, nd, data, len, dealloc, arg, false);
}

tf_fn_TF_DeleteTensor TF_DeleteTensor;
EXPORT void TF_DeleteTensor(TF_Tensor *t)
{
    if (!t)
        return;
    if (t->owned)
        free(t->data);
    else if (t->dealloc)
        t->dealloc(t->data, t->len, t->arg);
    stats.tensors_live--;
    free(t);
}
tf_fn_TF_TensorType TF_TensorType;
EXPORT TF_DataType TF_TensorType(const TF_Tensor *t) { return t->dt; }
tf_fn_TF_NumDims TF_NumDims;
EXPORT int TF_NumDims(const TF_Tensor *t) { return t->nd; }
tf_fn_TF_Dim TF_Dim;
EXPORT int64_t TF_Dim(const TF_Tensor *t, int i) { return t->dims[i]; }
tf_fn_TF_TensorByteSize TF_TensorByteSize;
EXPORT size_t TF_TensorByteSize(const TF_Tensor *t) { return t->len; }
tf_fn_TF_TensorData TF_TensorData;
EXPORT void *TF_TensorData(const TF_Tensor *t) { return t->data; }

/* ---- running ----------------------------------------------------------------------------- */

#ifndef FAKE_TF_OMIT_SESSION_RUN

typedef struct run_state {
    TF_Graph         *g;
    const TF_Output  *feeds;
    TF_Tensor *const *feed_values;
    int               n_feeds;
    TF_Status        *st;
} run_state;

static TF_Tensor *copy_of(const TF_Tensor *t)
{
    void *d = malloc(t->len ? t->len : 1);
    memcpy(d, t->data, t->len);
    return make(t->dt, t->dims, t->nd, d, t->len, NULL, NULL, true);
}

/* A new tensor (the caller deletes it) holding output INDEX of OP. */
static TF_Tensor *eval(run_state *r, const TF_Operation *op, int index, int depth)
{
    char msg[400];
    for (int i = 0; i < r->n_feeds; i++)
        if (r->feeds[i].oper == op && r->feeds[i].index == index)  /* a view of the feed */
            return make(r->feed_values[i]->dt, r->feed_values[i]->dims, r->feed_values[i]->nd,
                        r->feed_values[i]->data, r->feed_values[i]->len, NULL, NULL, false);
    const fake_node *n = &op->n;
    if (depth > (int)r->g->n) {
        set_status(r->st, 3, "fake: cycle");
        return NULL;
    }
    if (strcmp(n->op, "Placeholder") == 0) {
        snprintf(msg, sizeof msg, "fake: You must feed a value for placeholder tensor '%s'", n->name);
        set_status(r->st, 3, msg);
        return NULL;
    }
    if (strcmp(n->op, "Const") == 0) {
        TF_Tensor t = { .dt = (TF_DataType)n->dtype, .nd = n->rank, .data = n->content,
                        .len = n->content_len };
        memcpy(t.dims, n->dims, sizeof t.dims);
        return copy_of(&t);
    }
    TF_Tensor *a = NULL, *b = NULL;
    int k = 0, idx;
    for (int i = 0; i < n->n_inputs && k < 2; i++) {
        if (n->inputs[i][0] == '^')
            continue;
        TF_Operation *src = parse_input(r->g, n->inputs[i], &idx);
        TF_Tensor *t = eval(r, src, idx, depth + 1);
        if (!t) {
            TF_DeleteTensor(a);
            return NULL;
        }
        if (k++ == 0)
            a = t;
        else
            b = t;
    }
    if (strcmp(n->op, "Identity") == 0 && a && !b)
        return a;
    if (strcmp(n->op, "Neg") == 0 && a && !b && a->dt == TF_FLOAT) {
        TF_Tensor *o = copy_of(a);
        for (size_t i = 0; i < o->len / 4; i++)
            ((float *)o->data)[i] = -((float *)o->data)[i];
        TF_DeleteTensor(a);
        return o;
    }
    if (strcmp(n->op, "Relu") == 0 && a && !b && a->dt == TF_FLOAT) {
        TF_Tensor *o = copy_of(a);
        for (size_t i = 0; i < o->len / 4; i++)
            if (((float *)o->data)[i] < 0)
                ((float *)o->data)[i] = 0;
        TF_DeleteTensor(a);
        return o;
    }
    if (strcmp(n->op, "AddV2") == 0 && a && b && a->dt == TF_FLOAT && b->dt == TF_FLOAT && b->len) {
        TF_Tensor *o = copy_of(a);
        size_t nb = b->len / 4;
        for (size_t i = 0; i < o->len / 4; i++)
            ((float *)o->data)[i] += ((const float *)b->data)[i % nb];
        TF_DeleteTensor(a);
        TF_DeleteTensor(b);
        return o;
    }
    TF_DeleteTensor(a);
    TF_DeleteTensor(b);
    snprintf(msg, sizeof msg, "fake: op %s (node '%s') is not implemented by the fake", n->op, n->name);
    set_status(r->st, 12, msg);
    return NULL;
}

tf_fn_TF_SessionRun TF_SessionRun;
EXPORT void TF_SessionRun(TF_Session *s, const TF_Buffer *run_options,
                          const TF_Output *inputs, TF_Tensor *const *input_values, int ninputs,
                          const TF_Output *outputs, TF_Tensor **output_values, int noutputs,
                          const TF_Operation *const *targets, int ntargets,
                          TF_Buffer *run_metadata, TF_Status *st)
{
    (void)run_options; (void)targets; (void)ntargets; (void)run_metadata;
    stats.runs++;
    run_state r = { s->g, inputs, input_values, ninputs, st };
    set_status(st, TF_OK, "");
    for (int i = 0; i < noutputs; i++)
        output_values[i] = NULL;
    for (int i = 0; i < noutputs; i++) {
        output_values[i] = eval(&r, outputs[i].oper, outputs[i].index, 0);
        if (!output_values[i]) {
            for (int j = 0; j < i; j++) {
                TF_DeleteTensor(output_values[j]);
                output_values[j] = NULL;
            }
            return;
        }
    }
}
#endif
