/* Control flow (If, Loop, Scan) run by braid: the bodies' nodes run as plans of their own.
 *
 * Compile: each control node of the step has its bodies imported once (bd_onnx_import_body)
 * and checked (input and output counts, every op one braid has a shape rule for).
 * Context: per body, a slot per value (the tensor it holds in the current iteration), a small
 * cache of whole-body plans keyed by the shapes of the body's inputs, and per body node a
 * small cache of one-node plans keyed by the shapes of its inputs.
 * Run: the op's semantics (ONNX spec) drive the body. Per iteration the body runs as one plan
 * when a plan of it for these input shapes knows every shape (fused and partitioned like the
 * main graph); when some shape inside is only known at run time, node by node: each body
 * node finds (or, for shapes not seen before, builds) its plan and runs it, so the shapes
 * that follow the data are static for the plans after them. Outputs are views into the
 * plans' arenas, valid until that plan runs again. Loop-carried values are copied into
 * two buffers per value that alternate (a body may swap or pass its carried values through),
 * scan outputs are appended to one growing buffer per output. Buffers grow to the largest
 * size seen and are reused: a run whose shapes were all seen before allocates nothing. */
#include "runtime/control.h"
#include "runtime/engines.h"
#include "runtime/plan_internal.h"
#include "partitioner/onnx/onnx_import.h"
#include "partitioner/shape/shape_infer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CF_IF = 1, CF_LOOP, CF_SCAN };

/* One-node plans kept per body node: more distinct input shapes than this evict the least
 * recently used (and plan again when it comes back). */
#define CF_NODE_PLANS 8
/* Whole-body plans kept per body (by the shapes of all its inputs), the same way. */
#define CF_BODY_PLANS 4

#define NONE SIZE_MAX

/* Body nodes reading at most this many elements run on the native engine when it takes them
 * (plan_node says why). */
#define CF_SMALL_NODE 16384

/* Plans one run of a control node may build (a body whose shapes change at every iteration
 * plans at every iteration: a growing carried value); past it the run fails, so a hostile
 * loop costs at most this many plan builds. */
#define CF_MAX_BUILDS_PER_RUN 4096

/* ---- the kernel: bodies imported once ------------------------------------------------- */

typedef struct cf_body {
    bd_graph *g;
    size_t    n_formals;   /* the body's own inputs come first */
    size_t   *outer;       /* per body input past the formals: the node input that feeds it */
} cf_body;

typedef struct cf_node {
    const bd_node *node;
    int            op;
    size_t         n_in;        /* inputs of the op's own (implicit ones follow) */
    size_t         n_state;     /* Loop/Scan: carried values */
    size_t         n_scan_in;   /* Scan */
    size_t         n_scan_out;  /* Loop/Scan */
    cf_body        body[2];     /* If: then, else; Loop, Scan: body */
    size_t        *in;          /* per node input: value table index, NONE when omitted */
    size_t        *out;         /* per node output: value table index */
} cf_node;

struct bd_kernel {
    cf_node          *nodes;
    size_t            n_nodes;
    const bd_value  **vals;     /* the step's inputs first, then constants and node outputs */
    size_t            n_vals, cap_vals, n_in;
    size_t           *out_val;  /* per step output: value table index */
    size_t            n_out;
    bd_model_options  opts;     /* for the bodies' plans; strings owned */
    size_t            max_bytes;
};

/* ---- run-time state ------------------------------------------------------------------- */

typedef struct slot {
    DLTensor t;
    int64_t  dims[BD_MAX_RANK];
    int      dtype;            /* bd_dtype (DLPack has no BOOL of its own) */
} slot;

typedef struct growbuf {
    void  *p;
    size_t cap;
} growbuf;

typedef struct node_plan {
    int64_t  *key;             /* per non-constant input: rank then dims */
    size_t    key_len;
    bd_graph *g;               /* the one-node graph the plan was built from */
    bd_plan  *plan;
    bd_exec  *exec;
    uint64_t  used;
} node_plan;

/* A plan of the whole body for one set of its inputs' shapes, or the finding that such a plan
 * would leave shapes to the run (then the body runs node by node for those shapes). */
typedef struct body_plan {
    int64_t  *key;             /* per body input: rank then dims */
    size_t    key_len;
    bd_plan  *plan;            /* NULL: node by node */
    bd_exec  *exec;
    uint64_t  used;
} body_plan;

typedef struct body_ctx {
    const cf_body *b;
    slot          *slots;      /* per body value */
    body_plan      whole[CF_BODY_PLANS];
    size_t         n_whole;
    DLTensor      *ins;        /* scratch: the body's inputs, for a whole-body plan */
    size_t         builds;     /* plans built in the current run of the node */
    int64_t       *in_key;
    node_plan    (*plans)[CF_NODE_PLANS];
    size_t        *n_plans;
    uint64_t       tick;
    DLTensor      *args;       /* scratch: a node's inputs */
    const bd_value **argv;
    int64_t       *key;        /* scratch: their shapes */
} body_ctx;

typedef struct cf_node_ctx {
    body_ctx  body[2];
    growbuf  *carry[2];        /* per carried value, the two alternating buffers */
    growbuf  *scan;            /* per scan output: what the iterations appended */
    growbuf  *slice;           /* Scan: per scan input, this iteration's slice */
    growbuf  *turn;            /* Scan: per scan output, its transposed result */
    slot     *state;           /* per carried value: where it is now */
    int64_t   iter;
    uint8_t   cond;
} cf_node_ctx;

