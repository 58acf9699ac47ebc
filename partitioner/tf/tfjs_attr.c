/* TF.js model.json attributes: AttrValue / TensorProto / TensorShapeProto in protobuf's JSON
 * form ({"type":"DT_FLOAT"}, {"i":"3"}, {"s":"<base64>"}, {"list":{"i":["1","2"]}}, ...). */
#include "partitioner/tf/tfjs_internal.h"

#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cJSON *tfjs_member(const cJSON *o, const char *key, const char *snake)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return j ? j : snake ? cJSON_GetObjectItemCaseSensitive(o, snake) : NULL;
}

bool tfjs_int(const cJSON *j, int64_t *out)
{
    if (cJSON_IsNumber(j)) {
        if (!(fabs(j->valuedouble) < 9.2e18))
            return false;
        *out = (int64_t)j->valuedouble;
        return (double)*out == j->valuedouble;
    }
    if (!cJSON_IsString(j) || !j->valuestring[0])
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(j->valuestring, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

static bool json_float(const cJSON *j, float *out)
{
    if (cJSON_IsNumber(j)) {
        *out = (float)j->valuedouble;
        return true;
    }
    if (!cJSON_IsString(j))              /* protobuf JSON spells the specials as strings */
        return false;
    if (strcmp(j->valuestring, "NaN") == 0)
        *out = NAN;
    else if (strcmp(j->valuestring, "Infinity") == 0)
        *out = INFINITY;
    else if (strcmp(j->valuestring, "-Infinity") == 0)
        *out = -INFINITY;
    else {
        char *end;
        *out = strtof(j->valuestring, &end);
        return *end == '\0' && j->valuestring[0];
    }
    return true;
}

static bool json_type(const cJSON *j, int *out)
{
    int64_t v;
    if (cJSON_IsString(j) && (*out = tf_dtype_from_name(j->valuestring)) >= 0)
        return true;
    if (tfjs_int(j, &v) && v >= 0 && v < 1000) {
        *out = (int)v;
        return true;
    }
    return false;
}

int tfjs_base64(bd_graph *g, const cJSON *j, tf_bytes *out, const char *what, bd_error *err)
{
    if (!cJSON_IsString(j))
        return bd_error_set(err, BD_EMODEL, "%s: expected a base64 string", what);
    const char *s = j->valuestring;
    size_t n = strlen(s);
    if (n % 4 || n > INT32_MAX)
        return bd_error_set(err, BD_EMODEL, "%s: '%.40s' is not base64", what, s);
    uint8_t *p = bd_graph_alloc(g, n / 4 * 3 + 1);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
    int k = n ? EVP_DecodeBlock(p, (const unsigned char *)s, (int)n) : 0;
    if (k < 0)
        return bd_error_set(err, BD_EMODEL, "%s: '%.40s' is not base64", what, s);
    /* EVP_DecodeBlock counts the bytes '=' padding stands for; drop them. */
    size_t pad = (n && s[n - 1] == '=') + (n > 1 && s[n - 2] == '=');
    out->p = p;
    out->n = (size_t)k - pad;
    return 0;
}

int tfjs_shape(const cJSON *j, bd_shape *s, const char *what, bd_error *err)
{
    memset(s, 0, sizeof *s);
    if (!cJSON_IsObject(j))
        return bd_error_set(err, BD_EMODEL, "%s: a shape must be an object", what);
    if (cJSON_IsTrue(tfjs_member(j, "unknownRank", "unknown_rank"))) {
        s->rank = -1;
        return 0;
    }
    const cJSON *dims = tfjs_member(j, "dim", NULL);
    if (dims && !cJSON_IsArray(dims))
        return bd_error_set(err, BD_EMODEL, "%s: shape.dim must be an array", what);
    int n = dims ? cJSON_GetArraySize(dims) : 0;
    if (n > BD_MAX_RANK)
        return bd_error_set(err, BD_EUNSUPPORTED, "%s: rank %d exceeds braid's maximum of %d",
                            what, n, BD_MAX_RANK);
    s->rank = n;
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, dims) {
        const cJSON *size = tfjs_member(d, "size", NULL);
        int64_t v = 0;                 /* protobuf JSON omits zero values */
        if (size && !tfjs_int(size, &v))
            return bd_error_set(err, BD_EMODEL, "%s: dim %d: size is not an integer", what, i);
        if (v < -1)
            return bd_error_set(err, BD_EMODEL, "%s: dim %d is %lld (expected >= -1)", what, i,
                                (long long)v);
        s->dims[i++] = v;
    }
    return 0;
}

/* Elements of the array member KEY/SNAKE of J (NULL, 0 when absent). */
static const cJSON *array_of(const cJSON *j, const char *key, const char *snake, int *n)
{
    const cJSON *a = tfjs_member(j, key, snake);
    *n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    return *n ? a : NULL;
}

/* Pool room for N elements of ESIZE (NULL for N == 0, or when the size overflows). */
static void *pool(bd_graph *g, size_t n, size_t esize)
{
    return n && n <= SIZE_MAX / esize ? bd_graph_alloc(g, n * esize) : NULL;
}

/* A TensorProto in JSON: dtype, shape and inline values (a Const's weights come from the
 * manifest instead; see tfjs_import.c). */
static int tensor(bd_graph *g, const cJSON *j, tf_tensor *t, const char *what, bd_error *err)
{
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(j))
        return bd_error_set(err, BD_EMODEL, "%s: a tensor must be an object", what);
    const cJSON *dt = tfjs_member(j, "dtype", NULL);
    if (dt && !json_type(dt, &t->tf_dtype))
        return bd_error_set(err, BD_EMODEL, "%s: unknown dtype", what);
    t->dtype = tf_dtype_to_bd(t->tf_dtype);
    const cJSON *sh = tfjs_member(j, "tensorShape", "tensor_shape");
    int rc = sh ? tfjs_shape(sh, &t->shape, what, err) : 0;
    if (rc)
        return rc;
    if (t->shape.rank < 0)
        return bd_error_set(err, BD_EMODEL, "%s: a tensor of unknown rank", what);
    if (t->dtype == BD_DT_UNDEFINED)
        return 0;                        /* left to the caller: only a Const needs data */
    int64_t numel;
    size_t esize = t->dtype == BD_DT_STRING ? 0 : bd_dtype_size(t->dtype);
    if ((rc = tf_shape_size(what, &t->shape, esize, &numel, &t->nbytes, err)))
        return rc;
    const cJSON *content = tfjs_member(j, "tensorContent", "tensor_content");
    if (content) {
        tf_bytes b;
        if ((rc = tfjs_base64(g, content, &b, what, err)))
            return rc;
        if (b.n != t->nbytes)
            return bd_error_set(err, BD_EMODEL, "%s: tensorContent holds %zu bytes, the shape "
                                "needs %zu", what, b.n, t->nbytes);
        t->data = b.p;
        return 0;
    }
    static const struct { int dtype; const char *key, *snake; } fields[] = {
        { BD_DT_FLOAT, "floatVal", "float_val" },   { BD_DT_DOUBLE, "doubleVal", "double_val" },
        { BD_DT_INT32, "intVal", "int_val" },       { BD_DT_INT16, "intVal", "int_val" },
        { BD_DT_INT8, "intVal", "int_val" },        { BD_DT_UINT8, "intVal", "int_val" },
        { BD_DT_UINT16, "intVal", "int_val" },      { BD_DT_INT64, "int64Val", "int64_val" },
        { BD_DT_BOOL, "boolVal", "bool_val" },      { BD_DT_FLOAT16, "halfVal", "half_val" },
        { BD_DT_BFLOAT16, "halfVal", "half_val" },  { BD_DT_UINT32, "uint32Val", "uint32_val" },
        { BD_DT_UINT64, "uint64Val", "uint64_val" }, { BD_DT_STRING, "stringVal", "string_val" },
    };
    const cJSON *vals = NULL;
    int k = 0;
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
        if (fields[f].dtype == t->dtype)
            vals = array_of(j, fields[f].key, fields[f].snake, &k);
    if (!vals) {
        /* No inline values: a Const takes its weight from the manifest (tfjs_import.c), and
         * any other tensor means zeros, which TensorFlow reads from the same empty proto. */
        t->nbytes = 0;
        return 0;
    }
    if ((int64_t)k > numel)
        return bd_error_set(err, BD_EMODEL, "%s: %d values for %lld elements", what, k,
                            (long long)numel);
    if (t->dtype == BD_DT_STRING) {
        const cJSON *last = cJSON_GetArrayItem(vals, k - 1);
        size_t last_len = cJSON_IsString(last) ? strlen(last->valuestring) / 4 * 3 : 0;
        if ((rc = tf_check_expand(g, what, (uint64_t)numel, (uint64_t)k, sizeof *t->strings,
                                  last_len, err)))
            return rc;
        t->n_strings = (size_t)numel;
        t->strings = pool(g, t->n_strings, sizeof *t->strings);
        if (numel && !t->strings)
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, vals)
            if ((rc = tfjs_base64(g, e, &t->strings[i++], what, err)))
                return rc;
        for (size_t e2 = (size_t)k; k && e2 < t->n_strings; e2++)
            t->strings[e2] = t->strings[k - 1];
        return 0;
    }
    if ((rc = tf_check_expand(g, what, (uint64_t)numel, (uint64_t)k, esize, 0, err)))
        return rc;
    uint8_t *p = pool(g, (size_t)numel, esize);
    if (numel && !p)
        return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
    /* The K values given, each converted once; then the last one repeated by copying. */
    const cJSON *x = vals->child;
    for (int64_t e = 0; e < k; e++, x = x->next) {
        uint8_t *q = p + (size_t)e * esize;
        int64_t iv = 0;
        float fv = 0;
        bool ok = true;
        switch (t->dtype) {
        case BD_DT_FLOAT:  ok = json_float(x, &fv); memcpy(q, &fv, 4); break;
        case BD_DT_DOUBLE: { double d = cJSON_IsNumber(x) ? x->valuedouble : 0; memcpy(q, &d, 8); ok = cJSON_IsNumber(x); break; }
        case BD_DT_BOOL:   ok = cJSON_IsBool(x); *q = cJSON_IsTrue(x); break;
        default:
            ok = tfjs_int(x, &iv);
            memcpy(q, &iv, esize);       /* little-endian: the low bytes */
            break;
        }
        if (!ok)
            return bd_error_set(err, BD_EMODEL, "%s: value %lld is not a %s", what, (long long)e,
                                bd_dtype_name(t->dtype));
    }
    tf_fill_repeat(p, (size_t)k, (size_t)numel, esize);
    t->data = p;
    return 0;
}

