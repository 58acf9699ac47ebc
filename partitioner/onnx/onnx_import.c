/* The ONNX importer's front door: ModelProto and GraphProto into a bd_graph.
 *
 * Order matters: initializers first, then graph inputs (an input that is also an
 * initializer is a default value from older IR versions, not a fed input), then nodes
 * (Constant folded away), then outputs and value_info, which only add type information. */
#include "partitioner/onnx/onnx_import.h"
#include "partitioner/onnx/onnx_internal.h"
#include "core/model_file.h"

#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the importer reads: every IR version and default-domain opset ONNX Runtime 1.30
 * runs. oneDNN and shape inference implement opsets 7-17 only; a model of another opset is
 * imported as it is and placed on the fallback engine whole (dnnl_backend.c declines it). */
enum { IR_MIN = 3, IR_MAX = 11, OPSET_MIN = 1, OPSET_MAX = 26 };

/* The spans of a GraphProto's repeated fields. */
typedef struct graph_msg {
    onnx_GraphProto gp;
    ox_spans nodes, inits, sparse, inputs, outputs, infos;
} graph_msg;

static void graph_msg_free(graph_msg *m)
{
    pb_release(onnx_GraphProto_fields, &m->gp);
    bd_pb_spans_free(&m->nodes);
    bd_pb_spans_free(&m->inits);
    bd_pb_spans_free(&m->sparse);
    bd_pb_spans_free(&m->inputs);
    bd_pb_spans_free(&m->outputs);
    bd_pb_spans_free(&m->infos);
}

static int decode_graph(ox_ctx *c, const ox_span *sp, graph_msg *m, bd_error *err)
{
    memset(m, 0, sizeof *m);
    ox_spans *lists[] = { &m->nodes, &m->inits, &m->sparse, &m->inputs, &m->outputs, &m->infos };
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        bd_pb_spans_init(lists[i], c->base, c->len);
    bd_pb_on_span(&m->gp.node, &m->nodes);
    bd_pb_on_span(&m->gp.initializer, &m->inits);
    bd_pb_on_span(&m->gp.sparse_initializer, &m->sparse);
    bd_pb_on_span(&m->gp.input, &m->inputs);
    bd_pb_on_span(&m->gp.output, &m->outputs);
    bd_pb_on_span(&m->gp.value_info, &m->infos);
    int rc = bd_pb_decode(sp, onnx_GraphProto_fields, &m->gp, "graph", err);
    if (rc == 0 && (m->nodes.n > BD_MAX_NODES || m->inits.n + m->inputs.n > BD_MAX_VALUES))
        rc = bd_error_set(err, BD_EMODEL, "graph '%s' has %zu nodes and %zu initializers and "
                          "inputs (braid's limits: %d and %d)", m->gp.name ? m->gp.name : "",
                          m->nodes.n, m->inits.n + m->inputs.n, BD_MAX_NODES, BD_MAX_VALUES);
    if (rc == 0 && m->sparse.n)
        rc = bd_error_set(err, BD_EUNSUPPORTED, "graph '%s': sparse initializers are not supported",
                          m->gp.name ? m->gp.name : "");
    return rc;
}

/* ---- ModelProto: versions and the graph ------------------------------------------------- */

