/* The TensorFlow engine's parts that need no TensorFlow: dtype mapping, the fallback
 * GraphDef (decoded back with nanopb and checked node by node), the fallback-set choice,
 * and loading a library: a missing file, a library lacking a symbol (a fake built by this
 * suite), a complete fake.
 *
 * Environment: FAKE_TF_LIB, FAKE_TF_PARTIAL_LIB, FAKE_TF_V1_LIB (paths of the fakes: complete,
 * lacking TF_SessionRun, saying it is TensorFlow 1.15; set by meson);
 * BRAID_TF_DUMP=FILE additionally writes the fixture's GraphDef to FILE (used by the protoc
 * cross-check, graphdef_protoc.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pb_decode.h>
#include <pb_encode.h>

#include "backends/tf/tf_api.h"
#include "backends/tf/tfb_dtype.h"
#include "backends/tf/tfb_subgraph_def.h"
#include "backends/tf/tfb_runtime.h"
#include "tests/backends/tf/tf_fixture.h"
#include "proto/tf_graph.pb.h"

/* ---- a decoded GraphDef ------------------------------------------------------------------ */

#define MAXN 16
#define MAXA 8

typedef struct dec_attr {
    char    key[32];
    int     type;                  /* AttrValue.type */
    int     rank;                  /* AttrValue.shape or the tensor's shape; -2 = none */
    bool    unknown_rank;
    int64_t dims[8];
    int     tensor_dtype;
    uint8_t content[64];
    size_t  content_len;
    bool    has_tensor;
    bool    has_f;                 /* AttrValue.f */
    float   f;
} dec_attr;

typedef struct dec_node {
    char     name[64], op[32], device[64];
    char     inputs[8][64];
    int      n_inputs;
    dec_attr attrs[MAXA];
    int      n_attrs;
} dec_node;

typedef struct dec_graph {
    dec_node nodes[MAXN];
    int      n;
    int      producer;
} dec_graph;

static bool d_dim(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    dec_attr *a = *arg;
    tensorflow_TensorShapeProto_Dim d = tensorflow_TensorShapeProto_Dim_init_zero;
    if (!pb_decode(s, tensorflow_TensorShapeProto_Dim_fields, &d) || a->rank >= 8)
        return false;
    a->dims[a->rank++] = d.size;
    return true;
}

static bool d_shape(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    dec_attr *a = *arg;
    tensorflow_TensorShapeProto sp = tensorflow_TensorShapeProto_init_zero;
    sp.dim.funcs.decode = d_dim;
    sp.dim.arg = a;
    a->rank = 0;
    if (!pb_decode(s, tensorflow_TensorShapeProto_fields, &sp))
        return false;
    a->unknown_rank = sp.has_unknown_rank && sp.unknown_rank;
    return true;
}

static bool d_content(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    dec_attr *a = *arg;
    if (s->bytes_left > sizeof a->content)
        return false;
    a->content_len = s->bytes_left;
    return pb_read(s, a->content, a->content_len);
}

static bool d_tensor(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    dec_attr *a = *arg;
    tensorflow_TensorProto t = tensorflow_TensorProto_init_zero;
    t.tensor_shape.funcs.decode = d_shape;
    t.tensor_shape.arg = a;
    t.tensor_content.funcs.decode = d_content;
    t.tensor_content.arg = a;
    if (!pb_decode(s, tensorflow_TensorProto_fields, &t))
        return false;
    a->tensor_dtype = t.dtype;
    a->has_tensor = true;
    return true;
}

static bool d_attr(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    dec_node *n = *arg;
    if (n->n_attrs >= MAXA)
        return false;
    dec_attr *a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    a->rank = -2;
    while (s->bytes_left) {
        pb_wire_type_t wt;
        uint32_t tag;
        bool eof;
        if (!pb_decode_tag(s, &wt, &tag, &eof))
            return false;
        pb_istream_t sub;
        if ((tag != 1 && tag != 2) || wt != PB_WT_STRING) {
            if (!pb_skip_field(s, wt))
                return false;
            continue;
        }
        if (!pb_make_string_substream(s, &sub))
            return false;
        bool ok;
        if (tag == 1) {
            size_t len = sub.bytes_left < sizeof a->key - 1 ? sub.bytes_left : sizeof a->key - 1;
            ok = pb_read(&sub, (pb_byte_t *)a->key, len) && pb_read(&sub, NULL, sub.bytes_left);
        } else {
            tensorflow_AttrValue v = tensorflow_AttrValue_init_zero;
            v.shape.funcs.decode = d_shape;
            v.shape.arg = a;
            v.tensor.funcs.decode = d_tensor;
            v.tensor.arg = a;
            ok = pb_decode(&sub, tensorflow_AttrValue_fields, &v);
            if (v.has_type)
                a->type = v.type;
            a->has_f = v.has_f;
            a->f = v.f;
        }
        if (!pb_close_string_substream(s, &sub) || !ok)
            return false;
    }
    return true;
}

