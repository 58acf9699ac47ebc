/* gzip/deflate bodies through zlib (rest_codec.h). */
#include "daemon/rest/rest_codec.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

/* zlib's window bits: 16 + 15 = gzip wrapper, 15 = zlib wrapper. */
static int window_bits(bd_rest_coding c)
{
    return c == BD_CODING_GZIP ? 16 + MAX_WBITS : MAX_WBITS;
}

int bd_rest_coding_parse(const char *h, bd_rest_coding *out, bd_error *err)
{
    *out = BD_CODING_IDENTITY;
    if (!h || !*h || !strcasecmp(h, "identity"))
        return 0;
    if (!strcasecmp(h, "gzip") || !strcasecmp(h, "x-gzip")) {
        *out = BD_CODING_GZIP;
        return 0;
    }
    if (!strcasecmp(h, "deflate")) {
        *out = BD_CODING_DEFLATE;
        return 0;
    }
    return bd_error_set(err, BD_EINVAL, "Content-Encoding '%.64s' is not supported: send gzip, "
                        "deflate or identity", h);
}

/* Is CODING listed in the Accept-Encoding value H without q=0? */
static bool accepts(const char *h, const char *coding)
{
    size_t n = strlen(coding);
    for (const char *p = h; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p + strcspn(p, ",");
        if ((size_t)(end - p) >= n && !strncasecmp(p, coding, n) &&
            (p[n] == ',' || p[n] == ';' || p[n] == ' ' || p[n] == '\0')) {
            const char *q = strstr(p, "q=");
            return !(q && q < end && strtod(q + 2, NULL) == 0.0);
        }
        p = end;
    }
    return false;
}

bd_rest_coding bd_rest_coding_accept(const char *h)
{
    if (!h)
        return BD_CODING_IDENTITY;
    if (accepts(h, "gzip"))
        return BD_CODING_GZIP;
    if (accepts(h, "deflate"))
        return BD_CODING_DEFLATE;
    return BD_CODING_IDENTITY;
}

const char *bd_rest_coding_name(bd_rest_coding c)
{
    return c == BD_CODING_GZIP ? "gzip" : c == BD_CODING_DEFLATE ? "deflate" : "identity";
}

int bd_rest_inflate(bd_rest_coding c, const char *in, size_t len, size_t max, char **out,
                    size_t *out_len, bd_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window_bits(c)) != Z_OK)
        return bd_error_set(err, BD_ENOMEM, "cannot start decompressing the body");
    size_t cap = len * 4 + 1024 < max + 1 ? len * 4 + 1024 : max + 1;
    char *buf = malloc(cap);
    size_t have = 0;
    int rc = 0, zr = Z_OK;
    const char *src = in;
    size_t left = len;
    while (buf) {
        if (have == cap) {
            if (cap >= max + 1) {
                rc = bd_error_set(err, BD_EINVAL, "the decompressed body is over the limit of %zu "
                                  "bytes (max_message_bytes)", max);
                break;
            }
            size_t ncap = cap * 2 < max + 1 ? cap * 2 : max + 1;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = bd_error_set(err, BD_ENOMEM, "out of memory decompressing the body");
                break;
            }
            buf = nb;
            cap = ncap;
        }
        uInt in_chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
        uInt out_chunk = cap - have > (1u << 30) ? (1u << 30) : (uInt)(cap - have);
        z.next_in = (Bytef *)src;
        z.avail_in = in_chunk;
        z.next_out = (Bytef *)buf + have;
        z.avail_out = out_chunk;
        zr = inflate(&z, Z_NO_FLUSH);
        src += in_chunk - z.avail_in;
        left -= in_chunk - z.avail_in;
        have += out_chunk - z.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = bd_error_set(err, BD_EINVAL, "the %s body is corrupt: %s", bd_rest_coding_name(c),
                              z.msg ? z.msg : "bad data");
            break;
        }
        if (zr == Z_BUF_ERROR && left == 0 && have < cap) {
            rc = bd_error_set(err, BD_EINVAL, "the %s body is truncated", bd_rest_coding_name(c));
            break;
        }
    }
    inflateEnd(&z);
    if (!buf)
        return bd_error_set(err, BD_ENOMEM, "out of memory decompressing the body");
    if (rc) {
        free(buf);
        return rc;
    }
    if (have == cap) {                                    /* room for the NUL */
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            return bd_error_set(err, BD_ENOMEM, "out of memory decompressing the body");
        }
        buf = nb;
    }
    buf[have] = '\0';
    *out = buf;
    *out_len = have;
    return 0;
}

int bd_rest_deflate(bd_rest_coding c, const char *in, size_t len, char **out, size_t *out_len,
                    bd_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(c), 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return bd_error_set(err, BD_ENOMEM, "cannot start compressing the response");
    if (len > UINT32_MAX / 2) {
        deflateEnd(&z);
        return bd_error_set(err, BD_EINVAL, "the response is too large to compress");
    }
    uLong bound = deflateBound(&z, (uLong)len);
    char *buf = malloc(bound);
    if (!buf) {
        deflateEnd(&z);
        return bd_error_set(err, BD_ENOMEM, "out of memory compressing the response");
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)buf;
    z.avail_out = (uInt)bound;
    int zr = deflate(&z, Z_FINISH);
    size_t n = bound - z.avail_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END) {
        free(buf);
        return bd_error_set(err, BD_EIO, "cannot compress the response");
    }
    *out = buf;
    *out_len = n;
    return 0;
}
