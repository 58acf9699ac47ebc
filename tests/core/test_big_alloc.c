/* core/big_alloc.h: blocks from 2 MiB up are 2 MiB-aligned mappings advised as huge pages
 * (unless BRAID_HUGE_PAGES=0: this test runs once each way), smaller ones 64-byte aligned;
 * every byte is usable and freeing gives the mapping back. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/big_alloc.h"

#define MIB ((size_t)1 << 20)

/* Whether P lies in a mapping of /proc/self/maps (so a freed block is gone). */
static bool mapped_at(const void *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    bool found = false;
    uintptr_t a = (uintptr_t)p;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
            found = true;
    }
    fclose(f);
    return found;
}

static bool huge_enabled(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return false;                                    /* big_alloc.c: heap blocks under ASan */
#else
    const char *e = getenv("BRAID_HUGE_PAGES");
    return !(e && !strcmp(e, "0"));
#endif
}

static void test_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = { 1, 63, 64, 4096, 2 * MIB - 1, 2 * MIB, 2 * MIB + 1, 5 * MIB + 7 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *p = bd_big_alloc(n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        if (n >= 2 * MIB && huge_enabled())
            assert_int_equal((uintptr_t)p % (2 * MIB), 0);
        memset(p, 0xA5, n);                        /* every byte is ours (ASan checks too) */
        assert_int_equal(p[0], 0xA5);
        assert_int_equal(p[n - 1], 0xA5);
        bd_big_free(p, n);
        printf("    %zu bytes: ok\n", n);
    }
    bd_big_free(NULL, 3 * MIB);                      /* a no-op, as free(NULL) */
    assert_null(bd_big_alloc(0));
}

/* A mapped block is unmapped on free, head and tail trimmings included: a hundred blocks
 * allocated and freed leave no mapping behind. */
static void test_free_unmaps(void **state)
{
    (void)state;
    if (!huge_enabled())
        skip();
    for (int i = 0; i < 100; i++) {
        void *p = bd_big_alloc(3 * MIB);
        assert_non_null(p);
        assert_true(mapped_at(p));
        assert_true(mapped_at((char *)p + 4 * MIB - 1));    /* rounded up to 2 huge pages */
        bd_big_free(p, 3 * MIB);
        assert_false(mapped_at(p));
    }
}

/* A block taken larger than needed and cut to what was filled keeps those bytes, gives the
 * rest of its mapping back, and frees with the size bd_big_shrink returned. */
static void test_shrink_keeps_the_filled_part(void **state)
{
    (void)state;
    const size_t used[] = { 0, 1, 2 * MIB, 3 * MIB, 9 * MIB, 10 * MIB };
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
        unsigned char *p = bd_big_alloc(10 * MIB);
        assert_non_null(p);
        memset(p, 0x5A, used[i]);
        size_t size = bd_big_shrink(p, 10 * MIB, used[i]);
        assert_true(size >= used[i]);
        for (size_t k = 0; k < used[i]; k += 4096)
            assert_int_equal(p[k], 0x5A);
        if (huge_enabled()) {
            size_t keep = used[i] <= 2 * MIB ? 2 * MIB : (used[i] + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);
            assert_int_equal(size, keep == 10 * MIB ? 10 * MIB : keep);
            assert_true(mapped_at(p + keep - 1));
            if (keep < 10 * MIB)
                assert_false(mapped_at(p + keep));
        } else {
            assert_int_equal(size, 10 * MIB);             /* a heap block stays whole */
        }
        bd_big_free(p, size);
        if (huge_enabled())
            assert_false(mapped_at(p));
    }
    assert_int_equal(bd_big_shrink(NULL, 3 * MIB, 0), 3 * MIB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_free_unmaps),
        cmocka_unit_test(test_shrink_keeps_the_filled_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
