/* The REST port's routes (rest_server.h): each request is turned into the gRPC method's
 * request message, handed over through the dispatch (dispatch.h), and its answer (on the loop, or on a worker
 * for infer) turned into JSON and handed back to the HTTP connection. An inference goes to
 * the same handler as the neutral request in memory (rest_infer.h, no protobuf on the way)
 * and comes back as the neutral answer. */
#include "daemon/rest/rest_server.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <http_parser.h>
#include <pb_encode.h>

#include "proto/inference.pb.h"
#include "core/ir/dtype.h"
#include "core/ir/graph.h"
#include "daemon/log.h"
#include "daemon/stats/metrics.h"
#include "daemon/registry/registry.h"
#include "daemon/rest/rest_codec.h"
#include "daemon/rest/rest_infer.h"
#include "daemon/rest/rest_route.h"
#include "daemon/infer/shm_region.h"

#ifndef BRAIDD_VERSION
#define BRAIDD_VERSION "unknown"
#endif

#define SVC "/inference.GRPCInferenceService/"

struct bd_rest {
    bd_http_server         *http;
    const bd_daemon_config *cfg;
    const bd_dispatch      *dispatch;     /* the handlers */
    bd_registry            *reg;
    void                  (*done)(void *);
    void                   *done_arg;
};

/* What a request's answer needs once it comes back from the handler. */
typedef enum rest_kind { K_READY, K_MODEL_META, K_CONFIG, K_STATS, K_INDEX, K_EMPTY, K_INFER,
                         K_SHM_STATUS } rest_kind;

typedef struct rest_call {
    bd_http_pending *pending;
    rest_kind        kind;
    bool             head_only;
    bd_rest_coding   accept;        /* the response's coding */
    size_t           max_bytes;
    bd_rest_outputs  outs;
} rest_call;

/* ---- answers ------------------------------------------------------------------------------ */

/* Triton's HTTP status for a gRPC status. */
static int http_code(grpc_status_code s)
{
    switch (s) {
    case GRPC_STATUS_OK:                 return 200;
    case GRPC_STATUS_INVALID_ARGUMENT:
    case GRPC_STATUS_FAILED_PRECONDITION:
    case GRPC_STATUS_OUT_OF_RANGE:       return 400;
    case GRPC_STATUS_UNAUTHENTICATED:    return 401;
    case GRPC_STATUS_PERMISSION_DENIED:  return 403;
    case GRPC_STATUS_NOT_FOUND:          return 404;
    case GRPC_STATUS_ALREADY_EXISTS:     return 409;
    case GRPC_STATUS_RESOURCE_EXHAUSTED: return 429;
    case GRPC_STATUS_UNIMPLEMENTED:      return 501;
    case GRPC_STATUS_UNAVAILABLE:        return 503;
    case GRPC_STATUS_DEADLINE_EXCEEDED:  return 504;
    default:                             return 500;
    }
}

static void set_json(bd_http_response *res, int status, char *json)
{
    res->status = status;
    res->content_type = "application/json";
    res->body = json;
    res->len = json ? strlen(json) : 0;
    if (!json)
        res->status = 500;
}

static void set_error(bd_http_response *res, int status, const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg ? msg : "");
    set_json(res, status, cJSON_PrintUnformatted(o));
    cJSON_Delete(o);
}

/* Compress RES's body when the client asked for it and it is worth it. */
static void encode_body(bd_http_response *res, bd_rest_coding accept)
{
    if (accept == BD_CODING_IDENTITY || !res->body || res->len < 64)
        return;
    char *z = NULL;
    size_t zlen = 0;
    bd_error err = {0};
    if (bd_rest_deflate(accept, res->body, res->len, &z, &zlen, &err) != 0)
        return;                                  /* sent as it is */
    free(res->body);
    res->body = z;
    res->len = zlen;
    size_t used = strlen(res->headers);
    snprintf(res->headers + used, sizeof res->headers - used, "Content-Encoding: %s\r\n",
             bd_rest_coding_name(accept));
}

static void finish(rest_call *rc, bd_http_response *res)
{
    encode_body(res, rc->accept);
    bd_http_pending_finish(rc->pending, res);
    bd_rest_outputs_free(&rc->outs);
    free(rc);
}

/* ---- JSON for each answer ------------------------------------------------------------------- */

static cJSON *dims_json(const int64_t *d, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)d[i]));
    return a;
}

