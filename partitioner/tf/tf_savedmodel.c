/* The SavedModel frontend (tf_import.h): saved_model.pb's MetaGraphDef tagged "serve" and one
 * of its SignatureDefs, flattened into one frozen graph of node views for tf_translate.
 *
 * A TF2 SavedModel (tf.saved_model.save) keeps its computation in functions: the
 * signature's output is a StatefulPartitionedCall into graph_def.library, whose body calls
 * further functions, and variables are VarHandleOps of the main graph passed in as
 * arguments and read by ReadVariableOp inside. So, in this order:
 *   1. inline: every call node (StatefulPartitionedCall, PartitionedCall, or an op named
 *      after a library function) becomes its body's nodes, renamed "<call>/<node>", plus an
 *      IdentityN named after the call whose inputs are the body's results, so that readers of
 *      "<call>:i" need no rewriting. A FunctionDef names tensors "node:out_arg:index"; the
 *      GraphDef name is "node:k", k counting the tensors of the op's output args before
 *      out_arg (an arg is N tensors for a number_attr, one per type of a type_list_attr,
 *      else one), the op's args coming from the MetaGraphDef's stripped_op_list (or the
 *      called function's signature);
 *   2. prune to what the signature's outputs need (data inputs; control inputs dropped);
 *   3. freeze: every variable still read (ReadVariableOp or ResourceGather of a VarHandleOp,
 *      or a TF1 VariableV2) is read once through the caller's reader (the TensorFlow engine,
 *      which loads the SavedModel with TensorFlow) and becomes a Const (ResourceGather a
 *      GatherV2 of it);
 *   4. tf_translate with the signature's tensors, then the graph's inputs and outputs are
 *      renamed to the signature's keys (what a client sends and receives).
 * Inlined nodes get new NodeDef bytes (name, op, rewritten inputs, the original attr bytes
 * verbatim, no device) for the TensorFlow fallback engine. */
#include "partitioner/tf/tf_import.h"
#include "partitioner/tf/tf_translate.h"
#include "core/model_file.h"
#include "proto/tf_saved_model.pb.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SM_MAX_CALL_DEPTH 64          /* functions calling functions (recursion ends here) */
#define SM_NAME_MAX       4096        /* a generated node name */
/* What inlining may add to the graph's memory: names, references and NodeDef bytes of the
 * inlined nodes (a small file whose functions call each other many times over must not
 * expand without bound; real models add well under 1 MiB per thousand nodes). */
#define SM_MAX_INLINED_BYTES ((size_t)64 << 20)

typedef struct sm_arg {
    const char *name, *number_attr, *type_list_attr;
} sm_arg;

typedef struct sm_opdef {
    const char *name;
    sm_arg     *in, *out;
    size_t      n_in, n_out;
} sm_opdef;

typedef struct sm_func {
    sm_opdef    sig;
    tf_bytes   *nodes;    size_t n_nodes;      /* NodeDef spans */
    const char **ret_key, **ret_val;
    size_t      n_ret;
} sm_func;

typedef struct named named;

typedef struct sm_io {                         /* one signature entry */
    const char *key, *tensor;
    int         dtype;                         /* TensorFlow DataType */
} sm_io;

typedef struct sm_ctx {
    bd_graph      *g;
    const uint8_t *base;
    size_t         len;
    sm_opdef      *ops;   size_t n_ops;        /* stripped_op_list, sorted by name */
    sm_func       *fns;   size_t n_fns;        /* the library, sorted by name */
    tf_nodeview   *v;     size_t n, cap;       /* the flat graph */
    int           *depth;                      /* call depth of each view */
    sm_io         *in, *out;
    size_t         n_in, n_out;
    named         *restored;   /* VarHandleOp name -> the restored variable copying it */
    const char   **restored_by;
    size_t         n_restored;
    const char    *sig_name;
    size_t         inlined_bytes;              /* charged against SM_MAX_INLINED_BYTES */
} sm_ctx;

/* ---- small helpers -------------------------------------------------------------------- */

static const char *pool_str(sm_ctx *c, const char *s)
{
    return bd_graph_strdup(c->g, s ? s : "", (size_t)-1);
}

static int oom(bd_error *err)
{
    return bd_error_set(err, BD_ENOMEM, "SavedModel: out of memory");
}

/* Charge N bytes inlining adds; BD_EMODEL past SM_MAX_INLINED_BYTES. */
static int charge(sm_ctx *c, size_t n, bd_error *err)
{
    if (n > SM_MAX_INLINED_BYTES - c->inlined_bytes)
        return bd_error_set(err, BD_EMODEL, "the SavedModel's functions expand to more than %zu MiB "
                            "of nodes once inlined (braid's limit)", SM_MAX_INLINED_BYTES >> 20);
    c->inlined_bytes += n;
    return 0;
}

/* Decode the message in SP; spans of its callback fields are recorded by the caller. */
static int decode(const tf_bytes *sp, const pb_msgdesc_t *fields, void *msg, const char *what,
                  bd_error *err)
{
    return bd_pb_decode(sp, fields, msg, what, err);
}

/* A map<string, X> entry: *KEY (pool) and X's span *VAL (empty when absent). */
static int entry_in(sm_ctx *c, const uint8_t *lo, size_t len, const tf_bytes *sp, const char *what,
                    const char **key, tf_bytes *val, bd_error *err)
{
    tensorflow_StringSpanEntry e;
    tf_spans v;
    memset(&e, 0, sizeof e);
    bd_pb_spans_init(&v, lo, len);
    bd_pb_on_span(&e.value, &v);
    int rc = decode(sp, tensorflow_StringSpanEntry_fields, &e, what, err);
    if (rc == 0) {
        *key = pool_str(c, e.key);
        *val = v.n ? v.v[v.n - 1] : (tf_bytes){ lo, 0 };
        if (!*key)
            rc = oom(err);
    }
    pb_release(tensorflow_StringSpanEntry_fields, &e);
    bd_pb_spans_free(&v);
    return rc;
}

static int entry(sm_ctx *c, const tf_bytes *sp, const char *what, const char **key, tf_bytes *val,
                 bd_error *err)
{
    return entry_in(c, c->base, c->len, sp, what, key, val, err);
}

