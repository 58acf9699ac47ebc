/* ServerMetadata, ModelMetadata and ModelConfig: what a client asks before it infers.
 * ServerMetadata is constant; ModelMetadata comes from the served version's graph signature,
 * found by the fast handler on the cq thread in the served-version table, else on the loop
 * in the registry. ModelConfig is answered on the loop.
 *
 * Platform: ModelMetadata says the served platform ("onnx" (braid's spelling),
 * "tensorflow_graphdef", "tensorflow_savedmodel", "tensorflow_tfjs"); ModelConfig says Triton's names with backend
 * "braid": "onnxruntime_onnx" for an ONNX model (what Triton clients such as perf_analyzer
 * expect), the TensorFlow platforms unchanged. ModelConfig's max_batch_size is config.json's:
 * 0 (the default) lists full shapes, -1 for dynamic dims; N > 0 lists dims without the first
 * (batch) dim, as Triton does. ModelMetadata always lists full shapes. */
#include <stdlib.h>
#include <string.h>

#include "proto/inference.pb.h"
#include "daemon/grpc/rpc.h"
#include "daemon/infer/shm_region.h"

#ifndef BRAIDD_VERSION
#define BRAIDD_VERSION "unknown"
#endif

/* Triton's platform name for braid's: only ONNX is spelled differently. */
static const char *config_platform(const char *platform)
{
    return strcmp(platform, "onnx") == 0 ? "onnxruntime_onnx" : platform;
}

/* The request the fast handler decoded already, or decode it now (NULL: answered). */
#define DECODED(c, type, what) \
    (bd_call_message(c) ? (type *)bd_call_message(c) : BD_CALL_DECODE(c, type, what))

bool bd_rpc_server_metadata_fast(bd_call *c)
{
    bd_rpc_server_metadata(c);                  /* constant data: any thread */
    return true;
}

void bd_rpc_server_metadata(bd_call *c)
{
    if (!DECODED(c, inference_ServerMetadataRequest, "ServerMetadataRequest"))
        return;
    static char *extensions[] = { "classification", "model_repository", "statistics",
                                  "binary_tensor_data", "model_configuration", "health",
                                  "system_shared_memory" };   /* last: only when enabled */
    size_t n = sizeof extensions / sizeof extensions[0] - (bd_shm_enabled() ? 0 : 1);
    inference_ServerMetadataResponse rsp = {
        .name = "braid",
        .version = BRAIDD_VERSION,
        .extensions_count = (pb_size_t)n,
        .extensions = extensions,
    };
    bd_call_reply(c, inference_ServerMetadataResponse_fields, &rsp);
}

/* The served version of NAME/VERSION, or answer the error (NOT_FOUND / UNAVAILABLE). */
static bd_served *acquire_or_fail(bd_call *c, const char *name, const char *version)
{
    bd_error err = {0};
    bd_served *s = NULL;
    int rc = bd_registry_acquire(bd_call_registry(c), name ? name : "", version, &s, &err);
    if (rc) {
        bd_call_fail(c, rc, err.msg);
        return NULL;
    }
    return s;
}

/* A tensor's dims for the wire: -1 for dynamic dims; an unknown rank sends no dims. */
static int64_t *wire_dims(const bd_value *v, pb_size_t *count, int64_t *storage)
{
    int rank = v->shape.rank < 0 ? 0 : v->shape.rank;
    for (int d = 0; d < rank; d++)
        storage[d] = v->shape.dims[d] < 0 ? -1 : v->shape.dims[d];
    *count = (pb_size_t)rank;
    return storage;
}

static void reply_model_metadata(bd_call *c, bd_served *s);

/* The served version's graph is immutable while referenced: any thread may describe it. */
bool bd_rpc_model_metadata_fast(bd_call *c)
{
    inference_ModelMetadataRequest *req =
        DECODED(c, inference_ModelMetadataRequest, "ModelMetadataRequest");
    if (!req)
        return true;
    bd_served *s = bd_call_cached_served(c, req->name ? req->name : "", req->version);
    if (!s)
        return false;                           /* the loop asks the registry */
    reply_model_metadata(c, s);
    return true;
}

void bd_rpc_model_metadata(bd_call *c)
{
    inference_ModelMetadataRequest *req =
        DECODED(c, inference_ModelMetadataRequest, "ModelMetadataRequest");
    if (!req)
        return;
    bd_served *s = acquire_or_fail(c, req->name, req->version);
    if (!s)
        return;
    bd_call_remember_served(c, s);              /* the next one stays on the cq thread */
    reply_model_metadata(c, s);
}

/* Describe S (released here). */
static void reply_model_metadata(bd_call *c, bd_served *s)
{
    const bd_graph *g = bd_model_graph(bd_served_model(s));
    size_t n_in = bd_graph_num_inputs(g), n_out = bd_graph_num_outputs(g), n = n_in + n_out;
    inference_ModelMetadataResponse_TensorMetadata *t = calloc(n ? n : 1, sizeof *t);
    int64_t (*dims)[BD_MAX_RANK] = calloc(n ? n : 1, sizeof *dims);
    if (!t || !dims) {
        free(t);
        free(dims);
        bd_served_release(s);
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const bd_value *v = i < n_in ? bd_graph_input(g, i) : bd_graph_output(g, i - n_in);
        t[i].name = (char *)v->name;
        t[i].datatype = (char *)bd_dtype_name(v->dtype);
        t[i].shape = wire_dims(v, &t[i].shape_count, dims[i]);
    }
    char *versions[] = { (char *)bd_served_version(s) };
    inference_ModelMetadataResponse rsp = {
        .name = (char *)bd_served_name(s),
        .versions_count = 1,
        .versions = versions,
        .platform = (char *)bd_served_platform(s),
        .inputs_count = (pb_size_t)n_in,
        .inputs = t,
        .outputs_count = (pb_size_t)n_out,
        .outputs = t + n_in,
    };
    bd_call_reply(c, inference_ModelMetadataResponse_fields, &rsp);   /* encodes now */
    free(t);
    free(dims);
    bd_served_release(s);
}