static bool d_node(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    dec_graph *g = *arg;
    if (g->n >= MAXN)
        return false;
    dec_node *n = &g->nodes[g->n++];
    memset(n, 0, sizeof *n);
    tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
    nd.attr.funcs.decode = d_attr;
    nd.attr.arg = n;
    if (!pb_decode(s, tensorflow_NodeDef_fields, &nd))
        return false;
    snprintf(n->name, sizeof n->name, "%s", nd.name ? nd.name : "");
    snprintf(n->op, sizeof n->op, "%s", nd.op ? nd.op : "");
    snprintf(n->device, sizeof n->device, "%s", nd.device ? nd.device : "");
    for (pb_size_t i = 0; i < nd.input_count && i < 8; i++)
        snprintf(n->inputs[n->n_inputs++], 64, "%s", nd.input[i]);
    pb_release(tensorflow_NodeDef_fields, &nd);
    return true;
}

static void decode_graph(const uint8_t *bytes, size_t len, dec_graph *g)
{
    memset(g, 0, sizeof *g);
    tensorflow_GraphDef def = tensorflow_GraphDef_init_zero;
    def.node.funcs.decode = d_node;
    def.node.arg = g;
    pb_istream_t is = pb_istream_from_buffer(bytes, len);
    assert_true(pb_decode(&is, tensorflow_GraphDef_fields, &def));
    assert_true(def.has_versions);
    g->producer = def.versions.producer;
}

static const dec_node *find(const dec_graph *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return &g->nodes[i];
    return NULL;
}

static const dec_attr *attr(const dec_node *n, const char *key)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].key, key) == 0)
            return &n->attrs[i];
    return NULL;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_dtype_mapping_round_trips(void **state)
{
    (void)state;
    static const struct { int ir, tf; } pairs[] = {
        { BD_DT_FLOAT, 1 }, { BD_DT_DOUBLE, 2 }, { BD_DT_INT32, 3 }, { BD_DT_UINT8, 4 },
        { BD_DT_INT16, 5 }, { BD_DT_INT8, 6 }, { BD_DT_STRING, 7 }, { BD_DT_INT64, 9 },
        { BD_DT_BOOL, 10 }, { BD_DT_BFLOAT16, 14 }, { BD_DT_UINT16, 17 }, { BD_DT_FLOAT16, 19 },
        { BD_DT_UINT32, 22 }, { BD_DT_UINT64, 23 },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        assert_int_equal(tfb_dtype_from_ir(pairs[i].ir), pairs[i].tf);
        assert_int_equal(tfb_dtype_to_ir(pairs[i].tf), pairs[i].ir);
    }
    /* the enum in tf_api.h carries TensorFlow's numbers */
    assert_int_equal(TF_FLOAT, 1);
    assert_int_equal(TF_HALF, 19);
    assert_int_equal(TF_BFLOAT16, 14);
    assert_int_equal(TF_UINT64, 23);
    assert_int_equal(tfb_dtype_from_ir(BD_DT_UNDEFINED), 0);
    assert_int_equal(tfb_dtype_to_ir(8 /* DT_COMPLEX64 */), BD_DT_UNDEFINED);
    assert_int_equal(tfb_dtype_to_ir(20 /* DT_RESOURCE */), BD_DT_UNDEFINED);
}

static void build_fixture_graphdef(fx_graph *fx, tfb_graphdef *gd)
{
    fx_build(fx);
    bd_node *step[2] = { fx->n_neg, fx->n_add };
    bd_subgraph sg = { .graph = fx->g, .nodes = step, .n_nodes = 2 };
    bd_node **nodes = NULL;
    size_t n = 0;
    bd_error err = {0};
    assert_int_equal(tfb_fallback_nodes(&sg, &nodes, &n, &err), 0);
    /* the model's whole fallback set, not just this step's nodes */
    assert_int_equal(n, 3);
    assert_ptr_equal(nodes[0], fx->n_neg);
    assert_ptr_equal(nodes[1], fx->n_add);
    assert_ptr_equal(nodes[2], fx->n_idn);
    int rc = tfb_graphdef_build(fx->g, nodes, n, 1205, gd, &err);
    free(nodes);
    if (rc)
        fail_msg("%s", err.msg);
}

