/* braid-peak: the machine's FP32 peak as oneDNN reaches it, measured rather than written down.
 *
 *   braid-peak [--threads N] [--size S] [--repeats R] [--warmup W]
 *
 * One large FP32 matmul, [S,S] x [S,S] (default S = 2048, 17.2 GFLOP), through oneDNN's
 * matmul primitive (the brgemm kernels on AVX-512 machines), with the weights in the layout
 * the primitive prefers (as braid keeps constant weights), timed R times after W untimed
 * runs on N OpenMP threads. Benchmarks report a model's speed as a % of this number, taken
 * in the same run, because machines differ from session to session (../shared/FACTS.md).
 *
 * Threads: omp_set_num_threads(N) and OMP_WAIT_POLICY=passive unless the caller set a policy
 * (libgomp reads it before main, so the program re-executes itself once: runtime/omp_env.h),
 * the same as braid-bench-ort.
 *
 * The last line is machine-readable (bench/zoo/run.sh reads it):
 *   PEAK threads=N gflops=<best> median=<median GFLOP/s> size=S impl=<oneDNN implementation>
 * Exit status: 0 on success, 1 if oneDNN fails, 2 on bad arguments. */
#include <errno.h>
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>

#include "runtime/omp_env.h"

typedef struct args {
    int threads, size, repeats, warmup;
} args;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid-peak [--threads N] [--size S] [--repeats R] [--warmup W]\n"
        "  --threads N   OpenMP threads (default 1)\n"
        "  --size S      M = N = K of the FP32 matmul (default 2048)\n"
        "  --repeats R   timed runs (default 10)\n"
        "  --warmup W    untimed runs first (default 2)\n");
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "braid-peak: %s expects an integer in %d..%d, got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"threads", required_argument, 0, 't'}, {"size", required_argument, 0, 's'},
        {"repeats", required_argument, 0, 'r'}, {"warmup", required_argument, 0, 'w'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
    };
    *a = (args){ .threads = 1, .size = 2048, .repeats = 10, .warmup = 2 };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case 't': rc = parse_int("--threads", optarg, 1, 1024, &a->threads); break;
        case 's': rc = parse_int("--size", optarg, 16, 16384, &a->size); break;
        case 'r': rc = parse_int("--repeats", optarg, 1, 10000, &a->repeats); break;
        case 'w': rc = parse_int("--warmup", optarg, 0, 10000, &a->warmup); break;
        case 'h': usage(stdout); exit(0);
        default:  usage(stderr); return -1;
        }
        if (rc)
            return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "braid-peak: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
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

/* Every element of M set to V (the buffer's whole size: blocked layouts include padding). */
static void fill(dnnl_memory_t m, float v)
{
    const dnnl_memory_desc_t *md;
    void *p;
    dnnl_memory_get_memory_desc(m, &md);
    dnnl_memory_get_data_handle(m, &p);
    size_t n = dnnl_memory_desc_get_size(md) / sizeof(float);
    for (size_t i = 0; i < n; i++)
        ((float *)p)[i] = v;
}

#define DN(call) do { dnnl_status_t st_ = (call); if (st_ != dnnl_success) { \
        fprintf(stderr, "braid-peak: %s failed: oneDNN status %d\n", #call, (int)st_); \
        goto out; } } while (0)

int main(int argc, char **argv)
{
    args a;
    if (parse_args(argc, argv, &a))
        return 2;
    bd_omp_env_ensure("braid-peak", argv);
    omp_set_num_threads(a.threads);

    int rc = 1;
    dnnl_engine_t eng = NULL;
    dnnl_stream_t stream = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t src = NULL, wei = NULL, dst = NULL;
    double *gflops = calloc((size_t)a.repeats, sizeof *gflops);
    if (!gflops)
        return 1;

    const dnnl_dim_t s = a.size;
    const dnnl_dims_t dims = { s, s };
    dnnl_memory_desc_t src_md, wei_md, dst_md;
    dnnl_matmul_desc_t desc;
    DN(dnnl_engine_create(&eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags));
    DN(dnnl_memory_desc_init_by_tag(&src_md, 2, dims, dnnl_f32, dnnl_ab));
    DN(dnnl_memory_desc_init_by_tag(&wei_md, 2, dims, dnnl_f32, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&dst_md, 2, dims, dnnl_f32, dnnl_ab));
    DN(dnnl_matmul_desc_init(&desc, &src_md, &wei_md, NULL, &dst_md));
    DN(dnnl_primitive_desc_create(&pd, &desc, NULL, eng, NULL));
    const char *impl = "?";
    DN(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    DN(dnnl_primitive_create(&prim, pd));
    DN(dnnl_memory_create(&src, &src_md, eng, DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), eng,
                          DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&dst, &dst_md, eng, DNNL_MEMORY_ALLOCATE));
    fill(src, 0.5f);
    fill(wei, 0.25f);
    fill(dst, 0.0f);

    const dnnl_exec_arg_t exec_args[3] = {
        { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, wei }, { DNNL_ARG_DST, dst },
    };
    const double flop = 2.0 * (double)s * (double)s * (double)s;
    for (int i = -a.warmup; i < a.repeats; i++) {
        double t0 = now_ms();
        DN(dnnl_primitive_execute(prim, stream, 3, exec_args));
        DN(dnnl_stream_wait(stream));
        double t1 = now_ms();
        if (i >= 0)
            gflops[i] = flop / ((t1 - t0) * 1e-3) / 1e9;
    }
    qsort(gflops, (size_t)a.repeats, sizeof *gflops, cmp_double);
    double best = gflops[a.repeats - 1];
    double median = a.repeats % 2 ? gflops[a.repeats / 2]
                                  : 0.5 * (gflops[a.repeats / 2 - 1] + gflops[a.repeats / 2]);
    const dnnl_version_t *v = dnnl_version();
    printf("oneDNN %d.%d.%d, FP32 matmul %dx%dx%d, %d thread(s), OMP_WAIT_POLICY=%s, "
           "%d runs after %d warm-up: best %.1f GFLOP/s, median %.1f, worst %.1f\n",
           v->major, v->minor, v->patch, a.size, a.size, a.size, a.threads,
           getenv("OMP_WAIT_POLICY"), a.repeats, a.warmup, best, median, gflops[0]);
    printf("PEAK threads=%d gflops=%.1f median=%.1f size=%d impl=%s\n", a.threads, best, median,
           a.size, impl);
    rc = 0;
out:
    dnnl_memory_destroy(src);
    dnnl_memory_destroy(wei);
    dnnl_memory_destroy(dst);
    dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(eng);
    free(gflops);
    return rc;
}
