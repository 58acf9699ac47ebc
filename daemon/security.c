/* The daemon-level security steps (security.h). */
#include "daemon/security.h"

#include "daemon/security/auth.h"
#include "daemon/security/bind_policy.h"
#include "daemon/log.h"
#include "daemon/security/tls_config.h"

int bd_security_check(bd_daemon_config *cfg, bd_error *err)
{
    int mode = bd_config_model_control(cfg);
    if (mode < 0)
        return bd_error_set(err, BD_EINVAL, "--model-control-mode: expected explicit, poll or none, "
                            "got '%s'", cfg->model_control_mode);
    if (mode != BD_MODEL_CONTROL_EXPLICIT)
        cfg->load_all_at_start = true;      /* Triton's none and poll load everything at start */
    if (cfg->auth_token_file[0]) {          /* the server loads it again; fail before binding */
        bd_auth *probe = NULL;
        int rc = bd_auth_load(cfg->auth_token_file, &probe, err);
        bd_auth_destroy(probe);
        if (rc)
            return rc;
    }
    int rc = bd_tls_config_check(cfg, err);
    if (!rc)
        rc = bd_bind_policy_check(cfg, err);
    return rc;
}

int bd_security_protect_http(const bd_daemon_config *cfg, bd_server *srv, bd_http *http,
                             bd_error *err)
{
    bd_tls_files files;
    bd_tls_files_http(cfg, &files);
    SSL_CTX *ctx = NULL;
    if (bd_tls_files_enabled(&files) && bd_tls_http_context(&files, &ctx, err) != 0)
        return bd_error_prefix(err, "HTTP port: ");
    bd_http_set_security(http, ctx, bd_server_auth(srv));
    SSL_CTX_free(ctx);                      /* the server keeps its reference */
    return 0;
}

int bd_security_protect_rest(const bd_daemon_config *cfg, bd_server *srv, bd_rest *rest,
                             bd_error *err)
{
    bd_tls_files files;
    bd_tls_files_http(cfg, &files);
    SSL_CTX *ctx = NULL;
    if (bd_tls_files_enabled(&files) && bd_tls_http_context(&files, &ctx, err) != 0)
        return bd_error_prefix(err, "REST port: ");
    bd_rest_set_security(rest, ctx, bd_server_auth(srv));
    SSL_CTX_free(ctx);                      /* the server keeps its reference */
    return 0;
}

static void reload_tokens(bd_auth *auth)
{
    bd_error err = {0};
    size_t ni = 0, na = 0;
    if (bd_auth_reload(auth, &err) != 0) {
        bd_log(BD_LOG_ERROR, NULL, NULL, "SIGHUP: token file not reloaded, the previous tokens stay: %s",
               err.msg);
        return;
    }
    bd_auth_count(auth, &ni, &na);
    bd_log(BD_LOG_INFO, NULL, NULL, "SIGHUP: token file reloaded (%zu inference, %zu admin token(s))",
           ni, na);
}

void bd_security_reload(const bd_daemon_config *cfg, bd_server *srv, bd_http *http,
                        bd_rest *rest)
{
    bd_auth *auth = bd_server_auth(srv);
    if (auth)
        reload_tokens(auth);
    bd_error err = {0};
    if (cfg->tls_cert_file[0]) {
        if (bd_server_reload_tls(srv, &err) != 0)
            bd_log(BD_LOG_ERROR, NULL, NULL, "SIGHUP: TLS files not reloaded, the previous "
                   "certificate stays: %s", err.msg);
        else
            bd_log(BD_LOG_INFO, NULL, NULL, "SIGHUP: gRPC TLS certificate reloaded");
    }
    bd_tls_files files;
    bd_tls_files_http(cfg, &files);
    if ((http || rest) && bd_tls_files_enabled(&files)) {
        /* one context for the status and REST ports, which share the HTTP TLS files */
        SSL_CTX *ctx = NULL;
        if (bd_tls_http_context(&files, &ctx, &err) != 0) {
            bd_log(BD_LOG_ERROR, NULL, NULL, "SIGHUP: TLS files not reloaded, the previous "
                   "certificate stays: HTTP port: %s", err.msg);
            return;
        }
        if (http)
            bd_http_set_security(http, ctx, bd_server_auth(srv));
        if (rest)
            bd_rest_set_security(rest, ctx, bd_server_auth(srv));
        SSL_CTX_free(ctx);                  /* the servers keep their references */
        bd_log(BD_LOG_INFO, NULL, NULL, "SIGHUP: HTTP TLS certificate reloaded%s",
               rest ? " (status and REST ports)" : "");
    }
}

void bd_security_log(const bd_daemon_config *cfg, bd_server *srv)
{
    bd_tls_files h;
    bd_tls_files_http(cfg, &h);
    bd_auth *auth = bd_server_auth(srv);
    size_t ni = 0, na = 0;
    if (auth)
        bd_auth_count(auth, &ni, &na);
    bd_log(BD_LOG_INFO, NULL, NULL, "gRPC %s, HTTP %s; %s; model control mode %s",
           cfg->tls_cert_file[0] ? (cfg->tls_client_ca_file[0] ? "mutual TLS" : "TLS") : "plaintext",
           !cfg->http_address[0] ? "off"
           : bd_tls_files_enabled(&h) ? (h.client_ca[0] ? "mutual TLS" : "TLS") : "plaintext",
           auth ? "bearer tokens required except for health probes" : "no tokens",
           cfg->model_control_mode);
    if (auth)
        bd_log(BD_LOG_INFO, NULL, NULL, "tokens: %zu inference, %zu admin", ni, na);
}
