/* Triton's system shared memory extension over gRPC: SystemSharedMemoryStatus / Register /
 * Unregister (shm_region.h does the work), and CudaSharedMemory*, which braid (CPU only)
 * answers UNIMPLEMENTED with a message saying so. With braidd started without
 * --allow-shared-memory every call answers UNIMPLEMENTED (as Triton without
 * --allow-client-shm) saying how to enable it.
 * Loop thread. */
#include <stdlib.h>
#include <string.h>

#include "proto/inference.pb.h"
#include "daemon/grpc/rpc.h"
#include "daemon/infer/shm_region.h"

/* Answer ERR: a disabled extension is UNIMPLEMENTED (Triton's code for it), the rest as
 * status_map.h says (a name taken: ALREADY_EXISTS, as Triton). */
static void fail(bd_call *c, const bd_error *err)
{
    if (err->code == BD_EUNSUPPORTED)
        bd_call_fail_status(c, GRPC_STATUS_UNIMPLEMENTED, err->msg);
    else
        bd_call_fail(c, err->code, err->msg);
}

void bd_rpc_shm_status(bd_call *c)
{
    inference_SystemSharedMemoryStatusRequest *req =
        BD_CALL_DECODE(c, inference_SystemSharedMemoryStatusRequest, "SystemSharedMemoryStatusRequest");
    if (!req)
        return;
    bd_error err = {0};
    bd_shm_info *info = NULL;
    size_t n = 0;
    if (bd_shm_status(req->name ? req->name : "", &info, &n, &err) != 0)
        return fail(c, &err);
    inference_SystemSharedMemoryStatusResponse_RegionsEntry *e = calloc(n ? n : 1, sizeof *e);
    if (!e) {
        free(info);
        return bd_call_fail(c, BD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        e[i].key = info[i].name;
        e[i].has_value = true;
        e[i].value.name = info[i].name;
        e[i].value.key = info[i].key;
        e[i].value.offset = info[i].offset;
        e[i].value.byte_size = info[i].byte_size;
    }
    inference_SystemSharedMemoryStatusResponse rsp = { .regions_count = (pb_size_t)n, .regions = e };
    bd_call_reply(c, inference_SystemSharedMemoryStatusResponse_fields, &rsp);
    free(e);
    free(info);
}

void bd_rpc_shm_register(bd_call *c)
{
    inference_SystemSharedMemoryRegisterRequest *req =
        BD_CALL_DECODE(c, inference_SystemSharedMemoryRegisterRequest, "SystemSharedMemoryRegisterRequest");
    if (!req)
        return;
    bd_error err = {0};
    if (bd_shm_register(req->name ? req->name : "", req->key ? req->key : "", req->offset,
                        req->byte_size, &err) != 0)
        return fail(c, &err);
    inference_SystemSharedMemoryRegisterResponse rsp = {0};
    bd_call_reply(c, inference_SystemSharedMemoryRegisterResponse_fields, &rsp);
}

void bd_rpc_shm_unregister(bd_call *c)
{
    inference_SystemSharedMemoryUnregisterRequest *req =
        BD_CALL_DECODE(c, inference_SystemSharedMemoryUnregisterRequest,
                       "SystemSharedMemoryUnregisterRequest");
    if (!req)
        return;
    bd_error err = {0};
    if (bd_shm_unregister(req->name ? req->name : "", &err) != 0)
        return fail(c, &err);
    inference_SystemSharedMemoryUnregisterResponse rsp = {0};
    bd_call_reply(c, inference_SystemSharedMemoryUnregisterResponse_fields, &rsp);
}

void bd_rpc_cuda_shm(bd_call *c)
{
    bd_call_fail_status(c, GRPC_STATUS_UNIMPLEMENTED, "CUDA shared memory is not supported: braid "
                        "runs on CPUs; use system shared memory (SystemSharedMemoryRegister, "
                        "braidd --allow-shared-memory)");
}
