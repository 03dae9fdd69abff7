/*
 * test_plugin.c: the connector loads from HDF5_PLUGIN_PATH, registers under the name "zarr", answers
 * introspection honestly, takes its info string, and fails clearly on paths that are not zarr stores.
 */
#include "runner.h"

#include <hdf5.h>
#include <sys/stat.h>

#include "h5zarr/h5zarr.h"
#include "h5test.h"

static int
test_registers_by_name(void)
{
    hid_t       vol = H5VLregister_connector_by_name(H5ZARR_VOL_NAME, H5P_DEFAULT), fapl, f;
    char        name[64], path[4096];
    const char *dir = test_tmpdir("reg");
    ASSERT(vol >= 0 && dir);
    /* a file created through the connector names it */
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    ASSERT(H5Pset_vol(fapl, vol, NULL) >= 0);
    snprintf(path, sizeof path, "%s/named.zarr", dir);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5VLget_connector_name(f, name, sizeof name) > 0);
    ASSERT_STR(name, "zarr");
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_path_exists(path, "zarr.json"));
    H5Pclose(fapl);
    ASSERT(H5VLis_connector_registered_by_name("zarr") > 0);
    ASSERT(H5VLis_connector_registered_by_value(H5ZARR_VOL_VALUE) > 0);
    H5VLclose(vol);
    return 0;
}

static int
test_cap_flags(void)
{
    hid_t    fapl  = H5Pcreate(H5P_FILE_ACCESS);
    uint64_t flags = 0;
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT(H5Pget_vol_cap_flags(fapl, &flags) >= 0);
    ASSERT(flags & H5VL_CAP_FLAG_DATASET_BASIC);
    ASSERT(flags & H5VL_CAP_FLAG_CREATION_ORDER);
    ASSERT(!(flags & H5VL_CAP_FLAG_NATIVE_FILES)); /* we do not write HDF5 files */
    ASSERT(!(flags & H5VL_CAP_FLAG_ASYNC));
    H5Pclose(fapl);
    return 0;
}

/* H5Pset_fapl_zarr(fapl, 2) and (fapl, 3) choose the store version; the store is really zarr. */
static int
test_fapl_version(void)
{
    const char *dir = test_tmpdir("fapl");
    char        p2[4096], p3[4096];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f;
    ASSERT(dir);
    snprintf(p2, sizeof p2, "%s/v2.zarr", dir);
    snprintf(p3, sizeof p3, "%s/v3.zarr", dir);
    ASSERT(H5Pset_fapl_zarr(fapl, 2) >= 0);
    ASSERT((f = H5Fcreate(p2, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_path_exists(p2, ".zgroup"));
    ASSERT(!h5t_path_exists(p2, "zarr.json"));
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(p3, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_path_exists(p3, "zarr.json"));
    ASSERT(!h5t_path_exists(p3, ".zgroup"));
    /* an existing store opens as whatever version it is, without being told */
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fopen(p2, H5F_ACC_RDWR, fapl)) >= 0);
    hid_t g = H5Gcreate2(f, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT(g >= 0);
    H5Gclose(g);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_path_exists(p2, "sub/.zgroup"));
    H5Pclose(fapl);
    return 0;
}

/* Opening what is not a zarr store fails with the connector's own message on the error stack. The
 * printed stack is captured and searched (H5Ewalk2 does not hand out descriptions reliably in 1.14.5). */
static int
test_open_not_zarr(void)
{
    const char *dir  = test_tmpdir("notzarr");
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f;
    char       *text;
    htri_t      acc;
    ASSERT(dir && H5Pset_fapl_zarr(fapl, 3) >= 0);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    f = H5Fopen(dir, H5F_ACC_RDONLY, fapl);
    ASSERT(f < 0);
    text = h5t_error_text();
    ASSERT(text);
    ASSERT(strstr(text, "h5zarr-DIAG") != NULL); /* the connector's own error class */
    ASSERT(strstr(text, "not a zarr store") != NULL);
    free(text);
    H5Eclear2(H5E_DEFAULT);
    /* is_accessible answers false, quietly, for non-zarr and missing paths */
    acc = H5Fis_accessible(dir, fapl);
    ASSERT(acc == 0);
    acc = H5Fis_accessible("/nonexistent/h5zarr/path", fapl);
    ASSERT(acc <= 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(registers_by_name), TEST_ENTRY(cap_flags),
                                       TEST_ENTRY(fapl_version), TEST_ENTRY(open_not_zarr)};
    return RUN_TESTS(tests);
}