static void test_graphdef_holds_nodes_consts_and_placeholders(void **state)
{
    (void)state;
    fx_graph fx;
    tfb_graphdef gd;
    build_fixture_graphdef(&fx, &gd);
    assert_int_equal(gd.n_nodes, 3);
    assert_int_equal(gd.n_consts, 1);
    assert_int_equal(gd.n_placeholders, 2);

    const char *dump = getenv("BRAID_TF_DUMP");
    if (dump) {
        FILE *f = fopen(dump, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(gd.bytes, 1, gd.len, f), gd.len);
        fclose(f);
    }

    dec_graph g;
    decode_graph(gd.bytes, gd.len, &g);
    assert_int_equal(g.n, 6);
    assert_int_equal(g.producer, 1205);

    /* boundary tensors: Placeholders with dtype and rank (dims unknown) */
    const dec_node *px = find(&g, "braid_feed/x");
    assert_non_null(px);
    assert_string_equal(px->op, "Placeholder");
    assert_int_equal(px->n_inputs, 0);
    assert_int_equal(attr(px, "dtype")->type, 1);
    const dec_attr *sh = attr(px, "shape");
    assert_non_null(sh);
    assert_int_equal(sh->rank, 2);
    assert_int_equal(sh->dims[0], -1);
    assert_int_equal(sh->dims[1], -1);
    assert_non_null(find(&g, "braid_feed/mid"));

    /* the initializer: a Const with the bytes of value->data */
    const dec_node *pc = find(&g, "braid_const/c");
    assert_non_null(pc);
    assert_string_equal(pc->op, "Const");
    assert_int_equal(attr(pc, "dtype")->type, 1);
    const dec_attr *val = attr(pc, "value");
    assert_non_null(val);
    assert_true(val->has_tensor);
    assert_int_equal(val->tensor_dtype, 1);
    assert_int_equal(val->rank, 1);
    assert_int_equal(val->dims[0], 3);
    assert_int_equal(val->content_len, 12);
    assert_memory_equal(val->content, fx.c->data, 12);

    /* fallback nodes: original name/op/attrs; inputs rewritten; device and _class dropped */
    const dec_node *neg = find(&g, "neg");
    assert_non_null(neg);
    assert_string_equal(neg->op, "Neg");
    assert_string_equal(neg->device, "");
    assert_int_equal(neg->n_inputs, 1);
    assert_string_equal(neg->inputs[0], "braid_feed/x");
    assert_int_equal(neg->n_attrs, 1);
    assert_int_equal(attr(neg, "T")->type, 1);
    assert_null(attr(neg, "_class"));

    const dec_node *add = find(&g, "add");
    assert_non_null(add);
    assert_string_equal(add->op, "AddV2");
    assert_int_equal(add->n_inputs, 3);            /* "^elsewhere" is not in the GraphDef */
    assert_string_equal(add->inputs[0], "neg");
    assert_string_equal(add->inputs[1], "braid_const/c");
    assert_string_equal(add->inputs[2], "^neg");

    const dec_node *idn = find(&g, "idn");
    assert_non_null(idn);
    assert_int_equal(idn->n_inputs, 1);
    assert_string_equal(idn->inputs[0], "braid_feed/mid");
    assert_null(find(&g, "mid"));                   /* oneDNN's node stays out */

    /* where each value lives, for feeds and fetches */
    assert_string_equal(gd.op_name[fx.add->index], "add");
    assert_int_equal(gd.out_index[fx.add->index], 0);
    assert_string_equal(gd.op_name[fx.idn->index], "idn");
    assert_string_equal(gd.op_name[fx.mid->index], "braid_feed/mid");
    tfb_graphdef_free(&gd);
    bd_graph_destroy(fx.g);
}

static void test_graphdef_is_the_same_for_every_step_and_plan(void **state)
{
    (void)state;
    fx_graph fx;
    tfb_graphdef a, b;
    build_fixture_graphdef(&fx, &a);
    /* a plan for other input shapes: the same bytes (Placeholders carry ranks only) */
    fx.x->shape.dims[0] = 7;
    bd_node *step[1] = { fx.n_idn };
    bd_subgraph sg = { .graph = fx.g, .nodes = step, .n_nodes = 1 };
    bd_node **nodes;
    size_t n;
    assert_int_equal(tfb_fallback_nodes(&sg, &nodes, &n, NULL), 0);
    assert_int_equal(tfb_graphdef_build(fx.g, nodes, n, 1205, &b, NULL), 0);
    free(nodes);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.bytes, b.bytes, a.len);
    tfb_graphdef_free(&a);
    tfb_graphdef_free(&b);
    bd_graph_destroy(fx.g);
}

static void test_graphdef_rejects_mismatched_inputs(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    static const char *const two[] = { "x", "y" };
    fx_set_origin(fx.g, fx.n_neg, "neg", "Neg", two, 2, NULL, false);
    bd_node *nodes[1] = { fx.n_neg };
    tfb_graphdef gd;
    bd_error err = {0};
    assert_int_equal(tfb_graphdef_build(fx.g, nodes, 1, 1205, &gd, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "node 'neg' (op Neg): its NodeDef has 2 data inputs, the IR node 1"));
    assert_null(gd.bytes);

    fx.n_neg->origin = "\xff\xff";                  /* not a NodeDef */
    fx.n_neg->origin_len = 2;
    assert_int_equal(tfb_graphdef_build(fx.g, nodes, 1, 1205, &gd, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "node 'neg': its NodeDef does not decode"));
    bd_graph_destroy(fx.g);
}

