/* The daemon process's own resource use, read from /proc/self (Linux). */
#ifndef BD_DAEMON_STATS_PROCESS_STATS_H
#define BD_DAEMON_STATS_PROCESS_STATS_H

#include <stdint.h>

typedef struct bd_process_stats {
    uint64_t rss_bytes;        /* resident set size */
    uint64_t vm_bytes;         /* virtual memory size */
    uint64_t rss_peak_bytes;   /* high-water mark of the resident set (VmHWM) */
    int      threads;          /* threads in the process */
} bd_process_stats;

/* Fill OUT from /proc/self/statm and /proc/self/status. Fields that cannot be read are 0;
 * returns 0, or a negative BD_E* code when /proc/self/statm is unreadable. Any thread. */
int bd_process_stats_read(bd_process_stats *out);

#endif
