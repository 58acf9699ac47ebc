/* The ONNX importer: the IR it builds from small models (written by gen_models.py into the
 * directory given as argv[1]) and clean failures on every kind of bad file. */
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

#include "partitioner/onnx/onnx_import.h"

static const char *models_dir = ".";

static char *model_path(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", models_dir, name);
    return buf;
}

/* The whole file in a buffer of exactly its size (so ASan sees any over-read). */
static uint8_t *read_model(const char *name, size_t *len)
{
    FILE *f = fopen(model_path(name), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static bd_graph *import_ok(const char *name)
{
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = bd_onnx_import_file(model_path(name), &g, &err);
    if (rc)
        fail_msg("%s: %s", name, err.msg);
    assert_non_null(g);
    return g;
}

/* Import NAME expecting CODE with a message containing WANT. */
static void import_fails(const char *name, int code, const char *want)
{
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = bd_onnx_import_file(model_path(name), &g, &err);
    if (rc != code || !strstr(err.msg, want))
        fail_msg("%s: expected %s containing \"%s\", got %s: \"%s\"", name, bd_status_name(code),
                 want, bd_status_name(rc), err.msg);
    assert_null(g);
}

/* True when P lies inside a mapping of a file whose path ends with SUFFIX. */
static bool in_file_mapping(const void *p, const char *suffix)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[8192];
    bool found = false;
    for (int i = 0; i < 100000 && !found && fgets(line, sizeof line, f); i++) {
        unsigned long lo, hi;
        char path[4096] = "";
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &lo, &hi, path) < 2)
            continue;
        size_t pl = strlen(path), sl = strlen(suffix);
        found = (uintptr_t)p >= lo && (uintptr_t)p < hi && pl >= sl &&
                strcmp(path + pl - sl, suffix) == 0;
    }
    fclose(f);
    return found;
}

static bd_node *find_node(const bd_graph *g, const char *name)
{
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        if (strcmp(bd_graph_node(g, i)->name, name) == 0)
            return bd_graph_node(g, i);
    return NULL;
}

/* ---- valid models ---------------------------------------------------------------------- */

static void test_import_basic_model_signature(void **state)
{
    (void)state;
    bd_graph *g = import_ok("basic.onnx");
    assert_string_equal(bd_graph_name(g), "g");
    assert_int_equal(bd_graph_opset(g), 13);
    assert_int_equal(bd_graph_num_inputs(g), 1);
    const bd_value *x = bd_graph_input(g, 0);
    assert_string_equal(x->name, "X");
    assert_int_equal(x->dtype, BD_DT_FLOAT);
    assert_int_equal(x->shape.rank, 4);
    assert_int_equal(x->shape.dims[0], -1);
    assert_string_equal(x->shape.sym[0], "batch");
    assert_int_equal(x->shape.dims[1], 3);
    assert_int_equal(x->shape.dims[3], 4);
    assert_null(x->shape.sym[1]);

    assert_int_equal(bd_graph_num_outputs(g), 1);
    const bd_value *o = bd_graph_output(g, 0);
    assert_string_equal(o->name, "OUT");
    assert_int_equal(o->shape.rank, 2);
    assert_string_equal(o->shape.sym[0], "batch");
    assert_int_equal(o->shape.dims[1], -1);   /* a dim with neither value nor name */
    assert_null(o->shape.sym[1]);

    /* value_info typed an intermediate value */
    const bd_value *y = bd_graph_find_value(g, "Y");
    assert_non_null(y);
    assert_int_equal(y->dtype, BD_DT_FLOAT);
    assert_int_equal(y->shape.rank, 4);
    assert_int_equal(y->shape.dims[1], 2);
    bd_graph_destroy(g);
}