struct bd_kernel_ctx {
    const bd_kernel *k;
    slot            *vals;
    cf_node_ctx     *nodes;
};

/* ---- helpers ---------------------------------------------------------------------------- */

static int op_of(const bd_node *n)
{
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return 0;
    return strcmp(n->op_type, "If") == 0 ? CF_IF : strcmp(n->op_type, "Loop") == 0 ? CF_LOOP
         : strcmp(n->op_type, "Scan") == 0 ? CF_SCAN : 0;
}

static int64_t numel_of(const DLTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

static size_t bytes_of(const slot *s)
{
    return (size_t)numel_of(&s->t) * bd_dtype_size(s->dtype);
}

static void slot_view(slot *s, int dtype, void *data, int ndim, const int64_t *dims)
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

static void slot_copy(slot *dst, const slot *src)
{
    slot_view(dst, src->dtype, src->t.data, src->t.ndim, src->t.shape);
}

/* Room for BYTES in B (64-byte aligned), keeping the first KEEP bytes; grows geometrically. */
static int grow(growbuf *b, size_t bytes, size_t keep)
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

/* ---- compile ------------------------------------------------------------------------- */

static size_t val_index(bd_kernel *k, const bd_value *v)
{
    for (size_t i = 0; i < k->n_vals; i++)
        if (k->vals[i] == v)
            return i;
    if (k->n_vals == k->cap_vals) {
        size_t cap = k->cap_vals ? 2 * k->cap_vals : 16;
        const bd_value **p = realloc(k->vals, cap * sizeof *p);
        if (!p)
            return NONE;
        k->vals = p;
        k->cap_vals = cap;
    }
    k->vals[k->n_vals] = v;
    return k->n_vals++;
}

/* Import N's body ATTR with N_FORMALS formal inputs and WANT outputs into B. */
static int body_import(const bd_graph *g, const bd_node *n, const char *attr,
                       const bd_value *const *formals, size_t n_formals, size_t want, cf_body *b,
                       bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, attr);
    if (!a || a->type != BD_ATTR_GRAPH)
        return bd_error_set(err, BD_EMODEL, "node '%s' (%s): attribute '%s' must be a graph",
                            n->name, n->op_type, attr);
    int rc = bd_onnx_import_body(g, n, a->graph, a->graph_len, formals, n_formals, &b->g, err);
    if (rc)
        return rc;
    b->n_formals = n_formals;
    if (bd_graph_num_outputs(b->g) != want)
        return bd_error_set(err, BD_EMODEL, "node '%s' (%s): its %s has %zu output(s), the op "
                            "needs %zu", n->name, n->op_type, attr, bd_graph_num_outputs(b->g), want);
    size_t n_extra = bd_graph_num_inputs(b->g) - n_formals;
    b->outer = malloc((n_extra ? n_extra : 1) * sizeof *b->outer);
    if (!b->outer)
        return bd_error_set(err, BD_ENOMEM, "out of memory compiling node '%s'", n->name);
    for (size_t i = 0; i < n_extra; i++) {
        const char *name = bd_graph_input(b->g, n_formals + i)->name;
        b->outer[i] = NONE;
        for (size_t k = 0; k < n->n_inputs && b->outer[i] == NONE; k++)
            if (n->inputs[k] && strcmp(n->inputs[k]->name, name) == 0)
                b->outer[i] = k;
        if (b->outer[i] == NONE)
            return bd_error_set(err, BD_EMODEL, "node '%s' (%s): its %s reads '%s', which the "
                                "node does not list", n->name, n->op_type, attr, name);
    }
    return 0;
}

/* Counts of N's inputs and outputs by role; BD_EMODEL when they do not fit the op. */
static int node_shape(cf_node *cn, const bd_graph *g, bd_error *err)
{
    const bd_node *n = cn->node;
    cn->n_in = n->n_inputs - n->n_implicit;
    if (cn->op == CF_IF)
        return cn->n_in == 1 ? 0 : bd_error_set(err, BD_EMODEL, "node '%s' (If): expected 1 input",
                                                n->name);
    if (cn->op == CF_LOOP) {
        if (cn->n_in < 2 || n->n_outputs < cn->n_in - 2)
            return bd_error_set(err, BD_EMODEL, "node '%s' (Loop): %zu inputs and %zu outputs",
                                n->name, cn->n_in, n->n_outputs);
        cn->n_state = cn->n_in - 2;
        cn->n_scan_out = n->n_outputs - cn->n_state;
        return 0;
    }
    if (bd_graph_opset(g) > 0 && bd_graph_opset(g) < 9)
        return bd_error_set(err, BD_EUNSUPPORTED, "node '%s': Scan of opset 8", n->name);
    int64_t m = bd_node_attr_int(n, "num_scan_inputs", -1);
    if (m < 1 || (size_t)m > cn->n_in || n->n_outputs < cn->n_in - (size_t)m)
        return bd_error_set(err, BD_EMODEL, "node '%s' (Scan): num_scan_inputs %lld with %zu "
                            "inputs and %zu outputs", n->name, (long long)m, cn->n_in, n->n_outputs);
    cn->n_scan_in = (size_t)m;
    cn->n_state = cn->n_in - cn->n_scan_in;
    cn->n_scan_out = n->n_outputs - cn->n_state;
    return 0;
}

