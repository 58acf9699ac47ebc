/* The SIGBUS guard for client shared memory (shm_region.h).
 *
 * A client owns the objects its regions map: it may ftruncate one after registering it, and
 * a read or write of the mapping past the object's new end raises SIGBUS on whatever thread
 * touches it (a worker, one of oneDNN's OpenMP threads, the cq thread). The guard's
 * handler (SA_SIGINFO, process-wide) looks the faulting address up in a fixed table of
 * guarded ranges, read without locks; on a hit it maps anonymous zero pages over the whole
 * range (raw mmap, MAP_FIXED), so the faulting instruction retries harmlessly, and marks the
 * range broken: the requests using it then fail (bd_shm_guard_broken). Any other SIGBUS goes
 * to the handler installed before (a sanitizer's) or the default action.
 *
 *   bd_shm_guard_install  make the guard SIGBUS's handler (the one before is kept to chain to);
 *                         before any range is added, while no other thread sets handlers
 *   bd_shm_guard_add      guard [START, START+LEN); a slot index, or -1 when the table is full
 *   bd_shm_guard_remove   forget a slot, before its range is unmapped
 *   bd_shm_guard_broken   true once a SIGBUS in the slot's range replaced its pages
 *
 * Any thread; add/remove never race with the handler in a harmful way: a slot's range is
 * published only once complete and cleared before the memory goes away. */
#ifndef BD_DAEMON_INFER_SHM_GUARD_H
#define BD_DAEMON_INFER_SHM_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define BD_SHM_GUARD_SLOTS 1024     /* guarded ranges at once (>= any region limit) */

int  bd_shm_guard_install(bd_error *err);
int  bd_shm_guard_add(void *start, size_t len);
void bd_shm_guard_remove(int slot);
bool bd_shm_guard_broken(int slot);

#endif
