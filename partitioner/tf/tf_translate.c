/* TensorFlow node views -> braid IR (shared by the GraphDef and TF.js frontends).
 *
 * Nodes are translated in dependency order by a depth-first walk from the graph outputs
 * (iterative: a 100k-node chain needs no deep C stack), so only what the outputs need is
 * imported and node order in the file does not matter. A TensorFlow tensor "x:i" resolves
 * through the producer's record to an IR value, which is how Identity folding works (the
 * Identity's output record points at its input's value) and why IR value names are free to
 * differ from TensorFlow's. Loops (Merge <- NextIteration) are the only cycles TensorFlow
 * allows; the back edge becomes a NULL input of the Merge (its NodeDef keeps the name). */
#include "partitioner/tf/tf_translate.h"
#include "partitioner/tf/tf_emit.h"
#include "partitioner/tf/tf_ops.h"
#include "partitioner/tf/tf_rnn_lift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rec {
    int        state;          /* 0 not visited, 1 on the walk's stack, 2 translated */
    bd_value **out;            /* n_out values once translated (entries may be NULL) */
    int        n_out;
    int        max_ref;        /* highest output index any consumer reads, -1 none */
    size_t     uses;           /* data and control references */
    bool       mapped_user;    /* read by a node that may be mapped to the IR's ops */
    bool       fallback_user;  /* read by an op that always falls back */
    bool       is_input;       /* marked as a graph input */
    const char *out_name;      /* IR name for output 0 when not the node's own (see run) */
    bool       in_region;      /* between control-flow ops: TensorFlow runs it as written */
    bool       named_output;   /* an output Identity whose input others read too: kept */
} rec;

typedef struct tf_xlate {
    bd_graph          *g;
    const tf_nodeview *nodes;
    size_t             n;
    rec               *recs;
    size_t            *index;      /* open addressing: node index + 1, 0 = empty */
    size_t             index_cap;
    size_t            *pending;    /* NextIteration nodes to translate after the main walk */
    size_t             n_pending, cap_pending;
    tf_rnn_lift       *lifts;      /* Keras GRU/LSTM loops computed by one node (tf_rnn_lift.c) */
    size_t             n_lifts;
    tf_nodeview       *views;      /* NODES with each lifted TensorListStack replaced; or NULL */
    const char       **lift_inputs;
} tf_xlate;

static bool op_is(const tf_nodeview *v, const char *op) { return strcmp(v->op, op) == 0; }

static bool is_placeholder(const tf_nodeview *v)
{
    return op_is(v, "Placeholder") || op_is(v, "PlaceholderWithDefault");
}

static bool is_identity(const tf_nodeview *v)
{
    return op_is(v, "Identity") || op_is(v, "StopGradient") || op_is(v, "IdentityN");
}

static bool is_back_edge(const tf_nodeview *consumer, const tf_nodeview *producer)
{
    return (op_is(consumer, "Merge") || op_is(consumer, "RefMerge")) &&
           (op_is(producer, "NextIteration") || op_is(producer, "RefNextIteration"));
}

/* ---- names ----------------------------------------------------------------------------- */

static size_t hash_str(const char *s, size_t n)
{
    size_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static int index_build(tf_xlate *x, bd_error *err)
{
    size_t cap = 16;
    while (cap < 2 * x->n)
        cap *= 2;
    x->index = calloc(cap, sizeof *x->index);
    if (!x->index)
        return bd_error_set(err, BD_ENOMEM, "out of memory indexing %zu nodes", x->n);
    x->index_cap = cap;
    for (size_t i = 0; i < x->n; i++) {
        const char *name = x->nodes[i].name;
        size_t h = hash_str(name, strlen(name)) & (cap - 1);
        for (; x->index[h]; h = (h + 1) & (cap - 1))
            if (strcmp(x->nodes[x->index[h] - 1].name, name) == 0)
                return bd_error_set(err, BD_EMODEL, "two nodes are named '%s'", name);
        x->index[h] = i + 1;
    }
    return 0;
}

/* The node whose name is the first LEN bytes of NAME, or -1. */
static long find_node(const tf_xlate *x, const char *name, size_t len)
{
    size_t h = hash_str(name, len) & (x->index_cap - 1);
    for (; x->index[h]; h = (h + 1) & (x->index_cap - 1)) {
        const char *s = x->nodes[x->index[h] - 1].name;
        if (strncmp(s, name, len) == 0 && s[len] == '\0')
            return (long)(x->index[h] - 1);
    }
    return -1;
}

/* Parse a tensor reference "node" / "node:3" (a leading '^' is not allowed here) into the
 * producer's index and the output number. WHO names the referrer for messages. */
static int parse_ref(const tf_xlate *x, const char *ref, const char *who, long *node, int *port,
                     bd_error *err)
{
    size_t len = strlen(ref);
    *port = 0;
    const char *colon = strrchr(ref, ':');
    if (colon && colon[1]) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (*end == '\0' && p >= 0 && p < 65536 && colon[1] >= '0' && colon[1] <= '9') {
            *port = (int)p;
            len = (size_t)(colon - ref);
        }
    }
    *node = find_node(x, ref, len);
    if (*node < 0)
        return bd_error_set(err, BD_EMODEL, "%s: input '%s' names no node of the graph", who, ref);
    return 0;
}

/* ---- first pass: who reads what -------------------------------------------------------- */

/* Every output up to the highest one read becomes an IR value, so a short input "x:65535"
 * stands for 65536 values: their total is bounded by a multiple of what the file holds
 * (nodes, input references, declared output shapes). */
enum { OUTPUTS_PER_REF = 64, OUTPUTS_FREE = 65536 };

