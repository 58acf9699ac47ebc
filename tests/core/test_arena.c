/* Arena layout: lifetimes that overlap never share bytes; disjoint ones reuse memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/arena.h"

static void assert_no_conflicts(const bd_arena_req *r, size_t n, const size_t *off, size_t total)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(off[i] % BD_ARENA_ALIGN, 0);
        assert_true(off[i] + r[i].size <= total);
        for (size_t j = i + 1; j < n; j++) {
            bool live = !(r[i].last < r[j].first || r[j].last < r[i].first);
            bool mem  = off[i] < off[j] + r[j].size && off[j] < off[i] + r[i].size;
            assert_false(live && mem);
        }
    }
}

static void test_chain_reuses_memory(void **state)
{
    /* a -> b -> c -> d: each tensor dies when the next is made, so two slots suffice. */
    bd_arena_req r[] = { { 1000, 0, 1 }, { 1000, 1, 2 }, { 1000, 2, 3 }, { 1000, 3, 4 } };
    size_t off[4];
    size_t total = bd_arena_plan(r, 4, off);
    assert_no_conflicts(r, 4, off, total);
    assert_int_equal(total, 2 * 1024);   /* 1000 rounded to 64-byte alignment, twice */
}

static void test_all_live_stack_up(void **state)
{
    bd_arena_req r[] = { { 64, 0, 9 }, { 128, 0, 9 }, { 256, 0, 9 } };
    size_t off[3];
    size_t total = bd_arena_plan(r, 3, off);
    assert_no_conflicts(r, 3, off, total);
    assert_int_equal(total, 64 + 128 + 256);
}

static void test_random_layouts_are_valid(void **state)
{
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        size_t n = 1 + (size_t)(rand() % 40);
        bd_arena_req r[40];
        size_t off[40], sum = 0;
        for (size_t i = 0; i < n; i++) {
            int a = rand() % 30, b = rand() % 30;
            r[i] = (bd_arena_req){ (size_t)(1 + rand() % 5000), a < b ? a : b, a < b ? b : a };
            sum += (r[i].size + 63) & ~(size_t)63;
        }
        size_t total = bd_arena_plan(r, n, off);
        assert_no_conflicts(r, n, off, total);
        assert_true(total <= sum);
    }
}

static void test_empty(void **state)
{
    assert_int_equal(bd_arena_plan(NULL, 0, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_reuses_memory),
        cmocka_unit_test(test_all_live_stack_up),
        cmocka_unit_test(test_random_layouts_are_valid),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests_name("arena", tests, NULL, NULL);
}
