/* Internal to registry/: whether a version with config.json "dynamic_batching" may batch
 * (batch_probe.c): a step of the load (registry_load.c), before the version is shared. */
#ifndef BD_DAEMON_REGISTRY_BATCH_PROBE_H
#define BD_DAEMON_REGISTRY_BATCH_PROBE_H

#include <stddef.h>

#include "daemon/registry/registry_served.h"

/* config.json "dynamic_batching" at load (batch_probe.c): sets S->batching when the model
 * keeps each row to itself — every output's dim 0 follows the batch (planned for two batch
 * sizes) and rows run together equal the same rows run apart — and S->batch_max_rows; the
 * load then plans its ladder (batch_ladder.h). INPUTS[0..N): the warm-up's (their shapes
 * are changed and restored; their data is not read). Logs why batching is off. Blocking;
 * before S is shared. */
void served_probe_batching(bd_served *s, DLTensor *inputs, size_t n);

#endif
