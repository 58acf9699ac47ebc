/* Triton's model warm-up: config.json's "model_warmup", a list of request samples a version
 * runs at load, before it serves, so that the plans for their shapes are compiled and their
 * memory touched before the first real request (readiness turns true only afterwards).
 *
 *   "model_warmup": [
 *     { "name": "batch8", "batch_size": 8, "count": 3,
 *       "inputs": { "image": { "data_type": "TYPE_FP32", "dims": [3, 224, 224],
 *                              "random_data": true } } } ]
 *
 * Each sample names every model input with its data type (Triton's "TYPE_*" spelling), its
 * dims without the batch dim, and one of "zero_data", "random_data" (seeded: floats uniform
 * in [0, 1), integers 0 or 1, booleans) or "input_data_file" (raw little-endian row-major
 * bytes of one sample, a plain file name in the model's warmup/ folder). batch_size (default
 * 1; exactly 1 when max_batch_size is 0) repeats the sample along a leading batch dim; count
 * (0 or absent = once) runs it that many times. Everything here comes from a possibly
 * uploaded file: names, counts, dims and bytes are bounded (BD_WARMUP_MAX_*). */
#ifndef BD_DAEMON_REGISTRY_WARMUP_H
#define BD_DAEMON_REGISTRY_WARMUP_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "core/ir/graph.h"

#define BD_WARMUP_MAX_SAMPLES     32
#define BD_WARMUP_MAX_COUNT       1000
#define BD_WARMUP_MAX_BATCH       4096
#define BD_WARMUP_MAX_INPUTS      64
#define BD_WARMUP_MAX_INPUT_BYTES (256u << 20)   /* one input of one sample, batch included */

struct cJSON;

typedef enum bd_warmup_data { BD_WARMUP_ZERO, BD_WARMUP_RANDOM, BD_WARMUP_FILE } bd_warmup_data;

typedef struct bd_warmup_input {
    char           name[256];
    int            dtype;               /* bd_dtype */
    int            rank;                /* of dims, without the batch dim */
    int64_t        dims[BD_MAX_RANK];
    bd_warmup_data data;
    char           file[256];           /* BD_WARMUP_FILE: a name in <model>/warmup/ */
} bd_warmup_input;

typedef struct bd_warmup_sample {
    char             name[128];
    int              batch_size;        /* >= 1 */
    int              count;             /* runs, >= 1 */
    bd_warmup_input *inputs;
    int              n_inputs;
} bd_warmup_sample;

typedef struct bd_warmup {
    bd_warmup_sample *samples;
    int               n;
} bd_warmup;

/* Parse the value of "model_warmup" (ITEM, a JSON array) for model NAME into OUT (free it
 * with bd_warmup_free). BD_EINVAL naming the sample and the key on anything malformed,
 * unknown or out of bounds. */
int  bd_warmup_parse(const struct cJSON *item, const char *name, bd_warmup *out, bd_error *err);
/* The "model_warmup" of config.json text JSON (NULL or no key: none). */
int  bd_warmup_from_config(const char *json, const char *name, bd_warmup *out, bd_error *err);
void bd_warmup_free(bd_warmup *w);

/* The inputs of sample S for graph G, in G's input order, into OUT[0..*N) (free them with
 * bd_warmup_tensors_free): every graph input must be in S and nothing else, with the graph's
 * dtype and a rank and dims it accepts; MAX_BATCH > 0 puts batch_size in front (Triton's
 * convention), MAX_BATCH == 0 needs batch_size 1. Files are read from MODEL_DIR/warmup/
 * without following links; their size must be one sample's bytes. */
int  bd_warmup_tensors(const bd_warmup_sample *s, const bd_graph *g, int max_batch,
                       const char *model_dir, DLTensor *out, size_t cap, size_t *n, bd_error *err);
void bd_warmup_tensors_free(DLTensor *t, size_t n);

#endif
