/* The blocking half of a load, run in libuv's thread pool: uploads, config.json, version
 * choice, import, plan, warm-up, partition summary. Touches nothing shared until it hands
 * back a new bd_served; the loop thread swaps it in. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/model_file.h"
#include "daemon/log.h"
#include "runtime/import.h"
#include "daemon/registry/batch_ladder.h"
#include "daemon/registry/batch_probe.h"
#include "daemon/registry/model_config.h"
#include "daemon/registry/registry_load.h"
#include "daemon/registry/registry_served_internal.h"
#include "daemon/registry/upload.h"
#include "daemon/registry/warmup.h"

#define CONFIG_MAX_BYTES (1 << 20)

/* MODEL_DIR/config.json, if there is one, by core/model_file.h's rule (a FIFO there once
 * blocked the load until a writer came): *OUT NULL when there is none. */
static int read_config_file(const char *model_dir, char **out, bd_error *err)
{
    *out = NULL;
    void *data = NULL;
    size_t n = 0;
    int rc = bd_model_file_read_in(model_dir, "config.json", "config.json", CONFIG_MAX_BYTES,
                                   &data, &n, err);
    if (rc == BD_ENOTFOUND)
        return 0;
    if (rc && rc != BD_ENOMEM)
        err->code = rc = BD_EINVAL;
    if (rc)
        return rc;
    char *text = malloc(n + 1);
    if (!text) {
        free(data);
        return bd_error_set(err, BD_ENOMEM, "config.json: out of memory");
    }
    if (n)
        memcpy(text, data, n);
    text[n] = '\0';
    free(data);
    *out = text;
    return 0;
}

int repo_highest_version(const char *model_dir, const char *name, char *version, size_t size,
                           bd_error *err)
{
    DIR *d = opendir(model_dir);
    if (!d)
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO, "model '%s': %s: %s", name,
                            model_dir, errno == ENOENT ? "no such directory in the repository" : strerror(errno));
    unsigned long long best = 0;
    char best_name[32] = "";
    bool found = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        bool digits = len > 0 && len <= 18;
        for (size_t i = 0; digits && i < len; i++)
            digits = isdigit((unsigned char)e->d_name[i]);
        if (!digits)
            continue;
        char path[8192];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", model_dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        unsigned long long v = strtoull(e->d_name, NULL, 10);
        if (!found || v > best) {
            best = v;
            memcpy(best_name, e->d_name, len + 1);
            found = true;
        }
    }
    closedir(d);
    if (!found)
        return bd_error_set(err, BD_ENOTFOUND,
                            "model '%s': no version directory in %s (expected %s/<N>/model.onnx, .pb, .json or model.savedmodel/)", name,
                            model_dir, model_dir);
    snprintf(version, size, "%s", best_name);
    return 0;
}

/* Zero-filled inputs for the model's own shapes with dynamic dims = 1. */
typedef struct warm_inputs {
    size_t    n;
    DLTensor  t[64];
    int64_t   dims[64][BD_MAX_RANK];
} warm_inputs;

static void warm_free(warm_inputs *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->t[i].data);
}

/* A dynamic dim of the warm-up input: 1, moved into the declared range if there is one. */
static int64_t warm_dim(const bd_model_config *mc, const char *input, int d)
{
    for (int k = 0; k < mc->n_input_shapes; k++) {
        const bd_input_range *r = &mc->input_shapes[k];
        if (strcmp(r->name, input) || d >= r->rank)
            continue;
        int64_t x = r->min[d] > 1 ? r->min[d] : 1;
        return r->max[d] >= 0 && x > r->max[d] ? r->max[d] : x;
    }
    return 1;
}

