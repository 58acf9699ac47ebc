/* Reading model files into private memory (see model_file.h). */
#include "core/model_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The size is taken from fstat; a file that shrinks while being read yields the bytes present
 * (the importer then finds them malformed), one that grows is read up to the size seen. */
int bd_model_file_read_fd(int fd, const char *name, void **data, size_t *len, bd_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return bd_error_set(err, BD_EIO, "'%s': not a regular file", name);
    if ((uint64_t)st.st_size > SIZE_MAX - 64)
        return bd_error_set(err, BD_ENOMEM, "'%s': too large to read (%lld bytes)", name,
                            (long long)st.st_size);
    size_t n = (size_t)st.st_size;
    *data = NULL;
    *len = 0;
    if (n == 0)
        return 0;
    uint8_t *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (!p)
        return bd_error_set(err, BD_ENOMEM, "'%s': out of memory reading %zu bytes", name, n);
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(p);
            return bd_error_set(err, BD_EIO, "'%s': read error: %s", name, strerror(e));
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    *data = p;
    *len = got;
    return 0;
}

int bd_model_file_read(const char *path, const char *what, void **data, size_t *len,
                       bd_error *err)
{
    /* O_NONBLOCK: a FIFO under the model's name must fail the regular-file check, not hang. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO, "'%s': cannot open: %s",
                            path, strerror(errno));
    int rc = bd_model_file_read_fd(fd, path, data, len, err);
    close(fd);
    if (rc == 0 && *len == 0) {
        free(*data);
        *data = NULL;
        return bd_error_set(err, BD_EMODEL, "'%s': the %s is empty (0 bytes)", path, what);
    }
    return rc;
}

/* True when REAL is DIR (a real path) or inside it. */
static bool inside(const char *real, const char *dir)
{
    size_t dl = strlen(dir);
    if (dl == 1 && dir[0] == '/')
        return true;
    return strncmp(real, dir, dl) == 0 && real[dl] == '/';
}

int bd_model_file_open_in(const char *dir, const char *rel, const char *what, int *out,
                          bd_error *err)
{
    if (!rel || !*rel)
        return bd_error_set(err, BD_EMODEL, "%s: no file name", what);
    if (rel[0] == '/')
        return bd_error_set(err, BD_EMODEL, "%s '%s' is an absolute path; it must be relative "
                            "to the model's directory", what, rel);
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return bd_error_set(err, BD_EMODEL, "%s '%s' contains '..'; it must stay inside the "
                                "model's directory", what, rel);
        p += n;
        p += *p == '/';
    }
    char path[PATH_MAX], real_dir[PATH_MAX], real_file[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rel) >= sizeof path)
        return bd_error_set(err, BD_EMODEL, "%s: path '%s/%s' is too long", what, dir, rel);
    if (!realpath(dir, real_dir))
        return bd_error_set(err, BD_EIO, "%s: model directory '%s': %s", what, dir,
                            strerror(errno));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO,
                            "%s '%s': cannot open: %s", what, path, strerror(errno));
    /* Where the descriptor really leads (every symlink resolved at open time, so a link
     * swapped after a check cannot fool it); realpath of the name when /proc is absent. */
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, real_file, sizeof real_file - 1);
    if (k > 0 && (size_t)k < sizeof real_file - 1)
        real_file[k] = '\0';
    else if (!realpath(path, real_file)) {
        int e = errno;
        close(fd);
        return bd_error_set(err, BD_EIO, "%s '%s': %s", what, path, strerror(e));
    }
    if (!inside(real_file, real_dir)) {
        close(fd);
        return bd_error_set(err, BD_EMODEL, "%s '%s' resolves to '%s', outside the model's "
                            "directory", what, rel, real_file);
    }
    *out = fd;
    return 0;
}

char *bd_model_file_dir(const char *path)
{
    size_t n = strlen(path);
    char *dir = malloc(n + 2);
    if (!dir)
        return NULL;
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    return dir;
}