static cJSON *tensors_json(const inference_ModelMetadataResponse_TensorMetadata *t, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t[i].name ? t[i].name : "");
        cJSON_AddStringToObject(o, "datatype", t[i].datatype ? t[i].datatype : "");
        cJSON_AddItemToObject(o, "shape", dims_json(t[i].shape, t[i].shape_count));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *model_meta_json(const inference_ModelMetadataResponse *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name ? m->name : "");
    cJSON *v = cJSON_AddArrayToObject(o, "versions");
    for (pb_size_t i = 0; i < m->versions_count; i++)
        cJSON_AddItemToArray(v, cJSON_CreateString(m->versions[i] ? m->versions[i] : ""));
    cJSON_AddStringToObject(o, "platform", m->platform ? m->platform : "");
    cJSON_AddItemToObject(o, "inputs", tensors_json(m->inputs, m->inputs_count));
    cJSON_AddItemToObject(o, "outputs", tensors_json(m->outputs, m->outputs_count));
    return o;
}

/* Triton's enum spelling of a config data type ("TYPE_FP32"). */
static const char *config_type_name(inference_DataType t)
{
    switch (t) {
    case inference_DataType_TYPE_BOOL:   return "TYPE_BOOL";
    case inference_DataType_TYPE_UINT8:  return "TYPE_UINT8";
    case inference_DataType_TYPE_UINT16: return "TYPE_UINT16";
    case inference_DataType_TYPE_UINT32: return "TYPE_UINT32";
    case inference_DataType_TYPE_UINT64: return "TYPE_UINT64";
    case inference_DataType_TYPE_INT8:   return "TYPE_INT8";
    case inference_DataType_TYPE_INT16:  return "TYPE_INT16";
    case inference_DataType_TYPE_INT32:  return "TYPE_INT32";
    case inference_DataType_TYPE_INT64:  return "TYPE_INT64";
    case inference_DataType_TYPE_FP16:   return "TYPE_FP16";
    case inference_DataType_TYPE_FP32:   return "TYPE_FP32";
    case inference_DataType_TYPE_FP64:   return "TYPE_FP64";
    case inference_DataType_TYPE_STRING: return "TYPE_STRING";
    case inference_DataType_TYPE_BF16:   return "TYPE_BF16";
    default:                             return "TYPE_INVALID";
    }
}

static cJSON *config_json(const inference_ModelConfig *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name ? c->name : "");
    cJSON_AddStringToObject(o, "platform", c->platform ? c->platform : "");
    cJSON_AddStringToObject(o, "backend", c->backend ? c->backend : "");
    cJSON_AddNumberToObject(o, "max_batch_size", c->max_batch_size);
    cJSON *in = cJSON_AddArrayToObject(o, "input");
    for (pb_size_t i = 0; i < c->input_count; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", c->input[i].name ? c->input[i].name : "");
        cJSON_AddStringToObject(t, "data_type", config_type_name(c->input[i].data_type));
        cJSON_AddStringToObject(t, "format", "FORMAT_NONE");
        cJSON_AddItemToObject(t, "dims", dims_json(c->input[i].dims, c->input[i].dims_count));
        cJSON_AddItemToArray(in, t);
    }
    cJSON *out = cJSON_AddArrayToObject(o, "output");
    if (c->which_scheduling_choice == inference_ModelConfig_dynamic_batching_tag) {
        /* Triton's JSON of ModelDynamicBatching: 64-bit integers as numbers, enums by name */
        const inference_ModelDynamicBatching *db = &c->scheduling_choice.dynamic_batching;
        cJSON *d = cJSON_AddObjectToObject(o, "dynamic_batching");
        cJSON *pref = cJSON_AddArrayToObject(d, "preferred_batch_size");
        for (pb_size_t i = 0; i < db->preferred_batch_size_count; i++)
            cJSON_AddItemToArray(pref, cJSON_CreateNumber(db->preferred_batch_size[i]));
        cJSON_AddNumberToObject(d, "max_queue_delay_microseconds", (double)db->max_queue_delay_microseconds);
        cJSON_AddBoolToObject(d, "preserve_ordering", db->preserve_ordering);
        cJSON_AddNumberToObject(d, "priority_levels", (double)db->priority_levels);
        cJSON_AddNumberToObject(d, "default_priority_level", (double)db->default_priority_level);
        cJSON *qp = cJSON_AddObjectToObject(d, "default_queue_policy");
        const inference_ModelQueuePolicy *p = &db->default_queue_policy;
        cJSON_AddStringToObject(qp, "timeout_action", p->timeout_action ==
                                inference_ModelQueuePolicy_TimeoutAction_DELAY ? "DELAY" : "REJECT");
        cJSON_AddNumberToObject(qp, "default_timeout_microseconds", (double)p->default_timeout_microseconds);
        cJSON_AddBoolToObject(qp, "allow_timeout_override", p->allow_timeout_override);
        cJSON_AddNumberToObject(qp, "max_queue_size", p->max_queue_size);
    }
    for (pb_size_t i = 0; i < c->output_count; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", c->output[i].name ? c->output[i].name : "");
        cJSON_AddStringToObject(t, "data_type", config_type_name(c->output[i].data_type));
        cJSON_AddItemToObject(t, "dims", dims_json(c->output[i].dims, c->output[i].dims_count));
        cJSON_AddStringToObject(t, "label_filename",
                                c->output[i].label_filename ? c->output[i].label_filename : "");
        cJSON_AddItemToArray(out, t);
    }
    return o;
}

