/* A decoded ModelInferRequest as the neutral request both ports hand to the one ModelInfer
 * handler (daemon/infer/infer_request.h): names, shapes and tensor bytes stay views into the
 * decoded message; only the gRPC syntax is read here (which raw_input_contents entry belongs
 * to which input, the InferParameter maps, the typed contents fields). What the values mean
 * is checked by the binding (infer_bind.h). Pure: tests/fuzz/fuzz_infer.c runs it.
 *
 * raw_input_contents holds one entry per input NOT in shared memory, in the order of
 * 'inputs' (what tritonclient sends). Parameters read: per input the shared_memory_* ones;
 * per requested output those, "classification" and "binary_data" (accepted: gRPC answers in
 * raw bytes anyway), any other refused by name so a client never believes an extension
 * braid does not have took effect; per request "priority" and "timeout" (for a batching
 * model, which alone refuses them malformed). */
#ifndef BD_DAEMON_GRPC_RPC_INFER_REQUEST_H
#define BD_DAEMON_GRPC_RPC_INFER_REQUEST_H

#include "core/error.h"
#include "daemon/infer/infer_request.h"
#include "proto/inference.pb.h"

/* Fill OUT (zeroed) from MSG, which must outlive it. BD_EINVAL naming the tensor and the
 * parameter, BD_ENOMEM; OUT must be freed with bd_infer_request_free either way. */
int bd_rpc_infer_request(bd_infer_request *out, const inference_ModelInferRequest *msg,
                         bd_error *err);

#endif
