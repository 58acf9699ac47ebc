/* Triton's classification extension (daemon/infer_classify.c) and label files
 * (daemon/labels.c): ordering, formatting, shapes, limits, hostile label files. The expected
 * strings are written out by hand from Triton's rule (value as "%f" or an integer, ':', the
 * index, ':' and the label when there is one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/infer_classify.h"
#include "daemon/labels.h"

static DLTensor tensor(void *data, DLDataType dt, int64_t *shape, int ndim)
{
    DLTensor t = { .data = data, .device = { kDLCPU, 0 }, .ndim = ndim, .dtype = dt, .shape = shape };
    return t;
}

/* The I-th string of OUT. */
static void expect_strings(const bd_classified *out, const char *const *want, size_t n)
{
    const uint8_t *p = out->data, *end = out->data + out->bytes;
    for (size_t i = 0; i < n; i++) {
        assert_true(p + 4 <= end);
        uint32_t len = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
        assert_true(p + 4 + len <= end);
        char got[256];
        snprintf(got, sizeof got, "%.*s", (int)len, (const char *)p + 4);
        assert_string_equal(got, want[i]);
        p += 4 + len;
    }
    assert_ptr_equal(p, end);
}

static char *write_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/braid-labels-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_float_ties_nan_and_labels(void **state)
{
    (void)state;
    float v[5] = { 0.25f, NAN, 2.0f, 0.25f, -1.0f };
    int64_t shape[1] = { 5 };
    DLTensor t = tensor(v, (DLDataType){ kDLFloat, 32, 1 }, shape, 1);
    char *path = write_file("cat\r\ndog\nbird\n");          /* CRLF stripped; 3 of 5 labelled */
    bd_labels *l = NULL;
    bd_error err = {0};
    assert_int_equal(bd_labels_load(path, &l, &err), 0);
    unlink(path);
    assert_int_equal(bd_labels_count(l), 3);
    bd_classified out;
    assert_int_equal(bd_classify(&t, "y", false, 5, l, 1 << 20, &out, &err), 0);
    assert_int_equal(out.ndim, 1);
    assert_int_equal(out.shape[0], 5);
    const char *want[] = { "2.000000:2:bird", "0.250000:0:cat", "0.250000:3",
                           "-1.000000:4", "nan:1:dog" };
    expect_strings(&out, want, 5);
    free(out.data);
    bd_labels_free(l);
}

static void test_batched_rows_and_integers(void **state)
{
    (void)state;
    int64_t v[6] = { 5, -7, 9, INT64_MAX, 0, -1 };
    int64_t shape[2] = { 2, 3 };
    DLTensor t = tensor(v, (DLDataType){ kDLInt, 64, 1 }, shape, 2);
    bd_classified out;
    bd_error err = {0};
    assert_int_equal(bd_classify(&t, "y", true, 2, NULL, 1 << 20, &out, &err), 0);
    assert_int_equal(out.ndim, 2);
    assert_int_equal(out.shape[0], 2);
    assert_int_equal(out.shape[1], 2);
    const char *want[] = { "9:2", "5:0", "9223372036854775807:0", "0:1" };
    expect_strings(&out, want, 4);
    free(out.data);

    uint8_t u[3] = { 1, 200, 3 };
    int64_t s1[1] = { 3 };
    DLTensor tu = tensor(u, (DLDataType){ kDLUInt, 8, 1 }, s1, 1);
    assert_int_equal(bd_classify(&tu, "y", false, 1, NULL, 1 << 20, &out, &err), 0);
    const char *want_u[] = { "200:1" };
    expect_strings(&out, want_u, 1);
    free(out.data);
}