static cJSON *duration_json(const inference_StatisticDuration *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "count", (double)d->count);
    cJSON_AddNumberToObject(o, "ns", (double)d->ns);
    return o;
}

static cJSON *stats_json(const inference_ModelStatisticsResponse *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "model_stats");
    for (pb_size_t i = 0; i < r->model_stats_count; i++) {
        const inference_ModelStatistics *m = &r->model_stats[i];
        const inference_InferStatistics *s = &m->inference_stats;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", m->name ? m->name : "");
        cJSON_AddStringToObject(e, "version", m->version ? m->version : "");
        cJSON_AddNumberToObject(e, "last_inference", (double)m->last_inference);
        cJSON_AddNumberToObject(e, "inference_count", (double)m->inference_count);
        cJSON_AddNumberToObject(e, "execution_count", (double)m->execution_count);
        cJSON *is = cJSON_AddObjectToObject(e, "inference_stats");
        cJSON_AddItemToObject(is, "success", duration_json(&s->success));
        cJSON_AddItemToObject(is, "fail", duration_json(&s->fail));
        cJSON_AddItemToObject(is, "queue", duration_json(&s->queue));
        cJSON_AddItemToObject(is, "compute_input", duration_json(&s->compute_input));
        cJSON_AddItemToObject(is, "compute_infer", duration_json(&s->compute_infer));
        cJSON_AddItemToObject(is, "compute_output", duration_json(&s->compute_output));
        cJSON_AddItemToObject(is, "cache_hit", duration_json(&s->cache_hit));
        cJSON_AddItemToObject(is, "cache_miss", duration_json(&s->cache_miss));
        cJSON *bs = cJSON_AddArrayToObject(e, "batch_stats");
        for (pb_size_t b = 0; b < m->batch_stats_count; b++) {
            const inference_InferBatchStatistics *x = &m->batch_stats[b];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "batch_size", (double)x->batch_size);
            cJSON_AddItemToObject(o, "compute_input", duration_json(&x->compute_input));
            cJSON_AddItemToObject(o, "compute_infer", duration_json(&x->compute_infer));
            cJSON_AddItemToObject(o, "compute_output", duration_json(&x->compute_output));
            cJSON_AddItemToArray(bs, o);
        }
        cJSON_AddArrayToObject(e, "memory_usage");
        cJSON_AddItemToArray(a, e);
    }
    return o;
}