static int warm_make(const bd_graph *g, const bd_model_config *mc, warm_inputs *w, bd_error *err)
{
    size_t n = bd_graph_num_inputs(g);
    if (n > 64)
        return bd_error_set(err, BD_EUNSUPPORTED, "more than 64 inputs");
    for (size_t i = 0; i < n; i++) {
        const bd_value *v = bd_graph_input(g, i);
        DLTensor *t = &w->t[i];
        if (v->shape.rank < 0)
            return bd_error_set(err, BD_EUNSUPPORTED, "input '%s' has no known rank: cannot warm up", v->name);
        if (!bd_dtype_to_dl(v->dtype, &t->dtype) || bd_dtype_size(v->dtype) == 0)
            return bd_error_set(err, BD_EUNSUPPORTED, "input '%s': %s inputs cannot be warmed up", v->name,
                                bd_dtype_name(v->dtype));
        size_t count = 1;
        for (int d = 0; d < v->shape.rank; d++) {
            w->dims[i][d] = v->shape.dims[d] < 0 ? warm_dim(mc, v->name, d) : v->shape.dims[d];
            count *= (size_t)w->dims[i][d];
        }
        size_t bytes = count * bd_dtype_size(v->dtype);
        size_t rounded = bytes ? (bytes + 63) & ~(size_t)63 : 64;   /* aligned_alloc wants a multiple */
        t->data = aligned_alloc(64, rounded);
        if (!t->data)
            return bd_error_set(err, BD_ENOMEM, "out of memory for warm-up input '%s'", v->name);
        w->n = i + 1;
        memset(t->data, 0, bytes);
        t->device = (DLDevice){ kDLCPU, 0 };
        t->ndim = v->shape.rank;
        t->shape = w->dims[i];
    }
    w->n = n;
    return 0;
}

static void summarise(bd_served *s, const bd_plan *plan)
{
    bd_partition_summary *sum = &s->summary;
    const bd_graph *g = bd_plan_graph(plan);
    sum->nodes_imported = bd_graph_num_nodes(bd_model_graph(s->model));
    sum->nodes_planned = bd_graph_num_nodes(g);
    sum->steps = bd_plan_num_steps(plan);
    bd_plan_retain(plan);     /* the summary's own reference (the cache may evict it) */
    sum->plan = plan;
    for (size_t i = 0; i < sum->nodes_planned; i++) {
        const bd_node *nd = bd_graph_node(g, i);
        if (nd->backend >= 0 && nd->backend < BD_MAX_BACKENDS)
            sum->nodes_per_backend[nd->backend]++;
        if (nd->composite)
            sum->fused_composites++;
    }
}

/* PATH = the model file of VERSION: config.json's default_model_filename, else the first of
 * BD_MODEL_DEFAULT_FILENAMES present (ONNX, frozen GraphDef, TF.js graph model, SavedModel
 * directory). */
static int model_file(const char *model_dir, const char *name, const char *version, const bd_model_config *mc,
                      char *path, size_t size, bd_error *err)
{
    if (mc->model_filename[0]) {
        snprintf(path, size, "%s/%s/%s", model_dir, version, mc->model_filename);
        return 0;
    }
    static const char *const defaults[] = BD_MODEL_DEFAULT_FILENAMES;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        struct stat st;
        snprintf(path, size, "%s/%s/%s", model_dir, version, defaults[i]);
        bool dir = strstr(defaults[i], ".savedmodel") != NULL;
        /* any file under a model file's name is the model's: a FIFO or a device there is
         * refused by the importer, by name, rather than passed over */
        if (stat(path, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : !S_ISDIR(st.st_mode)))
            return 0;
    }
    snprintf(path, size, "%s/%s/model.onnx", model_dir, version);
    return bd_error_set(err, BD_ENOTFOUND,
                        "model '%s' version %s: no model file in %s/%s (expected model.onnx, model.graphdef, "
                        "model.pb, model.json or a model.savedmodel/ directory, or config.json's "
                        "default_model_filename)",
                        name, version, model_dir, version);
}

/* Shutdown checkpoints: a load stops between its steps once braidd is shutting down (a step
 * itself — one import, one plan compilation, the warm-up run — is not interrupted). */
static int cancelled(const bd_load_task *t, bd_error *err)
{
    if (!t->cancel || !atomic_load(t->cancel))
        return 0;
    return bd_error_set(err, BD_EUNAVAIL, "model '%s': load cancelled: braidd is shutting down", t->name);
}

/* config.json's "model_warmup" samples (warmup.h), each run COUNT times on S: their plans
 * are compiled and cached, their contexts stay in S's pool. Checks for cancellation between
 * runs, so a shutdown does not wait for a thousand-run sample. */
