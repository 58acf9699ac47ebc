/* braid-bench-ort: one model, braid against ONNX Runtime, interleaved runs on identical inputs.
 *
 *   braid-bench-ort --model M.onnx [--threads N] [--runs R] [--warmup W] [--block K]
 *                   [--ort PATH] [--ort-spin 0|1] [--gflop G] [--ort-only | --braid-only] [--seed S]
 *                   [--atol A] [--input NAME=FILE.npy ...] [--reloads N] [--new-shape D]
 *
 * Both engines load the same file and get the same inputs: deterministic random ones (inputs
 * named like "*mask*" are all ones; dynamic dims 1), or, with --input, the arrays of .npy
 * files (bench/zoo's inputs, so every peer of the zoo times the same bytes at the same shapes;
 * an input without --input stays random). Their outputs are compared (max abs diff), then they run
 * interleaved — ORT, braid, ORT, braid, ... (or blocks of K runs of each, --block) — so a
 * noisy neighbour hits both alike, and the medians, p90s and the ratio ORT/braid are printed
 * (> 1 means braid is faster).
 *
 * Threads: braid's oneDNN uses OpenMP with N threads (omp_set_num_threads) and, unless the
 * caller set it, braid's policy (runtime/omp_env.h: passive after a ~60 us spin): libgomp
 * reads its environment when it is loaded, before main, so the program re-executes itself
 * once with the variables set. ORT gets N intra-op threads, 1 inter-op thread, sequential
 * execution, graph optimizations ALL, and spin-waiting off by default (--ort-spin 1 turns it
 * on, ORT's own default): in strict alternation, spinning workers of one engine would steal
 * the cores the other engine is about to use; with --block K each engine runs K times in a
 * row after a pause (--pause-ms), and both may spin. braid's
 * own ORT engine (the steps it falls back on) is configured with the same library and N
 * intra-op threads, so both sides run on N threads everywhere.
 *
 * The last line is machine-readable (bench/run.sh and bench/zoo/run.sh build their tables
 * from it):
 *   RESULT model=<file> threads=N runs=R ort_ms=<median> braid_ms=<median> ratio=<ort/braid>
 *          ort_p90=... braid_p90=... maxdiff=... steps=<plan steps>
 *          engines=<backend:steps,... in order of first use> reorders=<n>/<MB written>
 *          ort_load_ms=<session + first run> braid_load_ms=<open + plan + first run>
 *          ort_session_ms=<session creation> braid_compile_ms=<open + plan>
 *          braid_open_ms=... braid_plan_ms=... braid_phases=<open and plan phases, ms>
 * (braid's fields are "-" with --ort-only, ORT's with --braid-only). The library is loaded
 * before the clock starts, so ort_session_ms is ORT's session creation alone (environment,
 * session options, CreateSession), the number to hold braid's open + plan against. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_tensor.h"
#include "bench/ort_runner.h"
#include "runtime/engines.h"
#include "runtime/omp_env.h"
#include "runtime/model.h"
#include "core/npy.h"

#define WHY_LEN     1024
#define ENGINES_LEN 256          /* "dnnl:3,ort:2" */
#define MAX_ENGINES 16
#define MAX_INPUTS  64           /* --input options */

