/* notify.h over libsystemd's sd_notify. Every call is a no-op (sd_notify returns 0) when
 * $NOTIFY_SOCKET is unset, i.e. when braidd is not run by systemd with Type=notify. The
 * environment is left in place (unset_environment = 0) so that threads may call these
 * concurrently and repeatedly. */
#include "daemon/notify.h"

#include <stdio.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#ifndef BRAIDD_VERSION
#define BRAIDD_VERSION "unknown"
#endif

void bd_notify_ready(void)
{
    sd_notify(0, "READY=1\nSTATUS=braidd " BRAIDD_VERSION " serving");
}

void bd_notify_reloading(void)
{
    /* the caller sends bd_notify_ready() again when the rescan is done */
    sd_notify(0, "RELOADING=1\nSTATUS=rescanning the model repository");
}

void bd_notify_stopping(void)
{
    sd_notify(0, "STOPPING=1\nSTATUS=draining in-flight requests");
}

void bd_notify_status(const char *status)
{
    if (!status)
        return;
    /* one line only: a newline would start another assignment */
    char line[256];
    size_t n = strcspn(status, "\n");
    if (n >= sizeof line)
        n = sizeof line - 1;
    memcpy(line, status, n);
    line[n] = '\0';
    sd_notifyf(0, "STATUS=%s", line);
}

void bd_notify_watchdog(void)
{
    sd_notify(0, "WATCHDOG=1");
}

uint64_t bd_notify_watchdog_interval_ms(void)
{
    uint64_t usec = 0;
    /* > 0 when systemd armed a watchdog for this very process ($WATCHDOG_PID matches) */
    if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
        return 0;
    uint64_t ms = usec / 2000;       /* half the interval, in ms */
    return ms ? ms : 1;
}
