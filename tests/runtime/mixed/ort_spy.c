/* A stand-in for libonnxruntime.so.1 that forwards everything to the real library and
 * records, for the zero-copy test, every buffer braid hands to ONNX Runtime without a copy
 * (CreateTensorWithDataAsOrtValue) and every Run.
 *
 * braid's ORT engine is pointed at this file (its configure() hook); it exports
 * OrtGetApiBase like the real library and returns a copy of the real API table with two
 * entries replaced. The real library is $BRAID_ORT_SPY_TARGET, else $BRAID_ORT_DIR's or
 * ~/.cache/braid/ort-1.30.0's libonnxruntime.so.1. The test reads the record through
 * ort_spy_* (dlopen this file again: the loader returns the same instance). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ort/ort_api.h"

#define SPY_MAX 256

typedef struct spy_wrap {
    const void *data;
    size_t      len;
} spy_wrap;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t  once = PTHREAD_ONCE_INIT;
static const OrtApiBase *real_base;
static OrtApi            table;        /* the real table, two slots replaced */
static OrtApiBase        base;
static spy_wrap          wraps[SPY_MAX];
static size_t            n_wraps, n_runs, n_ort_allocs;

static OrtStatus *(*real_wrap)(const OrtMemoryInfo *, void *, size_t, const int64_t *, size_t,
                               ONNXTensorElementDataType, OrtValue **);
static OrtStatus *(*real_run)(OrtSession *, const OrtRunOptions *, const char *const *,
                              const OrtValue *const *, size_t, const char *const *, size_t,
                              OrtValue **);

static OrtStatus *spy_wrap_fn(const OrtMemoryInfo *info, void *data, size_t len,
                              const int64_t *shape, size_t rank, ONNXTensorElementDataType type,
                              OrtValue **out)
{
    pthread_mutex_lock(&lock);
    if (n_wraps < SPY_MAX)
        wraps[n_wraps++] = (spy_wrap){ data, len };
    pthread_mutex_unlock(&lock);
    return real_wrap(info, data, len, shape, rank, type, out);
}

static OrtStatus *spy_run(OrtSession *s, const OrtRunOptions *ro, const char *const *in_names,
                          const OrtValue *const *in, size_t n_in, const char *const *out_names,
                          size_t n_out, OrtValue **out)
{
    size_t allocated = 0;
    for (size_t i = 0; i < n_out; i++)
        allocated += out[i] == NULL;      /* ORT allocates these itself */
    pthread_mutex_lock(&lock);
    n_runs++;
    n_ort_allocs += allocated;
    pthread_mutex_unlock(&lock);
    return real_run(s, ro, in_names, in, n_in, out_names, n_out, out);
}

static const OrtApi *spy_get_api(uint32_t version)
{
    const OrtApi *api = real_base->GetApi(version);
    if (!api)
        return NULL;
    /* braid's declaration covers every slot braid calls; the rest is never read. */
    pthread_mutex_lock(&lock);
    if (!real_wrap) {
        memcpy(&table, api, sizeof table);
        real_wrap = api->CreateTensorWithDataAsOrtValue;
        real_run = api->Run;
        table.CreateTensorWithDataAsOrtValue = spy_wrap_fn;
        table.Run = spy_run;
    }
    pthread_mutex_unlock(&lock);
    return &table;
}

static const char *spy_version(void) { return real_base->GetVersionString(); }

static void load_real(void)
{
    char path[4096];
    if (getenv("BRAID_ORT_SPY_TARGET"))
        snprintf(path, sizeof path, "%s", getenv("BRAID_ORT_SPY_TARGET"));
    else if (getenv("BRAID_ORT_DIR"))
        snprintf(path, sizeof path, "%s/libonnxruntime.so.1", getenv("BRAID_ORT_DIR"));
    else
        snprintf(path, sizeof path, "%s/.cache/braid/ort-1.30.0/libonnxruntime.so.1",
                 getenv("HOME") ? getenv("HOME") : "/root");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "ort_spy: cannot load the real ONNX Runtime: %s\n", dlerror());
        return;
    }
    OrtGetApiBaseFn get;
    *(void **)&get = dlsym(h, "OrtGetApiBase");
    real_base = get ? get() : NULL;
    base.GetApi = spy_get_api;
    base.GetVersionString = spy_version;
}

/* The library's one entry point, as in the real thing. NULL when the real one is missing. */
const OrtApiBase *OrtGetApiBase(void)
{
    pthread_once(&once, load_real);
    return real_base ? &base : NULL;
}

/* ---- the record, for the test ---------------------------------------------------------- */

void ort_spy_reset(void)
{
    pthread_mutex_lock(&lock);
    n_wraps = n_runs = n_ort_allocs = 0;
    pthread_mutex_unlock(&lock);
}

/* Buffers wrapped in place since the last reset: up to MAX into DATA/LEN; returns the count. */
size_t ort_spy_wraps(const void **data, size_t *len, size_t max)
{
    pthread_mutex_lock(&lock);
    size_t n = n_wraps < max ? n_wraps : max;
    for (size_t i = 0; i < n; i++) {
        data[i] = wraps[i].data;
        len[i] = wraps[i].len;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

/* Runs since the last reset, and how many outputs of those runs ORT had to allocate. */
size_t ort_spy_runs(size_t *ort_allocated_outputs)
{
    pthread_mutex_lock(&lock);
    size_t n = n_runs;
    *ort_allocated_outputs = n_ort_allocs;
    pthread_mutex_unlock(&lock);
    return n;
}
