/* The served-version table the completion-queue thread reads (see served_cache.h).
 *
 * A few entries (one per model recently asked for), linear search under one mutex: readers
 * are the cq thread and the loop, so the lock is almost never contended. */
#include "daemon/registry/served_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SLOTS 32   /* more models in use than this: slots are reused round-robin and a
                          * request whose model was evicted takes the loop path (correct, slower) */

struct bd_served_cache {
    bd_registry     *reg;
    pthread_mutex_t  lock;               /* guards everything below */
    uint64_t         gen;                /* registry generation the entries are valid for */
    bd_served       *slot[CACHE_SLOTS];  /* one reference each; NULL = free */
    size_t           next_evict;
};

/* The registry bumps its generation on the loop thread when a version is swapped in or
 * unloaded, before any reply tells a client about it. */
static uint64_t registry_gen(const bd_served_cache *c)
{
    return bd_registry_generation(c->reg);
}

int bd_served_cache_create(bd_registry *reg, bd_served_cache **out, bd_error *err)
{
    bd_served_cache *c = calloc(1, sizeof *c);
    if (!c)
        return bd_error_set(err, BD_ENOMEM, "out of memory creating the served-version cache");
    c->reg = reg;
    c->gen = registry_gen(c);
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return 0;
}

void bd_served_cache_destroy(bd_served_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        bd_served_release(c->slot[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

bd_served *bd_served_cache_get(bd_served_cache *c, const char *name, const char *version)
{
    bd_served *hit = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->gen == registry_gen(c))
        for (size_t i = 0; i < CACHE_SLOTS; i++) {
            bd_served *s = c->slot[i];
            if (s && strcmp(bd_served_name(s), name) == 0) {
                if (!version || !version[0] || strcmp(bd_served_version(s), version) == 0) {
                    bd_served_retain(s);
                    hit = s;
                }
                break;   /* a version that does not match: the loop words the error */
            }
        }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

/* Loop thread, lock held: bring every entry up to the registry's current state. The
 * references replaced go to DROP, released by the caller after unlocking (the last one
 * closes a model, which must not stall the cq thread waiting for the lock). */
static void refresh_locked(bd_served_cache *c, bd_served **drop)
{
    uint64_t gen = registry_gen(c);
    if (gen == c->gen)
        return;
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        bd_served *old = c->slot[i];
        if (!old)
            continue;
        bd_served *now = NULL;
        bd_error err = {0};
        if (bd_registry_acquire(c->reg, bd_served_name(old), NULL, &now, &err) != 0)
            now = NULL;
        c->slot[i] = now;            /* the acquired reference moves into the table */
        drop[i] = old;
    }
    c->gen = gen;
}

static void release_all(bd_served **drop, size_t n)
{
    for (size_t i = 0; i < n; i++)
        bd_served_release(drop[i]);  /* requests on these versions hold their own references */
}

void bd_served_cache_put(bd_served_cache *c, bd_served *s)
{
    bd_served *drop[CACHE_SLOTS + 1] = {0};
    pthread_mutex_lock(&c->lock);
    refresh_locked(c, drop);
    size_t at = CACHE_SLOTS;
    for (size_t i = 0; i < CACHE_SLOTS && at == CACHE_SLOTS; i++)
        if (c->slot[i] && strcmp(bd_served_name(c->slot[i]), bd_served_name(s)) == 0)
            at = i;
    for (size_t i = 0; i < CACHE_SLOTS && at == CACHE_SLOTS; i++)
        if (!c->slot[i])
            at = i;
    if (at == CACHE_SLOTS) {
        at = c->next_evict;
        c->next_evict = (c->next_evict + 1) % CACHE_SLOTS;
    }
    if (c->slot[at] != s) {
        bd_served_retain(s);
        drop[CACHE_SLOTS] = c->slot[at];
        c->slot[at] = s;
    }
    pthread_mutex_unlock(&c->lock);
    release_all(drop, CACHE_SLOTS + 1);
}

void bd_served_cache_refresh(bd_served_cache *c)
{
    if (registry_gen(c) == c->gen)   /* c->gen only changes on this (the loop) thread */
        return;
    bd_served *drop[CACHE_SLOTS] = {0};
    pthread_mutex_lock(&c->lock);
    refresh_locked(c, drop);
    pthread_mutex_unlock(&c->lock);
    release_all(drop, CACHE_SLOTS);
}
