/* The native engine's backend table: which nodes it runs (the op tables of the kernel
 * files), the subgraph compiler (slots, steps, the arena layout) and the executor. */
#include "backends/native/native_backend.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "backends/native/native_internal.h"
#include "core/arena.h"

/* ---- the op table --------------------------------------------------------------------------- */

typedef struct op_family {
    const nv_op  *ops;
    const size_t *n;
} op_family;

static const op_family k_families[] = {
    { nv_dynshape_ops,    &nv_dynshape_n },     /* first: it hands planned shapes on */
    { nv_elementwise_ops, &nv_elementwise_n },
    { nv_unary_ops,       &nv_unary_n },
    { nv_movement_ops,    &nv_movement_n },
    { nv_index_ops,       &nv_index_n },
    { nv_reduce_ops,      &nv_reduce_n },
    { nv_generate_ops,    &nv_generate_n },
    { nv_einsum_ops,      &nv_einsum_n },
    { nv_compress_ops,    &nv_compress_n },
    { nv_unique_ops,      &nv_unique_n },
    { nv_reverse_ops,     &nv_reverse_n },
    { nv_unpool_ops,      &nv_unpool_n },
    { nv_loss_ops,        &nv_loss_n },
    { nv_norm_ops,        &nv_norm_n },
    { nv_resize_ops,      &nv_resize_n },
    { nv_pool_ops,        &nv_pool_n },
    { nv_sample_ops,      &nv_sample_n },
    { nv_signal_ops,      &nv_signal_n },
    { nv_linalg_ops,      &nv_linalg_n },
    { nv_quant_ops,       &nv_quant_n },
    { nv_conv_ops,        &nv_conv_n },
    { nv_tfidf_ops,       &nv_tfidf_n },
    { nv_nms_ops,         &nv_nms_n },
    { nv_rnn_ops,         &nv_rnn_n },
};

static const nv_op *find_op(const bd_node *n)
{
    const char *d = n->domain ? n->domain : "";
    if (d[0] && strcmp(d, "ai.onnx"))
        return NULL;
    for (size_t f = 0; f < sizeof k_families / sizeof k_families[0]; f++)
        for (size_t i = 0; i < *k_families[f].n; i++)
            if (!strcmp(k_families[f].ops[i].op, n->op_type))
                return &k_families[f].ops[i];
    return NULL;
}

/* The newest ONNX opset whose semantics the kernels implement. Older opsets are accepted: each
 * op's supports() refuses the legacy forms it does not implement (opset 6's broadcast
 * attribute, Slice's attributes before opset 10, ...). */
enum { NV_ONNX_OPSET_MAX = 17 };

static bool nv_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    int64_t opset = bd_graph_opset(g);
    if (strcmp(bd_graph_framework(g), "onnx") == 0 && opset > NV_ONNX_OPSET_MAX)
        return nv_why(why, len, "opset %lld is newer than the native kernels' (%d)", (long long)opset,
                      NV_ONNX_OPSET_MAX);
    const nv_op *op = find_op(n);
    if (!op)
        return nv_why(why, len, "op %s unknown", n->op_type);   /* short: the report names the node */
    if (n->n_post != 0)
        return nv_why(why, len, "fused post-ops are not supported by the native engine");
    if (n->n_implicit)
        return nv_why(why, len, "%s has a subgraph", n->op_type);
    for (size_t i = 0; i < n->n_inputs; i++)     /* steps read static shapes (native_internal.h) */
        if (n->inputs[i] && !bd_shape_is_static(&n->inputs[i]->shape))
            return nv_why(why, len, "input '%s' has a shape only known at run time",
                          n->inputs[i]->name);
    return op->supports(g, n, why, len);
}

/* ---- the compiled kernel ---------------------------------------------------------------- */

typedef enum nv_slot_kind {
    NV_SLOT_INPUT = 1, NV_SLOT_OUTPUT, NV_SLOT_CONST, NV_SLOT_ARENA, NV_SLOT_ALIAS
} nv_slot_kind;

typedef struct nv_slot {
    nv_slot_kind kind;
    int          index;       /* INPUT/OUTPUT: position in run()'s arrays; ALIAS: the slot viewed */
    size_t       offset;      /* ARENA */
    const void  *data;        /* CONST */
    int          first, last; /* ARENA: steps that write it first and read it last */
    nv_tensor    t;           /* dtype and static shape (data filled per context / run) */
} nv_slot;

