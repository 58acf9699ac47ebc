/* The worker pool and per-model queues.
 *
 * N worker threads, each running oneDNN with its own OpenMP team of T threads (N x T <=
 * cores by default). Jobs wait in a bounded queue per model version (bd_served), ordered by
 * priority level, then arrival; workers take from the model queues round-robin, so one busy
 * model cannot starve another.
 *
 * Dynamic batching (a version whose bd_served_batches is true; Triton's dynamic batcher): a
 * worker takes the head job together with the queued jobs that JOIN it, up to
 * max_batch_size rows, and runs them as one (RUN_BATCH). It takes them at once when they fill
 * max_batch_size or reach the largest preferred_batch_size (then the largest preferred size
 * reached), or when no run of the version is in progress; else once the head has waited
 * max_queue_delay_microseconds. A batch only has a size whose plan was compiled at load (the
 * version's ladder); batch_form.h has the rules.
 *
 * A timer thread answers queued jobs at the moment they expire, whatever the workers are
 * doing: the call's deadline (BD_ETIMEDOUT), the queue policy's timeout (BD_EUNAVAIL with
 * REJECT; with DELAY the job moves behind its level's jobs that have not timed out), and
 * cancellation (BD_ECANCELLED, seen within CANCEL_POLL_MS). */
#ifndef BD_DAEMON_SCHEDULER_H
#define BD_DAEMON_SCHEDULER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "daemon/registry.h"

typedef struct bd_scheduler bd_scheduler;
typedef struct bd_job       bd_job;

struct bd_job {
    bd_served     *served;       /* the version to run on; the submitter holds a reference */
    uint64_t       deadline_ns;  /* bd_now_ns() clock; 0 = no deadline */
    uint64_t       enqueue_ns;   /* set by bd_scheduler_submit */
    atomic_bool    cancelled;    /* may be set from any thread; checked before running */
    /* Run the job on a worker thread (inference + response). Afterwards the job belongs to
     * RUN (it frees it). */
    void (*run)(bd_job *job);
    /* The job will not run: STATUS is BD_ETIMEDOUT (deadline passed in the queue),
     * BD_ECANCELLED, or BD_EUNAVAIL (scheduler stopping). Called on a worker or the
     * draining thread; afterwards the job belongs to DROP. */
    void (*drop)(bd_job *job, int status);

    /* Batching and queue policy (read only when the version batches; zero otherwise). */
    uint64_t       rows;         /* the job's batch (dim 0); 0 = runs alone */
    uint32_t       level;        /* priority level, 1 = first; 0 when the model has none */
    uint64_t       timeout_ns;   /* bd_now_ns() clock: the queue policy's timeout; 0 = none */
    /* May OTHER run in one plan run with HEAD (same model, inputs equal but for dim 0)? */
    bool (*joins)(const bd_job *head, const bd_job *other);
    /* Run N >= 2 jobs (LIST, linked by next, in queue order) as one; afterwards every job
     * belongs to RUN_BATCH, which answers each one. */
    void (*run_batch)(bd_job *list, size_t n);

    /* scheduler-internal */
    bool           delayed;      /* its queue-policy timeout passed with DELAY */
    int            drop_status;
    const char    *why;          /* set before DROP when the status alone says too little
                                    (a static string), else NULL */
    bd_job        *next;
};

/* Start WORKERS threads with THREADS_PER_WORKER OpenMP threads each. */
int  bd_scheduler_create(int workers, int threads_per_worker, bd_scheduler **out, bd_error *err);
/* Queue JOB on its model's queue. BD_EBUSY when that queue already holds
 * bd_served_queue_limit() jobs; BD_EUNAVAIL when JOB's priority level already holds the
 * queue policy's max_queue_size jobs, or once draining; on error the caller keeps JOB.
 * Any thread. Updates the model's queued/in_flight gauges and queue-time statistics. */
int  bd_scheduler_submit(bd_scheduler *s, bd_job *job, bd_error *err);
/* Refuse new jobs from now on (bd_scheduler_submit: BD_EUNAVAIL); queued and running jobs go
 * on. The first half of a drain that the caller times itself (braidd's loop polls
 * bd_scheduler_idle, then bd_scheduler_drain(s, 0) drops what is left). Any thread. */
void bd_scheduler_stop_taking(bd_scheduler *s);
/* True when no job is queued or running. Any thread. */
bool bd_scheduler_idle(bd_scheduler *s);
/* Stop taking jobs; let queued and running jobs finish for up to TIMEOUT_MS, then drop what
 * is still queued (BD_EUNAVAIL). Returns the number of jobs dropped. */
int  bd_scheduler_drain(bd_scheduler *s, int timeout_ms);
/* Join the workers and free the scheduler (after drain). NULL is allowed. */
void bd_scheduler_destroy(bd_scheduler *s);

#endif
