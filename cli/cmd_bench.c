/* braid bench MODEL [--threads N] [--iters N] [--warmup N] [--input NAME=FILE.npy]... */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid bench MODEL [--threads N] [--iters N] [--warmup N] [--input NAME=FILE.npy]...\n"
        "                   [--fallback-ops A,B] [--engine LIST]\n"
        "\n"
        "Time MODEL in process: WARMUP untimed runs, then ITERS timed runs; prints the median,\n"
        "percentiles and throughput. Inputs not given are seeded random data (dynamic dims = 1).\n"
        "\n"
        "  -t, --threads N   oneDNN threads (default: all cores)\n"
        "  -n, --iters N     timed runs (default 50)\n"
        "  -w, --warmup N    untimed runs first (default 5)\n"
        "  -i, --input ...   as for braid run\n"
        "%s", cli_placement_usage);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {
        { "threads", required_argument, 0, 't' }, { "iters", required_argument, 0, 'n' },
        { "warmup", required_argument, 0, 'w' }, { "input", required_argument, 0, 'i' },
        { "help", no_argument, 0, 'h' }, CLI_PLACEMENT_OPTIONS, { 0 },
    };
    cli_placement pl = { 0 };
    int iters = 50, warmup = 5, c, rc;
    cli_inputs in = { 0 };
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:n:w:i:h", opts, NULL)) != -1) {
        switch (c) {
        case 't': if ((pl.model.threads = cli_parse_count("--threads", optarg)) < 0) return CLI_USAGE; break;
        case 'n': if ((iters = cli_parse_count("--iters", optarg)) < 0) return CLI_USAGE; break;
        case 'w': if ((warmup = cli_parse_count("--warmup", optarg)) < 0) return CLI_USAGE; break;
        case 'i': if (cli_inputs_add(&in, "bench", optarg)) return CLI_USAGE; break;
        default:
            if ((rc = cli_placement_option(c, optarg, &pl, usage)) >= 0)
                return rc;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_USAGE;
    }
    bd_error err = { 0 };
    bd_model *m = NULL;
    bd_exec *e = NULL;
    const bd_plan *plan;
    double *ms = calloc((size_t)iters, sizeof *ms);
    int status = CLI_FAIL;
    double t0 = now_ms();
    static const char *const what[3] = { "cannot load the model", "cannot prepare the model",
                                         "cannot prepare the model" };
    if (!ms) {
        cli_error("cannot load the model", &err);
        goto out;
    }
    if (cli_model_prepare(argv[optind], &pl, &in, 1, what, &m, &plan, &e))
        goto out;
    double t_load = now_ms() - t0;
    for (int i = 0; i < warmup + iters; i++) {
        double s = now_ms();
        if (bd_exec_run(e, in.tensors, (size_t)in.n, &err)) {
            cli_error("run failed", &err);
            goto out;
        }
        if (i >= warmup)
            ms[i - warmup] = now_ms() - s;
    }
    qsort(ms, (size_t)iters, sizeof *ms, cmp_double);
    double sum = 0;
    for (int i = 0; i < iters; i++)
        sum += ms[i];
    double med = ms[iters / 2];
    printf("model: %s\nthreads: %d  warmup: %d  iters: %d  load+compile: %.1f ms  arena: %.1f MiB\n",
           argv[optind], pl.model.threads, warmup, iters, t_load, bd_plan_arena_size(plan) / 1048576.0);
    printf("latency ms: median %.3f  p90 %.3f  p99 %.3f  min %.3f  mean %.3f\n", med,
           ms[(iters * 9) / 10 < iters ? (iters * 9) / 10 : iters - 1],
           ms[(iters * 99) / 100 < iters ? (iters * 99) / 100 : iters - 1], ms[0], sum / iters);
    printf("throughput: %.1f inferences/s\n", 1000.0 / med);
    cli_print_load_timings(m, plan);
    const bd_partition_report *rep = bd_plan_partition(plan);
    printf("subgraphs: %zu", rep->n_subgraphs);
    for (size_t i = 0; i < rep->n_subgraphs; i++)
        printf("%s%s %zu", i ? ", " : " (", rep->subgraphs[i].backend, rep->subgraphs[i].n_nodes);
    printf("%s  nodes off oneDNN: %zu\n", rep->n_subgraphs ? " nodes)" : "", rep->n_fallback);
    status = CLI_OK;
out:
    free(ms);
    bd_exec_destroy(e);
    cli_inputs_free(&in);
    bd_model_close(m);
    return status;
}