struct bd_kernel {
    nv_step *steps;
    int      n_steps;
    nv_slot *slots;
    int      n_slots;
    size_t   arena_size;
    size_t   scratch;              /* the largest step's scratch bytes */
    size_t   n_in, n_out;
    size_t   max_run_bytes;        /* the model's bound on a run-time-shaped output (0: none) */
    int     *in_slot, *out_slot;   /* slot of run()'s in[k] / out[k] */
    void   **copies;               /* aligned copies of unaligned constants */
    int      n_copies;
};

static void kernel_release(bd_kernel *k)
{
    if (!k)
        return;
    for (int i = 0; i < k->n_steps; i++) {
        free(k->steps[i].in);
        free(k->steps[i].out);
        free(k->steps[i].heap);
    }
    for (int i = 0; i < k->n_copies; i++)
        free(k->copies[i]);
    free(k->copies);
    free(k->steps);
    free(k->slots);
    free(k->in_slot);
    free(k->out_slot);
    free(k);
}

static nv_tensor shape_tensor(const bd_value *v)
{
    nv_tensor t = { .dtype = v->dtype, .rank = v->shape.rank < 0 ? 0 : v->shape.rank };
    bool is_static = bd_shape_is_static(&v->shape);
    for (int d = 0; d < t.rank; d++)
        t.dims[d] = is_static ? v->shape.dims[d] : 0;
    t.numel = is_static ? nv_shape_numel(&v->shape) : 0;
    return t;
}

typedef struct builder {
    const bd_subgraph *sg;
    bd_kernel         *k;
    int               *slot_of;     /* per value index */
    int                cap_slots;
    bd_error          *err;
} builder;

/* V's bytes, aligned for its elements so kernels may load them typed: in place when they
 * are, else a copy the kernel owns (an initializer sits wherever it was in the model file).
 * NULL when out of memory. */
static const void *aligned_const(builder *b, const bd_value *v)
{
    size_t es = bd_dtype_size(v->dtype);
    if (!v->data || es < 2 || (uintptr_t)v->data % es == 0)
        return v->data;
    bd_kernel *k = b->k;
    void **copies = realloc(k->copies, (size_t)(k->n_copies + 1) * sizeof *copies);
    if (!copies)
        return NULL;
    k->copies = copies;
    void *p = malloc(v->nbytes ? v->nbytes : 1);
    if (!p)
        return NULL;
    memcpy(p, v->data, v->nbytes);
    k->copies[k->n_copies++] = p;
    return p;
}

static int add_slot(builder *b, const bd_value *v, nv_slot_kind kind, int index)
{
    bd_kernel *k = b->k;
    if (k->n_slots == b->cap_slots) {
        int cap = b->cap_slots ? 2 * b->cap_slots : 16;
        nv_slot *s = realloc(k->slots, (size_t)cap * sizeof *s);
        if (!s)
            return bd_error_set(b->err, BD_ENOMEM, "out of memory compiling a native subgraph");
        k->slots = s;
        b->cap_slots = cap;
    }
    nv_slot *s = &k->slots[k->n_slots];
    *s = (nv_slot){ .kind = kind, .index = index, .first = -1, .last = -1, .t = shape_tensor(v) };
    if (kind == NV_SLOT_CONST && (s->data = aligned_const(b, v)) == NULL)
        return bd_error_set(b->err, BD_ENOMEM, "out of memory copying constant '%s'", v->name);
    b->slot_of[v->index] = k->n_slots++;
    return 0;
}

static int output_position(const bd_subgraph *sg, const bd_value *v)
{
    for (size_t k = 0; k < sg->n_outputs; k++)
        if (sg->outputs[k] == v)
            return (int)k;
    return -1;
}

/* The slot a step reads V from: a boundary input, a constant (made on first use), or what an
 * earlier step wrote. */
static int input_slot(builder *b, const bd_value *v, int *slot)
{
    if (b->slot_of[v->index] < 0) {
        if (!v->data)
            return bd_error_set(b->err, BD_EBACKEND, "native subgraph: value '%s' has no producer",
                                v->name);
        int rc = add_slot(b, v, NV_SLOT_CONST, -1);
        if (rc)
            return rc;
    }
    *slot = b->slot_of[v->index];
    return 0;
}

/* Views whose output is not a boundary tensor become aliases (no step); a view that must
 * write the caller's buffer runs as a copy. An inference Dropout is one when it writes no
 * mask and no run-time training_mode is to be checked. A view whose shape only the run tells
 * is a step of its own (native_dynshape.c). */
