/* A model's config.json (Triton's idea, braid's keys): parsed with cJSON, strictly. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/json_text.h"
#include "daemon/registry/model_config.h"
#include "daemon/registry/warmup.h"

/* Platforms a config may declare (Triton's names; "onnx" is braid's spelling of ONNX). */
static const char *const platforms[] = { "onnx", "onnxruntime_onnx", "tensorflow_graphdef", "tensorflow_tfjs",
                                         "tensorflow_savedmodel" };

/* PLATFORM and MODEL_FILENAME stay empty: the loader then looks for the default file names
 * (bd_model_default_filenames) and takes the platform from the imported model. */
void model_config_defaults(bd_model_config *mc)
{
    memset(mc, 0, sizeof *mc);
    mc->plan_cache_max_plans = -1;
    mc->plan_cache_max_bytes = -1;
}

/* D is an integer in [LO, HI]. The range is checked before the cast to long long, which is
 * undefined for a D beyond it (a config.json may say 1e300; NaN fails every comparison). */
static bool integer_in(double d, double lo, double hi)
{
    return d >= lo && d <= hi && d >= -9.2e18 && d <= 9.2e18 && d == (double)(long long)d;
}

static int size_key(const cJSON *item, const char *name, long long max, long long *out, bd_error *err)
{
    double d = item->valuedouble;
    if (!cJSON_IsNumber(item) || !integer_in(d, 0, (double)max))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key '%s': expected an integer in [0, %lld]",
                            name, item->string, max);
    *out = (long long)d;
    return 0;
}

/* A list of RANK dims (integers >= LO; -1 too when ALLOW_UNBOUNDED) into DIMS; returns the
 * count, or -1. */
static int dims_list(const cJSON *a, int64_t *dims, bool allow_unbounded)
{
    if (!cJSON_IsArray(a))
        return -1;
    int n = 0;
    for (const cJSON *x = a->child; x; x = x->next) {
        double d = x->valuedouble;
        if (n == BD_MAX_RANK || !cJSON_IsNumber(x) ||
            !integer_in(d, allow_unbounded ? -1 : 0, (double)(1LL << 40)))
            return -1;
        dims[n++] = (int64_t)d;
    }
    return n;
}

/* "input_shapes": {"INPUT": {"min": [dims], "max": [dims, -1 = unbounded]}, ...} */
static int input_shapes_key(bd_model_config *mc, const cJSON *obj, const char *name, bd_error *err)
{
    static const char *const form = "expected {\"INPUT\": {\"min\": [dims], \"max\": [dims]}, ...} "
                                     "with dims >= 0 (max -1 = unbounded), both lists of the same length "
                                     "(at most 8), min <= max";
    if (!cJSON_IsObject(obj))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'input_shapes': %s", name, form);
    for (const cJSON *in = obj->child; in; in = in->next) {
        if (mc->n_input_shapes == BD_MODEL_CONFIG_MAX_RANGES)
            return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'input_shapes': at most %d inputs",
                                name, BD_MODEL_CONFIG_MAX_RANGES);
        bd_input_range *r = &mc->input_shapes[mc->n_input_shapes];
        if (strlen(in->string) >= sizeof r->name)
            return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'input_shapes': input name longer "
                                "than %zu characters", name, sizeof r->name - 1);
        const cJSON *lo = cJSON_IsObject(in) ? cJSON_GetObjectItemCaseSensitive(in, "min") : NULL;
        const cJSON *hi = cJSON_IsObject(in) ? cJSON_GetObjectItemCaseSensitive(in, "max") : NULL;
        int nlo = lo ? dims_list(lo, r->min, false) : -1;
        int nhi = hi ? dims_list(hi, r->max, true) : -1;
        bool ok = nlo >= 0 && nlo == nhi && cJSON_GetArraySize(in) == 2;
        for (int d = 0; ok && d < nlo; d++)
            ok = r->max[d] < 0 || r->min[d] <= r->max[d];
        if (!ok)
            return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'input_shapes': input '%s': %s",
                                name, in->string, form);
        for (int k = 0; k < mc->n_input_shapes; k++)
            if (strcmp(mc->input_shapes[k].name, in->string) == 0)
                return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'input_shapes': input '%s' twice",
                                    name, in->string);
        snprintf(r->name, sizeof r->name, "%s", in->string);
        r->rank = nlo;
        mc->n_input_shapes++;
    }
    return 0;
}

