/* Registered shared memory regions (shm_region.h): a small table under one mutex; each
 * region is reference counted (the table holds one reference, each request using it one
 * more), and its mapping goes when the last reference does. */
#include "daemon/infer/shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/infer/shm_guard.h"

struct bd_shm_region {
    atomic_int refs;
    bd_shm_info info;
    void     *map;                  /* the mapping (page aligned) */
    size_t    map_len;
    uint8_t  *base;                 /* the region's first byte inside it */
    int       slot;                 /* its SIGBUS guard slot */
};

static pthread_mutex_t  lock = PTHREAD_MUTEX_INITIALIZER;
static bd_shm_region  **table;      /* max_regions entries, NULL = free */
static int              max_regions;
static uint64_t         max_bytes, mapped_bytes;
static atomic_bool      enabled;

static int disabled(bd_error *err)
{
    return bd_error_set(err, BD_EUNSUPPORTED, "system shared memory is disabled: start braidd with "
                        "--allow-shared-memory (same-host clients only; docs/protocol.md)");
}

int bd_shm_enable(int max_r, uint64_t max_b, bd_error *err)
{
    if (max_r < 1 || max_r > BD_SHM_GUARD_SLOTS / 2)
        return bd_error_set(err, BD_EINVAL, "shared_memory_max_regions must be 1 to %d, got %d",
                            BD_SHM_GUARD_SLOTS / 2, max_r);
    int rc = bd_shm_guard_install(err);
    if (rc)
        return rc;
    pthread_mutex_lock(&lock);
    if (table && max_r != max_regions) {        /* the table is sized once */
        pthread_mutex_unlock(&lock);
        return bd_error_set(err, BD_EINVAL, "shared memory is already enabled with %d regions",
                            max_regions);
    }
    if (!table)
        table = calloc((size_t)max_r, sizeof *table);
    if (table) {
        max_regions = max_r;
        max_bytes = max_b;
    }
    pthread_mutex_unlock(&lock);
    if (!table)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    atomic_store(&enabled, true);
    return 0;
}

bool bd_shm_enabled(void)
{
    return atomic_load(&enabled);
}

void bd_shm_disable(void)
{
    if (!bd_shm_enabled())
        return;
    bd_error err = {0};
    bd_shm_unregister("", &err);
    atomic_store(&enabled, false);
    pthread_mutex_lock(&lock);
    free(table);
    table = NULL;
    max_regions = 0;
    pthread_mutex_unlock(&lock);
}

/* ---- names and keys ------------------------------------------------------------------------ */

static bool printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return false;
    return true;
}

static int check_name(const char *name, bd_error *err)
{
    size_t n = strlen(name);
    if (n == 0 || n > BD_SHM_NAME_MAX || !printable(name, n) || strchr(name, '/'))
        return bd_error_set(err, BD_EINVAL, "shared memory region name '%.*s' must be 1 to %d "
                            "printable characters without '/' or spaces", BD_SHM_NAME_MAX, name,
                            BD_SHM_NAME_MAX);
    return 0;
}

/* A POSIX shm_open name: "/" then 1-254 characters, no other "/", not "." or "..". */
static int check_key(const char *key, bd_error *err)
{
    size_t n = strlen(key);
    if (n < 2 || n > BD_SHM_KEY_MAX || key[0] != '/' || strchr(key + 1, '/') ||
        !printable(key, n) || !strcmp(key, "/.") || !strcmp(key, "/.."))
        return bd_error_set(err, BD_EINVAL, "shared memory key '%.*s' must be a shm_open name: '/' "
                            "then 1 to %d printable characters without '/' (e.g. '/input0')",
                            BD_SHM_KEY_MAX, key, BD_SHM_KEY_MAX - 1);
    return 0;
}

/* ---- regions ------------------------------------------------------------------------------- */

static void region_free(bd_shm_region *r)
{
    bd_shm_guard_remove(r->slot);   /* before the range can be reused by another mapping */
    munmap(r->map, r->map_len);
    free(r);
}

void bd_shm_release(bd_shm_region *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
        pthread_mutex_lock(&lock);
        mapped_bytes -= r->info.byte_size;
        pthread_mutex_unlock(&lock);
        region_free(r);
    }
}