static bool is_view(const bd_node *n)
{
    const char *op = n->op_type;
    if (n->n_outputs < 1 || !bd_shape_is_static(&n->outputs[0]->shape))
        return false;
    if (!strcmp(op, "Dropout"))
        return n->n_outputs == 1 && !(bd_node_input(n, 2) && !bd_node_input(n, 2)->data);
    return !strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") ||
           !strcmp(op, "Unsqueeze") || !strcmp(op, "Identity");
}

static int copy_run(const nv_step *s, const nv_tensor *in, nv_tensor *out, nv_run_env *env,
                    bd_error *err)
{
    (void)s; (void)env; (void)err;
    if (out[0].data != in[0].data)
        memcpy(out[0].data, in[0].data, in[0].numel * bd_dtype_size(in[0].dtype));
    return 0;
}

static int add_step(builder *b, const bd_node *n, const nv_op *op)
{
    bd_kernel *k = b->k;
    nv_step *steps = realloc(k->steps, (size_t)(k->n_steps + 1) * sizeof *steps);
    if (!steps)
        return bd_error_set(b->err, BD_ENOMEM, "out of memory compiling a native subgraph");
    k->steps = steps;
    nv_step *s = &steps[k->n_steps];
    memset(s, 0, sizeof *s);
    s->node = n;
    s->n_in = (int)n->n_inputs;
    s->n_out = (int)n->n_outputs;
    s->in = malloc((size_t)(s->n_in ? s->n_in : 1) * sizeof *s->in);
    s->out = malloc((size_t)(s->n_out ? s->n_out : 1) * sizeof *s->out);
    k->n_steps++;                        /* from here the step is released with the kernel */
    if (!s->in || !s->out)
        return bd_error_set(b->err, BD_ENOMEM, "out of memory compiling a native subgraph");
    int rc;
    for (int i = 0; i < s->n_in; i++) {
        s->in[i] = -1;
        if (n->inputs[i] && (rc = input_slot(b, n->inputs[i], &s->in[i])))
            return rc;
    }
    bool view = is_view(n) && s->n_in >= 1 && s->in[0] >= 0;
    for (int i = 0; i < s->n_out; i++) {
        const bd_value *v = n->outputs[i];
        int pos = output_position(b->sg, v);
        if (pos >= 0)
            rc = add_slot(b, v, NV_SLOT_OUTPUT, pos);
        else if (view && i == 0)
            rc = add_slot(b, v, NV_SLOT_ALIAS, s->in[0]);
        else
            rc = add_slot(b, v, NV_SLOT_ARENA, -1);
        if (rc)
            return rc;
        s->out[i] = b->slot_of[v->index];
        if (!bd_shape_is_static(&v->shape))
            s->dynamic_out = true;
    }
    if (view) {
        if (k->slots[s->out[0]].kind == NV_SLOT_ALIAS) {
            k->n_steps--;                /* no step: the alias is resolved per run */
            free(s->in);
            free(s->out);
            return 0;
        }
        s->run = copy_run;
        return 0;
    }
    if ((rc = op->prepare(n, s, b->err)))
        return bd_error_prefix(b->err, "node '%s' (%s): ", n->name, n->op_type);
    if (s->scratch > k->scratch)
        k->scratch = s->scratch;
    return 0;
}

/* The slot whose memory S's bytes are (through aliases). */
static int root_slot(const bd_kernel *k, int s)
{
    while (k->slots[s].kind == NV_SLOT_ALIAS)
        s = k->slots[s].index;
    return s;
}

/* Arena offsets by liveness: a slot lives from the step that writes it to the last step that
 * reads it or any alias of it. */
