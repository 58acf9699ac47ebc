/* Fuzz the SavedModel importer without TensorFlow. An input is a saved_model.pb, written to
 * a private directory made once in LLVMFuzzerInitialize (removed at exit); the importer reads
 * it as braid does (meta graph, signature, function inlining, pruning, freezing, translation)
 * with a stand-in for TensorFlow that gives every variable the value 0 (a scalar of its
 * type), then shape inference runs on a graph that imports. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "partitioner/tf/tf_import.h"
#include "partitioner/shape/shape_infer.h"
#include "tests/fuzz/fuzz_tf_fallback.h"

static char dir[64], pb_path[96];

static void cleanup(void)
{
    unlink(pb_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%.40s/braid-fuzz-sm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_savedmodel: mkdtemp");
        exit(1);
    }
    snprintf(pb_path, sizeof pb_path, "%s/saved_model.pb", dir);
    atexit(cleanup);
    return 0;
}

/* TensorFlow's part, faked: each variable reads as a zero scalar. */
static int zero_variables(void *ctx, bd_saved_variable *vars, size_t n, bd_error *err)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++) {
        size_t es = bd_dtype_size(vars[i].dtype);
        vars[i].shape.rank = 0;
        vars[i].nbytes = es;
        vars[i].data = calloc(1, es ? es : 1);
        if (!vars[i].data) {
            for (size_t k = 0; k < i; k++) {
                free(vars[k].data);
                vars[k].data = NULL;
            }
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(pb_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
        abort();   /* the harness's own directory: a failure here is the harness's bug */
    bd_graph *g = NULL;
    bd_error err = { 0 };
    if (bd_tf_savedmodel_import(dir, NULL, zero_variables, NULL, &g, &err) == 0) {
        if (bd_shape_infer(g, false, &err) == 0)
            fuzz_tf_fallback(g);
        bd_graph_destroy(g);
    }
    return 0;
}
