/* The TensorFlow importers: GraphDef fixtures (text protos encoded by protoc at build time)
 * and TF.js graph models written by the tests themselves. argv[1] is the directory holding
 * the encoded fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <pb_decode.h>

#include "partitioner/tf/tf_import.h"
#include "proto/tf_graph.pb.h"
#include "tests/lib/tl_file.h"

static const char *fixture_dir = ".";

/* ---- helpers ------------------------------------------------------------------------- */

static uint8_t *read_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixture_dir, name);
    uint8_t *buf = tl_read_file(path, len);
    assert_non_null(buf);
    return buf;
}

static bd_graph *import_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixture_dir, name);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = bd_tf_import_file(path, &g, &err);
    if (rc)
        fail_msg("import %s: %s", name, err.msg);
    return g;
}

static bd_node *node_named(bd_graph *g, const char *name)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        if (strcmp(bd_graph_node(g, i)->name, name) == 0)
            return bd_graph_node(g, i);
    fail_msg("no node '%s'", name);
    return NULL;
}

static bd_node *producer_of(bd_graph *g, const char *value)
{
    bd_value *v = bd_graph_find_value(g, value);
    if (!v || !v->producer)
        fail_msg("no value '%s' with a producer", value);
    return v->producer;
}

static void assert_ints(const bd_node *n, const char *attr, const int64_t *want, size_t k)
{
    const int64_t *got;
    size_t m = bd_node_attr_ints(n, attr, &got);
    assert_int_equal(m, k);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(got[i], want[i]);
}

static float f32_at(const bd_value *v, size_t i)
{
    float f;
    memcpy(&f, (const uint8_t *)v->data + 4 * i, 4);
    return f;
}

/* A decoded NodeDef: name, op, inputs, number of attrs. */
typedef struct decoded_node {
    tensorflow_NodeDef nd;
    size_t n_attrs;
} decoded_node;

static bool count_attr(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    ++*(size_t *)*arg;
    return pb_read(s, NULL, s->bytes_left);
}

static void decode_nodedef(const void *p, size_t n, decoded_node *out)
{
    memset(out, 0, sizeof *out);
    out->nd.attr.funcs.decode = count_attr;
    out->nd.attr.arg = &out->n_attrs;
    pb_istream_t s = pb_istream_from_buffer(p, n);
    assert_true(pb_decode(&s, tensorflow_NodeDef_fields, &out->nd));
}

/* A GraphDef holding N's origin NodeDef, after inputs.pb's Placeholders when WITH_INPUTS
 * (a GraphDef is the concatenation of its fields: node = field 1). Free with free() after
 * the graph read from it. */
static uint8_t *graphdef_with_origin(const bd_node *n, bool with_inputs, size_t *len)
{
    size_t head = 0;
    uint8_t *in = with_inputs ? read_fixture("inputs.pb", &head) : NULL;
    uint8_t *gd = malloc(head + 11 + n->origin_len);
    assert_non_null(gd);
    if (head)
        memcpy(gd, in, head);
    free(in);
    size_t k = head;
    gd[k++] = 0x0a;                                    /* field 1, length-delimited */
    for (size_t v = n->origin_len; ; v >>= 7) {        /* at most 10 bytes */
        gd[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f)
            break;
    }
    memcpy(gd + k, n->origin, n->origin_len);
    *len = k + n->origin_len;
    return gd;
}

/* ---- GraphDef --------------------------------------------------------------------------- */

static void test_conv2d_maps_to_nhwc_conv_with_weights_in_place(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("conv.pb", &len);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_import_memory(buf, len, &g, &err), 0);
    assert_string_equal(bd_graph_framework(g), "tensorflow");
    assert_string_equal(bd_graph_platform(g), "tensorflow_graphdef");
    assert_int_equal(bd_graph_opset(g), 1234);          /* versions.producer */

    assert_int_equal(bd_graph_num_inputs(g), 1);
    const bd_value *x = bd_graph_input(g, 0);
    assert_string_equal(x->name, "x");
    assert_int_equal(x->dtype, BD_DT_FLOAT);
    assert_int_equal(x->shape.rank, 4);
    assert_int_equal(x->shape.dims[0], -1);
    assert_int_equal(x->shape.dims[3], 2);

    bd_node *conv = node_named(g, "conv");
    assert_string_equal(conv->op_type, "Conv");
    assert_string_equal(conv->domain, "");
    assert_int_equal(conv->n_inputs, 2);                   /* "^b" dropped */
    assert_string_equal(bd_node_attr_string(conv, "data_format", ""), "NHWC");
    assert_string_equal(bd_node_attr_string(conv, "filter_format", ""), "HWIO");
    assert_string_equal(bd_node_attr_string(conv, "auto_pad", ""), "SAME_UPPER");
    assert_ints(conv, "strides", (int64_t[]){ 2, 2 }, 2);
    assert_ints(conv, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
    assert_int_equal(bd_node_attr_int(conv, "group", 0), 1);
    /* The filter is the Const's tensor_content, where the buffer has it. */
    const bd_value *w = conv->inputs[1];
    assert_string_equal(w->name, "w");
    assert_int_equal(w->nbytes, 3 * 3 * 2 * 4 * sizeof(float));
    assert_true((const uint8_t *)w->data >= buf && (const uint8_t *)w->data + w->nbytes <= buf + len);
    assert_float_equal(f32_at(w, 0), -0.75f, 0);
    /* _output_shapes gave the conv's output shape. */
    assert_int_equal(conv->outputs[0]->shape.rank, 4);
    assert_int_equal(conv->outputs[0]->shape.dims[1], 3);

    bd_node *bias = node_named(g, "bias");
    assert_string_equal(bias->op_type, "Add");
    assert_ptr_equal(bias->inputs[0], conv->outputs[0]);   /* "conv:0" */
    const bd_value *b = bias->inputs[1];
    assert_float_equal(f32_at(b, 2), 2.0f, 0);

    /* Relu6 -> Clip(0, 6); the Identity output is folded but keeps its name. */
    bd_node *clip = node_named(g, "relu6");
    assert_string_equal(clip->op_type, "Clip");
    assert_int_equal(clip->n_inputs, 3);
    assert_float_equal(f32_at(clip->inputs[2], 0), 6.0f, 0);
    assert_int_equal(bd_graph_num_outputs(g), 1);
    assert_string_equal(bd_graph_output(g, 0)->name, "out");
    assert_ptr_equal(bd_graph_output(g, 0)->producer, clip);
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        assert_string_not_equal(bd_graph_node(g, i)->op_type, "Identity");
    bd_graph_destroy(g);
    free(buf);
}

