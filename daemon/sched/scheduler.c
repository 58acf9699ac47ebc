/* The worker pool: per-version queues (hanging off each bd_served, registry_served_internal.h),
 * served round-robin by N workers under one mutex, and a timer thread that answers queued
 * jobs as they expire. A queued job holds a reference to its version, so a queue never
 * outlives the version it belongs to.
 *
 * A version's queue is one list ordered by (priority level, delayed), FIFO within each: a
 * job is inserted after the last job of its key or a lower one (the common case, one level,
 * is an append). */
#include "daemon/sched/scheduler.h"

#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "daemon/sched/batch_form.h"
#include "daemon/sched/sched_queue.h"
#include "daemon/log.h"
#include "daemon/registry/registry_served_internal.h"

/* How often the timer looks at queued jobs for a cancellation (nothing signals one). */
#define CANCEL_POLL_MS 20

struct bd_scheduler {
    pthread_mutex_t lock;
    pthread_cond_t  work;         /* a job was queued, or stopping */
    pthread_cond_t  idle;         /* a job finished or was taken (drain waits on it) */
    pthread_cond_t  timer_cv;     /* a job that expires before TIMER_WAKE_NS was queued */
    bd_served      *ring_head;    /* versions with queued jobs, round-robin order */
    bd_served      *ring_tail;
    int             queued;       /* jobs in all queues */
    int             running;      /* jobs taken by workers and not finished */
    bool            draining;     /* submit refuses */
    bool            stopping;     /* workers and the timer exit */
    uint64_t        timer_wake_ns;/* when the timer looks next; UINT64_MAX = when told */
    int             threads_per_worker;
    int             n_workers;
    pthread_t      *workers;
    pthread_t       timer;
    bool            has_timer;
};

static void wait_until(pthread_cond_t *cv, pthread_mutex_t *lock, uint64_t when_ns)
{
    if (when_ns == UINT64_MAX) {
        pthread_cond_wait(cv, lock);
        return;
    }
    struct timespec ts = { (time_t)(when_ns / 1000000000ull), (long)(when_ns % 1000000000ull) };
    pthread_cond_timedwait(cv, lock, &ts);
}

/* ---- queues (the caller holds the lock) ---------------------------------------------------- */

static bool key_le(const bd_job *a, const bd_job *b)       /* a's key <= b's key */
{
    return a->level < b->level || (a->level == b->level && a->delayed <= b->delayed);
}

static void ring_push(bd_scheduler *s, bd_served *v)
{
    v->queue.active = true;
    v->queue.next = NULL;
    if (s->ring_tail)
        s->ring_tail->queue.next = v;
    else
        s->ring_head = v;
    s->ring_tail = v;
}

static void ring_remove(bd_scheduler *s, bd_served *v)
{
    bd_served *prev = NULL;
    for (bd_served *x = s->ring_head; x && x != v; x = x->queue.next)
        prev = x;
    if (prev)
        prev->queue.next = v->queue.next;
    else
        s->ring_head = v->queue.next;
    if (s->ring_tail == v)
        s->ring_tail = prev;
    v->queue.next = NULL;
    v->queue.active = false;
}

static void q_insert(bd_scheduler *s, bd_served *v, bd_job *job)
{
    bd_job *prev = NULL;
    if (v->queue.tail && key_le(v->queue.tail, job))
        prev = v->queue.tail;
    else
        for (bd_job *x = v->queue.head; x && key_le(x, job); x = x->next)
            prev = x;
    job->next = prev ? prev->next : v->queue.head;
    if (prev)
        prev->next = job;
    else
        v->queue.head = job;
    if (!job->next)
        v->queue.tail = job;
    v->queue.len++;
    v->queue.level_len[job->level]++;
    s->queued++;
    atomic_fetch_add_explicit(&v->stats.queued, 1, memory_order_relaxed);
    if (!v->queue.active)
        ring_push(s, v);
}

/* Unlink JOB (after PREV, NULL = the head) from V's queue; V leaves the ring when empty. */
static void q_unlink(bd_scheduler *s, bd_served *v, bd_job *prev, bd_job *job)
{
    if (prev)
        prev->next = job->next;
    else
        v->queue.head = job->next;
    if (v->queue.tail == job)
        v->queue.tail = prev;
    job->next = NULL;
    v->queue.len--;
    v->queue.level_len[job->level]--;
    s->queued--;
    atomic_fetch_sub_explicit(&v->stats.queued, 1, memory_order_relaxed);
    if (v->queue.len == 0)
        ring_remove(s, v);
}

