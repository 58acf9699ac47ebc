/* Mixed placement: models where oneDNN and the ONNX Runtime fallback take turns, compared
 * with PyTorch's outputs (max |braid - torch| <= 1e-4 * max |torch|), with the partition
 * report checked to really alternate, and a proof that the boundaries copy no tensor bytes.
 *
 *   test_mixed ORT_SPY_LIBRARY
 *
 * The models come from gen_mixed.py (mixed_*) and tests/runtime/models/gen_models.py (bert2_op17),
 * both cached in ${BRAID_MODEL_CACHE:-~/.cache/braid/models}; the test runs the generators
 * first (they return at once when the cache is fresh).
 *
 * ORT_SPY_LIBRARY (ort_spy.c) stands in for libonnxruntime.so.1: it forwards to the real
 * library and records every buffer braid lends ONNX Runtime. Without ONNX Runtime the tests
 * are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "backends/ort/ort_backend.h"
#include "core/npy.h"
#include "runtime/model.h"
#include "tests/lib/tl_file.h"

#define TOL     1e-4
#define MAX_IO  8

#ifndef BD_GEN_MIXED_PY
#define BD_GEN_MIXED_PY "tests/runtime/mixed/gen_mixed.py"
#endif
#ifndef BD_GEN_MODELS_PY
#define BD_GEN_MODELS_PY "tests/runtime/models/gen_models.py"
#endif

extern char **environ;

static const char *spy_path;
static char        ort_missing[512];

/* ---- the generated models ------------------------------------------------------------- */

typedef struct ref_case {
    char     model[1100];
    size_t   n_in, n_out;
    char     out_names[MAX_IO][64];
    bd_npy   in[MAX_IO];
    DLTensor in_dl[MAX_IO];
    bd_npy   ref[MAX_IO];
} ref_case;

static const char *cache_dir(void)
{
    static char buf[1024];
    const char *d = getenv("BRAID_MODEL_CACHE");
    if (d && *d)
        snprintf(buf, sizeof buf, "%s", d);
    else
        snprintf(buf, sizeof buf, "%s/.cache/braid/models", getenv("HOME") ? getenv("HOME") : "/tmp");
    return buf;
}