static int list(bd_graph *g, const cJSON *j, tf_list *l, const char *what, bd_error *err)
{
    memset(l, 0, sizeof *l);
    if (!cJSON_IsObject(j))
        return bd_error_set(err, BD_EMODEL, "%s: list must be an object", what);
    int n, i, rc;
    const cJSON *a, *e;
    if ((a = array_of(j, "s", NULL, &n))) {
        if (!(l->s = pool(g, (size_t)n, sizeof *l->s)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            if ((rc = tfjs_base64(g, e, &l->s[i++], what, err)))
                return rc;
        l->n_s = (size_t)n;
    }
    if ((a = array_of(j, "i", NULL, &n))) {
        if (!(l->i = pool(g, (size_t)n, sizeof *l->i)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            if (!tfjs_int(e, &l->i[i++]))
                return bd_error_set(err, BD_EMODEL, "%s: list.i holds a non-integer", what);
        l->n_i = (size_t)n;
    }
    if ((a = array_of(j, "f", NULL, &n))) {
        if (!(l->f = pool(g, (size_t)n, sizeof *l->f)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            if (!json_float(e, &l->f[i++]))
                return bd_error_set(err, BD_EMODEL, "%s: list.f holds a non-number", what);
        l->n_f = (size_t)n;
    }
    if ((a = array_of(j, "b", NULL, &n))) {
        if (!(l->b = pool(g, (size_t)n, sizeof *l->b)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            l->b[i++] = cJSON_IsTrue(e);
        l->n_b = (size_t)n;
    }
    if ((a = array_of(j, "type", NULL, &n))) {
        if (!(l->type = pool(g, (size_t)n, sizeof *l->type)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            if (!json_type(e, &l->type[i++]))
                return bd_error_set(err, BD_EMODEL, "%s: list.type holds an unknown dtype", what);
        l->n_type = (size_t)n;
    }
    if ((a = array_of(j, "shape", NULL, &n))) {
        if (!(l->shape = pool(g, (size_t)n, sizeof *l->shape)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            if ((rc = tfjs_shape(e, &l->shape[i++], what, err)))
                return rc;
        l->n_shape = (size_t)n;
    }
    if ((a = array_of(j, "tensor", NULL, &n))) {
        if (!(l->tensor = pool(g, (size_t)n, sizeof *l->tensor)))
            return bd_error_set(err, BD_ENOMEM, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, a)
            if ((rc = tensor(g, e, &l->tensor[i++], what, err)))
                return rc;
        l->n_tensor = (size_t)n;
    }
    return 0;
}

int tfjs_attr(bd_graph *g, const cJSON *j, tf_attr *a, const char *what, bd_error *err)
{
    const cJSON *v;
    a->kind = TF_ATTR_NONE;
    if (!cJSON_IsObject(j))
        return bd_error_set(err, BD_EMODEL, "%s: an attr value must be an object", what);
    if ((v = tfjs_member(j, "list", NULL))) {
        a->kind = TF_ATTR_LIST;
        return list(g, v, &a->list, what, err);
    }
    if ((v = tfjs_member(j, "tensor", NULL))) {
        a->kind = TF_ATTR_TENSOR;
        return tensor(g, v, &a->tensor, what, err);
    }
    if ((v = tfjs_member(j, "shape", NULL))) {
        a->kind = TF_ATTR_SHAPE;
        return tfjs_shape(v, &a->shape, what, err);
    }
    if ((v = tfjs_member(j, "s", NULL))) {
        a->kind = TF_ATTR_S;
        return tfjs_base64(g, v, &a->s, what, err);
    }
    if ((v = tfjs_member(j, "i", NULL))) {
        a->kind = TF_ATTR_I;
        return tfjs_int(v, &a->i) ? 0 : bd_error_set(err, BD_EMODEL, "%s: i is not an integer", what);
    }
    if ((v = tfjs_member(j, "f", NULL))) {
        a->kind = TF_ATTR_F;
        return json_float(v, &a->f) ? 0 : bd_error_set(err, BD_EMODEL, "%s: f is not a number", what);
    }
    if ((v = tfjs_member(j, "b", NULL))) {
        a->kind = TF_ATTR_B;
        a->b = cJSON_IsTrue(v);
        return cJSON_IsBool(v) ? 0 : bd_error_set(err, BD_EMODEL, "%s: b is not a boolean", what);
    }
    if ((v = tfjs_member(j, "type", NULL))) {
        a->kind = TF_ATTR_TYPE;
        return json_type(v, &a->type) ? 0 : bd_error_set(err, BD_EMODEL, "%s: unknown type", what);
    }
    if (tfjs_member(j, "func", NULL) || tfjs_member(j, "placeholder", NULL))
        a->kind = TF_ATTR_OTHER;
    return 0;
}
