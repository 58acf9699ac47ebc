/* ModelInfer: validate on the cq thread (or the loop), run and answer on a worker.
 *
 *   cq      decode (tensor bytes stay in the received message), take the model version from
 *           the server's served-version table (on a miss, the loop acquires it from the
 *           registry and fills the table), check every input against the model's signature
 *           (name, datatype, shape, byte count; typed `contents` converted), build DLTensors
 *           pointing INTO the message, and queue a job with the call's deadline.
 *   worker  plan for these shapes, borrow an execution context, run, encode the response
 *           straight from the context's output tensors, send it, record statistics.
 *
 * A model whose runs take microseconds runs on the cq thread itself while none of its
 * requests is queued or running (runs_inline: waking a worker would cost more than the run).
 *
 * A raw tensor is used in place when its bytes are aligned for its element type; otherwise
 * (protobuf gives no alignment guarantee) it is copied once into an aligned buffer, so no
 * kernel ever reads a misaligned element. */
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference.pb.h"
#include "log.h"
#include "rpc.h"
#include "status_map.h"

#define JOB_SMALL 4

typedef struct infer_job {
    bd_job       base;                       /* first: the scheduler hands us &base */
    bd_call     *call;
    inference_ModelInferRequest *req;        /* owned by the call */
    const bd_graph *graph;                   /* the model's signature (lives with served) */
    size_t       n_inputs;
    DLTensor    *inputs;                     /* signature order */
    int64_t    (*shapes)[BD_MAX_RANK];
    void       **owned;                      /* converted / realigned copies */
    size_t       n_owned;
    size_t      *out_idx;                    /* requested graph outputs, in request order */
    size_t       n_out;
    uint64_t     batch;                      /* inferences this request counts for */
    uint64_t     start_ns;
    uint64_t     input_ns;                   /* decoding and checking, before the run */
    /* Storage for the common case (few inputs/outputs): no allocation per request. */
    DLTensor     inputs_small[JOB_SMALL];
    int64_t      shapes_small[JOB_SMALL][BD_MAX_RANK];
    size_t       out_idx_small[JOB_SMALL];
} infer_job;

/* N elements of SIZE bytes: SMALL when N <= JOB_SMALL, else zeroed heap memory (NULL when out
 * of memory). Release with free_unless(p, SMALL). */
static void *small_or_calloc(void *small, size_t n, size_t size)
{
    if (n <= JOB_SMALL) {
        memset(small, 0, JOB_SMALL * size);
        return small;
    }
    return calloc(n, size);
}

static void free_unless(void *p, void *small)
{
    if (p != small)
        free(p);
}

static void job_free(void *p)
{
    infer_job *j = p;
    for (size_t i = 0; i < j->n_owned; i++)
        free(j->owned[i]);
    free(j->owned);
    free_unless(j->inputs, j->inputs_small);
    free_unless(j->shapes, j->shapes_small);
    free_unless(j->out_idx, j->out_idx_small);
    bd_served_release(j->base.served);
    free(j);
}

/* ---- statistics ------------------------------------------------------------------------ */

static void record_failure(infer_job *j, int code)
{
    if (!j->base.served)
        return;
    bd_model_stats *st = bd_served_stats(j->base.served);
    bd_duration_add(&st->fail, bd_now_ns() - j->start_ns);
    atomic_fetch_add(&st->failures[bd_status_fail_reason(code)], 1);
}

static void fail(infer_job *j, int code, const char *msg)
{
    record_failure(j, code);
    bd_call_fail(j->call, code, msg);
}

/* ---- validation (cq or loop thread) ------------------------------------------------------------ */

static void *own(infer_job *j, size_t bytes)
{
    void **o = realloc(j->owned, (j->n_owned + 1) * sizeof *o);
    if (!o)
        return NULL;
    j->owned = o;
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (p)
        j->owned[j->n_owned++] = p;
    return p;
}

