/* rpc-bench: unary-call latency and throughput of gRPC servers, measured with gRPC C core
 * (no client-language overhead in the numbers).
 *
 *   rpc-bench latency    --request FILE [--calls N] [--block B] [--warmup W] NAME=HOST:PORT...
 *   rpc-bench throughput --request FILE [--concurrency C] [--seconds S] [--warmup-seconds S]
 *                        NAME=HOST:PORT
 *
 * Every call sends FILE's bytes (a serialized ModelInferRequest) to --method (default
 * /inference.GRPCInferenceService/ModelInfer) and must end with status OK.
 *
 * latency: N sequential calls per target, interleaved in blocks of B (target 1's block, then
 *   target 2's, ...), so a noisy neighbour hits every target alike. Prints p50/p90/p99/mean
 *   per target and each target's p50 over the LAST target's (the reference, e.g. the echo
 *   server), then one machine-readable line:
 *     RESULT mode=latency NAME_p50_us=.. NAME_p99_us=.. ... ratio_p50=..
 * throughput: C calls kept in flight for S seconds after a warm-up; prints calls/s and the
 *   latency percentiles:  RESULT mode=throughput name=.. rps=.. p50_ms=.. p99_ms=.. calls=..
 */
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TARGETS 8

typedef struct target {
    char          name[64];
    char          address[256];
    grpc_channel *channel;
    double       *lat_us;          /* one per timed call */
    size_t        n, cap;
} target;

typedef struct slot {
    grpc_call          *call;
    grpc_metadata_array initial, trailing;
    grpc_byte_buffer   *response;
    grpc_status_code    status;
    grpc_slice          details;
    double              t0;
} slot;

static grpc_slice g_request;       /* the request bytes, shared by every call */
static grpc_slice g_method;
static long       g_errors;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int start_call(target *t, grpc_completion_queue *cq, slot *s)
{
    memset(s, 0, sizeof *s);
    grpc_metadata_array_init(&s->initial);
    grpc_metadata_array_init(&s->trailing);
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                         gpr_time_from_seconds(120, GPR_TIMESPAN));
    s->call = grpc_channel_create_call(t->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, g_method,
                                       NULL, deadline, NULL);
    grpc_byte_buffer *req = grpc_raw_byte_buffer_create(&g_request, 1);   /* refs, no copy */
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = req;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->initial;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &s->response;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &s->trailing;
    ops[5].data.recv_status_on_client.status = &s->status;
    ops[5].data.recv_status_on_client.status_details = &s->details;
    s->t0 = now_us();
    grpc_call_error e = grpc_call_start_batch(s->call, ops, 6, s, NULL);
    grpc_byte_buffer_destroy(req);      /* the batch holds its own reference to the slices */
    return e == GRPC_CALL_OK ? 0 : -1;
}

/* Finish slot S: returns its latency in us, or -1 on a failed call. */
static double finish_call(target *t, slot *s, int ok)
{
    double us = now_us() - s->t0;
    int good = ok && s->status == GRPC_STATUS_OK && s->response;
    if (!good && g_errors++ < 5) {
        char *d = grpc_slice_to_c_string(s->details);
        fprintf(stderr, "rpc-bench: %s: call failed: status %d: %s\n", t->name, s->status, d);
        gpr_free(d);
    }
    if (s->response)
        grpc_byte_buffer_destroy(s->response);
    grpc_slice_unref(s->details);
    grpc_metadata_array_destroy(&s->initial);
    grpc_metadata_array_destroy(&s->trailing);
    grpc_call_unref(s->call);
    return good ? us : -1;
}

static void record(target *t, double us)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4096;
        t->lat_us = realloc(t->lat_us, t->cap * sizeof *t->lat_us);
        if (!t->lat_us) {
            fprintf(stderr, "rpc-bench: out of memory\n");
            exit(1);
        }
    }
    t->lat_us[t->n++] = us;
}

/* Run calls on T with CONCURRENCY in flight until COUNT calls (0: no limit) or UNTIL_US
 * (0: no limit) is reached; record them when RECORD. Returns calls completed. */