static cJSON *index_json(const inference_RepositoryIndexResponse *r)
{
    cJSON *a = cJSON_CreateArray();
    for (pb_size_t i = 0; i < r->models_count; i++) {
        const inference_RepositoryIndexResponse_ModelIndex *m = &r->models[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", m->name ? m->name : "");
        if (m->version && m->version[0])
            cJSON_AddStringToObject(e, "version", m->version);
        cJSON_AddStringToObject(e, "state", m->state ? m->state : "");
        cJSON_AddStringToObject(e, "reason", m->reason ? m->reason : "");
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

/* Triton's $system_shared_memory_status_response: an array of regions. */
static cJSON *shm_status_json(const inference_SystemSharedMemoryStatusResponse *r)
{
    cJSON *a = cJSON_CreateArray();
    for (pb_size_t i = 0; a && i < r->regions_count; i++) {
        const inference_SystemSharedMemoryStatusResponse_RegionStatus *v = &r->regions[i].value;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", v->name ? v->name : "");
        cJSON_AddStringToObject(e, "key", v->key ? v->key : "");
        cJSON_AddNumberToObject(e, "offset", (double)v->offset);
        cJSON_AddNumberToObject(e, "byte_size", (double)v->byte_size);
        cJSON_AddItemToArray(a, e);
    }
    return a;
}

static void reply_json(bd_http_response *res, cJSON *j)
{
    set_json(res, 200, cJSON_PrintUnformatted(j));
    cJSON_Delete(j);
}

/* The method's answer (bd_dispatch_reply_fn): on the loop, or on a worker for infer. */
static void on_reply(void *arg, grpc_status_code status, const char *message,
                     const pb_msgdesc_t *fields, const void *msg)
{
    rest_call *rc = arg;
    bd_http_response res = { .status = 500 };
    if (rc->kind == K_READY) {                   /* an answer without a body either way */
        const inference_ModelReadyResponse *r = msg;
        res.status = status == GRPC_STATUS_OK && r && r->ready ? 200
                   : status == GRPC_STATUS_OK ? 400 : http_code(status);
        finish(rc, &res);
        return;
    }
    if (status != GRPC_STATUS_OK) {
        set_error(&res, http_code(status), message);
        finish(rc, &res);
        return;
    }
    bd_error err = {0};
    switch (rc->kind) {
    case K_MODEL_META: reply_json(&res, model_meta_json(msg)); break;
    case K_CONFIG:     reply_json(&res, config_json(&((const inference_ModelConfigResponse *)msg)->config)); break;
    case K_STATS:      reply_json(&res, stats_json(msg)); break;
    case K_INDEX:      reply_json(&res, index_json(msg)); break;
    case K_SHM_STATUS: reply_json(&res, shm_status_json(msg)); break;
    case K_EMPTY:      res.status = 200; res.content_type = "application/json"; break;
    case K_INFER: {                             /* in memory: a bd_infer_reply */
        size_t json_len = 0;
        int e = bd_rest_infer_response(msg, &rc->outs, rc->max_bytes, &res.body, &res.len,
                                       &json_len, &err);
        if (e) {
            set_error(&res, e == BD_EINVAL ? 400 : 500, err.msg);
            break;
        }
        res.status = 200;
        if (json_len < res.len) {
            res.content_type = "application/octet-stream";
            snprintf(res.headers, sizeof res.headers, "Inference-Header-Content-Length: %zu\r\n",
                     json_len);
        } else {
            res.content_type = "application/json";
        }
        break;
    }
    default: break;
    }
    (void)fields;
    finish(rc, &res);
}

/* ---- requests ------------------------------------------------------------------------------- */

/* MSG (FIELDS) encoded into a new buffer; NULL when out of memory or not encodable. */
static uint8_t *encode(const pb_msgdesc_t *fields, const void *msg, size_t *len)
{
    size_t size = 0;
    if (!pb_get_encoded_size(&size, fields, msg))
        return NULL;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return NULL;
    pb_ostream_t os = pb_ostream_from_buffer(buf, size);
    if (!pb_encode(&os, fields, msg)) {
        free(buf);
        return NULL;
    }
    *len = os.bytes_written;
    return buf;
}

static void cancel_fire(void *k)    { bd_dispatch_cancel_fire(k); }
static void cancel_release(void *k) { bd_dispatch_cancel_release(k); }

static void request_free(void *request) { bd_rest_request_free(request); }

/* Run METHOD with PAYLOAD or, for an inference, REQUEST (whichever is given; taken) and
 * answer REQ from its reply. */
static void call(bd_rest *r, const bd_http_request *req, bd_http_response *res, const char *method,
                 rest_kind kind, uint8_t *payload, size_t len, bd_rest_request *request,
                 bd_rest_outputs *outs)
{
    rest_call *rc = calloc(1, sizeof *rc);
    bd_http_pending *p = rc ? bd_http_defer(req) : NULL;
    if (!p) {
        free(rc);
        free(payload);
        bd_rest_request_free(request);
        bd_rest_outputs_free(outs);
        set_error(res, 503, "cannot take the request now (out of memory)");
        return;
    }
    rc->pending = p;
    rc->kind = kind;
    rc->max_bytes = r->cfg->max_message_bytes;
    rc->accept = bd_rest_coding_accept(bd_http_request_header(req, "Accept-Encoding"));
    /* the client going away cancels what is still queued, as over gRPC */
    bd_dispatch_cancel *k = bd_dispatch_cancel_new();
    if (k)
        bd_http_pending_watch(p, cancel_fire, cancel_release, k);
    uint64_t deadline = 0;
    if (outs) {
        rc->outs = *outs;
        if (outs->timeout_us)          /* Triton's "timeout": the request's deadline */
            deadline = bd_now_ns() + outs->timeout_us * 1000;
    }
    bd_dispatch_call call = { .method = method, .payload = payload, .len = len,
                              .request = request, .request_free = request ? request_free : NULL,
                              .deadline_ns = deadline, .cancel = k, .reply = on_reply, .arg = rc };
    if (bd_dispatch_run(r->dispatch, &call) != 0) {
        bd_http_response e = {0};
        set_error(&e, 500, "internal error: unknown method");
        finish(rc, &e);
    }
}

/* A request for the model NAME/VERSION whose message has just those two string fields
 * (ModelReady, ModelMetadata, ModelConfig, ModelStatistics share the layout). */
static void call_named(bd_rest *r, const bd_http_request *req, bd_http_response *res,
                       const char *method, rest_kind kind, const pb_msgdesc_t *fields,
                       const char *name, const char *version)
{
    inference_ModelMetadataRequest m = { .name = (char *)name, .version = (char *)version };
    size_t len = 0;
    uint8_t *buf = encode(fields, &m, &len);
    if (!buf) {
        set_error(res, 500, "cannot encode the request");
        return;
    }
    call(r, req, res, method, kind, buf, len, NULL, NULL);
}

/* ---- repository load: JSON parameters with base64 files ------------------------------------- */

static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62;
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* Decode base64 S into a new buffer (*LEN bytes); NULL when S is not base64. */
static uint8_t *b64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '=')
        n--;
    uint8_t *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (uint8_t)(acc >> bits);
        }
    }
    *len = k;
    return out;
}