static void test_import_basic_model_nodes(void **state)
{
    (void)state;
    bd_graph *g = import_ok("basic.onnx");
    /* Constant folded away: Conv, Relu, Reshape, Clip, AllAttrs */
    assert_int_equal(bd_graph_num_nodes(g), 5);
    const bd_node *conv = find_node(g, "conv0");
    assert_non_null(conv);
    assert_string_equal(conv->op_type, "Conv");
    assert_string_equal(conv->domain, "");
    assert_int_equal(conv->n_inputs, 3);
    assert_string_equal(conv->inputs[1]->name, "W");
    const int64_t *ks;
    assert_int_equal(bd_node_attr_ints(conv, "kernel_shape", &ks), 2);
    assert_int_equal(ks[0], 3);
    assert_int_equal(bd_node_attr_ints(conv, "pads", &ks), 4);

    const bd_node *relu = find_node(g, "Relu_1");   /* invented: <op>_<index> */
    assert_non_null(relu);
    assert_string_equal(relu->op_type, "Relu");

    const bd_node *clip = find_node(g, "clip0");
    assert_non_null(clip);
    assert_int_equal(clip->n_inputs, 3);
    assert_null(clip->inputs[1]);                   /* "" = omitted optional input */
    assert_string_equal(clip->inputs[2]->name, "maxv");
    assert_int_equal(clip->inputs[2]->shape.rank, 0);

    const bd_value *c = bd_graph_find_value(g, "C");
    assert_non_null(c);
    assert_null(c->producer);
    assert_non_null(c->data);
    assert_int_equal(c->dtype, BD_DT_INT64);
    assert_int_equal(c->shape.rank, 1);
    assert_int_equal(c->nbytes, 16);
    assert_int_equal(((const int64_t *)c->data)[0], -1);
    assert_int_equal(((const int64_t *)c->data)[1], 32);
    assert_ptr_equal(find_node(g, "reshape0")->inputs[1], c);
    bd_graph_destroy(g);
}

static void test_import_attributes_of_every_type(void **state)
{
    (void)state;
    bd_graph *g = import_ok("basic.onnx");
    const bd_node *n = find_node(g, "attrs0");
    assert_non_null(n);
    assert_string_equal(n->domain, "braid.test");
    assert_true(bd_node_attr_float(n, "f", 0) == 1.5f);
    assert_int_equal(bd_node_attr_int(n, "i", 0), -7);
    assert_string_equal(bd_node_attr_string(n, "s", ""), "hello");
    assert_int_equal(bd_node_attr(n, "s")->s_len, 5);

    const bd_attr *t = bd_node_attr(n, "t");
    assert_non_null(t);
    assert_int_equal(t->type, BD_ATTR_TENSOR);
    assert_non_null(t->tensor);
    assert_int_equal(t->tensor->dtype, BD_DT_INT32);
    assert_int_equal(t->tensor->shape.rank, 1);
    assert_int_equal(t->tensor->shape.dims[0], 3);
    assert_int_equal(((const int32_t *)t->tensor->data)[2], 3);
    assert_int_equal(t->tensor->index, -1);                     /* not in the value table */
    assert_null(bd_graph_find_value(g, t->tensor->name));

    const bd_attr *fs = bd_node_attr(n, "fs");
    assert_int_equal(fs->type, BD_ATTR_FLOATS);
    assert_int_equal(fs->n, 2);
    assert_true(fs->floats[1] == 0.5f);
    const int64_t *ints;
    assert_int_equal(bd_node_attr_ints(n, "ints", &ints), 3);
    assert_int_equal(ints[2], 6);
    const bd_attr *ss = bd_node_attr(n, "ss");
    assert_int_equal(ss->type, BD_ATTR_STRINGS);
    assert_int_equal(ss->n, 2);
    assert_string_equal(ss->strings[1], "bc");
    bd_graph_destroy(g);
}

static void test_import_references_raw_data_in_a_private_copy(void **state)
{
    (void)state;
    bd_graph *g = import_ok("basic.onnx");
    const bd_value *w = bd_graph_find_value(g, "W");
    assert_non_null(w);
    assert_int_equal(w->dtype, BD_DT_FLOAT);
    assert_int_equal(w->nbytes, 2 * 3 * 3 * 3 * 4);
    assert_false(w->is_input);
    /* The file is read, never mapped: nothing on disk can change a loaded model. */
    assert_false(in_file_mapping(w->data, "/basic.onnx"));
    const bd_value *b = bd_graph_find_value(g, "B");        /* float_data: converted */
    assert_false(in_file_mapping(b->data, "/basic.onnx"));
    assert_true(((const float *)b->data)[0] == 0.5f);
    assert_true(((const float *)b->data)[1] == -0.5f);
    bd_graph_destroy(g);

    size_t len;
    uint8_t *buf = read_model("basic.onnx", &len);
    bd_error err = { 0 };
    assert_int_equal(bd_onnx_import_memory(buf, len, NULL, &g, &err), 0);
    w = bd_graph_find_value(g, "W");
    assert_true((const uint8_t *)w->data >= buf && (const uint8_t *)w->data + w->nbytes <= buf + len);
    bd_graph_destroy(g);
    free(buf);
}