static void test_graphdef_rejects_string_constants(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    fx.c->dtype = BD_DT_STRING;
    bd_node *nodes[2] = { fx.n_neg, fx.n_add };
    tfb_graphdef gd;
    bd_error err = {0};
    assert_int_equal(tfb_graphdef_build(fx.g, nodes, 2, 1205, &gd, &err), BD_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "input 'c' is a string tensor constant"));
    bd_graph_destroy(fx.g);
}

static void test_generated_names_do_not_clash_with_the_model(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    /* a model node already called braid_feed/x: the Placeholder takes another name */
    static const char *const in[] = { "x" };
    fx_set_origin(fx.g, fx.n_neg, "braid_feed/x", "Neg", in, 1, NULL, false);
    bd_node *nodes[1] = { fx.n_neg };
    tfb_graphdef gd;
    bd_error err = {0};
    assert_int_equal(tfb_graphdef_build(fx.g, nodes, 1, 1205, &gd, &err), 0);
    char want[64];
    snprintf(want, sizeof want, "braid_feed/x_%d", fx.x->index);
    assert_string_equal(gd.op_name[fx.x->index], want);
    dec_graph g;
    decode_graph(gd.bytes, gd.len, &g);
    assert_string_equal(find(&g, "braid_feed/x")->inputs[0], want);
    tfb_graphdef_free(&gd);
    bd_graph_destroy(fx.g);
}

/* A hand-built while loop, the way the TF frontends import one (the back edge Merge <-
 * NextIteration is left out of the IR):
 *
 *   enter = Enter(x)  penter = Enter(p)  lc = LoopCond(penter)  merge = Merge(enter, <ni>)
 *   sw:0, sw:1 = Switch(merge, lc)      add = AddV2(sw:1, c)    c: a folded constant
 *   k = Const(^noop)                     mul = Mul(add, k)       ni = NextIteration(mul)
 *   ex = Exit(sw:0)                      out = AddV2(x, c)       (outside the loop)
 *
 * TensorFlow wants every node of the body in the loop's frame: the folded constant gets a
 * copy anchored on a pivot Identity of sw:1, the Const whose control input named a dropped
 * node gets one on its reader's producer, and the constant read outside keeps no anchor. */
static bd_value *loop_value(bd_graph *g, const char *name, int dtype)
{
    bd_shape s = { .rank = 1, .dims = { 1 } };
    bd_value *v = NULL;
    assert_int_equal(bd_graph_add_value(g, name, dtype, &s, &v, NULL), 0);
    return v;
}

static bd_node *loop_node(bd_graph *g, const char *name, const char *op, bd_value *const *in,
                          size_t n_in, bd_value *const *out, size_t n_out,
                          const char *const *nodedef_in, size_t n_nodedef_in)
{
    bd_node *n = NULL;
    assert_int_equal(bd_graph_add_node(g, name, op, "tf", in, n_in, out, n_out, &n, NULL), 0);
    n->backend = 1;
    fx_set_origin(g, n, name, op, nodedef_in, n_nodedef_in, NULL, false);
    return n;
}

static const float c_data[1] = { 1 };

