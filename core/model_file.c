/* Reading model files into private memory, and the one check of every file opened for a
 * model (see model_file.h). */
#include "core/model_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TREE_DEPTH 16

/* What MODE is, for "X is a FIFO, not a regular file". */
static const char *kind_of(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO (named pipe)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISDIR(m))
        return "a directory";
    return "a special file";
}

static int not_regular(bd_error *err, const char *what, const char *name, mode_t m)
{
    return bd_error_set(err, BD_EIO, "%s '%s' is %s, not a regular file (braid opens only "
                        "regular files for a model)", what, name, kind_of(m));
}

/* An O_PATH descriptor on PATH, every symlink followed, and what it is in *ST. O_PATH asks
 * for no access: a FIFO does not wait for a writer and a device's driver is not called. */
static int open_path(const char *path, const char *what, const char *shown, int *out,
                     struct stat *st, bd_error *err)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return bd_error_set(err, e == ENOENT ? BD_ENOTFOUND : BD_EIO, "%s '%s': cannot open: %s",
                            what, shown, strerror(e));
    }
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return bd_error_set(err, BD_EIO, "%s '%s': cannot stat: %s", what, shown, strerror(e));
    }
    *out = fd;
    return 0;
}

/* Open for reading the very file the O_PATH descriptor PFD holds (its /proc/self/fd name),
 * whatever PATH names by now; by PATH when /proc is absent, then only if it is the same file. */
static int reopen(int pfd, const char *path, const struct stat *st, int flags, const char *what,
                  const char *shown, int *out, bd_error *err)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
    flags |= O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
    int fd = open(proc, flags);
    if (fd < 0 && errno == ENOENT)
        fd = open(path, flags);
    if (fd < 0) {
        int e = errno;
        return bd_error_set(err, e == ENOENT ? BD_ENOTFOUND : BD_EIO, "%s '%s': cannot open: %s",
                            what, shown, strerror(e));
    }
    struct stat now;
    if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
        close(fd);
        return bd_error_set(err, BD_EIO, "%s '%s' was replaced while being opened", what, shown);
    }
    *out = fd;
    return 0;
}

/* The real path of what FD (opened from PATH) is: the kernel's own, every symlink resolved
 * at open time; realpath of the name when /proc is absent. */
static int real_of(int fd, const char *path, char real[PATH_MAX])
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, real, PATH_MAX - 1);
    if (k > 0 && k < PATH_MAX - 1) {
        real[k] = '\0';
        return 0;
    }
    return realpath(path, real) ? 0 : -1;
}

/* True when REAL is inside DIR (a real path), or DIR itself when SAME_OK. */
static bool inside(const char *real, const char *dir, bool same_ok)
{
    size_t dl = strlen(dir);
    if (strcmp(real, dir) == 0)
        return same_ok;
    if (dl == 1 && dir[0] == '/')
        return true;
    return strncmp(real, dir, dl) == 0 && real[dl] == '/';
}

/* A name from a model or its config: relative, no ".." component. */
static int check_name(const char *rel, const char *what, bd_error *err)
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
    return 0;
}

/* The rule of model_file.h for DIR/REL: a regular file (a directory when WANT_DIR) inside
 * DIR, at most MAX_BYTES (0: any), opened for reading into *OUT (O_DIRECTORY when WANT_DIR). */
static int open_checked(const char *dir, const char *rel, const char *what, bool want_dir,
                        uint64_t max_bytes, int *out, struct stat *st, bd_error *err)
{
    int rc = check_name(rel, what, err);
    if (rc)
        return rc;
    char path[PATH_MAX], real_dir[PATH_MAX], real[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rel) >= sizeof path)
        return bd_error_set(err, BD_EMODEL, "%s: path '%s/%s' is too long", what, dir, rel);
    if (!realpath(dir, real_dir))
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO, "%s: model directory "
                            "'%s': %s", what, dir, strerror(errno));
    int pfd;
    if ((rc = open_path(path, what, rel, &pfd, st, err)))
        return rc;
    if (real_of(pfd, path, real) != 0)
        rc = bd_error_set(err, BD_EIO, "%s '%s': %s", what, rel, strerror(errno));
    else if (!inside(real, real_dir, want_dir))
        rc = bd_error_set(err, BD_EMODEL, "%s '%s' resolves to '%s', outside the model's "
                          "directory (a symlink may lead only to a file inside it)", what, rel, real);
    else if (want_dir && !S_ISDIR(st->st_mode))
        rc = bd_error_set(err, BD_EIO, "%s '%s' is %s, not a directory", what, rel,
                          S_ISREG(st->st_mode) ? "a regular file" : kind_of(st->st_mode));
    else if (!want_dir && !S_ISREG(st->st_mode))
        rc = not_regular(err, what, rel, st->st_mode);
    else if (!want_dir && max_bytes && (uint64_t)st->st_size > max_bytes)
        rc = bd_error_set(err, BD_EMODEL, "%s '%s' is %lld bytes; braid reads at most %llu",
                          what, rel, (long long)st->st_size, (unsigned long long)max_bytes);
    if (rc == 0)
        rc = reopen(pfd, path, st, want_dir ? O_DIRECTORY : 0, what, rel, out, err);
    close(pfd);
    return rc;
}

