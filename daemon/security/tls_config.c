/* TLS credentials from PEM files (tls_config.h). */
#include "daemon/security/tls_config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "daemon/log.h"

#define MAX_PEM (1 << 20)

void bd_tls_files_grpc(const bd_daemon_config *cfg, bd_tls_files *out)
{
    out->cert = cfg->tls_cert_file;
    out->key = cfg->tls_key_file;
    out->client_ca = cfg->tls_client_ca_file;
}

void bd_tls_files_http(const bd_daemon_config *cfg, bd_tls_files *out)
{
    out->cert = cfg->http_tls_cert_file[0] ? cfg->http_tls_cert_file : cfg->tls_cert_file;
    out->key = cfg->http_tls_key_file[0] ? cfg->http_tls_key_file : cfg->tls_key_file;
    out->client_ca = cfg->http_tls_client_ca_file[0] ? cfg->http_tls_client_ca_file
                                                     : cfg->tls_client_ca_file;
    if (!strcmp(out->client_ca, "none"))
        out->client_ca = "";
}

bool bd_tls_files_enabled(const bd_tls_files *f)
{
    return f->cert[0] != '\0';
}

/* PATH's whole content, NUL-terminated (PEM is text). */
static int read_pem(const char *path, const char *flag, char **out, bd_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bd_error_set(err, BD_EIO, "--%s %s: %s", flag, path, strerror(errno));
    char *buf = malloc(MAX_PEM + 1);
    if (!buf) {
        fclose(f);
        return bd_error_set(err, BD_ENOMEM, "--%s %s: out of memory", flag, path);
    }
    size_t n = fread(buf, 1, MAX_PEM + 1, f);
    bool bad = ferror(f);
    fclose(f);
    if (bad || n == 0 || n > MAX_PEM) {
        free(buf);
        return bd_error_set(err, BD_EINVAL, "--%s %s: %s", flag, path,
                            bad ? "read error" : n == 0 ? "empty file" : "larger than 1 MiB");
    }
    buf[n] = '\0';
    if (!strstr(buf, "-----BEGIN ")) {
        free(buf);
        return bd_error_set(err, BD_EINVAL, "--%s %s: not a PEM file (no '-----BEGIN' line)", flag, path);
    }
    *out = buf;
    return 0;
}

static void free_pem(char *pem)
{
    if (pem)
        OPENSSL_cleanse(pem, strlen(pem));
    free(pem);
}

static const char *ssl_error(char *buf, size_t size)
{
    unsigned long e = ERR_get_error();
    if (!e)
        return "unknown OpenSSL error";
    ERR_error_string_n(e, buf, size);
    ERR_clear_error();
    return buf;
}

int bd_tls_http_context(const bd_tls_files *files, SSL_CTX **out, bd_error *err)
{
    char why[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return bd_error_set(err, BD_ENOMEM, "TLS: %s", ssl_error(why, sizeof why));
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                             SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                          SSL_MODE_RELEASE_BUFFERS);
    int rc = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, files->cert) != 1)
        rc = bd_error_set(err, BD_EINVAL, "TLS certificate %s: %s", files->cert,
                          ssl_error(why, sizeof why));
    else if (SSL_CTX_use_PrivateKey_file(ctx, files->key, SSL_FILETYPE_PEM) != 1)
        rc = bd_error_set(err, BD_EINVAL, "TLS key %s: %s", files->key, ssl_error(why, sizeof why));
    else if (SSL_CTX_check_private_key(ctx) != 1)
        rc = bd_error_set(err, BD_EINVAL, "TLS key %s does not match the certificate %s",
                          files->key, files->cert);
    else if (files->client_ca[0]) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(files->client_ca);
        if (SSL_CTX_load_verify_locations(ctx, files->client_ca, NULL) != 1 || !names) {
            sk_X509_NAME_pop_free(names, X509_NAME_free);
            rc = bd_error_set(err, BD_EINVAL, "TLS client CA file %s: %s", files->client_ca,
                              ssl_error(why, sizeof why));
        } else {
            SSL_CTX_set_client_CA_list(ctx, names);
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        }
    }
    if (rc) {
        SSL_CTX_free(ctx);
        return rc;
    }
    *out = ctx;
    return 0;
}

static void warn_key_mode(const char *path)
{
    struct stat st;
    if (path[0] && stat(path, &st) == 0 && (st.st_mode & 0004))
        bd_log(BD_LOG_WARN, NULL, NULL, "TLS key %s is readable by every user (mode %04o): "
               "chmod 600 it", path, (unsigned)(st.st_mode & 07777));
}

int bd_tls_config_check(const bd_daemon_config *cfg, bd_error *err)
{
    bd_tls_files g, h;
    bd_tls_files_grpc(cfg, &g);
    bd_tls_files_http(cfg, &h);
    if (!g.cert[0] != !g.key[0])
        return bd_error_set(err, BD_EINVAL, "--tls-cert-file and --tls-key-file go together "
                            "(one is set, the other not)");
    if (g.client_ca[0] && !g.cert[0])
        return bd_error_set(err, BD_EINVAL, "--tls-client-ca-file needs --tls-cert-file and "
                            "--tls-key-file (client certificates are checked inside TLS)");
    if (!h.cert[0] != !h.key[0])
        return bd_error_set(err, BD_EINVAL, "the HTTP port has a certificate without a key or a "
                            "key without a certificate (--http-tls-cert-file / --http-tls-key-file)");
    if (h.client_ca[0] && !h.cert[0])
        return bd_error_set(err, BD_EINVAL, "--http-tls-client-ca-file needs a certificate and a key "
                            "for the HTTP port");
    if (g.cert[0]) {
        /* OpenSSL reads what gRPC will (gRPC itself is not initialised yet) */
        SSL_CTX *ctx = NULL;
        char *pem = NULL;
        int rc = read_pem(g.cert, "tls-cert-file", &pem, err);
        free_pem(pem);
        if (!rc)
            rc = read_pem(g.key, "tls-key-file", &pem, err);
        free_pem(pem);
        if (!rc)
            rc = bd_tls_http_context(&g, &ctx, err);
        if (rc)
            return bd_error_prefix(err, "gRPC port: ");
        SSL_CTX_free(ctx);
        warn_key_mode(g.key);
    }
    if (h.cert[0] && cfg->http_address[0]) {
        SSL_CTX *ctx = NULL;
        int rc = bd_tls_http_context(&h, &ctx, err);
        if (rc)
            return bd_error_prefix(err, "HTTP port: ");
        SSL_CTX_free(ctx);
        if (strcmp(h.key, g.key))
            warn_key_mode(h.key);
    }
    return 0;
}

