/* .npy reader/writer: round trips, the header variants numpy writes, and malformed files.
 *
 * Also a helper mode for the numpy interop test (test_npy_numpy.py):
 *   test_npy --copy IN.npy OUT.npy     read IN with bd_npy_read, write OUT with
 *                                      bd_npy_write_array (exit 0 on success) */
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

#include "core/npy.h"

static char tmpdir[256];

static int setup_dir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/braid-npy-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* A .npy file with format MAJOR.0, header text HDR (padded like numpy when PAD), and DATA. */
static void write_npy(const char *path, int major, const char *hdr, bool pad, const void *data,
                      size_t ndata)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t hl = strlen(hdr);
    size_t hlen = pad ? (pre + hl + 1 + 63) / 64 * 64 - pre : hl;
    unsigned char *buf = calloc(1, pre + hlen + ndata);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(buf + pre, hdr, hl);
    if (pad) {
        memset(buf + pre + hl, ' ', hlen - hl - 1);
        buf[pre + hlen - 1] = '\n';
    }
    if (ndata)
        memcpy(buf + pre + hlen, data, ndata);
    write_bytes(path, buf, pre + hlen + ndata);
    free(buf);
}

static void expect_read_fails(const char *name, int code, const char *needle)
{
    bd_npy a;
    bd_error err = { 0 };
    const char *path = tmp_path(name);
    int rc = bd_npy_read(path, &a, &err);
    if (rc != code || !strstr(err.msg, needle))
        print_error("%s: rc=%d (%s) msg='%s', wanted %s containing '%s'\n", name, rc,
                    bd_status_name(rc), err.msg, bd_status_name(code), needle);
    assert_int_equal(rc, code);
    assert_non_null(strstr(err.msg, needle));
    assert_non_null(strstr(err.msg, name));            /* the message names the file */
    assert_null(a.data);
}

/* ------------------------------------------------------------------------- round trips */