static int node_bodies(cf_node *cn, const bd_graph *g, bd_error *err)
{
    const bd_node *n = cn->node;
    if (cn->op == CF_IF) {
        int rc = body_import(g, n, "then_branch", NULL, 0, n->n_outputs, &cn->body[0], err);
        return rc ? rc : body_import(g, n, "else_branch", NULL, 0, n->n_outputs, &cn->body[1], err);
    }
    size_t nf = cn->op == CF_LOOP ? cn->n_in : cn->n_in;
    const bd_value **formals = calloc(nf ? nf : 1, sizeof *formals);
    if (!formals)
        return bd_error_set(err, BD_ENOMEM, "out of memory compiling node '%s'", n->name);
    bd_value iter = { .name = "iter", .dtype = BD_DT_INT64, .shape = { .rank = 0 } };
    bd_value cond = { .name = "cond", .dtype = BD_DT_BOOL, .shape = { .rank = 0 } };
    if (cn->op == CF_LOOP) {
        formals[0] = &iter;
        formals[1] = &cond;
        for (size_t i = 2; i < nf; i++)
            formals[i] = n->inputs[i];
    } else {
        for (size_t i = 0; i < cn->n_state; i++)
            formals[i] = n->inputs[i];       /* scan slices keep the body's declarations */
    }
    size_t want = cn->op == CF_LOOP ? 1 + cn->n_state + cn->n_scan_out : n->n_outputs;
    int rc = body_import(g, n, "body", formals, nf, want, &cn->body[0], err);
    free(formals);
    return rc;
}

static void kernel_free(bd_kernel *k)
{
    if (!k)
        return;
    for (size_t i = 0; k->nodes && i < k->n_nodes; i++) {
        for (int b = 0; b < 2; b++) {
            bd_graph_destroy(k->nodes[i].body[b].g);
            free(k->nodes[i].body[b].outer);
        }
        free(k->nodes[i].in);
        free(k->nodes[i].out);
    }
    free(k->nodes);
    free(k->vals);
    free(k->out_val);
    free((char *)k->opts.fallback_ops);
    free((char *)k->opts.engine);
    free(k);
}

static int cf_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err)
{
    bd_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->nodes = calloc(sg->n_nodes ? sg->n_nodes : 1, sizeof *k->nodes)) ||
        !(k->out_val = calloc(sg->n_outputs ? sg->n_outputs : 1, sizeof *k->out_val))) {
        kernel_free(k);
        return bd_error_set(err, BD_ENOMEM, "out of memory compiling control flow");
    }
    const bd_model_options *o = plan_building_options();
    if (o)
        k->opts = *o;
    k->opts.fallback_ops = k->opts.fallback_ops ? strdup(k->opts.fallback_ops) : NULL;
    k->opts.engine = k->opts.engine ? strdup(k->opts.engine) : NULL;
    k->max_bytes = k->opts.max_run_memory_bytes ? k->opts.max_run_memory_bytes : BD_CONTROL_MAX_BYTES;
    int rc = 0;
    for (size_t i = 0; i < sg->n_inputs && rc == 0; i++)
        if (val_index(k, sg->inputs[i]) == NONE)
            rc = BD_ENOMEM;
    k->n_in = k->n_vals;
    k->n_nodes = sg->n_nodes;
    for (size_t i = 0; i < sg->n_nodes && rc == 0; i++) {
        cf_node *cn = &k->nodes[i];
        cn->node = sg->nodes[i];
        cn->op = op_of(cn->node);
        cn->in = calloc(cn->node->n_inputs + 1, sizeof *cn->in);
        cn->out = calloc(cn->node->n_outputs + 1, sizeof *cn->out);
        if (!cn->in || !cn->out) {
            rc = BD_ENOMEM;
            break;
        }
        if (!cn->op) {
            rc = bd_error_set(err, BD_EUNSUPPORTED, "node '%s': op %s is not control flow",
                              cn->node->name, cn->node->op_type);
            break;
        }
        if ((rc = node_shape(cn, sg->graph, err)) || (rc = node_bodies(cn, sg->graph, err)))
            break;
        for (size_t j = 0; j < cn->node->n_inputs && rc == 0; j++)
            if ((cn->in[j] = cn->node->inputs[j] ? val_index(k, cn->node->inputs[j]) : NONE) == NONE &&
                cn->node->inputs[j])
                rc = BD_ENOMEM;
        for (size_t j = 0; j < cn->node->n_outputs && rc == 0; j++)
            if ((cn->out[j] = val_index(k, cn->node->outputs[j])) == NONE)
                rc = BD_ENOMEM;
    }
    for (size_t i = 0; i < sg->n_outputs && rc == 0; i++)
        if ((k->out_val[i] = val_index(k, sg->outputs[i])) == NONE)
            rc = BD_ENOMEM;
    k->n_out = sg->n_outputs;
    if (rc) {
        if (rc == BD_ENOMEM && (!err || !err->code))
            bd_error_set(err, BD_ENOMEM, "out of memory compiling control flow");
        kernel_free(k);
        return rc;
    }
    *out = k;
    return 0;
}

static void cf_release(bd_kernel *k)
{
    kernel_free(k);
}

/* ---- supports ---------------------------------------------------------------------------- */

/* Every node of G an op braid knows (a shape rule, or control flow whose bodies it can run). */
static bool body_ops_known(const bd_graph *g, char *why, size_t why_len)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *n = bd_graph_node(g, i);
        if (op_of(n) || bd_shape_has_rule(n->domain, n->op_type))
            continue;
        snprintf(why, why_len, "its body has op %s%s%s", n->domain && *n->domain ? n->domain : "",
                 n->domain && *n->domain ? "." : "", n->op_type);
        return false;
    }
    return true;
}

