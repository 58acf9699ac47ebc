/* Control flow: the outputs of If, Loop and Scan, inferred from their bodies.
 *
 * A body (a GRAPH attribute, kept as the model's bytes) is imported with the ONNX importer
 * (bd_onnx_import_body) given the types and shapes the enclosing graph gives its inputs, and
 * inferred like any graph; the values it reads from enclosing scopes come in with their
 * inferred shapes, and constants with their bytes, so shape arithmetic inside folds too.
 *
 *   If     each output is the branches' agreement: dims that differ become dynamic, ranks
 *          that differ unknown; with a constant condition, the taken branch's shape.
 *   Loop   loop-carried outputs: the fixpoint of the carried shapes over the body (a dim that
 *          changes across iterations becomes dynamic); scan outputs: [T, ...] where T is the
 *          trip count when it is known before the run (M constant, and either no cond input
 *          or a constant-true cond in and out), else a dynamic dim of known rank.
 *   Scan   (opset 9+) state outputs like Loop's; scan outputs the body's with the sequence
 *          length inserted at scan_output_axes.
 *
 * A body braid cannot import or infer (a sequence type, an op of another domain) leaves the
 * node's outputs unknown, as they were before: the node runs where it ran. A body whose
 * output count does not fit the op is BD_EMODEL. */
#include "partitioner/shape/shape_rules.h"
#include "partitioner/shape/shape_infer.h"
#include "partitioner/onnx/onnx_import.h"

#include <stdlib.h>
#include <string.h>

/* Rounds of the loop-carried fixpoint: each round either changes nothing or turns at least
 * one more dim dynamic or one more rank unknown, so a few rounds settle real models; past
 * them the carried shapes still changing are made unknown. */
#define SHP_CARRY_ROUNDS 4

/* Bodies one control node of the graph being inferred may import, nested bodies included:
 * loops nested in loops, each widening its carried shapes over a few rounds, can multiply
 * their rounds level by level (every round of a level infers the level below again). Past
 * the budget the outputs stay unknown, as they were before braid read bodies. */
#define SHP_BODY_BUDGET 256

static _Thread_local int body_depth;     /* control rules running on this thread */
static _Thread_local int body_budget;

/* The widest shape both A and B fit: equal dims kept, others dynamic; ranks that differ (or
 * an unknown one) give an unknown rank. */
static bd_shape merge_shapes(const bd_shape *a, const bd_shape *b)
{
    bd_shape m;
    memset(&m, 0, sizeof m);
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        m.rank = -1;
        return m;
    }
    m = *a;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i] || a->dims[i] < 0) {
            const char *sym = a->dims[i] < 0 && b->dims[i] < 0 && a->sym[i] && b->sym[i] &&
                              strcmp(a->sym[i], b->sym[i]) == 0 ? a->sym[i] : NULL;
            m.dims[i] = -1;
            m.sym[i] = sym;
        }
    return m;
}

