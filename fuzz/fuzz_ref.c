/*
 * fuzz_ref.c: harness for the reference store (zarr/store_ref.c). The input is a reference file's text,
 * written to a scratch directory that also holds a 64-byte file data.bin. Opening it must succeed or
 * fail with a message; when it opens, every key is read whole and by size, and each read
 * succeeds or fails with a message, never past the data it names (a read of data.bin must stay within
 * its 64 bytes: the directory store checks each range against the file).
 */
#include "fuzz_common.h"
#include "store_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], path[300];

static int
read_key(const char *key, uint64_t size, void *ud)
{
    zarr_store *s = ud;
    zarr_buf    b = ZARR_BUF_INIT;
    uint64_t    n = 0;
    int         rc;
    (void)size;
    rc = zarr_store_get(s, key, &b);
    FUZZ_CHECK(rc == ZARR_OK || zarr_errmsg()[0], "get '%s' failed (%d) without a message", key, rc);
    if (zarr_store_size(s, key, &n) == ZARR_OK && rc == ZARR_OK)
        FUZZ_CHECK(n == b.size, "'%s': size %llu, read %zu", key, (unsigned long long)n, b.size);
    zarr_buf_free(&b);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zarr_store *s = NULL;
    FILE       *f;
    int         rc;
    if (!dir[0]) {
        unsigned char bytes[64];
        snprintf(dir, sizeof dir, "/tmp/h5zarr-fuzz-ref-%d", (int)getpid());
        snprintf(path, sizeof path, "mkdir -p '%s'", dir);
        if (system(path) != 0)
            abort();
        for (int i = 0; i < 64; i++)
            bytes[i] = (unsigned char)i;
        snprintf(path, sizeof path, "%s/data.bin", dir);
        if (!(f = fopen(path, "wb")) || fwrite(bytes, 1, 64, f) != 64 || fclose(f) != 0)
            abort();
        snprintf(path, sizeof path, "%s/r.json", dir);
    }
    if (!(f = fopen(path, "wb")) || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    rc = zarr_store_open_ref(path, ZARR_STORE_RDONLY, &s);
    FUZZ_CHECK(rc == ZARR_OK || zarr_errmsg()[0], "open failed (%d) without a message", rc);
    FUZZ_CHECK((rc == ZARR_OK) == (s != NULL), "open returned %d with store %p", rc, (void *)s);
    if (s) {
        zarr_store_list_keys(s, "", read_key, s);
        zarr_store_close(s);
    }
    return 0;
}
