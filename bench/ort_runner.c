/* ONNX Runtime session for the benchmark, over braid's own declaration of ORT's C API. */
#include "bench/ort_runner.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ort/ort_api.h"

struct ort_runner {
    const OrtApi      *api;
    const char        *version;        /* static storage in the library */
    OrtEnv            *env;
    OrtSession        *session;
    OrtMemoryInfo     *cpu;
    size_t             n_in, n_out;
    char             **in_names, **out_names;    /* malloc'd copies */
    int               *in_dtype;
    int               *in_rank;
    int64_t          (*in_dims)[BENCH_MAX_RANK];
    OrtValue         **in_vals;        /* wrap the caller's input buffers */
    OrtValue         **out_vals;       /* wrap OUTS */
    bench_tensor      *outs;
    OrtRunOptions     *stop_spin;      /* "session.force_spinning_stop": park the pool after */
};

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Turn a non-NULL status into WHY (prefixed by WHAT) and free it. Returns 0 for NULL. */
static int check(const OrtApi *api, OrtStatus *st, const char *what, char *why, size_t len)
{
    if (!st)
        return 0;
    snprintf(why, len, "onnxruntime: %s: %s", what, api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    return -1;
}

static const OrtApi *load_api(const char *path, const char **version, char *why, size_t len)
{
    const char *name = path ? path : BD_ORT_LIBRARY_NAME;
    /* Never dlclose'd: unloading ORT while its thread pools or static destructors may still
     * run is not worth the risk; loading the same file again only bumps a reference count. */
    void *ort_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!ort_lib) {
        fail(why, len, "cannot load ONNX Runtime (%s): %s; run scripts/fetch_ort.sh and pass its "
             "output with --ort", name, dlerror());
        return NULL;
    }
    OrtGetApiBaseFn get_base;
    *(void **)&get_base = dlsym(ort_lib, "OrtGetApiBase");    /* POSIX: object -> function pointer */
    if (!get_base) {
        fail(why, len, "%s does not export OrtGetApiBase: not an ONNX Runtime library", name);
        return NULL;
    }
    const OrtApiBase *base = get_base();
    *version = base->GetVersionString();
    const OrtApi *api = base->GetApi(ORT_API_VERSION);
    if (!api)
        fail(why, len, "ONNX Runtime %s (%s) does not offer C API version %d (braid needs 1.%d or newer)",
             *version, name, ORT_API_VERSION, ORT_API_VERSION);
    return api;
}

static int read_signature(ort_runner *r, char *why, size_t len)
{
    const OrtApi *api = r->api;
    OrtAllocator *alloc;
    if (check(api, api->GetAllocatorWithDefaultOptions(&alloc), "default allocator", why, len) ||
        check(api, api->SessionGetInputCount(r->session, &r->n_in), "input count", why, len) ||
        check(api, api->SessionGetOutputCount(r->session, &r->n_out), "output count", why, len))
        return -1;
    r->in_names  = calloc(r->n_in + 1, sizeof *r->in_names);
    r->out_names = calloc(r->n_out + 1, sizeof *r->out_names);
    r->in_dtype  = calloc(r->n_in + 1, sizeof *r->in_dtype);
    r->in_rank   = calloc(r->n_in + 1, sizeof *r->in_rank);
    r->in_dims   = calloc(r->n_in + 1, sizeof *r->in_dims);
    if (!r->in_names || !r->out_names || !r->in_dtype || !r->in_rank || !r->in_dims)
        return fail(why, len, "out of memory reading the session signature");

    for (size_t i = 0; i < r->n_in + r->n_out; i++) {
        bool is_in = i < r->n_in;
        size_t k = is_in ? i : i - r->n_in;
        char *name;
        OrtStatus *st = is_in ? api->SessionGetInputName(r->session, k, alloc, &name)
                              : api->SessionGetOutputName(r->session, k, alloc, &name);
        if (check(api, st, "signature name", why, len))
            return -1;
        char *copy = strdup(name);
        OrtStatus *fst = api->AllocatorFree(alloc, name);
        if (fst)
            api->ReleaseStatus(fst);
        if (!copy)
            return fail(why, len, "out of memory reading the session signature");
        if (is_in)
            r->in_names[k] = copy;
        else
            r->out_names[k] = copy;
    }

    for (size_t i = 0; i < r->n_in; i++) {
        OrtTypeInfo *ti = NULL;
        const OrtTensorTypeAndShapeInfo *tsi = NULL;
        ONNXTensorElementDataType et;
        size_t rank;
        int rc = check(api, api->SessionGetInputTypeInfo(r->session, i, &ti), "input type", why, len);
        if (!rc)
            rc = check(api, api->CastTypeInfoToTensorInfo(ti, &tsi), "input type", why, len);
        if (!rc && !tsi)
            rc = fail(why, len, "input '%s' is not a tensor", r->in_names[i]);
        if (!rc)
            rc = check(api, api->GetTensorElementType(tsi, &et), "input element type", why, len);
        if (!rc)
            rc = check(api, api->GetDimensionsCount(tsi, &rank), "input rank", why, len);
        if (!rc && rank > BENCH_MAX_RANK)
            rc = fail(why, len, "input '%s' has rank %zu (at most %d supported)", r->in_names[i], rank,
                      BENCH_MAX_RANK);
        if (!rc)
            rc = check(api, api->GetDimensions(tsi, r->in_dims[i], rank), "input dims", why, len);
        api->ReleaseTypeInfo(ti);
        if (rc)
            return -1;
        r->in_dtype[i] = (int)et;
        r->in_rank[i]  = (int)rank;
    }
    return 0;
}

