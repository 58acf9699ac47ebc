/* TF.js weights: the weightsManifest's groups of shard files, read as one concatenation per
 * group, each weight a run of bytes in it. Shards are read (confined to the model's
 * directory: model_file.h) into memory handed to the graph, so a float32 weight is a pointer
 * into its shard; only a weight that straddles two shards is copied. Quantized (uint8/uint16 affine) and float16 weights are dequantized to
 * float32 once, at load, into the graph's pool. */
#include "partitioner/tf/tfjs_internal.h"
#include "core/model_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct shard {
    const uint8_t *p;
    size_t         n;
} shard;

/* The shard files read so far, by identity: a file listed twice (under any name) would let
 * the manifest count its bytes again and again. */
typedef struct shard_ids {
    struct { uint64_t dev, ino; } v[BD_MAX_MODEL_FILES];
    size_t n;
} shard_ids;

/* Read DIR/PATH (a shard named by the model: relative, resolving inside DIR). */
static int read_shard(bd_graph *g, const char *dir, const char *path, shard_ids *ids, shard *s,
                      bd_error *err)
{
    if (ids->n >= BD_MAX_MODEL_FILES)
        return bd_error_set(err, BD_EMODEL, "weight shard '%s': the model names more than %d "
                            "shards", path, BD_MAX_MODEL_FILES);
    int fd;
    int rc = bd_model_file_open_in(dir, path, "weight shard", 0, &fd, NULL, err);
    if (rc)
        return rc;
    struct stat st;
    if (fstat(fd, &st) != 0)
        rc = bd_error_set(err, BD_EIO, "weight shard '%s': cannot stat", path);
    for (size_t i = 0; rc == 0 && i < ids->n; i++)
        if (ids->v[i].dev == (uint64_t)st.st_dev && ids->v[i].ino == (uint64_t)st.st_ino)
            rc = bd_error_set(err, BD_EMODEL, "weight shard '%s' is listed twice in "
                              "weightsManifest (or is another name for an earlier shard)", path);
    void *data = NULL;
    size_t n = 0;
    if (rc == 0 && (rc = bd_model_file_read_fd(fd, path, &data, &n, err)))
        bd_error_prefix(err, "weight shard: ");
    close(fd);
    if (rc)
        return rc;
    ids->v[ids->n].dev = (uint64_t)st.st_dev;
    ids->v[ids->n++].ino = (uint64_t)st.st_ino;
    if (bd_graph_adopt_buffer(g, data))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    s->p = data;
    s->n = n;
    return 0;
}

/* Bytes [OFF, OFF+N) of the concatenated SHARDS: in place when inside one shard, else a
 * pool copy. */
static const uint8_t *bytes_at(bd_graph *g, const shard *shards, size_t n_shards, size_t off,
                               size_t n)
{
    size_t base = 0;
    for (size_t i = 0; i < n_shards; i++) {
        if (off >= base && off - base < shards[i].n) {
            if (n <= shards[i].n - (off - base))
                return shards[i].p + (off - base);
            break;
        }
        base += shards[i].n;
    }
    uint8_t *p = bd_graph_alloc(g, n ? n : 1);
    if (!p)
        return NULL;
    size_t done = 0;
    base = 0;
    for (size_t i = 0; i < n_shards && done < n; i++) {
        size_t lo = off + done;
        if (lo < base + shards[i].n && lo >= base) {
            size_t k = shards[i].n - (lo - base);
            if (k > n - done)
                k = n - done;
            memcpy(p + done, shards[i].p + (lo - base), k);
            done += k;
        }
        base += shards[i].n;
    }
    return p;
}

static int dtype_of(const char *s)
{
    if (strcmp(s, "float32") == 0) return TF_DT_FLOAT;
    if (strcmp(s, "int32") == 0)   return TF_DT_INT32;
    if (strcmp(s, "bool") == 0)    return TF_DT_BOOL;
    if (strcmp(s, "string") == 0)  return TF_DT_STRING;
    if (strcmp(s, "int64") == 0)   return TF_DT_INT64;
    return -1;
}

