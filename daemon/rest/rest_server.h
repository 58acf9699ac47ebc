/* braidd's HTTP/REST inference port: the KServe v2 (Open Inference Protocol) REST API with
 * Triton's extensions, on its own address (rest_address, Triton's HTTP port 8000).
 *
 *   GET  /v2/health/live | /v2/health/ready             200, or 503 when not ready
 *   GET  /v2                                             server metadata
 *   GET  /v2/models/NAME[/versions/V][/ready]            model metadata / readiness
 *   GET  /v2/models/NAME[/versions/V]/config             Triton's model config JSON
 *   POST /v2/models/NAME[/versions/V]/infer              JSON tensors and binary data
 *   GET  /v2/models[/NAME[/versions/V]]/stats            Triton's statistics JSON
 *   POST /v2/repository/index                            the repository's models
 *   POST /v2/repository/models/NAME/load | unload        with base64 file uploads
 *
 * The path is routed once (rest_route.h: canonical paths only) and the token checked against
 * the role of the operation it routes to (operation.h). Each request becomes the gRPC
 * method's own request message (an inference: the neutral request) and is handed to the same
 * handler through the dispatch (dispatch.h): one code path, one scheduler, one set of limits
 * and statistics for both transports; models run on the workers, never on the loop. Errors are
 * {"error": "..."} with Triton's HTTP codes (400 bad request, 404 unknown model or path,
 * 503 unavailable...). The HTTP layer (http_server.c) bounds the connection: body size
 * (max_message_bytes), head size, connections, slow clients. Loop thread. */
#ifndef BD_DAEMON_REST_REST_SERVER_H
#define BD_DAEMON_REST_REST_SERVER_H

#include <uv.h>

#include "daemon/config.h"
#include "daemon/http/http_server.h"
#include "daemon/dispatch/dispatch.h"
#include "daemon/registry/registry.h"

typedef struct bd_rest bd_rest;

/* Listen on CFG->rest_address and run every operation through DISPATCH. CFG, DISPATCH and
 * REG must outlive the REST server. On failure a negative BD_E* code with ERR saying why. */
int  bd_rest_start(uv_loop_t *loop, const bd_daemon_config *cfg, const bd_dispatch *dispatch,
                   bd_registry *reg, bd_rest **out, bd_error *err);
int  bd_rest_port(const bd_rest *r);
/* TLS (NULL = plaintext; a reference is taken) and tokens (NULL = none): inference for
 * everything but health (open) and load/unload (admin). Before the loop runs again. */
void bd_rest_set_security(bd_rest *r, SSL_CTX *tls, bd_auth *auth);
/* Close the port and every connection; answers still being computed are dropped when they
 * come. DONE(ARG) runs once everything is freed. */
void bd_rest_close(bd_rest *r, void (*done)(void *arg), void *arg);

#endif
