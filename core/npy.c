#include "core/npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAGIC      "\x93NUMPY"
#define NPY_MAGIC_LEN  6
#define NPY_ALIGN      64              /* numpy pads headers (and we align data) to this */
#define NPY_MAX_HEADER (1u << 20)      /* numpy itself refuses headers above 10 KB-ish */

static const struct {
    int         dtype;
    const char *descr;       /* what we write */
    const char *alt;         /* also accepted on read (byte order '=' / '<' / '|' variants) */
} descr_table[] = {
    { BD_DT_FLOAT,   "<f4", NULL  },
    { BD_DT_DOUBLE,  "<f8", NULL  },
    { BD_DT_FLOAT16, "<f2", NULL  },
    { BD_DT_INT64,   "<i8", NULL  },
    { BD_DT_INT32,   "<i4", NULL  },
    { BD_DT_INT16,   "<i2", NULL  },
    { BD_DT_INT8,    "|i1", "<i1" },
    { BD_DT_UINT64,  "<u8", NULL  },
    { BD_DT_UINT32,  "<u4", NULL  },
    { BD_DT_UINT16,  "<u2", NULL  },
    { BD_DT_UINT8,   "|u1", "<u1" },
    { BD_DT_BOOL,    "|b1", "<b1" },
};
#define N_DESCR (sizeof descr_table / sizeof descr_table[0])

const char *bd_npy_descr(int dtype)
{
    for (size_t i = 0; i < N_DESCR; i++)
        if (descr_table[i].dtype == dtype)
            return descr_table[i].descr;
    return NULL;
}

static int dtype_of_descr(const char *d)
{
    for (size_t i = 0; i < N_DESCR; i++)
        if (strcmp(descr_table[i].descr, d) == 0 ||
            (descr_table[i].alt && strcmp(descr_table[i].alt, d) == 0))
            return descr_table[i].dtype;
    return BD_DT_UNDEFINED;
}

/* ------------------------------------------------------------------ header dict parser
 * The header is a Python dict literal, e.g.
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 64), }
 * We accept exactly that grammar: three known keys, each once, string/bool/int-tuple
 * values, optional trailing comma, surrounding whitespace. */

typedef struct hdr {
    const char *start, *p, *end;
    const char *path;
    bd_error   *err;
    char        descr[16];
    bool        fortran;
    bd_shape    shape;
} hdr;

static void skip_ws(hdr *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static int bad(hdr *h, const char *what)
{
    return bd_error_set(h->err, BD_EINVAL,
                        "npy file '%s': malformed header: %s (header byte %td)",
                        h->path, what, h->p - h->start);
}

static int expect(hdr *h, char c)
{
    skip_ws(h);
    if (h->p >= h->end || *h->p != c) {
        char what[32];
        snprintf(what, sizeof what, "expected '%c'", c);
        return bad(h, what);
    }
    h->p++;
    return 0;
}

/* A quoted string without escapes into BUF (truncation is an error). */
static int parse_str(hdr *h, char *buf, size_t size)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return bad(h, "expected a quoted string");
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || *h->p == '\n' || n + 1 >= size)
            return bad(h, "unsupported or overlong string");
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return bad(h, "unterminated string");
    h->p++;
    buf[n] = '\0';
    return 0;
}

static int parse_bool(hdr *h, bool *out)
{
    skip_ws(h);
    size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && memcmp(h->p, "True", 4) == 0) {
        h->p += 4;
        *out = true;
        return 0;
    }
    if (left >= 5 && memcmp(h->p, "False", 5) == 0) {
        h->p += 5;
        *out = false;
        return 0;
    }
    return bad(h, "expected True or False");
}

static int parse_dim(hdr *h, int64_t *out)
{
    skip_ws(h);
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
        return bad(h, "expected a non-negative integer dimension");
    int64_t v = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
        if (v > (INT64_MAX - 9) / 10)
            return bad(h, "dimension overflows int64");
        v = v * 10 + (*h->p++ - '0');
    }
    if (h->p < h->end && *h->p == 'L')        /* Python 2 longs in old version-1.0 files */
        h->p++;
    *out = v;
    return 0;
}

