/* Bearer tokens (auth.h): a table of SHA-256 digests with their roles, behind a rwlock. */
#include "daemon/security/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#define TOKEN_MIN   16
#define TOKEN_MAX   1024
#define MAX_TOKENS  4096
#define MAX_FILE    (1 << 20)

typedef struct entry {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    bd_role       role;
} entry;

typedef struct table {
    entry  *e;
    size_t  n;
} table;

struct bd_auth {
    pthread_rwlock_t lock;
    table            t;
    char            *path;         /* NULL when parsed from text */
};

const char *bd_role_name(bd_role r)
{
    switch (r) {
    case BD_ROLE_NONE:      return "none";
    case BD_ROLE_INFERENCE: return "inference";
    case BD_ROLE_ADMIN:     return "admin";
    }
    return "?";
}

int bd_auth_ct_compare(const void *a, const void *b, size_t len)
{
    return CRYPTO_memcmp(a, b, len) != 0;
}

/* ---- parsing ----------------------------------------------------------------------------- */

static bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

static int parse_table(const char *text, size_t len, const char *what, table *out, bd_error *err)
{
    table t = { 0 };
    size_t cap = 0;
    int line = 0;
    for (size_t pos = 0; pos < len;) {
        line++;
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl ? 1 : 0);
        size_t i = 0;
        while (i < n && is_blank(s[i]))
            i++;
        if (i == n || s[i] == '#')
            continue;
        size_t r0 = i;
        while (i < n && !is_blank(s[i]))
            i++;
        size_t rlen = i - r0;
        while (i < n && is_blank(s[i]))
            i++;
        size_t t0 = i;
        while (i < n && !is_blank(s[i]))
            i++;
        size_t tlen = i - t0;
        while (i < n && is_blank(s[i]))
            i++;
        bd_role role;
        if (rlen == 9 && !memcmp(s + r0, "inference", 9))
            role = BD_ROLE_INFERENCE;
        else if (rlen == 5 && !memcmp(s + r0, "admin", 5))
            role = BD_ROLE_ADMIN;
        else {
            free(t.e);
            return bd_error_set(err, BD_EINVAL, "%s line %d: expected 'inference TOKEN' or 'admin TOKEN' "
                                "(role first)", what, line);
        }
        if (tlen == 0 || i != n) {
            free(t.e);
            return bd_error_set(err, BD_EINVAL, "%s line %d: expected exactly one token after the role",
                                what, line);
        }
        if (tlen < TOKEN_MIN || tlen > TOKEN_MAX) {
            free(t.e);
            return bd_error_set(err, BD_EINVAL, "%s line %d: a token must have %d to %d characters "
                                "(e.g. openssl rand -hex 32), this one has %zu", what, line,
                                TOKEN_MIN, TOKEN_MAX, tlen);
        }
        for (size_t k = t0; k < t0 + tlen; k++)
            if ((unsigned char)s[k] < 0x21 || (unsigned char)s[k] > 0x7e) {
                free(t.e);
                return bd_error_set(err, BD_EINVAL, "%s line %d: a token must be printable ASCII "
                                    "without spaces", what, line);
            }
        if (t.n == MAX_TOKENS) {
            free(t.e);
            return bd_error_set(err, BD_EINVAL, "%s: more than %d tokens", what, MAX_TOKENS);
        }
        if (t.n == cap) {
            cap = cap ? cap * 2 : 8;
            entry *e = realloc(t.e, cap * sizeof *e);
            if (!e) {
                free(t.e);
                return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
            }
            t.e = e;
        }
        SHA256((const unsigned char *)s + t0, tlen, t.e[t.n].digest);
        t.e[t.n].role = role;
        t.n++;
    }
    if (t.n == 0)
        return bd_error_set(err, BD_EINVAL, "%s: no token (expected lines 'inference TOKEN' or "
                            "'admin TOKEN')", what);
    *out = t;
    return 0;
}

static bd_auth *auth_new(table t)
{
    bd_auth *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_rwlock_init(&a->lock, NULL);
    a->t = t;
    return a;
}

int bd_auth_parse(const char *text, size_t len, const char *what, bd_auth **out, bd_error *err)
{
    table t;
    int rc = parse_table(text, len, what, &t, err);
    if (rc)
        return rc;
    bd_auth *a = auth_new(t);
    if (!a) {
        free(t.e);
        return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
    }
    *out = a;
    return 0;
}

