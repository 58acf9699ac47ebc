/* REST infer bodies <-> the neutral request and answer (rest_infer.h). */
#include "daemon/rest/rest_infer.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/json_text.h"
#include "core/ir/dtype.h"
#include "core/ir/graph.h"

void bd_rest_outputs_free(bd_rest_outputs *o)
{
    if (!o)
        return;
    free(o->binary);
    free(o->shm);
    *o = (bd_rest_outputs){0};
}

/* ---- bounding the JSON text ------------------------------------------------------------ */

int bd_rest_json_check(const char *text, size_t len, size_t max_values, int max_depth,
                       bd_error *err)
{
    long nul = bd_json_find_nul(text, len);
    if (nul >= 0)
        return bd_error_set(err, BD_EINVAL, "the JSON holds a NUL (\\u0000) in a string near byte "
                            "%ld: names, datatypes, ids and parameters must not contain NUL (send "
                            "BYTES holding NUL as binary data)", nul);
    size_t values = 1;              /* n values in a container need n - 1 commas */
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
            continue;
        }
        switch (ch) {
        case '"': in_str = true; break;
        case '[': case '{':
            if (++depth > max_depth)
                return bd_error_set(err, BD_EINVAL, "the JSON nests deeper than %d levels",
                                    max_depth);
            values++;
            break;
        case ']': case '}': depth--; break;
        case ',': values++; break;
        default: break;
        }
        if (values > max_values)
            return bd_error_set(err, BD_EINVAL, "the JSON holds more than %zu values: send large "
                                "tensors as binary data (Triton's binary tensor extension)",
                                max_values);
    }
    return 0;
}

/* ---- the request ----------------------------------------------------------------------- */

/* What one request owns: the views of its neutral request point into it. */
struct bd_rest_request {
    bd_infer_request req;
    char    *model, *version;       /* copies: the route's strings live on the loop's stack */
    cJSON   *root;                  /* names, datatypes, the id (JSON "data" dropped once
                                       converted) */
    char    *body;                  /* binary inputs are views into it (bd_rest_request_adopt) */
    int64_t (*shapes)[BD_MAX_RANK];
    void   **owned;                 /* converted JSON data, one per input (or NULL) */
    size_t   n_in;
};

void bd_rest_request_free(bd_rest_request *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->owned && i < r->n_in; i++)
        free(r->owned[i]);
    free(r->owned);
    free(r->shapes);
    bd_infer_request_free(&r->req);
    cJSON_Delete(r->root);
    free(r->body);
    free(r->model);
    free(r->version);
    free(r);
}

const bd_infer_request *bd_rest_request_get(const bd_rest_request *r)
{
    return &r->req;
}

void bd_rest_request_adopt(bd_rest_request *r, char *body)
{
    r->body = body;
}

static const char *json_name(const cJSON *o, const char *what, size_t i, char *buf, size_t n)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (cJSON_IsString(name))
        return name->valuestring;
    snprintf(buf, n, "%s %zu", what, i);
    return buf;
}

/* Leaves of a (nested) JSON array, counted before anything is allocated for them. */
static int count_leaves(const cJSON *a, size_t *n, const char *name, bd_error *err)
{
    if (!cJSON_IsArray(a)) {
        (*n)++;
        return 0;
    }
    for (const cJSON *e = a->child; e; e = e->next)
        if (count_leaves(e, n, name, err))
            return BD_EINVAL;
    return 0;
}

typedef struct fill_ctx {
    int         dtype;
    uint8_t    *out;
    size_t      k;                  /* elements written */
    const char *name;
} fill_ctx;

static int bad_value(const fill_ctx *f, const char *why, bd_error *err)
{
    return bd_error_set(err, BD_EINVAL, "input '%s': element %zu %s", f->name, f->k, why);
}