static int decode_model(ox_ctx *c, ox_span *graph, int64_t *opset, bd_error *err)
{
    onnx_ModelProto mp;
    ox_spans graphs;
    memset(&mp, 0, sizeof mp);
    bd_pb_spans_init(&graphs, c->base, c->len);
    bd_pb_on_span(&mp.graph, &graphs);
    int rc = bd_pb_decode(&(ox_span){ c->base, c->len }, onnx_ModelProto_fields, &mp, "model", err);
    if (rc)
        goto out;

    int64_t ir = mp.has_ir_version ? mp.ir_version : 0;
    if (ir < IR_MIN || ir > IR_MAX) {
        rc = bd_error_set(err, BD_EUNSUPPORTED, "IR version %" PRId64 " is not supported "
                          "(braid reads IR versions %d to %d)", ir, IR_MIN, IR_MAX);
        goto out;
    }
    bool found = false;
    for (pb_size_t i = 0; i < mp.opset_import_count; i++) {
        const char *d = mp.opset_import[i].domain ? mp.opset_import[i].domain : "";
        if (*d == '\0' || strcmp(d, "ai.onnx") == 0) {
            *opset = mp.opset_import[i].version;
            found = true;
        }
    }
    if (!found) {
        rc = bd_error_set(err, BD_EUNSUPPORTED, "the model imports no opset of the default "
                          "domain (ai.onnx)");
        goto out;
    }
    if (*opset < OPSET_MIN || *opset > OPSET_MAX) {
        rc = bd_error_set(err, BD_EUNSUPPORTED, "opset %" PRId64 " of the default domain is not "
                          "supported (braid reads opsets %d to %d, and runs 7 to 17 on oneDNN)",
                          *opset, OPSET_MIN, OPSET_MAX);
        goto out;
    }
    if (!graphs.n) {
        rc = bd_error_set(err, BD_EMODEL, "the model has no graph");
        goto out;
    }
    *graph = graphs.v[graphs.n - 1];
out:
    pb_release(onnx_ModelProto_fields, &mp);
    bd_pb_spans_free(&graphs);
    return rc;
}

/* ---- initializers, inputs, outputs, value_info ------------------------------------------- */

static int add_initializers(ox_ctx *c, const ox_spans *inits, bd_error *err)
{
    for (size_t i = 0; i < inits->n; i++) {
        char what[64];
        snprintf(what, sizeof what, "initializer #%zu", i);
        bd_value tmp = { 0 }, *v;
        int rc = ox_tensor_load(c, &inits->v[i], &tmp, what, err);
        if (rc)
            return rc;
        if (!tmp.name)
            return bd_error_set(err, BD_EMODEL, "%s has no name", what);
        if ((rc = bd_graph_add_value(c->g, tmp.name, tmp.dtype, &tmp.shape, &v, err)))
            return rc;
        v->data = tmp.data;
        v->nbytes = tmp.nbytes;
    }
    return 0;
}

typedef struct value_info {
    onnx_ValueInfoProto vi;
    const char *name;
    bool typed;
    int dtype;
    bd_shape shape;
} value_info;

/* Decode a ValueInfoProto; a non-tensor type is an error only when REQUIRE_TENSOR. */
static int decode_value_info(ox_ctx *c, const ox_span *sp, const char *what, size_t idx,
                             bool require_tensor, value_info *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    char w[64];
    snprintf(w, sizeof w, "%s #%zu", what, idx);
    int rc = bd_pb_decode(sp, onnx_ValueInfoProto_fields, &out->vi, w, err);
    if (rc)
        return rc;
    if (!out->vi.name || !*out->vi.name)
        return bd_error_set(err, BD_EMODEL, "%s has no name", w);
    out->name = out->vi.name;
    out->dtype = BD_DT_UNDEFINED;
    out->shape.rank = -1;
    if (!out->vi.has_type)
        return 0;
    rc = ox_type_load(c, out->name, &out->vi.type, &out->dtype, &out->shape, err);
    if (rc == BD_EUNSUPPORTED && !require_tensor) {
        bd_error_clear(err);
        return 0;
    }
    out->typed = rc == 0;
    return rc;
}

static int add_inputs(ox_ctx *c, const ox_spans *inputs, bd_error *err)
{
    for (size_t i = 0; i < inputs->n; i++) {
        value_info vi;
        bd_value *v;
        int rc = decode_value_info(c, &inputs->v[i], "graph input", i, true, &vi, err);
        if (rc == 0) {
            v = bd_graph_find_value(c->g, vi.name);
            if (v && !v->data)
                rc = bd_error_set(err, BD_EMODEL, "graph input '%s' is declared twice", vi.name);
            /* else if v: an initializer listed as input (IR < 4): a default, not fed */
            else if (!v && (rc = bd_graph_add_value(c->g, vi.name, vi.dtype, &vi.shape, &v, err)) == 0)
                rc = bd_graph_mark_input(c->g, v, err);
        }
        pb_release(onnx_ValueInfoProto_fields, &vi.vi);
        if (rc)
            return rc;
    }
    return 0;
}