static int parse_shape(hdr *h)
{
    int rc = expect(h, '(');
    if (rc)
        return rc;
    h->shape.rank = 0;
    bool trailing_comma = false;
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        if (h->shape.rank >= BD_MAX_RANK)
            return bd_error_set(h->err, BD_EUNSUPPORTED, "npy file '%s': rank above %d",
                                h->path, BD_MAX_RANK);
        if ((rc = parse_dim(h, &h->shape.dims[h->shape.rank])))
            return rc;
        h->shape.sym[h->shape.rank] = NULL;
        h->shape.rank++;
        skip_ws(h);
        trailing_comma = false;
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            trailing_comma = true;
        } else if (h->p >= h->end || *h->p != ')') {
            return bad(h, "expected ',' or ')' in shape");
        }
    }
    if (h->shape.rank == 1 && !trailing_comma)  /* "(5)" is an int in Python, not a tuple */
        return bad(h, "shape is not a tuple");
    return 0;
}

static int parse_header(hdr *h)
{
    enum { K_DESCR = 1, K_FORTRAN = 2, K_SHAPE = 4 };
    unsigned seen = 0;
    int rc = expect(h, '{');
    if (rc)
        return rc;
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == '}') {
            h->p++;
            break;
        }
        char key[32];
        if ((rc = parse_str(h, key, sizeof key)) || (rc = expect(h, ':')))
            return rc;
        unsigned k = strcmp(key, "descr") == 0         ? K_DESCR
                   : strcmp(key, "fortran_order") == 0 ? K_FORTRAN
                   : strcmp(key, "shape") == 0         ? K_SHAPE : 0;
        if (!k)
            return bad(h, "unknown key (expected descr, fortran_order, shape)");
        if (seen & k)
            return bad(h, "duplicate key");
        seen |= k;
        if (k == K_DESCR) {
            skip_ws(h);
            if (h->p < h->end && *h->p == '[')
                return bd_error_set(h->err, BD_EUNSUPPORTED,
                                    "npy file '%s': structured dtypes are not supported", h->path);
            rc = parse_str(h, h->descr, sizeof h->descr);
        } else if (k == K_FORTRAN) {
            rc = parse_bool(h, &h->fortran);
        } else {
            rc = parse_shape(h);
        }
        if (rc)
            return rc;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
        } else if (h->p >= h->end || *h->p != '}') {
            return bad(h, "expected ',' or '}'");
        }
    }
    skip_ws(h);
    if (h->p != h->end)
        return bad(h, "trailing characters after the dict");
    if (seen != (K_DESCR | K_FORTRAN | K_SHAPE))
        return bad(h, "missing one of descr, fortran_order, shape");
    return 0;
}

/* ------------------------------------------------------------------------------ read */

static uint32_t le16(const unsigned char *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8; }
static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int read_exact(FILE *f, void *buf, size_t n, const char *path, const char *what,
                      bd_error *err)
{
    if (n && fread(buf, 1, n, f) != n)
        return bd_error_set(err, BD_EIO, "npy file '%s': truncated %s (%s)", path, what,
                            ferror(f) ? strerror(errno) : "unexpected end of file");
    return 0;
}

