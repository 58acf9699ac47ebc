/* The frozen GraphDef frontend: the protobuf into node views, then tf_translate. */
#include "partitioner/tf/tf_import.h"
#include "partitioner/tf/tf_translate.h"
#include "core/model_file.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

typedef struct gd_ctx {
    bd_graph      *g;
    const uint8_t *base;
    size_t         len;
} gd_ctx;

/* Decode the AttrEntry in SP into A. */
static int entry_decode(gd_ctx *c, const char *node, const tf_bytes *sp, tf_attr *a, bd_error *err)
{
    tensorflow_NodeDef_AttrEntry e;
    tf_spans value;
    memset(&e, 0, sizeof e);
    bd_pb_spans_init(&value, c->base, c->len);
    bd_pb_on_span(&e.value, &value);
    char what[160];
    snprintf(what, sizeof what, "node '%s': an attr", node);
    int rc = bd_pb_decode(sp, tensorflow_NodeDef_AttrEntry_fields, &e, what, err);
    if (rc == 0) {
        a->key = bd_graph_strdup(c->g, e.key ? e.key : "", (size_t)-1);
        snprintf(what, sizeof what, "node '%s' attr '%s'", node, e.key ? e.key : "");
        if (!a->key)
            rc = bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        else if (value.n)
            rc = tf_attr_decode(c->g, c->base, c->len, &value.v[value.n - 1], a, what, err);
    }
    pb_release(tensorflow_NodeDef_AttrEntry_fields, &e);
    bd_pb_spans_free(&value);
    return rc;
}

int tf_nodedef_decode(bd_graph *g, const uint8_t *base, size_t len, size_t i, const tf_bytes *sp,
                      tf_nodeview *v, bd_error *err)
{
    gd_ctx ctx = { .g = g, .base = base, .len = len }, *c = &ctx;
    tensorflow_NodeDef nd;
    tf_spans attrs;
    memset(&nd, 0, sizeof nd);
    bd_pb_spans_init(&attrs, c->base, c->len);
    bd_pb_on_span(&nd.attr, &attrs);
    char what[64];
    snprintf(what, sizeof what, "node #%zu", i);
    int rc = bd_pb_decode(sp, tensorflow_NodeDef_fields, &nd, what, err);
    if (rc == 0 && (!nd.name || !*nd.name))
        rc = bd_error_set(err, BD_EMODEL, "node #%zu has no name", i);
    if (rc == 0 && (!nd.op || !*nd.op))
        rc = bd_error_set(err, BD_EMODEL, "node '%s' has no op", nd.name);
    if (rc == 0) {
        v->name = bd_graph_strdup(c->g, nd.name, (size_t)-1);
        v->op = bd_graph_strdup(c->g, nd.op, (size_t)-1);
        v->origin = sp->p;
        v->origin_len = sp->n;
        size_t n_in = nd.input_count;
        v->inputs = n_in ? bd_graph_alloc(c->g, n_in * sizeof *v->inputs) : NULL;
        v->ctrl = n_in ? bd_graph_alloc(c->g, n_in * sizeof *v->ctrl) : NULL;
        v->attrs = attrs.n ? bd_graph_alloc(c->g, attrs.n * sizeof *v->attrs) : NULL;
        if (!v->name || !v->op || (n_in && (!v->inputs || !v->ctrl)) || (attrs.n && !v->attrs))
            rc = bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", nd.name);
        for (size_t k = 0; rc == 0 && k < n_in; k++) {
            const char *s = nd.input[k] ? nd.input[k] : "";
            bool ctrl = s[0] == '^';
            const char *d = bd_graph_strdup(c->g, s + ctrl, (size_t)-1);
            if (!d)
                rc = bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", nd.name);
            else if (!*d)
                rc = bd_error_set(err, BD_EMODEL, "node '%s': input %zu is empty", nd.name, k);
            else if (ctrl)
                v->ctrl[v->n_ctrl++] = d;
            else
                v->inputs[v->n_inputs++] = d;
        }
        for (size_t k = 0; rc == 0 && k < attrs.n; k++) {
            rc = entry_decode(c, nd.name, &attrs.v[k], &v->attrs[k], err);
            v->n_attrs = k + 1;
        }
    }
    pb_release(tensorflow_NodeDef_fields, &nd);
    bd_pb_spans_free(&attrs);
    return rc;
}

/* OWNED (may be NULL): a heap buffer holding DATA that the graph takes over. */
static int import(const void *data, size_t len, void *owned, bd_graph **out, bd_error *err)
{
    gd_ctx c = { .base = data, .len = len };
    tensorflow_GraphDef gd;
    tf_spans nodes;
    memset(&gd, 0, sizeof gd);
    bd_pb_spans_init(&nodes, c.base, len);
    bd_pb_on_span(&gd.node, &nodes);
    c.g = bd_graph_create("main");
    int rc = c.g ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    if (!c.g)
        free(owned);
    else if (bd_graph_adopt_buffer(c.g, owned))
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    if (rc == 0 && len == 0)
        rc = bd_error_set(err, BD_EMODEL, "the GraphDef is empty (0 bytes)");
    tf_bytes all = { c.base, len };
    if (rc == 0)
        rc = bd_pb_decode(&all, tensorflow_GraphDef_fields, &gd, "GraphDef", err);
    if (rc == 0 && nodes.n == 0)
        rc = bd_error_set(err, BD_EMODEL, "the GraphDef has no nodes (is this a frozen GraphDef?)");
    if (rc == 0 && nodes.n > BD_MAX_NODES)
        rc = bd_error_set(err, BD_EMODEL, "the GraphDef has %zu nodes (braid's limit: %d)",
                          nodes.n, BD_MAX_NODES);
    tf_nodeview *views = NULL;
    if (rc == 0) {
        views = bd_graph_alloc(c.g, nodes.n * sizeof *views);
        if (!views)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory for %zu nodes", nodes.n);
    }
    for (size_t i = 0; rc == 0 && i < nodes.n; i++)
        rc = tf_nodedef_decode(c.g, c.base, c.len, i, &nodes.v[i], &views[i], err);
    if (rc == 0) {
        bd_graph_set_framework(c.g, "tensorflow");
        bd_graph_set_platform(c.g, "tensorflow_graphdef");
        if (gd.has_versions)
            bd_graph_set_opset(c.g, gd.versions.producer);
        rc = tf_translate(c.g, views, nodes.n, NULL, err);
    }
    bd_pb_spans_free(&nodes);
    if (rc) {
        bd_graph_destroy(c.g);
        return rc;
    }
    *out = c.g;
    return 0;
}

int bd_tf_import_memory(const void *data, size_t len, bd_graph **out, bd_error *err)
{
    if (!data && len)
        return bd_error_set(err, BD_EINVAL, "GraphDef import: NULL data");
    return import(data, len, NULL, out, err);
}

int bd_tf_import_file(const char *path, bd_graph **out, bd_error *err)
{
    void *data;
    size_t len;
    int rc = bd_model_file_read(path, "GraphDef", &data, &len, err);
    if (rc)
        return rc;
    rc = import(data, len, data, out, err);
    if (rc)
        bd_error_prefix(err, "'%s': ", path);
    return rc;
}
