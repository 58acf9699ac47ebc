#include "daemon/labels.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct bd_labels {
    char  *text;       /* the file, each line's end replaced by NUL */
    char **line;
    size_t n;
};

static int read_all(int fd, char *buf, size_t size)
{
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

int bd_labels_load(const char *path, bd_labels **out, bd_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return bd_error_set(err, BD_EIO, "label file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "label file %s: not a regular file", path);
    }
    if ((size_t)st.st_size > BD_LABELS_MAX_BYTES) {
        close(fd);
        return bd_error_set(err, BD_EINVAL, "label file %s: %lld bytes, over the limit of %zu",
                            path, (long long)st.st_size, BD_LABELS_MAX_BYTES);
    }
    size_t size = (size_t)st.st_size;
    bd_labels *l = calloc(1, sizeof *l);
    char *text = malloc(size + 1);
    if (!l || !text) {
        close(fd);
        free(l);
        free(text);
        return bd_error_set(err, BD_ENOMEM, "label file %s: out of memory", path);
    }
    int rc = read_all(fd, text, size);
    close(fd);
    if (rc) {
        free(l);
        free(text);
        return bd_error_set(err, BD_EIO, "label file %s: cannot read it", path);
    }
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
