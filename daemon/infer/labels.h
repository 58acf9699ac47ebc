/* Class labels for Triton's classification extension: a text file in the model's folder, one
 * label per line, line i naming class i (Triton's label_filename). Named per output in
 * config.json ("labels": {"OUTPUT": "FILE"}, docs/config.md) and read once at load.
 *
 * Hostile input: the file is opened by core/model_file.h's rule (a regular file inside the
 * model's folder, a symlink followed only while it stays inside) and holds at most
 * BD_LABELS_MAX_BYTES, each label at most BD_LABELS_MAX_LABEL bytes; anything else fails
 * naming the file. */
#ifndef BD_DAEMON_INFER_LABELS_H
#define BD_DAEMON_INFER_LABELS_H

#include <stddef.h>

#include "core/error.h"

#define BD_LABELS_MAX_BYTES ((size_t)16 << 20)
#define BD_LABELS_MAX_LABEL 1024

typedef struct bd_labels bd_labels;

/* Read MODEL_DIR/FILE; *OUT owns its text. BD_ENOTFOUND / BD_EIO when it is missing, not a
 * regular file or unreadable, BD_EMODEL when it leads out of MODEL_DIR, BD_EINVAL when over a
 * limit. */
int         bd_labels_load(const char *model_dir, const char *file, bd_labels **out,
                           bd_error *err);
void        bd_labels_free(bd_labels *l);                       /* NULL is allowed */
size_t      bd_labels_count(const bd_labels *l);
/* Class I's label, or NULL when the file has no line I (Triton then omits the label). */
const char *bd_labels_get(const bd_labels *l, size_t i);

#endif
