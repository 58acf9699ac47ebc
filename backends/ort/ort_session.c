/* The process-wide cache of ORT sessions (see ort_session.h). */
#include "backends/ort/ort_session.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ort_session {
    ort_session       *next;
    const ort_runtime *rt;
    uint64_t              hash;
    uint8_t              *bytes;         /* the serialized model: the key */
    size_t                len;
    const void          **ext_data;      /* external initializers' memory: part of the key */
    size_t                n_ext;
    int                   threads;
    int                   refs;
    OrtSession           *session;
    OrtValue            **ext_values;    /* wrap ext_data; must outlive SESSION */
};

static pthread_mutex_t  lock = PTHREAD_MUTEX_INITIALIZER;
static ort_session  *cache;

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static bool same_key(const ort_session *s, uint64_t hash, const ort_model *m, int threads)
{
    if (s->hash != hash || s->len != m->len || s->n_ext != m->n_external || s->threads != threads ||
        memcmp(s->bytes, m->bytes, m->len) != 0)
        return false;
    for (size_t i = 0; i < s->n_ext; i++)
        if (s->ext_data[i] != m->external[i]->data)
            return false;
    return true;
}

static void destroy(ort_session *s)
{
    if (!s)
        return;
    const OrtApi *api = s->rt->api;
    api->ReleaseSession(s->session);
    for (size_t i = 0; s->ext_values && i < s->n_ext; i++)
        api->ReleaseValue(s->ext_values[i]);
    free(s->ext_values);
    free(s->ext_data);
    free(s->bytes);
    free(s);
}

/* Session options: THREADS intra-op threads that never spin (oneDNN's OpenMP team shares the
 * cores), one inter-op thread, sequential execution, all graph optimizations. */
static int make_options(const ort_runtime *rt, int threads, OrtSessionOptions **out, bd_error *err)
{
    const OrtApi *api = rt->api;
    OrtSessionOptions *so = NULL;
    int rc = ort_check(api, api->CreateSessionOptions(&so), err, "session options");
    if (!rc)
        rc = ort_check(api, api->SetIntraOpNumThreads(so, threads), err, "intra-op threads");
    if (!rc)
        rc = ort_check(api, api->SetInterOpNumThreads(so, 1), err, "inter-op threads");
    if (!rc)
        rc = ort_check(api, api->SetSessionExecutionMode(so, ORT_SEQUENTIAL), err, "execution mode");
    if (!rc)
        rc = ort_check(api, api->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL), err,
                       "optimization level");
    /* A short spin, as braid's OpenMP threads do (runtime/omp_env.h): long enough to bridge
     * the parallel sections of one step, short enough not to hold a core through the oneDNN
     * steps around it. */
    if (!rc)
        rc = ort_check(api, api->AddSessionConfigEntry(so, "session.intra_op.allow_spinning", "1"),
                       err, "intra-op spinning");
    if (!rc)
        rc = ort_check(api, api->AddSessionConfigEntry(so, "session.intra_op.spin_duration_us", "60"),
                       err, "intra-op spin duration");
    if (!rc)
        rc = ort_check(api, api->AddSessionConfigEntry(so, "session.inter_op.allow_spinning", "0"),
                       err, "inter-op spinning");
    if (rc) {
        api->ReleaseSessionOptions(so);
        return rc;
    }
    *out = so;
    return 0;
}

static int create(const ort_runtime *rt, const ort_model *m, int threads, uint64_t hash,
                  ort_session **out, bd_error *err)
{
    const OrtApi *api = rt->api;
    ort_session *s = calloc(1, sizeof *s);
    if (!s)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    s->rt = rt;
    s->hash = hash;
    s->threads = threads;
    s->refs = 1;
    s->len = m->len;
    s->n_ext = m->n_external;
    s->bytes = malloc(m->len ? m->len : 1);
    s->ext_data = calloc(m->n_external + 1, sizeof *s->ext_data);
    s->ext_values = calloc(m->n_external + 1, sizeof *s->ext_values);
    const char **names = calloc(m->n_external + 1, sizeof *names);
    if (!s->bytes || !s->ext_data || !s->ext_values || !names) {
        free(names);
        destroy(s);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    memcpy(s->bytes, m->bytes, m->len);

    int rc = 0;
    for (size_t i = 0; i < m->n_external && !rc; i++) {
        const bd_value *v = m->external[i];
        s->ext_data[i] = v->data;
        names[i] = v->name;
        /* ORT only reads initializers; the cast drops const for the API's sake. */
        rc = ort_check(api, api->CreateTensorWithDataAsOrtValue(rt->cpu, (void *)v->data, v->nbytes,
                                                                v->shape.dims, (size_t)v->shape.rank,
                                                                (ONNXTensorElementDataType)v->dtype,
                                                                &s->ext_values[i]),
                       err, v->name);
    }
    OrtSessionOptions *so = NULL;
    if (!rc)
        rc = make_options(rt, threads, &so, err);
    /* Both calls, measured on ORT 1.30: AddExternalInitializers alone satisfies the model's
     * external-data records but the session copies the bytes; AddInitializer alone makes ORT
     * look for the external file; together the session reads braid's memory in place
     * (tests/backends/ort: editing a weight after compile changes the next result). */
    if (!rc && m->n_external)
        rc = ort_check(api, api->AddExternalInitializers(so, names, (const OrtValue *const *)s->ext_values,
                                                         m->n_external),
                       err, "external initializers");
    for (size_t i = 0; i < m->n_external && !rc; i++)
        rc = ort_check(api, api->AddInitializer(so, names[i], s->ext_values[i]), err, names[i]);
    if (!rc)
        rc = ort_check(api, api->CreateSessionFromArray(rt->env, m->bytes, m->len, so, &s->session),
                       err, "create session");
    api->ReleaseSessionOptions(so);
    free(names);
    if (rc) {
        destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int ort_session_acquire(const ort_runtime *rt, const ort_model *model, int threads,
                        ort_session **out, bd_error *err)
{
    uint64_t hash = fnv1a(model->bytes, model->len);
    pthread_mutex_lock(&lock);
    for (ort_session *s = cache; s; s = s->next)
        if (same_key(s, hash, model, threads)) {
            s->refs++;
            pthread_mutex_unlock(&lock);
            *out = s;
            return 0;
        }
    /* Created under the lock: two plans of one model compiling the same subgraph at once
     * must end up sharing one session, and loads are rare next to runs. */
    ort_session *s = NULL;
    int rc = create(rt, model, threads, hash, &s, err);
    if (!rc) {
        s->next = cache;
        cache = s;
        *out = s;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void ort_session_release(ort_session *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&lock);
    bool last = --s->refs == 0;
    if (last)
        for (ort_session **p = &cache; *p; p = &(*p)->next)
            if (*p == s) {
                *p = s->next;
                break;
            }
    pthread_mutex_unlock(&lock);
    if (last)
        destroy(s);
}

OrtSession *ort_session_handle(const ort_session *s) { return s->session; }

size_t ort_session_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = 0;
    for (const ort_session *s = cache; s; s = s->next)
        n++;
    pthread_mutex_unlock(&lock);
    return n;
}
