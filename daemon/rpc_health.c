/* Liveness and readiness: ServerLive, ServerReady, ModelReady and grpc.health.v1 Check.
 * All answered on the loop thread at once. */
#include <stdio.h>
#include <string.h>

#include "proto/health.pb.h"
#include "proto/inference.pb.h"
#include "daemon/rpc.h"

static bool server_ready(bd_call *c)
{
    return bd_registry_ready(bd_call_registry(c));   /* also false from SIGTERM on */
}

void bd_rpc_server_live(bd_call *c)
{
    if (!BD_CALL_DECODE(c, inference_ServerLiveRequest, "ServerLiveRequest"))
        return;
    inference_ServerLiveResponse rsp = { .live = true };
    bd_call_reply(c, inference_ServerLiveResponse_fields, &rsp);
}

void bd_rpc_server_ready(bd_call *c)
{
    if (!BD_CALL_DECODE(c, inference_ServerReadyRequest, "ServerReadyRequest"))
        return;
    inference_ServerReadyResponse rsp = { .ready = server_ready(c) };
    bd_call_reply(c, inference_ServerReadyResponse_fields, &rsp);
}

/* ready=true only for a version that serves now. An unknown, unloaded or failed model or
 * version is ready=false with status OK, as Triton answers: clients written for Triton
 * (tritonclient's is_model_ready) expect False there, not an exception. */
void bd_rpc_model_ready(bd_call *c)
{
    inference_ModelReadyRequest *req = BD_CALL_DECODE(c, inference_ModelReadyRequest, "ModelReadyRequest");
    if (!req)
        return;
    bd_error err = {0};
    bd_served *s = NULL;
    int rc = bd_registry_acquire(bd_call_registry(c), req->name ? req->name : "", req->version,
                                 &s, &err);
    bd_served_release(s);
    inference_ModelReadyResponse rsp = { .ready = rc == 0 };
    bd_call_reply(c, inference_ModelReadyResponse_fields, &rsp);
}

/* Service "" (the server), the inference service, or a model name. Anything else is
 * NOT_FOUND, as the health-checking protocol asks. */
void bd_rpc_health_check(bd_call *c)
{
    grpc_health_v1_HealthCheckRequest *req =
        BD_CALL_DECODE(c, grpc_health_v1_HealthCheckRequest, "HealthCheckRequest");
    if (!req)
        return;
    const char *svc = req->service ? req->service : "";
    bool serving;
    if (!*svc || !strcmp(svc, "inference.GRPCInferenceService") || !strcmp(svc, "grpc.health.v1.Health")) {
        serving = server_ready(c);
    } else {
        bd_error err = {0};
        bd_served *s = NULL;
        int rc = bd_registry_acquire(bd_call_registry(c), svc, NULL, &s, &err);
        bd_served_release(s);
        if (rc == BD_ENOTFOUND) {
            char msg[400];
            snprintf(msg, sizeof msg, "unknown service '%.300s': expected \"\", "
                     "\"inference.GRPCInferenceService\" or a model name", svc);
            bd_call_fail(c, BD_ENOTFOUND, msg);
            return;
        }
        serving = rc == 0 && !bd_call_server_stopping(c);
    }
    grpc_health_v1_HealthCheckResponse rsp = {
        .status = serving ? grpc_health_v1_HealthCheckResponse_ServingStatus_SERVING
                          : grpc_health_v1_HealthCheckResponse_ServingStatus_NOT_SERVING,
    };
    bd_call_reply(c, grpc_health_v1_HealthCheckResponse_fields, &rsp);
}