static int run_model_warmup(bd_served *s, const bd_load_task *t, const char *model_dir,
                            bd_error *err)
{
    bd_warmup w;
    int rc = bd_warmup_from_config(t->config_json, t->name, &w, err);
    bd_model *model = bd_served_model(s);
    for (int i = 0; rc == 0 && i < w.n; i++) {
        const bd_warmup_sample *smp = &w.samples[i];
        DLTensor in[BD_WARMUP_MAX_INPUTS];
        size_t n = 0;
        rc = bd_warmup_tensors(smp, bd_model_graph(model), s->config.max_batch_size, model_dir,
                               in, BD_WARMUP_MAX_INPUTS, &n, err);
        uint64_t first = 0, last = 0;
        int run = 0;
        for (; rc == 0 && run < smp->count; run++) {
            const bd_plan *plan = NULL;
            bd_exec *exec = NULL;
            uint64_t t0 = bd_now_ns();
            rc = bd_model_plan_acquire(model, in, n, &plan, err);
            if (rc == 0 && (rc = bd_served_exec_acquire(s, plan, &exec, err)) == 0) {
                rc = bd_exec_run(exec, in, n, err);
                bd_served_exec_release(s, exec);
            }
            bd_plan_release(plan);
            last = bd_now_ns() - t0;
            if (run == 0)
                first = last;
            if (rc == 0)
                rc = cancelled(t, err);
        }
        bd_warmup_tensors_free(in, n);
        if (rc && run > 0 && rc != BD_EUNAVAIL)         /* the run failed, not the inputs */
            rc = bd_error_prefix(err, "model_warmup '%s', run %d: ", smp->name, run);
        else if (rc == 0)
            bd_log(BD_LOG_INFO, s->name, s->version, "warm-up '%s' (batch %d): %d run(s), first "
                   "%.2f ms, last %.2f ms", smp->name, smp->batch_size, smp->count,
                   (double)first / 1e6, (double)last / 1e6);
    }
    bd_warmup_free(&w);
    return rc;
}

