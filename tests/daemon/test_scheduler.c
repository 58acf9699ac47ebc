/* The worker pool: every job runs exactly once, queues are bounded, round-robin across
 * models, expired/cancelled jobs are dropped, and drain bounds the shutdown. The versions
 * here carry no model (the scheduler never touches one). */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "daemon/registry/registry_served_internal.h"
#include "daemon/sched/scheduler.h"
#include "tests/daemon/daemon_testlib.h"

typedef struct test_job {
    bd_job      base;
    int         id;
    atomic_int  runs;
    atomic_int  drops;
    atomic_int  drop_status;
} test_job;

/* Execution order, recorded by the runs. */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static int order[256], n_order;
/* A gate the blocker job waits on, so a test controls when the (single) worker is free. */
static atomic_bool gate_open, blocker_running;

static void run_job(bd_job *j)
{
    test_job *t = (test_job *)j;
    atomic_fetch_add(&t->runs, 1);
    pthread_mutex_lock(&order_lock);
    if (n_order < 256)
        order[n_order++] = t->id;
    pthread_mutex_unlock(&order_lock);
}

static void drop_job(bd_job *j, int status)
{
    test_job *t = (test_job *)j;
    atomic_store(&t->drop_status, status);
    atomic_fetch_add(&t->drops, 1);
}

