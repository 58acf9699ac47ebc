/* braid's native index kernels with whatever integer values a client can make them read.
 *
 * A request's inputs in shared memory are copied once before a run (docs/security.md, "Shared
 * memory"), so a client that rewrites its region during a run decides only which values that
 * copy holds: any values at all. This harness feeds any values to every native kernel that
 * validates indices or counts — Gather (two axes), GatherElements (two axes), GatherND,
 * ScatterElements, ScatterND, OneHot, RoiAlign's batch indices — through the real runtime
 * (a plan built once per model, then bd_exec_run per input), under ASan+UBSan.
 *
 * Input: byte 0 picks the model; the rest fills its INT64 index input (little-endian, cycled;
 * zeros when empty). Checked beyond the sanitizers: a run that succeeds wrote every output
 * byte only within the output (the arena is ASan-visible through big_alloc's heap blocks).
 * Deterministic, no I/O. Seeds: tests/fuzz/corpus/native_index. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir/dtype.h"
#include "runtime/model.h"
#include "tests/lib/tl_graph.h"

#define MAX_IDX 64

typedef struct target {
    const char *name;
    bd_model   *model;
    const bd_plan *plan;
    bd_exec    *exec;
    int         rank;
    int64_t     dims[4];
    size_t      numel;
} target;

enum { GATHER0, GATHER1, GATHER_EL0, GATHER_EL1, GATHER_ND, SCATTER_EL, SCATTER_ND, ONE_HOT,
       ROI_ALIGN, N_TARGETS };

static target targets[N_TARGETS];

static bd_value *floats(bd_graph *g, const char *name, int rank, const int64_t *dims)
{
    size_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (size_t)dims[d];
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)i * 0.5f - 3.0f;
    bd_value *c = tl_const(g, name, BD_DT_FLOAT, rank, dims, v);
    free(v);
    return c;
}

/* The model of target K: its index input "idx" (INT64 of T->dims), one output. */
static bd_graph *build(int k, target *t)
{
    bd_graph *g = bd_graph_create("native_index");
    bd_graph_set_opset(g, 16);                  /* RoiAlign-16: braid's own kernel */
    bd_value *idx, *out, *in[3];
    bd_node *n;
#define IDX(...) (t->rank = TL_NDIMS(__VA_ARGS__), memcpy(t->dims, (int64_t[]){ __VA_ARGS__ }, \
                  sizeof(int64_t) * (size_t)t->rank), idx = tl_input(g, "idx", BD_DT_INT64, TL_DIMS(__VA_ARGS__)))
    switch (k) {
    case GATHER0:
    case GATHER1:
        t->name = k == GATHER0 ? "Gather axis 0" : "Gather axis 1";
        IDX(2, 3);
        in[0] = floats(g, "data", TL_DIMS(6, 5));
        in[1] = idx;
        out = k == GATHER0 ? tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(2, 3, 5))
                           : tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(6, 2, 3));
        n = tl_op(g, "gather", "Gather", in, 2, out);
        tl_attr_int(g, n, "axis", k == GATHER0 ? 0 : -1);
        break;
    case GATHER_EL0:
    case GATHER_EL1:
        t->name = "GatherElements";
        if (k == GATHER_EL0)
            IDX(3, 5);
        else
            IDX(4, 3);
        in[0] = floats(g, "data", TL_DIMS(4, 5));
        in[1] = idx;
        out = tl_value(g, "y", BD_DT_FLOAT, 2, t->dims);
        n = tl_op(g, "gather_el", "GatherElements", in, 2, out);
        tl_attr_int(g, n, "axis", k == GATHER_EL0 ? 0 : 1);
        break;
    case GATHER_ND:
        t->name = "GatherND";
        IDX(2, 2);
        in[0] = floats(g, "data", TL_DIMS(4, 5, 3));
        in[1] = idx;
        out = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(2, 3));
        tl_op(g, "gather_nd", "GatherND", in, 2, out);
        break;
    case SCATTER_EL:
        t->name = "ScatterElements";
        IDX(4, 2);
        in[0] = floats(g, "data", TL_DIMS(4, 5));
        in[1] = idx;
        in[2] = floats(g, "updates", TL_DIMS(4, 2));
        out = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(4, 5));
        n = tl_op(g, "scatter_el", "ScatterElements", in, 3, out);
        tl_attr_int(g, n, "axis", 1);
        break;
    case SCATTER_ND:
        t->name = "ScatterND";
        IDX(3, 1);
        in[0] = floats(g, "data", TL_DIMS(4, 5));
        in[1] = idx;
        in[2] = floats(g, "updates", TL_DIMS(3, 5));
        out = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(4, 5));
        tl_op(g, "scatter_nd", "ScatterND", in, 3, out);
        break;
    case ONE_HOT: {
        t->name = "OneHot";
        IDX(5);
        int64_t depth = 7;
        float values[2] = { 0, 1 };
        in[0] = idx;
        in[1] = tl_const(g, "depth", BD_DT_INT64, TL_DIMS(1), &depth);
        in[2] = tl_const(g, "values", BD_DT_FLOAT, TL_DIMS(2), values);
        out = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(5, 7));
        tl_op(g, "one_hot", "OneHot", in, 3, out);
        break;
    }
    default: {                                  /* ROI_ALIGN */
        t->name = "RoiAlign";
        IDX(3);
        float rois[12] = { 0, 0, 4, 4, 1, 1, 5, 5, 2, 0, 5, 3 };
        in[0] = floats(g, "x", TL_DIMS(2, 1, 6, 6));
        in[1] = tl_const(g, "rois", BD_DT_FLOAT, TL_DIMS(3, 4), rois);
        in[2] = idx;
        out = tl_value(g, "y", BD_DT_FLOAT, TL_DIMS(3, 1, 2, 2));
        n = tl_op(g, "roi_align", "RoiAlign", in, 3, out);
        tl_attr_int(g, n, "output_height", 2);
        tl_attr_int(g, n, "output_width", 2);
        tl_attr_int(g, n, "sampling_ratio", 2);
        break;
    }
    }
