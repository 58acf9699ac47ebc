/* The engine tests' fixture graph (tf_fixture.h). NodeDefs are encoded with the nanopb
 * messages of proto/tf_graph.proto, as the TF.js frontend re-encodes them. */
#include "tests/backends/tf/tf_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pb_encode.h>

#include "proto/tf_graph.pb.h"

typedef struct attr_spec { bool with_class; } attr_spec;

static bool enc_class_s(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    (void)arg;
    static const char loc[] = "loc:@somewhere/else";
    return pb_encode_tag_for_field(s, f) && pb_encode_string(s, (const pb_byte_t *)loc, sizeof loc - 1);
}

static bool enc_class_list(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    (void)arg;
    tensorflow_AttrValue_ListValue l = tensorflow_AttrValue_ListValue_init_zero;
    l.s.funcs.encode = enc_class_s;
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_ListValue_fields, &l);
}

static bool enc_value(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    int which = *(const int *)*arg;
    tensorflow_AttrValue v = tensorflow_AttrValue_init_zero;
    if (which == 0) {
        v.has_type = true;
        v.type = tensorflow_DataType_DT_FLOAT;
    } else {
        v.list.funcs.encode = enc_class_list;
    }
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_fields, &v);
}

static bool enc_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const attr_spec *a = *arg;
    static char k_t[] = "T", k_class[] = "_class";
    static const int which[2] = { 0, 1 };
    for (int i = 0; i < (a->with_class ? 2 : 1); i++) {
        tensorflow_NodeDef_AttrEntry e = tensorflow_NodeDef_AttrEntry_init_zero;
        e.key = i == 0 ? k_t : k_class;
        e.value.funcs.encode = enc_value;
        e.value.arg = (void *)&which[i];
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, tensorflow_NodeDef_AttrEntry_fields, &e))
            return false;
    }
    return true;
}

void fx_set_origin(bd_graph *g, bd_node *n, const char *name, const char *op,
                   const char *const *inputs, size_t n_inputs, const char *device, bool with_class)
{
    attr_spec spec = { with_class };
    tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
    nd.name = (char *)name;
    nd.op = (char *)op;
    nd.input = (char **)inputs;
    nd.input_count = (pb_size_t)n_inputs;
    nd.device = (char *)device;
    nd.attr.funcs.encode = enc_attrs;
    nd.attr.arg = &spec;
    uint8_t buf[1024];
    pb_ostream_t os = pb_ostream_from_buffer(buf, sizeof buf);
    assert_true(pb_encode(&os, tensorflow_NodeDef_fields, &nd));
    void *p = bd_graph_alloc(g, os.bytes_written);
    assert_non_null(p);
    memcpy(p, buf, os.bytes_written);
    n->origin = p;
    n->origin_len = os.bytes_written;
}

static bd_value *value(bd_graph *g, const char *name, int rank, const int64_t *dims)
{
    bd_shape s = { .rank = rank };
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    bd_value *v = NULL;
    assert_int_equal(bd_graph_add_value(g, name, BD_DT_FLOAT, &s, &v, NULL), 0);
    return v;
}

static bd_node *node(bd_graph *g, const char *name, const char *op, const char *domain,
                     bd_value *const *in, size_t n_in, bd_value *out, int backend)
{
    bd_node *n = NULL;
    assert_int_equal(bd_graph_add_node(g, name, op, domain, in, n_in, &out, 1, &n, NULL), 0);
    n->backend = backend;
    return n;
}

void fx_build(fx_graph *fx)
{
    static const float c_data[3] = { 10, 20, 30 };
    static const int64_t d23[2] = { 2, 3 }, d3[1] = { 3 };
    memset(fx, 0, sizeof *fx);
    bd_graph *g = fx->g = bd_graph_create("fixture");
    assert_non_null(g);
    bd_graph_set_framework(g, "tensorflow");
    fx->x   = value(g, "x", 2, d23);
    fx->c   = value(g, "c", 1, d3);
    fx->neg = value(g, "neg", 2, d23);
    fx->add = value(g, "add", 2, d23);
    fx->mid = value(g, "mid", 2, d23);
    fx->idn = value(g, "idn:0", -1, NULL);      /* no _output_shapes: run-time shape */
    fx->c->data = c_data;
    fx->c->nbytes = sizeof c_data;
    assert_int_equal(bd_graph_mark_input(g, fx->x, NULL), 0);
    assert_int_equal(bd_graph_mark_output(g, fx->idn, NULL), 0);

    fx->n_neg = node(g, "neg", "Neg", "tf", &fx->x, 1, fx->neg, 1);
    static const char *const neg_in[] = { "x" };
    fx_set_origin(g, fx->n_neg, "neg", "Neg", neg_in, 1, "/device:GPU:0", true);

    bd_value *add_in[2] = { fx->neg, fx->c };
    fx->n_add = node(g, "add", "AddV2", "tf", add_in, 2, fx->add, 1);
    static const char *const add_in_names[] = { "neg", "c/read", "^neg", "^elsewhere" };
    fx_set_origin(g, fx->n_add, "add", "AddV2", add_in_names, 4, NULL, false);

    fx->n_mid = node(g, "mid", "Relu", "", &fx->add, 1, fx->mid, 0);
    static const char *const mid_in[] = { "add" };
    fx_set_origin(g, fx->n_mid, "mid", "Relu", mid_in, 1, NULL, false);

    fx->n_idn = node(g, "idn", "Identity", "tf", &fx->mid, 1, fx->idn, 1);
    static const char *const idn_in[] = { "mid" };
    fx_set_origin(g, fx->n_idn, "idn", "Identity", idn_in, 1, NULL, false);
}

void fx_expected(const float *x, float *add, float *mid)
{
    static const float c[3] = { 10, 20, 30 };
    for (int i = 0; i < 6; i++) {
        add[i] = -x[i] + c[i % 3];
        mid[i] = add[i] > 0 ? add[i] : 0;
    }
}
