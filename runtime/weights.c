/* Weights given back after compiles and read back before them (weights.h). */
#include "runtime/weights.h"

#include "core/model_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/plan_internal.h"

#define WEIGHTS_MIN_BYTES ((size_t)1 << 20)
#define PAGE ((uintptr_t)4096)

typedef struct weight {
    unsigned char *data;
    size_t         n;
    const char    *path;       /* the model file (the graph's pool) */
    uint64_t       offset;     /* of DATA in it */
    uint64_t       hash;       /* of the bytes, taken when first given back */
    bool           hashed, released, kept;
} weight;

struct weights {
    pthread_mutex_t lock;
    weight         *w;
    size_t          n;
    int             builds;    /* plan builds in progress */
};

#define ALIGN_MIN_BYTES ((size_t)64 << 10)

/* Give the whole pages inside the N bytes at P back to the system. */
static void drop_pages(const void *p, size_t n)
{
    uintptr_t lo = ((uintptr_t)p + PAGE - 1) & ~(PAGE - 1), hi = ((uintptr_t)p + n) & ~(PAGE - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

int weights_align(bd_graph *g, bd_error *err)
{
    size_t nv = bd_graph_num_values(g);
    for (size_t i = 0; i < nv; i++) {
        bd_value *v = bd_graph_value(g, i);
        const char *path;
        uint64_t offset;
        if (!v->data || v->nbytes < ALIGN_MIN_BYTES || (uintptr_t)v->data % 64 == 0 ||
            !bd_graph_source_of(g, v->data, v->nbytes, &path, &offset))
            continue;
        void *copy = aligned_alloc(64, (v->nbytes + 63) & ~(size_t)63);
        if (!copy || bd_graph_adopt_buffer(g, copy))        /* adopt frees COPY on failure */
            return bd_error_set(err, BD_ENOMEM, "out of memory aligning weight '%s'", v->name);
        memcpy(copy, v->data, v->nbytes);
        if (bd_graph_buffer_source(g, copy, v->nbytes, path, offset))
            return bd_error_set(err, BD_ENOMEM, "out of memory aligning weight '%s'", v->name);
        const void *old = v->data;
        for (size_t k = i; k < nv; k++)               /* the same bytes under another name */
            if (bd_graph_value(g, k)->data == old)
                bd_graph_value(g, k)->data = copy;
        drop_pages(old, v->nbytes);
    }
    return 0;
}

static int by_data(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const weight *)a)->data, y = (uintptr_t)((const weight *)b)->data;
    return x < y ? -1 : x > y;
}

int weights_create(const bd_graph *g, weights **out, bd_error *err)
{
    weights *ws = calloc(1, sizeof *ws);
    size_t nv = bd_graph_num_values(g);
    if (ws)
        ws->w = calloc(nv ? nv : 1, sizeof *ws->w);
    if (!ws || !ws->w) {
        free(ws);
        return bd_error_set(err, BD_ENOMEM, "out of memory opening a model");
    }
    for (size_t i = 0; i < nv; i++) {
        const bd_value *v = bd_graph_value(g, i);
        const char *path;
        uint64_t offset;
        if (v->data && v->nbytes >= WEIGHTS_MIN_BYTES &&
            bd_graph_source_of(g, v->data, v->nbytes, &path, &offset))
            ws->w[ws->n++] = (weight){ .data = (unsigned char *)v->data, .n = v->nbytes,
                                       .path = path, .offset = offset };
    }
    qsort(ws->w, ws->n, sizeof *ws->w, by_data);
    size_t k = 0;                                  /* one entry per distinct range */
    for (size_t i = 0; i < ws->n; i++) {
        weight *prev = k ? &ws->w[k - 1] : NULL;
        if (prev && ws->w[i].data == prev->data && ws->w[i].n == prev->n)
            continue;
        if (prev && ws->w[i].data < prev->data + prev->n) {
            prev->kept = true;                     /* overlapping constants: never given back */
            continue;
        }
        ws->w[k++] = ws->w[i];
    }
    ws->n = k;
    pthread_mutex_init(&ws->lock, NULL);
    *out = ws;
    return 0;
}

