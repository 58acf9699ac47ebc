/* Bearer-token authentication and the two roles (docs/security.md).
 *
 * The token file has one token a line:
 *
 *     # comment
 *     inference  3f9c0a...          (role, white space, token)
 *     admin      b71e2d...
 *
 * Roles: `inference` may call health, metadata, config, infer, statistics, the repository
 * index, /metrics and /v2/status; `admin` may call everything, including repository
 * load/unload/upload. Tokens are 16..1024 printable ASCII characters without spaces; the
 * file must be a regular file that neither group nor others may write and others may not
 * read (mode & 0027 == 0, e.g. 0600 or 0640), so a world-readable file is refused.
 *
 * Only SHA-256 digests of the tokens are kept. A presented token is hashed, then compared
 * with every digest with CRYPTO_memcmp (constant time, same length): neither the length nor
 * the content of a valid token leaks through timing, and the loop never stops early.
 *
 * Thread-safe: checks take a read lock (any thread: the gRPC cq thread, the loop);
 * bd_auth_reload swaps the table under the write lock. */
#ifndef BD_DAEMON_SECURITY_AUTH_H
#define BD_DAEMON_SECURITY_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef enum bd_role {
    BD_ROLE_NONE      = 0,      /* open: health probes */
    BD_ROLE_INFERENCE = 1,
    BD_ROLE_ADMIN     = 2,
} bd_role;

typedef enum bd_auth_result {
    BD_AUTH_OK = 0,
    BD_AUTH_MISSING,            /* no Authorization header / metadata: 401, UNAUTHENTICATED */
    BD_AUTH_INVALID,            /* not "Bearer <known token>": 401, UNAUTHENTICATED */
    BD_AUTH_FORBIDDEN,          /* a known token of a role too weak: 403, PERMISSION_DENIED */
} bd_auth_result;

typedef struct bd_auth bd_auth;

/* Read the token file at PATH (format and permission rules above). On failure returns a
 * negative BD_E* code, fills ERR (naming the file and the line) and leaves *OUT untouched. */
int  bd_auth_load   (const char *path, bd_auth **out, bd_error *err);
/* Re-read the same file (SIGHUP). On failure the tokens in force stay and ERR says why. */
int  bd_auth_reload (bd_auth *a, bd_error *err);
void bd_auth_destroy(bd_auth *a);                        /* NULL is allowed */
/* Tokens in force now, by role (for the log). */
void bd_auth_count  (bd_auth *a, size_t *inference, size_t *admin);

/* Parse the token file's TEXT (LEN bytes, need not be NUL-terminated) into a table; the
 * pure part of bd_auth_load, for tests. WHAT names the source in messages. */
int  bd_auth_parse  (const char *text, size_t len, const char *what, bd_auth **out, bd_error *err);

/* Check the value of an Authorization header (HEADER, LEN bytes; NULL = absent) against
 * NEED. "Bearer" is matched case-insensitively and may be followed by spaces or tabs.
 * A NULL A (authentication off) or NEED == BD_ROLE_NONE is always BD_AUTH_OK. */
bd_auth_result bd_auth_check(bd_auth *a, const char *header, size_t len, bd_role need);

/* Which role each operation needs, for every transport: operation.h. */
const char *bd_role_name     (bd_role r);
/* Constant-time comparison of two buffers of the same length: 0 when equal. */
int         bd_auth_ct_compare(const void *a, const void *b, size_t len);

#endif
