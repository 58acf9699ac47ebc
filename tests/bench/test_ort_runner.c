/* Tests of braid's ORT C API declaration (backends/ort/ort_api.h) and of the benchmark's ORT
 * runner, against the real libonnxruntime.so.1.
 *
 * The library comes from scripts/fetch_ort.sh: $BRAID_ORT_LIB, else
 * ${BRAID_ORT_DIR:-~/.cache/braid/ort-1.30.0}/libonnxruntime.so.1. Without it the tests that
 * need it are skipped (the rest of braid does not depend on ORT). The model is the ONNX
 * backend test "test_add" from Debian's libonnx-testdata. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/ort/ort_api.h"
#include "bench/bench_tensor.h"
#include "bench/ort_runner.h"

#define ADD_MODEL "/usr/share/libonnx-testdata/data/node/test_add/model.onnx"

static char lib_path[4096];

static const char *ort_library(void)
{
    const char *env = getenv("BRAID_ORT_LIB");
    if (env)
        snprintf(lib_path, sizeof lib_path, "%s", env);
    else if (getenv("BRAID_ORT_DIR"))
        snprintf(lib_path, sizeof lib_path, "%s/libonnxruntime.so.1", getenv("BRAID_ORT_DIR"));
    else
        snprintf(lib_path, sizeof lib_path, "%s/.cache/braid/ort-1.30.0/libonnxruntime.so.1",
                 getenv("HOME") ? getenv("HOME") : "/root");
    return access(lib_path, R_OK) == 0 ? lib_path : NULL;
}

static const OrtApi *api_or_skip(void)
{
    const char *lib = ort_library();
    if (!lib) {
        print_message("libonnxruntime.so.1 not found (run scripts/fetch_ort.sh): skipping\n");
        skip();
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    OrtGetApiBaseFn get_base;
    *(void **)&get_base = dlsym(h, "OrtGetApiBase");
    assert_non_null(get_base);
    const OrtApiBase *base = get_base();
    assert_non_null(base->GetVersionString());
    assert_int_equal(strncmp(base->GetVersionString(), "1.", 2), 0);
    const OrtApi *api = base->GetApi(ORT_API_VERSION);
    assert_non_null(api);
    return api;
}

/* Slots 0-2 and 93: a status made by us reads back through ORT. */
static void test_api_status_round_trip(void **state)
{
    (void)state;
    const OrtApi *api = api_or_skip();
    OrtStatus *st = api->CreateStatus(ORT_INVALID_GRAPH, "input 'x': bad");
    assert_non_null(st);
    assert_int_equal(api->GetErrorCode(st), ORT_INVALID_GRAPH);
    assert_string_equal(api->GetErrorMessage(st), "input 'x': bad");
    api->ReleaseStatus(st);
}

/* Slots 49, 51, 60-62, 65, 69, 94, 96, 99: a tensor over our buffer reports our type and
 * shape and points at our data. A wrong slot would crash or return an error here. */
static void test_api_tensor_value_describes_our_buffer(void **state)
{
    (void)state;
    const OrtApi *api = api_or_skip();
    OrtMemoryInfo *cpu = NULL;
    assert_null(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu));
    float buf[6] = { 1, 2, 3, 4, 5, 6 };
    int64_t shape[2] = { 2, 3 };
    OrtValue *v = NULL;
    assert_null(api->CreateTensorWithDataAsOrtValue(cpu, buf, sizeof buf, shape, 2,
                                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v));
    OrtTensorTypeAndShapeInfo *info = NULL;
    assert_null(api->GetTensorTypeAndShape(v, &info));
    ONNXTensorElementDataType et;
    size_t rank = 0;
    int64_t dims[2] = { 0, 0 };
    assert_null(api->GetTensorElementType(info, &et));
    assert_null(api->GetDimensionsCount(info, &rank));
    assert_null(api->GetDimensions(info, dims, rank));
    assert_int_equal(et, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
    assert_int_equal(rank, 2);
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 3);
    void *data = NULL;
    assert_null(api->GetTensorMutableData(v, &data));
    assert_ptr_equal(data, buf);
    api->ReleaseTensorTypeAndShapeInfo(info);
    api->ReleaseValue(v);
    api->ReleaseMemoryInfo(cpu);
}

/* A wrong size is an ORT error with a message, not a crash. */
static void test_api_reports_bad_tensor_size(void **state)
{
    (void)state;
    const OrtApi *api = api_or_skip();
    OrtMemoryInfo *cpu = NULL;
    assert_null(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu));
    float buf[2];
    int64_t shape[1] = { 8 };
    OrtValue *v = NULL;
    OrtStatus *st = api->CreateTensorWithDataAsOrtValue(cpu, buf, sizeof buf, shape, 1,
                                                        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v);
    assert_non_null(st);
    assert_true(strlen(api->GetErrorMessage(st)) > 0);
    api->ReleaseStatus(st);
    api->ReleaseMemoryInfo(cpu);
}

static void test_runner_missing_library_says_how_to_get_it(void **state)
{
    (void)state;
    ort_runner *r = NULL;
    char why[1024];
    ort_runner_options o = { .library = "/nonexistent/libonnxruntime.so.1", .threads = 1 };
    assert_int_equal(ort_runner_open(ADD_MODEL, &o, &r, why, sizeof why), -1);
    assert_null(r);
    assert_non_null(strstr(why, "fetch_ort.sh"));
}

