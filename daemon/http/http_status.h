/* The HTTP status endpoint on the libuv loop: Node's http_parser over uv_tcp.
 *
 *   GET /metrics           Prometheus text exposition (metrics.h counters and histograms,
 *                          per model; loaded models; process memory)
 *   GET /v2/health/live    200 while the process runs
 *   GET /v2/health/ready   200 when bd_registry_ready(), else 503
 *   GET /v2/status         JSON (cJSON): server, every model/version with state, reason,
 *                          partition summary, queue depth, counters
 * Anything else: 404; methods other than GET/HEAD: 405. Loop thread only. */
#ifndef BD_DAEMON_HTTP_HTTP_STATUS_H
#define BD_DAEMON_HTTP_HTTP_STATUS_H

#include <uv.h>

#include <openssl/ssl.h>

#include "daemon/security/auth.h"
#include "core/error.h"
#include "daemon/registry/registry.h"

typedef struct bd_http bd_http;

/* Listen on ADDRESS ("127.0.0.1:8002"; port 0 picks a free one) serving REG's state. */
int  bd_http_start(uv_loop_t *loop, const char *address, bd_registry *reg, bd_http **out,
                   bd_error *err);
/* Protect the port: TLS with TLS (NULL = plaintext; a reference is taken) and bearer tokens
 * from AUTH (NULL = none; must outlive H): the health paths stay open, every other path needs
 * the inference role. Call right after bd_http_start. */
void bd_http_set_security(bd_http *h, SSL_CTX *tls, bd_auth *auth);
/* The port actually bound. */
int  bd_http_port(const bd_http *h);
/* Stop listening, close open connections; DONE(ARG) runs once every handle is closed. */
void bd_http_close(bd_http *h, void (*done)(void *arg), void *arg);

#endif
