/* A blocking HTTP/1.1 test client (http_parser in response mode) for the status-endpoint
 * tests. Every socket call has a receive timeout, so a broken server fails a test instead of
 * hanging it. */
#ifndef BD_TESTS_DAEMON_HTTP_HTTP_CLIENT_H
#define BD_TESTS_DAEMON_HTTP_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <http_parser.h>

typedef struct tc_response {
    int    status;
    char   content_type[128];
    char   connection[32];     /* the Connection header, lower-cased */
    char   allow[128];
    long   content_length;     /* -1 if absent */
    char  *body;               /* NUL-terminated; free with tc_response_free */
    size_t len;
} tc_response;

typedef struct tc_conn {
    int         fd;
    http_parser parser;
    bool        head, done;
    char        hdr[64];       /* the header field being parsed */
    tc_response *cur;
    char        buf[65536];    /* received, not yet parsed */
    size_t      off, len;
} tc_conn;

/* Connect to 127.0.0.1:PORT with a receive timeout of TIMEOUT_MS. 0 or -1. */
int  tc_connect(tc_conn *c, int port, int timeout_ms);
/* The same from the local address SOURCE ("127.0.0.2": any 127/8 address works on Linux
 * loopback), so a test can be several clients; NULL = the kernel's choice. */
int  tc_connect_from(tc_conn *c, const char *source, int port, int timeout_ms);
/* A bare connected socket from SOURCE (NULL = any) with the same timeouts; -1 on failure. */
int  tc_socket_from(const char *source, int port, int timeout_ms);
void tc_close(tc_conn *c);
/* Send all of DATA. 0 or -1. */
int  tc_send(tc_conn *c, const char *data, size_t len);
/* Read the next response (HEAD: the request was HEAD, so no body follows). 0, or -1 on
 * EOF / timeout / malformed response. */
int  tc_read(tc_conn *c, bool head, tc_response *out);
void tc_response_free(tc_response *r);
/* Wait up to TIMEOUT_MS for the server to close: 1 if EOF (or reset) came, 0 if not. Data
 * that arrives meanwhile is discarded. */
int  tc_wait_closed(tc_conn *c, int timeout_ms);
/* One request on a fresh connection: "GET PATH HTTP/1.1" with Connection: close. */
int  tc_get(int port, const char *method, const char *path, tc_response *out);

#endif
