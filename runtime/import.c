#include "runtime/import.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/backend.h"
#include "core/model_file.h"
#include "partitioner/onnx/onnx_import.h"
#include "partitioner/tf/tf_import.h"
#include "runtime/engines.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A SavedModel's variables, read by the engine that reads its framework's saved models (the
 * TensorFlow engine): the partitioner may not call engines, the runtime may. */
static int read_variables(void *dir, bd_saved_variable *vars, size_t n, bd_error *err)
{
    size_t nb;
    const bd_backend *const *b = bd_backends(&nb);
    for (size_t i = 0; i < nb; i++)
        if (b[i]->read_variables)
            return b[i]->read_variables(dir, "serve", vars, n, err);
    return bd_error_set(err, BD_EUNSUPPORTED, "no engine of this build reads SavedModel variables "
                        "(braid was built without the TensorFlow engine)");
}

/* A SavedModel that braid or TensorFlow refuses at load is bad input (issue 11): BD_EINVAL,
 * which braidd answers INVALID_ARGUMENT, as the TensorFlow engine does for a GraphDef
 * TensorFlow rejects. */
static int import_savedmodel(const char *dir, const char *signature, bd_graph **out, bd_error *err)
{
    int rc = bd_tf_savedmodel_import(dir, signature, read_variables, (void *)dir, out, err);
    if (rc == BD_EMODEL)
        rc = err->code = BD_EINVAL;
    return rc;
}

int bd_import_model(const char *path, const char *signature, bd_graph **out, bd_error *err)
{
    if (is_dir(path))
        return import_savedmodel(path, signature, out, err);
    if (ends_with(path, "/saved_model.pb") || strcmp(path, "saved_model.pb") == 0) {
        char *dir = bd_model_file_dir(path);
        if (!dir)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        int rc = import_savedmodel(dir, signature, out, err);
        free(dir);
        return rc;
    }
    if (ends_with(path, ".pb") || ends_with(path, ".graphdef"))
        return bd_tf_import_file(path, out, err);
    if (ends_with(path, ".json"))
        return bd_tfjs_import_file(path, out, err);
    return bd_onnx_import_file(path, out, err);
}

int bd_import_file(const char *path, bd_graph **out, bd_error *err)
{
    return bd_import_model(path, NULL, out, err);
}

const char *bd_import_platform(const bd_graph *g)
{
    return bd_graph_platform(g);
}
