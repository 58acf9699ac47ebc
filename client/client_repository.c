/* Model-repository RPCs: index, load (by name or with uploaded bytes), unload. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "proto/inference.pb.h"

void braid_repository_list_free(braid_repository_list *index)
{
    if (!index)
        return;
    for (size_t i = 0; i < index->n_models; i++) {
        braid_repository_entry *e = &index->models[i];
        free(e->name);
        free(e->version);
        free(e->state);
        free(e->reason);
    }
    free(index->models);
    free(index);
}

braid_status braid_repository_index(braid_client *c, bool ready_only,
                                    braid_repository_list **out, char *err, size_t errlen)
{
    if (!c || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_repository_index: client and OUT are required");
    inference_RepositoryIndexRequest req = { .ready = ready_only };
    inference_RepositoryIndexResponse resp = inference_RepositoryIndexResponse_init_zero;
    braid_status rc = bc_simple(c, BC_REPOSITORY_INDEX, inference_RepositoryIndexRequest_fields, &req,
                                inference_RepositoryIndexResponse_fields, &resp, err, errlen);
    if (rc == BRAID_OK) {
        braid_repository_list *index = calloc(1, sizeof *index);
        bool ok = index != NULL;
        if (ok && resp.models_count)
            ok = (index->models = calloc(resp.models_count, sizeof *index->models)) != NULL;
        for (pb_size_t i = 0; ok && i < resp.models_count; i++) {
            const inference_RepositoryIndexResponse_ModelIndex *m = &resp.models[i];
            braid_repository_entry *e = &index->models[index->n_models++];
            ok = (e->name = bc_strdup(m->name)) && (e->version = bc_strdup(m->version)) &&
                 (e->state = bc_strdup(m->state)) && (e->reason = bc_strdup(m->reason));
        }
        if (ok) {
            *out = index;
        } else {
            braid_repository_list_free(index);
            rc = bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
        }
    }
    pb_release(inference_RepositoryIndexResponse_fields, &resp);
    return rc;
}

/* Send a load request for MODEL with the N parameters P (borrowed). */
static braid_status load(braid_client *c, const char *model,
                         inference_RepositoryModelLoadRequest_ParametersEntry *p, pb_size_t n,
                         char *err, size_t errlen)
{
    inference_RepositoryModelLoadRequest req = {
        .model_name = (char *)model, .parameters_count = n, .parameters = n ? p : NULL,
    };
    bc_request r = { .fields = inference_RepositoryModelLoadRequest_fields, .msg = &req,
                     .timeout_ms = c->load_timeout_ms };
    inference_RepositoryModelLoadResponse resp = inference_RepositoryModelLoadResponse_init_zero;
    braid_status rc = bc_unary(c, BC_REPOSITORY_LOAD, &r, inference_RepositoryModelLoadResponse_fields,
                               &resp, NULL, err, errlen);
    pb_release(inference_RepositoryModelLoadResponse_fields, &resp);
    return rc;
}

static void config_param(inference_RepositoryModelLoadRequest_ParametersEntry *e, const char *json)
{
    e->key = (char *)"config";
    e->has_value = true;
    e->value.string_param = (char *)json;
}

braid_status braid_model_load(braid_client *c, const char *model, const char *config_json,
                              char *err, size_t errlen)
{
    if (!c || !model || !*model)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load: client and model name are required");
    inference_RepositoryModelLoadRequest_ParametersEntry p[1] = { 0 };
    pb_size_t n = 0;
    if (config_json)
        config_param(&p[n++], config_json);
    return load(c, model, p, n, err, errlen);
}

