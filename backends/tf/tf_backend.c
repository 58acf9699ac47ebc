/* The TensorFlow fallback engine's backend table (see tf_backend.h). */
#include "backends/tf/tf_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <unistd.h>
#include <string.h>

#include "backends/tf/tfb_dtype.h"
#include "backends/tf/tfb_probe.h"
#include "backends/tf/tfb_subgraph_def.h"
#include "backends/tf/tfb_runtime.h"
#include "backends/tf/tfb_session.h"
#include "backends/tf/tfb_variables.h"

struct bd_kernel {
    const tfb_lib *lib;
    tfb_session   *sess;          /* the model's shared session (one reference) */
    size_t           n_in, n_out;
    TF_Output       *feeds;         /* [n_in] */
    TF_Output       *fetches;       /* [n_out] */
    TF_DataType     *in_dt, *out_dt;
    size_t          *in_elem;       /* bytes per element of each input */
    const bd_value **in_v, **out_v; /* for messages (the plan's graph outlives the kernel) */
    const char      *first;         /* name of the subgraph's first node */
};

struct bd_kernel_ctx {
    const bd_kernel *k;
    TF_Status       *st;
    TF_Tensor      **in_t;          /* [n_in], live during run() only */
    const char     **in_lo, **in_hi;/* [n_in] input buffer ranges of the current run */
    TF_Tensor      **out_t;         /* [n_out], run-time-shaped outputs kept until next run */
    void           **copy;          /* [n_out] private copies (see run()) */
    size_t          *copy_cap;
    const void     **fed, **fetched;/* TF_TensorData of the last run's tensors (tfb_probe.h) */
};

/* Zero-sized tensors still need a non-NULL, aligned address on both sides. */
static _Alignas(64) char empty_buffer[64];

static void no_dealloc(void *data, size_t len, void *arg) { (void)data; (void)len; (void)arg; }

/* ---- supports ---------------------------------------------------------------------------- */

static bool tf_supports(const bd_graph *g, const bd_node *n, char *why, size_t why_len)
{
    /* Not ours to judge (another framework's graph, or a node braid created): leave WHY to
     * the backends that did look at it. */
    if (strcmp(bd_graph_framework(g), "tensorflow") != 0 || !n->origin)
        return false;
    bool mapped = strcmp(n->domain ? n->domain : "", "tf") != 0;
    if (mapped) {
        size_t k = 0;
        if (tfb_nodedef_data_inputs(n->origin, n->origin_len, &k, NULL) != 0 || k != n->n_inputs) {
            if (why_len && !why[0])
                snprintf(why, why_len, "TensorFlow fallback: its IR inputs differ from its NodeDef's");
            return false;
        }
    }
    char reason[256];
    if (!tfb_runtime_get(reason, sizeof reason)) {
        size_t used = why_len ? strlen(why) : 0;
        if (mapped && used && used + 2 < why_len)      /* keep oneDNN's reason first */
            snprintf(why + used, why_len - used, "; %s", reason);
        else if (why_len)
            snprintf(why, why_len, "%s", reason);
        return false;
    }
    return true;
}

/* ---- compile ----------------------------------------------------------------------------- */

static void tf_release(bd_kernel *k)
{
    if (!k)
        return;
    tfb_session_release(k->sess);
    free(k->feeds);
    free(k->fetches);
    free(k->in_dt);
    free(k->out_dt);
    free(k->in_elem);
    free(k->in_v);
    free(k->out_v);
    free(k);
}