const char *bd_shm_name(const bd_shm_region *r)
{
    return r->info.name;
}

/* Index of NAME in the table, or -1. Under LOCK. */
static int find(const char *name)
{
    for (int i = 0; i < max_regions; i++)
        if (table[i] && !strcmp(table[i]->info.name, name))
            return i;
    return -1;
}

int bd_shm_register(const char *name, const char *key, uint64_t offset, uint64_t byte_size,
                    bd_error *err)
{
    if (!bd_shm_enabled())
        return disabled(err);
    int rc;
    if ((rc = check_name(name, err)) || (rc = check_key(key, err)))
        return rc;
    uint64_t end;
    if (byte_size == 0 || __builtin_add_overflow(offset, byte_size, &end) || end > (uint64_t)INT64_MAX)
        return bd_error_set(err, BD_EINVAL, "shared memory region '%s': offset %" PRIu64 " + byte_size "
                            "%" PRIu64 " is not a valid range (byte_size must be > 0)", name, offset,
                            byte_size);
    if (byte_size > max_bytes)
        return bd_error_set(err, BD_EBUSY, "shared memory region '%s': %" PRIu64 " bytes is over the "
                            "limit of %" PRIu64 " bytes mapped (shared_memory_max_bytes)", name,
                            byte_size, max_bytes);
    /* A library loaded since (a fallback engine) may have set its own SIGBUS handler: the
     * guard goes back in front of it (and chains to it). */
    if ((rc = bd_shm_guard_install(err)) != 0)
        return rc;
    int fd = shm_open(key, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;                  /* missing or not ours to use: the client's to fix */
        return bd_error_set(err, e == ENOENT ? BD_ENOTFOUND : e == EACCES || e == EPERM ||
                            e == ENAMETOOLONG || e == EINVAL ? BD_EINVAL : BD_EIO,
                            "shared memory region '%s': cannot open key '%s' read-write as braidd's "
                            "user: %s", name, key, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "shared memory region '%s': key '%s' is not a shared "
                            "memory object", name, key);
    }
    if ((uint64_t)st.st_size < end) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "shared memory region '%s': offset %" PRIu64 " + byte_size "
                            "%" PRIu64 " is past the end of '%s' (%" PRIu64 " bytes)", name, offset,
                            byte_size, key, (uint64_t)st.st_size);
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t map_off = offset - offset % page;
    size_t map_len = (size_t)(end - map_off);
    void *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map_off);
    int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED)
        return bd_error_set(err, BD_EIO, "shared memory region '%s': cannot map '%s': %s", name, key,
                            strerror(map_errno));
    bd_shm_region *r = calloc(1, sizeof *r);
    if (!r) {
        munmap(map, map_len);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    atomic_init(&r->refs, 1);
    snprintf(r->info.name, sizeof r->info.name, "%s", name);
    snprintf(r->info.key, sizeof r->info.key, "%s", key);
    r->info.offset = offset;
    r->info.byte_size = byte_size;
    r->map = map;
    r->map_len = map_len;
    r->base = (uint8_t *)map + (offset - map_off);
    size_t guard_len = (map_len + page - 1) / page * page;   /* the kernel maps whole pages */
    r->slot = -1;

    pthread_mutex_lock(&lock);
    int free_at = -1;
    for (int i = 0; i < max_regions && free_at < 0; i++)
        if (!table[i])
            free_at = i;
    if (find(name) >= 0)
        rc = bd_error_set(err, BD_EEXIST, "shared memory region '%s' is already registered "
                          "(unregister it first)", name);
    else if (free_at < 0)
        rc = bd_error_set(err, BD_EBUSY, "cannot register shared memory region '%s': %d regions are "
                          "registered, the limit (shared_memory_max_regions); unregister one", name,
                          max_regions);
    else if (byte_size > max_bytes - mapped_bytes)
        rc = bd_error_set(err, BD_EBUSY, "cannot register shared memory region '%s': %" PRIu64 " more "
                          "bytes would exceed the %" PRIu64 " bytes that may be mapped "
                          "(shared_memory_max_bytes; %" PRIu64 " mapped now)", name, byte_size,
                          max_bytes, mapped_bytes);
    else if ((r->slot = bd_shm_guard_add(map, guard_len)) < 0)
        rc = bd_error_set(err, BD_EBUSY, "cannot register shared memory region '%s': too many mappings "
                          "still in use by running requests; retry", name);
    else {
        table[free_at] = r;
        mapped_bytes += byte_size;
    }
    pthread_mutex_unlock(&lock);
    if (rc)
        region_free(r);
    return rc;
}

