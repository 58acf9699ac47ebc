#include "tests/daemon/daemon_testlib.h"

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

void tl_mkdtemp(char *out, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, size, "%s/braid-daemon-test-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    assert_non_null(mkdtemp(out));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st; (void)flag; (void)f;
    remove(path);
    return 0;
}

void tl_rmtree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void mkparents(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
}

void tl_write(const char *path, const void *text, size_t len)
{
    mkparents(path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len == (size_t)-1)
        len = strlen(text);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

void tl_copy(const char *src, const char *dst)
{
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof buf);
    tl_write(dst, buf, n);
}

void tl_source_path(const char *rel, char *out, size_t size)
{
    const char *root = getenv("BRAID_SOURCE_ROOT");
    snprintf(out, size, "%s/%s", root && root[0] ? root : ".", rel);
}

bool tl_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}
