/* TfIdfVectorizer on INT32 and INT64 tokens (pool_int64s; string pools are not tensors braid
 * has): the n-grams of each row of the input ([C] or [B, C]) counted into a vector of
 * max(ngram_indexes) + 1 frequencies, then weighted (TF: the counts; IDF: the weight, or 1,
 * where the count is not 0; TFIDF: the weight times the count).
 *
 * The pool holds the n-grams by size (ngram_counts gives where each size starts; every n-gram
 * has an id in pool order, the sizes outside [min_gram_length, max_gram_length] too, and
 * ngram_indexes maps an id to its place in the output). An n-gram of size s matches at
 * position p with skip distance d when the tokens p, p + d, ..., p + (s - 1) d equal it; d runs
 * from 1 to max_skip_count + 1, and unigrams count at d = 1 only, as ONNX's reference walks its
 * trie. prepare() sorts each size's n-grams, so a match is a binary search. Rows split across
 * the plan's threads. */
#include <stdlib.h>
#include <string.h>

#include "backends/native/native_internal.h"

enum { TF_TF, TF_IDF, TF_TFIDF };

#define TF_MAX_GRAM 8

/* One allocation (the step's heap): the model, then its arrays. */
typedef struct tf_gram {
    int64_t tok[TF_MAX_GRAM];   /* its tokens (SIZE of them) */
    int64_t size;
    size_t  at;                 /* its place in the pool: the later of equal n-grams wins */
    int64_t out;                /* its place in the output (ngram_indexes[id]) */
} tf_gram;

typedef struct tf_model {
    int64_t  out;               /* the output's length */
    int64_t  min, max, skip;
    int      mode;
    double  *weights;           /* NULL: none */
    tf_gram *grams;             /* by size, each size sorted by its tokens */
    size_t   first[TF_MAX_GRAM + 1], count[TF_MAX_GRAM + 1];   /* per size 1..max */
} tf_model;

static int mode_of(const bd_node *n)
{
    const char *m = bd_node_attr_string(n, "mode", "");
    return !strcmp(m, "TF") ? TF_TF : !strcmp(m, "IDF") ? TF_IDF : !strcmp(m, "TFIDF") ? TF_TFIDF : -1;
}

/* The attributes' form: false (with WHY) when they do not describe a model. */
static bool attrs_ok(const bd_node *n, char *why, size_t len)
{
    const int64_t *counts, *idx, *pool;
    size_t nc = bd_node_attr_ints(n, "ngram_counts", &counts);
    size_t ni = bd_node_attr_ints(n, "ngram_indexes", &idx);
    size_t np = bd_node_attr_ints(n, "pool_int64s", &pool);
    int64_t lo = bd_node_attr_int(n, "min_gram_length", 0), hi = bd_node_attr_int(n, "max_gram_length", 0);
    int64_t skip = bd_node_attr_int(n, "max_skip_count", 0), grams = 0, out = 0;
    if (mode_of(n) < 0 || bd_node_attr(n, "pool_strings"))
        return nv_why(why, len, "TfIdfVectorizer: mode '%s', or a string pool",
                      bd_node_attr_string(n, "mode", ""));
    if (lo < 1 || hi < lo || hi > TF_MAX_GRAM || skip < 0 || skip > 1 << 20 || nc == 0 ||
        nc > TF_MAX_GRAM || ni == 0)
        return nv_why(why, len, "TfIdfVectorizer: gram lengths 1 <= %lld <= %lld <= %d, a skip "
                      "count and the n-gram tables", (long long)lo, (long long)hi, TF_MAX_GRAM);
    for (size_t i = 0; i < nc; i++) {
        int64_t end = i + 1 < nc ? counts[i + 1] : (int64_t)np;
        if (counts[i] < 0 || end < counts[i] || end > (int64_t)np)
            return nv_why(why, len, "TfIdfVectorizer: ngram_counts do not fit the pool");
        grams += (end - counts[i]) / (int64_t)(i + 1);
    }
    for (size_t i = 0; i < ni; i++) {
        if (idx[i] < 0 || idx[i] >= INT32_MAX)
            return nv_why(why, len, "TfIdfVectorizer: ngram_indexes[%zu] = %lld", i,
                          (long long)idx[i]);
        out = idx[i] + 1 > out ? idx[i] + 1 : out;
    }
    const bd_attr *w = bd_node_attr(n, "weights");
    if ((int64_t)ni < grams || (w && (w->type != BD_ATTR_FLOATS || (int64_t)w->n < out)))
        return nv_why(why, len, "TfIdfVectorizer: fewer ngram_indexes than n-grams, or fewer "
                      "weights than outputs");
    return true;
}