static void run_blocker(bd_job *j)
{
    atomic_store(&blocker_running, true);
    for (int i = 0; i < 20000 && !atomic_load(&gate_open); i++) {   /* at most ~20 s */
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    run_job(j);
}

static void job_init(test_job *t, bd_served *s, int id)
{
    memset(t, 0, sizeof *t);
    t->base.served = s;
    t->base.run = run_job;
    t->base.drop = drop_job;
    t->id = id;
}

static bd_served *fake_version(const char *name, int queue_limit)
{
    bd_model_config mc;
    model_config_defaults(&mc);
    mc.queue_limit = queue_limit;
    bd_served *s = NULL;
    assert_int_equal(served_create(name, "1", &mc, 64, NULL, &s, NULL), 0);
    return s;
}

/* Wait (bounded) until COUNT jobs of JOBS ran or were dropped. */
static void wait_done(test_job *jobs, int count)
{
    for (int i = 0; i < 10000; i++) {
        int done = 0;
        for (int k = 0; k < count; k++)
            done += atomic_load(&jobs[k].runs) + atomic_load(&jobs[k].drops);
        if (done >= count)
            return;
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    fail_msg("jobs did not finish in time");
}

static void start_blocker(bd_scheduler *s, test_job *blocker, bd_served *v)
{
    job_init(blocker, v, 999);
    blocker->base.run = run_blocker;
    atomic_store(&gate_open, false);
    atomic_store(&blocker_running, false);
    assert_int_equal(bd_scheduler_submit(s, &blocker->base, NULL), 0);
    for (int i = 0; i < 10000 && !atomic_load(&blocker_running); i++) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    assert_true(atomic_load(&blocker_running));
}

static void test_every_job_runs_once(void **state)
{
    bd_served *a = fake_version("a", 1000), *b = fake_version("b", 1000);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(2, 1, &s, NULL), 0);
    static test_job jobs[400];
    for (int i = 0; i < 400; i++) {
        job_init(&jobs[i], i % 2 ? a : b, i);
        bd_error err = { 0 };
        int rc;
        /* The queues are large, but the workers may lag: retry a full queue (bounded). */
        for (int tries = 0; (rc = bd_scheduler_submit(s, &jobs[i].base, &err)) == BD_EBUSY && tries < 1000; tries++)
            sched_yield();
        assert_int_equal(rc, 0);
    }
    wait_done(jobs, 400);
    assert_int_equal(bd_scheduler_drain(s, 1000), 0);
    bd_scheduler_destroy(s);
    for (int i = 0; i < 400; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
        assert_int_equal(atomic_load(&jobs[i].drops), 0);
    }
    bd_model_stats *st = bd_served_stats(a);
    assert_int_equal(st->queued, 0);
    assert_int_equal(st->in_flight, 0);
    assert_int_equal(st->queue.count, 200);
    assert_int_equal(st->queue_hist.count, 200);
    assert_int_equal(bd_served_stats(b)->queue.count, 200);
    bd_served_release(a);
    bd_served_release(b);
    assert_int_equal(served_live_count(), 0);
}

static void test_full_queue_is_busy(void **state)
{
    bd_served *v = fake_version("small", 2);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, q[3];
    start_blocker(s, &blocker, v);
    for (int i = 0; i < 3; i++)
        job_init(&q[i], v, i);
    assert_int_equal(bd_scheduler_submit(s, &q[0].base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &q[1].base, NULL), 0);
    bd_error err = { 0 };
    assert_int_equal(bd_scheduler_submit(s, &q[2].base, &err), BD_EBUSY);
    assert_non_null(strstr(err.msg, "queue full"));
    assert_int_equal(bd_served_stats(v)->queued, 2);
    assert_int_equal(bd_served_stats(v)->in_flight, 1);
    atomic_store(&gate_open, true);
    wait_done(q, 2);
    assert_int_equal(bd_scheduler_drain(s, 1000), 0);
    bd_scheduler_destroy(s);
    assert_int_equal(atomic_load(&q[2].runs) + atomic_load(&q[2].drops), 0);   /* caller kept it */
    bd_served_release(v);
}

static void test_expired_and_cancelled_are_dropped(void **state)
{
    bd_served *v = fake_version("m", 10);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, late, gone, ok;
    start_blocker(s, &blocker, v);
    job_init(&late, v, 1);
    late.base.deadline_ns = bd_now_ns() + 1000000;      /* 1 ms: passes while queued */
    job_init(&gone, v, 2);
    job_init(&ok, v, 3);
    ok.base.deadline_ns = bd_now_ns() + 60ull * 1000000000ull;
    assert_int_equal(bd_scheduler_submit(s, &late.base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &gone.base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &ok.base, NULL), 0);
    atomic_store(&gone.base.cancelled, true);             /* e.g. the client hung up */
    struct timespec wait = { 0, 5000000 };
    nanosleep(&wait, NULL);
    atomic_store(&gate_open, true);
    test_job *all[] = { &late, &gone, &ok };
    for (int i = 0; i < 3; i++)
        wait_done(all[i], 1);
    assert_int_equal(atomic_load(&late.runs), 0);
    assert_int_equal(atomic_load(&late.drop_status), BD_ETIMEDOUT);
    assert_int_equal(atomic_load(&gone.runs), 0);
    assert_int_equal(atomic_load(&gone.drop_status), BD_ECANCELLED);
    assert_int_equal(atomic_load(&ok.runs), 1);
    assert_int_equal(bd_scheduler_drain(s, 1000), 0);
    bd_scheduler_destroy(s);
    assert_int_equal(bd_served_stats(v)->queued, 0);
    bd_served_release(v);
}

static void test_round_robin_across_models(void **state)
{
    bd_served *a = fake_version("a", 10), *b = fake_version("b", 10);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, jobs[8];
    start_blocker(s, &blocker, a);
    pthread_mutex_lock(&order_lock);
    n_order = 0;
    pthread_mutex_unlock(&order_lock);
    for (int i = 0; i < 4; i++) {                          /* a's four first, then b's four */
        job_init(&jobs[i], a, 100 + i);
        assert_int_equal(bd_scheduler_submit(s, &jobs[i].base, NULL), 0);
    }
    for (int i = 4; i < 8; i++) {
        job_init(&jobs[i], b, 200 + i - 4);
        assert_int_equal(bd_scheduler_submit(s, &jobs[i].base, NULL), 0);
    }
    atomic_store(&gate_open, true);
    wait_done(jobs, 8);
    bd_scheduler_destroy(s);
    /* order[0] is the blocker; then b must not wait behind all of a. */
    int want[] = { 999, 100, 200, 101, 201, 102, 202, 103, 203 };
    assert_int_equal(n_order, 9);
    for (int i = 0; i < 9; i++)
        assert_int_equal(order[i], want[i]);
    bd_served_release(a);
    bd_served_release(b);
}

static void test_drain_drops_what_cannot_finish(void **state)
{
    bd_served *v = fake_version("m", 10);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, q[3];
    start_blocker(s, &blocker, v);
    for (int i = 0; i < 3; i++) {
        job_init(&q[i], v, i);
        assert_int_equal(bd_scheduler_submit(s, &q[i].base, NULL), 0);
    }
    uint64_t t0 = bd_now_ns();
    assert_int_equal(bd_scheduler_drain(s, 50), 3);        /* the blocker holds the worker */
    uint64_t waited_ms = (bd_now_ns() - t0) / 1000000;
    assert_true(waited_ms >= 45 && waited_ms < 5000);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(atomic_load(&q[i].drops), 1);
        assert_int_equal(atomic_load(&q[i].drop_status), BD_EUNAVAIL);
    }
    test_job after;
    job_init(&after, v, 9);
    assert_int_equal(bd_scheduler_submit(s, &after.base, NULL), BD_EUNAVAIL);
    atomic_store(&gate_open, true);
    bd_scheduler_destroy(s);                               /* joins: the blocker finished */
    assert_int_equal(atomic_load(&blocker.runs), 1);
    assert_int_equal(bd_served_stats(v)->queued, 0);
    bd_served_release(v);
}

