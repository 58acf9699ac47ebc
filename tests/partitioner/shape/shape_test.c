/* Builders and assertions shared by the shape-inference tests. */
#include "tests/partitioner/shape/shape_test.h"
#include "tests/lib/tl_graph.h"

#include <stdio.h>
#include <string.h>

bd_shape tshape(int rank, const int64_t *dims)
{
    return bd_shape_make(rank, dims);
}

bd_shape tscalar(void)
{
    return bd_shape_make(0, NULL);
}

bd_graph *tgraph(void)
{
    bd_graph *g = bd_graph_create("t");
    assert_non_null(g);
    bd_graph_set_opset(g, 13);
    return g;
}

bd_value *tinput(bd_graph *g, const char *name, int dtype, bd_shape shape, const char *sym0)
{
    bd_value *v;
    bd_error err = { 0 };
    if (sym0)
        shape.sym[0] = bd_graph_strdup(g, sym0, (size_t)-1);
    assert_int_equal(bd_graph_add_value(g, name, dtype, &shape, &v, &err), 0);
    assert_int_equal(bd_graph_mark_input(g, v, &err), 0);
    return v;
}

static bd_value *tconst(bd_graph *g, const char *name, int dtype, bd_shape shape,
                        const void *data, size_t nbytes)
{
    bd_value *v;
    bd_error err = { 0 };
    assert_int_equal(bd_graph_add_value(g, name, dtype, &shape, &v, &err), 0);
    void *p = bd_graph_alloc(g, nbytes);
    assert_non_null(p);
    if (data && nbytes)
        memcpy(p, data, nbytes);
    v->data = p;
    v->nbytes = nbytes;
    return v;
}

bd_value *tints(bd_graph *g, const char *name, size_t count, const int64_t *vals)
{
    int64_t dim = (int64_t)count;
    return tconst(g, name, BD_DT_INT64, bd_shape_make(1, &dim), vals, count * sizeof *vals);
}

bd_value *tint_scalar(bd_graph *g, const char *name, int64_t v)
{
    return tconst(g, name, BD_DT_INT64, tscalar(), &v, sizeof v);
}

bd_value *tweight(bd_graph *g, const char *name, bd_shape shape)
{
    int64_t count = bd_shape_numel(&shape);
    assert_true(count >= 0);
    return tconst(g, name, BD_DT_FLOAT, shape, NULL, (size_t)count * sizeof(float));
}

bd_node *tnode_d(bd_graph *g, const char *domain, const char *op, bd_value *const *in,
                 size_t n_in, size_t n_out)
{
    static int counter;
    char name[64], oname[96];
    bd_value *outs[8];
    bd_error err = { 0 };
    assert_true(n_out <= 8);
    snprintf(name, sizeof name, "%s_%d", op, ++counter);
    for (size_t k = 0; k < n_out; k++) {
        snprintf(oname, sizeof oname, "%s:%zu", name, k);
        assert_int_equal(bd_graph_add_value(g, oname, BD_DT_UNDEFINED, NULL, &outs[k], &err), 0);
    }
    bd_node *n;
    assert_int_equal(bd_graph_add_node(g, name, op, domain, in, n_in, outs, n_out, &n, &err), 0);
    return n;
}

bd_node *tnode(bd_graph *g, const char *op, bd_value *const *in, size_t n_in, size_t n_out)
{
    return tnode_d(g, "", op, in, n_in, n_out);
}

bd_value *tout(const bd_node *n, size_t k)
{
    assert_true(k < n->n_outputs);
    return n->outputs[k];
}

void tattr_int(bd_graph *g, bd_node *n, const char *name, int64_t v)
{
    tl_attr_int(g, n, name, v);
}

void tattr_float(bd_graph *g, bd_node *n, const char *name, float v)
{
    tl_attr_float(g, n, name, v);
}

void tattr_str(bd_graph *g, bd_node *n, const char *name, const char *s)
{
    tl_attr_str(g, n, name, s);
}

void tattr_ints(bd_graph *g, bd_node *n, const char *name, size_t count, const int64_t *vals)
{
    tl_attr_ints(g, n, name, count, vals);
}

void tattr_floats(bd_graph *g, bd_node *n, const char *name, size_t count, const float *vals)
{
    tl_attr_floats(g, n, name, count, vals);
}

/* Validation wants graph outputs: tests read every node output, so declare them all. */
static int validate(bd_graph *g, bd_error *err)
{
    if (bd_graph_num_outputs(g) == 0)
        for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
            bd_node *n = bd_graph_node(g, i);
            for (size_t k = 0; k < n->n_outputs; k++)
                assert_int_equal(bd_graph_mark_output(g, n->outputs[k], err), 0);
        }
    return bd_graph_validate(g, err);
}

void tinfer(bd_graph *g, bool require_static)
{
    bd_error err = { 0 };
    int rc = validate(g, &err);
    if (rc == 0)
        rc = bd_shape_infer(g, require_static, &err);
    if (rc)
        fail_msg("inference failed: %s (%s)", err.msg, bd_status_name(rc));
}

void tinfer_fails(bd_graph *g, bool require_static, int code, ...)
{
    bd_error err = { 0 };
    if (validate(g, &err))
        fail_msg("validation failed: %s", err.msg);
    int rc = bd_shape_infer(g, require_static, &err);
    if (rc != code)
        fail_msg("expected %s, got %s: '%s'", bd_status_name(code), bd_status_name(rc), err.msg);
    assert_int_equal(err.code, code);
    va_list ap;
    va_start(ap, code);
    for (const char *want; (want = va_arg(ap, const char *));)
        if (!strstr(err.msg, want))
            fail_msg("message '%s' lacks '%s'", err.msg, want);
    va_end(ap);
}

void tassert_shape(const bd_value *v, bd_shape want)
{
    char got_s[128], want_s[128];
    bd_shape_str(&v->shape, got_s, sizeof got_s);
    bd_shape_str(&want, want_s, sizeof want_s);
    bool same = v->shape.rank == want.rank;
    for (int i = 0; same && i < want.rank; i++)
        same = (v->shape.dims[i] < 0 ? -1 : v->shape.dims[i]) == want.dims[i];
    if (!same)
        fail_msg("value '%s': expected shape %s, got %s", v->name, want_s, got_s);
}

void tassert_ints(const bd_value *v, size_t count, const int64_t *vals)
{
    if (!v->data)
        fail_msg("value '%s' was not folded to a constant", v->name);
    assert_int_equal(v->dtype, BD_DT_INT64);
    assert_int_equal(v->nbytes, count * sizeof(int64_t));
    for (size_t i = 0; i < count; i++) {
        int64_t x;
        memcpy(&x, (const char *)v->data + i * sizeof x, sizeof x);
        if (x != vals[i])
            fail_msg("value '%s'[%zu]: expected %lld, got %lld", v->name, i, (long long)vals[i],
                     (long long)x);
    }
}