static void load(bd_rest *r, const bd_http_request *req, bd_http_response *res, const char *name,
                 const char *body, size_t body_len)
{
    bd_error err = {0};
    cJSON *root = NULL;
    if (body_len) {
        if (bd_rest_json_check(body, body_len, 4096, 16, &err) != 0) {
            set_error(res, 400, err.msg);
            return;
        }
        root = cJSON_ParseWithLength(body, body_len);
        if (!cJSON_IsObject(root)) {
            cJSON_Delete(root);
            set_error(res, 400, "the load request must be a JSON object: {\"parameters\": "
                      "{\"config\": \"...\", \"file:1/model.onnx\": \"<base64>\"}}");
            return;
        }
    }
    const cJSON *params = root ? cJSON_GetObjectItemCaseSensitive(root, "parameters") : NULL;
    if (params && !cJSON_IsObject(params)) {
        cJSON_Delete(root);
        set_error(res, 400, "\"parameters\" must be an object");
        return;
    }
    size_t n = params ? (size_t)cJSON_GetArraySize(params) : 0;
    inference_RepositoryModelLoadRequest_ParametersEntry *e = calloc(n ? n : 1, sizeof *e);
    uint8_t **files = calloc(n ? n : 1, sizeof *files);
    bd_wire_span *spans = calloc(n ? n : 1, sizeof *spans);
    char msg[400];
    const char *bad = e && files && spans ? NULL : "out of memory";
    size_t k = 0;
    for (const cJSON *p = params ? params->child : NULL; p && !bad; p = p->next, k++) {
        e[k].key = p->string;
        e[k].has_value = true;
        if (!strncmp(p->string, "file:", 5)) {
            size_t len = 0;
            if (!cJSON_IsString(p) || !(files[k] = b64_decode(p->valuestring, &len))) {
                snprintf(msg, sizeof msg, "parameter '%.300s': expected the file's bytes in base64",
                         p->string);
                bad = msg;
                break;
            }
            spans[k] = (bd_wire_span){ files[k], len };
            bd_wire_spans_borrow(&e[k].value.bytes_param, &spans[k], 1);
        } else if (cJSON_IsString(p)) {
            e[k].value.string_param = p->valuestring;
        } else if (cJSON_IsBool(p)) {
            e[k].value.has_bool_param = true;
            e[k].value.bool_param = cJSON_IsTrue(p);
        } else if (cJSON_IsNumber(p)) {
            e[k].value.has_int64_param = true;
            e[k].value.int64_param = (int64_t)p->valuedouble;
        } else {
            snprintf(msg, sizeof msg, "parameter '%.300s': expected a string, number or boolean",
                     p->string);
            bad = msg;
        }
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    if (!bad) {
        inference_RepositoryModelLoadRequest m = { .model_name = (char *)name,
                                                   .parameters_count = (pb_size_t)n,
                                                   .parameters = e };
        if (!(buf = encode(inference_RepositoryModelLoadRequest_fields, &m, &len)))
            bad = "cannot encode the request";
    }
    for (size_t i = 0; files && i < n; i++)
        free(files[i]);
    free(files);
    free(spans);
    free(e);
    cJSON_Delete(root);
    if (bad) {
        set_error(res, 400, bad);
        return;
    }
    call(r, req, res, SVC "RepositoryModelLoad", K_EMPTY, buf, len, NULL, NULL);
}

/* ---- routing (rest_route.h decides; these run what it chose) -------------------------------- */

/* /v2/models/NAME[/versions/V]/infer: BODY (*OWNED when it is a malloc'ed one the handler
 * made, else REQ's) read as the neutral request, which keeps the body it points into. */
static void infer(bd_rest *r, const bd_http_request *req, bd_http_response *res,
                  const bd_rest_route *rt, const char *body, size_t body_len, char **owned)
{
    bd_error err = {0};
    bd_rest_request *request = NULL;
    bd_rest_outputs outs = {0};
    if (bd_rest_infer_request(body, body_len,
                              bd_http_request_header(req, "Inference-Header-Content-Length"),
                              rt->model, rt->version, &request, &outs, &err) != 0) {
        set_error(res, err.code == BD_ENOMEM ? 503 : 400, err.msg);
        return;
    }
    if (owned) {
        bd_rest_request_adopt(request, *owned);
        *owned = NULL;
    } else {
        bd_rest_request_adopt(request, bd_http_request_take_body(req));
    }
    call(r, req, res, SVC "ModelInfer", K_INFER, NULL, 0, request, &outs);
}

/* /v2/models/NAME[/versions/V][/ACTION] */
static void model_call(bd_rest *r, const bd_http_request *req, bd_http_response *res,
                       const bd_rest_route *rt, const char *body, size_t body_len, char **owned)
{
    const char *name = rt->model, *version = rt->version;
    switch (rt->op) {
    case BD_OP_MODEL_INFER:
        return infer(r, req, res, rt, body, body_len, owned);
    case BD_OP_MODEL_METADATA:
        return call_named(r, req, res, SVC "ModelMetadata", K_MODEL_META,
                          inference_ModelMetadataRequest_fields, name, version);
    case BD_OP_MODEL_READY:
        return call_named(r, req, res, SVC "ModelReady", K_READY, inference_ModelReadyRequest_fields,
                          name, version);
    case BD_OP_MODEL_CONFIG:
        return call_named(r, req, res, SVC "ModelConfig", K_CONFIG,
                          inference_ModelConfigRequest_fields, name, version);
    default:                            /* BD_OP_MODEL_STATISTICS; "" = every model */
        return call_named(r, req, res, SVC "ModelStatistics", K_STATS,
                          inference_ModelStatisticsRequest_fields, name, version);
    }
}

static void server_metadata(bd_http_response *res)
{
    static const char *ext[] = { "classification", "model_repository", "statistics",
                                 "binary_tensor_data", "model_configuration", "health",
                                 "system_shared_memory" };   /* last: only when enabled */
    size_t n = sizeof ext / sizeof ext[0] - (bd_shm_enabled() ? 0 : 1);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", "braid");
    cJSON_AddStringToObject(o, "version", BRAIDD_VERSION);
    cJSON *a = cJSON_AddArrayToObject(o, "extensions");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(ext[i]));
    reply_json(res, o);
}