/* One JSON leaf into f->out as its datatype. */
static int put_value(fill_ctx *f, const cJSON *v, bd_error *err)
{
    if (f->dtype == BD_DT_BOOL) {
        if (!cJSON_IsBool(v))
            return bad_value(f, "is not true or false (datatype BOOL)", err);
        f->out[f->k++] = cJSON_IsTrue(v) ? 1 : 0;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return bad_value(f, "is not a number", err);
    double d = v->valuedouble;
    size_t es = bd_dtype_size(f->dtype);
    uint8_t *p = f->out + f->k * es;
    if (f->dtype == BD_DT_FLOAT) {
        float x = (float)d;
        memcpy(p, &x, 4);
    } else if (f->dtype == BD_DT_DOUBLE) {
        memcpy(p, &d, 8);
    } else {
        double lo, hi;
        switch (f->dtype) {
        case BD_DT_INT8:   lo = INT8_MIN;  hi = INT8_MAX;  break;
        case BD_DT_INT16:  lo = INT16_MIN; hi = INT16_MAX; break;
        case BD_DT_INT32:  lo = INT32_MIN; hi = INT32_MAX; break;
        case BD_DT_INT64:  lo = -9223372036854775808.0; hi = 9223372036854774784.0; break;
        case BD_DT_UINT8:  lo = 0; hi = UINT8_MAX;  break;
        case BD_DT_UINT16: lo = 0; hi = UINT16_MAX; break;
        case BD_DT_UINT32: lo = 0; hi = UINT32_MAX; break;
        default:           lo = 0; hi = 18446744073709549568.0; break;   /* UINT64 */
        }
        if (!(d >= lo && d <= hi) || d != floor(d))
            return bad_value(f, "is not an integer in the datatype's range", err);
        switch (f->dtype) {
        case BD_DT_INT8:   { int8_t x = (int8_t)d;     memcpy(p, &x, 1); break; }
        case BD_DT_INT16:  { int16_t x = (int16_t)d;   memcpy(p, &x, 2); break; }
        case BD_DT_INT32:  { int32_t x = (int32_t)d;   memcpy(p, &x, 4); break; }
        case BD_DT_INT64:  { int64_t x = (int64_t)d;   memcpy(p, &x, 8); break; }
        case BD_DT_UINT8:  { uint8_t x = (uint8_t)d;   memcpy(p, &x, 1); break; }
        case BD_DT_UINT16: { uint16_t x = (uint16_t)d; memcpy(p, &x, 2); break; }
        case BD_DT_UINT32: { uint32_t x = (uint32_t)d; memcpy(p, &x, 4); break; }
        default:           { uint64_t x = (uint64_t)d; memcpy(p, &x, 8); break; }
        }
    }
    f->k++;
    return 0;
}

static int fill_values(fill_ctx *f, const cJSON *a, bd_error *err)
{
    if (!cJSON_IsArray(a))
        return put_value(f, a, err);
    for (const cJSON *e = a->child; e; e = e->next)
        if (fill_values(f, e, err))
            return BD_EINVAL;
    return 0;
}

/* BYTES: every leaf a string; *BYTES is their raw size (4-byte length + bytes each). */
static int bytes_size(const cJSON *a, const char *name, size_t *bytes, bd_error *err)
{
    if (!cJSON_IsArray(a)) {
        if (!cJSON_IsString(a))
            return bd_error_set(err, BD_EINVAL, "input '%s': a BYTES element is not a string", name);
        size_t n = strlen(a->valuestring);
        if (n > UINT32_MAX || __builtin_add_overflow(*bytes, 4 + n, bytes))
            return bd_error_set(err, BD_EINVAL, "input '%s': too many bytes", name);
        return 0;
    }
    for (const cJSON *e = a->child; e; e = e->next)
        if (bytes_size(e, name, bytes, err))
            return BD_EINVAL;
    return 0;
}

static void bytes_fill(const cJSON *a, uint8_t **p)
{
    if (!cJSON_IsArray(a)) {
        uint32_t n = (uint32_t)strlen(a->valuestring);
        uint8_t le[4] = { (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24) };
        memcpy(*p, le, 4);
        memcpy(*p + 4, a->valuestring, n);
        *p += 4 + n;
        return;
    }
    for (const cJSON *e = a->child; e; e = e->next)
        bytes_fill(e, p);
}

/* A JSON integer parameter (binary_data_size, classification) into *V: false if not one. */
static bool json_u64(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0 ||
        v->valuedouble != floor(v->valuedouble))
        return false;
    *out = (uint64_t)v->valuedouble;
    return true;
}

