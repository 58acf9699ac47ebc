/* How much memory braidd may use: the smaller of the machine's RAM and its cgroup's limit. */
#ifndef BD_DAEMON_SCHED_MEMORY_BUDGET_H
#define BD_DAEMON_SCHED_MEMORY_BUDGET_H

#include <stddef.h>

/* The physical memory (sysconf), lowered to the cgroup v2 `memory.max` of the cgroup this
 * process runs in when that is set (systemd's MemoryMax=, a Kubernetes memory limit).
 * Never 0: 1 GiB when nothing can be read. */
size_t bd_memory_budget(void);

/* Parse a cgroup v2 `memory.max` file's text ("max\n" or a byte count). Returns the limit,
 * or 0 when there is none or the text is not a number. */
size_t bd_memory_parse_cgroup_max(const char *text);

#endif