static void test_drain_lets_queued_jobs_finish(void **state)
{
    bd_served *v = fake_version("m", 100);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(2, 1, &s, NULL), 0);
    test_job q[50];
    for (int i = 0; i < 50; i++) {
        job_init(&q[i], v, i);
        assert_int_equal(bd_scheduler_submit(s, &q[i].base, NULL), 0);
    }
    assert_int_equal(bd_scheduler_drain(s, 10000), 0);
    for (int i = 0; i < 50; i++)
        assert_int_equal(atomic_load(&q[i].runs), 1);
    bd_scheduler_destroy(s);
    bd_served_release(v);
}

/* ---- dynamic batching --------------------------------------------------------------------- */

/* Batches run, in order: how many jobs and the ids of their first job. */
static int batch_n[64], batch_first[64], n_batches;

static void run_batch(bd_job *list, size_t n)
{
    pthread_mutex_lock(&order_lock);
    if (n_batches < 64) {
        batch_n[n_batches] = (int)n;
        batch_first[n_batches++] = ((test_job *)list)->id;
    }
    pthread_mutex_unlock(&order_lock);
    size_t k = 0;
    for (bd_job *j = list, *next; j; j = next, k++) {
        next = j->next;
        run_job(j);
    }
    assert_int_equal(k, n);
}

/* Jobs of the same id parity join (as requests of equal non-batch dims would). */
static bool same_parity(const bd_job *a, const bd_job *b)
{
    return ((test_job *)a)->id % 2 == ((test_job *)b)->id % 2;
}

static bd_served *batching_version(int max_batch, const int *preferred, int n_preferred,
                                   uint64_t delay_us)
{
    bd_model_config mc;
    model_config_defaults(&mc);
    mc.queue_limit = 64;
    mc.max_batch_size = max_batch;
    mc.batching.enabled = true;
    mc.batching.max_queue_delay_us = delay_us;
    for (int p = 0; p < n_preferred; p++)
        mc.batching.preferred[p] = preferred[p];
    mc.batching.n_preferred = n_preferred;
    bd_served *s = NULL;
    assert_int_equal(served_create("batched", "1", &mc, 64, NULL, &s, NULL), 0);
    s->batching = true;
    for (int b = 1; b <= max_batch && b <= BD_BATCH_MAX_LADDER; b++)   /* every size planned */
        s->batch_ladder[s->n_batch_ladder++] = b;
    return s;
}

static void batch_job_init(test_job *t, bd_served *v, int id, uint64_t rows)
{
    job_init(t, v, id);
    t->base.rows = rows;
    t->base.joins = same_parity;
    t->base.run_batch = run_batch;
}

static void reset_batches(void)
{
    pthread_mutex_lock(&order_lock);
    n_batches = 0;
    n_order = 0;
    pthread_mutex_unlock(&order_lock);
}