/* Run GENERATOR --out CACHE --only NAME; 0 when it exited 0. */
static int generate(const char *generator, const char *name)
{
    char *argv[] = { "/usr/bin/python3", (char *)generator, "--out", (char *)cache_dir(),
                     "--only", (char *)name, NULL };
    pid_t pid;
    if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
        return -1;
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Read NAME's manifest and the default case's inputs and PyTorch outputs. */
static void load_case(const char *generator, const char *name, ref_case *c)
{
    memset(c, 0, sizeof *c);
    if (generate(generator, name) != 0)
        fail_msg("generator %s failed for %s", generator, name);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.json", cache_dir(), name);
    char *text = tl_read_text(path);
    assert_non_null(text);
    cJSON *man = cJSON_Parse(text);
    free(text);
    assert_non_null(man);
    snprintf(c->model, sizeof c->model, "%s/%s", cache_dir(),
             cJSON_GetObjectItem(man, "onnx")->valuestring);
    cJSON *kase = cJSON_GetArrayItem(cJSON_GetObjectItem(man, "cases"), 0);
    const char *lists[2] = { "inputs", "outputs" };
    for (int io = 0; io < 2; io++) {
        cJSON *names = cJSON_GetObjectItem(man, lists[io]);
        cJSON *files = cJSON_GetObjectItem(kase, lists[io]);
        size_t n = (size_t)cJSON_GetArraySize(names);
        assert_true(n <= MAX_IO);
        for (size_t i = 0; i < n; i++) {
            const char *nm = cJSON_GetArrayItem(names, (int)i)->valuestring;
            const char *file = cJSON_GetObjectItem(files, nm)->valuestring;
            snprintf(path, sizeof path, "%s/%s", cache_dir(), file);
            bd_error err = { 0 };
            bd_npy *dst = io == 0 ? &c->in[i] : &c->ref[i];
            if (bd_npy_read(path, dst, &err))
                fail_msg("%s", err.msg);
            if (io == 0)
                bd_npy_as_dltensor(&c->in[i], &c->in_dl[i]);
            else
                snprintf(c->out_names[i], sizeof c->out_names[i], "%s", nm);
        }
        *(io == 0 ? &c->n_in : &c->n_out) = n;
    }
    cJSON_Delete(man);
}

static void free_case(ref_case *c)
{
    for (size_t i = 0; i < MAX_IO; i++) {
        bd_npy_free(&c->in[i]);
        bd_npy_free(&c->ref[i]);
    }
}

/* ---- running and checking -------------------------------------------------------------- */

static bd_model_options placement(const char *fallback_ops, const char *engine, bool keep_islands)
{
    return (bd_model_options){
        .threads = 0,
        .fallback_ops = fallback_ops,
        /* these tests are about the oneDNN / ONNX Runtime boundary: the native engine, which
         * would take the glue between them, is left out */
        .engine = engine ? engine : "dnnl,ort",
        /* The cost rule would rightly fold the tiny oneDNN islands of these test models into
         * the fallback; they are there to make the engines alternate. */
        .min_dnnl_region_flops = keep_islands ? -1 : 0,
    };
}

/* Compare every output of E with C's PyTorch outputs; returns the worst relative error. */
static double compare(const bd_exec *e, const ref_case *c, const char *label)
{
    assert_int_equal(bd_exec_num_outputs(e), c->n_out);
    double worst = 0.0;
    for (size_t k = 0; k < c->n_out; k++) {
        const DLTensor *o = bd_exec_output(e, k);
        const bd_npy *r = &c->ref[k];
        assert_int_equal(o->ndim, r->shape.rank);
        size_t n = 1;
        for (int d = 0; d < o->ndim; d++) {
            assert_int_equal(o->shape[d], r->shape.dims[d]);
            n *= (size_t)o->shape[d];
        }
        assert_int_equal(r->dtype, BD_DT_FLOAT);
        const float *got = o->data, *want = r->data;
        double max_ref = 0.0, max_diff = 0.0;
        for (size_t i = 0; i < n; i++) {
            max_ref = fmax(max_ref, fabs(want[i]));
            double d = fabs((double)got[i] - want[i]);
            max_diff = isnan(d) ? INFINITY : fmax(max_diff, d);
        }
        double rel = max_diff / (max_ref > 0 ? max_ref : 1.0);
        print_message("%s: output '%s': max |braid - torch| = %.3g (max |torch| %.3g, ratio %.2g)\n",
                      label, c->out_names[k], max_diff, max_ref, rel);
        if (!(rel <= TOL))
            fail_msg("%s: output '%s' differs from PyTorch by %.3g x max|ref| (limit %g)", label,
                     c->out_names[k], rel, TOL);
        worst = fmax(worst, rel);
    }
    return worst;
}

/* Print the plan's subgraphs; return how many times the backend changes along them. */
static size_t crossings(const bd_plan *p, const char *label)
{
    const bd_partition_report *rep = bd_plan_partition(p);
    char line[512];
    size_t n = 0, changes = 0;
    for (size_t i = 0; i < rep->n_subgraphs && n < sizeof line; i++) {
        const bd_subgraph_info *s = &rep->subgraphs[i];
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%s(%zu)", i ? " -> " : "", s->backend,
                              s->n_nodes);
        if (i && strcmp(s->backend, rep->subgraphs[i - 1].backend) != 0)
            changes++;
    }
    print_message("%s: %zu steps: %s\n", label, bd_plan_num_steps(p), line);
    for (size_t i = 0; i < rep->n_fallback && i < 16; i++)
        print_message("%s:   %s (%s) on %s: %s%s%s\n", label, rep->fallback[i].node,
                      rep->fallback[i].op_type, rep->fallback[i].backend, rep->fallback[i].reason,
                      rep->fallback[i].detail && rep->fallback[i].detail[0] ? " — " : "",
                      rep->fallback[i].detail ? rep->fallback[i].detail : "");
    if (rep->n_fallback > 16)
        print_message("%s:   ... %zu more\n", label, rep->n_fallback - 16);
    return changes;
}

typedef struct run_result {
    bd_model      *model;
    const bd_plan *plan;
    bd_exec       *exec;
} run_result;

static void run_model(const ref_case *c, const bd_model_options *o, run_result *r)
{
    bd_error err = { 0 };
    memset(r, 0, sizeof *r);
    if (bd_model_open(c->model, o, &r->model, &err) ||
        bd_model_plan(r->model, c->in_dl, c->n_in, &r->plan, &err) ||
        bd_exec_create(r->plan, &r->exec, &err) ||
        bd_exec_run(r->exec, c->in_dl, c->n_in, &err))
        fail_msg("%s: %s", c->model, err.msg);
}

