/*
 * testdata.h: where a test finds one of the shared test data sets that are plain numcodecs or
 * zarr-python output (header-only; include after runner.h).
 *
 * test_data_dir("numcodecs", &dir, &generated) (or "zarr_implementations") sets dir to the folder
 * holding `<set>/`: the shared
 * one ($H5ZARR_SHARED/testdata, ../shared/testdata/MANIFEST.md) when it has the set, as in CI;
 * otherwise, as in a bare clone, a scratch folder of this process into which
 * tests/data-gen/gen_testdata.py, run once per set with Debian's /usr/bin/python3 (numcodecs 0.11,
 * zarr-python 2.13), wrote the same layout; *generated says which (the generated numcodecs set lacks
 * the cases numcodecs 0.11 cannot write; see the script). Returns 0; TEST_SKIP after a "skipped: ..."
 * line naming what is missing when there is no python, script or module to generate it with; 1 when
 * the generator failed otherwise (a failed check is a test failure, not a skip). dir stays valid for
 * the process.
 */
#ifndef H5ZARR_TEST_TESTDATA_H
#define H5ZARR_TEST_TESTDATA_H

#include "runner.h"

#include <sys/wait.h>

#define TEST_PYTHON "/usr/bin/python3"

static inline int
test_data_dir(const char *set, const char **dir, bool *generated)
{
    static struct {
        char set[64], dir[4096];
        bool generated;
        int  rc;
    } cache[4];
    static int  ncache;
    char        path[8192], script[4096], cmd[16384];
    const char *src = getenv("H5ZARR_SRC"), *tmp;
    int         i, rc;

    for (i = 0; i < ncache; i++)
        if (strcmp(cache[i].set, set) == 0) {
            *dir       = cache[i].dir;
            *generated = cache[i].generated;
            return cache[i].rc;
        }
    if (ncache == (int)(sizeof cache / sizeof cache[0]))
        FAILF("test_data_dir: more than %d sets", ncache);
    i    = ncache++;
    *dir = cache[i].dir;
    snprintf(cache[i].set, sizeof cache[i].set, "%s", set);
    snprintf(path, sizeof path, "%s/%s", test_shared_dir(), set);
    if (access(path, R_OK) == 0) {
        snprintf(cache[i].dir, sizeof cache[i].dir, "%s", test_shared_dir());
        *generated = false;
        return 0;
    }
    /* the script: $H5ZARR_SRC (set by ctest), else next to this header */
    if (src)
        snprintf(script, sizeof script, "%s/tests/data-gen/gen_testdata.py", src);
    else {
        const char *slash = strrchr(__FILE__, '/');
        snprintf(script, sizeof script, "%.*s/data-gen/gen_testdata.py", slash ? (int)(slash - __FILE__) : 1,
                 slash ? __FILE__ : ".");
    }
    cache[i].generated = *generated = true;
    if (access(TEST_PYTHON, X_OK) != 0 || access(script, R_OK) != 0 || !(tmp = test_tmpdir(set))) {
        printf("  skipped: %s data (no %s, and no %s or %s to generate it)\n", set, path, TEST_PYTHON,
               script);
        return cache[i].rc = TEST_SKIP;
    }
    snprintf(cache[i].dir, sizeof cache[i].dir, "%s", tmp);
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s'", TEST_PYTHON, script, cache[i].dir, set);
    rc = system(cmd);
    rc = rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
    if (rc == TEST_SKIP) {
        printf("  skipped: %s data (no %s, and %s lacks a module to generate it, see above)\n", set, path,
               TEST_PYTHON);
        return cache[i].rc = TEST_SKIP;
    }
    if (rc != 0) {
        fprintf(stderr, "  %s:%d: %s failed (exit %d) generating %s data into %s\n", __FILE__, __LINE__,
                script, rc, set, cache[i].dir);
        return cache[i].rc = 1;
    }
    printf("  %s data generated with %s (no %s)\n", set, TEST_PYTHON, path);
    return 0;
}

#endif