static const tf_list *output_shapes(const tf_nodeview *v);

static int count_uses(tf_xlate *x, bd_error *err)
{
    for (size_t i = 0; i < x->n; i++)
        x->recs[i].max_ref = -1;
    uint64_t refs = x->n, outputs = 0;
    for (size_t i = 0; i < x->n; i++) {
        const tf_nodeview *v = &x->nodes[i];
        char who[300];
        snprintf(who, sizeof who, "node '%s' (%s)", v->name, v->op);
        bool may_map = tf_op_mapper(v->op, NULL) || is_identity(v) || op_is(v, TF_KERAS_RNN_OP);
        for (size_t k = 0; k < v->n_inputs; k++) {
            long p;
            int port;
            int rc = parse_ref(x, v->inputs[k], who, &p, &port, err);
            if (rc)
                return rc;
            rec *r = &x->recs[p];
            r->uses++;
            if (port > r->max_ref)
                r->max_ref = port;
            if (may_map)
                r->mapped_user = true;
            else
                r->fallback_user = true;
        }
        for (size_t k = 0; k < v->n_ctrl; k++) {
            long p = find_node(x, v->ctrl[k], strlen(v->ctrl[k]));
            if (p >= 0)        /* a dangling control input only orders execution: ignore it */
                x->recs[p].uses++;
        }
        refs += v->n_inputs;
        const tf_list *os = output_shapes(v);
        refs += os ? os->n_shape : 0;
    }
    for (size_t i = 0; i < x->n; i++)
        outputs += (uint64_t)(x->recs[i].max_ref + 1);
    if (outputs > OUTPUTS_FREE && outputs / OUTPUTS_PER_REF > refs)
        return bd_error_set(err, BD_EMODEL, "the graph's inputs name output numbers that add up "
                            "to %llu outputs for %zu nodes and %llu references (at most %d "
                            "outputs per reference)", (unsigned long long)outputs, x->n,
                            (unsigned long long)refs, OUTPUTS_PER_REF);
    return 0;
}

/* ---- control-flow regions ----------------------------------------------------------- */

static bool op_in(const tf_nodeview *v, const char *const *ops)
{
    for (; *ops; ops++)
        if (op_is(v, *ops))
            return true;
    return false;
}

/* Mark the nodes that lie between TensorFlow's v1 control-flow ops: downstream of an
 * Enter/Switch and upstream of a Merge/Exit/NextIteration (data or control edges). They
 * execute inside frames and on dead branches, which only TensorFlow knows how to do, so
 * they all stay TensorFlow nodes exactly as written (Consts and Identities included, their
 * control inputs kept in the NodeDef). Conservative: nodes between two loops count too. */
static int mark_regions(tf_xlate *x, bd_error *err)
{
    static const char *const starts[] = { "Enter", "RefEnter", "Switch", "RefSwitch", NULL };
    static const char *const ends[] = { "Merge", "RefMerge", "Exit", "RefExit", "NextIteration",
                                        "RefNextIteration", NULL };
    bool any = false;
    for (size_t i = 0; i < x->n && !any; i++)
        any = op_in(&x->nodes[i], starts);
    if (!any)
        return 0;
    /* Edges producer -> consumer, as a CSR of consumers per producer. */
    size_t n_edges = 0;
    for (size_t i = 0; i < x->n; i++)
        n_edges += x->nodes[i].n_inputs + x->nodes[i].n_ctrl;
    size_t *start = calloc(x->n + 1, sizeof *start);
    size_t *cons = calloc(n_edges ? n_edges : 1, sizeof *cons);
    long *prod = calloc(n_edges ? n_edges : 1, sizeof *prod);     /* per consumer, in order */
    size_t *pstart = calloc(x->n + 1, sizeof *pstart);
    size_t *queue = calloc(x->n ? x->n : 1, sizeof *queue);
    uint8_t *fwd = calloc(x->n ? x->n : 1, 1), *bwd = calloc(x->n ? x->n : 1, 1);
    int rc = 0;
    if (!start || !cons || !prod || !pstart || !queue || !fwd || !bwd)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    size_t e = 0;
    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        const tf_nodeview *v = &x->nodes[i];
        pstart[i] = e;
        for (size_t k = 0; k < v->n_inputs + v->n_ctrl; k++) {
            long p;
            int port = 0;
            if (k < v->n_inputs)
                rc = parse_ref(x, v->inputs[k], v->name, &p, &port, err);
            else
                p = find_node(x, v->ctrl[k - v->n_inputs], strlen(v->ctrl[k - v->n_inputs]));
            if (rc)
                break;
            if (p >= 0) {
                prod[e++] = p;
                start[p + 1]++;
            }
        }
    }
    pstart[x->n] = e;
    if (rc == 0) {
        for (size_t i = 0; i < x->n; i++)
            start[i + 1] += start[i];
        size_t *fill = calloc(x->n ? x->n : 1, sizeof *fill);
        if (!fill)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        for (size_t i = 0; rc == 0 && i < x->n; i++)
            for (size_t k = pstart[i]; k < pstart[i + 1]; k++)
                cons[start[prod[k]] + fill[prod[k]]++] = i;
        free(fill);
    }
    if (rc == 0) {
        size_t head = 0, tail = 0;
        for (size_t i = 0; i < x->n; i++)
            if (op_in(&x->nodes[i], starts)) {
                fwd[i] = 1;
                queue[tail++] = i;
            }
        while (head < tail) {
            size_t i = queue[head++];
            for (size_t k = start[i]; k < start[i + 1]; k++)
                if (!fwd[cons[k]]) {
                    fwd[cons[k]] = 1;
                    queue[tail++] = cons[k];
                }
        }
        head = tail = 0;
        for (size_t i = 0; i < x->n; i++)
            if (op_in(&x->nodes[i], ends)) {
                bwd[i] = 1;
                queue[tail++] = i;
            }
        while (head < tail) {
            size_t i = queue[head++];
            for (size_t k = pstart[i]; k < pstart[i + 1]; k++)
                if (!bwd[prod[k]]) {
                    bwd[prod[k]] = 1;
                    queue[tail++] = (size_t)prod[k];
                }
        }
        for (size_t i = 0; i < x->n; i++)
            x->recs[i].in_region = fwd[i] && bwd[i] && !is_placeholder(&x->nodes[i]);
    }
    free(start);
    free(cons);
    free(prod);
    free(pstart);
    free(queue);
    free(fwd);
    free(bwd);
    return rc;
}

