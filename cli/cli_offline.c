/* Opening a model and planning it for the command line's inputs: shared by run, bench, inspect. */
#include "cli/cli.h"

#include <sys/resource.h>

/* The process's CPU time and page faults over the last cli_model_prepare's open and plan. */
static struct rusage g_before, g_after;

int cli_model_prepare(const char *path, const cli_placement *p, cli_inputs *in, int random_missing,
                      const char *const what[3], bd_model **m, const bd_plan **plan, bd_exec **e)
{
    bd_error err = { 0 };
    getrusage(RUSAGE_SELF, &g_before);
    if (cli_placement_configure(p, &err) || bd_model_open(path, &p->model, m, &err)) {
        cli_error(what[0], &err);
        return CLI_FAIL;
    }
    if (cli_inputs_load(in, bd_model_graph(*m), random_missing, &err)) {
        cli_error(what[1], &err);
        /* Without random fill every input is the user's: a bad one is a usage error. */
        return !random_missing && err.code == BD_EINVAL ? CLI_USAGE : CLI_FAIL;
    }
    int rc = bd_model_plan(*m, in->tensors, (size_t)in->n, plan, &err);
    getrusage(RUSAGE_SELF, &g_after);
    if (rc || (e && bd_exec_create(*plan, e, &err))) {
        cli_error(what[2], &err);
        return CLI_FAIL;
    }
    return CLI_OK;
}

void cli_print_load_timings(const bd_model *m, const bd_plan *plan)
{
    const bd_model_timings *o = bd_model_open_timings(m);
    const bd_plan_timings *t = bd_plan_build_timings(plan);
    double open = o->import_ms + o->prepare_ms;
    printf("load %.1f ms: open %.1f (import %.1f, prepare %.1f), plan %.1f (", open + t->total_ms, open,
           o->import_ms, o->prepare_ms, t->total_ms);
    printf("weights read back %.1f, infer %.1f, fold %.1f, rewrite %.1f, partition %.1f, compile %.1f "
           "(weights %.1f), release %.1f)\n", t->weights_ms, t->infer_ms, t->fold_ms, t->rewrite_ms,
           t->partition_ms, t->compile_ms, t->consts_ms, t->release_ms);
#define TV_MS(tv) ((double)(tv).tv_sec * 1e3 + (double)(tv).tv_usec * 1e-3)
    printf("load cpu: user %.0f ms, system %.0f ms, %ld page faults (every thread of the process)\n",
           TV_MS(g_after.ru_utime) - TV_MS(g_before.ru_utime), TV_MS(g_after.ru_stime) - TV_MS(g_before.ru_stime),
           g_after.ru_minflt - g_before.ru_minflt + g_after.ru_majflt - g_before.ru_majflt);
#undef TV_MS
}
