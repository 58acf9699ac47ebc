#include "runtime/omp_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void bd_omp_env_ensure(const char *program, char **argv)
{
    if (getenv("OMP_WAIT_POLICY"))
        return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    if (!getenv("GOMP_SPINCOUNT"))
        setenv("GOMP_SPINCOUNT", BD_OMP_SPINCOUNT, 1);
    /* Exec the resolved path, not /proc/self/exe: the process would otherwise be named
     * "exe" in ps, top and systemd. */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        execv(self, argv);
    } else {
        execv("/proc/self/exe", argv);
    }
    fprintf(stderr, "%s: warning: cannot re-execute to set OMP_WAIT_POLICY=passive and GOMP_SPINCOUNT "
            "(%s); OpenMP keeps its default policy\n", program, strerror(errno));
}