/* ---- translating one node --------------------------------------------------------------- */

/* The output shapes TensorFlow recorded (`_output_shapes`), if any. */
static const tf_list *output_shapes(const tf_nodeview *v)
{
    const tf_attr *a = tf_view_attr(v, "_output_shapes");
    return a && a->kind == TF_ATTR_LIST ? &a->list : NULL;
}

static void apply_shape(bd_value *val, const tf_list *shapes, int i)
{
    if (val && shapes && (size_t)i < shapes->n_shape && shapes->shape[i].rank >= 0 &&
        val->shape.rank < 0)
        val->shape = shapes->shape[i];
}

/* A value for output I of node V: "<name>" for 0, "<name>:<i>" otherwise. */
/* Output I of V, shaped from V's _output_shapes list OS (looked up once per node by the
 * caller: a node may declare thousands of outputs and thousands of attributes). */
static bd_value *output_value(tf_xlate *x, const tf_nodeview *v, int i, const tf_list *os,
                              bd_error *err)
{
    char buf[512];
    const rec *r = &x->recs[v - x->nodes];
    const char *name = r->out_name ? r->out_name : v->name;
    if (i) {
        snprintf(buf, sizeof buf, "%s:%d", v->name, i);
        name = buf;
    }
    bd_value *val = NULL;
    if (bd_graph_add_value(x->g, name, BD_DT_UNDEFINED, NULL, &val, err))
        return NULL;
    apply_shape(val, os, i);
    return val;
}

static int set_outputs(tf_xlate *x, rec *r, int n, bd_error *err)
{
    r->n_out = n;
    r->out = n ? bd_graph_alloc(x->g, (size_t)n * sizeof *r->out) : NULL;
    if (n && !r->out)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    return 0;
}

/* The IR value TensorFlow tensor REF of node V reads. */
static int resolve(tf_xlate *x, const tf_nodeview *v, const char *ref, bd_value **out,
                   bd_error *err)
{
    long p;
    int port;
    char who[300];
    snprintf(who, sizeof who, "node '%s' (%s)", v->name, v->op);
    int rc = parse_ref(x, ref, who, &p, &port, err);
    if (rc)
        return rc;
    const rec *r = &x->recs[p];
    if (port >= r->n_out || !r->out[port])
        return bd_error_set(err, BD_EMODEL, "%s: input '%s': node '%s' (%s) has no output %d",
                            who, ref, x->nodes[p].name, x->nodes[p].op, port);
    *out = r->out[port];
    return 0;
}

static int translate_const(tf_xlate *x, const tf_nodeview *v, rec *r, bool *fallback,
                           bd_error *err)
{
    const tf_attr *a = tf_view_attr(v, "value");
    if (!a || a->kind != TF_ATTR_TENSOR)
        return bd_error_set(err, BD_EMODEL, "node '%s' (Const) has no tensor 'value'", v->name);
    const tf_tensor *t = &a->tensor;
    if (t->dtype == BD_DT_UNDEFINED || t->dtype == BD_DT_STRING) {
        *fallback = true;          /* strings, resources...: a Const node TensorFlow runs */
        return 0;
    }
    int dtype = t->dtype;
    const void *data = t->data;
    size_t nbytes = t->nbytes;
    bool to_f32 = (dtype == BD_DT_FLOAT16 || dtype == BD_DT_BFLOAT16) &&
                  (r->mapped_user || !r->fallback_user);
    if (to_f32) {
        /* oneDNN runs float32: convert once here (a copy is needed anyway). */
        size_t n = nbytes / 2;
        float *f = bd_graph_alloc(x->g, n ? n * sizeof *f : 1);
        if (!f)
            return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", v->name);
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, (const uint8_t *)data + 2 * i, 2);
            f[i] = dtype == BD_DT_FLOAT16 ? tf_half_to_float(h) : tf_bfloat16_to_float(h);
        }
        dtype = BD_DT_FLOAT;
        data = f;
        nbytes = n * sizeof *f;
    }
    if (!data) {              /* an empty tensor still needs non-NULL data to be a constant */
        data = bd_graph_alloc(x->g, 1);
        if (!data)
            return bd_error_set(err, BD_ENOMEM, "node '%s': out of memory", v->name);
    }
    int rc = set_outputs(x, r, 1, err);
    if (rc)
        return rc;
    bd_value *val = NULL;
    if ((rc = bd_graph_add_value(x->g, v->name, dtype, &t->shape, &val, err)))
        return rc;
    val->data = data;
    val->nbytes = nbytes;
    r->out[0] = val;
    return 0;
}

