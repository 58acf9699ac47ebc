/* Dynamic batching's pieces without a server: requests concatenated along dim 0 and outputs
 * cut back (infer_batch.c), when a batch goes and how many requests it takes (batch_form.c),
 * and config.json's "dynamic_batching" validated at load (model_config.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/sched/batch_form.h"
#include "daemon/infer/infer_batch.h"
#include "daemon/registry/batch_ladder.h"
#include "daemon/registry/model_config.h"

/* A binding of two inputs: x FP32 [rows, 3] = BASE + i, s INT32 [rows, 2] = -(BASE + i). */
typedef struct fake_req {
    bd_infer_binding b;
    float   x[64][3];
    int32_t s[64][2];
} fake_req;

static void fake_init(fake_req *r, int64_t rows, int base)
{
    memset(r, 0, sizeof *r);
    r->b.n_inputs = 2;
    r->b.inputs = r->b.inputs_small;
    r->b.shapes = r->b.shapes_small;
    for (int64_t i = 0; i < rows; i++) {
        for (int c = 0; c < 3; c++)
            r->x[i][c] = (float)(base + i * 3 + c);
        for (int c = 0; c < 2; c++)
            r->s[i][c] = -(int32_t)(base + i * 2 + c);
    }
    int64_t dims[2][2] = { { rows, 3 }, { rows, 2 } };
    void *data[2] = { r->x, r->s };
    DLDataType types[2] = { { kDLFloat, 32, 1 }, { kDLInt, 32, 1 } };
    for (int i = 0; i < 2; i++) {
        memcpy(r->b.shapes[i], dims[i], sizeof dims[i]);
        r->b.inputs[i] = (DLTensor){ .data = data[i], .device = { kDLCPU, 0 }, .ndim = 2,
                                     .dtype = types[i], .shape = r->b.shapes[i] };
    }
    r->b.batch = (uint64_t)rows;
}

static void test_gather_concatenates_along_dim0(void **state)
{
    (void)state;
    static fake_req a, b, c;
    fake_init(&a, 2, 0);
    fake_init(&b, 3, 100);
    fake_init(&c, 1, 200);
    const bd_infer_binding *m[] = { &a.b, &b.b, &c.b };
    assert_true(bd_batch_joins(&a.b, &b.b));
    bd_batch_inputs in = { 0 };
    bd_error err = { 0 };
    assert_int_equal(bd_batch_gather(m, 3, 8, &in, &err), 0);
    assert_int_equal(in.rows, 6);
    assert_int_equal(in.n, 2);
    assert_int_equal(in.t[0].shape[0], 6);
    assert_int_equal(in.t[0].shape[1], 3);
    assert_int_equal(in.t[1].shape[0], 6);
    assert_int_equal(in.t[1].dtype.code, kDLInt);
    assert_int_equal((uintptr_t)in.t[0].data % 64, 0);
    const float *x = in.t[0].data;
    const int32_t *s = in.t[1].data;
    const fake_req *src[] = { &a, &a, &b, &b, &b, &c };
    int row_in_src[] = { 0, 1, 0, 1, 2, 0 };
    for (int r = 0; r < 6; r++) {
        for (int k = 0; k < 3; k++)
            assert_true(x[r * 3 + k] == src[r]->x[row_in_src[r]][k]);
        for (int k = 0; k < 2; k++)
            assert_int_equal(s[r * 2 + k], src[r]->s[row_in_src[r]][k]);
    }
    bd_batch_inputs_free(&in);
    assert_null(in.t);
    bd_batch_inputs_free(NULL);
}

static void test_gather_refuses_what_does_not_join(void **state)
{
    (void)state;
    static fake_req a, b;
    fake_init(&a, 2, 0);
    fake_init(&b, 2, 0);
    bd_batch_inputs in = { 0 };
    bd_error err = { 0 };
    const bd_infer_binding *m[] = { &a.b, &b.b };
    assert_int_equal(bd_batch_gather(m, 2, 3, &in, &err), BD_EINVAL);     /* 4 rows > 3 */
    assert_non_null(strstr(err.msg, "rows"));
    bd_batch_inputs_free(&in);
    b.b.shapes[0][1] = 4;                                     /* another row length */
    assert_false(bd_batch_joins(&a.b, &b.b));
    assert_int_equal(bd_batch_gather(m, 2, 64, &in, &err), BD_EINVAL);
    bd_batch_inputs_free(&in);
    fake_init(&b, 2, 0);
    b.b.inputs[1].dtype.bits = 64;                            /* another dtype */
    assert_false(bd_batch_joins(&a.b, &b.b));
    fake_init(&b, 2, 0);
    b.b.shapes[1][0] = 1;                                     /* inputs disagree on the batch */
    assert_false(bd_batch_joins(&a.b, &b.b));
    fake_init(&b, 2, 0);
    b.b.inputs[0].ndim = 1;
    assert_false(bd_batch_joins(&a.b, &b.b));
    assert_int_equal(bd_batch_gather(m, 0, 64, &in, &err), BD_EINVAL);
    bd_batch_inputs_free(&in);
}