static int read_file(FILE *f, const char *path, bd_npy *out, bd_error *err)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        return bd_error_set(err, BD_EIO, "npy file '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return bd_error_set(err, BD_EIO, "npy file '%s': not a regular file", path);

    unsigned char pre[12];
    int rc = read_exact(f, pre, 8, path, "preamble", err);
    if (rc)
        return rc;
    if (memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': bad magic (not a .npy file)", path);
    unsigned major = pre[6], minor = pre[7];
    size_t pre_len;
    uint32_t hlen;
    if (major == 1 && minor == 0) {
        if ((rc = read_exact(f, pre + 8, 2, path, "header length", err)))
            return rc;
        pre_len = 10;
        hlen = le16(pre + 8);
    } else if ((major == 2 || major == 3) && minor == 0) {
        if ((rc = read_exact(f, pre + 8, 4, path, "header length", err)))
            return rc;
        pre_len = 12;
        hlen = le32(pre + 8);
    } else {
        return bd_error_set(err, BD_EUNSUPPORTED,
                            "npy file '%s': format version %u.%u (supported: 1.0, 2.0, 3.0)",
                            path, major, minor);
    }
    if (hlen == 0 || hlen > NPY_MAX_HEADER)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': header length %u out of range "
                            "(1..%u)", path, hlen, NPY_MAX_HEADER);
    if ((uint64_t)st.st_size < pre_len + (uint64_t)hlen)
        return bd_error_set(err, BD_EIO, "npy file '%s': truncated header (%u bytes declared, "
                            "file has %lld)", path, hlen, (long long)st.st_size);

    char *text = malloc(hlen);
    if (!text)
        return bd_error_set(err, BD_ENOMEM, "npy file '%s': out of memory for header", path);
    rc = read_exact(f, text, hlen, path, "header", err);
    hdr h = { .start = text, .p = text, .end = text + hlen, .path = path, .err = err };
    if (!rc && memchr(text, '\0', hlen))
        rc = bd_error_set(err, BD_EINVAL, "npy file '%s': malformed header: NUL byte", path);
    if (!rc)
        rc = parse_header(&h);
    free(text);
    if (rc)
        return rc;

    if (h.fortran)
        return bd_error_set(err, BD_EUNSUPPORTED, "npy file '%s': fortran_order is True; only "
                            "C-order arrays are supported (save with np.ascontiguousarray)", path);
    int dtype = dtype_of_descr(h.descr);
    if (dtype == BD_DT_UNDEFINED)
        return bd_error_set(err, BD_EUNSUPPORTED, "npy file '%s': dtype '%s' is not supported "
                            "(%s)", path, h.descr, h.descr[0] == '>' ? "big-endian"
                            : "expected one of <f4 <f8 <f2 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1");

    size_t nbytes = bd_dtype_size(dtype);
    for (int i = 0; i < h.shape.rank; i++)
        if (h.shape.dims[i] > 0 && __builtin_mul_overflow(nbytes, (size_t)h.shape.dims[i], &nbytes))
            return bd_error_set(err, BD_EINVAL, "npy file '%s': shape too large", path);
    if (bd_shape_numel(&h.shape) == 0)
        nbytes = 0;
    uint64_t have = (uint64_t)st.st_size - pre_len - hlen;
    if (have != nbytes)
        return bd_error_set(err, have < nbytes ? BD_EIO : BD_EINVAL,
                            "npy file '%s': data is %llu bytes, shape and dtype %s need %zu (%s)",
                            path, (unsigned long long)have, h.descr, nbytes,
                            have < nbytes ? "truncated" : "trailing bytes");

    size_t alloc = (nbytes + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    void *data = aligned_alloc(NPY_ALIGN, alloc ? alloc : NPY_ALIGN);
    if (!data)
        return bd_error_set(err, BD_ENOMEM, "npy file '%s': out of memory for %zu bytes", path,
                            nbytes);
    if ((rc = read_exact(f, data, nbytes, path, "data", err))) {
        free(data);
        return rc;
    }
    out->dtype  = dtype;
    out->shape  = h.shape;
    out->data   = data;
    out->nbytes = nbytes;
    return 0;
}

int bd_npy_read(const char *path, bd_npy *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return bd_error_set(err, BD_EIO, "npy file '%s': %s", path, strerror(errno));
    int rc = read_file(f, path, out, err);
    fclose(f);
    return rc;
}

void bd_npy_free(bd_npy *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

void bd_npy_as_dltensor(bd_npy *a, DLTensor *t)
{
    memset(t, 0, sizeof *t);
    t->data   = a->data;
    t->device = (DLDevice){ kDLCPU, 0 };
    t->ndim   = a->shape.rank;
    bd_dtype_to_dl(a->dtype, &t->dtype);
    t->shape  = a->shape.dims;
    t->strides = NULL;
    t->byte_offset = 0;
}

/* ----------------------------------------------------------------------------- write */

static int write_raw(const char *path, int dtype, int ndim, const int64_t *dims,
                     const void *data, bd_error *err)
{
    const char *descr = bd_npy_descr(dtype);
    if (!descr)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': dtype %s cannot be stored in .npy",
                            path, bd_dtype_name(dtype));
    if (ndim < 0 || ndim > BD_MAX_RANK)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': rank %d out of range (0..%d)",
                            path, ndim, BD_MAX_RANK);
    size_t nbytes = bd_dtype_size(dtype);
    bool empty = false;
    char shape[BD_MAX_RANK * 22 + 4];
    size_t n = 0;
    shape[n++] = '(';
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0)
            return bd_error_set(err, BD_EINVAL, "npy file '%s': negative dimension %lld",
                                path, (long long)dims[i]);
        if (dims[i] == 0)
            empty = true;
        else if (__builtin_mul_overflow(nbytes, (size_t)dims[i], &nbytes))
            return bd_error_set(err, BD_EINVAL, "npy file '%s': tensor too large", path);
        n += (size_t)snprintf(shape + n, sizeof shape - n, i ? ", %lld" : "%lld",
                              (long long)dims[i]);
    }
    if (empty)
        nbytes = 0;
    snprintf(shape + n, sizeof shape - n, ndim == 1 ? ",)" : ")");
    if (nbytes && !data)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': tensor has no data", path);

    char header[512];
    int hl = snprintf(header, sizeof header,
                      "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    /* Pad with spaces and end with '\n' so preamble + header is a multiple of 64 (v1.0:
     * 10-byte preamble; the header here is always < 64 KiB so v2.0 is never needed). */
    size_t total = (10 + (size_t)hl + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    size_t hlen = total - 10;
    while ((size_t)hl < hlen - 1)
        header[hl++] = ' ';
    header[hl++] = '\n';
    unsigned char pre[10];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);

    FILE *f = fopen(path, "wb");
    if (!f)
        return bd_error_set(err, BD_EIO, "npy file '%s': %s", path, strerror(errno));
    bool ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre &&
              fwrite(header, 1, hlen, f) == hlen &&
              (nbytes == 0 || fwrite(data, 1, nbytes, f) == nbytes);
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        remove(path);
        return bd_error_set(err, BD_EIO, "npy file '%s': write failed: %s", path,
                            strerror(saved));
    }
    return 0;
}