static bool same_shape(const bd_shape *a, const bd_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* True when V is a constant whose first element is non-zero (a condition known true). */
static bool const_true(const bd_value *v)
{
    return v && shp_is_int_const(v) && bd_shape_numel(&v->shape) >= 1 && shp_const_at(v, 0) != 0;
}

static bool const_false(const bd_value *v)
{
    return v && shp_is_int_const(v) && bd_shape_numel(&v->shape) >= 1 && shp_const_at(v, 0) == 0;
}

/* True when the body's cond output is known to stay true while its cond input is: a constant
 * true, or the cond input passed through (directly or by an Identity). */
static bool cond_kept(const bd_graph *body)
{
    const bd_value *out = bd_graph_output(body, 0), *in = bd_graph_input(body, 1);
    if (const_true(out) || out == in)
        return true;
    const bd_node *p = out->producer;
    return p && strcmp(p->op_type, "Identity") == 0 && p->n_inputs >= 1 && p->inputs[0] == in;
}

/* Import and infer N's body ATTR with formal inputs FORMALS: 0 with *OUT set; 1 when braid
 * cannot (a construct the importer does not support, or the body's own inference fails: the
 * caller leaves the outputs unknown, ERR cleared); BD_EMODEL when the body is malformed or its
 * input or output count does not fit the op (N_FORMALS, WANT_OUTPUTS); BD_ENOMEM. */
static int infer_body(bd_graph *g, bd_node *n, const char *attr, const bd_value *const *formals,
                      size_t n_formals, size_t want_outputs, bd_graph **out, bd_error *err)
{
    const bd_attr *a = bd_node_attr(n, attr);
    if (!a || a->type != BD_ATTR_GRAPH)
        return shp_fail(err, n, "attribute '%s' must be a graph", attr);
    if (body_depth == 0)
        body_budget = SHP_BODY_BUDGET;
    if (body_budget-- <= 0)
        return 1;
    bd_graph *body = NULL;
    int rc = bd_onnx_import_body(g, n, a->graph, a->graph_len, formals, n_formals, &body, err);
    if (rc == BD_EUNSUPPORTED) {
        bd_error_clear(err);
        return 1;
    }
    if (rc)
        return rc;
    if (bd_graph_num_outputs(body) != want_outputs) {
        size_t got = bd_graph_num_outputs(body);
        bd_graph_destroy(body);
        return shp_fail(err, n, "its %s has %zu output(s), the op needs %zu", attr, got,
                        want_outputs);
    }
    body_depth++;
    rc = bd_shape_infer(body, false, err);
    body_depth--;
    if (rc) {
        bd_graph_destroy(body);
        if (rc == BD_ENOMEM)
            return rc;
        bd_error_clear(err);
        return 1;
    }
    *out = body;
    return 0;
}

/* ---- If ---------------------------------------------------------------------------------- */

int shp_if(bd_graph *g, bd_node *n, bd_error *err)
{
    bd_value *cond = shp_in(n, 0);
    bd_graph *then_g = NULL, *else_g = NULL;
    int rc = infer_body(g, n, "then_branch", NULL, 0, n->n_outputs, &then_g, err);
    if (rc == 0 && (rc = infer_body(g, n, "else_branch", NULL, 0, n->n_outputs, &else_g, err)))
        bd_graph_destroy(then_g);
    if (rc < 0)
        return rc;
    if (rc > 0) {
        for (size_t k = 0; k < n->n_outputs; k++)
            shp_set_unknown(n->outputs[k], BD_DT_UNDEFINED);
        return 0;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
        const bd_value *t = bd_graph_output(then_g, k), *e = bd_graph_output(else_g, k);
        bd_shape s = const_true(cond) ? t->shape : const_false(cond) ? e->shape
                                                                      : merge_shapes(&t->shape, &e->shape);
        int dtype = const_false(cond) ? e->dtype : t->dtype;
        if (s.rank < 0)
            shp_set_unknown(n->outputs[k], dtype);
        else
            shp_set(n->outputs[k], dtype, &s);
    }
    bd_graph_destroy(then_g);
    bd_graph_destroy(else_g);
    return 0;
}

/* ---- Loop and Scan: the carried-state fixpoint ------------------------------------------ */

/* Infer BODY (attribute ATTR of N) to the fixpoint of its N_STATE carried values: FORMALS
 * holds the body's formal inputs, the carried ones at FIRST_STATE.. (their shapes start as
 * the initial values' and widen until the body's outputs at OUT_STATE.. fit them). On 0,
 * *OUT is the body inferred with the final formals. */
static int carried_fixpoint(bd_graph *g, bd_node *n, const char *attr, bd_value *formals,
                            size_t n_formals, size_t first_state, size_t n_state, size_t out_state,
                            size_t want_outputs, bd_graph **out, bd_error *err)
{
    const bd_value **fp = malloc((n_formals ? n_formals : 1) * sizeof *fp);
    if (!fp)
        return bd_error_set(err, BD_ENOMEM, "out of memory inferring node '%s'", n->name);
    for (size_t i = 0; i < n_formals; i++)
        fp[i] = &formals[i];
    int rc = 0;
    for (int round = 0;; round++) {
        bd_graph *body = NULL;
        if ((rc = infer_body(g, n, attr, fp, n_formals, want_outputs, &body, err)))
            break;
        bool changed = false;
        for (size_t i = 0; i < n_state; i++) {
            bd_value *f = &formals[first_state + i];
            const bd_value *o = bd_graph_output(body, out_state + i);
            bd_shape m = round < SHP_CARRY_ROUNDS ? merge_shapes(&f->shape, &o->shape)
                                                  : (bd_shape){ .rank = -1 };
            if (f->dtype == BD_DT_UNDEFINED)
                f->dtype = o->dtype;
            if (!same_shape(&m, &f->shape)) {
                f->shape = m;
                changed = true;
            }
        }
        if (!changed) {
            *out = body;
            break;
        }
        bd_graph_destroy(body);
    }
    free(fp);
    return rc;
}

/* Output V: the body's scan output O with the dim LEN (dynamic when < 0) inserted at AXIS
 * (already checked against O's rank + 1). */
static void set_scan_output(bd_value *v, const bd_value *o, int64_t len, int axis)
{
    if (o->shape.rank < 0 || o->shape.rank + 1 > BD_MAX_RANK) {
        shp_set_unknown(v, o->dtype);
        return;
    }
    bd_shape s;
    memset(&s, 0, sizeof s);
    for (int i = 0, j = 0; i <= o->shape.rank; i++) {
        if (i == axis) {
            s.dims[i] = len < 0 ? -1 : len;
            continue;
        }
        s.dims[i] = o->shape.dims[j];
        s.sym[i] = o->shape.sym[j++];
    }
    s.rank = o->shape.rank + 1;
    shp_set(v, o->dtype, &s);
}

static int all_unknown(bd_node *n)
{
    for (size_t k = 0; k < n->n_outputs; k++)
        shp_set_unknown(n->outputs[k], BD_DT_UNDEFINED);
    return 0;
}

/* ---- Loop -------------------------------------------------------------------------------- */

int shp_loop(bd_graph *g, bd_node *n, bd_error *err)
{
    size_t nin = shp_n_inputs(n);
    if (nin < 2)
        return shp_fail(err, n, "expected at least 2 inputs (M, cond), got %zu", nin);
    size_t n_state = nin - 2;
    if (n->n_outputs < n_state)
        return shp_fail(err, n, "%zu loop-carried input(s) but %zu output(s)", n_state, n->n_outputs);
    size_t n_scan = n->n_outputs - n_state;
    bd_value *m = shp_in(n, 0), *cond = shp_in(n, 1);
    bd_value *formals = calloc(n_state + 2, sizeof *formals);
    if (!formals)
        return bd_error_set(err, BD_ENOMEM, "out of memory inferring node '%s'", n->name);
    formals[0] = (bd_value){ .name = "iteration_num", .dtype = BD_DT_INT64, .shape = { .rank = 0 } };
    formals[1] = (bd_value){ .name = "cond", .dtype = BD_DT_BOOL, .shape = { .rank = 0 } };
    for (size_t i = 0; i < n_state; i++) {
        const bd_value *v = shp_in(n, 2 + i);
        if (!v) {
            free(formals);
            return shp_fail(err, n, "loop-carried input %zu is missing", i);
        }
        formals[2 + i] = (bd_value){ .name = v->name, .dtype = v->dtype, .shape = v->shape };
    }
    bd_graph *body = NULL;
    int rc = carried_fixpoint(g, n, "body", formals, n_state + 2, 2, n_state, 1,
                              1 + n_state + n_scan, &body, err);
    free(formals);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return all_unknown(n);
    /* The trip count, when the run cannot change it. */
    int64_t trips = -1;
    if (m && shp_is_int_const(m) && bd_shape_numel(&m->shape) == 1) {
        int64_t mv = shp_const_at(m, 0);
        if (const_false(cond))
            trips = 0;
        else if (!cond || (const_true(cond) && cond_kept(body)))
            trips = mv < 0 ? 0 : mv;
    } else if (const_false(cond)) {
        trips = 0;
    }
    for (size_t i = 0; i < n_state; i++) {
        /* zero iterations give back the initial value: the fixpoint already covers it */
        const bd_value *o = bd_graph_output(body, 1 + i), *init = shp_in(n, 2 + i);
        bd_shape s = trips == 0 ? init->shape : merge_shapes(&init->shape, &o->shape);
        if (s.rank < 0)
            shp_set_unknown(n->outputs[i], init->dtype);
        else
            shp_set(n->outputs[i], init->dtype, &s);
    }
    for (size_t k = 0; k < n_scan; k++)
        set_scan_output(n->outputs[n_state + k], bd_graph_output(body, 1 + n_state + k), trips, 0);
    bd_graph_destroy(body);
    return 0;
}

/* ---- Scan (opset 9+) --------------------------------------------------------------------- */

int shp_scan(bd_graph *g, bd_node *n, bd_error *err)
{
    if (bd_graph_opset(g) > 0 && bd_graph_opset(g) < 9)
        return all_unknown(n);                 /* opset 8: sequence_lens and a batch axis */
    size_t nin = shp_n_inputs(n);
    int64_t n_scan_in;
    const int64_t *in_axes = NULL, *out_axes = NULL;
    size_t n_in_axes = 0, n_out_axes = 0;
    int rc = shp_attr_int(n, "num_scan_inputs", -1, &n_scan_in, err);
    if (rc == 0)
        rc = shp_attr_ints(n, "scan_input_axes", &in_axes, &n_in_axes, err);
    if (rc == 0)
        rc = shp_attr_ints(n, "scan_output_axes", &out_axes, &n_out_axes, err);
    if (rc)
        return rc;
    if (n_scan_in < 1 || (size_t)n_scan_in > nin)
        return shp_fail(err, n, "num_scan_inputs = %lld with %zu input(s)", (long long)n_scan_in, nin);
    size_t n_state = nin - (size_t)n_scan_in;
    if (n->n_outputs < n_state)
        return shp_fail(err, n, "%zu state input(s) but %zu output(s)", n_state, n->n_outputs);
    size_t n_scan_out = n->n_outputs - n_state;
    if ((in_axes && n_in_axes != (size_t)n_scan_in) || (out_axes && n_out_axes != n_scan_out))
        return shp_fail(err, n, "scan_input_axes/scan_output_axes must have one entry per scan "
                        "input/output");
    bd_value *formals = calloc(nin, sizeof *formals);
    if (!formals)
        return bd_error_set(err, BD_ENOMEM, "out of memory inferring node '%s'", n->name);
    int64_t len = -1;
    for (size_t i = 0; i < nin && rc == 0; i++) {
        const bd_value *v = shp_in(n, i);
        if (!v) {
            rc = shp_fail(err, n, "input %zu is missing", i);
            break;
        }
        formals[i] = (bd_value){ .name = v->name, .dtype = v->dtype, .shape = v->shape };
        if (i < n_state || v->shape.rank < 0)
            continue;
        int axis;
        if ((rc = shp_axis(n, "scan_input_axes", in_axes ? in_axes[i - n_state] : 0,
                           v->shape.rank, &axis, err)))
            break;
        int64_t d = v->shape.dims[axis];
        if (d >= 0 && len >= 0 && d != len)
            rc = shp_fail(err, n, "scan inputs of lengths %lld and %lld", (long long)len, (long long)d);
        if (d >= 0)
            len = d;
        bd_shape *s = &formals[i].shape;
        for (int k = axis; k + 1 < s->rank; k++) {
            s->dims[k] = s->dims[k + 1];
            s->sym[k] = s->sym[k + 1];
        }
        s->rank--;
    }
    bd_graph *body = NULL;
    if (rc == 0)
        rc = carried_fixpoint(g, n, "body", formals, nin, 0, n_state, 0, n_state + n_scan_out,
                              &body, err);
    free(formals);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return all_unknown(n);
    for (size_t i = 0; i < n_state; i++) {
        const bd_value *o = bd_graph_output(body, i), *init = shp_in(n, i);
        bd_shape s = merge_shapes(&init->shape, &o->shape);
        if (s.rank < 0)
            shp_set_unknown(n->outputs[i], init->dtype);
        else
            shp_set(n->outputs[i], init->dtype, &s);
    }
    for (size_t k = 0; k < n_scan_out && rc == 0; k++) {
        const bd_value *o = bd_graph_output(body, n_state + k);
        int axis = 0;
        if (o->shape.rank >= 0 &&
            (rc = shp_axis(n, "scan_output_axes", out_axes ? out_axes[k] : 0, o->shape.rank + 1,
                           &axis, err)))
            break;
        set_scan_output(n->outputs[n_state + k], o, len, axis);
    }
    bd_graph_destroy(body);
    return rc;
}
