/* TLS over memory BIOs (http_tls.h). */
#include "daemon/http/http_tls.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

struct bd_tls_conn {
    SSL  *ssl;
    BIO  *in;          /* ciphertext from the client; SSL reads it */
    BIO  *out;         /* ciphertext to the client; SSL writes it */
    bool  failed;
    char  why[160];
};

bd_tls_conn *bd_tls_conn_new(SSL_CTX *ctx)
{
    bd_tls_conn *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ssl = SSL_new(ctx);
    t->in = BIO_new(BIO_s_mem());
    t->out = BIO_new(BIO_s_mem());
    if (!t->ssl || !t->in || !t->out) {
        SSL_free(t->ssl);
        BIO_free(t->in);
        BIO_free(t->out);
        free(t);
        ERR_clear_error();
        return NULL;
    }
    /* an empty input BIO means "wait for more", not end of file */
    BIO_set_mem_eof_return(t->in, -1);
    SSL_set_bio(t->ssl, t->in, t->out);         /* SSL owns both BIOs now */
    SSL_set_accept_state(t->ssl);
    return t;
}

void bd_tls_conn_free(bd_tls_conn *t)
{
    if (!t)
        return;
    SSL_free(t->ssl);
    free(t);
}

int bd_tls_conn_put(bd_tls_conn *t, const char *data, size_t len)
{
    while (len > 0) {
        int chunk = len > INT_MAX ? INT_MAX : (int)len;
        int n = BIO_write(t->in, data, chunk);
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void note_failure(bd_tls_conn *t)
{
    t->failed = true;
    unsigned long e = ERR_peek_error();
    if (e && !t->why[0])
        ERR_error_string_n(e, t->why, sizeof t->why);
    ERR_clear_error();
}

ssize_t bd_tls_conn_read(bd_tls_conn *t, char *buf, size_t cap)
{
    if (t->failed)
        return BD_TLS_FAILED;
    int n = SSL_read(t->ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
    if (n > 0)
        return n;
    switch (SSL_get_error(t->ssl, n)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        return 0;
    case SSL_ERROR_ZERO_RETURN:
        return BD_TLS_CLOSED;
    default:
        note_failure(t);
        return BD_TLS_FAILED;
    }
}

int bd_tls_conn_write(bd_tls_conn *t, const char *data, size_t len)
{
    if (t->failed)
        return -1;
    while (len > 0) {
        int chunk = len > INT_MAX ? INT_MAX : (int)len;
        int n = SSL_write(t->ssl, data, chunk);   /* the memory BIO grows: never WANT_WRITE */
        if (n <= 0) {
            note_failure(t);
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

void bd_tls_conn_shutdown(bd_tls_conn *t)
{
    if (!t->failed && SSL_is_init_finished(t->ssl))
        SSL_shutdown(t->ssl);
    ERR_clear_error();
}

int bd_tls_conn_take(bd_tls_conn *t, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t n = BIO_ctrl_pending(t->out);
    if (n == 0)
        return 0;
    char *buf = malloc(n);
    if (!buf)
        return -1;
    int got = BIO_read(t->out, buf, (int)n);
    if (got <= 0) {
        free(buf);
        return 0;
    }
    *out = buf;
    *len = (size_t)got;
    return 0;
}

const char *bd_tls_conn_error(bd_tls_conn *t)
{
    return t->why;
}