/* Triton's system shared memory extension, run as the gRPC methods. */
static void shm_call(bd_rest *r, const bd_http_request *req, bd_http_response *res,
                     const bd_rest_route *rt, const char *body, size_t body_len)
{
    const char *name = rt->region;
    uint8_t *b = NULL;
    size_t len = 0;
    if (rt->op == BD_OP_SHM_STATUS) {
        inference_SystemSharedMemoryStatusRequest m = { .name = (char *)name };
        if (!(b = encode(inference_SystemSharedMemoryStatusRequest_fields, &m, &len)))
            return set_error(res, 500, "cannot encode the request");
        return call(r, req, res, SVC "SystemSharedMemoryStatus", K_SHM_STATUS, b, len, NULL, NULL);
    }
    if (rt->op == BD_OP_SHM_UNREGISTER) {
        inference_SystemSharedMemoryUnregisterRequest m = { .name = (char *)name };
        if (!(b = encode(inference_SystemSharedMemoryUnregisterRequest_fields, &m, &len)))
            return set_error(res, 500, "cannot encode the request");
        return call(r, req, res, SVC "SystemSharedMemoryUnregister", K_EMPTY, b, len, NULL, NULL);
    }
    bd_error err = {0};
    cJSON *root = bd_rest_json_check(body, body_len, 64, 4, &err) == 0
                ? cJSON_ParseWithLength(body, body_len) : NULL;
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(root, "key");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(root, "offset");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(root, "byte_size");
    bool ok = cJSON_IsObject(root) && cJSON_IsString(key) && cJSON_IsNumber(size) &&
              (!off || cJSON_IsNumber(off));
    double o = off ? off->valuedouble : 0, z = ok ? size->valuedouble : 0;
    if (!ok || !(o >= 0 && o <= 9007199254740992.0 && o == (double)(uint64_t)o) ||
        !(z >= 0 && z <= 9007199254740992.0 && z == (double)(uint64_t)z)) {
        cJSON_Delete(root);
        return set_error(res, 400, "the register request must be a JSON object {\"key\": string, "
                         "\"offset\": bytes, \"byte_size\": bytes}");
    }
    inference_SystemSharedMemoryRegisterRequest m = {
        .name = (char *)name, .key = key->valuestring, .offset = (uint64_t)o, .byte_size = (uint64_t)z };
    b = encode(inference_SystemSharedMemoryRegisterRequest_fields, &m, &len);
    cJSON_Delete(root);
    if (!b)
        return set_error(res, 500, "cannot encode the request");
    call(r, req, res, SVC "SystemSharedMemoryRegister", K_EMPTY, b, len, NULL, NULL);
}

