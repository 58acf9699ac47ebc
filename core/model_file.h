/* Reading model files into private memory, and the limits on what a model file may make
 * an importer allocate (docs/security.md, "Model files").
 *
 * Importers never map a model file: a loaded model keeps its own copy of the bytes, so a
 * file changed, truncated or replaced on disk under a served model cannot reach it (a
 * shared or private file mapping faults with SIGBUS once the file shrinks). Files a model
 * names (ONNX external data, TF.js weight shards) are read the same way, through the one
 * check below. */
#ifndef BD_CORE_MODEL_FILE_H
#define BD_CORE_MODEL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* The most bytes the constants of one model may expand to, all together, beyond what the
 * file itself carries (TensorFlow Consts whose few values fill a large shape, the element
 * tables of such string tensors): 64 MiB. A tensor whose bytes are all in the file
 * (raw_data, tensor_content, a shard) is limited only by the file's size. */
#ifndef BD_MAX_EXPANDED_BYTES        /* the fuzz build lowers it: same checks, faster inputs */
#define BD_MAX_EXPANDED_BYTES ((size_t)64 << 20)
#endif

/* May this file be opened? core/model_file.c is the one place that answers, for every file
 * braid reads for a model and every file a library it calls (TensorFlow's SavedModel loader)
 * will open by name. The rule:
 *
 *   - a regular file only: a FIFO, a device, a socket or a directory is refused, and is
 *     refused before it is opened for reading (an O_PATH descriptor is checked first), so
 *     nothing waits for a writer and no device driver's open() runs;
 *   - inside the model's folder: a name the model or its config gives (REL) is relative,
 *     without a ".." component, and the file it reaches, every symlink followed, must lie
 *     inside the real path of the folder (DIR). A symlink that stays inside is fine (Kubernetes
 *     mounts files as links into "..data/"); one that leads out is refused. The descriptor's
 *     own path is what is checked (/proc/self/fd), and the file read is the one checked, so
 *     a link swapped in between gains nothing;
 *   - at most MAX_BYTES bytes when the caller bounds it (0: the file's size is the bound).
 *
 * Refusals name WHAT ("weight shard", "label file") and REL, and say what to do: BD_ENOTFOUND
 * when it does not exist, BD_EIO when it is not a regular file ("... is a FIFO, not a regular
 * file") or cannot be opened or read, BD_EMODEL when it leaves the folder ("... resolves to
 * '/etc/passwd', outside the model's directory"), has "..", or passes MAX_BYTES. */

/* The most distinct files one model may name (ONNX external data files, TF.js shards), and
 * the most entries braid checks under a SavedModel directory. */
#define BD_MAX_MODEL_FILES 1024

/* Open DIR/REL read-only into *FD (O_NONBLOCK: harmless on the regular file it is) by the
 * rule above; its size in *SIZE when SIZE is not NULL. The caller closes *FD. */
int bd_model_file_open_in(const char *dir, const char *rel, const char *what, uint64_t max_bytes,
                          int *fd, uint64_t *size, bd_error *err);
/* Read DIR/REL whole (bd_model_file_open_in, then bd_model_file_read_fd). */
int bd_model_file_read_in(const char *dir, const char *rel, const char *what, uint64_t max_bytes,
                          void **data, size_t *len, bd_error *err);
/* Check DIR/REL by the rule without reading it: for a file a library opens by name itself. A
 * race remains between this check and the library's open, open only to whoever can write
 * the model's folder, who owns the model already. */
int bd_model_file_check_in(const char *dir, const char *rel, const char *what, bd_error *err);
/* Check the directory DIR/REL (REL "." for DIR itself: then only its entries are checked) and
 * everything under it for a library that will open files there by name: REL a directory
 * inside DIR, each entry a regular file by the rule or, when SUBDIRS, a directory inside DIR
 * checked the same way (at most 16 levels). At most BD_MAX_MODEL_FILES entries in all.
 * BD_ENOTFOUND when REL does not exist (the caller decides whether that is fine). */
int bd_model_tree_check_in(const char *dir, const char *rel, const char *what, bool subdirs,
                           bd_error *err);
/* BD_EMODEL naming WHAT unless PATH, every symlink followed, lies inside DIR (or is DIR): for a
 * path handed on whole (a model's file or SavedModel directory in the repository). BD_ENOTFOUND
 * if PATH does not exist. */
int bd_model_path_check_in(const char *dir, const char *path, const char *what, bd_error *err);

/* Open the regular file PATH, a name the caller chose (the model file given to an importer,
 * a weight file read back): the rule's regular-file part, without confinement. */
int bd_model_file_open(const char *path, const char *what, int *fd, bd_error *err);
/* Read the regular file PATH whole into private memory: *DATA (64-byte aligned, free()) and
 * *LEN. Errors name PATH: BD_ENOTFOUND if it does not exist, BD_EIO if it cannot be opened
 * or read or is not a regular file, BD_ENOMEM, BD_EMODEL "the WHAT is empty (0 bytes)" for an
 * empty file (WHAT: "model", "GraphDef"). */
int bd_model_file_read(const char *path, const char *what, void **data, size_t *len,
                       bd_error *err);
/* Read the regular file open on FD (NAME for messages) whole, like bd_model_file_read; an
 * empty file gives *DATA = NULL, *LEN = 0. FD stays open. */
int bd_model_file_read_fd(int fd, const char *name, void **data, size_t *len, bd_error *err);

/* The directory part of PATH ("." when it has none) in a new heap string, NULL when out of
 * memory. */
char *bd_model_file_dir(const char *path);

#endif