static void test_import_typed_field_initializers(void **state)
{
    (void)state;
    bd_graph *g = import_ok("typed.onnx");
    const bd_value *v;
#define VAL(name) do { v = bd_graph_find_value(g, name); assert_non_null(v); assert_non_null(v->data); } while (0)
    VAL("t_i8");
    assert_int_equal(v->dtype, BD_DT_INT8);
    assert_int_equal(v->nbytes, 3);
    assert_int_equal(((const int8_t *)v->data)[0], -1);
    assert_int_equal(((const int8_t *)v->data)[2], -128);
    VAL("t_u8");
    assert_int_equal(((const uint8_t *)v->data)[0], 255);
    VAL("t_i16");
    assert_int_equal(((const int16_t *)v->data)[0], -300);
    VAL("t_u16");
    assert_int_equal(((const uint16_t *)v->data)[0], 65535);
    VAL("t_bool");
    assert_int_equal(v->dtype, BD_DT_BOOL);
    assert_memory_equal(v->data, ((const uint8_t[]){ 1, 0, 1 }), 3);
    VAL("t_f16");
    assert_int_equal(((const uint16_t *)v->data)[0], 0x3C00);   /* 1.0 */
    assert_int_equal(((const uint16_t *)v->data)[1], 0xC000);   /* -2.0 */
    VAL("t_bf16");
    assert_int_equal(((const uint16_t *)v->data)[0], 0x3FC0);
    VAL("t_i32");
    assert_int_equal(((const int32_t *)v->data)[1], 123456);
    VAL("t_i64");
    assert_true(((const int64_t *)v->data)[0] == -(INT64_C(1) << 40));
    VAL("t_f64");
    assert_true(((const double *)v->data)[0] == 3.25);
    VAL("t_u32");
    assert_true(((const uint32_t *)v->data)[0] == 4000000000u);
    VAL("t_u64");
    assert_true(((const uint64_t *)v->data)[0] == (UINT64_C(1) << 63) + 5);
    VAL("t_f32");
    assert_int_equal(v->shape.rank, 2);
    assert_true(((const float *)v->data)[3] == 4.0f);
    VAL("t_empty");
    assert_int_equal(v->nbytes, 0);
    assert_int_equal(v->shape.dims[0], 0);
#undef VAL
    /* an initializer may be a graph output */
    assert_int_equal(bd_graph_num_outputs(g), 2);
    assert_string_equal(bd_graph_output(g, 1)->name, "t_i8");
    bd_graph_destroy(g);
}

static void test_import_folds_constant_nodes(void **state)
{
    (void)state;
    bd_graph *g = import_ok("constants.onnx");
    assert_int_equal(bd_graph_num_nodes(g), 1);
    const bd_value *v = bd_graph_find_value(g, "cf");
    assert_int_equal(v->dtype, BD_DT_FLOAT);
    assert_int_equal(v->shape.rank, 0);
    assert_true(*(const float *)v->data == 2.5f);
    v = bd_graph_find_value(g, "cfs");
    assert_int_equal(v->shape.rank, 1);
    assert_int_equal(v->shape.dims[0], 3);
    assert_true(((const float *)v->data)[2] == 3.0f);
    v = bd_graph_find_value(g, "ci");
    assert_int_equal(v->dtype, BD_DT_INT64);
    assert_int_equal(*(const int64_t *)v->data, 42);
    v = bd_graph_find_value(g, "cis");
    assert_int_equal(v->nbytes, 16);
    assert_int_equal(((const int64_t *)v->data)[1], 8);
    bd_graph_destroy(g);
    import_fails("const_string.onnx", BD_EUNSUPPORTED, "value_string");
}

static void test_import_initializer_listed_as_input_is_not_fed(void **state)
{
    (void)state;
    bd_graph *g = import_ok("old_ir.onnx");
    assert_int_equal(bd_graph_num_inputs(g), 1);
    assert_string_equal(bd_graph_input(g, 0)->name, "x");
    const bd_value *w = bd_graph_find_value(g, "w");
    assert_non_null(w->data);
    assert_false(w->is_input);
    assert_int_equal(bd_graph_opset(g), 7);
    bd_graph_destroy(g);
}

/* Every version ONNX Runtime 1.30 runs is read (the fallback engine takes what oneDNN's
 * opset 7-17 mapping does not); beyond that the message names the version and the range. */
