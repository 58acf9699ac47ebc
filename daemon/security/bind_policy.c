/* The bind policy (bind_policy.h). */
#include "daemon/security/bind_policy.h"

#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/log.h"
#include "daemon/security/tls_config.h"

static bool sockaddr_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return true;
        if (IN6_IS_ADDR_V4MAPPED(a))
            return a->s6_addr[12] == 127;
    }
    return false;
}

bool bd_address_is_loopback(const char *address)
{
    const char *colon = address ? strrchr(address, ':') : NULL;
    if (!colon)
        return false;
    char host[256];
    size_t hl = (size_t)(colon - address);
    if (hl == 0 || hl >= sizeof host)
        return false;                     /* ":8001" is every interface */
    memcpy(host, address, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return false;
    bool all = true;
    for (struct addrinfo *ai = res; ai && all; ai = ai->ai_next)
        all = sockaddr_loopback(ai->ai_addr);
    freeaddrinfo(res);
    return all;
}

static int check_port(const char *what, const char *address, bool tls, bool tokens,
                      bool allow, bd_error *err)
{
    if (!address[0] || bd_address_is_loopback(address) || (tls && tokens))
        return 0;
    const char *missing = !tls && !tokens ? "TLS and a token file" : !tls ? "TLS" : "a token file";
    if (!allow)
        return bd_error_set(err, BD_EINVAL, "refusing to listen on %s (%s port, not loopback) without "
                            "%s: set --tls-cert-file/--tls-key-file and --auth-token-file "
                            "(docs/security.md), or --allow-insecure-bind if a trusted network or "
                            "proxy protects it", address, what, missing);
    bd_log(BD_LOG_WARN, NULL, NULL, "INSECURE: the %s port listens on %s (not loopback) without %s "
           "because of --allow-insecure-bind: anyone who can reach it can %s", what, address, missing,
           tokens ? "read its traffic" : "use it");
    return 0;
}

int bd_bind_policy_check(const bd_daemon_config *cfg, bd_error *err)
{
    bd_tls_files g, h;
    bd_tls_files_grpc(cfg, &g);
    bd_tls_files_http(cfg, &h);
    bool tokens = cfg->auth_token_file[0] != '\0';
    int rc = check_port("gRPC", cfg->grpc_address, bd_tls_files_enabled(&g), tokens,
                        cfg->allow_insecure_bind, err);
    if (!rc)
        rc = check_port("HTTP", cfg->http_address, bd_tls_files_enabled(&h), tokens,
                        cfg->allow_insecure_bind, err);
    if (!rc)                          /* the REST port takes the HTTP port's TLS files */
        rc = check_port("REST", cfg->rest_address, bd_tls_files_enabled(&h), tokens,
                        cfg->allow_insecure_bind, err);
    return rc;
}
