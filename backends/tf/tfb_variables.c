/* A SavedModel's variables read by TensorFlow (tfb_variables.h). */
#include "backends/tf/tfb_variables.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/tf/tfb_dtype.h"
#include "backends/tf/tfb_runtime.h"

/* The C API beyond the engine's own table (tf_api.h), resolved from the same library when a
 * SavedModel is read. Declarations from tensorflow/c/c_api.h. */
typedef struct TF_OperationDescription TF_OperationDescription;
typedef TF_Session *fn_load(const TF_SessionOptions *, const TF_Buffer *run_options,
                            const char *export_dir, const char *const *tags, int tags_len,
                            TF_Graph *, TF_Buffer *meta_graph_def, TF_Status *);
typedef TF_OperationDescription *fn_new_op(TF_Graph *, const char *op_type, const char *name);
typedef void fn_add_input(TF_OperationDescription *, TF_Output);
typedef void fn_set_type(TF_OperationDescription *, const char *attr, TF_DataType);
typedef TF_Operation *fn_finish(TF_OperationDescription *, TF_Status *);
typedef const char *fn_op_type(TF_Operation *);

typedef struct sm_api {
    fn_load      *load;
    fn_new_op    *new_op;
    fn_add_input *add_input;
    fn_set_type  *set_type;
    fn_finish    *finish;
    fn_op_type   *op_type;
} sm_api;

static int resolve(const tfb_lib *lib, sm_api *a, bd_error *err)
{
    static const char *names[] = { "TF_LoadSessionFromSavedModel", "TF_NewOperation", "TF_AddInput",
                                   "TF_SetAttrType", "TF_FinishOperation", "TF_OperationOpType" };
    void *p[6];
    for (size_t i = 0; i < 6; i++)
        if (!(p[i] = dlsym(lib->handle, names[i])))
            return bd_error_set(err, BD_EUNSUPPORTED, "%s at %s lacks %s (needed to read a "
                                "SavedModel's variables)", BD_TF_LIBRARY_NAME, lib->path, names[i]);
    /* POSIX guarantees dlsym's object pointers convert to function pointers. */
    memcpy(&a->load, &p[0], sizeof p[0]);
    memcpy(&a->new_op, &p[1], sizeof p[1]);
    memcpy(&a->add_input, &p[2], sizeof p[2]);
    memcpy(&a->set_type, &p[3], sizeof p[3]);
    memcpy(&a->finish, &p[4], sizeof p[4]);
    memcpy(&a->op_type, &p[5], sizeof p[5]);
    return 0;
}

/* Copy the fetched tensor T into X (checked against what the graph declared). */
static int take(const tfb_lib *lib, const TF_Tensor *t, bd_saved_variable *x, bd_error *err)
{
    if (!t)
        return bd_error_set(err, BD_EBACKEND, "tensorflow returned no value for variable '%s'", x->node);
    int dt = tfb_dtype_to_ir((int)lib->TF_TensorType(t));
    if (dt != x->dtype)
        return bd_error_set(err, BD_EMODEL, "variable '%s': TensorFlow holds type %d, the graph "
                            "declares another", x->node, (int)lib->TF_TensorType(t));
    int rank = lib->TF_NumDims(t);
    if (rank < 0 || rank > BD_MAX_RANK)
        return bd_error_set(err, BD_EUNSUPPORTED, "variable '%s' has rank %d (braid's limit: %d)",
                            x->node, rank, BD_MAX_RANK);
    x->shape.rank = rank;
    for (int d = 0; d < rank; d++)
        x->shape.dims[d] = lib->TF_Dim(t, d);
    size_t n = lib->TF_TensorByteSize(t);
    void *copy = aligned_alloc(64, n ? (n + 63) & ~(size_t)63 : 64);
    if (!copy)
        return bd_error_set(err, BD_ENOMEM, "out of memory for variable '%s' (%zu bytes)", x->node, n);
    if (n)
        memcpy(copy, lib->TF_TensorData(t), n);
    x->data = copy;
    x->nbytes = n;
    return 0;
}

/* Add op TYPE ("ReadVariableOp" with DTYPE, or "VarIsInitializedOp" when DTYPE < 0) reading
 * resource HANDLE to GRAPH under a name the model does not use. */
static TF_Operation *add_reader(const tfb_lib *lib, const sm_api *api, TF_Graph *graph,
                                const char *type, TF_Operation *handle, int dtype, size_t i,
                                TF_Status *st)
{
    char name[64];
    for (unsigned s = 0;; s++) {
        snprintf(name, sizeof name, "braid_%s/%zu_%u", type, i, s);
        if (!lib->TF_GraphOperationByName(graph, name))
            break;
    }
    TF_OperationDescription *d = api->new_op(graph, type, name);
    api->add_input(d, (TF_Output){ handle, 0 });
    if (dtype >= 0)
        api->set_type(d, "dtype", (TF_DataType)dtype);
    return api->finish(d, st);
}

/* Which node holds each variable's value after the restore: VARS[i].node, or when that one
 * is a resource the saver left uninitialized, VARS[i].restored (core/backend.h). */