int bd_model_file_open_in(const char *dir, const char *rel, const char *what, uint64_t max_bytes,
                          int *fd, uint64_t *size, bd_error *err)
{
    struct stat st;
    int rc = open_checked(dir, rel, what, false, max_bytes, fd, &st, err);
    if (rc == 0 && size)
        *size = (uint64_t)st.st_size;
    return rc;
}

int bd_model_file_read_in(const char *dir, const char *rel, const char *what, uint64_t max_bytes,
                          void **data, size_t *len, bd_error *err)
{
    int fd;
    int rc = bd_model_file_open_in(dir, rel, what, max_bytes, &fd, NULL, err);
    if (rc)
        return rc;
    rc = bd_model_file_read_fd(fd, rel, data, len, err);
    close(fd);
    return rc ? bd_error_prefix(err, "%s: ", what) : 0;
}

int bd_model_file_check_in(const char *dir, const char *rel, const char *what, bd_error *err)
{
    int fd;
    int rc = bd_model_file_open_in(dir, rel, what, 0, &fd, NULL, err);
    if (rc == 0)
        close(fd);
    return rc;
}

/* Check the entries of the directory REL (open on FD) below DIR; REL is a buffer of PATH_MAX. */
static int walk(const char *dir, char *rel, int fd, const char *what, bool subdirs, int depth,
                size_t *count, bd_error *err)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return bd_error_set(err, BD_EIO, "%s '%s': cannot list it: %s", what, rel, strerror(e));
    }
    size_t base = strlen(rel);
    bool top = strcmp(rel, ".") == 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (++*count > BD_MAX_MODEL_FILES) {
            rc = bd_error_set(err, BD_EMODEL, "%s: more than %d files under '%s'", what,
                              BD_MAX_MODEL_FILES, dir);
            break;
        }
        if ((size_t)snprintf(rel + (top ? 0 : base), PATH_MAX - base, top ? "%s" : "/%s",
                             e->d_name) >= PATH_MAX - base) {
            rc = bd_error_set(err, BD_EMODEL, "%s: a path under '%s' is too long", what, dir);
            break;
        }
        /* stat, never open, to tell a directory from a file (follows links; open_checked
         * then checks where they lead and that it is still what stat said) */
        struct stat st;
        bool is_dir = fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
        int sub;
        if (is_dir && (!subdirs || depth >= MAX_TREE_DEPTH))
            rc = subdirs ? bd_error_set(err, BD_EMODEL, "%s: '%s' nests deeper than %d directories",
                                        what, rel, MAX_TREE_DEPTH)
                         : bd_error_set(err, BD_EIO, "%s '%s' is a directory, not a regular file",
                                        what, rel);
        else if ((rc = open_checked(dir, rel, what, is_dir, 0, &sub, &st, err)) == 0) {
            if (is_dir)
                rc = walk(dir, rel, sub, what, subdirs, depth + 1, count, err);
            else
                close(sub);
        }
        if (top)
            strcpy(rel, ".");
        else
            rel[base] = '\0';
    }
    closedir(d);
    return rc;
}

int bd_model_tree_check_in(const char *dir, const char *rel, const char *what, bool subdirs,
                           bd_error *err)
{
    char buf[PATH_MAX];
    if ((size_t)snprintf(buf, sizeof buf, "%s", rel) >= sizeof buf)
        return bd_error_set(err, BD_EMODEL, "%s: path '%s' is too long", what, rel);
    int fd;
    struct stat st;
    int rc = open_checked(dir, buf, what, true, 0, &fd, &st, err);
    if (rc)
        return rc;
    size_t count = 0;
    return walk(dir, buf, fd, what, subdirs, 1, &count, err);
}

int bd_model_path_check_in(const char *dir, const char *path, const char *what, bd_error *err)
{
    char real_dir[PATH_MAX], real[PATH_MAX];
    if (!realpath(dir, real_dir))
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO, "%s: directory '%s': %s",
                            what, dir, strerror(errno));
    if (!realpath(path, real))
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO, "%s '%s': %s", what,
                            path, strerror(errno));
    if (!inside(real, real_dir, true))
        return bd_error_set(err, BD_EMODEL, "%s '%s' resolves to '%s', outside the model's "
                            "directory '%s' (a symlink may lead only inside it)", what, path, real,
                            real_dir);
    return 0;
}

int bd_model_file_open(const char *path, const char *what, int *out, bd_error *err)
{
    int pfd;
    struct stat st;
    int rc = open_path(path, what, path, &pfd, &st, err);
    if (rc)
        return rc;
    if (!S_ISREG(st.st_mode))
        rc = not_regular(err, what, path, st.st_mode);
    else
        rc = reopen(pfd, path, &st, 0, what, path, out, err);
    close(pfd);
    return rc;
}

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
    int fd;
    int rc = bd_model_file_open(path, what, &fd, err);
    if (rc)
        return rc;
    rc = bd_model_file_read_fd(fd, path, data, len, err);
    close(fd);
    if (rc == 0 && *len == 0) {
        free(*data);
        *data = NULL;
        return bd_error_set(err, BD_EMODEL, "'%s': the %s is empty (0 bytes)", path, what);
    }
    return rc;
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