static int translate_placeholder(tf_xlate *x, const tf_nodeview *v, rec *r, bd_error *err)
{
    const tf_attr *dt = tf_view_attr(v, "dtype");
    int dtype = dt && dt->kind == TF_ATTR_TYPE ? tf_dtype_to_bd(dt->type) : BD_DT_UNDEFINED;
    if (dtype == BD_DT_UNDEFINED) {
        const char *tn = dt && dt->kind == TF_ATTR_TYPE ? tf_dtype_name(dt->type) : NULL;
        return bd_error_set(err, BD_EUNSUPPORTED, "input '%s': type %s is not supported", v->name,
                            tn ? tn : "(missing dtype attr)");
    }
    bd_shape shape = { .rank = -1 };
    const tf_attr *sh = tf_view_attr(v, "shape");
    const tf_list *os = output_shapes(v);
    if (sh && sh->kind == TF_ATTR_SHAPE && sh->shape.rank >= 0)
        shape = sh->shape;
    else if (os && os->n_shape && os->shape[0].rank >= 0)
        shape = os->shape[0];
    int rc = set_outputs(x, r, 1, err);
    if (rc == 0)
        rc = bd_graph_add_value(x->g, v->name, dtype, &shape, &r->out[0], err);
    return rc;
}

/* dtype of output I of a node TensorFlow runs, guessed from its type attrs (the IR only
 * uses it for reports and boundaries; the TensorFlow engine knows the truth at run time). */
static int fallback_dtype(const tf_nodeview *v, int i)
{
    /* Outputs whose type no attr names: indices and counts. */
    if (strncmp(v->op, "NonMaxSuppression", 17) == 0)
        return i == 1 && op_is(v, "NonMaxSuppressionV5") ? tf_dtype_to_bd(TF_DT_FLOAT) : BD_DT_INT32;
    if ((op_is(v, "TopKV2") || op_is(v, "TopK")) && i == 1)
        return BD_DT_INT32;
    if (op_is(v, "Where"))
        return BD_DT_INT64;
    if (op_is(v, "TensorArraySizeV3") || op_is(v, "TensorListLength"))
        return BD_DT_INT32;
    /* The ops that read elements out of a TensorList (the others yield the list itself) */
    if (i == 0 && (op_is(v, "TensorListStack") || op_is(v, "TensorListGetItem") ||
                   op_is(v, "TensorListGather") || op_is(v, "TensorListConcatV2"))) {
        const tf_attr *a = tf_view_attr(v, "element_dtype");
        return a && a->kind == TF_ATTR_TYPE ? tf_dtype_to_bd(a->type) : BD_DT_UNDEFINED;
    }
    static const char *lists[] = { "Tout", "output_types", "out_types", "dtypes" };
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++) {
        const tf_attr *a = tf_view_attr(v, lists[k]);
        if (a && a->kind == TF_ATTR_LIST && (size_t)i < a->list.n_type)
            return tf_dtype_to_bd(a->list.type[i]);
    }
    static const char *singles[] = { "DstT", "out_type", "output_type", "dtype", "T", "Tout", "Tparams" };
    for (size_t k = 0; k < sizeof singles / sizeof *singles; k++) {
        const tf_attr *a = tf_view_attr(v, singles[k]);
        if (a && a->kind == TF_ATTR_TYPE)
            return tf_dtype_to_bd(a->type);
    }
    return BD_DT_UNDEFINED;
}

typedef struct attr_ref {
    const char *key;
    size_t      index;
} attr_ref;

