/* The RPC handlers, one per served method (rpc.c's method table; server.c routes to them).
 *
 * Each runs on the loop thread with a received call, decodes its request with
 * bd_call_decode and answers exactly once with bd_call_reply / bd_call_fail — at once for
 * the cheap RPCs, from a worker (ModelInfer) or a registry callback (load/unload) otherwise.
 * ModelInfer and the cheap reads (liveness, readiness, metadata) also have a fast handler
 * the cq thread runs first (server.h); it passes the call on to the loop handler when only
 * the registry can answer.
 * Status codes follow docs/protocol.md through status_map.h. */
#ifndef BD_DAEMON_GRPC_RPC_H
#define BD_DAEMON_GRPC_RPC_H

#include "daemon/grpc/server.h"

/* rpc_health.c (each *_fast: the cq thread, from the server's ready flag and the
 * served-version table; false = the loop handler answers) */
void bd_rpc_server_live(bd_call *c);        /* always live while the process serves */
bool bd_rpc_server_live_fast(bd_call *c);
void bd_rpc_server_ready(bd_call *c);       /* bd_registry_ready() and not shutting down */
bool bd_rpc_server_ready_fast(bd_call *c);
void bd_rpc_model_ready(bd_call *c);        /* the model (version) is READY */
bool bd_rpc_model_ready_fast(bd_call *c);
void bd_rpc_health_check(bd_call *c);       /* grpc.health.v1: "" or a service/model name */
bool bd_rpc_health_check_fast(bd_call *c);

/* rpc_metadata.c */
void bd_rpc_server_metadata(bd_call *c);    /* name "braid", version, extensions */
bool bd_rpc_server_metadata_fast(bd_call *c);
void bd_rpc_model_metadata(bd_call *c);     /* inputs/outputs with datatype strings, -1 dims */
bool bd_rpc_model_metadata_fast(bd_call *c);   /* from the served-version table */
void bd_rpc_model_config(bd_call *c);       /* Triton ModelConfig subset */

/* rpc_infer.c */
/* cq thread: decode, find the model in the served-version table, validate, then run on the
 * worker pool (or at once, for a model that takes microseconds while none of its requests
 * is queued or running); false when the loop must look the model up. */
bool bd_rpc_model_infer_fast(bd_call *c);
void bd_rpc_model_infer(bd_call *c);        /* loop: the same, after a registry lookup */

/* rpc_stream.c: ModelStreamInfer. The fast handler starts the stream (cq thread); each
 * request runs as a local ModelInfer call. The loop handler only refuses local calls. */
bool bd_rpc_model_stream_infer(bd_call *c);
void bd_rpc_model_stream_infer_loop(bd_call *c);

/* rpc_repository.c */
void bd_rpc_repository_index(bd_call *c);
void bd_rpc_repository_load(bd_call *c);
void bd_rpc_repository_unload(bd_call *c);

/* rpc_statistics.c */
void bd_rpc_model_statistics(bd_call *c);

/* rpc_shm.c: Triton's system shared memory extension (shm_region.h); UNIMPLEMENTED saying
 * how to enable it while braidd runs without --allow-shared-memory. CUDA: UNIMPLEMENTED. */
void bd_rpc_shm_status(bd_call *c);
void bd_rpc_shm_register(bd_call *c);
void bd_rpc_shm_unregister(bd_call *c);
void bd_rpc_cuda_shm(bd_call *c);

/* rpc.c: every method braidd serves, for bd_server_start. */
extern const bd_rpc_method bd_rpc_methods[];
extern const size_t        bd_rpc_n_methods;

#endif