static inference_DataType config_dtype(int dtype)
{
    switch (dtype) {
    case BD_DT_BOOL:     return inference_DataType_TYPE_BOOL;
    case BD_DT_UINT8:    return inference_DataType_TYPE_UINT8;
    case BD_DT_UINT16:   return inference_DataType_TYPE_UINT16;
    case BD_DT_UINT32:   return inference_DataType_TYPE_UINT32;
    case BD_DT_UINT64:   return inference_DataType_TYPE_UINT64;
    case BD_DT_INT8:     return inference_DataType_TYPE_INT8;
    case BD_DT_INT16:    return inference_DataType_TYPE_INT16;
    case BD_DT_INT32:    return inference_DataType_TYPE_INT32;
    case BD_DT_INT64:    return inference_DataType_TYPE_INT64;
    case BD_DT_FLOAT16:  return inference_DataType_TYPE_FP16;
    case BD_DT_FLOAT:    return inference_DataType_TYPE_FP32;
    case BD_DT_DOUBLE:   return inference_DataType_TYPE_FP64;
    case BD_DT_STRING:   return inference_DataType_TYPE_STRING;
    case BD_DT_BFLOAT16: return inference_DataType_TYPE_BF16;
    default:             return inference_DataType_TYPE_INVALID;
    }
}

/* ModelConfig's dims: wire_dims, without the first (batch) dim when MAX_BATCH > 0. */
static int64_t *config_dims(const bd_value *v, int max_batch, pb_size_t *count, int64_t *storage)
{
    int64_t *d = wire_dims(v, count, storage);
    if (max_batch > 0 && *count > 0) {
        (*count)--;
        d++;
    }
    return d;
}

void bd_rpc_model_config(bd_call *c)
{
    inference_ModelConfigRequest *req =
        BD_CALL_DECODE(c, inference_ModelConfigRequest, "ModelConfigRequest");
    if (!req)
        return;
    bd_served *s = acquire_or_fail(c, req->name, req->version);
    if (!s)
        return;
    const bd_graph *g = bd_model_graph(bd_served_model(s));
    size_t n_in = bd_graph_num_inputs(g), n_out = bd_graph_num_outputs(g);
    inference_ModelInput  *in  = calloc(n_in ? n_in : 1, sizeof *in);
    inference_ModelOutput *out = calloc(n_out ? n_out : 1, sizeof *out);
    int64_t (*dims)[BD_MAX_RANK] = calloc(n_in + n_out + 1, sizeof *dims);
    if (!in || !out || !dims) {
        free(in);
        free(out);
        free(dims);
        bd_served_release(s);
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return;
    }
    int max_batch = bd_served_max_batch_size(s);
    for (size_t i = 0; i < n_in; i++) {
        const bd_value *v = bd_graph_input(g, i);
        in[i].name = (char *)v->name;
        in[i].data_type = config_dtype(v->dtype);
        in[i].dims = config_dims(v, max_batch, &in[i].dims_count, dims[i]);
    }
    for (size_t i = 0; i < n_out; i++) {
        const bd_value *v = bd_graph_output(g, i);
        out[i].name = (char *)v->name;
        out[i].data_type = config_dtype(v->dtype);
        out[i].dims = config_dims(v, max_batch, &out[i].dims_count, dims[n_in + i]);
    }
    inference_ModelConfigResponse rsp = {
        .has_config = true,
        .config = {
            .name = (char *)bd_served_name(s),
            .platform = (char *)config_platform(bd_served_platform(s)),
            .backend = "braid",
            .max_batch_size = max_batch,
            .input_count = (pb_size_t)n_in,
            .input = in,
            .output_count = (pb_size_t)n_out,
            .output = out,
        },
    };
    const bd_batching_config *bc = bd_served_batching_config(s);
    int32_t preferred[BD_BATCH_MAX_PREFERRED];
    if (bc->enabled) {              /* Triton's ModelDynamicBatching, as config.json gave it */
        for (int p = 0; p < bc->n_preferred; p++)
            preferred[p] = bc->preferred[p];
        rsp.config.which_scheduling_choice = inference_ModelConfig_dynamic_batching_tag;
        rsp.config.scheduling_choice.dynamic_batching = (inference_ModelDynamicBatching){
            .preferred_batch_size_count = (pb_size_t)bc->n_preferred,
            .preferred_batch_size = bc->n_preferred ? preferred : NULL,
            .max_queue_delay_microseconds = bc->max_queue_delay_us,
            .priority_levels = bc->priority_levels,
            .default_priority_level = bc->default_priority_level,
            .has_default_queue_policy = true,
            .default_queue_policy = {
                .timeout_action = bc->timeout_delay ? inference_ModelQueuePolicy_TimeoutAction_DELAY
                                                    : inference_ModelQueuePolicy_TimeoutAction_REJECT,
                .default_timeout_microseconds = bc->default_timeout_us,
                .allow_timeout_override = bc->allow_timeout_override,
                .max_queue_size = bc->max_queue_size,
            },
        };
    }
    bd_call_reply(c, inference_ModelConfigResponse_fields, &rsp);
    free(in);
    free(out);
    free(dims);
    bd_served_release(s);
}