#undef IDX
    tl_output(g, out);
    t->numel = 1;
    for (int d = 0; d < t->rank; d++)
        t->numel *= (size_t)t->dims[d];
    return g;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int k = 0; k < N_TARGETS; k++) {
        target *t = &targets[k];
        bd_graph *g = build(k, t);
        bd_model_options o = { .min_dnnl_region_flops = -1 };
        bd_error err = { 0 };
        int64_t zeros[MAX_IDX] = { 0 };
        DLTensor in = { .data = zeros, .device = { kDLCPU, 0 }, .ndim = t->rank, .shape = t->dims,
                        .dtype = { kDLInt, 64, 1 } };
        if (bd_model_from_graph(g, &o, &t->model, &err) ||
            bd_model_plan_acquire(t->model, &in, 1, &t->plan, &err) ||
            bd_exec_create(t->plan, &t->exec, &err)) {
            fprintf(stderr, "fuzz_native_index: %s: %s\n", t->name, err.msg);
            abort();
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    target *t = &targets[data[0] % N_TARGETS];
    int64_t *idx = aligned_alloc(64, MAX_IDX * sizeof *idx);     /* its own block: ASan sees it */
    if (!idx)
        return 0;
    const uint8_t *v = data + 1;
    size_t n = size - 1;
    for (size_t i = 0; i < t->numel; i++) {
        uint64_t x = 0;
        for (int b = 0; b < 8 && n; b++)
            x |= (uint64_t)v[(i * 8 + (size_t)b) % n] << (8 * b);
        idx[i] = (int64_t)x;
    }
    DLTensor in = { .data = idx, .device = { kDLCPU, 0 }, .ndim = t->rank, .shape = t->dims,
                    .dtype = { kDLInt, 64, 1 } };
    bd_error err = { 0 };
    if (bd_exec_run(t->exec, &in, 1, &err) == 0) {
        const DLTensor *y = bd_exec_output(t->exec, 0);
        size_t bytes = 4;
        for (int d = 0; d < y->ndim; d++)
            bytes *= (size_t)y->shape[d];
        volatile uint8_t sum = 0;                   /* every output byte is readable */
        for (size_t i = 0; i < bytes; i++)
            sum += ((const uint8_t *)y->data)[i];
        (void)sum;
    }
    free(idx);
    return 0;
}
