/* One conformance case through braid, exactly as the daemon would run it: bd_model_open
 * (import, validation, passes; the fallback engine takes what oneDNN cannot run), one plan
 * per data set's input shapes, one execution context, two runs: outputs written into the
 * caller's memory (bd_exec_run_into, as braidd's shared-memory outputs are), then into the
 * context's arena. */
#include "tests/conformance/conformance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engines.h"
#include "runtime/model.h"

/* True when every subgraph of P runs on oneDNN (the partition report's view). */
static bool plan_is_dnnl_only(const bd_plan *p)
{
    const bd_partition_report *rep = bd_plan_partition(p);
    for (size_t i = 0; i < rep->n_subgraphs; i++)
        if (strcmp(rep->subgraphs[i].backend, "dnnl") != 0)
            return false;
    return rep->n_fallback == 0;
}

/* Caller memory for each of PG's (a plan's graph) outputs whose size is known before the
 * run, filled with a pattern no correct result keeps everywhere; none when !WANT. */
static bool place_outputs(const bd_graph *pg, bd_exec_dest *dest, bool want, cf_result *r)
{
    size_t n_out = bd_graph_num_outputs(pg);
    if (n_out > CF_MAX_TENSORS) {
        cf_fail(r, CF_FAIL, "outputs", "more than 64 outputs");
        return false;
    }
    for (size_t k = 0; want && k < n_out; k++) {
        const bd_value *v = bd_graph_output(pg, k);
        int64_t numel = bd_shape_numel(&v->shape);
        if (numel < 0 || !bd_dtype_size(v->dtype))
            continue;                           /* data-dependent: stays in the context */
        dest[k].bytes = (size_t)numel * bd_dtype_size(v->dtype);
        dest[k].data = aligned_alloc(64, (dest[k].bytes + 63) / 64 * 64 + 64);
        if (!dest[k].data) {
            cf_fail(r, CF_FAIL, "outputs", "out of memory");
            return false;
        }
        memset(dest[k].data, 0xa5, dest[k].bytes);
    }
    return true;
}

/* Compare E's outputs with data set S; when PLACED, each output with caller memory must
 * have been written there (or, for a value named twice, where its first name went). */
static bool check_outputs(const bd_graph *g, const cf_dataset *s, size_t set_idx, const bd_exec *e,
                          const bd_exec_dest *dest, bool placed, cf_result *r)
{
    char msg[CF_REASON_MAX];
    size_t n_out = bd_exec_num_outputs(e);
    if (n_out != s->n_out) {
        snprintf(msg, sizeof msg, "%zu outputs, data set %zu expects %zu", n_out, set_idx, s->n_out);
        cf_fail(r, CF_FAIL, "outputs", msg);
        return false;
    }
    for (size_t k = 0; k < n_out; k++) {
        const DLTensor *o = bd_exec_output(e, k);
        bool in_dest = false;
        for (size_t j = 0; j < n_out; j++)
            in_dest |= dest[j].data && o->data == dest[j].data;
        if (placed && dest[k].data && !in_dest) {
            snprintf(msg, sizeof msg, "output '%s' was not written into the caller's memory",
                     bd_graph_output(g, k)->name);
            cf_fail(r, CF_FAIL, "placed", msg);
            return false;
        }
        const bd_onnx_tensor *want = &s->out[k];
        cf_view got = { bd_dtype_from_dl(o->dtype), o->ndim, o->shape, o->data };
        cf_view exp = { want->dtype, want->shape.rank, want->shape.dims, want->data };
        if (!cf_compare(bd_graph_output(g, k)->name, &got, &exp, msg, sizeof msg)) {
            cf_fail(r, CF_FAIL, placed ? "result (outputs in caller memory)" : "result", msg);
            return false;
        }
    }
    return true;
}

