/* Internal to stats/: the writers of the Prometheus text format (prometheus_text.c) that
 * every family uses, so braid's families (prometheus.c) and Triton's (prometheus_triton.c)
 * are spelled by the same code. */
#ifndef BD_DAEMON_STATS_PROMETHEUS_TEXT_H
#define BD_DAEMON_STATS_PROMETHEUS_TEXT_H

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

#endif