static int pick_restored(const tfb_lib *lib, const sm_api *api, TF_Graph *graph, TF_Session *sess,
                         bd_saved_variable *vars, size_t n, const char **use, TF_Status *st,
                         bd_error *err)
{
    size_t m = 0;
    TF_Output *fetch = calloc(n ? n : 1, sizeof *fetch);
    TF_Tensor **vals = calloc(n ? n : 1, sizeof *vals);
    size_t *which = calloc(n ? n : 1, sizeof *which);
    int rc = fetch && vals && which ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        use[i] = vars[i].node;
        TF_Operation *op = lib->TF_GraphOperationByName(graph, vars[i].node);
        if (!vars[i].restored || !op || strcmp(api->op_type(op), "VarHandleOp") ||
            !lib->TF_GraphOperationByName(graph, vars[i].restored))
            continue;
        TF_Operation *init = add_reader(lib, api, graph, "VarIsInitializedOp", op, -1, i, st);
        if (lib->TF_GetCode(st) != TF_OK || !init)
            rc = bd_error_set(err, BD_EMODEL, "variable '%s': %s", vars[i].node, lib->TF_Message(st));
        else {
            fetch[m] = (TF_Output){ init, 0 };
            which[m++] = i;
        }
    }
    if (rc == 0 && m) {
        lib->TF_SessionRun(sess, NULL, NULL, NULL, 0, fetch, vals, (int)m, NULL, 0, NULL, st);
        if (lib->TF_GetCode(st) != TF_OK)
            rc = bd_error_set(err, BD_EMODEL, "TensorFlow cannot tell which of the SavedModel's "
                              "variables it restored: %s", lib->TF_Message(st));
    }
    for (size_t k = 0; rc == 0 && k < m; k++) {
        const unsigned char *b = vals[k] && lib->TF_TensorByteSize(vals[k]) >= 1 ?
                                 lib->TF_TensorData(vals[k]) : NULL;
        if (b && !*b)
            use[which[k]] = vars[which[k]].restored;
    }
    for (size_t k = 0; vals && k < m; k++)
        if (vals[k])
            lib->TF_DeleteTensor(vals[k]);
    free(fetch);
    free(vals);
    free(which);
    return rc;
}

int tfb_read_variables(const char *dir, const char *tag, bd_saved_variable *vars, size_t n,
                       bd_error *err)
{
    char why[400];
    const tfb_lib *lib = tfb_runtime_get(why, sizeof why);
    if (!lib)
        return bd_error_set(err, BD_EUNSUPPORTED, "a SavedModel's variables are read by TensorFlow, "
                            "which braid could not load (%s). Install it with scripts/fetch_tf.sh "
                            "(or scripts/setup.sh): a tensorflow-cpu venv in ~/.cache/braid/tf-venv, "
                            "found there by default; elsewhere point BRAID_LIBTENSORFLOW (or "
                            "--tf-library / tf_library) at its libtensorflow_cc.so.2", why);
    sm_api api = { 0 };
    int rc = resolve(lib, &api, err);
    if (rc)
        return rc;
    if (n > INT_MAX / 2)
        return bd_error_set(err, BD_EMODEL, "the SavedModel has %zu variables", n);
    TF_Status *st = lib->TF_NewStatus();
    TF_Graph *graph = lib->TF_NewGraph();
    TF_SessionOptions *opts = lib->TF_NewSessionOptions();
    TF_Output *fetch = calloc(n ? n : 1, sizeof *fetch);
    TF_Tensor **vals = calloc(n ? n : 1, sizeof *vals);
    const char **use = calloc(n ? n : 1, sizeof *use);
    TF_Session *sess = NULL;
    if (!st || !graph || !opts || !fetch || !vals || !use)
        rc = bd_error_set(err, BD_ENOMEM, "out of memory reading a SavedModel's variables");
    if (rc == 0) {
        sess = api.load(opts, NULL, dir, &tag, 1, graph, NULL, st);
        if (lib->TF_GetCode(st) != TF_OK || !sess)
            rc = bd_error_set(err, BD_EINVAL, "TensorFlow cannot load the SavedModel: %s",
                              lib->TF_Message(st));
    }
    if (rc == 0)
        rc = pick_restored(lib, &api, graph, sess, vars, n, use, st, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        TF_Operation *op = lib->TF_GraphOperationByName(graph, use[i]);
        if (!op) {
            rc = bd_error_set(err, BD_EMODEL, "variable '%s' is not in the graph TensorFlow loaded",
                              vars[i].node);
            break;
        }
        fetch[i] = (TF_Output){ op, 0 };
        if (strcmp(api.op_type(op), "VarHandleOp"))
            continue;                             /* VariableV2: its output is the value */
        TF_Operation *read = add_reader(lib, &api, graph, "ReadVariableOp", op,
                                        tfb_dtype_from_ir(vars[i].dtype), i, st);
        if (lib->TF_GetCode(st) != TF_OK || !read)
            rc = bd_error_set(err, BD_EMODEL, "variable '%s': cannot read it: %s", vars[i].node,
                              lib->TF_Message(st));
        else
            fetch[i] = (TF_Output){ read, 0 };
    }
    if (rc == 0 && n) {
        lib->TF_SessionRun(sess, NULL, NULL, NULL, 0, fetch, vals, (int)n, NULL, 0, NULL, st);
        if (lib->TF_GetCode(st) != TF_OK)
            rc = bd_error_set(err, BD_EINVAL, "TensorFlow cannot read the SavedModel's variables: %s",
                              lib->TF_Message(st));
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = take(lib, vals[i], &vars[i], err);
    if (rc)
        for (size_t i = 0; i < n; i++) {
            free(vars[i].data);
            vars[i].data = NULL;
        }
    for (size_t i = 0; vals && i < n; i++)
        if (vals[i])
            lib->TF_DeleteTensor(vals[i]);
    if (sess) {
        TF_Status *s2 = lib->TF_NewStatus();
        lib->TF_CloseSession(sess, s2);
        lib->TF_DeleteSession(sess, s2);
        lib->TF_DeleteStatus(s2);
    }
    if (graph)
        lib->TF_DeleteGraph(graph);
    if (opts)
        lib->TF_DeleteSessionOptions(opts);
    if (st)
        lib->TF_DeleteStatus(st);
    free(fetch);
    free(vals);
    free(use);
    return rc;
}