/* ---- reloadable gRPC credentials ------------------------------------------------------------ */

/* gRPC asks the fetcher for a certificate config at start and at every handshake; it answers
 * NEW once after each (re)load, UNCHANGED otherwise. gRPC's threads call it, SIGHUP's loads
 * run on the loop: the pending material is under LOCK. */
struct bd_tls_reloader {
    pthread_mutex_t lock;
    bd_tls_files    files;
    char            cert[4096], key[4096], ca[4096];   /* the paths FILES points at */
    char           *pem_cert, *pem_key, *pem_ca;     /* loaded, not yet taken by gRPC */
};

static void drop_pending(bd_tls_reloader *r)
{
    free_pem(r->pem_cert);
    free_pem(r->pem_key);
    free_pem(r->pem_ca);
    r->pem_cert = r->pem_key = r->pem_ca = NULL;
}

static grpc_ssl_certificate_config_reload_status fetch_config(void *arg,
                                                              grpc_ssl_server_certificate_config **config)
{
    bd_tls_reloader *r = arg;
    grpc_ssl_certificate_config_reload_status st = GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
    pthread_mutex_lock(&r->lock);
    if (r->pem_cert) {
        grpc_ssl_pem_key_cert_pair pair = { .private_key = r->pem_key, .cert_chain = r->pem_cert };
        /* gRPC 1.51 asserts that a fetched config has root certificates even when no client
         * certificate is asked for: then pass the server's own chain, which is never used
         * (no CertificateRequest is sent) */
        *config = grpc_ssl_server_certificate_config_create(r->pem_ca ? r->pem_ca : r->pem_cert,
                                                            &pair, 1);     /* copies */
        st = *config ? GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW : GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_FAIL;
        drop_pending(r);
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

int bd_tls_reloader_reload(bd_tls_reloader *r, bd_error *err)
{
    char *cert = NULL, *key = NULL, *ca = NULL;
    int rc = read_pem(r->files.cert, "tls-cert-file", &cert, err);
    if (!rc)
        rc = read_pem(r->files.key, "tls-key-file", &key, err);
    if (!rc && r->files.client_ca[0])
        rc = read_pem(r->files.client_ca, "tls-client-ca-file", &ca, err);
    if (!rc) {
        /* gRPC checks the PEM only when a handshake needs it: check here with OpenSSL, so a
         * wrong file is refused now instead of failing every connection */
        SSL_CTX *ctx = NULL;
        rc = bd_tls_http_context(&r->files, &ctx, err);
        SSL_CTX_free(ctx);
    }
    if (rc) {
        free_pem(cert);
        free_pem(key);
        free_pem(ca);
        return bd_error_prefix(err, "gRPC port: ");
    }
    pthread_mutex_lock(&r->lock);
    drop_pending(r);
    r->pem_cert = cert;
    r->pem_key = key;
    r->pem_ca = ca;
    pthread_mutex_unlock(&r->lock);
    return 0;
}

void bd_tls_reloader_destroy(bd_tls_reloader *r)
{
    if (!r)
        return;
    drop_pending(r);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

int bd_tls_grpc_credentials(const bd_daemon_config *cfg, grpc_server_credentials **out,
                            bd_tls_reloader **reloader, bd_error *err)
{
    bd_tls_files g;
    bd_tls_files_grpc(cfg, &g);
    *reloader = NULL;
    if (!g.cert[0]) {
        *out = grpc_insecure_server_credentials_create();
        return 0;
    }
    bd_tls_reloader *r = calloc(1, sizeof *r);
    if (!r)
        return bd_error_set(err, BD_ENOMEM, "gRPC TLS: out of memory");
    pthread_mutex_init(&r->lock, NULL);
    snprintf(r->cert, sizeof r->cert, "%s", g.cert);
    snprintf(r->key, sizeof r->key, "%s", g.key);
    snprintf(r->ca, sizeof r->ca, "%s", g.client_ca);
    r->files = (bd_tls_files){ r->cert, r->key, r->ca };
    int rc = bd_tls_reloader_reload(r, err);
    if (rc) {
        bd_tls_reloader_destroy(r);
        return rc;
    }
    grpc_ssl_server_credentials_options *opts =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(
            r->ca[0] ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                     : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
            fetch_config, r);
    *out = opts ? grpc_ssl_server_credentials_create_with_options(opts) : NULL;
    if (!*out) {
        bd_tls_reloader_destroy(r);
        return bd_error_set(err, BD_EINVAL, "gRPC TLS: cannot create credentials from %s and %s",
                            g.cert, g.key);
    }
    *reloader = r;
    return 0;
}
