/* BD_E* -> gRPC status: docs/protocol.md's "What bad input gets" table, in one switch. */
#include "daemon/grpc/status_map.h"

#include "core/error.h"

grpc_status_code bd_status_to_grpc(int code)
{
    switch (code) {
    case BD_OK:         return GRPC_STATUS_OK;
    case BD_EINVAL:     return GRPC_STATUS_INVALID_ARGUMENT;
    case BD_ENOTFOUND:  return GRPC_STATUS_NOT_FOUND;
    case BD_EUNAVAIL:   return GRPC_STATUS_UNAVAILABLE;
    case BD_EEXIST:     return GRPC_STATUS_ALREADY_EXISTS;
    case BD_EBUSY:      return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case BD_ETIMEDOUT:  return GRPC_STATUS_DEADLINE_EXCEEDED;
    case BD_ECANCELLED: return GRPC_STATUS_CANCELLED;
    /* A model that fails to import/plan/run, an I/O or allocation failure, a backend
     * error: the server's problem, not the request's. */
    case BD_EMODEL:
    case BD_EUNSUPPORTED:
    case BD_ENOMEM:
    case BD_EIO:
    case BD_EBACKEND:
    default:            return GRPC_STATUS_INTERNAL;
    }
}

bd_fail_reason bd_status_fail_reason(int code)
{
    switch (code) {
    case BD_EINVAL:     return BD_FAIL_INVALID;
    case BD_ENOTFOUND:  return BD_FAIL_NOT_FOUND;
    case BD_EUNAVAIL:   return BD_FAIL_UNAVAILABLE;
    case BD_EBUSY:      return BD_FAIL_QUEUE_FULL;
    case BD_ETIMEDOUT:  return BD_FAIL_DEADLINE;
    case BD_ECANCELLED: return BD_FAIL_CANCELLED;
    default:            return BD_FAIL_INTERNAL;
    }
}
