/* Internal to stats/: Triton's per-model metric families (prometheus_triton.c), written by
 * the /metrics renderer (prometheus.c) after braid's own. */
#ifndef BD_DAEMON_STATS_PROMETHEUS_TRITON_H
#define BD_DAEMON_STATS_PROMETHEUS_TRITON_H

#include <stdio.h>

#include "daemon/stats/status_view.h"

/* Triton's nv_inference_* and nv_model_* families (prometheus_triton.c). */
void prom_render_triton(FILE *f, const bd_status_view *v);

#endif
