/* One server-side TLS session over memory BIOs, for http_server.c's libuv connections.
 *
 * Why OpenSSL with memory BIOs: libuv owns the socket and its event loop, so TLS cannot own
 * the file descriptor (as SSL_set_fd would). Ciphertext read from the socket goes in
 * (bd_tls_conn_put), plaintext comes out (bd_tls_conn_read) for the HTTP parser; responses go
 * in as plaintext (bd_tls_conn_write) and the ciphertext to send is taken out
 * (bd_tls_conn_take) and handed to uv_write. OpenSSL is Debian's best-kept TLS library and
 * already on every host gRPC runs on; GnuTLS would do the same job with more glue.
 *
 * Not thread-safe: one connection, the loop thread. */
#ifndef BD_DAEMON_HTTP_HTTP_TLS_H
#define BD_DAEMON_HTTP_HTTP_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include <openssl/ssl.h>

typedef struct bd_tls_conn bd_tls_conn;

/* A session accepting a handshake under CTX; NULL when out of memory. */
bd_tls_conn *bd_tls_conn_new (SSL_CTX *ctx);
void         bd_tls_conn_free(bd_tls_conn *t);                 /* NULL is allowed */

/* Hand LEN ciphertext bytes received from the client. 0, or -1 when out of memory. */
int     bd_tls_conn_put (bd_tls_conn *t, const char *data, size_t len);
/* Decrypt into BUF: the number of plaintext bytes (> 0); 0 when more input is needed (the
 * handshake may have progressed: take its output); BD_TLS_CLOSED when the client sent
 * close_notify; BD_TLS_FAILED on a failed handshake or a bad record (take the alert, then
 * close). */
#define BD_TLS_CLOSED (-2)
#define BD_TLS_FAILED (-1)
ssize_t bd_tls_conn_read(bd_tls_conn *t, char *buf, size_t cap);
/* Encrypt LEN plaintext bytes. 0, or -1 when the session cannot send (failed, closed). */
int     bd_tls_conn_write(bd_tls_conn *t, const char *data, size_t len);
/* Queue a close_notify alert. */
void    bd_tls_conn_shutdown(bd_tls_conn *t);
/* Move the ciphertext waiting to be sent into a malloc'ed buffer (*OUT, *LEN); *OUT is
 * NULL when nothing waits. 0, or -1 when out of memory. */
int     bd_tls_conn_take(bd_tls_conn *t, char **out, size_t *len);
/* Why the handshake failed, for the debug log ("" if unknown). */
const char *bd_tls_conn_error(bd_tls_conn *t);

#endif
