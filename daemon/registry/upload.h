/* A model's uploaded files: bd_upload (what bd_registry_load takes), and, internal to
 * registry/, writing them into the repository (upload.c): a step of the load
 * (registry_load.c), checked first on the loop thread (registry.c). */
#ifndef BD_DAEMON_REGISTRY_UPLOAD_H
#define BD_DAEMON_REGISTRY_UPLOAD_H

#include <stddef.h>

#include "core/error.h"

/* A model file uploaded with RepositoryModelLoad: PATH relative to the model's directory
 * ("1/model.onnx"); DATA must stay valid until the load's callback has run. */
typedef struct bd_upload {
    const char *path;
    const void *data;
    size_t      len;
} bd_upload;

/* Upload paths relative to a model directory: no absolute path, no "." / ".." / empty
 * segment. The syntactic half of confinement (the walk rejects symlinks). */
int  upload_check_path(const char *path, bd_error *err);
/* Write LEN bytes of DATA to <REPO>/<NAME>/<PATH>, creating the model directory and any
 * intermediate directories, refusing a symlink anywhere below REPO, through a temporary
 * file renamed into place. Blocking I/O: never on the loop thread. */
int  upload_write(const char *repo, const char *name, const char *path, const void *data,
                  size_t len, bd_error *err);

#endif