static void repository_index(bd_rest *r, const bd_http_request *req, bd_http_response *res,
                             const char *body, size_t body_len)
{
    bool ready = false;
    if (body_len) {
        bd_error err = {0};
        cJSON *root = bd_rest_json_check(body, body_len, 64, 4, &err) == 0
                    ? cJSON_ParseWithLength(body, body_len) : NULL;
        if (!cJSON_IsObject(root)) {
            cJSON_Delete(root);
            set_error(res, 400, "the index request must be a JSON object such as "
                      "{\"ready\": true}");
            return;
        }
        ready = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "ready"));
        cJSON_Delete(root);
    }
    inference_RepositoryIndexRequest m = { .ready = ready };
    size_t len = 0;
    uint8_t *b = encode(inference_RepositoryIndexRequest_fields, &m, &len);
    if (!b)
        return set_error(res, 500, "cannot encode the request");
    call(r, req, res, SVC "RepositoryIndex", K_INDEX, b, len, NULL, NULL);
}

static void unload(bd_rest *r, const bd_http_request *req, bd_http_response *res, const char *name)
{
    inference_RepositoryModelUnloadRequest m = { .model_name = (char *)name };
    size_t len = 0;
    uint8_t *b = encode(inference_RepositoryModelUnloadRequest_fields, &m, &len);
    if (!b)
        return set_error(res, 500, "cannot encode the request");
    call(r, req, res, SVC "RepositoryModelUnload", K_EMPTY, b, len, NULL, NULL);
}

