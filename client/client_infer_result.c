/* braid_infer_result: accessors and DLPack export. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_infer_result.h"

typedef struct bc_output {
    char    *name;
    char    *datatype;
    int64_t *shape;
    int      ndim;
    void    *data;      /* 64-byte aligned, never NULL */
    size_t   nbytes;
} bc_output;

struct braid_infer_result {
    atomic_int refs;    /* the caller's handle + one per live DLManagedTensor */
    char      *model;
    char      *version;
    char      *id;
    bc_output *outputs;
    size_t     n_outputs;
};

static void result_unref(braid_infer_result *r)
{
    if (atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    for (size_t i = 0; i < r->n_outputs; i++) {
        free(r->outputs[i].name);
        free(r->outputs[i].datatype);
        free(r->outputs[i].shape);
        free(r->outputs[i].data);
    }
    free(r->outputs);
    free(r->model);
    free(r->version);
    free(r->id);
    free(r);
}

void braid_infer_result_free(braid_infer_result *r)
{
    if (r)
        result_unref(r);
}

/* Typed contents (when the server did not use raw_output_contents): gather the one
 * field that matches DATATYPE into a row-major buffer of N elements. */
static bool typed_contents(const inference_InferTensorContents *tc, const char *datatype, size_t n,
                           void *dst, const char **why)
{
    size_t esize = braid_datatype_size(datatype);
    if (!strcmp(datatype, "FP32") || !strcmp(datatype, "FP64")) {
        const bd_wire_spans *s = esize == 4 ? &tc->fp32_contents : &tc->fp64_contents;
        if (bd_wire_spans_read_fixed(s, (unsigned)esize, dst, n) != (long)n) {
            *why = "typed contents do not match the shape";
            return false;
        }
        return true;
    }
    const bd_wire_spans *s = NULL;
    if (!strcmp(datatype, "BOOL"))                                    s = &tc->bool_contents;
    else if (!strcmp(datatype, "INT64"))                              s = &tc->int64_contents;
    else if (!strcmp(datatype, "UINT64"))                             s = &tc->uint64_contents;
    else if (!strncmp(datatype, "INT", 3))                            s = &tc->int_contents;
    else if (!strncmp(datatype, "UINT", 4))                           s = &tc->uint_contents;
    if (!s) {
        *why = "typed contents of this datatype are not supported (use raw_output_contents)";
        return false;
    }
    uint64_t *v = malloc(sizeof *v * (n ? n : 1));
    if (!v) {
        *why = "out of memory";
        return false;
    }
    bool ok = bd_wire_spans_read_varints(s, v, n) == (long)n;
    for (size_t i = 0; ok && i < n; i++)
        memcpy((char *)dst + i * esize, &v[i], esize);   /* little-endian truncation */
    free(v);
    if (!ok)
        *why = "typed contents do not match the shape";
    return ok;
}

/* Fill O from the wire output T whose raw payload is RAW (NULL: use T's typed contents). */
static braid_status fill_output(bc_output *o, const inference_ModelInferResponse_InferOutputTensor *t,
                                const bd_wire_span *raw, char *err, size_t errlen)
{
    if (!(o->name = bc_strdup(t->name)) || !(o->datatype = bc_strdup(t->datatype)))
        return bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    o->ndim = (int)t->shape_count;
    int64_t n = 1;
    for (int d = 0; d < o->ndim; d++) {
        if (t->shape[d] < 0 || (t->shape[d] && n > INT64_MAX / t->shape[d]))
            return bc_fail(err, errlen, BRAID_E_PROTOCOL, "output '%s': bad shape from the server", o->name);
        n *= t->shape[d];
    }
    if (o->ndim && !(o->shape = malloc(sizeof *o->shape * (size_t)o->ndim)))
        return bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    if (o->ndim)
        memcpy(o->shape, t->shape, sizeof *o->shape * (size_t)o->ndim);
    bool bytes = strcmp(o->datatype, "BYTES") == 0;
    size_t esize = braid_datatype_size(o->datatype);
    if (!bytes && !esize)
        return bc_fail(err, errlen, BRAID_E_PROTOCOL, "output '%s': unknown datatype '%s'", o->name, o->datatype);
    if (bytes && !raw)
        return bc_fail(err, errlen, BRAID_E_PROTOCOL, "output '%s': BYTES output without raw contents", o->name);
    o->nbytes = bytes ? raw->size : (size_t)n * esize;
    if (raw && raw->size != o->nbytes)
        return bc_fail(err, errlen, BRAID_E_PROTOCOL, "output '%s': %s %lld elements needs %zu bytes, server sent %zu",
                       o->name, o->datatype, (long long)n, o->nbytes, raw->size);
    /* Copied once, into aligned memory: spans on the wire are only byte-aligned. */
    size_t cap = o->nbytes ? (o->nbytes + 63) & ~(size_t)63 : 64;
    if (!(o->data = aligned_alloc(64, cap)))
        return bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory for output '%s' (%zu bytes)", o->name, o->nbytes);
    const char *why = NULL;
    if (raw) {
        if (raw->size)
            memcpy(o->data, raw->data, raw->size);
    } else if (!t->has_contents || !typed_contents(&t->contents, o->datatype, (size_t)n, o->data, &why)) {
        return bc_fail(err, errlen, BRAID_E_PROTOCOL, "output '%s': %s", o->name,
                       why ? why : "the server sent neither raw nor typed contents");
    }
    return BRAID_OK;
}

braid_status bc_result_from_response(const inference_ModelInferResponse *resp, braid_infer_result **out,
                                     char *err, size_t errlen)
{
    const bd_wire_spans *raw = &resp->raw_output_contents;
    if (raw->list.count && raw->list.count != resp->outputs_count)
        return bc_fail(err, errlen, BRAID_E_PROTOCOL, "the server sent %zu raw payloads for %u outputs",
                       raw->list.count, (unsigned)resp->outputs_count);
    braid_infer_result *r = calloc(1, sizeof *r);
    if (!r)
        return bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    atomic_init(&r->refs, 1);
    braid_status rc = BRAID_OK;
    if (!(r->model = bc_strdup(resp->model_name)) || !(r->version = bc_strdup(resp->model_version)) ||
        !(r->id = bc_strdup(resp->id)) ||
        (resp->outputs_count && !(r->outputs = calloc(resp->outputs_count, sizeof *r->outputs))))
        rc = bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    for (pb_size_t i = 0; rc == BRAID_OK && i < resp->outputs_count; i++) {
        r->n_outputs++;
        rc = fill_output(&r->outputs[i], &resp->outputs[i], raw->list.count ? &raw->list.items[i] : NULL,
                         err, errlen);
    }
    if (rc != BRAID_OK) {
        result_unref(r);
        return rc;
    }
    *out = r;
    return bc_ok(err, errlen);
}

const char *braid_infer_result_model(const braid_infer_result *r)   { return r ? r->model : NULL; }
const char *braid_infer_result_version(const braid_infer_result *r) { return r ? r->version : NULL; }
const char *braid_infer_result_id(const braid_infer_result *r)      { return r ? r->id : NULL; }
size_t braid_infer_result_num_outputs(const braid_infer_result *r)  { return r ? r->n_outputs : 0; }

static const bc_output *output(const braid_infer_result *r, size_t i)
{
    return r && i < r->n_outputs ? &r->outputs[i] : NULL;
}

const char *braid_infer_result_name(const braid_infer_result *r, size_t i)
{
    const bc_output *o = output(r, i);
    return o ? o->name : NULL;
}

const char *braid_infer_result_datatype(const braid_infer_result *r, size_t i)
{
    const bc_output *o = output(r, i);
    return o ? o->datatype : NULL;
}

const int64_t *braid_infer_result_shape(const braid_infer_result *r, size_t i, int *ndim)
{
    const bc_output *o = output(r, i);
    if (ndim)
        *ndim = o ? o->ndim : 0;
    return o ? o->shape : NULL;
}

const void *braid_infer_result_data(const braid_infer_result *r, size_t i, size_t *nbytes)
{
    const bc_output *o = output(r, i);
    if (nbytes)
        *nbytes = o ? o->nbytes : 0;
    return o ? o->data : NULL;
}

long braid_infer_result_find(const braid_infer_result *r, const char *name)
{
    for (size_t i = 0; r && name && i < r->n_outputs; i++)
        if (strcmp(r->outputs[i].name, name) == 0)
            return (long)i;
    return -1;
}

typedef struct bc_managed {
    DLManagedTensor     mt;     /* first: the deleter receives this pointer */
    braid_infer_result *result;
} bc_managed;

static void managed_delete(DLManagedTensor *mt)
{
    bc_managed *m = (bc_managed *)mt;
    result_unref(m->result);
    free(m);
}

braid_status braid_infer_result_dl(braid_infer_result *r, size_t i, DLManagedTensor **out,
                                   char *err, size_t errlen)
{
    const bc_output *o = output(r, i);
    if (!o || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_infer_result_dl: output %zu does not exist", i);
    DLDataType dt;
    if (!braid_datatype_to_dl(o->datatype, &dt))
        return bc_fail(err, errlen, BRAID_E_ARG, "output '%s': %s has no DLPack type", o->name, o->datatype);
    bc_managed *m = calloc(1, sizeof *m);
    if (!m)
        return bc_fail(err, errlen, BRAID_E_NOMEM, "out of memory");
    atomic_fetch_add(&r->refs, 1);
    m->result = r;
    m->mt.manager_ctx = m;
    m->mt.deleter = managed_delete;
    m->mt.dl_tensor = (DLTensor){
        .data = o->data, .device = { .device_type = kDLCPU, .device_id = 0 }, .ndim = o->ndim,
        .dtype = dt, .shape = o->shape, .strides = NULL, .byte_offset = 0,
    };
    *out = &m->mt;
    return bc_ok(err, errlen);
}
