/* Running plans: execution contexts (the second half of plan.h; plan.c builds the plans
 * they run). One context per thread; a run allocates nothing. */
#include "runtime/plan_internal.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "runtime/engines.h"

#define EXEC_MAX_BACKENDS 8

/* A run-time-shaped value: the tensor its producer reported in the last run. */
typedef struct dyn_value {
    DLTensor t;
    int64_t  dims[BD_MAX_RANK];
} dyn_value;

struct bd_exec {
    const bd_plan  *plan;
    uint64_t        backend_ns[EXEC_MAX_BACKENDS];   /* last run's time per backend */
    unsigned char  *arena;
    bd_kernel_ctx **ctx;
    DLTensor       *io;          /* per step: its inputs then its outputs */
    size_t         *io_base;     /* per step: index of its first entry in IO */
    DLTensor       *outputs;     /* graph outputs, views into the arena (or dynamic values) */
    dyn_value      *dyn;         /* per plan dyn_slot */
    /* Placing graph outputs in caller memory (bd_exec_run_into): the IO entries that name
     * output I's value are REF_IO[REF_START[I] .. REF_START[I + 1]); HOME[I] is its arena
     * address, NULL when it has none to move (a run-time shape). */
    size_t         *ref_io;
    size_t         *ref_start;
    void          **home;
    void          **where;       /* scratch: output I's address for the coming run */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static DLTensor tensor_view(const bd_value *v, void *data)
{
    DLTensor t = {
        .data = data, .device = { kDLCPU, 0 }, .ndim = v->shape.rank < 0 ? 0 : v->shape.rank,
        .shape = (int64_t *)v->shape.dims, .strides = NULL, .byte_offset = 0,
    };
    bd_dtype_to_dl(v->dtype, &t.dtype);
    return t;
}

/* Where V lives for this context (graph inputs are patched per run). */
static void *value_data(const bd_exec *e, const bd_value *v)
{
    if (e->plan->offset[v->index] != NO_OFFSET)
        return e->arena + e->plan->offset[v->index];
    return (void *)v->data;   /* a constant, or NULL for a graph input / dynamic value until run */
}

/* The view of V in this context: run-time-shaped values share their slot's dims. */
static DLTensor exec_view(bd_exec *e, const bd_value *v)
{
    DLTensor t = tensor_view(v, value_data(e, v));
    int slot = e->plan->dyn_slot[v->index];
    if (slot >= 0)
        t.shape = e->dyn[slot].dims;
    return t;
}

/* Does any node of G read V? */
static bool graph_reads(const bd_graph *g, const bd_value *v)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *n = bd_graph_node(g, i);
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v)
                return true;
    }
    return false;
}

/* Does any step of P take V as an input? */
static bool steps_read(const bd_plan *p, const bd_value *v)
{
    for (size_t si = 0; si < p->n_steps; si++)
        for (size_t k = 0; k < p->steps[si].n_inputs; k++)
            if (p->steps[si].inputs[k] == v)
                return true;
    return false;
}

/* E's REF_IO/REF_START/HOME/WHERE (struct bd_exec) for its N_OUT outputs: -1 when out of
 * memory. */
static int index_output_refs(bd_exec *e, size_t n_out)
{
    const bd_plan *p = e->plan;
    size_t n_refs = 0;
    e->ref_start = calloc(n_out + 1, sizeof *e->ref_start);
    e->home = calloc(n_out ? n_out : 1, sizeof *e->home);
    e->where = calloc(n_out ? n_out : 1, sizeof *e->where);
    if (!e->ref_start || !e->home || !e->where)
        return -1;
    for (int pass = 0; pass < 2; pass++) {      /* count, then fill */
        n_refs = 0;
        for (size_t i = 0; i < n_out; i++) {
            const bd_value *v = bd_graph_output(p->graph, i);
            e->ref_start[i] = n_refs;
            if (p->offset[v->index] == NO_OFFSET || p->dyn_slot[v->index] >= 0)
                continue;
            /* An output that a node reads — in a later step, or inside a framework's
             * subgraph — stays in the arena: caller memory may be a client's shared region,
             * which the client can rewrite while the node reads it (a double fetch of indices
             * or shapes). Only outputs nothing reads are placed. */
            if (graph_reads(p->graph, v) || steps_read(p, v))
                continue;
            e->home[i] = e->outputs[i].data;
            size_t at = 0;
            for (size_t si = 0; si < p->n_steps; si++) {
                const plan_step *s = &p->steps[si];
                for (size_t k = 0; k < s->n_inputs + s->n_outputs; k++, at++) {
                    const bd_value *x = k < s->n_inputs ? s->inputs[k] : s->outputs[k - s->n_inputs];
                    if (x != v)
                        continue;
                    if (pass)
                        e->ref_io[n_refs] = at;
                    n_refs++;
                }
            }
        }
        e->ref_start[n_out] = n_refs;
        if (!pass && !(e->ref_io = calloc(n_refs ? n_refs : 1, sizeof *e->ref_io)))
            return -1;
    }
    return 0;
}

