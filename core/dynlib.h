/* A fallback engine's shared library, loaded at most once per process on first use: the
 * configured path, thread count, load state and the reason the last attempt failed, all
 * under one lock. Each engine keeps its own search order and symbol resolution (its LOAD
 * function); this is the bookkeeping around it. */
#ifndef BD_CORE_DYNLIB_H
#define BD_CORE_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct bd_dynlib_once {
    pthread_mutex_t lock;
    const char     *label;             /* "ONNX Runtime": names the library in messages */
    bool            loaded, attempted;
    char           *configured_path;   /* bd_dynlib_configure's path, or NULL */
    int             threads;
    char            failure[1536];     /* why the last attempt failed (LOAD writes it) */
} bd_dynlib_once;

#define BD_DYNLIB_ONCE_INIT(label_, threads_) \
    { PTHREAD_MUTEX_INITIALIZER, (label_), false, false, NULL, (threads_), "" }

/* Record LIBRARY_PATH (NULL = search) and THREADS for the next load. If the library is
 * already loaded from LOADED_PATH and LIBRARY_PATH differs, BD_EBUSY (a process loads it
 * once); BD_ENOMEM if the path cannot be copied. A new setting allows a new attempt. */
int  bd_dynlib_configure(bd_dynlib_once *o, const char *loaded_path, const char *library_path,
                         int threads, bd_error *err);
/* THREADS as last configured. */
int  bd_dynlib_threads(bd_dynlib_once *o);
/* The explicit library path: the configured one, else environment variable ENV; NULL when
 * neither is set (or ENV is empty). Call from LOAD (under the lock). */
const char *bd_dynlib_explicit_path(const bd_dynlib_once *o, const char *env);
/* Whether the library is loaded, calling LOAD(O) once if it has not been tried since the last
 * configure. On false writes O->failure into WHY (if given). LOAD runs under the lock. */
bool bd_dynlib_get(bd_dynlib_once *o, bool (*load)(bd_dynlib_once *o), char *why,
                   size_t why_len);

#endif