/* V to the back of the ring (the other models go first), if it still has jobs. */
static void ring_rotate(bd_scheduler *s, bd_served *v)
{
    if (!v->queue.active || s->ring_tail == v)
        return;
    ring_remove(s, v);
    ring_push(s, v);
}

/* ---- forming a batch (batch_form.h decides) -------------------------------------------------- */

static bool may_join(const bd_job *head, const bd_job *j)
{
    return j == head || (j->rows > 0 && j->joins && head->joins(head, j));
}

/* How many of V's queued jobs to run now as one batch; 0 = not yet (*WAKE lowered). */
static size_t batch_size_now(const bd_served *v, uint64_t now, uint64_t *wake)
{
    const bd_batching_config *b = &v->config.batching;
    bd_batch_rule r = {
        .max_rows       = (uint64_t)(v->batch_max_rows > 0 ? v->batch_max_rows : v->config.max_batch_size),
        .preferred      = b->preferred,
        .n_preferred    = b->n_preferred,
        .ladder         = v->batch_ladder,
        .n_ladder       = v->n_batch_ladder,
        .delay_ns       = b->max_queue_delay_us * 1000u,
        .wait_when_idle = b->wait_when_idle,
    };
    return bd_batch_form(&r, v->queue.head, v->queue.runs > 0, now, wake);
}

/* Unlink the first N jobs of V that may join its head, as a list in queue order. */
static bd_job *take_batch(bd_scheduler *s, bd_served *v, size_t n)
{
    bd_job *h = v->queue.head, *list = NULL, **tail = &list;
    bd_job *prev = NULL;
    for (bd_job *j = h, *next; j && n > 0; j = next) {
        next = j->next;
        if (!may_join(h, j)) {
            prev = j;
            continue;
        }
        q_unlink(s, v, prev, j);
        *tail = j;
        tail = &j->next;
        n--;
    }
    return list;
}

/* The next work for a worker: a list of *N jobs of one version, or NULL (then *WAKE says when
 * a batch that is waiting for more jobs is due). Round-robin over the versions. */
static bd_job *take_ready(bd_scheduler *s, uint64_t now, size_t *n, uint64_t *wake)
{
    for (bd_served *v = s->ring_head; v; v = v->queue.next) {
        size_t k = v->batching ? batch_size_now(v, now, wake) : 1;
        if (k == 0)
            continue;
        bd_job *list = take_batch(s, v, k);
        ring_rotate(s, v);
        *n = k;
        return list;
    }
    return NULL;
}

/* ---- expiry ------------------------------------------------------------------------------------- */

/* Why JOB must not run (NOW): a drop status, or 0. Marks a DELAY timeout (returns 0). */
static int expired(bd_job *job, const bd_served *v, uint64_t now)
{
    if (atomic_load(&job->cancelled))
        return BD_ECANCELLED;
    if (job->deadline_ns && now >= job->deadline_ns)
        return BD_ETIMEDOUT;
    if (job->timeout_ns && !job->delayed && now >= job->timeout_ns) {
        if (!v->config.batching.timeout_delay) {
            job->why = "request timeout expired in the queue (the model's queue policy)";
            return BD_EUNAVAIL;
        }
        job->delayed = true;
    }
    return 0;
}

static uint64_t expiry(const bd_job *job)
{
    uint64_t e = job->deadline_ns ? job->deadline_ns : UINT64_MAX;
    if (job->timeout_ns && !job->delayed && job->timeout_ns < e)
        e = job->timeout_ns;
    return e;
}

static void drop_list(bd_job *list, int status)
{
    for (bd_job *j = list, *next; j; j = next) {
        next = j->next;
        j->drop(j, status ? status : j->drop_status);
    }
}

/* The timer thread: answers expired and cancelled jobs while they wait, whatever the workers
 * are doing, and moves DELAY timeouts behind their level. */