/* The loop above, its node outside the loop named OUT_NAME. */
static bd_graph *loop_graph(const char *out_name)
{
    bd_graph *g = bd_graph_create("loop");
    assert_non_null(g);
    bd_graph_set_framework(g, "tensorflow");
    bd_value *x = loop_value(g, "x", BD_DT_FLOAT), *p = loop_value(g, "p", BD_DT_BOOL);
    bd_value *c = loop_value(g, "c", BD_DT_FLOAT);
    c->data = c_data;
    c->nbytes = sizeof c_data;
    assert_int_equal(bd_graph_mark_input(g, x, NULL), 0);
    assert_int_equal(bd_graph_mark_input(g, p, NULL), 0);
    bd_value *enter = loop_value(g, "enter", BD_DT_FLOAT), *penter = loop_value(g, "penter", BD_DT_BOOL);
    bd_value *lc = loop_value(g, "lc", BD_DT_BOOL), *merge = loop_value(g, "merge", BD_DT_FLOAT);
    bd_value *sw[2] = { loop_value(g, "sw", BD_DT_FLOAT), loop_value(g, "sw:1", BD_DT_FLOAT) };
    bd_value *add = loop_value(g, "add", BD_DT_FLOAT), *k = loop_value(g, "k", BD_DT_FLOAT);
    bd_value *mul = loop_value(g, "mul", BD_DT_FLOAT), *ni = loop_value(g, "ni", BD_DT_FLOAT);
    bd_value *ex = loop_value(g, "ex", BD_DT_FLOAT), *out = loop_value(g, "out", BD_DT_FLOAT);
    assert_int_equal(bd_graph_mark_output(g, ex, NULL), 0);
    assert_int_equal(bd_graph_mark_output(g, out, NULL), 0);

    static const char *const in_x[] = { "x" }, *const in_p[] = { "p" }, *const in_pe[] = { "penter" };
    static const char *const in_merge[] = { "enter", "ni" }, *const in_sw[] = { "merge", "lc" };
    static const char *const in_add[] = { "sw:1", "c" }, *const in_k[] = { "^noop" };
    static const char *const in_mul[] = { "add", "k" }, *const in_ni[] = { "mul" };
    static const char *const in_ex[] = { "sw" }, *const in_out[] = { "x", "c" };
    bd_value *merge_in[2] = { enter, NULL }, *sw_in[2] = { merge, lc }, *add_in[2] = { sw[1], c };
    bd_value *mul_in[2] = { add, k }, *out_in[2] = { x, c };
    loop_node(g, "enter", "Enter", &x, 1, &enter, 1, in_x, 1);
    loop_node(g, "penter", "Enter", &p, 1, &penter, 1, in_p, 1);
    loop_node(g, "lc", "LoopCond", &penter, 1, &lc, 1, in_pe, 1);
    loop_node(g, "merge", "Merge", merge_in, 2, &merge, 1, in_merge, 2);
    loop_node(g, "sw", "Switch", sw_in, 2, sw, 2, in_sw, 2);
    loop_node(g, "add", "AddV2", add_in, 2, &add, 1, in_add, 2);
    loop_node(g, "k", "Const", NULL, 0, &k, 1, in_k, 1);
    loop_node(g, "mul", "Mul", mul_in, 2, &mul, 1, in_mul, 2);
    loop_node(g, "ni", "NextIteration", &mul, 1, &ni, 1, in_ni, 1);
    loop_node(g, "ex", "Exit", &sw[0], 1, &ex, 1, in_ex, 1);
    loop_node(g, out_name, "AddV2", out_in, 2, &out, 1, in_out, 2);
    return g;
}

/* The fallback GraphDef of every node of G. */
static int build_all(bd_graph *g, tfb_graphdef *gd, bd_error *err)
{
    bd_node **nodes = NULL, *all[16];
    size_t n = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        all[n++] = bd_graph_node(g, i);
    bd_subgraph sg = { .graph = g, .nodes = all, .n_nodes = n };
    assert_int_equal(tfb_fallback_nodes(&sg, &nodes, &n, err), 0);
    int rc = tfb_graphdef_build(g, nodes, n, 1205, gd, err);
    free(nodes);
    return rc;
}

static void test_graphdef_keeps_loop_constants_in_their_frame(void **state)
{
    (void)state;
    bd_graph *g = loop_graph("out");
    bd_error err = {0};
    tfb_graphdef gd;
    if (build_all(g, &gd, &err))
        fail_msg("%s", err.msg);
    dec_graph dg;
    decode_graph(gd.bytes, gd.len, &dg);

    /* the folded constant inside the loop: a copy anchored on a pivot of the Switch output */
    const dec_node *pivot = find(&dg, "braid_pivot/sw/1");
    assert_non_null(pivot);
    assert_string_equal(pivot->op, "Identity");
    assert_int_equal(pivot->n_inputs, 1);
    assert_string_equal(pivot->inputs[0], "sw:1");
    assert_int_equal(attr(pivot, "T")->type, 1);
    const dec_node *a = find(&dg, "add");
    assert_non_null(a);
    assert_string_equal(a->inputs[0], "sw:1");
    assert_string_equal(a->inputs[1], "braid_const/c/in_frame/braid_pivot/sw/1");
    const dec_node *cf = find(&dg, "braid_const/c/in_frame/braid_pivot/sw/1");
    assert_non_null(cf);
    assert_string_equal(cf->op, "Const");
    assert_int_equal(cf->n_inputs, 1);
    assert_string_equal(cf->inputs[0], "^braid_pivot/sw/1");
    assert_memory_equal(attr(cf, "value")->content, c_data, sizeof c_data);
    /* the Const the loop body runs itself: its dropped "^noop" becomes its reader's frame */
    const dec_node *kn = find(&dg, "k");
    assert_non_null(kn);
    assert_int_equal(kn->n_inputs, 1);
    assert_string_equal(kn->inputs[0], "^add");
    /* outside the loop: the plain constant, no anchor; the back edge kept as written */
    const dec_node *o = find(&dg, "out");
    assert_string_equal(o->inputs[1], "braid_const/c");
    const dec_node *plain = find(&dg, "braid_const/c");
    assert_non_null(plain);
    assert_int_equal(plain->n_inputs, 0);
    const dec_node *m = find(&dg, "merge");
    assert_int_equal(m->n_inputs, 2);
    assert_string_equal(m->inputs[1], "ni");
    tfb_graphdef_free(&gd);
    bd_graph_destroy(g);
}

