/* The one place where braid's error codes become gRPC status codes (docs/protocol.md, "What
 * bad input gets"). Every RPC handler answers through these; nothing else maps codes. Any
 * thread. */
#ifndef BD_DAEMON_GRPC_STATUS_MAP_H
#define BD_DAEMON_GRPC_STATUS_MAP_H

#include <grpc/status.h>

#include "daemon/stats/metrics.h"

/* The gRPC status for a BD_E* CODE (0 -> OK):
 *   BD_ENOTFOUND -> NOT_FOUND          BD_EUNAVAIL   -> UNAVAILABLE
 *   BD_EINVAL    -> INVALID_ARGUMENT   BD_EBUSY      -> RESOURCE_EXHAUSTED
 *   BD_ETIMEDOUT -> DEADLINE_EXCEEDED  BD_ECANCELLED -> CANCELLED
 *   anything else (BD_EMODEL, BD_EUNSUPPORTED, BD_EIO, BD_EBACKEND, BD_ENOMEM) -> INTERNAL:
 *   the model or the server failed, not the request. */
grpc_status_code bd_status_to_grpc(int code);
/* The failure-reason counter a failed inference with CODE is recorded under. */
bd_fail_reason   bd_status_fail_reason(int code);

#endif
