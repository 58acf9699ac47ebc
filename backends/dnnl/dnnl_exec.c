/* Execution contexts: one arena, one scratchpad, one stream and one dnnl_memory_t per step
 * argument, all created in ctx_create. run() only rebinds the caller's buffers and executes
 * the steps; it allocates nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "backends/dnnl/dnnl_internal.h"
#include "core/big_alloc.h"

typedef struct dn_ext_bind {
    dnnl_memory_t mem;
    int           out;       /* 1: out[index], 0: in[index] */
    int           index;
} dn_ext_bind;

struct bd_kernel_ctx {
    const bd_kernel  *k;
    void             *arena;
    void             *scratch;
    dnnl_stream_t     stream;
    dnnl_memory_t    *mems;      /* flat over steps' args */
    dnnl_exec_arg_t  *eargs;     /* flat over steps' args */
    int              *first;     /* per step: its first index in mems/eargs */
    dn_ext_bind      *ext;
    int               n_ext, n_mems;
};

void dn_ctx_destroy(bd_kernel_ctx *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->n_mems; i++)
        if (x->mems[i])
            dnnl_memory_destroy(x->mems[i]);
    if (x->stream)
        dnnl_stream_destroy(x->stream);
    free(x->mems);
    free(x->eargs);
    free(x->first);
    free(x->ext);
    bd_big_free(x->arena, x->k->arena_size);
    bd_big_free(x->scratch, x->k->scratch_size);
    free(x);
}

int dn_ctx_create(const bd_kernel *k, bd_kernel_ctx **out, bd_error *err)
{
    dnnl_engine_t eng = dn_engine();
    if (!eng)
        return bd_error_set(err, BD_EBACKEND, "dnnl: cannot create the CPU engine");
    bd_kernel_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return bd_error_set(err, BD_ENOMEM, "dnnl: out of memory for a context");
    x->k = k;
    int total = 0;
    for (int s = 0; s < k->n_steps; s++)
        total += k->steps[s].nargs;
    x->mems = calloc((size_t)total + 1, sizeof *x->mems);
    x->eargs = calloc((size_t)total + 1, sizeof *x->eargs);
    x->ext = calloc((size_t)total + 1, sizeof *x->ext);
    x->first = calloc((size_t)k->n_steps + 1, sizeof *x->first);
    if (k->arena_size)
        x->arena = bd_big_alloc(k->arena_size);
    if (k->scratch_size)
        x->scratch = bd_big_alloc(k->scratch_size);
    if (!x->mems || !x->eargs || !x->ext || !x->first || (k->arena_size && !x->arena) ||
        (k->scratch_size && !x->scratch)) {
        dn_ctx_destroy(x);
        return bd_error_set(err, BD_ENOMEM, "dnnl: out of memory for a context (arena %zu bytes)",
                            k->arena_size);
    }
    dnnl_status_t st = dnnl_stream_create(&x->stream, eng, dnnl_stream_default_flags);
    if (st != dnnl_success) {
        dn_ctx_destroy(x);
        return bd_error_set(err, BD_EBACKEND, "dnnl: dnnl_stream_create failed: %s", dnnl_status2str(st));
    }
    int m = 0;
    for (int s = 0; s < k->n_steps; s++) {
        const dn_step *step = &k->steps[s];
        x->first[s] = m;
        for (int a = 0; a < step->nargs; a++, m++) {
            const dn_arg *arg = &step->args[a];
            void *h = NULL;
            if (arg->buf < 0) {
                h = x->scratch;
            } else {
                const dn_buffer *b = &k->bufs[arg->buf];
                if (b->kind == DN_BUF_ARENA)
                    h = (char *)x->arena + b->offset;
                else if (b->kind == DN_BUF_CONST)
                    h = b->data;
                else {
                    x->ext[x->n_ext].out = b->kind == DN_BUF_OUTPUT;
                    x->ext[x->n_ext].index = b->index;
                }
            }
            st = dnnl_memory_create(&x->mems[m], &arg->md, eng, h);
            x->n_mems = m + 1;
            if (st != dnnl_success) {
                dn_ctx_destroy(x);
                return bd_error_set(err, BD_EBACKEND, "dnnl: node '%s': dnnl_memory_create failed: %s",
                                    step->node, dnnl_status2str(st));
            }
            if (arg->buf >= 0 && (k->bufs[arg->buf].kind == DN_BUF_INPUT ||
                                  k->bufs[arg->buf].kind == DN_BUF_OUTPUT))
                x->ext[x->n_ext++].mem = x->mems[m];
            x->eargs[m].arg = arg->arg;
            x->eargs[m].memory = x->mems[m];
        }
    }
    *out = x;
    return 0;
}

