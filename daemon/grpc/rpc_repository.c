/* The model-repository extension: RepositoryIndex, RepositoryModelLoad (with uploaded
 * files and a config JSON), RepositoryModelUnload.
 *
 * Load and unload answer when the registry's callback runs (on the loop), so the call —
 * and with it the received message the uploads point into — stays alive until then.
 * Status codes: the registry's BD_E* code through status_map.h, so bad input (a bad file
 * name, bad config JSON, uploads disabled) is INVALID_ARGUMENT, an unknown model NOT_FOUND,
 * a full load queue or upload bound RESOURCE_EXHAUSTED, shutting down UNAVAILABLE, and a model
 * that fails to import, plan or warm up INTERNAL (its reason also shows in RepositoryIndex).
 *
 * Model control (config.h, Triton's --model-control-mode): load and unload are served in
 * the explicit mode only; in none and poll they answer FAILED_PRECONDITION saying how to
 * enable them. (Who may call them at all — the admin role — is server.c's check.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/inference.pb.h"
#include "daemon/log.h"
#include "daemon/grpc/rpc.h"

void bd_rpc_repository_index(bd_call *c)
{
    inference_RepositoryIndexRequest *req =
        BD_CALL_DECODE(c, inference_RepositoryIndexRequest, "RepositoryIndexRequest");
    if (!req)
        return;
    bd_registry_entry *e = NULL;
    size_t n = bd_registry_snapshot(bd_call_registry(c), &e);
    inference_RepositoryIndexResponse_ModelIndex *m = calloc(n ? n : 1, sizeof *m);
    if (!m) {
        bd_registry_snapshot_free(e, n);
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (req->ready && e[i].state != BD_STATE_READY)
            continue;
        m[k].name = e[i].name;
        m[k].version = e[i].version;
        m[k].state = (char *)bd_model_state_name(e[i].state);
        m[k].reason = e[i].reason;
        k++;
    }
    inference_RepositoryIndexResponse rsp = { .models_count = (pb_size_t)k, .models = m };
    bd_call_reply(c, inference_RepositoryIndexResponse_fields, &rsp);
    free(m);
    bd_registry_snapshot_free(e, n);
}

static void on_registry_done(void *arg, int status, const char *message)
{
    bd_call *c = arg;
    if (status != 0) {
        bd_call_fail(c, status, message);
        return;
    }
    static const inference_RepositoryModelLoadResponse ok;  /* same empty shape as Unload's */
    bd_call_reply(c, inference_RepositoryModelLoadResponse_fields, &ok);
}

#define FILE_PREFIX "file:"

/* False when the model control mode forbids load/unload (the call is then answered). */
static bool model_control_allows(bd_call *c, const char *what)
{
    const bd_daemon_config *cfg = bd_call_config(c);
    int mode = bd_config_model_control(cfg);
    if (mode == BD_MODEL_CONTROL_EXPLICIT)
        return true;
    char msg[400];
    snprintf(msg, sizeof msg, "%s is disabled: braidd runs with --model-control-mode %s (%s); "
             "start it with --model-control-mode explicit to load and unload models over the API",
             what, cfg->model_control_mode,
             mode == BD_MODEL_CONTROL_POLL ? "the repository is rescanned periodically"
                                           : "the models found at start stay as they are");
    bd_call_fail_status(c, GRPC_STATUS_FAILED_PRECONDITION, msg);
    return false;
}

void bd_rpc_repository_load(bd_call *c)
{
    if (!model_control_allows(c, "RepositoryModelLoad"))
        return;
    inference_RepositoryModelLoadRequest *req =
        BD_CALL_DECODE(c, inference_RepositoryModelLoadRequest, "RepositoryModelLoadRequest");
    if (!req)
        return;
    bd_upload *up = calloc(req->parameters_count ? req->parameters_count : 1, sizeof *up);
    if (!up) {
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return;
    }
    bd_call_set_state(c, up, free);     /* the uploads must live until the callback */
    const char *config_json = NULL;
    size_t n_up = 0;
    char msg[600];
    for (pb_size_t i = 0; i < req->parameters_count; i++) {
        const char *key = req->parameters[i].key ? req->parameters[i].key : "";
        const inference_ModelRepositoryParameter *v = &req->parameters[i].value;
        if (!strcmp(key, "config")) {
            if (!v->string_param) {
                bd_call_fail(c, BD_EINVAL, "parameter 'config': expected the model configuration "
                             "as JSON in string_param");
                return;
            }
            config_json = v->string_param;
        } else if (!strncmp(key, FILE_PREFIX, strlen(FILE_PREFIX))) {
            const bd_wire_spans *b = &v->bytes_param;
            if (b->list.count == 0) {
                snprintf(msg, sizeof msg, "parameter '%.300s': expected the file's bytes in bytes_param", key);
                bd_call_fail(c, BD_EINVAL, msg);
                return;
            }
            const bd_wire_span *last = &b->list.items[b->list.count - 1];  /* proto3: last wins */
            up[n_up++] = (bd_upload){ .path = key + strlen(FILE_PREFIX), .data = last->data,
                                      .len = last->size };
        } else {
            snprintf(msg, sizeof msg, "unknown parameter '%.300s': RepositoryModelLoad takes 'config' "
                     "(JSON) and 'file:<version>/<filename>' (bytes)", key);
            bd_call_fail(c, BD_EINVAL, msg);
            return;
        }
    }
    bd_error err = {0};
    int rc = bd_registry_load(bd_call_registry(c), req->model_name ? req->model_name : "",
                              config_json, up, n_up, on_registry_done, c, &err);
    if (rc)
        bd_call_fail(c, rc, err.msg);
}

void bd_rpc_repository_unload(bd_call *c)
{
    if (!model_control_allows(c, "RepositoryModelUnload"))
        return;
    inference_RepositoryModelUnloadRequest *req =
        BD_CALL_DECODE(c, inference_RepositoryModelUnloadRequest, "RepositoryModelUnloadRequest");
    if (!req)
        return;
    bd_error err = {0};
    int rc = bd_registry_unload(bd_call_registry(c), req->model_name ? req->model_name : "",
                                on_registry_done, c, &err);
    if (rc)
        bd_call_fail(c, rc, err.msg);
}
