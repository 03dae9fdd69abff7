/*
 * replay.c: runs one fuzz harness (linked in) over files, without libFuzzer. Built with the normal
 * compiler in every build, so ctest (fuzz.replay_<harness>) replays the seed corpus and every
 * regression input; under `make asan` the same runs are checked by ASan+UBSan.
 *
 *   fuzz_<h>_replay [--gen DIR] PATH...
 *
 * PATH is a file or a directory (walked recursively; every regular file except README is an input).
 * A missing PATH is reported and skipped (shared test data may be absent), but at least one input
 * must run. --gen DIR first asks
 * the harness to write generated seeds into DIR (fuzz_gen_seeds, defined by harnesses that can make
 * seeds with the core's own encoders) and then replays DIR too.
 */
#define _DEFAULT_SOURCE

#include "fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* Optional: harnesses that can generate seeds define it. */
int fuzz_gen_seeds(const char *dir) __attribute__((weak));

static size_t ninputs;

static int
run_file(const char *path)
{
    FILE    *f   = fopen(path, "rb");
    uint8_t *buf = NULL;
    long     n;
    if (!f) {
        fprintf(stderr, "replay: can't open %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        fprintf(stderr, "replay: can't size %s\n", path);
        return 1;
    }
    /* an exact-size heap copy: ASan sees any read past the input */
    if (!(buf = malloc(n ? (size_t)n : 1)) || (n && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fclose(f);
        free(buf);
        fprintf(stderr, "replay: can't read %s\n", path);
        return 1;
    }
    fclose(f);
    if (getenv("FUZZ_REPLAY_VERBOSE"))
        fprintf(stderr, "replay: %s (%ld bytes)\n", path, n);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    ninputs++;
    return 0;
}

static int
run_path(const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: skipping %s: %s\n", path, strerror(errno));
        return 0;
    }
    if (S_ISREG(st.st_mode))
        return run_file(path);
    if (!S_ISDIR(st.st_mode) || depth > 16)
        return 0;
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: can't list %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct dirent *e;
    int            rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "README") == 0)
            continue;
        size_t n   = strlen(path) + strlen(e->d_name) + 2;
        char  *sub = malloc(n);
        if (!sub) {
            closedir(d);
            return 1;
        }
        snprintf(sub, n, "%s/%s", path, e->d_name);
        rc |= run_path(sub, depth + 1);
        free(sub);
    }
    closedir(d);
    return rc;
}

int
main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gen") == 0 && i + 1 < argc) {
            const char *dir = argv[++i];
            if (!fuzz_gen_seeds) {
                fprintf(stderr, "replay: this harness generates no seeds\n");
                return 2;
            }
            if (fuzz_gen_seeds(dir) != 0) {
                fprintf(stderr, "replay: generating seeds into %s failed\n", dir);
                return 1;
            }
            rc |= run_path(dir, 0);
            continue;
        }
        rc |= run_path(argv[i], 0);
    }
    printf("replay: %zu inputs run%s\n", ninputs, rc ? ", some could not be read" : "");
    if (ninputs == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    return rc;
}