static void test_fused_ops_expand_into_plain_nodes(void **state)
{
    (void)state;
    bd_graph *g = import_fixture("fused.pb");
    /* _FusedConv2D(BiasAdd, Relu) -> Conv, Add, Relu */
    bd_node *relu = producer_of(g, "fc");
    assert_string_equal(relu->op_type, "Relu");
    bd_node *add = relu->inputs[0]->producer;
    assert_string_equal(add->op_type, "Add");
    assert_string_equal(add->inputs[1]->name, "b");
    bd_node *conv = add->inputs[0]->producer;
    assert_string_equal(conv->op_type, "Conv");
    assert_string_equal(bd_node_attr_string(conv, "auto_pad", ""), "VALID");
    assert_string_equal(bd_node_attr_string(conv, "filter_format", ""), "HWIO");

    /* DepthwiseConv2dNative: group = C, filter [kH,kW,C,M] */
    bd_node *dw = producer_of(g, "dwc");
    assert_string_equal(dw->op_type, "Conv");
    assert_string_equal(bd_node_attr_string(dw, "filter_format", ""), "HWCM");
    assert_int_equal(bd_node_attr_int(dw, "group", 0), 2);

    bd_node *bn = producer_of(g, "bn");
    assert_string_equal(bn->op_type, "BatchNormalization");
    assert_int_equal(bn->n_inputs, 5);
    assert_float_equal(bd_node_attr_float(bn, "epsilon", 0), 0.001f, 1e-9);
    assert_string_equal(bd_node_attr_string(bn, "data_format", ""), "NHWC");

    bd_node *mp = producer_of(g, "mp");
    assert_string_equal(mp->op_type, "MaxPool");
    assert_ints(mp, "kernel_shape", (int64_t[]){ 2, 2 }, 2);
    bd_node *mean = producer_of(g, "mean");
    assert_string_equal(mean->op_type, "ReduceMean");
    assert_ints(mean, "axes", (int64_t[]){ 1, 2 }, 2);
    assert_int_equal(bd_node_attr_int(mean, "keepdims", 1), 0);

    /* _FusedMatMul(BiasAdd, Relu6) -> Gemm, Add, Clip; MatMul(transpose_b) -> Gemm(transB) */
    bd_node *clip = producer_of(g, "fmm");
    assert_string_equal(clip->op_type, "Clip");
    bd_node *gemm = clip->inputs[0]->producer->inputs[0]->producer;
    assert_string_equal(gemm->op_type, "Gemm");
    assert_int_equal(bd_node_attr_int(gemm, "transB", 0), 0);
    bd_node *mm = producer_of(g, "mm");
    assert_string_equal(mm->op_type, "Gemm");
    assert_int_equal(bd_node_attr_int(mm, "transB", 0), 1);
    assert_int_equal(bd_node_attr_int(mm, "transA", 0), 0);

    /* BatchMatMulV2(adj_y) -> Transpose(perm swaps the last two) + MatMul */
    bd_node *bmm = producer_of(g, "bmm");
    assert_string_equal(bmm->op_type, "MatMul");
    bd_node *tr = bmm->inputs[1]->producer;
    assert_string_equal(tr->op_type, "Transpose");
    assert_ints(tr, "perm", (int64_t[]){ 0, 2, 1 }, 3);
    assert_int_equal(bd_graph_num_outputs(g), 2);
    assert_int_equal(bd_graph_num_inputs(g), 3);
    bd_graph_destroy(g);
}

static void test_const_typed_values_are_decoded(void **state)
{
    (void)state;
    bd_graph *g = import_fixture("consts.pb");
    const bd_value *h = bd_graph_find_value(g, "c_half");
    assert_int_equal(h->dtype, BD_DT_FLOAT);               /* half -> float32 at import */
    assert_int_equal(h->nbytes, 12);
    assert_float_equal(f32_at(h, 0), 1.0f, 0);
    assert_float_equal(f32_at(h, 1), -2.0f, 0);
    assert_float_equal(f32_at(h, 2), 0.5f, 0);
    const bd_value *bf = bd_graph_find_value(g, "c_bf16");
    assert_int_equal(bf->dtype, BD_DT_FLOAT);
    assert_float_equal(f32_at(bf, 0), 1.0f, 0);
    const bd_value *i32 = bd_graph_find_value(g, "c_i32");
    assert_int_equal(i32->dtype, BD_DT_INT32);
    assert_int_equal(i32->nbytes, 16);
    for (int i = 0; i < 4; i++)                             /* one value fills the shape */
        assert_int_equal(((const int32_t *)i32->data)[i], 7);
    const bd_value *i64 = bd_graph_find_value(g, "c_i64");
    assert_int_equal(((const int64_t *)i64->data)[1], -2);
    assert_int_equal(((const int64_t *)i64->data)[2], 3000000000LL);
    const bd_value *b = bd_graph_find_value(g, "c_bool");
    assert_int_equal(b->dtype, BD_DT_BOOL);
    assert_int_equal(((const uint8_t *)b->data)[0], 1);
    assert_int_equal(((const uint8_t *)b->data)[1], 0);
    const bd_value *e = bd_graph_find_value(g, "c_empty");
    assert_non_null(e->data);
    assert_int_equal(e->nbytes, 0);
    assert_int_equal(bd_graph_num_outputs(g), 6);
    bd_graph_destroy(g);
}