static void test_import_accepts_what_the_fallback_runs(void **state)
{
    (void)state;
    static const struct { const char *file; int64_t opset; } ok[] = {
        { "opset1.onnx", 1 }, { "opset6.onnx", 6 }, { "opset18.onnx", 18 }, { "ir9.onnx", 13 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        bd_graph *g = import_ok(ok[i].file);
        assert_int_equal(bd_graph_opset(g), ok[i].opset);
        assert_int_equal(bd_graph_num_nodes(g), 1);
        bd_graph_destroy(g);
    }
}

static void test_import_rejects_unsupported_versions(void **state)
{
    (void)state;
    import_fails("opset27.onnx", BD_EUNSUPPORTED, "opset 27");
    import_fails("opset27.onnx", BD_EUNSUPPORTED, "opsets 1 to 26");
    import_fails("ir12.onnx", BD_EUNSUPPORTED, "IR version 12");
    import_fails("ir2.onnx", BD_EUNSUPPORTED, "IR version 2");
}

static void test_import_external_data(void **state)
{
    (void)state;
    bd_graph *g = import_ok("external.onnx");
    const bd_value *e1 = bd_graph_find_value(g, "e1"), *e2 = bd_graph_find_value(g, "e2");
    assert_int_equal(e1->nbytes, 24);
    assert_true(((const float *)e1->data)[5] == 5.0f);
    assert_int_equal(((const int64_t *)e2->data)[3], 30);
    assert_false(in_file_mapping(e1->data, "/weights.bin"));   /* read, not mapped */
    assert_false(in_file_mapping(e2->data, "/weights.bin"));
    /* both in one copy of the file: read once */
    assert_true((const uint8_t *)e2->data - (const uint8_t *)e1->data < 4096);
    bd_graph_destroy(g);

    /* from memory: only with a base directory */
    size_t len;
    uint8_t *buf = read_model("external.onnx", &len);
    bd_error err = { 0 };
    assert_int_equal(bd_onnx_import_memory(buf, len, NULL, &g, &err), BD_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "external"));
    assert_int_equal(bd_onnx_import_memory(buf, len, models_dir, &g, &err), 0);
    assert_int_equal(((const int64_t *)bd_graph_find_value(g, "e2")->data)[1], 10);
    bd_graph_destroy(g);
    free(buf);
}

static void test_import_external_data_stays_in_the_model_directory(void **state)
{
    (void)state;
    import_fails("external_dotdot.onnx", BD_EMODEL, "'..'");
    import_fails("external_dotdot2.onnx", BD_EMODEL, "'..'");
    import_fails("external_abs.onnx", BD_EMODEL, "absolute");
    import_fails("external_oob.onnx", BD_EMODEL, "past its end");
    import_fails("external_missing.onnx", BD_ENOTFOUND, "missing.bin");
}

/* Another name for a file already read shares its bytes: read once, not once per name. */
static void test_import_external_data_read_once_per_file(void **state)
{
    (void)state;
    bd_graph *g = import_ok("external_alias.onnx");
    const bd_value *e1 = bd_graph_find_value(g, "e1"), *e2 = bd_graph_find_value(g, "e2");
    assert_int_equal((const uint8_t *)e2->data - (const uint8_t *)e1->data, 24);
    assert_int_equal(((const int64_t *)e2->data)[3], 30);
    bd_graph_destroy(g);
}

/* A scratch directory holding a copy of model NAME (and nothing else). */
static char scratch[64];

static const char *scratch_copy(const char *name)
{
    snprintf(scratch, sizeof scratch, "/tmp/braid-onnx-XXXXXX");
    assert_non_null(mkdtemp(scratch));
    size_t len;
    uint8_t *buf = read_model(name, &len);
    static char path[128];
    snprintf(path, sizeof path, "%s/model.onnx", scratch);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
    return path;
}

static void scratch_remove(const char *file)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", scratch, file);
    unlink(p);
}

/* A symlink in the model's directory must not lead external data out of it. */
static void test_import_external_data_symlink_stays_inside(void **state)
{
    (void)state;
    const char *path = scratch_copy("external.onnx");
    char link[128], target[4096];
    snprintf(link, sizeof link, "%s/weights.bin", scratch);
    assert_non_null(realpath(model_path("weights.bin"), target));
    assert_int_equal(symlink(target, link), 0);          /* leads outside the scratch dir */
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_onnx_import_file(path, &g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "outside the model's directory"));
    assert_null(g);
    scratch_remove("weights.bin");
    scratch_remove("model.onnx");
    rmdir(scratch);
}

/* A loaded model keeps a private copy of its file: truncating it and writing another model
 * in its place changes nothing (a mapping of it once raised SIGBUS in braidd). */