static int layout_arena(builder *b)
{
    bd_kernel *k = b->k;
    for (int si = 0; si < k->n_steps; si++) {
        const nv_step *s = &k->steps[si];
        for (int i = 0; i < s->n_out; i++) {
            nv_slot *o = &k->slots[root_slot(k, s->out[i])];
            if (o->first < 0)
                o->first = si;
            if (o->last < si)
                o->last = si;
        }
        for (int i = 0; i < s->n_in; i++)
            if (s->in[i] >= 0) {
                nv_slot *r = &k->slots[root_slot(k, s->in[i])];
                if (r->last < si)
                    r->last = si;
            }
    }
    size_t n = 0;
    for (int i = 0; i < k->n_slots; i++)
        n += k->slots[i].kind == NV_SLOT_ARENA;
    bd_arena_req *reqs = calloc(n ? n : 1, sizeof *reqs);
    size_t *offs = calloc(n ? n : 1, sizeof *offs);
    int *which = calloc(n ? n : 1, sizeof *which);
    int rc = 0;
    if (!reqs || !offs || !which) {
        rc = bd_error_set(b->err, BD_ENOMEM, "out of memory compiling a native subgraph");
        goto done;
    }
    size_t at = 0;
    for (int i = 0; i < k->n_slots; i++) {
        nv_slot *s = &k->slots[i];
        if (s->kind != NV_SLOT_ARENA)
            continue;
        size_t bytes;
        if (__builtin_mul_overflow(s->t.numel, bd_dtype_size(s->t.dtype), &bytes)) {
            rc = bd_error_set(b->err, BD_EINVAL, "native subgraph: tensor too large");
            goto done;
        }
        reqs[at] = (bd_arena_req){ bytes, s->first < 0 ? 0 : s->first,
                                   s->last < s->first ? s->first : s->last };
        which[at++] = i;
    }
    size_t total = bd_arena_plan(reqs, n, offs);
    if (total == (size_t)-1) {
        rc = bd_error_set(b->err, BD_ENOMEM, "out of memory laying out a native arena");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        k->slots[which[i]].offset = offs[i];
    k->arena_size = total;
done:
    free(reqs);
    free(offs);
    free(which);
    return rc;
}

static int nv_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err)
{
    bd_kernel *k = calloc(1, sizeof *k);
    builder b = { .sg = sg, .k = k, .err = err };
    size_t nv = bd_graph_num_values(sg->graph);
    b.slot_of = malloc((nv ? nv : 1) * sizeof *b.slot_of);
    if (k) {
        k->in_slot = malloc((sg->n_inputs ? sg->n_inputs : 1) * sizeof *k->in_slot);
        k->out_slot = malloc((sg->n_outputs ? sg->n_outputs : 1) * sizeof *k->out_slot);
    }
    int rc = 0;
    if (k)
        k->max_run_bytes = sg->max_run_bytes;
    if (!k || !b.slot_of || !k->in_slot || !k->out_slot) {
        rc = bd_error_set(err, BD_ENOMEM, "out of memory compiling a native subgraph");
        goto fail;
    }
    k->n_in = sg->n_inputs;
    k->n_out = sg->n_outputs;
    for (size_t i = 0; i < nv; i++)
        b.slot_of[i] = -1;
    for (size_t i = 0; i < sg->n_inputs && rc == 0; i++)
        rc = add_slot(&b, sg->inputs[i], NV_SLOT_INPUT, (int)i);
    for (size_t i = 0; i < sg->n_nodes && rc == 0; i++) {
        const nv_op *op = find_op(sg->nodes[i]);
        rc = op ? add_step(&b, sg->nodes[i], op)
                : bd_error_set(err, BD_EUNSUPPORTED, "node '%s': op %s is not a native op",
                               sg->nodes[i]->name, sg->nodes[i]->op_type);
    }
    for (size_t i = 0; i < sg->n_inputs && rc == 0; i++)
        k->in_slot[i] = b.slot_of[sg->inputs[i]->index];
    for (size_t i = 0; i < sg->n_outputs && rc == 0; i++) {
        k->out_slot[i] = b.slot_of[sg->outputs[i]->index];
        if (k->out_slot[i] < 0 || k->slots[k->out_slot[i]].kind != NV_SLOT_OUTPUT)
            rc = bd_error_set(err, BD_EBACKEND, "native subgraph: output '%s' is not produced here",
                              sg->outputs[i]->name);
    }
    if (rc == 0)
        rc = layout_arena(&b);
    if (rc)
        goto fail;
    free(b.slot_of);
    *out = k;
    return 0;
fail:
    free(b.slot_of);
    kernel_release(k);
    return rc;
}

/* ---- contexts and runs -------------------------------------------------------------------- */

/* Half the machine's memory: the most one run-time-shaped output may take (less when the
 * model's max_run_memory_bytes says so). */
static size_t max_output_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return (size_t)1 << 30;
    return (size_t)pages / 2 * (size_t)size;
}

typedef struct dyn_buf {
    void  *data;
    size_t cap;
} dyn_buf;