/* A hostile model naming one of its nodes as the pivot braid would add: refused, naming it. */
static void test_graphdef_refuses_a_model_node_named_like_a_pivot(void **state)
{
    (void)state;
    bd_graph *g = loop_graph("braid_pivot/sw/1");
    bd_error err = {0};
    tfb_graphdef gd;
    assert_int_equal(build_all(g, &gd, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "'braid_pivot/sw/1' for a loop frame: the model has a node of that name"));
    bd_graph_destroy(g);
}

/* A fused depthwise convolution as TF.js and TensorFlow's remapper write it:
 *
 *   pre = Neg(x)
 *   dw  = _FusedDepthwiseConv2dNative(pre, w, b, ^pre)  fused_ops [BiasAdd, ACT], num_args 1
 *
 * Its NodeDef carries T, strides, padding and num_args (encoded here: tf_fixture's NodeDefs
 * have T only). */
typedef struct dw_attr { const char *key; int kind; int64_t i; const char *s; } dw_attr;  /* kind 0 type, 1 i, 2 s, 3 ints */

static bool dw_enc_s(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const char *str = *arg;
    return pb_encode_tag_for_field(s, f) && pb_encode_string(s, (const pb_byte_t *)str, strlen(str));
}

static bool dw_enc_ints(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    (void)arg;
    for (int k = 0; k < 4; k++)
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_varint(s, 1))
            return false;
    return true;
}

static bool dw_enc_list(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    (void)arg;
    tensorflow_AttrValue_ListValue l = tensorflow_AttrValue_ListValue_init_zero;
    l.i.funcs.encode = dw_enc_ints;
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_ListValue_fields, &l);
}

static bool dw_enc_value(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const dw_attr *a = *arg;
    tensorflow_AttrValue v = tensorflow_AttrValue_init_zero;
    if (a->kind == 0) {
        v.has_type = true;
        v.type = tensorflow_DataType_DT_FLOAT;
    } else if (a->kind == 1) {
        v.has_i = true;
        v.i = a->i;
    } else if (a->kind == 2) {
        v.s.funcs.encode = dw_enc_s;
        v.s.arg = (void *)a->s;
    } else {
        v.list.funcs.encode = dw_enc_list;
    }
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_fields, &v);
}

static bool dw_enc_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    (void)arg;
    static const dw_attr attrs[] = { { "T", 0, 0, NULL }, { "strides", 3, 0, NULL },
                                     { "padding", 2, 0, "SAME" }, { "num_args", 1, 1, NULL } };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
        tensorflow_NodeDef_AttrEntry e = tensorflow_NodeDef_AttrEntry_init_zero;
        e.key = (char *)attrs[k].key;
        e.value.funcs.encode = dw_enc_value;
        e.value.arg = (void *)&attrs[k];
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, tensorflow_NodeDef_AttrEntry_fields, &e))
            return false;
    }
    return true;
}

static const float dw_w[2] = { 0 }, dw_b[2] = { 0 };      /* a 1x1 filter: dec_attr holds 64 bytes */

