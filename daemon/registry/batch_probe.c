/* Whether a model with config.json "dynamic_batching" may really be batched (registry
 * internal.h, served_probe_batching): Triton trusts the configuration; braid checks at load
 * what it can, because a batch that mixes rows would answer one client with another's data.
 *
 *   shapes  every output's dim 0 must equal the batch, planned for two batch sizes (an output
 *           reduced or transposed over the batch fails)
 *   rows    rows A run alone, rows B run alone and A‖B run as one batch must agree (a softmax
 *           or a normalisation over dim 0 keeps the shape and fails here): random FP32/FP64
 *           inputs, other types zero; agreement within what kernels blocked differently for
 *           another batch size give (|x - y| <= 1e-4 + 1e-3 |y|), bit-exact for non-floats */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"
#include "daemon/registry/batch_probe.h"
#include "daemon/registry/registry_served_internal.h"

/* Plan INPUTS with B rows on dim 0: "" in WHY when every output of the plan has B on dim 0. */
static void probe_shapes(bd_model *model, DLTensor *inputs, size_t n, int64_t b, char *why, size_t size)
{
    bd_error err = {0};
    const bd_plan *plan = NULL;
    for (size_t i = 0; i < n; i++)
        inputs[i].shape[0] = b;
    if (bd_model_plan_acquire(model, inputs, n, &plan, &err) != 0) {
        snprintf(why, size, "planning batch %lld failed: %.400s", (long long)b, err.msg);
        return;
    }
    const bd_graph *g = bd_plan_graph(plan);
    for (size_t o = 0; o < bd_graph_num_outputs(g); o++) {
        const bd_value *v = bd_graph_output(g, o);
        if (v->shape.rank < 1 || v->shape.dims[0] != b) {
            char shape[128];
            snprintf(why, size, "output '%s' has shape %s for a batch of %lld (dim 0 must be the "
                     "batch)", v->name, bd_shape_str(&v->shape, shape, sizeof shape), (long long)b);
            break;
        }
    }
    bd_plan_release(plan);
}

/* ---- rows computed on their own --------------------------------------------------------------- */

typedef struct run_out {
    size_t   n;
    void   **data;                  /* each output's bytes */
    size_t  *bytes;
} run_out;

static void run_out_free(run_out *r)
{
    for (size_t o = 0; r->data && o < r->n; o++)
        free(r->data[o]);
    free(r->data);
    free(r->bytes);
    memset(r, 0, sizeof *r);
}

