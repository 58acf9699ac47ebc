/* External tensor data (data_location = EXTERNAL): files next to the model, confined to
 * the model's directory, each read once per import into memory the graph owns. */
#include "partitioner/onnx/onnx_internal.h"
#include "core/model_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* LOC from the model's directory (confined there: model_file.h), or found read already. */
static int read_file(ox_ctx *c, const char *name, const char *loc, ox_extfile **out, bd_error *err)
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
    if (c->n_ext >= BD_MAX_MODEL_FILES)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data '%s': the model names "
                            "more than %d external data files", name, loc, BD_MAX_MODEL_FILES);
    char what[300];
    snprintf(what, sizeof what, "tensor '%.200s': external data", name);
    int fd;
    int rc = bd_model_file_open_in(c->base_dir, loc, what, 0, &fd, NULL, err);
    if (rc)
        return rc;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return bd_error_set(err, BD_EIO, "%s '%s': cannot stat", what, loc);
    }
    ox_extfile f = { .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino };
    /* Another name (a link, "./x") for a file read already shares its bytes: a file is read
     * once however many ways the model spells it. */
    const ox_extfile *same = NULL;
    for (size_t i = 0; i < c->n_ext && !same; i++)
        if (c->ext[i].dev == f.dev && c->ext[i].ino == f.ino)
            same = &c->ext[i];
    if (same) {
        f.addr = same->addr;
        f.size = same->size;
    } else {
        rc = bd_model_file_read_fd(fd, loc, &f.addr, &f.size, err);
    }
    close(fd);
    if (rc)
        return bd_error_prefix(err, "%s: ", what);
    if (!(f.location = strdup(loc))) {
        if (!same)
            free(f.addr);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    if (!same && bd_graph_adopt_buffer(c->g, f.addr)) {
        free(f.location);
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    if (!same && f.addr) {       /* where these weights came from (runtime/weights.h) */
        char full[4096], *real;
        snprintf(full, sizeof full, "%s/%s", c->base_dir, loc);
        real = realpath(full, NULL);
        rc = bd_graph_buffer_source(c->g, f.addr, f.size, real ? real : full, 0);
        free(real);
        if (rc == BD_ENOMEM)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    c->ext[c->n_ext] = f;
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
    if (!loc || !*loc)
        return bd_error_set(err, BD_EMODEL, "tensor '%s': external data has no location", name);
    int rc;
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
    if ((rc = read_file(c, name, loc, &f, err)))
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
