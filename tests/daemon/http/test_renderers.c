/* The status endpoint's renderers on hand-built views: /metrics must be valid Prometheus
 * text exposition 0.0.4 (checked line by line: HELP/TYPE before each contiguous family,
 * sample syntax, escaped label values, cumulative histogram buckets ending in +Inf ==
 * _count) and carry the right values; /v2/status must parse with cJSON and have every
 * field of the schema in docs/operations.md. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "runtime/engines.h"
#include "daemon/stats/prometheus.h"
#include "daemon/stats/status_json.h"

/* ---- a hand-built view: one READY model with traffic, one UNAVAILABLE with an awkward name */

typedef struct world {
    bd_model_stats       stats;
    bd_partition_summary summary;
    bd_server_stats      server;
    bd_model_view        models[2];
    bd_status_view       view;
} world;

static const char *AWKWARD = "we\"ird\\name\nx";
static const int LADDER[] = { 1, 2, 4, 6 };     /* batch sizes of tinycnn's batcher */

static world *make_world(void)
{
    world *w = calloc(1, sizeof *w);
    bd_model_stats *s = &w->stats;
    uint64_t totals[] = { 200000, 700000, 3000000, 3000000, 40000000, 20000000000ull };
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++) {
        bd_histogram_observe(&s->total_hist, totals[i]);
        bd_histogram_observe(&s->compute_hist, totals[i] / 2);
        bd_histogram_observe(&s->queue_hist, totals[i] / 4);
        bd_duration_add(&s->success, totals[i]);
    }
    atomic_store(&s->inference_count, 12);
    atomic_store(&s->execution_count, 6);
    atomic_store(&s->failures[BD_FAIL_INVALID], 3);
    atomic_store(&s->failures[BD_FAIL_QUEUE_FULL], 2);
    atomic_store(&s->in_flight, 1);
    atomic_store(&s->queued, 4);
    atomic_store(&s->backend_ns[0], 1500000000ull);
    w->summary = (bd_partition_summary){ .nodes_imported = 10, .nodes_planned = 7, .steps = 2,
                                         .fused_composites = 3, .load_ms = 12.5 };
    w->summary.nodes_per_backend[0] = 7;
    w->server.start_ms = 1700000000000ull;
    atomic_store(&w->server.rpc_total, 99);
    atomic_store(&w->server.loads_ok, 2);
    atomic_store(&w->server.loads_failed, 1);
    atomic_store(&w->server.unloads, 1);

    w->models[0] = (bd_model_view){ .name = "tinycnn", .version = "1", .state = BD_STATE_READY,
                                    .reason = "", .platform = "onnx", .stats = &w->stats,
                                    .summary = &w->summary, .queue_limit = 64,
                                    .plan_cache = { .plans = 3, .bytes = 4096, .compiles = 5, .evictions = 2,
                                                    .max_plans = 64 },
                                    .batch_ladder = LADDER, .n_batch_ladder = 4 };
    w->models[1] = (bd_model_view){ .name = AWKWARD, .version = "", .state = BD_STATE_UNAVAILABLE,
                                    .reason = "model 'x': no model.onnx in 1/" };
    w->view = (bd_status_view){ .version = "9.9.9", .ready = false,
                                .now_ms = w->server.start_ms + 65000, .server = &w->server,
                                .process = { .rss_bytes = 1 << 20, .vm_bytes = 1 << 24 },
                                .models = w->models, .n_models = 2 };
    return w;
}

/* ---- a strict reader of the exposition format -------------------------------------------- */

typedef struct sample {
    char   name[128];
    char   labels[8][2][256];        /* key, unescaped value */
    int    n_labels;
    double value;
} sample;

static const char *label(const sample *s, const char *key)
{
    for (int i = 0; i < s->n_labels; i++)
        if (strcmp(s->labels[i][0], key) == 0)
            return s->labels[i][1];
    return NULL;
}

