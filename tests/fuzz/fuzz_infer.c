/* Fuzz the ModelInfer request path without a server: the bytes are a ModelInferRequest as
 * braidd receives it, decoded exactly as bd_call_decode does (bd_wire_decode with the
 * request limits: counts bounded, NUL bytes refused), read as the neutral request
 * (bd_rpc_infer_request) and bound with bd_infer_bind against fixed signatures built in
 * code:
 *
 *   narrow  x FP32 [-1,4]                      -> y FP32 [-1,4], z INT64 [-1], w FP32 [2,2]
 *   wide    one input of every datatype and shape kind: x FP32 [-1,4], ids INT64 [-1],
 *           mask BOOL [2,3], small INT8 [-1,-1], u16 UINT16 [4], h FP16 [-1],
 *           d FP64 (rank unknown), u64 UINT64 [-1], u32 UINT32 [-1], i16 INT16 [3]
 *           -> y FP32 [-1,4]
 *   text    s BYTES [1] (a type braid cannot bind) -> y FP32 [-1,4]
 *
 * Shared memory is enabled with one registered region "r": 4096 bytes of an object that is
 * unlinked at once (the mapping stays), so inputs and outputs may name it
 * (shared_memory_region / _byte_size / _offset) and every range check runs.
 *
 * After a successful bind every byte of every bound input is read (ASan sees a tensor that
 * points past its buffer) and its shape is checked against what the request said; the
 * planned-response size is computed as the worker does. Deterministic, no I/O.
 * Seeds: tests/fuzz/corpus/infer (tests/fuzz/gen_infer_corpus.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pb_decode.h>

#include "daemon/grpc/rpc_infer_request.h"
#include "daemon/infer/infer_bind.h"
#include "proto/inference.pb.h"
#include "proto/wire_span.h"

static bd_graph *narrow, *wide, *text;
static bool verbose;                    /* FUZZ_INFER_VERBOSE=1: say what each input got */

typedef struct sig {
    const char *name;
    int         dtype;
    int         rank;
    int64_t     dims[4];
} sig;

static void die(const char *what, const bd_error *err)
{
    fprintf(stderr, "fuzz_infer: %s: %s\n", what, err ? err->msg : "");
    abort();
}

static bd_graph *build(const char *name, const sig *in, size_t n_in, const sig *out, size_t n_out)
{
    bd_error err = {0};
    bd_graph *g = bd_graph_create(name);
    if (!g)
        die("out of memory", NULL);
    for (size_t pass = 0; pass < 2; pass++) {
        const sig *s = pass ? out : in;
        for (size_t i = 0; i < (pass ? n_out : n_in); i++) {
            bd_shape sh = bd_shape_make(s[i].rank < 0 ? 0 : s[i].rank, s[i].dims);
            sh.rank = s[i].rank;
            bd_value *v;
            if (bd_graph_add_value(g, s[i].name, s[i].dtype, &sh, &v, &err) ||
                (pass ? bd_graph_mark_output(g, v, &err) : bd_graph_mark_input(g, v, &err)))
                die("building the signature", &err);
        }
    }
    return g;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const sig outs[] = {
        { "y", BD_DT_FLOAT, 2, { -1, 4 } },
        { "z", BD_DT_INT64, 1, { -1 } },
        { "w", BD_DT_FLOAT, 2, { 2, 2 } },
    };
    static const sig narrow_in[] = { { "x", BD_DT_FLOAT, 2, { -1, 4 } } };
    static const sig wide_in[] = {
        { "x", BD_DT_FLOAT, 2, { -1, 4 } },    { "ids", BD_DT_INT64, 1, { -1 } },
        { "mask", BD_DT_BOOL, 2, { 2, 3 } },   { "small", BD_DT_INT8, 2, { -1, -1 } },
        { "u16", BD_DT_UINT16, 1, { 4 } },     { "h", BD_DT_FLOAT16, 1, { -1 } },
        { "d", BD_DT_DOUBLE, -1, { 0 } },      { "u64", BD_DT_UINT64, 1, { -1 } },
        { "u32", BD_DT_UINT32, 1, { -1 } },    { "i16", BD_DT_INT16, 1, { 3 } },
    };
    static const sig text_in[] = { { "s", BD_DT_STRING, 1, { 1 } } };
    verbose = getenv("FUZZ_INFER_VERBOSE") != NULL;
    char key[64];
    snprintf(key, sizeof key, "/braid-fuzz-infer-%d", (int)getpid());
    int fd = shm_open(key, O_CREAT | O_EXCL | O_RDWR, 0600);
    bd_error err = {0};
    if (fd < 0 || ftruncate(fd, 4096) != 0 || bd_shm_enable(4, 1 << 20, &err) != 0 ||
        bd_shm_register("r", key, 0, 4096, &err) != 0)
        fprintf(stderr, "fuzz_infer: no shared memory region 'r' (%s): its checks go unexercised\n",
                err.msg);
    if (fd >= 0) {
        close(fd);
        shm_unlink(key);
    }
    narrow = build("narrow", narrow_in, 1, outs, 3);
    wide = build("wide", wide_in, sizeof wide_in / sizeof *wide_in, outs, 1);
    text = build("text", text_in, 1, outs, 1);
    return 0;
}

