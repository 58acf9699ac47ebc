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
#include "runtime/control_internal.h"
#include "runtime/engines.h"
#include "runtime/plan_internal.h"
#include "partitioner/onnx/onnx_import.h"
#include "partitioner/shape/shape_infer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CF_IF = 1, CF_LOOP, CF_SCAN };

#define NONE SIZE_MAX

/* ---- the kernel: bodies imported once ------------------------------------------------- */

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

typedef struct cf_node_ctx {
    body_ctx  body[2];
    growbuf  *carry[2];        /* per carried value, the two alternating buffers */
    growbuf  *scan;            /* per scan output: what the iterations appended */
    growbuf  *slice;           /* Scan: per scan input, this iteration's slice */
    growbuf  *turn;            /* Scan: per scan output, its transposed result */
    slot     *state;           /* per carried value: where it is now */
    slot     *first;           /* per scan output: the first iteration's (its shape) */
    slot     *outs;            /* per node output: the run's result */
    int      *axes;            /* Scan: per scan input, its axis this run */
    int64_t   iter;
    uint8_t   cond;
} cf_node_ctx;

struct bd_kernel_ctx {
    const bd_kernel *k;
    slot            *vals;
    slot           **in_ptrs;   /* scratch: a node's input slots */
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

/* ---- the ops ---------------------------------------------------------------------------- */

static int scalar_arg(const bd_node *n, const char *what, const slot *s, int dtype, bd_error *err)
{
    if (s->dtype != dtype || cf_numel(&s->t) != 1 || !s->t.data)
        return bd_error_set(err, BD_EINVAL, "node '%s' (%s): %s must be one %s, got %s of %lld "
                            "element(s)", n->name, n->op_type, what, bd_dtype_name(dtype),
                            bd_dtype_name(s->dtype), (long long)cf_numel(&s->t));
    return 0;
}

static int run_if(const bd_kernel *k, const cf_node *cn, cf_node_ctx *nc, slot *const *in,
                  slot *outs, bd_error *err)
{
    int rc = scalar_arg(cn->node, "the condition", in[0], BD_DT_BOOL, err);
    if (rc)
        return rc;
    body_ctx *bc = &nc->body[*(const uint8_t *)in[0]->t.data ? 0 : 1];
    cf_body_bind(bc, in);
    if ((rc = cf_body_run(&k->opts, bc, err)))
        return rc;
    for (size_t j = 0; j < cn->node->n_outputs; j++)
        cf_slot_copy(&outs[j], cf_body_out(bc, j));
    return 0;
}

/* Append S (the scan output J of iteration IT, at position AT of the result) to NC->scan[J];
 * FIRST holds the first iteration's shape, every later one must match it. */
static int scan_append(const bd_kernel *k, const cf_node *cn, cf_node_ctx *nc, size_t j,
                       const slot *s, slot *first, int64_t it, int64_t at, int64_t total,
                       size_t *used, bd_error *err)
{
    size_t bytes = cf_bytes(s);
    if (it == 0) {
        cf_slot_copy(&first[j], s);
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
    if (cf_grow(&nc->scan[j], need, (size_t)at * bytes))
        return bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", cn->node->name);
    if (bytes)
        memcpy((char *)nc->scan[j].p + (size_t)at * bytes, s->t.data, bytes);
    return 0;
}

/* Carried value I becomes S: copied into the buffer not in use (S may be the value itself,
 * or another carried value the body passes through). */
static int carry_set(cf_node_ctx *nc, size_t i, const slot *s, int which, bd_error *err)
{
    size_t bytes = cf_bytes(s);
    if (cf_grow(&nc->carry[which][i], bytes, 0))
        return bd_error_set(err, BD_ENOMEM, "out of memory running control flow");
    if (bytes)
        memcpy(nc->carry[which][i].p, s->t.data, bytes);
    cf_slot_view(&nc->state[i], s->dtype, nc->carry[which][i].p, s->t.ndim, s->t.shape);
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
    if (cf_grow(&nc->scan[j], 64, 0) == 0)
        cf_slot_view(out, dtype, nc->scan[j].p, ndim, dims);
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
        memcpy(&trips, in[0]->t.data, sizeof trips);   /* a constant M may sit unaligned in the model file */
    }
    if (use_cond) {
        if ((rc = scalar_arg(n, "cond", in[1], BD_DT_BOOL, err)))
            return rc;
        cond = *(const uint8_t *)in[1]->t.data != 0;
    }
    body_ctx *bc = &nc->body[0];
    cf_body_bind(bc, in);
    int which = 0;
    for (size_t i = 0; i < cn->n_state; i++)
        if ((rc = carry_set(nc, i, in[2 + i], which, err)))
            return rc;
    slot *first = nc->first;
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
        cf_slot_view(cf_body_in(bc, 0), BD_DT_INT64, &nc->iter, 0, NULL);
        cf_slot_view(cf_body_in(bc, 1), BD_DT_BOOL, &nc->cond, 0, NULL);
        for (size_t i = 0; i < cn->n_state; i++)
            cf_slot_copy(cf_body_in(bc, 2 + i), &nc->state[i]);
        if ((rc = cf_body_run(&k->opts, bc, err)))
            return rc;
        if (use_cond) {
            const slot *c = cf_body_out(bc, 0);
            if ((rc = scalar_arg(n, "the body's cond output", c, BD_DT_BOOL, err)))
                return rc;
            cond = *(const uint8_t *)c->t.data != 0;
        }
        which ^= 1;
        for (size_t i = 0; i < cn->n_state && rc == 0; i++)
            rc = carry_set(nc, i, cf_body_out(bc, 1 + i), which, err);
        for (size_t j = 0; j < cn->n_scan_out && rc == 0; j++)
            rc = scan_append(k, cn, nc, j, cf_body_out(bc, 1 + cn->n_state + j), first, it, it, -1,
                             &used, err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < cn->n_state; i++)
        cf_slot_copy(&outs[i], &nc->state[i]);
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
    if (cf_grow(b, outer * inner, 0))
        return BD_ENOMEM;
    const char *src = s->t.data;
    for (size_t o = 0; o < outer; o++)
        memcpy((char *)b->p + o * inner, src + (o * (size_t)len + (size_t)idx) * inner, inner);
    int64_t dims[BD_MAX_RANK];
    for (int d = 0, j = 0; d < s->t.ndim; d++)
        if (d != axis)
            dims[j++] = s->t.shape[d];
    cf_slot_view(dst, s->dtype, b->p, s->t.ndim - 1, dims);
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
    int *axes = nc->axes;
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
    cf_body_bind(bc, in);
    int which = 0;
    for (size_t i = 0; i < ns; i++)
        if ((rc = carry_set(nc, i, in[i], which, err)))
            return rc;
    slot *first = nc->first;
    size_t used = 0;
    for (int64_t t = 0; t < len; t++) {
        for (size_t i = 0; i < ns; i++)
            cf_slot_copy(cf_body_in(bc, i), &nc->state[i]);
        for (size_t j = 0; j < cn->n_scan_in; j++) {
            int64_t idx = j < n_dirs && dirs[j] ? len - 1 - t : t;
            if (take_slice(in[ns + j], axes[j], idx, &nc->slice[j], cf_body_in(bc, ns + j)))
                return bd_error_set(err, BD_ENOMEM, "out of memory running node '%s'", n->name);
        }
        if ((rc = cf_body_run(&k->opts, bc, err)))
            return rc;
        which ^= 1;
        for (size_t i = 0; i < ns && rc == 0; i++)
            rc = carry_set(nc, i, cf_body_out(bc, i), which, err);
        for (size_t j = 0; j < cn->n_scan_out && rc == 0; j++) {
            int64_t at = j < n_odirs && odirs[j] ? len - 1 - t : t;
            rc = scan_append(k, cn, nc, j, cf_body_out(bc, ns + j), first, t, at, len, &used, err);
        }
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < ns; i++)
        cf_slot_copy(&outs[i], &nc->state[i]);
    for (size_t j = 0; j < cn->n_scan_out; j++) {
        slot *o = &outs[ns + j];
        scan_result(cn, nc, j, &first[j], len < 0 ? 0 : len, o);
        int a = 0;
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
        if (cf_grow(&nc->turn[j], outer * inner * (size_t)len, 0))
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
        cf_slot_view(o, o->dtype, nc->turn[j].p, o->t.ndim, dims);
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
            cf_body_free(&nc->body[b]);
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
        free(nc->first);
        free(nc->outs);
        free(nc->axes);
    }
    free(c->nodes);
    free(c->vals);
    free(c->in_ptrs);
    free(c);
}

static int cf_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    bd_kernel_ctx *c = calloc(1, sizeof *c);
    int rc = c ? 0 : BD_ENOMEM;
    size_t max_in = 1;
    if (c) {
        c->k = k;
        c->vals = calloc(k->n_vals ? k->n_vals : 1, sizeof *c->vals);
        c->nodes = calloc(k->n_nodes ? k->n_nodes : 1, sizeof *c->nodes);
        rc = c->vals && c->nodes ? 0 : BD_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < k->n_vals; i++) {
        const bd_value *v = k->vals[i];
        if (v->data)
            cf_slot_view(&c->vals[i], v->dtype, (void *)v->data, v->shape.rank, v->shape.dims);
    }
    for (size_t i = 0; rc == 0 && i < k->n_nodes; i++) {
        const cf_node *cn = &k->nodes[i];
        cf_node_ctx *nc = &c->nodes[i];
        for (int b = 0; b < 2 && rc == 0; b++)
            if (cn->body[b].g)
                rc = cf_body_init(&nc->body[b], &cn->body[b]);
        size_t ns = cn->n_state ? cn->n_state : 1, nso = cn->n_scan_out ? cn->n_scan_out : 1;
        nc->carry[0] = calloc(ns, sizeof **nc->carry);
        nc->carry[1] = calloc(ns, sizeof **nc->carry);
        nc->state = calloc(ns, sizeof *nc->state);
        nc->scan = calloc(nso, sizeof *nc->scan);
        nc->turn = calloc(nso, sizeof *nc->turn);
        nc->slice = calloc(cn->n_scan_in ? cn->n_scan_in : 1, sizeof *nc->slice);
        nc->first = calloc(nso, sizeof *nc->first);
        nc->outs = calloc(cn->node->n_outputs ? cn->node->n_outputs : 1, sizeof *nc->outs);
        nc->axes = calloc(cn->n_scan_in ? cn->n_scan_in : 1, sizeof *nc->axes);
        if (rc == 0 && (!nc->carry[0] || !nc->carry[1] || !nc->state || !nc->scan || !nc->turn ||
                        !nc->slice || !nc->first || !nc->outs || !nc->axes))
            rc = BD_ENOMEM;
        if (cn->node->n_inputs > max_in)
            max_in = cn->node->n_inputs;
    }
    if (rc == 0 && !(c->in_ptrs = calloc(max_in, sizeof *c->in_ptrs)))
        rc = BD_ENOMEM;
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
    for (size_t i = 0; i < k->n_nodes; i++) {
        const cf_node *cn = &k->nodes[i];
        const bd_node *n = cn->node;
        cf_node_ctx *nc = &c->nodes[i];
        for (size_t j = 0; j < n->n_inputs; j++)
            c->in_ptrs[j] = cn->in[j] == NONE ? NULL : &c->vals[cn->in[j]];
        int rc = cn->op == CF_IF ? run_if(k, cn, nc, c->in_ptrs, nc->outs, err)
               : cn->op == CF_LOOP ? run_loop(k, cn, nc, c->in_ptrs, nc->outs, err)
                                   : run_scan(k, cn, nc, c->in_ptrs, nc->outs, err);
        if (rc)
            return rc;
        for (size_t j = 0; j < n->n_outputs; j++)
            cf_slot_copy(&c->vals[cn->out[j]], &nc->outs[j]);
    }
    for (size_t i = 0; i < n_out; i++) {
        int rc = cf_slot_deliver(&c->vals[k->out_val[i]], &out[i], "control flow output",
                                 k->vals[k->out_val[i]]->name, err);
        if (rc)
            return rc;
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