/* Run IN (N inputs) on S and copy every output into OUT; 0 or a BD_E* code. */
static int run_copy(bd_served *s, const DLTensor *in, size_t n, run_out *out, bd_error *err)
{
    const bd_plan *plan = NULL;
    bd_exec *exec = NULL;
    int rc = bd_model_plan_acquire(s->model, in, n, &plan, err);
    if (!rc)
        rc = bd_served_exec_acquire(s, plan, &exec, err);
    bd_plan_release(plan);
    if (!rc)
        rc = bd_exec_run(exec, in, n, err);
    size_t n_out = bd_graph_num_outputs(bd_model_graph(s->model));
    if (!rc) {
        out->n = n_out;
        out->data = calloc(n_out ? n_out : 1, sizeof *out->data);
        out->bytes = calloc(n_out ? n_out : 1, sizeof *out->bytes);
        if (!out->data || !out->bytes)
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    for (size_t o = 0; !rc && o < n_out; o++) {
        const DLTensor *t = bd_exec_output(exec, o);
        if (!t || t->strides)
            rc = bd_error_set(err, BD_EBACKEND, "output %zu is not a contiguous tensor", o);
        else if (!(out->data[o] = malloc((out->bytes[o] = bd_dl_tensor_bytes(t)) + 1)))
            rc = bd_error_set(err, BD_ENOMEM, "out of memory");
        else
            memcpy(out->data[o], (const char *)t->data + t->byte_offset, out->bytes[o]);
    }
    if (exec)
        bd_served_exec_release(s, exec);
    return rc;
}

static bool close_enough(double x, double y)
{
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    return fabs(x - y) <= 1e-4 + 1e-3 * fabs(y);
}

/* Do the bytes GOT (a batch's rows) equal WANT (the same rows run apart), element type T? */
static bool rows_agree(const void *got, const void *want, size_t bytes, DLDataType t)
{
    if (t.code == kDLFloat && t.bits == 32 && t.lanes == 1) {
        const float *a = got, *b = want;
        for (size_t i = 0; i < bytes / 4; i++)
            if (!close_enough(a[i], b[i]))
                return false;
        return true;
    }
    if (t.code == kDLFloat && t.bits == 64 && t.lanes == 1) {
        const double *a = got, *b = want;
        for (size_t i = 0; i < bytes / 8; i++)
            if (!close_enough(a[i], b[i]))
                return false;
        return true;
    }
    return memcmp(got, want, bytes) == 0;
}

static uint64_t next_random(uint64_t *state)          /* splitmix64 */
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Rows A and B (BASE rows each) run apart and together: "" in WHY when they agree. */
static void probe_rows(bd_served *s, const DLTensor *model_in, size_t n, int64_t base, char *why,
                       size_t size)
{
    bd_error err = {0};
    DLTensor *ta = calloc(n, sizeof *ta), *tb = calloc(n, sizeof *tb), *tab = calloc(n, sizeof *tab);
    int64_t (*shapes)[2][BD_MAX_RANK] = calloc(n, sizeof *shapes);
    void **bufs = calloc(n, sizeof *bufs);
    run_out a = {0}, b = {0}, ab = {0};
    int rc = ta && tb && tab && shapes && bufs ? 0 : bd_error_set(&err, BD_ENOMEM, "out of memory");
    uint64_t seed = 0x5eed;
    for (size_t i = 0; !rc && i < n; i++) {
        DLTensor t = model_in[i];
        t.shape[0] = base;
        size_t half = bd_dl_tensor_bytes(&t);
        if (!(bufs[i] = aligned_alloc(64, ((2 * half + 63) & ~(size_t)63) + 64))) {
            rc = bd_error_set(&err, BD_ENOMEM, "out of memory");
            break;
        }
        memset(bufs[i], 0, 2 * half);
        if (t.dtype.code == kDLFloat && t.dtype.lanes == 1 && (t.dtype.bits == 32 || t.dtype.bits == 64)) {
            size_t count = 2 * half / (t.dtype.bits / 8);
            for (size_t e = 0; e < count; e++) {
                double v = (double)(next_random(&seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
                if (t.dtype.bits == 32)
                    ((float *)bufs[i])[e] = (float)v;
                else
                    ((double *)bufs[i])[e] = v;
            }
        }
        memcpy(shapes[i][0], t.shape, (size_t)t.ndim * sizeof *t.shape);
        memcpy(shapes[i][1], t.shape, (size_t)t.ndim * sizeof *t.shape);
        shapes[i][1][0] = 2 * base;
        ta[i] = tb[i] = tab[i] = t;
        ta[i].shape = tb[i].shape = shapes[i][0];
        tab[i].shape = shapes[i][1];
        ta[i].data = tab[i].data = bufs[i];
        tb[i].data = (char *)bufs[i] + half;            /* element-aligned: half is whole rows */
        ta[i].byte_offset = tb[i].byte_offset = tab[i].byte_offset = 0;
    }
    if (!rc)
        rc = run_copy(s, ta, n, &a, &err);
    if (!rc)
        rc = run_copy(s, tb, n, &b, &err);
    if (!rc)
        rc = run_copy(s, tab, n, &ab, &err);
    if (rc)
        snprintf(why, size, "running batches of %lld and %lld rows failed: %.400s", (long long)base,
                 (long long)(2 * base), err.msg);
    const bd_graph *g = bd_model_graph(s->model);
    for (size_t o = 0; !rc && o < ab.n; o++) {
        const bd_value *v = bd_graph_output(g, o);
        DLDataType dt;
        bool ok = bd_dtype_to_dl(v->dtype, &dt) && ab.bytes[o] == a.bytes[o] + b.bytes[o] &&
                  rows_agree(ab.data[o], a.data[o], a.bytes[o], dt) &&
                  rows_agree((char *)ab.data[o] + a.bytes[o], b.data[o], b.bytes[o], dt);
        if (!ok) {
            snprintf(why, size, "output '%s' of rows run together differs from the same rows run "
                     "apart (the model mixes the rows of a batch)", v->name);
            break;
        }
    }
    run_out_free(&a);
    run_out_free(&b);
    run_out_free(&ab);
    for (size_t i = 0; bufs && i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(shapes);
    free(ta);
    free(tb);
    free(tab);
}

void served_probe_batching(bd_served *s, DLTensor *inputs, size_t n)
{
    const bd_batching_config *bc = &s->config.batching;
    int max = s->config.max_batch_size;
    for (int k = 0; k < s->config.n_input_shapes; k++) {     /* dim 0 capped by input_shapes */
        const bd_input_range *r = &s->config.input_shapes[k];
        if (r->rank >= 1 && r->max[0] >= 0 && r->max[0] < max)
            max = (int)r->max[0];
    }
    s->batch_max_rows = max;
    char why[512] = "";
    if (n == 0 || inputs[0].ndim < 1)
        snprintf(why, sizeof why, "the model has no batched input");
    int64_t base = n ? inputs[0].shape[0] : 0;
    if (!why[0])
        probe_shapes(s->model, inputs, n, base, why, sizeof why);
    if (!why[0] && base + 1 <= max)
        probe_shapes(s->model, inputs, n, base + 1, why, sizeof why);
    for (size_t i = 0; i < n; i++)
        inputs[i].shape[0] = base;
    if (!why[0] && 2 * base <= max)
        probe_rows(s, inputs, n, base, why, sizeof why);
    for (size_t i = 0; i < n; i++)
        inputs[i].shape[0] = base;
    s->batching = !why[0];
    if (why[0]) {
        bd_log(BD_LOG_WARN, s->name, s->version, "dynamic_batching is off: requests run one at a "
               "time because %s", why);
        return;
    }
    bd_log(BD_LOG_INFO, s->name, s->version, "dynamic_batching: up to %d rows per run, "
           "max_queue_delay %llu us", max, (unsigned long long)bc->max_queue_delay_us);
}
