/* The ONNX Runtime engine's backend table (see ort_backend.h). */
#include "backends/ort/ort_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ort/ort_internal.h"
#include "backends/ort/ort_runtime.h"
#include "backends/ort/ort_serialize.h"
#include "backends/ort/ort_session.h"

struct bd_kernel {
    const ort_runtime *rt;
    ort_session       *session;
    OrtSession           *ort;
    size_t                n_in, n_out;
    size_t                n_fed;         /* constants fed after the inputs (ort_serialize.h) */
    const bd_value      **fed;
    char                **in_names, **out_names;   /* in_names: n_in + n_fed */
    int                  *in_dtype, *out_dtype;
    bool                 *out_static;    /* shape known at compile: caller's buffer is bound */
    char                  where[192];    /* "node 'x' (op TopK)": the subgraph's first node */
};

/* An OrtValue and the buffer/shape it was made for (remade only when those change). */
typedef struct wrapped {
    OrtValue *v;
    void     *data;
    int       ndim;
    int64_t   dims[BD_MAX_RANK];
} wrapped;

struct bd_kernel_ctx {
    const bd_kernel *k;
    wrapped         *in, *out;      /* out[i].v: a wrapper, or ORT's value for run-time shapes */
    OrtValue       **run_in, **run_out;
};

/* ---- configuration ------------------------------------------------------------------ */

static int ort_configure(const bd_engine_config *cfg, bd_error *err)
{
    return ort_runtime_configure(cfg->library, cfg->threads, err);
}

bool bd_ort_available(char *why, size_t why_len)
{
    return ort_runtime_get(why, why_len) != NULL;
}

const char *bd_ort_version(void)
{
    const ort_runtime *rt = ort_runtime_get(NULL, 0);
    return rt ? rt->version : NULL;
}

/* ---- supports ------------------------------------------------------------------------ */

static bool known_domain(const char *d)
{
    static const char *const domains[] = { "", "ai.onnx", "ai.onnx.ml", "com.microsoft" };
    for (size_t i = 0; i < sizeof domains / sizeof domains[0]; i++)
        if (strcmp(d, domains[i]) == 0)
            return true;
    return false;
}

static bool refuse(char *why, size_t len, const char *fmt, const char *arg)
    __attribute__((format(printf, 3, 0)));
static bool refuse(char *why, size_t len, const char *fmt, const char *arg)
{
    if (why && len)
        snprintf(why, len, fmt, arg);
    return false;
}

static bool ort_supports(const bd_graph *g, const bd_node *n, char *why, size_t len)
{
    const char *fw = bd_graph_framework(g);
    const char *domain = n->domain ? n->domain : "";
    if (strcmp(fw, "onnx") != 0)
        return refuse(why, len, "graph framework '%s' (onnxruntime runs ONNX graphs)", fw);
    if (strcmp(domain, "braid") == 0 || n->composite || n->n_post > 0)
        return refuse(why, len, "braid composite %s (onnxruntime runs original ONNX nodes)",
                      n->composite ? n->composite : n->op_type);
    if (!known_domain(domain))
        return refuse(why, len, "domain '%s' is not an onnxruntime domain", domain);
    for (size_t i = 0; i < n->n_attrs; i++)
        if ((n->attrs[i].type == BD_ATTR_GRAPH && !n->attrs[i].graph) ||
            n->attrs[i].type < BD_ATTR_FLOAT || n->attrs[i].type > BD_ATTR_STRINGS)
            return refuse(why, len, "attribute '%s' (no subgraph bytes, or an unknown type)",
                          n->attrs[i].name);
    for (size_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
        const bd_value *v = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
        if (v && (v->dtype == BD_DT_STRING || (v->dtype != BD_DT_UNDEFINED && bd_dtype_size(v->dtype) == 0)))
            return refuse(why, len, "tensor '%s' has a dtype braid cannot pass (string/complex)", v->name);
    }
    return ort_runtime_get(why, len) != NULL;
}

/* ---- compile / release --------------------------------------------------------------- */

