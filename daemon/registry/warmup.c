/* config.json's "model_warmup" (warmup.h): parsed strictly with cJSON, turned into input
 * tensors for the load to run. */
#include "daemon/registry/warmup.h"

#include "core/model_file.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/json_text.h"
#include "core/ir/dtype.h"

/* ---- parsing ------------------------------------------------------------------------------- */

/* An integer in [LO, HI] (within ±2^62): the range first, as the cast is undefined beyond it. */
static bool whole(const cJSON *it, double lo, double hi)
{
    double d = it->valuedouble;
    return cJSON_IsNumber(it) && d >= lo && d <= hi && d == (double)(long long)d;
}

/* "TYPE_FP32" -> BD_DT_FLOAT; strings are not warmed up (braid serves numeric tensors). */
static int triton_dtype(const char *s)
{
    if (!s || strncmp(s, "TYPE_", 5))
        return BD_DT_UNDEFINED;
    int dt = bd_dtype_from_name(s + 5);
    return dt == BD_DT_STRING ? BD_DT_UNDEFINED : dt;
}

static bool plain_filename(const char *s)
{
    return s[0] && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/') && strlen(s) < 256;
}

static int parse_input(const cJSON *obj, const char *model, const char *sample,
                       bd_warmup_input *in, bd_error *err)
{
    const char *iname = obj->string;
#define BAD(...) bd_error_set(err, BD_EINVAL, __VA_ARGS__)
    if (strlen(iname) >= sizeof in->name)
        return BAD("model '%s' config: model_warmup '%s': an input name is too long", model, sample);
    snprintf(in->name, sizeof in->name, "%s", iname);
    if (!cJSON_IsObject(obj))
        return BAD("model '%s' config: model_warmup '%s': input '%s': expected an object", model, sample, iname);
    int sources = 0;
    bool have_type = false, have_dims = false;
    for (const cJSON *it = obj->child; it; it = it->next) {
        const char *k = it->string;
        if (!strcmp(k, "data_type")) {
            in->dtype = cJSON_IsString(it) ? triton_dtype(it->valuestring) : BD_DT_UNDEFINED;
            if (in->dtype == BD_DT_UNDEFINED || bd_dtype_size(in->dtype) == 0)
                return BAD("model '%s' config: model_warmup '%s': input '%s': data_type: expected "
                           "a numeric Triton type such as \"TYPE_FP32\"", model, sample, iname);
            have_type = true;
        } else if (!strcmp(k, "dims")) {
            int r = 0;
            bool ok = cJSON_IsArray(it) && cJSON_GetArraySize(it) < BD_MAX_RANK;
            for (const cJSON *d = ok ? it->child : NULL; ok && d; d = d->next) {
                ok = whole(d, 0, (double)(1LL << 40));
                if (ok)
                    in->dims[r++] = (int64_t)d->valuedouble;
            }
            if (!ok)
                return BAD("model '%s' config: model_warmup '%s': input '%s': dims: expected a "
                           "list of at most %d sizes >= 0, without the batch dim", model, sample,
                           iname, BD_MAX_RANK - 1);
            in->rank = r;
            have_dims = true;
        } else if (!strcmp(k, "zero_data") || !strcmp(k, "random_data")) {
            if (!cJSON_IsBool(it))
                return BAD("model '%s' config: model_warmup '%s': input '%s': %s: expected true",
                           model, sample, iname, k);
            in->data = k[0] == 'z' ? BD_WARMUP_ZERO : BD_WARMUP_RANDOM;   /* set = used (Triton) */
            sources++;
        } else if (!strcmp(k, "input_data_file")) {
            if (!cJSON_IsString(it) || !plain_filename(it->valuestring))
                return BAD("model '%s' config: model_warmup '%s': input '%s': input_data_file: "
                           "expected the name of a file in the model's warmup/ folder (no '/')",
                           model, sample, iname);
            snprintf(in->file, sizeof in->file, "%s", it->valuestring);
            in->data = BD_WARMUP_FILE;
            sources++;
        } else {
            return BAD("model '%s' config: model_warmup '%s': input '%s': unknown key '%.64s' "
                       "(data_type, dims, zero_data, random_data, input_data_file)", model, sample,
                       iname, k);
        }
    }
    if (!have_type || !have_dims || sources != 1)
        return BAD("model '%s' config: model_warmup '%s': input '%s': needs data_type, dims and "
                   "exactly one of zero_data, random_data, input_data_file", model, sample, iname);
    return 0;
}

