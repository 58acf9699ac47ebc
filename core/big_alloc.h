/* Memory for the large blocks an inference streams through every time: a compiled kernel's
 * weights, an execution context's arena and scratchpad. From 2 MiB up these are 2 MiB-aligned
 * anonymous mappings advised as transparent huge pages (MADV_HUGEPAGE), whatever the system's
 * default (`madvise` on many machines): at batch 1 a ResNet streams ~100 MB of weights from
 * DRAM per inference, and with 4 KiB pages every 64th cache line is also a TLB miss.
 * Smaller blocks, and every block when BRAID_HUGE_PAGES=0 or under AddressSanitizer (which
 * checks heap blocks' bounds), come from aligned_alloc.
 * Always 64-byte aligned. Thread-safe. */
#ifndef BD_CORE_BIG_ALLOC_H
#define BD_CORE_BIG_ALLOC_H

#include <stddef.h>

/* SIZE bytes (SIZE > 0), or NULL when out of memory. Contents are zero only if mapped: do
 * not rely on it. */
void *bd_big_alloc(size_t size);

/* Release P (NULL is fine), which bd_big_alloc returned for the same SIZE. */
void bd_big_free(void *p, size_t size);

/* Keep the first USED bytes (USED <= SIZE) of P, a bd_big_alloc block of SIZE bytes, and
 * return the size to pass to bd_big_free from now on: a mapped block gives its pages past
 * USED (rounded up to 2 MiB) back to the system, a heap block stays as it is. So a block can
 * be taken larger than needed, filled, then cut to what was filled. */
size_t bd_big_shrink(void *p, size_t size, size_t used);

/* Give the heap's free pages back to the system (glibc's malloc_trim): a model compile
 * allocates and frees hundreds of MB, which glibc would otherwise keep resident. Nothing
 * where the heap is not glibc's (AddressSanitizer's allocator: trimming glibc's unused heap
 * from a worker thread there breaks glibc's arena accounting at thread exit). */
void bd_heap_trim(void);

#endif
