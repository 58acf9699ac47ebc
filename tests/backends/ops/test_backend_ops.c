/* Every engine on one table of operator cases, in the spirit of ggml's test-backend-ops.
 *
 * Each case is one ONNX-domain node (op, attributes, inputs of any dtype, fed or constant,
 * and its outputs' dtypes and shapes) built as a one-node graph (two with a follow-up node,
 * `then`, that an engine may fuse; several when the case's `chain` builds a pattern). For every engine of the registry (runtime/engines.c,
 * bd_backends()) the harness asks the engine's supports() whether it claims the node; if so
 * it loads the graph with the engine forced (bd_model_options.engine, docs/partitioning.md),
 * runs it through the runtime and compares every output with one naive reference per op family
 * (ops_*.c), independent of braid's kernels: floats within the case's tolerance, integers and
 * BOOL exactly. A claimed case that fails to load, to run, or to match fails the test; a
 * case that expects an error (an index out of range, an integer division by zero) fails when
 * it runs without one. A declined case is reported as skipped with the engine's reason (a
 * fallback engine whose library is absent declines every node and says so); so is a case
 * whose row skips an engine for a known behaviour of it. A case no engine runs is reported
 * too.
 *
 * Shape inference folds a few ops whose inputs it knows (Shape and Size of static shapes,
 * Range and ConstantOfShape of small integer constants), and a plan whose outputs are all
 * empty runs nothing: the plan then has no step, so the harness checks its outputs against
 * the reference and runs the node on the engine directly (bd_backend compile/run on a
 * one-node subgraph), so the engine's kernel is tested too.
 *
 * A row may flag a known failure of one engine (a kernel bug found here and not yet fixed):
 * it is printed as "known", not failed, until the flag is removed.
 *
 * Output: one line per case and engine, then a table case x engine -> ok / skip / FAIL /
 * known. An argument runs only the case of that name (a trailing '*': every case it
 * prefixes); with BRAID_OPS_DUMP set, a failing output is printed element by element. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "core/backend.h"
#include "core/ir/graph.h"
#include "runtime/engines.h"
#include "runtime/model.h"
#include "tests/backends/ops/ops_harness.h"
#include "tests/lib/tl_graph.h"

#define MAX_ENG   8

/* The families, in this order: a case's random inputs are seeded by its position. */
static const case_table *const k_tables[] = {
    &ops_float_table, &ops_elementwise_table, &ops_movement_table, &ops_indexing_table,
    &ops_reduction_table, &ops_generate_table, &ops_norm_table, &ops_deconv_table,
    &ops_resample_table, &ops_pool_table, &ops_swish_table,
    &ops_dynshape_table,
    &ops_signal_table, &ops_bcast_table,
    &ops_linalg_table,
    &ops_quant_table,
    &ops_conv_table,
    &ops_tfidf_table,
    &ops_nms_table,
    &ops_rnn_table,
};
#define N_TABLES (sizeof k_tables / sizeof k_tables[0])

typedef enum { R_OK, R_SKIP, R_FAIL, R_KNOWN } result;

/* ---- elements of every dtype ----------------------------------------------------------------- */

/* IEEE half <-> float, written here so the check does not share the kernels' conversion. */
static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* Round to nearest even, overflow to infinity, NaN stays NaN. */
static uint16_t double_to_half(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v))
        return 0x7e00;
    if (a >= 65520.0)                   /* halfway to 2^16 and beyond: infinity */
        return sign | 0x7c00;
    int e;
    frexp(a, &e);                       /* a = f * 2^e, f in [0.5, 1) */
    int exp = e - 1 < -14 ? -14 : e - 1;
    double q = nearbyint(ldexp(a, 10 - exp));      /* the mantissa with its hidden bit */
    if (q >= 2048) {                    /* rounding carried into the next binade */
        q /= 2;
        exp++;
    }
    if (q < 1024)                       /* subnormal (exp == -14) */
        return sign | (uint16_t)q;
    return sign | (uint16_t)((exp + 15) << 10) | (uint16_t)((int)q - 1024);
}

