/* The TF.js graph-model frontend: model.json (modelTopology = a GraphDef in protobuf JSON,
 * weightsManifest, signature) plus the weight shards beside it, into node views and then
 * tf_translate. Each Const takes its bytes from the manifest weight of the same name; nodes
 * TensorFlow must run get a NodeDef re-encoded from the view as their origin (tf_translate
 * encodes it, for those nodes only). */
#include "partitioner/tf/tf_import.h"
#include "partitioner/tf/tfjs_internal.h"
#include "partitioner/tf/tf_translate.h"
#include "core/json_text.h"
#include "core/model_file.h"

/* The largest model.json read (its JSON tree costs a multiple of it). */
#define TFJS_MAX_JSON_BYTES (16 << 20)

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int node_view(bd_graph *g, const cJSON *j, size_t idx, tf_nodeview *v, bd_error *err)
{
    const cJSON *name = tfjs_member(j, "name", NULL), *op = tfjs_member(j, "op", NULL);
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return bd_error_set(err, BD_EMODEL, "modelTopology.node[%zu] has no name", idx);
    if (!cJSON_IsString(op) || !op->valuestring[0])
        return bd_error_set(err, BD_EMODEL, "node '%s' has no op", name->valuestring);
    const char *nm = name->valuestring;
    v->name = bd_graph_strdup(g, nm, (size_t)-1);
    v->op = bd_graph_strdup(g, op->valuestring, (size_t)-1);
    const cJSON *in = tfjs_member(j, "input", NULL), *attrs = tfjs_member(j, "attr", NULL);
    if ((in && !cJSON_IsArray(in)) || (attrs && !cJSON_IsObject(attrs)))
        return bd_error_set(err, BD_EMODEL, "node '%s': input must be an array, attr an object", nm);
    size_t n_in = in ? (size_t)cJSON_GetArraySize(in) : 0;
    size_t n_attrs = attrs ? (size_t)cJSON_GetArraySize(attrs) : 0;
    v->inputs = n_in ? bd_graph_alloc(g, n_in * sizeof *v->inputs) : NULL;
    v->ctrl = n_in ? bd_graph_alloc(g, n_in * sizeof *v->ctrl) : NULL;
    v->attrs = n_attrs ? bd_graph_alloc(g, n_attrs * sizeof *v->attrs) : NULL;
    if (!v->name || !v->op || (n_in && (!v->inputs || !v->ctrl)) || (n_attrs && !v->attrs))
        return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", nm);
    const cJSON *e;
    cJSON_ArrayForEach(e, in) {
        if (!cJSON_IsString(e) || !e->valuestring[0] || !e->valuestring[e->valuestring[0] == '^'])
            return bd_error_set(err, BD_EMODEL, "node '%s': an input is not a tensor name", nm);
        bool ctrl = e->valuestring[0] == '^';
        const char *s = bd_graph_strdup(g, e->valuestring + ctrl, (size_t)-1);
        if (!s)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        if (ctrl)
            v->ctrl[v->n_ctrl++] = s;
        else
            v->inputs[v->n_inputs++] = s;
    }
    cJSON_ArrayForEach(e, attrs) {
        tf_attr *a = &v->attrs[v->n_attrs++];
        char what[300];
        snprintf(what, sizeof what, "node '%s' attr '%s'", nm, e->string);
        if (!(a->key = bd_graph_strdup(g, e->string, (size_t)-1)))
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        int rc = tfjs_attr(g, e, a, what, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Weights ordered by (name, manifest position): a Const finds its weight by binary search
 * (a linear scan per Const was quadratic in the model's size). */
static int cmp_weight(const void *pa, const void *pb)
{
    const tfjs_weight *a = *(tfjs_weight *const *)pa, *b = *(tfjs_weight *const *)pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a > b) - (a < b);
}

static int cmp_weight_name(const void *key, const void *pb)
{
    return strcmp(key, (*(tfjs_weight *const *)pb)->name);
}

/* Give Const node V its weight: the first manifest entry of the same name (BY_NAME: the N_W
 * weights sorted with cmp_weight). */
static int attach_weight(tf_nodeview *v, tfjs_weight **by_name, size_t n_w, bd_error *err)
{
    tf_attr *value = (tf_attr *)tf_view_attr(v, "value");
    if (!value || value->kind != TF_ATTR_TENSOR)
        return bd_error_set(err, BD_EMODEL, "node '%s' (Const) has no tensor 'value'", v->name);
    tfjs_weight **hit = n_w ? bsearch(v->name, by_name, n_w, sizeof *by_name, cmp_weight_name) : NULL;
    while (hit && hit > by_name && strcmp(hit[-1]->name, v->name) == 0)
        hit--;                                        /* the first of that name */
    if (hit) {
        tfjs_weight *w = *hit;
        const tf_tensor *t = &w->t;
        int64_t a = bd_shape_numel(&t->shape), b = bd_shape_numel(&value->tensor.shape);
        if (value->tensor.shape.rank >= 0 && a != b)
            return bd_error_set(err, BD_EMODEL, "node '%s' (Const): its shape holds %lld elements, "
                                "its weight %lld", v->name, (long long)b, (long long)a);
        value->tensor = *t;
        w->used = true;
        return 0;
    }
    /* No weight: a Const with inline values (or an empty tensor) stands on its own. */
    if (value->tensor.data || value->tensor.n_strings || value->tensor.dtype == BD_DT_UNDEFINED)
        return 0;
    int64_t numel = bd_shape_numel(&value->tensor.shape);
    if (numel == 0)
        return 0;
    return bd_error_set(err, BD_EMODEL, "node '%s' (Const): no weight of that name in "
                        "weightsManifest and no inline values", v->name);
}

/* The signature's tensor names: {"inputs": {"x:0": {"name": "x:0", ...}}, "outputs": ...}. */
static int signature_names(bd_graph *g, const cJSON *map, const char ***out, size_t *n,
                           bd_error *err)
{
    *out = NULL;
    *n = 0;
    if (!cJSON_IsObject(map))
        return 0;
    size_t k = (size_t)cJSON_GetArraySize(map);
    const char **names = k ? bd_graph_alloc(g, k * sizeof *names) : NULL;
    if (k && !names)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    const cJSON *e;
    cJSON_ArrayForEach(e, map) {
        const cJSON *nm = tfjs_member(e, "name", NULL);
        const char *s = cJSON_IsString(nm) ? nm->valuestring : e->string;
        if (!s || !(names[(*n)++] = bd_graph_strdup(g, s, (size_t)-1)))
            return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    *out = names;
    return 0;
}

static int import(bd_graph *g, const char *dir, const cJSON *root, bd_error *err)
{
    if (!cJSON_IsObject(root))
        return bd_error_set(err, BD_EMODEL, "model.json is not a JSON object");
    const cJSON *topo = tfjs_member(root, "modelTopology", NULL);
    if (!cJSON_IsObject(topo))
        return bd_error_set(err, BD_EMODEL, "model.json has no modelTopology object");
    const cJSON *nodes = tfjs_member(topo, "node", NULL);
    if (!cJSON_IsArray(nodes)) {
        if (tfjs_member(topo, "class_name", NULL) || tfjs_member(topo, "model_config", NULL))
            return bd_error_set(err, BD_EUNSUPPORTED, "this is a TF.js layers model; only graph "
                                "models (tensorflowjs_converter --output_format tfjs_graph_model) "
                                "are supported");
        return bd_error_set(err, BD_EMODEL, "modelTopology has no node array");
    }
    size_t n = (size_t)cJSON_GetArraySize(nodes);
    if (n == 0)
        return bd_error_set(err, BD_EMODEL, "modelTopology has no nodes");
    if (n > BD_MAX_NODES)
        return bd_error_set(err, BD_EMODEL, "modelTopology has %zu nodes (braid's limit: %d)", n,
                            BD_MAX_NODES);
    tfjs_weight *w = NULL;
    size_t n_w = 0;
    int rc = tfjs_weights_load(g, dir, tfjs_member(root, "weightsManifest", NULL), &w, &n_w, err);
    tf_nodeview *views = rc == 0 ? bd_graph_alloc(g, n * sizeof *views) : NULL;
    if (rc == 0 && !views)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory for %zu nodes", n);
    tfjs_weight **by_name = rc == 0 && n_w ? malloc(n_w * sizeof *by_name) : NULL;
    if (rc == 0 && n_w && !by_name)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory for %zu weights", n_w);
    for (size_t k = 0; by_name && k < n_w; k++)
        by_name[k] = &w[k];
    if (by_name)
        qsort(by_name, n_w, sizeof *by_name, cmp_weight);
    size_t i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, nodes) {
        if (rc)
            break;
        tf_nodeview *v = &views[i];
        rc = node_view(g, j, i++, v, err);
        if (rc == 0 && strcmp(v->op, "Const") == 0)
            rc = attach_weight(v, by_name, n_w, err);   /* origins are encoded when TensorFlow needs one */
    }
    /* A weight no Const takes means model.json and the shards disagree, unless functions
     * (control flow bodies, which braid leaves to TensorFlow) may hold it. */
    bool has_library = tfjs_member(topo, "library", NULL) != NULL;
    for (size_t k = 0; rc == 0 && !has_library && k < n_w; k++)
        if (!w[k].used)
            rc = bd_error_set(err, BD_EMODEL, "weight '%s' in weightsManifest matches no Const "
                              "node of modelTopology", w[k].name);
    free(by_name);
    free(w);

    tf_signature sig = { 0 };
    const cJSON *s = tfjs_member(root, "signature", NULL);
    if (!s)
        s = tfjs_member(tfjs_member(root, "userDefinedMetadata", NULL), "signature", NULL);
    if (rc == 0 && s)
        rc = signature_names(g, tfjs_member(s, "inputs", NULL), &sig.inputs, &sig.n_inputs, err);
    if (rc == 0 && s)
        rc = signature_names(g, tfjs_member(s, "outputs", NULL), &sig.outputs, &sig.n_outputs, err);
    if (rc == 0) {
        bd_graph_set_framework(g, "tensorflow");
        bd_graph_set_platform(g, "tensorflow_tfjs");
        const cJSON *prod = tfjs_member(tfjs_member(topo, "versions", NULL), "producer", NULL);
        if (cJSON_IsNumber(prod) && prod->valuedouble >= 1 && prod->valuedouble <= INT32_MAX)
            bd_graph_set_opset(g, (int64_t)prod->valuedouble);
        rc = tf_translate(g, views, n, s ? &sig : NULL, err);
    }
    return rc;
}

int bd_tfjs_import_file(const char *path, bd_graph **out, bd_error *err)
{
    void *data = NULL;
    size_t len = 0;
    int rc = bd_model_file_read(path, "model.json", &data, &len, err);
    if (rc)
        return rc;
    /* cJSON's tree costs up to ~40 bytes per byte of JSON ("[0,0,...": one node per 2 bytes). */
    if (len > TFJS_MAX_JSON_BYTES) {
        free(data);
        return bd_error_set(err, BD_EMODEL, "'%s': model.json is %zu bytes; braid reads at most "
                            "%d MiB (weights belong in the shards)", path, len,
                            TFJS_MAX_JSON_BYTES >> 20);
    }
    char *text = data;
    long nul = bd_json_find_nul(text, len);
    if (nul >= 0) {
        free(text);
        return bd_error_set(err, BD_EMODEL, "'%s': a NUL (\\u0000 or a 0 byte) in model.json near "
                            "byte %ld; names must not contain NUL", path, nul);
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
        free(text);
        return bd_error_set(err, BD_EMODEL, "'%s': invalid JSON near byte %zu", path, off);
    }
    free(text);
    char *dir = bd_model_file_dir(path);
    bd_graph *g = bd_graph_create("main");
    if (!dir || !g) {
        free(dir);
        bd_graph_destroy(g);
        cJSON_Delete(root);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    rc = import(g, dir, root, err);
    free(dir);
    cJSON_Delete(root);
    if (rc) {
        bd_graph_destroy(g);
        return bd_error_prefix(err, "'%s': ", path);
    }
    *out = g;
    return 0;
}