static int cmp_attr_ref(const void *pa, const void *pb)
{
    const attr_ref *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Copy V's simple attrs onto N (for reports and shape rules; the origin stays the truth). */
static int copy_attrs(tf_xlate *x, const tf_nodeview *v, bd_node *n, bd_error *err)
{
    /* A repeated map key: the last one wins. Found through a sorted copy so a node with
     * many attrs costs n log n, not n^2. */
    bool *keep = v->n_attrs ? calloc(v->n_attrs, sizeof *keep) : NULL;
    attr_ref *refs = v->n_attrs ? malloc(v->n_attrs * sizeof *refs) : NULL;
    if (v->n_attrs && (!keep || !refs)) {
        free(keep);
        free(refs);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    size_t nr = 0;
    for (size_t k = 0; k < v->n_attrs; k++)
        if (v->attrs[k].key && v->attrs[k].key[0] != '_')
            refs[nr++] = (attr_ref){ v->attrs[k].key, k };
    if (nr)
        qsort(refs, nr, sizeof *refs, cmp_attr_ref);
    for (size_t k = 0; k < nr; k++)
        keep[refs[k].index] = k + 1 == nr || strcmp(refs[k].key, refs[k + 1].key) != 0;
    free(refs);
    int rc = 0;
    for (size_t k = 0; k < v->n_attrs && rc == 0; k++) {
        const tf_attr *a = &v->attrs[k];
        if (!keep[k])
            continue;
        bd_attr b = { .name = a->key };
        switch (a->kind) {
        case TF_ATTR_I:    b.type = BD_ATTR_INT; b.i = a->i; break;
        case TF_ATTR_B:    b.type = BD_ATTR_INT; b.i = a->b; break;
        case TF_ATTR_TYPE: b.type = BD_ATTR_INT; b.i = a->type; break;
        case TF_ATTR_F:    b.type = BD_ATTR_FLOAT; b.f = a->f; break;
        case TF_ATTR_S:
            b.type = BD_ATTR_STRING;
            b.s = bd_graph_strdup(x->g, (const char *)a->s.p, a->s.n);
            b.s_len = a->s.n;
            if (!b.s)
                rc = bd_error_set(err, BD_ENOMEM, "out of memory");
            break;
        case TF_ATTR_LIST:
            if (a->list.n_i) {
                b.type = BD_ATTR_INTS; b.ints = a->list.i; b.n = a->list.n_i;
            } else if (a->list.n_f) {
                b.type = BD_ATTR_FLOATS; b.floats = a->list.f; b.n = a->list.n_f;
            } else if (a->list.n_s) {
                const char **ss = bd_graph_alloc(x->g, a->list.n_s * sizeof *ss);
                for (size_t j = 0; ss && j < a->list.n_s; j++)
                    if (!(ss[j] = bd_graph_strdup(x->g, (const char *)a->list.s[j].p, a->list.s[j].n)))
                        ss = NULL;
                if (!ss) {
                    rc = bd_error_set(err, BD_ENOMEM, "out of memory");
                    break;
                }
                b.type = BD_ATTR_STRINGS; b.strings = ss; b.n = a->list.n_s;
            } else {
                continue;
            }
            break;
        default:
            continue;
        }
        if (rc == 0)
            rc = bd_node_add_attr(x->g, n, &b, err);
    }
    free(keep);
    return rc;
}

/* PRE[N_PRE] (may be NULL/0): output values a declining mapper already made. */
static int translate_fallback(tf_xlate *x, const tf_nodeview *v, rec *r, bd_value *const *pre,
                              size_t n_pre, bd_error *err)
{
    const void *origin = v->origin;
    size_t origin_len = v->origin_len;
    /* TF.js nodes have no NodeDef bytes: encode one from the view, only for nodes that need it. */
    int rc = origin ? 0 : tf_encode_view(x->g, v, &origin, &origin_len, err);
    if (rc)
        return rc;
    const tf_list *os = output_shapes(v);
    int n_out = r->max_ref + 1;
    if (os && (int)os->n_shape > n_out)
        n_out = (int)os->n_shape;
    if (n_out < 1)
        n_out = 1;
    rc = set_outputs(x, r, n_out, err);
    bd_value **in = v->n_inputs ? calloc(v->n_inputs, sizeof *in) : NULL;
    if (rc == 0 && v->n_inputs && !in)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t k = 0; rc == 0 && k < v->n_inputs; k++) {
        long p;
        int port;
        if ((rc = parse_ref(x, v->inputs[k], v->name, &p, &port, err)))
            break;
        if (is_back_edge(v, &x->nodes[p]))
            continue;                                 /* stays NULL: see the file comment */
        rc = resolve(x, v, v->inputs[k], &in[k], err);
    }
    for (int i = 0; rc == 0 && i < n_out; i++) {
        r->out[i] = (size_t)i < n_pre && pre[i] ? pre[i] : output_value(x, v, i, os, err);
        if (!r->out[i])
            rc = err ? err->code : BD_ENOMEM;
        else if (r->out[i]->dtype == BD_DT_UNDEFINED)
            r->out[i]->dtype = fallback_dtype(v, i);
    }
    const tf_attr *value = op_is(v, "Const") ? tf_view_attr(v, "value") : NULL;
    if (rc == 0 && value && value->kind == TF_ATTR_TENSOR && r->out[0]->shape.rank < 0) {
        r->out[0]->shape = value->tensor.shape;      /* a Const TensorFlow holds (strings) */
    }
    bd_node *n = NULL;
    if (rc == 0)
        rc = bd_graph_add_node(x->g, v->name, v->op, "tf", in, v->n_inputs, r->out, (size_t)n_out,
                               &n, err);
    free(in);
    if (rc == 0) {
        n->origin = origin;
        n->origin_len = origin_len;
        rc = copy_attrs(x, v, n, err);
    }
    return rc;
}

/* V is made by a node TensorFlow runs and its shape is not fully known (no rule infers it). */
static bool tf_only_shape(const bd_value *v)
{
    if (!v->producer || strcmp(v->producer->domain, "tf") != 0)
        return false;
    if (v->shape.rank < 0)
        return true;
    for (int d = 0; d < v->shape.rank; d++)
        if (v->shape.dims[d] < 0)
            return true;
    return false;
}

/* Whether a mapper may see type attribute T (absent: the op's inputs decide): DT_FLOAT always,
 * integers and bool only for ops whose entry says TF_MAP_ANY_T. */
static bool type_ok(const tf_nodeview *v, unsigned flags)
{
    const tf_attr *t = tf_view_attr(v, "T");
    if (!t)
        return true;
    if (t->kind != TF_ATTR_TYPE)
        return false;
    if (t->type == TF_DT_FLOAT)
        return true;
    return (flags & TF_MAP_ANY_T) && (t->type == TF_DT_INT32 || t->type == TF_DT_INT64 ||
                                      t->type == TF_DT_BOOL || t->type == TF_DT_UINT8);
}

/* Try the op's mapper; falls back to TensorFlow when it declines. */
/* A mapped op that became exactly one IR node reading the NodeDef's own data inputs, in
 * order, keeps its NodeDef as origin: the TensorFlow engine can then run it when oneDNN and
 * the native engine decline it, or when the user forces it there (fallback_ops). Any other
 * translation (several nodes, converted weights, reordered inputs) keeps none, since the
 * NodeDef would not compute the IR node from the IR node's inputs. */
static void keep_origin(tf_xlate *x, const tf_nodeview *v, bd_value *const *in, size_t before,
                        const bd_value *out)
{
    if (!v->origin || bd_graph_num_nodes(x->g) != before + 1)
        return;
    bd_node *n = bd_graph_node(x->g, before);
    if (n->origin || n->n_outputs != 1 || n->outputs[0] != out || n->n_inputs != v->n_inputs)
        return;
    for (size_t k = 0; k < n->n_inputs; k++)
        if (!in[k] || n->inputs[k] != in[k])
            return;
    n->origin = v->origin;
    n->origin_len = v->origin_len;
}

static int translate_mapped(tf_xlate *x, const tf_nodeview *v, rec *r, tf_mapper mapper,
                            unsigned flags, bd_error *err)
{
    const tf_list *os = output_shapes(v);
    bd_value *out = output_value(x, v, 0, os, err);
    if (!out)
        return err ? err->code : BD_ENOMEM;
    /* Only the outputs a multi-output mapper fills exist in the IR; a node whose other
     * outputs are read (FusedBatchNormV3's batch statistics, say) and non-float math of ops
     * not marked for it stay in TensorFlow. */
    bool multi = flags & TF_MAP_MULTI_OUT;
    bool ok = (multi || r->max_ref <= 0) && type_ok(v, flags);
    size_t n_outs = multi && r->max_ref > 0 ? (size_t)r->max_ref + 1 : 1;
    bd_value **outs = ok ? calloc(n_outs, sizeof *outs) : NULL;
    bd_value **in = v->n_inputs ? calloc(v->n_inputs, sizeof *in) : NULL;
    int rc = (v->n_inputs && !in) || (ok && !outs) ? bd_error_set(err, BD_ENOMEM, "out of memory") : 0;
    if (rc == 0 && ok) {
        outs[0] = out;
        for (size_t k = 1; rc == 0 && k < n_outs; k++)
            if (!(outs[k] = output_value(x, v, (int)k, os, err)))
                rc = err ? err->code : BD_ENOMEM;
    }
    for (size_t k = 0; rc == 0 && k < v->n_inputs; k++)
        rc = resolve(x, v, v->inputs[k], &in[k], err);
    /* A value TensorFlow computes whose shape is not recorded whole stays unknown to braid's
     * shape inference, so nothing oneDNN or the native engine runs can read it: the op reading
     * it stays TensorFlow's too (then TensorFlow runs what follows a Where or a loop whole). */
    for (size_t k = 0; rc == 0 && ok && k < v->n_inputs; k++)
        if (in[k] && tf_only_shape(in[k]))
            ok = false;
    if (rc == 0 && ok) {
        tf_mapctx m = { .g = x->g, .v = v, .in = in, .n_in = v->n_inputs, .out = out,
                        .outs = outs, .n_outs = n_outs };
        size_t before = bd_graph_num_nodes(x->g);
        rc = mapper(&m, err);
        if (rc == 0) {
            if ((rc = set_outputs(x, r, (int)n_outs, err)) == 0)
                memcpy(r->out, outs, n_outs * sizeof *outs);
            if (n_outs == 1)
                keep_origin(x, v, in, before, out);
        } else if (rc == 1) {
            ok = false;
            rc = 0;
        }
    }
    free(in);
    if (rc == 0 && !ok)
        rc = outs ? translate_fallback(x, v, r, outs, n_outs, err)
                  : translate_fallback(x, v, r, &out, 1, err);
    free(outs);
    return rc;
}

/* A lifted Keras GRU or LSTM loop (V is the TensorListStack's view, its inputs the lift's
 * refs). */
static int translate_lift(tf_xlate *x, const tf_nodeview *v, rec *r, const tf_rnn_lift *lift,
                          bd_error *err)
{
    bd_value *out = output_value(x, v, 0, NULL, err);
    bd_value *in[6] = { 0 };
    if (!out)
        return err ? err->code : BD_ENOMEM;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < v->n_inputs && k < 6; k++)
        rc = resolve(x, v, v->inputs[k], &in[k], err);
    if (rc)
        return rc;
    tf_mapctx m = { .g = x->g, .v = v, .in = in, .n_in = v->n_inputs, .out = out, .outs = &out,
                    .n_outs = 1 };
    if ((rc = tf_emit_keras_rnn(&m, lift, err)) || (rc = set_outputs(x, r, 1, err)))
        return rc;
    r->out[0] = out;
    return 0;
}