static bool tfidf_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    (void)g;
    if (n->n_inputs != 1 || !n->inputs[0] || n->n_outputs != 1)
        return nv_why(why, len, "TfIdfVectorizer: expects X and one output");
    const bd_value *x = n->inputs[0], *y = n->outputs[0];
    if (!nv_value_ok(x, NV_DT(BD_DT_INT32) | NV_DT(BD_DT_INT64)) ||
        !nv_value_ok(y, NV_DT(BD_DT_FLOAT)) || x->shape.rank < 1 || x->shape.rank > 2)
        return nv_why(why, len, "TfIdfVectorizer: INT32 or INT64 X [C] or [B, C] and a FLOAT "
                      "output");
    if (!attrs_ok(n, why, len))
        return false;
    const int64_t *idx;
    size_t ni = bd_node_attr_ints(n, "ngram_indexes", &idx);
    int64_t out = 0;
    for (size_t i = 0; i < ni; i++)
        out = idx[i] + 1 > out ? idx[i] + 1 : out;
    int64_t dims[2] = { x->shape.dims[0], out };
    bd_shape want = x->shape.rank == 1 ? bd_shape_make(1, &out) : bd_shape_make(2, dims);
    if (!bd_shape_equal(&y->shape, &want))
        return nv_why(why, len, "TfIdfVectorizer: the output must be [%s%lld]",
                      x->shape.rank == 2 ? "B, " : "", (long long)out);
    return true;
}

/* ---- the model -------------------------------------------------------------------------------- */

/* The SIZE tokens at A against those at B (stride D). */
static int cmp_tokens(const int64_t *a, const int64_t *b, int64_t size, int64_t d)
{
    for (int64_t i = 0; i < size; i++)
        if (a[i] != b[i * d])
            return a[i] < b[i * d] ? -1 : 1;
    return 0;
}

static int cmp_grams(const void *va, const void *vb)
{
    const tf_gram *a = va, *b = vb;
    int c = cmp_tokens(a->tok, b->tok, a->size, 1);
    return c ? c : a->at < b->at ? -1 : a->at > b->at;
}

static int tfidf_prepare(const bd_node *n, nv_step *s, bd_error *err)
{
    const int64_t *counts, *idx, *pool;
    size_t nc = bd_node_attr_ints(n, "ngram_counts", &counts);
    size_t np = bd_node_attr_ints(n, "pool_int64s", &pool);
    const bd_attr *wa = bd_node_attr(n, "weights");
    size_t nw = wa ? wa->n : 0, ng = 0, ni = bd_node_attr_ints(n, "ngram_indexes", &idx);
    int64_t lo = bd_node_attr_int(n, "min_gram_length", 1), hi = bd_node_attr_int(n, "max_gram_length", 1);
    for (size_t i = 0; i < nc; i++)
        if ((int64_t)i + 1 >= lo && (int64_t)i + 1 <= hi)
            ng += (size_t)(((i + 1 < nc ? counts[i + 1] : (int64_t)np) - counts[i]) / (int64_t)(i + 1));
    tf_model *m = calloc(1, sizeof *m + nw * sizeof(double) + ng * sizeof(tf_gram));
    if (!m)
        return bd_error_set(err, BD_ENOMEM, "out of memory preparing TfIdfVectorizer");
    m->weights = nw ? (double *)(m + 1) : NULL;
    m->grams = (tf_gram *)((char *)(m + 1) + nw * sizeof(double));
    for (size_t i = 0; i < nw; i++)
        m->weights[i] = wa->floats[i];
    m->min = lo;
    m->max = hi;
    m->skip = bd_node_attr_int(n, "max_skip_count", 0);
    m->mode = mode_of(n);
    for (size_t i = 0; i < ni; i++)
        m->out = idx[i] + 1 > m->out ? idx[i] + 1 : m->out;
    size_t id = 0, at = 0;                 /* every n-gram has an id, kept or not */
    for (size_t i = 0; i < nc; i++) {
        int64_t size = (int64_t)i + 1, end = i + 1 < nc ? counts[i + 1] : (int64_t)np;
        size_t grams = (size_t)((end - counts[i]) / size);
        bool kept = size >= lo && size <= hi;
        m->first[size] = at;
        m->count[size] = kept ? grams : 0;
        for (size_t k = 0; k < grams; k++, id++) {
            if (!kept)
                continue;
            tf_gram *g = &m->grams[at++];
            g->size = size;
            g->at = (size_t)counts[i] + k * (size_t)size;
            g->out = idx[id];
            memcpy(g->tok, pool + g->at, (size_t)size * sizeof *pool);
        }
        if (kept)
            qsort(m->grams + m->first[size], grams, sizeof(tf_gram), cmp_grams);
    }
    s->heap = m;
    return 0;
}

