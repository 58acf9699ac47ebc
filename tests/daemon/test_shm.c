/* System shared memory regions (daemon/infer/shm_region.h) and the SIGBUS guard (shm_guard.h):
 * what a client controls is checked (names, keys, ranges, limits), a region outlives its
 * unregistration while a request holds it, and an object truncated under a mapping turns
 * the SIGBUS of the next access into a broken region (on this thread and another), while a
 * SIGBUS outside every region still kills the process as it would without the guard. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/ir/graph.h"
#include "daemon/grpc/rpc_infer_request.h"
#include "daemon/infer/infer_bind.h"
#include "daemon/infer/shm_guard.h"
#include "daemon/infer/shm_region.h"

#define OBJ_BYTES 16384

static char key[64];

/* A fresh shm object of OBJ_BYTES holding 0, 1, 2, ... (mod 251); its fd. */
static int make_object(void)
{
    snprintf(key, sizeof key, "/braid-test-shm-%d", (int)getpid());
    shm_unlink(key);
    int fd = shm_open(key, O_CREAT | O_EXCL | O_RDWR, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, OBJ_BYTES), 0);
    uint8_t buf[OBJ_BYTES];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i % 251);
    assert_int_equal(pwrite(fd, buf, sizeof buf, 0), (ssize_t)sizeof buf);
    return fd;
}

static void expect(int rc, int code, const bd_error *err, const char *words)
{
    if (rc != code || !strstr(err->msg, words))
        fail_msg("got %d '%s', expected %d with '%s'", rc, err->msg, code, words);
}

static void test_disabled_says_how_to_enable(void **state)
{
    (void)state;
    bd_error err = {0};
    bd_shm_region *r;
    expect(bd_shm_register("r", "/x", 0, 8, &err), BD_EUNSUPPORTED, &err, "--allow-shared-memory");
    expect(bd_shm_acquire("r", &r, &err), BD_EUNSUPPORTED, &err, "--allow-shared-memory");
}