static bool cf_supports(const bd_graph *g, const bd_node *node, char *why, size_t why_len)
{
    cf_node cn = { .node = node, .op = op_of(node) };
    if (!cn.op) {
        snprintf(why, why_len, "op %s", node->op_type);
        return false;
    }
    if (strcmp(bd_graph_framework(g), "onnx") != 0) {
        snprintf(why, why_len, "a %s graph", bd_graph_framework(g));
        return false;
    }
    if (node->n_post) {
        snprintf(why, why_len, "post-ops");
        return false;
    }
    bd_error err = { 0 };
    bool ok = node_shape(&cn, g, &err) == 0 && node_bodies(&cn, g, &err) == 0;
    if (!ok)
        snprintf(why, why_len, "%s", err.msg);
    for (int b = 0; b < 2; b++) {
        if (ok && cn.body[b].g)
            ok = body_ops_known(cn.body[b].g, why, why_len);
        bd_graph_destroy(cn.body[b].g);
        free(cn.body[b].outer);
    }
    return ok;
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
    for (size_t k = 0; k < n->n_inputs && rc == 0; k++) {
        const bd_value *v = n->inputs[k];
        if (!v)
            continue;
        if (!(ins[k] = bd_graph_find_value(m, v->name))) {     /* a constant */
            if ((rc = bd_graph_add_value(m, v->name, v->dtype, &v->shape, &ins[k], err)) == 0) {
                ins[k]->data = v->data;
                ins[k]->nbytes = v->nbytes;
            }
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
static bool native_allowed(const bd_kernel *k)
{
    const char *e = k->opts.engine;
    return !e || !*e || strcmp(e, "auto") == 0 || strstr(e, "native") != NULL;
}

/* The plan of one body node G for SHAPES (its NA inputs ARGS). A small node goes to the native
 * engine when it takes it: a oneDNN primitive costs microseconds per execution whatever its
 * size (and its reference kernels, which tiny reductions get, allocate per run), more than the
 * whole node's work on a bag of a few rows; larger nodes are placed as the model's are. */
static int plan_node(const bd_kernel *k, const bd_graph *g, const bd_shape *shapes, size_t na,
                     const DLTensor *args, bd_plan **out, bd_error *err)
{
    int64_t elems = 0;
    for (size_t a = 0; a < na; a++)
        elems += numel_of(&args[a]);
    if (elems <= CF_SMALL_NODE && native_allowed(k)) {
        bd_model_options o = k->opts;
        o.engine = "native";
        bd_error quiet = { 0 };
        if (plan_build(g, shapes, &o, out, &quiet) == 0)
            return 0;
    }
    return plan_build(g, shapes, &k->opts, out, err);
}

/* Run body node NI with the plan for its inputs' current shapes (planned now when new). */
static int node_run(const bd_kernel *k, body_ctx *bc, size_t ni, bd_error *err)
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
            return bd_error_set(err, BD_EBACKEND, "body value '%s' has no tensor", v->name);
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
        return bd_error_set(err, BD_EINVAL, "body node '%s' (%s): the body's shapes changed more "
                            "than %d times in one run (braid plans each new shape)", n->name,
                            n->op_type, CF_MAX_BUILDS_PER_RUN);
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
            bd_error_set(err, BD_ENOMEM, "out of memory planning body node '%s'", n->name);
        if (rc == 0)
            rc = one_node_graph(g, n, bc->slots, bc->argv, na, &p->g, err);
        for (size_t a = 0; rc == 0 && a < na; a++)
            shapes[a] = bd_graph_input(p->g, a)->shape;
        if (rc == 0)
            rc = plan_node(k, p->g, shapes, na, bc->args, &p->plan, err);
        if (rc == 0)
            rc = bd_exec_create(p->plan, &p->exec, err);
        free(shapes);
        if (rc) {
            node_plan_free(p);
            bc->n_plans[ni]--;
            if (p != &plans[bc->n_plans[ni]])      /* keep the used entries contiguous */
                *p = plans[bc->n_plans[ni]], memset(&plans[bc->n_plans[ni]], 0, sizeof *p);
            return bd_error_prefix(err, "body node '%s' (%s): ", n->name, n->op_type);
        }
        memcpy(p->key, bc->key, kl * sizeof *p->key);
        p->key_len = kl;
    }
    p->used = ++bc->tick;
    int rc = bd_exec_run(p->exec, bc->args, na, err);
    if (rc)
        return bd_error_prefix(err, "body node '%s' (%s): ", n->name, n->op_type);
    const bd_graph *pg = bd_plan_graph(p->plan);
    for (size_t j = 0; j < n->n_outputs; j++) {
        const DLTensor *t = bd_exec_output(p->exec, j);
        slot_view(&bc->slots[n->outputs[j]->index], bd_graph_output(pg, j)->dtype, t->data,
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
static body_plan *whole_for(const bd_kernel *k, body_ctx *bc, size_t kl)
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
    if (typed && plan_node(k, g, shapes, ni, bc->ins, &p->plan, &quiet) == 0 &&
        (plan_has_dynamic(p->plan) || bd_exec_create(p->plan, &p->exec, &quiet) != 0)) {
        bd_plan_release(p->plan);
        p->plan = NULL;
    }
    free(shapes);
    return p;
}

/* Run the body once (the caller has set its inputs' slots): with the whole-body plan for
 * these input shapes when there is one, else node by node. */
static int body_run(const bd_kernel *k, body_ctx *bc, bd_error *err)
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
        return bd_error_set(err, BD_EINVAL, "body '%s': its shapes changed more than %d times in "
                            "one run (braid plans each new shape)", bd_graph_name(g),
                            CF_MAX_BUILDS_PER_RUN);
    body_plan *p = whole_for(k, bc, kl);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "out of memory planning a body");
    p->used = ++bc->tick;
    if (p->plan) {
        int rc = bd_exec_run(p->exec, bc->ins, ni, err);
        if (rc)
            return bd_error_prefix(err, "body '%s': ", bd_graph_name(g));
        const bd_graph *pg = bd_plan_graph(p->plan);
        for (size_t j = 0; j < bd_graph_num_outputs(g); j++) {
            const DLTensor *t = bd_exec_output(p->exec, j);
            slot_view(&bc->slots[bd_graph_output(g, j)->index], bd_graph_output(pg, j)->dtype,
                      t->data, t->ndim, t->shape);
        }
        return 0;
    }
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        int rc = node_run(k, bc, i, err);
        if (rc)
            return rc;
    }
    return 0;
}

