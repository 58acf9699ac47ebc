/* How many cores braidd may use: the CPUs it may run on, lowered to its cgroup's CPU quota.
 * Automatic sizing (docs/config.md) sizes the worker pool from this, not from the host's core
 * count: under Kubernetes or systemd's CPUQuota= a pod limited to 2 CPUs on a 64-core node
 * must not start 16 OpenMP teams. */
#ifndef BD_DAEMON_SCHED_CPU_BUDGET_H
#define BD_DAEMON_SCHED_CPU_BUDGET_H

#include <stddef.h>

typedef struct bd_cpu_budget {
    int    cores;          /* what automatic sizing uses: >= 1 */
    int    online;         /* sysconf(_SC_NPROCESSORS_ONLN) */
    int    affinity;       /* CPUs in the affinity mask (taskset, cpusets), 0 = unknown */
    double quota;          /* the cgroup's quota in CPUs, 0 = none or unreadable */
    char   source[160];    /* where the quota came from (a cgroup file), "" = none */
} bd_cpu_budget;

/* Read the machine, the affinity mask and the cgroup of this process (cgroup v2 cpu.max, else
 * v1 cpu.cfs_quota_us / cpu.cfs_period_us). cores = min(online, affinity, floor(quota)), at
 * least 1: a team of N threads under a quota of fewer than N CPUs is throttled every period. */
void bd_cpu_budget_read(bd_cpu_budget *b);

/* A cgroup v2 cpu.max text ("max 100000", "150000 100000") as CPUs; 0 when unlimited or not
 * a valid quota. */
double bd_cpu_parse_cgroup_max(const char *text);
/* cgroup v1: cpu.cfs_quota_us ("-1" = unlimited) and cpu.cfs_period_us texts as CPUs; 0 when
 * unlimited or invalid. */
double bd_cpu_parse_cfs(const char *quota_text, const char *period_text);

#endif