static void test_unmapped_ops_become_tf_nodes_with_their_nodedef(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("fallback.pb", &len);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_import_memory(buf, len, &g, &err), 0);

    bd_node *gt = node_named(g, "gt");
    assert_string_equal(gt->domain, "tf");
    assert_string_equal(gt->op_type, "GatherTree");
    assert_int_equal(gt->n_inputs, 3);                     /* "^ids" dropped in the IR */
    assert_string_equal(gt->inputs[2]->name, "maxlen");
    assert_int_equal(gt->outputs[0]->shape.rank, 2);       /* from _output_shapes */
    assert_int_equal(gt->outputs[0]->shape.dims[1], 4);
    assert_int_equal(bd_node_attr_int(gt, "T", 0), 3);     /* simple attrs copied */
    /* The origin is the NodeDef, byte for byte inside the file, and decodes back. */
    assert_true((const uint8_t *)gt->origin >= buf && (const uint8_t *)gt->origin < buf + len);
    decoded_node d;
    decode_nodedef(gt->origin, gt->origin_len, &d);
    assert_string_equal(d.nd.name, "gt");
    assert_string_equal(d.nd.op, "GatherTree");
    assert_int_equal(d.nd.input_count, 4);
    assert_string_equal(d.nd.input[3], "^ids");
    assert_int_equal(d.n_attrs, 2);
    pb_release(tensorflow_NodeDef_fields, &d.nd);

    /* An op reading a value TensorFlow makes with a shape not fully known (gt: [?, 4]) stays
     * TensorFlow's too, int32 math included; a second output is "name:1". */
    assert_string_equal(node_named(g, "add")->domain, "tf");
    assert_string_equal(node_named(g, "add")->op_type, "AddV2");
    bd_node *uq = node_named(g, "uq");
    assert_int_equal(uq->n_outputs, 2);
    assert_string_equal(uq->outputs[1]->name, "uq:1");
    /* A string Const is a node TensorFlow holds; a Reshape with a computed shape is a Reshape
     * of the shape cast to INT64 (shape inference folds it when it can). */
    bd_node *words = node_named(g, "words");
    assert_string_equal(words->domain, "tf");
    assert_int_equal(words->outputs[0]->dtype, BD_DT_STRING);
    bd_node *rs = node_named(g, "rs");
    assert_string_equal(rs->domain, "");
    assert_string_equal(rs->op_type, "Reshape");
    assert_string_equal(rs->inputs[1]->producer->op_type, "Cast");
    bd_graph_destroy(g);
    free(buf);
}

static void test_while_loop_back_edge_is_a_null_input(void **state)
{
    (void)state;
    bd_graph *g = import_fixture("loop.pb");
    bd_node *merge = node_named(g, "merge");
    assert_string_equal(merge->domain, "tf");
    assert_int_equal(merge->n_inputs, 2);
    assert_string_equal(merge->inputs[0]->name, "enter");
    assert_null(merge->inputs[1]);
    bd_node *ni = node_named(g, "ni");                     /* reached through the back edge */
    assert_string_equal(ni->op_type, "NextIteration");
    /* Inside the loop everything stays TensorFlow's, even an op braid maps elsewhere. */
    bd_node *add = node_named(g, "add");
    assert_string_equal(add->domain, "tf");
    assert_string_equal(add->op_type, "AddV2");
    assert_non_null(add->origin);
    assert_non_null(bd_graph_find_value(g, "one")->data);   /* outside any frame: a constant */
    assert_int_equal(bd_graph_num_outputs(g), 1);
    assert_string_equal(bd_graph_output(g, 0)->name, "exit");
    bd_graph_destroy(g);
}

static void test_graphdef_origin_reads_back_with_its_attrs(void **state)
{
    (void)state;
    /* The fallback engine re-emits a "tf" node's origin in its own GraphDef: the origin
     * alone must be a complete NodeDef, attrs included, that a GraphDef reader accepts. */
    bd_graph *g = import_fixture("fallback.pb");
    bd_node *gt = node_named(g, "gt");
    size_t len;
    uint8_t *gd = graphdef_with_origin(gt, true, &len);
    bd_graph *back = NULL;
    bd_error err = { 0 };
    if (bd_tf_import_memory(gd, len, &back, &err))
        fail_msg("read back: %s", err.msg);
    bd_node *g2 = node_named(back, "gt");
    assert_string_equal(g2->domain, "tf");
    assert_string_equal(g2->op_type, "GatherTree");
    assert_int_equal(g2->n_inputs, 3);
    assert_int_equal(bd_node_attr_int(g2, "T", 0), 3);
    assert_int_equal(g2->outputs[0]->shape.rank, 2);       /* only _output_shapes says so */
    assert_int_equal(g2->outputs[0]->shape.dims[1], 4);
    bd_graph_destroy(back);
    free(gd);

    /* Without its inputs the reader names the missing one. */
    gd = graphdef_with_origin(gt, false, &len);
    back = NULL;
    assert_int_equal(bd_tf_import_memory(gd, len, &back, &err), BD_EMODEL);
    assert_null(back);
    assert_non_null(strstr(err.msg, "ids"));
    free(gd);
    bd_graph_destroy(g);
}

