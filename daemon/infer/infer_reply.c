/* The answer to a bound request (infer_reply.h). */
#include "daemon/infer/infer_reply.h"

#include <stdlib.h>
#include <string.h>

#include "core/ir/dtype.h"
#include "daemon/infer/infer_classify.h"

void bd_infer_reply_free(bd_infer_reply *r)
{
    if (!r)
        return;
    for (size_t k = 0; r->classified && k < r->n; k++)
        free(r->classified[k]);
    bd_infer_free_unless(r->classified, r->classified_small);
    bd_infer_free_unless(r->out, r->out_small);
    bd_infer_free_unless(r->data, r->data_small);
    memset(r, 0, sizeof *r);
}

/* Response output K of R from tensor T (graph output V): shape and bytes, as the run left
 * them. */
static int take_tensor(bd_infer_reply *r, size_t k, const DLTensor *t, const bd_value *v,
                       bd_error *err)
{
    bd_infer_reply_output *o = &r->out[k];
    size_t numel = 1, bytes = 0;
    bool ok = t && t->ndim >= 0 && t->ndim <= BD_MAX_RANK;
    for (int d = 0; ok && d < t->ndim; d++) {
        o->shape[d] = t->shape[d];
        ok = t->shape[d] >= 0 && !__builtin_mul_overflow(numel, (size_t)t->shape[d], &numel);
    }
    if (!ok || __builtin_mul_overflow(numel, bd_dl_elem_bytes(t->dtype), &bytes))
        return bd_error_set(err, BD_EBACKEND, "output '%s': the run produced an invalid tensor",
                            v->name);
    o->name = v->name;
    o->datatype = bd_dtype_name(v->dtype);
    o->ndim = t->ndim;
    r->data[k] = (bd_wire_span){ (const uint8_t *)t->data + t->byte_offset, bytes };
    return 0;
}

/* Response output K of R: tensor T's K highest classes instead (infer_classify.h). */
static int classify(bd_infer_reply *r, size_t k, const DLTensor *t, uint32_t count,
                    size_t graph_output, const bd_value *v, const bd_infer_classify_opts *opts,
                    bd_error *err)
{
    const bd_labels *labels = opts->labels ? opts->labels(opts->labels_arg, graph_output) : NULL;
    bd_classified cl;
    int rc = bd_classify(t, v->name, opts->batched, count, labels, opts->limit, &cl, err);
    if (rc)
        return rc;
    r->classified[k] = cl.data;
    r->out[k].datatype = "BYTES";
    r->out[k].ndim = cl.ndim;
    memcpy(r->out[k].shape, cl.shape, sizeof cl.shape);
    r->data[k] = (bd_wire_span){ cl.data, cl.bytes };
    return 0;
}

int bd_infer_reply_build(bd_infer_reply *r, const bd_infer_binding *b, const bd_graph *g,
                         const bd_exec *exec, const DLTensor *outs_by_graph,
                         const bd_infer_classify_opts *opts, bd_error *err)
{
    r->n = b->n_out;
    r->out = bd_infer_small_or_calloc(r->out_small, r->n, sizeof *r->out);
    r->data = bd_infer_small_or_calloc(r->data_small, r->n, sizeof *r->data);
    r->classified = bd_infer_small_or_calloc(r->classified_small, r->n, sizeof *r->classified);
    if (!r->out || !r->data || !r->classified) {
        r->n = 0;                   /* nothing to free per output */
        return bd_error_set(err, BD_ENOMEM, "out of memory building the response");
    }
    for (size_t k = 0; k < r->n; k++) {
        size_t o = b->out_idx[k];
        const DLTensor *t = outs_by_graph ? &outs_by_graph[o] : bd_exec_output(exec, o);
        const bd_value *v = bd_graph_output(g, o);
        int rc = take_tensor(r, k, t, v, err);
        if (!rc && b->classify[k])
            rc = classify(r, k, t, b->classify[k], o, v, opts, err);
        if (rc)
            return rc;
    }
    /* outputs sent to shared memory; inputs read from it intact */
    return bd_infer_shm_outputs(b, g, r->data, &r->shm_in_place, &r->shm_copied, err);
}