/* The output place of the SIZE tokens at X with stride D, or -1 when no n-gram matches (the
 * pool's last one among equal n-grams, as the reference's trie keeps the last id). */
static int64_t find_gram(const tf_model *m, int64_t size, const int64_t *x, int64_t d)
{
    const tf_gram *g = m->grams + m->first[size];
    size_t lo = 0, hi = m->count[size];
    while (lo < hi) {                    /* the first n-gram greater than the tokens */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_tokens(g[mid].tok, x, size, d) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || cmp_tokens(g[lo - 1].tok, x, size, d) != 0)
        return -1;
    return g[lo - 1].out;
}

typedef struct tf_job {
    const tf_model *m;
    const nv_tensor *x;
    float          *y;
    size_t          c;
    int64_t        *tokens;          /* the input as INT64, row by row (scratch) */
} tf_job;

static void tfidf_rows(void *vjob, size_t lo, size_t cnt)
{
    const tf_job *j = vjob;
    const tf_model *m = j->m;
    for (size_t r = lo; r < lo + cnt; r++) {
        const int64_t *x = j->tokens + r * j->c;
        float *y = j->y + r * (size_t)m->out;
        int64_t c = (int64_t)j->c;
        memset(y, 0, (size_t)m->out * sizeof *y);
        for (int64_t d = 1; d <= m->skip + 1; d++)
            for (int64_t p = 0; p < c; p++)
                for (int64_t size = d == 1 ? m->min : (m->min > 2 ? m->min : 2);
                     size <= m->max && p + (size - 1) * d < c; size++) {
                    int64_t at = m->count[size] ? find_gram(m, size, x + p, d) : -1;
                    if (at >= 0)
                        y[at] += 1;
                }
        for (int64_t i = 0; i < m->out; i++) {
            double w = m->weights ? m->weights[i] : 1;
            y[i] = m->mode == TF_TF ? y[i] : m->mode == TF_IDF ? (y[i] > 0 ? (float)w : 0)
                                                               : (float)(w * y[i]);
        }
    }
}

static int tfidf_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                     bd_error *err)
{
    (void)err;
    const nv_tensor *x = &in[0];
    tf_job j = { .m = s->heap, .x = x, .y = out[0].data, .tokens = nv_scratch(env),
                 .c = (size_t)x->dims[x->rank - 1] };
    size_t rows = x->rank == 2 ? (size_t)x->dims[0] : 1;
    for (size_t i = 0; i < x->numel; i++)
        j.tokens[i] = nv_get_i(x->data, x->dtype, i);
    nv_parallel_for(rows, x->numel * (size_t)(j.m->skip + 1) * (size_t)j.m->max, tfidf_rows, &j);
    return 0;
}

static int tfidf_prepare_step(const bd_node *n, nv_step *s, bd_error *err)
{
    int rc = tfidf_prepare(n, s, err);
    if (rc)
        return rc;
    s->scratch = nv_shape_numel(&n->inputs[0]->shape) * sizeof(int64_t);
    s->run = tfidf_run;
    return 0;
}

const nv_op nv_tfidf_ops[] = {
    { "TfIdfVectorizer", tfidf_supports, tfidf_prepare_step },
};
const size_t nv_tfidf_n = sizeof nv_tfidf_ops / sizeof nv_tfidf_ops[0];
