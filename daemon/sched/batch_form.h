/* Dynamic batching's decision: when a version's queued jobs go, and how many of them
 * (Triton's dynamic batcher, made work-conserving and held to the plans compiled at load).
 * Pure — no lock, no clock, no thread — so it is unit tested on its own
 * (tests/daemon/test_batch.c); the scheduler calls it under its lock.
 *
 *   bd_batch_form     how many jobs of a queue (the head, then those joining it, in queue
 *                     order) to run as one batch now; 0 = not yet, and when to look again
 *
 * The rules, in order. A head that carries no rows, cannot join or fills a batch alone runs
 * alone. A full batch, or one reaching the largest preferred size or the largest ladder size,
 * goes at once, cut back to the largest preferred size it passed through, else to the largest
 * ladder size (a ladder of [1] never waits: nothing can join). Otherwise
 * what is queued goes (cut back to the largest ladder size) once the head has waited the
 * delay — or at once when no run of the version is in progress and the rule does not ask to
 * wait when idle: a worker asking for work while the model computes nothing has nothing to
 * wait for, and requests that arrive during the run gather into the next batch anyway. A
 * batch is cut back to a ladder size so that no batch size compiles a plan on the request
 * path; a prefix of one job is always allowed (it runs alone, as without batching). */
#ifndef BD_DAEMON_SCHED_BATCH_FORM_H
#define BD_DAEMON_SCHED_BATCH_FORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/sched/job.h"
#include "daemon/registry/registry.h"

typedef struct bd_batch_rule {
    uint64_t   max_rows;            /* rows per batch, >= 1 */
    const int *preferred;           /* preferred_batch_size, any order */
    int        n_preferred;
    const int *ladder;              /* sizes a batch may have (a plan is compiled), ascending;
                                     * NULL = any size */
    int        n_ladder;
    uint64_t   delay_ns;            /* max_queue_delay; 0 = no wait */
    bool       wait_when_idle;      /* Triton's strict rule: the head waits the delay even
                                     * when no run of the version is in progress */
} bd_batch_rule;

/* How many jobs from HEAD (a queue linked by next; jobs that do not join HEAD are skipped
 * and stay queued) to take now under rule R: >= 1, or 0 = not yet, and then *WAKE is lowered
 * to when the head's delay ends. BUSY: a run of this version is in progress. NOW and the
 * jobs' enqueue_ns are on one clock. */
size_t bd_batch_form(const bd_batch_rule *r, const bd_job *head, bool busy, uint64_t now,
                     uint64_t *wake);

#endif
