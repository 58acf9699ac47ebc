/* Constants laid out once per model: a fast-path engine converts each weight into the layout
 * its kernel reads (a reorder, packing), and every plan of a model (one per input shape) would
 * otherwise do that again for the same weights. The model owns one cache; each kernel that
 * lays out constants publishes them under a key of the engine's choosing (what was read and
 * what layout it was written in), and a later kernel of the same model finds them there and
 * reads the same bytes instead of laying them out again.
 *
 * Memory is held in blocks (a kernel's constants' block, or one constant's own allocation),
 * each reference counted: by the kernel that made it and by every kernel that reads a constant
 * in it. A block is freed with its last reference, and its entries leave the cache then: the
 * cache holds nothing no kernel reads. The cache itself lives until its owner has released it
 * and its last block is gone (kernels may outlive the model that built them).
 *
 * Thread-safe: one mutex guards the entries and every block's count; it is taken by lookups,
 * publishing and releases (at compile and teardown), never while a kernel runs. */
#ifndef BD_CORE_CONST_CACHE_H
#define BD_CORE_CONST_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bd_const_cache bd_const_cache;
typedef struct bd_const_block bd_const_block;

/* What a cache holds and has done (bd_const_cache_stats). */
typedef struct bd_const_cache_stats {
    size_t   entries;      /* constants findable now */
    size_t   blocks;       /* blocks alive (some kernel reads them) */
    size_t   bytes;        /* bytes of those blocks: each counted once however many kernels
                            * read them */
    uint64_t hits;         /* lookups answered: a constant not laid out again */
    uint64_t hit_bytes;    /* their bytes */
} bd_const_cache_stats;

/* A new, empty cache with one reference (the owner's). BD_ENOMEM (negative) or 0. */
int  bd_const_cache_create(bd_const_cache **out);
/* Drop the owner's reference (NULL is fine): no lookup or publish may follow. */
void bd_const_cache_release(bd_const_cache *c);
void bd_const_cache_stats_get(bd_const_cache *c, bd_const_cache_stats *out);

/* Declare the N bytes at DATA stable: unchanged at that address for as long as the owner
 * lives (a model's own initializers). An engine may key a constant read from stable bytes by
 * their address; any other source must be keyed by its contents (bd_const_hash). Call before
 * the cache is shared between threads. BD_ENOMEM or 0. */
int  bd_const_cache_add_stable(bd_const_cache *c, const void *data, size_t n);
/* Do the N bytes at DATA lie within one stable range? */
bool bd_const_cache_is_stable(const bd_const_cache *c, const void *data, size_t n);

/* The SHA-256 of the N bytes at P into OUT, for content keys; false when libcrypto failed
 * (no memory): then the constant has no key and is not shared. */
#define BD_CONST_HASH_BYTES 32
bool bd_const_hash(const void *p, size_t n, uint8_t out[BD_CONST_HASH_BYTES]);

/* A block of SIZE bytes at DATA, which FREE_FN(DATA, SIZE) frees when the last reference
 * goes; the caller holds that one reference. BD_ENOMEM (then DATA is not freed) or 0. */
int  bd_const_block_create(bd_const_cache *c, void *data, size_t size,
                           void (*free_fn)(void *data, size_t size), bd_const_block **out);
/* Drop one reference (NULL is fine). */
void bd_const_block_release(bd_const_block *b);
/* Publish the SIZE bytes at DATA, inside block B, as the constant KEY (KEY_LEN bytes, compared
 * byte for byte). No reference is taken: the entry leaves with B. A key already present keeps
 * its first bytes (two plans compiled at once may both have laid it out). BD_ENOMEM or 0. */
int  bd_const_cache_put(bd_const_cache *c, const void *key, size_t key_len, bd_const_block *b,
                        const void *data, size_t size);
/* The constant KEY: its bytes (*SIZE of them) with a new reference to the block holding them
 * in *BLOCK, or NULL when no live block has it. */
const void *bd_const_cache_find(bd_const_cache *c, const void *key, size_t key_len, size_t *size,
                                bd_const_block **block);

#endif