#define SHM_PARAMS 3                /* shared_memory_region, _byte_size, _offset */
#define OUT_PARAMS (SHM_PARAMS + 1) /* and classification */

static bool is_shm_key(const char *key)
{
    return !strcmp(key, "shared_memory_region") || !strcmp(key, "shared_memory_byte_size") ||
           !strcmp(key, "shared_memory_offset");
}

/* JSON parameter P (a shared_memory_* one) of WHAT into SHM. */
static int shm_param(const cJSON *p, const char *what, bd_infer_shm_ref *shm, bd_error *err)
{
    if (!strcmp(p->string, "shared_memory_region")) {
        if (!cJSON_IsString(p))
            return bd_error_set(err, BD_EINVAL, "%s: shared_memory_region must be a string", what);
        shm->region = p->valuestring;
        return 0;
    }
    uint64_t n;
    if (!json_u64(p, &n))
        return bd_error_set(err, BD_EINVAL, "%s: %.32s must be a non-negative integer", what,
                            p->string);
    if (!strcmp(p->string, "shared_memory_byte_size")) {
        shm->size = n;                                  /* <= 2^53 */
        shm->has_size = true;
    } else {
        shm->offset = n;
    }
    return 0;
}

/* One input: name, datatype, shape, and its bytes (binary, from *BIN, JSON "data", or shared
 * memory). */