typedef struct args {
    const char *model;
    const char *ort_path;
    int         threads, runs, warmup;
    int         block;              /* runs of one engine in a row before the other's */
    int         pause_ms;           /* between blocks */
    bool        ort_spin, ort_only, braid_only;
    double      gflop;              /* model FLOPs per inference, for GFLOP/s; 0 = unknown */
    double      atol;               /* outputs must agree within atol * max(1, max|ORT|) */
    int         reloads;            /* braid opens and plans the model again this many times */
    int         new_shape[4];       /* [0] > 0: braid plans again, the k-th dynamic dim of each
                                     * input this size (the last given for the rest) */
    int         n_new_shape;
    unsigned long long seed;
    const char *input[MAX_INPUTS];  /* "NAME=FILE.npy" */
    int         n_input;
} args;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid-bench-ort --model M.onnx [--threads N] [--runs R] [--warmup W] [--ort PATH]\n"
        "                       [--ort-spin 0|1] [--gflop G] [--ort-only | --braid-only] [--seed S]\n"
        "                       [--atol A] [--reloads N] [--new-shape D]\n"
        "  --threads N   threads for each engine (default 1)\n"
        "  --runs R      timed rounds, each one ORT run then one braid run (default 20)\n"
        "  --warmup W    untimed rounds first (default 3)\n"
        "  --block K     K runs of ORT, a pause, K of braid, a pause, ... (default 1:\n"
        "                strict alternation): with spinning thread pools, an engine's workers\n"
        "                still spin when the other starts; blocks time each at its own pace\n"
        "  --pause-ms P  the pause between blocks (default 20)\n"
        "  --ort PATH    libonnxruntime.so.1 (scripts/fetch_ort.sh prints it; default: loader search)\n"
        "  --ort-spin B  let ORT's worker threads spin-wait (default 0, like OMP_WAIT_POLICY=passive)\n"
        "  --gflop G     FLOPs of one inference in GFLOP, to print GFLOP/s\n"
        "  --ort-only    time ONNX Runtime alone (no braid)\n"
        "  --braid-only  time braid alone (ORT loads, checks the outputs and leaves the process\n"
        "                first): with --ort-only in another process, no thread of one engine\n"
        "                can run into the other's timing\n"
        "  --seed S      input seed (default 1)\n"
        "  --atol A      allowed max abs diff, scaled by max(1, max|output|) (default 1e-3)\n"
        "  --input N=F   input N from the .npy file F (its shape and dtype; repeatable);\n"
        "                inputs without one are random\n"
        "  --reloads N   after timing, braid opens and plans the model N more times in this\n"
        "                process (a hot reload: each new copy open while the old one serves),\n"
        "                and prints the median (braid_reload_ms)\n"
        "  --new-shape D[,D2..] after timing, braid plans the model again with every dynamic\n"
        "                dim D, or the k-th dynamic dim of each input Dk (4,384: batch 4 and\n"
        "                384 tokens; the last given for the rest): braid_new_shape_ms and its phases\n");
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out);

/* --new-shape D[,D2...]: at most 4 sizes. */
static int parse_new_shape(const char *s, args *a)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    a->n_new_shape = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (a->n_new_shape == 4) {
            fprintf(stderr, "braid-bench-ort: --new-shape: at most 4 sizes\n");
            return -1;
        }
        if (parse_int("--new-shape", tok, 1, 1 << 20, &a->new_shape[a->n_new_shape++]))
            return -1;
    }
    return a->n_new_shape ? 0 : parse_int("--new-shape", "", 1, 1 << 20, &a->new_shape[0]);
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "braid-bench-ort: %s expects an integer in %d..%d, got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= 0)) {
        fprintf(stderr, "braid-bench-ort: %s expects a non-negative number, got '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"threads", required_argument, 0, 't'},
        {"runs", required_argument, 0, 'r'},  {"warmup", required_argument, 0, 'w'},
        {"ort", required_argument, 0, 'o'},   {"ort-spin", required_argument, 0, 'S'},
        {"gflop", required_argument, 0, 'g'}, {"ort-only", no_argument, 0, 'O'},
        {"braid-only", no_argument, 0, 'B'},
        {"seed", required_argument, 0, 's'},  {"atol", required_argument, 0, 'a'},
        {"block", required_argument, 0, 'b'}, {"pause-ms", required_argument, 0, 'p'},
        {"input", required_argument, 0, 'i'},
        {"reloads", required_argument, 0, 'R'}, {"new-shape", required_argument, 0, 'N'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0},
    };
    *a = (args){ .threads = 1, .runs = 20, .warmup = 3, .seed = 1, .atol = 1e-3, .block = 1,
                 .pause_ms = 20 };
    int c, spin = 0, seed = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case 'm': a->model = optarg; break;
        case 'i':
            if (a->n_input == MAX_INPUTS || !strchr(optarg, '=')) {
                fprintf(stderr, "braid-bench-ort: --input expects NAME=FILE.npy (at most %d), got '%s'\n",
                        MAX_INPUTS, optarg);
                rc = -1;
            } else {
                a->input[a->n_input++] = optarg;
            }
            break;
        case 'o': a->ort_path = optarg; break;
        case 't': rc = parse_int("--threads", optarg, 1, 1024, &a->threads); break;
        case 'r': rc = parse_int("--runs", optarg, 1, 1000000, &a->runs); break;
        case 'w': rc = parse_int("--warmup", optarg, 0, 1000000, &a->warmup); break;
        case 'b': rc = parse_int("--block", optarg, 1, 1000, &a->block); break;
        case 'p': rc = parse_int("--pause-ms", optarg, 0, 10000, &a->pause_ms); break;
        case 'R': rc = parse_int("--reloads", optarg, 0, 1000, &a->reloads); break;
        case 'N': rc = parse_new_shape(optarg, a); break;
        case 'S': rc = parse_int("--ort-spin", optarg, 0, 1, &spin); break;
        case 's': rc = parse_int("--seed", optarg, 0, 0x7fffffff, &seed); break;
        case 'g': rc = parse_double("--gflop", optarg, &a->gflop); break;
        case 'a': rc = parse_double("--atol", optarg, &a->atol); break;
        case 'O': a->ort_only = true; break;
        case 'B': a->braid_only = true; break;
        case 'h': usage(stdout); exit(0);
        default:  usage(stderr); return -1;
        }
        if (rc)
            return -1;
    }
    if (a->ort_only && a->braid_only) {
        fprintf(stderr, "braid-bench-ort: --ort-only and --braid-only exclude each other\n");
        return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "braid-bench-ort: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    if (!a->model) {
        fprintf(stderr, "braid-bench-ort: --model is required\n");
        usage(stderr);
        return -1;
    }
    a->ort_spin = spin;
    a->seed = (unsigned long long)seed;
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats { double median, p90, min, mean; } stats;

