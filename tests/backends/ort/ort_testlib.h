/* Small graph builders for the ORT engine tests (header-only, one test binary each). */
#ifndef BD_TESTS_BACKENDS_ORT_ORT_TESTLIB_H
#define BD_TESTS_BACKENDS_ORT_ORT_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "backends/ort/ort_backend.h"
#include "core/ir/graph.h"
#include "tests/lib/tl_graph.h"

#define SHP(...) shp((int64_t[]){ __VA_ARGS__ }, (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)))

static inline bd_shape shp(const int64_t *d, int rank) { return bd_shape_make(rank, d); }

/* A value NAME of DTYPE and SHAPE (dims may be -1). */
static inline bd_value *val(bd_graph *g, const char *name, int dtype, bd_shape s)
{
    return tl_value(g, name, dtype, s.rank, s.dims);
}

static inline bd_value *input(bd_graph *g, const char *name, int dtype, bd_shape s)
{
    return tl_input(g, name, dtype, s.rank, s.dims);
}

/* An initializer NAME with a copy of DATA (NBYTES) in the graph's pool. */
static inline bd_value *constant(bd_graph *g, const char *name, int dtype, bd_shape s, const void *data,
                                 size_t nbytes)
{
    bd_value *v = val(g, name, dtype, s);
    void *p = bd_graph_alloc(g, nbytes ? nbytes : 1);
    assert_non_null(p);
    memcpy(p, data, nbytes);
    v->data = p;
    v->nbytes = nbytes;
    return v;
}

static inline bd_node *node(bd_graph *g, const char *name, const char *op, bd_value *const *in, size_t n_in,
                            bd_value *const *out, size_t n_out)
{
    return tl_node(g, name, op, "", in, n_in, out, n_out);
}

static inline void attr(bd_graph *g, bd_node *n, bd_attr a)
{
    bd_error err = { 0 };
    assert_int_equal(bd_node_add_attr(g, n, &a, &err), 0);
}

/* SG over all of G's nodes, with the given boundary inputs/outputs. */
static inline bd_subgraph whole(const bd_graph *g, bd_node **nodes, bd_value **in, size_t n_in,
                                bd_value **out, size_t n_out)
{
    size_t n = bd_graph_num_nodes(g);
    for (size_t i = 0; i < n; i++)
        nodes[i] = bd_graph_node(g, i);
    return (bd_subgraph){ .graph = g, .nodes = nodes, .n_nodes = n, .inputs = in, .n_inputs = n_in,
                          .outputs = out, .n_outputs = n_out };
}

static inline DLTensor tensor(void *data, int dtype, int ndim, int64_t *shape)
{
    DLTensor t = { 0 };
    t.data = data;
    t.device.device_type = kDLCPU;
    bd_dtype_to_dl(dtype, &t.dtype);
    t.ndim = ndim;
    t.shape = shape;
    return t;
}

/* Skip (visibly) when ONNX Runtime cannot be loaded on this machine. */
#define ORT_OR_SKIP()                                                                       \
    do {                                                                                    \
        char why_[256];                                                                     \
        if (!bd_ort_available(why_, sizeof why_)) {                                         \
            print_message("SKIPPED: %s\n", why_);                                           \
            skip();                                                                         \
        }                                                                                   \
    } while (0)

#endif
