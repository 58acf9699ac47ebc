#include "omp_env.h"

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
    execv("/proc/self/exe", argv);
    fprintf(stderr, "%s: warning: cannot re-execute to set OMP_WAIT_POLICY=passive (%s); "
            "OpenMP keeps its default policy\n", program, strerror(errno));
}