static void ort_release(bd_kernel *k)
{
    if (!k)
        return;
    for (size_t i = 0; k->in_names && i < k->n_in + k->n_fed; i++)
        free(k->in_names[i]);
    for (size_t i = 0; k->out_names && i < k->n_out; i++)
        free(k->out_names[i]);
    free(k->in_names);
    free(k->out_names);
    free(k->in_dtype);
    free(k->out_dtype);
    free(k->out_static);
    free(k->fed);
    ort_session_release(k->session);
    free(k);
}

/* Remember the constants MODEL has as extra inputs: their names follow the boundary inputs'. */
static int keep_fed(bd_kernel *k, const ort_model *model, bd_error *err)
{
    char **names = realloc(k->in_names, (k->n_in + model->n_fed + 1) * sizeof *names);
    if (names)
        k->in_names = names;
    k->fed = calloc(model->n_fed, sizeof *k->fed);
    if (!names || !k->fed)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    for (size_t i = 0; i < model->n_fed; i++) {
        k->in_names[k->n_in + i] = NULL;
        k->fed[i] = model->fed[i];
    }
    for (size_t i = 0; i < model->n_fed; i++, k->n_fed++)
        if (!(k->in_names[k->n_in + i] = strdup(model->fed[i]->name)))
            return bd_error_set(err, BD_ENOMEM, "out of memory");
    return 0;
}

