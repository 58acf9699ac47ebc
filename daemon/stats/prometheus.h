/* /metrics: the Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). Every family carries
 * # HELP and # TYPE; the metric names and labels are listed in docs/operations.md. */
#ifndef BD_DAEMON_STATS_PROMETHEUS_H
#define BD_DAEMON_STATS_PROMETHEUS_H

#include <stddef.h>

#include "daemon/stats/status_view.h"

/* The Content-Type of the rendered text. */
#define BD_PROMETHEUS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Render VIEW into a malloc'ed, NUL-terminated text (*OUT, length *LEN; caller frees).
 * Returns 0 or BD_ENOMEM (then *OUT is NULL). Any thread. */
int bd_prometheus_render(const bd_status_view *view, char **out, size_t *len);

#endif