static void run_done(run_result *r)
{
    bd_exec_destroy(r->exec);
    bd_model_close(r->model);
}

static void skip_without_ort(void)
{
    if (ort_missing[0]) {
        print_message("ONNX Runtime not available: %s; skipping\n", ort_missing);
        skip();
    }
}

/* A model that must alternate: at least MIN_STEPS steps and MIN_CHANGES backend changes,
 * and the same answer as PyTorch both with the islands kept and under the default cost rule. */
static void check_alternating(const char *generator, const char *name, const char *fallback_ops,
                              size_t min_steps, size_t min_changes)
{
    skip_without_ort();
    ref_case c;
    load_case(generator, name, &c);
    bd_model_options o = placement(fallback_ops, NULL, true);
    run_result r;
    run_model(&c, &o, &r);
    size_t changes = crossings(r.plan, name);
    compare(r.exec, &c, name);
    size_t steps = bd_plan_num_steps(r.plan);
    if (steps < min_steps || changes < min_changes)
        fail_msg("%s: %zu steps with %zu backend changes, expected at least %zu and %zu; the "
                 "reasons above say why nodes left oneDNN (a 'dynamic shape' reason after an op "
                 "means that op has no static shape rule in partitioner/shape)", name, steps,
                 changes, min_steps, min_changes);
    run_done(&r);

    o = placement(fallback_ops, NULL, false);
    run_model(&c, &o, &r);
    char label[96];
    snprintf(label, sizeof label, "%s (default cost rule)", name);
    crossings(r.plan, label);
    compare(r.exec, &c, label);
    run_done(&r);
    free_case(&c);
}

/* ---- the tests --------------------------------------------------------------------------- */

static void test_conv_topk_matmul_alternate_five_times(void **state)
{
    (void)state;
    check_alternating(BD_GEN_MIXED_PY, "mixed_topk", NULL, 5, 4);
}

static void test_where_nonzero_gather_between_convs(void **state)
{
    (void)state;
    check_alternating(BD_GEN_MIXED_PY, "mixed_where", NULL, 3, 2);
}

static void test_bert2_with_softmax_forced_to_fallback(void **state)
{
    (void)state;
    check_alternating(BD_GEN_MODELS_PY, "bert2_op17", "Softmax", 5, 4);

    /* Every Softmax is on the fallback, and the report says it was forced. */
    ref_case c;
    load_case(BD_GEN_MODELS_PY, "bert2_op17", &c);
    bd_model_options o = placement("Softmax", NULL, true);
    run_result r;
    run_model(&c, &o, &r);
    const bd_partition_report *rep = bd_plan_partition(r.plan);
    size_t softmax = 0;
    for (size_t i = 0; i < rep->n_fallback; i++)
        if (strcmp(rep->fallback[i].op_type, "Softmax") == 0) {
            softmax++;
            assert_string_equal(rep->fallback[i].reason, "forced");
            assert_string_equal(rep->fallback[i].backend, "ort");
        }
    assert_int_equal(softmax, 2);   /* one per layer */
    run_done(&r);
    free_case(&c);
}

static void test_bert2_whole_model_on_ort(void **state)
{
    (void)state;
    skip_without_ort();
    ref_case c;
    load_case(BD_GEN_MODELS_PY, "bert2_op17", &c);
    bd_model_options o = placement(NULL, "ort", false);
    run_result r;
    run_model(&c, &o, &r);
    crossings(r.plan, "bert2_op17 --engine ort");
    const bd_partition_report *rep = bd_plan_partition(r.plan);
    assert_int_equal(rep->n_subgraphs, 1);
    assert_string_equal(rep->subgraphs[0].backend, "ort");
    compare(r.exec, &c, "bert2_op17 --engine ort");
    run_done(&r);
    free_case(&c);
}

typedef void   (*spy_reset_fn)(void);
typedef size_t (*spy_wraps_fn)(const void **, size_t *, size_t);
typedef size_t (*spy_runs_fn)(size_t *);

static bool wrapped(const void **data, const size_t *len, size_t n, const void *p, size_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (data[i] == p && len[i] == bytes)
            return true;
    return false;
}

