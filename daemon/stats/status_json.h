/* /v2/status: the server and every model as one JSON document (cJSON). The schema is
 * documented in docs/operations.md. */
#ifndef BD_DAEMON_STATS_STATUS_JSON_H
#define BD_DAEMON_STATS_STATUS_JSON_H

#include <stddef.h>

#include "daemon/stats/status_view.h"

/* Render VIEW into a malloc'ed, NUL-terminated JSON text (*OUT, length *LEN; free with
 * free()). PRETTY indents it. Returns 0 or BD_ENOMEM (then *OUT is NULL). Any thread. */
int bd_status_json_render(const bd_status_view *view, int pretty, char **out, size_t *len);

#endif