static void test_import_survives_model_file_rewrite(void **state)
{
    (void)state;
    const char *path = scratch_copy("basic.onnx");
    bd_graph *g = NULL, *ref = import_ok("basic.onnx");
    bd_error err = { 0 };
    assert_int_equal(bd_onnx_import_file(path, &g, &err), 0);
    FILE *f = fopen(path, "wb");                         /* truncate */
    assert_non_null(f);
    fclose(f);
    size_t len;
    uint8_t *other = read_model("typed.onnx", &len);     /* then different bytes */
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(other, 1, len, f), len);
    fclose(f);
    free(other);
    const bd_value *w = bd_graph_find_value(g, "W"), *rw = bd_graph_find_value(ref, "W");
    assert_int_equal(w->nbytes, rw->nbytes);
    assert_memory_equal(w->data, rw->data, w->nbytes);
    bd_graph_destroy(g);
    bd_graph_destroy(ref);
    scratch_remove("model.onnx");
    rmdir(scratch);
}

/* A graph of more than BD_MAX_NODES nodes is refused before any per-node table is sized:
 * 2 MB of empty NodeProtos would otherwise cost ~300 MB of IR. */
static void test_import_node_count_is_capped(void **state)
{
    (void)state;
    size_t n = (size_t)BD_MAX_NODES + 1, glen = 2 * n;
    size_t len = 2 + 4 + 1 + 4 + glen;
    uint8_t *m = malloc(len), *p = m;
    assert_non_null(m);
    *p++ = 0x08; *p++ = 0x08;                             /* ir_version 8 */
    *p++ = 0x42; *p++ = 0x02; *p++ = 0x10; *p++ = 0x0d;   /* opset_import { version 13 } */
    *p++ = 0x3a;                                          /* graph, length as a 4-byte varint */
    *p++ = (uint8_t)(0x80 | (glen & 0x7f));
    *p++ = (uint8_t)(0x80 | ((glen >> 7) & 0x7f));
    *p++ = (uint8_t)(0x80 | ((glen >> 14) & 0x7f));
    *p++ = (uint8_t)(glen >> 21);
    for (size_t i = 0; i < n; i++) {
        *p++ = 0x0a;                                      /* node {} */
        *p++ = 0x00;
    }
    assert_int_equal((size_t)(p - m), len);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    int rc = bd_onnx_import_memory(m, len, NULL, &g, &err);
    if (rc != BD_EMODEL || !strstr(err.msg, "braid's limits"))
        fail_msg("got %d: %s", rc, err.msg);
    assert_null(g);
    free(m);
}

/* A FIFO named model.onnx is refused at once, not waited on. */
static void test_import_fifo_is_refused_without_blocking(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "/tmp/braid-onnx-XXXXXX");
    assert_non_null(mkdtemp(scratch));
    char path[128];
    snprintf(path, sizeof path, "%s/model.onnx", scratch);
    assert_int_equal(mkfifo(path, 0600), 0);
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_onnx_import_file(path, &g, &err), BD_EIO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    scratch_remove("model.onnx");
    rmdir(scratch);
}

/* Attributes are built in linear time and space; a name given twice is an error. */
static void test_import_node_with_6000_attributes(void **state)
{
    (void)state;
    bd_graph *g = import_ok("many_attrs.onnx");
    const bd_node *n = bd_graph_node(g, 0);
    assert_int_equal(n->n_attrs, 6000);
    assert_int_equal(bd_node_attr_int(n, "attr_5999", -1), 5999);
    bd_graph_destroy(g);
    import_fails("dup_attrs.onnx", BD_EMODEL, "attribute 'alpha' is given twice");
}

static void test_import_rejects_bad_initializers(void **state)
{
    (void)state;
    import_fails("bad_rawlen.onnx", BD_EMODEL, "tensor 'w': raw_data holds 10 bytes");
    import_fails("neg_dims.onnx", BD_EMODEL, "tensor 'w': dim 0 is negative");
    import_fails("big_rank.onnx", BD_EMODEL, "tensor 'w': rank 9");
    import_fails("overflow_dims.onnx", BD_EMODEL, "tensor 'w'");
    import_fails("typed_count.onnx", BD_EMODEL, "tensor 'w': float_data holds 2 values");
    import_fails("typed_wrong_field.onnx", BD_EMODEL, "int64_data");
    import_fails("bad_dtype.onnx", BD_EMODEL, "unknown element type 99");
}

/* The names of N's implicit inputs, sorted, joined by ',' into BUF. */
static const char *implicit_names(const bd_node *n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = n->n_inputs - n->n_implicit; k < n->n_inputs && at < size; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", at ? "," : "", n->inputs[k]->name);
    return buf;
}

/* If/Loop/Scan bodies are kept as the file's bytes; what they read from the main graph
 * becomes trailing implicit inputs (ordering and boundaries see them). */
