/* systemd integration (libsystemd's sd_notify): a no-op when not run by systemd
 * ($NOTIFY_SOCKET unset). Thread-safe. */
#ifndef BD_DAEMON_NOTIFY_H
#define BD_DAEMON_NOTIFY_H

#include <stdint.h>

void     bd_notify_ready(void);                   /* READY=1 + STATUS=... */
void     bd_notify_reloading(void);               /* RELOADING=1 (SIGHUP rescan) */
void     bd_notify_stopping(void);                /* STOPPING=1 */
void     bd_notify_status(const char *status);    /* STATUS=<text> */
void     bd_notify_watchdog(void);                /* WATCHDOG=1 */
/* Half the watchdog interval systemd asked for ($WATCHDOG_USEC), in ms; 0 if none. */
uint64_t bd_notify_watchdog_interval_ms(void);

#endif