int bd_shm_unregister(const char *name, bd_error *err)
{
    if (!bd_shm_enabled())
        return disabled(err);
    bd_shm_region *gone_small[16], **gone = gone_small;
    int n = 0;
    pthread_mutex_lock(&lock);
    if (max_regions > 16 && !(gone = calloc((size_t)max_regions, sizeof *gone))) {
        pthread_mutex_unlock(&lock);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    for (int i = 0; i < max_regions; i++)
        if (table[i] && (!name[0] || !strcmp(table[i]->info.name, name))) {
            gone[n++] = table[i];
            table[i] = NULL;
        }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        bd_shm_release(gone[i]);    /* a running request keeps its own reference */
    if (gone != gone_small)
        free(gone);
    if (name[0] && n == 0)
        return bd_error_set(err, BD_ENOTFOUND, "no shared memory region '%.*s' is registered",
                            BD_SHM_NAME_MAX, name);
    return 0;
}

int bd_shm_status(const char *name, bd_shm_info **out, size_t *n, bd_error *err)
{
    *out = NULL;
    *n = 0;
    if (!bd_shm_enabled())
        return disabled(err);
    pthread_mutex_lock(&lock);
    bd_shm_info *a = calloc((size_t)max_regions, sizeof *a);
    size_t k = 0;
    for (int i = 0; a && i < max_regions; i++)
        if (table[i] && (!name[0] || !strcmp(table[i]->info.name, name)))
            a[k++] = table[i]->info;
    pthread_mutex_unlock(&lock);
    if (!a)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    if (name[0] && k == 0) {
        free(a);
        return bd_error_set(err, BD_ENOTFOUND, "no shared memory region '%.*s' is registered",
                            BD_SHM_NAME_MAX, name);
    }
    *out = a;
    *n = k;
    return 0;
}

int bd_shm_acquire(const char *name, bd_shm_region **out, bd_error *err)
{
    *out = NULL;
    if (!bd_shm_enabled())
        return disabled(err);
    pthread_mutex_lock(&lock);
    int i = find(name);
    bd_shm_region *r = i >= 0 ? table[i] : NULL;
    if (r)
        atomic_fetch_add(&r->refs, 1);
    pthread_mutex_unlock(&lock);
    if (!r)
        return bd_error_set(err, BD_ENOTFOUND, "no shared memory region '%.*s' is registered "
                            "(register it first)", BD_SHM_NAME_MAX, name);
    int rc = bd_shm_check(r, err);
    if (rc) {
        bd_shm_release(r);
        return rc;
    }
    *out = r;
    return 0;
}

int bd_shm_span(bd_shm_region *r, uint64_t offset, uint64_t size, const char *what, void **data,
                bd_error *err)
{
    uint64_t end;
    if (__builtin_add_overflow(offset, size, &end) || end > r->info.byte_size)
        return bd_error_set(err, BD_EINVAL, "%s: shared memory offset %" PRIu64 " + byte_size %" PRIu64
                            " is past the end of region '%s' (%" PRIu64 " bytes)", what, offset, size,
                            r->info.name, r->info.byte_size);
    *data = r->base + offset;
    return 0;
}

int bd_shm_check(const bd_shm_region *r, bd_error *err)
{
    if (!bd_shm_guard_broken(r->slot))
        return 0;
    return bd_error_set(err, BD_EINVAL, "shared memory region '%s' shrank during the request (its "
                        "object '%s' was truncated, or /dev/shm had no room for its pages); "
                        "unregister and register it again", r->info.name, r->info.key);
}