int bd_exec_create(const bd_plan *p, bd_exec **out, bd_error *err)
{
    bd_exec *e = calloc(1, sizeof *e);
    if (!e)
        return bd_error_set(err, BD_ENOMEM, "out of memory creating an execution context");
    e->plan = p;
    bd_plan_retain(p);
    size_t n_io = 0;
    for (size_t si = 0; si < p->n_steps; si++)
        n_io += p->steps[si].n_inputs + p->steps[si].n_outputs;
    size_t n_out = bd_graph_num_outputs(p->graph);
    e->arena   = aligned_alloc(BD_ARENA_ALIGN, p->arena_size ? (p->arena_size + 63) & ~(size_t)63 : 64);
    e->ctx     = calloc(p->n_steps ? p->n_steps : 1, sizeof *e->ctx);
    e->io      = calloc(n_io ? n_io : 1, sizeof *e->io);
    e->io_base = calloc(p->n_steps ? p->n_steps : 1, sizeof *e->io_base);
    e->outputs = calloc(n_out ? n_out : 1, sizeof *e->outputs);
    e->dyn     = calloc(p->n_dyn ? p->n_dyn : 1, sizeof *e->dyn);
    if (!e->arena || !e->ctx || !e->io || !e->io_base || !e->outputs || !e->dyn) {
        bd_exec_destroy(e);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating an execution context (arena %zu bytes)",
                            p->arena_size);
    }
    size_t at = 0;
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        e->io_base[si] = at;
        for (size_t k = 0; k < s->n_inputs; k++)
            e->io[at++] = exec_view(e, s->inputs[k]);
        for (size_t k = 0; k < s->n_outputs; k++)
            e->io[at++] = exec_view(e, s->outputs[k]);
        int rc = s->backend->ctx_create(s->kernel, &e->ctx[si], err);
        if (rc) {
            bd_exec_destroy(e);
            return rc;
        }
    }
    for (size_t i = 0; i < n_out; i++)
        e->outputs[i] = exec_view(e, bd_graph_output(p->graph, i));
    if (index_output_refs(e, n_out)) {
        bd_exec_destroy(e);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating an execution context");
    }
    *out = e;
    return 0;
}

void bd_exec_destroy(bd_exec *e)
{
    if (!e)
        return;
    for (size_t si = 0; e->ctx && si < e->plan->n_steps; si++)
        if (e->ctx[si])
            e->plan->steps[si].backend->ctx_destroy(e->ctx[si]);
    free(e->arena);
    free(e->ctx);
    free(e->io);
    free(e->io_base);
    free(e->outputs);
    free(e->dyn);
    free(e->ref_io);
    free(e->ref_start);
    free(e->home);
    free(e->where);
    bd_plan_release(e->plan);
    free(e);
}

static bool is_row_major(const DLTensor *t)
{
    if (!t->strides)
        return true;
    int64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != want)
            return false;
        want *= t->shape[d];
    }
    return true;
}

static int check_input(const bd_value *v, const DLTensor *t, bd_error *err)
{
    char want[96], got[96];
    bd_shape gs = { .rank = t->ndim < 0 || t->ndim > BD_MAX_RANK ? -1 : t->ndim };
    for (int d = 0; d < gs.rank; d++)
        gs.dims[d] = t->shape[d];
    int dt = bd_dtype_from_dl(t->dtype);
    if (v->dtype == BD_DT_BOOL && dt == BD_DT_UINT8)
        dt = BD_DT_BOOL;
    if (dt != v->dtype || !bd_shape_equal(&gs, &v->shape))
        return bd_error_set(err, BD_EINVAL, "input '%s': expected %s %s, got %s %s", v->name,
                            bd_dtype_name(v->dtype), bd_shape_str(&v->shape, want, sizeof want),
                            bd_dtype_name(dt), bd_shape_str(&gs, got, sizeof got));
    if (t->device.device_type != kDLCPU || !is_row_major(t) || (!t->data && bd_shape_numel(&gs) > 0))
        return bd_error_set(err, BD_EINVAL, "input '%s': expected a row-major CPU tensor with data",
                            v->name);
    return 0;
}

