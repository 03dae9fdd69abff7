/*
 * write_field.c: an ordinary HDF5 program, with nothing zarr-specific in it.
 *
 * It writes a small model output: a group "/model" with a title, a chunked 2-D float64 field
 * "/model/temperature" (10 x 7 in 4 x 3 chunks, so the edge chunks overhang the shape) with three
 * attributes (a string, a scalar int, a float array), and reads the field back to check it.
 *
 *     write_field out.h5                               -> a native HDF5 file
 *     HDF5_VOL_CONNECTOR=zarr write_field out.zarr     -> a zarr v3 store (with HDF5_PLUGIN_PATH set)
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define NX 10
#define NY 7

/* The value every reader must see at (i, j). */
static double
field_value(int i, int j)
{
    return 273.15 + i * 1.5 - j * 0.25;
}

static int
put_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;
    int   ok;
    H5Tset_size(t, strlen(value) + 1);
    a  = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    ok = a >= 0 && H5Awrite(a, t, value) >= 0;
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
    return ok ? 0 : -1;
}

int
main(int argc, char **argv)
{
    hsize_t dims[2] = {NX, NY}, chunks[2] = {4, 3}, two = 2;
    double  data[NX][NY], back[NX][NY], range[2]        = {200.5, 330.25};
    int     step = 42, errors = 0;
    hid_t   file, grp, space, dcpl, dset, s, a;

    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            data[i][j] = field_value(i, j);

    if ((file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return 1;
    grp = H5Gcreate2(file, "/model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    errors += put_string_attr(grp, "title", "h5zarr demo model") < 0;

    space = H5Screate_simple(2, dims, NULL);
    dcpl  = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunks);
    dset = H5Dcreate2(grp, "temperature", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    errors += H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0;

    errors += put_string_attr(dset, "units", "K") < 0;
    s = H5Screate(H5S_SCALAR);
    a = H5Acreate2(dset, "step", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT);
    errors += H5Awrite(a, H5T_NATIVE_INT, &step) < 0;
    H5Aclose(a);
    H5Sclose(s);
    s = H5Screate_simple(1, &two, NULL);
    a = H5Acreate2(dset, "valid_range", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    errors += H5Awrite(a, H5T_NATIVE_DOUBLE, range) < 0;
    H5Aclose(a);
    H5Sclose(s);

    /* Read back through the same API and check every value. */
    errors += H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0;
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            if (back[i][j] != field_value(i, j))
                errors++;

    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Gclose(grp);
    H5Fclose(file);
    if (errors) {
        fprintf(stderr, "write_field: %d errors\n", errors);
        return 1;
    }
    printf("wrote %s: /model/temperature %dx%d float64 in 4x3 chunks, 4 attributes\n", argv[1], NX, NY);
    return 0;
}