static int ort_compile(const bd_subgraph *sg, bd_kernel **out, bd_error *err)
{
    if (sg->n_nodes == 0)
        return bd_error_set(err, BD_EINVAL, "onnxruntime: empty subgraph");
    char why[256];
    const ort_runtime *rt = ort_runtime_get(why, sizeof why);
    if (!rt)
        return bd_error_set(err, BD_EUNSUPPORTED, "%s", why);
    bd_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    k->rt = rt;
    snprintf(k->where, sizeof k->where, "node '%s' (op %s)", sg->nodes[0]->name, sg->nodes[0]->op_type);
    k->n_in = sg->n_inputs;
    k->n_out = sg->n_outputs;
    k->in_names = calloc(k->n_in + 1, sizeof *k->in_names);
    k->out_names = calloc(k->n_out + 1, sizeof *k->out_names);
    k->in_dtype = calloc(k->n_in + 1, sizeof *k->in_dtype);
    k->out_dtype = calloc(k->n_out + 1, sizeof *k->out_dtype);
    k->out_static = calloc(k->n_out + 1, sizeof *k->out_static);
    int rc = (!k->in_names || !k->out_names || !k->in_dtype || !k->out_dtype || !k->out_static)
                 ? bd_error_set(err, BD_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; i < k->n_in && !rc; i++) {
        k->in_dtype[i] = sg->inputs[i]->dtype;
        if (!(k->in_names[i] = strdup(sg->inputs[i]->name)))
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < k->n_out && !rc; i++) {
        k->out_dtype[i] = sg->outputs[i]->dtype;
        k->out_static[i] = bd_shape_is_static(&sg->outputs[i]->shape);
        if (!(k->out_names[i] = strdup(sg->outputs[i]->name)))
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    ort_model model = { 0 };
    if (!rc)
        rc = ort_serialize(sg, NULL, &model, err);
    if (!rc && model.n_fed)
        rc = keep_fed(k, &model, err);
    if (!rc)
        rc = ort_session_acquire(rt, &model, ort_runtime_threads(), &k->session, err);
    ort_model_free(&model);
    if (rc) {
        bd_error_prefix(err, "subgraph at %s: ", k->where);
        ort_release(k);
        return rc;
    }
    k->ort = ort_session_handle(k->session);
    *out = k;
    return 0;
}

/* ---- contexts and runs --------------------------------------------------------------- */

static void ort_ctx_destroy(bd_kernel_ctx *c)
{
    if (!c)
        return;
    const OrtApi *api = c->k->rt->api;
    for (size_t i = 0; c->in && i < c->k->n_in + c->k->n_fed; i++)
        api->ReleaseValue(c->in[i].v);
    for (size_t i = 0; c->out && i < c->k->n_out; i++)
        api->ReleaseValue(c->out[i].v);
    free(c->in);
    free(c->out);
    free(c->run_in);
    free(c->run_out);
    free(c);
}

static int wrap(const bd_kernel *k, wrapped *w, const DLTensor *t, int dtype, const char *name,
                bd_error *err);

static int ort_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    bd_kernel_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    c->k = k;
    c->in = calloc(k->n_in + k->n_fed + 1, sizeof *c->in);
    c->out = calloc(k->n_out + 1, sizeof *c->out);
    c->run_in = calloc(k->n_in + k->n_fed + 1, sizeof *c->run_in);
    c->run_out = calloc(k->n_out + 1, sizeof *c->run_out);
    if (!c->in || !c->out || !c->run_in || !c->run_out) {
        ort_ctx_destroy(c);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    /* Fed constants are wrapped once: their bytes never move (ORT only reads inputs). */
    for (size_t i = 0; i < k->n_fed; i++) {
        const bd_value *v = k->fed[i];
        DLTensor t = { .data = (void *)v->data, .ndim = v->shape.rank,
                       .shape = (int64_t *)v->shape.dims, .device = { kDLCPU, 0 } };
        int rc = wrap(k, &c->in[k->n_in + i], &t, v->dtype, v->name, err);
        if (rc) {
            ort_ctx_destroy(c);
            return rc;
        }
        c->run_in[k->n_in + i] = c->in[k->n_in + i].v;
    }
    *out = c;
    return 0;
}

/* Make W an OrtValue over T's buffer (no copy), reusing the last one when the buffer and
 * shape are unchanged. */
static int wrap(const bd_kernel *k, wrapped *w, const DLTensor *t, int dtype, const char *name,
                bd_error *err)
{
    static char empty;                  /* stands in for the buffer of a 0-element tensor */
    const OrtApi *api = k->rt->api;
    if (t->ndim < 0 || t->ndim > BD_MAX_RANK)
        return bd_error_set(err, BD_EINVAL, "subgraph at %s: onnxruntime: tensor '%s' has rank %d "
                            "(at most %d)", k->where, name, t->ndim, BD_MAX_RANK);
    void *data = t->data ? (char *)t->data + t->byte_offset : NULL;
    if (w->v && w->data == data && w->ndim == t->ndim &&
        (t->ndim == 0 || memcmp(w->dims, t->shape, (size_t)t->ndim * sizeof *t->shape) == 0))
        return 0;
    api->ReleaseValue(w->v);
    w->v = NULL;
    size_t n = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < 0)
            return bd_error_set(err, BD_EINVAL, "subgraph at %s: onnxruntime: tensor '%s' has a "
                                "negative dim", k->where, name);
        n *= (size_t)t->shape[d];
        w->dims[d] = t->shape[d];
    }
    size_t nbytes = n * bd_dtype_size(dtype);
    if (!data && nbytes)
        return bd_error_set(err, BD_EINVAL, "subgraph at %s: onnxruntime: tensor '%s' has no buffer",
                            k->where, name);
    int rc = ort_check(api, api->CreateTensorWithDataAsOrtValue(k->rt->cpu, data ? data : &empty,
                                                                nbytes, w->dims, (size_t)t->ndim,
                                                                (ONNXTensorElementDataType)dtype,
                                                                &w->v),
                       err, name);
    if (rc)
        return bd_error_prefix(err, "subgraph at %s: ", k->where);
    w->data = data;
    w->ndim = t->ndim;
    return 0;
}

/* Hand ORT's value for a run-time-shaped output to the caller through T. */
static int adopt(const bd_kernel *k, size_t i, OrtValue *v, DLTensor *t, bd_error *err)
{
    const OrtApi *api = k->rt->api;
    OrtTensorTypeAndShapeInfo *info = NULL;
    ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0;
    void *data = NULL;
    const char *name = k->out_names[i];
    int rc = ort_check(api, api->GetTensorTypeAndShape(v, &info), err, name);
    if (!rc)
        rc = ort_check(api, api->GetTensorElementType(info, &et), err, name);
    if (!rc)
        rc = ort_check(api, api->GetDimensionsCount(info, &rank), err, name);
    if (!rc && rank > BD_MAX_RANK)
        rc = bd_error_set(err, BD_EUNSUPPORTED, "onnxruntime: output '%s' has rank %zu (at most %d)", name, rank,
                          BD_MAX_RANK);
    if (!rc)
        rc = ort_check(api, api->GetDimensions(info, t->shape, rank), err, name);
    api->ReleaseTensorTypeAndShapeInfo(info);
    if (!rc && (int)et != k->out_dtype[i])
        rc = bd_error_set(err, BD_EBACKEND, "onnxruntime: output '%s' came back as %s, expected %s", name,
                          bd_dtype_name((int)et), bd_dtype_name(k->out_dtype[i]));
    if (!rc)
        rc = ort_check(api, api->GetTensorMutableData(v, &data), err, name);
    if (rc)
        return bd_error_prefix(err, "subgraph at %s: ", k->where);
    t->data = data;
    t->ndim = (int)rank;
    t->byte_offset = 0;
    t->strides = NULL;
    return 0;
}

