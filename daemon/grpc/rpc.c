/* The gRPC methods braidd serves, for bd_server_start (server.h says what each field means). */
#include "daemon/grpc/rpc.h"

const bd_rpc_method bd_rpc_methods[] = {
    { "/inference.GRPCInferenceService/ServerLive",            bd_rpc_server_live, bd_rpc_server_live_fast, 4, false, false },
    { "/inference.GRPCInferenceService/ServerReady",           bd_rpc_server_ready, bd_rpc_server_ready_fast, 4, false, false },
    { "/inference.GRPCInferenceService/ModelReady",            bd_rpc_model_ready, bd_rpc_model_ready_fast, 4, false, false },
    { "/inference.GRPCInferenceService/ServerMetadata",        bd_rpc_server_metadata, bd_rpc_server_metadata_fast, 4, false, false },
    { "/inference.GRPCInferenceService/ModelMetadata",         bd_rpc_model_metadata, bd_rpc_model_metadata_fast, 4, false, false },
    { "/inference.GRPCInferenceService/ModelConfig",           bd_rpc_model_config, NULL, 4, false, false },
    { "/inference.GRPCInferenceService/ModelInfer",            bd_rpc_model_infer, bd_rpc_model_infer_fast, 64, true, false },
    { "/inference.GRPCInferenceService/ModelStreamInfer",      bd_rpc_model_stream_infer_loop, bd_rpc_model_stream_infer, 8, true, true },
    { "/inference.GRPCInferenceService/ModelStatistics",       bd_rpc_model_statistics, NULL, 4, false, false },
    { "/inference.GRPCInferenceService/RepositoryIndex",       bd_rpc_repository_index, NULL, 4, false, false },
    { "/inference.GRPCInferenceService/RepositoryModelLoad",   bd_rpc_repository_load, NULL, 4, true, false },
    { "/inference.GRPCInferenceService/RepositoryModelUnload", bd_rpc_repository_unload, NULL, 4, true, false },
    { "/inference.GRPCInferenceService/SystemSharedMemoryStatus",     bd_rpc_shm_status, NULL, 2, false, false },
    { "/inference.GRPCInferenceService/SystemSharedMemoryRegister",   bd_rpc_shm_register, NULL, 2, false, false },
    { "/inference.GRPCInferenceService/SystemSharedMemoryUnregister", bd_rpc_shm_unregister, NULL, 2, false, false },
    { "/inference.GRPCInferenceService/CudaSharedMemoryStatus",       bd_rpc_cuda_shm, NULL, 1, false, false },
    { "/inference.GRPCInferenceService/CudaSharedMemoryRegister",     bd_rpc_cuda_shm, NULL, 1, false, false },
    { "/inference.GRPCInferenceService/CudaSharedMemoryUnregister",   bd_rpc_cuda_shm, NULL, 1, false, false },
    { "/grpc.health.v1.Health/Check",                          bd_rpc_health_check, bd_rpc_health_check_fast, 4, false, false },
};
const size_t bd_rpc_n_methods = sizeof bd_rpc_methods / sizeof bd_rpc_methods[0];