static int bind_input(bd_rest_request *b, size_t i, cJSON *in, const uint8_t **bin,
                      size_t *bin_left, bd_error *err)
{
    char nb[32];
    const char *name = json_name(in, "input", i, nb, sizeof nb);
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(in, "name");
    const cJSON *jtype = cJSON_GetObjectItemCaseSensitive(in, "datatype");
    const cJSON *jshape = cJSON_GetObjectItemCaseSensitive(in, "shape");
    const cJSON *jdata = cJSON_GetObjectItemCaseSensitive(in, "data");
    const cJSON *jparams = cJSON_GetObjectItemCaseSensitive(in, "parameters");
    if (!cJSON_IsObject(in) || !cJSON_IsString(jname))
        return bd_error_set(err, BD_EINVAL, "%s: expected an object with \"name\", \"datatype\", "
                            "\"shape\" and \"data\" (or parameters.binary_data_size)", name);
    if (!cJSON_IsString(jtype))
        return bd_error_set(err, BD_EINVAL, "input '%s': \"datatype\" must be a string such as "
                            "\"FP32\"", name);
    if (!cJSON_IsArray(jshape))
        return bd_error_set(err, BD_EINVAL, "input '%s': \"shape\" must be an array of dims", name);
    int dtype = bd_dtype_from_name(jtype->valuestring);
    if (!strcmp(jtype->valuestring, "BYTES"))
        dtype = BD_DT_STRING;
    if (dtype == BD_DT_UNDEFINED)
        return bd_error_set(err, BD_EINVAL, "input '%s': unknown datatype \"%.32s\"", name,
                            jtype->valuestring);
    bd_infer_input *t = &b->req.inputs[i];
    t->name = jname->valuestring;
    t->datatype = jtype->valuestring;
    t->shape = b->shapes[i];
    uint64_t numel = 1;
    int rank = 0;
    for (const cJSON *d = jshape->child; d; d = d->next, rank++) {
        uint64_t v;
        if (rank >= BD_MAX_RANK)
            return bd_error_set(err, BD_EINVAL, "input '%s': more than %d dims", name, BD_MAX_RANK);
        if (!json_u64(d, &v) || v > INT64_MAX)
            return bd_error_set(err, BD_EINVAL, "input '%s': dim %d is not a non-negative integer",
                                name, rank);
        b->shapes[i][rank] = (int64_t)v;
        if (__builtin_mul_overflow(numel, v ? v : 1, &numel) || numel > (uint64_t)INT64_MAX)
            return bd_error_set(err, BD_EINVAL, "input '%s': the shape holds too many elements", name);
    }
    t->rank = (size_t)rank;
    numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= (uint64_t)b->shapes[i][d];                 /* checked above */

    if (cJSON_IsObject(jparams) && cJSON_GetObjectItemCaseSensitive(jparams, "shared_memory_region")) {
        char what[96];
        snprintf(what, sizeof what, "input '%.64s'", name);
        if (jdata || cJSON_GetObjectItemCaseSensitive(jparams, "binary_data_size"))
            return bd_error_set(err, BD_EINVAL, "%s: shared_memory_region with \"data\" or "
                                "binary_data_size: send the tensor one way", what);
        size_t n = 0;
        for (const cJSON *p = jparams->child; p; p = p->next) {
            if (!is_shm_key(p->string))
                continue;
            int rc = shm_param(p, what, &t->shm, err);
            if (rc)
                return rc;
            if (++n == SHM_PARAMS)
                break;
        }
        return 0;           /* region, range and size: infer_bind.c, as for gRPC */
    }
    const cJSON *jsize = cJSON_IsObject(jparams)
                       ? cJSON_GetObjectItemCaseSensitive(jparams, "binary_data_size") : NULL;
    if (jsize) {
        uint64_t size;
        if (!json_u64(jsize, &size))
            return bd_error_set(err, BD_EINVAL, "input '%s': binary_data_size must be a "
                                "non-negative integer", name);
        if (jdata)
            return bd_error_set(err, BD_EINVAL, "input '%s': both \"data\" and binary_data_size: "
                                "send one", name);
        if (size > *bin_left)
            return bd_error_set(err, BD_EINVAL, "input '%s': binary_data_size %" PRIu64 " is more "
                                "than the %zu bytes left after the JSON header", name, size,
                                *bin_left);
        t->has_raw = true;
        t->raw = (bd_wire_span){ *bin, (size_t)size };
        *bin += size;
        *bin_left -= (size_t)size;
        return 0;           /* its size against the shape: infer_bind.c, as for gRPC */
    }
    if (!jdata)
        return bd_error_set(err, BD_EINVAL, "input '%s': no \"data\" and no binary_data_size", name);
    if (dtype == BD_DT_FLOAT16 || dtype == BD_DT_BFLOAT16)
        return bd_error_set(err, BD_EINVAL, "input '%s': %s travels as binary data only "
                            "(binary_data_size), not as JSON", name, jtype->valuestring);
    size_t leaves = 0;
    count_leaves(jdata, &leaves, name, err);
    if (leaves != numel)
        return bd_error_set(err, BD_EINVAL, "input '%s': the shape holds %" PRIu64 " elements "
                            "but \"data\" has %zu", name, numel, leaves);
    if (dtype == BD_DT_STRING) {
        size_t bytes = 0;
        if (bytes_size(jdata, name, &bytes, err))
            return BD_EINVAL;
        uint8_t *buf = malloc(bytes ? bytes : 1);
        if (!buf)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        b->owned[i] = buf;
        uint8_t *p = buf;
        bytes_fill(jdata, &p);
        t->has_raw = true;
        t->raw = (bd_wire_span){ buf, bytes };
        cJSON_DeleteItemFromObjectCaseSensitive(in, "data");   /* converted: not kept twice */
        return 0;
    }
    size_t es = bd_dtype_size(dtype);
    uint8_t *buf = malloc(leaves ? leaves * es : 1);   /* leaves <= the values scanned */
    if (!buf)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    b->owned[i] = buf;
    fill_ctx f = { .dtype = dtype, .out = buf, .name = name };
    if (fill_values(&f, jdata, err))
        return BD_EINVAL;
    t->has_raw = true;
    t->raw = (bd_wire_span){ buf, leaves * es };
    cJSON_DeleteItemFromObjectCaseSensitive(in, "data");       /* converted: not kept twice */
    return 0;
}