/* The TF_Output holding value V in the session's graph, and its TF dtype. */
static int resolve(const bd_kernel *k, const tfb_graphdef *gd, const bd_value *v,
                   TF_Output *out, TF_DataType *dt, const char *role, bd_error *err)
{
    const char *op = v->index >= 0 && (size_t)v->index < gd->n_values ? gd->op_name[v->index] : NULL;
    if (!op)
        return bd_error_set(err, BD_EINVAL, "%s '%s' is not a tensor of the fallback graph",
                            role, v->name);
    TF_Operation *oper = k->lib->TF_GraphOperationByName(k->sess->graph, op);
    if (!oper)
        return bd_error_set(err, BD_EBACKEND, "tensorflow: the imported fallback graph has no "
                            "operation '%s' (for %s '%s')", op, role, v->name);
    int tf = tfb_dtype_from_ir(v->dtype);
    if (!tf || tf == TF_STRING)
        return bd_error_set(err, BD_EUNSUPPORTED, "%s '%s': dtype %s cannot cross into or out "
                            "of the TensorFlow fallback", role, v->name, bd_dtype_name(v->dtype));
    *out = (TF_Output){ oper, gd->out_index[v->index] };
    /* The importer guesses the dtype of an op it does not map; TensorFlow knows it. Catch a
     * wrong guess here, at plan time, rather than as a mismatch on every run. */
    TF_DataType real = k->lib->TF_OperationOutputType(*out);
    if ((int)real != tf) {
        int ir = tfb_dtype_to_ir(real);
        return bd_error_set(err, BD_EUNSUPPORTED, "%s '%s' (op '%s'): TensorFlow gives %s "
                            "(TF_DataType %d), braid's importer assumed %s; the importer needs "
                            "this op's output dtype", role, v->name, op,
                            ir ? bd_dtype_name(ir) : "a type braid does not map", (int)real,
                            bd_dtype_name(v->dtype));
    }
    *dt = (TF_DataType)tf;
    return 0;
}

/* TensorFlow rejected the fallback GraphDef: say which of NODES it is about. Its message names
 * a node as "{{node NAME}}" or an op type in quotes ("Op type not registered 'X'"); when
 * neither matches, every node is listed (the first few). */
static void name_rejected(bd_node *const *nodes, size_t n, bd_error *err)
{
    char list[256] = "", quoted[160];
    size_t named = 0, shown = 0;
    for (int pass = 0; pass < 2 && !named; pass++)
        for (size_t i = 0; i < n; i++) {
            snprintf(quoted, sizeof quoted, "'%s'", nodes[i]->op_type);
            char node[160];
            snprintf(node, sizeof node, "{{node %s}}", nodes[i]->name);
            if (pass == 0 && !strstr(err->msg, quoted) && !strstr(err->msg, node))
                continue;
            if (++named <= 4)
                shown += (size_t)snprintf(list + strlen(list), sizeof list - strlen(list),
                                          "%s'%s' (%s)", shown ? ", " : "", nodes[i]->name,
                                          nodes[i]->op_type) > 0;
        }
    if (named > shown)
        snprintf(list + strlen(list), sizeof list - strlen(list), " and %zu more", named - shown);
    bd_error_prefix(err, "TensorFlow rejects node%s %s: ", named == 1 ? "" : "s", list);
}


/* BRAID_TF_DUMP_DIR=DIR writes every fallback GraphDef braid hands TensorFlow to
 * DIR/fallback-<pid>-<n>.pb, for reading with TensorFlow's tools when it refuses one
 * (docs/tensorflow.md). Best effort: a failure to write is only logged to stderr. */
static void dump_graphdef(const tfb_graphdef *gd)
{
    static atomic_int seq;
    const char *dir = getenv("BRAID_TF_DUMP_DIR");
    if (!dir || !dir[0])
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/fallback-%ld-%d.pb", dir, (long)getpid(), atomic_fetch_add(&seq, 1));
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(gd->bytes, 1, gd->len, f) != gd->len)
        fprintf(stderr, "braid: BRAID_TF_DUMP_DIR: cannot write %s\n", path);
    else
        fprintf(stderr, "braid: wrote the TensorFlow fallback GraphDef to %s\n", path);
    if (f)
        fclose(f);
}