static int is_name_char(int c, int first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

/* Parse one sample line; 0 or -1 (syntax error). */
static int parse_sample(const char *line, sample *s)
{
    memset(s, 0, sizeof *s);
    const char *p = line;
    size_t n = 0;
    while (is_name_char((unsigned char)*p, n == 0) && n < sizeof s->name - 1)
        s->name[n++] = *p++;
    if (n == 0)
        return -1;
    if (*p == '{') {
        p++;
        while (*p != '}') {
            if (s->n_labels == 8)
                return -1;
            char *key = s->labels[s->n_labels][0], *val = s->labels[s->n_labels][1];
            size_t k = 0, v = 0;
            while ((isalnum((unsigned char)*p) || *p == '_') && k < 255)
                key[k++] = *p++;
            if (k == 0 || isdigit((unsigned char)key[0]) || *p++ != '=' || *p++ != '"')
                return -1;
            while (*p != '"') {
                if (*p == '\0' || *p == '\n' || v == 255)
                    return -1;
                if (*p == '\\') {
                    p++;
                    if (*p == 'n') val[v++] = '\n';
                    else if (*p == '\\' || *p == '"') val[v++] = *p;
                    else return -1;                       /* no other escapes exist */
                    p++;
                } else {
                    val[v++] = *p++;
                }
            }
            p++;
            s->n_labels++;
            if (*p == ',')
                p++;
            else if (*p != '}')
                return -1;
        }
        p++;
    }
    if (*p++ != ' ')
        return -1;
    if (strcmp(p, "+Inf") == 0 || strcmp(p, "-Inf") == 0 || strcmp(p, "NaN") == 0)
        return 0;
    char *end;
    s->value = strtod(p, &end);
    return end != p && *end == '\0' ? 0 : -1;
}

typedef struct family {
    char name[128];
    char type[16];
    int  has_help;
} family;

/* The family a sample belongs to: histogram samples carry _bucket/_sum/_count. */
static int belongs(const family *f, const char *sample_name)
{
    size_t n = strlen(f->name);
    if (strncmp(sample_name, f->name, n) != 0)
        return 0;
    const char *rest = sample_name + n;
    if (*rest == '\0')
        return 1;
    return strcmp(f->type, "histogram") == 0 &&
           (!strcmp(rest, "_bucket") || !strcmp(rest, "_sum") || !strcmp(rest, "_count"));
}

typedef struct parsed {
    sample *samples;
    size_t  n;
    family  families[64];
    size_t  n_families;
} parsed;

/* Parse TEXT strictly; fails the test on any violation of the format. */
static void parse_exposition(const char *text, parsed *out)
{
    memset(out, 0, sizeof *out);
    out->samples = calloc(4096, sizeof *out->samples);
    char *copy = strdup(text);
    assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
    family *cur = NULL;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
            char name[128] = "", rest[256] = "";
            assert_int_equal(sscanf(line + 7, "%127s %255[^\n]", name, rest), 2);
            family *f = NULL;
            for (size_t i = 0; i < out->n_families; i++)
                if (strcmp(out->families[i].name, name) == 0)
                    f = &out->families[i];
            if (!f) {
                assert_true(out->n_families < 64);
                f = &out->families[out->n_families++];
                strcpy(f->name, name);
            } else if (f != cur) {
                fail_msg("family %s: metadata after another family began", name);
            }
            if (line[2] == 'H') {
                assert_false(f->has_help);
                f->has_help = 1;
            } else {
                assert_string_equal(f->type, "");            /* one TYPE per family */
                const char *types[] = { "counter", "gauge", "histogram", "summary", "untyped" };
                int ok = 0;
                for (int i = 0; i < 5; i++)
                    ok |= strcmp(rest, types[i]) == 0;
                assert_true(ok);
                strcpy(f->type, rest);
            }
            cur = f;
            continue;
        }
        assert_true(line[0] != '#');
        sample *s = &out->samples[out->n];
        if (parse_sample(line, s) != 0)
            fail_msg("not a valid sample line: '%s'", line);
        /* samples of a family follow its TYPE line, contiguously */
        if (!cur || !belongs(cur, s->name) || cur->type[0] == '\0')
            fail_msg("sample '%s' outside its family's block", line);
        assert_true(cur->has_help);
        assert_true(++out->n < 4096);
    }
    free(copy);
}

