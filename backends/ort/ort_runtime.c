/* Loading ONNX Runtime once (see ort_runtime.h for the search order). */
#include "backends/ort/ort_runtime.h"

#include "core/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_AVAILABLE "ONNX Runtime not available: "
#define HOW_TO_GET    "(run scripts/fetch_ort.sh or set BRAID_ORT_LIBRARY)"

static bd_dynlib_once once = BD_DYNLIB_ONCE_INIT("ONNX Runtime", 1);
static ort_runtime rt;                   /* valid when once.loaded */

int ort_check(const OrtApi *api, OrtStatus *st, bd_error *err, const char *what)
{
    if (!st)
        return 0;
    bd_error_set(err, BD_EBACKEND, "onnxruntime: %s: %s", what, api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    return BD_EBACKEND;
}

int ort_runtime_configure(const char *library_path, int intra_op_threads, bd_error *err)
{
    return bd_dynlib_configure(&once, rt.path, library_path,
                               intra_op_threads > 0 ? intra_op_threads : 1, err);
}

int ort_runtime_threads(void)
{
    return bd_dynlib_threads(&once);
}

/* dlopen NAME; on success fill rt.path. Never dlclose'd: ORT's thread pools and static
 * destructors make unloading it unsafe, and reloading only bumps a reference count. */
static void *open_lib(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h)
        snprintf(rt.path, sizeof rt.path, "%s", name);
    return h;
}

/* Find and open the library; on failure write the reason into once.failure. */
static void *find_lib(void)
{
    const char *explicit_path = bd_dynlib_explicit_path(&once, "BRAID_ORT_LIBRARY");
    if (explicit_path) {
        void *h = open_lib(explicit_path);
        if (!h && access(explicit_path, F_OK) != 0)
            snprintf(once.failure, sizeof once.failure,
                     NOT_AVAILABLE "%s not found at '%s' " HOW_TO_GET,
                     BD_ORT_LIBRARY_NAME, explicit_path);
        else if (!h)
            snprintf(once.failure, sizeof once.failure,
                     NOT_AVAILABLE "cannot load '%s': %s", explicit_path,
                     dlerror());
        return h;
    }
    void *h = open_lib(BD_ORT_LIBRARY_NAME);
    char path[1024];
    const char *dir = getenv("BRAID_ORT_DIR");
    if (!h && dir && dir[0]) {
        snprintf(path, sizeof path, "%s/%s", dir, BD_ORT_LIBRARY_NAME);
        h = open_lib(path);
    }
    const char *home = getenv("HOME");
    if (!h && home && home[0]) {
        snprintf(path, sizeof path, "%s/.cache/braid/ort-1.30.0/%s", home, BD_ORT_LIBRARY_NAME);
        h = open_lib(path);
    }
    if (!h)
        snprintf(once.failure, sizeof once.failure, NOT_AVAILABLE "%s not found " HOW_TO_GET,
                 BD_ORT_LIBRARY_NAME);
    return h;
}

/* Resolve the API table, create the environment and the CPU memory info. */
static bool init_runtime(void *h)
{
    OrtGetApiBaseFn get_base;
    *(void **)&get_base = dlsym(h, "OrtGetApiBase");    /* POSIX: object -> function pointer */
    if (!get_base) {
        snprintf(once.failure, sizeof once.failure,
                 NOT_AVAILABLE "'%s' does not export OrtGetApiBase "
                 "(not an ONNX Runtime library)", rt.path);
        return false;
    }
    const OrtApiBase *base = get_base();
    rt.version = base->GetVersionString();
    rt.api = base->GetApi(ORT_API_VERSION);
    if (!rt.api) {
        snprintf(once.failure, sizeof once.failure,
                 NOT_AVAILABLE "'%s' is version %s; braid needs C API "
                 "version %d (ONNX Runtime 1.%d or newer)", rt.path, rt.version, ORT_API_VERSION,
                 ORT_API_VERSION);
        return false;
    }
    bd_error e = { 0 };
    if (ort_check(rt.api, rt.api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "braid", &rt.env), &e,
                  "create environment") ||
        ort_check(rt.api, rt.api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault,
                                                      &rt.cpu), &e, "CPU memory info")) {
        snprintf(once.failure, sizeof once.failure, NOT_AVAILABLE "%s", e.msg);
        rt.api->ReleaseEnv(rt.env);
        rt.env = NULL;
        return false;
    }
    return true;
}

static bool load(bd_dynlib_once *o)
{
    (void)o;
    void *h = find_lib();
    return h && init_runtime(h);
}

const ort_runtime *ort_runtime_get(char *why, size_t why_len)
{
    return bd_dynlib_get(&once, load, why, why_len) ? &rt : NULL;
}
