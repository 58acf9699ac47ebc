#include "tests/lib/tl_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int rc, const char *what, const char *name, const bd_error *err)
{
    if (rc == 0)
        return;
    fprintf(stderr, "tests/lib: %s %s refused: %s\n", what, name, err->msg);
    abort();
}

bd_value *tl_value(bd_graph *g, const char *name, int dtype, int rank, const int64_t *dims)
{
    bd_shape s = bd_shape_make(rank, dims);
    bd_value *v = NULL;
    bd_error err = { 0 };
    check(bd_graph_add_value(g, name, dtype, &s, &v, &err), "value", name, &err);
    return v;
}

bd_value *tl_input(bd_graph *g, const char *name, int dtype, int rank, const int64_t *dims)
{
    bd_value *v = tl_value(g, name, dtype, rank, dims);
    bd_error err = { 0 };
    check(bd_graph_mark_input(g, v, &err), "input", name, &err);
    return v;
}

void tl_output(bd_graph *g, bd_value *v)
{
    bd_error err = { 0 };
    check(bd_graph_mark_output(g, v, &err), "output", v->name, &err);
}

bd_value *tl_const(bd_graph *g, const char *name, int dtype, int rank, const int64_t *dims,
                   const void *data)
{
    bd_value *v = tl_value(g, name, dtype, rank, dims);
    size_t bytes = (size_t)bd_shape_numel(&v->shape) * bd_dtype_size(dtype);
    void *copy = bd_graph_alloc(g, bytes ? bytes : 1);
    if (!copy) {
        fprintf(stderr, "tests/lib: constant %s: out of memory\n", name);
        abort();
    }
    memcpy(copy, data, bytes);
    v->data = copy;
    v->nbytes = bytes;
    return v;
}

bd_node *tl_node(bd_graph *g, const char *name, const char *op_type, const char *domain,
                 bd_value *const *in, size_t n_in, bd_value *const *out, size_t n_out)
{
    bd_node *n = NULL;
    bd_error err = { 0 };
    check(bd_graph_add_node(g, name, op_type, domain, in, n_in, out, n_out, &n, &err), "node",
          name, &err);
    return n;
}

bd_node *tl_op(bd_graph *g, const char *name, const char *op_type, bd_value *const *in,
               size_t n_in, bd_value *out)
{
    return tl_node(g, name, op_type, "", in, n_in, &out, 1);
}

/* The IR keeps pointers into the attribute: its name and arrays go into the graph's pool. */
static void add_attr(bd_graph *g, bd_node *n, bd_attr a, const char *name)
{
    a.name = bd_graph_strdup(g, name, (size_t)-1);
    bd_error err = { 0 };
    check(bd_node_add_attr(g, n, &a, &err), "attribute", name, &err);
}

static void *pool_copy(bd_graph *g, const void *p, size_t bytes)
{
    void *copy = bd_graph_alloc(g, bytes ? bytes : 1);
    if (!copy) {
        fprintf(stderr, "tests/lib: attribute: out of memory\n");
        abort();
    }
    memcpy(copy, p, bytes);
    return copy;
}

void tl_attr_int(bd_graph *g, bd_node *n, const char *name, int64_t v)
{
    add_attr(g, n, (bd_attr){ .type = BD_ATTR_INT, .i = v }, name);
}

void tl_attr_float(bd_graph *g, bd_node *n, const char *name, float v)
{
    add_attr(g, n, (bd_attr){ .type = BD_ATTR_FLOAT, .f = v }, name);
}

void tl_attr_str(bd_graph *g, bd_node *n, const char *name, const char *s)
{
    add_attr(g, n, (bd_attr){ .type = BD_ATTR_STRING, .s = bd_graph_strdup(g, s, (size_t)-1),
                              .s_len = strlen(s) }, name);
}

void tl_attr_ints(bd_graph *g, bd_node *n, const char *name, size_t count, const int64_t *v)
{
    add_attr(g, n, (bd_attr){ .type = BD_ATTR_INTS, .n = count,
                              .ints = pool_copy(g, v, count * sizeof *v) }, name);
}

void tl_attr_floats(bd_graph *g, bd_node *n, const char *name, size_t count, const float *v)
{
    add_attr(g, n, (bd_attr){ .type = BD_ATTR_FLOATS, .n = count,
                              .floats = pool_copy(g, v, count * sizeof *v) }, name);
}

void tl_attr_tensor(bd_graph *g, bd_node *n, const char *name, int dtype, int rank,
                    const int64_t *dims, const void *data)
{
    bd_value *t = bd_graph_alloc(g, sizeof *t);
    if (!t) {
        fprintf(stderr, "tests/lib: attribute %s: out of memory\n", name);
        abort();
    }
    memset(t, 0, sizeof *t);
    t->name = bd_graph_strdup(g, name, (size_t)-1);
    t->dtype = dtype;
    t->shape = bd_shape_make(rank, dims);
    t->nbytes = (size_t)bd_shape_numel(&t->shape) * bd_dtype_size(dtype);
    t->data = pool_copy(g, data, t->nbytes);
    t->index = -1;                       /* not in the value table, as an importer makes it */
    add_attr(g, n, (bd_attr){ .type = BD_ATTR_TENSOR, .tensor = t }, name);
}
