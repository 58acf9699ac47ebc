/* The operations braidd executes, and the one table that says which role each needs.
 *
 * Every transport turns a request into an operation first — gRPC by its method path, REST by
 * its routed, percent-decoded path and HTTP method (rest_route.h), the status port by its
 * path — and authorizes that operation, never the raw bytes of the request: a spelling that
 * routes to a handler needs that handler's role, whatever it looks like (docs/security.md,
 * "Authorization"). A request that routes to no operation executes nothing and needs the
 * inference role to learn so (404/405/UNIMPLEMENTED), so a caller without a token learns
 * nothing about the routes.
 *
 * Pure functions of constant tables; any thread. */
#ifndef BD_DAEMON_SECURITY_OPERATION_H
#define BD_DAEMON_SECURITY_OPERATION_H

#include <stddef.h>

#include "daemon/security/auth.h"

typedef enum bd_op {
    BD_OP_NONE = 0,                 /* routes to nothing: an error answer, no handler */
    /* open: health probes */
    BD_OP_SERVER_LIVE,
    BD_OP_SERVER_READY,
    BD_OP_HEALTH_CHECK,             /* grpc.health.v1 */
    /* inference */
    BD_OP_SERVER_METADATA,
    BD_OP_MODEL_READY,
    BD_OP_MODEL_METADATA,
    BD_OP_MODEL_CONFIG,
    BD_OP_MODEL_INFER,
    BD_OP_MODEL_STREAM_INFER,
    BD_OP_MODEL_STATISTICS,
    BD_OP_REPOSITORY_INDEX,
    BD_OP_SHM_STATUS,
    BD_OP_SHM_REGISTER,
    BD_OP_SHM_UNREGISTER,
    BD_OP_CUDA_SHM,                 /* answered "not supported" */
    BD_OP_METRICS,                  /* status port: /metrics */
    BD_OP_STATUS,                   /* status port: /v2/status */
    /* admin: repository control */
    BD_OP_REPOSITORY_LOAD,
    BD_OP_REPOSITORY_UNLOAD,
    BD_OP_COUNT
} bd_op;

/* The role OP needs. BD_OP_NONE and anything out of range need BD_ROLE_INFERENCE. */
bd_role     bd_op_role(bd_op op);
/* "RepositoryModelLoad", "metrics", ... for logs and messages; "none" for BD_OP_NONE. */
const char *bd_op_name(bd_op op);
/* The gRPC method path that runs OP ("/inference.GRPCInferenceService/ModelInfer"); NULL for
 * operations with no gRPC method (metrics, status, CUDA shared memory). */
const char *bd_op_grpc_method(bd_op op);
/* The operation of a gRPC method path (LEN bytes, need not be NUL-terminated); BD_OP_NONE
 * for a method braidd does not serve. */
bd_op       bd_op_from_grpc(const char *method, size_t len);

#endif
