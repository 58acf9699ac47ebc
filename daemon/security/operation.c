/* The operations and their roles (operation.h): one table for gRPC, REST and the status port. */
#include "daemon/security/operation.h"

#include <string.h>

#define SVC "/inference.GRPCInferenceService/"

static const struct {
    const char *name;
    bd_role     role;
    const char *grpc;               /* NULL: no gRPC method */
} ops[BD_OP_COUNT] = {
    [BD_OP_NONE]               = { "none",                  BD_ROLE_INFERENCE, NULL },
    [BD_OP_SERVER_LIVE]        = { "ServerLive",            BD_ROLE_NONE,      SVC "ServerLive" },
    [BD_OP_SERVER_READY]       = { "ServerReady",           BD_ROLE_NONE,      SVC "ServerReady" },
    [BD_OP_HEALTH_CHECK]       = { "Health.Check",          BD_ROLE_NONE,      "/grpc.health.v1.Health/Check" },
    [BD_OP_SERVER_METADATA]    = { "ServerMetadata",        BD_ROLE_INFERENCE, SVC "ServerMetadata" },
    [BD_OP_MODEL_READY]        = { "ModelReady",            BD_ROLE_INFERENCE, SVC "ModelReady" },
    [BD_OP_MODEL_METADATA]     = { "ModelMetadata",         BD_ROLE_INFERENCE, SVC "ModelMetadata" },
    [BD_OP_MODEL_CONFIG]       = { "ModelConfig",           BD_ROLE_INFERENCE, SVC "ModelConfig" },
    [BD_OP_MODEL_INFER]        = { "ModelInfer",            BD_ROLE_INFERENCE, SVC "ModelInfer" },
    [BD_OP_MODEL_STREAM_INFER] = { "ModelStreamInfer",      BD_ROLE_INFERENCE, SVC "ModelStreamInfer" },
    [BD_OP_MODEL_STATISTICS]   = { "ModelStatistics",       BD_ROLE_INFERENCE, SVC "ModelStatistics" },
    [BD_OP_REPOSITORY_INDEX]   = { "RepositoryIndex",       BD_ROLE_INFERENCE, SVC "RepositoryIndex" },
    [BD_OP_SHM_STATUS]         = { "SystemSharedMemoryStatus",     BD_ROLE_INFERENCE,
                                   SVC "SystemSharedMemoryStatus" },
    [BD_OP_SHM_REGISTER]       = { "SystemSharedMemoryRegister",   BD_ROLE_INFERENCE,
                                   SVC "SystemSharedMemoryRegister" },
    [BD_OP_SHM_UNREGISTER]     = { "SystemSharedMemoryUnregister", BD_ROLE_INFERENCE,
                                   SVC "SystemSharedMemoryUnregister" },
    [BD_OP_CUDA_SHM]           = { "CudaSharedMemory",      BD_ROLE_INFERENCE, NULL },
    [BD_OP_METRICS]            = { "metrics",               BD_ROLE_INFERENCE, NULL },
    [BD_OP_STATUS]             = { "status",                BD_ROLE_INFERENCE, NULL },
    [BD_OP_REPOSITORY_LOAD]    = { "RepositoryModelLoad",   BD_ROLE_ADMIN,     SVC "RepositoryModelLoad" },
    [BD_OP_REPOSITORY_UNLOAD]  = { "RepositoryModelUnload", BD_ROLE_ADMIN,     SVC "RepositoryModelUnload" },
};

bd_role bd_op_role(bd_op op)
{
    return op > BD_OP_NONE && op < BD_OP_COUNT ? ops[op].role : BD_ROLE_INFERENCE;
}

const char *bd_op_name(bd_op op)
{
    return op > BD_OP_NONE && op < BD_OP_COUNT ? ops[op].name : "none";
}

const char *bd_op_grpc_method(bd_op op)
{
    return op > BD_OP_NONE && op < BD_OP_COUNT ? ops[op].grpc : NULL;
}

static bool same(const char *want, const char *s, size_t len)
{
    return strlen(want) == len && memcmp(want, s, len) == 0;
}

bd_op bd_op_from_grpc(const char *method, size_t len)
{
    if (!method)
        return BD_OP_NONE;
    for (int op = BD_OP_NONE + 1; op < BD_OP_COUNT; op++)
        if (ops[op].grpc && same(ops[op].grpc, method, len))
            return (bd_op)op;
    /* Triton's CUDA methods: known, answered "not supported" */
    if (same(SVC "CudaSharedMemoryStatus", method, len) ||
        same(SVC "CudaSharedMemoryRegister", method, len) ||
        same(SVC "CudaSharedMemoryUnregister", method, len))
        return BD_OP_CUDA_SHM;
    return BD_OP_NONE;
}
