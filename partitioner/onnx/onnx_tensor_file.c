/* A standalone serialized TensorProto (the ONNX test suite's test_data_set_N/input_M.pb and
 * output_M.pb) into an owned host tensor, through the importer's own TensorProto decoder. */
#include "partitioner/onnx/onnx_import.h"
#include "partitioner/onnx/onnx_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest file accepted: the test suite's tensors are kilobytes; this only bounds a bad path. */
#define MAX_TENSOR_FILE ((size_t)1 << 31)

static int read_all(const char *path, uint8_t **out, size_t *len, bd_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bd_error_set(err, BD_EIO, "%s: cannot open: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1 << 16;
            uint8_t *q = ncap <= MAX_TENSOR_FILE ? realloc(buf, ncap) : NULL;
            if (!q) {
                rc = bd_error_set(err, cap < MAX_TENSOR_FILE ? BD_ENOMEM : BD_EINVAL,
                                  "%s: %s", path, cap < MAX_TENSOR_FILE ? "out of memory reading it"
                                                                        : "larger than 2 GiB");
                break;
            }
            buf = q;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = bd_error_set(err, BD_EIO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

int bd_onnx_tensor_from_memory(const void *data, size_t len, bd_onnx_tensor *out, bd_error *err)
{
    bd_graph *pool = bd_graph_create("tensor");
    if (!pool)
        return bd_error_set(err, BD_ENOMEM, "out of memory decoding a tensor");
    ox_ctx c = { .g = pool, .base = data, .len = len, .base_dir = NULL };
    ox_span sp = { data, len };
    bd_value v;
    memset(&v, 0, sizeof v);
    int rc = ox_tensor_load(&c, &sp, &v, "tensor", err);
    if (rc == 0) {
        bd_onnx_tensor t = { .dtype = v.dtype, .shape = v.shape, .nbytes = v.nbytes };
        t.name = strdup(v.name ? v.name : "");
        /* 64-byte aligned, never zero-sized, so an empty tensor still has a buffer. */
        t.data = aligned_alloc(64, (v.nbytes + 64) & ~(size_t)63);
        if (!t.name || !t.data) {
            bd_onnx_tensor_free(&t);
            rc = bd_error_set(err, BD_ENOMEM, "out of memory decoding a tensor of %zu bytes",
                              v.nbytes);
        } else {
            if (v.nbytes)
                memcpy(t.data, v.data, v.nbytes);
            *out = t;
        }
    }
    ox_external_free(&c);
    bd_graph_destroy(pool);
    return rc;
}

int bd_onnx_tensor_read_file(const char *path, bd_onnx_tensor *out, bd_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = read_all(path, &buf, &len, err);
    if (rc)
        return rc;
    rc = bd_onnx_tensor_from_memory(buf, len, out, err);
    free(buf);
    return rc ? bd_error_prefix(err, "%s: ", path) : 0;
}

void bd_onnx_tensor_free(bd_onnx_tensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}