static bool shape_matches(const DLTensor *t, const bd_shape *s, int dtype)
{
    if (!t->data || bd_dtype_from_dl(t->dtype) != dtype)
        return false;
    int rank = s->rank;
    if (t->ndim != rank)
        return false;
    for (int i = 0; i < rank; i++)
        if (t->shape[i] != s->dims[i])
            return false;
    if (t->strides) {   /* only compact row-major */
        int64_t want = 1;
        for (int i = rank - 1; i >= 0; i--) {
            if (t->shape[i] != 1 && t->strides[i] != want)
                return false;
            want *= t->shape[i];
        }
    }
    return true;
}

static void run_erf(dnnl_memory_t src, dnnl_memory_t dst, size_t n)
{
    void *ps = NULL, *pd = NULL;
    dnnl_memory_get_data_handle(src, &ps);
    dnnl_memory_get_data_handle(dst, &pd);
    dn_erf(ps, pd, n);
}

int dn_run(bd_kernel_ctx *x, const DLTensor *in, size_t n_in, DLTensor *out, size_t n_out,
           bd_error *err)
{
    const bd_kernel *k = x->k;
    if (n_in != (size_t)k->n_inputs || n_out != (size_t)k->n_outputs)
        return bd_error_set(err, BD_EINVAL, "dnnl: expected %d inputs and %d outputs, got %zu and %zu",
                            k->n_inputs, k->n_outputs, n_in, n_out);
    for (size_t i = 0; i < n_in; i++)
        if (!shape_matches(&in[i], &k->in_shapes[i], k->io_dtypes[i]))
            return bd_error_set(err, BD_EINVAL, "dnnl: input %zu is not a compact %s tensor of the compiled shape",
                                i, bd_dtype_name(k->io_dtypes[i]));
    for (size_t i = 0; i < n_out; i++)
        if (!shape_matches(&out[i], &k->out_shapes[i], k->io_dtypes[n_in + i]))
            return bd_error_set(err, BD_EINVAL, "dnnl: output %zu is not a compact %s tensor of the compiled shape",
                                i, bd_dtype_name(k->io_dtypes[n_in + i]));
    for (int e = 0; e < x->n_ext; e++) {
        const DLTensor *t = x->ext[e].out ? &out[x->ext[e].index] : &in[x->ext[e].index];
        void *h = (char *)t->data + t->byte_offset;
        dnnl_status_t st = dnnl_memory_set_data_handle_v2(x->ext[e].mem, h, x->stream);
        if (st != dnnl_success)
            return bd_error_set(err, BD_EBACKEND, "dnnl: dnnl_memory_set_data_handle failed: %s",
                                dnnl_status2str(st));
    }
    int threads = omp_get_max_threads(), now = threads;
    for (int s = 0; s < k->n_steps; s++) {
        const dn_step *step = &k->steps[s];
        int f = x->first[s];
        int want = step->threads ? step->threads : threads;
        if (want != now) {                  /* dnnl_threads.c: small steps run alone */
            omp_set_num_threads(want);
            now = want;
        }
        if (step->kind == DN_STEP_ERF) {
            dnnl_stream_wait(x->stream);
            run_erf(x->mems[f], x->mems[f + 1], dnnl_memory_desc_get_size(&step->args[0].md) / sizeof(float));
            continue;
        }
        if (step->kind != DN_STEP_PRIM) {
            dnnl_stream_wait(x->stream);
            dn_native_run(step, &x->mems[f]);
            continue;
        }
        dnnl_status_t st = dnnl_primitive_execute(step->prim, x->stream, step->nargs, &x->eargs[f]);
        if (st != dnnl_success) {
            omp_set_num_threads(threads);
            return bd_error_set(err, BD_EBACKEND, "dnnl: node '%s': dnnl_primitive_execute failed: %s",
                                step->node, dnnl_status2str(st));
        }
    }
    if (now != threads)
        omp_set_num_threads(threads);
    dnnl_status_t st = dnnl_stream_wait(x->stream);
    if (st != dnnl_success)
        return bd_error_set(err, BD_EBACKEND, "dnnl: dnnl_stream_wait failed: %s", dnnl_status2str(st));
    return 0;
}
