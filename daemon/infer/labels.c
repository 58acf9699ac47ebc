#include "daemon/infer/labels.h"

#include "core/model_file.h"

#include <stdlib.h>
#include <string.h>

struct bd_labels {
    char  *text;       /* the file, each line's end replaced by NUL */
    char **line;
    size_t n;
};

int bd_labels_load(const char *model_dir, const char *file, bd_labels **out, bd_error *err)
{
    *out = NULL;
    void *data = NULL;
    size_t size = 0;
    int rc = bd_model_file_read_in(model_dir, file, "label file", BD_LABELS_MAX_BYTES, &data,
                                   &size, err);
    if (rc && rc != BD_ENOMEM)
        rc = err->code = BD_EINVAL;              /* the file config.json names: the config's fault */
    if (rc)
        return rc;
    const char *path = file;
    bd_labels *l = calloc(1, sizeof *l);
    char *text = malloc(size + 1);
    if (!l || !text) {
        free(l);
        free(text);
        free(data);
        return bd_error_set(err, BD_ENOMEM, "label file %s: out of memory", path);
    }
    if (size)
        memcpy(text, data, size);
    free(data);
    text[size] = '\0';
    size_t n = 0;                       /* lines: a last line without '\n' counts too */
    for (size_t i = 0; i < size; i++)
        n += text[i] == '\n' || i + 1 == size;
    l->text = text;
    l->line = calloc(n ? n : 1, sizeof *l->line);
    if (!l->line) {
        bd_labels_free(l);
        return bd_error_set(err, BD_ENOMEM, "label file %s: out of memory", path);
    }
    for (char *p = text, *stop = text + size; l->n < n; ) {
        char *end = memchr(p, '\n', (size_t)(stop - p));
        size_t len = (size_t)((end ? end : stop) - p);
        p[len] = '\0';                          /* the '\n', or the terminator already there */
        if (len && p[len - 1] == '\r')
            p[--len] = '\0';
        if (len > BD_LABELS_MAX_LABEL) {
            size_t at = l->n + 1;
            bd_labels_free(l);
            return bd_error_set(err, BD_EINVAL, "label file %s: line %zu is over %d bytes", path,
                                at, BD_LABELS_MAX_LABEL);
        }
        l->line[l->n++] = p;
        if (!end)
            break;
        p = end + 1;
    }
    *out = l;
    return 0;
}

void bd_labels_free(bd_labels *l)
{
    if (!l)
        return;
    free(l->line);
    free(l->text);
    free(l);
}

size_t bd_labels_count(const bd_labels *l) { return l ? l->n : 0; }

const char *bd_labels_get(const bd_labels *l, size_t i)
{
    return l && i < l->n ? l->line[i] : NULL;
}
