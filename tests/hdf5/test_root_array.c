/*
 * test_root_array.c: stores whose root node is an array (zarr.open_array, GDAL) open through the
 * connector; the array is the dataset /data (docs/FORMAT.md) in a read-only root group. Stores are
 * written by the core (v2 and v3) and, when /usr/bin/python3 has zarr, by zarr-python's open_array.
 */
#include "runner.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "h5zarr/h5zarr.h"
#include "h5zarr/zarr.h"

/* Writes a root array int32 [6][5] = i*5+j, chunks [4][2], with attribute units="m", via the core. */
static int
make_core_root_array(const char *dir, int fmt)
{
    zarr_store      *s        = NULL;
    zarr_array      *a        = NULL;
    zarr_array_meta *m        = NULL;
    zarr_dtype      *t        = zarr_dtype_new(ZARR_INT, 4);
    uint64_t         shape[2] = {6, 5}, chunks[2] = {4, 2};
    zarr_region      r;
    int32_t          v[30];
    int              rc;
    if (!t)
        return -1;
    t->endian = '<';
    for (int i = 0; i < 30; i++)
        v[i] = i;
    if ((rc = zarr_store_open_dir(dir, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &s)) != ZARR_OK)
        return rc;
    if ((rc = zarr_array_meta_new(fmt, 2, shape, chunks, t, &m)) == ZARR_OK &&
        (rc = zarr_array_create(s, "", m, false, &a)) == ZARR_OK) {
        zarr_region_all(zarr_array_meta_get(a), &r);
        rc = zarr_array_write(a, &r, v);
    }
    zarr_array_close(a);
    zarr_store_close(s);
    return rc;
}

/* Checks the root-array store at `dir` reads as /data int32 [6][5] = 0..29. */
static int
check_store(const char *dir, bool python)
{
    hid_t      fapl    = H5Pcreate(H5P_FILE_ACCESS), f, d, s, t, g, sp;
    hsize_t    dims[2] = {0, 0}, n = 0;
    int32_t    v[30], row[5];
    H5G_info_t gi;
    char       name[64] = "";

    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    /* the root group holds exactly one link, "data", a dataset */
    ASSERT(H5Gget_info(f, &gi) >= 0);
    ASSERT_EQ_INT((int)gi.nlinks, 1);
    ASSERT(H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, 0, name, sizeof name, H5P_DEFAULT) > 0);
    ASSERT_STR(name, "data");
    ASSERT(H5Aget_num_attrs(f) == 0);
    ASSERT((d = H5Dopen2(f, "/data", H5P_DEFAULT)) >= 0);
    s = H5Dget_space(d);
    ASSERT_EQ_INT(H5Sget_simple_extent_ndims(s), 2);
    H5Sget_simple_extent_dims(s, dims, NULL);
    ASSERT_EQ_INT((int)dims[0], 6);
    ASSERT_EQ_INT((int)dims[1], 5);
    t = H5Dget_type(d);
    ASSERT(H5Tequal(t, H5T_STD_I32LE) > 0);
    H5Tclose(t);
    memset(v, 0xff, sizeof v);
    ASSERT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    for (int i = 0; i < 30; i++)
        ASSERT_EQ_INT(v[i], i);
    /* a hyperslab crossing chunks: row 4 */
    {
        hsize_t st[2] = {4, 0}, ct[2] = {1, 5}, five = 5;
        hid_t   ms = H5Screate_simple(1, &five, NULL);
        H5Sselect_hyperslab(s, H5S_SELECT_SET, st, NULL, ct, NULL);
        ASSERT(H5Dread(d, H5T_NATIVE_INT32, ms, s, H5P_DEFAULT, row) >= 0);
        for (int j = 0; j < 5; j++)
            ASSERT_EQ_INT(row[j], 20 + j);
        H5Sclose(ms);
    }
    if (python)
        ASSERT(H5Aexists(d, "units") > 0);
    H5Sclose(s);
    ASSERT(H5Dclose(d) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    /* read-write: the array's data can be written, the root group can't gain objects */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "data", H5P_DEFAULT)) >= 0);
    v[7] = 700;
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT(H5Dclose(d) >= 0);
    H5E_BEGIN_TRY { g = H5Gcreate2(f, "newgroup", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(g < 0);
    n  = 1;
    sp = H5Screate_simple(1, &n, NULL);
    H5E_BEGIN_TRY { d = H5Dcreate2(f, "other", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(d < 0);
    H5Sclose(sp);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Lexists(f, "newgroup", H5P_DEFAULT) <= 0);
    ASSERT(H5Lexists(f, "other", H5P_DEFAULT) <= 0);
    ASSERT((d = H5Dopen2(f, "data", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT_EQ_INT(v[7], 700);
    ASSERT_EQ_INT(v[8], 8);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_core_root_arrays_v2_v3(void)
{
    const char *tmp = test_tmpdir("rootarr");
    char        dir[4096];
    ASSERT(tmp);
    for (int fmt = 2; fmt <= 3; fmt++) {
        snprintf(dir, sizeof dir, "%s/root%d.zarr", tmp, fmt);
        ASSERT_OK(make_core_root_array(dir, fmt));
        ASSERT(check_store(dir, false) == 0);
    }
    return 0;
}

static int
test_zarr_python_open_array(void)
{
    const char *tmp = test_tmpdir("rootarr_py");
    char        dir[4096], cmd[8192];
    ASSERT(tmp);
    if (system("/usr/bin/python3 -c 'import zarr' >/dev/null 2>&1") != 0) {
        printf("  /usr/bin/python3 has no zarr module\n");
        return TEST_SKIP;
    }
    snprintf(dir, sizeof dir, "%s/py.zarr", tmp);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import zarr, numpy as np; "
             "a = zarr.open_array('%s', mode='w', shape=(6, 5), chunks=(4, 2), dtype='<i4'); "
             "a[:] = np.arange(30, dtype='<i4').reshape(6, 5); a.attrs['units'] = 'm'\"",
             dir);
    ASSERT(system(cmd) == 0);
    ASSERT(check_store(dir, true) == 0);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(core_root_arrays_v2_v3),
                                       TEST_ENTRY(zarr_python_open_array)};
    return RUN_TESTS(tests);
}