static long run(target *t, grpc_completion_queue *cq, int concurrency, long count, double until_us,
                int rec)
{
    slot *slots = calloc((size_t)concurrency, sizeof *slots);
    long started = 0, done = 0;
    int active = 0;
    for (int i = 0; i < concurrency && (!count || started < count); i++, started++, active++)
        if (start_call(t, cq, &slots[i])) {
            fprintf(stderr, "rpc-bench: cannot start a call\n");
            exit(1);
        }
    while (active > 0) {
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE) {
            fprintf(stderr, "rpc-bench: completion queue: unexpected event %d\n", ev.type);
            exit(1);
        }
        slot *s = ev.tag;
        double us = finish_call(t, s, ev.success);
        active--;
        done++;
        if (rec && us >= 0)
            record(t, us);
        if ((!count || started < count) && (!until_us || now_us() < until_us)) {
            if (start_call(t, cq, s)) {
                fprintf(stderr, "rpc-bench: cannot start a call\n");
                exit(1);
            }
            started++;
            active++;
        }
    }
    free(slots);
    return done;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(p / 100.0 * (double)n);
    return sorted[i < n ? i : n - 1];
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: rpc-bench latency    --request FILE [--calls N] [--block B] [--warmup W] NAME=HOST:PORT...\n"
        "       rpc-bench throughput --request FILE [--concurrency C] [--seconds S] [--warmup-seconds S] NAME=HOST:PORT\n"
        "  --method PATH   gRPC method (default /inference.GRPCInferenceService/ModelInfer)\n");
}

