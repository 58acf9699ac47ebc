/* ModelInfer: validate on the cq thread (or the loop), run and answer on a worker.
 *
 *   cq      decode (tensor bytes stay in the received message; counts bounded and strings
 *           checked first, wire_span.h), take the model version from the server's
 *           served-version table (on a miss, the loop acquires it from the registry and fills
 *           the table), read the message as the neutral request (rpc_infer_request.h), bind
 *           it to the model's signature (infer_bind.h: DLTensors pointing INTO the message),
 *           and queue a job with the call's deadline.
 *   worker  plan for these shapes, refuse a response the plan already shows too large for
 *           the send limit, borrow an execution context, run, take the answer from the
 *           context's output tensors (infer_reply.h), size its encoding (refused over the
 *           limit, before anything is allocated for it), record statistics, send it.
 *
 * The REST port hands the same handler its request in memory (bd_dispatch_call.request:
 * a bd_infer_request, no protobuf on the way), and gets the answer in memory
 * (bd_call_reply_in_memory: the bd_infer_reply), after the same checks and statistics.
 *
 * A model whose runs take microseconds runs on the cq thread itself while none of its
 * requests is queued or running (runs_inline: waking a worker would cost more than the run). */
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pb_encode.h>

#include "core/ir/dtype.h"
#include "proto/inference.pb.h"
#include "daemon/infer/infer_batch.h"
#include "daemon/infer/infer_bind.h"
#include "daemon/infer/infer_reply.h"
#include "daemon/infer/infer_request.h"
#include "daemon/log.h"
#include "daemon/grpc/rpc.h"
#include "daemon/grpc/rpc_infer_request.h"
#include "daemon/grpc/rpc_infer_response.h"
#include "daemon/grpc/status_map.h"

#define JOB_SMALL BD_INFER_SMALL

typedef struct infer_job {
    bd_job       base;                       /* first: the scheduler hands us &base */
    bd_call     *call;
    const char  *model, *version;            /* what the request names */
    const inference_ModelInferRequest *msg;  /* the decoded message (owned by the call), or
                                                NULL: the request came in memory */
    const bd_infer_request *req;             /* what is bound: FROM_MSG, or the call's */
    bd_infer_request from_msg;
    const bd_graph *graph;                   /* the model's signature (lives with served) */
    bd_infer_binding b;                      /* inputs (signature order), requested outputs */
    uint64_t     start_ns;
    uint64_t     input_ns;                   /* decoding and checking, before the run */
} infer_job;