static int tf_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err)
{
    char why[256];
    const tfb_lib *lib = tfb_runtime_get(why, sizeof why);
    if (!lib)
        return bd_error_set(err, BD_EUNSUPPORTED, "%s", why);
    if (!sg->n_nodes)
        return bd_error_set(err, BD_EINVAL, "empty subgraph");
    bd_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    k->lib = lib;
    k->first = sg->nodes[0]->name;
    k->n_in = sg->n_inputs;
    k->n_out = sg->n_outputs;
    size_t ni = k->n_in ? k->n_in : 1, no = k->n_out ? k->n_out : 1;
    k->feeds   = calloc(ni, sizeof *k->feeds);
    k->in_dt   = calloc(ni, sizeof *k->in_dt);
    k->in_elem = calloc(ni, sizeof *k->in_elem);
    k->in_v    = calloc(ni, sizeof *k->in_v);
    k->fetches = calloc(no, sizeof *k->fetches);
    k->out_dt  = calloc(no, sizeof *k->out_dt);
    k->out_v   = calloc(no, sizeof *k->out_v);
    if (!k->feeds || !k->in_dt || !k->in_elem || !k->in_v || !k->fetches || !k->out_dt || !k->out_v) {
        tf_release(k);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }

    bd_node **nodes = NULL;
    size_t n_nodes = 0;
    tfb_graphdef gd;
    memset(&gd, 0, sizeof gd);
    int64_t producer = bd_graph_opset(sg->graph);
    if (strcmp(bd_graph_framework(sg->graph), "tensorflow") != 0 || producer <= 0 || producer > INT32_MAX)
        producer = BD_TFB_DEFAULT_PRODUCER;
    int rc = tfb_fallback_nodes(sg, &nodes, &n_nodes, err);
    if (rc == 0)
        rc = tfb_graphdef_build(sg->graph, nodes, n_nodes, (int)producer, &gd, err);
    if (rc == 0)
        dump_graphdef(&gd);
    if (rc == 0) {
        rc = tfb_session_acquire(lib, gd.bytes, gd.len, tfb_runtime_threads(), &k->sess, err);
        if (rc == BD_EINVAL)
            name_rejected(nodes, n_nodes, err);
    }
    free(nodes);
    for (size_t i = 0; rc == 0 && i < k->n_in; i++) {
        k->in_v[i] = sg->inputs[i];
        rc = resolve(k, &gd, sg->inputs[i], &k->feeds[i], &k->in_dt[i], "input", err);
        k->in_elem[i] = bd_dtype_size(sg->inputs[i]->dtype);
    }
    for (size_t i = 0; rc == 0 && i < k->n_out; i++) {
        k->out_v[i] = sg->outputs[i];
        rc = resolve(k, &gd, sg->outputs[i], &k->fetches[i], &k->out_dt[i], "output", err);
    }
    tfb_graphdef_free(&gd);
    if (rc) {
        tf_release(k);
        return rc;
    }
    *out = k;
    return 0;
}

/* ---- contexts and runs ------------------------------------------------------------------- */

static void drop_outputs(bd_kernel_ctx *c)
{
    for (size_t i = 0; i < c->k->n_out; i++) {
        c->k->lib->TF_DeleteTensor(c->out_t[i]);
        c->out_t[i] = NULL;
    }
}

static void tf_ctx_destroy(bd_kernel_ctx *c)
{
    if (!c)
        return;
    if (c->out_t)
        drop_outputs(c);
    if (c->st)
        c->k->lib->TF_DeleteStatus(c->st);
    for (size_t i = 0; c->copy && i < c->k->n_out; i++)
        free(c->copy[i]);
    free(c->copy);
    free(c->copy_cap);
    free(c->fed);
    free(c->fetched);
    free(c->in_t);
    free(c->in_lo);
    free(c->in_hi);
    free(c->out_t);
    free(c);
}

static int tf_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    bd_kernel_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    c->k = k;
    size_t ni = k->n_in ? k->n_in : 1, no = k->n_out ? k->n_out : 1;
    c->st       = k->lib->TF_NewStatus();
    c->in_t     = calloc(ni, sizeof *c->in_t);
    c->in_lo    = calloc(ni, sizeof *c->in_lo);
    c->in_hi    = calloc(ni, sizeof *c->in_hi);
    c->out_t    = calloc(no, sizeof *c->out_t);
    c->copy     = calloc(no, sizeof *c->copy);
    c->copy_cap = calloc(no, sizeof *c->copy_cap);
    c->fed      = calloc(ni, sizeof *c->fed);
    c->fetched  = calloc(no, sizeof *c->fetched);
    if (!c->st || !c->in_t || !c->in_lo || !c->in_hi || !c->out_t || !c->copy || !c->copy_cap ||
        !c->fed || !c->fetched) {
        tf_ctx_destroy(c);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    *out = c;
    return 0;
}

