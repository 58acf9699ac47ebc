/* Which version serves each model, readable from any thread.
 *
 * The registry is loop-thread only (registry.h); this small table lets the completion-queue
 * thread start a ModelInfer without waiting for the loop. The loop fills it (after a registry
 * lookup) and refreshes it after every registry change. Every lookup first compares the
 * registry's generation (bd_registry_generation: it changes exactly when the version serving
 * a name does) with the one the table was built at; on any difference it misses,
 * and the caller asks the loop. So a request never runs on a version that the registry
 * swapped out or unloaded before the request was looked up: a hot reload and an unload stay
 * atomic, and a client that saw its unload answered gets NOT_FOUND next.
 *
 * The table holds one reference per cached version, dropped at the next refresh after that
 * version stops serving (within the same loop iteration as the swap or unload), so an old
 * version is still freed when its last in-flight request ends. */
#ifndef BD_DAEMON_REGISTRY_SERVED_CACHE_H
#define BD_DAEMON_REGISTRY_SERVED_CACHE_H

#include "core/error.h"
#include "daemon/registry/registry.h"

typedef struct bd_served_cache bd_served_cache;

/* An empty table for REG (which must outlive it). Loop thread. */
int  bd_served_cache_create(bd_registry *reg, bd_served_cache **out, bd_error *err);
/* Release every cached version and free C. Loop thread; NULL is allowed. */
void bd_served_cache_destroy(bd_served_cache *c);

/* The version serving NAME (VERSION "" or NULL = whichever serves; else it must match), with
 * one reference for the caller — or NULL when the table cannot tell (not cached, or the
 * registry changed since the last refresh): ask the registry on the loop. Any thread. */
bd_served *bd_served_cache_get(bd_served_cache *c, const char *name, const char *version);
/* Remember S (just acquired from the registry on this loop iteration) as serving its name;
 * takes its own reference. Loop thread. */
void bd_served_cache_put(bd_served_cache *c, bd_served *s);
/* If the registry changed since the last refresh, look every cached name up again (and drop
 * those that no longer serve). Cheap when nothing changed: run it every loop iteration.
 * Loop thread. */
void bd_served_cache_refresh(bd_served_cache *c);

#endif
