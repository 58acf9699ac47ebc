/* braidd's security at the daemon level (docs/security.md): what main.c calls.
 *
 *   before binding   bd_security_check: the model control mode is known, the token file and
 *                    the TLS files load, and no port is exposed unprotected (bind_policy.h).
 *   after binding    bd_security_protect_http: TLS and the server's tokens on the HTTP port.
 *   SIGHUP           bd_security_reload: the token file and the certificate files again; on
 *                    a failure what is in force stays, and the log says why.
 *
 * Loop thread only. */
#ifndef BD_DAEMON_SECURITY_H
#define BD_DAEMON_SECURITY_H

#include "daemon/config.h"
#include "daemon/http/http_status.h"
#include "daemon/rest/rest_server.h"
#include "core/error.h"
#include "daemon/grpc/server.h"

/* Check CFG before anything binds (it may set load_all_at_start for the none and poll
 * modes). BD_E* with a message naming the flag and the fix. */
int  bd_security_check       (bd_daemon_config *cfg, bd_error *err);
/* Put TLS (CFG's HTTP files) and SRV's tokens on HTTP. */
int  bd_security_protect_http(const bd_daemon_config *cfg, bd_server *srv, bd_http *http,
                              bd_error *err);
/* SIGHUP: re-read the token file and the certificate files (HTTP may be NULL). */
void bd_security_reload      (const bd_daemon_config *cfg, bd_server *srv, bd_http *http,
                              bd_rest *rest);
/* TLS (the HTTP port's files) and the server's tokens on the REST port (rest_server.h). */
int  bd_security_protect_rest(const bd_daemon_config *cfg, bd_server *srv, bd_rest *rest,
                              bd_error *err);
/* One log line on what protects the ports. */
void bd_security_log         (const bd_daemon_config *cfg, bd_server *srv);

#endif