/* A requested output: its name, classification count and binary_data flag. */
static int bind_output(bd_rest_request *b, size_t k, const cJSON *o, bd_rest_outputs *outs,
                       bd_error *err)
{
    char nb[32];
    const char *name = json_name(o, "output", k, nb, sizeof nb);
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!cJSON_IsObject(o) || !cJSON_IsString(jname))
        return bd_error_set(err, BD_EINVAL, "%s: expected an object with \"name\"", name);
    bd_infer_output *out = &b->req.outputs[k];
    out->name = jname->valuestring;
    outs->binary[k] = outs->binary_all;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(o, "parameters");
    if (!params)
        return 0;
    if (!cJSON_IsObject(params))
        return bd_error_set(err, BD_EINVAL, "output '%s': \"parameters\" must be an object", name);
    bool explicit_binary = false;
    size_t n_params = 0;            /* classification and shared_memory_* ones */
    for (const cJSON *p = params->child; p; p = p->next) {
        if (n_params == OUT_PARAMS &&
            (is_shm_key(p->string) || !strcmp(p->string, "classification")))
            return bd_error_set(err, BD_EINVAL, "output '%s': a parameter is given twice", name);
        if (!strcmp(p->string, "binary_data")) {
            if (!cJSON_IsBool(p))
                return bd_error_set(err, BD_EINVAL, "output '%s': binary_data must be true or "
                                    "false", name);
            outs->binary[k] = cJSON_IsTrue(p);
            explicit_binary = cJSON_IsTrue(p);
        } else if (!strcmp(p->string, "classification")) {
            uint64_t n;
            if (!json_u64(p, &n) || n < 1 || n > UINT32_MAX)
                return bd_error_set(err, BD_EINVAL, "output '%s': classification must be an "
                                    "integer from 1 to %" PRIu32, name, UINT32_MAX);
            out->classify = (uint32_t)n;
            n_params++;
        } else if (is_shm_key(p->string)) {
            char what[96];
            snprintf(what, sizeof what, "output '%.64s'", name);
            n_params++;
            int rc = shm_param(p, what, &out->shm, err);
            if (rc)
                return rc;
            if (!strcmp(p->string, "shared_memory_region"))
                outs->shm[k] = true;
        } else {
            return bd_error_set(err, BD_EINVAL, "output '%s': unknown parameter '%.64s' (braid "
                                "knows 'classification', 'binary_data' and the shared_memory_* "
                                "ones)", name, p->string);
        }
    }
    if (outs->shm[k] && explicit_binary)        /* Triton refuses the pair too */
        return bd_error_set(err, BD_EINVAL, "output '%s': shared_memory_region and binary_data "
                            "true cannot be combined (the bytes go to the region)", name);
    return 0;
}

static int parse_header_length(const char *s, size_t len, size_t *out, bd_error *err)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || v > len)
        return bd_error_set(err, BD_EINVAL, "Inference-Header-Content-Length '%.32s' is not a "
                            "byte count within the body's %zu bytes", s, len);
    *out = (size_t)v;
    return 0;
}

/* The request-level fields of ROOT into B and OUTS: "id", "parameters" (binary_data_output,
 * timeout, priority). */
static int request_fields(bd_rest_request *b, const cJSON *root, bd_rest_outputs *outs,
                          bd_error *err)
{
    const cJSON *jin = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    const cJSON *jout = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(root, "id");
    const cJSON *jparams = cJSON_GetObjectItemCaseSensitive(root, "parameters");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(jin))
        return bd_error_set(err, BD_EINVAL, "the request must be a JSON object with an \"inputs\" "
                            "array");
    if ((jout && !cJSON_IsArray(jout)) || (jid && !cJSON_IsString(jid)) ||
        (jparams && !cJSON_IsObject(jparams)))
        return bd_error_set(err, BD_EINVAL, "\"outputs\" must be an array, \"id\" a string and "
                            "\"parameters\" an object");
    const cJSON *bdo = jparams ? cJSON_GetObjectItemCaseSensitive(jparams, "binary_data_output") : NULL;
    if (bdo && !cJSON_IsBool(bdo))
        return bd_error_set(err, BD_EINVAL, "parameter binary_data_output must be true or false");
    outs->binary_all = bdo && cJSON_IsTrue(bdo);
    const cJSON *jto = jparams ? cJSON_GetObjectItemCaseSensitive(jparams, "timeout") : NULL;
    if (jto && (!json_u64(jto, &outs->timeout_us) || outs->timeout_us > UINT64_C(1) << 40))
        return bd_error_set(err, BD_EINVAL, "parameter timeout must be a number of microseconds");
    /* "priority": Triton's, for a model with dynamic_batching priority levels (1 = first) */
    const cJSON *jpri = jparams ? cJSON_GetObjectItemCaseSensitive(jparams, "priority") : NULL;
    if (jpri && (!json_u64(jpri, &b->req.priority) || b->req.priority > UINT32_MAX))
        return bd_error_set(err, BD_EINVAL, "parameter priority must be an integer from 0 to %u "
                            "(1 = served first)", UINT32_MAX);
    b->req.id = jid ? jid->valuestring : NULL;
    return 0;
}

