/* ONNX Runtime as loaded by braid: libonnxruntime.so.1 is dlopen()ed once per process, on
 * first use, and never unloaded; with it come one process-wide OrtEnv and one CPU memory
 * description used to wrap braid's buffers. Internal to backends/ort (the public knobs are in
 * ort_backend.h).
 *
 * Where the library comes from, first match wins:
 *   1. the path given to ort_runtime_configure() (the engine's configure());
 *   2. the environment variable BRAID_ORT_LIBRARY (a path);
 *   3. dlopen("libonnxruntime.so.1") (the loader's search path: LD_LIBRARY_PATH, ldconfig);
 *   4. $BRAID_ORT_DIR/libonnxruntime.so.1, then ~/.cache/braid/ort-1.30.0/libonnxruntime.so.1
 *      (where scripts/fetch_ort.sh puts it).
 * An explicit path (1 or 2) is the only one tried. A failed attempt is remembered, so a
 * missing library costs one search, not one per node; ort_runtime_configure() allows a new try.
 *
 * Thread safety: every function may be called from any thread. */
#ifndef BD_BACKENDS_ORT_ORT_RUNTIME_H
#define BD_BACKENDS_ORT_ORT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "backends/ort/ort_api.h"

/* The loaded library. Immutable once returned; lives until the process exits. */
typedef struct ort_runtime {
    const OrtApi  *api;
    OrtEnv        *env;       /* process-wide environment (logging at WARNING) */
    OrtMemoryInfo *cpu;       /* plain CPU memory: how braid's buffers are described */
    const char    *version;   /* "1.30.0" (library storage) */
    char           path[1024];/* what was dlopen()ed */
} ort_runtime;

/* Set the library path (NULL = the default search) and the intra-op thread count of
 * sessions created from now on (<= 0 = 1). Fails with BD_EBUSY when the library is already
 * loaded from another path (a process loads ORT once). */
int  ort_runtime_configure(const char *library_path, int intra_op_threads, bd_error *err);

/* The runtime, loading it on first call. NULL when ONNX Runtime is not available, with the
 * reason (naming the library and how to get it) in WHY. */
const ort_runtime *ort_runtime_get(char *why, size_t why_len);

/* Intra-op threads for new sessions (from ort_runtime_configure; default 1). */
int  ort_runtime_threads(void);

/* Turn a non-NULL ORT status into ERR (code BD_EBACKEND, "onnxruntime: WHAT: message"),
 * releasing it. Returns 0 for a NULL status. */
int  ort_check(const OrtApi *api, OrtStatus *st, bd_error *err, const char *what);

#endif
