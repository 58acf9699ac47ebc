/* braid-bench-boundary: what a boundary between braid's own engines and a fallback engine
 * (ONNX Runtime, or TensorFlow's C API) costs, in one process, on one model and one set of
 * inputs.
 *
 *   braid-bench-boundary --model M.onnx [--fallback-ops Softmax] [--threads N] [--runs R]
 *                        [--warmup W] [--ort PATH] [--seed S]
 *   braid-bench-boundary --fallback tf --model M.pb --fallback-ops Relu,Softmax [--tf PATH] ...
 *
 * Three placements of the same model, each opened through bd_model_open like any user's:
 *   dnnl    every node on oneDNN (--engine dnnl; with --fallback tf: dnnl,native, braid's own)
 *   ort     every node on the ONNX Runtime engine (--engine ort): one ORT session (not with
 *           --fallback tf: TensorFlow cannot take every node of a GraphDef braid translated)
 *   mixed   braid's engines, with the ops in --fallback-ops (default Softmax) forced to the
 *           fallback engine, so the plan crosses the boundary twice per forced region
 * Outputs are compared before timing (max abs diff against dnnl). Then rounds run the three
 * placements back to back, rotating which goes first, so a noisy neighbour hits all alike.
 * Printed: median and p90 per placement, the time each spent in each backend, the number of
 * crossings of the mixed plan, and
 *     overhead per crossing = median over rounds of (mixed - dnnl) / crossings
 * (paired: mixed and dnnl run back to back in every round, so the noise that moves both
 * cancels, which a difference of two medians would not do on a shared machine)
 * which charges the crossings with everything the mixed plan does differently: ORT's Run
 * per fallback subgraph, the tensors' trip out of oneDNN's blocked layouts and back, the
 * fusions lost at the cut, and the forced op's own speed on ORT instead of oneDNN (the
 * per-backend split shows how much of the mixed time ORT's steps took).
 *
 * The last line is machine-readable:
 *   RESULT model=<file> threads=N runs=R dnnl_ms=.. ort_ms=.. mixed_ms=.. crossings=K
 *          overhead_us_per_crossing=.. maxdiff_ort=.. maxdiff_mixed=..
 * (with --fallback tf: fallback=tf, and no ort_ms/maxdiff_ort). */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/omp_env.h"
#include "runtime/engines.h"
#include "bench/bench_tensor.h"
#include "runtime/model.h"

#define N_PLACEMENTS 3
#define MAX_INPUTS   16
#define MAX_BACKENDS 8

typedef struct placement {
    const char    *label;
    bd_model      *model;
    const bd_plan *plan;
    bd_exec       *exec;
    double        *ms;                      /* one per timed round */
    double        *backend_ms[MAX_BACKENDS];
    size_t         crossings;
} placement;

typedef struct args {
    const char *model, *fallback_ops, *ort, *tf;
    bool        tf_fallback;                /* --fallback tf */
    int         threads, runs, warmup;
    unsigned long long seed;
} args;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid-bench-boundary --model M.onnx [--fallback-ops OPS] [--threads N] [--runs R]\n"
        "                            [--warmup W] [--ort PATH] [--seed S] [--fallback ort|tf] [--tf PATH]\n"
        "  --fallback ENGINE   the fallback engine measured: ort (default) or tf (a TensorFlow model)\n"
        "  --fallback-ops OPS  ops forced to the fallback in the mixed placement (default Softmax)\n"
        "  --threads N         oneDNN threads and the fallback's intra-op threads (default 1)\n"
        "  --runs R            timed rounds; each runs the placements once (default 20)\n"
        "  --warmup W          untimed rounds first (default 3)\n"
        "  --ort PATH          libonnxruntime.so.1 (default: braid's ORT search path)\n"
        "  --tf PATH           TensorFlow's C library (default: braid's TF search path)\n");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile Q (0..100) of N values (sorted in place). */
