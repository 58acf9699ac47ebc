/* External tensor data (data_location = EXTERNAL): files next to the model, confined to
 * the model's directory, each mapped once per import and owned by the graph. */
#include "onnx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A decimal number as ONNX stores offset/length (a string); false if it is not one. */
static bool parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* LOCATION must name a file inside the model's directory: relative, no ".." component. */
static int check_location(const char *name, const char *loc, bd_error *err)
{
    if (!loc || !*loc)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data has no location", name);
    if (loc[0] == '/')
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data location '%s' is an absolute "
                            "path; it must be relative to the model's directory", name, loc);
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return bd_error_set(err, BD_EMODEL, "tensor '%s': external data location '%s' contains "
                                "'..'; it must stay inside the model's directory", name, loc);
        p += n;
        p += *p == '/';
    }
    return 0;
}

/* Map LOC (already checked) from the model's directory, or find it mapped already. */
static int map_file(ox_ctx *c, const char *name, const char *loc, ox_extfile **out, bd_error *err)
{
    for (size_t i = 0; i < c->n_ext; i++)
        if (strcmp(c->ext[i].location, loc) == 0) {
            *out = &c->ext[i];
            return 0;
        }
    if (c->n_ext == c->cap_ext) {
        size_t cap = c->cap_ext ? c->cap_ext * 2 : 4;
        ox_extfile *e = realloc(c->ext, cap * sizeof *e);
        if (!e)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        c->ext = e;
        c->cap_ext = cap;
    }

    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", c->base_dir, loc) >= sizeof path)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data path '%s/%s' is too long",
                            name, c->base_dir, loc);
    /* A symlink must not lead outside the directory either: compare resolved paths. */
    char real_dir[PATH_MAX], real_file[PATH_MAX];
    if (!realpath(c->base_dir, real_dir) || !realpath(path, real_file))
        return bd_error_set(err, BD_EIO, "tensor '%s': cannot open external data '%s': %s",
                            name, path, strerror(errno));
    size_t dl = strlen(real_dir);
    if (strncmp(real_file, real_dir, dl) != 0 || (real_file[dl] != '/' && dl != 1))
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data '%s' resolves to '%s', "
                            "outside the model's directory", name, loc, real_file);

    int fd = open(real_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return bd_error_set(err, BD_EIO, "tensor '%s': cannot open external data '%s': %s",
                            name, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return bd_error_set(err, BD_EIO, "tensor '%s': external data '%s' is not a regular file",
                            name, path);
    }
    void *addr = NULL;
    size_t size = (size_t)st.st_size;
    if (size) {
        addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr == MAP_FAILED) {
            int e = errno;
            close(fd);
            return bd_error_set(err, BD_EIO, "tensor '%s': cannot map external data '%s': %s",
                                name, path, strerror(e));
        }
    }
    close(fd);
    char *dup = strdup(loc);
    if (!dup) {
        if (addr)
            munmap(addr, size);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    if (addr)
        bd_graph_adopt_mapping(c->g, addr, size);
    c->ext[c->n_ext] = (ox_extfile){ dup, addr, size };
    *out = &c->ext[c->n_ext++];
    return 0;
}

int ox_external_data(ox_ctx *c, const char *name, const onnx_StringStringEntryProto *entries,
                     size_t n_entries, size_t nbytes, const void **data, bd_error *err)
{
    if (!c->base_dir)
        return bd_error_set(err, BD_EUNSUPPORTED, "tensor '%s' keeps its data in an external file, "
                            "which needs the model's directory (import the model from its file)", name);
    const char *loc = NULL, *off_s = NULL, *len_s = NULL;
    for (size_t i = 0; i < n_entries; i++) {
        const char *k = entries[i].key ? entries[i].key : "";
        if (strcmp(k, "location") == 0)
            loc = entries[i].value;
        else if (strcmp(k, "offset") == 0)
            off_s = entries[i].value;
        else if (strcmp(k, "length") == 0)
            len_s = entries[i].value;
    }
    int rc = check_location(name, loc, err);
    if (rc)
        return rc;
    uint64_t off = 0, len = nbytes;
    if (off_s && !parse_size(off_s, &off))
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data offset '%s' is not a number",
                            name, off_s);
    if (len_s && !parse_size(len_s, &len))
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data length '%s' is not a number",
                            name, len_s);
    if (len != nbytes)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data length is %llu bytes, but its "
                            "dims and type need %zu", name, (unsigned long long)len, nbytes);
    ox_extfile *f;
    if ((rc = map_file(c, name, loc, &f, err)))
        return rc;
    if (off > f->size || nbytes > f->size - off)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data '%s' holds %zu bytes, but "
                            "offset %llu + length %zu goes past its end", name, loc, f->size,
                            (unsigned long long)off, nbytes);
    *data = nbytes ? (const void *)((const uint8_t *)f->addr + off) : bd_graph_alloc(c->g, 1);
    return *data ? 0 : bd_error_set(err, BD_ENOMEM, "out of memory");
}

void ox_external_free(ox_ctx *c)
{
    for (size_t i = 0; i < c->n_ext; i++)
        free(c->ext[i].location);
    free(c->ext);
    c->ext = NULL;
    c->n_ext = c->cap_ext = 0;
}
