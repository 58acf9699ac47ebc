/* TfIdfVectorizer cases and reference: TF over bigrams without skips, TFIDF with weights over
 * uni- and bigrams with skips on a batch, IDF without weights on INT64 tokens. The reference
 * tries every n-gram of the pool (sizes in [min_gram_length, max_gram_length]) at every
 * position and skip distance; unigrams count at distance 1 only. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

static void ref_tfidf(const op_case *c, const tensor *in, tensor *out)
{
    const attr_spec *counts = find_attr(c, "ngram_counts"), *idx = find_attr(c, "ngram_indexes");
    const attr_spec *pool = find_attr(c, "pool_int64s"), *w = find_attr(c, "weights");
    int64_t lo = attr_i(c, "min_gram_length", 1), hi = attr_i(c, "max_gram_length", 1);
    int64_t skip = attr_i(c, "max_skip_count", 0), C = in[0].dims[in[0].rank - 1];
    size_t rows = in[0].rank == 2 ? (size_t)in[0].dims[0] : 1, width = out->n / rows;
    const char *mode = attr_s(c, "mode", "TF");
    for (size_t r = 0; r < rows; r++) {
        double *y = out->f + r * width;
        const int64_t *x = in[0].i + r * (size_t)C;
        int64_t id = 0;
        for (int k = 0; k < counts->n; k++) {
            int64_t size = k + 1, end = k + 1 < counts->n ? counts->ints[k + 1] : pool->n;
            for (int64_t at = counts->ints[k]; at + size <= end; at += size, id++) {
                if (size < lo || size > hi)
                    continue;
                for (int64_t d = 1; d <= (size == 1 ? 1 : skip + 1); d++)
                    for (int64_t p = 0; p + (size - 1) * d < C; p++) {
                        bool match = true;
                        for (int64_t t = 0; t < size && match; t++)
                            match = x[p + t * d] == pool->ints[at + t];
                        y[idx->ints[id]] += match;
                    }
            }
        }
        for (size_t i = 0; i < width; i++) {
            double wt = w ? w->floats[i] : 1;
            y[i] = !strcmp(mode, "TF") ? y[i] : !strcmp(mode, "IDF") ? (y[i] > 0 ? wt : 0) : wt * y[i];
        }
    }
}

#define k_tokens V(1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8)
#define TFIDF_POOL AINTS("ngram_counts", 0, 4), AINTS("ngram_indexes", 0, 1, 2, 3, 4, 5, 6), \
                   AINTS("pool_int64s", 2, 3, 5, 4, 5, 6, 7, 8, 6, 7)

static const op_case k_cases[] = {
    { "tfidf_tf_bigrams", "TfIdfVectorizer", NULL, 1, { FEDV(INT32, k_tokens, 12) },
      { AS("mode", "TF"), AI("min_gram_length", 2), AI("max_gram_length", 2),
        AI("max_skip_count", 0), TFIDF_POOL }, OUT(7), ref_tfidf },
    { "tfidf_tfidf_weights_skips_batch", "TfIdfVectorizer", NULL, 1,
      { FEDV(INT32, k_tokens, 2, 6) }, { AS("mode", "TFIDF"), AI("min_gram_length", 1),
      AI("max_gram_length", 2), AI("max_skip_count", 5), TFIDF_POOL,
      AFLOATS("weights", 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f) }, OUT(2, 7), ref_tfidf },
    { "tfidf_idf_i64_uni_and_bigrams", "TfIdfVectorizer", NULL, 1,
      { FEDV(INT64, k_tokens, 12) }, { AS("mode", "IDF"), AI("min_gram_length", 1),
      AI("max_gram_length", 2), AI("max_skip_count", 2), TFIDF_POOL }, OUT(7), ref_tfidf },
};

const case_table ops_tfidf_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
