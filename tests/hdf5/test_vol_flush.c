/*
 * test_vol_flush.c: partial writes through the connector sit in the core's write-back chunk cache;
 * H5Dflush, H5Fflush and H5Dclose must put them in the store, where an independent reader (the core,
 * opening the store on its own) sees them.
 */
#include "runner.h"

#include <hdf5.h>

#include "h5zarr/h5zarr.h"
#include "h5zarr/zarr.h"

/* Reads element (i, j) of int32 array `path` in the store at `dir` with a separate core handle. */
static int
peek(const char *dir, const char *path, uint64_t i, uint64_t j, int32_t *v)
{
    zarr_store *s = NULL;
    zarr_array *a = NULL;
    zarr_region r;
    uint64_t    st[2] = {i, j}, ct[2] = {1, 1};
    int         rc;
    if ((rc = zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s)) != ZARR_OK)
        return rc;
    if ((rc = zarr_array_open(s, path, &a)) == ZARR_OK) {
        zarr_region_box(2, st, ct, &r);
        rc = zarr_array_read(a, &r, v);
    }
    zarr_array_close(a);
    zarr_store_close(s);
    return rc;
}

static int
write_box(hid_t d, hsize_t i, hsize_t j, int value)
{
    hsize_t st[2] = {i, j}, ct[2] = {3, 3}, n = 9;
    int     buf[9];
    hid_t   fs = H5Dget_space(d), ms = H5Screate_simple(1, &n, NULL);
    herr_t  e;
    for (int k = 0; k < 9; k++)
        buf[k] = value;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
    e = H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf);
    H5Sclose(fs);
    H5Sclose(ms);
    return e < 0 ? -1 : 0;
}

static int
test_flush_makes_partial_writes_visible(void)
{
    const char *tmp = test_tmpdir("volflush");
    char        dir[4096];
    hsize_t     dims[2] = {64, 64}, chunks[2] = {16, 16};
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl, d;
    int32_t     v    = -1;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/flush.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    sp   = H5Screate_simple(2, dims, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunks);
    ASSERT((d = H5Dcreate2(f, "x", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);

    /* H5Dflush */
    ASSERT(write_box(d, 10, 10, 7) == 0);
    ASSERT(H5Dflush(d) >= 0);
    ASSERT_OK(peek(dir, "x", 11, 11, &v));
    ASSERT_EQ_INT(v, 7);
    /* H5Fflush */
    ASSERT(write_box(d, 30, 40, 9) == 0);
    ASSERT(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0);
    ASSERT_OK(peek(dir, "x", 32, 42, &v));
    ASSERT_EQ_INT(v, 9);
    /* H5Dclose (file still open) */
    ASSERT(write_box(d, 50, 5, 11) == 0);
    ASSERT(H5Dclose(d) >= 0);
    ASSERT_OK(peek(dir, "x", 50, 5, &v));
    ASSERT_EQ_INT(v, 11);
    ASSERT_OK(peek(dir, "x", 0, 0, &v)); /* untouched: the fill value */
    ASSERT_EQ_INT(v, 0);

    /* A dataset deleted while its chunks are cached leaves nothing behind at file close. */
    ASSERT((d = H5Dcreate2(f, "gone", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(write_box(d, 1, 1, 5) == 0);
    ASSERT(H5Ldelete(f, "gone", H5P_DEFAULT) >= 0);
    H5E_BEGIN_TRY { H5Dclose(d); }
    H5E_END_TRY
    ASSERT(H5Fclose(f) >= 0);
    {
        zarr_store    *s = NULL;
        zarr_node_type t = ZARR_NODE_NONE;
        ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s));
        ASSERT_OK(zarr_node_probe(s, "gone", &t, NULL));
        ASSERT_EQ_INT(t, ZARR_NODE_NONE);
        ASSERT(zarr_store_exists(s, "gone/c/0/0") == ZARR_ENOTFOUND);
        zarr_store_close(s);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(flush_makes_partial_writes_visible)};
    return RUN_TESTS(tests);
}
