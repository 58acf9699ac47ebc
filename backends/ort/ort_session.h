/* ORT sessions shared by every plan of a model: a process-wide cache of sessions keyed by
 * the serialized subgraph, the memory of its external initializers and the thread count.
 *
 * A model compiles one plan per distinct input-shape set, and each plan compiles its fallback
 * subgraphs again. The serialized model has no static dims (ort_serialize.h), so the same
 * subgraph at another batch size serializes to the same bytes and reuses the session created
 * when the first plan was built: in effect one session per fallback subgraph for the model's
 * lifetime. Entries are reference counted (one reference per kernel) and the session is
 * released with the last kernel, i.e. when the model's last plan is destroyed.
 *
 * Including the initializers' addresses in the key keeps two models with the same structure
 * but different weights apart; the weights (in the model's graph) outlive the session because
 * the plans holding the references are destroyed before their model.
 *
 * Thread safety: acquire/release may be called from any thread; a session runs concurrently
 * on any number of threads (ORT's Run is thread-safe). */
#ifndef BD_BACKENDS_ORT_ORT_SESSION_H
#define BD_BACKENDS_ORT_ORT_SESSION_H

#include <stddef.h>

#include "backends/ort/ort_runtime.h"
#include "backends/ort/ort_serialize.h"

typedef struct ort_session ort_session;

/* The session for MODEL with THREADS intra-op threads: a cached one (reference added) or a
 * new one created with CreateSessionFromArray, its external initializers handed over with
 * AddExternalInitializers + AddInitializer (read in place, never copied). */
int  ort_session_acquire(const ort_runtime *rt, const ort_model *model, int threads,
                         ort_session **out, bd_error *err);
void ort_session_release(ort_session *s);      /* NULL is allowed */
OrtSession *ort_session_handle(const ort_session *s);
/* Number of live sessions in the cache (tests, statistics). */
size_t ort_session_count(void);

#endif
