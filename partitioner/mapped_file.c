/* Mapping a model file (see mapped_file.h). */
#include "partitioner/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int bd_map_file(const char *path, const char *what, void **addr, size_t *len, bd_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return bd_error_set(err, errno == ENOENT ? BD_ENOTFOUND : BD_EIO, "'%s': cannot open: %s",
                            path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return bd_error_set(err, BD_EIO, "'%s': not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    if (n == 0) {
        close(fd);
        return bd_error_set(err, BD_EMODEL, "'%s': the %s is empty (0 bytes)", path, what);
    }
    void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return bd_error_set(err, BD_EIO, "'%s': cannot map: %s", path, strerror(e));
    *addr = map;
    *len = n;
    return 0;
}
