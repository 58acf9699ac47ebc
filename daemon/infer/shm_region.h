/* Triton's system shared memory extension: regions of POSIX shared memory objects that a
 * client on the same host registers by the object's shm_open key, then names in an infer
 * request's input / output parameters instead of sending the tensor bytes
 * (docs/protocol.md, "System shared memory").
 *
 *   bd_shm_enable      turn the extension on (braidd --allow-shared-memory) with its limits
 *                      and install the SIGBUS guard (shm_guard.h); until then every call below
 *                      fails with BD_EUNSUPPORTED saying how to enable it
 *   bd_shm_register    open KEY, check [OFFSET, OFFSET+BYTE_SIZE) lies within the object
 *                      (fstat), map it read-write and name it NAME
 *   bd_shm_unregister  forget NAME ("" = every region); a request still using a region keeps
 *                      its mapping until it ends
 *   bd_shm_status      what is registered
 *   bd_shm_acquire     the region NAME for one request, with a reference (bd_shm_release)
 *   bd_shm_span        the bytes [OFFSET, OFFSET+SIZE) of a region, bounds checked
 *   bd_shm_check       BD_EINVAL once the object shrank under a mapping (SIGBUS guarded)
 *
 * Process-wide, any thread. Hostile input: names and keys are checked before use (a key is
 * "/" and 1-254 characters of printable ASCII without "/", never "." or ".."), every
 * offset + size is overflow-checked, and the number of regions and the bytes mapped are
 * bounded by bd_shm_enable's limits. */
#ifndef BD_DAEMON_INFER_SHM_REGION_H
#define BD_DAEMON_INFER_SHM_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define BD_SHM_DEFAULT_MAX_REGIONS 64                       /* documented in docs/config.md */
#define BD_SHM_DEFAULT_MAX_BYTES   (UINT64_C(16) << 30)     /* 16 GiB mapped in all */
#define BD_SHM_NAME_MAX 127                                 /* bytes in a region's name */
#define BD_SHM_KEY_MAX  255                                 /* bytes in a key, "/" included */

typedef struct bd_shm_region bd_shm_region;

/* One registered region, as bd_shm_status reports it. */
typedef struct bd_shm_info {
    char     name[BD_SHM_NAME_MAX + 1];
    char     key[BD_SHM_KEY_MAX + 1];
    uint64_t offset;
    uint64_t byte_size;
} bd_shm_info;

/* Turn the extension on; MAX_REGIONS (<= BD_SHM_GUARD_SLOTS / 2) and MAX_BYTES bound what may be
 * registered at once. BD_EIO when the SIGBUS handler cannot be installed. */
int  bd_shm_enable(int max_regions, uint64_t max_bytes, bd_error *err);
bool bd_shm_enabled(void);
/* At exit, when no request runs any more: unregister every region and free the table. */
void bd_shm_disable(void);

/* BD_EINVAL (bad name/key/range), BD_EEXIST (name taken), BD_ENOTFOUND (no such object),
 * BD_EBUSY (over a limit), BD_EIO (cannot map), BD_EUNSUPPORTED (disabled). */
int  bd_shm_register(const char *name, const char *key, uint64_t offset, uint64_t byte_size,
                     bd_error *err);
/* BD_ENOTFOUND when NAME is not registered ("" unregisters all and always succeeds). */
int  bd_shm_unregister(const char *name, bd_error *err);
/* The regions (NAME "" = all) into a malloc'ed array *OUT of *N (free() it); BD_ENOTFOUND
 * for an unknown NAME. */
int  bd_shm_status(const char *name, bd_shm_info **out, size_t *n, bd_error *err);

/* The region NAME with one reference for the caller (*OUT); BD_ENOTFOUND "no shared memory
 * region 'NAME' is registered", BD_EINVAL when it is broken, BD_EUNSUPPORTED when disabled. */
int  bd_shm_acquire(const char *name, bd_shm_region **out, bd_error *err);
void bd_shm_release(bd_shm_region *r);                  /* NULL is allowed */
const char *bd_shm_name(const bd_shm_region *r);

/* *DATA = the region's bytes [OFFSET, OFFSET+SIZE); BD_EINVAL naming WHAT (e.g. "input 'x'")
 * when that range does not lie within the region. */
int  bd_shm_span(bd_shm_region *r, uint64_t offset, uint64_t size, const char *what, void **data,
                 bd_error *err);
/* BD_EINVAL "region NAME shrank during the request; unregister and register it again" once
 * the SIGBUS guard replaced the region's pages; 0 otherwise. */
int  bd_shm_check(const bd_shm_region *r, bd_error *err);

#endif
