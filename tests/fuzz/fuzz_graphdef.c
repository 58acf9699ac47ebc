/* Fuzz the frozen GraphDef importer: bytes -> bd_tf_import_memory (decode, views, translation
 * to the IR, validation), then shape inference as the daemon runs it at load. */
#include <stddef.h>
#include <stdint.h>

#include "partitioner/tf/tf_import.h"
#include "partitioner/shape/shape_infer.h"
#include "tests/fuzz/fuzz_tf_fallback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bd_graph *g = NULL;
    bd_error err = { 0 };
    if (bd_tf_import_memory(data, size, &g, &err) != 0)
        return 0;
    if (bd_shape_infer(g, false, &err) == 0)
        fuzz_tf_fallback(g);
    bd_graph_destroy(g);
    return 0;
}
