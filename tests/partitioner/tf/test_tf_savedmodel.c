/* The SavedModel importer without TensorFlow: real SavedModels (TensorFlow-made, the fuzz
 * seeds in tests/fuzz/corpus/savedmodel) through bd_tf_savedmodel_import with a stand-in for
 * the TensorFlow engine's variable reads. Checks what braid asks TensorFlow for (the
 * variables, their types and the restored copies), the names clients see (the signature's
 * keys), what a failing reader and a missing signature give, and that nothing leaks (the
 * sanitizer build runs this suite). */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "partitioner/tf/tf_import.h"

static const char *corpus;    /* tests/fuzz/corpus/savedmodel */
static char dir[64];

/* DIR/saved_model.pb := CORPUS/NAME.pb */
static void stage(const char *name)
{
    char src[1024], dst[128];
    snprintf(src, sizeof src, "%s/%s.pb", corpus, name);
    snprintf(dst, sizeof dst, "%s/saved_model.pb", dir);
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

typedef struct reads {
    int    calls;
    size_t n;
    char   names[16][128];
    char   restored[16][128];
    int    dtypes[16];
    int    fail;               /* answer with this error instead */
} reads;

/* Every variable reads as a float32 [1] of value 0.5 (the types are checked by the test). */
static int fake_read(void *ctx, bd_saved_variable *vars, size_t n, bd_error *err)
{
    reads *r = ctx;
    r->calls++;
    r->n = n;
    for (size_t i = 0; i < n && i < 16; i++) {
        snprintf(r->names[i], sizeof r->names[i], "%s", vars[i].node);
        snprintf(r->restored[i], sizeof r->restored[i], "%s", vars[i].restored ? vars[i].restored : "");
        r->dtypes[i] = vars[i].dtype;
    }
    if (r->fail)
        return bd_error_set(err, r->fail, "fake TensorFlow refuses");
    for (size_t i = 0; i < n; i++) {
        size_t es = bd_dtype_size(vars[i].dtype);
        vars[i].shape.rank = 1;
        vars[i].shape.dims[0] = 1;
        vars[i].nbytes = es;
        vars[i].data = calloc(1, es);
        if (vars[i].dtype == BD_DT_FLOAT)
            *(float *)vars[i].data = 0.5f;
    }
    return 0;
}

static bool has_name(const reads *r, const char *name)
{
    for (size_t i = 0; i < r->n && i < 16; i++)
        if (strcmp(r->names[i], name) == 0)
            return true;
    return false;
}

static void test_two_io_is_named_by_its_signature_keys(void **state)
{
    (void)state;
    stage("two_io");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), 0);
    assert_string_equal(bd_graph_platform(g), "tensorflow_savedmodel");
    assert_string_equal(bd_graph_framework(g), "tensorflow");
    assert_int_equal(bd_graph_num_inputs(g), 2);
    assert_string_equal(bd_graph_input(g, 0)->name, "a");
    assert_string_equal(bd_graph_input(g, 1)->name, "b");
    assert_int_equal(bd_graph_num_outputs(g), 2);
    assert_string_equal(bd_graph_output(g, 0)->name, "hidden");
    assert_string_equal(bd_graph_output(g, 1)->name, "total");
    /* one read of the three variables the serving function uses (w, b, v), all float */
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.n, 3);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.dtypes[i], BD_DT_FLOAT);
        assert_string_equal(r.restored[i], "");       /* tf.Module variables: restored as is */
    }
    /* functions inlined: no call, no variable op is left */
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++) {
        const char *op = bd_graph_node(g, i)->op_type;
        assert_string_not_equal(op, "StatefulPartitionedCall");
        assert_string_not_equal(op, "ReadVariableOp");
        assert_string_not_equal(op, "VarHandleOp");
    }
    bd_graph_destroy(g);
}

