/* Loading libtensorflow once (see tfb_runtime.h for the search order). */
#include "backends/tf/tfb_runtime.h"

#include "core/dynlib.h"

#include <dlfcn.h>
#include <glob.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_AVAILABLE "TensorFlow fallback not available: "

static bd_dynlib_once once = BD_DYNLIB_ONCE_INIT("TensorFlow", 0);
static tfb_lib      rt;                   /* valid when once.loaded */

int tfb_lib_open(const char *path, tfb_lib *out, bd_error *err)
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
#define BD_TFB_FN_RESOLVE(name, ret, params)                                                   \
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
    BD_TF_FUNCTIONS(BD_TFB_FN_RESOLVE)
#undef BD_TFB_FN_RESOLVE
    /* The C API braid declares (tf_api.h) is TensorFlow 2's; 1.x lacks parts of it. */
    const char *v = out->TF_Version();
    if (!v || strncmp(v, "2.", 2) != 0) {
        bd_error_set(err, BD_EUNSUPPORTED, BD_TF_LIBRARY_NAME " at %s is TensorFlow %s; braid "
                     "needs TensorFlow 2.x (scripts/fetch_tf.sh installs tensorflow-cpu 2.21.0)",
                     path, v ? v : "(no version)");
        dlclose(h);
        memset(out, 0, sizeof *out);
        return BD_EUNSUPPORTED;
    }
    out->handle  = h;
    out->version = v;
    snprintf(out->path, sizeof out->path, "%s", path);
    return 0;
}

void tfb_lib_close(tfb_lib *lib)
{
    if (lib && lib->handle)
        dlclose(lib->handle);
    if (lib)
        memset(lib, 0, sizeof *lib);
}

int tfb_runtime_configure(const char *library_path, int n_threads, bd_error *err)
{
    return bd_dynlib_configure(&once, rt.path, library_path, n_threads > 0 ? n_threads : 0, err);
}

int tfb_runtime_threads(void)
{
    return bd_dynlib_threads(&once);
}

/* The C API library of the tensorflow-cpu wheel in the venv scripts/fetch_tf.sh installs:
 * $BRAID_TF_VENV, else ~/.cache/braid/tf-venv (HOME, or the password entry when a service
 * manager left HOME unset), then lib/python3.x/site-packages/tensorflow/libtensorflow_cc.so.2
 * for the first python3.x that has one. Writes the path into PATH and returns true if found;
 * else writes the venv searched into VENV (for the message). */
static bool venv_library(char *path, size_t path_len, char *venv, size_t venv_len)
{
    const char *dir = getenv("BRAID_TF_VENV");
    if (dir && dir[0]) {
        snprintf(venv, venv_len, "%s", dir);
    } else {
        const char *home = getenv("HOME");
        char buf[4096];
        struct passwd pw, *found = NULL;
        if ((!home || !home[0]) && getpwuid_r(geteuid(), &pw, buf, sizeof buf, &found) == 0 && found)
            home = found->pw_dir;
        if (!home || !home[0]) {
            snprintf(venv, venv_len, "~/.cache/braid/tf-venv (no home directory)");
            return false;
        }
        snprintf(venv, venv_len, "%s/" BD_TFB_VENV_DEFAULT, strcmp(home, "/") ? home : "");
    }
    char pattern[1200];
    int n = snprintf(pattern, sizeof pattern, "%s/lib/python3.*/site-packages/" BD_TFB_WHEEL_LIBRARY,
                     venv);
    if (n < 0 || (size_t)n >= sizeof pattern)
        return false;
    glob_t gl;
    bool ok = false;
    if (glob(pattern, 0, NULL, &gl) == 0) {
        for (size_t i = 0; !ok && i < gl.gl_pathc; i++)    /* sorted: python3.10 < python3.11 .. */
            if (access(gl.gl_pathv[i], R_OK) == 0 && strlen(gl.gl_pathv[i]) < path_len) {
                snprintf(path, path_len, "%s", gl.gl_pathv[i]);
                ok = true;
            }
        globfree(&gl);
    }
    return ok;
}

/* TensorFlow's C++ logging prints INFO lines at load and at the first session (CPU features,
 * MLIR passes) and a WARNING per failed run that repeats the error braid already returns.
 * Keep only its errors, unless the user chose a level. Called under the load lock, before
 * the first dlopen of the library, which reads the variable. */
static void quiet_tf_logging(void)
{
    setenv("TF_CPP_MIN_LOG_LEVEL", "2", 0);
}

/* Find and open the library into RT; on failure write the reason into O->failure. */
static bool load(bd_dynlib_once *o)
{
    bd_error e = {0};
    quiet_tf_logging();
    const char *explicit_path = bd_dynlib_explicit_path(o, "BRAID_LIBTENSORFLOW");
    if (explicit_path) {
        if (tfb_lib_open(explicit_path, &rt, &e) == 0)
            return true;
        if (access(explicit_path, F_OK) != 0)
            snprintf(o->failure, sizeof o->failure,
                     NOT_AVAILABLE BD_TF_LIBRARY_NAME " not found at '%s'%s",
                     explicit_path, o->configured_path ? "" : " (BRAID_LIBTENSORFLOW)");
        else
            snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE "%s", e.msg);
        return false;
    }
    if (tfb_lib_open(BD_TF_LIBRARY_NAME, &rt, &e) == 0)
        return true;
    /* A library that is found but unusable (missing symbol, wrong version) is reported as such. */
    if (!strstr(e.msg, "cannot load ")) {
        snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE "%s", e.msg);
        return false;
    }
    char path[1024], venv[1100];
    if (venv_library(path, sizeof path, venv, sizeof venv)) {
        if (tfb_lib_open(path, &rt, &e) == 0)
            return true;
        snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE "%s", e.msg);
        return false;
    }
    snprintf(o->failure, sizeof o->failure, NOT_AVAILABLE BD_TF_LIBRARY_NAME " not found, nor "
             "tensorflow-cpu in %s (run scripts/fetch_tf.sh, or set BRAID_LIBTENSORFLOW)", venv);
    return false;
}

const tfb_lib *tfb_runtime_get(char *why, size_t why_len)
{
    return bd_dynlib_get(&once, load, why, why_len) ? &rt : NULL;
}

int tfb_check(const tfb_lib *lib, const TF_Status *st, bd_error *err, const char *what)
{
    if (lib->TF_GetCode(st) == TF_OK)
        return 0;
    return bd_error_set(err, BD_EBACKEND, "tensorflow: %s: %s", what, lib->TF_Message(st));
}
