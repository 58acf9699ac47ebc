/* One version's queue in the scheduler: the jobs waiting to run on it, and its place in the
 * workers' round-robin ring. Embedded in each bd_served (registry_served_internal.h), so a
 * queue lives exactly as long as its version (a queued job holds a reference to it); read and
 * written only by scheduler.c, under the scheduler's lock. The registry allocates it zeroed
 * (an empty queue, off the ring) and never looks inside. */
#ifndef BD_DAEMON_SCHED_SCHED_QUEUE_H
#define BD_DAEMON_SCHED_SCHED_QUEUE_H

#include <stdbool.h>

#include "daemon/registry/model_config.h"

struct bd_job;
struct bd_served;

typedef struct bd_sched_queue {
    struct bd_job    *head, *tail;  /* ordered by (priority level, delayed), FIFO within each */
    int               len;
    int               level_len[BD_BATCH_MAX_PRIORITY_LEVELS + 1];  /* queued per level */
    bool              active;       /* linked into the scheduler's round-robin ring */
    int               runs;         /* runs taken by workers and not finished */
    struct bd_served *next;         /* the next version on the ring */
} bd_sched_queue;

#endif