static double percentile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)ceil(q / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

static size_t count_crossings(const bd_plan *p)
{
    const bd_partition_report *r = bd_plan_partition(p);
    size_t k = 0;
    for (size_t i = 1; i < r->n_subgraphs; i++)
        k += strcmp(r->subgraphs[i].backend, r->subgraphs[i - 1].backend) != 0;
    return k;
}

static void describe(const placement *pl)
{
    const bd_partition_report *r = bd_plan_partition(pl->plan);
    printf("%-6s %zu step(s):", pl->label, r->n_subgraphs);
    for (size_t i = 0; i < r->n_subgraphs; i++)
        printf("%s%s(%zu)", i ? " -> " : " ", r->subgraphs[i].backend, r->subgraphs[i].n_nodes);
    printf("\n");
}

static int open_placement(placement *pl, const args *a, const bd_model_options *o,
                          const DLTensor *in, size_t n_in)
{
    bd_error err = { 0 };
    if (bd_model_open(a->model, o, &pl->model, &err) ||
        bd_model_plan(pl->model, in, n_in, &pl->plan, &err) ||
        bd_exec_create(pl->plan, &pl->exec, &err) ||
        bd_exec_run(pl->exec, in, n_in, &err)) {
        fprintf(stderr, "braid-bench-boundary: %s placement: %s\n", pl->label, err.msg);
        return -1;
    }
    pl->crossings = count_crossings(pl->plan);
    describe(pl);
    return 0;
}

/* Largest |a - b| over every FP32 output of two placements; -1 when they disagree in form. */
static double max_diff(const placement *x, const placement *y)
{
    double worst = 0.0;
    size_t n_out = bd_exec_num_outputs(x->exec);
    if (n_out != bd_exec_num_outputs(y->exec))
        return -1.0;
    for (size_t k = 0; k < n_out; k++) {
        const DLTensor *a = bd_exec_output(x->exec, k), *b = bd_exec_output(y->exec, k);
        if (a->ndim != b->ndim || a->dtype.code != kDLFloat || b->dtype.code != kDLFloat ||
            a->dtype.bits != 32 || b->dtype.bits != 32)
            return -1.0;
        size_t n = 1;
        for (int d = 0; d < a->ndim; d++) {
            if (a->shape[d] != b->shape[d])
                return -1.0;
            n *= (size_t)a->shape[d];
        }
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)((const float *)a->data)[i] - ((const float *)b->data)[i]);
            worst = isnan(d) ? INFINITY : fmax(worst, d);
        }
    }
    return worst;
}