/* B's arrays for N_IN inputs and N_OUT outputs, and OUTS' flags; false when out of memory. */
static bool alloc_tensors(bd_rest_request *b, size_t n_in, size_t n_out, bd_rest_outputs *outs)
{
    b->n_in = n_in;
    b->shapes = calloc(n_in ? n_in : 1, sizeof *b->shapes);
    b->owned = calloc(n_in ? n_in : 1, sizeof *b->owned);
    outs->binary = calloc(n_out ? n_out : 1, sizeof *outs->binary);
    outs->shm = calloc(n_out ? n_out : 1, sizeof *outs->shm);
    outs->n = n_out;
    return b->shapes && b->owned && outs->binary && outs->shm &&
           bd_infer_request_alloc(&b->req, n_in, n_out);
}

/* ROOT's inputs (their binary data the BIN_LEFT bytes at BIN) and outputs into B. */
static int tensors(bd_rest_request *b, cJSON *root, const uint8_t *bin, size_t bin_left,
                   bd_rest_outputs *outs, bd_error *err)
{
    cJSON *jin = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    const cJSON *jout = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    size_t n_in = (size_t)cJSON_GetArraySize(jin), n_out = jout ? (size_t)cJSON_GetArraySize(jout) : 0;
    if (n_in > 1024 || n_out > 1024)
        return bd_error_set(err, BD_EINVAL, "at most 1024 inputs and 1024 outputs");
    if (!alloc_tensors(b, n_in, n_out, outs))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    int rc;
    size_t i = 0;
    for (cJSON *in = jin->child; in; in = in->next, i++)
        if ((rc = bind_input(b, i, in, &bin, &bin_left, err)) != 0)
            return rc;
    if (bin_left)
        return bd_error_set(err, BD_EINVAL, "%zu bytes after the JSON header belong to no input "
                            "(the inputs' binary_data_size add up to less)", bin_left);
    size_t k = 0;
    for (const cJSON *o = jout ? jout->child : NULL; o; o = o->next, k++)
        if ((rc = bind_output(b, k, o, outs, err)) != 0)
            return rc;
    return 0;
}

