/* The worker pool: per-version FIFO queues (hanging off each bd_served, see
 * registry_internal.h), served round-robin by N workers under one mutex. A queued job holds
 * a reference to its version, so a queue never outlives the version it belongs to. */
#include "daemon/scheduler.h"

#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "daemon/log.h"
#include "daemon/registry_internal.h"

struct bd_scheduler {
    pthread_mutex_t lock;
    pthread_cond_t  work;         /* a job was queued, or stopping */
    pthread_cond_t  idle;         /* a job finished or was taken (drain waits on it) */
    bd_served      *ring_head;    /* versions with queued jobs, round-robin order */
    bd_served      *ring_tail;
    int             queued;       /* jobs in all queues */
    int             running;      /* jobs on workers now */
    bool            draining;     /* submit refuses */
    bool            stopping;     /* workers exit */
    int             threads_per_worker;
    int             n_workers;
    pthread_t      *workers;
};

/* Take the next job: from the version at the ring's head, which then goes to the back. */
static bd_job *take(bd_scheduler *s)
{
    bd_served *v = s->ring_head;
    if (!v)
        return NULL;
    bd_job *job = v->q_head;
    v->q_head = job->next;
    if (!v->q_head)
        v->q_tail = NULL;
    v->q_len--;
    s->queued--;
    s->ring_head = v->q_next;
    if (!s->ring_head)
        s->ring_tail = NULL;
    v->q_next = NULL;
    v->q_active = false;
    if (v->q_len > 0) {           /* back of the ring: the other models go first */
        v->q_active = true;
        if (s->ring_tail)
            s->ring_tail->q_next = v;
        else
            s->ring_head = v;
        s->ring_tail = v;
    }
    job->next = NULL;
    atomic_fetch_sub_explicit(&v->stats.queued, 1, memory_order_relaxed);
    return job;
}

static void *worker_main(void *arg)
{
    bd_scheduler *s = arg;
    if (s->threads_per_worker > 0)
        omp_set_num_threads(s->threads_per_worker);
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->stopping && !s->ring_head)
            pthread_cond_wait(&s->work, &s->lock);
        if (s->stopping)
            break;
        bd_job *job = take(s);
        s->running++;
        pthread_mutex_unlock(&s->lock);

        bd_served *v = job->served;
        uint64_t now = bd_now_ns();
        if (atomic_load(&job->cancelled)) {
            job->drop(job, BD_ECANCELLED);
        } else if (job->deadline_ns && now >= job->deadline_ns) {
            job->drop(job, BD_ETIMEDOUT);
        } else {
            uint64_t waited = now > job->enqueue_ns ? now - job->enqueue_ns : 0;
            bd_duration_add(&v->stats.queue, waited);
            bd_histogram_observe(&v->stats.queue_hist, waited);
            /* RUN may release the job's reference: hold one until the gauge is back. */
            bd_served_retain(v);
            atomic_fetch_add_explicit(&v->stats.in_flight, 1, memory_order_relaxed);
            job->run(job);
            atomic_fetch_sub_explicit(&v->stats.in_flight, 1, memory_order_relaxed);
            bd_served_release(v);
        }

        pthread_mutex_lock(&s->lock);
        s->running--;
        pthread_cond_broadcast(&s->idle);
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
    pthread_condattr_destroy(&ca);
    s->threads_per_worker = threads_per_worker;
    for (int i = 0; i < workers; i++) {
        int rc = pthread_create(&s->workers[i], NULL, worker_main, s);
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
    pthread_mutex_lock(&s->lock);
    if (s->draining || s->stopping) {
        pthread_mutex_unlock(&s->lock);
        return bd_error_set(err, BD_EUNAVAIL, "the server is shutting down");
    }
    if (v->q_len >= v->queue_limit) {
        pthread_mutex_unlock(&s->lock);
        return bd_error_set(err, BD_EBUSY, "model '%s': queue full (%d requests waiting); retry later",
                            v->name, v->queue_limit);
    }
    job->enqueue_ns = bd_now_ns();
    job->next = NULL;
    if (v->q_tail)
        v->q_tail->next = job;
    else
        v->q_head = job;
    v->q_tail = job;
    v->q_len++;
    s->queued++;
    atomic_fetch_add_explicit(&v->stats.queued, 1, memory_order_relaxed);
    if (!v->q_active) {
        v->q_active = true;
        v->q_next = NULL;
        if (s->ring_tail)
            s->ring_tail->q_next = v;
        else
            s->ring_head = v;
        s->ring_tail = v;
    }
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Unlink every queued job (caller holds the lock); returns them as a list. */
static bd_job *take_all(bd_scheduler *s)
{
    bd_job *head = NULL, **tail = &head;
    for (bd_job *j; (j = take(s)) != NULL;) {
        *tail = j;
        tail = &j->next;
    }
    return head;
}

static int drop_list(bd_job *list, int status)
{
    int n = 0;
    for (bd_job *j = list, *next; j; j = next, n++) {
        next = j->next;
        j->drop(j, status);
    }
    return n;
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
    int dropped = drop_list(rest, BD_EUNAVAIL);
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
    pthread_mutex_unlock(&s->lock);
    for (int i = 0; i < s->n_workers; i++)
        pthread_join(s->workers[i], NULL);
    drop_list(take_all(s), BD_EUNAVAIL);   /* destroyed without a drain */
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->lock);
    free(s->workers);
    free(s);
}
