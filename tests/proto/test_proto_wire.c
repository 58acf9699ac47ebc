/* The nanopb side of the wire protocol against the real protobuf runtime: requests encoded
 * by Python (make_infer_request.py) decode in C with tensor payloads referenced in place;
 * responses encoded in C decode in Python (check_infer_response.py).
 *
 * usage: test_proto_wire REQUEST_RAW REQUEST_TYPED LOAD_REQUEST OUT_DIR CHECK_SCRIPT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <pb_decode.h>
#include <pb_encode.h>

#include "proto/health.pb.h"
#include "proto/inference.pb.h"
#include "proto/wire_span.h"
#include "tests/lib/tl_file.h"

#define MIB (1u << 20)

static const char *request_raw_path, *request_typed_path, *load_request_path, *out_dir, *check_script;

/* Same rule as wire_patterns.py: byte i = (i * mul + add) mod 256. */
static void fill_pattern(uint8_t *p, size_t n, unsigned mul, unsigned add)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * mul + add);
}

static bool matches_pattern(const uint8_t *p, size_t n, unsigned mul, unsigned add)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(i * mul + add))
            return false;
    return true;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    uint8_t *buf = tl_read_file(path, len);
    assert_non_null(buf);
    assert_true(*len > 0);
    return buf;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void run_checker(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' %s", check_script, args);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static const inference_InferParameter *find_param(const inference_ModelInferRequest *req, const char *key)
{
    for (pb_size_t i = 0; i < req->parameters_count; i++)
        if (strcmp(req->parameters[i].key, key) == 0 && req->parameters[i].has_value)
            return &req->parameters[i].value;
    return NULL;
}

/* ---- decoding ----------------------------------------------------------------------------- */

static void test_decode_request_references_raw_contents_in_place(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_file(request_raw_path, &len);
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;

    assert_true(bd_wire_decode(&rd, buf, len, inference_ModelInferRequest_fields, &req));
    assert_string_equal(req.model_name, "resnet");
    assert_string_equal(req.model_version, "3");
    assert_string_equal(req.id, "req-7");

    assert_int_equal(req.inputs_count, 2);
    assert_string_equal(req.inputs[0].name, "a");
    assert_string_equal(req.inputs[0].datatype, "FP32");
    assert_int_equal(req.inputs[0].shape_count, 2);
    assert_int_equal(req.inputs[0].shape[1], MIB / 4);
    assert_string_equal(req.inputs[1].name, "b");
    assert_string_equal(req.inputs[1].datatype, "UINT8");
    assert_false(req.inputs[0].has_contents);

    /* two 1 MiB payloads, pointing into BUF: nothing was copied */
    const bd_wire_spans *raw = &req.raw_input_contents;
    assert_int_equal(raw->list.count, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(raw->list.items[i].size, MIB);
        assert_true(raw->list.items[i].data > buf && raw->list.items[i].data + MIB <= buf + len);
    }
    assert_true(bd_wire_spans_in_place(raw, &rd));
    assert_true(matches_pattern(raw->list.items[0].data, MIB, 31, 7));
    assert_true(matches_pattern(raw->list.items[1].data, MIB, 131, 11));

    /* the parameter maps: every InferParameter kind */
    const inference_InferParameter *p;
    assert_int_equal(req.parameters_count, 5);
    assert_non_null(p = find_param(&req, "priority"));
    assert_int_equal(p->which_parameter_choice, inference_InferParameter_int64_param_tag);
    assert_int_equal(p->parameter_choice.int64_param, 3);
    assert_non_null(p = find_param(&req, "note"));
    assert_int_equal(p->which_parameter_choice, inference_InferParameter_string_param_tag);
    assert_string_equal(p->parameter_choice.string_param, "hi");
    assert_non_null(p = find_param(&req, "sequence_start"));
    assert_int_equal(p->which_parameter_choice, inference_InferParameter_bool_param_tag);
    assert_true(p->parameter_choice.bool_param);
    assert_non_null(p = find_param(&req, "ratio"));
    assert_int_equal(p->which_parameter_choice, inference_InferParameter_double_param_tag);
    assert_true(p->parameter_choice.double_param == 0.5);
    assert_non_null(p = find_param(&req, "budget"));
    assert_int_equal(p->which_parameter_choice, inference_InferParameter_uint64_param_tag);
    assert_true(p->parameter_choice.uint64_param == (uint64_t)1 << 40);

    assert_int_equal(req.inputs[1].parameters_count, 1);
    assert_string_equal(req.inputs[1].parameters[0].key, "binary_data_size");
    assert_int_equal(req.inputs[1].parameters[0].value.parameter_choice.int64_param, MIB);
    assert_int_equal(req.outputs_count, 1);
    assert_string_equal(req.outputs[0].name, "y0");
    assert_true(req.outputs[0].parameters[0].value.parameter_choice.bool_param);

    pb_release(inference_ModelInferRequest_fields, &req);
    bd_wire_reader_free(&rd);
    assert_null(rd.chunks);
    free(buf);
}

static void test_decode_typed_contents_inside_repeated_inputs(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_file(request_typed_path, &len);
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;

    assert_true(bd_wire_decode(&rd, buf, len, inference_ModelInferRequest_fields, &req));
    assert_int_equal(req.inputs_count, 3);
    assert_int_equal(req.raw_input_contents.list.count, 0);

    /* fp32: the packed payload is the float array itself, referenced in place */
    const inference_InferTensorContents *c = &req.inputs[0].contents;
    assert_true(req.inputs[0].has_contents);
    assert_true(bd_wire_spans_in_place(&c->fp32_contents, &rd));
    float f[4];
    assert_int_equal(bd_wire_spans_read_fixed(&c->fp32_contents, 4, f, 4), 3);
    assert_true(f[0] == 1.5f && f[1] == -2.0f && f[2] == 3.25f);
    assert_int_equal(bd_wire_spans_read_fixed(&c->fp32_contents, 4, f, 2), -1);   /* too many */

    /* int64: packed varints, two's complement */
    c = &req.inputs[1].contents;
    uint64_t v[3];
    assert_int_equal(bd_wire_spans_read_varints(&c->int64_contents, v, 3), 3);
    assert_true((int64_t)v[0] == -1 && v[1] == 2 && v[2] == (uint64_t)1 << 40);

    /* bytes: one span per element, the empty one included */
    c = &req.inputs[2].contents;
    assert_int_equal(c->bytes_contents.list.count, 2);
    assert_int_equal(c->bytes_contents.list.items[0].size, 5);
    assert_memory_equal(c->bytes_contents.list.items[0].data, "hello", 5);
    assert_int_equal(c->bytes_contents.list.items[1].size, 0);
    assert_true(bd_wire_spans_in_place(&c->bytes_contents, &rd));

    pb_release(inference_ModelInferRequest_fields, &req);
    bd_wire_reader_free(&rd);
    free(buf);
}

static void test_decode_unpacked_scalars_are_copied_into_one_span(void **state)
{
    (void)state;
    /* InferTensorContents with fp32_contents (6) and int_contents (2) sent unpacked, which
     * parsers must accept: each value has its own tag. */
    uint8_t buf[64];
    size_t n = 0;
    const float vals[3] = {1.0f, 2.0f, -4.0f};
    for (int i = 0; i < 3; i++) {
        buf[n++] = (6 << 3) | PB_WT_32BIT;
        memcpy(&buf[n], &vals[i], 4);
        n += 4;
    }
    buf[n++] = (2 << 3) | PB_WT_VARINT;
    buf[n++] = 0x05;
    buf[n++] = (2 << 3) | PB_WT_VARINT;
    buf[n++] = 0xAC;
    buf[n++] = 0x02;                                   /* 300 */

    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_InferTensorContents c = inference_InferTensorContents_init_zero;
    assert_true(bd_wire_decode(&rd, buf, n, inference_InferTensorContents_fields, &c));

    assert_int_equal(c.fp32_contents.list.count, 1);   /* coalesced copies */
    assert_false(bd_wire_spans_in_place(&c.fp32_contents, &rd));
    float f[3];
    assert_int_equal(bd_wire_spans_read_fixed(&c.fp32_contents, 4, f, 3), 3);
    assert_true(f[0] == 1.0f && f[1] == 2.0f && f[2] == -4.0f);
    uint64_t v[2];
    assert_int_equal(bd_wire_spans_read_varints(&c.int_contents, v, 2), 2);
    assert_true(v[0] == 5 && v[1] == 300);

    bd_wire_reader_free(&rd);
}

/* A protobuf varint at *AT (advanced past it). */
static uint64_t read_varint(const uint8_t *buf, size_t len, size_t *at)
{
    uint64_t v = 0;
    for (int shift = 0; *at < len && shift < 64; shift += 7) {
        uint8_t b = buf[(*at)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static void test_decode_rejects_truncated_request_and_frees_everything(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_file(request_raw_path, &len);
    bd_wire_reader rd = BD_WIRE_READER_INIT;

    /* A prefix that ends on a field boundary is itself a valid message, so every cut lands
     * strictly inside a length-delimited top-level field (the map's order, hence the field
     * boundaries, varies from one Python run to the next). */
    size_t cuts[8], n_cuts = 0;
    for (size_t at = 0; at < len && n_cuts < 8;) {
        uint64_t key = read_varint(buf, len, &at);
        assert_int_equal(key & 7, PB_WT_STRING);        /* every top-level field here is one */
        uint64_t flen = read_varint(buf, len, &at);
        if (flen >= 2)
            cuts[n_cuts++] = at + flen / 2;
        at += flen;
    }
    assert_true(n_cuts >= 3);
    for (size_t i = 0; i < n_cuts; i++) {
        inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;
        assert_false(bd_wire_decode(&rd, buf, cuts[i], inference_ModelInferRequest_fields, &req));
        assert_non_null(rd.error);
        pb_release(inference_ModelInferRequest_fields, &req);   /* harmless after failure */
        bd_wire_reader_free(&rd);
    }
    free(buf);
}

static void test_decode_rejects_packed_fp32_of_odd_length(void **state)
{
    (void)state;
    const uint8_t buf[] = {(6 << 3) | PB_WT_STRING, 5, 0, 0, 0x80, 0x3f, 0};
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_InferTensorContents c = inference_InferTensorContents_init_zero;
    assert_false(bd_wire_decode(&rd, buf, sizeof buf, inference_InferTensorContents_fields, &c));
    assert_non_null(strstr(rd.error, "whole number"));
    bd_wire_reader_free(&rd);
}

/* A string with a NUL byte anywhere in a request is refused before decoding (nanopb's char *
 * would end there), named by its path of field numbers. */
static void test_check_refuses_nul_in_nested_strings(void **state)
{
    (void)state;
    /* ModelInferRequest { model_name "m", inputs [{ name "ok" }, { name "a\0b" }] } */
    const uint8_t buf[] = {0x0a, 1, 'm', 0x2a, 4, 0x0a, 2, 'o', 'k', 0x2a, 5, 0x0a, 3, 'a', 0, 'b'};
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;
    assert_false(bd_wire_decode(&rd, buf, sizeof buf, inference_ModelInferRequest_fields, &req));
    assert_non_null(strstr(rd.error, "field 5[1].1:"));
    assert_non_null(strstr(rd.error, "NUL"));
    assert_null(req.inputs);                      /* nothing was allocated */
    pb_release(inference_ModelInferRequest_fields, &req);
    bd_wire_reader_free(&rd);

    /* a map key: parameters { key "k\0" } */
    const uint8_t map[] = {0x22, 4, 0x0a, 2, 'k', 0};
    assert_false(bd_wire_check(map, sizeof map, inference_ModelInferRequest_fields, &req, NULL,
                               rd.error_text, sizeof rd.error_text));
    assert_non_null(strstr(rd.error_text, "field 4[0].1:"));
    /* bytes may hold NUL: raw_input_contents */
    const uint8_t raw[] = {0x3a, 2, 0, 0};
    assert_true(bd_wire_check(raw, sizeof raw, inference_ModelInferRequest_fields, &req, NULL,
                              rd.error_text, sizeof rd.error_text));
}

/* Repeated fields are counted on the wire against the limits, packed elements one by one,
 * tensor payloads not at all. */
static void test_check_counts_repeated_fields(void **state)
{
    (void)state;
    const bd_wire_limits lim = { .max_repeated = 3, .max_elements = 5 };
    inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;
    char why[160];
    /* outputs: 3 fine, 4 too many */
    uint8_t outs[4 * 2];
    for (int i = 0; i < 4; i++)
        outs[2 * i] = 0x32, outs[2 * i + 1] = 0;
    assert_true(bd_wire_check(outs, 6, inference_ModelInferRequest_fields, &req, &lim, why, sizeof why));
    assert_false(bd_wire_check(outs, 8, inference_ModelInferRequest_fields, &req, &lim, why, sizeof why));
    assert_non_null(strstr(why, "field 6[3]: more than 3 elements"));
    /* a packed shape of 4 varints in one input */
    const uint8_t shape[] = {0x2a, 7, 0x1a, 5, 1, 0x80, 1, 2, 3};
    assert_false(bd_wire_check(shape, sizeof shape, inference_ModelInferRequest_fields, &req, &lim,
                               why, sizeof why));
    assert_non_null(strstr(why, "field 5[0].3: more than 3"));
    const uint8_t shape3[] = {0x2a, 5, 0x1a, 3, 1, 0x80, 1};
    assert_true(bd_wire_check(shape3, sizeof shape3, inference_ModelInferRequest_fields, &req, &lim,
                              why, sizeof why));
    /* the message budget: 3 outputs + 3 dims > 5 */
    uint8_t both[6 + sizeof shape3 + 2];
    memcpy(both, outs, 6);
    memcpy(both + 6, shape3, sizeof shape3);
    both[6 + sizeof shape3] = 0x1a;               /* and a stray top-level field 3 (id) */
    both[6 + sizeof shape3 + 1] = 0;
    assert_false(bd_wire_check(both, sizeof both, inference_ModelInferRequest_fields, &req, &lim,
                               why, sizeof why));
    assert_non_null(strstr(why, "in the message"));
    /* fp32 contents: 8 packed floats are a payload, not elements */
    const uint8_t fp32[] = {0x32, 32, [33] = 0};
    inference_InferTensorContents c = inference_InferTensorContents_init_zero;
    assert_true(bd_wire_check(fp32, sizeof fp32, inference_InferTensorContents_fields, &c, &lim,
                              why, sizeof why));
    /* a bytes payload list counts one element per entry */
    const uint8_t raws[] = {0x3a, 0, 0x3a, 0, 0x3a, 0, 0x3a, 0};
    assert_false(bd_wire_check(raws, sizeof raws, inference_ModelInferRequest_fields, &req, &lim,
                               why, sizeof why));
    /* no limits: only strings are checked */
    assert_true(bd_wire_check(outs, 8, inference_ModelInferRequest_fields, &req, NULL, why, sizeof why));
}

static void test_decode_outside_reader_is_refused(void **state)
{
    (void)state;
    const uint8_t buf[] = {(7 << 3) | PB_WT_STRING, 3, 'a', 'b', 'c'};
    inference_ModelInferRequest req = inference_ModelInferRequest_init_zero;
    pb_istream_t in = pb_istream_from_buffer(buf, sizeof buf);
    assert_false(pb_decode(&in, inference_ModelInferRequest_fields, &req));
    assert_non_null(strstr(PB_GET_ERROR(&in), "bd_wire_decode"));
}

static void test_decode_model_load_with_uploaded_file_in_place(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_file(load_request_path, &len);
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_RepositoryModelLoadRequest req = inference_RepositoryModelLoadRequest_init_zero;

    assert_true(bd_wire_decode(&rd, buf, len, inference_RepositoryModelLoadRequest_fields, &req));
    assert_string_equal(req.model_name, "resnet");
    assert_int_equal(req.parameters_count, 3);
    int seen = 0;
    for (pb_size_t i = 0; i < req.parameters_count; i++) {
        const char *key = req.parameters[i].key;
        const inference_ModelRepositoryParameter *v = &req.parameters[i].value;
        assert_true(req.parameters[i].has_value);
        if (strcmp(key, "config") == 0) {
            assert_non_null(v->string_param);
            assert_non_null(strstr(v->string_param, "\"max_batch_size\": 8"));
            assert_int_equal(v->bytes_param.list.count, 0);
            seen |= 1;
        } else if (strcmp(key, "file:1/model.onnx") == 0) {
            assert_null(v->string_param);
            assert_false(v->has_bool_param);
            assert_int_equal(v->bytes_param.list.count, 1);
            assert_int_equal(v->bytes_param.list.items[0].size, 200000);   /* > 64 KiB */
            assert_true(bd_wire_spans_in_place(&v->bytes_param, &rd));
            assert_true(matches_pattern(v->bytes_param.list.items[0].data, 200000, 7, 1));
            seen |= 2;
        } else if (strcmp(key, "poll") == 0) {
            assert_true(v->has_bool_param);               /* sent as false: not "absent" */
            assert_false(v->bool_param);
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);

    pb_release(inference_RepositoryModelLoadRequest_fields, &req);
    bd_wire_reader_free(&rd);
    free(buf);
}

static void test_health_request_decodes(void **state)
{
    (void)state;
    const uint8_t buf[] = {0x0A, 9, 'i', 'n', 'f', 'e', 'r', 'e', 'n', 'c', 'e'};
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    grpc_health_v1_HealthCheckRequest req = grpc_health_v1_HealthCheckRequest_init_zero;
    assert_true(bd_wire_decode(&rd, buf, sizeof buf, grpc_health_v1_HealthCheckRequest_fields, &req));
    assert_string_equal(req.service, "inference");
    pb_release(grpc_health_v1_HealthCheckRequest_fields, &req);
    bd_wire_reader_free(&rd);

    grpc_health_v1_HealthCheckResponse resp = {grpc_health_v1_HealthCheckResponse_ServingStatus_SERVING};
    uint8_t out[8];
    pb_ostream_t os = pb_ostream_from_buffer(out, sizeof out);
    assert_true(pb_encode(&os, grpc_health_v1_HealthCheckResponse_fields, &resp));
    assert_int_equal(os.bytes_written, 2);
    assert_int_equal(out[0], 0x08);
    assert_int_equal(out[1], 1);
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* The response header fields every raw response test shares. */
static inference_ModelInferResponse_InferOutputTensor g_outputs[2];
static int64_t g_shape0[2] = {1, MIB / 4}, g_shape1[2] = {2, MIB / 8};
static inference_ModelInferResponse_ParametersEntry g_params[1];

static inference_ModelInferResponse raw_response_head(void)
{
    inference_ModelInferResponse resp = inference_ModelInferResponse_init_zero;
    resp.model_name = "resnet";
    resp.model_version = "3";
    resp.id = "req-7";
    g_params[0] = (inference_ModelInferResponse_ParametersEntry){
        .key = "sequence_end", .has_value = true,
        .value = {.which_parameter_choice = inference_InferParameter_bool_param_tag,
                  .parameter_choice.bool_param = true}};
    resp.parameters = g_params;
    resp.parameters_count = 1;
    g_outputs[0] = (inference_ModelInferResponse_InferOutputTensor)inference_ModelInferResponse_InferOutputTensor_init_zero;
    g_outputs[0].name = "y0";
    g_outputs[0].datatype = "FP32";
    g_outputs[0].shape = g_shape0;
    g_outputs[0].shape_count = 2;
    g_outputs[1] = g_outputs[0];
    g_outputs[1].name = "y1";
    g_outputs[1].datatype = "INT32";
    g_outputs[1].shape = g_shape1;
    resp.outputs = g_outputs;
    resp.outputs_count = 2;
    return resp;
}

static uint8_t *encode_alloc(const pb_msgdesc_t *fields, const void *msg, size_t *len)
{
    size_t size;
    assert_true(pb_get_encoded_size(&size, fields, msg));
    uint8_t *buf = malloc(size ? size : 1);
    assert_non_null(buf);
    pb_ostream_t os = pb_ostream_from_buffer(buf, size);
    assert_true(pb_encode(&os, fields, msg));
    assert_int_equal(os.bytes_written, size);
    *len = size;
    return buf;
}

static void test_encode_response_streams_raw_outputs_from_c_buffers(void **state)
{
    (void)state;
    uint8_t *y0 = malloc(MIB), *y1 = malloc(MIB);
    assert_non_null(y0);
    assert_non_null(y1);
    fill_pattern(y0, MIB, 13, 5);
    fill_pattern(y1, MIB, 101, 3);

    inference_ModelInferResponse resp = raw_response_head();
    bd_wire_span raw[2] = {{y0, MIB}, {y1, MIB}};
    bd_wire_spans_borrow(&resp.raw_output_contents, raw, 2);

    size_t len;
    uint8_t *wire = encode_alloc(inference_ModelInferResponse_fields, &resp, &len);
    assert_true(len > 2 * MIB);
    char path[1024], args[1100];
    snprintf(path, sizeof path, "%s/response_callback.bin", out_dir);
    write_file(path, wire, len);
    snprintf(args, sizeof args, "'%s'", path);
    run_checker(args);

    /* and C reads its own output back, in place */
    bd_wire_reader rd = BD_WIRE_READER_INIT;
    inference_ModelInferResponse back = inference_ModelInferResponse_init_zero;
    assert_true(bd_wire_decode(&rd, wire, len, inference_ModelInferResponse_fields, &back));
    assert_int_equal(back.raw_output_contents.list.count, 2);
    assert_memory_equal(back.raw_output_contents.list.items[1].data, y1, MIB);
    assert_true(bd_wire_spans_in_place(&back.raw_output_contents, &rd));
    pb_release(inference_ModelInferResponse_fields, &back);
    bd_wire_reader_free(&rd);

    free(wire);
    free(y0);
    free(y1);
}

static void test_encode_response_zero_copy_by_appending_field_headers(void **state)
{
    (void)state;
    uint8_t *y0 = malloc(MIB), *y1 = malloc(MIB);
    assert_non_null(y0);
    assert_non_null(y1);
    fill_pattern(y0, MIB, 13, 5);
    fill_pattern(y1, MIB, 101, 3);

    /* What the server does with gRPC slices: encode everything but the payloads, then add
     * [header][tensor memory] per output. Here the "slices" are concatenated into a file. */
    inference_ModelInferResponse resp = raw_response_head();
    size_t head_len;
    uint8_t *head = encode_alloc(inference_ModelInferResponse_fields, &resp, &head_len);

    char path[1024], args[1100];
    snprintf(path, sizeof path, "%s/response_zero_copy.bin", out_dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(head, 1, head_len, f), head_len);
    const uint8_t *payload[2] = {y0, y1};
    for (int i = 0; i < 2; i++) {
        uint8_t hdr[BD_WIRE_HEADER_MAX];
        size_t n = bd_wire_field_header(hdr, inference_ModelInferResponse_raw_output_contents_tag, MIB);
        assert_int_equal(n, 4);                        /* tag 0x32, varint(1 MiB) = 3 bytes */
        assert_int_equal(hdr[0], (6 << 3) | PB_WT_STRING);
        assert_int_equal(fwrite(hdr, 1, n, f), n);
        assert_int_equal(fwrite(payload[i], 1, MIB, f), MIB);
    }
    assert_int_equal(fclose(f), 0);
    snprintf(args, sizeof args, "'%s'", path);
    run_checker(args);

    free(head);
    free(y0);
    free(y1);
}

static void test_encode_typed_contents_packed(void **state)
{
    (void)state;
    const float fv[3] = {0.25f, -8.0f, 1e6f};
    uint8_t iv[32];                                    /* varints of -5, 0, 1<<50 */
    pb_ostream_t vs = pb_ostream_from_buffer(iv, sizeof iv);
    assert_true(pb_encode_varint(&vs, (uint64_t)(int64_t)-5));
    assert_true(pb_encode_varint(&vs, 0));
    assert_true(pb_encode_varint(&vs, (uint64_t)1 << 50));

    bd_wire_span fspan[2] = {{(const uint8_t *)fv, 4}, {(const uint8_t *)(fv + 1), 8}};  /* chunks */
    bd_wire_span ispan[1] = {{iv, vs.bytes_written}};
    bd_wire_span sspan[3] = {{(const uint8_t *)"ab", 2}, {NULL, 0}, {(const uint8_t *)"xyz", 3}};

    inference_ModelInferResponse_InferOutputTensor outs[3];
    static int64_t shape3[1] = {3};
    const char *names[3] = {"f", "i", "s"}, *types[3] = {"FP32", "INT64", "BYTES"};
    for (int k = 0; k < 3; k++) {
        outs[k] = (inference_ModelInferResponse_InferOutputTensor)inference_ModelInferResponse_InferOutputTensor_init_zero;
        outs[k].name = (char *)names[k];
        outs[k].datatype = (char *)types[k];
        outs[k].shape = shape3;
        outs[k].shape_count = 1;
        outs[k].has_contents = true;
    }
    bd_wire_spans_borrow(&outs[0].contents.fp32_contents, fspan, 2);
    bd_wire_spans_borrow(&outs[1].contents.int64_contents, ispan, 1);
    bd_wire_spans_borrow(&outs[2].contents.bytes_contents, sspan, 3);

    inference_ModelInferResponse resp = inference_ModelInferResponse_init_zero;
    resp.model_name = "typed";
    resp.outputs = outs;
    resp.outputs_count = 3;
    size_t len;
    uint8_t *wire = encode_alloc(inference_ModelInferResponse_fields, &resp, &len);
    char path[1024], args[1100];
    snprintf(path, sizeof path, "%s/response_typed.bin", out_dir);
    write_file(path, wire, len);
    snprintf(args, sizeof args, "--typed '%s'", path);
    run_checker(args);
    free(wire);
}

static void test_field_header_matches_nanopb_encoding(void **state)
{
    (void)state;
    static uint8_t payload[300];
    fill_pattern(payload, sizeof payload, 3, 1);
    bd_wire_span one = {payload, sizeof payload};
    inference_ModelInferResponse resp = inference_ModelInferResponse_init_zero;
    bd_wire_spans_borrow(&resp.raw_output_contents, &one, 1);
    size_t len;
    uint8_t *wire = encode_alloc(inference_ModelInferResponse_fields, &resp, &len);

    uint8_t hdr[BD_WIRE_HEADER_MAX];
    size_t n = bd_wire_field_header(hdr, inference_ModelInferResponse_raw_output_contents_tag, sizeof payload);
    assert_int_equal(len, n + sizeof payload);
    assert_memory_equal(wire, hdr, n);
    assert_memory_equal(wire + n, payload, sizeof payload);
    free(wire);

    /* the largest header fits */
    assert_true(bd_wire_field_header(hdr, 0x1FFFFFFF, UINT64_MAX) <= BD_WIRE_HEADER_MAX);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s REQUEST_RAW REQUEST_TYPED LOAD_REQUEST OUT_DIR CHECK_SCRIPT\n", argv[0]);
        return 2;
    }
    request_raw_path = argv[1];
    request_typed_path = argv[2];
    load_request_path = argv[3];
    out_dir = argv[4];
    check_script = argv[5];

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_request_references_raw_contents_in_place),
        cmocka_unit_test(test_decode_typed_contents_inside_repeated_inputs),
        cmocka_unit_test(test_decode_unpacked_scalars_are_copied_into_one_span),
        cmocka_unit_test(test_decode_rejects_truncated_request_and_frees_everything),
        cmocka_unit_test(test_decode_rejects_packed_fp32_of_odd_length),
        cmocka_unit_test(test_check_refuses_nul_in_nested_strings),
        cmocka_unit_test(test_check_counts_repeated_fields),
        cmocka_unit_test(test_decode_outside_reader_is_refused),
        cmocka_unit_test(test_decode_model_load_with_uploaded_file_in_place),
        cmocka_unit_test(test_health_request_decodes),
        cmocka_unit_test(test_encode_response_streams_raw_outputs_from_c_buffers),
        cmocka_unit_test(test_encode_response_zero_copy_by_appending_field_headers),
        cmocka_unit_test(test_encode_typed_contents_packed),
        cmocka_unit_test(test_field_header_matches_nanopb_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