/* Run-time shapes (backend.h's run() contract): a dynamic input is the tensor its producer
 * reported; a dynamic output is handed over with data NULL and the slot's dims to fill. */
static void dyn_before(bd_exec *e, const plan_step *s, DLTensor *io)
{
    const int *slot = e->plan->dyn_slot;
    for (size_t k = 0; k < s->n_inputs; k++)
        if (slot[s->inputs[k]->index] >= 0)
            io[k] = e->dyn[slot[s->inputs[k]->index]].t;
    for (size_t k = 0; k < s->n_outputs; k++) {
        int d = slot[s->outputs[k]->index];
        if (d < 0)
            continue;
        DLTensor *t = &io[s->n_inputs + k];
        t->data = NULL;
        t->byte_offset = 0;
        t->strides = NULL;
        t->shape = e->dyn[d].dims;
        t->ndim = s->outputs[k]->shape.rank < 0 ? 0 : s->outputs[k]->shape.rank;
    }
}

static int dyn_after(bd_exec *e, const plan_step *s, DLTensor *io, bd_error *err)
{
    const int *slot = e->plan->dyn_slot;
    for (size_t k = 0; k < s->n_outputs; k++) {
        int d = slot[s->outputs[k]->index];
        if (d < 0)
            continue;
        DLTensor *t = &io[s->n_inputs + k];
        if (t->ndim < 0 || t->ndim > BD_MAX_RANK || (t->ndim > 0 && !t->shape))
            return bd_error_set(err, BD_EBACKEND, "output '%s': the backend reported rank %d "
                                "(expected 0..%d with dims)", s->outputs[k]->name, t->ndim, BD_MAX_RANK);
        int64_t numel = 1;
        for (int i = 0; i < t->ndim; i++)
            numel *= t->shape[i];
        if (!t->data && numel > 0)
            return bd_error_set(err, BD_EBACKEND, "output '%s': the backend returned no data",
                                s->outputs[k]->name);
        e->dyn[d].t = *t;
    }
    return 0;
}

static bool overlaps(const char *a, size_t na, const char *b, size_t nb)
{
    return na && nb && a < b + nb && b < a + na;
}

/* May output I go to DEST (bd_exec_run_into's conditions)? WHERE[0..I) are decided. */
static bool placeable(const bd_exec *e, size_t i, const bd_exec_dest *dest, const DLTensor *inputs,
                      size_t n_inputs)
{
    const bd_graph *g = e->plan->graph;
    const bd_value *v = bd_graph_output(g, i);
    size_t bytes = plan_value_bytes(v);
    if (!e->home[i] || !dest->data || bytes > dest->bytes || (uintptr_t)dest->data % BD_ARENA_ALIGN)
        return false;
    for (size_t k = 0; k < n_inputs; k++)
        if (overlaps(dest->data, bytes, (const char *)inputs[k].data + inputs[k].byte_offset,
                     plan_value_bytes(bd_graph_input(g, k))))
            return false;
    for (size_t j = 0; j < i; j++)
        if (e->where[j] != e->home[j] &&
            (bd_graph_output(g, j) == v ||      /* the same value, already placed */
             overlaps(dest->data, bytes, e->where[j], plan_value_bytes(bd_graph_output(g, j)))))
            return false;
    return true;
}

/* Point graph outputs (and every step view of them) at DEST where placeable, else home. */
static void place_outputs(bd_exec *e, const DLTensor *inputs, size_t n_inputs,
                          const bd_exec_dest *dest, size_t n_dest)
{
    const bd_graph *g = e->plan->graph;
    size_t n_out = bd_graph_num_outputs(g);
    for (size_t i = 0; i < n_out; i++)
        e->where[i] = e->home[i];
    for (size_t i = 0; i < n_dest; i++)
        if (placeable(e, i, &dest[i], inputs, n_inputs))
            for (size_t j = 0; j < n_out; j++)  /* the same value named twice moves too */
                if (bd_graph_output(g, j) == bd_graph_output(g, i))
                    e->where[j] = dest[i].data;
    for (size_t i = 0; i < n_out; i++) {
        if (!e->home[i] || e->outputs[i].data == e->where[i])
            continue;
        for (size_t r = e->ref_start[i]; r < e->ref_start[i + 1]; r++)
            e->io[e->ref_io[r]].data = e->where[i];
        e->outputs[i].data = e->where[i];
    }
}

