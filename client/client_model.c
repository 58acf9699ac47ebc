/* Model-level RPCs: metadata (signature) and readiness. */
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"
#include "proto/inference.pb.h"

static void tensor_info_clear(braid_tensor_info *t)
{
    free(t->name);
    free(t->datatype);
    free(t->shape);
}

void braid_model_info_free(braid_model_info *info)
{
    if (!info)
        return;
    free(info->name);
    free(info->platform);
    for (size_t i = 0; i < info->n_versions; i++)
        free(info->versions[i]);
    free(info->versions);
    for (size_t i = 0; i < info->n_inputs; i++)
        tensor_info_clear(&info->inputs[i]);
    free(info->inputs);
    for (size_t i = 0; i < info->n_outputs; i++)
        tensor_info_clear(&info->outputs[i]);
    free(info->outputs);
    free(info);
}

/* Copy N wire tensors into a fresh array *OUT (counted in *N_OUT as they are filled). */
static bool copy_tensors(const inference_ModelMetadataResponse_TensorMetadata *src, pb_size_t n,
                         braid_tensor_info **out, size_t *n_out)
{
    if (n == 0)
        return true;
    if (!(*out = calloc(n, sizeof **out)))
        return false;
    for (pb_size_t i = 0; i < n; i++) {
        braid_tensor_info *t = &(*out)[i];
        (*n_out)++;
        if (!(t->name = bc_strdup(src[i].name)) || !(t->datatype = bc_strdup(src[i].datatype)))
            return false;
        t->ndim = (int)src[i].shape_count;
        if (t->ndim && !(t->shape = malloc(sizeof *t->shape * (size_t)t->ndim)))
            return false;
        if (t->ndim)
            memcpy(t->shape, src[i].shape, sizeof *t->shape * (size_t)t->ndim);
    }
    return true;
}

braid_status braid_model_metadata(braid_client *c, const char *model, const char *version,
                                  braid_model_info **out, char *err, size_t errlen)
{
    if (!c || !model || !*model || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_metadata: client, model name and OUT are required");
    inference_ModelMetadataRequest req = { .name = (char *)model, .version = (char *)version };
    inference_ModelMetadataResponse resp = inference_ModelMetadataResponse_init_zero;
    braid_status rc = bc_simple(c, BC_MODEL_METADATA, inference_ModelMetadataRequest_fields, &req,
                                inference_ModelMetadataResponse_fields, &resp, err, errlen);
    if (rc == BRAID_OK) {
        braid_model_info *info = calloc(1, sizeof *info);
        bool ok = info && (info->name = bc_strdup(resp.name)) && (info->platform = bc_strdup(resp.platform));
        if (ok && resp.versions_count) {
            ok = (info->versions = calloc(resp.versions_count, sizeof *info->versions)) != NULL;
            for (pb_size_t i = 0; ok && i < resp.versions_count; i++, info->n_versions++)
                ok = (info->versions[i] = bc_strdup(resp.versions[i])) != NULL;
        }
        ok = ok && copy_tensors(resp.inputs, resp.inputs_count, &info->inputs, &info->n_inputs);
        ok = ok && copy_tensors(resp.outputs, resp.outputs_count, &info->outputs, &info->n_outputs);
        if (ok) {
            *out = info;
        } else {
            braid_model_info_free(info);
            rc = bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
        }
    }
    pb_release(inference_ModelMetadataResponse_fields, &resp);
    return rc;
}

braid_status braid_model_ready(braid_client *c, const char *model, const char *version,
                               bool *ready, char *err, size_t errlen)
{
    if (!c || !model || !*model || !ready)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_model_ready: client, model name and READY are required");
    inference_ModelReadyRequest req = { .name = (char *)model, .version = (char *)version };
    inference_ModelReadyResponse resp = inference_ModelReadyResponse_init_zero;
    braid_status rc = bc_simple(c, BC_MODEL_READY, inference_ModelReadyRequest_fields, &req,
                                inference_ModelReadyResponse_fields, &resp, err, errlen);
    if (rc == BRAID_OK)
        *ready = resp.ready;
    pb_release(inference_ModelReadyResponse_fields, &resp);
    return rc;
}
