#include "daemon/sched/memory_budget.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t bd_memory_parse_cgroup_max(const char *text)
{
    if (!text || strncmp(text, "max", 3) == 0)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || (*end && *end != '\n') || v == 0)
        return 0;
    return v > SIZE_MAX ? SIZE_MAX : (size_t)v;
}

/* The cgroup v2 memory.max of this process's cgroup ("0::/path" in /proc/self/cgroup), 0 when
 * there is none (cgroup v1, no limit, or not readable). */
static size_t cgroup_memory_max(void)
{
    char line[4096], path[4200], text[64];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return 0;
    size_t limit = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", strcmp(line + 3, "/") ? line + 3 : "");
        FILE *m = fopen(path, "r");
        if (m) {
            if (fgets(text, sizeof text, m))
                limit = bd_memory_parse_cgroup_max(text);
            fclose(m);
        }
        break;
    }
    fclose(f);
    return limit;
}

size_t bd_memory_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t ram = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 30;
    size_t cg = cgroup_memory_max();
    return cg && cg < ram ? cg : ram;
}