struct nv_run_env {
    dyn_buf *dyn;       /* per slot: memory of run-time-shaped outputs */
    void    *scratch;   /* the kernel's largest step scratch */
    size_t   max_bytes; /* the bound on one run-time-shaped output */
};

struct bd_kernel_ctx {
    const bd_kernel *k;
    unsigned char   *arena;
    nv_tensor       *t;        /* per slot */
    nv_run_env       env;
    nv_tensor       *in, *out; /* one step's gathered views (sized for the widest step) */
};

static void nv_ctx_destroy(bd_kernel_ctx *c)
{
    if (!c)
        return;
    for (int i = 0; c->env.dyn && i < c->k->n_slots; i++)
        free(c->env.dyn[i].data);
    free(c->env.dyn);
    free(c->env.scratch);
    free(c->arena);
    free(c->t);
    free(c->in);
    free(c->out);
    free(c);
}

static int nv_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    bd_kernel_ctx *c = calloc(1, sizeof *c);
    int widest = 1;
    for (int i = 0; i < k->n_steps; i++) {
        widest = k->steps[i].n_in > widest ? k->steps[i].n_in : widest;
        widest = k->steps[i].n_out > widest ? k->steps[i].n_out : widest;
    }
    if (c) {
        c->k = k;
        c->arena = aligned_alloc(BD_ARENA_ALIGN, k->arena_size ? (k->arena_size + 63) & ~(size_t)63 : 64);
        c->t = calloc((size_t)(k->n_slots ? k->n_slots : 1), sizeof *c->t);
        c->env.dyn = calloc((size_t)(k->n_slots ? k->n_slots : 1), sizeof *c->env.dyn);
        c->env.scratch = aligned_alloc(BD_ARENA_ALIGN, k->scratch ? (k->scratch + 63) & ~(size_t)63 : 64);
        c->env.max_bytes = max_output_bytes();
        if (k->max_run_bytes && k->max_run_bytes < c->env.max_bytes)
            c->env.max_bytes = k->max_run_bytes;
        c->in = calloc((size_t)widest, sizeof *c->in);
        c->out = calloc((size_t)widest, sizeof *c->out);
    }
    if (!c || !c->arena || !c->t || !c->env.dyn || !c->env.scratch || !c->in || !c->out) {
        nv_ctx_destroy(c);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating a native context (arena %zu bytes)",
                            k->arena_size);
    }
    for (int i = 0; i < k->n_slots; i++) {
        const nv_slot *s = &k->slots[i];
        c->t[i] = s->t;
        if (s->kind == NV_SLOT_ARENA)
            c->t[i].data = c->arena + s->offset;
        else if (s->kind == NV_SLOT_CONST)
            c->t[i].data = (void *)s->data;
    }
    *out = c;
    return 0;
}

void *nv_output_alloc(nv_run_env *env, const nv_step *s, int k, size_t bytes, bd_error *err)
{
    dyn_buf *d = &env->dyn[s->out[k]];
    if (d->cap > ((size_t)1 << 20) && bytes < d->cap / 4) {   /* a huge run's memory goes */
        free(d->data);
        *d = (dyn_buf){ 0 };
    }
    if (bytes > d->cap || !d->data) {
        size_t cap = bytes ? bytes : 1;
        void *p = realloc(d->data, cap);
        if (!p) {
            bd_error_set(err, BD_ENOMEM, "out of memory for output %d of node '%s' (%zu bytes)", k,
                         s->node->name, bytes);
            return NULL;
        }
        d->data = p;
        d->cap = cap;
    }
    return d->data;
}