static void test_runner_bad_model_names_the_file(void **state)
{
    (void)state;
    const char *lib = ort_library();
    if (!lib)
        skip();
    char model[] = "/tmp/braid-bench-bad-XXXXXX";
    int fd = mkstemp(model);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not a model", 11), 11);
    close(fd);
    ort_runner *r = NULL;
    char why[1024];
    ort_runner_options o = { .library = lib, .threads = 1 };
    assert_int_equal(ort_runner_open(model, &o, &r, why, sizeof why), -1);
    unlink(model);
    assert_null(r);
    assert_non_null(strstr(why, model));
}

/* The whole path the benchmark takes: signature, prepare (first run + output allocation),
 * timed runs into the preallocated output. */
static void test_runner_add_matches_reference(void **state)
{
    (void)state;
    const char *lib = ort_library();
    if (!lib || access(ADD_MODEL, R_OK) != 0)
        skip();
    ort_runner *r = NULL;
    char why[1024] = "";
    ort_runner_options o = { .library = lib, .threads = 2 };
    assert_int_equal(ort_runner_open(ADD_MODEL, &o, &r, why, sizeof why), 0);
    assert_int_equal(ort_runner_num_inputs(r), 2);
    assert_int_equal(ort_runner_num_outputs(r), 1);
    assert_string_equal(ort_runner_input_name(r, 0), "x");
    assert_string_equal(ort_runner_input_name(r, 1), "y");
    assert_string_equal(ort_runner_output_name(r, 0), "sum");

    bench_tensor in[2];
    for (size_t i = 0; i < 2; i++) {
        int dtype, rank;
        int64_t dims[BENCH_MAX_RANK];
        ort_runner_input_type(r, i, &dtype, &rank, dims);
        assert_int_equal(dtype, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
        assert_int_equal(rank, 3);
        assert_int_equal(bench_tensor_init(&in[i], ort_runner_input_name(r, i), dtype, rank, dims,
                                           why, sizeof why), 0);
        bench_tensor_fill(&in[i], 7 + i);
    }
    assert_int_equal(ort_runner_prepare(r, in, 2, why, sizeof why), 0);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(ort_runner_run(r, why, sizeof why), 0);
        const bench_tensor *out = ort_runner_output(r, 0);
        assert_int_equal(out->numel, in[0].numel);
        const float *x = in[0].data, *y = in[1].data, *s = out->data;
        for (size_t k = 0; k < out->numel; k++)
            assert_true(s[k] == x[k] + y[k]);
    }
    ort_runner_close(r);
    bench_tensor_free(&in[0]);
    bench_tensor_free(&in[1]);
}

static void test_tensor_fill_is_deterministic_and_masks_are_ones(void **state)
{
    (void)state;
    char why[256];
    int64_t dims[2] = { 4, 8 };
    bench_tensor a, b, m;
    assert_int_equal(bench_tensor_init(&a, "hidden", 1, 2, dims, why, sizeof why), 0);
    assert_int_equal(bench_tensor_init(&b, "hidden", 1, 2, dims, why, sizeof why), 0);
    assert_int_equal(bench_tensor_init(&m, "attention_mask", 1, 2, dims, why, sizeof why), 0);
    bench_tensor_fill(&a, 42);
    bench_tensor_fill(&b, 42);
    bench_tensor_fill(&m, 42);
    assert_memory_equal(a.data, b.data, a.nbytes);
    assert_true(bench_tensor_max_abs_diff(&a, b.data, 1, b.numel) == 0.0);
    for (size_t i = 0; i < a.numel; i++) {
        float v = ((float *)a.data)[i];
        assert_true(v >= -1.0f && v < 1.0f);
        assert_true(((float *)m.data)[i] == 1.0f);
    }
    assert_true(bench_tensor_max_abs_diff(&a, b.data, 7, b.numel) < 0);   /* dtype mismatch */
    bench_tensor_free(&a);
    bench_tensor_free(&b);
    bench_tensor_free(&m);
}

static void test_tensor_rejects_dynamic_dims(void **state)
{
    (void)state;
    char why[256];
    int64_t dims[2] = { -1, 8 };
    bench_tensor t;
    assert_int_equal(bench_tensor_init(&t, "ids", 7, 2, dims, why, sizeof why), -1);
    assert_non_null(strstr(why, "'ids'"));
    assert_non_null(strstr(why, "dynamic"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_fill_is_deterministic_and_masks_are_ones),
        cmocka_unit_test(test_tensor_rejects_dynamic_dims),
        cmocka_unit_test(test_api_status_round_trip),
        cmocka_unit_test(test_api_tensor_value_describes_our_buffer),
        cmocka_unit_test(test_api_reports_bad_tensor_size),
        cmocka_unit_test(test_runner_missing_library_says_how_to_get_it),
        cmocka_unit_test(test_runner_bad_model_names_the_file),
        cmocka_unit_test(test_runner_add_matches_reference),
    };
    return cmocka_run_group_tests_name("bench_ort", tests, NULL, NULL);
}
