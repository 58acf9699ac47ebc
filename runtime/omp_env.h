/* OpenMP's wait policy for every braid process (the CLI, braidd, benchmarks).
 *
 * oneDNN runs on libgomp, which reads OMP_WAIT_POLICY once, when it is loaded — before
 * main() — so setting it in main is too late. With the default (spinning) policy a 2-thread
 * conv collapsed from ~465 to ~30 GFLOP/s whenever the two vCPUs were shared; passive keeps
 * it near 1-thread speed at ~10% cost on a quiet machine (docs/performance.md). */
#ifndef BD_RUNTIME_OMP_ENV_H
#define BD_RUNTIME_OMP_ENV_H

/* If OMP_WAIT_POLICY is unset, set it to "passive" and re-execute this program with ARGV
 * (so libgomp sees it). Returns only when no re-exec was needed, or when it failed (then a
 * warning naming PROGRAM is printed and OpenMP keeps its default policy). A value the user
 * set is always kept. */
void bd_omp_env_ensure(const char *program, char **argv);

#endif
