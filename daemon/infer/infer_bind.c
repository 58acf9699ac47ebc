/* A neutral request (infer_request.h) -> DLTensors against a model's signature
 * (infer_bind.h).
 *
 * A raw tensor is used in place when its bytes are aligned for its element type; otherwise
 * (protobuf gives no alignment guarantee) it is copied once into an aligned buffer, so no
 * kernel ever reads a misaligned element. Typed `contents` are counted first, then converted
 * into a buffer of exactly that many elements. */
#include "daemon/infer/infer_bind.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_decode.h>

void *bd_infer_small_or_calloc(void *small, size_t n, size_t size)
{
    if (n <= BD_INFER_SMALL) {
        memset(small, 0, BD_INFER_SMALL * size);
        return small;
    }
    return calloc(n, size);
}

void bd_infer_free_unless(void *p, void *small)
{
    if (p != small)
        free(p);
}

void bd_infer_binding_release(bd_infer_binding *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_shm; i++)
        bd_shm_release(b->shm[i]);
    free(b->shm);
    free(b->shm_out);
    for (size_t i = 0; i < b->n_owned; i++)
        free(b->owned[i]);
    free(b->owned);
    bd_infer_free_unless(b->inputs, b->inputs_small);
    bd_infer_free_unless(b->shapes, b->shapes_small);
    bd_infer_free_unless(b->out_idx, b->out_idx_small);
    bd_infer_free_unless(b->classify, b->classify_small);
    memset(b, 0, sizeof *b);
}

/* BYTES of 64-byte aligned memory owned by B (freed with it); NULL when out of memory.
 * Exactly BYTES (at least 1), so a sanitizer sees any access past the end. */
static void *own(bd_infer_binding *b, size_t bytes)
{
    void **o = realloc(b->owned, (b->n_owned + 1) * sizeof *o);
    if (!o)
        return NULL;
    b->owned = o;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0)
        return NULL;
    b->owned[b->n_owned++] = p;
    return p;
}

/* ---- typed contents ------------------------------------------------------------------------ */

/* The typed values' fields, by kind (their names in gRPC's InferTensorContents). */
static const char *const VALUE_FIELDS[BD_VALUES_KINDS] = {
    [BD_VALUES_BOOL] = "bool_contents",   [BD_VALUES_INT] = "int_contents",
    [BD_VALUES_INT64] = "int64_contents", [BD_VALUES_UINT] = "uint_contents",
    [BD_VALUES_UINT64] = "uint64_contents", [BD_VALUES_FP32] = "fp32_contents",
    [BD_VALUES_FP64] = "fp64_contents",   [BD_VALUES_BYTES] = "bytes_contents",
};

/* The kind of values that carries DTYPE; -1 for types that travel raw only. */
static int value_kind(int dtype)
{
    switch (dtype) {
    case BD_DT_BOOL:   return BD_VALUES_BOOL;
    case BD_DT_INT8: case BD_DT_INT16: case BD_DT_INT32: return BD_VALUES_INT;
    case BD_DT_INT64:  return BD_VALUES_INT64;
    case BD_DT_UINT8: case BD_DT_UINT16: case BD_DT_UINT32: return BD_VALUES_UINT;
    case BD_DT_UINT64: return BD_VALUES_UINT64;
    case BD_DT_FLOAT:  return BD_VALUES_FP32;
    case BD_DT_DOUBLE: return BD_VALUES_FP64;
    default:           return -1;
    }
}

static const char *contents_field_name(int dtype)
{
    int kind = value_kind(dtype);
    return kind < 0 ? NULL : VALUE_FIELDS[kind];
}

static bool values_sent(const bd_infer_input *t, int kind)
{
    return t->values[kind] && t->values[kind]->list.count > 0;
}

