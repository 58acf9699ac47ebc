/* A model's config.json (Triton's idea, braid's keys): parsed with cJSON, strictly. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "registry_internal.h"

/* Platforms a config may declare (Triton's names; "onnx" is braid's spelling of ONNX). */
static const char *const platforms[] = { "onnx", "onnxruntime_onnx", "tensorflow_graphdef", "tensorflow_tfjs" };

/* PLATFORM and MODEL_FILENAME stay empty: the loader then looks for the default file names
 * (bd_model_default_filenames) and takes the platform from the imported model. */
void bd_model_config_defaults(bd_model_config *mc)
{
    memset(mc, 0, sizeof *mc);
}

static int int_key(const cJSON *item, const char *name, int min, int max, int *out, bd_error *err)
{
    double d = item->valuedouble;
    if (!cJSON_IsNumber(item) || d != (double)(long long)d || d < min || d > max)
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

int bd_model_config_parse(bd_model_config *mc, const char *name, const char *text, bd_error *err)
{
    bd_model_config_defaults(mc);
    if (!text)
        return 0;
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
                                  "\"tensorflow_graphdef\" or \"tensorflow_tfjs\"", name);
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
        } else
            rc = bd_error_set(err, BD_EINVAL,
                              "model '%s' config: unknown key '%s' (known: name, platform, threads, queue_limit, "
                              "max_batch_size, default_model_filename, fallback_ops, engine)", name, k);
    }
    cJSON_Delete(root);
    return rc;
}
