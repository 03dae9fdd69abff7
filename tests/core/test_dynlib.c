/*
 * test_dynlib.c: the libraries loaded on first use (zarr/dynlib.c). A codec's library is not mapped
 * before the codec runs and is after (liblzf, liblzma, libbz2: linked by nothing else here, so
 * /proc/self/maps says whether the core loaded them), and the kernels give the same bytes back through
 * the loaded tables. A library that is missing, or lacks a function, gives ZARR_EUNSUPPORTED with a
 * message naming the library, what needs it and why, the same on every call; one that loads fills its
 * table with working functions.
 */
#include "h5zarr/zarr.h"
#include "dynlib.h"
#include "kernels.h"
#include "runner.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Whether a library whose file name starts with `name` is mapped in this process (-1: no /proc). */
static int
mapped(const char *name)
{
    char  line[4096];
    int   found = 0;
    FILE *f     = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof line, f)) {
        const char *slash = strrchr(line, '/');
        found             = slash && strncmp(slash + 1, name, strlen(name)) == 0;
    }
    fclose(f);
    return found;
}

static int
test_codec_libraries_load_on_first_use(void)
{
    uint8_t  src[5000], dst[sizeof src];
    zarr_buf enc = ZARR_BUF_INIT;

    if (mapped("liblzf.so") < 0) {
        printf("  no /proc/self/maps: skipped\n");
        return TEST_SKIP;
    }
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i % 251 < 100 ? i % 7 : i * 31);
    ASSERT_EQ_INT(mapped("liblzf.so"), 0);
    ASSERT_EQ_INT(mapped("liblzma.so"), 0);
    ASSERT_EQ_INT(mapped("libbz2.so"), 0);

    ASSERT_OK(zarr__lzf_compress(src, sizeof src, &enc));
    ASSERT(enc.size > 0 && enc.size < sizeof src);
    ASSERT_EQ_INT(mapped("liblzf.so"), 1);
    memset(dst, 0, sizeof dst);
    ASSERT_OK(zarr__lzf_decompress(enc.data, enc.size, dst, sizeof dst));
    ASSERT(memcmp(src, dst, sizeof src) == 0);
    ASSERT_EQ_INT(mapped("liblzma.so"), 0);

    ASSERT_OK(zarr__lzma_compress(1, -1, 6, src, sizeof src, &enc));
    static const uint8_t xz_magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0};
    ASSERT(enc.size > 6 && memcmp(enc.data, xz_magic, 6) == 0); /* an .xz stream */
    memset(dst, 0, sizeof dst);
    ASSERT_OK(zarr__lzma_decompress(0, enc.data, enc.size, dst, sizeof dst));
    ASSERT(memcmp(src, dst, sizeof src) == 0);
    ASSERT_EQ_INT(mapped("liblzma.so"), 1);

    /* decoding first loads too */
    static const uint8_t bz_empty[] = {'B', 'Z', 'h', '9', 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0, 0, 0, 0};
    ASSERT_EQ_INT(mapped("libbz2.so"), 0);
    ASSERT_OK(zarr__bz2_decompress(bz_empty, sizeof bz_empty, dst, 0));
    ASSERT_EQ_INT(mapped("libbz2.so"), 1);
    zarr_buf_free(&enc);
    return 0;
}

int h5zarr_test_no_such_function(void); /* declared for its type only: no library defines it */

#define MISSING_FUNCS(X) X(cos)
ZARR__DYNLIB(missing, MISSING_FUNCS, "libh5zarr_no_such_library.so.0", "the test's codec");
#define LACKING_FUNCS(X) X(cos) X(h5zarr_test_no_such_function)
ZARR__DYNLIB(lacking, LACKING_FUNCS, "libm.so.6", "the test's store");
#define PRESENT_FUNCS(X) X(cos) X(sqrt)
ZARR__DYNLIB(present, PRESENT_FUNCS, "libm.so.6", "the test's filter");

static int
test_missing_library_is_a_clear_error(void)
{
    for (int i = 0; i < 2; i++) { /* the same answer again */
        ASSERT_ERR(zarr__dynlib_load(&missing), ZARR_EUNSUPPORTED);
        ASSERT(strstr(zarr_errmsg(), "can't load libh5zarr_no_such_library.so.0 for the test's codec: "));
    }
    ASSERT(missing_fn.cos == NULL);
    return 0;
}

static int
test_library_lacking_a_function_is_a_clear_error(void)
{
    ASSERT_ERR(zarr__dynlib_load(&lacking), ZARR_EUNSUPPORTED);
    ASSERT_STR(zarr_errmsg(),
               "can't load libm.so.6 for the test's store: it has no h5zarr_test_no_such_function");
    return 0;
}

static int
test_present_library_fills_its_table(void)
{
    ASSERT_OK(zarr__dynlib_load(&present));
    ASSERT_OK(zarr__dynlib_load(&present));
    ASSERT(present_fn.cos(0.0) == 1.0);
    ASSERT(present_fn.sqrt(2.25) == 1.5);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(codec_libraries_load_on_first_use),
    TEST_ENTRY(missing_library_is_a_clear_error),
    TEST_ENTRY(library_lacking_a_function_is_a_clear_error),
    TEST_ENTRY(present_library_fills_its_table),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
