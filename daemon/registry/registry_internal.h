/* Internals shared by the registry's files and the scheduler: the bd_served layout and the
 * per-model configuration (config.json). Not part of any other module's contract. */
#ifndef BD_DAEMON_REGISTRY_REGISTRY_INTERNAL_H
#define BD_DAEMON_REGISTRY_REGISTRY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "daemon/registry/registry.h"

struct bd_job;

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

/* An execution context in a version's pool. */
typedef struct bd_exec_slot {
    struct bd_exec_slot *next;
    const bd_plan       *plan;
    bd_exec             *exec;
    bool                 busy;
} bd_exec_slot;

struct bd_served {
    atomic_int           refs;
    char                 name[256];
    char                 version[32];
    bd_model_config      config;
    int                  queue_limit;      /* resolved: config or daemon default */
    bd_model            *model;
    struct bd_labels   **labels;           /* per graph output, NULL = none (config "labels") */
    bd_model_stats       stats;
    bd_partition_summary summary;
    /* Requests are gathered into batches (config "dynamic_batching", and the load saw the
     * outputs follow the input batch on dim 0). Set before the version is shared. */
    bool                 batching;
    int                  batch_max_rows;   /* rows per gathered batch: max_batch_size, or less
                                            * when input_shapes caps dim 0 */
    int                  batch_ladder[BD_BATCH_MAX_LADDER];  /* the batch sizes formed: their
                                            * plans were compiled at load (batch_ladder.c) */
    int                  n_batch_ladder;

    pthread_mutex_t      pool_lock;        /* guards POOL */
    bd_exec_slot        *pool;

    /* The scheduler's FIFO for this version, guarded by the scheduler's lock. A queued job
     * holds a reference to the version, so the queue never outlives it. */
    struct bd_job       *q_head, *q_tail;
    int                  q_len;
    int                  q_level_len[BD_BATCH_MAX_PRIORITY_LEVELS + 1];  /* queued per level */
    bool                 q_active;         /* linked into the scheduler's round-robin ring */
    int                  q_runs;           /* runs taken by workers and not finished */
    struct bd_served    *q_next;
};

/* A new version with one reference, owning MODEL (closed with the version, also when this
 * fails). */
int  served_create(const char *name, const char *version, const bd_model_config *mc,
                   int default_queue_limit, bd_model *model, bd_served **out, bd_error *err);
/* Read config.json's label files (in MODEL_DIR) for S's outputs; BD_EINVAL names an unknown
 * output, BD_EIO/BD_EINVAL a file that cannot be read or is over a limit (labels.h). The
 * message starts at "key 'labels': "; the caller names the model. */
int  served_load_labels(bd_served *s, const char *model_dir, bd_error *err);

/* config.json "dynamic_batching" at load (batch_probe.c): sets S->batching when the model
 * keeps each row to itself — every output's dim 0 follows the batch (planned for two batch
 * sizes) and rows run together equal the same rows run apart — and S->batch_max_rows, then
 * plans its ladder (served_plan_ladder). INPUTS[0..N): the warm-up's (their shapes are
 * changed and restored; their data is not read). Logs why batching is off. Blocking; before S is shared. */
void served_probe_batching(bd_served *s, DLTensor *inputs, size_t n, const atomic_bool *cancel);
/* Bytes of T's elements (a row-major tensor of shapes already planned: no overflow). */
size_t served_tensor_bytes(const DLTensor *t);
/* The batch sizes S's batcher may form, planned now (batch_ladder.c) into S->batch_ladder:
 * bd_batch_ladder's sizes for S->batch_max_rows, smallest first, up to the first that cannot
 * be planned or would evict a plan from the cache (logged), without the sizes that measure no
 * cheaper per row than a smaller one (measure_ladder; runs each on zeroed inputs). INPUTS as
 * for served_probe_batching (dim 0 changed and restored). Blocking; before S is shared. */
void served_plan_ladder(bd_served *s, DLTensor *inputs, size_t n, const atomic_bool *cancel);

/* Number of bd_served alive in the process (tests check versions are freed). */
long served_live_count(void);

/* Model names: [A-Za-z0-9_.-]{1,128}, not starting with '.'. */
int  registry_check_name(const char *name, bd_error *err);

/* Upload paths relative to a model directory: no absolute path, no "." / ".." / empty
 * segment. The syntactic half of confinement (the walk rejects symlinks). */
int  upload_check_path(const char *path, bd_error *err);
/* Write LEN bytes of DATA to <REPO>/<NAME>/<PATH>, creating the model directory and any
 * intermediate directories, refusing a symlink anywhere below REPO, through a temporary
 * file renamed into place. Blocking I/O: never on the loop thread. */
int  upload_write(const char *repo, const char *name, const char *path, const void *data,
                  size_t len, bd_error *err);

/* One load, prepared on the loop thread and run in libuv's thread pool (registry_load.c):
 * write uploads and config.json, pick the highest version, import, plan for the model's own
 * shapes (dynamic dims = 1), run one warm-up inference, summarise the partition. */
typedef struct bd_load_task {
    /* inputs (owned by the task) */
    char        repo[4096];
    char        name[256];
    char       *config_json;      /* NULL = read <repo>/<name>/config.json if present */
    bool        write_config;     /* also store CONFIG_JSON as <repo>/<name>/config.json */
    bd_upload  *uploads;          /* paths copied; data borrowed from the caller */
    size_t      n_uploads;
    int         threads;          /* daemon threads_per_worker */
    int         queue_limit;      /* daemon queue_limit */
    char        fallback_ops[1024]; /* daemon placement defaults (config.json may override) */
    char        engine[32];
    size_t      plan_cache_max_plans; /* daemon defaults (config.json may override) */
    size_t      plan_cache_max_bytes;
    size_t      max_run_memory_bytes; /* daemon-wide: refuse shapes needing more per run */
    const atomic_bool *cancel;    /* set at shutdown: stop at the next checkpoint (may be NULL) */
    atomic_bool uploads_done;     /* set by the load once it no longer reads UPLOADS' data: only
                                   * then may its caller be answered early (abandoned) */
    /* outputs */
    bd_served  *served;           /* one reference on success */
    int         status;
    bd_error    err;
} bd_load_task;

/* The highest numeric version directory under MODEL_DIR (as written there) into VERSION;
 * BD_ENOTFOUND when there is none. Blocking, but only a directory read. */
int  repo_highest_version(const char *model_dir, const char *name, char *version, size_t size,
                          bd_error *err);

/* Run T (blocking). Fills T->served or T->status/T->err. */
void load_task_run(bd_load_task *t);
void load_task_free(bd_load_task *t);      /* releases an unclaimed T->served too */

#endif
