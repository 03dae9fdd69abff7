/*
 * test_pointer.c: pointer files (vol/pointer.h). A configuration rule sends new *.nc paths to zarr: the
 * store is made as <name>.zarr and <name> is a pointer that the connector follows on open,
 * is_accessible and delete. Damaged pointers, pointers to missing stores and pointers out of their
 * directory are clear errors that create nothing.
 */
#include "runner.h"

#include <hdf5.h>
#include <sys/stat.h>

#include "h5test.h"

static char dir[400], conf[512];

static int
write_int(const char *path, int value)
{
    hid_t   f, s, d;
    hsize_t n = 1;
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
read_int(const char *path, int *value)
{
    hid_t f, d;
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, value) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* a copy of pointer `from` whose store name is replaced by `store` (same length: the block stays whole) */
static int
edited_copy(const char *from, const char *to, const char *store)
{
    size_t n = 0;
    char  *b = test_slurp(from, &n), *p;
    FILE  *f;
    ASSERT(b && (p = strstr(b, "store=")) != NULL);
    memcpy(p + 6, store, strlen(store));
    ASSERT((f = fopen(to, "wb")) != NULL);
    ASSERT(fwrite(b, 1, n, f) == n);
    fclose(f);
    free(b);
    return 0;
}

static int
test_setup(void)
{
    FILE *f;
    snprintf(dir, sizeof dir, "%s", test_tmpdir("pointer"));
    snprintf(conf, sizeof conf, "%s/rules.conf", dir);
    ASSERT((f = fopen(conf, "w")) != NULL);
    fputs("[path *.nc]\nformat = zarr\n", f);
    fclose(f);
    setenv("H5ZARR_CONFIG", conf, 1);
    return 0;
}

static int
test_create_reopen_delete(void)
{
    char p[600], st[600];
    int  v = 0;
    snprintf(p, sizeof p, "%s/a.nc", dir);
    snprintf(st, sizeof st, "%s/a.nc.zarr", dir);
    if (write_int(p, 41))
        return 1;
    ASSERT(h5t_is_zarr_store(st));
    {
        size_t n = 0;
        char  *b = test_slurp(p, &n);
        ASSERT(b && n > 512 && strncmp(b, "h5zarr pointer v1\nstore=a.nc.zarr\n", 34) == 0);
        ASSERT(memcmp(b + 512, "\x89HDF\r\n\x1a\n", 8) == 0); /* what netCDF looks for */
        free(b);
    }
    if (read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 41);
    /* created again (truncated): the same store, new contents */
    if (write_int(p, 42) || read_int(p, &v))
        return 1;
    ASSERT_EQ_INT(v, 42);
    ASSERT(H5Fis_accessible(p, H5P_DEFAULT) > 0);
    /* H5F_ACC_EXCL on an existing pointer */
    {
        hid_t f;
        H5E_BEGIN_TRY { f = H5Fcreate(p, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT); }
        H5E_END_TRY
        ASSERT(f < 0);
    }
    ASSERT(H5Fdelete(p, H5P_DEFAULT) >= 0);
    ASSERT(access(p, F_OK) != 0 && access(st, F_OK) != 0);
    return 0;
}

static int
expect_open_error(const char *path, const char *msg)
{
    hid_t f;
    char *t;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT(f < 0);
    ASSERT((t = h5t_error_text()) != NULL);
    if (!strstr(t, msg))
        FAILF("'%s' not in the error stack:\n%s", msg, t);
    ASSERT(strstr(t, "h5zarr-DIAG") != NULL);
    free(t);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}

static int
test_bad_pointers(void)
{
    char p[600], q[600], st[600];
    snprintf(p, sizeof p, "%s/b.nc", dir);
    if (write_int(p, 7))
        return 1;
    /* a store that is not there */
    snprintf(q, sizeof q, "%s/gone.nc", dir);
    if (edited_copy(p, q, "xx.nc.zarr") || expect_open_error(q, "that pointer file"))
        return 1;
    snprintf(st, sizeof st, "%s/xx.nc.zarr", dir);
    ASSERT(access(st, F_OK) != 0);
    ASSERT(H5Fis_accessible(q, H5P_DEFAULT) <= 0);
    /* out of its directory */
    snprintf(q, sizeof q, "%s/escape.nc", dir);
    if (edited_copy(p, q, "../b.nc.zar") ||
        expect_open_error(q, "may only name a store in its own directory"))
        return 1;
    /* no store line */
    snprintf(q, sizeof q, "%s/broken.nc", dir);
    if (edited_copy(p, q, ""))
        return 1;
    {
        size_t n = 0;
        char  *b = test_slurp(q, &n), *s = strstr(b, "store=");
        FILE  *f;
        memcpy(s, "stoXe=", 6);
        f = fopen(q, "wb");
        fwrite(b, 1, n, f);
        fclose(f);
        free(b);
    }
    if (expect_open_error(q, "is damaged"))
        return 1;
    return 0;
}

/* netCDF opens a store through its pointer with H5Fopen; when the store is corrupt, that H5Fopen fails
 * with the connector's message naming the key (netCDF then clears the stack: tests/scripts/nc_badinput.sh
 * checks the netCDF side) */
static int
test_corrupt_store(void)
{
    char  p[600], doc[700];
    FILE *f;
    snprintf(p, sizeof p, "%s/c.nc", dir);
    if (write_int(p, 5))
        return 1;
    snprintf(doc, sizeof doc, "%s/c.nc.zarr/zarr.json", dir);
    ASSERT((f = fopen(doc, "w")) != NULL);
    fputs("{\"zarr_format\": 3, \"node_type\": \"gro", f);
    fclose(f);
    if (expect_open_error(p, "zarr.json"))
        return 1;
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(setup),
    TEST_ENTRY(create_reopen_delete),
    TEST_ENTRY(bad_pointers),
    TEST_ENTRY(corrupt_store),
};

int
main(int argc, char **argv)
{
    setenv("HDF5_VOL_CONNECTOR", "zarr", 0);
    return RUN_TESTS(tests);
}