static void test_batches_prefer_preferred_sizes(void **state)
{
    int preferred[] = { 4 };
    bd_served *v = batching_version(8, preferred, 1, 0);
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, q[7];
    start_blocker(s, &blocker, v);
    reset_batches();
    /* ids 0,2,4,6,8 (even, 1 row each) join; 1 and 3 (odd, 3 rows each) form their own */
    int ids[] = { 0, 1, 2, 4, 3, 6, 8 };
    uint64_t rows[] = { 1, 3, 1, 1, 3, 1, 1 };
    for (int i = 0; i < 7; i++) {
        batch_job_init(&q[i], v, ids[i], rows[i]);
        assert_int_equal(bd_scheduler_submit(s, &q[i].base, NULL), 0);
    }
    atomic_store(&gate_open, true);
    wait_done(q, 7);
    bd_scheduler_destroy(s);
    /* even: 1+1+1+1 reaches preferred 4 (the fifth waits); odd: 3+3 = 6 goes whole; then 8 */
    assert_int_equal(n_batches, 2);
    assert_int_equal(batch_n[0], 4);
    assert_int_equal(batch_first[0], 0);
    assert_int_equal(batch_n[1], 2);
    assert_int_equal(batch_first[1], 1);
    assert_int_equal(order[n_order - 1], 8);                 /* alone, last */
    for (int i = 0; i < 7; i++)
        assert_int_equal(atomic_load(&q[i].runs), 1);
    assert_int_equal(bd_served_stats(v)->queued, 0);
    bd_served_release(v);
}

static uint64_t ms_since(uint64_t t0)
{
    return (bd_now_ns() - t0) / 1000000;
}

static void test_batch_waits_for_the_delay(void **state)
{
    bd_served *v = batching_version(4, NULL, 0, 100000);        /* 100 ms */
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(2, 1, &s, NULL), 0);
    reset_batches();
    test_job blocker, q[5];
    /* nothing of the version runs: a lone request goes at once, whatever the delay */
    uint64_t t0 = bd_now_ns();
    batch_job_init(&q[0], v, 0, 1);
    assert_int_equal(bd_scheduler_submit(s, &q[0].base, NULL), 0);
    wait_done(q, 1);
    assert_true(ms_since(t0) < 90);
    /* a run of the version in progress (on one worker): the other waits for company */
    start_blocker(s, &blocker, v);
    t0 = bd_now_ns();
    batch_job_init(&q[1], v, 2, 1);
    assert_int_equal(bd_scheduler_submit(s, &q[1].base, NULL), 0);
    struct timespec ms20 = { 0, 20000000 };
    nanosleep(&ms20, NULL);
    assert_int_equal(atomic_load(&q[1].runs), 0);            /* waiting for company */
    batch_job_init(&q[2], v, 4, 1);
    assert_int_equal(bd_scheduler_submit(s, &q[2].base, NULL), 0);
    wait_done(&q[1], 2);
    uint64_t ms = ms_since(t0);
    assert_true(ms >= 95 && ms < 5000);
    assert_int_equal(n_batches, 1);
    assert_int_equal(batch_n[0], 2);
    /* a full batch (max_batch_size rows) goes at once, without the delay */
    t0 = bd_now_ns();
    batch_job_init(&q[3], v, 6, 2);
    batch_job_init(&q[4], v, 8, 2);
    assert_int_equal(bd_scheduler_submit(s, &q[3].base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &q[4].base, NULL), 0);
    wait_done(&q[3], 2);
    assert_true(ms_since(t0) < 90);
    assert_int_equal(n_batches, 2);
    assert_int_equal(batch_n[1], 2);
    atomic_store(&gate_open, true);
    bd_scheduler_destroy(s);
    bd_served_release(v);
}

static void test_wait_when_idle_waits_the_delay(void **state)
{
    bd_served *v = batching_version(4, NULL, 0, 100000);        /* 100 ms */
    v->config.batching.wait_when_idle = true;                   /* Triton's strict rule */
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(2, 1, &s, NULL), 0);
    reset_batches();
    test_job q[1];
    uint64_t t0 = bd_now_ns();
    batch_job_init(&q[0], v, 0, 1);
    assert_int_equal(bd_scheduler_submit(s, &q[0].base, NULL), 0);
    wait_done(q, 1);
    uint64_t ms = ms_since(t0);
    assert_true(ms >= 95 && ms < 5000);
    bd_scheduler_destroy(s);
    bd_served_release(v);
}

