/* Helpers shared by the daemon unit tests: temporary directories and files. */
#ifndef BD_TESTS_DAEMON_DAEMON_TESTLIB_H
#define BD_TESTS_DAEMON_DAEMON_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>

/* A fresh directory under $TMPDIR (or /tmp); writes its path into OUT. Fails the test on error. */
void tl_mkdtemp(char *out, size_t size);
/* Remove DIR and everything below it (no symlinks followed). */
void tl_rmtree(const char *dir);
/* Write TEXT (LEN bytes; strlen when LEN == (size_t)-1) to PATH, creating parent directories. */
void tl_write(const char *path, const void *text, size_t len);
/* Copy the file SRC to DST (creating DST's parents). */
void tl_copy(const char *src, const char *dst);
/* $BRAID_SOURCE_ROOT/REL (or the compile-time source root) into OUT. */
void tl_source_path(const char *rel, char *out, size_t size);
bool tl_exists(const char *path);

#endif