/* Store the varint V of element I of DST (DTYPE); false when V is out of DTYPE's range. */
static bool store_varint(int dtype, void *dst, size_t i, uint64_t v)
{
    int64_t sv = (int64_t)v;
    switch (dtype) {
    case BD_DT_BOOL:   ((uint8_t *)dst)[i] = v != 0; return true;
    case BD_DT_INT8:   ((int8_t *)dst)[i] = (int8_t)sv;     return sv >= INT8_MIN && sv <= INT8_MAX;
    case BD_DT_INT16:  ((int16_t *)dst)[i] = (int16_t)sv;   return sv >= INT16_MIN && sv <= INT16_MAX;
    case BD_DT_INT32:  ((int32_t *)dst)[i] = (int32_t)sv;   return sv >= INT32_MIN && sv <= INT32_MAX;
    case BD_DT_INT64:  ((int64_t *)dst)[i] = sv;            return true;
    case BD_DT_UINT8:  ((uint8_t *)dst)[i] = (uint8_t)v;    return v <= UINT8_MAX;
    case BD_DT_UINT16: ((uint16_t *)dst)[i] = (uint16_t)v;  return v <= UINT16_MAX;
    case BD_DT_UINT32: ((uint32_t *)dst)[i] = (uint32_t)v;  return v <= UINT32_MAX;
    default:           ((uint64_t *)dst)[i] = v;            return true;
    }
}

/* Typed values of input T (NAME, DTYPE, NUMEL elements): only the kind for DTYPE may be
 * sent, with exactly NUMEL values. Counts them, then converts them into a buffer owned by B
 * (*DATA). */
static int bind_contents(bd_infer_binding *b, const bd_infer_input *t, const char *name,
                         int dtype, size_t numel, size_t esize, const void **data, bd_error *err)
{
    int kind = value_kind(dtype);
    const char *want = contents_field_name(dtype);
    for (int f = 0; f < BD_VALUES_KINDS; f++) {
        if (!values_sent(t, f) || f == kind)
            continue;
        if (!want)
            return bd_error_set(err, BD_EINVAL, "input '%s': %s data must be sent in raw_input_contents "
                                "(typed contents cannot carry it), got contents.%s", name,
                                bd_dtype_name(dtype), VALUE_FIELDS[f]);
        return bd_error_set(err, BD_EINVAL, "input '%s': %s values go in contents.%s, got contents.%s",
                            name, bd_dtype_name(dtype), want, VALUE_FIELDS[f]);
    }
    if (!want) {                                /* nothing sent, as for an empty tensor */
        if (numel > 0)
            return bd_error_set(err, BD_EINVAL, "input '%s': %s data must be sent in raw_input_contents "
                                "(typed contents cannot carry it)", name, bd_dtype_name(dtype));
        *data = own(b, 0);
        return *data ? 0 : bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", name);
    }

    /* Count first: NUMEL comes from the client's shape, the count from the message. */
    static const bd_wire_spans none;
    const bd_wire_spans *s = t->values[kind] ? t->values[kind] : &none;
    bool fixed = dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE;
    size_t bytes = bd_wire_spans_bytes(s);
    size_t got = fixed ? bytes / esize : bd_wire_spans_count_varints(s);
    if ((fixed && bytes % esize) || got != numel)
        return bd_error_set(err, BD_EINVAL, "input '%s': expected %zu %s values in contents.%s, got %zu",
                            name, numel, bd_dtype_name(dtype), want, got);
    size_t size;
    if (__builtin_mul_overflow(numel, esize, &size))
        return bd_error_set(err, BD_EINVAL, "input '%s': too many values", name);
    uint8_t *dst = own(b, size);
    if (!dst)
        return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", name);
    *data = dst;

    if (fixed) {                                /* little-endian on the wire and here */
        size_t at = 0;
        for (size_t i = 0; i < s->list.count; i++) {
            if (s->list.items[i].size)
                memcpy(dst + at, s->list.items[i].data, s->list.items[i].size);
            at += s->list.items[i].size;
        }
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->list.count; i++) {
        pb_istream_t in = pb_istream_from_buffer(s->list.items[i].data, s->list.items[i].size);
        while (in.bytes_left) {
            uint64_t v;
            if (n == numel || !pb_decode_varint(&in, &v))
                return bd_error_set(err, BD_EINVAL, "input '%s': contents.%s holds a malformed value",
                                    name, want);
            if (!store_varint(dtype, dst, n, v))
                return bd_error_set(err, BD_EINVAL, "input '%s': element %zu (%" PRId64 ") is out of "
                                    "range for %s", name, n, (int64_t)v, bd_dtype_name(dtype));
            n++;
        }
    }
    if (n != numel)                             /* a varint cut between two chunks */
        return bd_error_set(err, BD_EINVAL, "input '%s': contents.%s holds a malformed value", name, want);
    return 0;
}

/* ---- shared memory ---------------------------------------------------------------------- */