static void test_other_signature_and_unknown_signature(void **state)
{
    (void)state;
    stage("nondefault");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, "scores", fake_read, &r, &g, &err), 0);
    assert_int_equal(bd_graph_num_inputs(g), 1);
    assert_string_equal(bd_graph_input(g, 0)->name, "features");
    assert_string_equal(bd_graph_output(g, 0)->name, "best");
    assert_string_equal(bd_graph_output(g, 1)->name, "probabilities");
    bd_graph_destroy(g);
    g = NULL;
    assert_int_equal(bd_tf_savedmodel_import(dir, "nope", fake_read, &r, &g, &err), BD_ENOTFOUND);
    assert_null(g);
    assert_non_null(strstr(err.msg, "no signature 'nope'"));
    assert_non_null(strstr(err.msg, "'scores'"));
    assert_non_null(strstr(err.msg, "'serving_default'"));
}

static void test_tf1_variables_and_resource_gather(void **state)
{
    (void)state;
    stage("tf1");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), 0);
    assert_int_equal(r.n, 2);                     /* VariableV2 w and b */
    assert_true(has_name(&r, "w") && has_name(&r, "b"));
    assert_string_equal(bd_graph_input(g, 0)->name, "x");
    assert_string_equal(bd_graph_output(g, 0)->name, "y");
    bd_graph_destroy(g);

    stage("embed");
    memset(&r, 0, sizeof r);
    g = NULL;
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), 0);
    assert_int_equal(r.n, 2);                     /* the table (ResourceGather) and w */
    bool gather = false;
    for (size_t i = 0; i < bd_graph_num_nodes(g); i++)
        gather |= strstr(bd_graph_node(g, i)->op_type, "Gather") != NULL;
    assert_true(gather);
    bd_graph_destroy(g);
}

static void test_reader_failure_and_no_reader(void **state)
{
    (void)state;
    stage("two_io");
    reads r = { .fail = BD_EINVAL };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err), BD_EINVAL);
    assert_null(g);
    assert_non_null(strstr(err.msg, "fake TensorFlow refuses"));
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, NULL, NULL, &g, &err), BD_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "3 variables"));
}

/* TensorFlow's loader, played by a reader that opens by name, blocking, every file under
 * the SavedModel directory (as RestoreV2 opens variables/, an init op assets/) and reads a
 * little of each. A FIFO it reaches blocks it forever: braid must refuse it first. */
static void open_everything(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            open_everything(sub);
        }
        if (d)
            closedir(d);
        return;
    }
    int fd = open(path, O_RDONLY);
    char buf[256];
    if (fd >= 0) {
        (void)!read(fd, buf, sizeof buf);
        close(fd);
    }
}

static int tf_like_read(void *ctx, bd_saved_variable *vars, size_t n, bd_error *err)
{
    open_everything(dir);
    return fake_read(ctx, vars, n, err);
}

/* Import DIR with the blocking reader, killed by SIGALRM if anything blocks for 5 s. */
static int import_within_5s(reads *r, bd_graph **g, bd_error *err)
{
    alarm(5);
    int rc = bd_tf_savedmodel_import(dir, NULL, tf_like_read, r, g, err);
    alarm(0);
    return rc;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    return ftw->level > 0 ? remove(path) : 0;
}