/* BODY's JSON (its first JSON_LEN bytes), bounded, parsed, with nothing after it. */
static int parse_json(const char *body, size_t json_len, cJSON **root, bd_error *err)
{
    int rc = bd_rest_json_check(body, json_len, BD_REST_MAX_JSON_VALUES, BD_REST_MAX_JSON_DEPTH, err);
    if (rc)
        return rc;
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(body, json_len, &end, 0);
    if (!*root)
        return bd_error_set(err, BD_EINVAL, "the request is not valid JSON (near byte %zu)",
                            (size_t)((end ? end : cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : body) - body));
    for (const char *p = end; p && p < body + json_len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0')
            return bd_error_set(err, BD_EINVAL, "bytes after the JSON request: set "
                                "Inference-Header-Content-Length to send binary data");
    return 0;
}

int bd_rest_infer_request(const char *body, size_t len, const char *header_length,
                          const char *model, const char *version, bd_rest_request **out,
                          bd_rest_outputs *outs, bd_error *err)
{
    size_t json_len = len;
    int rc;
    *out = NULL;
    *outs = (bd_rest_outputs){0};
    if (header_length && (rc = parse_header_length(header_length, len, &json_len, err)) != 0)
        return rc;
    bd_rest_request *b = calloc(1, sizeof *b);
    if (!b)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    b->model = strdup(model);
    b->version = version ? strdup(version) : NULL;
    if (!b->model || (version && !b->version))
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    else if ((rc = parse_json(body, json_len, &b->root, err)) == 0 &&
             (rc = request_fields(b, b->root, outs, err)) == 0)
        rc = tensors(b, b->root, (const uint8_t *)body + json_len, len - json_len, outs, err);
    if (rc) {
        bd_rest_request_free(b);
        bd_rest_outputs_free(outs);
        return rc;
    }
    b->req.model = b->model;
    b->req.version = b->version;
    *out = b;
    return 0;
}

/* ---- the response ---------------------------------------------------------------------- */

typedef struct sbuf {
    char  *p;
    size_t n, cap, max;
    bool   failed;              /* out of memory or over MAX */
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1)
            cap *= 2;
        if (b->n + n > b->max) {
            b->failed = true;
            return;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void sb_str(sbuf *b, const char *s, size_t n)
{
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            char e[2] = { '\\', (char)ch };
            sb_put(b, e, 2);
        } else if (ch < 0x20) {
            sb_printf(b, "\\u%04x", ch);
        } else {
            sb_put(b, (const char *)&ch, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static void sb_double(sbuf *b, double d, bool single)
{
    if (isnan(d))
        sb_put(b, "NaN", 3);
    else if (isinf(d))
        sb_put(b, d > 0 ? "Infinity" : "-Infinity", d > 0 ? 8 : 9);
    else
        sb_printf(b, single ? "%.9g" : "%.17g", d);
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float f;
    if (exp == 0)
        f = ldexpf((float)man, -24);
    else if (exp == 31)
        f = man ? NAN : INFINITY;
    else
        f = ldexpf((float)(man | 0x400), (int)exp - 25);
    return sign ? -f : f;
}

/* One output's "data" as JSON, from its raw little-endian bytes. */
static int data_json(sbuf *b, int dtype, const uint8_t *p, size_t bytes, const char *name,
                     bd_error *err)
{
    sb_put(b, "[", 1);
    if (dtype == BD_DT_STRING) {
        size_t off = 0;
        for (bool first = true; off < bytes; first = false) {
            uint32_t n;
            if (bytes - off < 4)
                return bd_error_set(err, BD_EBACKEND, "output '%s': malformed BYTES", name);
            n = (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 |
                (uint32_t)p[off + 3] << 24;
            off += 4;
            if (n > bytes - off)
                return bd_error_set(err, BD_EBACKEND, "output '%s': malformed BYTES", name);
            if (!first)
                sb_put(b, ",", 1);
            sb_str(b, (const char *)p + off, n);
            off += n;
        }
        sb_put(b, "]", 1);
        return 0;
    }
    size_t es = bd_dtype_size(dtype);
    if (!es || bytes % es)
        return bd_error_set(err, BD_EBACKEND, "output '%s': %zu bytes are no whole %s elements",
                            name, bytes, bd_dtype_name(dtype));
    for (size_t i = 0; i < bytes / es && !b->failed; i++) {
        const uint8_t *e = p + i * es;
        if (i)
            sb_put(b, ",", 1);
        switch (dtype) {
        case BD_DT_BOOL:   sb_put(b, e[0] ? "true" : "false", e[0] ? 4 : 5); break;
        case BD_DT_INT8:   sb_printf(b, "%d", (int)(int8_t)e[0]); break;
        case BD_DT_UINT8:  sb_printf(b, "%u", (unsigned)e[0]); break;
        case BD_DT_INT16:  { int16_t x;  memcpy(&x, e, 2); sb_printf(b, "%d", x); break; }
        case BD_DT_UINT16: { uint16_t x; memcpy(&x, e, 2); sb_printf(b, "%u", x); break; }
        case BD_DT_INT32:  { int32_t x;  memcpy(&x, e, 4); sb_printf(b, "%" PRId32, x); break; }
        case BD_DT_UINT32: { uint32_t x; memcpy(&x, e, 4); sb_printf(b, "%" PRIu32, x); break; }
        case BD_DT_INT64:  { int64_t x;  memcpy(&x, e, 8); sb_printf(b, "%" PRId64, x); break; }
        case BD_DT_UINT64: { uint64_t x; memcpy(&x, e, 8); sb_printf(b, "%" PRIu64, x); break; }
        case BD_DT_FLOAT:  { float x;    memcpy(&x, e, 4); sb_double(b, x, true); break; }
        case BD_DT_DOUBLE: { double x;   memcpy(&x, e, 8); sb_double(b, x, false); break; }
        case BD_DT_FLOAT16: { uint16_t x; memcpy(&x, e, 2); sb_double(b, half_to_float(x), true); break; }
        case BD_DT_BFLOAT16: {
            uint16_t x; memcpy(&x, e, 2);
            uint32_t u = (uint32_t)x << 16;
            float f; memcpy(&f, &u, 4);
            sb_double(b, f, true);
            break;
        }
        default:
            return bd_error_set(err, BD_EBACKEND, "output '%s': datatype %s has no JSON form",
                                name, bd_dtype_name(dtype));
        }
    }
    sb_put(b, "]", 1);
    return 0;
}

int bd_rest_infer_response(const bd_infer_reply *rsp, const bd_rest_outputs *outs,
                           size_t max_bytes, char **body, size_t *len, size_t *json_len,
                           bd_error *err)
{
    sbuf b = { .max = max_bytes };
    uint64_t bin_total = 0;
    *body = NULL;
    sb_put(&b, "{\"model_name\":", 14);
    sb_str(&b, rsp->model ? rsp->model : "", rsp->model ? strlen(rsp->model) : 0);
    sb_put(&b, ",\"model_version\":", 17);
    sb_str(&b, rsp->version ? rsp->version : "", rsp->version ? strlen(rsp->version) : 0);
    if (rsp->id && rsp->id[0]) {
        sb_put(&b, ",\"id\":", 6);
        sb_str(&b, rsp->id, strlen(rsp->id));
    }
    sb_put(&b, ",\"outputs\":[", 12);
    for (size_t k = 0; k < rsp->n; k++) {
        const bd_infer_reply_output *o = &rsp->out[k];
        bd_wire_span sp = rsp->data[k];
        const char *dt = o->datatype ? o->datatype : "";
        int dtype = !strcmp(dt, "BYTES") ? BD_DT_STRING : bd_dtype_from_name(dt);
        bool binary = outs->n ? (k < outs->n && outs->binary[k]) : outs->binary_all;
        if (k)
            sb_put(&b, ",", 1);
        sb_put(&b, "{\"name\":", 8);
        sb_str(&b, o->name ? o->name : "", o->name ? strlen(o->name) : 0);
        sb_put(&b, ",\"datatype\":", 12);
        sb_str(&b, dt, strlen(dt));
        sb_put(&b, ",\"shape\":[", 10);
        for (int d = 0; d < o->ndim; d++)
            sb_printf(&b, d ? ",%" PRId64 : "%" PRId64, o->shape[d]);
        sb_put(&b, "]", 1);
        if (outs->n && k < outs->n && outs->shm && outs->shm[k]) {     /* its bytes are in the region */
            sb_put(&b, "}", 1);
            continue;
        }
        if (binary) {
            sb_printf(&b, ",\"parameters\":{\"binary_data_size\":%zu}}", sp.size);
            bin_total += sp.size;
            continue;
        }
        sb_put(&b, ",\"data\":", 8);
        int rc = data_json(&b, dtype, sp.data, sp.size, o->name ? o->name : "", err);
        if (rc) {
            free(b.p);
            return rc;
        }
        sb_put(&b, "}", 1);
    }
    sb_put(&b, "]}", 2);
    if (b.failed || bin_total > max_bytes - (b.n < max_bytes ? b.n : max_bytes)) {
        free(b.p);
        return bd_error_set(err, BD_EINVAL, "the response would be over the send limit of %zu "
                            "bytes (max_message_bytes): request fewer outputs, binary outputs or a "
                            "smaller input", max_bytes);
    }
    *json_len = b.n;
    for (size_t k = 0; k < rsp->n; k++) {
        bool binary = outs->n ? (k < outs->n && outs->binary[k] && !(outs->shm && outs->shm[k])) : outs->binary_all;
        if (binary && rsp->data[k].size)
            sb_put(&b, (const char *)rsp->data[k].data, rsp->data[k].size);
    }
    if (b.failed) {
        free(b.p);
        return bd_error_set(err, BD_ENOMEM, "out of memory building the response");
    }
    *body = b.p;
    *len = b.n;
    return 0;
}
