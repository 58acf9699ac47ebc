#include "import.h"

#include <string.h>

#include "onnx/onnx_import.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int bd_import_file(const char *path, bd_graph **out, bd_error *err)
{
    if (ends_with(path, ".pb") || ends_with(path, ".graphdef") || ends_with(path, ".json"))
        return bd_error_set(err, BD_EUNSUPPORTED,
                            "'%s': TensorFlow models are not supported yet (ONNX only)", path);
    return bd_onnx_import_file(path, out, err);
}

const char *bd_import_platform(const bd_graph *g)
{
    (void)g;
    return "onnx";
}
