/* Triton's classification extension (daemon/infer/infer_classify.c) and label files
 * (daemon/infer/labels.c): ordering, formatting, shapes, limits, hostile label files. The expected
 * strings are written out by hand from Triton's rule (value as "%f" or an integer, ':', the
 * index, ':' and the label when there is one). */
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/infer/infer_classify.h"
#include "daemon/infer/labels.h"

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

static char folder[64];        /* the model's folder the label files are in */

/* FOLDER/NAME := TEXT; returns NAME. */
static const char *write_file(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return name;
}

static const char *in_folder(const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    return path;
}

static void test_float_ties_nan_and_labels(void **state)
{
    (void)state;
    float v[5] = { 0.25f, NAN, 2.0f, 0.25f, -1.0f };
    int64_t shape[1] = { 5 };
    DLTensor t = tensor(v, (DLDataType){ kDLFloat, 32, 1 }, shape, 1);
    const char *name = write_file("labels.txt", "cat\r\ndog\nbird\n");   /* CRLF stripped; 3 of 5 labelled */
    bd_labels *l = NULL;
    bd_error err = {0};
    assert_int_equal(bd_labels_load(folder, name, &l, &err), 0);
    unlink(in_folder(name));
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

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_classify: loading a label file blocked for 5 s\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static void expect_refused(const char *name, const char *says)
{
    bd_labels *l = NULL;
    bd_error err = {0};
    alarm(5);                                   /* a FIFO must not be waited on */
    int rc = bd_labels_load(folder, name, &l, &err);
    alarm(0);
    if (rc != BD_EINVAL || !strstr(err.msg, name) || !strstr(err.msg, says))
        fail_msg("label file '%s': rc %d: %s (wanted '%s')", name, rc, err.msg, says);
    assert_null(l);
}

/* A label file is opened by model_file.h's rule: a regular file inside the model's folder. A
 * FIFO (which once blocked the load until a writer came), a device, a directory and a
 * symlink leading out are refused at once, naming the file; a symlink inside is followed. */
static void test_hostile_label_files(void **state)
{
    (void)state;
    signal(SIGALRM, on_alarm);
    bd_labels *l = NULL;
    bd_error err = {0};
    expect_refused("missing.txt", "cannot open");
    assert_int_equal(mkdir(in_folder("dir.txt"), 0755), 0);
    expect_refused("dir.txt", "is a directory, not a regular file");
    assert_int_equal(mkfifo(in_folder("fifo.txt"), 0600), 0);
    expect_refused("fifo.txt", "is a FIFO (named pipe), not a regular file");
    if (mknod(in_folder("null.txt"), S_IFCHR | 0600, makedev(1, 3)) == 0)    /* root only */
        expect_refused("null.txt", "is a character device, not a regular file");
    assert_int_equal(symlink("/dev/zero", in_folder("zero.txt")), 0);
    expect_refused("zero.txt", "outside the model's directory");
    assert_int_equal(symlink("/etc/hostname", in_folder("out.txt")), 0);
    expect_refused("out.txt", "outside the model's directory");
    expect_refused("../labels.txt", "contains '..'");
    char long_line[BD_LABELS_MAX_LABEL + 3];
    memset(long_line, 'x', sizeof long_line - 2);
    long_line[sizeof long_line - 2] = '\n';
    long_line[sizeof long_line - 1] = '\0';
    expect_refused(write_file("long.txt", long_line), "line 1");
    /* a symlink that stays inside the folder is followed */
    write_file("a.txt", "a\n");
    assert_int_equal(symlink("a.txt", in_folder("link.txt")), 0);
    assert_int_equal(bd_labels_load(folder, "link.txt", &l, &err), 0);
    assert_string_equal(bd_labels_get(l, 0), "a");
    bd_labels_free(l);
    /* an empty file: no labels; no trailing newline: the last line counts */
    assert_int_equal(bd_labels_load(folder, write_file("empty.txt", ""), &l, &err), 0);
    assert_int_equal(bd_labels_count(l), 0);
    assert_null(bd_labels_get(l, 0));
    bd_labels_free(l);
    assert_int_equal(bd_labels_load(folder, write_file("ab.txt", "a\nb"), &l, &err), 0);
    assert_int_equal(bd_labels_count(l), 2);
    assert_string_equal(bd_labels_get(l, 1), "b");
    bd_labels_free(l);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
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
    snprintf(folder, sizeof folder, "/tmp/braid-labels-XXXXXX");
    if (!mkdtemp(folder))
        return 1;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    nftw(folder, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
