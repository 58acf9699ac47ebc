#include "runtime/import.h"

#include <string.h>

#include "partitioner/onnx/onnx_import.h"
#include "partitioner/tf/tf_import.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int bd_import_file(const char *path, bd_graph **out, bd_error *err)
{
    if (ends_with(path, ".pb") || ends_with(path, ".graphdef"))
        return bd_tf_import_file(path, out, err);
    if (ends_with(path, ".json"))
        return bd_tfjs_import_file(path, out, err);
    return bd_onnx_import_file(path, out, err);
}

const char *bd_import_platform(const bd_graph *g)
{
    return bd_graph_platform(g);
}
