/* libbraid-client without a server: datatypes, DLPack conversion, argument checks, and the
 * message a user gets when braidd is not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/braid_client.h"

static void test_datatype_names_round_trip(void **state)
{
    static const char *const names[] = { "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16",
                                          "INT32", "INT64", "FP16", "BF16", "FP32", "FP64" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        DLDataType t;
        assert_true(braid_datatype_to_dl(names[i], &t));
        const char *back = braid_datatype_from_dl(t);
        assert_non_null(back);
        /* BOOL travels as uint8 in DLPack 0.6: the only lossy pair. */
        assert_string_equal(back, strcmp(names[i], "BOOL") ? names[i] : "UINT8");
    }
    DLDataType t;
    assert_false(braid_datatype_to_dl("BYTES", &t));
    assert_false(braid_datatype_to_dl("fp32", &t));
    assert_int_equal(braid_datatype_size("FP64"), 8);
    assert_int_equal(braid_datatype_size("BOOL"), 1);
    assert_int_equal(braid_datatype_size("BYTES"), 0);
    assert_null(braid_datatype_from_dl((DLDataType){ kDLFloat, 32, 4 }));   /* vector lanes */
}

static void test_tensor_from_dl_describes_contiguous_cpu_tensor(void **state)
{
    float data[6] = { 0 };
    int64_t shape[2] = { 2, 3 };
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = 2,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    braid_tensor out;
    char msg[256] = "x";
    assert_int_equal(braid_tensor_from_dl("x", &t, &out, msg, sizeof msg), BRAID_OK);
    assert_string_equal(msg, "");
    assert_string_equal(out.name, "x");
    assert_string_equal(out.datatype, "FP32");
    assert_int_equal(out.nbytes, sizeof data);
    assert_ptr_equal(out.data, data);
    assert_int_equal(out.ndim, 2);

    int64_t compact[2] = { 3, 1 };
    t.strides = compact;
    assert_int_equal(braid_tensor_from_dl("x", &t, &out, msg, sizeof msg), BRAID_OK);
}

static void test_tensor_from_dl_rejects_what_the_wire_cannot_carry(void **state)
{
    float data[6] = { 0 };
    int64_t shape[2] = { 2, 3 }, transposed[2] = { 1, 2 };
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = 2,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape, .strides = transposed };
    braid_tensor out;
    char msg[256];
    assert_int_equal(braid_tensor_from_dl("x", &t, &out, msg, sizeof msg), BRAID_E_ARG);
    assert_non_null(strstr(msg, "strided"));
    t.strides = NULL;
    t.device.device_type = kDLCUDA;
    assert_int_equal(braid_tensor_from_dl("x", &t, &out, msg, sizeof msg), BRAID_E_ARG);
    assert_non_null(strstr(msg, "CPU"));
    t.device.device_type = kDLCPU;
    t.dtype = (DLDataType){ kDLComplex, 64, 1 };
    assert_int_equal(braid_tensor_from_dl("x", &t, &out, msg, sizeof msg), BRAID_E_ARG);
    assert_non_null(strstr(msg, "input 'x'"));
}

static void test_status_names(void **state)
{
    assert_string_equal(braid_status_name(BRAID_OK), "OK");
    assert_string_equal(braid_status_name(BRAID_NOT_FOUND), "NOT_FOUND");
    assert_string_equal(braid_status_name(BRAID_UNAUTHENTICATED), "UNAUTHENTICATED");
    assert_string_equal(braid_status_name(BRAID_E_PROTOCOL), "E_PROTOCOL");
    assert_string_equal(braid_status_name(12345), "UNKNOWN_STATUS");
}

static void test_null_arguments_are_errors_not_crashes(void **state)
{
    char msg[256];
    bool b;
    braid_client *c = NULL;
    assert_int_equal(braid_client_connect(NULL, NULL, &c, msg, sizeof msg), BRAID_E_ARG);
    assert_null(c);
    assert_int_equal(braid_server_live(NULL, &b, msg, sizeof msg), BRAID_E_ARG);
    assert_int_equal(braid_model_ready(NULL, "m", NULL, &b, NULL, 0), BRAID_E_ARG);
    assert_int_equal(braid_model_infer(NULL, NULL, NULL, msg, sizeof msg), BRAID_E_ARG);
    braid_client_close(NULL);
    braid_infer_result_free(NULL);
    braid_model_info_free(NULL);
    braid_server_info_free(NULL);
    braid_repository_list_free(NULL);
    braid_statistics_free(NULL);
}

/* A lazy client does not connect until a call; nothing listens on port 1 of loopback. */
static void test_unreachable_server_says_so(void **state)
{
    char msg[512];
    braid_client *c = NULL;
    braid_client_options o = { .timeout_ms = 5000 };
    assert_int_equal(braid_client_connect("127.0.0.1:1", &o, &c, msg, sizeof msg), BRAID_UNAVAILABLE);
    assert_null(c);
    assert_non_null(strstr(msg, "cannot reach braidd at 127.0.0.1:1"));

    o.lazy = true;
    assert_int_equal(braid_client_connect("127.0.0.1:1", &o, &c, msg, sizeof msg), BRAID_OK);
    assert_string_equal(braid_client_target(c), "127.0.0.1:1");
    bool live = true;
    assert_int_equal(braid_server_live(c, &live, msg, sizeof msg), BRAID_UNAVAILABLE);
    assert_true(live);   /* untouched on failure */
    assert_non_null(strstr(msg, "127.0.0.1:1"));

    /* Client-side checks run before anything is sent. */
    float x[4] = { 0 };
    int64_t shape[2] = { 2, 3 };
    braid_tensor in = { "x", "FP32", shape, 2, x, sizeof x };
    braid_infer_request req = { .model = "m", .inputs = &in, .n_inputs = 1 };
    braid_infer_result *r = NULL;
    assert_int_equal(braid_model_infer(c, &req, &r, msg, sizeof msg), BRAID_E_ARG);
    assert_non_null(strstr(msg, "input 'x': FP32 with 6 elements needs 24 bytes, got 16"));
    in.datatype = "FLOAT";
    assert_int_equal(braid_model_infer(c, &req, &r, msg, sizeof msg), BRAID_E_ARG);
    assert_non_null(strstr(msg, "unknown datatype 'FLOAT'"));
    assert_null(r);
    assert_int_equal(braid_model_load_bytes(c, "m", "../1", x, sizeof x, NULL, msg, sizeof msg), BRAID_E_ARG);
    assert_non_null(strstr(msg, "version"));
    braid_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datatype_names_round_trip),
        cmocka_unit_test(test_tensor_from_dl_describes_contiguous_cpu_tensor),
        cmocka_unit_test(test_tensor_from_dl_rejects_what_the_wire_cannot_carry),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_null_arguments_are_errors_not_crashes),
        cmocka_unit_test(test_unreachable_server_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
