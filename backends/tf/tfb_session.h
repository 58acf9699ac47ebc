/* One TensorFlow session per model: the process-wide cache of imported fallback graphs.
 *
 * The backend contract compiles one subgraph at a time, but all fallback subgraphs of a
 * model must run through one TF_Session created once. So the session is keyed by what it
 * runs: the fallback GraphDef's bytes (tfb_subgraph_def.h), which are the same for every
 * fallback subgraph of a plan (the GraphDef holds the model's whole fallback set) and for
 * every plan of the model (Placeholders carry ranks, not the plan's dims). The key is a
 * 64-bit FNV-1a hash of the bytes plus their length and the thread setting; the first
 * acquire imports the GraphDef into a TF_Graph and creates the session, later ones take a
 * reference, and the last release closes and deletes both. So the session lives as long as
 * the model's plans (kernels) do.
 *
 * Thread safety: acquire/release may be called from any thread. TF_SessionRun on a shared
 * session is thread-safe (TensorFlow's Session::Run is), so kernels on many workers share
 * one session. */
#ifndef BD_BACKENDS_TF_TFB_SESSION_H
#define BD_BACKENDS_TF_TFB_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "backends/tf/tfb_runtime.h"

typedef struct tfb_session {
    TF_Graph         *graph;        /* the imported fallback GraphDef */
    TF_Session       *session;
    const tfb_lib  *lib;
    /* cache bookkeeping (tfb_session.c) */
    uint64_t          hash;
    size_t            len;
    int               threads;
    int               refs;
    struct tfb_session *next;
} tfb_session;

/* The session for GRAPHDEF (LEN bytes), importing it and creating the session on first
 * use; THREADS = intra-op threads (0 = TensorFlow's default). Release with
 * tfb_session_release. Fails naming TensorFlow's message: BD_EINVAL when TensorFlow rejects
 * the GraphDef (e.g. an op this TensorFlow build lacks), BD_EBACKEND when the session cannot
 * be created. */
int    tfb_session_acquire(const tfb_lib *lib, const void *graphdef, size_t len, int threads,
                           tfb_session **out, bd_error *err);
void   tfb_session_release(tfb_session *s);       /* NULL is allowed */
/* Number of live sessions in the cache (for tests and reports). */
size_t tfb_session_count(void);

#endif