/* Sorts V in place. p90 is the nearest-rank 90th percentile. */
static stats summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    stats s = { .min = v[0] };
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int k = (int)ceil(0.9 * n) - 1;
    s.p90 = v[k < 0 ? 0 : k];
    for (int i = 0; i < n; i++)
        s.mean += v[i] / n;
    return s;
}

/* ---- braid's half ----------------------------------------------------------------------- */

typedef struct braid_side {
    bd_model      *model;
    bd_exec       *exec;
    DLTensor      *in;        /* in braid's signature order, pointing into the shared inputs */
    size_t         n_in;
    size_t         steps;
    char           engines[ENGINES_LEN];
    char           reorders[32];           /* a count, or "?" */
    double         open_ms, plan_ms;       /* bd_model_open, the first bd_model_plan */
    char           phases[256];            /* "import=..,prepare=..,infer=..": ms per phase */
} braid_side;

/* The plan's engines in order of first use, each with its number of steps: "dnnl:3,ort:2". */
static void describe_engines(const bd_plan *plan, char *buf, size_t len)
{
    const bd_partition_report *r = bd_plan_partition(plan);
    const char *names[MAX_ENGINES];
    size_t counts[MAX_ENGINES], n = 0;
    for (size_t i = 0; r && i < r->n_subgraphs; i++) {
        size_t k = 0;
        while (k < n && strcmp(names[k], r->subgraphs[i].backend) != 0)
            k++;
        if (k == n && n == MAX_ENGINES)
            continue;
        if (k == n) {
            names[n] = r->subgraphs[i].backend;
            counts[n++] = 0;
        }
        counts[k]++;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s:%zu", k ? "," : "", names[k], counts[k]);
    if (n == 0)
        snprintf(buf, len, "-");
}

/* Layout reorders the plan runs per inference, and the bytes they write: "12/3.4MB". */
static void describe_reorders(const bd_plan *plan, char *buf, size_t len)
{
    const bd_kernel_stats *run = &bd_plan_partition(plan)->run;
    snprintf(buf, len, "%zu/%.1fMB", run->reorders, (double)run->reorder_bytes / 1e6);
}

static int braid_open(braid_side *b, const args *a, const bench_tensor *inputs, size_t n_inputs)
{
    bd_error err = {0};
    bd_model_options mo = { .threads = a->threads };
    bd_engine_config ec = { .library = a->ort_path, .threads = a->threads };
    double t0 = now_ms();
    if (bd_engines_configure("ort", &ec, &err) || bd_model_open(a->model, &mo, &b->model, &err)) {
        fprintf(stderr, "braid-bench-ort: braid: %s\n", err.msg);
        return -1;
    }
    b->open_ms = now_ms() - t0;
    const bd_graph *g = bd_model_graph(b->model);
    b->n_in = bd_graph_num_inputs(g);
    b->in = calloc(b->n_in + 1, sizeof *b->in);
    if (!b->in)
        return -1;
    for (size_t i = 0; i < b->n_in; i++) {
        const char *name = bd_graph_input(g, i)->name;
        size_t k = 0;
        while (k < n_inputs && strcmp(inputs[k].name, name) != 0)
            k++;
        if (k == n_inputs) {
            fprintf(stderr, "braid-bench-ort: braid's input '%s' is not an input of the ORT session\n", name);
            return -1;
        }
        if (bench_tensor_as_dl(&inputs[k], &b->in[i])) {
            fprintf(stderr, "braid-bench-ort: input '%s': element type has no DLPack form\n", name);
            return -1;
        }
    }
    const bd_plan *plan;
    t0 = now_ms();
    int rc = bd_model_plan(b->model, b->in, b->n_in, &plan, &err);
    b->plan_ms = now_ms() - t0;
    if (rc || bd_exec_create(plan, &b->exec, &err)) {
        fprintf(stderr, "braid-bench-ort: braid: %s\n", err.msg);
        return -1;
    }
    const bd_model_timings *mt = bd_model_open_timings(b->model);
    const bd_plan_timings *pt = bd_plan_build_timings(plan);
    snprintf(b->phases, sizeof b->phases, "import=%.1f,prepare=%.1f,infer=%.1f,fold=%.1f,rewrite=%.1f,"
             "partition=%.1f,compile=%.1f,weights=%.1f,release=%.1f", mt->import_ms, mt->prepare_ms,
             pt->infer_ms, pt->fold_ms, pt->rewrite_ms, pt->partition_ms, pt->compile_ms, pt->consts_ms,
             pt->release_ms);
    printf("braid: open %.1f ms (import %.1f, prepare %.1f), plan %.1f ms (infer %.1f, fold %.1f, "
           "rewrite %.1f, partition %.1f, compile %.1f of which weights %.1f, release %.1f)\n", b->open_ms,
           mt->import_ms, mt->prepare_ms, b->plan_ms, pt->infer_ms, pt->fold_ms, pt->rewrite_ms,
           pt->partition_ms, pt->compile_ms, pt->consts_ms, pt->release_ms);
    b->steps = bd_plan_num_steps(plan);
    describe_engines(plan, b->engines, sizeof b->engines);
    describe_reorders(plan, b->reorders, sizeof b->reorders);
    printf("braid: %zu plan steps (%s), arena %.1f MiB\n", b->steps, b->engines,
           (double)bd_plan_arena_size(plan) / (1024.0 * 1024.0));
    return 0;
}

static int braid_run(braid_side *b)
{
    bd_error err = {0};
    if (bd_exec_run(b->exec, b->in, b->n_in, &err)) {
        fprintf(stderr, "braid-bench-ort: braid run: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void braid_close(braid_side *b)
{
    bd_exec_destroy(b->exec);
    bd_model_close(b->model);
    free(b->in);
}

/* Compare every braid output with ORT's output of the same name. Returns the worst max abs
 * diff, or -1 if an output is missing or has another type/size. */
static double compare_outputs(const braid_side *b, const ort_runner *ort, double atol, bool *ok)
{
    const bd_graph *g = bd_model_graph(b->model);
    double worst = 0.0;
    *ok = true;
    for (size_t i = 0; i < bd_exec_num_outputs(b->exec); i++) {
        const char *name = bd_graph_output(g, i)->name;
        const DLTensor *o = bd_exec_output(b->exec, i);
        const bench_tensor *ref = NULL;
        for (size_t k = 0; k < ort_runner_num_outputs(ort); k++)
            if (strcmp(ort_runner_output_name(ort, k), name) == 0)
                ref = ort_runner_output(ort, k);
        if (!ref) {
            fprintf(stderr, "braid-bench-ort: braid's output '%s' is not an ORT output\n", name);
            *ok = false;
            return -1;
        }
        size_t numel = 1;
        for (int d = 0; d < o->ndim; d++)
            numel *= (size_t)o->shape[d];
        double diff = bench_tensor_max_abs_diff(ref, o->data, bd_dtype_from_dl(o->dtype), numel);
        double scale = 1.0;
        for (size_t k = 0; ref->dtype == BD_DT_FLOAT && k < ref->numel; k++)
            scale = fmax(scale, fabs(((const float *)ref->data)[k]));
        bool good = diff >= 0 && diff <= atol * scale;
        printf("output %-20s max abs diff %.3g (max |ORT| %.3g) %s\n", name, diff, scale,
               good ? "ok" : "MISMATCH");
        *ok = *ok && good;
        if (diff < 0 || diff > worst)
            worst = diff < 0 ? INFINITY : diff;
    }
    return worst;
}

/* ---- inputs ----------------------------------------------------------------------------- */

/* The --input file for input NAME, or NULL. */
static const char *input_file(const args *a, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < a->n_input; i++)
        if (strncmp(a->input[i], name, n) == 0 && a->input[i][n] == '=')
            return a->input[i] + n + 1;
    return NULL;
}

/* T = the array of the .npy file PATH, named NAME; its dtype must be WANT (the model's). */
static int input_from_npy(bench_tensor *t, const char *name, int want, const char *path, char *why,
                          size_t why_len)
{
    bd_npy arr;
    bd_error err = { 0 };
    if (bd_npy_read(path, &arr, &err)) {
        snprintf(why, why_len, "input '%s': %s", name, err.msg);
        return -1;
    }
    int rc = 0;
    if (arr.dtype != want) {
        snprintf(why, why_len, "input '%s': %s holds element type %d, the model wants %d (ONNX numbering)",
                 name, path, arr.dtype, want);
        rc = -1;
    } else if (bench_tensor_init(t, name, arr.dtype, (int)arr.shape.rank, arr.shape.dims, why, why_len)) {
        rc = -1;
    } else if (t->nbytes != arr.nbytes) {
        snprintf(why, why_len, "input '%s': %s holds %zu bytes for its shape, expected %zu", name, path,
                 arr.nbytes, t->nbytes);
        rc = -1;
    } else if (t->nbytes) {
        memcpy(t->data, arr.data, t->nbytes);
    }
    bd_npy_free(&arr);
    return rc;
}

/* --reloads: open and plan the model N more times, each copy opened while the previous one
 * is still loaded (as braidd's hot reload does), the previous closed after. Returns the
 * median open + plan in ms, or -1. */
static double braid_reloads(const args *a, const braid_side *first)
{
    double *ms = calloc((size_t)a->reloads + 1, sizeof *ms);
    bd_model *prev = NULL;
    int done = 0;
    for (int i = 0; ms && i < a->reloads; i++, done++) {
        bd_error err = {0};
        bd_model_options mo = { .threads = a->threads };
        bd_model *m = NULL;
        const bd_plan *plan;
        double t0 = now_ms();
        if (bd_model_open(a->model, &mo, &m, &err) ||
            bd_model_plan(m, first->in, first->n_in, &plan, &err)) {
            fprintf(stderr, "braid-bench-ort: reload: %s\n", err.msg);
            bd_model_close(m);
            break;
        }
        ms[i] = now_ms() - t0;
        const bd_plan_timings *pt = bd_plan_build_timings(plan);
        const bd_model_timings *mt = bd_model_open_timings(m);
        printf("reload %d: %.1f ms (import %.1f, prepare %.1f, compile %.1f of which weights %.1f, "
               "release %.1f)\n", i + 1, ms[i], mt->import_ms, mt->prepare_ms, pt->compile_ms,
               pt->consts_ms, pt->release_ms);
        bd_model_close(prev);
        prev = m;
    }
    bd_model_close(prev);
    double med = -1;
    if (ms && done == a->reloads && done > 0)
        med = summarize(ms, done).median;
    free(ms);
    return med;
}

/* --new-shape: plan the loaded model again for inputs whose dynamic dims are D (ORT's
 * signature says which). Returns the plan's build in ms (0 when no dim is dynamic: nothing to
 * plan), or -1; PHASES gets its phases. */
static double braid_new_shape(const args *a, braid_side *b, ort_runner *ort_sig, size_t n_in,
                              char *phases, size_t len)
{
    const bd_graph *g = bd_model_graph(b->model);
    bench_tensor *t = calloc(n_in + 1, sizeof *t);
    DLTensor *dl = calloc(b->n_in + 1, sizeof *dl);
    double ms = -1;
    bool dynamic = false;
    char why[WHY_LEN];
    int rc = t && dl ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n_in; i++) {
        int dtype, rank;
        int64_t dims[BENCH_MAX_RANK];
        ort_runner_input_type(ort_sig, i, &dtype, &rank, dims);
        for (int d = 0, k = 0; d < rank; d++)
            if (dims[d] < 0) {
                dims[d] = a->new_shape[k < a->n_new_shape ? k : a->n_new_shape - 1];
                k++;
                dynamic = true;
            }
        rc = bench_tensor_init(&t[i], ort_runner_input_name(ort_sig, i), dtype, rank, dims, why, sizeof why);
        if (rc == 0)
            bench_tensor_fill(&t[i], a->seed + i);
    }
    for (size_t i = 0; rc == 0 && i < b->n_in; i++) {
        size_t k = 0;
        while (k < n_in && strcmp(t[k].name, bd_graph_input(g, i)->name) != 0)
            k++;
        rc = k < n_in ? bench_tensor_as_dl(&t[k], &dl[i]) : -1;
    }
    if (rc == 0 && !dynamic) {
        ms = 0;
    } else if (rc == 0) {
        bd_error err = {0};
        const bd_plan *plan;
        double t0 = now_ms();
        if (bd_model_plan(b->model, dl, b->n_in, &plan, &err) == 0) {
            ms = now_ms() - t0;
            const bd_plan_timings *pt = bd_plan_build_timings(plan);
            snprintf(phases, len, "weights_read=%.1f,infer=%.1f,fold=%.1f,rewrite=%.1f,partition=%.1f,"
                     "compile=%.1f,weights=%.1f,release=%.1f", pt->weights_ms, pt->infer_ms, pt->fold_ms,
                     pt->rewrite_ms, pt->partition_ms, pt->compile_ms, pt->consts_ms, pt->release_ms);
            const bd_kernel_stats *rs = &bd_plan_partition(plan)->run;
            printf("new shape (dynamic dims %d%s): plan %.1f ms (%s); constants %zu bytes, %zu of them "
                   "(%zu bytes) laid out by the first plan\n", a->new_shape[0], a->n_new_shape > 1 ? ",..." : "",
                   ms, phases, rs->const_bytes, rs->shared_consts, rs->shared_const_bytes);
        } else {
            fprintf(stderr, "braid-bench-ort: new shape: %s\n", err.msg);
        }
    }
    for (size_t i = 0; t && i < n_in; i++)
        bench_tensor_free(&t[i]);
    free(t);
    free(dl);
    return ms;
}

/* ---- main ------------------------------------------------------------------------------- */

static void print_stats(const char *who, stats s, const args *a)
{
    printf("%-6s median %8.2f ms   p90 %8.2f ms   min %8.2f ms   mean %8.2f ms", who, s.median, s.p90,
           s.min, s.mean);
    if (a->gflop > 0)
        printf("   %6.1f GFLOP/s", a->gflop / (s.median * 1e-3));
    printf("\n");
}

/* Warm-up rounds (untimed), then the timed ones: one ORT run and one braid run (BLOCK 1), or
 * BLOCK runs of each with a pause between blocks; with --ort-only / --braid-only (ORT == NULL)
 * one engine alone. Returns 0, or 1 after printing why. */
static int time_runs(const args *a, ort_runner *ort, braid_side *braid, double *t_ort, double *t_braid)
{
    char why[WHY_LEN];
    bool with_ort = ort != NULL, with_braid = !a->ort_only;
    for (int i = 0; i < a->warmup; i++) {
        if (with_ort && ort_runner_run(ort, why, sizeof why))
            goto ort_failed;
        if (with_braid && braid_run(braid))
            return 1;
    }
    for (int i = 0; i < a->runs; i += a->block) {
        int n = a->runs - i < a->block ? a->runs - i : a->block;
        for (int k = 0; with_ort && k < n; k++) {
            double t0 = now_ms();
            /* the last run of a block parks ORT's spinning workers: they would otherwise spin
             * on through braid's block, on the core braid's second thread needs */
            if (ort_runner_run_ex(ort, a->block > 1 && k == n - 1, why, sizeof why))
                goto ort_failed;
            t_ort[i + k] = now_ms() - t0;
            if (a->block == 1 && with_braid) {
                t0 = now_ms();
                if (braid_run(braid))
                    return 1;
                t_braid[i + k] = now_ms() - t0;
            }
        }
        if (a->block == 1 && with_ort)
            continue;
        if (with_ort)
            usleep((useconds_t)a->pause_ms * 1000);
        for (int k = 0; with_braid && k < n; k++) {
            double t0 = now_ms();
            if (braid_run(braid))
                return 1;
            t_braid[i + k] = now_ms() - t0;
        }
        if (with_ort)
            usleep((useconds_t)a->pause_ms * 1000);
    }
    return 0;
ort_failed:
    fprintf(stderr, "braid-bench-ort: %s\n", why);
    return 1;
}

int main(int argc, char **argv)
{
    args a;
    if (parse_args(argc, argv, &a))
        return 2;
    bd_omp_env_ensure("braid-bench-ort", argv);
    omp_set_num_threads(a.threads);
    setvbuf(stdout, NULL, _IOLBF, 0);     /* keep progress and errors in order through a pipe */

    char why[WHY_LEN];
    ort_runner *ort = NULL;
    ort_runner_options oo = { .library = a.ort_path, .threads = a.threads, .spin = a.ort_spin };
    /* load times: what it takes each engine to answer its first request (ORT: session creation
     * and the first run; braid: open, plan and the first run) */
    if (a.ort_path && !dlopen(a.ort_path, RTLD_NOW | RTLD_LOCAL))   /* not ORT's session's time */
        fprintf(stderr, "braid-bench-ort: warning: dlopen %s: %s\n", a.ort_path, dlerror());
    double load_t0 = now_ms(), ort_load = 0, braid_load = 0;
    if (ort_runner_open(a.model, &oo, &ort, why, sizeof why)) {
        fprintf(stderr, "braid-bench-ort: %s\n", why);
        return 1;
    }
    double ort_session = now_ms() - load_t0;
    printf("model %s, %d thread(s), %d runs after %d warmup; onnxruntime %s (spin %s); OMP_WAIT_POLICY=%s\n",
           a.model, a.threads, a.runs, a.warmup, ort_runner_version(ort), a.ort_spin ? "on" : "off",
           getenv("OMP_WAIT_POLICY"));

    /* The shared inputs: the --input files, else shaped by ORT's signature (dynamic dims 1). */
    size_t n_in = ort_runner_num_inputs(ort);
    bench_tensor *inputs = calloc(n_in + 1, sizeof *inputs);
    int rc = inputs ? 0 : 1;
    for (size_t i = 0; !rc && i < n_in; i++) {
        int dtype, rank;
        int64_t dims[BENCH_MAX_RANK];
        char desc[128];
        const char *name = ort_runner_input_name(ort, i), *file = input_file(&a, name);
        ort_runner_input_type(ort, i, &dtype, &rank, dims);
        for (int d = 0; d < rank; d++)
            if (dims[d] < 0)
                dims[d] = 1;
        if (file ? input_from_npy(&inputs[i], name, dtype, file, why, sizeof why)
                 : bench_tensor_init(&inputs[i], name, dtype, rank, dims, why, sizeof why)) {
            fprintf(stderr, "braid-bench-ort: %s\n", why);
            rc = 1;
            break;
        }
        if (file) {
            rank = inputs[i].rank;
            memcpy(dims, inputs[i].dims, sizeof dims);
        } else {
            bench_tensor_fill(&inputs[i], a.seed + i);
        }
        printf("input  %-20s %s\n", inputs[i].name, bench_tensor_desc(dtype, rank, dims, desc, sizeof desc));
    }
    if (!rc && ort_runner_prepare(ort, inputs, n_in, why, sizeof why)) {     /* + the first run */
        fprintf(stderr, "braid-bench-ort: %s\n", why);
        rc = 1;
    }
    ort_load = now_ms() - load_t0;      /* the inputs' making counts too: a few ms at most */

    braid_side braid = {0};
    double maxdiff = NAN;
    if (!rc && !a.ort_only) {
        bool ok = false;
        load_t0 = now_ms();
        if (braid_open(&braid, &a, inputs, n_in) || braid_run(&braid))
            rc = 1;
        braid_load = now_ms() - load_t0;
        if (!rc) {
            printf("load   ORT %.1f ms (session and first run), braid %.1f ms (open, plan, first run)\n",
                   ort_load, braid_load);
            printf("compile ORT %.1f ms (session creation), braid %.1f ms (open and plan): ratio %.3f\n",
                   ort_session, braid.open_ms + braid.plan_ms, ort_session / (braid.open_ms + braid.plan_ms));
            maxdiff = compare_outputs(&braid, ort, a.atol, &ok);
        }
        if (!rc && !ok) {
            fprintf(stderr, "braid-bench-ort: braid and ONNX Runtime disagree; not timing\n");
            rc = 1;
        }
    }

    double *t_ort = calloc((size_t)a.runs, sizeof *t_ort);
    double *t_braid = calloc((size_t)a.runs, sizeof *t_braid);
    if (!t_ort || !t_braid)
        rc = 1;
    /* ORT's session is gone with --braid-only: the new shape's dims are read before */
    double reload_ms = -1, new_shape_ms = -1;
    char new_phases[256] = "-";
    if (!rc && !a.ort_only && a.n_new_shape)
        new_shape_ms = braid_new_shape(&a, &braid, ort, n_in, new_phases, sizeof new_phases);
    if (!rc && a.braid_only) {        /* its thread pool leaves the process with the session */
        ort_runner_close(ort);
        ort = NULL;
    }
    if (!rc)
        rc = time_runs(&a, ort, &braid, t_ort, t_braid);
    if (!rc && !a.ort_only && a.reloads)
        reload_ms = braid_reloads(&a, &braid);
    char extra[400];
    snprintf(extra, sizeof extra, " braid_reload_ms=%.1f braid_new_shape_ms=%.1f braid_new_shape_phases=%s",
             reload_ms, new_shape_ms, new_phases);

    if (!rc && a.braid_only) {
        stats sb = summarize(t_braid, a.runs);
        print_stats("braid", sb, &a);
        printf("RESULT model=%s threads=%d runs=%d ort_ms=- ort_p90=- braid_ms=%.3f braid_p90=%.3f "
               "ratio=- maxdiff=%.3g steps=%zu engines=%s reorders=%s ort_load_ms=%.1f braid_load_ms=%.1f "
               "ort_session_ms=%.1f braid_compile_ms=%.1f braid_open_ms=%.1f braid_plan_ms=%.1f "
               "braid_phases=%s%s\n",
               a.model, a.threads, a.runs, sb.median, sb.p90, maxdiff, braid.steps, braid.engines,
               braid.reorders, ort_load, braid_load, ort_session, braid.open_ms + braid.plan_ms,
               braid.open_ms, braid.plan_ms, braid.phases, extra);
    } else if (!rc) {
        stats so = summarize(t_ort, a.runs);
        print_stats("ORT", so, &a);
        if (a.ort_only) {
            printf("RESULT model=%s threads=%d runs=%d ort_ms=%.3f ort_p90=%.3f braid_ms=- braid_p90=- "
                   "ratio=- maxdiff=- steps=- engines=- reorders=- ort_load_ms=%.1f ort_session_ms=%.1f\n",
                   a.model, a.threads, a.runs, so.median, so.p90, ort_load, ort_session);
        } else {
            stats sb = summarize(t_braid, a.runs);
            print_stats("braid", sb, &a);
            printf("ratio ORT/braid (medians) %.3f  (> 1: braid is faster)\n", so.median / sb.median);
            printf("RESULT model=%s threads=%d runs=%d ort_ms=%.3f ort_p90=%.3f braid_ms=%.3f braid_p90=%.3f "
                   "ratio=%.3f maxdiff=%.3g steps=%zu engines=%s reorders=%s ort_load_ms=%.1f "
                   "braid_load_ms=%.1f ort_session_ms=%.1f braid_compile_ms=%.1f braid_open_ms=%.1f "
                   "braid_plan_ms=%.1f braid_phases=%s%s\n", a.model, a.threads, a.runs, so.median, so.p90,
                   sb.median, sb.p90, so.median / sb.median, maxdiff, braid.steps, braid.engines,
                   braid.reorders, ort_load, braid_load, ort_session, braid.open_ms + braid.plan_ms,
                   braid.open_ms, braid.plan_ms, braid.phases, extra);
        }
    }

    free(t_ort);
    free(t_braid);
    braid_close(&braid);
    ort_runner_close(ort);
    for (size_t i = 0; inputs && i < n_in; i++)
        bench_tensor_free(&inputs[i]);
    free(inputs);
    return rc;
}