/* Empty DIR (the saved_model.pb staged next goes back in). */
static void clear_dir(void)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_at(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void mkdir_at(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

typedef enum { FIFO, DEVICE, LINK_OUT, DEVICE_LINK, DIRECTORY } plant;

/* REL becomes what PLANT says. False when this machine cannot make it (mknod needs root). */
static bool make_at(const char *rel, plant what)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    remove(path);
    switch (what) {
    case FIFO:        assert_int_equal(mkfifo(path, 0600), 0); return true;
    case DEVICE:      return mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0;     /* /dev/null */
    case LINK_OUT:    assert_int_equal(symlink("/etc/hostname", path), 0); return true;
    case DEVICE_LINK: assert_int_equal(symlink("/dev/zero", path), 0); return true;
    case DIRECTORY:   assert_int_equal(mkdir(path, 0755), 0); return true;
    }
    return false;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_tf_savedmodel: the import blocked for 5 s on a planted file\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

/* Every file TensorFlow's loader would open (variables/ index and shards, fingerprint.pb,
 * assets/, assets.extra/) is checked before it is handed the directory: a FIFO, a device, a
 * symlink out of the directory or a directory in a file's place fails the import at once,
 * naming the file, and TensorFlow (the reader) is never called. */
static void test_hostile_files_are_refused_before_tensorflow(void **state)
{
    (void)state;
    static const char *const files[] = {
        "variables/variables.index", "variables/variables.data-00000-of-00001", "fingerprint.pb",
        "assets/vocab.txt", "assets.extra/tf_serving_warmup_requests",
    };
    static const struct { plant what; const char *says; } plants[] = {
        { FIFO,        "is a FIFO (named pipe), not a regular file" },
        { DEVICE,      "is a character device, not a regular file" },
        { LINK_OUT,    "outside the model's directory" },
        { DEVICE_LINK, "outside the model's directory" },
        { DIRECTORY,   "is a directory, not a regular file" },
    };
    signal(SIGALRM, on_alarm);
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++)
        for (size_t p = 0; p < sizeof plants / sizeof plants[0]; p++) {
            clear_dir();
            stage("two_io");
            mkdir_at("variables");
            mkdir_at("assets");
            mkdir_at("assets.extra");
            write_at("variables/variables.index", "index");
            write_at("variables/variables.data-00000-of-00001", "data");
            write_at("fingerprint.pb", "");
            write_at("assets/vocab.txt", "a\nb\n");
            write_at("assets.extra/tf_serving_warmup_requests", "");
            /* assets/ may hold directories; one an AssetFileDef names is the next test's */
            bool in_assets = strncmp(files[f], "assets", 6) == 0;
            if ((plants[p].what == DIRECTORY && in_assets) || !make_at(files[f], plants[p].what))
                continue;
            reads r = { 0 };
            bd_graph *g = NULL;
            bd_error err = { 0 };
            int rc = import_within_5s(&r, &g, &err);
            if (rc == 0 || r.calls != 0 || !strstr(err.msg, files[f]) ||
                !strstr(err.msg, plants[p].says))
                fail_msg("%s planted as #%zu: rc %d, reader called %d time(s): %s", files[f], p,
                         rc, r.calls, err.msg);
            assert_null(g);
        }
    /* the same directory with every file regular imports */
    clear_dir();
    stage("two_io");
    mkdir_at("variables");
    mkdir_at("assets");
    write_at("variables/variables.index", "index");
    write_at("assets/vocab.txt", "a\n");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, tf_like_read, &r, &g, &err), 0);
    assert_int_equal(r.calls, 1);
    bd_graph_destroy(g);
    /* a link that stays inside the directory is followed */
    char path[512];
    snprintf(path, sizeof path, "%s/assets/link.txt", dir);
    assert_int_equal(symlink("vocab.txt", path), 0);
    assert_int_equal(bd_tf_savedmodel_import(dir, NULL, tf_like_read, &r, &g, &err), 0);
    bd_graph_destroy(g);
    clear_dir();
}

/* DIR/saved_model.pb := two_io's with an AssetFileDef naming FILENAME added to its MetaGraphDef
 * (field 6 appended to the one MetaGraphDef: protobuf merges appended fields). */
static void stage_with_asset(const char *filename)
{
    char src[1024], dst[128];
    snprintf(src, sizeof src, "%s/two_io.pb", corpus);
    snprintf(dst, sizeof dst, "%s/saved_model.pb", dir);
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    static unsigned char data[1 << 16], out[(1 << 16) + 512];
    size_t len = fread(data, 1, sizeof data, in), o = 0;
    fclose(in);
    size_t fl = strlen(filename);
    assert_true(fl < 100);
    unsigned char extra[128];
    size_t el = 0;
    extra[el++] = 0x32;                                 /* asset_file_def (6, bytes) */
    extra[el++] = (unsigned char)(fl + 2);
    extra[el++] = 0x12;                                 /* filename (2, string) */
    extra[el++] = (unsigned char)fl;
    memcpy(extra + el, filename, fl);
    el += fl;
    for (size_t i = 0; i < len;) {                      /* SavedModel: field 1 varint, 2 bytes */
        unsigned char key = data[i++];
        uint64_t v = 0;
        for (int sh = 0; i < len; sh += 7) {
            v |= (uint64_t)(data[i] & 0x7f) << sh;
            if (!(data[i++] & 0x80))
                break;
        }
        if (key == 0x08) {
            out[o++] = 0x08;
            out[o++] = (unsigned char)v;                /* schema version 1 */
            continue;
        }
        assert_int_equal(key, 0x12);
        uint64_t n = v + el;
        out[o++] = 0x12;
        for (; n >= 0x80; n >>= 7)
            out[o++] = (unsigned char)(n | 0x80);
        out[o++] = (unsigned char)n;
        memcpy(out + o, data + i, v);
        o += v;
        memcpy(out + o, extra, el);
        o += el;
        i += v;
    }
    FILE *f = fopen(dst, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(out, 1, o, f), o);
    assert_int_equal(fclose(f), 0);
}

