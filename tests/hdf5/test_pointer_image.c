/*
 * test_pointer_image.c: file images of pointer files (issue 27: netCDF's nc_test/tst_inmemory). A
 * program that reads a file's bytes and opens them as an HDF5 file image (H5Pset_file_image with the
 * core driver, H5LTopen_file_image, netCDF's nc_open_mem) gets only the pointer when the file is a
 * pointer to a zarr store: its store is named relative to a directory the image does not have. The
 * open fails with an error naming the pointer and its store instead of showing the pointer's empty
 * HDF5 file; images of native files open as before, and the file opened by name reads the data.
 */
#include "runner.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdlib.h>

#include "h5test.h"

static char dir[400], conf[512], ptr[600], nat[600], store[620];

/* The whole file at `path` (malloc'ed; *n its size). */
static void *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    long  sz;
    void *b;
    if (!f || fseek(f, 0, SEEK_END) || (sz = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
        !(b = malloc((size_t)sz)) || fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        if (f)
            fclose(f);
        return NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static int
write_data(const char *path)
{
    hid_t   f, s, d;
    hsize_t n    = 4;
    int     v[4] = {7, 8, 9, 10};
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
check_data(hid_t f)
{
    hid_t d;
    int   v[4] = {0};
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT(v[0] == 7 && v[1] == 8 && v[2] == 9 && v[3] == 10);
    H5Dclose(d);
    return 0;
}

static int
test_setup(void)
{
    FILE *f;
    hid_t h;
    snprintf(dir, sizeof dir, "%s", test_tmpdir("pointer_image"));
    snprintf(conf, sizeof conf, "%s/rules.conf", dir);
    ASSERT((f = fopen(conf, "w")) != NULL);
    fputs("[path *.nc]\nformat = zarr\n", f);
    fclose(f);
    setenv("H5ZARR_CONFIG", conf, 1);
    snprintf(ptr, sizeof ptr, "%s/data.nc", dir);
    snprintf(nat, sizeof nat, "%s/native.h5", dir);
    if (write_data(ptr) || write_data(nat))
        return 1;
    snprintf(store, sizeof store, "%s.zarr", ptr);
    ASSERT(h5t_is_zarr_store(store)); /* the rule made a pointer and its store */
    ASSERT(h5t_is_native_file(nat));
    /* by name: the pointer leads to the store */
    ASSERT((h = H5Fopen(ptr, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
    if (check_data(h))
        return 1;
    ASSERT(H5Fclose(h) >= 0);
    return 0;
}

/* Opens `bytes` as a file image named `name` with the core driver; the file id or negative (the error
 * stack's messages in msg). */
static hid_t
open_image(const char *name, void *bytes, size_t n, char *msg)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;
    msg[0]     = '\0';
    H5Pset_fapl_core(fapl, 64 * 1024, 0);
    H5Pset_file_image(fapl, bytes, n);
    H5E_BEGIN_TRY { f = H5Fopen(name, H5F_ACC_RDONLY, fapl); }
    H5E_END_TRY
    if (f < 0)
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    H5Pclose(fapl);
    return f;
}

static int
test_pointer_image_refused(void)
{
    size_t n = 0;
    void  *b = slurp(ptr, &n);
    char   msg[4096];
    hid_t  f;
    ASSERT(b != NULL && n >= 512);
    /* under a name that exists nowhere (H5LTopen_file_image makes one up, netCDF too) */
    f = open_image("image_of_data", b, n, msg);
    if (f >= 0)
        FAILF("the image of pointer file '%s' opened (as the pointer's own empty HDF5 file)", ptr);
    if (!strstr(msg, "h5zarr pointer file") || !strstr(msg, "'data.nc.zarr'") || !strstr(msg, "by name"))
        FAILF("the refusal does not name the pointer and its store: %s", msg);
    /* H5LTopen_file_image (copying the buffer, or not) */
    H5E_BEGIN_TRY { f = H5LTopen_file_image(b, n, H5LT_FILE_IMAGE_DONT_COPY | H5LT_FILE_IMAGE_DONT_RELEASE); }
    H5E_END_TRY
    ASSERT(f < 0);
    H5E_BEGIN_TRY { f = H5LTopen_file_image(b, n, 0); }
    H5E_END_TRY
    ASSERT(f < 0);
    /* a damaged pointer's image: refused too, saying what is wrong */
    memcpy((char *)b + strlen("h5zarr pointer v1\n"), "nostore", 7);
    f = open_image("image_of_damaged", b, n, msg);
    ASSERT(f < 0);
    if (!strstr(msg, "pointer file"))
        FAILF("the refusal of a damaged pointer's image does not say so: %s", msg);
    free(b);
    return 0;
}

/* Images of native files open as before, with the data. */
static int
test_native_image_opens(void)
{
    size_t n = 0;
    void  *b = slurp(nat, &n);
    char   msg[4096];
    hid_t  f;
    ASSERT(b != NULL);
    ASSERT((f = open_image("image_of_native", b, n, msg)) >= 0);
    if (check_data(f))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5LTopen_file_image(b, n, 0)) >= 0);
    if (check_data(f))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    free(b);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup), TEST_ENTRY(pointer_image_refused),
                                   TEST_ENTRY(native_image_opens)};

int
main(int argc, char **argv)
{
    setenv("HDF5_VOL_CONNECTOR", "zarr", 0);
    return RUN_TESTS(tests);
}