static const sample *find(const parsed *p, const char *name, const char *k1, const char *v1,
                          const char *k2, const char *v2)
{
    for (size_t i = 0; i < p->n; i++) {
        const sample *s = &p->samples[i];
        if (strcmp(s->name, name) != 0)
            continue;
        if (k1 && (!label(s, k1) || strcmp(label(s, k1), v1) != 0))
            continue;
        if (k2 && (!label(s, k2) || strcmp(label(s, k2), v2) != 0))
            continue;
        return s;
    }
    return NULL;
}

static double value_of(const parsed *p, const char *name, const char *k1, const char *v1,
                       const char *k2, const char *v2)
{
    const sample *s = find(p, name, k1, v1, k2, v2);
    if (!s)
        fail_msg("missing sample %s{%s=%s,%s=%s}", name, k1 ? k1 : "", v1 ? v1 : "",
                 k2 ? k2 : "", v2 ? v2 : "");
    return s->value;
}

static char *render_metrics(const world *w)
{
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(bd_prometheus_render(&w->view, &text, &len), 0);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_metrics_text_is_valid_exposition_format(void **state)
{
    world *w = make_world();
    char *text = render_metrics(w);
    parsed p;
    parse_exposition(text, &p);

    const char *families[] = {
        "braid_up", "braid_process_start_time_seconds", "braid_process_resident_memory_bytes",
        "braid_process_virtual_memory_bytes", "braid_rpc_total", "braid_model_loads_total",
        "braid_unloads_total", "braid_models_loaded", "braid_model_state",
        "braid_requests_total", "braid_request_duration_seconds", "braid_inference_count_total",
        "braid_execution_count_total", "braid_inflight_requests", "braid_queued_requests",
        "braid_backend_seconds_total", "braid_plan_cache_plans", "braid_plan_cache_bytes",
        "braid_plan_compiles_total", "braid_plan_evictions_total",
        "nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count",
        "nv_inference_exec_count", "nv_inference_request_duration_us",
        "nv_inference_queue_duration_us", "nv_inference_compute_input_duration_us",
        "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us",
        "nv_inference_pending_request_count", "nv_model_load_duration_secs",
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        int found = 0;
        for (size_t j = 0; j < p.n_families; j++)
            found |= strcmp(p.families[j].name, families[i]) == 0;
        if (!found)
            fail_msg("family %s missing", families[i]);
    }
    free(p.samples);
    free(text);
    free(w);
}

static void test_metrics_values(void **state)
{
    world *w = make_world();
    char *text = render_metrics(w);
    parsed p;
    parse_exposition(text, &p);

    assert_true(value_of(&p, "braid_up", NULL, NULL, NULL, NULL) == 1);
    assert_true(value_of(&p, "braid_rpc_total", NULL, NULL, NULL, NULL) == 99);
    assert_true(value_of(&p, "braid_model_loads_total", "result", "ok", NULL, NULL) == 2);
    assert_true(value_of(&p, "braid_model_loads_total", "result", "failed", NULL, NULL) == 1);
    assert_true(value_of(&p, "braid_unloads_total", NULL, NULL, NULL, NULL) == 1);
    assert_true(value_of(&p, "braid_models_loaded", NULL, NULL, NULL, NULL) == 1);
    assert_true(value_of(&p, "braid_process_start_time_seconds", NULL, NULL, NULL, NULL) == 1700000000.0);
    assert_true(value_of(&p, "braid_process_resident_memory_bytes", NULL, NULL, NULL, NULL) == 1 << 20);

    assert_true(value_of(&p, "braid_model_state", "model", "tinycnn", "state", "READY") == 1);
    assert_true(value_of(&p, "braid_model_state", "model", "tinycnn", "state", "LOADING") == 0);
    /* the awkward name round-trips through the escapes */
    assert_true(value_of(&p, "braid_model_state", "model", AWKWARD, "state", "UNAVAILABLE") == 1);

    assert_true(value_of(&p, "braid_requests_total", "model", "tinycnn", "outcome", "success") == 6);
    assert_true(value_of(&p, "braid_requests_total", "model", "tinycnn", "outcome", "invalid") == 3);
    assert_true(value_of(&p, "braid_requests_total", "model", "tinycnn", "outcome", "queue_full") == 2);
    const char *outcomes[] = { "success", "invalid", "not_found", "unavailable", "queue_full",
                               "deadline", "cancelled", "internal" };
    for (int i = 0; i < 8; i++)
        assert_non_null(find(&p, "braid_requests_total", "version", "1", "outcome", outcomes[i]));
    /* a model with nothing served has no per-version series */
    assert_null(find(&p, "braid_requests_total", "model", AWKWARD, NULL, NULL));

    assert_true(value_of(&p, "braid_inference_count_total", "model", "tinycnn", NULL, NULL) == 12);
    assert_true(value_of(&p, "braid_execution_count_total", "model", "tinycnn", NULL, NULL) == 6);
    assert_true(value_of(&p, "braid_inflight_requests", "model", "tinycnn", NULL, NULL) == 1);
    assert_true(value_of(&p, "braid_queued_requests", "model", "tinycnn", NULL, NULL) == 4);
    assert_true(value_of(&p, "braid_plan_cache_plans", "model", "tinycnn", NULL, NULL) == 3);
    assert_true(value_of(&p, "braid_plan_cache_bytes", "model", "tinycnn", NULL, NULL) == 4096);
    assert_true(value_of(&p, "braid_plan_compiles_total", "model", "tinycnn", NULL, NULL) == 5);
    assert_true(value_of(&p, "braid_plan_evictions_total", "model", "tinycnn", NULL, NULL) == 2);

    size_t nb = 0;
    const bd_backend *const *b = bd_backends(&nb);
    assert_true(nb >= 1);
    assert_true(value_of(&p, "braid_backend_seconds_total", "model", "tinycnn", "backend",
                         b[0]->name) == 1.5);
    free(p.samples);
    free(text);
    free(w);
}

static void test_histograms_are_cumulative_and_end_in_inf_equal_count(void **state)
{
    world *w = make_world();
    char *text = render_metrics(w);
    parsed p;
    parse_exposition(text, &p);

    const char *phases[] = { "queue", "compute", "total" };
    for (int ph = 0; ph < 3; ph++) {
        double prev = -1, prev_le = -1, inf = -1;
        int buckets = 0;
        for (size_t i = 0; i < p.n; i++) {
            const sample *s = &p.samples[i];
            if (strcmp(s->name, "braid_request_duration_seconds_bucket") != 0 ||
                strcmp(label(s, "phase"), phases[ph]) != 0)
                continue;
            const char *le = label(s, "le");
            assert_non_null(le);
            assert_true(s->value >= prev);                 /* cumulative */
            prev = s->value;
            buckets++;
            if (strcmp(le, "+Inf") == 0) {
                inf = s->value;
            } else {
                assert_true(inf < 0);                      /* +Inf is the last bucket */
                double b = strtod(le, NULL);
                assert_true(b > prev_le);                  /* bounds increase */
                prev_le = b;
            }
        }
        assert_int_equal(buckets, BD_HIST_BUCKETS);
        assert_true(inf == 6);
        assert_true(value_of(&p, "braid_request_duration_seconds_count", "phase", phases[ph],
                             NULL, NULL) == inf);
    }
    /* observations 0.2ms 0.7ms 3ms 3ms 40ms 20s of the total phase */
    assert_true(value_of(&p, "braid_request_duration_seconds_bucket", "phase", "total", "le", "0.0005") == 1);
    assert_true(value_of(&p, "braid_request_duration_seconds_bucket", "phase", "total", "le", "0.001") == 2);
    assert_true(value_of(&p, "braid_request_duration_seconds_bucket", "phase", "total", "le", "0.005") == 4);
    assert_true(value_of(&p, "braid_request_duration_seconds_bucket", "phase", "total", "le", "10") == 5);
    double sum = value_of(&p, "braid_request_duration_seconds_sum", "phase", "total", NULL, NULL);
    assert_true(sum > 20.0468 && sum < 20.0470);
    free(p.samples);
    free(text);
    free(w);
}

static void test_metrics_with_no_models(void **state)
{
    world *w = make_world();
    w->view.n_models = 0;
    char *text = render_metrics(w);
    parsed p;
    parse_exposition(text, &p);
    assert_true(value_of(&p, "braid_models_loaded", NULL, NULL, NULL, NULL) == 0);
    assert_null(find(&p, "braid_requests_total", NULL, NULL, NULL, NULL));
    assert_null(find(&p, "nv_inference_request_success", NULL, NULL, NULL, NULL));
    assert_null(find(&p, "nv_inference_request_failure", NULL, NULL, NULL, NULL));
    free(p.samples);
    free(text);
    free(w);
}

/* Triton's families: names, types and help texts exactly as Triton's core prints them
 * (src/metrics.cc), values in Triton's units, failures folded into Triton's four reasons. */
static void test_triton_metrics(void **state)
{
    world *w = make_world();
    bd_model_stats *s = &w->stats;
    bd_duration_add(&s->queue, 1500);           /* 1.5 us: microseconds are truncated */
    bd_duration_add(&s->queue, 2000000);
    bd_duration_add(&s->compute_input, 7000);
    bd_duration_add(&s->compute_infer, 9000000);
    bd_duration_add(&s->compute_output, 3000);
    atomic_store(&s->failures[BD_FAIL_DEADLINE], 1);
    atomic_store(&s->failures[BD_FAIL_CANCELLED], 4);
    atomic_store(&s->failures[BD_FAIL_INTERNAL], 5);
    atomic_store(&s->failures[BD_FAIL_NOT_FOUND], 1);
    atomic_store(&s->failures[BD_FAIL_UNAVAILABLE], 1);
    char *text = render_metrics(w);
    parsed p;
    parse_exposition(text, &p);

    /* the metadata lines, verbatim */
    const char *meta[] = {
        "# HELP nv_inference_request_success Number of successful inference requests, all batch sizes\n"
        "# TYPE nv_inference_request_success counter\n",
        "# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes\n"
        "# TYPE nv_inference_request_failure counter\n",
        "# HELP nv_inference_count Number of inferences performed (does not include cached requests)\n"
        "# TYPE nv_inference_count counter\n",
        "# HELP nv_inference_exec_count Number of model executions performed (does not include cached requests)\n"
        "# TYPE nv_inference_exec_count counter\n",
        "# HELP nv_inference_request_duration_us Cumulative inference request duration in microseconds (includes cached requests)\n"
        "# TYPE nv_inference_request_duration_us counter\n",
        "# HELP nv_inference_queue_duration_us Cumulative inference queuing duration in microseconds (includes cached requests)\n"
        "# TYPE nv_inference_queue_duration_us counter\n",
        "# HELP nv_inference_compute_input_duration_us Cumulative compute input duration in microseconds (does not include cached requests)\n"
        "# TYPE nv_inference_compute_input_duration_us counter\n",
        "# HELP nv_inference_compute_infer_duration_us Cumulative compute inference duration in microseconds (does not include cached requests)\n"
        "# TYPE nv_inference_compute_infer_duration_us counter\n",
        "# HELP nv_inference_compute_output_duration_us Cumulative inference compute output duration in microseconds (does not include cached requests)\n"
        "# TYPE nv_inference_compute_output_duration_us counter\n",
        "# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution per-model.\n"
        "# TYPE nv_inference_pending_request_count gauge\n",
        "# HELP nv_model_load_duration_secs Model load time in seconds\n"
        "# TYPE nv_model_load_duration_secs gauge\n",
    };
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (!strstr(text, meta[i]))
            fail_msg("missing, verbatim: %s", meta[i]);
    /* Triton's label order on failures: model, reason, version */
    assert_non_null(strstr(text, "nv_inference_request_failure{model=\"tinycnn\",reason=\"OTHER\",version=\"1\"} 5\n"));

    assert_true(value_of(&p, "nv_inference_request_success", "model", "tinycnn", "version", "1") == 6);
    assert_true(value_of(&p, "nv_inference_request_failure", "model", "tinycnn", "reason", "REJECTED") == 3);
    assert_true(value_of(&p, "nv_inference_request_failure", "model", "tinycnn", "reason", "CANCELED") == 4);
    assert_true(value_of(&p, "nv_inference_request_failure", "model", "tinycnn", "reason", "BACKEND") == 5);
    assert_true(value_of(&p, "nv_inference_request_failure", "model", "tinycnn", "reason", "OTHER") == 5);
    assert_true(value_of(&p, "nv_inference_count", "model", "tinycnn", NULL, NULL) == 12);
    assert_true(value_of(&p, "nv_inference_exec_count", "model", "tinycnn", NULL, NULL) == 6);
    /* success.ns = 20046900000 ns */
    assert_true(value_of(&p, "nv_inference_request_duration_us", "model", "tinycnn", NULL, NULL) == 20046900);
    assert_true(value_of(&p, "nv_inference_queue_duration_us", "model", "tinycnn", NULL, NULL) == 2001);
    assert_true(value_of(&p, "nv_inference_compute_input_duration_us", "model", "tinycnn", NULL, NULL) == 7);
    assert_true(value_of(&p, "nv_inference_compute_infer_duration_us", "model", "tinycnn", NULL, NULL) == 9000);
    assert_true(value_of(&p, "nv_inference_compute_output_duration_us", "model", "tinycnn", NULL, NULL) == 3);
    assert_true(value_of(&p, "nv_inference_pending_request_count", "model", "tinycnn", NULL, NULL) == 4);
    assert_true(value_of(&p, "nv_model_load_duration_secs", "model", "tinycnn", NULL, NULL) == 0.0125);
    /* a model with nothing served has none of them, as Triton drops an unloaded model's */
    assert_null(find(&p, "nv_inference_request_success", "model", AWKWARD, NULL, NULL));
    assert_null(find(&p, "nv_model_load_duration_secs", "model", AWKWARD, NULL, NULL));
    /* the pending gauge never shows a racing decrement below zero */
    atomic_store(&s->queued, -1);
    free(p.samples);
    free(text);
    text = render_metrics(w);
    parse_exposition(text, &p);
    assert_true(value_of(&p, "nv_inference_pending_request_count", "model", "tinycnn", NULL, NULL) == 0);
    free(p.samples);
    free(text);
    free(w);
}

static void test_triton_failure_reasons(void **state)
{
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_QUEUE_FULL), BD_TRITON_REJECTED);
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_DEADLINE), BD_TRITON_REJECTED);
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_CANCELLED), BD_TRITON_CANCELED);
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_INTERNAL), BD_TRITON_BACKEND);
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_INVALID), BD_TRITON_OTHER);
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_NOT_FOUND), BD_TRITON_OTHER);
    assert_int_equal(bd_fail_reason_triton(BD_FAIL_UNAVAILABLE), BD_TRITON_OTHER);
    assert_string_equal(bd_triton_reason_name(BD_TRITON_REJECTED), "REJECTED");
    assert_string_equal(bd_triton_reason_name(BD_TRITON_CANCELED), "CANCELED");
    assert_string_equal(bd_triton_reason_name(BD_TRITON_BACKEND), "BACKEND");
    assert_string_equal(bd_triton_reason_name(BD_TRITON_OTHER), "OTHER");
}