static void test_import_subgraph_attributes_as_opaque_bodies(void **state)
{
    (void)state;
    bd_graph *g = import_ok("subgraph.onnx");
    const bd_node *n = bd_graph_node(g, 0);
    assert_string_equal(n->op_type, "If");
    assert_int_equal(n->n_inputs, 2);                   /* c, then x read by both branches */
    assert_int_equal(n->n_implicit, 1);
    assert_string_equal(n->inputs[0]->name, "c");
    assert_string_equal(n->inputs[1]->name, "x");
    const bd_attr *then_b = bd_node_attr(n, "then_branch"), *else_b = bd_node_attr(n, "else_branch");
    assert_int_equal(then_b->type, BD_ATTR_GRAPH);
    assert_int_equal(else_b->type, BD_ATTR_GRAPH);
    assert_true(then_b->graph_len > 0 && else_b->graph_len > 0);
    assert_false(in_file_mapping(then_b->graph, "/subgraph.onnx"));   /* read, not mapped */
    assert_ptr_not_equal(then_b->graph, else_b->graph);
    bd_graph_destroy(g);

    g = import_ok("nested_subgraph.onnx");
    n = bd_graph_node(g, 0);
    assert_string_equal(n->op_type, "Loop");
    assert_int_equal(n->n_inputs, 3 + 2);                /* n, "" (omitted), v0; then w, z */
    assert_null(n->inputs[1]);
    char names[128];
    assert_string_equal(implicit_names(n, names, sizeof names), "w,z");
    bd_graph_destroy(g);
}

static void test_import_rejects_unsupported_constructs(void **state)
{
    (void)state;
    import_fails("sequence_input.onnx", BD_EUNSUPPORTED, "'s' is not a tensor");
    import_fails("dangling.onnx", BD_EMODEL, "nowhere");
}

static void test_import_missing_and_empty_files(void **state)
{
    (void)state;
    import_fails("no_such_model.onnx", BD_ENOTFOUND, "no_such_model.onnx");
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_onnx_import_memory("", 0, NULL, &g, &err), BD_EMODEL);
    assert_non_null(strstr(err.msg, "empty"));
    assert_null(g);
}

static void test_import_makes_node_names_unique(void **state)
{
    (void)state;
    bd_graph *g = import_ok("names.onnx");
    assert_int_equal(bd_graph_num_nodes(g), 8);
    assert_non_null(find_node(g, "n"));
    assert_non_null(find_node(g, "n_1"));
    assert_non_null(find_node(g, "Relu_2"));
    assert_non_null(find_node(g, "Relu_2_1"));
    /* long duplicate names are truncated, then still made unique */
    size_t long_names = 0;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        long_names += strncmp(bd_graph_node(g, i)->name, "LLLL", 4) == 0;
    assert_int_equal(long_names, 2);
    const bd_node *two = bd_graph_output(g, 0)->producer;
    assert_non_null(two);
    assert_string_equal(two->op_type, "Two");
    assert_int_equal(two->n_outputs, 2);
    assert_non_null(two->outputs[0]);            /* omitted output: a fresh unused value */
    assert_ptr_equal(two->outputs[0]->producer, two);
    assert_string_equal(two->outputs[1]->name, "y");
    assert_int_equal(bd_graph_use_count(g, two->outputs[0]), 0);
    bd_graph_destroy(g);
}

/* ---- malformed bytes ------------------------------------------------------------------- */

/* Every prefix of NAME (every STEP-th length) imports or fails with a message. */
static void sweep_truncations(const char *name, size_t step)
{
    size_t len;
    uint8_t *full = read_model(name, &len);
    size_t ok = 0, failed = 0;
    for (size_t k = 0; k < len; k += step) {
        uint8_t *cut = malloc(k ? k : 1);   /* exact size: ASan catches over-reads */
        assert_non_null(cut);
        memcpy(cut, full, k);
        bd_graph *g = NULL;
        bd_error err = { 0 };
        int rc = bd_onnx_import_memory(cut, k, NULL, &g, &err);
        if (rc == 0) {
            assert_non_null(g);
            ok++;
        } else {
            assert_null(g);
            assert_true(rc == BD_EMODEL || rc == BD_EUNSUPPORTED);
            if (!err.msg[0])
                fail_msg("%s cut at %zu: %s without a message", name, k, bd_status_name(rc));
            failed++;
        }
        bd_graph_destroy(g);
        free(cut);
    }
    print_message("%s: %zu prefixes imported, %zu failed cleanly\n", name, ok, failed);
    free(full);
}

static void test_import_truncated_files_fail_cleanly(void **state)
{
    (void)state;
    sweep_truncations("basic.onnx", 1);
    sweep_truncations("typed.onnx", 1);
    sweep_truncations("medium.onnx", 61);
}

