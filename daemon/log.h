/* braidd's log: one line per event on stderr, with a level and, when it concerns a model,
 * the model's name and version:
 *     2026-11-22T12:00:00.123Z INFO  model=resnet50 version=1 loaded in 812 ms (57 steps)
 * Safe to call from any thread (each line is written with a single write()). */
#ifndef BD_DAEMON_LOG_H
#define BD_DAEMON_LOG_H

typedef enum bd_log_level { BD_LOG_DEBUG = 0, BD_LOG_INFO, BD_LOG_WARN, BD_LOG_ERROR } bd_log_level;

/* Lines below LEVEL are dropped. Default BD_LOG_INFO. */
void bd_log_set_level(bd_log_level level);
/* Parse "debug" / "info" / "warn" / "error"; returns -1 for anything else. */
int  bd_log_level_parse(const char *name);
/* Log one event. MODEL and VERSION may be NULL. */
void bd_log(bd_log_level level, const char *model, const char *version, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
