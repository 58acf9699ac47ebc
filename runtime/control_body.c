/* Running a control-flow body: whole-body plans and one-node plans, cached by the shapes of
 * what they read (runtime/control_internal.h; runtime/control.c drives it per the op). */
#include "runtime/control_internal.h"
#include "runtime/plan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t cf_numel(const DLTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

size_t cf_bytes(const slot *s)
{
    return (size_t)cf_numel(&s->t) * bd_dtype_size(s->dtype);
}

void cf_slot_view(slot *s, int dtype, void *data, int ndim, const int64_t *dims)
{
    memset(&s->t, 0, sizeof s->t);
    s->dtype = dtype;
    s->t.data = data;
    s->t.device = (DLDevice){ kDLCPU, 0 };
    s->t.ndim = ndim;
    for (int i = 0; i < ndim && i < BD_MAX_RANK; i++)
        s->dims[i] = dims[i];
    s->t.shape = s->dims;
    bd_dtype_to_dl(dtype, &s->t.dtype);
}

void cf_slot_copy(slot *dst, const slot *src)
{
    cf_slot_view(dst, src->dtype, src->t.data, src->t.ndim, src->t.shape);
}

/* Room for BYTES in B (64-byte aligned), keeping the first KEEP bytes; grows geometrically. */
int cf_grow(growbuf *b, size_t bytes, size_t keep)
{
    if (bytes <= b->cap && b->p)
        return 0;
    size_t cap = b->cap * 2 > bytes ? b->cap * 2 : bytes;
    cap = (cap + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, cap ? cap : 64);
    if (!p)
        return BD_ENOMEM;
    if (keep && b->p)
        memcpy(p, b->p, keep);
    free(b->p);
    b->p = p;
    b->cap = cap;
    return 0;
}

/* ---- the one-node plans of a body --------------------------------------------------------- */

static void node_plan_free(node_plan *p)
{
    bd_exec_destroy(p->exec);
    bd_plan_release(p->plan);
    bd_graph_destroy(p->g);
    free(p->key);
    memset(p, 0, sizeof *p);
}

int cf_copy_node(bd_graph *m, const bd_node *n, bd_value **io, bd_error *err)
{
    bd_value **ins = io, **outs = io + n->n_inputs;
    int rc = 0;
    for (size_t k = 0; k < n->n_inputs && rc == 0; k++) {
        const bd_value *v = n->inputs[k];
        if (!v || (ins[k] = bd_graph_find_value(m, v->name)))
            continue;
        if (!v->data)
            rc = bd_error_set(err, BD_EBACKEND, "copying '%s': its input '%s' is neither an input "
                              "of the copy nor made in it", n->name, v->name);
        else if ((rc = bd_graph_add_value(m, v->name, v->dtype, &v->shape, &ins[k], err)) == 0) {
            ins[k]->data = v->data;      /* a constant: shared, not copied */
            ins[k]->nbytes = v->nbytes;
        }
    }
    for (size_t k = 0; k < n->n_outputs && rc == 0; k++)
        rc = bd_graph_add_value(m, n->outputs[k]->name, n->outputs[k]->dtype, NULL, &outs[k], err);
    bd_node *mn = NULL;
    if (rc == 0)
        rc = bd_graph_add_node(m, n->name, n->op_type, n->domain, ins, n->n_inputs, outs,
                               n->n_outputs, &mn, err);
    for (size_t a = 0; a < n->n_attrs && rc == 0; a++)
        rc = bd_node_add_attr(m, mn, &n->attrs[a], err);
    if (rc == 0)
        mn->n_implicit = n->n_implicit;
    return rc;
}

/* A graph of node N alone: its non-constant inputs ARGV[0..NA) as graph inputs shaped as they
 * are now (SLOTS), its constants shared, its outputs the graph's. */
