/* HTTP body compression for the REST port: Content-Encoding of a request, Accept-Encoding of
 * its response (gzip, and deflate as zlib's format, which is what tritonclient sends). */
#ifndef BD_DAEMON_REST_REST_CODEC_H
#define BD_DAEMON_REST_REST_CODEC_H

#include <stddef.h>

#include "core/error.h"

typedef enum bd_rest_coding { BD_CODING_IDENTITY = 0, BD_CODING_GZIP, BD_CODING_DEFLATE } bd_rest_coding;

/* A Content-Encoding value (NULL = identity) into *OUT; BD_EINVAL for one braid cannot read. */
int  bd_rest_coding_parse(const char *header, bd_rest_coding *out, bd_error *err);
/* The coding an Accept-Encoding value (NULL = none) asks for: gzip first, then deflate;
 * a coding with q=0 is not chosen. */
bd_rest_coding bd_rest_coding_accept(const char *header);
const char    *bd_rest_coding_name(bd_rest_coding c);   /* "gzip", "deflate", "identity" */

/* Decompress IN[0..LEN) into *OUT (malloc'ed, NUL after *OUT_LEN bytes). A result over MAX
 * bytes is refused (BD_EINVAL, "over the limit") without ever allocating more than MAX + 1. */
int  bd_rest_inflate(bd_rest_coding c, const char *in, size_t len, size_t max, char **out,
                     size_t *out_len, bd_error *err);
/* Compress IN[0..LEN) into *OUT (malloc'ed). BD_ENOMEM / BD_EIO on failure. */
int  bd_rest_deflate(bd_rest_coding c, const char *in, size_t len, char **out, size_t *out_len,
                     bd_error *err);

#endif