/* The region R names, its reference kept by B; its bytes [offset, offset+size) in *DATA. */
static int shm_use(bd_infer_binding *b, const bd_infer_shm_ref *r, const char *what, bd_shm_region **region,
                   void **data, bd_error *err)
{
    if (!r->has_size)
        return bd_error_set(err, BD_EINVAL, "%s: 'shared_memory_region' needs "
                            "'shared_memory_byte_size' too", what);
    bd_shm_region **list = realloc(b->shm, (b->n_shm + 1) * sizeof *list);
    if (!list)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    b->shm = list;
    int rc = bd_shm_acquire(r->region, region, err);
    if (rc) {
        bd_error_prefix(err, "%s: ", what);
        if (rc == BD_EUNSUPPORTED)          /* disabled: the request's to fix, said how */
            rc = err->code = BD_EINVAL;
        return rc;                          /* unknown region: NOT_FOUND, as Triton */
    }
    b->shm[b->n_shm++] = *region;
    return bd_shm_span(*region, r->offset, r->size, what, data, err);
}

/* ---- inputs ------------------------------------------------------------------------------ */

/* Check request input T against signature input V and point DL (its shape stored in SHAPE)
 * at its data. */
static int bind_input(bd_infer_binding *b, const bd_infer_input *t, const bd_value *v,
                      DLTensor *dl, int64_t *shape, bd_error *err)
{
    char want[128], got[128];
    const bd_infer_shm_ref *shm = &t->shm;
    int dt = bd_dtype_from_name(t->datatype);
    if (dt == BD_DT_UNDEFINED)
        return bd_error_set(err, BD_EINVAL, "input '%s': unknown datatype '%s' (expected %s)", v->name,
                            t->datatype, bd_dtype_name(v->dtype));
    if (dt != v->dtype)
        return bd_error_set(err, BD_EINVAL, "input '%s': expected datatype %s, got %s", v->name,
                            bd_dtype_name(v->dtype), bd_dtype_name(dt));
    size_t esize = bd_dtype_size(dt);
    if (!bd_dtype_to_dl(dt, &dl->dtype) || esize == 0)
        return bd_error_set(err, BD_EINVAL, "input '%s': %s tensors are not supported", v->name,
                            bd_dtype_name(dt));

    /* shape: the model's rank, every dim >= 0 and equal to the model's where it is fixed */
    if (t->rank > BD_MAX_RANK)
        return bd_error_set(err, BD_EINVAL, "input '%s': expected shape %s, got rank %zu", v->name,
                            bd_shape_str(&v->shape, want, sizeof want), t->rank);
    bd_shape gs = { .rank = (int)t->rank };
    for (int d = 0; d < gs.rank; d++)
        gs.dims[d] = t->shape[d];
    bool ok = v->shape.rank < 0 || gs.rank == v->shape.rank;
    for (int d = 0; ok && d < gs.rank; d++)
        ok = gs.dims[d] >= 0 && (v->shape.rank < 0 || v->shape.dims[d] < 0 || v->shape.dims[d] == gs.dims[d]);
    if (!ok)
        return bd_error_set(err, BD_EINVAL, "input '%s': expected shape %s, got %s", v->name,
                            bd_shape_str(&v->shape, want, sizeof want), bd_shape_str(&gs, got, sizeof got));
    /* size: bounded even when empty (0 dims counted as 1), so no product of dims overflows */
    int64_t extent = 1, numel = 1;
    for (int d = 0; d < gs.rank; d++) {
        if (__builtin_mul_overflow(extent, gs.dims[d] ? gs.dims[d] : 1, &extent) ||
            extent > BD_INFER_MAX_ELEMENTS)
            return bd_error_set(err, BD_EINVAL, "input '%s': shape %s is too large (at most %" PRId64
                                " elements, 0 dims counted as 1)", v->name,
                                bd_shape_str(&gs, got, sizeof got), BD_INFER_MAX_ELEMENTS);
        numel *= gs.dims[d];                    /* <= extent: no overflow */
    }
    size_t bytes = (size_t)numel * esize;       /* <= 2^31 * 8 */

    const void *data = NULL;
    if (shm->region) {
        char what[160];
        snprintf(what, sizeof what, "input '%s'", v->name);
        if (t->has_values)
            return bd_error_set(err, BD_EINVAL, "input '%s': has both contents and "
                                "shared_memory_region (send one or the other)", v->name);
        if (shm->has_size && shm->size != bytes)
            return bd_error_set(err, BD_EINVAL, "input '%s': expected shared_memory_byte_size %zu "
                                "for %s %s, got %" PRIu64, v->name, bytes, bd_dtype_name(dt),
                                bd_shape_str(&gs, got, sizeof got), shm->size);
        bd_shm_region *region;
        void *at;
        int rc = shm_use(b, shm, what, &region, &at, err);
        if (rc)
            return rc;
        /* Copied, never read in place: the client can rewrite its region while a kernel
         * runs, and a kernel that checks indices or shapes in one pass and uses them in
         * another would read two different values (docs/security.md, "Shared memory"). One
         * memcpy reads each byte once; a SIGBUS in it is the guard's (shm_guard.h). */
        if (b->shm_copy_limit && (b->shm_copied += bytes) > b->shm_copy_limit)
            return bd_error_set(err, BD_EINVAL, "input '%s': the request's inputs in shared memory "
                                "total over %" PRIu64 " bytes, the run memory limit "
                                "(max_run_memory_bytes)", v->name, b->shm_copy_limit);
        void *copy = own(b, bytes);
        if (!copy)
            return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", v->name);
        if (bytes)
            memcpy(copy, at, bytes);
        data = copy;
    } else if (t->has_raw) {
        if (t->has_values)
            return bd_error_set(err, BD_EINVAL, "input '%s': has both contents and raw_input_contents "
                                "(send one or the other)", v->name);
        const bd_wire_span *sp = &t->raw;
        if (sp->size != bytes)
            return bd_error_set(err, BD_EINVAL, "input '%s': expected %zu bytes of raw_input_contents "
                                "for %s %s, got %zu", v->name, bytes, bd_dtype_name(dt),
                                bd_shape_str(&gs, got, sizeof got), sp->size);
        data = sp->data;
        if (!bytes || ((uintptr_t)data % esize) != 0) {     /* empty or misaligned: copy once */
            void *copy = own(b, bytes);
            if (!copy)
                return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", v->name);
            if (bytes)
                memcpy(copy, data, bytes);
            data = copy;
        }
    } else if (t->has_values) {
        int rc = bind_contents(b, t, v->name, dt, (size_t)numel, esize, &data, err);
        if (rc)
            return rc;
    } else if (numel > 0) {
        const char *field = contents_field_name(dt);
        return bd_error_set(err, BD_EINVAL, "input '%s': no data: expected raw_input_contents or "
                            "contents.%s", v->name, field ? field : "(raw only)");
    } else if (!(data = own(b, 0))) {
        return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", v->name);
    }
    for (int d = 0; d < gs.rank; d++)
        shape[d] = gs.dims[d];
    dl->data = (void *)data;
    dl->device = (DLDevice){ kDLCPU, 0 };
    dl->ndim = gs.rank;
    dl->shape = shape;
    dl->strides = NULL;
    dl->byte_offset = 0;
    return 0;
}