static int load(bd_load_task *t)
{
    bd_error *err = &t->err;
    uint64_t t0 = bd_now_ns();
    char model_dir[8192];
    snprintf(model_dir, sizeof model_dir, "%s/%s", t->repo, t->name);
    int rc = cancelled(t, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < t->n_uploads && rc == 0; i++)
        rc = upload_write(t->repo, t->name, t->uploads[i].path, t->uploads[i].data, t->uploads[i].len, err);
    atomic_store(&t->uploads_done, true);     /* the caller's bytes are not read after this */
    if (rc == 0 && t->write_config && t->config_json)
        rc = upload_write(t->repo, t->name, "config.json", t->config_json, strlen(t->config_json), err);
    if (rc)
        return bd_error_prefix(err, "model '%s': upload: ", t->name);

    char path[8192 + 300];
    if (!t->config_json && (rc = read_config_file(model_dir, &t->config_json, err)) != 0)
        return bd_error_prefix(err, "model '%s': ", t->name);
    bd_model_config mc;
    if ((rc = model_config_parse(&mc, t->name, t->config_json, err)) != 0)
        return rc;
    char version[32];
    if ((rc = repo_highest_version(model_dir, t->name, version, sizeof version, err)) != 0)
        return rc;
    if ((rc = model_file(model_dir, t->name, version, &mc, path, sizeof path, err)) != 0 ||
        (rc = cancelled(t, err)) != 0)
        return rc;
    /* The model's folder is MODEL_DIR: the importers confine what the model names to the
     * file's own directory, this keeps that directory (and the file) inside MODEL_DIR. */
    if ((rc = bd_model_path_check_in(model_dir, path, "model file", err)) != 0) {
        if (rc != BD_ENOMEM)
            err->code = BD_EINVAL;
        return bd_error_prefix(err, "model '%s' version %s: ", t->name, version);
    }

    bd_model_options opts = {
        .threads      = mc.threads > 0 ? mc.threads : t->threads,
        .fallback_ops = mc.has_fallback_ops ? mc.fallback_ops : t->fallback_ops,
        .engine       = mc.engine[0] ? mc.engine : t->engine,
        .plan_cache_max_plans = mc.plan_cache_max_plans >= 0 ? (size_t)mc.plan_cache_max_plans
                                                             : t->plan_cache_max_plans,
        .plan_cache_max_bytes = mc.plan_cache_max_bytes >= 0 ? (size_t)mc.plan_cache_max_bytes
                                                             : t->plan_cache_max_bytes,
        .max_run_memory_bytes = t->max_run_memory_bytes,
        .signature    = mc.signature[0] ? mc.signature : NULL,
    };
    bd_model *model = NULL;
    if ((rc = bd_model_open(path, &opts, &model, err)) != 0)
        return bd_error_prefix(err, "model '%s' version %s: ", t->name, version);
    for (int k = 0; k < mc.n_input_shapes; k++) {
        const bd_input_range *r = &mc.input_shapes[k];
        if ((rc = bd_model_set_input_range(model, r->name, r->rank, r->min, r->max, err)) != 0) {
            bd_model_close(model);
            return bd_error_prefix(err, "model '%s' version %s: config.json input_shapes: ", t->name, version);
        }
    }
    /* The served platform is what the file turned out to be; a declared one must agree. */
    const char *platform = bd_import_platform(bd_model_graph(model));
    if (mc.platform[0] && strcmp(mc.platform, platform)) {
        bd_model_close(model);
        return bd_error_set(err, BD_EINVAL, "model '%s' version %s: config.json says platform \"%s\" but %s is a %s model",
                            t->name, version, mc.platform, path, platform);
    }
    snprintf(mc.platform, sizeof mc.platform, "%s", platform);
    if ((rc = model_config_check_batch(&mc, bd_model_graph(model), err)) != 0) {
        bd_model_close(model);
        return bd_error_prefix(err, "model '%s' version %s: config.json: ", t->name, version);
    }
    bd_served *s = NULL;
    if ((rc = served_create(t->name, version, &mc, t->queue_limit, model, &s, err)) != 0)
        return rc;
    if ((rc = served_load_labels(s, model_dir, err)) != 0) {
        bd_served_release(s);
        return bd_error_prefix(err, "model '%s' version %s: config.json: ", t->name, version);
    }

    /* Plan and run once now, so the first request pays neither compilation nor first-touch;
     * the warm-up context stays in the pool for that request. */
    warm_inputs w = { 0 };
    const bd_plan *plan = NULL;
    bd_exec *exec = NULL;
    if ((rc = cancelled(t, err)) == 0)        /* after the import */
        rc = warm_make(bd_model_graph(model), &mc, &w, err);
    if (rc == 0)
        rc = bd_model_plan_acquire(model, w.t, w.n, &plan, err);
    if (rc == 0)
        rc = cancelled(t, err);               /* after compiling the plan */
    if (rc == 0)
        rc = bd_served_exec_acquire(s, plan, &exec, err);
    if (rc == 0) {
        rc = bd_exec_run(exec, w.t, w.n, err);
        bd_served_exec_release(s, exec);
    }
    if (rc == 0 && mc.batching.enabled)
        served_probe_batching(s, w.t, w.n);
    if (rc == 0 && s->batching)
        served_plan_ladder(s, w.t, w.n, t->cancel);
    warm_free(&w);
    if (rc == 0 && mc.has_warmup)
        rc = run_model_warmup(s, t, model_dir, err);
    if (rc == 0 && (rc = cancelled(t, err)) != 0) {     /* finished, but nobody wants it now */
        bd_plan_release(plan);
        bd_served_release(s);
        return rc;
    }
    if (rc) {
        bd_plan_release(plan);
        bd_served_release(s);
        if (rc == BD_EUNAVAIL && t->cancel && atomic_load(t->cancel))
            return rc;
        return bd_error_prefix(err, "model '%s' version %s: warm-up: ", t->name, version);
    }
    summarise(s, plan);
    bd_plan_release(plan);
    s->summary.load_ms = (double)(bd_now_ns() - t0) / 1e6;
    t->served = s;
    return 0;
}

void load_task_run(bd_load_task *t)
{
    t->status = load(t);
    atomic_store(&t->uploads_done, true);
    if (t->status == 0)
        bd_error_clear(&t->err);
}

void load_task_free(bd_load_task *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_uploads; i++)
        free((char *)t->uploads[i].path);
    free(t->uploads);
    free(t->config_json);
    bd_served_release(t->served);
    free(t);
}