static void test_gather_checks_overflow(void **state)
{
    (void)state;
    static fake_req a;
    fake_init(&a, 2, 0);
    a.b.shapes[0][1] = INT64_C(1) << 61;                      /* row bytes overflow */
    const bd_infer_binding *m[] = { &a.b };
    bd_batch_inputs in = { 0 };
    bd_error err = { 0 };
    assert_int_equal(bd_batch_gather(m, 1, 64, &in, &err), BD_EINVAL);
    bd_batch_inputs_free(&in);
}

static void test_slice_gives_each_its_rows(void **state)
{
    (void)state;
    float out[5][2];
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < 2; k++)
            out[r][k] = (float)(r * 10 + k);
    int64_t shape[2] = { 5, 2 };
    DLTensor full = { .data = out, .device = { kDLCPU, 0 }, .ndim = 2,
                      .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    DLTensor view;
    int64_t vshape[BD_MAX_RANK];
    bd_error err = { 0 };
    assert_int_equal(bd_batch_slice(&full, 2, 3, &view, vshape, &err), 0);
    assert_int_equal(view.shape[0], 3);
    assert_int_equal(view.shape[1], 2);
    const float *v = (const float *)((const char *)view.data + view.byte_offset);
    assert_true(v[0] == 20.0f && v[5] == 41.0f);
    assert_int_equal(shape[0], 5);                            /* FULL untouched */
    assert_int_equal(bd_batch_slice(&full, 4, 2, &view, vshape, &err), BD_EBACKEND);
    assert_int_equal(bd_batch_slice(&full, UINT64_MAX, 2, &view, vshape, &err), BD_EBACKEND);
    full.ndim = 0;
    assert_int_equal(bd_batch_slice(&full, 0, 1, &view, vshape, &err), BD_EBACKEND);
}

static void test_batch_stats_one_slot_per_size(void **state)
{
    (void)state;
    static bd_model_stats st;
    memset(&st, 0, sizeof st);
    assert_true(bd_batch_stat_add(&st, 4, 10, 20, 30));
    assert_true(bd_batch_stat_add(&st, 4, 1, 2, 3));
    assert_true(bd_batch_stat_add(&st, 4 + BD_BATCH_STAT_SLOTS, 1, 1, 1));   /* same home slot */
    assert_false(bd_batch_stat_add(&st, 0, 1, 1, 1));
    int found = 0;
    for (size_t i = 0; i < BD_BATCH_STAT_SLOTS; i++) {
        if (st.batch[i].batch_size == 4) {
            assert_int_equal(st.batch[i].compute_infer.count, 2);
            assert_int_equal(st.batch[i].compute_infer.ns, 22);
            assert_int_equal(st.batch[i].compute_output.ns, 33);
            found++;
        }
        found += st.batch[i].batch_size == 4 + BD_BATCH_STAT_SLOTS;
    }
    assert_int_equal(found, 2);
    for (uint64_t b = 1000; b < 1000 + BD_BATCH_STAT_SLOTS - 2; b++)
        assert_true(bd_batch_stat_add(&st, b, 1, 1, 1));
    assert_false(bd_batch_stat_add(&st, 99999, 1, 1, 1));           /* full: not listed */
    assert_true(bd_batch_stat_add(&st, 4, 1, 1, 1));                /* known sizes still count */
}

/* ---- when a batch goes, and how many requests (batch_form.c) ------------------------------------ */

static bool joins_all(const bd_job *head, const bd_job *other)
{
    (void)head;
    (void)other;
    return true;
}

