/* The hand-written ModelInferResponse encoder (rpc_infer_response.c) against nanopb's encoding of
 * the same struct: byte for byte, and the size, over the shapes job_reply builds (and the
 * edges: no id, empty strings, scalars, -1 and huge dims, empty and multi-byte-length
 * payloads, many outputs); the fields it leaves to nanopb are declined. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pb_encode.h>

#include "daemon/grpc/rpc_infer_response.h"
#include "proto/wire_span.h"

#define MAX_OUT 40

typedef struct resp {
    inference_ModelInferResponse                   rsp;
    inference_ModelInferResponse_InferOutputTensor outs[MAX_OUT];
    int64_t                                        shapes[MAX_OUT][8];
    bd_wire_span                                   spans[MAX_OUT];
} resp;

static uint8_t payload[70000];

/* nanopb's bytes and the hand encoder's must be the same. */
static void assert_same_as_nanopb(resp *r)
{
    bd_wire_spans_borrow(&r->rsp.raw_output_contents, r->spans, r->rsp.outputs_count);
    size_t want = 0, got = 0;
    assert_true(pb_get_encoded_size(&want, inference_ModelInferResponse_fields, &r->rsp));
    uint8_t *a = malloc(want + 1), *b = malloc(want + 1);
    assert_non_null(a);
    assert_non_null(b);
    pb_ostream_t os = pb_ostream_from_buffer(a, want);
    assert_true(pb_encode(&os, inference_ModelInferResponse_fields, &r->rsp));
    assert_int_equal(os.bytes_written, want);
    assert_true(bd_infer_response_size(&r->rsp, &got));
    assert_int_equal(got, want);
    b[want] = 0xA5;                                   /* nothing written past the size */
    bd_infer_response_write(&r->rsp, b);
    assert_int_equal(b[want], 0xA5);
    assert_memory_equal(a, b, want);
    free(a);
    free(b);
}

static void set_output(resp *r, int k, const char *name, const char *dt, int rank,
                       const int64_t *dims, size_t bytes)
{
    r->outs[k].name = (char *)name;
    r->outs[k].datatype = (char *)dt;
    r->outs[k].shape_count = (pb_size_t)rank;
    r->outs[k].shape = rank ? r->shapes[k] : NULL;
    if (rank)                       /* DIMS may be NULL for a scalar */
        memcpy(r->shapes[k], dims, (size_t)rank * sizeof *dims);
    r->spans[k] = (bd_wire_span){ bytes ? payload + k : NULL, bytes };
}

static void test_tiny_model_response(void **state)
{
    (void)state;
    resp r = {0};
    r.rsp.model_name = "tiny_add";
    r.rsp.model_version = "1";
    r.rsp.outputs = r.outs;
    r.rsp.outputs_count = 1;
    set_output(&r, 0, "y", "FP32", 2, (int64_t[]){ 1, 16 }, 64);
    assert_same_as_nanopb(&r);
    r.rsp.id = "request-7";
    assert_same_as_nanopb(&r);
}

static void test_edges(void **state)
{
    (void)state;
    resp r = {0};
    r.rsp.model_name = "";
    r.rsp.model_version = "";
    r.rsp.id = "";
    r.rsp.outputs = r.outs;
    assert_same_as_nanopb(&r);                       /* no outputs at all */
    r.rsp.outputs_count = 6;
    set_output(&r, 0, "scalar", "INT64", 0, NULL, 8);
    set_output(&r, 1, "", "", 1, (int64_t[]){ -1 }, 0);          /* -1: a 10-byte varint */
    set_output(&r, 2, "big", "UINT8", 3, (int64_t[]){ 1ll << 40, 0, 127 }, 128);
    set_output(&r, 3, "long", "BYTES", 1, (int64_t[]){ 128 }, sizeof payload - 8);
    set_output(&r, 4, NULL, "FP16", 2, (int64_t[]){ INT64_MAX, 300 }, 16383);
    set_output(&r, 5, "n", NULL, 8, (int64_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 16384);
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 131 + 7);
    assert_same_as_nanopb(&r);
    r.rsp.model_name = NULL;                          /* unset strings are not written */
    r.rsp.id = NULL;
    assert_same_as_nanopb(&r);
}

static void test_many_outputs(void **state)
{
    (void)state;
    static char names[MAX_OUT][16];
    resp r = {0};
    r.rsp.model_name = "a_model_with_a_rather_long_name_to_cross_one_hundred_and_twenty_eight"
                       "_bytes_of_length_prefix_for_the_string_field_of_the_model_name_xxxxx";
    r.rsp.model_version = "12";
    r.rsp.outputs = r.outs;
    r.rsp.outputs_count = MAX_OUT;
    for (int k = 0; k < MAX_OUT; k++) {
        snprintf(names[k], sizeof names[k], "out_%d", k);
        set_output(&r, k, names[k], "FP32", 4, (int64_t[]){ 1, k, 3, 4 }, (size_t)(k * 37) % 300);
    }
    assert_same_as_nanopb(&r);
}

static void test_fields_left_to_nanopb(void **state)
{
    (void)state;
    resp r = {0};
    inference_ModelInferResponse_ParametersEntry p = { .key = "k" };
    inference_ModelInferResponse_InferOutputTensor_ParametersEntry op = { .key = "k" };
    size_t size = 0;
    r.rsp.model_name = "m";
    r.rsp.outputs = r.outs;
    r.rsp.outputs_count = 1;
    set_output(&r, 0, "y", "FP32", 1, (int64_t[]){ 4 }, 16);
    bd_wire_spans_borrow(&r.rsp.raw_output_contents, r.spans, 1);
    assert_true(bd_infer_response_size(&r.rsp, &size));
    r.rsp.parameters = &p;
    r.rsp.parameters_count = 1;
    assert_false(bd_infer_response_size(&r.rsp, &size));
    r.rsp.parameters_count = 0;
    r.outs[0].parameters = &op;
    r.outs[0].parameters_count = 1;
    assert_false(bd_infer_response_size(&r.rsp, &size));
    r.outs[0].parameters_count = 0;
    r.outs[0].has_contents = true;
    assert_false(bd_infer_response_size(&r.rsp, &size));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_model_response),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_many_outputs),
        cmocka_unit_test(test_fields_left_to_nanopb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