void weights_destroy(weights *ws)
{
    if (!ws)
        return;
    pthread_mutex_destroy(&ws->lock);
    free(ws->w);
    free(ws);
}

/* A hash of the bytes (four independent lanes: fast enough to cover hundreds of MiB at load). */
static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h[4] = { 0x9e3779b97f4a7c15u, 0xc2b2ae3d27d4eb4fu, 0x165667b19e3779f9u, 0x27d4eb2f165667c5u };
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t x;
            memcpy(&x, p + i + 8 * l, 8);
            h[l] = (h[l] ^ x) * 0x100000001b3u;
            h[l] ^= h[l] >> 29;
        }
    uint64_t r = h[0] ^ (h[1] << 1) ^ (h[2] << 2) ^ (h[3] << 3) ^ n;
    for (; i < n; i++)
        r = (r ^ p[i]) * 0x100000001b3u;
    return r;
}

/* The whole pages inside W's bytes (the partial pages at either end are shared with
 * neighbours and stay). */
static void inner_pages(const weight *w, uintptr_t *lo, uintptr_t *hi)
{
    *lo = ((uintptr_t)w->data + PAGE - 1) & ~(PAGE - 1);
    *hi = ((uintptr_t)w->data + w->n) & ~(PAGE - 1);
}

static void give_back(weight *w)
{
    uintptr_t lo, hi;
    inner_pages(w, &lo, &hi);
    if (hi <= lo)
        return;
    if (!w->hashed) {
        w->hash = hash_bytes(w->data, w->n);
        w->hashed = true;
    }
    drop_pages(w->data, w->n);
    w->released = true;
}

static int read_back(weight *w, bd_error *err)
{
    /* the regular-file check: a FIFO put in the file's place must fail this request, not
     * block the worker (and every other holding ws->lock) */
    int fd;
    if (bd_model_file_open(w->path, "model file", &fd, err) != 0)
        return bd_error_prefix(err, "cannot open the model file again to read weights back (reload "
                               "the model): ");
    size_t done = 0;
    while (done < w->n) {
        ssize_t r = pread(fd, w->data + done, w->n - done, (off_t)(w->offset + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    close(fd);
    if (done != w->n || hash_bytes(w->data, w->n) != w->hash)
        return bd_error_set(err, BD_EIO, "model file %s changed on disk since the model was loaded: "
                            "its weights cannot be read back for a new plan; reload the model", w->path);
    w->released = false;
    return 0;
}

int weights_acquire(weights *ws, bd_error *err)
{
    int rc = 0;
    pthread_mutex_lock(&ws->lock);
    for (size_t i = 0; i < ws->n && rc == 0; i++)
        if (ws->w[i].released)
            rc = read_back(&ws->w[i], err);
    if (rc == 0)
        ws->builds++;
    pthread_mutex_unlock(&ws->lock);
    return rc;
}

/* Keep every weight sharing a byte with the N bytes at DATA. */
static void keep(const void *data, size_t n, void *ctx)
{
    weights *ws = ctx;
    const unsigned char *lo = data, *hi = lo + n;
    size_t a = 0, b = ws->n;
    while (a < b) {                       /* the first weight ending after LO */
        size_t mid = (a + b) / 2;
        if (ws->w[mid].data + ws->w[mid].n <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (size_t i = a; i < ws->n && ws->w[i].data < hi; i++)
        ws->w[i].kept = true;
}

void weights_release(weights *ws, const bd_plan *p)
{
    pthread_mutex_lock(&ws->lock);
    if (p)
        plan_run_constants(p, keep, ws);
    if (--ws->builds == 0)
        for (size_t i = 0; i < ws->n; i++)
            if (!ws->w[i].kept && !ws->w[i].released)
                give_back(&ws->w[i]);
    pthread_mutex_unlock(&ws->lock);
}

size_t weights_released_bytes(weights *ws)
{
    size_t total = 0;
    pthread_mutex_lock(&ws->lock);
    for (size_t i = 0; i < ws->n; i++)
        if (ws->w[i].released) {
            uintptr_t lo, hi;
            inner_pages(&ws->w[i], &lo, &hi);
            total += hi > lo ? hi - lo : 0;
        }
    pthread_mutex_unlock(&ws->lock);
    return total;
}