/* N queued jobs of ROWS[i] rows, linked in order, enqueued at time 1000 ns (+ i). */
static bd_job *queue_of(bd_job *jobs, const uint64_t *rows, size_t n)
{
    memset(jobs, 0, n * sizeof *jobs);
    for (size_t i = 0; i < n; i++) {
        jobs[i].rows = rows[i];
        jobs[i].joins = joins_all;
        jobs[i].enqueue_ns = 1000 + i;
        jobs[i].next = i + 1 < n ? &jobs[i + 1] : NULL;
    }
    return jobs;
}

static const int ladder_16[] = { 1, 2, 4, 8, 16 };

static bd_batch_rule rule_16(void)
{
    return (bd_batch_rule){ .max_rows = 16, .ladder = ladder_16, .n_ladder = 5,
                            .delay_ns = 500000 };
}

static void test_form_idle_version_goes_at_once(void **state)
{
    (void)state;
    bd_job jobs[2];
    bd_batch_rule r = rule_16();
    uint64_t wake = UINT64_MAX;
    /* a lone request to a model computing nothing: no wait for company */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1 }, 1), false, 1001, &wake), 1);
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1 }, 2), false, 1001, &wake), 2);
    assert_int_equal(wake, UINT64_MAX);
}

static void test_form_busy_version_waits_the_delay(void **state)
{
    (void)state;
    bd_job jobs[2];
    bd_batch_rule r = rule_16();
    uint64_t wake = UINT64_MAX;
    queue_of(jobs, (uint64_t[]){ 1, 1 }, 2);
    assert_int_equal(bd_batch_form(&r, jobs, true, 2000, &wake), 0);
    assert_int_equal(wake, 1000 + 500000);              /* the head's delay ends */
    assert_int_equal(bd_batch_form(&r, jobs, true, 1000 + 500000, &wake), 2);
    r.delay_ns = 0;                                     /* no delay: whatever is queued */
    assert_int_equal(bd_batch_form(&r, jobs, true, 2000, &wake), 2);
}

/* A version whose ladder stops at what is queued gains nothing by waiting, busy or not: a
 * measured ladder of [1] (batching cannot speed the model up) runs each request at once. */
static void test_form_ladder_top_goes_while_busy(void **state)
{
    (void)state;
    bd_job jobs[4];
    static const int only_one[] = { 1 }, to_four[] = { 1, 2, 4 };
    bd_batch_rule r = rule_16();
    uint64_t wake = UINT64_MAX;
    r.ladder = only_one;
    r.n_ladder = 1;
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1 }, 2), true, 2000, &wake), 1);
    r.ladder = to_four;
    r.n_ladder = 3;
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1, 1, 1 }, 4), true, 2000, &wake), 4);
    assert_int_equal(wake, UINT64_MAX);                 /* neither waited */
    /* below the top (2 of 4 rows), a busy version still waits for company */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1 }, 2), true, 2000, &wake), 0);
    assert_int_equal(wake, 1000 + 500000);
}

static void test_form_wait_when_idle_keeps_tritons_rule(void **state)
{
    (void)state;
    bd_job jobs[1];
    bd_batch_rule r = rule_16();
    r.wait_when_idle = true;
    uint64_t wake = UINT64_MAX;
    queue_of(jobs, (uint64_t[]){ 1 }, 1);
    assert_int_equal(bd_batch_form(&r, jobs, false, 2000, &wake), 0);
    assert_int_equal(wake, 1000 + 500000);
    assert_int_equal(bd_batch_form(&r, jobs, false, 1000 + 500000, &wake), 1);
}

static void test_form_full_or_preferred_goes_while_busy(void **state)
{
    (void)state;
    bd_job jobs[6];
    bd_batch_rule r = rule_16();
    uint64_t wake = UINT64_MAX;
    /* 16 rows: full */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 8, 4, 4, 1 }, 4), true, 2000, &wake), 3);
    /* preferred 4 and 8: 2+2 = 4, +3 = 7, +1 = 8 reached the largest: 4 jobs */
    static const int pref[] = { 8, 4 };
    r.preferred = pref;
    r.n_preferred = 2;
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 2, 2, 3, 1 }, 4), true, 2000, &wake), 4);
    /* 2+2 = 4, +3 = 7, +2 = 9 past the largest preferred: cut back to 4 rows */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 2, 2, 3, 2 }, 4), true, 2000, &wake), 2);
    assert_int_equal(wake, UINT64_MAX);
}

