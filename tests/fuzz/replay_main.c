/* Runs a fuzz harness's LLVMFuzzerTestOneInput once on every file named on the command line
 * or found in the directories named there: the seed corpus and every regression input kept
 * from a fuzzing run. Linked with each harness in every build (gcc included), so the test
 * suite replays the corpus under ASan+UBSan without libFuzzer; scripts/fuzz.sh runs the
 * libFuzzer build of the same harness. Exit 0 when every input ran (a crash kills the
 * process, and the sanitizers abort it on a finding). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#define REPLAY_MAX_INPUT (64u << 20)           /* a corpus file larger than this is a mistake */

static int replay_file(const char *path, size_t *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *buf = malloc(REPLAY_MAX_INPUT);
    size_t n = buf ? fread(buf, 1, REPLAY_MAX_INPUT, f) : 0;
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory\n");
        return 1;
    }
    /* An exact-size copy, so ASan sees a read past the input's end. */
    uint8_t *exact = malloc(n ? n : 1);
    if (exact) {
        memcpy(exact, buf, n);
        LLVMFuzzerTestOneInput(exact, n);
        (*count)++;
    }
    free(exact);
    free(buf);
    return exact ? 0 : 1;
}

static int replay_path(const char *path, size_t *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s does not exist\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path, count);
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);   /* sorted: a reproducible order */
    if (n < 0) {
        fprintf(stderr, "replay: cannot read directory %s\n", path);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char child[4096];
            snprintf(child, sizeof child, "%s/%s", path, names[i]->d_name);
            rc |= replay_path(child, count);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    size_t count = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= replay_path(argv[i], &count);
    printf("replayed %zu input(s)\n", count);
    return rc || count == 0;            /* an empty corpus means the test ran nothing */
}
