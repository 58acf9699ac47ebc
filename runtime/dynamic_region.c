/* Regions of run-time shapes run by braid: the engine "dynamic" (docs/partitioning.md,
 * "Shapes known only at run time").
 *
 * A node that reads a value whose shape only the run tells (the output of NonMaxSuppression,
 * NonZero, a Compress, a Slice of run-time bounds) is refused by oneDNN (its primitives are
 * made for plan-time shapes) and by the native engine (its steps are sized at compile). This
 * engine, after them in the table, takes such a node when some braid engine runs its op in
 * general: supports() probes the node with representative shapes (each unknown dim 2, then
 * 1, then 12; an unknown rank 1 to 4) and asks oneDNN, the native engine and control flow.
 * Annotation then merges the connected nodes it took into regions, and each region runs the
 * way control flow runs a body whose shapes follow the data (runtime/control_body.c):
 *
 * - compile copies the region's nodes into a graph of their own (constants shared with the
 *   plan's graph, which outlives the kernel);
 * - a run knows its inputs' shapes: the region runs as one plan built for them when that plan
 *   knows every shape inside (fused and partitioned like a model, cached for 4 shape sets),
 *   else node by node, each node a one-node plan for the shapes it meets (8 per node), small
 *   nodes on the native engine and larger ones on oneDNN;
 * - the outputs' shapes, known after the run, flow to the consumers as run-time shapes do.
 *
 * A node whose op no braid engine runs for any shape is refused (it goes to the framework
 * fallback, or the load fails with `--engine dnnl,native`). Bounds are control flow's: at
 * most CF_MAX_BUILDS_PER_RUN plans built per run, every plan checked against the model's
 * max_run_memory_bytes at build (half the machine's memory without one) and every
 * run-time-shaped output by the native engine when it is made.
 * Per-execution-context state (slots, plan caches) lives in the context: one thread at a
 * time per context, many contexts on one kernel. */
#include "runtime/control_internal.h"
#include "runtime/engines.h"
#include "runtime/plan_internal.h"
#include "partitioner/shape/shape_infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bd_kernel {
    cf_body          body;      /* the region as a graph of its own (no outer values) */
    size_t           n_in, n_out;
    bd_model_options opts;      /* for the region's plans; strings owned */
};

struct bd_kernel_ctx {
    const bd_kernel *k;
    body_ctx         bc;
};

/* ---- the region as a graph -------------------------------------------------------------- */

/* A graph of NODES (topological, from SRC): INPUTS its inputs, shaped SHAPES (NULL: as in
 * SRC), the constants the nodes read shared with SRC, OUTPUTS its outputs. */
