/* OpenMP's wait policy for every braid process (the CLI, braidd, benchmarks).
 *
 * oneDNN runs on libgomp, which reads its environment once, when it is loaded — before
 * main() — so setting it in main is too late. braid's default is a short spin, then sleep:
 * OMP_WAIT_POLICY=passive with GOMP_SPINCOUNT=3000, about 60 us here. Sleeping at once
 * (passive alone) costs every parallel region a futex wake of a halted vCPU, 20-60 us on
 * these VMs, so a model of many small primitives ran no faster on 2 threads than on 1; a
 * long spin (libgomp's default, ~3 ms) makes a 2-thread team collapse whenever another
 * process holds one of the vCPUs. 60 us bridges the gaps between one inference's steps and
 * burns next to nothing between inferences (docs/performance.md, "Threads"). */
#ifndef BD_RUNTIME_OMP_ENV_H
#define BD_RUNTIME_OMP_ENV_H

/* The spin count braid sets (GOMP_SPINCOUNT iterations). */
#define BD_OMP_SPINCOUNT "3000"

/* If OMP_WAIT_POLICY is unset, set it to "passive" (and GOMP_SPINCOUNT, unless set, to
 * BD_OMP_SPINCOUNT) and re-execute this program with ARGV (so libgomp sees them). Returns
 * only when no re-exec was needed, or when it failed (then a warning naming PROGRAM is
 * printed and OpenMP keeps its default policy). A policy the user set is always kept. */
void bd_omp_env_ensure(const char *program, char **argv);

#endif
