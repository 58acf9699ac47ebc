/* Reading model files into private memory, and the limits on what a model file may make
 * an importer allocate (docs/security.md, "Model files").
 *
 * Importers never map a model file: a loaded model keeps its own copy of the bytes, so a
 * file changed, truncated or replaced on disk under a served model cannot reach it (a
 * shared or private file mapping faults with SIGBUS once the file shrinks). Files a model
 * names (ONNX external data, TF.js weight shards) are read the same way and must resolve,
 * symlinks followed, to a file inside the model's directory. */
#ifndef BD_CORE_MODEL_FILE_H
#define BD_CORE_MODEL_FILE_H

#include <stddef.h>

#include "core/error.h"

/* The most bytes the constants of one model may expand to, all together, beyond what the
 * file itself carries (TensorFlow Consts whose few values fill a large shape, the element
 * tables of such string tensors): 64 MiB. A tensor whose bytes are all in the file
 * (raw_data, tensor_content, a shard) is limited only by the file's size. */
#ifndef BD_MAX_EXPANDED_BYTES        /* the fuzz build lowers it: same checks, faster inputs */
#define BD_MAX_EXPANDED_BYTES ((size_t)64 << 20)
#endif

/* Read the regular file PATH whole into private memory: *DATA (64-byte aligned, free()) and
 * *LEN. Errors name PATH: BD_ENOTFOUND if it does not exist, BD_EIO if it cannot be opened
 * or read or is not a regular file, BD_ENOMEM, BD_EMODEL "the WHAT is empty (0 bytes)" for an
 * empty file (WHAT: "model", "GraphDef"). */
int bd_model_file_read(const char *path, const char *what, void **data, size_t *len,
                       bd_error *err);

/* The most distinct files one model may name (ONNX external data files, TF.js shards). */
#define BD_MAX_MODEL_FILES 1024

/* Open REL, a file a model in DIR names (ONNX external data, a TF.js shard), read-only into
 * *FD. REL must be relative without a ".." component, and the file opened must resolve
 * (symlinks followed) to a path inside DIR's real path: else BD_EMODEL naming WHAT ("tensor
 * 'w': external data", "weight shard") and the path. BD_ENOTFOUND/BD_EIO as above. */
int bd_model_file_open_in(const char *dir, const char *rel, const char *what, int *fd,
                          bd_error *err);
/* Read the regular file open on FD (NAME for messages) whole, like bd_model_file_read; an
 * empty file gives *DATA = NULL, *LEN = 0. FD stays open. */
int bd_model_file_read_fd(int fd, const char *name, void **data, size_t *len, bd_error *err);

/* The directory part of PATH ("." when it has none) in a new heap string, NULL when out of
 * memory. */
char *bd_model_file_dir(const char *path);

#endif
