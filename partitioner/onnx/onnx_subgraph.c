/* Subgraph attributes (If/Loop/Scan bodies): the GraphProto stays opaque bytes in the model
 * buffer, and what braid needs of it is the set of values it reads from enclosing scopes:
 * the names its nodes (and, recursively, their own bodies) and its outputs use that it does
 * not define itself (inputs, initializers, node outputs). The importer adds those values to
 * the node as implicit inputs. */
#include "partitioner/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Nesting deeper than this is refused: the walk recurses once per level. */
#define MAX_DEPTH 32

void ox_names_free(ox_names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int names_add(ox_names *s, const char *name, bd_error *err)
{
    if (!name || !*name)
        return 0;                            /* "" is an omitted optional input */
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return bd_error_set(err, BD_ENOMEM, "out of memory reading a subgraph");
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(name)))
        return bd_error_set(err, BD_ENOMEM, "out of memory reading a subgraph");
    s->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort S and drop duplicates. */
static void names_unique(ox_names *s)
{
    if (s->n < 2)
        return;
    qsort(s->v, s->n, sizeof *s->v, cmp_str);
    size_t k = 1;
    for (size_t i = 1; i < s->n; i++) {
        if (strcmp(s->v[i], s->v[k - 1]) == 0)
            free(s->v[i]);
        else
            s->v[k++] = s->v[i];
    }
    s->n = k;
}

static bool names_has(const ox_names *sorted, const char *name)
{
    return sorted->n && bsearch(&name, sorted->v, sorted->n, sizeof *sorted->v, cmp_str) != NULL;
}

/* Add the names of the ValueInfoProtos (graph inputs, outputs) in SPANS. */
static int info_names(const ox_spans *spans, ox_names *out, bd_error *err)
{
    for (size_t i = 0; i < spans->n; i++) {
        onnx_ValueInfoProto vi;
        memset(&vi, 0, sizeof vi);
        int rc = bd_pb_decode(&spans->v[i], onnx_ValueInfoProto_fields, &vi, "subgraph value", err);
        if (rc == 0)
            rc = names_add(out, vi.name, err);
        pb_release(onnx_ValueInfoProto_fields, &vi);
        if (rc)
            return rc;
    }
    return 0;
}

/* Add the names of the TensorProtos (initializers) in SPANS; their data is not read. */
static int tensor_names(const ox_spans *spans, ox_names *out, bd_error *err)
{
    for (size_t i = 0; i < spans->n; i++) {
        onnx_TensorProto t;
        memset(&t, 0, sizeof t);
        int rc = bd_pb_decode(&spans->v[i], onnx_TensorProto_fields, &t, "subgraph initializer",
                              err);
        if (rc == 0)
            rc = names_add(out, t.name, err);
        pb_release(onnx_TensorProto_fields, &t);
        if (rc)
            return rc;
    }
    return 0;
}

static int outer_names(ox_ctx *c, const ox_span *graph, int depth, ox_names *out, bd_error *err);

/* Names node NP uses: its inputs and what its own subgraph attributes read from outside. */
static int node_uses(ox_ctx *c, const onnx_NodeProto *np, const ox_spans *attrs, int depth,
                     ox_names *used, bd_error *err)
{
    int rc = 0;
    for (pb_size_t k = 0; k < np->input_count && rc == 0; k++)
        rc = names_add(used, np->input[k], err);
    for (size_t i = 0; i < attrs->n && rc == 0; i++) {
        onnx_AttributeProto a;
        ox_spans graphs;
        memset(&a, 0, sizeof a);
        bd_pb_spans_init(&graphs, c->base, c->len);
        bd_pb_on_span(&a.g, &graphs);
        bd_pb_on_span(&a.graphs, &graphs);
        rc = bd_pb_decode(&attrs->v[i], onnx_AttributeProto_fields, &a, "subgraph attribute", err);
        for (size_t k = 0; k < graphs.n && rc == 0; k++)
            rc = outer_names(c, &graphs.v[k], depth + 1, used, err);
        pb_release(onnx_AttributeProto_fields, &a);
        bd_pb_spans_free(&graphs);
    }
    return rc;
}

/* Append to OUT the names the GraphProto in GRAPH reads from enclosing scopes. */
static int outer_names(ox_ctx *c, const ox_span *graph, int depth, ox_names *out, bd_error *err)
{
    if (depth > MAX_DEPTH)
        return bd_error_set(err, BD_EUNSUPPORTED, "subgraphs nested more than %d deep", MAX_DEPTH);
    onnx_GraphProto gp;
    ox_spans nodes, inits, inputs, outputs;
    ox_names defined = { 0 }, used = { 0 };
    memset(&gp, 0, sizeof gp);
    ox_spans *lists[] = { &nodes, &inits, &inputs, &outputs };
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        bd_pb_spans_init(lists[i], c->base, c->len);
    bd_pb_on_span(&gp.node, &nodes);
    bd_pb_on_span(&gp.initializer, &inits);
    bd_pb_on_span(&gp.input, &inputs);
    bd_pb_on_span(&gp.output, &outputs);
    int rc = bd_pb_decode(graph, onnx_GraphProto_fields, &gp, "subgraph", err);
    if (rc == 0)
        rc = info_names(&inputs, &defined, err);
    if (rc == 0)
        rc = tensor_names(&inits, &defined, err);
    if (rc == 0)
        rc = info_names(&outputs, &used, err);
    for (size_t i = 0; i < nodes.n && rc == 0; i++) {
        onnx_NodeProto np;
        ox_spans attrs;
        memset(&np, 0, sizeof np);
        bd_pb_spans_init(&attrs, c->base, c->len);
        bd_pb_on_span(&np.attribute, &attrs);
        rc = bd_pb_decode(&nodes.v[i], onnx_NodeProto_fields, &np, "subgraph node", err);
        for (pb_size_t k = 0; k < np.output_count && rc == 0; k++)
            rc = names_add(&defined, np.output[k], err);
        if (rc == 0)
            rc = node_uses(c, &np, &attrs, depth, &used, err);
        pb_release(onnx_NodeProto_fields, &np);
        bd_pb_spans_free(&attrs);
    }
    names_unique(&defined);
    for (size_t i = 0; i < used.n && rc == 0; i++)
        if (!names_has(&defined, used.v[i]))
            rc = names_add(out, used.v[i], err);
    names_unique(out);
    ox_names_free(&defined);
    ox_names_free(&used);
    pb_release(onnx_GraphProto_fields, &gp);
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        bd_pb_spans_free(lists[i]);
    return rc;
}

int ox_subgraph_outer_names(ox_ctx *c, const ox_span *graph, ox_names *out, bd_error *err)
{
    return outer_names(c, graph, 0, out, err);
}