/* The graph above with ACT (NULL: fused_ops [BiasAdd] alone); ALPHA >= 0 sets leakyrelu_alpha. */
static bd_graph *depthwise_graph(const char *act, float alpha)
{
    bd_graph *g = bd_graph_create("dw");
    assert_non_null(g);
    bd_graph_set_framework(g, "tensorflow");
    bd_shape sx = { .rank = 4, .dims = { 1, 4, 4, 2 } }, sw = { .rank = 4, .dims = { 1, 1, 2, 1 } };
    bd_shape sb = { .rank = 1, .dims = { 2 } };
    bd_value *x, *pre, *w, *b, *y;
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, &sx, &x, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "pre", BD_DT_FLOAT, &sx, &pre, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "w", BD_DT_FLOAT, &sw, &w, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "b", BD_DT_FLOAT, &sb, &b, NULL), 0);
    assert_int_equal(bd_graph_add_value(g, "dw", BD_DT_FLOAT, &sx, &y, NULL), 0);
    w->data = dw_w;
    w->nbytes = sizeof dw_w;
    b->data = dw_b;
    b->nbytes = sizeof dw_b;
    assert_int_equal(bd_graph_mark_input(g, x, NULL), 0);
    assert_int_equal(bd_graph_mark_output(g, y, NULL), 0);
    bd_node *n = NULL;
    assert_int_equal(bd_graph_add_node(g, "pre", "Neg", "tf", &x, 1, &pre, 1, &n, NULL), 0);
    n->backend = 1;
    static const char *const pre_in[] = { "x" };
    fx_set_origin(g, n, "pre", "Neg", pre_in, 1, NULL, false);
    bd_value *in[3] = { pre, w, b };
    assert_int_equal(bd_graph_add_node(g, "dw", "_FusedDepthwiseConv2dNative", "tf", in, 3, &y, 1, &n, NULL), 0);
    n->backend = 1;
    static const char *const nd_in[] = { "pre", "w", "b", "^pre" };
    tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
    nd.name = "dw";
    nd.op = "_FusedDepthwiseConv2dNative";
    nd.input = (char **)nd_in;
    nd.input_count = 4;
    nd.attr.funcs.encode = dw_enc_attrs;
    uint8_t buf[512];
    pb_ostream_t os = pb_ostream_from_buffer(buf, sizeof buf);
    assert_true(pb_encode(&os, tensorflow_NodeDef_fields, &nd));
    void *p = bd_graph_alloc(g, os.bytes_written);
    assert_non_null(p);
    memcpy(p, buf, os.bytes_written);
    n->origin = p;
    n->origin_len = os.bytes_written;
    /* the simple attrs the TF frontends copy onto the IR node */
    static const char *ops[2] = { "BiasAdd", NULL };
    ops[1] = act;
    bd_attr fo = { .name = "fused_ops", .type = BD_ATTR_STRINGS, .strings = ops, .n = act ? 2 : 1 };
    assert_int_equal(bd_node_add_attr(g, n, &fo, NULL), 0);
    if (alpha >= 0) {
        bd_attr a = { .name = "leakyrelu_alpha", .type = BD_ATTR_FLOAT, .f = alpha };
        assert_int_equal(bd_node_add_attr(g, n, &a, NULL), 0);
    }
    return g;
}

/* TensorFlow runs _FusedDepthwiseConv2dNative only where its oneDNN is on (elsewhere the op's
 * kernel is a placeholder: "Missing 0-th output"), so the GraphDef carries the ops it fuses;
 * the last keeps the node's name, each keeps only the attrs its op has. */
static void test_graphdef_writes_a_fused_depthwise_convolution_unfused(void **state)
{
    (void)state;
    bd_graph *g = depthwise_graph("Relu6", -1);
    bd_error err = {0};
    tfb_graphdef gd;
    if (build_all(g, &gd, &err))
        fail_msg("%s", err.msg);
    dec_graph dg;
    decode_graph(gd.bytes, gd.len, &dg);
    const dec_node *conv = find(&dg, "dw/braid_depthwise");
    assert_non_null(conv);
    assert_string_equal(conv->op, "DepthwiseConv2dNative");
    assert_int_equal(conv->n_inputs, 3);
    assert_string_equal(conv->inputs[0], "pre");
    assert_string_equal(conv->inputs[1], "braid_const/w");
    assert_string_equal(conv->inputs[2], "^pre");              /* the control input, kept */
    assert_int_equal(conv->n_attrs, 3);
    assert_int_equal(attr(conv, "T")->type, 1);
    assert_non_null(attr(conv, "strides"));
    assert_non_null(attr(conv, "padding"));
    assert_null(attr(conv, "num_args"));
    const dec_node *bias = find(&dg, "dw/braid_bias_add");
    assert_non_null(bias);
    assert_string_equal(bias->op, "BiasAdd");
    assert_int_equal(bias->n_inputs, 2);
    assert_string_equal(bias->inputs[0], "dw/braid_depthwise");
    assert_string_equal(bias->inputs[1], "braid_const/b");
    assert_int_equal(bias->n_attrs, 1);
    const dec_node *act = find(&dg, "dw");
    assert_non_null(act);
    assert_string_equal(act->op, "Relu6");
    assert_int_equal(act->n_inputs, 1);
    assert_string_equal(act->inputs[0], "dw/braid_bias_add");
    assert_int_equal(act->n_attrs, 1);
    assert_int_equal(attr(act, "T")->type, 1);
    for (int i = 0; i < dg.n; i++)
        assert_string_not_equal(dg.nodes[i].op, "_FusedDepthwiseConv2dNative");
    assert_string_equal(gd.op_name[bd_graph_output(g, 0)->index], "dw");
    tfb_graphdef_free(&gd);
    bd_graph_destroy(g);

    /* LeakyRelu gets its alpha; BiasAdd alone keeps the node's name */
    g = depthwise_graph("LeakyRelu", 0.125f);
    if (build_all(g, &gd, &err))
        fail_msg("%s", err.msg);
    decode_graph(gd.bytes, gd.len, &dg);
    act = find(&dg, "dw");
    assert_string_equal(act->op, "LeakyRelu");
    assert_true(attr(act, "alpha")->has_f);
    assert_true(attr(act, "alpha")->f == 0.125f);
    tfb_graphdef_free(&gd);
    bd_graph_destroy(g);
    g = depthwise_graph(NULL, -1);
    if (build_all(g, &gd, &err))
        fail_msg("%s", err.msg);
    decode_graph(gd.bytes, gd.len, &dg);
    assert_string_equal(find(&dg, "dw")->op, "BiasAdd");
    assert_string_equal(find(&dg, "dw")->inputs[0], "dw/braid_depthwise");
    assert_null(find(&dg, "dw/braid_bias_add"));
    tfb_graphdef_free(&gd);
    bd_graph_destroy(g);

    /* an epilogue TensorFlow has no one op for stays fused, as written */
    g = depthwise_graph("Prelu", -1);
    if (build_all(g, &gd, &err))
        fail_msg("%s", err.msg);
    decode_graph(gd.bytes, gd.len, &dg);
    assert_string_equal(find(&dg, "dw")->op, "_FusedDepthwiseConv2dNative");
    assert_int_equal(find(&dg, "dw")->n_attrs, 4);
    assert_null(find(&dg, "dw/braid_depthwise"));
    tfb_graphdef_free(&gd);
    bd_graph_destroy(g);
}

