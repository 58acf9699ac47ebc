/* One request's work as the scheduler sees it (scheduler.h queues and runs it; batch_form.h
 * decides which queued jobs run together). The submitter fills the job, the scheduler owns
 * the fields marked internal while the job is queued. */
#ifndef BD_DAEMON_SCHED_JOB_H
#define BD_DAEMON_SCHED_JOB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/registry/registry.h"

typedef struct bd_job bd_job;

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

#endif