/* Names sorted for lookups: NAME of item IDX. */
struct named {
    const char *name;
    size_t      idx;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

/* The item named by the LEN bytes at NAME in the N sorted entries of V, or -1. */
static long named_find(const named *v, size_t n, const char *name, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *s = v[mid].name;
        int d = strncmp(s, name, len);
        if (d == 0)
            d = s[len] ? 1 : 0;
        if (d == 0)
            return (long)v[mid].idx;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* SP's bytes as a pool string (a map<string,string> value); strings with a NUL are refused. */
static const char *span_str(sm_ctx *c, const tf_bytes *sp)
{
    if (memchr(sp->p, 0, sp->n))
        return NULL;
    return bd_graph_strdup(c->g, (const char *)sp->p, sp->n);
}

/* ---- OpDefs and functions --------------------------------------------------------------- */

static int args_decode(sm_ctx *c, const tf_spans *sp, sm_arg **out, size_t *n, const char *what,
                       bd_error *err)
{
    *n = sp->n;
    *out = sp->n ? bd_graph_alloc(c->g, sp->n * sizeof **out) : NULL;
    if (sp->n && !*out)
        return oom(err);
    for (size_t i = 0; i < sp->n; i++) {
        tensorflow_OpDef_ArgDef a;
        memset(&a, 0, sizeof a);
        int rc = decode(&sp->v[i], tensorflow_OpDef_ArgDef_fields, &a, what, err);
        if (rc == 0) {
            sm_arg *x = &(*out)[i];
            x->name = pool_str(c, a.name);
            x->number_attr = a.number_attr && *a.number_attr ? pool_str(c, a.number_attr) : NULL;
            x->type_list_attr = a.type_list_attr && *a.type_list_attr ? pool_str(c, a.type_list_attr)
                                                                      : NULL;
            if (!x->name || (a.number_attr && *a.number_attr && !x->number_attr) ||
                (a.type_list_attr && *a.type_list_attr && !x->type_list_attr))
                rc = oom(err);
        }
        pb_release(tensorflow_OpDef_ArgDef_fields, &a);
        if (rc)
            return rc;
    }
    return 0;
}

static int opdef_decode(sm_ctx *c, const tf_bytes *sp, sm_opdef *o, const char *what, bd_error *err)
{
    tensorflow_OpDef d;
    tf_spans in, out;
    memset(&d, 0, sizeof d);
    bd_pb_spans_init(&in, c->base, c->len);
    bd_pb_spans_init(&out, c->base, c->len);
    bd_pb_on_span(&d.input_arg, &in);
    bd_pb_on_span(&d.output_arg, &out);
    int rc = decode(sp, tensorflow_OpDef_fields, &d, what, err);
    if (rc == 0 && (!d.name || !*d.name))
        rc = bd_error_set(err, BD_EMODEL, "%s has no name", what);
    if (rc == 0 && !(o->name = pool_str(c, d.name)))
        rc = oom(err);
    if (rc == 0)
        rc = args_decode(c, &in, &o->in, &o->n_in, what, err);
    if (rc == 0)
        rc = args_decode(c, &out, &o->out, &o->n_out, what, err);
    pb_release(tensorflow_OpDef_fields, &d);
    bd_pb_spans_free(&in);
    bd_pb_spans_free(&out);
    return rc;
}

static int by_opname(const void *a, const void *b)
{
    return strcmp(((const sm_opdef *)a)->name, ((const sm_opdef *)b)->name);
}

static int by_fnname(const void *a, const void *b)
{
    return strcmp(((const sm_func *)a)->sig.name, ((const sm_func *)b)->sig.name);
}

static const sm_opdef *find_op(const sm_ctx *c, const char *name)
{
    sm_opdef key = { .name = name };
    return c->n_ops ? bsearch(&key, c->ops, c->n_ops, sizeof *c->ops, by_opname) : NULL;
}

static const sm_func *find_fn(const sm_ctx *c, const char *name)
{
    sm_func key = { .sig.name = name };
    return c->n_fns ? bsearch(&key, c->fns, c->n_fns, sizeof *c->fns, by_fnname) : NULL;
}

static int oplist_decode(sm_ctx *c, const tf_bytes *sp, bd_error *err)
{
    tensorflow_OpList l;
    tf_spans ops;
    memset(&l, 0, sizeof l);
    bd_pb_spans_init(&ops, c->base, c->len);
    bd_pb_on_span(&l.op, &ops);
    int rc = decode(sp, tensorflow_OpList_fields, &l, "stripped_op_list", err);
    if (rc == 0 && ops.n) {
        c->ops = bd_graph_alloc(c->g, ops.n * sizeof *c->ops);
        if (!c->ops)
            rc = oom(err);
    }
    for (size_t i = 0; rc == 0 && i < ops.n; i++) {
        char what[64];
        snprintf(what, sizeof what, "stripped_op_list op #%zu", i);
        rc = opdef_decode(c, &ops.v[i], &c->ops[i], what, err);
    }
    if (rc == 0) {
        c->n_ops = ops.n;
        if (c->n_ops)                   /* qsort's base must not be NULL, even for 0 items */
            qsort(c->ops, c->n_ops, sizeof *c->ops, by_opname);
    }
    pb_release(tensorflow_OpList_fields, &l);
    bd_pb_spans_free(&ops);
    return rc;
}

static int func_decode(sm_ctx *c, size_t i, const tf_bytes *sp, sm_func *f, bd_error *err)
{
    tensorflow_FunctionDef d;
    tf_spans sig, nodes, ret;
    memset(&d, 0, sizeof d);
    bd_pb_spans_init(&sig, c->base, c->len);
    bd_pb_spans_init(&nodes, c->base, c->len);
    bd_pb_spans_init(&ret, c->base, c->len);
    bd_pb_on_span(&d.signature, &sig);
    bd_pb_on_span(&d.node_def, &nodes);
    bd_pb_on_span(&d.ret, &ret);
    char what[64];
    snprintf(what, sizeof what, "library function #%zu", i);
    int rc = decode(sp, tensorflow_FunctionDef_fields, &d, what, err);
    if (rc == 0 && !sig.n)
        rc = bd_error_set(err, BD_EMODEL, "%s has no signature", what);
    if (rc == 0)
        rc = opdef_decode(c, &sig.v[sig.n - 1], &f->sig, what, err);
    if (rc == 0 && nodes.n) {
        f->nodes = bd_graph_alloc(c->g, nodes.n * sizeof *f->nodes);
        if (!f->nodes)
            rc = oom(err);
        else
            memcpy(f->nodes, nodes.v, nodes.n * sizeof *f->nodes);
        f->n_nodes = nodes.n;
    }
    if (rc == 0 && ret.n) {
        f->ret_key = bd_graph_alloc(c->g, ret.n * sizeof *f->ret_key);
        f->ret_val = bd_graph_alloc(c->g, ret.n * sizeof *f->ret_val);
        if (!f->ret_key || !f->ret_val)
            rc = oom(err);
    }
    for (size_t k = 0; rc == 0 && k < ret.n; k++) {
        tf_bytes val;
        rc = entry(c, &ret.v[k], what, &f->ret_key[k], &val, err);
        if (rc == 0 && !(f->ret_val[k] = span_str(c, &val)))
            rc = bd_error_set(err, BD_EMODEL, "function '%s': return '%s' is not a tensor name",
                              f->sig.name, f->ret_key[k]);
        f->n_ret = k + 1;
    }
    pb_release(tensorflow_FunctionDef_fields, &d);
    bd_pb_spans_free(&sig);
    bd_pb_spans_free(&nodes);
    bd_pb_spans_free(&ret);
    return rc;
}

static int library_decode(sm_ctx *c, const tf_bytes *graph_def, bd_error *err)
{
    tensorflow_GraphLibrary gl;
    tf_spans lib, fns;
    memset(&gl, 0, sizeof gl);
    bd_pb_spans_init(&lib, c->base, c->len);
    bd_pb_spans_init(&fns, c->base, c->len);
    bd_pb_on_span(&gl.library, &lib);
    int rc = decode(graph_def, tensorflow_GraphLibrary_fields, &gl, "graph_def", err);
    tensorflow_FunctionDefLibrary fl;
    memset(&fl, 0, sizeof fl);
    bd_pb_on_span(&fl.function, &fns);
    for (size_t i = 0; rc == 0 && i < lib.n; i++)      /* a repeated message field merges */
        rc = decode(&lib.v[i], tensorflow_FunctionDefLibrary_fields, &fl, "the function library", err);
    if (rc == 0 && fns.n) {
        c->fns = bd_graph_alloc(c->g, fns.n * sizeof *c->fns);
        if (!c->fns)
            rc = oom(err);
    }
    for (size_t i = 0; rc == 0 && i < fns.n; i++)
        rc = func_decode(c, i, &fns.v[i], &c->fns[i], err);
    if (rc == 0) {
        c->n_fns = fns.n;
        if (c->n_fns)
            qsort(c->fns, c->n_fns, sizeof *c->fns, by_fnname);
        for (size_t i = 1; rc == 0 && i < c->n_fns; i++)
            if (strcmp(c->fns[i - 1].sig.name, c->fns[i].sig.name) == 0)
                rc = bd_error_set(err, BD_EMODEL, "the library defines function '%s' twice",
                                  c->fns[i].sig.name);
    }
    pb_release(tensorflow_GraphLibrary_fields, &gl);
    pb_release(tensorflow_FunctionDefLibrary_fields, &fl);
    bd_pb_spans_free(&lib);
    bd_pb_spans_free(&fns);
    return rc;
}

/* ---- the flat graph --------------------------------------------------------------------- */

static int push_view(sm_ctx *c, const tf_nodeview *v, int depth, bd_error *err)
{
    if (c->n >= BD_MAX_NODES)
        return bd_error_set(err, BD_EMODEL, "the SavedModel's graph has more than %d nodes once its "
                            "functions are inlined (braid's limit)", BD_MAX_NODES);
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        tf_nodeview *nv = realloc(c->v, cap * sizeof *nv);
        if (!nv)
            return oom(err);
        c->v = nv;
        int *nd = realloc(c->depth, cap * sizeof *nd);
        if (!nd)
            return oom(err);
        c->depth = nd;
        c->cap = cap;
    }
    c->depth[c->n] = depth;
    c->v[c->n++] = *v;
    return 0;
}

/* Keras 3 objects saved with tf.saved_model.save: the functions read VarHandleOp X, which
 * the saver does not restore; it restores V, whose initializer in the main graph is
 * AssignVariableOp(V, ReadVariableOp(X)). Record X -> V for the reader. */
static int restored_aliases(sm_ctx *c, size_t first, bd_error *err)
{
    size_t n = c->n - first, k = 0;
    named *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return oom(err);
    for (size_t i = 0; i < n; i++)
        ix[i] = (named){ c->v[first + i].name, first + i };
    qsort(ix, n, sizeof *ix, by_name);
    c->restored = bd_graph_alloc(c->g, (n ? n : 1) * sizeof *c->restored);
    c->restored_by = bd_graph_alloc(c->g, (n ? n : 1) * sizeof *c->restored_by);
    if (!c->restored || !c->restored_by) {
        free(ix);
        return oom(err);
    }
    for (size_t i = first; i < c->n; i++) {
        const tf_nodeview *a = &c->v[i];
        if (strcmp(a->op, "AssignVariableOp") || a->n_inputs != 2)
            continue;
        long v = named_find(ix, n, a->inputs[0], strlen(a->inputs[0]));
        long r = named_find(ix, n, a->inputs[1], strcspn(a->inputs[1], ":"));
        if (v < 0 || r < 0 || strcmp(c->v[v].op, "VarHandleOp") ||
            strcmp(c->v[r].op, "ReadVariableOp") || c->v[r].n_inputs != 1)
            continue;
        long x = named_find(ix, n, c->v[r].inputs[0], strlen(c->v[r].inputs[0]));
        if (x < 0 || strcmp(c->v[x].op, "VarHandleOp") || x == v)
            continue;
        c->restored[k] = (named){ c->v[x].name, k };
        c->restored_by[k++] = c->v[v].name;
    }
    qsort(c->restored, k, sizeof *c->restored, by_name);
    c->n_restored = k;
    free(ix);
    return 0;
}

static int main_nodes(sm_ctx *c, const tf_bytes *graph_def, bd_error *err)
{
    tensorflow_GraphDef gd;
    tf_spans nodes;
    memset(&gd, 0, sizeof gd);
    bd_pb_spans_init(&nodes, c->base, c->len);
    bd_pb_on_span(&gd.node, &nodes);
    int rc = decode(graph_def, tensorflow_GraphDef_fields, &gd, "graph_def", err);
    if (rc == 0 && gd.has_versions)
        bd_graph_set_opset(c->g, gd.versions.producer);
    if (rc == 0 && nodes.n > BD_MAX_NODES)
        rc = bd_error_set(err, BD_EMODEL, "the graph has %zu nodes (braid's limit: %d)", nodes.n,
                          BD_MAX_NODES);
    for (size_t i = 0; rc == 0 && i < nodes.n; i++) {
        tf_nodeview v;
        memset(&v, 0, sizeof v);
        rc = tf_nodedef_decode(c->g, c->base, c->len, i, &nodes.v[i], &v, err);
        if (rc == 0)
            rc = push_view(c, &v, 0, err);
    }
    bd_pb_spans_free(&nodes);
    return rc ? rc : restored_aliases(c, 0, err);
}

/* The function node V calls, or NULL when V is no call. */
static const sm_func *callee(sm_ctx *c, const tf_nodeview *v, bd_error *err, int *rc)
{
    *rc = 0;
    if (strcmp(v->op, "StatefulPartitionedCall") && strcmp(v->op, "PartitionedCall"))
        return find_fn(c, v->op);
    /* The 'f' attr: its AttrValue is decoded again for the func member tf_attr skips. The
     * NodeDef is the file's, or bytes reencode() wrote into the pool. */
    const uint8_t *lo = v->origin;
    size_t olen = v->origin_len;
    tensorflow_NodeDef nd;
    tf_spans attrs;
    memset(&nd, 0, sizeof nd);
    bd_pb_spans_init(&attrs, lo, olen);
    bd_pb_on_span(&nd.attr, &attrs);
    const sm_func *f = NULL;
    bool found = false;
    tf_bytes origin = { lo, olen };
    *rc = decode(&origin, tensorflow_NodeDef_fields, &nd, "a call node", err);
    for (size_t k = 0; *rc == 0 && k < attrs.n && !found; k++) {
        const char *key;
        tf_bytes val;
        if ((*rc = entry_in(c, lo, olen, &attrs.v[k], "a call's attr", &key, &val, err)) ||
            strcmp(key, "f"))
            continue;
        found = true;
        tensorflow_AttrFunc af;
        tf_spans fn;
        memset(&af, 0, sizeof af);
        bd_pb_spans_init(&fn, lo, olen);
        bd_pb_on_span(&af.func, &fn);
        *rc = decode(&val, tensorflow_AttrFunc_fields, &af, "a call's attr 'f'", err);
        tensorflow_NameAttrList nl;
        memset(&nl, 0, sizeof nl);
        if (*rc == 0 && fn.n)
            *rc = decode(&fn.v[fn.n - 1], tensorflow_NameAttrList_fields, &nl, "a call's attr 'f'", err);
        if (*rc == 0 && (!nl.name || !(f = find_fn(c, nl.name))))
            *rc = bd_error_set(err, BD_EMODEL, "node '%s' (%s) calls function '%s', which the "
                               "library does not define", v->name, v->op, nl.name ? nl.name : "");
        pb_release(tensorflow_NameAttrList_fields, &nl);
        pb_release(tensorflow_AttrFunc_fields, &af);
        bd_pb_spans_free(&fn);
    }
    if (*rc == 0 && !found)
        *rc = bd_error_set(err, BD_EMODEL, "node '%s' (%s) has no attr 'f'", v->name, v->op);
    pb_release(tensorflow_NodeDef_fields, &nd);
    bd_pb_spans_free(&attrs);
    return f;
}

/* Tensors in output arg A of a node whose attrs are V's. */
static int arg_size(const tf_nodeview *v, const sm_arg *a, size_t *n, bd_error *err)
{
    *n = 1;
    if (a->number_attr) {
        const tf_attr *x = tf_view_attr(v, a->number_attr);
        if (!x || x->kind != TF_ATTR_I || x->i < 0 || x->i > 65536)
            return bd_error_set(err, BD_EMODEL, "node '%s' (%s): attr '%s' (the size of output '%s') "
                                "is missing or out of range", v->name, v->op, a->number_attr, a->name);
        *n = (size_t)x->i;
    } else if (a->type_list_attr) {
        const tf_attr *x = tf_view_attr(v, a->type_list_attr);
        if (!x || (x->kind != TF_ATTR_LIST && x->kind != TF_ATTR_NONE))
            return bd_error_set(err, BD_EMODEL, "node '%s' (%s): attr '%s' (the types of output '%s') "
                                "is missing", v->name, v->op, a->type_list_attr, a->name);
        *n = x->kind == TF_ATTR_LIST ? x->list.n_type : 0;
    }
    return 0;
}

/* The body of one inlined call: its nodes sorted by name, for "node:arg:i" references. */
typedef struct body {
    const sm_func *f;
    const char    *prefix;       /* "<call>/" */
    const char   **args;         /* the call's input for each input arg */
    tf_nodeview   *nodes;        /* decoded body nodes */
    named         *order;        /* their names, sorted */
    size_t         n;
} body;

static const tf_nodeview *body_node(const body *b, const char *name, size_t len)
{
    long i = named_find(b->order, b->n, name, len);
    return i < 0 ? NULL : &b->nodes[i];
}

/* REF inside B's function ("arg", "node:out_arg:i") as a name in the flat graph (pool). */
static int body_ref(sm_ctx *c, const body *b, const char *ref, const char **out, bd_error *err)
{
    const char *fn = b->f->sig.name;
    const char *c1 = strchr(ref, ':');
    if (!c1) {
        for (size_t k = 0; k < b->f->sig.n_in; k++)
            if (strcmp(b->f->sig.in[k].name, ref) == 0) {
                *out = b->args[k];
                return 0;
            }
        return bd_error_set(err, BD_EMODEL, "function '%s': '%s' names no input of the function",
                            fn, ref);
    }
    const char *c2 = strchr(c1 + 1, ':');
    char *end = NULL;
    long idx = c2 ? strtol(c2 + 1, &end, 10) : -1;
    if (!c2 || !end || *end || c2[1] < '0' || c2[1] > '9' || idx < 0 || idx > 65535)
        return bd_error_set(err, BD_EMODEL, "function '%s': tensor '%s' is not of the form "
                            "node:output:index", fn, ref);
    const tf_nodeview *n = body_node(b, ref, (size_t)(c1 - ref));
    if (!n)
        return bd_error_set(err, BD_EMODEL, "function '%s': tensor '%s' names no node of the function",
                            fn, ref);
    const sm_func *called = find_fn(c, n->op);
    const sm_opdef *od = called ? &called->sig : find_op(c, n->op);
    if (!od)
        return bd_error_set(err, BD_EMODEL, "function '%s': op '%s' (node '%s') is neither in the "
                            "SavedModel's stripped_op_list nor a library function", fn, n->op, n->name);
    size_t alen = (size_t)(c2 - c1 - 1), offset = 0;
    for (size_t k = 0; k < od->n_out; k++) {
        size_t sz;
        int rc = arg_size(n, &od->out[k], &sz, err);
        if (rc)
            return rc;
        if (strlen(od->out[k].name) == alen && strncmp(od->out[k].name, c1 + 1, alen) == 0) {
            if ((size_t)idx >= sz)
                return bd_error_set(err, BD_EMODEL, "function '%s': tensor '%s': output '%s' of "
                                    "node '%s' has %zu tensors", fn, ref, od->out[k].name, n->name, sz);
            offset += (size_t)idx;
            char buf[SM_NAME_MAX];
            int len = offset ? snprintf(buf, sizeof buf, "%s%s:%zu", b->prefix, n->name, offset)
                             : snprintf(buf, sizeof buf, "%s%s", b->prefix, n->name);
            if (len < 0 || (size_t)len >= sizeof buf)
                return bd_error_set(err, BD_EMODEL, "function '%s': name '%s%s' is too long", fn,
                                    b->prefix, n->name);
            int rc = charge(c, (size_t)len + 1, err);
            return rc ? rc : (*out = pool_str(c, buf)) ? 0 : oom(err);
        }
        if (offset + sz < offset)
            return oom(err);
        offset += sz;
    }
    return bd_error_set(err, BD_EMODEL, "function '%s': tensor '%s': op %s has no output '%.*s'", fn,
                        ref, n->op, (int)alen, c1 + 1);
}

/* ---- NodeDef bytes for inlined nodes ---------------------------------------------------- */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static uint8_t *put_str(uint8_t *p, unsigned field, const char *s, size_t n)
{
    p = put_varint(p, (uint64_t)field << 3 | 2);
    p = put_varint(p, n);
    memcpy(p, s, n);
    return p + n;
}

/* Read one field's key and extent at P (< END): 0, or -1 when malformed. */
static int next_field(const uint8_t *p, const uint8_t *end, unsigned *field, const uint8_t **next)
{
    uint64_t key = 0, len = 0;
    int shift = 0;
    while (p < end && shift < 64) {
        key |= (uint64_t)(*p & 0x7f) << shift;
        shift += 7;
        if (!(*p++ & 0x80))
            goto have_key;
    }
    return -1;
have_key:
    *field = (unsigned)(key >> 3);
    switch (key & 7) {
    case 0:
        while (p < end && (*p & 0x80))
            p++;
        if (p >= end)
            return -1;
        *next = p + 1;
        return 0;
    case 1: if (end - p < 8) return -1; *next = p + 8; return 0;
    case 5: if (end - p < 4) return -1; *next = p + 4; return 0;
    case 2:
        shift = 0;
        while (p < end && shift < 64) {
            len |= (uint64_t)(*p & 0x7f) << shift;
            shift += 7;
            if (!(*p++ & 0x80)) {
                if (len > (uint64_t)(end - p))
                    return -1;
                *next = p + len;
                return 0;
            }
        }
        return -1;
    default:
        return -1;
    }
}

/* V's NodeDef: V's name, op and inputs (controls dropped), ORIGIN's attr fields verbatim. */
static int reencode(sm_ctx *c, tf_nodeview *v, const tf_bytes *origin, bd_error *err)
{
    size_t n = 0, nl = strlen(v->name), ol = strlen(v->op);
    n += 1 + varint_len(nl) + nl + 1 + varint_len(ol) + ol;
    for (size_t k = 0; k < v->n_inputs; k++) {
        size_t l = strlen(v->inputs[k]);
        n += 1 + varint_len(l) + l;
    }
    const uint8_t *p = origin->p, *end = origin->p + origin->n;
    while (p < end) {
        unsigned field;
        const uint8_t *next;
        if (next_field(p, end, &field, &next))
            return bd_error_set(err, BD_EMODEL, "node '%s': malformed NodeDef", v->name);
        if (field == 5)
            n += (size_t)(next - p);
        p = next;
    }
    int rc = charge(c, n, err);
    if (rc)
        return rc;
    uint8_t *buf = bd_graph_alloc(c->g, n ? n : 1), *w = buf;
    if (!buf)
        return oom(err);
    w = put_str(w, 1, v->name, nl);
    w = put_str(w, 2, v->op, ol);
    for (size_t k = 0; k < v->n_inputs; k++)
        w = put_str(w, 3, v->inputs[k], strlen(v->inputs[k]));
    for (p = origin->p; p < end;) {
        unsigned field;
        const uint8_t *next;
        next_field(p, end, &field, &next);
        if (field == 5) {
            memcpy(w, p, (size_t)(next - p));
            w += next - p;
        }
        p = next;
    }
    v->origin = buf;
    v->origin_len = (size_t)(w - buf);
    return 0;
}

/* ---- inlining --------------------------------------------------------------------------- */

static int inline_call(sm_ctx *c, size_t at, const sm_func *f, bd_error *err)
{
    tf_nodeview call = c->v[at];
    int depth = c->depth[at] + 1;
    if (depth > SM_MAX_CALL_DEPTH)
        return bd_error_set(err, BD_EMODEL, "functions nest deeper than %d calls (a recursive "
                            "function?): function '%.100s' called by node '...%s'", SM_MAX_CALL_DEPTH,
                            f->sig.name, call.name + (strlen(call.name) > 100 ? strlen(call.name) - 100 : 0));
    if (call.n_inputs != f->sig.n_in)
        return bd_error_set(err, BD_EMODEL, "node '%s' calls function '%s' with %zu inputs; it takes "
                            "%zu", call.name, f->sig.name, call.n_inputs, f->sig.n_in);
    for (size_t k = 0; k < f->sig.n_in; k++)
        if (f->sig.in[k].number_attr || f->sig.in[k].type_list_attr)
            return bd_error_set(err, BD_EUNSUPPORTED, "function '%s': input '%s' is a list of "
                                "tensors (not supported)", f->sig.name, f->sig.in[k].name);
    char prefix[SM_NAME_MAX];
    int pl = snprintf(prefix, sizeof prefix, "%s/", call.name);
    if (pl < 0 || (size_t)pl >= sizeof prefix)
        return bd_error_set(err, BD_EMODEL, "node name '%s' is too long", call.name);
    body b = { .f = f, .prefix = pool_str(c, prefix), .args = call.inputs, .n = f->n_nodes };
    b.nodes = f->n_nodes ? calloc(f->n_nodes, sizeof *b.nodes) : NULL;
    b.order = f->n_nodes ? malloc(f->n_nodes * sizeof *b.order) : NULL;
    int rc = b.prefix && (!f->n_nodes || (b.nodes && b.order)) ? 0 : oom(err);
    for (size_t k = 0; rc == 0 && k < f->n_nodes; k++) {
        rc = tf_nodedef_decode(c->g, c->base, c->len, k, &f->nodes[k], &b.nodes[k], err);
        b.order[k] = (named){ b.nodes[k].name, k };
        if (rc)
            bd_error_prefix(err, "function '%s': ", f->sig.name);
    }
    if (rc == 0) {
        if (b.n)
            qsort(b.order, b.n, sizeof *b.order, by_name);
        for (size_t k = 1; rc == 0 && k < b.n; k++)
            if (strcmp(b.order[k - 1].name, b.order[k].name) == 0)
                rc = bd_error_set(err, BD_EMODEL, "function '%s' has two nodes named '%s'",
                                  f->sig.name, b.order[k].name);
    }
    /* The call becomes an IdentityN of the function's results, in output-arg order. */
    tf_nodeview idn = { .name = call.name, .op = "IdentityN" };
    if (rc == 0 && f->sig.n_out) {
        idn.inputs = bd_graph_alloc(c->g, f->sig.n_out * sizeof *idn.inputs);
        if (!idn.inputs)
            rc = oom(err);
    }
    for (size_t k = 0; rc == 0 && k < f->sig.n_out; k++) {
        const sm_arg *a = &f->sig.out[k];
        if (a->number_attr || a->type_list_attr) {
            rc = bd_error_set(err, BD_EUNSUPPORTED, "function '%s': output '%s' is a list of "
                              "tensors (not supported)", f->sig.name, a->name);
            break;
        }
        const char *r = NULL;
        for (size_t j = 0; j < f->n_ret && !r; j++)
            if (strcmp(f->ret_key[j], a->name) == 0)
                r = f->ret_val[j];
        if (!r)
            rc = bd_error_set(err, BD_EMODEL, "function '%s' returns nothing for output '%s'",
                              f->sig.name, a->name);
        else
            rc = body_ref(c, &b, r, &idn.inputs[idn.n_inputs++], err);
    }
    /* The body's nodes, renamed into the call's namespace. */
    for (size_t k = 0; rc == 0 && k < b.n; k++) {
        tf_nodeview v = b.nodes[k];
        char name[SM_NAME_MAX];
        int nl = snprintf(name, sizeof name, "%s%s", b.prefix, v.name);
        if (nl < 0 || (size_t)nl >= sizeof name) {
            rc = bd_error_set(err, BD_EMODEL, "node name '%s%s' is too long", b.prefix, v.name);
            break;
        }
        if ((rc = charge(c, (size_t)nl + 1 + sizeof v + v.n_inputs * sizeof *v.inputs, err)))
            break;
        v.name = pool_str(c, name);
        v.ctrl = NULL;
        v.n_ctrl = 0;
        const char **in = v.n_inputs ? bd_graph_alloc(c->g, v.n_inputs * sizeof *in) : NULL;
        if (!v.name || (v.n_inputs && !in)) {
            rc = oom(err);
            break;
        }
        for (size_t j = 0; rc == 0 && j < v.n_inputs; j++)
            rc = body_ref(c, &b, v.inputs[j], &in[j], err);
        v.inputs = in;
        tf_bytes origin = { b.nodes[k].origin, b.nodes[k].origin_len };
        if (rc == 0 && strcmp(v.op, "Const") == 0) {
            v.origin = NULL;        /* a Const's bytes (maybe large) are not copied again:
                                     * tf_translate encodes one only if TensorFlow runs it */
            v.origin_len = 0;
        } else if (rc == 0)
            rc = reencode(c, &v, &origin, err);
        if (rc == 0)
            rc = push_view(c, &v, depth, err);
    }
    if (rc == 0)
        c->v[at] = idn;          /* C->V may have moved: write through the index */
    free(b.nodes);
    free(b.order);
    return rc;
}

static int inline_all(sm_ctx *c, bd_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        int rc;
        const sm_func *f = callee(c, &c->v[i], err, &rc);
        if (rc == 0 && f)
            rc = inline_call(c, i, f, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- names in the flat graph ------------------------------------------------------------ */

typedef struct name_index {
    named  *order;       /* the views' names, sorted */
    size_t  n;
} name_index;

static int index_build(sm_ctx *c, name_index *ix, bd_error *err)
{
    free(ix->order);
    ix->n = c->n;
    ix->order = malloc((c->n ? c->n : 1) * sizeof *ix->order);
    if (!ix->order)
        return oom(err);
    for (size_t i = 0; i < c->n; i++)
        ix->order[i] = (named){ c->v[i].name, i };
    qsort(ix->order, ix->n, sizeof *ix->order, by_name);
    for (size_t i = 1; i < ix->n; i++)
        if (strcmp(ix->order[i - 1].name, ix->order[i].name) == 0)
            return bd_error_set(err, BD_EMODEL, "two nodes are named '%s' once functions are "
                                "inlined", ix->order[i].name);
    return 0;
}

/* The view a reference "node" / "node:k" names, or -1. */
static long lookup(const sm_ctx *c, const name_index *ix, const char *ref)
{
    size_t len = strlen(ref);
    const char *colon = strrchr(ref, ':');
    if (colon && colon[1] >= '0' && colon[1] <= '9' && strspn(colon + 1, "0123456789") == strlen(colon + 1))
        len = (size_t)(colon - ref);
    (void)c;
    return named_find(ix->order, ix->n, ref, len);
}

/* Keep only what the signature's outputs need (data inputs), in the original order. */
static int prune(sm_ctx *c, bd_error *err)
{
    name_index ix = { 0 };
    int rc = index_build(c, &ix, err);
    bool *keep = rc == 0 ? calloc(c->n ? c->n : 1, sizeof *keep) : NULL;
    size_t *stack = rc == 0 ? malloc((c->n ? c->n : 1) * sizeof *stack) : NULL;
    size_t depth = 0;
    if (rc == 0 && (!keep || !stack))
        rc = oom(err);
    for (size_t k = 0; rc == 0 && k < c->n_in + c->n_out; k++) {
        const sm_io *io = k < c->n_in ? &c->in[k] : &c->out[k - c->n_in];
        long p = lookup(c, &ix, io->tensor);
        if (p < 0)
            rc = bd_error_set(err, BD_EMODEL, "signature '%s': %s '%s' is tensor '%s', which names no "
                              "node of the graph", c->sig_name, k < c->n_in ? "input" : "output",
                              io->key, io->tensor);
        else if (!keep[p]) {
            keep[p] = true;
            stack[depth++] = (size_t)p;
        }
    }
    while (rc == 0 && depth) {
        const tf_nodeview *v = &c->v[stack[--depth]];
        bool is_ph = strcmp(v->op, "Placeholder") == 0;
        for (size_t k = 0; rc == 0 && !is_ph && k < v->n_inputs; k++) {
            long p = lookup(c, &ix, v->inputs[k]);
            if (p < 0)
                rc = bd_error_set(err, BD_EMODEL, "node '%s' (%s): input '%s' names no node of the "
                                  "graph", v->name, v->op, v->inputs[k]);
            else if (!keep[p]) {
                keep[p] = true;
                stack[depth++] = (size_t)p;
            }
        }
    }
    if (rc == 0) {
        size_t w = 0;
        for (size_t i = 0; i < c->n; i++)
            if (keep[i]) {
                c->depth[w] = c->depth[i];
                c->v[w++] = c->v[i];
            }
        c->n = w;
    }
    free(keep);
    free(stack);
    free(ix.order);
    return rc;
}

/* ---- freezing ----------------------------------------------------------------------------- */

static bool op_is(const tf_nodeview *v, const char *op)
{
    return strcmp(v->op, op) == 0;
}

static bool is_variable(const tf_nodeview *v)
{
    return op_is(v, "VariableV2") || op_is(v, "Variable");
}

/* The VarHandleOp node resource input REF reads, through Identity nodes, or -1. */
static long handle_of(const sm_ctx *c, const name_index *ix, const char *ref)
{
    for (int hops = 0; hops < 64; hops++) {
        long p = lookup(c, ix, ref);
        if (p < 0)
            return -1;
        const tf_nodeview *v = &c->v[p];
        if (op_is(v, "VarHandleOp"))
            return p;
        if (!(op_is(v, "Identity") || op_is(v, "IdentityN")) || v->n_inputs == 0)
            return -1;
        /* IdentityN "x:k" passes its input k through */
        const char *colon = strrchr(ref, ':');
        size_t port = colon && op_is(v, "IdentityN") ? strtoul(colon + 1, NULL, 10) : 0;
        if (port >= v->n_inputs)
            return -1;
        ref = v->inputs[port];
    }
    return -1;
}

typedef struct var_use {
    size_t view;           /* the reading node (ReadVariableOp, ResourceGather) or VariableV2 */
    size_t var;            /* index into the variables read */
} var_use;

static int attr_type(const tf_nodeview *v, const char *key)
{
    const tf_attr *a = tf_view_attr(v, key);
    return a && a->kind == TF_ATTR_TYPE ? a->type : -1;
}

static tf_attr *new_attrs(sm_ctx *c, size_t n)
{
    return bd_graph_alloc(c->g, n * sizeof(tf_attr));
}

/* V becomes a Const holding variable X. */
static int make_const(sm_ctx *c, tf_nodeview *v, int tf_dtype, const bd_saved_variable *x,
                      bd_error *err)
{
    tf_attr *a = new_attrs(c, 2);
    if (!a)
        return oom(err);
    a[0] = (tf_attr){ .key = "dtype", .kind = TF_ATTR_TYPE, .type = tf_dtype };
    a[1] = (tf_attr){ .key = "value", .kind = TF_ATTR_TENSOR,
                      .tensor = { .tf_dtype = tf_dtype, .dtype = x->dtype, .shape = x->shape,
                                  .data = x->data, .nbytes = x->nbytes } };
    v->op = "Const";
    v->inputs = NULL;
    v->n_inputs = 0;
    v->attrs = a;
    v->n_attrs = 2;
    v->origin = NULL;            /* a constant: never run by TensorFlow as a node */
    v->origin_len = 0;
    return 0;
}

/* ResourceGather(var, indices) -> GatherV2(Const var, indices, Const 0) with its batch_dims. */
static int make_gather(sm_ctx *c, size_t at, int tf_dtype, const bd_saved_variable *x, bd_error *err)
{
    char name[SM_NAME_MAX];
    tf_nodeview gather = c->v[at];
    snprintf(name, sizeof name, "%s/braid_params", gather.name);
    tf_nodeview params = { .name = pool_str(c, name) };
    snprintf(name, sizeof name, "%s/braid_axis", gather.name);
    tf_nodeview axis = { .name = pool_str(c, name), .op = "Const" };
    int32_t *zero = bd_graph_alloc(c->g, sizeof *zero);
    tf_attr *aa = new_attrs(c, 2), *ga = new_attrs(c, 4);
    const char **in = bd_graph_alloc(c->g, 3 * sizeof *in);
    if (!params.name || !axis.name || !zero || !aa || !ga || !in || gather.n_inputs != 2)
        return gather.n_inputs != 2 ? bd_error_set(err, BD_EMODEL, "node '%s' (ResourceGather) "
                                                   "needs 2 inputs", gather.name) : oom(err);
    int rc = make_const(c, &params, tf_dtype, x, err);
    if (rc)
        return rc;
    aa[0] = (tf_attr){ .key = "dtype", .kind = TF_ATTR_TYPE, .type = TF_DT_INT32 };
    aa[1] = (tf_attr){ .key = "value", .kind = TF_ATTR_TENSOR,
                       .tensor = { .tf_dtype = TF_DT_INT32, .dtype = BD_DT_INT32,
                                   .shape = { .rank = 0 }, .data = zero, .nbytes = 4 } };
    axis.attrs = aa;
    axis.n_attrs = 2;
    const tf_attr *bdims = tf_view_attr(&gather, "batch_dims");
    int ti = attr_type(&gather, "Tindices");
    ga[0] = (tf_attr){ .key = "Tparams", .kind = TF_ATTR_TYPE, .type = tf_dtype };
    ga[1] = (tf_attr){ .key = "Tindices", .kind = TF_ATTR_TYPE, .type = ti < 0 ? TF_DT_INT32 : ti };
    ga[2] = (tf_attr){ .key = "Taxis", .kind = TF_ATTR_TYPE, .type = TF_DT_INT32 };
    ga[3] = (tf_attr){ .key = "batch_dims", .kind = TF_ATTR_I,
                       .i = bdims && bdims->kind == TF_ATTR_I ? bdims->i : 0 };
    in[0] = params.name;
    in[1] = gather.inputs[1];
    in[2] = axis.name;
    gather.op = "GatherV2";
    gather.inputs = in;
    gather.n_inputs = 3;
    gather.attrs = ga;
    gather.n_attrs = 4;
    gather.origin = NULL;        /* tf_translate encodes the new node if TensorFlow must run it */
    gather.origin_len = 0;
    c->v[at] = gather;
    if ((rc = push_view(c, &params, c->depth[at], err)))
        return rc;
    return push_view(c, &axis, c->depth[at], err);
}

static int freeze(sm_ctx *c, bd_tf_variable_reader read, void *rctx, bd_error *err)
{
    name_index ix = { 0 };
    int rc = index_build(c, &ix, err);
    var_use *uses = rc == 0 ? malloc((c->n ? c->n : 1) * sizeof *uses) : NULL;
    bd_saved_variable *vars = rc == 0 ? calloc(c->n ? c->n : 1, sizeof *vars) : NULL;
    int *tf_types = rc == 0 ? calloc(c->n ? c->n : 1, sizeof *tf_types) : NULL;
    long *var_of = rc == 0 ? malloc((c->n ? c->n : 1) * sizeof *var_of) : NULL;  /* node -> var */
    size_t n_uses = 0, n_vars = 0, adopted = 0;
    if (rc == 0 && (!uses || !vars || !tf_types || !var_of))
        rc = oom(err);
    for (size_t i = 0; rc == 0 && i < c->n; i++)
        var_of[i] = -1;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        const tf_nodeview *v = &c->v[i];
        long h = -1;
        if (is_variable(v))
            h = (long)i;
        else if ((op_is(v, "ReadVariableOp") || op_is(v, "ResourceGather")) && v->n_inputs >= 1 &&
                 (h = handle_of(c, &ix, v->inputs[0])) < 0)
            rc = bd_error_set(err, BD_EUNSUPPORTED, "node '%s' (%s) reads a resource that is not a "
                              "variable of the SavedModel (%s)", v->name, v->op, v->inputs[0]);
        if (rc || h < 0)
            continue;
        const tf_nodeview *var = &c->v[h];
        int dt = attr_type(var, "dtype");
        if (var_of[h] < 0) {
            int bd = dt >= 0 ? tf_dtype_to_bd(dt) : BD_DT_UNDEFINED;
            if (bd == BD_DT_UNDEFINED || bd == BD_DT_STRING) {
                const char *tn = dt >= 0 ? tf_dtype_name(dt) : NULL;
                rc = bd_error_set(err, BD_EUNSUPPORTED, "variable '%s' has type %s (braid freezes "
                                  "numeric variables only)", var->name, tn ? tn : "(unknown)");
                continue;
            }
            var_of[h] = (long)n_vars;
            tf_types[n_vars] = dt;
            long r = c->n_restored ? named_find(c->restored, c->n_restored, var->name,
                                                strlen(var->name)) : -1;
            vars[n_vars++] = (bd_saved_variable){ .node = var->name, .dtype = bd,
                                                  .restored = r < 0 ? NULL : c->restored_by[r] };
        }
        uses[n_uses++] = (var_use){ .view = i, .var = (size_t)var_of[h] };
    }
    if (rc == 0 && n_vars) {
        if (!read)
            rc = bd_error_set(err, BD_EUNSUPPORTED, "the SavedModel has %zu variables and no "
                              "TensorFlow to read them", n_vars);
        else
            rc = read(rctx, vars, n_vars, err);
    }
    /* What came back must be what the graph declared. */
    for (size_t k = 0; rc == 0 && k < n_vars; k++) {
        bd_saved_variable *x = &vars[k];
        size_t esize = bd_dtype_size(x->dtype);
        int64_t numel = 1;
        bool ok = x->shape.rank >= 0 && x->shape.rank <= BD_MAX_RANK;
        for (int d = 0; ok && d < x->shape.rank; d++)
            ok = x->shape.dims[d] >= 0 && (x->shape.dims[d] == 0 ||
                                           numel <= INT64_MAX / x->shape.dims[d]);
        for (int d = 0; ok && d < x->shape.rank; d++)
            numel *= x->shape.dims[d];
        if (!ok || !esize || (uint64_t)numel > SIZE_MAX / esize || (size_t)numel * esize != x->nbytes ||
            (x->nbytes && !x->data))
            rc = bd_error_set(err, BD_EMODEL, "variable '%s': the value read (%zu bytes) does not "
                              "match its shape", x->node, x->nbytes);
        else if (x->data && bd_graph_adopt_buffer(c->g, x->data)) {   /* frees it on failure */
            x->data = NULL;
            rc = oom(err);
        } else
            adopted = k + 1;       /* owned by the graph from here */
    }
    for (size_t k = adopted; rc && k < n_vars; k++)   /* the reader's, not adopted */
        free(vars[k].data);
    for (size_t k = 0; rc == 0 && k < n_uses; k++) {
        size_t i = uses[k].view;
        const bd_saved_variable *x = &vars[uses[k].var];
        int dt = tf_types[uses[k].var];
        if (op_is(&c->v[i], "ResourceGather"))
            rc = make_gather(c, i, dt, x, err);
        else
            rc = make_const(c, &c->v[i], dt, x, err);
    }
    free(uses);
    free(vars);
    free(tf_types);
    free(var_of);
    free(ix.order);
    return rc;
}

/* ---- the signature ------------------------------------------------------------------------ */

static int by_key(const void *a, const void *b)
{
    return strcmp(((const sm_io *)a)->key, ((const sm_io *)b)->key);
}

static int io_decode(sm_ctx *c, const tf_spans *sp, sm_io **out, size_t *n, const char *kind,
                     bd_error *err)
{
    *n = sp->n;
    *out = bd_graph_alloc(c->g, (sp->n ? sp->n : 1) * sizeof **out);
    if (!*out)
        return oom(err);
    for (size_t i = 0; i < sp->n; i++) {
        tf_bytes ti;
        sm_io *io = &(*out)[i];
        char what[96];
        snprintf(what, sizeof what, "signature '%.40s' %s #%zu", c->sig_name, kind, i);
        int rc = entry(c, &sp->v[i], what, &io->key, &ti, err);
        if (rc)
            return rc;
        tensorflow_TensorInfo t;
        tf_spans coo, comp, shape;
        memset(&t, 0, sizeof t);
        bd_pb_spans_init(&coo, c->base, c->len);
        bd_pb_spans_init(&comp, c->base, c->len);
        bd_pb_spans_init(&shape, c->base, c->len);
        bd_pb_on_span(&t.coo_sparse, &coo);
        bd_pb_on_span(&t.composite_tensor, &comp);
        bd_pb_on_span(&t.tensor_shape, &shape);
        rc = decode(&ti, tensorflow_TensorInfo_fields, &t, what, err);
        if (rc == 0 && (coo.n || comp.n))
            rc = bd_error_set(err, BD_EUNSUPPORTED, "signature '%s': %s '%s' is a sparse or composite "
                              "tensor (braid serves dense tensors)", c->sig_name, kind, io->key);
        else if (rc == 0 && (!t.name || !*t.name))
            rc = bd_error_set(err, BD_EMODEL, "signature '%s': %s '%s' names no tensor", c->sig_name,
                              kind, io->key);
        else if (rc == 0 && !*io->key)
            rc = bd_error_set(err, BD_EMODEL, "signature '%s': an %s has an empty key", c->sig_name,
                              kind);
        else if (rc == 0 && !(io->tensor = pool_str(c, t.name)))
            rc = oom(err);
        io->dtype = t.dtype;
        pb_release(tensorflow_TensorInfo_fields, &t);
        bd_pb_spans_free(&coo);
        bd_pb_spans_free(&comp);
        bd_pb_spans_free(&shape);
        if (rc)
            return rc;
    }
    for (size_t i = 0; *n <= 4096 && i < *n; i++)    /* one tensor, one key (small maps) */
        for (size_t j = 0; j < i; j++)
            if (strcmp((*out)[i].tensor, (*out)[j].tensor) == 0)
                return bd_error_set(err, BD_EUNSUPPORTED, "signature '%s': %ss '%s' and '%s' are "
                                    "the same tensor '%s' (not supported)", c->sig_name, kind,
                                    (*out)[j].key, (*out)[i].key, (*out)[i].tensor);
    if (*n > 4096)
        return bd_error_set(err, BD_EMODEL, "signature '%s' has %zu %ss (braid's limit: 4096)",
                            c->sig_name, *n, kind);
    qsort(*out, *n, sizeof **out, by_key);
    for (size_t i = 1; i < *n; i++)
        if (strcmp((*out)[i - 1].key, (*out)[i].key) == 0)
            return bd_error_set(err, BD_EMODEL, "signature '%s': %s '%s' appears twice", c->sig_name,
                                kind, (*out)[i].key);
    return 0;
}

/* Find signature NAME among the MetaGraphDef's SIGS and read its inputs and outputs. */
static int signature_pick(sm_ctx *c, const tf_spans *sigs, const char *name, bd_error *err)
{
    char avail[256] = "";
    size_t al = 0;
    for (size_t i = 0; i < sigs->n; i++) {
        const char *key;
        tf_bytes sd;
        int rc = entry(c, &sigs->v[i], "signature_def", &key, &sd, err);
        if (rc)
            return rc;
        if (strcmp(key, "__saved_model_init_op") && al < sizeof avail - 1)
            al += (size_t)snprintf(avail + al, sizeof avail - al, "%s'%s'", al ? ", " : "", key);
        if (strcmp(key, name))
            continue;
        c->sig_name = key;
        tensorflow_SignatureDef s;
        tf_spans in, out;
        memset(&s, 0, sizeof s);
        bd_pb_spans_init(&in, c->base, c->len);
        bd_pb_spans_init(&out, c->base, c->len);
        bd_pb_on_span(&s.inputs, &in);
        bd_pb_on_span(&s.outputs, &out);
        char what[96];
        snprintf(what, sizeof what, "signature '%.60s'", key);
        rc = decode(&sd, tensorflow_SignatureDef_fields, &s, what, err);
        if (rc == 0)
            rc = io_decode(c, &in, &c->in, &c->n_in, "input", err);
        if (rc == 0)
            rc = io_decode(c, &out, &c->out, &c->n_out, "output", err);
        if (rc == 0 && c->n_out == 0)
            rc = bd_error_set(err, BD_EMODEL, "signature '%s' has no outputs", key);
        pb_release(tensorflow_SignatureDef_fields, &s);
        bd_pb_spans_free(&in);
        bd_pb_spans_free(&out);
        return rc;
    }
    return bd_error_set(err, BD_ENOTFOUND, "the SavedModel has no signature '%s' (it has: %s)", name,
                        al ? avail : "none");
}

/* Rename the graph's inputs and outputs to the signature's keys. */
static int rename_io(sm_ctx *c, bd_error *err)
{
    bd_graph *g = c->g;
    if (bd_graph_num_inputs(g) < c->n_in || bd_graph_num_outputs(g) != c->n_out)
        return bd_error_set(err, BD_EUNSUPPORTED, "signature '%s': two of its outputs are the same "
                            "tensor, or an output is an input (not supported)", c->sig_name);
    bd_value **io = malloc((c->n_in + c->n_out) * sizeof *io);
    if (!io)
        return oom(err);
    for (size_t k = 0; k < c->n_in; k++)
        io[k] = bd_graph_input(g, k);
    for (size_t k = 0; k < c->n_out; k++)
        io[c->n_in + k] = bd_graph_output(g, k);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < c->n_in + c->n_out; k++)
        for (size_t j = 0; rc == 0 && j < k; j++)
            if (io[j] == io[k])
                rc = bd_error_set(err, BD_EUNSUPPORTED, "signature '%s': an output is the input "
                                  "tensor itself, or two outputs are one tensor (not supported)",
                                  c->sig_name);
    /* Out of the way first: values that already carry one of the keys. */
    for (size_t k = 0; rc == 0 && k < c->n_in + c->n_out; k++) {
        const char *key = k < c->n_in ? c->in[k].key : c->out[k - c->n_in].key;
        bd_value *other = bd_graph_find_value(g, key);
        if (!other)
            continue;
        char buf[SM_NAME_MAX];
        for (unsigned s = 0; rc == 0; s++) {
            snprintf(buf, sizeof buf, "%.4000s/braid_%u", key, s);
            if (!bd_graph_find_value(g, buf)) {
                rc = bd_graph_rename_value(g, other, buf, err);
                break;
            }
        }
    }
    for (size_t k = 0; rc == 0 && k < c->n_in + c->n_out; k++) {
        const sm_io *s = k < c->n_in ? &c->in[k] : &c->out[k - c->n_in];
        rc = bd_graph_rename_value(g, io[k], s->key, err);
        if (io[k]->dtype == BD_DT_UNDEFINED)        /* what a run-time-typed op will give */
            io[k]->dtype = tf_dtype_to_bd(s->dtype);
    }
    free(io);
    return rc;
}

/* ---- the file ----------------------------------------------------------------------------- */

static bool has_tag(const tensorflow_MetaGraphDef_MetaInfoDef *mi, const char *tag)
{
    for (pb_size_t i = 0; i < mi->tags_count; i++)
        if (mi->tags[i] && strcmp(mi->tags[i], tag) == 0)
            return true;
    return false;
}

/* The MetaGraphDef tagged TAG: its graph_def, signature_def entries, asset_file_defs and
 * stripped_op_list. */
static int meta_graph(sm_ctx *c, const char *tag, tf_bytes *graph_def, tf_spans *sigs,
                      tf_spans *assets, bd_error *err)
{
    tensorflow_SavedModel sm;
    tf_spans mgs;
    memset(&sm, 0, sizeof sm);
    bd_pb_spans_init(&mgs, c->base, c->len);
    bd_pb_on_span(&sm.meta_graphs, &mgs);
    tf_bytes all = { c->base, c->len };
    int rc = decode(&all, tensorflow_SavedModel_fields, &sm, "saved_model.pb", err);
    if (rc == 0 && mgs.n == 0)
        rc = bd_error_set(err, BD_EMODEL, "saved_model.pb holds no MetaGraphDef (is it a "
                          "SavedModel?)");
    bool found = false;
    for (size_t i = 0; rc == 0 && i < mgs.n && !found; i++) {
        tensorflow_MetaGraphDef mg;
        tf_spans info, gd, oplist;
        memset(&mg, 0, sizeof mg);
        bd_pb_spans_init(&info, c->base, c->len);
        bd_pb_spans_init(&gd, c->base, c->len);
        bd_pb_spans_init(&oplist, c->base, c->len);
        bd_pb_spans_free(sigs);
        bd_pb_spans_init(sigs, c->base, c->len);
        bd_pb_spans_free(assets);
        bd_pb_spans_init(assets, c->base, c->len);
        bd_pb_on_span(&mg.meta_info_def, &info);
        bd_pb_on_span(&mg.graph_def, &gd);
        bd_pb_on_span(&mg.signature_def, sigs);
        bd_pb_on_span(&mg.asset_file_def, assets);
        char what[48];
        snprintf(what, sizeof what, "MetaGraphDef #%zu", i);
        rc = decode(&mgs.v[i], tensorflow_MetaGraphDef_fields, &mg, what, err);
        tensorflow_MetaGraphDef_MetaInfoDef mi;
        memset(&mi, 0, sizeof mi);
        bd_pb_on_span(&mi.stripped_op_list, &oplist);
        for (size_t k = 0; rc == 0 && k < info.n; k++)
            rc = decode(&info.v[k], tensorflow_MetaGraphDef_MetaInfoDef_fields, &mi, what, err);
        if (rc == 0 && has_tag(&mi, tag)) {
            found = true;
            if (!gd.n)
                rc = bd_error_set(err, BD_EMODEL, "the MetaGraphDef tagged '%s' has no graph", tag);
            else
                *graph_def = gd.v[gd.n - 1];
            for (size_t k = 0; rc == 0 && k < oplist.n; k++)
                rc = oplist_decode(c, &oplist.v[k], err);
        }
        pb_release(tensorflow_MetaGraphDef_MetaInfoDef_fields, &mi);
        pb_release(tensorflow_MetaGraphDef_fields, &mg);
        bd_pb_spans_free(&info);
        bd_pb_spans_free(&gd);
        bd_pb_spans_free(&oplist);
    }
    if (rc == 0 && !found)
        rc = bd_error_set(err, BD_EMODEL, "saved_model.pb has no MetaGraphDef tagged '%s' (TF "
                          "Serving's tag)", tag);
    pb_release(tensorflow_SavedModel_fields, &sm);
    bd_pb_spans_free(&mgs);
    return rc;
}

/* TensorFlow's loader opens by name what it finds in DIR: saved_model.pb (or .pbtxt, .cpb),
 * fingerprint.pb, variables/variables.index and the data shards, the files under assets/
 * (an init op may read them); TF Serving's assets.extra/ sits beside them. Every entry under
 * DIR, at any depth, must therefore pass model_file.h's check before TensorFlow sees the
 * directory: a FIFO as variables.index once blocked the load forever inside TensorFlow. A
 * race remains between this check and TensorFlow's open, open only to whoever can write DIR
 * (who owns the model already). */
static int check_savedmodel_files(const char *dir, bd_error *err)
{
    /* where TensorFlow expects a file, a directory is refused too */
    static const char *const files[] = { "fingerprint.pb", "saved_model.pbtxt", "saved_model.cpb" };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof files / sizeof files[0]; i++)
        if ((rc = bd_model_file_check_in(dir, files[i], "SavedModel file", err)) == BD_ENOTFOUND)
            rc = 0;
    if (rc == 0 && (rc = bd_model_tree_check_in(dir, "variables", "SavedModel file", false,
                                                err)) == BD_ENOTFOUND)
        rc = 0;
    return rc ? rc : bd_model_tree_check_in(dir, ".", "SavedModel file", true, err);
}

