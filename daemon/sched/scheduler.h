/* The worker pool and per-model queues.
 *
 * N worker threads, each running oneDNN with its own OpenMP team of T threads (N x T <=
 * cores by default). Jobs wait in a bounded queue per model version (bd_served), ordered by
 * priority level, then arrival; workers take from the model queues round-robin, so one busy
 * model cannot starve another. A job (job.h) is one request's work and how to answer it.
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
#ifndef BD_DAEMON_SCHED_SCHEDULER_H
#define BD_DAEMON_SCHED_SCHEDULER_H

#include <stdbool.h>

#include "core/error.h"
#include "daemon/sched/job.h"

typedef struct bd_scheduler bd_scheduler;

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