/* The files a MetaGraphDef's AssetFileDefs name, which TensorFlow hands the init op as
 * DIR/assets/<filename>: each must be a regular file inside DIR. */
static void test_asset_file_names_are_checked(void **state)
{
    (void)state;
    static const struct { const char *name; const char *says; } cases[] = {
        { "../../../../../etc/hostname", "contains '..'" },
        { "sub",                         "'assets/sub' is a directory, not a regular file" },
        { "pipe",                        "'assets/pipe' is a FIFO" },
        { "missing.txt",                 "assets/missing.txt" },
    };
    signal(SIGALRM, on_alarm);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_dir();
        stage_with_asset(cases[i].name);
        mkdir_at("assets");
        mkdir_at("assets/sub");
        if (strcmp(cases[i].name, "pipe") == 0)
            make_at("assets/pipe", FIFO);
        reads r = { 0 };
        bd_graph *g = NULL;
        bd_error err = { 0 };
        int rc = import_within_5s(&r, &g, &err);
        if (rc == 0 || r.calls != 0 || !strstr(err.msg, cases[i].says))
            fail_msg("asset '%s': rc %d, reader called %d time(s): %s", cases[i].name, rc, r.calls,
                     err.msg);
    }
    clear_dir();                                        /* a regular asset file imports */
    stage_with_asset("vocab.txt");
    mkdir_at("assets");
    write_at("assets/vocab.txt", "a\n");
    reads r = { 0 };
    bd_graph *g = NULL;
    bd_error err = { 0 };
    if (bd_tf_savedmodel_import(dir, NULL, tf_like_read, &r, &g, &err) != 0)
        fail_msg("%s", err.msg);
    bd_graph_destroy(g);
    clear_dir();
}

static void test_truncations_fail_cleanly(void **state)
{
    (void)state;
    char src[1024], dst[128];
    snprintf(src, sizeof src, "%s/two_io.pb", corpus);
    snprintf(dst, sizeof dst, "%s/saved_model.pb", dir);
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    static unsigned char data[1 << 16];
    size_t len = fread(data, 1, sizeof data, in);
    fclose(in);
    assert_true(len > 1000 && len < sizeof data);
    for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
        FILE *out = fopen(dst, "wb");
        assert_non_null(out);
        assert_int_equal(fwrite(data, 1, cut, out), cut);
        fclose(out);
        reads r = { 0 };
        bd_graph *g = NULL;
        bd_error err = { 0 };
        int rc = bd_tf_savedmodel_import(dir, NULL, fake_read, &r, &g, &err);
        assert_int_not_equal(rc, 0);
        assert_null(g);
        assert_true(err.msg[0] != '\0');
    }
}

int main(int argc, char **argv)
{
    const char *root = getenv("BRAID_SOURCE_ROOT");
    static char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/savedmodel", argc > 1 ? argv[1] : root ? root : ".");
    corpus = path;
    snprintf(dir, sizeof dir, "/tmp/braid-test-sm-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_io_is_named_by_its_signature_keys),
        cmocka_unit_test(test_other_signature_and_unknown_signature),
        cmocka_unit_test(test_tf1_variables_and_resource_gather),
        cmocka_unit_test(test_reader_failure_and_no_reader),
        cmocka_unit_test(test_truncations_fail_cleanly),
        cmocka_unit_test(test_hostile_files_are_refused_before_tensorflow),
        cmocka_unit_test(test_asset_file_names_are_checked),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    clear_dir();
    rmdir(dir);
    return rc;
}