static int translate(tf_xlate *x, size_t i, bd_error *err)
{
    const tf_nodeview *v = &x->nodes[i];
    rec *r = &x->recs[i];
    if (r->in_region && !is_placeholder(v) && !op_is(v, "NoOp"))
        return translate_fallback(x, v, r, NULL, 0, err);
    if (op_is(v, "Const")) {
        bool fallback = false;
        int rc = translate_const(x, v, r, &fallback, err);
        return rc || !fallback ? rc : translate_fallback(x, v, r, NULL, 0, err);
    }
    if (is_placeholder(v))
        return translate_placeholder(x, v, r, err);
    if (op_is(v, "NoOp"))
        return 0;
    if (is_identity(v) && r->named_output && v->n_inputs == 1) {
        /* The output keeps TensorFlow's name ("Identity_1") although its input feeds other
         * nodes: an Identity node makes that value, TensorFlow's when the input is a value
         * only TensorFlow knows the shape of. */
        bd_value *in = NULL;
        int rc = resolve(x, v, v->inputs[0], &in, err);
        if (rc)
            return rc;
        if (tf_only_shape(in))
            return translate_fallback(x, v, r, NULL, 0, err);
        bd_value *out = output_value(x, v, 0, output_shapes(v), err);
        bd_node *n = NULL;
        if (!out)
            return err ? err->code : BD_ENOMEM;
        if ((rc = bd_graph_add_node(x->g, v->name, "Identity", "", &in, 1, &out, 1, &n, err)) ||
            (rc = set_outputs(x, r, 1, err)))
            return rc;
        r->out[0] = out;
        return 0;
    }
    if (is_identity(v)) {
        if (v->n_inputs == 0)
            return bd_error_set(err, BD_EMODEL, "node '%s' (%s) has no input", v->name, v->op);
        int rc = set_outputs(x, r, (int)v->n_inputs, err);
        for (size_t k = 0; rc == 0 && k < v->n_inputs; k++)
            rc = resolve(x, v, v->inputs[k], &r->out[k], err);
        if (rc == 0)
            apply_shape(r->out[0], output_shapes(v), 0);
        return rc;
    }
    for (size_t k = 0; k < x->n_lifts; k++)
        if (x->lifts[k].stack == i && x->views)
            return translate_lift(x, v, r, &x->lifts[k], err);
    unsigned flags = 0;
    tf_mapper mapper = tf_op_mapper(v->op, &flags);
    if (mapper)
        return translate_mapped(x, v, r, mapper, flags, err);
    return translate_fallback(x, v, r, NULL, 0, err);
}

