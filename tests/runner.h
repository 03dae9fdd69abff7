/*
 * runner.h: the project's one test runner (header-only).
 *
 * A test file defines `static int test_NAME(void)` functions, lists them in a TEST_LIST, and calls
 * RUN_TESTS(list) from main. `prog` runs them all; `prog NAME...` runs the named ones. Each test
 * returns 0 on success; ASSERT* macros print file:line and the core's error message and return 1.
 * The runner prints one line per test and a closing "N passed, N failed, N skipped" line.
 * A test may return TEST_SKIP (77) after printing why.
 */
#ifndef H5ZARR_TEST_RUNNER_H
#define H5ZARR_TEST_RUNNER_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST_SKIP 77

typedef struct test_entry {
    const char *name;
    int (*fn)(void);
} test_entry;

#define TEST_ENTRY(name)                                                                                     \
    {                                                                                                        \
#name, test_##name                                                                                   \
    }

#define FAILF(...)                                                                                           \
    do {                                                                                                     \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                                    \
        fprintf(stderr, __VA_ARGS__);                                                                        \
        fprintf(stderr, "\n");                                                                               \
        return 1;                                                                                            \
    } while (0)

#define ASSERT(cond)                                                                                         \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            FAILF("assertion failed: %s", #cond);                                                            \
    } while (0)

#define ASSERT_EQ_INT(a, b)                                                                                  \
    do {                                                                                                     \
        long long _a = (long long)(a), _b = (long long)(b);                                                  \
        if (_a != _b)                                                                                        \
            FAILF("%s == %s failed: %lld != %lld", #a, #b, _a, _b);                                          \
    } while (0)

#define ASSERT_STR(a, b)                                                                                     \
    do {                                                                                                     \
        const char *_a = (a), *_b = (b);                                                                     \
        if (!_a || !_b || strcmp(_a, _b) != 0)                                                               \
            FAILF("%s == %s failed: \"%s\" != \"%s\"", #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");      \
    } while (0)

/* For core calls: expects ZARR_OK and prints the core's message otherwise. */
#define ASSERT_OK(expr)                                                                                      \
    do {                                                                                                     \
        int _rc = (expr);                                                                                    \
        if (_rc != 0)                                                                                        \
            FAILF("%s returned %d: %s", #expr, _rc, zarr_errmsg());                                          \
    } while (0)

/* Expects a specific failure code. */
#define ASSERT_ERR(expr, code)                                                                               \
    do {                                                                                                     \
        int _rc = (expr);                                                                                    \
        if (_rc != (code))                                                                                   \
            FAILF("%s returned %d, expected %d (%s)", #expr, _rc, (int)(code), zarr_errmsg());               \
    } while (0)

/* Scratch directories made by test_tmpdir in this process: removed when every test passed (kept for a
 * look otherwise, or when H5ZARR_KEEP_TMP is set). */
static char *runner_tmpdirs[256];
static int   runner_ntmp;

static inline void
runner_remove_tmpdirs(bool remove)
{
    for (int i = 0; i < runner_ntmp; i++) {
        if (!runner_tmpdirs[i])
            continue;
        if (remove) {
            char cmd[4200];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", runner_tmpdirs[i]);
            if (system(cmd) != 0)
                fprintf(stderr, "note: could not remove %s\n", runner_tmpdirs[i]);
        }
        free(runner_tmpdirs[i]);
    }
    runner_ntmp = 0;
}

static inline int
runner_main(int argc, char **argv, const test_entry *tests, size_t n)
{
    int passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        int want = argc < 2;
        for (int a = 1; a < argc; a++)
            if (strcmp(argv[a], tests[i].name) == 0)
                want = 1;
        if (!want)
            continue;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = tests[i].fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (rc == 0) {
            passed++;
            printf("ok      %s (%.1f ms)\n", tests[i].name, ms);
        }
        else if (rc == TEST_SKIP) {
            skipped++;
            printf("skip    %s\n", tests[i].name);
        }
        else {
            failed++;
            printf("FAILED  %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    runner_remove_tmpdirs(failed == 0 && !getenv("H5ZARR_KEEP_TMP"));
    return failed ? 1 : 0;
}

#define RUN_TESTS(list) runner_main(argc, argv, list, sizeof(list) / sizeof((list)[0]))

/* Path of the shared test data folder (../shared/testdata from the project root, or
 * $H5ZARR_SHARED/testdata). */
static inline const char *
test_shared_dir(void)
{
    static char buf[4096];
    const char *env = getenv("H5ZARR_SHARED");
    snprintf(buf, sizeof buf, "%s/testdata", env ? env : "../shared");
    return buf;
}

/* A fresh scratch directory for a test (under $H5ZARR_TEST_TMP or /tmp). Returns a static buffer. */
static inline const char *
test_tmpdir(const char *name)
{
    static char buf[4096];
    const char *base = getenv("H5ZARR_TEST_TMP");
    snprintf(buf, sizeof buf, "%s/h5zarr-test-%s-%d", base ? base : "/tmp", name, (int)getpid());
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    if (system(cmd) != 0)
        return NULL;
    if (runner_ntmp < (int)(sizeof runner_tmpdirs / sizeof runner_tmpdirs[0])) {
        bool seen = false;
        for (int i = 0; i < runner_ntmp; i++)
            seen |= strcmp(runner_tmpdirs[i], buf) == 0;
        if (!seen && (runner_tmpdirs[runner_ntmp] = strdup(buf)))
            runner_ntmp++;
    }
    return buf;
}

/* The whole file at `path`, NUL-terminated (the terminator is not counted in *n); NULL if unreadable.
 * Caller frees. */
static inline void *
test_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long  len;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)len + 1)) && fread(p, 1, (size_t)len, f) == (size_t)len) {
        p[len] = '\0';
        *n     = (size_t)len;
    }
    else {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

/* The directory store's temporary files (.h5zarr-tmp*) left anywhere under `dir`; -1 if it can't tell. */
static inline int
test_tmp_files(const char *dir)
{
    char  cmd[4200], out[64] = "";
    FILE *f;
    snprintf(cmd, sizeof cmd, "find '%s' -name '.h5zarr-tmp*' | wc -l", dir);
    if (!(f = popen(cmd, "r")))
        return -1;
    if (!fgets(out, sizeof out, f))
        out[0] = '\0';
    pclose(f);
    return atoi(out);
}

/* Entries of `dir` other than "." and ".." whose names start with `prefix` (NULL or "": every entry);
 * -1 if `dir` can't be read. */
static inline int
test_dir_count(const char *dir, const char *prefix)
{
    size_t         np = prefix ? strlen(prefix) : 0;
    DIR           *d  = opendir(dir);
    struct dirent *e;
    int            n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
             strncmp(e->d_name, prefix ? prefix : "", np) == 0;
    closedir(d);
    return n;
}

/* A little-endian uint64 at `p` (shard indexes, headers). */
static inline unsigned long long
test_le64(const unsigned char *p)
{
    unsigned long long v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#endif
