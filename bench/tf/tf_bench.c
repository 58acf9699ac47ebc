/* braid-bench-tf: one frozen GraphDef through TensorFlow's own C API session, timed.
 *
 *   braid-bench-tf --lib libtensorflow_cc.so.2 --model M.pb --input NAME=FILE.bin
 *                  --dtype float32|int32 --shape D0,D1,... --fetch TENSOR [--fetch ...]
 *                  [--threads N] [--runs R] [--warmup W] [--write DIR]
 *
 * The peer bench/tf/run.sh times braid against, in the session TensorFlow users would write
 * in C: the library is dlopen()ed (RTLD_LOCAL: it bundles its own oneDNN, protobuf, ...), the
 * GraphDef imported with TF_GraphImportGraphDef, the session created with a serialized
 * ConfigProto giving intra_op_parallelism_threads = N and inter_op_parallelism_threads = 1
 * (braid runs one step at a time on N threads: the same budget), and each run is one
 * TF_SessionRun feeding the one input (raw bytes, FILE.bin, of the given dtype and shape)
 * and fetching the given tensors ("Identity:0"). The input tensor wraps the buffer and is
 * reused across runs; every run's outputs are freed within the timing, as a caller must.
 * TensorFlow's declarations are braid's own (backends/tf/tf_api.h), resolved with dlsym.
 *
 * --write DIR stores output i of the last run as DIR/out_<i>.bin (raw bytes) and its shape
 * on a line "OUT i dtype=<TF code> shape=d0,d1,..." so the caller can check the harness's
 * answer against TensorFlow's reference.
 *
 * The last line is machine-readable:
 *   TF threads=N runs=R median_ms=<median> p90_ms=<p90> min_ms=<min> load_ms=<import+session+first run>
 * Exit status: 0 ok, 1 a TensorFlow or file error (the message says which), 2 bad usage. */

#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/tf/tf_api.h"

#define MAX_FETCH 16
#define MAX_RANK  8

/* The C API, resolved from the library by the names tf_api.h lists. */
typedef struct tf_fns {
#define X(name, ret, params) tf_fn_##name *name;
    BD_TF_FUNCTIONS(X)
#undef X
} tf_fns;

static tf_fns tf;

typedef struct args {
    const char *lib, *model, *input_name, *input_file, *dtype, *shape, *write_dir;
    const char *fetch[MAX_FETCH];
    int         n_fetch, threads, runs, warmup;
} args;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: braid-bench-tf --lib PATH --model M.pb --input NAME=FILE.bin --dtype float32|int32\n"
        "                      --shape D0,D1,... --fetch TENSOR [--fetch TENSOR]... [--threads N]\n"
        "                      [--runs R] [--warmup W] [--write DIR]\n"
        "  --lib PATH      libtensorflow_cc.so.2 (the tensorflow-cpu wheel's; its\n"
        "                  libtensorflow_framework.so.2 must sit beside it)\n"
        "  --threads N     intra_op_parallelism_threads (default 1); inter_op is always 1\n"
        "  --runs R        timed runs (default 20)\n"
        "  --warmup W      untimed runs first (default 3)\n"
        "  --write DIR     write the last run's outputs to DIR/out_<i>.bin\n");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_count(const char *opt, const char *s, int lo, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > 1000000) {
        fprintf(stderr, "braid-bench-tf: %s expects an integer >= %d, got '%s'\n", opt, lo, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"lib", required_argument, 0, 'l'},    {"model", required_argument, 0, 'm'},
        {"input", required_argument, 0, 'i'},  {"dtype", required_argument, 0, 'd'},
        {"shape", required_argument, 0, 's'},  {"fetch", required_argument, 0, 'f'},
        {"threads", required_argument, 0, 't'}, {"runs", required_argument, 0, 'r'},
        {"warmup", required_argument, 0, 'w'}, {"write", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    *a = (args){ .threads = 1, .runs = 20, .warmup = 3 };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': a->lib = optarg; break;
        case 'm': a->model = optarg; break;
        case 'i': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) {
                fprintf(stderr, "braid-bench-tf: --input expects NAME=FILE.bin, got '%s'\n", optarg);
                return 2;
            }
            *eq = '\0';
            a->input_name = optarg;
            a->input_file = eq + 1;
            break;
        }
        case 'd': a->dtype = optarg; break;
        case 's': a->shape = optarg; break;
        case 'f':
            if (a->n_fetch == MAX_FETCH) {
                fprintf(stderr, "braid-bench-tf: at most %d --fetch\n", MAX_FETCH);
                return 2;
            }
            a->fetch[a->n_fetch++] = optarg;
            break;
        case 't': if (parse_count("--threads", optarg, 1, &a->threads)) return 2; break;
        case 'r': if (parse_count("--runs", optarg, 1, &a->runs)) return 2; break;
        case 'w': if (parse_count("--warmup", optarg, 0, &a->warmup)) return 2; break;
        case 'o': a->write_dir = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || !a->lib || !a->model || !a->input_name || !a->dtype || !a->shape || !a->n_fetch) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* Read a whole file into a 64-byte-aligned buffer (TensorFlow copies a feed that is not). */