static cJSON *item(const cJSON *o, const char *path)
{
    /* "a.b.c" */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = o;
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
        cur = cJSON_GetObjectItemCaseSensitive(cur, k);
        if (!cur)
            fail_msg("status JSON: no '%s' (at '%s')", path, k);
    }
    return (cJSON *)cur;
}

static double num(const cJSON *o, const char *path)
{
    cJSON *i = item(o, path);
    if (!cJSON_IsNumber(i))
        fail_msg("status JSON: '%s' is not a number", path);
    return i->valuedouble;
}

static void test_status_json_has_the_schema(void **state)
{
    world *w = make_world();
    for (int pretty = 0; pretty < 2; pretty++) {
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(bd_status_json_render(&w->view, pretty, &text, &len), 0);
        assert_int_equal(strlen(text), len);
        cJSON *root = cJSON_Parse(text);
        assert_non_null(root);

        assert_string_equal(item(root, "server.name")->valuestring, "braid");
        assert_string_equal(item(root, "server.version")->valuestring, "9.9.9");
        assert_true(num(root, "server.uptime_s") == 65);
        assert_true(cJSON_IsFalse(item(root, "server.ready")));
        assert_true(num(root, "server.rpc_total") == 99);
        assert_true(num(root, "server.memory.rss_bytes") == 1 << 20);
        assert_true(num(root, "server.loads.ok") == 2);

        cJSON *models = item(root, "models");
        assert_true(cJSON_IsArray(models));
        assert_int_equal(cJSON_GetArraySize(models), 2);
        cJSON *m = cJSON_GetArrayItem(models, 0);
        assert_string_equal(item(m, "name")->valuestring, "tinycnn");
        assert_string_equal(item(m, "version")->valuestring, "1");
        assert_string_equal(item(m, "state")->valuestring, "READY");
        assert_string_equal(item(m, "reason")->valuestring, "");
        assert_string_equal(item(m, "platform")->valuestring, "onnx");
        assert_true(num(m, "partition.nodes_imported") == 10);
        assert_true(num(m, "partition.nodes_planned") == 7);
        assert_true(num(m, "partition.steps") == 2);
        assert_true(num(m, "partition.fused_composites") == 3);
        assert_true(num(m, "partition.load_ms") == 12.5);
        size_t nb = 0;
        const bd_backend *const *b = bd_backends(&nb);
        char path[128];
        snprintf(path, sizeof path, "partition.backends.%s", b[0]->name);
        assert_true(num(m, path) == 7);
        assert_true(num(m, "queue.queued") == 4);
        assert_true(num(m, "queue.in_flight") == 1);
        assert_true(num(m, "queue.limit") == 64);
        assert_true(num(m, "stats.inference_count") == 12);
        assert_true(num(m, "stats.execution_count") == 6);
        assert_true(num(m, "stats.success.count") == 6);
        assert_true(num(m, "stats.success.ns") == 20046900000.0);
        assert_true(num(m, "stats.fail.count") == 0);
        assert_true(num(m, "stats.queue.count") == 0);
        assert_true(num(m, "stats.compute_infer.ns") == 0);
        assert_true(num(m, "stats.failures.invalid") == 3);
        assert_true(num(m, "stats.failures.queue_full") == 2);
        assert_true(num(m, "stats.failures.internal") == 0);
        assert_true(num(m, "plan_cache.plans") == 3);
        assert_true(num(m, "plan_cache.bytes") == 4096);
        assert_true(num(m, "plan_cache.max_plans") == 64);
        assert_true(num(m, "plan_cache.compiles") == 5);
        assert_true(num(m, "plan_cache.evictions") == 2);
        cJSON *ladder = item(m, "batch_ladder");
        assert_true(cJSON_IsArray(ladder) && cJSON_GetArraySize(ladder) == 4);
        assert_true(cJSON_GetArrayItem(ladder, 3)->valuedouble == 6);

        cJSON *u = cJSON_GetArrayItem(models, 1);
        assert_string_equal(item(u, "name")->valuestring, AWKWARD);   /* JSON-escaped */
        assert_string_equal(item(u, "state")->valuestring, "UNAVAILABLE");
        assert_string_equal(item(u, "reason")->valuestring, "model 'x': no model.onnx in 1/");
        assert_true(cJSON_IsNull(item(u, "stats")));
        assert_true(cJSON_IsNull(item(u, "partition")));
        assert_true(cJSON_IsNull(item(u, "queue")));
        assert_true(cJSON_IsNull(item(u, "plan_cache")));
        assert_true(cJSON_IsNull(item(u, "batch_ladder")));
        cJSON_Delete(root);
        free(text);
    }
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_text_is_valid_exposition_format),
        cmocka_unit_test(test_metrics_values),
        cmocka_unit_test(test_histograms_are_cumulative_and_end_in_inf_equal_count),
        cmocka_unit_test(test_metrics_with_no_models),
        cmocka_unit_test(test_triton_metrics),
        cmocka_unit_test(test_triton_failure_reasons),
        cmocka_unit_test(test_status_json_has_the_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