static void test_malformed_graphdefs_fail_cleanly(void **state)
{
    (void)state;
    static const char *names[] = { "conv.pb", "fused.pb", "fallback.pb", "loop.pb" };
    uint32_t seed = 12345;
    for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
        size_t len;
        uint8_t *buf = read_fixture(names[f], &len);
        uint8_t *copy = malloc(len);
        assert_non_null(copy);
        /* Every truncation: an error or (cut at a node boundary) a smaller valid graph. */
        for (size_t cut = 0; cut < len; cut++) {
            memcpy(copy, buf, cut);
            bd_graph *g = NULL;
            bd_error err = { 0 };
            int rc = bd_tf_import_memory(copy, cut, &g, &err);
            if (rc == 0)
                bd_graph_destroy(g);
            else
                assert_true(err.msg[0] != '\0');
        }
        /* Bit flips. */
        for (int k = 0; k < 2000; k++) {
            memcpy(copy, buf, len);
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            copy[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
            bd_graph *g = NULL;
            bd_error err = { 0 };
            if (bd_tf_import_memory(copy, len, &g, &err) == 0)
                bd_graph_destroy(g);
        }
        free(copy);
        free(buf);
    }
}

static void test_missing_and_empty_files(void **state)
{
    (void)state;
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_import_file("/nonexistent/model.pb", &g, &err), BD_ENOTFOUND);
    assert_int_equal(bd_tf_import_memory("", 0, &g, &err), BD_EMODEL);
    assert_null(g);
}

/* ---- TF.js ---------------------------------------------------------------------------- */

static char tmpdir[256];

static void write_file(const char *name, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* model.json of a small graph model: Conv with a float32 filter straddling the two shards,
 * a uint8-quantized bias, a float16 addend, an op braid does not map (Lgamma), Identity out. */
static const char *model_json(const char *manifest_paths, const char *bias_name)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
        "{\"format\": \"graph-model\", \"generatedBy\": \"test\", \"modelTopology\": {\"node\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},"
        "  \"shape\": {\"shape\": {\"dim\": [{\"size\": \"-1\"}, {\"size\": \"2\"}, {\"size\": \"2\"}, {\"size\": \"1\"}]}}}},"
        "{\"name\": \"w\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},"
        "  \"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"1\"}, {\"size\": \"1\"}, {\"size\": \"1\"}, {\"size\": \"2\"}]}}}}},"
        "{\"name\": \"%s\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},"
        "  \"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}},"
        "{\"name\": \"h\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},"
        "  \"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}}}}},"
        "{\"name\": \"axis\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_INT32\"},"
        "  \"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {}, \"intVal\": [3]}}}},"
        "{\"name\": \"conv\", \"op\": \"_FusedConv2D\", \"input\": [\"x\", \"w\", \"q\"], \"device\": \"/device:CPU:0\","
        "  \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}, \"strides\": {\"list\": {\"i\": [\"1\", \"1\", \"1\", \"1\"]}},"
        "  \"padding\": {\"s\": \"U0FNRQ==\"}, \"data_format\": {\"s\": \"TkhXQw==\"}, \"num_args\": {\"i\": \"1\"},"
        "  \"fused_ops\": {\"list\": {\"s\": [\"Qmlhc0FkZA==\", \"UmVsdQ==\"]}}, \"epsilon\": {\"f\": 0},"
        "  \"explicit_paddings\": {\"list\": {}}, \"use_cudnn_on_gpu\": {\"b\": true}}},"
        "{\"name\": \"add\", \"op\": \"AddV2\", \"input\": [\"conv\", \"h\"], \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}},"
        "{\"name\": \"erf\", \"op\": \"Lgamma\", \"input\": [\"add\", \"^x\"], \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"},"
        "  \"_output_shapes\": {\"list\": {\"shape\": [{\"dim\": [{\"size\": \"-1\"}, {\"size\": \"2\"}, {\"size\": \"2\"}, {\"size\": \"2\"}]}]}}}},"
        "{\"name\": \"cat\", \"op\": \"ConcatV2\", \"input\": [\"erf\", \"erf\", \"axis\"], \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}, \"N\": {\"i\": \"2\"}}},"
        "{\"name\": \"Identity\", \"op\": \"Identity\", \"input\": [\"cat\"], \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}}"
        "], \"versions\": {\"producer\": 1}},"
        "\"weightsManifest\": [{\"paths\": [%s], \"weights\": ["
        "  {\"name\": \"w\", \"shape\": [1, 1, 1, 2], \"dtype\": \"float32\"},"
        "  {\"name\": \"q\", \"shape\": [2], \"dtype\": \"float32\", \"quantization\": {\"dtype\": \"uint8\", \"scale\": 0.5, \"min\": -1.0}},"
        "  {\"name\": \"h\", \"shape\": [2], \"dtype\": \"float32\", \"quantization\": {\"dtype\": \"float16\"}}]}],"
        "\"signature\": {\"inputs\": {\"x:0\": {\"name\": \"x:0\", \"dtype\": \"DT_FLOAT\"}},"
        "  \"outputs\": {\"Identity:0\": {\"name\": \"Identity:0\", \"dtype\": \"DT_FLOAT\"}}}}",
        bias_name, manifest_paths);
    return buf;
}