static void test_queue_policy_timeout_and_priority(void **state)
{
    bd_served *v = batching_version(1, NULL, 0, 0);
    v->config.batching.priority_levels = 2;
    v->config.batching.default_priority_level = 2;
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, low, high, timed;
    start_blocker(s, &blocker, v);
    reset_batches();
    batch_job_init(&low, v, 1, 1);
    low.base.level = 2;
    batch_job_init(&timed, v, 3, 1);
    timed.base.level = 2;
    timed.base.timeout_ns = bd_now_ns() + 30000000;          /* 30 ms, REJECT */
    batch_job_init(&high, v, 2, 1);
    high.base.level = 1;
    assert_int_equal(bd_scheduler_submit(s, &low.base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &timed.base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &high.base, NULL), 0);
    assert_int_equal(bd_served_stats(v)->queued, 3);
    /* the timer answers the timed-out job while the worker is still busy */
    wait_done(&timed, 1);
    assert_int_equal(atomic_load(&timed.drop_status), BD_EUNAVAIL);
    assert_non_null(timed.base.why);
    assert_int_equal(atomic_load(&blocker.runs), 0);
    assert_int_equal(bd_served_stats(v)->queued, 2);
    atomic_store(&gate_open, true);
    wait_done(&low, 1);
    wait_done(&high, 1);
    bd_scheduler_destroy(s);
    assert_int_equal(n_order, 3);
    assert_int_equal(order[0], 999);
    assert_int_equal(order[1], 2);                           /* level 1 first */
    assert_int_equal(order[2], 1);
    bd_served_release(v);
}

static void test_delay_action_moves_a_timed_out_job_back(void **state)
{
    bd_served *v = batching_version(1, NULL, 0, 0);
    v->config.batching.timeout_delay = true;
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, a, b;
    start_blocker(s, &blocker, v);
    reset_batches();
    batch_job_init(&a, v, 1, 1);
    a.base.timeout_ns = bd_now_ns() + 10000000;              /* 10 ms, DELAY */
    batch_job_init(&b, v, 2, 1);
    assert_int_equal(bd_scheduler_submit(s, &a.base, NULL), 0);
    assert_int_equal(bd_scheduler_submit(s, &b.base, NULL), 0);
    struct timespec ms = { 0, 100000000 };
    nanosleep(&ms, NULL);                                    /* A times out while queued */
    atomic_store(&gate_open, true);
    wait_done(&a, 1);
    wait_done(&b, 1);
    bd_scheduler_destroy(s);
    assert_int_equal(atomic_load(&a.runs), 1);               /* delayed, still run */
    assert_int_equal(n_order, 3);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 1);
    bd_served_release(v);
}

static void test_max_queue_size_per_level(void **state)
{
    bd_served *v = batching_version(4, NULL, 0, 0);
    v->config.batching.max_queue_size = 1;
    bd_scheduler *s = NULL;
    assert_int_equal(bd_scheduler_create(1, 1, &s, NULL), 0);
    test_job blocker, a, b;
    start_blocker(s, &blocker, v);
    batch_job_init(&a, v, 0, 1);
    batch_job_init(&b, v, 2, 1);
    assert_int_equal(bd_scheduler_submit(s, &a.base, NULL), 0);
    bd_error err = { 0 };
    assert_int_equal(bd_scheduler_submit(s, &b.base, &err), BD_EUNAVAIL);
    assert_non_null(strstr(err.msg, "maximum queue size"));
    atomic_store(&gate_open, true);
    wait_done(&a, 1);
    bd_scheduler_destroy(s);
    bd_served_release(v);
}

static void test_create_rejects_bad_sizes(void **state)
{
    bd_scheduler *s = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_scheduler_create(0, 1, &s, &err), BD_EINVAL);
    assert_null(s);
    bd_scheduler_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_job_runs_once),
        cmocka_unit_test(test_full_queue_is_busy),
        cmocka_unit_test(test_expired_and_cancelled_are_dropped),
        cmocka_unit_test(test_round_robin_across_models),
        cmocka_unit_test(test_batches_prefer_preferred_sizes),
        cmocka_unit_test(test_batch_waits_for_the_delay),
        cmocka_unit_test(test_wait_when_idle_waits_the_delay),
        cmocka_unit_test(test_queue_policy_timeout_and_priority),
        cmocka_unit_test(test_delay_action_moves_a_timed_out_job_back),
        cmocka_unit_test(test_max_queue_size_per_level),
        cmocka_unit_test(test_drain_drops_what_cannot_finish),
        cmocka_unit_test(test_drain_lets_queued_jobs_finish),
        cmocka_unit_test(test_create_rejects_bad_sizes),
    };
    return cmocka_run_group_tests_name("daemon scheduler", tests, NULL, NULL);
}