static void roundtrip(int dtype, int ndim, const int64_t *dims)
{
    bd_npy src = { .dtype = dtype };
    src.shape = bd_shape_make(ndim, dims);
    int64_t n = bd_shape_numel(&src.shape);
    src.nbytes = (size_t)n * bd_dtype_size(dtype);
    src.data = malloc(src.nbytes ? src.nbytes : 1);
    assert_non_null(src.data);
    for (size_t i = 0; i < src.nbytes; i++)
        ((unsigned char *)src.data)[i] = dtype == BD_DT_BOOL ? (unsigned char)(i % 2)
                                                              : (unsigned char)(i * 37 + 11);
    bd_error err = { 0 };
    const char *path = tmp_path("rt.npy");
    if (dtype == BD_DT_BOOL) {
        assert_int_equal(bd_npy_write_array(path, &src, &err), 0);
    } else {
        DLTensor t;
        bd_npy_as_dltensor(&src, &t);
        assert_int_equal(bd_npy_write(path, &t, &err), 0);
    }

    /* numpy's layout: the data starts at a multiple of 64 */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(((size_t)st.st_size - src.nbytes) % 64, 0);

    bd_npy back;
    int rc = bd_npy_read(path, &back, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(back.dtype, dtype);
    assert_true(bd_shape_equal(&back.shape, &src.shape));
    assert_int_equal(back.nbytes, src.nbytes);
    assert_int_equal((uintptr_t)back.data % 64, 0);
    if (src.nbytes)
        assert_memory_equal(back.data, src.data, src.nbytes);
    bd_npy_free(&back);
    assert_null(back.data);
    free(src.data);
}

static void test_roundtrip_every_dtype(void **state)
{
    (void)state;
    static const int dtypes[] = { BD_DT_FLOAT, BD_DT_DOUBLE, BD_DT_FLOAT16, BD_DT_INT64,
                                  BD_DT_INT32, BD_DT_INT16, BD_DT_INT8, BD_DT_UINT64,
                                  BD_DT_UINT32, BD_DT_UINT16, BD_DT_UINT8, BD_DT_BOOL };
    const int64_t dims[] = { 2, 3, 5 };
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        roundtrip(dtypes[i], 3, dims);
}

static void test_roundtrip_ranks_scalar_and_empty(void **state)
{
    (void)state;
    const int64_t d1[] = { 7 }, d4[] = { 1, 3, 4, 4 }, d8[] = { 1, 2, 1, 2, 1, 2, 1, 2 };
    const int64_t empty[] = { 3, 0, 2 };
    roundtrip(BD_DT_FLOAT, 0, NULL);
    roundtrip(BD_DT_FLOAT, 1, d1);
    roundtrip(BD_DT_FLOAT, 4, d4);
    roundtrip(BD_DT_INT64, 8, d8);
    roundtrip(BD_DT_FLOAT, 3, empty);
}

static void test_write_header_is_numpy_format(void **state)
{
    (void)state;
    float v[2] = { 1.5f, -2.0f };
    int64_t shape[1] = { 2 };
    DLTensor t = { .data = v, .device = { kDLCPU, 0 }, .ndim = 1,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape };
    bd_error err = { 0 };
    assert_int_equal(bd_npy_write(tmp_path("fmt.npy"), &t, &err), 0);
    unsigned char buf[128 + 8 + 1];
    FILE *f = fopen(tmp_path("fmt.npy"), "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_int_equal(n, 128 + 8);               /* 10 + 58 + '\n' rounds up to 128 */
    assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
    const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    assert_memory_equal(buf + 10, want, strlen(want));
    assert_int_equal(buf[127], '\n');
    assert_memory_equal(buf + 128, v, 8);
}

static void test_write_honours_byte_offset_and_compact_strides(void **state)
{
    (void)state;
    int32_t v[7] = { 99, 1, 2, 3, 4, 5, 6 };
    int64_t shape[2] = { 2, 3 }, strides[2] = { 3, 1 };
    DLTensor t = { .data = v, .device = { kDLCPU, 0 }, .ndim = 2, .dtype = { kDLInt, 32, 1 },
                   .shape = shape, .strides = strides, .byte_offset = sizeof(int32_t) };
    bd_error err = { 0 };
    assert_int_equal(bd_npy_write(tmp_path("off.npy"), &t, &err), 0);
    bd_npy a;
    assert_int_equal(bd_npy_read(tmp_path("off.npy"), &a, &err), 0);
    assert_int_equal(a.dtype, BD_DT_INT32);
    assert_memory_equal(a.data, v + 1, sizeof(int32_t) * 6);
    bd_npy_free(&a);
}

static void test_write_rejects_strided_and_foreign_tensors(void **state)
{
    (void)state;
    float v[6] = { 0 };
    int64_t shape[2] = { 2, 3 }, strides[2] = { 1, 2 };
    bd_error err = { 0 };
    DLTensor t = { .data = v, .device = { kDLCPU, 0 }, .ndim = 2,
                   .dtype = { kDLFloat, 32, 1 }, .shape = shape, .strides = strides };
    assert_int_equal(bd_npy_write(tmp_path("w.npy"), &t, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "row-major"));
    t.strides = NULL;
    t.device.device_type = kDLCUDA;
    assert_int_equal(bd_npy_write(tmp_path("w.npy"), &t, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "CPU"));
    t.device.device_type = kDLCPU;
    t.dtype = (DLDataType){ kDLFloat, 32, 4 };
    assert_int_equal(bd_npy_write(tmp_path("w.npy"), &t, &err), BD_EINVAL);
    t.dtype = (DLDataType){ kDLBfloat, 16, 1 };
    assert_int_equal(bd_npy_write(tmp_path("w.npy"), &t, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "BF16"));
    t.dtype = (DLDataType){ kDLFloat, 32, 1 };
    assert_int_equal(bd_npy_write("/nonexistent-dir/x.npy", &t, &err), BD_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x.npy"));
}

/* ------------------------------------------------------------------- header variants */

static void read_ok(const char *name, int want_dtype, int rank, const int64_t *dims)
{
    bd_npy a;
    bd_error err = { 0 };
    int rc = bd_npy_read(tmp_path(name), &a, &err);
    if (rc)
        print_error("%s: %s\n", name, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(a.dtype, want_dtype);
    assert_int_equal(a.shape.rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(a.shape.dims[i], dims[i]);
    bd_npy_free(&a);
}

static void test_read_header_variants(void **state)
{
    (void)state;
    double d[6] = { 1, 2, 3, 4, 5, 6 };
    const int64_t d23[] = { 2, 3 }, d6[] = { 6 };
    /* version 2.0 and 3.0 (4-byte header length) */
    write_npy(tmp_path("v2.npy"), 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
              true, d, sizeof d);
    read_ok("v2.npy", BD_DT_DOUBLE, 2, d23);
    write_npy(tmp_path("v3.npy"), 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }",
              true, d, sizeof d);
    read_ok("v3.npy", BD_DT_DOUBLE, 1, d6);
    /* keys in another order, double quotes, no trailing comma, no padding, Python-2 longs */
    write_npy(tmp_path("order.npy"), 1, "{\"shape\": (2L,3L), \"fortran_order\": False, "
              "\"descr\": \"<f8\"}", false, d, sizeof d);
    const int64_t d2l[] = { 2, 3 };
    read_ok("order.npy", BD_DT_DOUBLE, 2, d2l);
    /* scalar and byte-order-free single bytes */
    write_npy(tmp_path("scalar.npy"), 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
              true, d, sizeof d[0]);
    read_ok("scalar.npy", BD_DT_DOUBLE, 0, NULL);
    write_npy(tmp_path("bool.npy"), 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (6,), }",
              true, "\1\0\1\0\1\0", 6);
    read_ok("bool.npy", BD_DT_BOOL, 1, d6);
    write_npy(tmp_path("i1.npy"), 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (6,), }",
              true, "abcdef", 6);
    read_ok("i1.npy", BD_DT_INT8, 1, d6);
}

/* ------------------------------------------------------------------------- malformed */

#define HDR(descr, fortran, shape) \
    "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

static void test_read_rejects_unsupported_layouts(void **state)
{
    (void)state;
    float f[4] = { 0 };
    write_npy(tmp_path("fortran.npy"), 1, HDR("<f4", "True", "(2, 2)"), true, f, sizeof f);
    expect_read_fails("fortran.npy", BD_EUNSUPPORTED, "fortran_order");
    write_npy(tmp_path("bigend.npy"), 1, HDR(">f4", "False", "(4,)"), true, f, sizeof f);
    expect_read_fails("bigend.npy", BD_EUNSUPPORTED, "big-endian");
    write_npy(tmp_path("complex.npy"), 1, HDR("<c8", "False", "(2,)"), true, f, sizeof f);
    expect_read_fails("complex.npy", BD_EUNSUPPORTED, "'<c8' is not supported");
    write_npy(tmp_path("struct.npy"), 1, "{'descr': [('a', '<f4')], 'fortran_order': False, "
              "'shape': (4,), }", true, f, sizeof f);
    expect_read_fails("struct.npy", BD_EUNSUPPORTED, "structured");
    write_npy(tmp_path("v4.npy"), 1, HDR("<f4", "False", "(4,)"), true, f, sizeof f);
    FILE *fh = fopen(tmp_path("v4.npy"), "r+b");
    assert_non_null(fh);
    fseek(fh, 6, SEEK_SET);
    fputc(4, fh);
    fclose(fh);
    expect_read_fails("v4.npy", BD_EUNSUPPORTED, "version 4.0");
    write_npy(tmp_path("rank9.npy"), 1, HDR("<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 4)"),
              true, f, sizeof f);
    expect_read_fails("rank9.npy", BD_EUNSUPPORTED, "rank");
}

static void test_read_rejects_malformed_headers(void **state)
{
    (void)state;
    float f[4] = { 0 };
    static const struct { const char *name, *hdr, *needle; } cases[] = {
        { "nokey.npy",   "{'descr': '<f4', 'shape': (4,), }", "missing" },
        { "dupkey.npy",  "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}",
          "duplicate" },
        { "extra.npy",   HDR("<f4", "False", "(4,)") "'x': 1", "trailing" },
        { "unknown.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}",
          "unknown key" },
        { "notuple.npy", HDR("<f4", "False", "(4)"), "not a tuple" },
        { "negdim.npy",  HDR("<f4", "False", "(-4,)"), "non-negative" },
        { "huge.npy",    HDR("<f4", "False", "(99999999999999999999,)"), "overflows" },
        { "toobig.npy",  HDR("<f4", "False", "(4611686018427387904, 8)"), "too large" },
        { "bool.npy",    HDR("<f4", "false", "(4,)"), "True or False" },
        { "open.npy",    "{'descr': '<f4', 'fortran_order': False, 'shape': (4,", "dimension" },
        { "unterm.npy",  "{'descr': '<f4", "string" },
        { "nobrace.npy", "'descr': '<f4'", "'{'" },
        { "escape.npy",  "{'descr': '<\\f4', 'fortran_order': False, 'shape': (4,)}", "string" },
        { "empty.npy",   " ", "'{'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_npy(tmp_path(cases[i].name), 1, cases[i].hdr, true, f, sizeof f);
        expect_read_fails(cases[i].name, BD_EINVAL, cases[i].needle);
    }
    /* a NUL byte inside the header text */
    write_npy(tmp_path("nul.npy"), 1, HDR("<f4", "False", "(4,)"), true, f, sizeof f);
    FILE *fh = fopen(tmp_path("nul.npy"), "r+b");
    assert_non_null(fh);
    fseek(fh, 12, SEEK_SET);
    fputc(0, fh);
    fclose(fh);
    expect_read_fails("nul.npy", BD_EINVAL, "NUL");
}

static void test_read_rejects_truncated_and_oversized_files(void **state)
{
    (void)state;
    float f[5] = { 0 };
    write_bytes(tmp_path("zero.npy"), "", 0);
    expect_read_fails("zero.npy", BD_EIO, "truncated");
    write_bytes(tmp_path("short.npy"), "\x93NUM", 4);
    expect_read_fails("short.npy", BD_EIO, "truncated");
    write_bytes(tmp_path("magic.npy"), "PK\x03\x04xxxxxxxxxxxxxxxxxx", 22);
    expect_read_fails("magic.npy", BD_EINVAL, "magic");
    write_bytes(tmp_path("nolen.npy"), "\x93NUMPY\x01\x00\x40", 9);
    expect_read_fails("nolen.npy", BD_EIO, "truncated");
    write_bytes(tmp_path("hdrcut.npy"), "\x93NUMPY\x01\x00\x40\x00{'descr'", 17);
    expect_read_fails("hdrcut.npy", BD_EIO, "truncated header");
    write_bytes(tmp_path("hdrbig.npy"), "\x93NUMPY\x02\x00\xff\xff\xff\x7f{", 13);
    expect_read_fails("hdrbig.npy", BD_EINVAL, "out of range");
    write_npy(tmp_path("datacut.npy"), 1, HDR("<f4", "False", "(2, 3)"), true, f, sizeof f);
    expect_read_fails("datacut.npy", BD_EIO, "truncated");
    write_npy(tmp_path("datalong.npy"), 1, HDR("<f4", "False", "(4,)"), true, f, sizeof f);
    expect_read_fails("datalong.npy", BD_EINVAL, "trailing bytes");
    expect_read_fails("does-not-exist.npy", BD_EIO, "No such file");
    mkdir(tmp_path("adir.npy"), 0700);
    expect_read_fails("adir.npy", BD_EIO, "not a regular file");
}

static void test_free_accepts_null_and_zeroed(void **state)
{
    (void)state;
    bd_npy_free(NULL);
    bd_npy a = { 0 };
    bd_npy_free(&a);
    assert_null(bd_npy_descr(BD_DT_STRING));
    assert_string_equal(bd_npy_descr(BD_DT_FLOAT), "<f4");
}

/* ----------------------------------------------------------------- numpy interop helper */

static int copy_mode(const char *in, const char *out)
{
    bd_npy a;
    bd_error err = { 0 };
    if (bd_npy_read(in, &a, &err) != 0 || bd_npy_write_array(out, &a, &err) != 0) {
        fprintf(stderr, "%s: %s\n", bd_status_name(err.code), err.msg);
        bd_npy_free(&a);
        return 1;
    }
    bd_npy_free(&a);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--copy") == 0)
        return copy_mode(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_every_dtype),
        cmocka_unit_test(test_roundtrip_ranks_scalar_and_empty),
        cmocka_unit_test(test_write_header_is_numpy_format),
        cmocka_unit_test(test_write_honours_byte_offset_and_compact_strides),
        cmocka_unit_test(test_write_rejects_strided_and_foreign_tensors),
        cmocka_unit_test(test_read_header_variants),
        cmocka_unit_test(test_read_rejects_unsupported_layouts),
        cmocka_unit_test(test_read_rejects_malformed_headers),
        cmocka_unit_test(test_read_rejects_truncated_and_oversized_files),
        cmocka_unit_test(test_free_accepts_null_and_zeroed),
    };
    return cmocka_run_group_tests_name("npy", tests, setup_dir, teardown_dir);
}