/* Flip a few bytes of NAME, many times over (fixed seed): import or fail cleanly. */
static void test_import_corrupted_files_fail_cleanly(void **state)
{
    (void)state;
    const char *names[] = { "basic.onnx", "typed.onnx", "external.onnx" };
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (size_t f = 0; f < 3; f++) {
        size_t len, ok = 0;
        uint8_t *full = read_model(names[f], &len);
        uint8_t *buf = malloc(len);
        assert_non_null(buf);
        for (int round = 0; round < 3000; round++) {
            memcpy(buf, full, len);
            for (int k = 0; k < 1 + round % 4; k++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                buf[(seed >> 33) % len] ^= (uint8_t)(1u << ((seed >> 29) & 7));
            }
            bd_graph *g = NULL;
            bd_error err = { 0 };
            int rc = bd_onnx_import_memory(buf, len, models_dir, &g, &err);
            if (rc == 0)
                ok++;
            else if (!err.msg[0] || g)
                fail_msg("%s round %d: %s without a message", names[f], round, bd_status_name(rc));
            bd_graph_destroy(g);
        }
        print_message("%s: %zu of 3000 corrupted copies still imported\n", names[f], ok);
        free(buf);
        free(full);
    }
}

/* A tiny protobuf writer for hand-made defects (tag, varint, length-delimited). */
typedef struct pbuf {
    uint8_t b[512];
    size_t  n;
} pbuf;