/* Run the operation RT chose on BODY: REQ's, or *OWNED (which an inference may take). */
static void dispatch(bd_rest *r, const bd_http_request *req, bd_http_response *res,
                     const bd_rest_route *rt, const char *body, size_t body_len, char **owned)
{
    switch (rt->op) {
    case BD_OP_SERVER_LIVE:
        res->status = 200;
        return;
    case BD_OP_SERVER_READY:
        res->status = bd_registry_ready(r->reg) ? 200 : 503;
        return;
    case BD_OP_SERVER_METADATA:
        return server_metadata(res);
    case BD_OP_MODEL_INFER:
    case BD_OP_MODEL_METADATA:
    case BD_OP_MODEL_READY:
    case BD_OP_MODEL_CONFIG:
    case BD_OP_MODEL_STATISTICS:
        return model_call(r, req, res, rt, body, body_len, owned);
    case BD_OP_REPOSITORY_INDEX:
        return repository_index(r, req, res, body, body_len);
    case BD_OP_REPOSITORY_LOAD:
        return load(r, req, res, rt->model, body, body_len);
    case BD_OP_REPOSITORY_UNLOAD:
        return unload(r, req, res, rt->model);
    case BD_OP_SHM_STATUS:
    case BD_OP_SHM_REGISTER:
    case BD_OP_SHM_UNREGISTER:
        return shm_call(r, req, res, rt, body, body_len);
    case BD_OP_CUDA_SHM:
        return set_error(res, 501, "CUDA shared memory is not supported: braid runs on CPUs; use "
                         "/v2/systemsharedmemory (braidd --allow-shared-memory)");
    default:
        return set_error(res, 500, "internal error: an operation the REST port does not run");
    }
}

/* Route first, then authorize what the route will run, then decode the body and run it. */
static void handler(void *arg, const bd_http_request *req, bd_http_response *res)
{
    bd_rest *r = arg;
    bd_rest_route route, *rt = &route;         /* ~8 KiB: the loop's stack has room */
    bd_rest_route_resolve(req->method, req->path, rt);
    if (!bd_http_authorize(req, bd_op_role(rt->op), res))
        return;
    if (rt->status) {
        set_error(res, rt->status, rt->message);
        res->allow = rt->allow;
        return;
    }
    bd_error err = {0};
    bd_rest_coding coding;
    if (bd_rest_coding_parse(bd_http_request_header(req, "Content-Encoding"), &coding, &err) != 0) {
        set_error(res, 400, err.msg);
        return;
    }
    if (coding == BD_CODING_IDENTITY) {
        dispatch(r, req, res, rt, req->body ? req->body : "", req->body_len, NULL);
        return;
    }
    char *plain = NULL;
    size_t plain_len = 0;
    if (bd_rest_inflate(coding, req->body ? req->body : "", req->body_len,
                        r->cfg->max_message_bytes, &plain, &plain_len, &err) != 0) {
        set_error(res, err.code == BD_ENOMEM ? 503 : err.msg[0] && strstr(err.msg, "over the limit")
                       ? 413 : 400, err.msg);
        return;
    }
    dispatch(r, req, res, rt, plain, plain_len, &plain);
    free(plain);
}

/* ---- the port ------------------------------------------------------------------------------- */

int bd_rest_start(uv_loop_t *loop, const bd_daemon_config *cfg, const bd_dispatch *dispatch,
                  bd_registry *reg, bd_rest **out, bd_error *err)
{
    bd_rest *r = calloc(1, sizeof *r);
    if (!r)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    r->cfg = cfg;
    r->dispatch = dispatch;
    r->reg = reg;
    bd_http_limits lim;
    bd_http_limits_default(&lim);
    lim.keep_body = true;
    lim.json_errors = true;
    lim.max_body_bytes = cfg->max_message_bytes;
    lim.max_unsent_bytes = 4 * 1024 * 1024;
    lim.timeout_ms = 60 * 1000;            /* a large upload needs its time */
    int rc = bd_http_server_start(loop, cfg->rest_address, &lim, handler, r, &r->http, err);
    if (rc) {
        free(r);
        return bd_error_prefix(err, "REST port: ");
    }
    *out = r;
    return 0;
}

int bd_rest_port(const bd_rest *r)
{
    return bd_http_server_port(r->http);
}

void bd_rest_set_security(bd_rest *r, SSL_CTX *tls, bd_auth *auth)
{
    bd_http_security sec = { .tls = tls, .auth = auth };
    bd_http_server_set_security(r->http, &sec);
}

static void closed(void *arg)
{
    bd_rest *r = arg;
    void (*done)(void *) = r->done;
    void *done_arg = r->done_arg;
    free(r);
    if (done)
        done(done_arg);
}

void bd_rest_close(bd_rest *r, void (*done)(void *arg), void *arg)
{
    r->done = done;
    r->done_arg = arg;
    bd_http_server_close(r->http, closed, r);
}