int ort_runner_open(const char *model_path, const ort_runner_options *opts, ort_runner **out,
                    char *why, size_t why_len)
{
    ort_runner *r = calloc(1, sizeof *r);
    if (!r)
        return fail(why, why_len, "out of memory");
    r->api = load_api(opts->library, &r->version, why, why_len);
    if (!r->api) {
        free(r);
        return -1;
    }
    const OrtApi *api = r->api;
    OrtSessionOptions *so = NULL;
    const char *spin = opts->spin ? "1" : "0";
    int rc = check(api, api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "braid-bench", &r->env), "create env",
                   why, why_len);
    if (!rc)
        rc = check(api, api->CreateSessionOptions(&so), "session options", why, why_len);
    if (!rc)
        rc = check(api, api->SetIntraOpNumThreads(so, opts->threads), "intra-op threads", why, why_len);
    if (!rc)
        rc = check(api, api->SetInterOpNumThreads(so, 1), "inter-op threads", why, why_len);
    if (!rc)
        rc = check(api, api->SetSessionExecutionMode(so, ORT_SEQUENTIAL), "execution mode", why, why_len);
    if (!rc)
        rc = check(api, api->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL), "optimization level",
                   why, why_len);
    if (!rc)
        rc = check(api, api->AddSessionConfigEntry(so, "session.intra_op.allow_spinning", spin),
                   "intra-op spinning", why, why_len);
    if (!rc)
        rc = check(api, api->AddSessionConfigEntry(so, "session.inter_op.allow_spinning", spin),
                   "inter-op spinning", why, why_len);
    if (!rc)
        rc = check(api, api->CreateSession(r->env, model_path, so, &r->session), model_path, why, why_len);
    api->ReleaseSessionOptions(so);
    if (!rc)
        rc = check(api, api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &r->cpu),
                   "cpu memory info", why, why_len);
    if (!rc)
        rc = read_signature(r, why, why_len);
    if (rc) {
        ort_runner_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

static void release_values(ort_runner *r)
{
    for (size_t i = 0; r->in_vals && i < r->n_in; i++)
        r->api->ReleaseValue(r->in_vals[i]);
    for (size_t i = 0; r->out_vals && i < r->n_out; i++)
        r->api->ReleaseValue(r->out_vals[i]);
    for (size_t i = 0; r->outs && i < r->n_out; i++)
        bench_tensor_free(&r->outs[i]);
    free(r->in_vals);
    free(r->out_vals);
    free(r->outs);
    r->in_vals = r->out_vals = NULL;
    r->outs = NULL;
}

void ort_runner_close(ort_runner *r)
{
    if (!r)
        return;
    release_values(r);
    for (size_t i = 0; r->in_names && i < r->n_in; i++)
        free(r->in_names[i]);
    for (size_t i = 0; r->out_names && i < r->n_out; i++)
        free(r->out_names[i]);
    free(r->in_names);
    free(r->out_names);
    free(r->in_dtype);
    free(r->in_rank);
    free(r->in_dims);
    if (r->stop_spin)
        r->api->ReleaseRunOptions(r->stop_spin);
    r->api->ReleaseMemoryInfo(r->cpu);
    r->api->ReleaseSession(r->session);
    r->api->ReleaseEnv(r->env);
    free(r);
}

const char *ort_runner_version(const ort_runner *r) { return r->version; }
size_t      ort_runner_num_inputs(const ort_runner *r) { return r->n_in; }
const char *ort_runner_input_name(const ort_runner *r, size_t i) { return r->in_names[i]; }
size_t      ort_runner_num_outputs(const ort_runner *r) { return r->n_out; }
const char *ort_runner_output_name(const ort_runner *r, size_t i) { return r->out_names[i]; }
const bench_tensor *ort_runner_output(const ort_runner *r, size_t i) { return &r->outs[i]; }

void ort_runner_input_type(const ort_runner *r, size_t i, int *dtype, int *rank, int64_t *dims)
{
    *dtype = r->in_dtype[i];
    *rank  = r->in_rank[i];
    memcpy(dims, r->in_dims[i], sizeof r->in_dims[i]);
}

/* An OrtValue that borrows T's buffer. */
static int wrap(ort_runner *r, const bench_tensor *t, OrtValue **out, char *why, size_t len)
{
    return check(r->api, r->api->CreateTensorWithDataAsOrtValue(r->cpu, t->data, t->nbytes, t->dims,
                                                                 (size_t)t->rank,
                                                                 (ONNXTensorElementDataType)t->dtype, out),
                 t->name, why, len);
}

/* Copy ORT-allocated output V into a new owned tensor T named NAME. */
static int adopt_output(ort_runner *r, OrtValue *v, const char *name, bench_tensor *t, char *why, size_t len)
{
    const OrtApi *api = r->api;
    OrtTensorTypeAndShapeInfo *info = NULL;
    ONNXTensorElementDataType et;
    size_t rank = 0;
    int64_t dims[BENCH_MAX_RANK];
    void *data;
    int rc = check(api, api->GetTensorTypeAndShape(v, &info), name, why, len);
    if (!rc)
        rc = check(api, api->GetTensorElementType(info, &et), name, why, len);
    if (!rc)
        rc = check(api, api->GetDimensionsCount(info, &rank), name, why, len);
    if (!rc && rank > BENCH_MAX_RANK)
        rc = fail(why, len, "output '%s' has rank %zu (at most %d supported)", name, rank, BENCH_MAX_RANK);
    if (!rc)
        rc = check(api, api->GetDimensions(info, dims, rank), name, why, len);
    api->ReleaseTensorTypeAndShapeInfo(info);
    if (!rc)
        rc = check(api, api->GetTensorMutableData(v, &data), name, why, len);
    if (!rc)
        rc = bench_tensor_init(t, name, (int)et, (int)rank, dims, why, len);
    if (!rc)
        memcpy(t->data, data, t->nbytes);
    return rc;
}

int ort_runner_prepare(ort_runner *r, const bench_tensor *inputs, size_t n_inputs, char *why, size_t why_len)
{
    if (n_inputs != r->n_in)
        return fail(why, why_len, "onnxruntime: got %zu inputs, the session has %zu", n_inputs, r->n_in);
    release_values(r);
    r->in_vals  = calloc(r->n_in + 1, sizeof *r->in_vals);
    r->out_vals = calloc(r->n_out + 1, sizeof *r->out_vals);
    r->outs     = calloc(r->n_out + 1, sizeof *r->outs);
    if (!r->in_vals || !r->out_vals || !r->outs)
        return fail(why, why_len, "out of memory");
    for (size_t i = 0; i < r->n_in; i++)
        if (wrap(r, &inputs[i], &r->in_vals[i], why, why_len))
            return -1;

    /* First run: ORT allocates the outputs, which tells us their shapes. */
    int rc = check(r->api, r->api->Run(r->session, NULL, (const char *const *)r->in_names,
                                       (const OrtValue *const *)r->in_vals, r->n_in,
                                       (const char *const *)r->out_names, r->n_out, r->out_vals),
                   "first run", why, why_len);
    for (size_t i = 0; i < r->n_out; i++) {
        if (!rc)
            rc = adopt_output(r, r->out_vals[i], r->out_names[i], &r->outs[i], why, why_len);
        r->api->ReleaseValue(r->out_vals[i]);
        r->out_vals[i] = NULL;
    }
    for (size_t i = 0; !rc && i < r->n_out; i++)
        rc = wrap(r, &r->outs[i], &r->out_vals[i], why, why_len);
    return rc;
}

int ort_runner_run(ort_runner *r, char *why, size_t why_len)
{
    return ort_runner_run_ex(r, false, why, why_len);
}

int ort_runner_run_ex(ort_runner *r, bool park, char *why, size_t why_len)
{
    if (park && !r->stop_spin &&
        (check(r->api, r->api->CreateRunOptions(&r->stop_spin), "run options", why, why_len) ||
         check(r->api, r->api->AddRunConfigEntry(r->stop_spin, "session.force_spinning_stop", "1"),
               "run options", why, why_len)))
        return -1;
    return check(r->api, r->api->Run(r->session, park ? r->stop_spin : NULL,
                                      (const char *const *)r->in_names,
                                      (const OrtValue *const *)r->in_vals, r->n_in,
                                      (const char *const *)r->out_names, r->n_out, r->out_vals),
                 "run", why, why_len);
}
