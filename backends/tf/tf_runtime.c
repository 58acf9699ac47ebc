/* Loading libtensorflow once (see tf_runtime.h for the search order). */
#include "tf_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_AVAILABLE "TensorFlow fallback not available: "

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bd_tf_lib       rt;                 /* valid when loaded */
static bool            loaded, attempted;
static char            failure[BD_ERROR_MSG_MAX + 64];      /* why the last attempt failed */
static char           *configured_path;   /* bd_tf_runtime_configure's path, or NULL */
static int             threads;

int bd_tf_lib_open(const char *path, bd_tf_lib *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
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

void bd_tf_lib_close(bd_tf_lib *lib)
{
    if (lib && lib->handle)
        dlclose(lib->handle);
    if (lib)
        memset(lib, 0, sizeof *lib);
}

int bd_tf_runtime_configure(const char *library_path, int n_threads, bd_error *err)
{
    pthread_mutex_lock(&lock);
    threads = n_threads > 0 ? n_threads : 0;
    int rc = 0;
    if (loaded && library_path && strcmp(library_path, rt.path) != 0) {
        rc = bd_error_set(err, BD_EBUSY, "TensorFlow is already loaded from '%s'; a process "
                          "loads it once (restart to use '%s')", rt.path, library_path);
    } else if (!loaded) {
        free(configured_path);
        configured_path = library_path ? strdup(library_path) : NULL;
        if (library_path && !configured_path)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        attempted = false;          /* the next use tries again with the new setting */
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int bd_tf_runtime_threads(void)
{
    pthread_mutex_lock(&lock);
    int n = threads;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Find and open the library into RT; on failure write the reason into FAILURE. */
static bool load(void)
{
    bd_error e = {0};
    const char *explicit_path = configured_path ? configured_path : getenv("BRAID_LIBTENSORFLOW");
    if (explicit_path && explicit_path[0]) {
        if (bd_tf_lib_open(explicit_path, &rt, &e) == 0)
            return true;
        if (access(explicit_path, F_OK) != 0)
            snprintf(failure, sizeof failure, NOT_AVAILABLE BD_TF_LIBRARY_NAME " not found at '%s'%s",
                     explicit_path, configured_path ? "" : " (BRAID_LIBTENSORFLOW)");
        else
            snprintf(failure, sizeof failure, NOT_AVAILABLE "%s", e.msg);
        return false;
    }
    if (bd_tf_lib_open(BD_TF_LIBRARY_NAME, &rt, &e) == 0)
        return true;
    /* A library that is found but unusable (missing symbol) is reported as such. */
    if (strstr(e.msg, " lacks "))
        snprintf(failure, sizeof failure, NOT_AVAILABLE "%s", e.msg);
    else
        snprintf(failure, sizeof failure, NOT_AVAILABLE BD_TF_LIBRARY_NAME
                 " not found (set BRAID_LIBTENSORFLOW)");
    return false;
}

const bd_tf_lib *bd_tf_runtime_get(char *why, size_t why_len)
{
    pthread_mutex_lock(&lock);
    if (!loaded && !attempted) {
        attempted = true;
        loaded = load();
    }
    const bd_tf_lib *lib = loaded ? &rt : NULL;
    if (!lib && why && why_len)
        snprintf(why, why_len, "%s", failure);
    pthread_mutex_unlock(&lock);
    return lib;
}

int bd_tf_check(const bd_tf_lib *lib, const TF_Status *st, bd_error *err, const char *what)
{
    if (lib->TF_GetCode(st) == TF_OK)
        return 0;
    return bd_error_set(err, BD_EBACKEND, "tensorflow: %s: %s", what, lib->TF_Message(st));
}