static slot *body_in(body_ctx *bc, size_t i)
{
    return &bc->slots[bd_graph_input(bc->b->g, i)->index];
}

static const slot *body_out(body_ctx *bc, size_t i)
{
    return &bc->slots[bd_graph_output(bc->b->g, i)->index];
}

/* The outer values the body reads (IN: the node's input slots). */
static void body_bind_outer(body_ctx *bc, const bd_node *node, slot *const *in)
{
    (void)node;
    bc->builds = 0;                      /* a new run of the node */
    size_t n_extra = bd_graph_num_inputs(bc->b->g) - bc->b->n_formals;
    for (size_t i = 0; i < n_extra; i++)
        if (in[bc->b->outer[i]])
            slot_copy(body_in(bc, bc->b->n_formals + i), in[bc->b->outer[i]]);
}

static int body_ctx_init(body_ctx *bc, const cf_body *b)
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
            slot_view(&bc->slots[i], v->dtype, (void *)v->data, v->shape.rank, v->shape.dims);
    }
    return 0;
}

static void body_ctx_free(body_ctx *bc)
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

/* ---- the ops ---------------------------------------------------------------------------- */

static int scalar_arg(const bd_node *n, const char *what, const slot *s, int dtype, bd_error *err)
{
    if (s->dtype != dtype || numel_of(&s->t) != 1 || !s->t.data)
        return bd_error_set(err, BD_EINVAL, "node '%s' (%s): %s must be one %s, got %s of %lld "
                            "element(s)", n->name, n->op_type, what, bd_dtype_name(dtype),
                            bd_dtype_name(s->dtype), (long long)numel_of(&s->t));
    return 0;
}

static int run_if(const bd_kernel *k, const cf_node *cn, cf_node_ctx *nc, slot *const *in,
                  slot *outs, bd_error *err)
{
    int rc = scalar_arg(cn->node, "the condition", in[0], BD_DT_BOOL, err);
    if (rc)
        return rc;
    body_ctx *bc = &nc->body[*(const uint8_t *)in[0]->t.data ? 0 : 1];
    body_bind_outer(bc, cn->node, in);
    if ((rc = body_run(k, bc, err)))
        return rc;
    for (size_t j = 0; j < cn->node->n_outputs; j++)
        slot_copy(&outs[j], body_out(bc, j));
    return 0;
}

/* Append S (the scan output J of iteration IT, at position AT of the result) to NC->scan[J];
 * FIRST holds the first iteration's shape, every later one must match it. */
static int scan_append(const bd_kernel *k, const cf_node *cn, cf_node_ctx *nc, size_t j,
                       const slot *s, slot *first, int64_t it, int64_t at, int64_t total,
                       size_t *used, bd_error *err)
{
    size_t bytes = bytes_of(s);
    if (it == 0) {
        slot_copy(&first[j], s);
    } else if (s->t.ndim != first[j].t.ndim ||
               memcmp(s->t.shape, first[j].dims, (size_t)s->t.ndim * sizeof *first[j].dims) != 0) {
        return bd_error_set(err, BD_EINVAL, "node '%s' (%s): scan output %zu changes shape at "
                            "iteration %lld", cn->node->name, cn->node->op_type, j, (long long)it);
    }
    if (*used + bytes > k->max_bytes)
        return bd_error_set(err, BD_EINVAL, "node '%s' (%s): its scan outputs exceed %zu MiB at "
                            "iteration %lld (max_run_memory_bytes, or braid's limit)",
                            cn->node->name, cn->node->op_type, k->max_bytes >> 20, (long long)it);
    *used += bytes;
    size_t need = total >= 0 ? (size_t)total * bytes : (size_t)(at + 1) * bytes;
    if (grow(&nc->scan[j], need, (size_t)at * bytes))
        return bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", cn->node->name);
    if (bytes)
        memcpy((char *)nc->scan[j].p + (size_t)at * bytes, s->t.data, bytes);
    return 0;
}

/* Carried value I becomes S: copied into the buffer not in use (S may be the value itself,
 * or another carried value the body passes through). */
static int carry_set(cf_node_ctx *nc, size_t i, const slot *s, int which, bd_error *err)
{
    size_t bytes = bytes_of(s);
    if (grow(&nc->carry[which][i], bytes, 0))
        return bd_error_set(err, BD_ENOMEM, "out of memory running control flow");
    if (bytes)
        memcpy(nc->carry[which][i].p, s->t.data, bytes);
    slot_view(&nc->state[i], s->dtype, nc->carry[which][i].p, s->t.ndim, s->t.shape);
    return 0;
}

/* Scan output J: the appended slices, N of them, shaped [N, FIRST...] (FIRST unset when N is
 * 0: the plan's inferred shape says the rest). */