/* Read PATH after checking what it is and who may read it. */
static int read_token_file(const char *path, table *out, bd_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return bd_error_set(err, BD_EIO, "token file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return bd_error_set(err, BD_EIO, "token file %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "token file %s: not a regular file", path);
    }
    if (st.st_mode & 0027) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "token file %s: mode %04o lets others read it or the "
                            "group write it: chmod 600 %s (or 640 for a group of readers)", path,
                            (unsigned)(st.st_mode & 07777), path);
    }
    if (st.st_size > MAX_FILE) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "token file %s: larger than %d bytes", path, MAX_FILE);
    }
    char *text = malloc((size_t)st.st_size + 1);
    if (!text) {
        close(fd);
        return bd_error_set(err, BD_ENOMEM, "token file %s: out of memory", path);
    }
    size_t len = 0;
    while (len < (size_t)st.st_size) {
        ssize_t got = read(fd, text + len, (size_t)st.st_size - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    char what[4200];
    snprintf(what, sizeof what, "token file %s", path);
    int rc = parse_table(text, len, what, out, err);
    OPENSSL_cleanse(text, len);
    free(text);
    return rc;
}

int bd_auth_load(const char *path, bd_auth **out, bd_error *err)
{
    table t;
    int rc = read_token_file(path, &t, err);
    if (rc)
        return rc;
    bd_auth *a = auth_new(t);
    if (!a || !(a->path = strdup(path))) {
        bd_auth_destroy(a);
        if (!a)
            free(t.e);
        return bd_error_set(err, BD_ENOMEM, "token file %s: out of memory", path);
    }
    *out = a;
    return 0;
}

int bd_auth_reload(bd_auth *a, bd_error *err)
{
    if (!a->path)
        return 0;
    table t;
    int rc = read_token_file(a->path, &t, err);
    if (rc)
        return rc;
    pthread_rwlock_wrlock(&a->lock);
    table old = a->t;
    a->t = t;
    pthread_rwlock_unlock(&a->lock);
    OPENSSL_cleanse(old.e, old.n * sizeof *old.e);
    free(old.e);
    return 0;
}

void bd_auth_destroy(bd_auth *a)
{
    if (!a)
        return;
    if (a->t.e)
        OPENSSL_cleanse(a->t.e, a->t.n * sizeof *a->t.e);
    free(a->t.e);
    free(a->path);
    pthread_rwlock_destroy(&a->lock);
    free(a);
}

void bd_auth_count(bd_auth *a, size_t *inference, size_t *admin)
{
    *inference = *admin = 0;
    pthread_rwlock_rdlock(&a->lock);
    for (size_t i = 0; i < a->t.n; i++)
        if (a->t.e[i].role == BD_ROLE_ADMIN)
            (*admin)++;
        else
            (*inference)++;
    pthread_rwlock_unlock(&a->lock);
}

/* ---- checking ---------------------------------------------------------------------------- */

bd_auth_result bd_auth_check(bd_auth *a, const char *header, size_t len, bd_role need)
{
    if (!a || need == BD_ROLE_NONE)
        return BD_AUTH_OK;
    if (!header)
        return BD_AUTH_MISSING;
    if (len < 7 || strncasecmp(header, "Bearer", 6) != 0 || !(header[6] == ' ' || header[6] == '\t'))
        return BD_AUTH_INVALID;
    size_t i = 7;
    while (i < len && (header[i] == ' ' || header[i] == '\t'))
        i++;
    size_t end = len;
    while (end > i && (header[end - 1] == ' ' || header[end - 1] == '\t'))
        end--;
    if (end == i || end - i > TOKEN_MAX)
        return BD_AUTH_INVALID;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)header + i, end - i, digest);

    /* every entry is compared, whatever matched: the time depends on the table's size only */
    int best = BD_ROLE_NONE;
    pthread_rwlock_rdlock(&a->lock);
    for (size_t k = 0; k < a->t.n; k++) {
        int match = CRYPTO_memcmp(digest, a->t.e[k].digest, sizeof digest) == 0;
        int role = (int)a->t.e[k].role;
        int take = match & (role > best);
        best = take ? role : best;
    }
    pthread_rwlock_unlock(&a->lock);
    if (best == BD_ROLE_NONE)
        return BD_AUTH_INVALID;
    return best >= (int)need ? BD_AUTH_OK : BD_AUTH_FORBIDDEN;
}