static void delete_inputs(bd_kernel_ctx *c)
{
    for (size_t i = 0; i < c->k->n_in; i++) {
        c->k->lib->TF_DeleteTensor(c->in_t[i]);
        c->in_t[i] = NULL;
    }
}

static int wrap_inputs(bd_kernel_ctx *c, const DLTensor *in, bd_error *err)
{
    const bd_kernel *k = c->k;
    for (size_t i = 0; i < k->n_in; i++) {
        if (in[i].ndim < 0 || in[i].ndim > BD_MAX_RANK)
            return bd_error_set(err, BD_EINVAL, "input '%s': rank %d", k->in_v[i]->name, in[i].ndim);
        size_t numel = 1;
        for (int d = 0; d < in[i].ndim; d++)
            numel *= in[i].shape[d] > 0 ? (size_t)in[i].shape[d] : 0;
        size_t bytes = numel * k->in_elem[i];
        char *data = bytes ? (char *)in[i].data + in[i].byte_offset : empty_buffer;
        c->in_lo[i] = data;
        c->in_hi[i] = data + bytes;
        c->in_t[i] = k->lib->TF_NewTensor(k->in_dt[i], in[i].shape, in[i].ndim, data, bytes,
                                          no_dealloc, NULL);
        if (!c->in_t[i])
            return bd_error_set(err, BD_EBACKEND, "tensorflow: TF_NewTensor refused input '%s' "
                                "(%zu bytes)", k->in_v[i]->name, bytes);
        c->fed[i] = k->lib->TF_TensorData(c->in_t[i]);
    }
    return 0;
}

static bool aliases_input(const bd_kernel_ctx *c, const char *p, size_t n)
{
    for (size_t i = 0; i < c->k->n_in; i++)
        if (n && p < c->in_hi[i] && p + n > c->in_lo[i])
            return true;
    return false;
}

static int take_output(bd_kernel_ctx *c, size_t i, DLTensor *o, bd_error *err)
{
    const bd_kernel *k = c->k;
    const tfb_lib *lib = k->lib;
    TF_Tensor *t = c->out_t[i];
    const char *name = k->out_v[i]->name;
    if (lib->TF_TensorType(t) != k->out_dt[i])
        return bd_error_set(err, BD_EBACKEND, "tensorflow: output '%s' came back as TF_DataType "
                            "%d, expected %d", name, (int)lib->TF_TensorType(t), (int)k->out_dt[i]);
    int nd = lib->TF_NumDims(t);
    size_t bytes = lib->TF_TensorByteSize(t);
    const char *data = lib->TF_TensorData(t);
    c->fetched[i] = data;
    if (nd < 0 || nd > BD_MAX_RANK)
        return bd_error_set(err, BD_EUNSUPPORTED, "output '%s' has rank %d (braid allows %d)",
                            name, nd, BD_MAX_RANK);
    if (o->data) {                              /* static shape: copy into the caller's buffer */
        bool same = nd == o->ndim;
        for (int d = 0; same && d < nd; d++)
            same = lib->TF_Dim(t, d) == o->shape[d];
        size_t want = bd_dtype_size(k->out_v[i]->dtype);
        for (int d = 0; d < o->ndim; d++)
            want *= (size_t)o->shape[d];
        if (!same || bytes != want) {
            char got[128] = "[";
            for (int d = 0; d < nd; d++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "," : "",
                         (long long)lib->TF_Dim(t, d));
            strncat(got, "]", sizeof got - strlen(got) - 1);
            char exp[96];
            return bd_error_set(err, BD_EBACKEND, "tensorflow: output '%s' has shape %s, the "
                                "plan expects %s", name, got,
                                bd_shape_str(&k->out_v[i]->shape, exp, sizeof exp));
        }
        if (bytes)
            memcpy((char *)o->data + o->byte_offset, data, bytes);
        lib->TF_DeleteTensor(t);
        c->out_t[i] = NULL;
        return 0;
    }
    /* run-time shape: hand TensorFlow's buffer over, kept alive until the next run */
    o->ndim = nd;
    for (int d = 0; d < nd; d++)
        o->shape[d] = lib->TF_Dim(t, d);
    o->byte_offset = 0;
    o->strides = NULL;
    if (!bytes || !data) {
        o->data = empty_buffer;
    } else if (aliases_input(c, data, bytes)) {
        /* e.g. Identity of a fed tensor: a view of braid's input buffer, which a later step
         * may overwrite while this output is still live. */
        if (c->copy_cap[i] < bytes) {
            void *p = realloc(c->copy[i], bytes);
            if (!p)
                return bd_error_set(err, BD_ENOMEM, "out of memory copying output '%s'", name);
            c->copy[i] = p;
            c->copy_cap[i] = bytes;
        }
        memcpy(c->copy[i], data, bytes);
        o->data = c->copy[i];
    } else {
        o->data = (void *)data;
    }
    return 0;
}

