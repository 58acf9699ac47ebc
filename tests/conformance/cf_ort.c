/* One conformance case through ONNX Runtime itself — the baseline braid is held to. Uses the
 * benchmark's ORT runner (bench/ort_runner.h): one CPU session, one intra-op thread, graph
 * optimizations on, inputs wrapped in place. */
#include "tests/conformance/conformance.h"

#include <stdio.h>
#include <string.h>

#include "bench/bench_tensor.h"
#include "bench/ort_runner.h"

static bool run_set(ort_runner *ort, const cf_dataset *s, size_t set_idx, cf_result *r)
{
    size_t n_in = ort_runner_num_inputs(ort);
    bench_tensor in[CF_MAX_TENSORS];
    char msg[CF_REASON_MAX];
    bool ok = n_in <= CF_MAX_TENSORS;
    if (!ok)
        cf_fail(r, CF_FAIL, "inputs", "more than 64 inputs");
    size_t made = 0;
    for (size_t i = 0; ok && i < n_in; i++) {
        const char *name = ort_runner_input_name(ort, i);
        const bd_onnx_tensor *t = cf_input_for(s, name, i);
        if (!t) {
            snprintf(msg, sizeof msg, "data set %zu has no tensor for input '%s'", set_idx, name);
            cf_fail(r, CF_FAIL, "inputs", msg);
            ok = false;
        } else if (bench_tensor_init(&in[i], name, t->dtype, t->shape.rank, t->shape.dims, msg,
                                     sizeof msg)) {
            cf_fail(r, cf_is_type_gap(msg) ? CF_UNSUPPORTED_TYPE : CF_FAIL, "inputs", msg);
            ok = false;
        } else {
            made++;
            memcpy(in[i].data, t->data, t->nbytes);
        }
    }
    /* The first run of prepare() is the run: it returns ORT's own outputs. */
    if (ok && ort_runner_prepare(ort, in, n_in, msg, sizeof msg)) {
        cf_fail(r, cf_is_type_gap(msg) ? CF_UNSUPPORTED_TYPE : CF_FAIL, "run", msg);
        ok = false;
    }
    size_t n_out = ort_runner_num_outputs(ort);
    if (ok && n_out != s->n_out) {
        snprintf(msg, sizeof msg, "%zu outputs, data set %zu expects %zu", n_out, set_idx, s->n_out);
        cf_fail(r, CF_FAIL, "outputs", msg);
        ok = false;
    }
    for (size_t k = 0; ok && k < n_out; k++) {
        const bench_tensor *o = ort_runner_output(ort, k);
        const bd_onnx_tensor *want = &s->out[k];
        cf_view got = { o->dtype, o->rank, o->dims, o->data };
        cf_view exp = { want->dtype, want->shape.rank, want->shape.dims, want->data };
        if (!cf_compare(o->name, &got, &exp, msg, sizeof msg)) {
            cf_fail(r, CF_FAIL, "result", msg);
            ok = false;
        }
    }
    /* The runner borrows the inputs until the next prepare or close: the caller closes it
     * before the next data set's tensors would be needed, so free them only then. */
    for (size_t i = 0; i < made; i++)
        bench_tensor_free(&in[i]);
    return ok;
}

void cf_run_ort(const char *dir, const cf_options *o, cf_result *r)
{
    memset(r, 0, sizeof *r);
    char path[1200], msg[CF_REASON_MAX];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    ort_runner_options opts = { .library = o->ort_library, .threads = 1, .spin = false };
    cf_case c;
    bd_error err = { 0 };
    if (cf_case_load(dir, &c, &err)) {      /* see cf_braid.c: not a numeric tensor */
        cf_fail(r, CF_UNSUPPORTED_TYPE, "test data", err.msg);
        return;
    }
    ort_runner *ort = NULL;
    if (ort_runner_open(path, &opts, &ort, msg, sizeof msg)) {
        cf_fail(r, cf_is_type_gap(msg) ? CF_UNSUPPORTED_TYPE : CF_FAIL, "open", msg);
        cf_case_free(&c);
        return;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < c.n_sets; i++)
        ok = run_set(ort, &c.sets[i], i, r);
    cf_case_free(&c);
    ort_runner_close(ort);
}
