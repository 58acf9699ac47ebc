/* bd_big_alloc: huge-page-backed mappings for large blocks (see big_alloc.h). Written here
 * because neither glibc's malloc nor oneDNN asks for huge pages. */
#include "core/big_alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __GLIBC__                      /* defined by the headers above */
#include <malloc.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int            g_enabled;

/* Under AddressSanitizer every block is a heap block: ASan checks the bounds of those, not
 * of mappings made here. */
#if defined(__SANITIZE_ADDRESS__)
#define BD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BD_ASAN 1
#endif
#endif
#ifndef BD_ASAN
#define BD_ASAN 0
#endif

static void read_env(void)
{
    const char *e = getenv("BRAID_HUGE_PAGES");
    g_enabled = !BD_ASAN && !(e && !strcmp(e, "0"));
}

/* Whether a block of SIZE bytes is mapped (else aligned_alloc): the same answer for the
 * same size during the whole process, so bd_big_free knows which way to release it. */
static int mapped(size_t size)
{
    pthread_once(&g_once, read_env);
    return g_enabled && size >= HUGE_PAGE && size <= SIZE_MAX / 2;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void *bd_big_alloc(size_t size)
{
    if (!size)
        return NULL;
    if (!mapped(size))
        return aligned_alloc(64, round_up(size, 64));
    /* map one huge page more than needed, then unmap the unaligned head and the tail */
    size_t len = round_up(size, HUGE_PAGE), span = len + HUGE_PAGE;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)round_up((uintptr_t)raw, HUGE_PAGE);
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + span > p + len)
        munmap(p + len, (size_t)(raw + span - (p + len)));
    (void)madvise(p, len, MADV_HUGEPAGE);   /* advice: without THP the pages are just small */
    return p;
}

void bd_big_free(void *p, size_t size)
{
    if (!p)
        return;
    if (mapped(size))
        munmap(p, round_up(size, HUGE_PAGE));
    else
        free(p);
}

size_t bd_big_shrink(void *p, size_t size, size_t used)
{
    if (!p || !mapped(size))
        return size;
    size_t len = round_up(size, HUGE_PAGE), keep = round_up(used ? used : 1, HUGE_PAGE);
    if (keep < len)
        munmap((char *)p + keep, len - keep);
    return keep < len ? keep : size;          /* >= 2 MiB: still a mapped size */
}

void bd_heap_trim(void)
{
#if defined(__GLIBC__) && !BD_ASAN
    malloc_trim(0);
#endif
}
