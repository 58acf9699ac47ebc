/* TensorFlow's C library as loaded by braid: dlopen()ed once per process, on first use, with
 * RTLD_LOCAL (its bundled oneDNN, protobuf, gRPC ... stay private to it), and never unloaded.
 * Internal to backends/tf (the public knob is the engine's configure() hook, tf_backend.h).
 *
 * Where the library comes from, first match wins:
 *   1. the path given to tfb_runtime_configure() (the engine's configure());
 *   2. the environment variable BRAID_LIBTENSORFLOW (a path);
 *   3. dlopen("libtensorflow.so.2"): the loader's search path (LD_LIBRARY_PATH, ldconfig);
 *   4. the tensorflow-cpu wheel that scripts/fetch_tf.sh installs: in the venv
 *      $BRAID_TF_VENV, else $HOME/.cache/braid/tf-venv (HOME unset, as under systemd: the
 *      user's home directory from the password database), the file
 *      lib/python3.<minor>/site-packages/tensorflow/libtensorflow_cc.so.2 (the wheel's C API; it
 *      finds libtensorflow_framework.so.2 beside it through its RUNPATH).
 * An explicit path (1 or 2) is the only one tried. A library that is found but unusable
 * (missing symbol, not TensorFlow 2.x) ends the search with that reason. A failed attempt is
 * remembered, so a missing library costs one search, not one per node;
 * tfb_runtime_configure() allows a new try.
 *
 * Unless the user set TF_CPP_MIN_LOG_LEVEL, it is set to 2 before the first load: TensorFlow's
 * INFO and WARNING lines are dropped (braid returns every TF error itself), its errors still
 * reach stderr.
 *
 * Thread safety: every function may be called from any thread. */
#ifndef BD_BACKENDS_TF_TFB_RUNTIME_H
#define BD_BACKENDS_TF_TFB_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "backends/tf/tf_api.h"

/* Search step 4: the venv under the home directory, and the C API library inside the wheel. */
#define BD_TFB_VENV_DEFAULT  ".cache/braid/tf-venv"
#define BD_TFB_WHEEL_LIBRARY "tensorflow/libtensorflow_cc.so.2"

/* A loaded libtensorflow: one pointer per function of BD_TF_FUNCTIONS, resolved with dlsym. */
typedef struct tfb_lib {
#define BD_TFB_FN_MEMBER(name, ret, params) tf_fn_##name *name;
    BD_TF_FUNCTIONS(BD_TFB_FN_MEMBER)
#undef BD_TFB_FN_MEMBER
    void       *handle;         /* dlopen handle */
    const char *version;        /* TF_Version() (library storage) */
    char        path[1024];     /* what was dlopen()ed */
} tfb_lib;

/* dlopen PATH and resolve every BD_TF_FUNCTIONS symbol into OUT. Fails with BD_ENOTFOUND
 * when the file cannot be loaded ("cannot load PATH: <dlerror>") or a symbol is missing
 * ("libtensorflow.so.2 at PATH lacks TF_SessionRun"), and with BD_EUNSUPPORTED when
 * TF_Version() is not 2.x; nothing stays open on failure.
 * Used by the process-wide runtime below and directly by tests. */
int  tfb_lib_open(const char *path, tfb_lib *out, bd_error *err);
/* dlclose a library opened with tfb_lib_open (the runtime never does this: TensorFlow's
 * static state makes unloading unsafe; tests use it on their test doubles). */
void tfb_lib_close(tfb_lib *lib);

/* Set the library path (NULL = the default search) and the intra-op thread count of
 * sessions created from now on (<= 0 = TensorFlow's default). Fails with BD_EBUSY when the
 * library is already loaded from another path (a process loads TensorFlow once). */
int  tfb_runtime_configure(const char *library_path, int threads, bd_error *err);

/* The runtime, loading it on first call. NULL when TensorFlow is not available, with the
 * reason (naming the library and how to provide it) in WHY. */
const tfb_lib *tfb_runtime_get(char *why, size_t why_len);

/* Intra-op threads for new sessions (from tfb_runtime_configure; 0 = TF's default). */
int  tfb_runtime_threads(void);

/* Turn a failed TF_Status into ERR (code BD_EBACKEND, "tensorflow: WHAT: message").
 * Returns 0 when ST is OK. Does not free ST. */
int  tfb_check(const tfb_lib *lib, const TF_Status *st, bd_error *err, const char *what);

#endif