static const char *contents_field(int dtype)
{
    switch (dtype) {
    case BD_DT_BOOL:   return "bool_contents";
    case BD_DT_INT8: case BD_DT_INT16: case BD_DT_INT32: return "int_contents";
    case BD_DT_INT64:  return "int64_contents";
    case BD_DT_UINT8: case BD_DT_UINT16: case BD_DT_UINT32: return "uint_contents";
    case BD_DT_UINT64: return "uint64_contents";
    case BD_DT_FLOAT:  return "fp32_contents";
    case BD_DT_DOUBLE: return "fp64_contents";
    default:           return NULL;
    }
}

/* Convert typed `contents` of input NAME (DTYPE, NUMEL elements) into DST. */
static int convert_contents(const inference_InferTensorContents *tc, const char *name, int dtype,
                            size_t numel, void *dst, bd_error *err)
{
    const char *field = contents_field(dtype);
    if (!field)
        return bd_error_set(err, BD_EINVAL, "input '%s': %s data must be sent in raw_input_contents "
                            "(typed contents cannot carry it)", name, bd_dtype_name(dtype));
    long got;
    if (dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE) {
        const bd_wire_spans *s = dtype == BD_DT_FLOAT ? &tc->fp32_contents : &tc->fp64_contents;
        got = bd_wire_spans_read_fixed(s, dtype == BD_DT_FLOAT ? 4 : 8, dst, numel);
        if (got < 0)
            got = (long)(bd_wire_spans_bytes(s) / (dtype == BD_DT_FLOAT ? 4 : 8));
    } else {
        const bd_wire_spans *s =
            dtype == BD_DT_BOOL ? &tc->bool_contents :
            dtype == BD_DT_INT64 ? &tc->int64_contents :
            dtype == BD_DT_UINT64 ? &tc->uint64_contents :
            (dtype == BD_DT_INT8 || dtype == BD_DT_INT16 || dtype == BD_DT_INT32) ? &tc->int_contents
                                                                                 : &tc->uint_contents;
        uint64_t *v = malloc((numel ? numel : 1) * sizeof *v);
        if (!v)
            return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", name);
        got = bd_wire_spans_read_varints(s, v, numel);
        if (got < 0) {
            free(v);
            return bd_error_set(err, BD_EINVAL, "input '%s': expected %zu %s values in contents.%s, "
                                "got more (or a malformed value)", name, numel, bd_dtype_name(dtype), field);
        }
        for (long i = 0; i < got && (size_t)got == numel; i++) {
            int64_t sv = (int64_t)v[i];
            bool ok = true;
            switch (dtype) {
            case BD_DT_BOOL:   ((uint8_t *)dst)[i] = v[i] != 0; break;
            case BD_DT_INT8:   ok = sv >= INT8_MIN && sv <= INT8_MAX;   ((int8_t *)dst)[i] = (int8_t)sv; break;
            case BD_DT_INT16:  ok = sv >= INT16_MIN && sv <= INT16_MAX; ((int16_t *)dst)[i] = (int16_t)sv; break;
            case BD_DT_INT32:  ok = sv >= INT32_MIN && sv <= INT32_MAX; ((int32_t *)dst)[i] = (int32_t)sv; break;
            case BD_DT_INT64:  ((int64_t *)dst)[i] = sv; break;
            case BD_DT_UINT8:  ok = v[i] <= UINT8_MAX;  ((uint8_t *)dst)[i] = (uint8_t)v[i]; break;
            case BD_DT_UINT16: ok = v[i] <= UINT16_MAX; ((uint16_t *)dst)[i] = (uint16_t)v[i]; break;
            case BD_DT_UINT32: ok = v[i] <= UINT32_MAX; ((uint32_t *)dst)[i] = (uint32_t)v[i]; break;
            default:           ((uint64_t *)dst)[i] = v[i]; break;
            }
            if (!ok) {
                free(v);
                return bd_error_set(err, BD_EINVAL, "input '%s': element %ld (%" PRId64 ") is out of "
                                    "range for %s", name, i, sv, bd_dtype_name(dtype));
            }
        }
        free(v);
    }
    if ((size_t)got != numel)
        return bd_error_set(err, BD_EINVAL, "input '%s': expected %zu %s values in contents.%s, got %ld",
                            name, numel, bd_dtype_name(dtype), field, got);
    return 0;
}

