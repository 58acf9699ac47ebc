/* Liveness and readiness: ServerLive, ServerReady, ModelReady and grpc.health.v1 Check.
 *
 * Each has a fast handler the cq thread runs (server.h): ServerLive needs nothing, server
 * readiness comes from the server's atomic copy of it (bd_call_server_ready_hint), and a
 * model's from the served-version table (served_cache.h: never a version already swapped
 * out or unloaded). When only the registry can tell — start-up not seen finished, a model
 * the table does not know, a shutdown under way — the fast handler passes the call to the
 * loop handler, which asks the registry as before. Auth roles, deadlines and the RPC
 * counters are the server's, before any handler runs, on either path. */
#include <stdio.h>
#include <string.h>

#include "proto/health.pb.h"
#include "proto/inference.pb.h"
#include "daemon/grpc/rpc.h"

/* The request the fast handler decoded already, or decode it now (NULL: answered). */
#define DECODED(c, type, what) \
    (bd_call_message(c) ? (type *)bd_call_message(c) : BD_CALL_DECODE(c, type, what))

static bool server_ready(bd_call *c)
{
    return bd_registry_ready(bd_call_registry(c));   /* also false from SIGTERM on */
}

static void reply_live(bd_call *c)
{
    if (!DECODED(c, inference_ServerLiveRequest, "ServerLiveRequest"))
        return;
    inference_ServerLiveResponse rsp = { .live = true };
    bd_call_reply(c, inference_ServerLiveResponse_fields, &rsp);
}

bool bd_rpc_server_live_fast(bd_call *c)
{
    reply_live(c);
    return true;
}

void bd_rpc_server_live(bd_call *c)
{
    reply_live(c);
}

static void reply_ready(bd_call *c, bool ready)
{
    inference_ServerReadyResponse rsp = { .ready = ready };
    bd_call_reply(c, inference_ServerReadyResponse_fields, &rsp);
}

bool bd_rpc_server_ready_fast(bd_call *c)
{
    if (!DECODED(c, inference_ServerReadyRequest, "ServerReadyRequest"))
        return true;
    int hint = bd_call_server_ready_hint(c);
    if (hint < 0)
        return false;                           /* start-up: the loop asks the registry */
    reply_ready(c, hint == 1);
    return true;
}

void bd_rpc_server_ready(bd_call *c)
{
    if (!DECODED(c, inference_ServerReadyRequest, "ServerReadyRequest"))
        return;
    reply_ready(c, server_ready(c));
}

static void reply_model_ready(bd_call *c, bool ready)
{
    inference_ModelReadyResponse rsp = { .ready = ready };
    bd_call_reply(c, inference_ModelReadyResponse_fields, &rsp);
}

/* ready=true from the table only while the server runs: during a shutdown the registry
 * answers (as it did before the fast path). */
bool bd_rpc_model_ready_fast(bd_call *c)
{
    inference_ModelReadyRequest *req = DECODED(c, inference_ModelReadyRequest, "ModelReadyRequest");
    if (!req)
        return true;
    if (bd_call_server_stopping(c))
        return false;
    bd_served *s = bd_call_cached_served(c, req->name ? req->name : "", req->version);
    if (!s)
        return false;                           /* unknown to the table: the registry tells */
    bd_served_release(s);
    reply_model_ready(c, true);
    return true;
}

/* ready=true only for a version that serves now. An unknown, unloaded or failed model or
 * version is ready=false with status OK, as Triton answers: clients written for Triton
 * (tritonclient's is_model_ready) expect False there, not an exception. */
void bd_rpc_model_ready(bd_call *c)
{
    inference_ModelReadyRequest *req = DECODED(c, inference_ModelReadyRequest, "ModelReadyRequest");
    if (!req)
        return;
    bd_error err = {0};
    bd_served *s = NULL;
    int rc = bd_registry_acquire(bd_call_registry(c), req->name ? req->name : "", req->version,
                                 &s, &err);
    if (rc == 0)
        bd_call_remember_served(c, s);          /* the next ModelReady for it stays on the cq */
    bd_served_release(s);
    reply_model_ready(c, rc == 0);
}

static bool is_server_service(const char *svc)
{
    return !*svc || !strcmp(svc, "inference.GRPCInferenceService") || !strcmp(svc, "grpc.health.v1.Health");
}

static void reply_health(bd_call *c, bool serving)
{
    grpc_health_v1_HealthCheckResponse rsp = {
        .status = serving ? grpc_health_v1_HealthCheckResponse_ServingStatus_SERVING
                          : grpc_health_v1_HealthCheckResponse_ServingStatus_NOT_SERVING,
    };
    bd_call_reply(c, grpc_health_v1_HealthCheckResponse_fields, &rsp);
}

bool bd_rpc_health_check_fast(bd_call *c)
{
    grpc_health_v1_HealthCheckRequest *req =
        DECODED(c, grpc_health_v1_HealthCheckRequest, "HealthCheckRequest");
    if (!req)
        return true;
    const char *svc = req->service ? req->service : "";
    int hint = bd_call_server_ready_hint(c);
    if (is_server_service(svc)) {
        if (hint < 0)
            return false;
        reply_health(c, hint == 1);
        return true;
    }
    if (bd_call_server_stopping(c))
        return false;                           /* NOT_FOUND vs NOT_SERVING: the registry's */
    bd_served *s = bd_call_cached_served(c, svc, NULL);
    if (!s)
        return false;
    bd_served_release(s);
    reply_health(c, true);
    return true;
}

/* Service "" (the server), the inference service, or a model name. Anything else is
 * NOT_FOUND, as the health-checking protocol asks. */
void bd_rpc_health_check(bd_call *c)
{
    grpc_health_v1_HealthCheckRequest *req =
        DECODED(c, grpc_health_v1_HealthCheckRequest, "HealthCheckRequest");
    if (!req)
        return;
    const char *svc = req->service ? req->service : "";
    bool serving;
    if (is_server_service(svc)) {
        serving = server_ready(c);
    } else {
        bd_error err = {0};
        bd_served *s = NULL;
        int rc = bd_registry_acquire(bd_call_registry(c), svc, NULL, &s, &err);
        if (rc == 0)
            bd_call_remember_served(c, s);
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
    reply_health(c, serving);
}