/* The shards: w = [1.5, -2] (8 bytes, split 4+4 across the shards), q = [0, 4] (uint8),
 * h = [1.0, -2.0] (float16). */
static void write_shards(size_t second_len)
{
    uint8_t all[14];
    float w[2] = { 1.5f, -2.0f };
    memcpy(all, w, 8);
    all[8] = 0;
    all[9] = 4;
    uint16_t h[2] = { 0x3c00, 0xc000 };
    memcpy(all + 10, h, 4);
    write_file("group1-shard1of2.bin", all, 4);
    write_file("group1-shard2of2.bin", all + 4, second_len);
}

static const char *shard_paths = "\"group1-shard1of2.bin\", \"group1-shard2of2.bin\"";

static int tfjs_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/braid-tfjs-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int tfjs_teardown(void **state)
{
    (void)state;
    static const char *files[] = { "model.json", "group1-shard1of2.bin", "group1-shard2of2.bin",
                                   "s.bin", "link.bin" };
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return 0;
}

static int import_tfjs(const char *json, bd_graph **g, bd_error *err)
{
    write_file("model.json", json, strlen(json));
    char path[512];
    snprintf(path, sizeof path, "%s/model.json", tmpdir);
    return bd_tfjs_import_file(path, g, err);
}

static void test_tfjs_graph_model_imports_with_dequantized_weights(void **state)
{
    (void)state;
    write_shards(10);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = import_tfjs(model_json(shard_paths, "q"), &g, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_string_equal(bd_graph_platform(g), "tensorflow_tfjs");
    assert_string_equal(bd_graph_framework(g), "tensorflow");
    assert_int_equal(bd_graph_num_inputs(g), 1);
    assert_string_equal(bd_graph_input(g, 0)->name, "x");
    assert_int_equal(bd_graph_num_outputs(g), 1);
    assert_string_equal(bd_graph_output(g, 0)->name, "Identity");

    const bd_value *w = bd_graph_find_value(g, "w");       /* straddles the shards: copied */
    assert_int_equal(w->dtype, BD_DT_FLOAT);
    assert_float_equal(f32_at(w, 0), 1.5f, 0);
    assert_float_equal(f32_at(w, 1), -2.0f, 0);
    const bd_value *q = bd_graph_find_value(g, "q");       /* uint8: q * 0.5 - 1 */
    assert_float_equal(f32_at(q, 0), -1.0f, 0);
    assert_float_equal(f32_at(q, 1), 1.0f, 0);
    const bd_value *h = bd_graph_find_value(g, "h");       /* float16 */
    assert_float_equal(f32_at(h, 0), 1.0f, 0);
    assert_float_equal(f32_at(h, 1), -2.0f, 0);

    bd_node *relu = producer_of(g, "conv");
    assert_string_equal(relu->op_type, "Relu");
    bd_node *conv = relu->inputs[0]->producer->inputs[0]->producer;
    assert_string_equal(conv->op_type, "Conv");
    assert_string_equal(bd_node_attr_string(conv, "auto_pad", ""), "SAME_UPPER");
    assert_string_equal(bd_node_attr_string(conv, "data_format", ""), "NHWC");

    bd_node *erf = node_named(g, "erf");
    assert_string_equal(erf->domain, "tf");
    assert_int_equal(erf->n_inputs, 1);
    assert_int_equal(erf->outputs[0]->shape.rank, 4);
    decoded_node d;
    decode_nodedef(erf->origin, erf->origin_len, &d);
    assert_string_equal(d.nd.name, "erf");
    assert_string_equal(d.nd.op, "Lgamma");
    assert_int_equal(d.nd.input_count, 2);
    assert_string_equal(d.nd.input[0], "add");
    assert_string_equal(d.nd.input[1], "^x");
    assert_int_equal(d.n_attrs, 2);
    pb_release(tensorflow_NodeDef_fields, &d.nd);

    /* cat reads erf, whose recorded shape [?, 2, 2, 2] no rule completes: TensorFlow's too. */
    bd_node *cat = producer_of(g, "Identity");
    assert_string_equal(cat->op_type, "ConcatV2");
    assert_string_equal(cat->domain, "tf");
    assert_int_equal(cat->n_inputs, 3);
    bd_graph_destroy(g);
}

static void test_tfjs_origin_keeps_attrs(void **state)
{
    (void)state;
    /* A TF.js node's origin is re-encoded from its JSON; braid's GraphDef reader reads the
     * attrs back: T as a type, _output_shapes as a list of shapes. */
    write_shards(10);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(import_tfjs(model_json(shard_paths, "q"), &g, &err), 0);
    bd_node *erf = node_named(g, "erf");
    size_t len;
    uint8_t *gd = graphdef_with_origin(erf, true, &len);
    bd_graph *back = NULL;
    if (bd_tf_import_memory(gd, len, &back, &err))
        fail_msg("read back: %s", err.msg);
    bd_node *e2 = node_named(back, "erf");
    assert_string_equal(e2->domain, "tf");
    assert_string_equal(e2->op_type, "Lgamma");
    assert_int_equal(e2->n_inputs, 1);                      /* "^x" is a control input */
    assert_string_equal(e2->inputs[0]->name, "add");
    assert_int_equal(bd_node_attr_int(e2, "T", 0), 1);      /* DT_FLOAT */
    assert_int_equal(e2->outputs[0]->dtype, BD_DT_FLOAT);
    const bd_shape *s = &e2->outputs[0]->shape;             /* only _output_shapes says so */
    assert_int_equal(s->rank, 4);
    assert_int_equal(s->dims[0], -1);
    assert_int_equal(s->dims[1], 2);
    assert_int_equal(s->dims[3], 2);
    bd_graph_destroy(back);
    free(gd);
    bd_graph_destroy(g);
}

static void expect_tfjs_error(const char *json, int code, const char *needle)
{
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = import_tfjs(json, &g, &err);
    if (rc != code || !strstr(err.msg, needle))
        fail_msg("expected %d with '%s', got %d: %s", code, needle, rc, err.msg);
    assert_null(g);
}

/* An axis operand must hold one integer: ConcatV2 and ExpandDims with a 16-value "axis"
 * constant once wrote 16 int64s into a one-int64 stack slot (ASan: stack-buffer-overflow).
 * They must stay TensorFlow's nodes, unmapped. */
static void test_multi_value_axis_is_not_mapped(void **state)
{
    (void)state;
    const char *json =
        "{\"format\": \"graph-model\", \"modelTopology\": {\"node\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},"
        "  \"shape\": {\"shape\": {\"dim\": [{\"size\": \"2\"}, {\"size\": \"2\"}]}}}},"
        "{\"name\": \"axis\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"DT_INT32\"},"
        "  \"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": [{\"size\": \"16\"}]},"
        "  \"intVal\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}}}},"
        "{\"name\": \"cat\", \"op\": \"ConcatV2\", \"input\": [\"x\", \"x\", \"axis\"],"
        "  \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}, \"N\": {\"i\": \"2\"}}},"
        "{\"name\": \"ed\", \"op\": \"ExpandDims\", \"input\": [\"cat\", \"axis\"],"
        "  \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}}"
        "], \"versions\": {\"producer\": 1}}, \"weightsManifest\": [],"
        "\"signature\": {\"inputs\": {\"x:0\": {\"name\": \"x:0\", \"dtype\": \"DT_FLOAT\"}},"
        "  \"outputs\": {\"ed:0\": {\"name\": \"ed:0\", \"dtype\": \"DT_FLOAT\"}}}}";
    bd_graph *g = NULL;
    bd_error err = {0};
    assert_int_equal(import_tfjs(json, &g, &err), 0);
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const bd_node *n = bd_graph_node(g, i);
        assert_string_not_equal(n->op_type, "Concat");
        assert_string_not_equal(n->op_type, "Unsqueeze");
    }
    bd_graph_destroy(g);
}

static void test_tfjs_bad_inputs_fail_cleanly(void **state)
{
    (void)state;
    write_shards(10);
    expect_tfjs_error("{\"modelTopology\": {\"node\": [", BD_EMODEL, "invalid JSON");
    expect_tfjs_error("[1, 2]", BD_EMODEL, "not a JSON object");
    expect_tfjs_error("{\"modelTopology\": {\"class_name\": \"Sequential\"}}", BD_EUNSUPPORTED,
                      "layers model");
    /* A weight whose name matches no Const. */
    expect_tfjs_error(model_json(shard_paths, "bias"), BD_EMODEL, "no weight");
    /* A missing shard. */
    expect_tfjs_error(model_json("\"group1-shard1of2.bin\", \"nope.bin\"", "q"), BD_ENOTFOUND,
                      "nope.bin");
    /* A shard path leaving the model's directory. */
    expect_tfjs_error(model_json("\"../etc/passwd\"", "q"), BD_EMODEL, "inside the model's directory");
    /* A shard too short for the manifest. */
    write_shards(7);
    expect_tfjs_error(model_json(shard_paths, "q"), BD_EMODEL, "shards hold only 11");
    write_shards(10);
    /* Every truncation of model.json fails cleanly (or, never here, succeeds). */
    const char *full = model_json(shard_paths, "q");
    size_t n = strlen(full);
    char *cut = malloc(n + 1);
    assert_non_null(cut);
    for (size_t k = 0; k < n; k += 7) {
        memcpy(cut, full, k);
        cut[k] = '\0';
        bd_graph *g = NULL;
        bd_error err = { 0 };
        if (import_tfjs(cut, &g, &err) == 0)
            bd_graph_destroy(g);
        else
            assert_true(err.msg[0] != '\0');
    }
    free(cut);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tfjs_import_file("/nonexistent/model.json", &g, &err), BD_ENOTFOUND);
}


/* ---- hostile files ----------------------------------------------------------------------- */

/* A regression input of the importer fuzz corpora (tests/fuzz/corpus/SUB/NAME), or with SUB
 * "fixtures" one of tests/partitioner/tf/fixtures (written by tests/fuzz/gen_importer_seeds.py too). */
static uint8_t *read_corpus(const char *sub, const char *name, size_t *len)
{
    const char *root = getenv("BRAID_SOURCE_ROOT");
    char path[1024];
    if (strcmp(sub, "fixtures") == 0)
        snprintf(path, sizeof path, "%s/tests/partitioner/tf/fixtures/%s", root ? root : ".", name);
    else
        snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s/%s", root ? root : ".", sub, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    uint8_t *buf = malloc(1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void expect_graphdef_error(const char *name, int code, const char *needle)
{
    size_t len;
    uint8_t *buf = read_corpus(strstr(name, "mib") ? "fixtures" : "graphdef", name, &len);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = bd_tf_import_memory(buf, len, &g, &err);
    if (rc != code || !strstr(err.msg, needle))
        fail_msg("%s: expected %d with '%s', got %d: %s", name, code, needle, rc, err.msg);
    assert_null(g);
    free(buf);
}

/* One value filling a huge shape is expanded only up to 64 MiB: a 140-byte GraphDef
 * once became 1 GiB, a string fill of 2^60 elements overflowed the element table. */
static void test_graphdef_constant_expansion_is_capped(void **state)
{
    (void)state;
    expect_graphdef_error("fill_1gib.pb", BD_EMODEL, "more than 64 MiB");
    expect_graphdef_error("string_fill.pb", BD_EMODEL, "more than 64 MiB");
    expect_graphdef_error("overflow_dims.pb", BD_EMODEL, "overflows");
    expect_graphdef_error("high_port.pb", BD_EMODEL, "has no output 65535");
    /* the cap is for the whole model: two fills of 48 MiB do not fit */
    expect_graphdef_error("fill_2x48mib.pb", BD_EMODEL, "node 'c2' attr 'value': 1 value(s) fill");
    /* under the cap, a fill is expanded as TensorFlow does: 1 Mi floats from one value */
    size_t len;
    uint8_t *buf = read_corpus("fixtures", "fill_4mib.pb", &len);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = bd_tf_import_memory(buf, len, &g, &err);
    if (rc)
        fail_msg("%s", err.msg);
    const bd_value *c = bd_graph_find_value(g, "c");
    assert_non_null(c);
    assert_int_equal(c->nbytes, (size_t)16384 * 64 * 4);
    assert_true(((const float *)c->data)[16384 * 64 - 1] == 1.0f);
    bd_graph_destroy(g);
    free(buf);
}

/* model.json with one Placeholder x [2], node C (JSON text) and y = Identity(x) or, with
 * ADD, y = AddV2(x, w); MANIFEST is the weightsManifest array's text or NULL. */
static const char *tiny_json_y(const char *c, const char *manifest, bool add)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
        "{\"modelTopology\": {\"node\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"},"
        "  \"shape\": {\"shape\": {\"dim\": [{\"size\": \"2\"}]}}}}, %s,"
        "{\"name\": \"y\", \"op\": \"%s\", \"input\": [\"x\"%s], \"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}}}]}"
        "%s%s}", c, add ? "AddV2" : "Identity", add ? ", \"w\"" : "",
        manifest ? ", \"weightsManifest\": " : "", manifest ? manifest : "");
    return buf;
}