/* Run data set S on M; on a mismatch or error fill R and return false. */
static bool run_set(bd_model *m, const cf_dataset *s, size_t set_idx, cf_result *r)
{
    const bd_graph *g = bd_model_graph(m);
    size_t n_in = bd_graph_num_inputs(g);
    DLTensor in[CF_MAX_TENSORS];
    char msg[CF_REASON_MAX];
    if (n_in > CF_MAX_TENSORS) {
        cf_fail(r, CF_FAIL, "inputs", "more than 64 inputs");
        return false;
    }
    for (size_t i = 0; i < n_in; i++) {
        const bd_value *v = bd_graph_input(g, i);
        const bd_onnx_tensor *t = cf_input_for(s, v->name, i);
        memset(&in[i], 0, sizeof in[i]);
        if (!t || !bd_dtype_to_dl(t->dtype, &in[i].dtype)) {
            snprintf(msg, sizeof msg, "data set %zu has no usable tensor for input '%s'", set_idx,
                     v->name);
            cf_fail(r, CF_FAIL, "inputs", msg);
            return false;
        }
        in[i].data   = t->data;
        in[i].device = (DLDevice){ kDLCPU, 0 };
        in[i].ndim   = t->shape.rank;
        in[i].shape  = (int64_t *)t->shape.dims;    /* DLPack 0.6: not const; only read */
    }

    bd_error err = { 0 };
    const bd_plan *p = NULL;
    bd_exec *e = NULL;
    if (bd_model_plan(m, in, n_in, &p, &err)) {
        cf_fail(r, cf_is_type_gap(err.msg) ? CF_UNSUPPORTED_TYPE : CF_FAIL, "plan", err.msg);
        return false;
    }
    if (!plan_is_dnnl_only(p))
        r->dnnl_only = false;
    bool ok = bd_exec_create(p, &e, &err) == 0;
    if (!ok)
        cf_fail(r, CF_FAIL, "exec", err.msg);
    /* Twice on one context: first with every output written straight into memory of ours
     * (bd_exec_run_into, as braidd does for shared-memory outputs), then into the arena
     * (the context must come back from the first run intact). Both are checked. */
    for (int pass = 0; ok && pass < 2; pass++) {
        bd_exec_dest dest[CF_MAX_TENSORS] = { { 0 } };
        ok = place_outputs(bd_plan_graph(p), dest, pass == 0, r);
        if (ok && bd_exec_run_into(e, in, n_in, dest, pass == 0 ? bd_exec_num_outputs(e) : 0, &err)) {
            cf_fail(r, CF_FAIL, "run", err.msg);
            ok = false;
        }
        if (ok)
            ok = check_outputs(g, s, set_idx, e, dest, pass == 0, r);
        for (size_t k = 0; k < CF_MAX_TENSORS; k++)
            free(dest[k].data);
    }
    bd_exec_destroy(e);
    return ok;
}

/* ONNX's BFLOAT16 test data arrives as UINT16 words (docs/conformance.md): not counted. */
static bool is_float(int dtype)
{
    return dtype == BD_DT_FLOAT || dtype == BD_DT_DOUBLE || dtype == BD_DT_FLOAT16 ||
           dtype == BD_DT_BFLOAT16;
}

void cf_run_braid(const char *dir, const cf_options *o, cf_result *r)
{
    memset(r, 0, sizeof *r);
    r->dnnl_only = true;
    char path[1200];
    snprintf(path, sizeof path, "%s/model.onnx", dir);

    /* The data first: a file that is not a numeric TensorProto (a SequenceProto, an
     * OptionalProto, a string tensor) marks a case of the types braid does not carry. */
    bd_error err = { 0 };
    cf_case c;
    if (cf_case_load(dir, &c, &err)) {
        cf_fail(r, CF_UNSUPPORTED_TYPE, "test data", err.msg);
        return;
    }
    r->float_case = c.n_sets > 0;
    for (size_t i = 0; i < c.n_sets; i++)
        for (size_t k = 0; k < c.sets[i].n_out; k++)
            r->float_case &= is_float(c.sets[i].out[k].dtype);
    /* One thread per engine: the runner parallelizes across cases instead (each case runs in
     * its own process, so this configures ORT once per process). The cost rule keeps its
     * default, as a user gets it. */
    bd_model_options opts = { .threads = 1, .engine = o->engine };
    bd_model *m = NULL;
    if (bd_engines_configure("ort", &(bd_engine_config){ .library = o->ort_library, .threads = 1 }, &err) ||
        bd_model_open(path, &opts, &m, &err)) {
        cf_fail(r, cf_is_type_gap(err.msg) ? CF_UNSUPPORTED_TYPE : CF_FAIL, "open", err.msg);
        cf_case_free(&c);
        return;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < c.n_sets; i++)
        ok = run_set(m, &c.sets[i], i, r);
    if (!ok)
        r->dnnl_only = false;
    cf_case_free(&c);
    bd_model_close(m);
}
