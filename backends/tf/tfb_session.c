/* The per-model session cache (see tfb_session.h). */
#include "backends/tf/tfb_session.h"

#include <pthread.h>
#include <stdlib.h>

#include <pb_encode.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tfb_session  *cache;

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* A serialized tensorflow.ConfigProto setting the thread pools: intra_op_parallelism_threads
 * (field 2) = THREADS, inter_op_parallelism_threads (field 5) = 1 (braid runs one step at a
 * time per request; its workers are the inter-request parallelism). Returns the length. */
static size_t config_proto(int threads, uint8_t *buf, size_t size)
{
    pb_ostream_t os = pb_ostream_from_buffer(buf, size);
    if (!pb_encode_tag(&os, PB_WT_VARINT, 2) || !pb_encode_varint(&os, (uint64_t)threads) ||
        !pb_encode_tag(&os, PB_WT_VARINT, 5) || !pb_encode_varint(&os, 1))
        return 0;
    return os.bytes_written;
}

static void destroy(tfb_session *s)
{
    const tfb_lib *lib = s->lib;
    TF_Status *st = lib->TF_NewStatus();
    if (s->session) {
        lib->TF_CloseSession(s->session, st);
        lib->TF_DeleteSession(s->session, st);
    }
    lib->TF_DeleteStatus(st);
    lib->TF_DeleteGraph(s->graph);
    free(s);
}

static int create(const tfb_lib *lib, const void *gd, size_t len, int threads,
                  tfb_session **out, bd_error *err)
{
    tfb_session *s = calloc(1, sizeof *s);
    TF_Status *st = lib->TF_NewStatus();
    if (!s || !st) {
        free(s);
        lib->TF_DeleteStatus(st);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating a TensorFlow session");
    }
    s->lib = lib;
    s->graph = lib->TF_NewGraph();
    /* TF_NewBufferFromString copies; a plain TF_Buffer over our bytes avoids that copy
     * (TF_GraphImportGraphDef only reads it during the call). */
    TF_Buffer buf = { gd, len, NULL };
    TF_ImportGraphDefOptions *opts = lib->TF_NewImportGraphDefOptions();
    lib->TF_GraphImportGraphDef(s->graph, &buf, opts, st);
    lib->TF_DeleteImportGraphDefOptions(opts);
    /* A graph TensorFlow refuses (an op it does not know, a bad attr) is the model's fault. */
    int rc = tfb_check(lib, st, err, "importing the fallback GraphDef");
    if (rc && err)
        rc = err->code = BD_EINVAL;
    if (rc == 0) {
        TF_SessionOptions *so = lib->TF_NewSessionOptions();
        uint8_t cfg[32];
        size_t n = config_proto(threads, cfg, sizeof cfg);
        if (threads > 0 && n)
            lib->TF_SetConfig(so, cfg, n, st);
        rc = tfb_check(lib, st, err, "setting the session's thread count");
        if (rc == 0) {
            s->session = lib->TF_NewSession(s->graph, so, st);
            rc = tfb_check(lib, st, err, "creating the session");
            if (rc == 0 && !s->session)
                rc = bd_error_set(err, BD_EBACKEND, "tensorflow: TF_NewSession returned no session");
        }
        lib->TF_DeleteSessionOptions(so);
    }
    lib->TF_DeleteStatus(st);
    if (rc) {
        destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int tfb_session_acquire(const tfb_lib *lib, const void *graphdef, size_t len, int threads,
                        tfb_session **out, bd_error *err)
{
    uint64_t h = fnv1a(graphdef, len);
    pthread_mutex_lock(&lock);
    tfb_session *s = cache;
    while (s && !(s->hash == h && s->len == len && s->threads == threads && s->lib == lib))
        s = s->next;
    int rc = 0;
    if (s) {
        s->refs++;
    } else if ((rc = create(lib, graphdef, len, threads, &s, err)) == 0) {
        s->hash = h;
        s->len = len;
        s->threads = threads;
        s->refs = 1;
        s->next = cache;
        cache = s;
    }
    pthread_mutex_unlock(&lock);
    if (rc == 0)
        *out = s;
    return rc;
}

void tfb_session_release(tfb_session *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&lock);
    bool last = --s->refs == 0;
    if (last)
        for (tfb_session **p = &cache; *p; p = &(*p)->next)
            if (*p == s) {
                *p = s->next;
                break;
            }
    pthread_mutex_unlock(&lock);
    if (last)
        destroy(s);
}

size_t tfb_session_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = 0;
    for (tfb_session *s = cache; s; s = s->next)
        n++;
    pthread_mutex_unlock(&lock);
    return n;
}