static const char *tiny_json(const char *c, const char *manifest)
{
    return tiny_json_y(c, manifest, false);
}

#define CONST_JSON(name, dtype, dims, extra)                                                  \
    "{\"name\": \"" name "\", \"op\": \"Const\", \"attr\": {\"dtype\": {\"type\": \"" dtype "\"}," \
    " \"value\": {\"tensor\": {\"dtype\": \"" dtype "\", \"tensorShape\": {\"dim\": [" dims "]}" extra "}}}}"

/* TF.js files that once crashed the importer: a string Const of shape [2^60] (SIGSEGV), a
 * string weight of shape [2^60+1] (heap corruption), a 481-byte fill of 1 GiB. */
static void test_tfjs_sizes_are_overflow_checked_and_capped(void **state)
{
    (void)state;
    expect_tfjs_error(tiny_json(CONST_JSON("s", "DT_STRING", "{\"size\": \"1152921504606846976\"}",
                                           ", \"stringVal\": [\"YWJj\"]"), NULL),
                      BD_EMODEL, "more than 64 MiB");
    static const uint8_t one[] = { 3, 0, 0, 0, 'a', 'b', 'c' };
    write_file("s.bin", one, sizeof one);
    expect_tfjs_error(tiny_json(CONST_JSON("s", "DT_STRING", "{\"size\": \"1152921504606846977\"}", ""),
                                "[{\"paths\": [\"s.bin\"], \"weights\": [{\"name\": \"s\", "
                                "\"shape\": [\"1152921504606846977\"], \"dtype\": \"string\"}]}]"),
                      BD_EMODEL, "strings cannot fit");
    expect_tfjs_error(tiny_json(CONST_JSON("w", "DT_FLOAT", "{\"size\": \"16384\"}, {\"size\": \"16384\"}",
                                           ", \"floatVal\": [1.0]"), NULL),
                      BD_EMODEL, "more than 64 MiB");
    expect_tfjs_error(tiny_json(CONST_JSON("w", "DT_INT64", "{\"size\": \"4294967296\"}, {\"size\": \"4294967296\"}",
                                           ", \"int64Val\": [\"1\"]"), NULL),
                      BD_EMODEL, "overflows");
    /* a fill under the cap repeats the last value given, as TensorFlow does */
    bd_graph *gf = NULL;
    bd_error ef = { 0 };
    assert_int_equal(import_tfjs(tiny_json_y(CONST_JSON("w", "DT_FLOAT", "{\"size\": \"37\"}",
                                                        ", \"floatVal\": [1.0, 2.0, 3.0]"), NULL, true),
                                 &gf, &ef), 0);
    const float *fw = bd_graph_find_value(gf, "w")->data;
    assert_true(fw[0] == 1.0f && fw[1] == 2.0f && fw[2] == 3.0f);
    for (int i = 3; i < 37; i++)
        assert_true(fw[i] == 3.0f);
    bd_graph_destroy(gf);
    /* a string weight that fits: one element "abc" */
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(import_tfjs(tiny_json(CONST_JSON("s", "DT_STRING", "{\"size\": \"1\"}", ""),
                                           "[{\"paths\": [\"s.bin\"], \"weights\": [{\"name\": \"s\", "
                                           "\"shape\": [1], \"dtype\": \"string\"}]}]"), &g, &err), 0);
    bd_graph_destroy(g);
}