static int parse_sample(const cJSON *obj, const char *model, int index, bd_warmup_sample *s,
                        bd_error *err)
{
    char label[32];
    snprintf(label, sizeof label, "#%d", index);
    const cJSON *name = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, "name") : NULL;
    const char *sample = cJSON_IsString(name) ? name->valuestring : label;
    if (!cJSON_IsObject(obj))
        return BAD("model '%s' config: model_warmup %s: expected an object", model, label);
    if (cJSON_IsString(name) && (!name->valuestring[0] || strlen(name->valuestring) >= sizeof s->name))
        return BAD("model '%s' config: model_warmup %s: name: expected 1 to %zu characters",
                   model, label, sizeof s->name - 1);
    snprintf(s->name, sizeof s->name, "%s", sample);
    s->batch_size = 1;
    s->count = 1;
    const cJSON *inputs = NULL;
    for (const cJSON *it = obj->child; it; it = it->next) {
        const char *k = it->string;
        if (!strcmp(k, "name")) {
            if (!cJSON_IsString(it))
                return BAD("model '%s' config: model_warmup %s: name: expected a string", model, label);
        } else if (!strcmp(k, "batch_size")) {
            if (!whole(it, 1, BD_WARMUP_MAX_BATCH))
                return BAD("model '%s' config: model_warmup '%s': batch_size: expected an integer "
                           "in [1, %d]", model, sample, BD_WARMUP_MAX_BATCH);
            s->batch_size = (int)it->valuedouble;
        } else if (!strcmp(k, "count")) {
            if (!whole(it, 0, BD_WARMUP_MAX_COUNT))
                return BAD("model '%s' config: model_warmup '%s': count: expected an integer in "
                           "[0, %d] (0 = once)", model, sample, BD_WARMUP_MAX_COUNT);
            s->count = it->valuedouble > 0 ? (int)it->valuedouble : 1;
        } else if (!strcmp(k, "inputs")) {
            inputs = it;
        } else {
            return BAD("model '%s' config: model_warmup '%s': unknown key '%.64s' (name, "
                       "batch_size, count, inputs)", model, sample, k);
        }
    }
    int n = cJSON_IsObject(inputs) ? cJSON_GetArraySize(inputs) : -1;
    if (n < 1 || n > BD_WARMUP_MAX_INPUTS)
        return BAD("model '%s' config: model_warmup '%s': inputs: expected an object naming 1 to "
                   "%d inputs", model, sample, BD_WARMUP_MAX_INPUTS);
    s->inputs = calloc((size_t)n, sizeof *s->inputs);
    if (!s->inputs)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    for (const cJSON *it = inputs->child; it; it = it->next) {
        for (int k = 0; k < s->n_inputs; k++)
            if (!strcmp(s->inputs[k].name, it->string))
                return BAD("model '%s' config: model_warmup '%s': input '%s' twice", model, sample,
                           it->string);
        int rc = parse_input(it, model, sample, &s->inputs[s->n_inputs], err);
        if (rc)
            return rc;
        s->n_inputs++;
    }
    return 0;
}

int bd_warmup_parse(const cJSON *item, const char *name, bd_warmup *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    int n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
    if (n < 0 || n > BD_WARMUP_MAX_SAMPLES)
        return BAD("model '%s' config: model_warmup: expected a list of at most %d samples",
                   name, BD_WARMUP_MAX_SAMPLES);
    if (n == 0)
        return 0;
    out->samples = calloc((size_t)n, sizeof *out->samples);
    if (!out->samples)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    int i = 0;
    for (const cJSON *it = item->child; it; it = it->next, i++) {
        out->n = i + 1;                      /* so bd_warmup_free frees a half-parsed one */
        int rc = parse_sample(it, name, i, &out->samples[i], err);
        if (rc) {
            bd_warmup_free(out);
            return rc;
        }
    }
    return 0;
#undef BAD
}

int bd_warmup_from_config(const char *json, const char *name, bd_warmup *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!json)
        return 0;
    long nul = bd_json_find_nul(json, strlen(json));
    if (nul >= 0)
        return bd_error_set(err, BD_EINVAL, "model '%s' config: a NUL (\\u0000) in a string near "
                            "byte %ld; strings must not contain NUL", name, nul);
    cJSON *root = cJSON_Parse(json);
    if (!root)
        return bd_error_set(err, BD_EINVAL, "model '%s' config: not valid JSON", name);
    const cJSON *w = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "model_warmup") : NULL;
    int rc = w ? bd_warmup_parse(w, name, out, err) : 0;
    cJSON_Delete(root);
    return rc;
}