/* ---- the walk ---------------------------------------------------------------------------- */

typedef struct frame {
    size_t node;
    size_t next;      /* next input to visit */
} frame;

static int push_pending(tf_xlate *x, size_t node, bd_error *err)
{
    if (x->n_pending == x->cap_pending) {
        size_t cap = x->cap_pending ? 2 * x->cap_pending : 16;
        size_t *p = realloc(x->pending, cap * sizeof *p);
        if (!p)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        x->pending = p;
        x->cap_pending = cap;
    }
    x->pending[x->n_pending++] = node;
    return 0;
}

/* Translate ROOT and everything it depends on. STACK holds x->n frames. */
static int walk(tf_xlate *x, size_t root, frame *stack, bd_error *err)
{
    if (x->recs[root].state == 2)
        return 0;
    size_t depth = 0;
    stack[depth++] = (frame){ root, 0 };
    x->recs[root].state = 1;
    while (depth) {
        frame *f = &stack[depth - 1];
        const tf_nodeview *v = &x->nodes[f->node];
        size_t n_in = is_placeholder(v) ? 0 : v->n_inputs;   /* a default is never computed */
        if (f->next < n_in) {
            long p;
            int port;
            int rc = parse_ref(x, v->inputs[f->next++], v->name, &p, &port, err);
            if (rc)
                return rc;
            if (is_back_edge(v, &x->nodes[p])) {
                if (x->recs[p].state == 0 && (rc = push_pending(x, (size_t)p, err)))
                    return rc;
                continue;
            }
            if (x->recs[p].state == 1)
                return bd_error_set(err, BD_EMODEL,
                                    "the graph has a cycle through node '%s' (%s) (only "
                                    "Merge <- NextIteration loops are allowed)",
                                    x->nodes[p].name, x->nodes[p].op);
            if (x->recs[p].state == 0) {
                x->recs[p].state = 1;
                stack[depth++] = (frame){ (size_t)p, 0 };
            }
            continue;
        }
        int rc = translate(x, f->node, err);
        if (rc)
            return rc;
        x->recs[f->node].state = 2;
        depth--;
    }
    return 0;
}

/* ---- signature --------------------------------------------------------------------------- */

static int mark_output_once(tf_xlate *x, bd_value *v, bd_error *err)
{
    for (size_t i = 0; i < bd_graph_num_outputs(x->g); i++)
        if (bd_graph_output(x->g, i) == v)
            return 0;
    return bd_graph_mark_output(x->g, v, err);
}

static int mark_input(tf_xlate *x, size_t i, bd_error *err)
{
    rec *r = &x->recs[i];
    if (r->is_input || r->state != 2 || !r->out || !r->out[0])
        return 0;
    r->is_input = true;
    return bd_graph_mark_input(x->g, r->out[0], err);
}

static long lookup_ref(void *ctx, const char *ref, int *port)
{
    long p = -1;
    *port = 0;
    return parse_ref(ctx, ref, "", &p, port, NULL) == 0 ? p : -1;
}

/* Find the Keras GRU and LSTM loops one ONNX GRU or LSTM computes and give each one's
 * TensorListStack a view that reads the cell's inputs instead of the loop (which nothing then
 * imports). */
static int lift_rnns(tf_xlate *x, bd_error *err)
{
    int rc = tf_find_keras_rnns(x->nodes, x->n, lookup_ref, x, &x->lifts, &x->n_lifts, err);
    if (rc || !x->n_lifts)
        return rc;
    x->views = malloc(x->n * sizeof *x->views);
    x->lift_inputs = malloc(6 * x->n_lifts * sizeof *x->lift_inputs);
    if (!x->views || !x->lift_inputs)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    memcpy(x->views, x->nodes, x->n * sizeof *x->views);
    for (size_t k = 0; k < x->n_lifts; k++) {
        const tf_rnn_lift *l = &x->lifts[k];
        const char **in = x->lift_inputs + 6 * k;
        in[0] = l->x;
        in[1] = l->kernel;
        in[2] = l->recurrent;
        in[3] = l->bias;
        in[4] = l->h0;
        in[5] = l->c0;
        tf_nodeview *v = &x->views[l->stack];
        *v = (tf_nodeview){ .name = v->name, .op = TF_KERAS_RNN_OP, .inputs = in,
                            .n_inputs = l->lstm ? 6 : 5 };
    }
    x->nodes = x->views;
    return 0;
}

