/* Fuzz a model's config.json (daemon/registry/model_config.c, daemon/registry/warmup.h): the file a client with
 * the admin role may upload with RepositoryModelLoad. The input is the JSON text. It goes
 * through the parser braidd runs at every load; a config whose model_warmup parses has each
 * sample turned into input tensors for a small graph (input "x", FP32 [-1, 4]), as the load
 * would, with files looked up in a folder that does not exist. Samples above 1 MiB are not
 * built (their bound is BD_WARMUP_MAX_INPUT_BYTES, which the e2e test checks; allocating it
 * on every input would only slow the fuzzer). Deterministic, no writes.
 * Seeds: tests/fuzz/corpus/config. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/graph.h"
#include "daemon/registry/model_config.h"
#include "daemon/registry/warmup.h"

static bd_graph *graph(void)
{
    static bd_graph *g;
    if (!g) {
        g = bd_graph_create("fuzz");
        bd_shape s = { .rank = 2, .dims = { -1, 4 } };
        bd_value *x = NULL;
        if (!g || bd_graph_add_value(g, "x", BD_DT_FLOAT, &s, &x, NULL) ||
            bd_graph_mark_input(g, x, NULL))
            abort();
    }
    return g;
}

static uint64_t sample_bytes(const bd_warmup_sample *s)
{
    uint64_t most = 0;
    for (int i = 0; i < s->n_inputs; i++) {
        uint64_t b = (uint64_t)s->batch_size * 8;
        for (int d = 0; d < s->inputs[i].rank && b <= (1u << 20); d++)
            b *= (uint64_t)s->inputs[i].dims[d];
        if (b > most)
            most = b;
    }
    return most;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    bd_model_config mc;
    bd_error err = { 0 };
    int rc = model_config_parse(&mc, "m", text, &err);
    bd_warmup w;
    bd_error werr = { 0 };
    int wrc = bd_warmup_from_config(text, "m", &w, &werr);
    /* the load parses the samples again from the same text: it must agree with the parse */
    if (rc == 0 && wrc != 0)
        abort();
    if (wrc == 0) {
        for (int i = 0; i < w.n; i++) {
            if (sample_bytes(&w.samples[i]) > (1u << 20))
                continue;
            DLTensor t[BD_WARMUP_MAX_INPUTS];
            size_t n = 0;
            bd_error terr = { 0 };
            if (bd_warmup_tensors(&w.samples[i], graph(), rc == 0 ? mc.max_batch_size : 0,
                                  "/nonexistent/braid-fuzz-model", t, BD_WARMUP_MAX_INPUTS, &n,
                                  &terr) == 0)
                bd_warmup_tensors_free(t, n);
        }
        bd_warmup_free(&w);
    }
    free(text);
    return 0;
}