/* Weight shards are confined like ONNX external data: a symlink leading out of the model's
 * directory is refused (inference once returned the bytes of the file it pointed to), and a
 * shard listed twice under two names is refused. */
static void test_tfjs_shards_stay_in_the_model_directory(void **state)
{
    (void)state;
    char outside[] = "/tmp/braid-tfjs-outside-XXXXXX";
    int fd = mkstemp(outside);
    assert_true(fd >= 0);
    float secret[2] = { 42.0f, 43.0f };
    assert_int_equal(write(fd, secret, sizeof secret), (ssize_t)sizeof secret);
    close(fd);
    char link[512];
    snprintf(link, sizeof link, "%s/link.bin", tmpdir);
    unlink(link);
    assert_int_equal(symlink(outside, link), 0);
    const char *w = CONST_JSON("w", "DT_FLOAT", "{\"size\": \"2\"}", "");
    char manifest[256];
    snprintf(manifest, sizeof manifest, "[{\"paths\": [\"link.bin\"], \"weights\": [{\"name\": \"w\", "
             "\"shape\": [2], \"dtype\": \"float32\"}]}]");
    expect_tfjs_error(tiny_json_y(w, manifest, true), BD_EMODEL, "outside the model's directory");
    unlink(link);
    unlink(outside);

    /* a link that stays inside is fine */
    write_file("s.bin", secret, sizeof secret);
    assert_int_equal(symlink("s.bin", link), 0);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(import_tfjs(tiny_json_y(w, manifest, true), &g, &err), 0);
    assert_true(((const float *)bd_graph_find_value(g, "w")->data)[1] == 43.0f);
    bd_graph_destroy(g);
    /* ... unless it names a shard again */
    snprintf(manifest, sizeof manifest, "[{\"paths\": [\"s.bin\", \"link.bin\"], \"weights\": "
             "[{\"name\": \"w\", \"shape\": [4], \"dtype\": \"float32\"}]}]");
    expect_tfjs_error(tiny_json_y(CONST_JSON("w", "DT_FLOAT", "{\"size\": \"4\"}", ""), manifest, true),
                      BD_EMODEL, "listed twice");
}