static int int_key(const cJSON *item, const char *name, int min, int max, int *out, bd_error *err)
{
    double d = item->valuedouble;
    if (!cJSON_IsNumber(item) || !integer_in(d, min, max))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key '%s': expected an integer in [%d, %d]",
                            name, item->string, min, max);
    *out = (int)d;
    return 0;
}

/* A file name inside the version directory: one plain path segment. */
static bool plain_filename(const char *s)
{
    return s[0] && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/') && strlen(s) < 256;
}

/* "labels": {"OUTPUT": "FILE", ...}: FILE one plain name in the model's folder. */
static int labels_key(bd_model_config *mc, const char *name, const cJSON *obj, bd_error *err)
{
    if (!cJSON_IsObject(obj))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'labels': expected an object "
                            "{\"OUTPUT\": \"LABEL_FILE\"}", name);
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (mc->n_labels == BD_MODEL_CONFIG_MAX_LABELS)
            return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'labels': more than %d outputs",
                                name, BD_MODEL_CONFIG_MAX_LABELS);
        bd_label_file *l = &mc->labels[mc->n_labels];
        if (!cJSON_IsString(it) || !plain_filename(it->valuestring) ||
            strlen(it->string) >= sizeof l->output || strlen(it->valuestring) >= sizeof l->file)
            return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'labels': output '%.128s': "
                                "expected the name of a file in the model's folder (no '/')",
                                name, it->string);
        for (int k = 0; k < mc->n_labels; k++)
            if (strcmp(mc->labels[k].output, it->string) == 0)
                return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'labels': output '%s' "
                                    "twice", name, it->string);
        snprintf(l->output, sizeof l->output, "%s", it->string);
        snprintf(l->file, sizeof l->file, "%s", it->valuestring);
        mc->n_labels++;
    }
    return 0;
}

/* Safe ranges for what a config.json — possibly uploaded by a client — may ask for
 * (docs/security.md): threads at most 4 per core (more only thrashes and lets one model
 * starve the others), and a queue short enough that it cannot pin gigabytes of requests. */
#define MAX_MODEL_QUEUE 65536

static int max_model_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    long max = 4 * (n > 0 ? n : 1);
    return (int)(max > 1024 ? 1024 : max);
}

/* ---- dynamic_batching (Triton's ModelDynamicBatching, its field names) ------------------ */

#define MAX_QUEUE_DELAY_US 10000000ULL        /* 10 s: longer only holds requests hostage */
#define MAX_POLICY_TIMEOUT_US 3600000000ULL   /* 1 h */

static int u64_key(const cJSON *item, const char *name, const char *where, unsigned long long max,
                   uint64_t *out, bd_error *err)
{
    double d = item->valuedouble;
    if (!cJSON_IsNumber(item) || !integer_in(d, 0, (double)max))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key '%s%s': expected an integer in "
                            "[0, %llu]", name, where, item->string, max);
    *out = (uint64_t)d;
    return 0;
}

static int bool_key(const cJSON *item, const char *name, const char *where, bool *out, bd_error *err)
{
    if (!cJSON_IsBool(item))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key '%s%s': expected true or false",
                            name, where, item->string);
    *out = cJSON_IsTrue(item);
    return 0;
}

/* "default_queue_policy": {"timeout_action": "REJECT"|"DELAY", "default_timeout_microseconds",
 * "allow_timeout_override", "max_queue_size"} */