int bd_npy_write(const char *path, const DLTensor *t, bd_error *err)
{
    if (t->device.device_type != kDLCPU)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': tensor is not in CPU memory", path);
    int dtype = bd_dtype_from_dl(t->dtype);
    if (dtype == BD_DT_UNDEFINED || t->dtype.lanes != 1)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': DLPack dtype (code %u, bits %u, "
                            "lanes %u) has no .npy equivalent", path, t->dtype.code,
                            t->dtype.bits, t->dtype.lanes);
    if (t->ndim < 0 || t->ndim > BD_MAX_RANK)
        return bd_error_set(err, BD_EINVAL, "npy file '%s': rank %d out of range (0..%d)",
                            path, t->ndim, BD_MAX_RANK);
    if (t->strides) {
        /* Only a compact row-major layout can be written as-is; size-1 dims may carry any
         * stride. */
        int64_t expect = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
            if (t->shape[i] != 1 && t->strides[i] != expect)
                return bd_error_set(err, BD_EINVAL, "npy file '%s': tensor is not row-major "
                                    "(stride %lld of dim %d, expected %lld)", path,
                                    (long long)t->strides[i], i, (long long)expect);
            expect *= t->shape[i];
        }
    }
    const void *data = t->data ? (const char *)t->data + t->byte_offset : NULL;
    return write_raw(path, dtype, t->ndim, t->shape, data, err);
}

int bd_npy_write_array(const char *path, const bd_npy *a, bd_error *err)
{
    return write_raw(path, a->dtype, a->shape.rank, a->shape.dims, a->data, err);
}