/* One weight at *OFF of the group (TOTAL bytes); advances *OFF. */
static int load_weight(bd_graph *g, const cJSON *w, const shard *shards, size_t n_shards,
                       size_t total, size_t *off, tfjs_weight *out, bd_error *err)
{
    const cJSON *name = tfjs_member(w, "name", NULL);
    const cJSON *shape = tfjs_member(w, "shape", NULL);
    const cJSON *dtype = tfjs_member(w, "dtype", NULL);
    if (!cJSON_IsString(name))
        return bd_error_set(err, BD_EMODEL, "weightsManifest: a weight has no name");
    const char *nm = name->valuestring;
    if (!cJSON_IsArray(shape) || !cJSON_IsString(dtype))
        return bd_error_set(err, BD_EMODEL, "weight '%s': needs a shape array and a dtype", nm);
    tf_tensor *t = &out->t;
    memset(t, 0, sizeof *t);
    out->name = bd_graph_strdup(g, nm, (size_t)-1);
    if (!out->name)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    t->tf_dtype = dtype_of(dtype->valuestring);
    if (t->tf_dtype < 0)
        return bd_error_set(err, BD_EUNSUPPORTED, "weight '%s': dtype '%s' is not supported", nm,
                            dtype->valuestring);
    t->dtype = tf_dtype_to_bd(t->tf_dtype);
    int rank = cJSON_GetArraySize(shape);
    if (rank > BD_MAX_RANK)
        return bd_error_set(err, BD_EUNSUPPORTED, "weight '%s': rank %d exceeds %d", nm, rank,
                            BD_MAX_RANK);
    t->shape.rank = rank;
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape)
        if (!tfjs_int(d, &t->shape.dims[i++]))
            return bd_error_set(err, BD_EMODEL, "weight '%s': shape holds a non-integer", nm);
    int64_t numel;
    size_t nbytes;
    char what[300];
    snprintf(what, sizeof what, "weight '%s'", nm);
    int rc = tf_shape_size(what, &t->shape, 1, &numel, &nbytes, err);
    if (rc)
        return rc;

    if (t->dtype == BD_DT_STRING) {
        /* Each element: a uint32 little-endian length, then the bytes. So the shards must
         * hold at least 4 bytes per element: checked before the element table is sized. */
        size_t left = *off <= total ? total - *off : 0;
        if ((uint64_t)numel > left / 4)
            return bd_error_set(err, BD_EMODEL, "%s: %lld strings cannot fit in the %zu bytes the "
                                "shards hold past its offset (4 bytes each at least)", what,
                                (long long)numel, left);
        t->n_strings = (size_t)numel;
        t->strings = numel ? bd_graph_alloc(g, (size_t)numel * sizeof *t->strings) : NULL;
        if (numel && !t->strings)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        for (int64_t e = 0; e < numel; e++) {
            const uint8_t *lp = *off <= total && total - *off >= 4
                                    ? bytes_at(g, shards, n_shards, *off, 4) : NULL;
            if (!lp)
                return bd_error_set(err, BD_EMODEL, "%s: the shards end inside string %lld", what,
                                    (long long)e);
            uint32_t len;
            memcpy(&len, lp, 4);
            *off += 4;
            if (len > total - *off)
                return bd_error_set(err, BD_EMODEL, "%s: string %lld needs %u bytes past the "
                                    "shards' end", what, (long long)e, len);
            t->strings[e] = (tf_bytes){ bytes_at(g, shards, n_shards, *off, len), len };
            if (!t->strings[e].p)
                return bd_error_set(err, BD_ENOMEM, "out of memory");
            *off += len;
        }
        return 0;
    }

    const cJSON *q = tfjs_member(w, "quantization", NULL);
    const char *qtype = NULL;
    size_t esize = bd_dtype_size(t->dtype);
    if (q) {
        const cJSON *qt = tfjs_member(q, "dtype", NULL);
        qtype = cJSON_IsString(qt) ? qt->valuestring : "";
        if (strcmp(qtype, "uint8") == 0)
            esize = 1;
        else if (strcmp(qtype, "uint16") == 0 || strcmp(qtype, "float16") == 0)
            esize = 2;
        else
            return bd_error_set(err, BD_EUNSUPPORTED, "%s: quantization dtype '%s' is not "
                                "supported (uint8, uint16, float16)", what, qtype);
        if (strcmp(qtype, "float16") == 0 ? t->dtype != BD_DT_FLOAT
                                          : t->dtype != BD_DT_FLOAT && t->dtype != BD_DT_INT32)
            return bd_error_set(err, BD_EUNSUPPORTED, "%s: %s weights quantized as %s", what,
                                dtype->valuestring, qtype);
    }
    if ((size_t)numel > SIZE_MAX / esize)
        return bd_error_set(err, BD_EMODEL, "%s: the byte size overflows", what);
    size_t need = (size_t)numel * esize;
    if (*off > total || need > total - *off)
        return bd_error_set(err, BD_EMODEL, "%s: needs bytes %zu..%zu of its group, the shards "
                            "hold only %zu (a shard is missing or too short)", what, *off,
                            *off + need, total);
    const uint8_t *src = bytes_at(g, shards, n_shards, *off, need);
    if (!src)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    *off += need;
    t->nbytes = (size_t)numel * bd_dtype_size(t->dtype);
    if (!qtype) {
        t->data = src;
        return 0;
    }
    /* Dequantize: float16 -> float32; uint8/uint16 affine: q * scale + min. */
    void *dst = bd_graph_alloc(g, t->nbytes ? t->nbytes : 1);
    if (!dst)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    if (strcmp(qtype, "float16") == 0) {
        for (int64_t e = 0; e < numel; e++) {
            uint16_t h;
            memcpy(&h, src + 2 * e, 2);
            ((float *)dst)[e] = tf_half_to_float(h);
        }
    } else {
        const cJSON *sc = tfjs_member(q, "scale", NULL), *mn = tfjs_member(q, "min", NULL);
        if (!cJSON_IsNumber(sc) || !cJSON_IsNumber(mn))
            return bd_error_set(err, BD_EMODEL, "%s: %s quantization needs numeric scale and min",
                                what, qtype);
        float scale = (float)sc->valuedouble, min = (float)mn->valuedouble;
        for (int64_t e = 0; e < numel; e++) {
            uint32_t v = esize == 1 ? src[e] : (uint32_t)(src[2 * e] | src[2 * e + 1] << 8);
            float f = (float)v * scale + min;
            if (t->dtype == BD_DT_FLOAT)
                ((float *)dst)[e] = f;
            else
                ((int32_t *)dst)[e] = (int32_t)lrintf(f);
        }
    }
    t->data = dst;
    return 0;
}

