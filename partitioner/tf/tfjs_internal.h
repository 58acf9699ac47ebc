/* Internals of the TF.js graph-model frontend (not a public header). */
#ifndef BD_PARTITIONER_TF_TFJS_INTERNAL_H
#define BD_PARTITIONER_TF_TFJS_INTERNAL_H

#include <cjson/cJSON.h>

#include "partitioner/tf/tf_internal.h"

/* ---- tfjs_attr.c: protobuf-JSON AttrValues -> views ---------------------------------- */

/* The member KEY of object O, also accepted in protobuf's snake_case spelling SNAKE (NULL:
 * same as KEY); NULL if absent. */
const cJSON *tfjs_member(const cJSON *o, const char *key, const char *snake);
/* An int64 written as a JSON string ("-1", protobuf's int64 form) or number. */
bool tfjs_int(const cJSON *j, int64_t *out);
/* Decode base64 text J into G's pool. */
int  tfjs_base64(bd_graph *g, const cJSON *j, tf_bytes *out, const char *what, bd_error *err);
/* The AttrValue JSON J into A (A->key already set). */
int  tfjs_attr(bd_graph *g, const cJSON *j, tf_attr *a, const char *what, bd_error *err);
/* A TensorShapeProto JSON into S. */
int  tfjs_shape(const cJSON *j, bd_shape *s, const char *what, bd_error *err);

/* ---- tfjs_weights.c: weightsManifest + shards -> resolved tensors ------------------- */

typedef struct tfjs_weight {
    const char *name;
    tf_tensor   t;
    bool        used;      /* matched to a Const node */
} tfjs_weight;

/* Read the weights MANIFEST lists from shards in DIR (read, confined to DIR: model_file.h;
 * the bytes are handed to G). float32/int32/bool weights are referenced in place (copied only when a weight
 * spans two shards), quantized and float16 weights are dequantized to float32 into G's
 * pool, strings split into elements. *OUT (heap, N entries) is freed by the caller. */
int tfjs_weights_load(bd_graph *g, const char *dir, const cJSON *manifest, tfjs_weight **out,
                      size_t *n, bd_error *err);

#endif