/* A loaded model keeps its own copy of the shards: overwriting them in place (truncate, then
 * other bytes) changes nothing (a mapping of them once raised SIGBUS). */
static void test_tfjs_weights_survive_shard_rewrite(void **state)
{
    (void)state;
    float v[2] = { 1.5f, 2.5f };
    write_file("s.bin", v, sizeof v);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(import_tfjs(tiny_json_y(CONST_JSON("w", "DT_FLOAT", "{\"size\": \"2\"}", ""),
                                             "[{\"paths\": [\"s.bin\"], \"weights\": [{\"name\": \"w\", "
                                             "\"shape\": [2], \"dtype\": \"float32\"}]}]", true),
                                 &g, &err), 0);
    write_file("s.bin", "", 0);                       /* truncated */
    const float *w = bd_graph_find_value(g, "w")->data;
    assert_true(w[0] == 1.5f && w[1] == 2.5f);
    float o[2] = { -1, -1 };
    write_file("s.bin", o, sizeof o);                 /* other bytes */
    assert_true(w[0] == 1.5f && w[1] == 2.5f);
    bd_graph_destroy(g);
}

/* A FIFO under a model's name is refused at once: opening it for reading must not wait for
 * a writer (the loader thread would hang). */
static void test_tfjs_fifo_is_refused_without_blocking(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/model.json", tmpdir);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tfjs_import_file(path, &g, &err), BD_EIO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_null(g);
    unlink(path);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        fixture_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_maps_to_nhwc_conv_with_weights_in_place),
        cmocka_unit_test(test_fused_ops_expand_into_plain_nodes),
        cmocka_unit_test(test_const_typed_values_are_decoded),
        cmocka_unit_test(test_unmapped_ops_become_tf_nodes_with_their_nodedef),
        cmocka_unit_test(test_while_loop_back_edge_is_a_null_input),
        cmocka_unit_test(test_graphdef_origin_reads_back_with_its_attrs),
        cmocka_unit_test(test_malformed_graphdefs_fail_cleanly),
        cmocka_unit_test(test_missing_and_empty_files),
        cmocka_unit_test_setup_teardown(test_tfjs_graph_model_imports_with_dequantized_weights,
                                        tfjs_setup, tfjs_teardown),
        cmocka_unit_test_setup_teardown(test_tfjs_origin_keeps_attrs,
                                        tfjs_setup, tfjs_teardown),
        cmocka_unit_test_setup_teardown(test_tfjs_bad_inputs_fail_cleanly, tfjs_setup, tfjs_teardown),
        cmocka_unit_test_setup_teardown(test_multi_value_axis_is_not_mapped, tfjs_setup, tfjs_teardown),
        cmocka_unit_test(test_graphdef_constant_expansion_is_capped),
        cmocka_unit_test_setup_teardown(test_tfjs_sizes_are_overflow_checked_and_capped,
                                        tfjs_setup, tfjs_teardown),
        cmocka_unit_test_setup_teardown(test_tfjs_shards_stay_in_the_model_directory,
                                        tfjs_setup, tfjs_teardown),
        cmocka_unit_test_setup_teardown(test_tfjs_weights_survive_shard_rewrite,
                                        tfjs_setup, tfjs_teardown),
        cmocka_unit_test_setup_teardown(test_tfjs_fifo_is_refused_without_blocking,
                                        tfjs_setup, tfjs_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