/* The heap's top K against a full sort done here, on values with many ties. */
static int desc(const void *a, const void *b)
{
    const int *x = a, *y = b;     /* pairs (value, index) */
    return x[0] != y[0] ? (x[0] > y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

static void test_top_k_matches_a_full_sort(void **state)
{
    (void)state;
    enum { N = 1000, K = 17 };
    int32_t v[N];
    int pairs[N][2];
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (int32_t)(seed >> 24) % 50 - 25;          /* 50 distinct values: many ties */
        pairs[i][0] = v[i];
        pairs[i][1] = i;
    }
    qsort(pairs, N, sizeof pairs[0], desc);
    int64_t shape[1] = { N };
    DLTensor t = tensor(v, (DLDataType){ kDLInt, 32, 1 }, shape, 1);
    bd_classified out;
    bd_error err = {0};
    assert_int_equal(bd_classify(&t, "y", false, K, NULL, 1 << 20, &out, &err), 0);
    char text[K][32];
    const char *want[K];
    for (int i = 0; i < K; i++) {
        snprintf(text[i], sizeof text[i], "%d:%d", pairs[i][0], pairs[i][1]);
        want[i] = text[i];
    }
    expect_strings(&out, want, K);
    free(out.data);
}

static void test_refusals(void **state)
{
    (void)state;
    uint16_t h[4] = { 0 };
    int64_t shape[1] = { 4 };
    bd_classified out;
    bd_error err = {0};
    DLTensor half = tensor(h, (DLDataType){ kDLFloat, 16, 1 }, shape, 1);
    assert_int_equal(bd_classify(&half, "y", false, 2, NULL, 1 << 20, &out, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "numeric"));
    float f[4] = { 1, 2, 3, 4 };
    DLTensor t = tensor(f, (DLDataType){ kDLFloat, 32, 1 }, shape, 1);
    /* 4 strings of 4 + 10 bytes ("4.000000:3") do not fit in 40 bytes */
    assert_int_equal(bd_classify(&t, "y", false, 4, NULL, 40, &out, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "max_message_bytes"));
    assert_null(out.data);
    /* an empty batch: shape [0, K'] and no bytes */
    int64_t empty[2] = { 0, 4 };
    DLTensor e = tensor(f, (DLDataType){ kDLFloat, 32, 1 }, empty, 2);
    assert_int_equal(bd_classify(&e, "y", true, 3, NULL, 40, &out, &err), 0);
    assert_int_equal(out.shape[0], 0);
    assert_int_equal(out.bytes, 0);
    free(out.data);
}

static void test_hostile_label_files(void **state)
{
    (void)state;
    bd_labels *l = NULL;
    bd_error err = {0};
    assert_int_equal(bd_labels_load("/nonexistent/labels.txt", &l, &err), BD_EIO);
    assert_int_equal(bd_labels_load("/tmp", &l, &err), BD_EINVAL);          /* a directory */
    char long_line[BD_LABELS_MAX_LABEL + 3];
    memset(long_line, 'x', sizeof long_line - 2);
    long_line[sizeof long_line - 2] = '\n';
    long_line[sizeof long_line - 1] = '\0';
    char *path = write_file(long_line);
    assert_int_equal(bd_labels_load(path, &l, &err), BD_EINVAL);
    assert_non_null(strstr(err.msg, "line 1"));
    unlink(path);
    /* a symlink is not followed */
    char *target = write_file("a\n");
    char link[80];
    snprintf(link, sizeof link, "%s-link", target);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(bd_labels_load(link, &l, &err), BD_EIO);
    unlink(link);
    unlink(target);
    /* an empty file: no labels; no trailing newline: the last line counts */
    path = write_file("");
    assert_int_equal(bd_labels_load(path, &l, &err), 0);
    assert_int_equal(bd_labels_count(l), 0);
    assert_null(bd_labels_get(l, 0));
    bd_labels_free(l);
    unlink(path);
    path = write_file("a\nb");
    assert_int_equal(bd_labels_load(path, &l, &err), 0);
    assert_int_equal(bd_labels_count(l), 2);
    assert_string_equal(bd_labels_get(l, 1), "b");
    bd_labels_free(l);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_ties_nan_and_labels),
        cmocka_unit_test(test_batched_rows_and_integers),
        cmocka_unit_test(test_top_k_matches_a_full_sort),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_hostile_label_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