/* The files the MetaGraphDef's AssetFileDefs name (ASSETS' spans), which TensorFlow's loader
 * feeds the init op as DIR/assets/<filename>: each a regular file inside DIR. A name the
 * file gives is hostile: "../../etc/passwd" would lead the init op out of DIR. */
static int check_asset_files(const char *dir, const tf_spans *assets, bd_error *err)
{
    int rc = 0;
    if (assets->n > BD_MAX_MODEL_FILES)
        return bd_error_set(err, BD_EMODEL, "the MetaGraphDef names %zu assets (at most %d)",
                            assets->n, BD_MAX_MODEL_FILES);
    for (size_t i = 0; rc == 0 && i < assets->n; i++) {
        tensorflow_AssetFileDef a;
        memset(&a, 0, sizeof a);
        rc = decode(&assets->v[i], tensorflow_AssetFileDef_fields, &a, "asset_file_def", err);
        char rel[PATH_MAX];
        if (rc == 0 && (!a.filename || !*a.filename))
            rc = bd_error_set(err, BD_EMODEL, "asset_file_def #%zu has no filename", i);
        else if (rc == 0 && (size_t)snprintf(rel, sizeof rel, "assets/%s", a.filename) >= sizeof rel)
            rc = bd_error_set(err, BD_EMODEL, "asset_file_def #%zu: filename too long", i);
        else if (rc == 0)
            rc = bd_model_file_check_in(dir, rel, "SavedModel asset", err);
        pb_release(tensorflow_AssetFileDef_fields, &a);
    }
    return rc;
}

