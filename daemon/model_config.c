/* A model's config.json (Triton's idea, braid's keys): parsed with cJSON, strictly. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "registry_internal.h"

void bd_model_config_defaults(bd_model_config *mc)
{
    memset(mc, 0, sizeof *mc);
    snprintf(mc->platform, sizeof mc->platform, "onnx");
    snprintf(mc->model_filename, sizeof mc->model_filename, "model.onnx");
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
            rc = int_key(it, name, 0, 1024, &mc->threads, err);
        else if (strcmp(k, "queue_limit") == 0)
            rc = int_key(it, name, 1, 1000000, &mc->queue_limit, err);
        else if (strcmp(k, "max_batch_size") == 0)
            rc = int_key(it, name, 0, 1 << 30, &mc->max_batch_size, err);
        else if (strcmp(k, "platform") == 0) {
            if (!cJSON_IsString(it) || (strcmp(it->valuestring, "onnx") &&
                                        strcmp(it->valuestring, "onnxruntime_onnx")))
                rc = bd_error_set(err, BD_EINVAL,
                                  "model '%s' config: key 'platform': expected \"onnx\" (the only format braidd serves)",
                                  name);
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
        } else
            rc = bd_error_set(err, BD_EINVAL,
                              "model '%s' config: unknown key '%s' (known: name, platform, threads, queue_limit, "
                              "max_batch_size, default_model_filename)", name, k);
    }
    cJSON_Delete(root);
    return rc;
}