int nv_output_shape(nv_run_env *env, const nv_step *s, nv_tensor *out, int k, int rank,
                    const int64_t *dims, bd_error *err)
{
    const bd_shape *plan = &s->node->outputs[k]->shape;
    nv_tensor *t = &out[k];
    char a[160], b[160];
    if (rank < 0 || rank > BD_MAX_RANK)
        return bd_error_set(err, BD_EINVAL, "output %d: the run-time inputs give rank %d", k, rank);
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0)
            return bd_error_set(err, BD_EINVAL, "output %d: the run-time inputs give dim %d a "
                                "negative size (%lld)", k, d, (long long)dims[d]);
    bd_shape got = bd_shape_make(rank, dims);
    bool fits = plan->rank < 0 || plan->rank == rank;
    bool big = false, empty = false;
    int64_t numel = 1;
    for (int d = 0; fits && d < rank; d++) {
        fits = plan->rank < 0 || plan->dims[d] < 0 || plan->dims[d] == dims[d];
        empty = empty || dims[d] == 0;
        big = big || __builtin_mul_overflow(numel, dims[d], &numel);
    }
    numel = empty ? 0 : big ? INT64_MAX : numel;    /* empty: small whatever its other dims */
    if (!fits)
        return bd_error_set(err, BD_EINVAL, "output %d: the run-time inputs give shape %s, the "
                            "plan has %s", k, bd_shape_str(&got, a, sizeof a),
                            bd_shape_str(plan, b, sizeof b));
    if (bd_shape_is_static(plan))       /* the plan sized it and the dims are the plan's */
        return 0;
    size_t es = bd_dtype_size(t->dtype);
    if (numel > NV_RUN_MAX_ELEMS || (size_t)numel > env->max_bytes / (es ? es : 1))
        return bd_error_set(err, BD_EINVAL, "output %d: the run-time inputs give shape %s, more "
                            "than the %lld elements or %zu bytes a run-time shape may have "
                            "(max_run_memory_bytes, or half the machine's memory)", k,
                            bd_shape_str(&got, a, sizeof a), (long long)NV_RUN_MAX_ELEMS,
                            env->max_bytes);
    t->rank = rank;
    for (int d = 0; d < rank; d++)
        t->dims[d] = dims[d];
    t->numel = (size_t)numel;
    t->data = nv_output_alloc(env, s, k, t->numel * es, err);
    return t->data ? 0 : BD_ENOMEM;
}

void *nv_scratch(nv_run_env *env)
{
    return env->scratch;
}

/* A dynamic output's result back into run()'s tensor (backend.h's contract). */
static void report_dynamic(const nv_tensor *t, DLTensor *out)
{
    out->ndim = t->rank;
    for (int d = 0; d < t->rank; d++)
        out->shape[d] = t->dims[d];
    out->data = t->data;
    out->byte_offset = 0;
    out->strides = NULL;
}

static int nv_run(bd_kernel_ctx *c, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
                  bd_error *err)
{
    const bd_kernel *k = c->k;
    if (n_in != k->n_in || n_out != k->n_out)
        return bd_error_set(err, BD_EINVAL, "native kernel: expected %zu inputs and %zu outputs, got %zu and %zu",
                            k->n_in, k->n_out, n_in, n_out);
    for (size_t i = 0; i < n_in; i++)
        c->t[k->in_slot[i]].data = (char *)in[i].data + in[i].byte_offset;
    for (size_t i = 0; i < n_out; i++) {
        nv_tensor *t = &c->t[k->out_slot[i]];
        t->data = out[i].data ? (char *)out[i].data + out[i].byte_offset : NULL;
    }
    for (int i = 0; i < k->n_slots; i++)       /* an alias always follows the slot it views */
        if (k->slots[i].kind == NV_SLOT_ALIAS)
            c->t[i].data = c->t[k->slots[i].index].data;
    for (int si = 0; si < k->n_steps; si++) {
        const nv_step *s = &k->steps[si];
        for (int i = 0; i < s->n_in; i++)
            c->in[i] = s->in[i] >= 0 ? c->t[s->in[i]] : (nv_tensor){ 0 };
        for (int i = 0; i < s->n_out; i++)
            c->out[i] = c->t[s->out[i]];
        int rc = s->run(s, c->in, c->out, &c->env, err);
        if (rc)
            return bd_error_prefix(err, "node '%s' (%s): ", s->node->name, s->node->op_type);
        if (s->dynamic_out)
            for (int i = 0; i < s->n_out; i++)
                c->t[s->out[i]] = c->out[i];
    }
    for (size_t i = 0; i < n_out; i++)
        if (!out[i].data)
            report_dynamic(&c->t[k->out_slot[i]], &out[i]);
    return 0;
}

static void nv_stats(const bd_kernel *k, bd_kernel_stats *out)
{
    *out = (bd_kernel_stats){ .steps = (size_t)k->n_steps };   /* views are no steps */
}

const bd_backend bd_native_backend = {
    .name        = "native",
    .kind        = BD_ENGINE_NATIVE,
    .supports    = nv_supports,
    .compile     = nv_compile,
    .ctx_create  = nv_ctx_create,
    .run         = nv_run,
    .ctx_destroy = nv_ctx_destroy,
    .release     = kernel_release,
    .stats       = nv_stats,
};