static int tf_run(bd_kernel_ctx *c, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
                  bd_error *err)
{
    const bd_kernel *k = c->k;
    const tfb_lib *lib = k->lib;
    if (n_in != k->n_in || n_out != k->n_out)
        return bd_error_set(err, BD_EINVAL, "fallback step from '%s': %zu inputs and %zu outputs "
                            "given, %zu and %zu expected", k->first, n_in, n_out, k->n_in, k->n_out);
    drop_outputs(c);
    int rc = wrap_inputs(c, in, err);
    if (rc == 0) {
        lib->TF_SessionRun(k->sess->session, NULL, k->feeds, c->in_t, (int)k->n_in,
                           k->fetches, c->out_t, (int)k->n_out, NULL, 0, NULL, c->st);
        rc = tfb_check(lib, c->st, err, "running the fallback step");
        if (rc)
            bd_error_prefix(err, "step from '%s': ", k->first);
    }
    for (size_t i = 0; rc == 0 && i < k->n_out; i++)
        if (!c->out_t[i])
            rc = bd_error_set(err, BD_EBACKEND, "tensorflow: no tensor returned for output '%s'",
                              k->out_v[i]->name);
    for (size_t i = 0; rc == 0 && i < k->n_out; i++)
        rc = take_output(c, i, &out[i], err);
    delete_inputs(c);           /* after the outputs: one may be a view of an input */
    if (rc)
        drop_outputs(c);
    return rc;
}

/* ---- public knobs ------------------------------------------------------------------------ */

static int tf_configure(const bd_engine_config *cfg, bd_error *err)
{
    return tfb_runtime_configure(cfg->library, cfg->threads, err);
}

bool bd_tf_available(char *why, size_t why_len)
{
    return tfb_runtime_get(why, why_len) != NULL;
}

const char *bd_tf_version(void)
{
    const tfb_lib *lib = tfb_runtime_get(NULL, 0);
    return lib ? lib->version : NULL;
}

const bd_backend bd_tf_backend = {
    .name        = "tf",
    .kind        = BD_ENGINE_FALLBACK,
    .configure   = tf_configure,
    .supports    = tf_supports,
    .compile     = tf_compile,
    .ctx_create  = tf_ctx_create,
    .run         = tf_run,
    .ctx_destroy = tf_ctx_destroy,
    .release     = tf_release,
    .read_variables = tfb_read_variables,
};

/* ---- observables for the tests (tfb_probe.h) ---------------------------------------------- */

const void *tfb_ctx_fed_data(const bd_kernel_ctx *c, size_t i)
{
    return i < c->k->n_in ? c->fed[i] : NULL;
}

const void *tfb_ctx_fetched_data(const bd_kernel_ctx *c, size_t i)
{
    return i < c->k->n_out ? c->fetched[i] : NULL;
}
