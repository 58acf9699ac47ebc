/* Which steps run on the calling thread alone. A oneDNN primitive on N OpenMP threads pays a
 * fork/join per run, and with the passive wait policy braid uses (docs/performance.md) a
 * futex wake of the sleeping workers: tens of microseconds on a VM. A step whose whole work is
 * smaller than that is faster on one thread, so its primitive is created and run with one
 * (oneDNN sizes its work split from the thread count at creation). The estimate is the
 * node's time on one core at rates measured on these machines; the threshold is
 * BRAID_DNNL_SERIAL_US (docs/performance.md, "Threads"). */
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/dnnl/dnnl_internal.h"

/* One core's sustained rates on the shapes of small steps (well under the peak). */
#define DN_FLOPS_PER_US  50000.0    /* 50 GFLOP/s: convolutions and matrix products */
#define DN_BYTES_PER_US  10000.0    /* 10 GB/s: everything memory-bound */
#define DN_SERIAL_US_DEFAULT 30.0

static double g_serial_us = DN_SERIAL_US_DEFAULT;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *s = getenv("BRAID_DNNL_SERIAL_US");
    char *end;
    double v = s ? strtod(s, &end) : -1;
    if (s && *s && !*end && v >= 0 && v <= 1e6)
        g_serial_us = v;
}

double dn_serial_us(void)
{
    pthread_once(&g_once, read_env);
    return g_serial_us;
}

static double numel(const bd_value *v)
{
    return v && bd_shape_is_static(&v->shape) ? (double)bd_shape_numel(&v->shape) : 0.0;
}

/* N's multiply-adds x 2 (convolutions, transposed too, and matrix products), else 0. */
static double flops(const bd_node *n)
{
    const bd_value *y = n->outputs[0];
    if (!strcmp(n->op_type, "Conv") && n->n_inputs > 1 && n->inputs[1]) {
        /* each output element takes the weights of one output channel: IC/group x kernel */
        int64_t oc = y->shape.rank > 1 ? y->shape.dims[dn_channels_last(n) ? y->shape.rank - 1 : 1] : 0;
        return oc > 0 ? 2.0 * numel(y) * numel(n->inputs[1]) / (double)oc : 0.0;
    }
    if (!strcmp(n->op_type, "ConvTranspose") && n->n_inputs > 1 && n->inputs[0] && n->inputs[1]) {
        /* each input element meets the weights of one input channel: OC/group x kernel */
        const bd_shape *x = &n->inputs[0]->shape;
        int64_t ic = x->rank > 1 ? x->dims[1] : 0;
        return ic > 0 ? 2.0 * numel(n->inputs[0]) * numel(n->inputs[1]) / (double)ic : 0.0;
    }
    if ((!strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm")) && n->inputs[0]) {
        const bd_shape *a = &n->inputs[0]->shape;
        int64_t k = a->rank > 0 ? a->dims[a->rank - 1] : 0;
        if (!strcmp(n->op_type, "Gemm") && bd_node_attr_int(n, "transA", 0) && a->rank == 2)
            k = a->dims[0];
        return 2.0 * numel(y) * (double)k;
    }
    return 0.0;
}

bool dn_serial_node(const bd_node *n)
{
    if (n->n_outputs < 1)
        return true;
    /* every input is read each run, constants too: a conv or matmul on one pixel or row (a
     * squeeze-excitation's, a classifier's) is a matrix-vector product whose time is reading
     * its weights */
    double bytes = 0;
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i])
            bytes += 4.0 * numel(n->inputs[i]);
    bytes += 4.0 * numel(n->outputs[0]);
    double us = flops(n) / DN_FLOPS_PER_US;
    if (bytes / DN_BYTES_PER_US > us)
        us = bytes / DN_BYTES_PER_US;
    return us < dn_serial_us();
}

bool dn_serial_bytes(size_t bytes)
{
    return (double)bytes / DN_BYTES_PER_US < dn_serial_us();
}

void dn_elementwise(const float *x, float *y, size_t n, size_t chunk, dn_range_fn range,
                    const void *params)
{
    size_t chunks = (n + chunk - 1) / chunk;
    if (chunks < 4 || omp_get_max_threads() < 2) {
        range(x, y, n, params);
        return;
    }
    #pragma omp parallel for schedule(static)
    for (size_t k = 0; k < chunks; k++) {
        size_t at = k * chunk, len = n - at < chunk ? n - at : chunk;
        range(x + at, y + at, len, params);
    }
}
