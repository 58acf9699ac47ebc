/* TLS credentials from PEM files (tls_config.h). */
#include "tls_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "log.h"

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

int bd_tls_grpc_credentials(const bd_daemon_config *cfg, grpc_server_credentials **out,
                            bd_error *err)
{
    bd_tls_files g;
    bd_tls_files_grpc(cfg, &g);
    if (!g.cert[0]) {
        *out = grpc_insecure_server_credentials_create();
        return 0;
    }
    char *cert = NULL, *key = NULL, *ca = NULL;
    int rc = read_pem(g.cert, "tls-cert-file", &cert, err);
    if (!rc)
        rc = read_pem(g.key, "tls-key-file", &key, err);
    if (!rc && g.client_ca[0])
        rc = read_pem(g.client_ca, "tls-client-ca-file", &ca, err);
    if (!rc) {
        /* gRPC checks the PEM only when a handshake needs it: check here with OpenSSL, so a
         * wrong file stops the start instead of every connection */
        bd_tls_files only = { g.cert, g.key, g.client_ca };
        SSL_CTX *ctx = NULL;
        rc = bd_tls_http_context(&only, &ctx, err);
        if (rc)
            bd_error_prefix(err, "gRPC port: ");
        SSL_CTX_free(ctx);
    }
    if (!rc) {
        grpc_ssl_pem_key_cert_pair pair = { .private_key = key, .cert_chain = cert };
        *out = grpc_ssl_server_credentials_create_ex(
            ca, &pair, 1,
            ca ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
               : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE, NULL);
        if (!*out)
            rc = bd_error_set(err, BD_EINVAL, "gRPC TLS: cannot create credentials from %s and %s",
                              g.cert, g.key);
    }
    free_pem(cert);
    free_pem(key);
    free_pem(ca);
    return rc;
}
