/* Loading libtensorflow once (see tf_runtime.h for the search order). */
#include "backends/tf/tf_runtime.h"

#include "core/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_AVAILABLE "TensorFlow fallback not available: "

static bd_dynlib_once once = BD_DYNLIB_ONCE_INIT("TensorFlow", 0);
static tf_lib      rt;                   /* valid when once.loaded */

int tf_lib_open(const char *path, tf_lib *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    /* RTLD_DEEPBIND: TensorFlow binds to its own copies of re2, protobuf, ... first. Without
     * it, symbols a process already loaded (braid's gRPC pulls in Debian's libre2) win, and
     * TensorFlow's re2 calls into the other build crashed restoring a SavedModel. ASan
     * refuses DEEPBIND, so sanitizer builds load plainly. */
#if defined(__SANITIZE_ADDRESS__)
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#else
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
#endif
    if (!h)
        return bd_error_set(err, BD_ENOTFOUND, "cannot load %s: %s", path, dlerror());
    /* dlsym into a void* then memcpy: ISO C has no object-to-function pointer conversion. */
#define BD_TF_FN_RESOLVE(name, ret, params)                                                   \
    {                                                                                         \
        void *sym = dlsym(h, #name);                                                          \
        if (!sym) {                                                                           \
            bd_error_set(err, BD_ENOTFOUND, BD_TF_LIBRARY_NAME " at %s lacks " #name, path);  \
            dlclose(h);                                                                       \
            memset(out, 0, sizeof *out);                                                      \
            return BD_ENOTFOUND;                                                              \
        }                                                                                     \
        memcpy(&out->name, &sym, sizeof sym);                                                 \
    }
    BD_TF_FUNCTIONS(BD_TF_FN_RESOLVE)
#undef BD_TF_FN_RESOLVE
    out->handle  = h;
    out->version = out->TF_Version();
    snprintf(out->path, sizeof out->path, "%s", path);
    return 0;
}

void tf_lib_close(tf_lib *lib)
{
    if (lib && lib->handle)
        dlclose(lib->handle);
    if (lib)
        memset(lib, 0, sizeof *lib);
}

int tf_runtime_configure(const char *library_path, int n_threads, bd_error *err)
{
    return bd_dynlib_configure(&once, rt.path, library_path, n_threads > 0 ? n_threads : 0, err);
}

int tf_runtime_threads(void)
{
    return bd_dynlib_threads(&once);
}

/* Find and open the library into RT; on failure write the reason into O->failure. */
static bool load(bd_dynlib_once *o)
{
    bd_error e = {0};
    const char *explicit_path = bd_dynlib_explicit_path(o, "BRAID_LIBTENSORFLOW");
    if (explicit_path) {
        if (tf_lib_open(explicit_path, &rt, &e) == 0)
            return true;
        if (access(explicit_path, F_OK) != 0)
            snprintf(o->failure, sizeof o->failure,
                     NOT_AVAILABLE BD_TF_LIBRARY_NAME " not found at '%s'%s",
                     explicit_path, o->configured_path ? "" : " (BRAID_LIBTENSORFLOW)");
        else
            snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE "%s", e.msg);
        return false;
    }
    if (tf_lib_open(BD_TF_LIBRARY_NAME, &rt, &e) == 0)
        return true;
    /* A library that is found but unusable (missing symbol) is reported as such. */
    if (strstr(e.msg, " lacks "))
        snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE "%s", e.msg);
    else
        snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE BD_TF_LIBRARY_NAME
                 " not found (set BRAID_LIBTENSORFLOW)");
    return false;
}

const tf_lib *tf_runtime_get(char *why, size_t why_len)
{
    return bd_dynlib_get(&once, load, why, why_len) ? &rt : NULL;
}

int tf_check(const tf_lib *lib, const TF_Status *st, bd_error *err, const char *what)
{
    if (lib->TF_GetCode(st) == TF_OK)
        return 0;
    return bd_error_set(err, BD_EBACKEND, "tensorflow: %s: %s", what, lib->TF_Message(st));
}