static void *timer_main(void *arg)
{
    bd_scheduler *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        uint64_t now = bd_now_ns(), next = UINT64_MAX;
        bd_job *gone = NULL, *delayed = NULL;
        for (bd_served *v = s->ring_head, *vnext; v; v = vnext) {
            vnext = v->queue.next;                  /* V may leave the ring below */
            bd_job *prev = NULL;
            for (bd_job *j = v->queue.head, *jn; j; j = jn) {
                jn = j->next;
                bool was_delayed = j->delayed;
                int st = expired(j, v, now);
                if (st || j->delayed != was_delayed) {
                    q_unlink(s, v, prev, j);
                    j->drop_status = st;
                    j->next = st ? gone : delayed;
                    *(st ? &gone : &delayed) = j;
                    continue;
                }
                prev = j;
                if (expiry(j) < next)
                    next = expiry(j);
            }
        }
        for (bd_job *j = delayed, *jn; j; j = jn) {     /* behind their level's others */
            jn = j->next;
            q_insert(s, j->served, j);
            if (expiry(j) < next)
                next = expiry(j);
        }
        if (delayed)
            pthread_cond_broadcast(&s->work);           /* the order of a queue changed */
        if (s->queued > 0 && now + CANCEL_POLL_MS * 1000000ull < next)
            next = now + CANCEL_POLL_MS * 1000000ull;
        if (gone) {
            pthread_cond_broadcast(&s->idle);
            s->timer_wake_ns = 0;                       /* submit need not signal meanwhile */
            pthread_mutex_unlock(&s->lock);
            drop_list(gone, 0);
            pthread_mutex_lock(&s->lock);
            continue;
        }
        s->timer_wake_ns = next;
        wait_until(&s->timer_cv, &s->lock, next);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- workers ------------------------------------------------------------------------------------ */

static void *worker_main(void *arg)
{
    bd_scheduler *s = arg;
    if (s->threads_per_worker > 0)
        omp_set_num_threads(s->threads_per_worker);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        bd_job *list = NULL;
        size_t n = 0;
        while (!s->stopping) {
            uint64_t wake = UINT64_MAX;
            if (s->ring_head && (list = take_ready(s, bd_now_ns(), &n, &wake)) != NULL)
                break;
            wait_until(&s->work, &s->lock, wake);
        }
        if (!list)
            break;
        /* The version is busy until this run ends (its next batch may wait for company); the
         * reference keeps V alive until the count is back, whatever RUN releases. */
        bd_served *v = list->served;
        bd_served_retain(v);
        v->queue.runs++;
        s->running += (int)n;
        if (s->ring_head)
            pthread_cond_signal(&s->work);      /* more may be ready for another worker */
        pthread_mutex_unlock(&s->lock);

        /* Drop what expired since; the rest runs, alone or as one batch. */
        uint64_t now = bd_now_ns();
        bd_job *run = NULL, **tail = &run;
        size_t k = 0;
        for (bd_job *j = list, *next; j; j = next) {
            next = j->next;
            j->next = NULL;
            int st = expired(j, v, now);
            if (st) {
                j->drop(j, st);
                continue;
            }
            uint64_t waited = now > j->enqueue_ns ? now - j->enqueue_ns : 0;
            bd_duration_add(&v->stats.queue, waited);
            bd_histogram_observe(&v->stats.queue_hist, waited);
            *tail = j;
            tail = &j->next;
            k++;
        }
        if (k > 0) {
            atomic_fetch_add_explicit(&v->stats.in_flight, (int64_t)k, memory_order_relaxed);
            if (k == 1)
                run->run(run);
            else
                run->run_batch(run, k);
            atomic_fetch_sub_explicit(&v->stats.in_flight, (int64_t)k, memory_order_relaxed);
        }

        pthread_mutex_lock(&s->lock);
        v->queue.runs--;
        s->running -= (int)n;
        pthread_cond_broadcast(&s->idle);      /* (V's queue, idle now, is this worker's next look) */
        pthread_mutex_unlock(&s->lock);
        bd_served_release(v);                   /* may free V: not under the lock */
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int bd_scheduler_create(int workers, int threads_per_worker, bd_scheduler **out, bd_error *err)
{
    if (workers < 1 || workers > 1024)
        return bd_error_set(err, BD_EINVAL, "scheduler: expected 1 to 1024 workers, got %d", workers);
    bd_scheduler *s = calloc(1, sizeof *s);
    if (!s || !(s->workers = calloc((size_t)workers, sizeof *s->workers))) {
        free(s);
        return bd_error_set(err, BD_ENOMEM, "scheduler: out of memory");
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->work, &ca);
    pthread_cond_init(&s->idle, &ca);
    pthread_cond_init(&s->timer_cv, &ca);
    pthread_condattr_destroy(&ca);
    s->threads_per_worker = threads_per_worker;
    s->timer_wake_ns = UINT64_MAX;
    int rc = pthread_create(&s->timer, NULL, timer_main, s);
    if (rc) {
        bd_scheduler_destroy(s);
        return bd_error_set(err, BD_EIO, "scheduler: cannot start the timer thread: %s", strerror(rc));
    }
    s->has_timer = true;
    for (int i = 0; i < workers; i++) {
        rc = pthread_create(&s->workers[i], NULL, worker_main, s);
        if (rc) {
            bd_scheduler_destroy(s);
            return bd_error_set(err, BD_EIO, "scheduler: cannot start worker %d: %s", i, strerror(rc));
        }
        s->n_workers = i + 1;
    }
    *out = s;
    return 0;
}

int bd_scheduler_submit(bd_scheduler *s, bd_job *job, bd_error *err)
{
    bd_served *v = job->served;
    const bd_batching_config *b = &v->config.batching;
    if (job->level > BD_BATCH_MAX_PRIORITY_LEVELS)
        job->level = BD_BATCH_MAX_PRIORITY_LEVELS;
    pthread_mutex_lock(&s->lock);
    if (s->draining || s->stopping) {
        pthread_mutex_unlock(&s->lock);
        return bd_error_set(err, BD_EUNAVAIL, "the server is shutting down");
    }
    if (b->max_queue_size > 0 && v->queue.level_len[job->level] >= (int)b->max_queue_size) {
        pthread_mutex_unlock(&s->lock);
        return bd_error_set(err, BD_EUNAVAIL, "model '%s': exceeds maximum queue size (%u requests "
                            "waiting, the queue policy's max_queue_size); retry later", v->name,
                            b->max_queue_size);
    }
    if (v->queue.len >= v->queue_limit) {
        pthread_mutex_unlock(&s->lock);
        return bd_error_set(err, BD_EBUSY, "model '%s': queue full (%d requests waiting); retry later",
                            v->name, v->queue_limit);
    }
    job->enqueue_ns = bd_now_ns();
    job->delayed = false;
    job->why = NULL;
    q_insert(s, v, job);
    pthread_cond_signal(&s->work);
    if (expiry(job) < s->timer_wake_ns || s->timer_wake_ns == UINT64_MAX)
        pthread_cond_signal(&s->timer_cv);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Unlink every queued job (caller holds the lock); returns them as a list. */
static bd_job *take_all(bd_scheduler *s)
{
    bd_job *head = NULL, **tail = &head;
    while (s->ring_head) {
        bd_served *v = s->ring_head;
        bd_job *j = v->queue.head;
        q_unlink(s, v, NULL, j);
        *tail = j;
        tail = &j->next;
    }
    return head;
}

void bd_scheduler_stop_taking(bd_scheduler *s)
{
    pthread_mutex_lock(&s->lock);
    s->draining = true;
    pthread_mutex_unlock(&s->lock);
}

bool bd_scheduler_idle(bd_scheduler *s)
{
    pthread_mutex_lock(&s->lock);
    bool idle = s->queued == 0 && s->running == 0;
    pthread_mutex_unlock(&s->lock);
    return idle;
}

static int count_list(const bd_job *j)
{
    int n = 0;
    for (; j; j = j->next)
        n++;
    return n;
}

int bd_scheduler_drain(bd_scheduler *s, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms > 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&s->lock);
    s->draining = true;
    while ((s->queued > 0 || s->running > 0) && timeout_ms > 0 && s->n_workers > 0)
        if (pthread_cond_timedwait(&s->idle, &s->lock, &until) == ETIMEDOUT)
            break;
    bd_job *rest = take_all(s);
    pthread_mutex_unlock(&s->lock);
    int dropped = count_list(rest);
    drop_list(rest, BD_EUNAVAIL);
    if (dropped && timeout_ms > 0)
        bd_log(BD_LOG_WARN, NULL, NULL, "drain: %d queued request(s) dropped after %d ms", dropped, timeout_ms);
    return dropped;
}

void bd_scheduler_destroy(bd_scheduler *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->draining = s->stopping = true;
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->timer_cv);
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < s->n_workers; i++)
        pthread_join(s->workers[i], NULL);
    if (s->has_timer)
        pthread_join(s->timer, NULL);
    drop_list(take_all(s), BD_EUNAVAIL);   /* destroyed without a drain */
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->idle);
    pthread_cond_destroy(&s->timer_cv);
    pthread_mutex_destroy(&s->lock);
    free(s->workers);
    free(s);
}
