/* Writing uploaded model files into the repository, confined to the model's directory:
 * every path segment is opened with O_NOFOLLOW relative to its parent (openat), so neither
 * "..", an absolute path nor a symlink planted in the repository can lead the write out. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/registry/model_name.h"
#include "daemon/registry/upload.h"

#define UPLOAD_PATH_MAX 1024

int upload_check_path(const char *path, bd_error *err)
{
    size_t n = path ? strlen(path) : 0;
    if (n == 0)
        return bd_error_set(err, BD_EINVAL, "uploaded file: empty path (expected file:<version>/<name>)");
    if (n >= UPLOAD_PATH_MAX)
        return bd_error_set(err, BD_EINVAL, "uploaded file '%.64s...': path longer than %d bytes",
                            path, UPLOAD_PATH_MAX - 1);
    if (path[0] == '/')
        return bd_error_set(err, BD_EINVAL,
                            "uploaded file '%s': absolute paths are not allowed (expected <version>/<name>)", path);
    for (const char *seg = path;;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
        if (len == 0)
            return bd_error_set(err, BD_EINVAL, "uploaded file '%s': empty path segment", path);
        if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
            return bd_error_set(err, BD_EINVAL,
                                "uploaded file '%s': '.' and '..' are not allowed (paths stay inside the model's directory)",
                                path);
        if (len > 200)
            return bd_error_set(err, BD_EINVAL, "uploaded file '%s': a path segment is too long", path);
        if (!slash)
            break;
        seg = slash + 1;
    }
    return 0;
}

/* Open directory NAME below DIRFD, creating it if missing; refuses symlinks. */
static int open_subdir(int dirfd, const char *name, const char *shown, bd_error *err)
{
    if (mkdirat(dirfd, name, 0755) != 0 && errno != EEXIST)
        return bd_error_set(err, BD_EIO, "cannot create directory '%s': %s", shown, strerror(errno));
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
            return bd_error_set(err, BD_EINVAL, "'%s' is a symlink or not a directory: refusing to write through it",
                                shown);
        return bd_error_set(err, BD_EIO, "cannot open directory '%s': %s", shown, strerror(errno));
    }
    return fd;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int upload_write(const char *repo, const char *name, const char *path, const void *data,
                 size_t len, bd_error *err)
{
    int rc = model_name_check(name, err);
    if (rc || (rc = upload_check_path(path, err)))
        return rc;
    int dfd = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return bd_error_set(err, BD_EIO, "repository '%s': %s", repo, strerror(errno));
    char shown[UPLOAD_PATH_MAX + 256];
    snprintf(shown, sizeof shown, "%s", name);
    int fd = open_subdir(dfd, name, shown, err);
    close(dfd);
    if (fd < 0)
        return fd;
    dfd = fd;

    char buf[UPLOAD_PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    char *seg = buf;
    for (char *slash; (slash = strchr(seg, '/')) != NULL; seg = slash + 1) {
        *slash = '\0';
        snprintf(shown, sizeof shown, "%s/%s", name, buf);
        fd = open_subdir(dfd, seg, shown, err);
        close(dfd);
        if (fd < 0)
            return fd;
        dfd = fd;
        *slash = '/';
    }
    snprintf(shown, sizeof shown, "%s/%s", name, path);

    struct stat st;
    if (fstatat(dfd, seg, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
        close(dfd);
        return bd_error_set(err, BD_EINVAL, "'%s' exists and is %s: refusing to replace it", shown,
                            S_ISLNK(st.st_mode) ? "a symlink" : "not a regular file");
    }
    static atomic_uint counter;
    char tmp[300];
    snprintf(tmp, sizeof tmp, ".%.200s.upload-%d-%u", seg, (int)getpid(), atomic_fetch_add(&counter, 1));
    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = bd_error_set(err, BD_EIO, "cannot create a file next to '%s': %s", shown, strerror(errno));
        close(dfd);
        return rc;
    }
    int bad = write_all(fd, data, len);
    if (close(fd) != 0)
        bad = -1;
    if (bad) {
        rc = bd_error_set(err, BD_EIO, "cannot write '%s': %s", shown, strerror(errno));
        unlinkat(dfd, tmp, 0);
        close(dfd);
        return rc;
    }
    if (renameat(dfd, tmp, dfd, seg) != 0) {
        rc = bd_error_set(err, BD_EIO, "cannot move '%s' into place: %s", shown, strerror(errno));
        unlinkat(dfd, tmp, 0);
    }
    close(dfd);
    return rc;
}