static void test_form_takes_the_longest_prefix_on_the_ladder(void **state)
{
    (void)state;
    bd_job jobs[6];
    bd_batch_rule r = rule_16();
    uint64_t wake = UINT64_MAX;
    /* 3 rows queued, ladder 1 2 4 8 16: the first two (2 rows) go, the third waits */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1, 1 }, 3), false, 2000, &wake), 2);
    /* 1, 2, 3, 5, 6 rows: only the first prefix is on the ladder besides the head */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1, 1, 2, 1 }, 5), false, 2000, &wake), 2);
    /* 3 + 1 = 4 */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 3, 1, 2 }, 3), false, 2000, &wake), 2);
    /* a head whose own rows are not on the ladder runs alone (as without batching) */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 3, 3, 3 }, 3), false, 2000, &wake), 1);
    /* full at 15 + 3 > 16 rows, nothing but the head on the ladder: the head alone */
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 5, 5, 5, 3 }, 4), true, 2000, &wake), 1);
    /* an empty ladder (nothing could be planned): every request alone */
    r.n_ladder = 0;
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1 }, 2), false, 2000, &wake), 1);
    /* no ladder at all: any size */
    r.ladder = NULL;
    assert_int_equal(bd_batch_form(&r, queue_of(jobs, (uint64_t[]){ 1, 1, 1 }, 3), false, 2000, &wake), 3);
    assert_int_equal(wake, UINT64_MAX);
}

static bool joins_even(const bd_job *head, const bd_job *other)
{
    return head->rows % 2 == other->rows % 2;
}

static void test_form_skips_what_does_not_join(void **state)
{
    (void)state;
    bd_job jobs[4];
    bd_batch_rule r = rule_16();
    uint64_t wake = UINT64_MAX;
    queue_of(jobs, (uint64_t[]){ 2, 1, 2, 0 }, 4);
    for (int i = 0; i < 4; i++)
        jobs[i].joins = joins_even;
    assert_int_equal(bd_batch_form(&r, jobs, false, 2000, &wake), 2);   /* 2 + 2 rows */
    jobs[0].rows = 16;                                                   /* fills a batch */
    assert_int_equal(bd_batch_form(&r, jobs, true, 2000, &wake), 1);
    jobs[0].rows = 0;                                                    /* carries no rows */
    assert_int_equal(bd_batch_form(&r, jobs, true, 2000, &wake), 1);
}

static void test_ladder_sizes(void **state)
{
    (void)state;
    int out[BD_BATCH_MAX_LADDER];
    int n = bd_batch_ladder(16, (const int[]){ 12, 6, 4 }, 3, out);
    assert_int_equal(n, 7);
    assert_memory_equal(out, ((const int[]){ 1, 2, 4, 6, 8, 12, 16 }), 7 * sizeof *out);
    n = bd_batch_ladder(20, NULL, 0, out);
    assert_int_equal(n, 6);
    assert_memory_equal(out, ((const int[]){ 1, 2, 4, 8, 16, 20 }), 6 * sizeof *out);
    n = bd_batch_ladder(1, (const int[]){ 1, 5 }, 2, out);     /* 5 is over the largest batch */
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 1);
    static int pref[BD_BATCH_MAX_PREFERRED];
    for (int i = 0; i < BD_BATCH_MAX_PREFERRED; i++)
        pref[i] = 3 + 2 * i;                                     /* odd: none a power of two */
    n = bd_batch_ladder(1 << 30, pref, BD_BATCH_MAX_PREFERRED, out);
    assert_int_equal(n, 30 + BD_BATCH_MAX_PREFERRED + 1);        /* 2^0 .. 2^29, preferred, max */
    assert_true(n <= BD_BATCH_MAX_LADDER);
    for (int i = 1; i < n; i++)
        assert_true(out[i - 1] < out[i]);
    assert_int_equal(out[n - 1], 1 << 30);
}

/* ---- config.json "dynamic_batching" ------------------------------------------------------ */

