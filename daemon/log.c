/* One line per event on stderr, each written with a single write(2) so lines from
 * different threads never interleave. */
#include "daemon/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static atomic_int min_level = BD_LOG_INFO;

void bd_log_set_level(bd_log_level level) { atomic_store(&min_level, (int)level); }

int bd_log_level_parse(const char *name)
{
    static const char *const names[] = { "debug", "info", "warn", "error" };
    for (int i = 0; name && i < 4; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    if (name && strcasecmp(name, "warning") == 0)
        return BD_LOG_WARN;
    return -1;
}

void bd_log(bd_log_level level, const char *model, const char *version, const char *fmt, ...)
{
    if ((int)level < atomic_load_explicit(&min_level, memory_order_relaxed))
        return;
    static const char *const tags[] = { "DEBUG", "INFO ", "WARN ", "ERROR" };
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s ", ts.tv_nsec / 1000000L,
                          tags[(unsigned)level < 4 ? level : BD_LOG_ERROR]);
    if (model)
        n += (size_t)snprintf(line + n, sizeof line - n, "model=%s ", model);
    if (version && version[0] && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "version=%s ", version);
    if (n < sizeof line) {
        va_list ap;
        va_start(ap, fmt);
        n += (size_t)vsnprintf(line + n, sizeof line - n, fmt, ap);
        va_end(ap);
    }
    if (n >= sizeof line - 1) {   /* truncated: mark it and keep the newline */
        n = sizeof line - 1;
        memcpy(line + n - 3, "...", 3);
    }
    /* Messages may carry a model's text (a load error): keep it on one line. */
    for (size_t i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}