int bd_exec_run(bd_exec *e, const DLTensor *inputs, size_t n_inputs, bd_error *err)
{
    return bd_exec_run_into(e, inputs, n_inputs, NULL, 0, err);
}

int bd_exec_run_into(bd_exec *e, const DLTensor *inputs, size_t n_inputs,
                     const bd_exec_dest *dest, size_t n_dest, bd_error *err)
{
    const bd_plan *p = e->plan;
    const bd_graph *g = p->graph;
    if (n_inputs != bd_graph_num_inputs(g))
        return bd_error_set(err, BD_EINVAL, "expected %zu input tensor(s), got %zu",
                            bd_graph_num_inputs(g), n_inputs);
    if (n_dest > bd_graph_num_outputs(g))
        return bd_error_set(err, BD_EINVAL, "%zu output destinations for %zu output(s)", n_dest,
                            bd_graph_num_outputs(g));
    for (size_t i = 0; i < n_inputs; i++) {
        int rc = check_input(bd_graph_input(g, i), &inputs[i], err);
        if (rc)
            return rc;
    }
    place_outputs(e, inputs, n_inputs, dest, n_dest);
    if (p->threads > 0)
        omp_set_num_threads(p->threads);
    memset(e->backend_ns, 0, sizeof e->backend_ns);
    for (size_t si = 0; si < p->n_steps; si++) {
        const plan_step *s = &p->steps[si];
        DLTensor *io = &e->io[e->io_base[si]];
        for (size_t k = 0; k < s->n_inputs; k++)
            if (s->inputs[k]->is_input)
                for (size_t i = 0; i < n_inputs; i++)
                    if (bd_graph_input(g, i) == s->inputs[k])
                        io[k].data = (char *)inputs[i].data + inputs[i].byte_offset;
        if (p->n_dyn)
            dyn_before(e, s, io);
        uint64_t t0 = now_ns();
        int rc = s->backend->run(e->ctx[si], io, s->n_inputs, io + s->n_inputs, s->n_outputs, err);
        if (s->backend_index >= 0 && s->backend_index < EXEC_MAX_BACKENDS)
            e->backend_ns[s->backend_index] += now_ns() - t0;
        if (rc == 0 && p->n_dyn)
            rc = dyn_after(e, s, io, err);
        if (rc)
            return bd_error_prefix(err, "step %zu (%s): ", si, s->backend->name);
    }
    for (size_t i = 0; p->n_dyn && i < bd_graph_num_outputs(g); i++) {
        int slot = p->dyn_slot[bd_graph_output(g, i)->index];
        if (slot >= 0)
            e->outputs[i] = e->dyn[slot].t;
    }
    /* Outputs that no step produces (a graph input or a constant passed through). */
    for (size_t i = 0; i < bd_graph_num_outputs(g); i++) {
        const bd_value *v = bd_graph_output(g, i);
        if (v->producer)
            continue;
        const void *src = v->data;
        for (size_t k = 0; k < n_inputs && !src; k++)
            if (bd_graph_input(g, k) == v)
                src = (const char *)inputs[k].data + inputs[k].byte_offset;
        if (src)
            memcpy(e->outputs[i].data, src, plan_value_bytes(v));
    }
    return 0;
}

size_t bd_exec_backend_ns(const bd_exec *e, uint64_t *ns, size_t max)
{
    size_t nb;
    bd_backends(&nb);
    size_t n = nb < max ? nb : max;
    for (size_t i = 0; i < n; i++)
        ns[i] = i < EXEC_MAX_BACKENDS ? e->backend_ns[i] : 0;
    return n;
}

size_t bd_exec_num_outputs(const bd_exec *e)            { return bd_graph_num_outputs(e->plan->graph); }
const DLTensor *bd_exec_output(const bd_exec *e, size_t i)
{
    return i < bd_exec_num_outputs(e) ? &e->outputs[i] : NULL;
}