static int read_file(const char *path, grpc_slice *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    *out = grpc_slice_from_copied_buffer(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "latency") && strcmp(argv[1], "throughput"))) {
        usage(stderr);
        return 2;
    }
    int latency = strcmp(argv[1], "latency") == 0;
    const char *request = NULL, *method = "/inference.GRPCInferenceService/ModelInfer";
    long calls = 5000, block = 250, warmup = 200;
    int concurrency = 16;
    double seconds = 20, warmup_s = 3;
    static const struct option opts[] = {
        { "request", required_argument, 0, 'r' }, { "calls", required_argument, 0, 'n' },
        { "block", required_argument, 0, 'b' }, { "warmup", required_argument, 0, 'w' },
        { "concurrency", required_argument, 0, 'c' }, { "seconds", required_argument, 0, 's' },
        { "warmup-seconds", required_argument, 0, 'W' }, { "method", required_argument, 0, 'm' },
        { "help", no_argument, 0, 'h' }, { 0 },
    };
    int ch;
    optind = 2;
    while ((ch = getopt_long(argc, argv, "r:n:b:w:c:s:W:m:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'r': request = optarg; break;
        case 'n': calls = atol(optarg); break;
        case 'b': block = atol(optarg); break;
        case 'w': warmup = atol(optarg); break;
        case 'c': concurrency = atoi(optarg); break;
        case 's': seconds = atof(optarg); break;
        case 'W': warmup_s = atof(optarg); break;
        case 'm': method = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    int nt = argc - optind;
    if (!request || nt < 1 || nt > MAX_TARGETS || calls < 1 || block < 1 || concurrency < 1 ||
        (!latency && nt != 1)) {
        usage(stderr);
        return 2;
    }
    grpc_init();
    if (read_file(request, &g_request)) {
        fprintf(stderr, "rpc-bench: cannot read request file '%s'\n", request);
        return 1;
    }
    g_method = grpc_slice_from_static_string(method);
    grpc_arg arg = { .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                     .value.integer = -1 };
    grpc_channel_args args = { .num_args = 1, .args = &arg };
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    target t[MAX_TARGETS];
    memset(t, 0, sizeof t);
    for (int i = 0; i < nt; i++) {
        const char *spec = argv[optind + i], *eq = strchr(spec, '=');
        if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof t[i].name) {
            fprintf(stderr, "rpc-bench: target '%s': expected NAME=HOST:PORT\n", spec);
            return 2;
        }
        snprintf(t[i].name, sizeof t[i].name, "%.*s", (int)(eq - spec), spec);
        snprintf(t[i].address, sizeof t[i].address, "%s", eq + 1);
        t[i].channel = grpc_channel_create(t[i].address, creds, &args);
    }
    grpc_channel_credentials_release(creds);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);

    if (latency) {
        for (int i = 0; warmup > 0 && i < nt; i++)   /* connect and warm up (count 0 would
                                                      * mean "no limit" to run()) */
            run(&t[i], cq, 1, warmup, 0, 0);
        for (long done = 0; done < calls; done += block)
            for (int i = 0; i < nt; i++)
                run(&t[i], cq, 1, calls - done < block ? calls - done : block, 0, 1);
        double ref_p50 = 0;
        qsort(t[nt - 1].lat_us, t[nt - 1].n, sizeof(double), cmp_double);
        ref_p50 = pct(t[nt - 1].lat_us, t[nt - 1].n, 50);
        char line[4096] = "", result[2048] = "";
        snprintf(line, sizeof line, "%-10s %8s %9s %9s %9s %9s %9s\n", "target", "calls", "p50 us",
                 "p90 us", "p99 us", "mean us", "p50/ref");
        for (int i = 0; i < nt; i++) {
            qsort(t[i].lat_us, t[i].n, sizeof(double), cmp_double);
            double sum = 0;
            for (size_t k = 0; k < t[i].n; k++)
                sum += t[i].lat_us[k];
            double p50 = pct(t[i].lat_us, t[i].n, 50), p99 = pct(t[i].lat_us, t[i].n, 99);
            size_t len = strlen(line);
            snprintf(line + len, sizeof line - len, "%-10s %8zu %9.1f %9.1f %9.1f %9.1f %9.3f\n",
                     t[i].name, t[i].n, p50, pct(t[i].lat_us, t[i].n, 90), p99,
                     t[i].n ? sum / (double)t[i].n : 0, ref_p50 > 0 ? p50 / ref_p50 : 0);
            char kv[160];
            snprintf(kv, sizeof kv, " %.32s_p50_us=%.1f %.32s_p99_us=%.1f", t[i].name, p50, t[i].name, p99);
            strncat(result, kv, sizeof result - strlen(result) - 1);
        }
        fputs(line, stdout);
        printf("RESULT mode=latency calls=%ld%s ratio_p50=%.3f errors=%ld\n", calls, result,
               ref_p50 > 0 ? pct(t[0].lat_us, t[0].n, 50) / ref_p50 : 0, g_errors);
    } else {
        run(&t[0], cq, concurrency, 0, now_us() + warmup_s * 1e6, 0);
        double t0 = now_us();
        long n = run(&t[0], cq, concurrency, 0, t0 + seconds * 1e6, 1);
        double el = (now_us() - t0) / 1e6;
        qsort(t[0].lat_us, t[0].n, sizeof(double), cmp_double);
        printf("%s: %ld calls in %.2f s with %d in flight: %.2f calls/s, latency ms p50 %.2f p99 %.2f\n",
               t[0].name, n, el, concurrency, (double)t[0].n / el, pct(t[0].lat_us, t[0].n, 50) / 1e3,
               pct(t[0].lat_us, t[0].n, 99) / 1e3);
        printf("RESULT mode=throughput name=%s rps=%.3f p50_ms=%.3f p99_ms=%.3f calls=%zu errors=%ld\n",
               t[0].name, (double)t[0].n / el, pct(t[0].lat_us, t[0].n, 50) / 1e3,
               pct(t[0].lat_us, t[0].n, 99) / 1e3, t[0].n, g_errors);
    }
    for (int i = 0; i < nt; i++) {
        grpc_channel_destroy(t[i].channel);
        free(t[i].lat_us);
    }
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    grpc_slice_unref(g_request);
    grpc_shutdown();
    return g_errors ? 1 : 0;
}