braid_status braid_model_load_bytes(braid_client *c, const char *model, const char *version,
                                    const void *bytes, size_t nbytes, const char *config_json,
                                    char *err, size_t errlen)
{
    if (!c || !model || !*model || (!bytes && nbytes))
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load_bytes: client, model name and bytes are required");
    if (!version || !*version || strchr(version, '/') || !strcmp(version, ".") || !strcmp(version, ".."))
        return bc_fail(err, errlen, BRAID_E_ARG,
                       "braid_model_load_bytes: version must be a plain directory name such as \"1\", got \"%s\"",
                       version ? version : "(null)");
    if (nbytes == 0)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load_bytes: the model bytes are empty");
    char key[300];
    if ((size_t)snprintf(key, sizeof key, "file:%s/model.onnx", version) >= sizeof key)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load_bytes: version \"%.40s...\" is too long", version);
    bd_wire_span span = { .data = bytes, .size = nbytes };
    inference_RepositoryModelLoadRequest_ParametersEntry p[2] = { 0 };
    pb_size_t n = 0;
    p[n].key = key;
    p[n].has_value = true;
    bd_wire_spans_borrow(&p[n].value.bytes_param, &span, 1);
    n++;
    if (config_json)
        config_param(&p[n++], config_json);
    return load(c, model, p, n, err, errlen);
}

braid_status braid_model_load_files(braid_client *c, const char *model, const char *version,
                                    const braid_model_file *files, size_t n,
                                    const char *config_json, char *err, size_t errlen)
{
    if (!c || !model || !*model || (!files && n) || n == 0)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load_files: client, model name and "
                       "at least one file are required");
    if (n > 1000)         /* the server takes at most 1024 parameters per request */
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load_files: %zu files (at most 1000)", n);
    if (!version || !*version || strchr(version, '/') || !strcmp(version, ".") || !strcmp(version, ".."))
        return bc_fail(err, errlen, BRAID_E_ARG,
                       "braid_model_load_files: version must be a plain directory name such as \"1\", got \"%s\"",
                       version ? version : "(null)");
    inference_RepositoryModelLoadRequest_ParametersEntry *p = calloc(n + 1, sizeof *p);
    bd_wire_span *spans = calloc(n, sizeof *spans);
    char **keys = calloc(n, sizeof *keys);
    braid_status rc = p && spans && keys ? BRAID_OK : bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    for (size_t i = 0; rc == BRAID_OK && i < n; i++) {
        const braid_model_file *f = &files[i];
        if (!f->path || !*f->path || (!f->bytes && f->nbytes)) {
            rc = bc_fail(err, errlen, BRAID_E_ARG, "braid_model_load_files: file %zu has no path or bytes", i);
            break;
        }
        size_t len = strlen(version) + strlen(f->path) + 7;
        if (!(keys[i] = malloc(len))) {
            rc = bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
            break;
        }
        snprintf(keys[i], len, "file:%s/%s", version, f->path);
        spans[i] = (bd_wire_span){ .data = f->bytes, .size = f->nbytes };
        p[i].key = keys[i];
        p[i].has_value = true;
        bd_wire_spans_borrow(&p[i].value.bytes_param, &spans[i], 1);
    }
    pb_size_t np = (pb_size_t)n;
    if (rc == BRAID_OK && config_json)
        config_param(&p[np++], config_json);
    if (rc == BRAID_OK)
        rc = load(c, model, p, np, err, errlen);
    for (size_t i = 0; keys && i < n; i++)
        free(keys[i]);
    free(keys);
    free(spans);
    free(p);
    return rc;
}

braid_status braid_model_unload(braid_client *c, const char *model, char *err, size_t errlen)
{
    if (!c || !model || !*model)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_unload: client and model name are required");
    inference_RepositoryModelUnloadRequest req = { .model_name = (char *)model };
    bc_request r = { .fields = inference_RepositoryModelUnloadRequest_fields, .msg = &req,
                     .timeout_ms = c->load_timeout_ms };
    inference_RepositoryModelUnloadResponse resp = inference_RepositoryModelUnloadResponse_init_zero;
    braid_status rc = bc_unary(c, BC_REPOSITORY_UNLOAD, &r, inference_RepositoryModelUnloadResponse_fields,
                               &resp, NULL, err, errlen);
    pb_release(inference_RepositoryModelUnloadResponse_fields, &resp);
    return rc;
}