static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "braid-bench-tf: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    void *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = aligned_alloc(64, ((size_t)n + 64) / 64 * 64)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        fclose(f);
        *len = (size_t)n;
        return buf;
    }
    fprintf(stderr, "braid-bench-tf: cannot read %s\n", path);
    free(buf);
    fclose(f);
    return NULL;
}

static int load_library(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "braid-bench-tf: cannot load %s: %s\n", path, dlerror());
        return -1;
    }
#define X(name, ret, params)                                                                 \
    if (!(tf.name = (tf_fn_##name *)dlsym(h, #name))) {                                      \
        fprintf(stderr, "braid-bench-tf: %s lacks %s\n", path, #name);                       \
        return -1;                                                                           \
    }
    BD_TF_FUNCTIONS(X)
#undef X
    return 0;
}

static int check(TF_Status *st, const char *what)
{
    if (tf.TF_GetCode(st) == TF_OK)
        return 0;
    fprintf(stderr, "braid-bench-tf: %s: %s\n", what, tf.TF_Message(st));
    return -1;
}

/* "name:3" -> operation "name", index 3 ("name" alone is index 0). */
static int resolve(TF_Graph *g, const char *tensor, TF_Output *out)
{
    char op[1024];
    snprintf(op, sizeof op, "%s", tensor);
    int index = 0;
    char *colon = strrchr(op, ':');
    if (colon) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (*end || v < 0 || v > 1 << 20) {
            fprintf(stderr, "braid-bench-tf: bad tensor name '%s'\n", tensor);
            return -1;
        }
        index = (int)v;
        *colon = '\0';
    }
    out->oper = tf.TF_GraphOperationByName(g, op);
    out->index = index;
    if (!out->oper) {
        fprintf(stderr, "braid-bench-tf: the graph has no operation '%s'\n", op);
        return -1;
    }
    return 0;
}

static void no_free(void *data, size_t len, void *arg)
{
    (void)data, (void)len, (void)arg;   /* the input buffer is ours, freed at exit */
}

static int write_outputs(const char *dir, TF_Tensor **outs, int n)
{
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/out_%d.bin", dir, i);
        FILE *f = fopen(path, "wb");
        size_t len = tf.TF_TensorByteSize(outs[i]);
        if (!f || fwrite(tf.TF_TensorData(outs[i]), 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "braid-bench-tf: cannot write %s\n", path);
            return -1;
        }
        printf("OUT %d dtype=%d shape=", i, (int)tf.TF_TensorType(outs[i]));
        for (int d = 0; d < tf.TF_NumDims(outs[i]); d++)
            printf("%s%lld", d ? "," : "", (long long)tf.TF_Dim(outs[i], d));
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;

    TF_DataType dt;
    size_t elem;
    if (!strcmp(a.dtype, "float32")) dt = TF_FLOAT, elem = 4;
    else if (!strcmp(a.dtype, "int32")) dt = TF_INT32, elem = 4;
    else {
        fprintf(stderr, "braid-bench-tf: --dtype float32 or int32, got '%s'\n", a.dtype);
        return 2;
    }
    int64_t dims[MAX_RANK];
    int rank = 0;
    size_t numel = 1;
    for (const char *p = a.shape; *p; rank++) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (rank == MAX_RANK || end == p || v < 0 || (*end && *end != ',') ||
            (v && numel > SIZE_MAX / (size_t)v)) {
            fprintf(stderr, "braid-bench-tf: --shape expects up to %d non-negative dims, got '%s'\n",
                    MAX_RANK, a.shape);
            return 2;
        }
        dims[rank] = v;
        numel *= (size_t)v;
        p = *end ? end + 1 : end;
    }

    size_t in_len = 0, pb_len = 0;
    void *in_data = read_file(a.input_file, &in_len);
    void *pb = in_data ? read_file(a.model, &pb_len) : NULL;
    if (!pb)
        return 1;
    if (numel > SIZE_MAX / elem || in_len != numel * elem) {
        fprintf(stderr, "braid-bench-tf: %s holds %zu bytes, the shape %s of %s needs %zu\n",
                a.input_file, in_len, a.shape, a.dtype, numel * elem);
        return 1;
    }
    if (load_library(a.lib))
        return 1;

    double t0 = now_ms();
    TF_Status *st = tf.TF_NewStatus();
    TF_Graph *g = tf.TF_NewGraph();
    TF_Buffer *buf = tf.TF_NewBufferFromString(pb, pb_len);
    TF_ImportGraphDefOptions *io = tf.TF_NewImportGraphDefOptions();
    tf.TF_GraphImportGraphDef(g, buf, io, st);
    tf.TF_DeleteImportGraphDefOptions(io);
    tf.TF_DeleteBuffer(buf);
    if (check(st, "importing the GraphDef"))
        return 1;

    TF_Output feed, fetch[MAX_FETCH];
    if (resolve(g, a.input_name, &feed))
        return 1;
    for (int i = 0; i < a.n_fetch; i++)
        if (resolve(g, a.fetch[i], &fetch[i]))
            return 1;

    /* tensorflow.ConfigProto: intra_op_parallelism_threads (field 2, varint) = N,
     * inter_op_parallelism_threads (field 5, varint) = 1. N <= 1e6 fits 3 varint bytes. */
    unsigned char cfg[8];
    size_t n_cfg = 0;
    cfg[n_cfg++] = 0x10;
    for (unsigned v = (unsigned)a.threads; ; v >>= 7) {
        cfg[n_cfg++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f)
            break;
    }
    cfg[n_cfg++] = 0x28;
    cfg[n_cfg++] = 0x01;
    TF_SessionOptions *so = tf.TF_NewSessionOptions();
    tf.TF_SetConfig(so, cfg, n_cfg, st);
    if (check(st, "setting the ConfigProto"))
        return 1;
    TF_Session *sess = tf.TF_NewSession(g, so, st);
    tf.TF_DeleteSessionOptions(so);
    if (check(st, "creating the session"))
        return 1;

    TF_Tensor *in = tf.TF_NewTensor(dt, dims, rank, in_data, in_len, no_free, NULL);
    if (!in) {
        fprintf(stderr, "braid-bench-tf: TF_NewTensor failed\n");
        return 1;
    }
    TF_Tensor *outs[MAX_FETCH] = { 0 };
    double *ms = calloc((size_t)a.runs, sizeof *ms);
    double load_ms = 0;
    if (!ms)
        return fprintf(stderr, "braid-bench-tf: out of memory\n"), 1;
    for (int r = -a.warmup; r < a.runs; r++) {
        double s = now_ms();
        tf.TF_SessionRun(sess, NULL, &feed, &in, 1, fetch, outs, a.n_fetch, NULL, 0, NULL, st);
        if (check(st, "running the session"))
            return 1;
        double e = 0;
        if (r == a.runs - 1 && a.write_dir) {   /* written outside the timing */
            e = now_ms();
            if (write_outputs(a.write_dir, outs, a.n_fetch))
                return 1;
        }
        for (int i = 0; i < a.n_fetch; i++)
            tf.TF_DeleteTensor(outs[i]);
        if (!e)
            e = now_ms();
        if (r == -a.warmup)
            load_ms = e - t0;
        if (r >= 0)
            ms[r] = e - s;
    }
    qsort(ms, (size_t)a.runs, sizeof *ms, cmp_double);
    double med = a.runs % 2 ? ms[a.runs / 2] : (ms[a.runs / 2 - 1] + ms[a.runs / 2]) / 2;
    int p90 = (int)((a.runs - 1) * 0.9 + 0.5);
    printf("TF threads=%d runs=%d median_ms=%.3f p90_ms=%.3f min_ms=%.3f load_ms=%.1f version=%s\n",
           a.threads, a.runs, med, ms[p90], ms[0], load_ms, tf.TF_Version());

    tf.TF_DeleteTensor(in);
    tf.TF_CloseSession(sess, st);
    tf.TF_DeleteSession(sess, st);
    tf.TF_DeleteGraph(g);
    tf.TF_DeleteStatus(st);
    free(ms);
    free(pb);
    free(in_data);
    return 0;
}