static int one_node_graph(const bd_graph *body, const bd_node *n, const slot *slots,
                          const bd_value *const *argv, size_t na, bd_graph **out, bd_error *err)
{
    bd_graph *m = bd_graph_create(n->name);
    bd_value **ins = calloc(n->n_inputs + n->n_outputs + 1, sizeof *ins);
    int rc = m && ins ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory planning node '%s'", n->name);
    bd_value **outs = ins ? ins + n->n_inputs : NULL;
    if (rc == 0) {
        bd_graph_set_opset(m, bd_graph_opset(body));
        bd_graph_set_framework(m, bd_graph_framework(body));
    }
    for (size_t a = 0; a < na && rc == 0; a++) {
        const slot *s = &slots[argv[a]->index];
        bd_shape sh = { .rank = s->t.ndim };
        for (int d = 0; d < s->t.ndim; d++)
            sh.dims[d] = s->t.shape[d];
        bd_value *v;
        if ((rc = bd_graph_add_value(m, argv[a]->name, s->dtype, &sh, &v, err)) == 0)
            rc = bd_graph_mark_input(m, v, err);
    }
    if (rc == 0)
        rc = cf_copy_node(m, n, ins, err);
    for (size_t k = 0; k < n->n_outputs && rc == 0; k++)
        rc = bd_graph_mark_output(m, outs[k], err);
    if (rc == 0)
        rc = bd_graph_validate(m, err);
    free(ins);
    if (rc) {
        bd_graph_destroy(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* May the bodies' plans use the native engine (the model's engine option allows it)? */
static bool native_allowed(const bd_model_options *opts)
{
    const char *e = opts->engine;
    return !e || !*e || strcmp(e, "auto") == 0 || strstr(e, "native") != NULL;
}

/* The plan of one body node G for SHAPES (its NA inputs ARGS). A small node goes to the native
 * engine when it takes it: a oneDNN primitive costs microseconds per execution whatever its
 * size (and its reference kernels, which tiny reductions get, allocate per run), more than the
 * whole node's work on a bag of a few rows; larger nodes are placed as the model's are. */
static int plan_node(const bd_model_options *opts, const bd_graph *g, const bd_shape *shapes, size_t na,
                     const DLTensor *args, bd_plan **out, bd_error *err)
{
    int64_t elems = 0;
    for (size_t a = 0; a < na; a++)
        elems += cf_numel(&args[a]);
    if (elems <= CF_SMALL_NODE && native_allowed(opts)) {
        bd_model_options o = *opts;
        o.engine = "native";
        bd_error quiet = { 0 };
        if (plan_build(g, shapes, &o, NULL, out, &quiet) == 0)
            return 0;
    }
    return plan_build(g, shapes, opts, NULL, out, err);
}

/* What errors call B's graph: "body" (control flow) or its own kind. */
static const char *kind(const cf_body *b)
{
    return b->kind ? b->kind : "body";
}

/* Run body node NI with the plan for its inputs' current shapes (planned now when new). */
static int node_run(const bd_model_options *opts, body_ctx *bc, size_t ni, bd_error *err)
{
    const bd_graph *g = bc->b->g;
    const bd_node *n = bd_graph_node(g, ni);
    size_t na = 0, kl = 0;
    for (size_t j = 0; j < n->n_inputs; j++) {
        const bd_value *v = n->inputs[j];
        if (!v || v->data)
            continue;
        bool seen = false;
        for (size_t a = 0; a < na && !seen; a++)
            seen = bc->argv[a] == v;
        if (seen)
            continue;
        const slot *s = &bc->slots[v->index];
        if (!s->t.shape && s->t.ndim)
            return bd_error_set(err, BD_EBACKEND, "%s value '%s' has no tensor", kind(bc->b), v->name);
        bc->argv[na] = v;
        bc->args[na++] = s->t;
        bc->key[kl++] = s->t.ndim;
        for (int d = 0; d < s->t.ndim; d++)
            bc->key[kl++] = s->t.shape[d];
    }
    node_plan *plans = bc->plans[ni], *p = NULL;
    for (size_t i = 0; i < bc->n_plans[ni] && !p; i++)
        if (plans[i].key_len == kl && memcmp(plans[i].key, bc->key, kl * sizeof *bc->key) == 0)
            p = &plans[i];
    if (!p && ++bc->builds > CF_MAX_BUILDS_PER_RUN)
        return bd_error_set(err, BD_EINVAL, "%s node '%s' (%s): the %s's shapes changed more "
                            "than %d times in one run (braid plans each new shape)", kind(bc->b),
                            n->name, n->op_type, kind(bc->b), CF_MAX_BUILDS_PER_RUN);
    if (!p) {
        if (bc->n_plans[ni] < CF_NODE_PLANS) {
            p = &plans[bc->n_plans[ni]++];
        } else {
            p = &plans[0];
            for (size_t i = 1; i < CF_NODE_PLANS; i++)
                if (plans[i].used < p->used)
                    p = &plans[i];
            node_plan_free(p);
        }
        bd_shape *shapes = calloc(na ? na : 1, sizeof *shapes);
        int rc = (p->key = malloc((kl ? kl : 1) * sizeof *p->key)) && shapes ? 0 : BD_ENOMEM;
        if (rc)
            bd_error_set(err, BD_ENOMEM, "out of memory planning %s node '%s'", kind(bc->b), n->name);
        if (rc == 0)
            rc = one_node_graph(g, n, bc->slots, bc->argv, na, &p->g, err);
        for (size_t a = 0; rc == 0 && a < na; a++)
            shapes[a] = bd_graph_input(p->g, a)->shape;
        if (rc == 0)
            rc = plan_node(opts, p->g, shapes, na, bc->args, &p->plan, err);
        if (rc == 0)
            rc = bd_exec_create(p->plan, &p->exec, err);
        free(shapes);
        if (rc) {
            node_plan_free(p);
            bc->n_plans[ni]--;
            if (p != &plans[bc->n_plans[ni]])      /* keep the used entries contiguous */
                *p = plans[bc->n_plans[ni]], memset(&plans[bc->n_plans[ni]], 0, sizeof *p);
            return bd_error_prefix(err, "%s node '%s' (%s): ", kind(bc->b), n->name, n->op_type);
        }
        memcpy(p->key, bc->key, kl * sizeof *p->key);
        p->key_len = kl;
    }
    p->used = ++bc->tick;
    int rc = bd_exec_run(p->exec, bc->args, na, err);
    if (rc)
        return bd_error_prefix(err, "%s node '%s' (%s): ", kind(bc->b), n->name, n->op_type);
    const bd_graph *pg = bd_plan_graph(p->plan);
    for (size_t j = 0; j < n->n_outputs; j++) {
        const DLTensor *t = bd_exec_output(p->exec, j);
        cf_slot_view(&bc->slots[n->outputs[j]->index], bd_graph_output(pg, j)->dtype, t->data,
                  t->ndim, t->shape);
    }
    return 0;
}

static void body_plan_free(body_plan *p)
{
    bd_exec_destroy(p->exec);
    bd_plan_release(p->plan);
    free(p->key);
    memset(p, 0, sizeof *p);
}

/* Does a run of P leave some value's shape to the run itself? */
static bool plan_has_dynamic(const bd_plan *p)
{
    const bd_graph *g = bd_plan_graph(p);
    for (size_t i = 0; i < bd_graph_num_values(g); i++) {
        const bd_value *v = bd_graph_value(g, i);
        if (!v->data && !bd_shape_is_static(&v->shape))
            return true;
    }
    return false;
}

/* The whole-body entry for the body's current input shapes (KEY, KL), planned now when new:
 * a plan of the whole body when every shape in it is known from its inputs' (one plan, its
 * nodes fused and partitioned like the main graph's), else an entry saying node by node. */
static body_plan *whole_for(const bd_model_options *opts, body_ctx *bc, size_t kl)
{
    const bd_graph *g = bc->b->g;
    size_t ni = bd_graph_num_inputs(g);
    for (size_t i = 0; i < bc->n_whole; i++)
        if (bc->whole[i].key_len == kl && memcmp(bc->whole[i].key, bc->in_key, kl * sizeof *bc->in_key) == 0)
            return &bc->whole[i];
    body_plan *p;
    if (bc->n_whole < CF_BODY_PLANS) {
        p = &bc->whole[bc->n_whole++];
    } else {
        p = &bc->whole[0];
        for (size_t i = 1; i < CF_BODY_PLANS; i++)
            if (bc->whole[i].used < p->used)
                p = &bc->whole[i];
        body_plan_free(p);
    }
    bc->builds++;
    if (!(p->key = malloc((kl ? kl : 1) * sizeof *p->key)))
        return NULL;
    memcpy(p->key, bc->in_key, kl * sizeof *p->key);
    p->key_len = kl;
    bd_shape *shapes = calloc(ni ? ni : 1, sizeof *shapes);
    bool typed = shapes != NULL;
    for (size_t i = 0; typed && i < ni; i++) {
        const slot *s = &bc->slots[bd_graph_input(g, i)->index];
        typed = s->dtype == bd_graph_input(g, i)->dtype && s->t.ndim <= BD_MAX_RANK;
        shapes[i].rank = s->t.ndim;
        for (int d = 0; typed && d < s->t.ndim; d++)
            shapes[i].dims[d] = s->t.shape[d];
    }
    bd_error quiet = { 0 };
    if (typed && plan_node(opts, g, shapes, ni, bc->ins, &p->plan, &quiet) == 0 &&
        (plan_has_dynamic(p->plan) || bd_exec_create(p->plan, &p->exec, &quiet) != 0)) {
        bd_plan_release(p->plan);
        p->plan = NULL;
    }
    free(shapes);
    return p;
}

/* Run the body once (the caller has set its inputs' slots): with the whole-body plan for
 * these input shapes when there is one, else node by node. */
int cf_body_run(const bd_model_options *opts, body_ctx *bc, bd_error *err)
{
    const bd_graph *g = bc->b->g;
    size_t ni = bd_graph_num_inputs(g), kl = 0;
    for (size_t i = 0; i < ni; i++) {
        const slot *s = &bc->slots[bd_graph_input(g, i)->index];
        bc->ins[i] = s->t;
        bc->in_key[kl++] = s->t.ndim;
        for (int d = 0; d < s->t.ndim; d++)
            bc->in_key[kl++] = s->t.shape[d];
    }
    if (bc->builds > CF_MAX_BUILDS_PER_RUN)
        return bd_error_set(err, BD_EINVAL, "%s '%s': its shapes changed more than %d times in "
                            "one run (braid plans each new shape)", kind(bc->b), bd_graph_name(g),
                            CF_MAX_BUILDS_PER_RUN);
    body_plan *p = whole_for(opts, bc, kl);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory planning a body");
    p->used = ++bc->tick;
    if (p->plan) {
        int rc = bd_exec_run(p->exec, bc->ins, ni, err);
        if (rc)
            return bd_error_prefix(err, "%s '%s': ", kind(bc->b), bd_graph_name(g));
        const bd_graph *pg = bd_plan_graph(p->plan);
        for (size_t j = 0; j < bd_graph_num_outputs(g); j++) {
            const DLTensor *t = bd_exec_output(p->exec, j);
            cf_slot_view(&bc->slots[bd_graph_output(g, j)->index], bd_graph_output(pg, j)->dtype,
                      t->data, t->ndim, t->shape);
        }
        return 0;
    }
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        int rc = node_run(opts, bc, i, err);
        if (rc)
            return rc;
    }
    return 0;
}

slot *cf_body_in(body_ctx *bc, size_t i)
{
    return &bc->slots[bd_graph_input(bc->b->g, i)->index];
}

const slot *cf_body_out(body_ctx *bc, size_t i)
{
    return &bc->slots[bd_graph_output(bc->b->g, i)->index];
}

/* The outer values the body reads (IN: the node's input slots). */
void cf_body_bind(body_ctx *bc, slot *const *in)
{
    bc->builds = 0;                      /* a new run of the node */
    size_t n_extra = bd_graph_num_inputs(bc->b->g) - bc->b->n_formals;
    for (size_t i = 0; i < n_extra; i++)
        if (in[bc->b->outer[i]])
            cf_slot_copy(cf_body_in(bc, bc->b->n_formals + i), in[bc->b->outer[i]]);
}

int cf_body_init(body_ctx *bc, const cf_body *b)
{
    bc->b = b;
    size_t nv = bd_graph_num_values(b->g), nn = bd_graph_num_nodes(b->g), max_in = 1;
    for (size_t i = 0; i < nn; i++)
        if (bd_graph_node(b->g, i)->n_inputs > max_in)
            max_in = bd_graph_node(b->g, i)->n_inputs;
    bc->slots = calloc(nv ? nv : 1, sizeof *bc->slots);
    bc->plans = calloc(nn ? nn : 1, sizeof *bc->plans);
    bc->n_plans = calloc(nn ? nn : 1, sizeof *bc->n_plans);
    bc->args = calloc(max_in, sizeof *bc->args);
    bc->argv = calloc(max_in, sizeof *bc->argv);
    bc->key = calloc(max_in * (BD_MAX_RANK + 1), sizeof *bc->key);
    size_t ni = bd_graph_num_inputs(b->g) + 1;
    bc->ins = calloc(ni, sizeof *bc->ins);
    bc->in_key = calloc(ni * (BD_MAX_RANK + 1), sizeof *bc->in_key);
    if (!bc->slots || !bc->plans || !bc->n_plans || !bc->args || !bc->argv || !bc->key ||
        !bc->ins || !bc->in_key)
        return BD_ENOMEM;
    for (size_t i = 0; i < nv; i++) {
        const bd_value *v = bd_graph_value(b->g, i);
        if (v->data)
            cf_slot_view(&bc->slots[i], v->dtype, (void *)v->data, v->shape.rank, v->shape.dims);
    }
    return 0;
}

void cf_body_free(body_ctx *bc)
{
    if (!bc->b)
        return;
    size_t nn = bd_graph_num_nodes(bc->b->g);
    for (size_t i = 0; bc->plans && i < nn; i++)
        for (size_t j = 0; j < bc->n_plans[i]; j++)
            node_plan_free(&bc->plans[i][j]);
    for (size_t i = 0; i < bc->n_whole; i++)
        body_plan_free(&bc->whole[i]);
    free(bc->ins);
    free(bc->in_key);
    free(bc->slots);
    free(bc->plans);
    free(bc->n_plans);
    free(bc->args);
    free(bc->argv);
    free(bc->key);
}

/* The value in S handed to the caller's OUT: OUT takes S's shape and memory when the plan
 * left it unset (a run-time shape), else S is copied into OUT, whose shape must be S's; an
 * output that does not fit is BD_EINVAL naming it ("WHAT 'NAME' is ..."). */
int cf_slot_deliver(const slot *s, DLTensor *out, const char *what, const char *name, bd_error *err)
{
    if (!out->data) {
        out->ndim = s->t.ndim;
        memcpy(out->shape, s->t.shape, (size_t)s->t.ndim * sizeof *s->t.shape);
        out->data = s->t.data;
        out->byte_offset = 0;
        return 0;
    }
    bool fits = out->ndim == s->t.ndim;
    for (int d = 0; fits && d < s->t.ndim; d++)
        fits = out->shape[d] == s->t.shape[d];
    if (!fits) {
        char want[96], got[96];
        bd_shape ws = { .rank = out->ndim }, gs = { .rank = s->t.ndim };
        for (int d = 0; d < ws.rank && d < BD_MAX_RANK; d++)
            ws.dims[d] = out->shape[d];
        for (int d = 0; d < gs.rank && d < BD_MAX_RANK; d++)
            gs.dims[d] = s->t.shape[d];
        return bd_error_set(err, BD_EINVAL, "%s '%s' is %s, the plan expected %s", what, name,
                            bd_shape_str(&gs, got, sizeof got), bd_shape_str(&ws, want, sizeof want));
    }
    size_t bytes = cf_bytes(s);
    if (bytes && (char *)out->data + out->byte_offset != s->t.data)
        memmove((char *)out->data + out->byte_offset, s->t.data, bytes);
    return 0;
}