int tfjs_weights_load(bd_graph *g, const char *dir, const cJSON *manifest, tfjs_weight **out,
                      size_t *n_out, bd_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (!manifest)
        return 0;
    if (!cJSON_IsArray(manifest))
        return bd_error_set(err, BD_EMODEL, "weightsManifest must be an array");
    size_t total_weights = 0;
    const cJSON *grp;
    cJSON_ArrayForEach(grp, manifest) {
        const cJSON *ws = tfjs_member(grp, "weights", NULL);
        if (!cJSON_IsArray(ws) || !cJSON_IsArray(tfjs_member(grp, "paths", NULL)))
            return bd_error_set(err, BD_EMODEL, "weightsManifest: each group needs 'paths' and "
                                "'weights' arrays");
        total_weights += (size_t)cJSON_GetArraySize(ws);
    }
    tfjs_weight *w = total_weights ? calloc(total_weights, sizeof *w) : NULL;
    shard_ids *ids = calloc(1, sizeof *ids);
    if ((total_weights && !w) || !ids) {
        free(w);
        free(ids);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    size_t k = 0;
    int rc = 0;
    cJSON_ArrayForEach(grp, manifest) {
        const cJSON *paths = tfjs_member(grp, "paths", NULL);
        size_t n_shards = (size_t)cJSON_GetArraySize(paths), total = 0, off = 0;
        shard *shards = calloc(n_shards ? n_shards : 1, sizeof *shards);
        if (!shards) {
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
            break;
        }
        size_t i = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, paths) {
            if (!cJSON_IsString(p))
                rc = bd_error_set(err, BD_EMODEL, "weightsManifest: a shard path is not a string");
            else
                rc = read_shard(g, dir, p->valuestring, ids, &shards[i], err);
            if (rc)
                break;
            total += shards[i++].n;
        }
        const cJSON *wj;
        cJSON_ArrayForEach(wj, tfjs_member(grp, "weights", NULL)) {
            if (rc)
                break;
            rc = load_weight(g, wj, shards, n_shards, total, &off, &w[k++], err);
        }
        free(shards);
        if (rc)
            break;
    }
    free(ids);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    *n_out = k;
    return 0;
}
