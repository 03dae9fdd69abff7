/*
 * test_mixed.c: mixed mode. With HDF5_VOL_CONNECTOR=zarr set for the whole process (as a site would
 * export it), one program reads a native .h5, writes a .zarr store and a new native .h5; objects and
 * links are copied between the two kinds of file (H5Ocopy, H5Lcopy, H5Lmove), and external links are
 * followed from a store into a native file and back. The native input is never modified.
 *
 * H5ZARR_MIXED_OUT=<dir> keeps the files there (tests/scripts/mixed.sh reads the store with zarrita and
 * zarr-python).
 */
#include "runner.h"

#include <hdf5.h>
#include <sys/stat.h>

#include "h5test.h"

static char in_h5[512], out_h5[512], out_zarr[512], dir[400];

/* the input, written natively before anything else (its own fapl names the native connector) */
static int
make_input(void)
{
    hid_t   fapl    = H5Pcreate(H5P_FILE_ACCESS), f, g, s, d, a;
    hsize_t dims[2] = {4, 6}, one = 3;
    int     v[24], av[3]          = {7, 8, 9};
    for (int i = 0; i < 24; i++)
        v[i] = i * 10 - 5;
    ASSERT(H5Pset_vol(fapl, H5VL_NATIVE, NULL) >= 0);
    ASSERT((f = H5Fcreate(in_h5, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Screate_simple(2, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(g, "d", H5T_STD_I32BE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Sclose(s);
    ASSERT((s = H5Screate_simple(1, &one, NULL)) >= 0);
    ASSERT((a = H5Acreate2(d, "triple", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, av) >= 0);
    H5Aclose(a);
    H5Sclose(s);
    H5Dclose(d);
    ASSERT(H5Lcreate_soft("/grp/d", f, "soft_d", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lcreate_external("elsewhere.h5", "/x", f, "ext_x", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    H5Pclose(fapl);
    return 0;
}

static int
check_d(hid_t loc, const char *name)
{
    int   v[24] = {0};
    hid_t d     = H5Dopen2(loc, name, H5P_DEFAULT);
    ASSERT(d >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    for (int i = 0; i < 24; i++)
        ASSERT_EQ_INT(v[i], i * 10 - 5);
    H5Dclose(d);
    return 0;
}

static void  *input_before;
static size_t input_size;

static int
test_setup(void)
{
    const char *keep = getenv("H5ZARR_MIXED_OUT");
    snprintf(dir, sizeof dir, "%s", keep ? keep : test_tmpdir("mixed"));
    snprintf(in_h5, sizeof in_h5, "%s/in.h5", dir);
    snprintf(out_h5, sizeof out_h5, "%s/out.h5", dir);
    snprintf(out_zarr, sizeof out_zarr, "%s/out.zarr", dir);
    if (make_input())
        return 1;
    ASSERT(h5t_is_native_file(in_h5));
    ASSERT((input_before = test_slurp(in_h5, &input_size)) != NULL);
    return 0;
}

/* read native, write zarr and native, all under the one global setting (no fapl in the code) */
static int
test_read_native_write_both(void)
{
    hid_t   in, oz, oh, s, d;
    hsize_t dims[2] = {4, 6};
    int     v[24];
    ASSERT((in = H5Fopen(in_h5, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
    ASSERT((d = H5Dopen2(in, "grp/d", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    ASSERT_EQ_INT(v[23], 225);
    for (int i = 0; i < 24; i++)
        v[i] *= 2;
    ASSERT((oz = H5Fcreate(out_zarr, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((oh = H5Fcreate(out_h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Screate_simple(2, dims, NULL)) >= 0);
    for (int k = 0; k < 2; k++) {
        hid_t f = k ? oh : oz;
        ASSERT((d = H5Dcreate2(f, "doubled", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        H5Dclose(d);
    }
    H5Sclose(s);
    /* both kinds open at once; an object of each is told apart by its connector class */
    ASSERT(H5Fclose(oh) >= 0);
    ASSERT(H5Fclose(oz) >= 0);
    ASSERT(H5Fclose(in) >= 0);
    ASSERT(h5t_is_zarr_store(out_zarr));
    ASSERT(h5t_is_native_file(out_h5));
    return 0;
}

static int
test_object_copy_both_ways(void)
{
    hid_t in, oz, oh, d, a;
    int   av[3] = {0}, v[24];
    ASSERT((in = H5Fopen(in_h5, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
    ASSERT((oz = H5Fopen(out_zarr, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0);
    ASSERT((oh = H5Fopen(out_h5, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0);
    /* native -> zarr: a group with a dataset and its attribute */
    ASSERT(H5Ocopy(in, "grp", oz, "copied", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    if (check_d(oz, "copied/d"))
        return 1;
    ASSERT((a = H5Aopen_by_name(oz, "copied/d", "triple", H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(a, H5T_NATIVE_INT, av) >= 0);
    H5Aclose(a);
    ASSERT(av[0] == 7 && av[1] == 8 && av[2] == 9);
    /* zarr -> native */
    ASSERT(H5Ocopy(oz, "doubled", oh, "from_zarr", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((d = H5Dopen2(oh, "from_zarr", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    for (int i = 0; i < 24; i++)
        ASSERT_EQ_INT(v[i], 2 * (i * 10 - 5));
    /* without attributes, as the object copy plist asks */
    {
        hid_t       cp = H5Pcreate(H5P_OBJECT_COPY);
        unsigned    n;
        H5O_info2_t oi;
        ASSERT(H5Pset_copy_object(cp, H5O_COPY_WITHOUT_ATTR_FLAG) >= 0);
        ASSERT(H5Ocopy(in, "grp/d", oz, "bare", cp, H5P_DEFAULT) >= 0);
        H5Pclose(cp);
        ASSERT(H5Oget_info_by_name3(oz, "bare", &oi, H5O_INFO_NUM_ATTRS, H5P_DEFAULT) >= 0);
        n = (unsigned)oi.num_attrs;
        ASSERT_EQ_INT(n, 0);
    }
    ASSERT(H5Fclose(oh) >= 0);
    ASSERT(H5Fclose(oz) >= 0);
    ASSERT(H5Fclose(in) >= 0);
    ASSERT(h5t_is_native_file(out_h5));
    return 0;
}

static int
test_link_copy_across(void)
{
    hid_t       in, oz, oh;
    char        buf[64] = "";
    H5L_info2_t li;
    ASSERT((in = H5Fopen(in_h5, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
    ASSERT((oz = H5Fopen(out_zarr, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0);
    ASSERT((oh = H5Fopen(out_h5, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0);
    /* soft and external links from the native file into the store */
    ASSERT(H5Lcopy(in, "soft_d", oz, "soft_d", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lget_info2(oz, "soft_d", &li, H5P_DEFAULT) >= 0 && li.type == H5L_TYPE_SOFT);
    ASSERT(H5Lget_val(oz, "soft_d", buf, sizeof buf, H5P_DEFAULT) >= 0);
    ASSERT_STR(buf, "/grp/d");
    ASSERT(H5Lcopy(in, "ext_x", oz, "ext_x", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lget_info2(oz, "ext_x", &li, H5P_DEFAULT) >= 0 && li.type == H5L_TYPE_EXTERNAL);
    /* a soft link moved from the store into the native file */
    ASSERT(H5Lcreate_soft("/doubled", oz, "to_move", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lmove(oz, "to_move", oh, "moved", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(oz, "to_move", H5P_DEFAULT) == 0);
    ASSERT(H5Lget_info2(oh, "moved", &li, H5P_DEFAULT) >= 0 && li.type == H5L_TYPE_SOFT);
    /* a hard link can't cross: a clear error */
    {
        herr_t e;
        H5E_BEGIN_TRY { e = H5Lcopy(in, "grp", oz, "hard", H5P_DEFAULT, H5P_DEFAULT); }
        H5E_END_TRY
        ASSERT(e < 0);
        ASSERT(H5Lexists(oz, "hard", H5P_DEFAULT) == 0);
    }
    ASSERT(H5Fclose(oh) >= 0);
    ASSERT(H5Fclose(oz) >= 0);
    ASSERT(H5Fclose(in) >= 0);
    return 0;
}

static int
test_external_links_both_ways(void)
{
    hid_t oz, oh;
    ASSERT((oz = H5Fopen(out_zarr, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0);
    ASSERT((oh = H5Fopen(out_h5, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0);
    /* store -> native file */
    ASSERT(H5Lcreate_external(in_h5, "/grp/d", oz, "to_native", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    if (check_d(oz, "to_native"))
        return 1;
    /* native file -> store */
    ASSERT(H5Lcreate_external(out_zarr, "/copied/d", oh, "to_zarr", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    if (check_d(oh, "to_zarr"))
        return 1;
    {
        hid_t o = H5Oopen(oh, "to_zarr", H5P_DEFAULT);
        ASSERT(o >= 0);
        ASSERT(H5Iget_type(o) == H5I_DATASET);
        H5Oclose(o);
    }
    ASSERT(H5Fclose(oh) >= 0);
    ASSERT(H5Fclose(oz) >= 0);
    return 0;
}

static int
test_input_unchanged(void)
{
    size_t n     = 0;
    void  *after = test_slurp(in_h5, &n);
    ASSERT(after != NULL);
    ASSERT_EQ_INT(n, input_size);
    ASSERT(memcmp(after, input_before, n) == 0);
    free(after);
    ASSERT(h5t_is_native_file(out_h5));
    ASSERT(h5t_is_zarr_store(out_zarr));
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(setup),
    TEST_ENTRY(read_native_write_both),
    TEST_ENTRY(object_copy_both_ways),
    TEST_ENTRY(link_copy_across),
    TEST_ENTRY(external_links_both_ways),
    TEST_ENTRY(input_unchanged),
};

int
main(int argc, char **argv)
{
    /* the one global setting, before HDF5 starts (tests/scripts/mixed.sh sets its own) */
    setenv("HDF5_VOL_CONNECTOR", "zarr", 0);
    return RUN_TESTS(tests);
}
