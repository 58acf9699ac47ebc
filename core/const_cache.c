/* A model's laid-out constants, shared by its plans (const_cache.h). */
#include "core/const_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/error.h"

typedef struct entry {
    uint64_t        key_hash;
    unsigned char  *key;
    size_t          key_len;
    bd_const_block *block;
    const void     *data;
    size_t          size;
} entry;

typedef struct range {
    uintptr_t lo, hi;
} range;

struct bd_const_block {
    bd_const_cache *cache;
    int             refs;      /* under cache->lock */
    void           *data;
    size_t          size;
    void          (*free_fn)(void *data, size_t size);
};

struct bd_const_cache {
    pthread_mutex_t lock;
    int             refs;      /* the owner's, and one per live block */
    entry          *e;
    size_t          n, cap;
    range          *stable;    /* sorted by lo, written before the cache is shared */
    size_t          n_stable, cap_stable;
    bd_const_cache_stats stats;
};

int bd_const_cache_create(bd_const_cache **out)
{
    bd_const_cache *c = calloc(1, sizeof *c);
    if (!c)
        return BD_ENOMEM;
    pthread_mutex_init(&c->lock, NULL);
    c->refs = 1;
    *out = c;
    return 0;
}

static void cache_free(bd_const_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->e[i].key);
    free(c->e);
    free(c->stable);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Lock held: drop one reference; true when it was the last (the caller frees C unlocked). */
static bool unref_locked(bd_const_cache *c)
{
    return --c->refs == 0;
}

void bd_const_cache_release(bd_const_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    bool last = unref_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (last)
        cache_free(c);
}

void bd_const_cache_stats_get(bd_const_cache *c, bd_const_cache_stats *out)
{
    pthread_mutex_lock(&c->lock);
    *out = c->stats;
    out->entries = c->n;
    pthread_mutex_unlock(&c->lock);
}

static int by_lo(const void *a, const void *b)
{
    uintptr_t x = ((const range *)a)->lo, y = ((const range *)b)->lo;
    return x < y ? -1 : x > y;
}

int bd_const_cache_add_stable(bd_const_cache *c, const void *data, size_t n)
{
    if (!data || n == 0)
        return 0;
    if (c->n_stable == c->cap_stable) {
        size_t cap = c->cap_stable ? 2 * c->cap_stable : 64;
        range *r = realloc(c->stable, cap * sizeof *r);
        if (!r)
            return BD_ENOMEM;
        c->stable = r;
        c->cap_stable = cap;
    }
    c->stable[c->n_stable++] = (range){ (uintptr_t)data, (uintptr_t)data + n };
    qsort(c->stable, c->n_stable, sizeof *c->stable, by_lo);
    return 0;
}

bool bd_const_cache_is_stable(const bd_const_cache *c, const void *data, size_t n)
{
    uintptr_t lo = (uintptr_t)data, hi = lo + n;
    size_t a = 0, b = c->n_stable;
    while (a < b) {                         /* the first range starting after LO */
        size_t mid = (a + b) / 2;
        if (c->stable[mid].lo <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    /* ranges may nest (a view into another initializer): any one starting at or before LO
     * that covers HI will do */
    for (size_t i = a; i-- > 0;)
        if (c->stable[i].hi >= hi)
            return true;
    return false;
}

/* ---- hashing ---------------------------------------------------------------------------- */

/* SHA-256 (libcrypto): a content key must not collide even for bytes a model file chose to
 * collide, so a fast non-cryptographic hash will not do; hashing runs once per constant per
 * plan, a few hundred MB/s at worst against the layout it saves. */
bool bd_const_hash(const void *p, size_t n, uint8_t out[BD_CONST_HASH_BYTES])
{
    unsigned int len = 0;
    return EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) == 1 && len == BD_CONST_HASH_BYTES;
}

static uint64_t key_hash(const void *key, size_t len)
{
    const unsigned char *k = key;
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ k[i]) * 0x100000001b3u;
    return h;
}

/* ---- blocks and entries ------------------------------------------------------------------ */

int bd_const_block_create(bd_const_cache *c, void *data, size_t size,
                          void (*free_fn)(void *data, size_t size), bd_const_block **out)
{
    bd_const_block *b = calloc(1, sizeof *b);
    if (!b)
        return BD_ENOMEM;
    *b = (bd_const_block){ .cache = c, .refs = 1, .data = data, .size = size, .free_fn = free_fn };
    pthread_mutex_lock(&c->lock);
    c->refs++;
    c->stats.blocks++;
    c->stats.bytes += size;
    pthread_mutex_unlock(&c->lock);
    *out = b;
    return 0;
}

void bd_const_block_release(bd_const_block *b)
{
    if (!b)
        return;
    bd_const_cache *c = b->cache;
    pthread_mutex_lock(&c->lock);
    if (--b->refs > 0) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    for (size_t i = c->n; i-- > 0;)       /* its entries leave with it */
        if (c->e[i].block == b) {
            free(c->e[i].key);
            c->e[i] = c->e[--c->n];
        }
    c->stats.blocks--;
    c->stats.bytes -= b->size;
    bool last = unref_locked(c);
    pthread_mutex_unlock(&c->lock);
    if (b->free_fn)
        b->free_fn(b->data, b->size);
    free(b);
    if (last)
        cache_free(c);
}

/* Lock held: the entry for KEY, or NULL. */
static entry *find_locked(bd_const_cache *c, uint64_t h, const void *key, size_t key_len)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].key_hash == h && c->e[i].key_len == key_len && !memcmp(c->e[i].key, key, key_len))
            return &c->e[i];
    return NULL;
}

int bd_const_cache_put(bd_const_cache *c, const void *key, size_t key_len, bd_const_block *b,
                       const void *data, size_t size)
{
    uint64_t h = key_hash(key, key_len);
    unsigned char *k = malloc(key_len ? key_len : 1);
    if (!k)
        return BD_ENOMEM;
    memcpy(k, key, key_len);
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    if (find_locked(c, h, key, key_len)) {
        free(k);                           /* the first layout stays */
        k = NULL;
    } else if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        entry *e = realloc(c->e, cap * sizeof *e);
        if (e) {
            c->e = e;
            c->cap = cap;
        } else {
            free(k);
            k = NULL;
            rc = BD_ENOMEM;
        }
    }
    if (k)
        c->e[c->n++] = (entry){ h, k, key_len, b, data, size };
    pthread_mutex_unlock(&c->lock);
    return rc;
}

const void *bd_const_cache_find(bd_const_cache *c, const void *key, size_t key_len, size_t *size,
                                bd_const_block **block)
{
    uint64_t h = key_hash(key, key_len);
    const void *data = NULL;
    pthread_mutex_lock(&c->lock);
    entry *e = find_locked(c, h, key, key_len);
    if (e) {
        e->block->refs++;
        c->stats.hits++;
        c->stats.hit_bytes += e->size;
        *block = e->block;
        *size = e->size;
        data = e->data;
    }
    pthread_mutex_unlock(&c->lock);
    return data;
}