static void job_free(void *p)
{
    infer_job *j = p;
    bd_infer_binding_release(&j->b);
    bd_infer_request_free(&j->from_msg);
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

/* ---- the worker -------------------------------------------------------------------------- */

#define DEADLINE_SLACK_NS (50 * 1000 * 1000)

static void job_drop(bd_job *base, int status)
{
    infer_job *j = (infer_job *)base;
    char msg[200];
    /* gRPC cancels a call whose deadline passed: count that as the deadline, not the client.
     * The client's clock started before the request reached us, so its deadline fires first:
     * a cancel within DEADLINE_SLACK_NS of ours is that deadline (seen on a loaded machine:
     * the cancel arrived a few ms before our deadline and was counted as the client's). */
    if (status == BD_ECANCELLED && base->deadline_ns &&
        bd_now_ns() + DEADLINE_SLACK_NS >= base->deadline_ns)
        status = BD_ETIMEDOUT;
    if (status == BD_ETIMEDOUT)
        snprintf(msg, sizeof msg, "deadline exceeded before the request ran (waited %.1f ms in the queue)",
                 (double)(bd_now_ns() - base->enqueue_ns) / 1e6);
    else if (status == BD_ECANCELLED)
        snprintf(msg, sizeof msg, "cancelled by the client");
    else if (base->why)
        snprintf(msg, sizeof msg, "%s (waited %.1f ms)", base->why,
                 (double)(bd_now_ns() - base->enqueue_ns) / 1e6);
    else
        snprintf(msg, sizeof msg, "braidd is shutting down: the request was not run");
    fail(j, status, msg);
    bd_call_unhold(j->call);
}

/* BD_EINVAL when a response of BYTES (or more) exceeds the send limit: the same request can
 * never succeed, so this is the request's fault, not a full queue (RESOURCE_EXHAUSTED means
 * "retry later" in braid; docs/protocol.md). */
static int check_response_size(const infer_job *j, uint64_t bytes, bool at_least, bd_error *err)
{
    size_t limit = bd_call_config(j->call)->max_message_bytes;
    if (bytes <= limit)
        return 0;
    return bd_error_set(err, BD_EINVAL, "the response would be %s%" PRIu64 " bytes, over the send limit "
                        "of %zu bytes (max_message_bytes): request fewer outputs or send a smaller "
                        "input", at_least ? "at least " : "", bytes, limit);
}

static void write_response(const void *rsp, uint8_t *dst)
{
    bd_infer_response_write(rsp, dst);
}

/* Run B on EXEC, outputs sent to shared memory written straight into their regions where the
 * runtime can (bd_exec_run_into's conditions); bd_infer_shm_outputs copies the others. */
static int run_into_shm(bd_exec *exec, const bd_infer_binding *b, bd_error *err)
{
    if (!b->shm_out)
        return bd_exec_run(exec, b->inputs, b->n_inputs, err);
    size_t n = bd_exec_num_outputs(exec);
    bd_exec_dest dest_small[JOB_SMALL];
    bd_exec_dest *dest = bd_infer_small_or_calloc(dest_small, n, sizeof *dest);
    if (!dest)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    bd_infer_shm_dest(b, dest, n);
    int rc = bd_exec_run_into(exec, b->inputs, b->n_inputs, dest, n, err);
    bd_infer_free_unless(dest, dest_small);
    return rc;
}

/* When a run's steps happened, and the rows it ran (0: counted with an earlier reply). */
typedef struct run_times {
    uint64_t t0, t1, t2;                    /* before gathering/planning, before the run, after */
    uint64_t rows;
} run_times;

/* Statistics before the reply: a client that reads them after its response must see its own
 * request counted. Triton's: each request counts its rows and the whole run's compute time;
 * execution_count counts plan runs (T->rows > 0: the run's own, once per plan run). */
static void record_success(const infer_job *j, const bd_exec *exec, const run_times *t)
{
    bd_model_stats *st = bd_served_stats(j->base.served);
    uint64_t t3 = bd_now_ns();
    uint64_t total = t3 - j->start_ns;
    if (t->rows > 0) {
        uint64_t backend_ns[BD_MAX_BACKENDS];
        size_t nb = bd_exec_backend_ns(exec, backend_ns, BD_MAX_BACKENDS);
        for (size_t b = 0; b < nb; b++)
            atomic_fetch_add(&st->backend_ns[b], backend_ns[b]);
        atomic_fetch_add(&st->execution_count, 1);
        bd_batch_stat_add(st, t->rows, t->t1 - t->t0, t->t2 - t->t1, t3 - t->t2);
    }
    bd_duration_add(&st->success, total);
    bd_duration_add(&st->compute_input, j->input_ns + (t->t1 - t->t0));
    bd_duration_add(&st->compute_infer, t->t2 - t->t1);
    bd_duration_add(&st->compute_output, t3 - t->t2);
    bd_histogram_observe(&st->compute_hist, t->t2 - t->t1);
    bd_histogram_observe(&st->total_hist, total);
    atomic_fetch_add(&st->inference_count, j->b.batch);
    atomic_store(&st->last_inference_ms, bd_wall_ms());
}

/* An answer as a ModelInferResponse (its tensors borrowed from the bd_infer_reply), sized:
 * by arithmetic when rpc_infer_response.c can write it (every plain inference), else by nanopb's
 * sizing pass. Sizing copies no tensor. */
typedef struct pb_answer {
    inference_ModelInferResponse rsp;
    inference_ModelInferResponse_InferOutputTensor *outs;
    size_t size;
    bool   by_hand;
    inference_ModelInferResponse_InferOutputTensor outs_small[JOB_SMALL];
} pb_answer;

static int pb_answer_build(pb_answer *a, const infer_job *j, const bd_infer_reply *r, bd_error *err)
{
    a->outs = bd_infer_small_or_calloc(a->outs_small, r->n, sizeof *a->outs);
    if (!a->outs)
        return bd_error_set(err, BD_ENOMEM, "out of memory building the response");
    for (size_t k = 0; k < r->n; k++)
        a->outs[k] = (inference_ModelInferResponse_InferOutputTensor){
            .name = (char *)r->out[k].name, .datatype = (char *)r->out[k].datatype,
            .shape_count = (pb_size_t)r->out[k].ndim, .shape = (int64_t *)r->out[k].shape };
    a->rsp = (inference_ModelInferResponse){
        .model_name = (char *)r->model, .model_version = (char *)r->version, .id = (char *)r->id,
        .outputs_count = (pb_size_t)r->n, .outputs = a->outs };
    bd_wire_spans_borrow(&a->rsp.raw_output_contents, r->data, r->n);
    a->by_hand = bd_infer_response_size(&a->rsp, &a->size);
    if (!a->by_hand && !pb_get_encoded_size(&a->size, inference_ModelInferResponse_fields, &a->rsp))
        return bd_error_set(err, BD_EIO, "cannot encode the response");
    return check_response_size(j, a->size, false, err);     /* one limit for both ports */
}

/* Answer J with R as its request came: in memory (REST), or encoded (now: it copies). */
static void send_answer(const infer_job *j, const bd_infer_reply *r, const pb_answer *a)
{
    if (!j->msg)
        bd_call_reply_in_memory(j->call, r);
    else if (a->by_hand)
        bd_call_reply_sized(j->call, inference_ModelInferResponse_fields, &a->rsp, a->size,
                            write_response);
    else
        bd_call_reply(j->call, inference_ModelInferResponse_fields, &a->rsp);
}

static const bd_labels *served_labels(const void *served, size_t graph_output)
{
    return bd_served_labels(served, graph_output);
}

/* Answer J from a finished run: its outputs are OUTS_BY_GRAPH[graph output] when given (its
 * rows of a batch), else EXEC's. Records J's statistics and answers the call either way; the
 * caller releases EXEC. */
static void job_reply(infer_job *j, bd_exec *exec, const DLTensor *outs_by_graph, const run_times *t)
{
    bd_served *s = j->base.served;
    bd_model_stats *st = bd_served_stats(s);
    bd_infer_classify_opts opts = {
        .batched = bd_served_max_batch_size(s) > 0, .labels = served_labels, .labels_arg = s,
        .limit = bd_call_config(j->call)->max_message_bytes };
    bd_infer_reply r = { .model = bd_served_name(s), .version = bd_served_version(s),
                         .id = j->req->id };
    pb_answer a = {0};
    bd_error err = {0};
    int rc = bd_infer_reply_build(&r, &j->b, j->graph, exec, outs_by_graph, &opts, &err);
    atomic_fetch_add(&st->shm_out_in_place_bytes, r.shm_in_place);
    atomic_fetch_add(&st->shm_out_copied_bytes, r.shm_copied);
    if (!rc)
        rc = pb_answer_build(&a, j, &r, &err);
    if (rc) {
        bd_log(rc == BD_EINVAL ? BD_LOG_DEBUG : BD_LOG_ERROR, bd_served_name(s), bd_served_version(s),
               "inference failed: %s", err.msg);
        fail(j, rc, err.msg);
    } else {
        record_success(j, exec, t);
        send_answer(j, &r, &a);
    }
    bd_infer_free_unless(a.outs, a.outs_small);
    bd_infer_reply_free(&r);
    bd_call_unhold(j->call);
}

static void job_run(bd_job *base)
{
    infer_job *j = (infer_job *)base;
    bd_served *s = base->served;
    bd_error err = {0};
    const bd_plan *plan = NULL;
    bd_exec *exec = NULL;
    uint64_t t0 = bd_now_ns();
    uint64_t planned;

    bool classifies = false;                /* classified outputs' sizes are known only after */
    for (size_t k = 0; k < j->b.n_out; k++)
        classifies |= j->b.classify[k] > 0;
    int rc = bd_model_plan_acquire(bd_served_model(s), j->b.inputs, j->b.n_inputs, &plan, &err);
    if (!rc && !classifies &&
        bd_infer_response_bytes(&j->b, bd_plan_graph(plan), &planned))
        rc = check_response_size(j, planned, true, &err);   /* before running it for nothing */
    if (!rc)
        rc = bd_served_exec_acquire(s, plan, &exec, &err);
    bd_plan_release(plan);      /* EXEC holds its own reference */
    uint64_t t1 = bd_now_ns();
    if (!rc)
        rc = run_into_shm(exec, &j->b, &err);
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
    job_reply(j, exec, NULL, &(run_times){ t0, t1, t2, j->b.batch ? j->b.batch : 1 });
    bd_served_exec_release(s, exec);
}

/* ---- dynamic batching (scheduler.h) -------------------------------------------------------- */

static bool job_joins(const bd_job *head, const bd_job *other)
{
    return bd_batch_joins(&((const infer_job *)head)->b, &((const infer_job *)other)->b);
}

/* N >= 2 jobs (LIST) as one plan run: their inputs concatenated along dim 0, each answered
 * with its own rows of every output. Any failure answers every one of them with it. */
static void job_run_batch(bd_job *list, size_t n)
{
    bd_served *s = list->served;
    const bd_graph *g = ((infer_job *)list)->graph;
    size_t n_graph_out = bd_graph_num_outputs(g);
    bd_error err = {0};
    bd_batch_inputs in = {0};
    const bd_plan *plan = NULL;
    bd_exec *exec = NULL;
    uint64_t t0 = bd_now_ns(), t1 = t0, t2 = t0;

    infer_job **jobs = calloc(n, sizeof *jobs);
    DLTensor *views = calloc(n_graph_out ? n_graph_out : 1, sizeof *views);
    int64_t (*view_shapes)[BD_MAX_RANK] = calloc(n_graph_out ? n_graph_out : 1, sizeof *view_shapes);
    int rc = 0;
    if (!jobs || !views || !view_shapes)
        rc = bd_error_set(&err, BD_ENOMEM, "out of memory forming a batch");
    size_t k = 0;
    for (bd_job *b = list; b && k < n; b = b->next)
        if (jobs)
            jobs[k++] = (infer_job *)b;
    if (!rc) {
        const bd_infer_binding **members = calloc(n, sizeof *members);
        if (!members)
            rc = bd_error_set(&err, BD_ENOMEM, "out of memory forming a batch");
        for (size_t m = 0; !rc && m < n; m++)
            members[m] = &jobs[m]->b;
        if (!rc)
            rc = bd_batch_gather(members, n, (uint64_t)bd_served_max_batch_size(s), &in, &err);
        free(members);
    }
    if (!rc && (rc = bd_model_plan_acquire(bd_served_model(s), in.t, in.n, &plan, &err)) == BD_EINVAL) {
        /* The batch's shape is refused (over input_shapes' range of dim 0, or its run would
         * need more than max_run_memory_bytes) where each request's own may not be: run them
         * one by one, as without batching. */
        bd_log(BD_LOG_DEBUG, bd_served_name(s), bd_served_version(s), "a batch of %" PRIu64
               " rows cannot be planned (%s): its %zu requests run one by one", in.rows, err.msg, n);
        bd_batch_inputs_free(&in);
        free(jobs);
        free(views);
        free(view_shapes);
        for (bd_job *b = list, *next; b; b = next) {
            next = b->next;
            b->next = NULL;
            job_run(b);
        }
        return;
    }
    if (!rc)
        rc = bd_served_exec_acquire(s, plan, &exec, &err);
    bd_plan_release(plan);
    t1 = bd_now_ns();
    if (!rc)
        rc = bd_exec_run(exec, in.t, in.n, &err);
    t2 = bd_now_ns();
    for (size_t o = 0; !rc && o < n_graph_out; o++) {   /* every output keeps the batch */
        const DLTensor *t = bd_exec_output(exec, o);
        if (!t || t->ndim < 1 || t->shape[0] != (int64_t)in.rows)
            rc = bd_error_set(&err, BD_EBACKEND, "output '%s' does not have the batch's %" PRIu64
                              " rows on dim 0: the model cannot be batched (remove "
                              "dynamic_batching from its config.json)", bd_graph_output(g, o)->name,
                              in.rows);
    }
    uint64_t run_rows = in.rows;
    bd_batch_inputs_free(&in);
    if (rc) {
        bd_log(BD_LOG_ERROR, bd_served_name(s), bd_served_version(s),
               "batched inference of %zu requests failed: %s", n, err.msg);
        if (exec)
            bd_served_exec_release(s, exec);
        for (bd_job *b = list, *next; b; b = next) {
            next = b->next;
            infer_job *j = (infer_job *)b;
            fail(j, rc, err.msg);
            bd_call_unhold(j->call);
        }
        free(jobs);
        free(views);
        free(view_shapes);
        return;
    }
    uint64_t offset = 0;
    for (size_t m = 0; m < n; m++) {
        infer_job *j = jobs[m];
        uint64_t rows = j->base.rows;
        int src = 0;
        for (size_t o = 0; !src && o < n_graph_out; o++)
            src = bd_batch_slice(bd_exec_output(exec, o), offset, rows, &views[o], view_shapes[o], &err);
        offset += rows;
        if (src) {
            fail(j, src, err.msg);
            bd_call_unhold(j->call);
            continue;
        }
        job_reply(j, exec, views, &(run_times){ t0, t1, t2, run_rows });
        run_rows = 0;                               /* counted once, with the first reply */
    }
    bd_served_exec_release(s, exec);
    free(jobs);
    free(views);
    free(view_shapes);
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

/* C's request (decoded, or the one it carries in memory) in a new job, set as the call's
 * state; NULL when already answered (malformed, out of memory). */
static infer_job *job_new(bd_call *c)
{
    uint64_t start = bd_now_ns();
    const bd_infer_request *in_memory = bd_call_local_request(c);
    const inference_ModelInferRequest *msg = in_memory ? NULL :
        BD_CALL_DECODE(c, inference_ModelInferRequest, "ModelInferRequest");
    if (!in_memory && !msg)
        return NULL;
    infer_job *j = calloc(1, sizeof *j);
    if (!j) {
        bd_call_fail(c, BD_ENOMEM, "out of memory");
        return NULL;
    }
    bd_call_set_state(c, j, job_free);
    j->call = c;
    j->msg = msg;
    j->req = in_memory;
    j->model = msg ? (msg->model_name ? msg->model_name : "") : in_memory->model;
    j->version = msg ? msg->model_version : in_memory->version;
    j->start_ns = start;
    return j;
}

/* J's request (read from its message first, when it came as one) bound to its model. */
static int bind_request(infer_job *j, bd_error *err)
{
    if (j->msg) {
        int rc = bd_rpc_infer_request(&j->from_msg, j->msg, err);
        if (rc)
            return rc;
        j->req = &j->from_msg;
    }
    return bd_infer_bind(&j->b, j->req, j->graph, err);
}

/* max_batch_size > 0 (config.json, Triton's convention): every input's first dim is the
 * batch, the same in all inputs and at most max_batch_size. */
static int check_batch(const infer_job *j, bd_error *err)
{
    int max_batch = bd_served_max_batch_size(j->base.served);
    if (max_batch <= 0)
        return 0;
    const char *model = bd_served_name(j->base.served);
    for (size_t i = 0; i < j->b.n_inputs; i++) {
        const DLTensor *t = &j->b.inputs[i];
        const char *name = bd_graph_input(j->graph, i)->name;
        if (t->ndim < 1)
            return bd_error_set(err, BD_EINVAL, "model '%s': input '%s' has no batch dim (the "
                                "model's max_batch_size is %d)", model, name, max_batch);
        if (t->shape[0] > max_batch)
            return bd_error_set(err, BD_EINVAL, "model '%s': input '%s' has batch size %lld, over "
                                "the model's max_batch_size of %d: split the request", model, name,
                                (long long)t->shape[0], max_batch);
        if (t->shape[0] != j->b.inputs[0].shape[0])
            return bd_error_set(err, BD_EINVAL, "model '%s': input '%s' has batch size %lld but "
                                "input '%s' has %lld: every input carries the same batch", model,
                                name, (long long)t->shape[0], bd_graph_input(j->graph, 0)->name,
                                (long long)j->b.inputs[0].shape[0]);
    }
    return 0;
}

/* A batching model's queue placement (Triton's request parameters): "priority" (1 = first;
 * 0 or over priority_levels = the default level) and "timeout" (microseconds; lowers the
 * queue policy's default_timeout_microseconds when allow_timeout_override), and the batch
 * rows. */
static int queue_parameters(infer_job *j, bd_error *err)
{
    const bd_batching_config *bc = bd_served_batching_config(j->base.served);
    if (j->req->bad_queue_param)
        return bd_error_set(err, BD_EINVAL, "request parameter '%s' must be a non-negative integer",
                            j->req->bad_queue_param);
    uint64_t priority = j->req->priority, timeout_us = j->req->timeout_us;
    j->base.level = 0;
    if (bc->priority_levels > 0)
        j->base.level = priority == 0 || priority > bc->priority_levels ? bc->default_priority_level
                                                                        : (uint32_t)priority;
    uint64_t t = bc->default_timeout_us;
    if (bc->allow_timeout_override && timeout_us > 0 && (t == 0 || timeout_us < t))
        t = timeout_us;
    if (t > UINT64_C(3600000000))
        t = UINT64_C(3600000000);                   /* an hour: no overflow below */
    j->base.timeout_ns = t ? bd_now_ns() + t * 1000u : 0;
    j->base.rows = j->b.n_inputs > 0 && j->b.inputs[0].ndim > 0 ? (uint64_t)j->b.inputs[0].shape[0] : 0;
    j->base.joins = job_joins;
    j->base.run_batch = job_run_batch;
    return 0;
}

/* J has its version: check the request against the model, then run it — on a worker, or at
 * once when MAY_INLINE (never on the loop) and runs_inline() says so. */
static void job_start(infer_job *j, bool may_inline)
{
    bd_call *c = j->call;
    bd_error err = {0};
    int rc;
    j->graph = bd_model_graph(bd_served_model(j->base.served));
    j->b.shm_copy_limit = bd_call_config(c)->max_run_memory_bytes;
    if ((rc = bind_request(j, &err)) != 0) {
        bd_error_prefix(&err, "model '%s': ", bd_served_name(j->base.served));
        fail(j, rc, err.msg);
        return;
    }
    if ((rc = check_batch(j, &err)) != 0) {
        fail(j, rc, err.msg);
        return;
    }
    bool batches = bd_served_batches(j->base.served);
    if (batches && (rc = queue_parameters(j, &err)) != 0) {
        fail(j, rc, err.msg);
        return;
    }
    j->input_ns = bd_now_ns() - j->start_ns;
    j->base.deadline_ns = bd_call_deadline_ns(c);
    j->base.run = job_run;
    j->base.drop = job_drop;
    atomic_init(&j->base.cancelled, false);
    bd_call_watch_cancel(c, &j->base.cancelled);

    /* A batching model that waits for no company runs a lone request as a batch of one. */
    if (may_inline && (!batches || bd_served_batching_config(j->base.served)->max_queue_delay_us == 0) &&
        runs_inline(j)) {
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
    j->base.served = bd_call_cached_served(c, j->model, j->version);
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
    int rc = bd_registry_acquire(bd_call_registry(c), j->model, j->version, &j->base.served, &err);
    if (rc) {
        bd_call_fail(c, rc, err.msg);
        return;
    }
    bd_call_remember_served(c, j->base.served);   /* the next request for it skips the loop */
    job_start(j, false);
}
