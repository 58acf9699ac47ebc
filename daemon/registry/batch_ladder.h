/* Internal to registry/: the batch sizes a batching version's batcher may form, planned at
 * load (batch_ladder.c): a step of the load (registry_load.c) after the probe (batch_probe.h),
 * before the version is shared. The scheduler forms batches of these sizes only
 * (sched/batch_form.h). */
#ifndef BD_DAEMON_REGISTRY_BATCH_LADDER_H
#define BD_DAEMON_REGISTRY_BATCH_LADDER_H

#include <stdatomic.h>
#include <stddef.h>

#include "daemon/registry/registry_served.h"

/* The batch sizes S's batcher may form, planned now (batch_ladder.c) into S->batch_ladder:
 * bd_batch_ladder's sizes for S->batch_max_rows, smallest first, up to the first that cannot
 * be planned or would evict a plan from the cache (logged), without the sizes that measure no
 * cheaper per row than a smaller one (measure_ladder; runs each on zeroed inputs). INPUTS as
 * for served_probe_batching (dim 0 changed and restored). Blocking; before S is shared. */
void served_plan_ladder(bd_served *s, DLTensor *inputs, size_t n, const atomic_bool *cancel);

/* The ladder for batches of at most MAX_ROWS (>= 1) and PREFERRED[0..N_PREFERRED): the
 * preferred sizes (those over MAX_ROWS left out), the powers of two below MAX_ROWS, and
 * MAX_ROWS, into OUT (BD_BATCH_MAX_LADDER entries): ascending, each size
 * once. Returns the count. */
int  bd_batch_ladder(int max_rows, const int *preferred, int n_preferred, int *out);

#endif