static void scan_result(const cf_node *cn, cf_node_ctx *nc, size_t j, const slot *first,
                        int64_t count, slot *out)
{
    int64_t dims[BD_MAX_RANK];
    int ndim = 1;
    dims[0] = count;
    const bd_value *v = cn->node->outputs[cn->n_state + j];
    if (count > 0) {
        for (int d = 0; d < first->t.ndim && d + 1 < BD_MAX_RANK; d++)
            dims[ndim++] = first->dims[d];
    } else {
        for (int d = 1; d < v->shape.rank; d++)
            dims[ndim++] = v->shape.dims[d] < 0 ? 0 : v->shape.dims[d];
    }
    int dtype = count > 0 ? first->dtype : v->dtype;
    if (grow(&nc->scan[j], 64, 0) == 0)
        slot_view(out, dtype, nc->scan[j].p, ndim, dims);
}

static int run_loop(const bd_kernel *k, const cf_node *cn, cf_node_ctx *nc, slot *const *in,
                    slot *outs, bd_error *err)
{
    const bd_node *n = cn->node;
    int64_t trips = INT64_MAX;
    bool use_cond = in[1] != NULL, cond = true;
    int rc = 0;
    if (in[0]) {
        if ((rc = scalar_arg(n, "M", in[0], BD_DT_INT64, err)))
            return rc;
        trips = *(const int64_t *)in[0]->t.data;
    }
    if (use_cond) {
        if ((rc = scalar_arg(n, "cond", in[1], BD_DT_BOOL, err)))
            return rc;
        cond = *(const uint8_t *)in[1]->t.data != 0;
    }
    body_ctx *bc = &nc->body[0];
    body_bind_outer(bc, n, in);
    int which = 0;
    for (size_t i = 0; i < cn->n_state; i++)
        if ((rc = carry_set(nc, i, in[2 + i], which, err)))
            return rc;
    slot first[cn->n_scan_out ? cn->n_scan_out : 1];
    size_t used = 0;
    int64_t it = 0;
    for (; it < trips && cond; it++) {
        if (it >= BD_CONTROL_MAX_ITERATIONS)
            return bd_error_set(err, BD_EINVAL, "node '%s' (Loop): more than %lld iterations "
                                "(braid's limit; M %s, cond %s)", n->name,
                                (long long)BD_CONTROL_MAX_ITERATIONS, in[0] ? "given" : "absent",
                                use_cond ? "still true" : "absent");
        nc->iter = it;
        nc->cond = cond;
        slot_view(body_in(bc, 0), BD_DT_INT64, &nc->iter, 0, NULL);
        slot_view(body_in(bc, 1), BD_DT_BOOL, &nc->cond, 0, NULL);
        for (size_t i = 0; i < cn->n_state; i++)
            slot_copy(body_in(bc, 2 + i), &nc->state[i]);
        if ((rc = body_run(k, bc, err)))
            return rc;
        if (use_cond) {
            const slot *c = body_out(bc, 0);
            if ((rc = scalar_arg(n, "the body's cond output", c, BD_DT_BOOL, err)))
                return rc;
            cond = *(const uint8_t *)c->t.data != 0;
        }
        which ^= 1;
        for (size_t i = 0; i < cn->n_state && rc == 0; i++)
            rc = carry_set(nc, i, body_out(bc, 1 + i), which, err);
        for (size_t j = 0; j < cn->n_scan_out && rc == 0; j++)
            rc = scan_append(k, cn, nc, j, body_out(bc, 1 + cn->n_state + j), first, it, it, -1,
                             &used, err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < cn->n_state; i++)
        slot_copy(&outs[i], &nc->state[i]);
    for (size_t j = 0; j < cn->n_scan_out; j++)
        scan_result(cn, nc, j, &first[j], it, &outs[cn->n_state + j]);
    return 0;
}

/* Slice IDX of S along AXIS (of length LEN) into B; DST gets its view. */
static int take_slice(const slot *s, int axis, int64_t idx, growbuf *b, slot *dst)
{
    size_t es = bd_dtype_size(s->dtype), outer = 1, inner = es;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)s->t.shape[d];
    for (int d = axis + 1; d < s->t.ndim; d++)
        inner *= (size_t)s->t.shape[d];
    int64_t len = s->t.shape[axis];
    if (grow(b, outer * inner, 0))
        return BD_ENOMEM;
    const char *src = s->t.data;
    for (size_t o = 0; o < outer; o++)
        memcpy((char *)b->p + o * inner, src + (o * (size_t)len + (size_t)idx) * inner, inner);
    int64_t dims[BD_MAX_RANK];
    for (int d = 0, j = 0; d < s->t.ndim; d++)
        if (d != axis)
            dims[j++] = s->t.shape[d];
    slot_view(dst, s->dtype, b->p, s->t.ndim - 1, dims);
    return 0;
}

static int axis_of(const bd_node *n, const char *attr, size_t i, int rank, int *out, bd_error *err)
{
    const int64_t *v = NULL;
    size_t cnt = bd_node_attr_ints(n, attr, &v);
    int64_t a = i < cnt ? v[i] : 0;
    if (a < 0)
        a += rank;
    if (a < 0 || a >= rank)
        return bd_error_set(err, BD_EINVAL, "node '%s' (Scan): %s[%zu] out of range for rank %d",
                            n->name, attr, i, rank);
    *out = (int)a;
    return 0;
}