/* "a, b, c": the model's input or output names, for error messages. */
static const char *names(const bd_graph *g, bool inputs, char *buf, size_t size)
{
    size_t n = inputs ? bd_graph_num_inputs(g) : bd_graph_num_outputs(g), at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < size; i++) {
        const bd_value *v = inputs ? bd_graph_input(g, i) : bd_graph_output(g, i);
        int w = snprintf(buf + at, size - at, "%s%s", i ? ", " : "", v->name);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* "byte_size / offset without region": shared memory parameters that say nothing. */
static int shm_ref_check(const bd_infer_shm_ref *shm, const char *what, bd_error *err)
{
    if (!shm->region && (shm->has_size || shm->offset))
        return bd_error_set(err, BD_EINVAL, "%s: shared_memory_byte_size / shared_memory_offset "
                            "without 'shared_memory_region'", what);
    return 0;
}

static int bind_inputs(bd_infer_binding *b, const bd_infer_request *req, const bd_graph *g,
                       bd_error *err)
{
    char list[256];
    size_t n = bd_graph_num_inputs(g);
    b->n_inputs = n;
    bool seen_small[BD_INFER_SMALL];
    b->inputs = bd_infer_small_or_calloc(b->inputs_small, n, sizeof *b->inputs);
    b->shapes = bd_infer_small_or_calloc(b->shapes_small, n, sizeof *b->shapes);
    bool *seen = bd_infer_small_or_calloc(seen_small, n, sizeof *seen);
    int rc = 0;
    if (!b->inputs || !b->shapes || !seen)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t k = 0; k < req->n_inputs && !rc; k++) {
        const bd_infer_input *t = &req->inputs[k];
        char what[160];
        snprintf(what, sizeof what, "input '%s'", t->name);
        if ((rc = shm_ref_check(&t->shm, what, err)) != 0)
            break;
        size_t i = 0;
        while (i < n && strcmp(bd_graph_input(g, i)->name, t->name) != 0)
            i++;
        if (i == n)
            rc = bd_error_set(err, BD_EINVAL, "unknown input '%s' (the model's inputs: %s)", t->name,
                              names(g, true, list, sizeof list));
        else if (seen[i])
            rc = bd_error_set(err, BD_EINVAL, "input '%s' is given twice", t->name);
        else {
            seen[i] = true;
            rc = bind_input(b, t, bd_graph_input(g, i), &b->inputs[i], b->shapes[i], err);
        }
    }
    for (size_t i = 0; i < n && !rc; i++)
        if (!seen[i])
            rc = bd_error_set(err, BD_EINVAL, "missing input '%s' (the model's inputs: %s)",
                              bd_graph_input(g, i)->name, names(g, true, list, sizeof list));
    bd_infer_free_unless(seen, seen_small);
    return rc;
}