static void put_varint(pbuf *p, uint64_t v)
{
    do {
        assert_true(p->n < sizeof p->b);
        p->b[p->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void put_tag(pbuf *p, unsigned field, unsigned wire) { put_varint(p, field << 3 | wire); }

static void put_bytes(pbuf *p, unsigned field, const void *data, size_t n)
{
    put_tag(p, field, 2);
    put_varint(p, n);
    assert_true(p->n + n <= sizeof p->b);
    memcpy(p->b + p->n, data, n);
    p->n += n;
}

/* A ModelProto (IR 8, opset 13) around GRAPH's bytes. */
static pbuf model_around(const pbuf *graph)
{
    pbuf m = { .n = 0 }, opset = { .n = 0 };
    put_tag(&opset, 2, 0);
    put_varint(&opset, 13);
    put_tag(&m, 1, 0);
    put_varint(&m, 8);
    put_bytes(&m, 8, opset.b, opset.n);
    put_bytes(&m, 7, graph->b, graph->n);
    return m;
}

static int import_bytes(const pbuf *p, bd_error *err)
{
    uint8_t *copy = malloc(p->n ? p->n : 1);
    assert_non_null(copy);
    memcpy(copy, p->b, p->n);
    bd_graph *g = NULL;
    int rc = bd_onnx_import_memory(copy, p->n, NULL, &g, err);
    bd_graph_destroy(g);
    free(copy);
    return rc;
}

static void expect_model_error(const pbuf *p, const char *want)
{
    bd_error err = { 0 };
    int rc = import_bytes(p, &err);
    if (rc != BD_EMODEL || !strstr(err.msg, want))
        fail_msg("expected EMODEL containing \"%s\", got %s: \"%s\"", want, bd_status_name(rc), err.msg);
}

static void test_import_rejects_wrong_wire_types(void **state)
{
    (void)state;
    pbuf p = { .n = 0 };
    put_bytes(&p, 1, "\x08", 1);           /* ir_version as bytes */
    expect_model_error(&p, "model: malformed protobuf");

    p.n = 0;
    put_tag(&p, 1, 0);
    put_varint(&p, 8);
    put_tag(&p, 7, 0);                      /* graph as a varint */
    put_varint(&p, 1);
    expect_model_error(&p, "wire type");

    pbuf t = { .n = 0 }, g = { .n = 0 };    /* raw_data as a varint inside a valid model */
    put_bytes(&t, 8, "w", 1);
    put_tag(&t, 2, 0);
    put_varint(&t, 1);
    put_tag(&t, 9, 0);
    put_varint(&t, 5);
    put_bytes(&g, 5, t.b, t.n);
    pbuf m = model_around(&g);
    expect_model_error(&m, "initializer #0");

    g.n = 0;                                /* a node whose input list is a varint */
    pbuf node = { .n = 0 };
    put_tag(&node, 1, 0);
    put_varint(&node, 3);
    put_bytes(&g, 1, node.b, node.n);
    m = model_around(&g);
    expect_model_error(&m, "node #0");
}

/* A NUL inside a string would cut a name in half ("x\0junk" read as "x": two values could
 * alias). Refused wherever a name sits: a node's input, a graph input's name, an op type. */
static void test_import_rejects_nul_in_names(void **state)
{
    (void)state;
    pbuf g = { .n = 0 }, node = { .n = 0 };
    put_bytes(&node, 1, "x\0junk", 6);      /* NodeProto.input */
    put_bytes(&node, 2, "y", 1);
    put_bytes(&node, 4, "Relu", 4);
    put_bytes(&g, 1, node.b, node.n);
    pbuf m = model_around(&g);
    expect_model_error(&m, "NUL");

    pbuf vi = { .n = 0 };
    g.n = 0;
    put_bytes(&vi, 1, "in\0put", 6);        /* ValueInfoProto.name of a graph input */
    put_bytes(&g, 11, vi.b, vi.n);
    m = model_around(&g);
    expect_model_error(&m, "NUL");

    g.n = 0;
    node.n = 0;
    put_bytes(&node, 4, "Re\0lu", 5);       /* NodeProto.op_type */
    put_bytes(&g, 1, node.b, node.n);
    m = model_around(&g);
    expect_model_error(&m, "NUL");
}

static void test_import_rejects_huge_declared_sizes(void **state)
{
    (void)state;
    pbuf p = { .n = 0 };
    put_tag(&p, 1, 0);
    put_varint(&p, 8);
    put_tag(&p, 7, 2);                      /* a 2 GiB graph in a few bytes */
    put_varint(&p, 0x7ffffff0u);
    put_varint(&p, 0);
    expect_model_error(&p, "model: malformed protobuf");

    pbuf g = { .n = 0 }, node = { .n = 0 };
    put_tag(&node, 3, 2);                   /* a node name claiming 4 GiB */
    put_varint(&node, 0xfffffff0u);
    put_bytes(&g, 1, node.b, node.n);
    pbuf m = model_around(&g);
    expect_model_error(&m, "node #0: malformed protobuf");

    pbuf t = { .n = 0 };                    /* raw_data claiming 1 TiB */
    g.n = 0;
    put_bytes(&t, 8, "w", 1);
    put_tag(&t, 9, 2);
    put_varint(&t, UINT64_C(1) << 40);
    put_bytes(&g, 5, t.b, t.n);
    m = model_around(&g);
    expect_model_error(&m, "initializer #0: malformed protobuf");

    t.n = 0;                                /* dims claiming 2^31 packed entries */
    g.n = 0;
    put_bytes(&t, 8, "w", 1);
    put_tag(&t, 1, 2);
    put_varint(&t, 0x7fffffffu);
    put_bytes(&g, 5, t.b, t.n);
    m = model_around(&g);
    expect_model_error(&m, "initializer #0: malformed protobuf");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        models_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_basic_model_signature),
        cmocka_unit_test(test_import_basic_model_nodes),
        cmocka_unit_test(test_import_attributes_of_every_type),
        cmocka_unit_test(test_import_references_raw_data_in_a_private_copy),
        cmocka_unit_test(test_import_typed_field_initializers),
        cmocka_unit_test(test_import_folds_constant_nodes),
        cmocka_unit_test(test_import_initializer_listed_as_input_is_not_fed),
        cmocka_unit_test(test_import_accepts_what_the_fallback_runs),
        cmocka_unit_test(test_import_rejects_unsupported_versions),
        cmocka_unit_test(test_import_external_data),
        cmocka_unit_test(test_import_external_data_stays_in_the_model_directory),
        cmocka_unit_test(test_import_external_data_read_once_per_file),
        cmocka_unit_test(test_import_external_data_symlink_stays_inside),
        cmocka_unit_test(test_import_survives_model_file_rewrite),
        cmocka_unit_test(test_import_node_with_6000_attributes),
        cmocka_unit_test(test_import_fifo_is_refused_without_blocking),
        cmocka_unit_test(test_import_node_count_is_capped),
        cmocka_unit_test(test_import_rejects_bad_initializers),
        cmocka_unit_test(test_import_subgraph_attributes_as_opaque_bodies),
        cmocka_unit_test(test_import_rejects_unsupported_constructs),
        cmocka_unit_test(test_import_missing_and_empty_files),
        cmocka_unit_test(test_import_makes_node_names_unique),
        cmocka_unit_test(test_import_truncated_files_fail_cleanly),
        cmocka_unit_test(test_import_corrupted_files_fail_cleanly),
        cmocka_unit_test(test_import_rejects_wrong_wire_types),
        cmocka_unit_test(test_import_rejects_nul_in_names),
        cmocka_unit_test(test_import_rejects_huge_declared_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