static int run_scan(const bd_kernel *k, const cf_node *cn, cf_node_ctx *nc, slot *const *in,
                    slot *outs, bd_error *err)
{
    const bd_node *n = cn->node;
    size_t ns = cn->n_state;
    int64_t len = -1;
    int axes[cn->n_scan_in ? cn->n_scan_in : 1];
    const int64_t *dirs = NULL, *odirs = NULL;
    size_t n_dirs = bd_node_attr_ints(n, "scan_input_directions", &dirs);
    size_t n_odirs = bd_node_attr_ints(n, "scan_output_directions", &odirs);
    int rc = 0;
    for (size_t j = 0; j < cn->n_scan_in; j++) {
        const slot *s = in[ns + j];
        if ((rc = axis_of(n, "scan_input_axes", j, s->t.ndim, &axes[j], err)))
            return rc;
        int64_t l = s->t.shape[axes[j]];
        if (len >= 0 && l != len)
            return bd_error_set(err, BD_EINVAL, "node '%s' (Scan): scan inputs of lengths %lld "
                                "and %lld", n->name, (long long)len, (long long)l);
        len = l;
    }
    body_ctx *bc = &nc->body[0];
    body_bind_outer(bc, n, in);
    int which = 0;
    for (size_t i = 0; i < ns; i++)
        if ((rc = carry_set(nc, i, in[i], which, err)))
            return rc;
    slot first[cn->n_scan_out ? cn->n_scan_out : 1];
    size_t used = 0;
    for (int64_t t = 0; t < len; t++) {
        for (size_t i = 0; i < ns; i++)
            slot_copy(body_in(bc, i), &nc->state[i]);
        for (size_t j = 0; j < cn->n_scan_in; j++) {
            int64_t idx = j < n_dirs && dirs[j] ? len - 1 - t : t;
            if (take_slice(in[ns + j], axes[j], idx, &nc->slice[j], body_in(bc, ns + j)))
                return bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", n->name);
        }
        if ((rc = body_run(k, bc, err)))
            return rc;
        which ^= 1;
        for (size_t i = 0; i < ns && rc == 0; i++)
            rc = carry_set(nc, i, body_out(bc, i), which, err);
        for (size_t j = 0; j < cn->n_scan_out && rc == 0; j++) {
            int64_t at = j < n_odirs && odirs[j] ? len - 1 - t : t;
            rc = scan_append(k, cn, nc, j, body_out(bc, ns + j), first, t, at, len, &used, err);
        }
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < ns; i++)
        slot_copy(&outs[i], &nc->state[i]);
    for (size_t j = 0; j < cn->n_scan_out; j++) {
        slot *o = &outs[ns + j];
        scan_result(cn, nc, j, &first[j], len < 0 ? 0 : len, o);
        int a;
        if ((rc = axis_of(n, "scan_output_axes", j, o->t.ndim, &a, err)))
            return rc;
        if (a == 0 || len <= 0)
            continue;
        /* [L, s...] -> s with L inserted at A: out[o, t, i] = acc[t, o, i] */
        size_t es = bd_dtype_size(o->dtype), outer = 1, inner = es;
        for (int d = 1; d <= a; d++)
            outer *= (size_t)o->t.shape[d];
        for (int d = a + 1; d < o->t.ndim; d++)
            inner *= (size_t)o->t.shape[d];
        if (grow(&nc->turn[j], outer * inner * (size_t)len, 0))
            return bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", n->name);
        for (int64_t t = 0; t < len; t++)
            for (size_t q = 0; q < outer; q++)
                memcpy((char *)nc->turn[j].p + (q * (size_t)len + (size_t)t) * inner,
                       (const char *)o->t.data + ((size_t)t * outer + q) * inner, inner);
        int64_t dims[BD_MAX_RANK];
        for (int d = 0; d < a; d++)
            dims[d] = o->t.shape[d + 1];
        dims[a] = len;
        for (int d = a + 1; d < o->t.ndim; d++)
            dims[d] = o->t.shape[d];
        slot_view(o, o->dtype, nc->turn[j].p, o->t.ndim, dims);
    }
    return 0;
}

/* ---- contexts and runs ------------------------------------------------------------------- */

static void cf_ctx_destroy(bd_kernel_ctx *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->nodes && i < c->k->n_nodes; i++) {
        cf_node_ctx *nc = &c->nodes[i];
        const cf_node *cn = &c->k->nodes[i];
        for (int b = 0; b < 2; b++)
            body_ctx_free(&nc->body[b]);
        for (int w = 0; w < 2; w++) {
            for (size_t j = 0; nc->carry[w] && j < cn->n_state; j++)
                free(nc->carry[w][j].p);
            free(nc->carry[w]);
        }
        for (size_t j = 0; j < cn->n_scan_out; j++) {
            free(nc->scan ? nc->scan[j].p : NULL);
            free(nc->turn ? nc->turn[j].p : NULL);
        }
        for (size_t j = 0; nc->slice && j < cn->n_scan_in; j++)
            free(nc->slice[j].p);
        free(nc->scan);
        free(nc->turn);
        free(nc->slice);
        free(nc->state);
    }
    free(c->nodes);
    free(c->vals);
    free(c);
}

