#include "daemon/stats/process_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

int bd_process_stats_read(bd_process_stats *out)
{
    memset(out, 0, sizeof *out);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;

    /* statm: size resident shared text lib data dt, in pages */
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return BD_EIO;
    uint64_t size = 0, resident = 0;
    int got = fscanf(f, "%" SCNu64 " %" SCNu64, &size, &resident);
    fclose(f);
    if (got != 2)
        return BD_EIO;
    out->vm_bytes  = size * (uint64_t)page;
    out->rss_bytes = resident * (uint64_t)page;

    /* status: "VmHWM:   12345 kB", "Threads:  7" — optional extras */
    f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            uint64_t kb;
            int n;
            if (sscanf(line, "VmHWM: %" SCNu64 " kB", &kb) == 1)
                out->rss_peak_bytes = kb * 1024;
            else if (sscanf(line, "Threads: %d", &n) == 1)
                out->threads = n;
        }
        fclose(f);
    }
    return 0;
}
