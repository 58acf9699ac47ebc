/* Where braidd may listen without protection (docs/security.md, "Binding beyond loopback").
 *
 * A port on a loopback address (127.0.0.0/8, ::1, "localhost") is reachable from this host
 * only. Any other address — a LAN address, 0.0.0.0, [::], a host name that resolves to
 * one — needs TLS on that port and a token file, unless allow_insecure_bind says the
 * operator knows (a private network, a sidecar doing TLS): then every start logs a warning
 * per exposed port. */
#ifndef BD_DAEMON_SECURITY_BIND_POLICY_H
#define BD_DAEMON_SECURITY_BIND_POLICY_H

#include <stdbool.h>

#include "daemon/config.h"
#include "core/error.h"

/* True when every address HOST:PORT resolves to is a loopback address; false for the
 * wildcard, other addresses and names that do not resolve. */
bool bd_address_is_loopback(const char *address);

/* Refuse CFG's addresses that would expose a port without TLS and tokens (BD_EINVAL with
 * the fix), or warn about them when allow_insecure_bind is set. */
int  bd_bind_policy_check(const bd_daemon_config *cfg, bd_error *err);

#endif
