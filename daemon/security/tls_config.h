/* TLS for braidd's two ports, from the configuration's PEM files (docs/security.md).
 *
 *   gRPC   gRPC C-core's own TLS (grpc_ssl_server_credentials_create_ex): TLS 1.2+, with
 *          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY when a client CA file
 *          is given (mTLS), else no client certificate is asked for.
 *   HTTP   an OpenSSL SSL_CTX (TLS 1.2+) that http_server.c drives through memory BIOs;
 *          SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT with a client CA file.
 *
 * Both re-read their files on SIGHUP (bd_tls_reloader_reload; a new SSL_CTX for HTTP):
 * connections opened afterwards get the new certificate.
 *
 * The HTTP port takes the http_tls_* files when set, else the shared tls_* ones;
 * http_tls_client_ca_file "none" turns client certificates off on HTTP only (so that
 * Kubernetes' HTTPS probes, which present none, still reach the health paths). */
#ifndef BD_DAEMON_SECURITY_TLS_CONFIG_H
#define BD_DAEMON_SECURITY_TLS_CONFIG_H

#include <stdbool.h>

#include <grpc/grpc_security.h>
#include <openssl/ssl.h>

#include "daemon/config.h"
#include "core/error.h"

/* The files the gRPC / HTTP port uses (pointers into CFG; "" when none). */
typedef struct bd_tls_files {
    const char *cert, *key, *client_ca;
} bd_tls_files;

void bd_tls_files_grpc(const bd_daemon_config *cfg, bd_tls_files *out);
void bd_tls_files_http(const bd_daemon_config *cfg, bd_tls_files *out);
/* True when F turns TLS on (a certificate is given). */
bool bd_tls_files_enabled(const bd_tls_files *f);

/* Check that a certificate comes with its key and the files exist and parse, before any port
 * is bound. BD_EINVAL / BD_EIO naming the flag and the file. */
int  bd_tls_config_check(const bd_daemon_config *cfg, bd_error *err);

/* Re-reads the gRPC port's PEM files (SIGHUP): new connections get them, open ones keep
 * theirs. Thread-safe against gRPC's handshakes. */
typedef struct bd_tls_reloader bd_tls_reloader;

/* gRPC server credentials for CFG: TLS when configured, with *RELOADER set (it must outlive
 * the credentials and every server using them: destroy it after grpc_server_destroy); else
 * insecure ones and *RELOADER = NULL. The caller releases the credentials with
 * grpc_server_credentials_release. */
int  bd_tls_grpc_credentials(const bd_daemon_config *cfg, grpc_server_credentials **out,
                             bd_tls_reloader **reloader, bd_error *err);
/* Read the files again and check them; on failure the certificate in use stays and ERR
 * says why. */
int  bd_tls_reloader_reload (bd_tls_reloader *r, bd_error *err);
void bd_tls_reloader_destroy(bd_tls_reloader *r);                  /* NULL is allowed */
/* An SSL_CTX for FILES (which must be enabled). Free with SSL_CTX_free. */
int  bd_tls_http_context(const bd_tls_files *files, SSL_CTX **out, bd_error *err);

#endif