static int queue_policy_key(bd_batching_config *b, const cJSON *obj, const char *name, bd_error *err)
{
    static const char *const where = "dynamic_batching.default_queue_policy.";
    if (!cJSON_IsObject(obj))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'dynamic_batching."
                            "default_queue_policy': expected an object", name);
    int rc = 0;
    uint64_t v;
    for (const cJSON *it = obj->child; rc == 0 && it; it = it->next) {
        const char *k = it->string;
        if (strcmp(k, "timeout_action") == 0) {
            if (!cJSON_IsString(it) || (strcmp(it->valuestring, "REJECT") && strcmp(it->valuestring, "DELAY")))
                rc = bd_error_set(err, BD_EINVAL, "model '%s' config: key '%stimeout_action': "
                                  "expected \"REJECT\" or \"DELAY\"", name, where);
            else
                b->timeout_delay = it->valuestring[0] == 'D';
        } else if (strcmp(k, "default_timeout_microseconds") == 0)
            rc = u64_key(it, name, where, MAX_POLICY_TIMEOUT_US, &b->default_timeout_us, err);
        else if (strcmp(k, "allow_timeout_override") == 0)
            rc = bool_key(it, name, where, &b->allow_timeout_override, err);
        else if (strcmp(k, "max_queue_size") == 0) {
            rc = u64_key(it, name, where, MAX_MODEL_QUEUE, &v, err);
            b->max_queue_size = (uint32_t)v;
        } else
            rc = bd_error_set(err, BD_EINVAL, "model '%s' config: unknown key '%s%s' (known: "
                              "timeout_action, default_timeout_microseconds, allow_timeout_override, "
                              "max_queue_size)", name, where, k);
    }
    return rc;
}

static int dynamic_batching_key(bd_batching_config *b, const cJSON *obj, const char *name, bd_error *err)
{
    static const char *const where = "dynamic_batching.";
    if (!cJSON_IsObject(obj))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'dynamic_batching': expected an "
                            "object (Triton's ModelDynamicBatching: {\"preferred_batch_size\": [4, 8], "
                            "\"max_queue_delay_microseconds\": 100})", name);
    b->enabled = true;
    b->measure_ladder = true;          /* braid's default: only batch sizes that pay */
    int rc = 0;
    uint64_t v;
    for (const cJSON *it = obj->child; rc == 0 && it; it = it->next) {
        const char *k = it->string;
        if (strcmp(k, "preferred_batch_size") == 0) {
            bool ok = cJSON_IsArray(it) && cJSON_GetArraySize(it) <= BD_BATCH_MAX_PREFERRED;
            b->n_preferred = 0;
            for (const cJSON *x = ok ? it->child : NULL; ok && x; x = x->next) {
                double d = x->valuedouble;
                ok = cJSON_IsNumber(x) && integer_in(d, 1, 1 << 30);
                for (int p = 0; ok && p < b->n_preferred; p++)
                    ok = b->preferred[p] != (int)d;
                if (ok)
                    b->preferred[b->n_preferred++] = (int)d;
            }
            if (!ok)
                rc = bd_error_set(err, BD_EINVAL, "model '%s' config: key '%spreferred_batch_size': "
                                  "expected a list of at most %d different batch sizes, each an integer "
                                  "from 1 to max_batch_size", name, where, BD_BATCH_MAX_PREFERRED);
        } else if (strcmp(k, "max_queue_delay_microseconds") == 0)
            rc = u64_key(it, name, where, MAX_QUEUE_DELAY_US, &b->max_queue_delay_us, err);
        else if (strcmp(k, "default_queue_policy") == 0)
            rc = queue_policy_key(b, it, name, err);
        else if (strcmp(k, "priority_levels") == 0) {
            rc = u64_key(it, name, where, BD_BATCH_MAX_PRIORITY_LEVELS, &v, err);
            b->priority_levels = (uint32_t)v;
        } else if (strcmp(k, "default_priority_level") == 0) {
            rc = u64_key(it, name, where, BD_BATCH_MAX_PRIORITY_LEVELS, &v, err);
            b->default_priority_level = (uint32_t)v;
        } else if (strcmp(k, "preserve_ordering") == 0) {
            bool keep = false;
            rc = bool_key(it, name, where, &keep, err);
            if (!rc && keep)        /* responses go out as each batch finishes */
                rc = bd_error_set(err, BD_EINVAL, "model '%s' config: key '%spreserve_ordering': "
                                  "braid does not support true (each response is sent when its batch "
                                  "finishes); remove the key or set false", name, where);
        } else if (strcmp(k, "wait_when_idle") == 0) {
            rc = bool_key(it, name, where, &b->wait_when_idle, err);
        } else if (strcmp(k, "measure_ladder") == 0) {
            rc = bool_key(it, name, where, &b->measure_ladder, err);
        } else
            rc = bd_error_set(err, BD_EINVAL, "model '%s' config: unknown key '%s%s' (known: "
                              "preferred_batch_size, max_queue_delay_microseconds, default_queue_policy, "
                              "priority_levels, default_priority_level, preserve_ordering, "
                              "wait_when_idle, measure_ladder; braid has no "
                              "priority_queue_policy)", name, where, k);
    }
    if (rc)
        return rc;
    if (b->priority_levels == 0 && b->default_priority_level != 0)
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key '%sdefault_priority_level': %u "
                            "needs priority_levels (there is one level when priority_levels is 0)",
                            name, where, b->default_priority_level);
    if (b->priority_levels > 0 && (b->default_priority_level < 1 ||
                                   b->default_priority_level > b->priority_levels))
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key '%sdefault_priority_level': "
                            "expected a level from 1 to priority_levels (%u), got %u", name, where,
                            b->priority_levels, b->default_priority_level);
    return 0;
}