void bd_warmup_free(bd_warmup *w)
{
    for (int i = 0; w && w->samples && i < w->n; i++)
        free(w->samples[i].inputs);
    if (w) {
        free(w->samples);
        memset(w, 0, sizeof *w);
    }
}

/* ---- tensors -------------------------------------------------------------------------------- */

/* xorshift64*: reproducible "random_data" without touching the process's rand() state. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static void fill_random(void *data, int dtype, size_t count, uint64_t seed)
{
    uint64_t s = seed | 1;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = next_random(&s);
        switch (dtype) {
        case BD_DT_FLOAT:  ((float *)data)[i] = (float)(r >> 40) / (float)(1 << 24); break;
        case BD_DT_DOUBLE: ((double *)data)[i] = (double)(r >> 11) / (double)(1ull << 53); break;
        default: {
            /* integers and booleans 0 or 1 (a wider range could index out of bounds); the
             * 16-bit floats 0.0 or 1.0; little-endian */
            size_t es = bd_dtype_size(dtype);
            unsigned char *p = (unsigned char *)data + i * es;
            memset(p, 0, es);
            if (!(r & 1))
                break;
            if (dtype == BD_DT_FLOAT16)
                p[1] = 0x3c;                 /* 0x3c00 */
            else if (dtype == BD_DT_BFLOAT16)
                p[1] = 0x3f, p[0] = 0x80;    /* 0x3f80 */
            else
                p[0] = 1;
        }
        }
    }
}

/* Read exactly SIZE bytes of MODEL_DIR/warmup/FILE into BUF: a regular file inside the
 * model's folder (core/model_file.h's rule; a FIFO is refused, not waited on). */
static int read_file(const char *model_dir, const char *file, void *buf, size_t size,
                     const char *what, bd_error *err)
{
    char rel[300], path[8192];
    snprintf(rel, sizeof rel, "warmup/%.250s", file);
    snprintf(path, sizeof path, "%s/%s", model_dir, rel);
    int fd;
    uint64_t have;
    int rc = bd_model_file_open_in(model_dir, rel, "input_data_file", 0, &fd, &have, err);
    if (rc && rc != BD_ENOMEM)
        err->code = BD_EINVAL;                  /* the file config.json names: the config's fault */
    if (rc)
        return bd_error_prefix(err, "%s: ", what);
    if (have != size)
        rc = bd_error_set(err, BD_EINVAL, "%s: %s holds %llu bytes; one sample of this input is "
                          "%zu bytes (raw, row-major, without the batch dim)", what, path,
                          (unsigned long long)have, size);
    for (size_t got = 0; rc == 0 && got < size;) {
        ssize_t r = read(fd, (char *)buf + got, size - got);
        if (r <= 0)
            rc = bd_error_set(err, BD_EINVAL, "%s: reading %s: %s", what, path,
                              r < 0 ? strerror(errno) : "the file shrank");
        else
            got += (size_t)r;
    }
    close(fd);
    return rc;
}

void bd_warmup_tensors_free(DLTensor *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        free(t[i].data);
        free(t[i].shape);
        memset(&t[i], 0, sizeof t[i]);
    }
}

