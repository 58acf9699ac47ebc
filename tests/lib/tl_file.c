#include "tests/lib/tl_file.h"

#include <stdio.h>
#include <stdlib.h>

#define TL_MAX_FILE ((long)1 << 24)

void *tl_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && n < TL_MAX_FILE && fseek(f, 0, SEEK_SET) == 0 &&
            (buf = malloc((size_t)n + 1))) {
            if (fread(buf, 1, (size_t)n, f) == (size_t)n) {
                buf[n] = '\0';
                if (len)
                    *len = (size_t)n;
            } else {
                free(buf);
                buf = NULL;
            }
        }
    }
    fclose(f);
    return buf;
}

char *tl_read_text(const char *path)
{
    return tl_read_file(path, NULL);
}