/* What needs max_batch_size, known only once every key is read. */
static int batching_check(const bd_model_config *mc, const char *name, bd_error *err)
{
    const bd_batching_config *b = &mc->batching;
    if (!b->enabled)
        return 0;
    if (mc->max_batch_size <= 0)
        return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'dynamic_batching' needs "
                            "max_batch_size > 0 (requests are concatenated along the batch dim)", name);
    for (int p = 0; p < b->n_preferred; p++)
        if (b->preferred[p] > mc->max_batch_size)
            return bd_error_set(err, BD_EINVAL, "model '%s' config: key 'dynamic_batching."
                                "preferred_batch_size': %d is over max_batch_size %d", name,
                                b->preferred[p], mc->max_batch_size);
    return 0;
}

int model_config_parse(bd_model_config *mc, const char *name, const char *text, bd_error *err)
{
    model_config_defaults(mc);
    if (!text)
        return 0;
    long nul = bd_json_find_nul(text, strlen(text));
    if (nul >= 0)
        return bd_error_set(err, BD_EINVAL, "model '%s' config: a NUL (\\u0000) in a string near "
                            "byte %ld; strings must not contain NUL", name, nul);
    cJSON *root = cJSON_Parse(text);
    if (!root)
        return bd_error_set(err, BD_EINVAL, "model '%s' config: not valid JSON", name);
    int rc = 0;
    if (!cJSON_IsObject(root))
        rc = bd_error_set(err, BD_EINVAL, "model '%s' config: expected a JSON object", name);
    for (const cJSON *it = root->child; rc == 0 && it; it = it->next) {
        const char *k = it->string;
        if (strcmp(k, "threads") == 0)
            rc = int_key(it, name, 0, max_model_threads(), &mc->threads, err);
        else if (strcmp(k, "queue_limit") == 0)
            rc = int_key(it, name, 1, MAX_MODEL_QUEUE, &mc->queue_limit, err);
        else if (strcmp(k, "labels") == 0)
            rc = labels_key(mc, name, it, err);
        else if (strcmp(k, "model_warmup") == 0) {
            /* checked here, so a bad sample fails the parse like any key; the load parses it
             * again from the same text when it runs the samples (warmup.h) */
            bd_warmup w;
            rc = bd_warmup_parse(it, name, &w, err);
            mc->has_warmup = rc == 0 && w.n > 0;
            bd_warmup_free(&w);
        }
        else if (strcmp(k, "max_batch_size") == 0)
            rc = int_key(it, name, 0, 1 << 30, &mc->max_batch_size, err);
        else if (strcmp(k, "platform") == 0) {
            size_t p = 0;
            while (cJSON_IsString(it) && p < sizeof platforms / sizeof platforms[0] &&
                   strcmp(it->valuestring, platforms[p]))
                p++;
            if (!cJSON_IsString(it) || p == sizeof platforms / sizeof platforms[0])
                rc = bd_error_set(err, BD_EINVAL,
                                  "model '%s' config: key 'platform': expected \"onnx\", \"onnxruntime_onnx\", "
                                  "\"tensorflow_graphdef\", \"tensorflow_savedmodel\" or \"tensorflow_tfjs\"", name);
            else   /* Triton's ONNX name and braid's are one platform */
                snprintf(mc->platform, sizeof mc->platform, "%s", p == 1 ? "onnx" : platforms[p]);
        } else if (strcmp(k, "name") == 0) {
            if (!cJSON_IsString(it) || strcmp(it->valuestring, name))
                rc = bd_error_set(err, BD_EINVAL, "model '%s' config: key 'name': expected \"%s\"", name, name);
        } else if (strcmp(k, "default_model_filename") == 0) {
            if (!cJSON_IsString(it) || !plain_filename(it->valuestring))
                rc = bd_error_set(err, BD_EINVAL,
                                  "model '%s' config: key 'default_model_filename': expected a file name without '/'",
                                  name);
            else
                snprintf(mc->model_filename, sizeof mc->model_filename, "%s", it->valuestring);
        } else if (strcmp(k, "signature") == 0) {
            if (!cJSON_IsString(it) || !*it->valuestring || strlen(it->valuestring) >= sizeof mc->signature)
                rc = bd_error_set(err, BD_EINVAL, "model '%s' config: key 'signature': expected the name of "
                                  "a SavedModel's SignatureDef (at most %zu characters)", name,
                                  sizeof mc->signature - 1);
            else
                snprintf(mc->signature, sizeof mc->signature, "%s", it->valuestring);
        } else if (strcmp(k, "fallback_ops") == 0 || strcmp(k, "engine") == 0) {
            bool ops = k[0] == 'f';
            char *dst = ops ? mc->fallback_ops : mc->engine;
            size_t size = ops ? sizeof mc->fallback_ops : sizeof mc->engine;
            if (!cJSON_IsString(it) || strlen(it->valuestring) >= size)
                rc = bd_error_set(err, BD_EINVAL, "model '%s' config: key '%s': expected %s (at most %zu characters)",
                                  name, k, ops ? "op types, comma-separated (\"Softmax,Erf\")" : "\"auto\" or a backend name",
                                  size - 1);
            else
                snprintf(dst, size, "%s", it->valuestring);
            mc->has_fallback_ops |= ops;
        } else if (strcmp(k, "plan_cache_max_plans") == 0)
            rc = size_key(it, name, 1 << 20, &mc->plan_cache_max_plans, err);
        else if (strcmp(k, "plan_cache_max_bytes") == 0)
            rc = size_key(it, name, 1LL << 50, &mc->plan_cache_max_bytes, err);
        else if (strcmp(k, "input_shapes") == 0)
            rc = input_shapes_key(mc, it, name, err);
        else if (strcmp(k, "dynamic_batching") == 0)
            rc = dynamic_batching_key(&mc->batching, it, name, err);
        else
            rc = bd_error_set(err, BD_EINVAL,
                              "model '%s' config: unknown key '%s' (known: name, platform, threads, queue_limit, "
                              "max_batch_size, labels, default_model_filename, fallback_ops, engine, plan_cache_max_plans, "
                              "plan_cache_max_bytes, input_shapes, signature, dynamic_batching)", name, k);
    }
    cJSON_Delete(root);
    if (rc == 0)
        rc = batching_check(mc, name, err);
    return rc;
}

int model_config_check_batch(const bd_model_config *mc, const bd_graph *g, bd_error *err)
{
    if (mc->max_batch_size <= 0)
        return 0;
    for (size_t i = 0; i < bd_graph_num_inputs(g); i++) {
        const bd_value *v = bd_graph_input(g, i);
        if (v->shape.rank < 1 || v->shape.dims[0] >= 0)
            return bd_error_set(err, BD_EINVAL, "max_batch_size %d needs a dynamic first (batch) "
                                "dim in every input, but input '%s' has %s: set max_batch_size to 0 "
                                "(full shapes) or export the model with a dynamic batch dim",
                                mc->max_batch_size, v->name,
                                v->shape.rank < 1 ? "no dims" : "a fixed first dim");
    }
    for (size_t i = 0; i < bd_graph_num_outputs(g); i++) {
        const bd_value *v = bd_graph_output(g, i);
        if (v->shape.rank == 0)
            return bd_error_set(err, BD_EINVAL, "max_batch_size %d needs a first (batch) dim in "
                                "every output, but output '%s' is a scalar", mc->max_batch_size,
                                v->name);
    }
    return 0;
}