int bd_warmup_tensors(const bd_warmup_sample *s, const bd_graph *g, int max_batch,
                      const char *model_dir, DLTensor *out, size_t cap, size_t *n, bd_error *err)
{
    *n = 0;
    size_t ng = bd_graph_num_inputs(g);
    if (ng > cap)
        return bd_error_set(err, BD_EUNSUPPORTED, "model_warmup '%s': the model has %zu inputs "
                            "(at most %zu)", s->name, ng, cap);
    if (max_batch == 0 && s->batch_size != 1)
        return bd_error_set(err, BD_EINVAL, "model_warmup '%s': batch_size %d, but the model does "
                            "not batch (max_batch_size 0): use 1", s->name, s->batch_size);
    if (max_batch > 0 && s->batch_size > max_batch)
        return bd_error_set(err, BD_EINVAL, "model_warmup '%s': batch_size %d exceeds "
                            "max_batch_size %d", s->name, s->batch_size, max_batch);
    if ((size_t)s->n_inputs != ng)
        return bd_error_set(err, BD_EINVAL, "model_warmup '%s': names %d inputs; the model has "
                            "%zu, and every one needs a sample", s->name, s->n_inputs, ng);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ng; i++) {
        const bd_value *v = bd_graph_input(g, i);
        const bd_warmup_input *in = NULL;
        for (int k = 0; k < s->n_inputs && !in; k++)
            if (!strcmp(s->inputs[k].name, v->name))
                in = &s->inputs[k];
        if (!in) {
            rc = bd_error_set(err, BD_EINVAL, "model_warmup '%s': no sample for the model's input "
                              "'%s'", s->name, v->name);
            break;
        }
        char what[512];
        snprintf(what, sizeof what, "model_warmup '%s': input '%s'", s->name, in->name);
        if (in->dtype != v->dtype) {
            rc = bd_error_set(err, BD_EINVAL, "%s: data_type %s, but the model takes %s", what,
                              bd_dtype_name(in->dtype), bd_dtype_name(v->dtype));
            break;
        }
        int lead = max_batch > 0 ? 1 : 0;
        int rank = in->rank + lead;
        if (v->shape.rank >= 0 && v->shape.rank != rank) {
            rc = bd_error_set(err, BD_EINVAL, "%s: %d dims%s, but the model's input has rank %d",
                              what, in->rank, lead ? " plus the batch dim" : "", v->shape.rank);
            break;
        }
        DLTensor *t = &out[i];
        memset(t, 0, sizeof *t);
        *n = i + 1;
        t->shape = calloc((size_t)rank + 1, sizeof *t->shape);
        if (!t->shape || !bd_dtype_to_dl(v->dtype, &t->dtype)) {
            rc = t->shape ? bd_error_set(err, BD_EUNSUPPORTED, "%s: dtype %s", what, bd_dtype_name(v->dtype))
                          : bd_error_set(err, BD_ENOMEM, "out of memory");
            break;
        }
        if (lead)
            t->shape[0] = s->batch_size;
        for (int d = 0; d < in->rank; d++)
            t->shape[lead + d] = in->dims[d];
        /* one sample's bytes, then the batch, bounded without overflow */
        size_t es = bd_dtype_size(v->dtype), one = es;
        for (int d = 0; d < in->rank && rc == 0; d++)
            if (in->dims[d] && one > BD_WARMUP_MAX_INPUT_BYTES / (size_t)in->dims[d])
                rc = 1;
            else
                one *= (size_t)in->dims[d];
        if (rc || one > BD_WARMUP_MAX_INPUT_BYTES / (size_t)s->batch_size) {
            rc = bd_error_set(err, BD_EINVAL, "%s: more than %u MiB", what,
                              BD_WARMUP_MAX_INPUT_BYTES >> 20);
            break;
        }
        for (int d = 0; v->shape.rank >= 0 && d < rank && rc == 0; d++)
            if (v->shape.dims[d] >= 0 && v->shape.dims[d] != t->shape[d])
                rc = bd_error_set(err, BD_EINVAL, "%s: dim %d is %lld, the model's is %lld", what,
                                  d, (long long)t->shape[d], (long long)v->shape.dims[d]);
        if (rc)
            break;
        size_t bytes = one * (size_t)s->batch_size;
        size_t rounded = bytes ? (bytes + 63) & ~(size_t)63 : 64;
        t->data = aligned_alloc(64, rounded);
        if (!t->data) {
            rc = bd_error_set(err, BD_ENOMEM, "%s: out of memory for %zu bytes", what, bytes);
            break;
        }
        t->device = (DLDevice){ kDLCPU, 0 };
        t->ndim = rank;
        memset(t->data, 0, bytes);
        if (in->data == BD_WARMUP_RANDOM)
            fill_random(t->data, v->dtype, one / es, 0x5eed0000u + i);
        else if (in->data == BD_WARMUP_FILE)
            rc = read_file(model_dir, in->file, t->data, one, what, err);
        /* the batch repeats the sample (Triton duplicates it) */
        for (int b = 1; rc == 0 && b < s->batch_size; b++)
            memcpy((char *)t->data + (size_t)b * one, t->data, one);
    }
    if (rc) {
        bd_warmup_tensors_free(out, *n);
        *n = 0;
    }
    return rc;
}