static void test_nodedef_data_inputs_skip_control_inputs(void **state)
{
    (void)state;
    fx_graph fx;
    fx_build(&fx);
    size_t n = 0;
    assert_int_equal(tfb_nodedef_data_inputs(fx.n_add->origin, fx.n_add->origin_len, &n, NULL), 0);
    assert_int_equal(n, 2);
    bd_graph_destroy(fx.g);
}

static void test_missing_library_is_named(void **state)
{
    (void)state;
    tfb_lib lib;
    bd_error err = {0};
    assert_int_equal(tfb_lib_open("/nonexistent/libtensorflow.so.2", &lib, &err), BD_ENOTFOUND);
    assert_non_null(strstr(err.msg, "cannot load /nonexistent/libtensorflow.so.2"));
}

static void test_missing_symbol_is_named(void **state)
{
    (void)state;
    const char *path = getenv("FAKE_TF_PARTIAL_LIB");
    assert_non_null(path);
    tfb_lib lib;
    bd_error err = {0};
    assert_int_equal(tfb_lib_open(path, &lib, &err), BD_ENOTFOUND);
    char want[1200];
    snprintf(want, sizeof want, "libtensorflow.so.2 at %s lacks TF_SessionRun", path);
    assert_string_equal(err.msg, want);
    assert_null(lib.handle);
}

/* A complete library that says it is TensorFlow 1 (the fake built with FAKE_TF_VERSION). */
static void test_tensorflow_1_is_refused_by_version(void **state)
{
    (void)state;
    const char *path = getenv("FAKE_TF_V1_LIB");
    assert_non_null(path);
    tfb_lib lib;
    bd_error err = {0};
    assert_int_equal(tfb_lib_open(path, &lib, &err), BD_EUNSUPPORTED);
    char want[1400];
    snprintf(want, sizeof want, "libtensorflow.so.2 at %s is TensorFlow 1.15.0-fake; braid needs "
             "TensorFlow 2.x (scripts/fetch_tf.sh installs tensorflow-cpu 2.21.0)", path);
    assert_string_equal(err.msg, want);
    assert_null(lib.handle);
}

static void test_complete_library_resolves_every_symbol(void **state)
{
    (void)state;
    const char *path = getenv("FAKE_TF_LIB");
    assert_non_null(path);
    tfb_lib lib;
    bd_error err = {0};
    if (tfb_lib_open(path, &lib, &err))
        fail_msg("%s", err.msg);
#define CHECK_RESOLVED(name, ret, params) assert_non_null(lib.name);
    BD_TF_FUNCTIONS(CHECK_RESOLVED)
#undef CHECK_RESOLVED
    assert_non_null(strstr(lib.version, "fake"));
    tfb_lib_close(&lib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_mapping_round_trips),
        cmocka_unit_test(test_graphdef_holds_nodes_consts_and_placeholders),
        cmocka_unit_test(test_graphdef_is_the_same_for_every_step_and_plan),
        cmocka_unit_test(test_graphdef_rejects_mismatched_inputs),
        cmocka_unit_test(test_graphdef_rejects_string_constants),
        cmocka_unit_test(test_generated_names_do_not_clash_with_the_model),
        cmocka_unit_test(test_graphdef_keeps_loop_constants_in_their_frame),
        cmocka_unit_test(test_graphdef_refuses_a_model_node_named_like_a_pivot),
        cmocka_unit_test(test_graphdef_writes_a_fused_depthwise_convolution_unfused),
        cmocka_unit_test(test_nodedef_data_inputs_skip_control_inputs),
        cmocka_unit_test(test_missing_library_is_named),
        cmocka_unit_test(test_missing_symbol_is_named),
        cmocka_unit_test(test_tensorflow_1_is_refused_by_version),
        cmocka_unit_test(test_complete_library_resolves_every_symbol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