/* Check request input T (position K in the request) against signature input V and point
 * DL at its data. */
static int bind_input(infer_job *j, const inference_ModelInferRequest_InferInputTensor *t, size_t k,
                      const bd_value *v, DLTensor *dl, int64_t *shape, bd_error *err)
{
    const inference_ModelInferRequest *req = j->req;
    char want[128], got[128];
    int dt = bd_dtype_from_name(t->datatype);
    if (dt == BD_DT_UNDEFINED)
        return bd_error_set(err, BD_EINVAL, "input '%s': unknown datatype '%s' (expected %s)", v->name,
                            t->datatype ? t->datatype : "", bd_dtype_name(v->dtype));
    if (dt != v->dtype)
        return bd_error_set(err, BD_EINVAL, "input '%s': expected datatype %s, got %s", v->name,
                            bd_dtype_name(v->dtype), bd_dtype_name(dt));
    if (!bd_dtype_to_dl(dt, &dl->dtype))
        return bd_error_set(err, BD_EINVAL, "input '%s': %s tensors are not supported", v->name,
                            bd_dtype_name(dt));

    /* shape: the model's rank, every dim >= 0 and equal to the model's where it is fixed */
    bd_shape gs = { .rank = t->shape_count <= BD_MAX_RANK ? (int)t->shape_count : 0 };
    for (int d = 0; d < gs.rank; d++)
        gs.dims[d] = t->shape[d];
    bool ok = t->shape_count <= BD_MAX_RANK && (v->shape.rank < 0 || gs.rank == v->shape.rank);
    for (int d = 0; ok && d < gs.rank; d++)
        ok = t->shape[d] >= 0 && (v->shape.rank < 0 || v->shape.dims[d] < 0 || v->shape.dims[d] == t->shape[d]);
    if (!ok) {
        if (t->shape_count > BD_MAX_RANK)
            snprintf(got, sizeof got, "rank %u", (unsigned)t->shape_count);
        else
            bd_shape_str(&gs, got, sizeof got);
        return bd_error_set(err, BD_EINVAL, "input '%s': expected shape %s, got %s", v->name,
                            bd_shape_str(&v->shape, want, sizeof want), got);
    }
    int64_t numel = bd_shape_numel(&gs);
    size_t esize = bd_dtype_size(dt);
    if (numel < 0 || (uint64_t)numel > SIZE_MAX / esize)
        return bd_error_set(err, BD_EINVAL, "input '%s': shape %s is too large", v->name,
                            bd_shape_str(&gs, got, sizeof got));
    size_t bytes = (size_t)numel * esize;

    const void *data = NULL;
    if (req->raw_input_contents.list.count > 0) {
        if (t->has_contents)
            return bd_error_set(err, BD_EINVAL, "input '%s': has both contents and raw_input_contents "
                                "(send one or the other)", v->name);
        const bd_wire_span *sp = &req->raw_input_contents.list.items[k];
        if (sp->size != bytes)
            return bd_error_set(err, BD_EINVAL, "input '%s': expected %zu bytes of raw_input_contents "
                                "for %s %s, got %zu", v->name, bytes, bd_dtype_name(dt),
                                bd_shape_str(&gs, got, sizeof got), sp->size);
        data = sp->data;
        if (bytes && ((uintptr_t)data % esize) != 0) {     /* misaligned: copy once */
            void *copy = own(j, bytes);
            if (!copy)
                return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", v->name);
            memcpy(copy, data, bytes);
            data = copy;
        }
    } else {
        if (!t->has_contents && numel > 0)
            return bd_error_set(err, BD_EINVAL, "input '%s': no data: expected raw_input_contents or "
                                "contents.%s", v->name, contents_field(dt) ? contents_field(dt) : "(raw only)");
        void *dst = own(j, bytes);
        if (!dst)
            return bd_error_set(err, BD_ENOMEM, "input '%s': out of memory", v->name);
        if (t->has_contents) {
            int rc = convert_contents(&t->contents, v->name, dt, (size_t)numel, dst, err);
            if (rc)
                return rc;
        }
        data = dst;
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

static int bind_request(infer_job *j, bd_error *err)
{
    char list[256];
    const inference_ModelInferRequest *req = j->req;
    const bd_graph *g = j->graph;
    size_t n = bd_graph_num_inputs(g);
    if (req->raw_input_contents.list.count > 0 && req->raw_input_contents.list.count != req->inputs_count)
        return bd_error_set(err, BD_EINVAL, "raw_input_contents has %zu entries for %u inputs (expected "
                            "one per input, in the order of 'inputs')", req->raw_input_contents.list.count,
                            (unsigned)req->inputs_count);
    j->n_inputs = n;
    bool seen_small[JOB_SMALL];
    j->inputs = small_or_calloc(j->inputs_small, n, sizeof *j->inputs);
    j->shapes = small_or_calloc(j->shapes_small, n, sizeof *j->shapes);
    bool *seen = small_or_calloc(seen_small, n, sizeof *seen);
    int rc = 0;
    if (!j->inputs || !j->shapes || !seen) {
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < req->inputs_count && !rc; k++) {
        const inference_ModelInferRequest_InferInputTensor *t = &req->inputs[k];
        const char *name = t->name ? t->name : "";
        size_t i = 0;
        while (i < n && strcmp(bd_graph_input(g, i)->name, name) != 0)
            i++;
        if (i == n)
            rc = bd_error_set(err, BD_EINVAL, "unknown input '%s' (the model's inputs: %s)", name,
                              names(g, true, list, sizeof list));
        else if (seen[i])
            rc = bd_error_set(err, BD_EINVAL, "input '%s' is given twice", name);
        else {
            seen[i] = true;
            rc = bind_input(j, t, k, bd_graph_input(g, i), &j->inputs[i], j->shapes[i], err);
        }
    }
    for (size_t i = 0; i < n && !rc; i++)
        if (!seen[i])
            rc = bd_error_set(err, BD_EINVAL, "missing input '%s' (the model's inputs: %s)",
                              bd_graph_input(g, i)->name, names(g, true, list, sizeof list));
    if (rc)
        goto out;

    /* requested outputs: empty = all, in the model's order */
    size_t n_out = bd_graph_num_outputs(g);
    j->n_out = req->outputs_count ? req->outputs_count : n_out;
    j->out_idx = small_or_calloc(j->out_idx_small, j->n_out, sizeof *j->out_idx);
    if (!j->out_idx) {
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < j->n_out; k++) {
        if (!req->outputs_count) {
            j->out_idx[k] = k;
            continue;
        }
        const char *name = req->outputs[k].name ? req->outputs[k].name : "";
        size_t o = 0;
        while (o < n_out && strcmp(bd_graph_output(g, o)->name, name) != 0)
            o++;
        if (o == n_out) {
            rc = bd_error_set(err, BD_EINVAL, "unknown output '%s' (the model's outputs: %s)", name,
                              names(g, false, list, sizeof list));
            goto out;
        }
        j->out_idx[k] = o;
    }

    /* Batch: dim 0 when the model's first input has a dynamic leading dim, else 1. */
    j->batch = 1;
    if (n > 0) {
        const bd_value *v0 = bd_graph_input(g, 0);
        if (v0->shape.rank > 0 && v0->shape.dims[0] < 0 && j->inputs[0].ndim > 0)
            j->batch = (uint64_t)j->inputs[0].shape[0];
    }
out:
    free_unless(seen, seen_small);
    return rc;
}

/* ---- the worker -------------------------------------------------------------------------- */

static void job_drop(bd_job *base, int status)
{
    infer_job *j = (infer_job *)base;
    char msg[200];
    /* gRPC cancels a call whose deadline passed: count that as the deadline, not the client. */
    if (status == BD_ECANCELLED && base->deadline_ns && bd_now_ns() >= base->deadline_ns)
        status = BD_ETIMEDOUT;
    if (status == BD_ETIMEDOUT)
        snprintf(msg, sizeof msg, "deadline exceeded before the request ran (waited %.1f ms in the queue)",
                 (double)(bd_now_ns() - base->enqueue_ns) / 1e6);
    else if (status == BD_ECANCELLED)
        snprintf(msg, sizeof msg, "cancelled by the client");
    else
        snprintf(msg, sizeof msg, "braidd is shutting down: the request was not run");
    fail(j, status, msg);
    bd_call_unhold(j->call);
}

static void job_run(bd_job *base)
{
    infer_job *j = (infer_job *)base;
    bd_served *s = base->served;
    bd_model_stats *st = bd_served_stats(s);
    bd_error err = {0};
    const bd_plan *plan = NULL;
    bd_exec *exec = NULL;
    uint64_t t0 = bd_now_ns();

    int rc = bd_model_plan_acquire(bd_served_model(s), j->inputs, j->n_inputs, &plan, &err);
    if (!rc)
        rc = bd_served_exec_acquire(s, plan, &exec, &err);
    bd_plan_release(plan);      /* EXEC holds its own reference */
    uint64_t t1 = bd_now_ns();
    if (!rc)
        rc = bd_exec_run(exec, j->inputs, j->n_inputs, &err);
    uint64_t t2 = bd_now_ns();
    if (rc) {
        bd_log(rc == BD_EINVAL ? BD_LOG_DEBUG : BD_LOG_ERROR, bd_served_name(s), bd_served_version(s),
               "inference failed: %s", err.msg);
        if (exec)
            bd_served_exec_release(s, exec);
        fail(j, rc, err.msg);
        bd_call_unhold(j->call);
        return;
    }

    /* The response: outputs (requested, or all) with raw bytes streamed from EXEC. */
    const bd_graph *g = j->graph;
    inference_ModelInferResponse_InferOutputTensor outs_small[JOB_SMALL];
    bd_wire_span spans_small[JOB_SMALL];
    int64_t shapes_small[JOB_SMALL][BD_MAX_RANK];
    inference_ModelInferResponse_InferOutputTensor *outs = small_or_calloc(outs_small, j->n_out, sizeof *outs);
    bd_wire_span *spans = small_or_calloc(spans_small, j->n_out, sizeof *spans);
    int64_t (*shapes)[BD_MAX_RANK] = small_or_calloc(shapes_small, j->n_out, sizeof *shapes);
    if (!outs || !spans || !shapes) {
        free_unless(outs, outs_small);
        free_unless(spans, spans_small);
        free_unless(shapes, shapes_small);
        bd_served_exec_release(s, exec);
        fail(j, BD_ENOMEM, "out of memory building the response");
        bd_call_unhold(j->call);
        return;
    }
    for (size_t k = 0; k < j->n_out; k++) {
        const DLTensor *t = bd_exec_output(exec, j->out_idx[k]);
        const bd_value *v = bd_graph_output(g, j->out_idx[k]);
        size_t numel = 1;
        for (int d = 0; d < t->ndim && d < BD_MAX_RANK; d++) {
            shapes[k][d] = t->shape[d];
            numel *= (size_t)t->shape[d];
        }
        outs[k].name = (char *)v->name;
        outs[k].datatype = (char *)bd_dtype_name(v->dtype);
        outs[k].shape_count = (pb_size_t)(t->ndim < BD_MAX_RANK ? t->ndim : BD_MAX_RANK);
        outs[k].shape = shapes[k];
        spans[k] = (bd_wire_span){ (const uint8_t *)t->data + t->byte_offset, numel * ((t->dtype.bits + 7u) / 8u) };
    }
    inference_ModelInferResponse rsp = {
        .model_name = (char *)bd_served_name(s),
        .model_version = (char *)bd_served_version(s),
        .id = j->req->id,
        .outputs_count = (pb_size_t)j->n_out,
        .outputs = outs,
    };
    bd_wire_spans_borrow(&rsp.raw_output_contents, spans, j->n_out);

    /* Statistics before the reply: a client that reads them after its response must see
     * its own request counted. */
    uint64_t t3 = bd_now_ns();
    uint64_t total = t3 - j->start_ns;
    uint64_t backend_ns[BD_MAX_BACKENDS];
    size_t nb = bd_exec_backend_ns(exec, backend_ns, BD_MAX_BACKENDS);
    for (size_t b = 0; b < nb; b++)
        atomic_fetch_add(&st->backend_ns[b], backend_ns[b]);
    bd_duration_add(&st->success, total);
    bd_duration_add(&st->compute_input, j->input_ns + (t1 - t0));
    bd_duration_add(&st->compute_infer, t2 - t1);
    bd_duration_add(&st->compute_output, t3 - t2);
    bd_histogram_observe(&st->compute_hist, t2 - t1);
    bd_histogram_observe(&st->total_hist, total);
    atomic_fetch_add(&st->inference_count, j->batch);
    atomic_fetch_add(&st->execution_count, 1);
    atomic_store(&st->last_inference_ms, bd_wall_ms());

    bd_call_reply(j->call, inference_ModelInferResponse_fields, &rsp);   /* encodes (copies) now */
    bd_served_exec_release(s, exec);
    free_unless(outs, outs_small);
    free_unless(spans, spans_small);
    free_unless(shapes, shapes_small);
    bd_call_unhold(j->call);
}

/* ---- running at once (cq thread) ----------------------------------------------------------- */

/* A request may skip the worker pool and run on the cq thread that received it when waking a
 * worker would cost more than the run itself: the model's runs so far (at least
 * INLINE_MIN_RUNS, on the workers first) took under INLINE_MAX_NS on average, its inputs are
 * all static (one possible plan, compiled at load: no request can bring a slower shape or
 * need compiling), and none of its requests is queued or running (nothing is overtaken).
 * Runs over INLINE_ALWAYS_NS also need the cq thread to have been idle for INLINE_MIN_IDLE_NS
 * before the call arrived: when it is behind (a burst of concurrent calls), the workers run
 * them in parallel while it reads the next ones; shorter runs cost it less than handing them
 * over would. So the cq thread is never held up much longer than one worker wake-up. */
#ifndef INLINE_MAX_NS                   /* overridable for profiling under valgrind */
#define INLINE_MAX_NS   50000
#endif
#define INLINE_ALWAYS_NS   5000
#define INLINE_MIN_IDLE_NS 10000
#define INLINE_MIN_RUNS    8

static bool runs_inline(const infer_job *j)
{
    bd_model_stats *st = bd_served_stats(j->base.served);
    uint64_t n = atomic_load_explicit(&st->compute_infer.count, memory_order_relaxed);
    uint64_t ns = atomic_load_explicit(&st->compute_infer.ns, memory_order_relaxed) +
                  atomic_load_explicit(&st->compute_output.ns, memory_order_relaxed);
    if (n < INLINE_MIN_RUNS || ns / n > INLINE_MAX_NS)
        return false;
    if (ns / n > INLINE_ALWAYS_NS && bd_call_cq_waited_ns(j->call) < INLINE_MIN_IDLE_NS)
        return false;
    if (atomic_load(&st->queued) != 0 || atomic_load(&st->in_flight) != 0)
        return false;
    for (size_t i = 0; i < bd_graph_num_inputs(j->graph); i++) {
        const bd_shape *sh = &bd_graph_input(j->graph, i)->shape;
        if (sh->rank < 0)
            return false;
        for (int d = 0; d < sh->rank; d++)
            if (sh->dims[d] < 0)
                return false;
    }
    return true;
}

/* What a worker does with a job (scheduler.c), on this thread: drop it if its deadline has
 * passed, else run it with the same gauges and statistics (no time queued). */
static void run_inline(infer_job *j)
{
    bd_served *v = j->base.served;
    bd_model_stats *st = bd_served_stats(v);
    uint64_t now = bd_now_ns();
    j->base.enqueue_ns = now;
    bd_call_hold(j->call);                      /* released by job_run / job_drop */
    if (atomic_load(&j->base.cancelled)) {
        job_drop(&j->base, BD_ECANCELLED);
        return;
    }
    if (j->base.deadline_ns && now >= j->base.deadline_ns) {
        job_drop(&j->base, BD_ETIMEDOUT);
        return;
    }
    bd_duration_add(&st->queue, 0);
    bd_histogram_observe(&st->queue_hist, 0);
    bd_served_retain(v);                        /* the gauge outlives the job's reference */
    atomic_fetch_add_explicit(&st->in_flight, 1, memory_order_relaxed);
    job_run(&j->base);
    atomic_fetch_sub_explicit(&st->in_flight, 1, memory_order_relaxed);
    bd_served_release(v);
}

/* ---- the handlers ---------------------------------------------------------------------------- */

/* Decode C's request into a new job, set as the call's state; NULL when already answered
 * (malformed, out of memory). */
static infer_job *job_new(bd_call *c)
{
    uint64_t start = bd_now_ns();
    inference_ModelInferRequest *req = BD_CALL_DECODE(c, inference_ModelInferRequest, "ModelInferRequest");
    if (!req)
        return NULL;
    infer_job *j = calloc(1, sizeof *j);
    if (!j) {
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return NULL;
    }
    bd_call_set_state(c, j, job_free);
    j->call = c;
    j->req = req;
    j->start_ns = start;
    return j;
}

/* J has its version: check the request against the model, then run it — on a worker, or at
 * once when MAY_INLINE (never on the loop) and runs_inline() says so. */
static void job_start(infer_job *j, bool may_inline)
{
    bd_call *c = j->call;
    bd_error err = {0};
    int rc;
    j->graph = bd_model_graph(bd_served_model(j->base.served));
    if ((rc = bind_request(j, &err)) != 0) {
        bd_error_prefix(&err, "model '%s': ", bd_served_name(j->base.served));
        fail(j, rc, err.msg);
        return;
    }
    j->input_ns = bd_now_ns() - j->start_ns;
    j->base.deadline_ns = bd_call_deadline_ns(c);
    j->base.run = job_run;
    j->base.drop = job_drop;
    atomic_init(&j->base.cancelled, false);
    bd_call_watch_cancel(c, &j->base.cancelled);

    if (may_inline && runs_inline(j)) {
        run_inline(j);
        return;
    }
    bd_call_hold(c);                    /* the worker's: released at the end of run/drop */
    if ((rc = bd_scheduler_submit(bd_call_scheduler(c), &j->base, &err)) != 0) {
        bd_call_unhold(c);
        fail(j, rc, err.msg);
    }
}

bool bd_rpc_model_infer_fast(bd_call *c)
{
    infer_job *j = job_new(c);
    if (!j)
        return true;
    j->base.served = bd_call_cached_served(c, j->req->model_name ? j->req->model_name : "",
                                           j->req->model_version);
    if (!j->base.served)
        return false;                   /* the loop asks the registry (bd_rpc_model_infer) */
    job_start(j, true);
    return true;
}

void bd_rpc_model_infer(bd_call *c)
{
    infer_job *j = bd_call_state(c);    /* decoded already when the fast handler passed it on */
    if (!j && !(j = job_new(c)))
        return;
    bd_error err = {0};
    int rc = bd_registry_acquire(bd_call_registry(c), j->req->model_name ? j->req->model_name : "",
                                 j->req->model_version, &j->base.served, &err);
    if (rc) {
        bd_call_fail(c, rc, err.msg);
        return;
    }
    bd_call_remember_served(c, j->base.served);   /* the next request for it skips the loop */
    job_start(j, false);
}