/* Give V the declared type where it has none yet (node outputs before shape inference). */
static void refine(bd_value *v, const value_info *vi)
{
    if (!vi->typed || v->data || v->is_input)
        return;
    if (v->dtype == BD_DT_UNDEFINED)
        v->dtype = vi->dtype;
    if (v->shape.rank < 0)
        v->shape = vi->shape;
}

static int add_outputs(ox_ctx *c, const ox_spans *outputs, const ox_spans *infos, bd_error *err)
{
    for (size_t i = 0; i < outputs->n; i++) {
        value_info vi;
        int rc = decode_value_info(c, &outputs->v[i], "graph output", i, true, &vi, err);
        if (rc == 0) {
            bd_value *v = bd_graph_get_or_add_value(c->g, vi.name, err);
            if (!v)
                rc = err ? err->code : BD_ENOMEM;
            else if (v->is_output)
                rc = bd_error_set(err, BD_EMODEL, "graph output '%s' is declared twice", vi.name);
            else {
                refine(v, &vi);
                rc = bd_graph_mark_output(c->g, v, err);
            }
        }
        pb_release(onnx_ValueInfoProto_fields, &vi.vi);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < infos->n; i++) {
        value_info vi;
        int rc = decode_value_info(c, &infos->v[i], "value_info", i, false, &vi, err);
        if (rc == 0) {
            bd_value *v = bd_graph_find_value(c->g, vi.name);
            if (v)
                refine(v, &vi);
        }
        pb_release(onnx_ValueInfoProto_fields, &vi.vi);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- nodes ---------------------------------------------------------------------------- */

/* Node names must be unique in the IR: missing ones become "<op>_<index>", and a name
 * already taken gets a "_<k>" suffix. NAMES indexes the names given so far; the entry of a
 * taken name remembers the next suffix to try, so many nodes of one name cost linear time
 * (trying _1, _2, ... afresh for each was quadratic). */
static void unique_node_name(struct hsearch_data *names, const char *given, const char *op,
                            size_t index, char *buf, size_t size)
{
    /* Leave room for the suffix: a truncated name must still be able to change. */
    int keep = (int)size - 32;
    if (given && *given)
        snprintf(buf, size, "%.*s", keep, given);
    else
        snprintf(buf, size, "%.*s_%zu", keep, op, index);
    size_t base = strlen(buf);
    ENTRY *taken, *found;
    if (!hsearch_r((ENTRY){ .key = buf }, FIND, &taken, names))
        return;
    size_t k = taken->data ? (size_t)(uintptr_t)taken->data : 1;
    /* Each suffix tried and found taken belongs to a node seen so far: bounded. */
    for (;; k++) {
        buf[base] = '\0';
        snprintf(buf + base, size - base, "_%zu", k);
        if (!hsearch_r((ENTRY){ .key = buf }, FIND, &found, names))
            break;
    }
    taken->data = (void *)(uintptr_t)(k + 1);
}

typedef struct node_msg {
    onnx_NodeProto np;
    ox_spans attrs;
} node_msg;

/* The value a node writes as output K; an empty name (an omitted optional output) gets a
 * fresh, unused value since the IR's outputs are never NULL. */
static bd_value *node_output(ox_ctx *c, const char *node, const char *name, size_t k, bd_error *err)
{
    if (*name)
        return bd_graph_get_or_add_value(c->g, name, err);
    char buf[256];
    snprintf(buf, sizeof buf, "%.200s:unused_output_%zu", node, k);
    size_t base = strlen(buf);
    for (size_t i = 1; bd_graph_find_value(c->g, buf); i++)
        snprintf(buf + base, sizeof buf - base, "_%zu", i);
    bd_value *v;
    return bd_graph_add_value(c->g, buf, BD_DT_UNDEFINED, NULL, &v, err) == 0 ? v : NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Give N (with GRAPH attributes) the outer values its bodies read as trailing implicit
 * inputs, each once and none it already reads (looked up in a sorted copy of its input
 * names: a node with many inputs and a body reading many names stays n log n). */
static int add_implicit_inputs(ox_ctx *c, bd_node *n, bd_error *err)
{
    ox_names outer = { 0 };
    int rc = 0;
    for (size_t i = 0; i < n->n_attrs && rc == 0; i++)
        if (n->attrs[i].type == BD_ATTR_GRAPH)
            rc = ox_subgraph_outer_names(c, &(ox_span){ n->attrs[i].graph, n->attrs[i].graph_len },
                                         &outer, err);
    const char **have = NULL;
    size_t n_have = 0;
    if (rc == 0 && outer.n) {
        have = malloc((n->n_inputs + 1) * sizeof *have);
        if (!have)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        for (size_t k = 0; have && k < n->n_inputs; k++)
            if (n->inputs[k])
                have[n_have++] = n->inputs[k]->name;
        if (have)
            qsort(have, n_have, sizeof *have, cmp_str);
    }
    for (size_t i = 0; i < outer.n && rc == 0; i++) {
        /* OUTER is sorted without repeats, so a name appended here never comes again. */
        const char *name = outer.v[i];
        if (n_have && bsearch(&name, have, n_have, sizeof *have, cmp_str))
            continue;
        bd_value *v = bd_graph_get_or_add_value(c->g, name, err);
        if (!v) {
            rc = err ? err->code : BD_ENOMEM;
        } else if ((rc = bd_node_append_input(c->g, n, v, err)) >= 0) {
            rc = 0;
            n->n_implicit++;
        }
    }
    free(have);
    if (rc)
        bd_error_prefix(err, "node '%s' (%s): ", n->name, n->op_type);
    ox_names_free(&outer);
    return rc;
}

static int add_node(ox_ctx *c, node_msg *m, size_t index, struct hsearch_data *names,
                    bd_error *err)
{
    const onnx_NodeProto *np = &m->np;
    const char *op = np->op_type ? np->op_type : "";
    const char *domain = np->domain ? np->domain : "";
    if (strcmp(domain, "ai.onnx") == 0)
        domain = "";
    if (!*op)
        return bd_error_set(err, BD_EMODEL, "node #%zu ('%s') has no op_type", index,
                            np->name ? np->name : "");

    char name[1024];
    unique_node_name(names, np->name, op, index, name, sizeof name);

    if (strcmp(op, "Constant") == 0 && *domain == '\0') {
        if (np->output_count != 1 || !np->output[0] || !*np->output[0])
            return bd_error_set(err, BD_EMODEL, "Constant node '%s' must have exactly one output", name);
        bd_value *v = bd_graph_get_or_add_value(c->g, np->output[0], err);
        if (!v)
            return err ? err->code : BD_ENOMEM;
        if (v->producer || v->data || v->is_input)
            return bd_error_set(err, BD_EMODEL, "Constant node '%s' writes '%s', which is already "
                                "a graph input, an initializer or another node's output", name, v->name);
        return ox_fold_constant(c, name, &m->attrs, v, err);
    }

    /* bd_graph_add_node copies these arrays */
    bd_value **ins = calloc((size_t)np->input_count + np->output_count + 1, sizeof *ins);
    if (!ins)
        return bd_error_set(err, BD_ENOMEM, "out of memory adding node '%s'", name);
    bd_value **outs = ins + np->input_count;
    int rc = 0;
    for (pb_size_t k = 0; k < np->input_count && rc == 0; k++) {
        const char *in = np->input[k] ? np->input[k] : "";
        /* "" marks an omitted optional input: it stays NULL */
        if (*in && !(ins[k] = bd_graph_get_or_add_value(c->g, in, err)))
            rc = err ? err->code : BD_ENOMEM;
    }
    for (pb_size_t k = 0; k < np->output_count && rc == 0; k++)
        if (!(outs[k] = node_output(c, name, np->output[k] ? np->output[k] : "", k, err)))
            rc = err ? err->code : BD_ENOMEM;
    bd_node *n = NULL;
    if (rc == 0)
        rc = bd_graph_add_node(c->g, name, op, domain, ins, np->input_count, outs,
                               np->output_count, &n, err);
    free(ins);
    if (rc)
        return rc;
    ENTRY *entered;
    if (!hsearch_r((ENTRY){ .key = (char *)n->name }, ENTER, &entered, names))
        return bd_error_set(err, BD_ENOMEM, "out of memory indexing node names");
    if ((rc = ox_node_attrs(c, n, &m->attrs, err)))
        return rc;
    return add_implicit_inputs(c, n, err);
}

static int add_nodes(ox_ctx *c, const ox_spans *nodes, bd_error *err)
{
    struct hsearch_data names;
    memset(&names, 0, sizeof names);
    if (!hcreate_r(nodes->n * 2 + 16, &names))
        return bd_error_set(err, BD_ENOMEM, "out of memory indexing node names");
    int rc = 0;
    for (size_t i = 0; i < nodes->n && rc == 0; i++) {
        node_msg m;
        memset(&m, 0, sizeof m);
        bd_pb_spans_init(&m.attrs, c->base, c->len);
        bd_pb_on_span(&m.np.attribute, &m.attrs);
        char what[64];
        snprintf(what, sizeof what, "node #%zu", i);
        rc = bd_pb_decode(&nodes->v[i], onnx_NodeProto_fields, &m.np, what, err);
        if (rc == 0)
            rc = add_node(c, &m, i, &names, err);
        pb_release(onnx_NodeProto_fields, &m.np);
        bd_pb_spans_free(&m.attrs);
    }
    hdestroy_r(&names);
    return rc;
}

/* ---- the import ----------------------------------------------------------------------- */

/* Import the model in DATA..DATA+LEN. OWNED (may be NULL) is a heap buffer the graph takes
 * over (the file's bytes); it is freed on failure. */
static int import(const void *data, size_t len, const char *base_dir, void *owned,
                  bd_graph **out, bd_error *err)
{
    ox_ctx c = { .base = data, .len = len, .base_dir = base_dir };
    graph_msg gm;
    ox_span graph;
    int64_t opset = 0;
    memset(&gm, 0, sizeof gm);
    int rc = len ? 0 : bd_error_set(err, BD_EMODEL, "the model is empty (0 bytes)");
    if (rc == 0)
        rc = decode_model(&c, &graph, &opset, err);
    if (rc == 0)
        rc = decode_graph(&c, &graph, &gm, err);
    if (rc == 0) {
        c.g = bd_graph_create(gm.gp.name && *gm.gp.name ? gm.gp.name : "main");
        if (!c.g)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    if (c.g && bd_graph_adopt_buffer(c.g, owned) && rc == 0)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    else if (!c.g)
        free(owned);
    if (rc == 0)
        rc = add_initializers(&c, &gm.inits, err);
    if (rc == 0)
        rc = add_inputs(&c, &gm.inputs, err);
    if (rc == 0)
        rc = add_nodes(&c, &gm.nodes, err);
    if (rc == 0)
        rc = add_outputs(&c, &gm.outputs, &gm.infos, err);
    if (rc == 0) {
        bd_graph_set_opset(c.g, opset);
        rc = bd_graph_validate(c.g, err);
    }
    graph_msg_free(&gm);
    ox_external_free(&c);
    if (rc) {
        bd_graph_destroy(c.g);
        return rc;
    }
    *out = c.g;
    return 0;
}

int bd_onnx_import_memory(const void *data, size_t len, const char *base_dir,
                          bd_graph **out, bd_error *err)
{
    if (!data && len)
        return bd_error_set(err, BD_EINVAL, "ONNX import: NULL data");
    return import(data, len, base_dir, NULL, out, err);
}

int bd_onnx_import_file(const char *path, bd_graph **out, bd_error *err)
{
    void *data;
    size_t len;
    int rc = bd_model_file_read(path, "model", &data, &len, err);
    if (rc)
        return rc;
    char *dir = bd_model_file_dir(path);
    if (!dir) {
        free(data);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    rc = import(data, len, dir, data, out, err);
    free(dir);
    if (rc)
        return bd_error_prefix(err, "'%s': ", path);
    /* where the weights came from, so the runtime can give them back and read them again */
    char *real = realpath(path, NULL);
    rc = bd_graph_buffer_source(*out, data, len, real ? real : path, 0);
    free(real);
    if (rc == BD_ENOMEM) {
        bd_graph_destroy(*out);
        *out = NULL;
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    return 0;
}

/* ---- subgraph bodies (If/Loop/Scan) ------------------------------------------------------ */

int bd_onnx_import_body(const bd_graph *outer, const bd_node *node, const void *body, size_t len,
                        const bd_value *const *formals, size_t n_formals, bd_graph **out,
                        bd_error *err)
{
    if (!body || !len)
        return bd_error_set(err, BD_EMODEL, "node '%s' (%s): empty subgraph", node->name,
                            node->op_type);
    ox_ctx c = { .base = body, .len = len, .base_dir = NULL };
    graph_msg gm;
    int rc = decode_graph(&c, &(ox_span){ body, len }, &gm, err);
    if (rc == 0 && gm.inputs.n != n_formals)
        rc = bd_error_set(err, BD_EMODEL, "node '%s' (%s): its body has %zu input(s), the op "
                          "gives it %zu", node->name, node->op_type, gm.inputs.n, n_formals);
    if (rc == 0 && !(c.g = bd_graph_create(gm.gp.name && *gm.gp.name ? gm.gp.name : "body")))
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    if (rc == 0)
        rc = add_initializers(&c, &gm.inits, err);
    if (rc == 0)
        rc = add_inputs(&c, &gm.inputs, err);
    /* The formal inputs take the types the enclosing graph gives them. */
    for (size_t i = 0; rc == 0 && i < n_formals; i++) {
        bd_value *v = bd_graph_input(c.g, i);
        if (formals[i]) {
            v->dtype = formals[i]->dtype;
            v->shape = formals[i]->shape;
        }
    }
    /* What the body reads from enclosing scopes (NODE's inputs, implicit or not, by name):
     * constants stay constants (their bytes are the outer graph's), everything else becomes a
     * further input after the formal ones, in name order. */
    ox_names names = { 0 };
    if (rc == 0)
        rc = ox_subgraph_outer_names(&c, &(ox_span){ body, len }, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        const bd_value *o = NULL;
        bd_value *v;
        for (size_t k = 0; k < node->n_inputs && !o; k++)
            if (node->inputs[k] && strcmp(node->inputs[k]->name, names.v[i]) == 0)
                o = node->inputs[k];
        if (!o)
            o = bd_graph_find_value(outer, names.v[i]);
        if (!o || bd_graph_find_value(c.g, o->name))
            continue;                 /* unknown: validation names it; or the body's own */
        if ((rc = bd_graph_add_value(c.g, o->name, o->dtype, &o->shape, &v, err)))
            break;
        if (o->data) {
            v->data = o->data;
            v->nbytes = o->nbytes;
        } else {
            rc = bd_graph_mark_input(c.g, v, err);
        }
    }
    ox_names_free(&names);
    if (rc == 0)
        rc = add_nodes(&c, &gm.nodes, err);
    if (rc == 0)
        rc = add_outputs(&c, &gm.outputs, &gm.infos, err);
    if (rc == 0) {
        bd_graph_set_opset(c.g, bd_graph_opset(outer));
        bd_graph_set_framework(c.g, bd_graph_framework(outer));
        rc = bd_graph_validate(c.g, err);
    }
    graph_msg_free(&gm);
    ox_external_free(&c);
    if (rc) {
        bd_graph_destroy(c.g);
        return bd_error_prefix(err, "node '%s' (%s), body: ", node->name, node->op_type);
    }
    *out = c.g;
    return 0;
}
