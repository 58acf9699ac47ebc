#include "daemon/sched/cpu_budget.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double quota_cpus(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    return (double)quota / (double)period;
}

static bool parse_ll(const char *s, long long *out, char **end)
{
    errno = 0;
    *out = strtoll(s, end, 10);
    return !errno && *end != s;
}

double bd_cpu_parse_cgroup_max(const char *text)
{
    if (!text || strncmp(text, "max", 3) == 0)
        return 0;
    long long quota, period = 100000;         /* the kernel's default period */
    char *end;
    if (!parse_ll(text, &quota, &end))
        return 0;
    if (*end == ' ') {
        const char *p = end + 1;
        if (!parse_ll(p, &period, &end))
            return 0;
    }
    if (*end && *end != '\n')
        return 0;
    return quota_cpus(quota, period);
}

double bd_cpu_parse_cfs(const char *quota_text, const char *period_text)
{
    long long quota, period;
    char *end;
    if (!quota_text || !period_text || !parse_ll(quota_text, &quota, &end) ||
        (*end && *end != '\n') || !parse_ll(period_text, &period, &end) || (*end && *end != '\n'))
        return 0;
    return quota_cpus(quota, period);
}

static bool read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

/* Whether the comma-separated controller list LIST names "cpu". */
static bool has_cpu_controller(const char *list)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (strcmp(t, "cpu") == 0)
            return true;
    return false;
}

/* The quota of this process's cgroup from /proc/self/cgroup: v2 ("0::PATH", cpu.max) first,
 * else v1 (the hierarchy with the cpu controller, mounted as /sys/fs/cgroup/cpu or
 * /sys/fs/cgroup/cpu,cpuacct). */
static double cgroup_quota(char *source, size_t size)
{
    char line[4096], path[4400], a[64], b[64];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return 0;
    double v2 = 0, v1 = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1 || !c2)
            continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        if (strcmp(cg, "/") == 0)
            cg = "";
        if (strncmp(line, "0:", 2) == 0 && !*controllers) {
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", cg);
            if (v2 == 0 && read_line(path, a, sizeof a) && (v2 = bd_cpu_parse_cgroup_max(a)) > 0)
                snprintf(source, size, "%.150s", path);
        } else if (has_cpu_controller(controllers)) {
            static const char *mounts[] = { "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct" };
            for (size_t m = 0; m < 2 && v1 == 0; m++) {
                snprintf(path, sizeof path, "%s%s/cpu.cfs_quota_us", mounts[m], cg);
                char period[4400];
                snprintf(period, sizeof period, "%s%s/cpu.cfs_period_us", mounts[m], cg);
                if (read_line(path, a, sizeof a) && read_line(period, b, sizeof b) &&
                    (v1 = bd_cpu_parse_cfs(a, b)) > 0)
                    snprintf(source, size, "%.150s", path);
            }
        }
    }
    fclose(f);
    return v2 > 0 ? v2 : v1;
}

void bd_cpu_budget_read(bd_cpu_budget *b)
{
    memset(b, 0, sizeof *b);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    b->online = online > 0 ? (int)online : 1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        b->affinity = CPU_COUNT(&set);
    b->quota = cgroup_quota(b->source, sizeof b->source);
    int cores = b->online;
    if (b->affinity > 0 && b->affinity < cores)
        cores = b->affinity;
    if (b->quota > 0 && floor(b->quota) < cores)
        cores = (int)floor(b->quota);
    b->cores = cores >= 1 ? cores : 1;
}