static int cf_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    bd_kernel_ctx *c = calloc(1, sizeof *c);
    int rc = c ? 0 : BD_ENOMEM;
    if (c) {
        c->k = k;
        c->vals = calloc(k->n_vals ? k->n_vals : 1, sizeof *c->vals);
        c->nodes = calloc(k->n_nodes ? k->n_nodes : 1, sizeof *c->nodes);
        rc = c->vals && c->nodes ? 0 : BD_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < k->n_vals; i++) {
        const bd_value *v = k->vals[i];
        if (v->data)
            slot_view(&c->vals[i], v->dtype, (void *)v->data, v->shape.rank, v->shape.dims);
    }
    for (size_t i = 0; rc == 0 && i < k->n_nodes; i++) {
        const cf_node *cn = &k->nodes[i];
        cf_node_ctx *nc = &c->nodes[i];
        for (int b = 0; b < 2 && rc == 0; b++)
            if (cn->body[b].g)
                rc = body_ctx_init(&nc->body[b], &cn->body[b]);
        size_t ns = cn->n_state ? cn->n_state : 1, nso = cn->n_scan_out ? cn->n_scan_out : 1;
        nc->carry[0] = calloc(ns, sizeof **nc->carry);
        nc->carry[1] = calloc(ns, sizeof **nc->carry);
        nc->state = calloc(ns, sizeof *nc->state);
        nc->scan = calloc(nso, sizeof *nc->scan);
        nc->turn = calloc(nso, sizeof *nc->turn);
        nc->slice = calloc(cn->n_scan_in ? cn->n_scan_in : 1, sizeof *nc->slice);
        if (rc == 0 && (!nc->carry[0] || !nc->carry[1] || !nc->state || !nc->scan || !nc->turn ||
                        !nc->slice))
            rc = BD_ENOMEM;
    }
    if (rc) {
        cf_ctx_destroy(c);
        return bd_error_set(err, BD_ENOMEM, "out of memory creating a control-flow context");
    }
    *out = c;
    return 0;
}

static int cf_run(bd_kernel_ctx *c, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
                  bd_error *err)
{
    const bd_kernel *k = c->k;
    if (n_in != k->n_in || n_out != k->n_out)
        return bd_error_set(err, BD_EBACKEND, "control flow: %zu/%zu tensors for %zu/%zu", n_in,
                            n_out, k->n_in, k->n_out);
    for (size_t i = 0; i < n_in; i++) {
        c->vals[i].t = in[i];
        memcpy(c->vals[i].dims, in[i].shape, (size_t)in[i].ndim * sizeof *in[i].shape);
        c->vals[i].t.shape = c->vals[i].dims;
        c->vals[i].t.data = (char *)in[i].data + in[i].byte_offset;
        c->vals[i].t.byte_offset = 0;
        c->vals[i].dtype = k->vals[i]->dtype;
    }
    slot *ins[64], **in_ptrs = ins;
    for (size_t i = 0; i < k->n_nodes; i++) {
        const cf_node *cn = &k->nodes[i];
        const bd_node *n = cn->node;
        if (n->n_inputs > 64 && !(in_ptrs = malloc(n->n_inputs * sizeof *in_ptrs)))
            return bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", n->name);
        for (size_t j = 0; j < n->n_inputs; j++)
            in_ptrs[j] = cn->in[j] == NONE ? NULL : &c->vals[cn->in[j]];
        slot outs_local[16], *outs = n->n_outputs <= 16 ? outs_local
                                                        : calloc(n->n_outputs, sizeof *outs);
        int rc = outs ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", n->name);
        if (rc == 0)
            rc = cn->op == CF_IF ? run_if(k, cn, &c->nodes[i], in_ptrs, outs, err)
               : cn->op == CF_LOOP ? run_loop(k, cn, &c->nodes[i], in_ptrs, outs, err)
                                   : run_scan(k, cn, &c->nodes[i], in_ptrs, outs, err);
        for (size_t j = 0; rc == 0 && j < n->n_outputs; j++)
            slot_copy(&c->vals[cn->out[j]], &outs[j]);
        if (outs != outs_local)
            free(outs);
        if (in_ptrs != ins)
            free(in_ptrs);
        in_ptrs = ins;
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < n_out; i++) {
        const slot *s = &c->vals[k->out_val[i]];
        if (!out[i].data) {
            out[i].ndim = s->t.ndim;
            memcpy(out[i].shape, s->t.shape, (size_t)s->t.ndim * sizeof *s->t.shape);
            out[i].data = s->t.data;
            out[i].byte_offset = 0;
            continue;
        }
        bool fits = out[i].ndim == s->t.ndim;
        for (int d = 0; fits && d < s->t.ndim; d++)
            fits = out[i].shape[d] == s->t.shape[d];
        if (!fits) {
            char want[96], got[96];
            bd_shape ws = { .rank = out[i].ndim }, gs = { .rank = s->t.ndim };
            for (int d = 0; d < ws.rank && d < BD_MAX_RANK; d++)
                ws.dims[d] = out[i].shape[d];
            for (int d = 0; d < gs.rank && d < BD_MAX_RANK; d++)
                gs.dims[d] = s->t.shape[d];
            return bd_error_set(err, BD_EINVAL, "control flow output '%s' is %s, the plan "
                                "expected %s", k->vals[k->out_val[i]]->name,
                                bd_shape_str(&gs, got, sizeof got), bd_shape_str(&ws, want, sizeof want));
        }
        size_t bytes = bytes_of(s);
        if (bytes && (char *)out[i].data + out[i].byte_offset != s->t.data)
            memmove((char *)out[i].data + out[i].byte_offset, s->t.data, bytes);
    }
    return 0;
}

const bd_backend bd_control_backend = {
    .name        = "control",
    .kind        = BD_ENGINE_NATIVE,
    .supports    = cf_supports,
    .compile     = cf_compile,
    .ctx_create  = cf_ctx_create,
    .run         = cf_run,
    .ctx_destroy = cf_ctx_destroy,
    .release     = cf_release,
};