/* Response output K goes to the shared memory SHM names. */
static int bind_output_shm(bd_infer_binding *b, size_t k, const bd_infer_shm_ref *shm,
                           const char *name, bd_error *err)
{
    if (!b->shm_out && !(b->shm_out = calloc(b->n_out, sizeof *b->shm_out)))
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    char what[160];
    snprintf(what, sizeof what, "output '%s'", name);
    void *at;
    bd_infer_shm_out *o = &b->shm_out[k];
    int rc = shm_use(b, shm, what, &o->region, &at, err);
    if (rc) {
        o->region = NULL;
        return rc;
    }
    o->offset = shm->offset;
    o->size = shm->size;
    return 0;
}

/* Requested output O (its graph output found) as response output K: its classification and
 * its shared memory, which cannot be combined (as Triton: classes are not written there). */
static int bind_output(bd_infer_binding *b, size_t k, const bd_infer_output *o, bd_error *err)
{
    char what[160];
    snprintf(what, sizeof what, "output '%s'", o->name);
    int rc = shm_ref_check(&o->shm, what, err);
    if (rc)
        return rc;
    if (o->shm.region && o->classify)
        return bd_error_set(err, BD_EINVAL, "%s: 'shared_memory_region' and 'classification' "
                            "cannot be combined", what);
    b->classify[k] = o->classify;
    return o->shm.region ? bind_output_shm(b, k, &o->shm, o->name, err) : 0;
}

/* Requested outputs: none = all, in the model's order; else each known and named once. */
static int bind_outputs(bd_infer_binding *b, const bd_infer_request *req, const bd_graph *g,
                        bd_error *err)
{
    char list[256];
    size_t n_out = bd_graph_num_outputs(g);
    b->n_out = req->n_outputs ? req->n_outputs : n_out;
    b->out_idx = bd_infer_small_or_calloc(b->out_idx_small, b->n_out, sizeof *b->out_idx);
    b->classify = bd_infer_small_or_calloc(b->classify_small, b->n_out, sizeof *b->classify);
    bool seen_small[BD_INFER_SMALL];
    bool *seen = bd_infer_small_or_calloc(seen_small, n_out, sizeof *seen);
    int rc = 0;
    if (!b->out_idx || !b->classify || !seen)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t k = 0; k < b->n_out && !rc; k++) {
        if (!req->n_outputs) {
            b->out_idx[k] = k;
            continue;
        }
        const char *name = req->outputs[k].name;
        size_t o = 0;
        while (o < n_out && strcmp(bd_graph_output(g, o)->name, name) != 0)
            o++;
        if (o == n_out)
            rc = bd_error_set(err, BD_EINVAL, "unknown output '%s' (the model's outputs: %s)", name,
                              names(g, false, list, sizeof list));
        else if (seen[o])
            rc = bd_error_set(err, BD_EINVAL, "output '%s' is requested twice (name each output once)",
                              name);
        else {
            seen[o] = true;
            b->out_idx[k] = o;
            rc = bind_output(b, k, &req->outputs[k], err);
        }
    }
    bd_infer_free_unless(seen, seen_small);
    return rc;
}

