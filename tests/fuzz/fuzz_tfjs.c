/* Fuzz the TF.js importer. An input is split into a model.json and one weight shard: the
 * first 4 bytes (little-endian) give the JSON's length (taken modulo what is left), the
 * JSON follows, the rest is the shard "w.bin". Both are written to a private directory
 * made once in LLVMFuzzerInitialize (removed at exit), then bd_tfjs_import_file reads them
 * as the daemon does, and shape inference runs on a graph that imports. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "partitioner/tf/tf_import.h"
#include "partitioner/shape/shape_infer.h"
#include "tests/fuzz/fuzz_tf_fallback.h"

static char dir[64], json_path[96], shard_path[96];

static void cleanup(void)
{
    unlink(json_path);
    unlink(shard_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%.40s/braid-fuzz-tfjs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_tfjs: mkdtemp");
        exit(1);
    }
    snprintf(json_path, sizeof json_path, "%s/model.json", dir);
    snprintf(shard_path, sizeof shard_path, "%s/w.bin", dir);
    atexit(cleanup);
    return 0;
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = n ? fwrite(p, 1, n, f) : 0;
    return fclose(f) == 0 && k == n ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint32_t jl;
    memcpy(&jl, data, 4);
    size_t rest = size - 4, n_json = rest ? jl % (rest + 1) : 0;
    if (write_file(json_path, data + 4, n_json) || write_file(shard_path, data + 4 + n_json, rest - n_json))
        abort();   /* the harness's own directory: a failure here is the harness's bug */
    bd_graph *g = NULL;
    bd_error err = { 0 };
    if (bd_tfjs_import_file(json_path, &g, &err) == 0) {
        if (bd_shape_infer(g, false, &err) == 0)
            fuzz_tf_fallback(g);
        bd_graph_destroy(g);
    }
    return 0;
}