static int run(tf_xlate *x, const tf_signature *sig, bd_error *err)
{
    int rc = index_build(x, err);
    if (rc == 0)
        rc = lift_rnns(x, err);
    if (rc == 0)
        rc = count_uses(x, err);
    if (rc == 0)
        rc = mark_regions(x, err);
    frame *stack = rc == 0 ? malloc(x->n * sizeof *stack) : NULL;
    if (rc == 0 && !stack)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");

    /* Inputs the signature names come first, even if no output needs them. */
    for (size_t k = 0; rc == 0 && sig && k < sig->n_inputs; k++) {
        long p;
        int port;
        rc = parse_ref(x, sig->inputs[k], "the signature", &p, &port, err);
        if (rc == 0 && !is_placeholder(&x->nodes[p]))
            rc = bd_error_set(err, BD_EMODEL, "the signature's input '%s' is a %s node, not a "
                              "Placeholder", sig->inputs[k], x->nodes[p].op);
        if (rc == 0)
            rc = walk(x, (size_t)p, stack, err);
    }

    /* Outputs: the signature's, else every node nobody reads. */
    size_t n_roots = 0;
    long *roots = rc == 0 ? malloc((x->n + (sig ? sig->n_outputs : 0) + 1) * sizeof *roots) : NULL;
    int *ports = rc == 0 ? malloc((x->n + (sig ? sig->n_outputs : 0) + 1) * sizeof *ports) : NULL;
    if (rc == 0 && (!roots || !ports))
        rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    if (rc == 0 && sig && sig->n_outputs) {
        for (size_t k = 0; rc == 0 && k < sig->n_outputs; k++) {
            rc = parse_ref(x, sig->outputs[k], "the signature", &roots[n_roots], &ports[n_roots], err);
            n_roots++;
        }
    } else if (rc == 0) {
        for (size_t i = 0; i < x->n; i++) {
            const tf_nodeview *v = &x->nodes[i];
            if (x->recs[i].uses == 0 && !op_is(v, "NoOp") && !op_is(v, "Const") &&
                !is_placeholder(v)) {
                roots[n_roots] = (long)i;
                ports[n_roots++] = 0;
            }
        }
        if (n_roots == 0)
            rc = bd_error_set(err, BD_EMODEL, "the graph has no output (every node's result is "
                              "read by another node)");
    }
    /* An output that is an Identity of a node read by nothing else (TensorFlow's usual
     * "Identity" / "Identity_1" outputs) keeps the Identity's name for the IR value. */
    for (size_t k = 0; rc == 0 && k < n_roots; k++) {
        const tf_nodeview *v = &x->nodes[roots[k]];
        long p;
        int port;
        if (ports[k] != 0 || !op_is(v, "Identity") || v->n_inputs != 1 ||
            parse_ref(x, v->inputs[0], v->name, &p, &port, err))
            continue;
        const tf_nodeview *src = &x->nodes[p];
        if (port == 0 && x->recs[p].uses == 1 && !op_is(src, "Const") && !is_placeholder(src) &&
            !is_identity(src) && x->recs[p].state == 0)
            x->recs[p].out_name = v->name;
        else if (port == 0 && x->recs[p].uses > 1 && x->recs[roots[k]].uses == 0 &&
                 x->recs[roots[k]].state == 0 &&
                 !x->recs[roots[k]].in_region && !op_is(src, "Const") && !is_placeholder(src))
            x->recs[roots[k]].named_output = true;
    }
    for (size_t k = 0; rc == 0 && k < n_roots; k++)
        rc = walk(x, (size_t)roots[k], stack, err);
    /* Loop bodies reached only through back edges. */
    for (size_t k = 0; rc == 0 && k < x->n_pending; k++)
        rc = walk(x, x->pending[k], stack, err);

    for (size_t k = 0; rc == 0 && sig && k < sig->n_inputs; k++) {
        long p;
        int port;
        if ((rc = parse_ref(x, sig->inputs[k], "the signature", &p, &port, err)) == 0)
            rc = mark_input(x, (size_t)p, err);
    }
    for (size_t i = 0; rc == 0 && i < x->n; i++)
        if (is_placeholder(&x->nodes[i]))
            rc = mark_input(x, i, err);
    for (size_t k = 0; rc == 0 && k < n_roots; k++) {
        const rec *r = &x->recs[roots[k]];
        const tf_nodeview *v = &x->nodes[roots[k]];
        if (ports[k] >= r->n_out || !r->out[ports[k]])
            rc = bd_error_set(err, BD_EMODEL, "output '%s:%d': node '%s' (%s) has no output %d",
                              v->name, ports[k], v->name, v->op, ports[k]);
        else
            rc = mark_output_once(x, r->out[ports[k]], err);
    }
    free(roots);
    free(ports);
    free(stack);
    return rc;
}

int tf_translate(bd_graph *g, const tf_nodeview *nodes, size_t n, const tf_signature *sig,
                 bd_error *err)
{
    tf_xlate x = { .g = g, .nodes = nodes, .n = n };
    bd_graph_set_framework(g, "tensorflow");
    /* The graph's opset is the GraphDef's producer version; the engines read the ONNX forms
     * the mappers emit (Slice/Split/Squeeze operands as inputs, opset >= 13) off it, so a file
     * that states none (TF.js models often) or an ancient one gets a TF 2.x producer. */
    if (bd_graph_opset(g) < TF_DEFAULT_PRODUCER_MIN)
        bd_graph_set_opset(g, TF_DEFAULT_PRODUCER);
    if (n == 0)
        return bd_error_set(err, BD_EMODEL, "the graph has no nodes");
    x.recs = calloc(n, sizeof *x.recs);
    int rc = x.recs ? run(&x, sig, err) : bd_error_set(err, BD_ENOMEM, "out of memory");
    free(x.recs);
    free(x.index);
    free(x.pending);
    free(x.lifts);
    free(x.views);
    free(x.lift_inputs);
    if (rc == 0)
        rc = bd_graph_validate(g, err);
    return rc;
}