/* Read every byte of every bound input and check its shape against the request. */
static void touch(const bd_infer_binding *b, const inference_ModelInferRequest *req, const bd_graph *g)
{
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < b->n_inputs; i++) {
        const DLTensor *t = &b->inputs[i];
        size_t numel = 1;
        if (t->ndim < 0 || t->ndim > BD_MAX_RANK || !t->data)
            abort();
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] < 0 || __builtin_mul_overflow(numel, (size_t)t->shape[d], &numel))
                abort();
        size_t bytes = numel * ((t->dtype.bits * t->dtype.lanes + 7u) / 8u);
        const uint8_t *p = t->data;
        for (size_t k = 0; k < bytes; k++)
            sink ^= p[k];
        /* the request's tensor of that name has exactly that shape */
        const char *name = bd_graph_input(g, i)->name;
        bool found = false;
        for (size_t k = 0; k < req->inputs_count; k++) {
            const inference_ModelInferRequest_InferInputTensor *r = &req->inputs[k];
            if (!r->name || strcmp(r->name, name) != 0)
                continue;
            if (found || r->shape_count != (pb_size_t)t->ndim)
                abort();
            for (int d = 0; d < t->ndim; d++)
                if (r->shape[d] != t->shape[d])
                    abort();
            found = true;
        }
        if (!found)
            abort();
    }
    for (size_t k = 0; k < b->n_out; k++)
        if (b->out_idx[k] >= bd_graph_num_outputs(g))
            abort();
    uint64_t planned;
    (void)bd_infer_output_bytes(g, b->out_idx, b->n_out, &planned);
    /* what a run would write in place: every span lies inside the mapping (else this faults) */
    bd_exec_dest dest[4];
    size_t n_go = bd_graph_num_outputs(g);
    if (n_go > sizeof dest / sizeof *dest)
        abort();
    bd_infer_shm_dest(b, dest, n_go);
    for (size_t o = 0; o < n_go; o++)
        if (dest[o].data)
            memset(dest[o].data, 0, dest[o].bytes);
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!narrow)
        LLVMFuzzerInitialize(NULL, NULL);
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    rd.limits = &bd_wire_request_limits;
    inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;
    bd_infer_request nreq = {0};
    bd_error rerr = {0};
    int rrc = -1;
    if (bd_wire_decode(&rd, data, size, inference_ModelInferRequest_fields, &req) &&
        (rrc = bd_rpc_infer_request(&nreq, &req, &rerr)) != 0) {
        if (!rerr.msg[0] || rrc != BD_EINVAL)
            abort();                    /* the request's fault, with a reason */
        if (verbose)
            fprintf(stderr, "refused: %s\n", rerr.msg);
    } else if (rrc == 0) {
        const bd_graph *graphs[] = { narrow, wide, text };
        for (size_t i = 0; i < sizeof graphs / sizeof *graphs; i++) {
            bd_infer_binding b = {0};
            bd_error err = {0};
            int rc = bd_infer_bind(&b, &nreq, graphs[i], &err);
            if (verbose)
                fprintf(stderr, "%s: %s\n", bd_graph_name(graphs[i]), rc ? err.msg : "bound");
            if (rc == 0)
                touch(&b, &req, graphs[i]);
            else if (!err.msg[0] || (rc != BD_EINVAL &&       /* the request's fault, with a reason; */
                     !(rc == BD_ENOTFOUND && strstr(err.msg, "no shared memory region"))))
                abort();                /* an unknown region is NOT_FOUND, as in Triton */
            bd_infer_binding_release(&b);
        }
    } else if (!rd.error || !rd.error[0]) {
        abort();                        /* a refusal always says why */
    } else if (verbose) {
        fprintf(stderr, "refused: %s\n", rd.error);
    }
    bd_infer_request_free(&nreq);
    pb_release(inference_ModelInferRequest_fields, &req);
    bd_wire_reader_free(&rd);
    return 0;
}