static int parse(int argc, char **argv, args *a)
{
    *a = (args){ .fallback_ops = "Softmax", .threads = 1, .runs = 20, .warmup = 3, .seed = 1 };
    static const struct option opts[] = {
        { "model", required_argument, 0, 'm' },   { "fallback-ops", required_argument, 0, 'f' },
        { "threads", required_argument, 0, 't' }, { "runs", required_argument, 0, 'r' },
        { "warmup", required_argument, 0, 'w' },  { "ort", required_argument, 0, 'o' },
        { "seed", required_argument, 0, 's' },    { "help", no_argument, 0, 'h' },
        { "fallback", required_argument, 0, 'F' }, { "tf", required_argument, 0, 'T' },
        { 0, 0, 0, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'm': a->model = optarg; break;
        case 'f': a->fallback_ops = optarg; break;
        case 't': a->threads = atoi(optarg); break;
        case 'r': a->runs = atoi(optarg); break;
        case 'w': a->warmup = atoi(optarg); break;
        case 'o': a->ort = optarg; break;
        case 's': a->seed = strtoull(optarg, NULL, 10); break;
        case 'T': a->tf = optarg; break;
        case 'F':
            if (strcmp(optarg, "ort") && strcmp(optarg, "tf")) {
                usage(stderr);
                return -1;
            }
            a->tf_fallback = strcmp(optarg, "tf") == 0;
            break;
        case 'h': usage(stdout); exit(0);
        default:  usage(stderr); return -1;
        }
    }
    if (!a->model || a->threads < 1 || a->runs < 1 || a->warmup < 0) {
        usage(stderr);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bd_omp_env_ensure("braid-bench-boundary", argv);
    args a;
    if (parse(argc, argv, &a))
        return 2;
    omp_set_num_threads(a.threads);

    /* Inputs: the model's signature, deterministic random data (masks all ones). */
    bd_model *probe = NULL;
    bd_error err = { 0 };
    if (bd_engines_configure("ort", &(bd_engine_config){ .library = a.ort, .threads = a.threads }, &err) ||
        bd_engines_configure("tf", &(bd_engine_config){ .library = a.tf, .threads = a.threads }, &err) ||
        bd_model_open(a.model, NULL, &probe, &err)) {
        fprintf(stderr, "braid-bench-boundary: %s\n", err.msg);
        return 1;
    }
    const bd_graph *g = bd_model_graph(probe);
    size_t n_in = bd_graph_num_inputs(g);
    bench_tensor tin[MAX_INPUTS];
    DLTensor in[MAX_INPUTS];
    char why[512];
    if (n_in > MAX_INPUTS) {
        fprintf(stderr, "braid-bench-boundary: %zu inputs (at most %d)\n", n_in, MAX_INPUTS);
        return 1;
    }
    for (size_t i = 0; i < n_in; i++) {
        const bd_value *v = bd_graph_input(g, i);
        if (bench_tensor_init(&tin[i], v->name, v->dtype, v->shape.rank, v->shape.dims, why,
                              sizeof why) || bench_tensor_as_dl(&tin[i], &in[i])) {
            fprintf(stderr, "braid-bench-boundary: input '%s': %s\n", v->name, why);
            return 1;
        }
        bench_tensor_fill(&tin[i], a.seed + i);
    }
    bd_model_close(probe);

    bd_model_options base = { .threads = a.threads };
    bd_model_options o_dnnl = base, o_ort = base, o_mixed = base;
    o_dnnl.engine = a.tf_fallback ? "dnnl,native" : "dnnl";
    o_ort.engine = "ort";
    o_mixed.fallback_ops = a.fallback_ops;
    o_mixed.min_dnnl_region_flops = -1;     /* keep every oneDNN region: measure the crossings */
    placement pl[N_PLACEMENTS] = { { .label = "dnnl" }, { .label = "ort" }, { .label = "mixed" } };
    const bd_model_options *opts[N_PLACEMENTS] = { &o_dnnl, &o_ort, &o_mixed };
    size_t nb;
    const bd_backend *const *backends = bd_backends(&nb);
    nb = nb < MAX_BACKENDS ? nb : MAX_BACKENDS;
    const char *peer = a.tf_fallback ? "TensorFlow" : "ORT";
    bool used[N_PLACEMENTS] = { true, !a.tf_fallback, true };
    printf("model %s, %d thread(s), forced to %s in 'mixed': %s\n", a.model, a.threads, peer,
           a.fallback_ops);
    for (int k = 0; k < N_PLACEMENTS; k++) {
        if (!used[k])
            continue;
        if (open_placement(&pl[k], &a, opts[k], in, n_in))
            return 1;
        pl[k].ms = calloc((size_t)a.runs, sizeof(double));
        for (size_t b = 0; b < nb; b++)
            pl[k].backend_ms[b] = calloc((size_t)a.runs, sizeof(double));
    }
    double diff_ort = used[1] ? max_diff(&pl[1], &pl[0]) : 0.0, diff_mixed = max_diff(&pl[2], &pl[0]);
    printf("max abs diff vs dnnl: ort %.3g, mixed %.3g\n", diff_ort, diff_mixed);
    if (!(diff_ort >= 0 && diff_ort < 1e-3) || !(diff_mixed >= 0 && diff_mixed < 1e-3)) {
        fprintf(stderr, "braid-bench-boundary: the placements disagree; not timing\n");
        return 1;
    }

    for (int round = -a.warmup; round < a.runs; round++) {
        for (int j = 0; j < N_PLACEMENTS; j++) {
            int k = (j + (round < 0 ? 0 : round)) % N_PLACEMENTS;   /* rotate who goes first */
            if (!used[k])
                continue;
            double t0 = now_ms();
            if (bd_exec_run(pl[k].exec, in, n_in, &err)) {
                fprintf(stderr, "braid-bench-boundary: %s: %s\n", pl[k].label, err.msg);
                return 1;
            }
            double t = now_ms() - t0;
            if (round < 0)
                continue;
            pl[k].ms[round] = t;
            uint64_t ns[MAX_BACKENDS] = { 0 };
            size_t got = bd_exec_backend_ns(pl[k].exec, ns, nb);
            for (size_t b = 0; b < got; b++)
                pl[k].backend_ms[b][round] = (double)ns[b] / 1e6;
        }
    }

    double med[N_PLACEMENTS];
    printf("\n%-6s %10s %10s", "", "median ms", "p90 ms");
    for (size_t b = 0; b < nb; b++)
        printf("  %8s ms", backends[b]->name);
    printf("\n");
    for (int k = 0; k < N_PLACEMENTS; k++) {
        med[k] = 0.0;
        if (!used[k])
            continue;
        double *copy = malloc((size_t)a.runs * sizeof(double));
        memcpy(copy, pl[k].ms, (size_t)a.runs * sizeof(double));
        med[k] = percentile(copy, (size_t)a.runs, 50);
        double p90 = percentile(copy, (size_t)a.runs, 90);
        free(copy);
        printf("%-6s %10.3f %10.3f", pl[k].label, med[k], p90);
        for (size_t b = 0; b < nb; b++)
            printf("  %11.3f", percentile(pl[k].backend_ms[b], (size_t)a.runs, 50));
        printf("\n");
    }
    size_t cross = pl[2].crossings;
    double *paired = malloc((size_t)a.runs * sizeof(double));
    for (int r = 0; r < a.runs; r++)
        paired[r] = pl[2].ms[r] - pl[0].ms[r];
    double extra = percentile(paired, (size_t)a.runs, 50);
    free(paired);
    double per = cross ? extra * 1e3 / (double)cross : 0.0;
    if (a.tf_fallback) {
        printf("\nmixed - dnnl, paired per round: median %.3f ms over %zu crossing(s) = %.1f us per "
               "crossing\n", extra, cross, per);
        printf("RESULT fallback=tf model=%s threads=%d runs=%d dnnl_ms=%.3f mixed_ms=%.3f crossings=%zu "
               "overhead_us_per_crossing=%.1f maxdiff_mixed=%.3g\n", a.model, a.threads, a.runs,
               med[0], med[2], cross, per, diff_mixed);
    } else {
        printf("\nmixed - dnnl, paired per round: median %.3f ms over %zu crossing(s) = %.1f us per "
               "crossing; ort/dnnl = %.3f\n", extra, cross, per, med[1] / med[0]);
        printf("RESULT model=%s threads=%d runs=%d dnnl_ms=%.3f ort_ms=%.3f mixed_ms=%.3f crossings=%zu "
               "overhead_us_per_crossing=%.1f maxdiff_ort=%.3g maxdiff_mixed=%.3g\n", a.model, a.threads,
               a.runs, med[0], med[1], med[2], cross, per, diff_ort, diff_mixed);
    }

    for (int k = 0; k < N_PLACEMENTS; k++) {
        if (!used[k])
            continue;
        bd_exec_destroy(pl[k].exec);
        bd_model_close(pl[k].model);
        free(pl[k].ms);
        for (size_t b = 0; b < nb; b++)
            free(pl[k].backend_ms[b]);
    }
    for (size_t i = 0; i < n_in; i++)
        bench_tensor_free(&tin[i]);
    return 0;
}
