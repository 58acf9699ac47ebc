/* A model's config.json (docs/config.md, "Per-model config.json"): what
 * it may say, and its parser (model_config.c). Read by the load (registry_load.h) and kept in
 * the version (registry_served_internal.h); its dynamic_batching is read by all
 * (bd_served_batching_config). The parser is internal to registry/. */
#ifndef BD_DAEMON_REGISTRY_MODEL_CONFIG_H
#define BD_DAEMON_REGISTRY_MODEL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/ir/dtype.h"
#include "core/ir/graph.h"

/* config.json "dynamic_batching" (Triton's ModelDynamicBatching; docs/config.md). */
#define BD_BATCH_MAX_PREFERRED 16
#define BD_BATCH_MAX_PRIORITY_LEVELS 64
/* Batch sizes a version's batcher forms (batch_ladder.h): powers of two up to 2^30
 * (max_batch_size's bound), the preferred sizes and the largest batch. */
#define BD_BATCH_MAX_LADDER (31 + BD_BATCH_MAX_PREFERRED + 1)
typedef struct bd_batching_config {
    bool     enabled;                  /* the key was given */
    int      preferred[BD_BATCH_MAX_PREFERRED];  /* preferred_batch_size, as listed */
    int      n_preferred;
    uint64_t max_queue_delay_us;       /* max_queue_delay_microseconds */
    bool     timeout_delay;            /* default_queue_policy.timeout_action: DELAY (else REJECT) */
    uint64_t default_timeout_us;       /* default_queue_policy.default_timeout_microseconds; 0 = none */
    bool     allow_timeout_override;
    uint32_t max_queue_size;           /* per priority level; 0 = only queue_limit */
    uint32_t priority_levels;          /* 0 = one level */
    uint32_t default_priority_level;   /* 1..priority_levels when levels are used */
    bool     wait_when_idle;           /* braid's: the oldest request waits the delay even when
                                        * no run of the model is in progress (Triton's rule) */
    bool     measure_ladder;           /* braid's: batch sizes not faster per row than smaller
                                        * ones are dropped from the ladder at load (batch_ladder.c) */
} bd_batching_config;

/* An allowed shape range of one input (config.json "input_shapes"). */
#define BD_MODEL_CONFIG_MAX_RANGES 16
typedef struct bd_input_range {
    char    name[128];
    int     rank;
    int64_t min[BD_MAX_RANK];
    int64_t max[BD_MAX_RANK];     /* -1 = no upper bound */
} bd_input_range;

/* A label file for one output (config.json "labels"; Triton's label_filename). */
#define BD_MODEL_CONFIG_MAX_LABELS 16
typedef struct bd_label_file {
    char output[128];
    char file[256];            /* one plain file name in the model's folder */
} bd_label_file;

/* What <repo>/<model>/config.json may say (docs/config.md, "Per-model config.json"). */
typedef struct bd_model_config {
    int  threads;             /* oneDNN threads per execution; 0 = the daemon's threads_per_worker */
    int  queue_limit;         /* 0 = the daemon's queue_limit */
    int  max_batch_size;      /* Triton's: > 0 = first dim is the batch, at most this */
    bool has_fallback_ops;    /* "fallback_ops" given: it replaces the daemon's */
    char fallback_ops[1024];  /* op types never run on oneDNN, comma-separated */
    char engine[32];          /* "" = the daemon's engine */
    char platform[32];        /* "onnx", "tensorflow_graphdef", "tensorflow_savedmodel",
                               * "tensorflow_tfjs"; "" = the model's */
    char model_filename[256]; /* file inside the version directory; "" = the first default found */
    char signature[256];      /* a SavedModel's SignatureDef; "" = "serving_default" */
    long long plan_cache_max_plans;  /* -1 = the daemon's; 0 = unbounded */
    long long plan_cache_max_bytes;  /* -1 = the daemon's; 0 = unbounded */
    bd_input_range input_shapes[BD_MODEL_CONFIG_MAX_RANGES];
    int       n_input_shapes;
    bd_label_file labels[BD_MODEL_CONFIG_MAX_LABELS];
    int       n_labels;
    bd_batching_config batching;
    bool      has_warmup;     /* "model_warmup" names samples (run by the load, warmup.h) */
} bd_model_config;

/* The model file names tried in a version directory when config.json names none, in order;
 * model.savedmodel is a directory (a TensorFlow SavedModel, Triton's name for it). */
#define BD_MODEL_DEFAULT_FILENAMES { "model.onnx", "model.graphdef", "model.pb", "model.json", \
                                     "model.savedmodel" }

/* Defaults, then the keys of the JSON object TEXT (NULL = none). Unknown keys and wrong types
 * are BD_EINVAL naming the key; NAME is the model (a "name" key must match it). */
void model_config_defaults(bd_model_config *mc);
int  model_config_parse(bd_model_config *mc, const char *name, const char *text, bd_error *err);
/* max_batch_size > 0 (Triton's convention: the first dim of every input and output is the
 * batch, and ModelConfig lists dims without it) needs every input of G to have a dynamic first
 * dim and every output of known rank a first dim. BD_EINVAL naming the tensor otherwise. */
int  model_config_check_batch(const bd_model_config *mc, const bd_graph *g, bd_error *err);

#endif