int bd_infer_bind(bd_infer_binding *b, const bd_infer_request *req, const bd_graph *g,
                  bd_error *err)
{
    int rc = bind_inputs(b, req, g, err);
    if (!rc)
        rc = bind_outputs(b, req, g, err);
    if (rc)
        return rc;

    /* Batch: dim 0 when the model's first input has a dynamic leading dim, else 1. */
    b->batch = 1;
    if (b->n_inputs > 0) {
        const bd_value *v0 = bd_graph_input(g, 0);
        if (v0->shape.rank > 0 && v0->shape.dims[0] < 0 && b->inputs[0].ndim > 0)
            b->batch = (uint64_t)b->inputs[0].shape[0];
    }
    return 0;
}

bool bd_infer_output_bytes(const bd_graph *g, const size_t *out_idx, size_t n_out, uint64_t *bytes)
{
    uint64_t total = 0;
    for (size_t k = 0; k < n_out; k++) {
        if (out_idx[k] >= bd_graph_num_outputs(g))
            return false;
        const bd_value *v = bd_graph_output(g, out_idx[k]);
        int64_t numel = bd_shape_numel(&v->shape);
        uint64_t size;
        if (numel < 0 || !bd_dtype_size(v->dtype))
            return false;                       /* known only after the run */
        if (__builtin_mul_overflow((uint64_t)numel, (uint64_t)bd_dtype_size(v->dtype), &size) ||
            __builtin_add_overflow(total, size, &total))
            total = UINT64_MAX;
    }
    *bytes = total;
    return true;
}

void bd_infer_shm_dest(const bd_infer_binding *b, bd_exec_dest *dest, size_t n_graph_out)
{
    for (size_t o = 0; o < n_graph_out; o++)
        dest[o] = (bd_exec_dest){ NULL, 0 };
    for (size_t k = 0; b->shm_out && k < b->n_out; k++) {
        const bd_infer_shm_out *o = &b->shm_out[k];
        void *at;
        bd_error ignored;
        if (o->region && b->out_idx[k] < n_graph_out && o->size <= SIZE_MAX &&
            bd_shm_span(o->region, o->offset, o->size, "output", &at, &ignored) == 0)
            dest[b->out_idx[k]] = (bd_exec_dest){ at, (size_t)o->size };
    }
}

int bd_infer_shm_outputs(const bd_infer_binding *b, const bd_graph *g, bd_wire_span *spans,
                         uint64_t *in_place, uint64_t *copied, bd_error *err)
{
    for (size_t k = 0; b->shm_out && k < b->n_out; k++) {
        const bd_infer_shm_out *o = &b->shm_out[k];
        if (!o->region)
            continue;
        const char *name = bd_graph_output(g, b->out_idx[k])->name;
        if (spans[k].size > o->size)
            return bd_error_set(err, BD_EINVAL, "output '%s': needs %zu bytes but "
                                "shared_memory_byte_size is %" PRIu64 " (region '%s')", name,
                                spans[k].size, o->size, bd_shm_name(o->region));
        void *at;
        char what[160];
        snprintf(what, sizeof what, "output '%s'", name);
        int rc = bd_shm_span(o->region, o->offset, o->size, what, &at, err);
        if (rc)
            return rc;
        if (at == spans[k].data) {
            *in_place += spans[k].size;                 /* bd_exec_run_into wrote it there */
        } else if (spans[k].size) {
            memcpy(at, spans[k].data, spans[k].size);   /* a SIGBUS here is the guard's */
            *copied += spans[k].size;
        }
        static const uint8_t none[1];
        spans[k] = (bd_wire_span){ none, 0 };
    }
    for (size_t i = 0; i < b->n_shm; i++) {     /* inputs too: read during the run */
        int rc = bd_shm_check(b->shm[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

bool bd_infer_response_bytes(const bd_infer_binding *b, const bd_graph *g, uint64_t *bytes)
{
    uint64_t total = 0, one;
    for (size_t k = 0; k < b->n_out; k++) {
        if (b->shm_out && b->shm_out[k].region)
            continue;
        if (!bd_infer_output_bytes(g, &b->out_idx[k], 1, &one))
            return false;
        if (__builtin_add_overflow(total, one, &total))
            total = UINT64_MAX;
    }
    *bytes = total;
    return true;
}