static int region_graph(const bd_graph *src, bd_node *const *nodes, size_t nn,
                        bd_value *const *inputs, const bd_shape *shapes, size_t ni,
                        bd_value *const *outputs, size_t no, bd_graph **out, bd_error *err)
{
    bd_graph *m = bd_graph_create(nn ? nodes[0]->name : "region");
    size_t max_io = 1;
    for (size_t i = 0; i < nn; i++)
        if (nodes[i]->n_inputs + nodes[i]->n_outputs + 1 > max_io)
            max_io = nodes[i]->n_inputs + nodes[i]->n_outputs + 1;
    bd_value **io = calloc(max_io, sizeof *io);
    int rc = m && io ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory copying a region");
    if (rc == 0) {
        bd_graph_set_opset(m, bd_graph_opset(src));
        bd_graph_set_framework(m, bd_graph_framework(src));
    }
    for (size_t i = 0; i < ni && rc == 0; i++) {
        bd_value *v;
        if ((rc = bd_graph_add_value(m, inputs[i]->name, inputs[i]->dtype,
                                     shapes ? &shapes[i] : &inputs[i]->shape, &v, err)) == 0)
            rc = bd_graph_mark_input(m, v, err);
    }
    for (size_t i = 0; i < nn && rc == 0; i++)
        rc = cf_copy_node(m, nodes[i], io, err);
    for (size_t i = 0; i < no && rc == 0; i++) {
        bd_value *v = bd_graph_find_value(m, outputs[i]->name);
        rc = v ? bd_graph_mark_output(m, v, err)
               : bd_error_set(err, BD_EBACKEND, "region of '%s': output '%s' is not made in it",
                              nn ? nodes[0]->name : "", outputs[i]->name);
    }
    if (rc == 0)
        rc = bd_graph_validate(m, err);
    free(io);
    if (rc) {
        bd_graph_destroy(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* ---- supports: a node of run-time-shaped inputs whose op braid runs -------------------- */

static bool run_time_shaped(const bd_value *v)
{
    return v && !v->data && !bd_shape_is_static(&v->shape);
}

/* Is N, with its run-time-shaped inputs given the shapes SHAPES (the others keep theirs),
 * taken by an engine of braid's own (not this one, not a framework) that OPTS allows? */
static bool probe(const bd_graph *g, const bd_node *n, const bd_value **ins, const bd_shape *shapes,
                  size_t ni, unsigned allowed)
{
    bd_graph *m = NULL;
    bd_error quiet = { 0 };
    bd_node *const one[1] = { (bd_node *)n };
    if (region_graph(g, one, 1, (bd_value *const *)ins, shapes, ni, n->outputs, n->n_outputs,
                     &m, &quiet))
        return false;
    bool ok = false;
    if (bd_shape_infer(m, false, &quiet) == 0) {
        size_t nb;
        const bd_backend *const *backends = bd_backends(&nb);
        char why[128];
        for (size_t b = 0; b < nb && !ok; b++)
            ok = backends[b] != &bd_dynamic_backend && backends[b]->kind != BD_ENGINE_FALLBACK &&
                 (b >= 32 || (allowed & (1u << b))) &&
                 backends[b]->supports(m, bd_graph_node(m, 0), why, sizeof why);
    }
    bd_graph_destroy(m);
    return ok;
}

/* Does a braid engine take N with representative shapes for its run-time-shaped inputs
 * (INS, NI of them, SHAPES their scratch)? Each unknown dim 2, else 1, else 12 (a Reshape to
 * [-1, 3] or [-1, 4] needs a multiple); an unknown rank 1 to 4. */
static bool probe_shapes(const bd_graph *g, const bd_node *n, const bd_value **ins, bd_shape *shapes,
                         size_t ni)
{
    const bd_model_options *opts = plan_building_options();
    bd_placement_opts popts = { .engine = opts ? opts->engine : NULL };
    size_t nb;
    const bd_backend *const *backends = bd_backends(&nb);
    unsigned allowed;
    bd_error quiet = { 0 };
    if (bd_place_engines(&popts, backends, nb, &allowed, &quiet))
        allowed = ~0u;
    static const int64_t dims[] = { 2, 1, 12 };
    for (int rank_try = 1; rank_try <= 4; rank_try++) {
        bool any_unknown_rank = false;
        for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
            for (size_t a = 0; a < ni; a++) {
                shapes[a] = ins[a]->shape;
                if (shapes[a].rank < 0) {
                    any_unknown_rank = true;
                    shapes[a].rank = rank_try;
                    for (int d = 0; d < rank_try; d++)
                        shapes[a].dims[d] = dims[t];
                }
                for (int d = 0; d < shapes[a].rank; d++) {
                    if (shapes[a].dims[d] < 0)
                        shapes[a].dims[d] = dims[t];
                    shapes[a].sym[d] = NULL;
                }
            }
            if (probe(g, n, ins, shapes, ni, allowed))
                return true;
        }
        if (!any_unknown_rank)
            break;
    }
    return false;
}

static bool dr_supports(const bd_graph *g, const bd_node *n, char *why, size_t why_len)
{
    bool dynamic = false;
    for (size_t k = 0; k < n->n_inputs && !dynamic; k++)
        dynamic = run_time_shaped(n->inputs[k]);
    if (!dynamic) {          /* not this engine's: the others decided on plan-time shapes */
        snprintf(why, why_len, "op %s (no input shaped at run time)", n->op_type);
        return false;
    }
    if (n->n_post || n->n_implicit) {
        snprintf(why, why_len, "%s", n->n_post ? "post-ops" : "a subgraph");
        return false;
    }
    const bd_value **ins = calloc(n->n_inputs, sizeof *ins);
    bd_shape *shapes = calloc(n->n_inputs, sizeof *shapes);
    size_t ni = 0;
    for (size_t k = 0; ins && shapes && k < n->n_inputs; k++) {
        const bd_value *v = n->inputs[k];
        bool seen = !v || v->data;
        for (size_t a = 0; a < ni && !seen; a++)
            seen = ins[a] == v;
        if (!seen)
            ins[ni++] = v;
    }
    bool ok = ins && shapes && probe_shapes(g, n, ins, shapes, ni);
    if (!ok)
        snprintf(why, why_len, "op %s: no braid engine runs it for any shape tried", n->op_type);
    free(ins);
    free(shapes);
    return ok;
}

/* ---- compile, contexts, runs ------------------------------------------------------------- */

/* Half the machine's memory (the native engine's bound on a run-time-shaped output). */
static size_t default_max_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return (size_t)1 << 30;
    return (size_t)pages / 2 * (size_t)size;
}

static void dr_release(bd_kernel *k)
{
    if (!k)
        return;
    bd_graph_destroy(k->body.g);
    free(k->body.outer);
    free((char *)k->opts.fallback_ops);
    free((char *)k->opts.engine);
    free(k);
}

static int dr_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err)
{
    bd_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->body.outer = malloc(sizeof *k->body.outer))) {
        free(k);
        return bd_error_set(err, BD_ENOMEM, "out of memory compiling a run-time-shaped region");
    }
    const bd_model_options *o = plan_building_options();
    if (o)
        k->opts = *o;
    k->opts.fallback_ops = k->opts.fallback_ops ? strdup(k->opts.fallback_ops) : NULL;
    k->opts.engine = k->opts.engine ? strdup(k->opts.engine) : NULL;
    /* shapes the run gives can ask any plan for terabytes (an outer product of a compressed
     * vector): without a model limit, the native engine's for run-time shapes applies */
    if (!k->opts.max_run_memory_bytes)
        k->opts.max_run_memory_bytes = default_max_bytes();
    k->n_in = sg->n_inputs;
    k->n_out = sg->n_outputs;
    k->body.n_formals = sg->n_inputs;
    k->body.kind = "region";
    int rc = region_graph(sg->graph, sg->nodes, sg->n_nodes, sg->inputs, NULL, sg->n_inputs,
                          sg->outputs, sg->n_outputs, &k->body.g, err);
    if (rc) {
        dr_release(k);
        return rc;
    }
    *out = k;
    return 0;
}

