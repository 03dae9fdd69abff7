/*
 * main.c: a program outside the h5zarr tree (built by tests/scripts/install.sh against an installed
 * h5zarr, once with CMake's find_package and once with pkg-config). It chooses the zarr connector in
 * code with H5Pset_fapl_zarr, writes a 4x5 int dataset "values" (value 10*i + j) into a new zarr v3
 * store, closes it, opens it again and checks every value read back.
 */
#include <h5zarr/h5zarr.h>

#include <stdio.h>

#define NI 4
#define NJ 5

int
main(int argc, char **argv)
{
    const char *path    = argc > 1 ? argv[1] : "out.zarr";
    hsize_t     dims[2] = {NI, NJ};
    int         w[NI][NJ], r[NI][NJ];
    hid_t       fapl, file, space, dset;

    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++) {
            w[i][j] = 10 * i + j;
            r[i][j] = -1;
        }

    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_fapl_zarr(fapl, 3) < 0) {
        fprintf(stderr, "app: H5Pset_fapl_zarr failed (is HDF5_PLUGIN_PATH the h5zarr plugin folder?)\n");
        return 1;
    }
    file  = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    space = H5Screate_simple(2, dims, NULL);
    dset  = file < 0 || space < 0
                ? H5I_INVALID_HID
                : H5Dcreate2(file, "values", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0 || H5Dwrite(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) < 0 ||
        H5Dclose(dset) < 0 || H5Sclose(space) < 0 || H5Fclose(file) < 0) {
        fprintf(stderr, "app: writing %s failed\n", path);
        return 1;
    }
    if ((file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0 ||
        (dset = H5Dopen2(file, "values", H5P_DEFAULT)) < 0 ||
        H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) < 0 || H5Dclose(dset) < 0 ||
        H5Fclose(file) < 0) {
        fprintf(stderr, "app: reading %s back failed\n", path);
        return 1;
    }
    H5Pclose(fapl);
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++)
            if (r[i][j] != 10 * i + j) {
                fprintf(stderr, "app: values[%d][%d] = %d, expected %d\n", i, j, r[i][j], 10 * i + j);
                return 1;
            }
    printf("app: wrote and read back %dx%d values in %s\n", NI, NJ, path);
    return 0;
}