/* bfloat16: the upper half of a float's bits, rounded to nearest even (NaN stays NaN). */
static double bf16_to_double(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t double_to_bf16(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if (isnan(f))
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Element J of a DT tensor at P, stored from F (float dtypes) or I (the others); integer
 * stores wrap to the dtype's width, as C's conversions do on every platform braid runs on. */
static void store(void *p, int dt, size_t j, double f, int64_t i)
{
    switch (dt) {
    case F32:    ((float *)p)[j] = (float)f; break;
    case F64:    ((double *)p)[j] = f; break;
    case F16:    ((uint16_t *)p)[j] = double_to_half(f); break;
    case BF16:   ((uint16_t *)p)[j] = double_to_bf16(f); break;
    case INT8:   ((int8_t *)p)[j] = (int8_t)i; break;
    case UINT8:  ((uint8_t *)p)[j] = (uint8_t)i; break;
    case INT16:  ((int16_t *)p)[j] = (int16_t)i; break;
    case UINT16: ((uint16_t *)p)[j] = (uint16_t)i; break;
    case INT32:  ((int32_t *)p)[j] = (int32_t)i; break;
    case UINT32: ((uint32_t *)p)[j] = (uint32_t)i; break;
    case INT64:  ((int64_t *)p)[j] = i; break;
    case UINT64: ((uint64_t *)p)[j] = (uint64_t)i; break;
    case BOOL:   ((uint8_t *)p)[j] = i != 0; break;
    default:
        fprintf(stderr, "the harness has no store for dtype %d\n", dt);
        abort();
    }
}

/* Element J of a DT tensor at P as a double (*F) and an int64 (*I). */
static void load(const void *p, int dt, size_t j, double *f, int64_t *i)
{
    int64_t v = 0;
    switch (dt) {
    case F32:    *f = ((const float *)p)[j]; break;
    case F64:    *f = ((const double *)p)[j]; break;
    case F16:    *f = half_to_double(((const uint16_t *)p)[j]); break;
    case BF16:   *f = bf16_to_double(((const uint16_t *)p)[j]); break;
    case INT8:   v = ((const int8_t *)p)[j]; break;
    case UINT8:  v = ((const uint8_t *)p)[j]; break;
    case INT16:  v = ((const int16_t *)p)[j]; break;
    case UINT16: v = ((const uint16_t *)p)[j]; break;
    case INT32:  v = ((const int32_t *)p)[j]; break;
    case UINT32: v = ((const uint32_t *)p)[j]; break;
    case INT64:  v = ((const int64_t *)p)[j]; break;
    case UINT64: v = (int64_t)((const uint64_t *)p)[j]; break;
    case BOOL:   v = ((const uint8_t *)p)[j] != 0; break;
    default:
        fprintf(stderr, "the harness has no load for dtype %d\n", dt);
        abort();
    }
    if (is_float_dt(dt)) {
        *i = isnan(*f) ? 0 : *f >= 9.2e18 ? INT64_MAX : *f <= -9.2e18 ? INT64_MIN : (int64_t)*f;
    } else {
        *f = dt == UINT64 ? (double)(uint64_t)v : (double)v;
        *i = v;
    }
}

/* ---- a case's data ----------------------------------------------------------------------------- */

typedef struct case_data {            /* the case's inputs and reference, the same for every engine */
    void   *raw[MAX_IN];              /* the inputs' bytes */
    tensor  in[MAX_IN];
    tensor  ref[MAX_OUT];
    int     n_out;
} case_data;

static uint32_t g_seed;

static float rnd(float lo, float hi)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return lo + (float)(g_seed >> 8) / (float)(1u << 24) * (hi - lo);
}

static int in_dtype(const in_spec *s)
{
    return s->dtype ? s->dtype : F32;
}

static bool is_unsigned(int dt)
{
    return dt == UINT8 || dt == UINT16 || dt == UINT32 || dt == UINT64 || dt == BOOL;
}

/* One random element of S (one draw, as the float cases have always taken). */
static void random_el(const in_spec *s, int dt, void *raw, size_t j)
{
    bool ranged = s->lo != s->hi;
    if (is_float_dt(dt)) {
        store(raw, dt, j, rnd(ranged ? s->lo : -1, ranged ? s->hi : 1), 0);
        return;
    }
    float lo = ranged ? s->lo : dt == BOOL ? 0 : is_unsigned(dt) ? 0 : -20;
    float hi = ranged ? s->hi : dt == BOOL ? 1 : is_unsigned(dt) ? 40 : 20;
    double v = floor(rnd(lo, hi + 1));
    store(raw, dt, j, 0, (int64_t)(v > hi ? hi : v));
}

static void tensor_alloc(tensor *t, int dt, int rank, const int64_t *dims)
{
    t->dtype = dt;
    t->rank = rank;
    t->dims = dims;
    t->n = numel(rank, dims);
    t->f = calloc(t->n + 1, sizeof *t->f);
    t->i = calloc(t->n + 1, sizeof *t->i);
}

static int count_outputs(const op_case *c)
{
    int n = 0;
    while (n < MAX_OUT && c->out[n].dtype)
        n++;
    return n;
}

static void make_data(const op_case *c, size_t index, case_data *d)
{
    g_seed = 12345u + 7919u * (uint32_t)index;
    for (int k = 0; k < c->n_in; k++) {
        const in_spec *s = &c->in[k];
        if (s->omitted)
            continue;
        int dt = in_dtype(s);
        tensor *t = &d->in[k];
        tensor_alloc(t, dt, s->rank, s->dims);
        d->raw[k] = calloc(t->n + 1, 8);
        double given = s->ivals ? (double)s->ivals[0] : s->fvals ? s->fvals[0] : (double)t->n;
        if (given != (double)t->n) {
            fprintf(stderr, "case %s: input %d has %.0f values for %zu elements\n", c->name, k,
                    given, t->n);
            abort();
        }
        for (size_t j = 0; j < t->n; j++) {
            if (s->ivals)                 /* a V list: its count, then the values */
                store(d->raw[k], dt, j, (double)s->ivals[j + 1], s->ivals[j + 1]);
            else if (s->fvals)            /* a VF list, of a float input */
                store(d->raw[k], dt, j, s->fvals[j + 1], 0);
            else
                random_el(s, dt, d->raw[k], j);
            load(d->raw[k], dt, j, &t->f[j], &t->i[j]);   /* what the tensor holds */
        }
    }
    d->n_out = count_outputs(c);
    for (int k = 0; k < d->n_out; k++)
        tensor_alloc(&d->ref[k], c->out[k].dtype, c->out[k].rank, c->out[k].dims);
    if (c->expect_error || !c->ref)
        return;
    c->ref(c, d->in, d->ref);
    /* the reference computed in double / int64: round or wrap it to each output's dtype */
    for (int k = 0; k < d->n_out; k++) {
        tensor *r = &d->ref[k];
        for (size_t j = 0; j < r->n; j++) {
            char el[8];
            store(el, r->dtype, 0, r->f[j], r->i[j]);
            load(el, r->dtype, 0, &r->f[j], &r->i[j]);
        }
    }
}

static void free_data(case_data *d)
{
    for (int k = 0; k < MAX_IN; k++) {
        free(d->raw[k]);
        free(d->in[k].f);
        free(d->in[k].i);
    }
    for (int k = 0; k < MAX_OUT; k++) {
        free(d->ref[k].f);
        free(d->ref[k].i);
    }
}

/* ---- the graph --------------------------------------------------------------------------------- */

/* A STRINGS attribute: its name, array and strings in the graph's pool. */
static void add_strings(bd_graph *g, bd_node *n, const attr_spec *s)
{
    const char **v = bd_graph_alloc(g, (size_t)s->n * sizeof *v + 1);
    bd_error err = { 0 };
    for (int k = 0; v && k < s->n; k++)
        v[k] = bd_graph_strdup(g, s->strs[k], (size_t)-1);
    bd_attr a = { .name = bd_graph_strdup(g, s->name, (size_t)-1), .type = BD_ATTR_STRINGS,
                  .strings = v, .n = (size_t)s->n };
    if (!v || bd_node_add_attr(g, n, &a, &err)) {
        fprintf(stderr, "attribute %s: %s\n", s->name, v ? err.msg : "out of memory");
        abort();
    }
}

static void add_attrs(bd_graph *g, bd_node *n, const op_case *c)
{
    for (int a = 0; a < MAX_ATTR && c->attr[a].name; a++) {
        const attr_spec *s = &c->attr[a];
        char el[8];
        switch (s->type) {
        case 'i': tl_attr_int(g, n, s->name, s->i); break;
        case 'f': tl_attr_float(g, n, s->name, s->f); break;
        case 's': tl_attr_str(g, n, s->name, s->s); break;
        case 'I': tl_attr_ints(g, n, s->name, (size_t)s->n, s->ints); break;
        case 'F': tl_attr_floats(g, n, s->name, (size_t)s->n, s->floats); break;
        case 'S': add_strings(g, n, s); break;
        case 't':
            store(el, s->dt, 0, s->f, s->i);
            tl_attr_tensor(g, n, s->name, s->dt, 1, (const int64_t[]){ 1 }, el);
            break;
        default:
            fprintf(stderr, "%s: attribute %s of unknown type '%c'\n", c->name, s->name, s->type);
            abort();
        }
    }
}

/* The case as a one-node graph; *NODE gets the node (for supports()). */
static bd_graph *build(const op_case *c, const case_data *d, bd_node **node)
{
    bd_graph *g = bd_graph_create(c->name);
    bd_graph_set_opset(g, c->opset ? c->opset : OPSET);
    bd_value *in[MAX_IN] = { NULL }, *out[MAX_OUT] = { NULL };
    for (int k = 0; k < c->n_in; k++) {
        const in_spec *s = &c->in[k];
        char name[16];
        snprintf(name, sizeof name, "in%d", k);
        if (s->omitted)
            in[k] = NULL;
        else if (s->constant)
            in[k] = tl_const(g, name, in_dtype(s), s->rank, s->dims, d->raw[k]);
        else
            in[k] = tl_input(g, name, in_dtype(s), s->rank, s->dims);
    }
    for (int k = 0; k < d->n_out; k++) {
        const out_spec *o = &c->out[k];
        int64_t unknown[BD_MAX_RANK];
        for (int r = 0; r < o->rank; r++)
            unknown[r] = -1;
        char name[16] = "y";
        if (k)
            snprintf(name, sizeof name, "y%d", k);
        out[k] = tl_value(g, name, o->dtype, o->rank, c->runtime_shape ? unknown : o->dims);
        tl_output(g, out[k]);
    }
    if (c->chain) {                   /* several nodes: the chain builds them */
        *node = c->chain(g, in, out);
        return g;
    }
    bd_value *y0 = out[0];
    if (c->then)                      /* the op writes T, the follow-up node reads it */
        out[0] = tl_value(g, "t", c->out[0].dtype, c->out[0].rank, c->out[0].dims);
    bd_node *n = tl_node(g, c->name, c->op, c->domain ? c->domain : "", in,
                         (size_t)(c->n_in - c->then_in), out, (size_t)d->n_out);
    add_attrs(g, n, c);
    if (c->then) {                    /* "braid:Swish": a node of braid's own domain */
        bool braid = !strncmp(c->then, "braid:", 6);
        bd_value *tin[2] = { out[0], c->then_in ? in[c->n_in - 1] : NULL };
        if (c->then_first) {
            tin[0] = tin[1];
            tin[1] = out[0];
        }
        tl_node(g, "then", braid ? c->then + 6 : c->then, braid ? "braid" : "", tin,
                (size_t)(1 + c->then_in), &y0, 1);
    }
    *node = n;
    return g;
}

/* Fed input K as the runtime takes it. */
static DLTensor fed_tensor(const op_case *c, const case_data *d, int k)
{
    DLTensor t = { .data = d->raw[k], .device = { kDLCPU, 0 }, .ndim = c->in[k].rank,
                   .shape = (int64_t *)c->in[k].dims };
    bd_dtype_to_dl(in_dtype(&c->in[k]), &t.dtype);
    return t;
}

/* ---- comparing --------------------------------------------------------------------------------- */

/* With BRAID_OPS_DUMP set, a failing output's elements: got, then want. */
static void dump(const char *data, const tensor *r)
{
    if (!getenv("BRAID_OPS_DUMP"))
        return;
    for (size_t j = 0; j < r->n && j < 256; j++) {
        double f;
        int64_t i;
        load(data, r->dtype, j, &f, &i);
        if (is_float_dt(r->dtype))
            fprintf(stderr, "      [%zu] got %.9g want %.9g\n", j, f, r->f[j]);
        else if (r->dtype == UINT64)
            fprintf(stderr, "      [%zu] got %llu want %llu\n", j, (unsigned long long)i,
                    (unsigned long long)r->i[j]);
        else
            fprintf(stderr, "      [%zu] got %lld want %lld\n", j, (long long)i, (long long)r->i[j]);
    }
}

/* Output K of the case from ENGINE (Y) against the reference. WHY gets the failure. */
static bool compare(const op_case *c, const case_data *d, int k, const char *engine,
                    const DLTensor *y, char *why, size_t len)
{
    const tensor *r = &d->ref[k];
    DLDataType want;
    bd_dtype_to_dl(r->dtype, &want);
    bool ok = y->ndim == r->rank && y->dtype.code == want.code && y->dtype.bits == want.bits;
    for (int i = 0; ok && i < r->rank; i++)
        ok = y->shape[i] == r->dims[i];
    if (!ok) {
        bd_shape got = bd_shape_make(y->ndim, y->shape), exp = bd_shape_make(r->rank, r->dims);
        char a[96], b[96];
        snprintf(why, len, "output %d is %s (dl %d/%d), expected %s %s", k,
                 bd_shape_str(&got, a, sizeof a), y->dtype.code, y->dtype.bits,
                 bd_dtype_name(r->dtype), bd_shape_str(&exp, b, sizeof b));
        return false;
    }
    const char *data = (const char *)y->data + y->byte_offset;
    char what[96];
    snprintf(what, sizeof what, k ? "%s on %s [%d]" : "%s on %s", c->name, engine, k);
    double got_f;
    int64_t got_i;
    if (!is_float_dt(r->dtype)) {       /* integers and BOOL: exact */
        size_t bad = 0, first = 0;
        for (size_t j = 0; j < r->n; j++) {
            load(data, r->dtype, j, &got_f, &got_i);
            if (got_i != r->i[j] && !bad++)
                first = j;
        }
        printf("    %-44s n=%-7zu %s: %zu differ\n", what, r->n, bd_dtype_name(r->dtype), bad);
        if (bad) {
            dump(data, r);
            load(data, r->dtype, first, &got_f, &got_i);
            if (r->dtype == UINT64)
                snprintf(why, len, "output %d: %zu of %zu elements differ; element %zu got %llu "
                         "want %llu", k, bad, r->n, first, (unsigned long long)got_i,
                         (unsigned long long)r->i[first]);
            else
                snprintf(why, len, "output %d: %zu of %zu elements differ; element %zu got %lld "
                         "want %lld", k, bad, r->n, first, (long long)got_i,
                         (long long)r->i[first]);
        }
        return bad == 0;
    }
    /* floats: max |got - ref| <= tol * max(1, max |ref|); NaN matches NaN, inf matches the
     * same inf */
    double max_ref = 1, max_err = 0, tol = c->tol > 0 ? c->tol : 1e-4;
    size_t worst = 0;
    for (size_t j = 0; j < r->n; j++)
        if (isfinite(r->f[j]) && fabs(r->f[j]) > max_ref)
            max_ref = fabs(r->f[j]);
    for (size_t j = 0; j < r->n; j++) {
        load(data, r->dtype, j, &got_f, &got_i);
        double e, w = r->f[j];
        if (isnan(w) || isnan(got_f))
            e = isnan(w) && isnan(got_f) ? 0 : INFINITY;
        else if (isinf(w) || isinf(got_f))
            e = w == got_f ? 0 : INFINITY;
        else
            e = fabs(got_f - w);
        if (e > max_err) {
            max_err = e;
            worst = j;
        }
    }
    printf("    %-44s n=%-7zu max abs err %.3g (rel %.3g)\n", what, r->n, max_err,
           max_err / max_ref);
    if (max_err <= tol * max_ref)
        return true;
    dump(data, r);
    load(data, r->dtype, worst, &got_f, &got_i);
    snprintf(why, len, "output %d: element %zu got %.9g want %.9g (rel err %.3g > tol %.3g)", k,
             worst, got_f, r->f[worst], max_err / max_ref, tol);
    return false;
}

static result compare_all(const op_case *c, const case_data *d, const char *engine,
                          const DLTensor *const *y, char *why, size_t len)
{
    result r = R_OK;
    for (int k = 0; k < d->n_out; k++)
        if (!compare(c, d, k, engine, y[k], why, len))
            r = R_FAIL;               /* keep comparing: every output's line is printed */
    return r;
}

/* ---- running one case on one engine ------------------------------------------------------------ */

/* The node on engine B directly, as a one-node subgraph (compile, context, one run). */
static result run_direct(const op_case *c, const case_data *d, const bd_backend *b, char *why,
                         size_t len)
{
    bd_node *n;
    bd_graph *g = build(c, d, &n);
    bd_value *fed[MAX_IN];
    DLTensor in[MAX_IN], out[MAX_OUT];
    int64_t shape[MAX_OUT][BD_MAX_RANK];
    const DLTensor *outp[MAX_OUT];
    size_t n_in = 0;
    for (int k = 0; k < c->n_in; k++)
        if (!c->in[k].omitted && !c->in[k].constant) {
            fed[n_in] = n->inputs[k];
            in[n_in++] = fed_tensor(c, d, k);
        }
    for (int k = 0; k < d->n_out; k++) {
        const tensor *r = &d->ref[k];
        memcpy(shape[k], r->dims, (size_t)r->rank * sizeof shape[k][0]);
        out[k] = (DLTensor){ .data = calloc(r->n + 1, 8), .device = { kDLCPU, 0 },
                             .ndim = r->rank, .shape = shape[k] };
        bd_dtype_to_dl(r->dtype, &out[k].dtype);
        outp[k] = &out[k];
    }
    bd_subgraph sg = { .graph = g, .nodes = &n, .n_nodes = 1, .inputs = fed, .n_inputs = n_in,
                       .outputs = n->outputs, .n_outputs = n->n_outputs };
    bd_kernel *kern = NULL;
    bd_kernel_ctx *ctx = NULL;
    bd_error err = { 0 };
    result r = R_FAIL;
    if (b->compile(&sg, &kern, &err) || b->ctx_create(kern, &ctx, &err) ||
        b->run(ctx, in, n_in, out, (size_t)d->n_out, &err)) {
        if (c->expect_error) {
            printf("    %-44s refused on %s as expected (directly): %s\n", c->name, b->name, err.msg);
            r = R_OK;
        } else {
            snprintf(why, len, "directly: %s", err.msg);
        }
    } else if (c->expect_error) {
        snprintf(why, len, "ran directly without the error the case expects");
    } else {
        r = compare_all(c, d, b->name, outp, why, len);
    }
    if (ctx && b->ctx_destroy)
        b->ctx_destroy(ctx);
    if (kern && b->release)
        b->release(kern);
    for (int k = 0; k < d->n_out; k++)
        free(out[k].data);
    bd_graph_destroy(g);
    return r;
}

/* Load with engine B forced, plan, run once, compare. WHY gets the failure. */
static result run_forced(const op_case *c, const case_data *d, const bd_backend *b, char *why,
                         size_t len)
{
    bd_node *n;
    bd_graph *g = build(c, d, &n);
    bd_model_options o = { .threads = c->threads ? c->threads : 1, .engine = b->name };
    bd_model *m = NULL;
    bd_error err = { 0 };
    if (bd_model_from_graph(g, &o, &m, &err)) {
        if (c->expect_error) {
            printf("    %-44s refused on %s as expected (load): %s\n", c->name, b->name, err.msg);
            return R_OK;
        }
        snprintf(why, len, "load: %s", err.msg);
        return R_FAIL;
    }
    DLTensor in[MAX_IN];
    size_t n_in = 0;
    for (int k = 0; k < c->n_in; k++)
        if (!c->in[k].omitted && !c->in[k].constant)
            in[n_in++] = fed_tensor(c, d, k);
    result r = R_FAIL;
    const bd_plan *p = NULL;          /* owned by the model (bd_model_plan) */
    bd_exec *e = NULL;
    if (bd_model_plan(m, in, n_in, &p, &err) || bd_exec_create(p, &e, &err) ||
        bd_exec_run(e, in, n_in, &err)) {
        if (c->expect_error) {
            printf("    %-44s refused on %s as expected: %s\n", c->name, b->name, err.msg);
            r = R_OK;
        } else {
            snprintf(why, len, "%s", err.msg);
        }
        goto done;
    }
    const bd_partition_report *rep = bd_plan_partition(p);
    const DLTensor *y[MAX_OUT];
    for (int k = 0; k < d->n_out; k++)
        y[k] = bd_exec_output(e, (size_t)k);
    if (rep->n_subgraphs == 0 && !c->expect_error) {
        /* no step: shape inference folded the node, or every output is empty; the outputs
         * are the plan's constants */
        printf("    %-44s the plan has no step (folded or empty): its outputs, then %s directly\n",
               c->name, b->name);
        r = compare_all(c, d, "the plan (no step)", y, why, len);
        if (r == R_OK && !c->then && !c->chain)   /* the direct run is of the one node */
            r = run_direct(c, d, b, why, len);
        goto done;
    }
    if (rep->n_subgraphs != 1 || strcmp(rep->subgraphs[0].backend, b->name) != 0) {
        snprintf(why, len, "placed on %s, not on %s",
                 rep->n_subgraphs ? rep->subgraphs[0].backend : "nothing", b->name);
        goto done;
    }
    if (c->expect_error)
        snprintf(why, len, "ran without the error the case expects");
    else
        r = compare_all(c, d, b->name, y, why, len);
    /* The cliff guard (docs/partitioning.md): no engine may run a case on a reference kernel
     * it does not accept on the hot path (oneDNN's `ref:` ones); the guard's own allowlist
     * (backends/dnnl/dnnl_guard.c) says which reference-named kernels are no cliff, and why. */
    if (r == R_OK && rep->run.ref_steps) {
        snprintf(why, len, "%zu reference kernel(s): %s", rep->run.ref_steps,
                 rep->subgraphs[0].run.impls ? rep->subgraphs[0].run.impls : "?");
        r = R_FAIL;
    }
done:
    bd_exec_destroy(e);
    bd_model_close(m);
    return r;
}

/* ---- the run ------------------------------------------------------------------------------------ */

static bool selected(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return true;
    size_t n = strlen(argv[1]);
    if (n && argv[1][n - 1] == '*')
        return strncmp(argv[1], name, n - 1) == 0;
    return strcmp(argv[1], name) == 0;
}

/* Does B claim the case? Asked about the graph the plans will see: the model's, after the
 * shape inference of its import (a fed axes or K input leaves an output dynamic that the case
 * declares static), or the case's own graph when the model does not open. */
static bool claims(const op_case *c, const case_data *d, const bd_backend *b, char *why,
                   size_t len)
{
    bd_node *n;
    bd_graph *g = build(c, d, &n);
    bd_model_options o = { .threads = 1 };
    bd_model *m = NULL;
    bd_error err = { 0 };
    bool r;
    size_t nodes = bd_graph_num_nodes(g);
    if (bd_model_from_graph(g, &o, &m, &err) == 0 && bd_graph_num_nodes(bd_model_graph(m)) == nodes) {
        const bd_graph *seen = bd_model_graph(m);
        r = b->supports(seen, bd_graph_node(seen, 0), why, len);
    } else {
        g = build(c, d, &n);            /* bd_model_from_graph took the first one */
        r = b->supports(g, n, why, len);
        bd_graph_destroy(g);
    }
    bd_model_close(m);
    return r;
}

/* NOTE's engine list ("dnnl,native") names ENGINE. */
static bool names(const eng_note *note, const char *engine)
{
    size_t n = strlen(engine);
    for (const char *p = note->engine; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
        if (strcspn(p, ",") == n && !strncmp(p, engine, n))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);  /* a crash still shows the case it happened in */
    size_t n_eng, n_cases = 0;
    const bd_backend *const *eng = bd_backends(&n_eng);
    if (n_eng > MAX_ENG)
        n_eng = MAX_ENG;
    for (size_t t = 0; t < N_TABLES; t++)
        n_cases += k_tables[t]->n;
    const op_case **cases = calloc(n_cases, sizeof *cases);
    result (*res)[MAX_ENG] = calloc(n_cases, sizeof *res);
    for (size_t t = 0, at = 0; t < N_TABLES; t++)
        for (size_t i = 0; i < k_tables[t]->n; i++)
            cases[at++] = &k_tables[t]->cases[i];
    static char first_skip[MAX_ENG][200];
    int fails = 0, unrun = 0, known = 0;
    for (size_t ci = 0; ci < n_cases; ci++) {
        const op_case *c = cases[ci];
        if (!selected(argc, argv, c->name))
            continue;
        case_data d;
        memset(&d, 0, sizeof d);
        make_data(c, ci, &d);
        char env_name[64] = "";
        if (c->env) {                 /* NAME=VALUE, for this case's runs only */
            size_t k = strcspn(c->env, "=");
            snprintf(env_name, sizeof env_name, "%.*s", (int)k, c->env);
            setenv(env_name, c->env[k] ? c->env + k + 1 : "", 1);
        }
        bool ran = false;
        for (size_t ei = 0; ei < n_eng; ei++) {
            char why[1024] = "";
            bool claimed = claims(c, &d, eng[ei], why, sizeof why);
            if (claimed && names(&c->skip, eng[ei]->name)) {
                claimed = false;
                snprintf(why, sizeof why, "the case skips it: %s", c->skip.why);
            }
            if (!claimed) {
                res[ci][ei] = R_SKIP;
                if (!why[0])
                    snprintf(why, sizeof why, "%s declines it without a reason", eng[ei]->name);
                printf("    %-44s skip on %s: %s\n", c->name, eng[ei]->name, why);
                if (!first_skip[ei][0])
                    snprintf(first_skip[ei], sizeof first_skip[ei], "%s: %s", c->name, why);
                continue;
            }
            ran = true;
            result r = run_forced(c, &d, eng[ei], why, sizeof why);
            if (r == R_FAIL && names(&c->known, eng[ei]->name)) {
                r = R_KNOWN;
                known++;
                printf("    %-44s KNOWN FAILURE on %s (%s): %s\n", c->name, eng[ei]->name,
                       c->known.why, why);
            } else if (r == R_FAIL) {
                fails++;
                fprintf(stderr, "FAIL: %s on %s (claimed by supports()): %s\n", c->name,
                        eng[ei]->name, why);
            } else if (names(&c->known, eng[ei]->name)) {
                printf("    %-44s passes on %s though flagged as a known failure: remove the "
                       "flag\n", c->name, eng[ei]->name);
            }
            res[ci][ei] = r;
        }
        if (!ran) {
            unrun++;
            printf("    %-44s NOT RUN: no engine here claims it\n", c->name);
        }
        if (env_name[0])
            unsetenv(env_name);
        free_data(&d);
    }

    printf("\n%-34s", "case");
    for (size_t ei = 0; ei < n_eng; ei++)
        printf(" %-6s", eng[ei]->name);
    printf("\n");
    static const char *const word[] = { "ok", "skip", "FAIL", "known" };
    size_t counts[MAX_ENG][4] = { { 0 } };
    for (size_t ci = 0; ci < n_cases; ci++) {
        if (!selected(argc, argv, cases[ci]->name))
            continue;
        printf("%-34s", cases[ci]->name);
        for (size_t ei = 0; ei < n_eng; ei++) {
            printf(" %-6s", word[res[ci][ei]]);
            counts[ei][res[ci][ei]]++;
        }
        printf("\n");
    }
    for (size_t ei = 0; ei < n_eng; ei++)
        printf("%s: %zu ok, %zu skipped, %zu failed, %zu known failures%s%s\n", eng[ei]->name,
               counts[ei][R_OK], counts[ei][R_SKIP], counts[ei][R_FAIL], counts[ei][R_KNOWN],
               first_skip[ei][0] ? "; first skip: " : "", first_skip[ei]);
    printf("%zu cases; %d case(s) no engine ran; %d failure(s); %d known failure(s)\n", n_cases,
           unrun, fails, known);
    size_t ok = 0;
    for (size_t ei = 0; ei < n_eng; ei++)
        ok += counts[ei][R_OK];
    free(cases);
    free(res);
    if (ok == 0) {                  /* oneDNN alone claims most cases: nothing ran = broken */
        fprintf(stderr, "FAIL: no case ran on any engine\n");
        return 1;
    }
    return fails ? 1 : 0;
}