static void test_config_reads_every_key(void **state)
{
    (void)state;
    bd_model_config mc;
    bd_error err = { 0 };
    const char *text = "{\"max_batch_size\": 16, \"dynamic_batching\": {"
                       "\"preferred_batch_size\": [4, 8], \"max_queue_delay_microseconds\": 100,"
                       "\"preserve_ordering\": false, \"priority_levels\": 3, \"default_priority_level\": 2,"
                       "\"default_queue_policy\": {\"timeout_action\": \"DELAY\","
                       "\"default_timeout_microseconds\": 5000, \"allow_timeout_override\": true,"
                       "\"max_queue_size\": 7}, \"wait_when_idle\": true}}";
    assert_int_equal(model_config_parse(&mc, "m", text, &err), 0);
    const bd_batching_config *b = &mc.batching;
    assert_true(b->enabled);
    assert_int_equal(b->n_preferred, 2);
    assert_int_equal(b->preferred[1], 8);
    assert_int_equal(b->max_queue_delay_us, 100);
    assert_true(b->timeout_delay);
    assert_int_equal(b->default_timeout_us, 5000);
    assert_true(b->allow_timeout_override);
    assert_int_equal(b->max_queue_size, 7);
    assert_int_equal(b->priority_levels, 3);
    assert_int_equal(b->default_priority_level, 2);
    assert_true(b->wait_when_idle);
    assert_int_equal(model_config_parse(&mc, "m", "{\"max_batch_size\": 4, \"dynamic_batching\": {}}", &err), 0);
    assert_true(mc.batching.enabled);
    assert_false(mc.batching.timeout_delay);
    assert_false(mc.batching.wait_when_idle);               /* work-conserving by default */
    assert_true(mc.batching.measure_ladder);                /* only batch sizes that pay */
    assert_int_equal(model_config_parse(&mc, "m", "{\"max_batch_size\": 4}", &err), 0);
    assert_false(mc.batching.enabled);
}

static void test_config_errors_name_the_key(void **state)
{
    (void)state;
    static const struct { const char *json, *want; } bad[] = {
        { "{\"dynamic_batching\": {}}", "needs max_batch_size > 0" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": []}", "key 'dynamic_batching': expected an object" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"preferred_batch_size\": [8]}}", "8 is over max_batch_size 4" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"preferred_batch_size\": [0]}}", "preferred_batch_size" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"preferred_batch_size\": [2, 2]}}", "different" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"preferred_batch_size\": 2}}", "preferred_batch_size" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"max_queue_delay_microseconds\": -1}}", "max_queue_delay_microseconds" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"max_queue_delay_microseconds\": 1.5}}", "max_queue_delay_microseconds" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"max_queue_delay_microseconds\": 100000000}}", "10000000" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"default_queue_policy\": {\"timeout_action\": \"DROP\"}}}", "\"REJECT\" or \"DELAY\"" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"default_queue_policy\": {\"allow_timeout_override\": 1}}}", "true or false" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"default_queue_policy\": {\"max_queue_size\": -3}}}", "max_queue_size" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"default_queue_policy\": {\"nope\": 1}}}", "unknown key 'dynamic_batching.default_queue_policy.nope'" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"priority_levels\": 2}}", "expected a level from 1 to priority_levels (2), got 0" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"priority_levels\": 2, \"default_priority_level\": 3}}", "got 3" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"default_priority_level\": 1}}", "needs priority_levels" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"priority_levels\": 65}}", "priority_levels" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"preserve_ordering\": true}}", "does not support true" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"priority_queue_policy\": {}}}", "no priority_queue_policy" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"wait_when_idle\": 1}}", "wait_when_idle" },
        { "{\"max_batch_size\": 4, \"dynamic_batching\": {\"measure_ladder\": \"yes\"}}", "measure_ladder" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bd_model_config mc;
        bd_error err = { 0 };
        assert_int_equal(model_config_parse(&mc, "m", bad[i].json, &err), BD_EINVAL);
        if (!strstr(err.msg, bad[i].want))
            fail_msg("%s: got '%s', expected it to contain '%s'", bad[i].json, err.msg, bad[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_concatenates_along_dim0),
        cmocka_unit_test(test_gather_refuses_what_does_not_join),
        cmocka_unit_test(test_gather_checks_overflow),
        cmocka_unit_test(test_slice_gives_each_its_rows),
        cmocka_unit_test(test_batch_stats_one_slot_per_size),
        cmocka_unit_test(test_form_idle_version_goes_at_once),
        cmocka_unit_test(test_form_busy_version_waits_the_delay),
        cmocka_unit_test(test_form_wait_when_idle_keeps_tritons_rule),
        cmocka_unit_test(test_form_ladder_top_goes_while_busy),
        cmocka_unit_test(test_form_full_or_preferred_goes_while_busy),
        cmocka_unit_test(test_form_takes_the_longest_prefix_on_the_ladder),
        cmocka_unit_test(test_form_skips_what_does_not_join),
        cmocka_unit_test(test_ladder_sizes),
        cmocka_unit_test(test_config_reads_every_key),
        cmocka_unit_test(test_config_errors_name_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