static int ort_run(bd_kernel_ctx *c, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
                   bd_error *err)
{
    const bd_kernel *k = c->k;
    const OrtApi *api = k->rt->api;
    if (n_in != k->n_in || n_out != k->n_out)
        return bd_error_set(err, BD_EINVAL, "subgraph at %s: onnxruntime: got %zu inputs and %zu "
                            "outputs, compiled for %zu and %zu", k->where, n_in, n_out, k->n_in, k->n_out);
    for (size_t i = 0; i < n_in; i++) {
        int rc = wrap(k, &c->in[i], &in[i], k->in_dtype[i], k->in_names[i], err);
        if (rc)
            return rc;
        c->run_in[i] = c->in[i].v;
    }
    for (size_t i = 0; i < n_out; i++) {
        if (k->out_static[i]) {
            int rc = wrap(k, &c->out[i], &out[i], k->out_dtype[i], k->out_names[i], err);
            if (rc)
                return rc;
            c->run_out[i] = c->out[i].v;       /* ORT writes into the caller's buffer */
        } else {
            api->ReleaseValue(c->out[i].v);     /* the previous run's result */
            c->out[i] = (wrapped){ 0 };
            c->run_out[i] = NULL;               /* ORT allocates it */
        }
    }
    OrtStatus *st = api->Run(k->ort, NULL, (const char *const *)k->in_names,
                             (const OrtValue *const *)c->run_in, n_in + k->n_fed,
                             (const char *const *)k->out_names, n_out, c->run_out);
    int rc = ort_check(api, st, err, "run");
    for (size_t i = 0; i < n_out; i++) {
        if (k->out_static[i])
            continue;
        c->out[i].v = c->run_out[i];            /* kept alive until the next run */
        if (!rc && !c->out[i].v)
            rc = bd_error_set(err, BD_EBACKEND, "onnxruntime: output '%s' was not produced",
                              k->out_names[i]);
        if (!rc)
            rc = adopt(k, i, c->out[i].v, &out[i], err);
    }
    if (rc && !strstr(err ? err->msg : "", k->where))
        bd_error_prefix(err, "subgraph at %s: ", k->where);
    return rc;
}

/* ---- test hooks (ort_internal.h) ------------------------------------------------------ */

const void *ort_kernel_session(const bd_kernel *k) { return k->ort; }
size_t      ort_cached_sessions(void) { return ort_session_count(); }

static void *value_data(const bd_kernel_ctx *c, OrtValue *v)
{
    void *p = NULL;
    if (!v)
        return NULL;
    OrtStatus *st = c->k->rt->api->GetTensorMutableData(v, &p);
    if (st) {
        c->k->rt->api->ReleaseStatus(st);
        return NULL;
    }
    return p;
}

void *ort_ctx_input_data(const bd_kernel_ctx *c, size_t i)
{
    return i < c->k->n_in ? value_data(c, c->in[i].v) : NULL;
}

void *ort_ctx_output_data(const bd_kernel_ctx *c, size_t i)
{
    return i < c->k->n_out ? value_data(c, c->out[i].v) : NULL;
}

const bd_backend bd_ort_backend = {
    .name        = "ort",
    .kind        = BD_ENGINE_FALLBACK,
    .configure   = ort_configure,
    .supports    = ort_supports,
    .compile     = ort_compile,
    .ctx_create  = ort_ctx_create,
    .run         = ort_run,
    .ctx_destroy = ort_ctx_destroy,
    .release     = ort_release,
};
