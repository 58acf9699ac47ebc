/* Reading whole files in tests (fixtures, references, generated models' metadata). */
#ifndef BD_TESTS_LIB_TL_FILE_H
#define BD_TESTS_LIB_TL_FILE_H

#include <stddef.h>

/* The whole of PATH in a malloc'd buffer with a '\0' after the last byte (so text files are
 * C strings); *LEN (may be NULL) gets the byte count. NULL when the file cannot be opened or
 * read, or is larger than 16 MiB (tests read small files; a huge one is a broken fixture). */
void *tl_read_file(const char *path, size_t *len);

/* The same for a text file, as a string. */
char *tl_read_text(const char *path);

#endif