int bd_tf_savedmodel_import(const char *dir, const char *signature, bd_tf_variable_reader read,
                            void *read_ctx, bd_graph **out, bd_error *err)
{
    if (!signature || !*signature)
        signature = "serving_default";
    int fd;
    int rc = bd_model_file_open_in(dir, "saved_model.pb", "SavedModel", 0, &fd, NULL, err);
    if (rc == BD_ENOTFOUND)
        return bd_error_set(err, BD_ENOTFOUND, "'%s' holds no saved_model.pb (not a SavedModel "
                            "directory)", dir);
    if (rc)
        return bd_error_prefix(err, "SavedModel '%s': ", dir);
    void *data = NULL;
    size_t len = 0;
    rc = bd_model_file_read_fd(fd, "saved_model.pb", &data, &len, err);
    close(fd);
    if (rc == 0 && len == 0)
        rc = bd_error_set(err, BD_EMODEL, "saved_model.pb is empty (0 bytes)");
    if (rc == 0)
        rc = check_savedmodel_files(dir, err);
    if (rc) {
        free(data);
        return bd_error_prefix(err, "SavedModel '%s': ", dir);
    }
    sm_ctx c = { .base = data, .len = len };
    c.g = bd_graph_create("main");
    if (!c.g) {
        free(data);
        return oom(err);
    }
    if (bd_graph_adopt_buffer(c.g, data)) {
        bd_graph_destroy(c.g);
        return oom(err);
    }
    bd_graph_set_framework(c.g, "tensorflow");
    bd_graph_set_platform(c.g, "tensorflow_savedmodel");
    tf_bytes graph_def = { 0 };
    tf_spans sigs, assets;
    bd_pb_spans_init(&sigs, c.base, c.len);
    bd_pb_spans_init(&assets, c.base, c.len);
    rc = meta_graph(&c, "serve", &graph_def, &sigs, &assets, err);
    if (rc == 0)
        rc = check_asset_files(dir, &assets, err);
    if (rc == 0)
        rc = signature_pick(&c, &sigs, signature, err);
    bd_pb_spans_free(&sigs);
    bd_pb_spans_free(&assets);
    if (rc == 0)
        rc = library_decode(&c, &graph_def, err);
    if (rc == 0)
        rc = main_nodes(&c, &graph_def, err);
    if (rc == 0)
        rc = prune(&c, err);            /* first: inline only what the signature reaches */
    if (rc == 0)
        rc = inline_all(&c, err);
    if (rc == 0)
        rc = prune(&c, err);
    if (rc == 0)
        rc = freeze(&c, read, read_ctx, err);
    if (rc == 0)
        rc = prune(&c, err);            /* the variables' handles are read by no one now */
    for (size_t i = 0; rc == 0 && i < c.n; i++)
        if (op_is(&c.v[i], "VarHandleOp"))
            rc = bd_error_set(err, BD_EUNSUPPORTED, "variable '%s' is used by an op braid cannot "
                              "freeze (only ReadVariableOp and ResourceGather read variables)",
                              c.v[i].name);
    if (rc == 0) {
        tf_signature sig = { .n_inputs = c.n_in, .n_outputs = c.n_out };
        sig.inputs = bd_graph_alloc(c.g, (c.n_in + c.n_out + 1) * sizeof *sig.inputs);
        if (!sig.inputs)
            rc = oom(err);
        else {
            sig.outputs = sig.inputs + c.n_in;
            for (size_t k = 0; k < c.n_in; k++)
                sig.inputs[k] = c.in[k].tensor;
            for (size_t k = 0; k < c.n_out; k++)
                sig.outputs[k] = c.out[k].tensor;
            rc = tf_translate(c.g, c.v, c.n, &sig, err);
        }
    }
    if (rc == 0)
        rc = rename_io(&c, err);
    if (rc == 0)
        rc = bd_graph_validate(c.g, err);
    free(c.v);
    free(c.depth);
    if (rc) {
        bd_graph_destroy(c.g);
        return bd_error_prefix(err, "SavedModel '%s': ", dir);
    }
    *out = c.g;
    return 0;
}