static void test_register_checks_names_keys_and_ranges(void **state)
{
    (void)state;
    int fd = make_object();
    bd_error err = {0};
    assert_int_equal(bd_shm_enable(2, OBJ_BYTES + 500, &err), 0);
    const struct { const char *name, *key; uint64_t off, size; int code; const char *words; } bad[] = {
        { "a", "/..", 0, 8, BD_EINVAL, "shm_open name" },
        { "a", "/.", 0, 8, BD_EINVAL, "shm_open name" },
        { "a", "//x", 0, 8, BD_EINVAL, "shm_open name" },
        { "a", "x", 0, 8, BD_EINVAL, "shm_open name" },
        { "a", "/a b", 0, 8, BD_EINVAL, "shm_open name" },
        { "a/b", key, 0, 8, BD_EINVAL, "without '/'" },
        { "", key, 0, 8, BD_EINVAL, "1 to 127" },
        { "a", key, 0, 0, BD_EINVAL, "not a valid range" },
        { "a", key, UINT64_MAX, 2, BD_EINVAL, "not a valid range" },
        { "a", key, OBJ_BYTES - 4, 8, BD_EINVAL, "past the end" },
        { "a", key, 0, OBJ_BYTES + 1, BD_EINVAL, "past the end" },
        { "a", "/braid-no-such-object", 0, 8, BD_ENOTFOUND, "cannot open" },
        { "a", key, 0, 2 * OBJ_BYTES, BD_EBUSY, "shared_memory_max_bytes" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect(bd_shm_register(bad[i].name, bad[i].key, bad[i].off, bad[i].size, &err), bad[i].code,
               &err, bad[i].words);

    assert_int_equal(bd_shm_register("r1", key, 100, 1000, &err), 0);
    expect(bd_shm_register("r1", key, 0, 8, &err), BD_EEXIST, &err, "already registered");
    expect(bd_shm_register("r2", key, 0, OBJ_BYTES, &err), BD_EBUSY, &err, "shared_memory_max_bytes");
    assert_int_equal(bd_shm_register("r2", key, 0, 8, &err), 0);
    expect(bd_shm_register("r3", key, 0, 8, &err), BD_EBUSY, &err, "shared_memory_max_regions");

    bd_shm_region *r;
    void *p;
    assert_int_equal(bd_shm_acquire("r1", &r, &err), 0);
    expect(bd_shm_span(r, 1, 1000, "input 'x'", &p, &err), BD_EINVAL, &err, "past the end");
    expect(bd_shm_span(r, UINT64_MAX, 2, "input 'x'", &p, &err), BD_EINVAL, &err, "past the end");
    assert_int_equal(bd_shm_span(r, 10, 990, "input 'x'", &p, &err), 0);
    assert_int_equal(((uint8_t *)p)[0], 110 % 251);          /* object offset 100 + 10 */
    /* unregistered while in use: the mapping stays until the last reference goes */
    assert_int_equal(bd_shm_unregister("r1", &err), 0);
    expect(bd_shm_unregister("r1", &err), BD_ENOTFOUND, &err, "no shared memory region");
    bd_shm_region *again;
    expect(bd_shm_acquire("r1", &again, &err), BD_ENOTFOUND, &err, "no shared memory region 'r1'");
    assert_int_equal(((uint8_t *)p)[989], (100 + 10 + 989) % 251);
    bd_shm_release(r);

    bd_shm_info *info;
    size_t n;
    assert_int_equal(bd_shm_status("", &info, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(info[0].name, "r2");
    assert_string_equal(info[0].key, key);
    free(info);
    assert_int_equal(bd_shm_unregister("", &err), 0);
    assert_int_equal(bd_shm_status("", &info, &n, &err), 0);
    assert_int_equal(n, 0);
    free(info);
    close(fd);
    shm_unlink(key);
}

static void *read_all(void *p)
{
    volatile uint8_t *b = p;
    uintptr_t sum = 0;
    for (size_t i = 0; i < 2 * 4096; i++)
        sum += b[i];
    return (void *)sum;
}

static void test_truncated_object_breaks_the_region(void **state)
{
    (void)state;
    int fd = make_object();
    bd_error err = {0};
    assert_int_equal(bd_shm_enable(2, 1 << 20, &err), 0);
    assert_int_equal(bd_shm_guard_install(&err), 0);   /* over cmocka's own per-test handler */
    for (int on_thread = 0; on_thread < 2; on_thread++) {
        assert_int_equal(ftruncate(fd, OBJ_BYTES), 0);
        assert_int_equal(bd_shm_register("t", key, 0, OBJ_BYTES, &err), 0);
        bd_shm_region *r;
        void *p;
        assert_int_equal(bd_shm_acquire("t", &r, &err), 0);
        assert_int_equal(bd_shm_span(r, 0, OBJ_BYTES, "input 'x'", &p, &err), 0);
        assert_int_equal(bd_shm_check(r, &err), 0);
        assert_int_equal(ftruncate(fd, 0), 0);        /* the client shrinks its object */
        void *sum;
        if (on_thread) {
            pthread_t t;
            assert_int_equal(pthread_create(&t, NULL, read_all, p), 0);
            pthread_join(t, &sum);
        } else {
            sum = read_all(p);                         /* SIGBUS, repaired with zero pages */
        }
        assert_null(sum);
        expect(bd_shm_check(r, &err), BD_EINVAL, &err, "shrank during the request");
        memset(p, 1, OBJ_BYTES);                       /* writes land in the zero pages too */
        bd_shm_region *again;
        expect(bd_shm_acquire("t", &again, &err), BD_EINVAL, &err, "unregister and register it again");
        assert_int_equal(bd_shm_unregister("t", &err), 0);
        bd_shm_release(r);
    }
    close(fd);
    shm_unlink(key);
}

static void test_other_sigbus_keeps_its_default_action(void **state)
{
    (void)state;
    bd_error err = {0};
    assert_int_equal(bd_shm_enable(2, 1 << 20, &err), 0);
    char path[] = "/tmp/braid-test-sigbus-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(ftruncate(fd, 4096), 0);
    volatile uint8_t *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(ftruncate(fd, 0), 0);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL);                       /* not cmocka's: what braidd has */
        if (bd_shm_guard_install(&err) != 0)
            _exit(3);
        (void)m[0];                                    /* no region: the default action */
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    /* killed by SIGBUS, or by a sanitizer's handler reporting it (abort_on_error) */
    assert_true(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0));
    if (WIFSIGNALED(status))
        assert_true(WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT);
    munmap((void *)m, 4096);
    close(fd);
}

/* x FP32 [-1,4] -> y FP32 [-1,4] */
static bd_graph *signature(void)
{
    bd_error err = {0};
    bd_graph *g = bd_graph_create("sig");
    int64_t dims[2] = { -1, 4 };
    bd_shape sh = bd_shape_make(2, dims);
    bd_value *x, *y;
    assert_non_null(g);
    assert_int_equal(bd_graph_add_value(g, "x", BD_DT_FLOAT, &sh, &x, &err), 0);
    assert_int_equal(bd_graph_mark_input(g, x, &err), 0);
    assert_int_equal(bd_graph_add_value(g, "y", BD_DT_FLOAT, &sh, &y, &err), 0);
    assert_int_equal(bd_graph_mark_output(g, y, &err), 0);
    return g;
}

#define SHM_ENTRY(e, k, which, field, v) \
    ((e).key = (char *)(k), (e).has_value = true, \
     (e).value.which_parameter_choice = inference_InferParameter_##which##_tag, \
     (e).value.parameter_choice.field = (v))

/* The binding's input points into the mapping (zero-copy), unless misaligned (one copy);
 * an output is copied into its region and leaves no bytes in the response. */
static void test_bind_copies_inputs_out_of_the_region(void **state)
{
    (void)state;
    int fd = make_object();
    bd_error err = {0};
    assert_int_equal(bd_shm_enable(2, 1 << 20, &err), 0);
    assert_int_equal(bd_shm_register("b", key, 0, OBJ_BYTES, &err), 0);
    bd_shm_region *r;
    void *base;
    assert_int_equal(bd_shm_acquire("b", &r, &err), 0);
    assert_int_equal(bd_shm_span(r, 0, OBJ_BYTES, "test", &base, &err), 0);
    bd_graph *g = signature();

    for (int64_t in_off = 64; in_off <= 66; in_off += 2) {
        int64_t shape[2] = { 2, 4 };
        inference_ModelInferRequest_InferInputTensor_ParametersEntry ip[3] = {0};
        SHM_ENTRY(ip[0], "shared_memory_region", string_param, string_param, "b");
        SHM_ENTRY(ip[1], "shared_memory_byte_size", int64_param, int64_param, 32);
        SHM_ENTRY(ip[2], "shared_memory_offset", uint64_param, uint64_param, (uint64_t)in_off);
        inference_ModelInferRequest_InferInputTensor in = {
            .name = "x", .datatype = "FP32", .shape = shape, .shape_count = 2,
            .parameters = ip, .parameters_count = 3 };
        inference_ModelInferRequest_InferRequestedOutputTensor_ParametersEntry op[3] = {0};
        SHM_ENTRY(op[0], "shared_memory_region", string_param, string_param, "b");
        SHM_ENTRY(op[1], "shared_memory_byte_size", int64_param, int64_param, 32);
        SHM_ENTRY(op[2], "shared_memory_offset", int64_param, int64_param, 1024);
        inference_ModelInferRequest_InferRequestedOutputTensor out = {
            .name = "y", .parameters = op, .parameters_count = 3 };
        inference_ModelInferRequest req = { .model_name = "m", .inputs = &in, .inputs_count = 1,
                                            .outputs = &out, .outputs_count = 1 };
        bd_infer_request nreq = {0};           /* as the gRPC port reads it */
        assert_int_equal(bd_rpc_infer_request(&nreq, &req, &err), 0);
        bd_infer_binding b = {0};
        int rc = bd_infer_bind(&b, &nreq, g, &err);
        if (rc)
            fail_msg("%s", err.msg);
        /* a copy, aligned or not: no kernel reads the client's region (docs/security.md) */
        assert_ptr_not_equal(b.inputs[0].data, (uint8_t *)base + in_off);
        assert_int_equal((uintptr_t)b.inputs[0].data % 64, 0);
        assert_memory_equal(b.inputs[0].data, (uint8_t *)base + in_off, 32);
        /* ... taken when bound: the client rewriting its region later changes nothing */
        float before[8];
        memcpy(before, b.inputs[0].data, sizeof before);
        memset((uint8_t *)base + in_off, 0x7f, 32);
        assert_memory_equal(b.inputs[0].data, before, sizeof before);
        uint64_t planned = 1;
        assert_true(bd_infer_response_bytes(&b, g, &planned));
        assert_int_equal(planned, 0);                  /* the output travels in the region */

        /* before the run: the output's destination is the region's span */
        bd_exec_dest dest[1];
        bd_infer_shm_dest(&b, dest, 1);
        assert_ptr_equal(dest[0].data, (uint8_t *)base + 1024);
        assert_int_equal(dest[0].bytes, 32);

        /* after it: an output the run left elsewhere is copied in */
        float y[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        bd_wire_span spans[1] = { { (const uint8_t *)y, sizeof y } };
        uint64_t in_place = 0, copied = 0;
        assert_int_equal(bd_infer_shm_outputs(&b, g, spans, &in_place, &copied, &err), 0);
        assert_int_equal(spans[0].size, 0);
        assert_memory_equal((uint8_t *)base + 1024, y, sizeof y);
        assert_int_equal(in_place, 0);
        assert_int_equal(copied, sizeof y);
        /* one the run wrote there itself is counted, not copied */
        spans[0] = (bd_wire_span){ (const uint8_t *)base + 1024, sizeof y };
        assert_int_equal(bd_infer_shm_outputs(&b, g, spans, &in_place, &copied, &err), 0);
        assert_int_equal(in_place, sizeof y);
        assert_int_equal(copied, sizeof y);
        float big[9] = {0};
        spans[0] = (bd_wire_span){ (const uint8_t *)big, sizeof big };
        expect(bd_infer_shm_outputs(&b, g, spans, &in_place, &copied, &err), BD_EINVAL, &err,
               "needs 36 bytes");
        bd_infer_binding_release(&b);

        /* the copies are bounded (max_run_memory_bytes): 32 bytes over a limit of 16 */
        bd_infer_binding small = { .shm_copy_limit = 16 };
        expect(bd_infer_bind(&small, &nreq, g, &err), BD_EINVAL, &err, "max_run_memory_bytes");
        bd_infer_binding_release(&small);
        bd_infer_request_free(&nreq);
    }
    bd_graph_destroy(g);
    bd_shm_release(r);
    close(fd);
    shm_unlink(key);
}

static int teardown(void **state)
{
    (void)state;
    bd_shm_disable();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disabled_says_how_to_enable),
        cmocka_unit_test_teardown(test_register_checks_names_keys_and_ranges, teardown),
        cmocka_unit_test_teardown(test_truncated_object_breaks_the_region, teardown),
        cmocka_unit_test_teardown(test_other_sigbus_keeps_its_default_action, teardown),
        cmocka_unit_test_teardown(test_bind_copies_inputs_out_of_the_region, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