static size_t output_index(const ref_case *c, const char *name)
{
    for (size_t k = 0; k < c->n_out; k++)
        if (strcmp(c->out_names[k], name) == 0)
            return k;
    fail_msg("no output '%s'", name);
    return 0;
}

/* mixed_boundary: a = Conv+Relu (oneDNN) -> v = Where(a > 0.5, a, -a) (ORT) -> y = MatMul
 * (oneDNN); a and v are graph outputs too, so the executor shows where it keeps them. The
 * tensor oneDNN writes (a) must be the very buffer ORT reads, and ORT must write v straight
 * into the buffer the executor then hands to oneDNN: the spy sees both lent to ORT in place,
 * ORT allocates no output of its own, and later runs lend nothing new. */
static void test_boundaries_copy_no_bytes(void **state)
{
    (void)state;
    skip_without_ort();
    void *spy = dlopen(spy_path, RTLD_NOW | RTLD_NOLOAD);
    ref_case c;
    load_case(BD_GEN_MIXED_PY, "mixed_boundary", &c);
    bd_model_options o = placement(NULL, NULL, true);
    bd_error err = { 0 };
    bd_model *m = NULL;
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    if (bd_model_open(c.model, &o, &m, &err) || bd_model_plan(m, c.in_dl, c.n_in, &p, &err) ||
        bd_exec_create(p, &e, &err))
        fail_msg("%s", err.msg);
    assert_true(crossings(p, "mixed_boundary") >= 2);

    spy = spy ? spy : dlopen(spy_path, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(spy);      /* the ORT engine loaded it */
    spy_reset_fn reset;
    spy_wraps_fn wraps;
    spy_runs_fn  runs;
    *(void **)&reset = dlsym(spy, "ort_spy_reset");
    *(void **)&wraps = dlsym(spy, "ort_spy_wraps");
    *(void **)&runs  = dlsym(spy, "ort_spy_runs");
    assert_non_null(reset);
    assert_non_null(wraps);
    assert_non_null(runs);

    const void *data[256];
    size_t len[256], allocated = 99;
    for (int round = 0; round < 3; round++) {
        reset();
        if (bd_exec_run(e, c.in_dl, c.n_in, &err))
            fail_msg("%s", err.msg);
        compare(e, &c, "mixed_boundary");
        size_t n = wraps(data, len, 256);
        assert_int_equal(runs(&allocated), 1);        /* one ORT subgraph, one Run */
        assert_int_equal(allocated, 0);               /* every ORT output was braid's buffer */
        const DLTensor *a = bd_exec_output(e, output_index(&c, "a"));
        const DLTensor *v = bd_exec_output(e, output_index(&c, "v"));
        size_t bytes = c.ref[output_index(&c, "a")].nbytes;
        print_message("round %d: ORT was lent %zu buffer(s); a at %p, v at %p (%zu bytes each)\n",
                      round, n, a->data, v->data, bytes);
        if (round == 0) {
            /* First run: the engine wraps the buffers it is given, once. */
            assert_true(wrapped(data, len, n, a->data, bytes));    /* ORT read oneDNN's a in place */
            assert_true(wrapped(data, len, n, v->data, bytes));    /* ORT wrote v in place */
        } else {
            assert_int_equal(n, 0);     /* later runs reuse the wrappers: nothing new, no copy */
        }
    }
    bd_exec_destroy(e);
    bd_model_close(m);
    free_case(&c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_mixed ORT_SPY_LIBRARY\n");
        return 2;
    }
    spy_path = argv[1];
    bd_error err = { 0 };
    if (bd_ort_backend.configure(&(bd_engine_config){ .library = spy_path, .threads = 1 }, &err))
        snprintf(ort_missing, sizeof ort_missing, "%s", err.msg);
    else if (!bd_ort_available(ort_missing, sizeof ort_missing) && !ort_missing[0])
        snprintf(ort_missing, sizeof ort_missing, "not loadable");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_topk_matmul_alternate_five_times),
        cmocka_unit_test(test_where_nonzero_gather_between_convs),
        cmocka_unit_test(test_bert2_with_softmax_forced_to_fallback),
        cmocka_unit_test(test_bert2_whole_model_on_ort),
        cmocka_unit_test(test_boundaries_copy_no_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