static void dr_ctx_destroy(bd_kernel_ctx *c)
{
    if (!c)
        return;
    cf_body_free(&c->bc);
    free(c);
}

static int dr_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    bd_kernel_ctx *c = calloc(1, sizeof *c);
    if (!c || (c->k = k, cf_body_init(&c->bc, &k->body))) {
        dr_ctx_destroy(c);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating a run-time-shaped region's context");
    }
    *out = c;
    return 0;
}

static int dr_run(bd_kernel_ctx *c, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
                  bd_error *err)
{
    const bd_kernel *k = c->k;
    const bd_graph *g = k->body.g;
    if (n_in != k->n_in || n_out != k->n_out)
        return bd_error_set(err, BD_EBACKEND, "run-time-shaped region: %zu/%zu tensors for %zu/%zu",
                            n_in, n_out, k->n_in, k->n_out);
    for (size_t i = 0; i < n_in; i++) {
        if (in[i].ndim > BD_MAX_RANK)
            return bd_error_set(err, BD_EINVAL, "input '%s' has rank %d", bd_graph_input(g, i)->name,
                                in[i].ndim);
        cf_slot_view(cf_body_in(&c->bc, i), bd_graph_input(g, i)->dtype,
                     (char *)in[i].data + in[i].byte_offset, in[i].ndim, in[i].shape);
    }
    cf_body_bind(&c->bc, NULL);          /* a new run: its plan-build count starts at 0 */
    int rc = cf_body_run(&k->opts, &c->bc, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n_out; i++) {
        if ((rc = cf_slot_deliver(cf_body_out(&c->bc, i), &out[i], "run-time-shaped region output",
                                  bd_graph_output(g, i)->name, err)))
            return rc;
    }
    return 0;
}

const bd_backend bd_dynamic_backend = {
    .name        = "dynamic",
    .kind        = BD_ENGINE_NATIVE,
    .supports    = dr_supports,
    .compile     = dr_compile,
    .ctx_create  = dr_ctx_create,
    .run         = dr_run,
    .ctx_destroy = dr_ctx_destroy,
    .release     = dr_release,
};
