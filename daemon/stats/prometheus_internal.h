/* Internal to the /metrics renderer (prometheus.c, prometheus_triton.c): the writers every
 * family uses, so braid's families and Triton's are spelled by the same code. */
#ifndef BD_DAEMON_STATS_PROMETHEUS_INTERNAL_H
#define BD_DAEMON_STATS_PROMETHEUS_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "daemon/stats/status_view.h"

/* key="value", with the value escaped as the format requires (\\, \", \n). */
void prom_put_label(FILE *f, const char *key, const char *value);
/* # HELP and # TYPE of family NAME. */
void prom_family(FILE *f, const char *name, const char *type, const char *help);
/* NAME{model="..",version=".." -- the caller adds further labels and closes the brace. */
void prom_open_model(FILE *f, const char *name, const bd_model_view *m);
/* A relaxed read of a counter another thread is adding to. */
uint64_t prom_load(const _Atomic uint64_t *a);

/* Triton's nv_inference_* and nv_model_* families (prometheus_triton.c). */
void prom_render_triton(FILE *f, const bd_status_view *v);

#endif
