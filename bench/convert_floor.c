/*
 * convert_floor.c: HDF5's own floor under h5zarr-convert's reading of a file of many datasets (issue 30's
 * nc10k.nc row; bench/README.md "Process start"): opens every dataset of the root group natively once,
 * asks what the converter asks of it (type, space, creation property list, storage size, offset) and,
 * with a second argument 1, reads its values (datasets up to 1 MiB). Nothing is written.
 *   convert_floor FILE [READ]    prints the number of datasets
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

static long ndatasets;
static char values[1 << 20];

static herr_t
visit(hid_t g, const char *name, const H5L_info2_t *info, void *ud)
{
    int         read = *(int *)ud, rc = 0;
    H5O_info2_t oi;
    hid_t       d, t, s, p;

    (void)info;
    if (H5Oget_info_by_name3(g, name, &oi, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS, H5P_DEFAULT) < 0)
        return -1;
    if (oi.type != H5O_TYPE_DATASET)
        return 0;
    d = H5Dopen2(g, name, H5P_DEFAULT);
    t = H5Dget_type(d);
    s = H5Dget_space(d);
    p = H5Dget_create_plist(d);
    if (d < 0 || t < 0 || s < 0 || p < 0)
        rc = -1;
    (void)H5Dget_offset(d); /* HADDR_UNDEF for chunked and compact datasets: asked, not checked */
    if (!rc && read && H5Dget_storage_size(d) <= sizeof values &&
        H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
        rc = -1;
    H5Pclose(p);
    H5Sclose(s);
    H5Tclose(t);
    H5Dclose(d);
    ndatasets += !rc;
    return rc;
}

int
main(int argc, char **argv)
{
    int   read = argc > 2 && atoi(argv[2]);
    hid_t f;

    if (argc < 2) {
        fprintf(stderr, "usage: convert_floor FILE [READ]\n");
        return 2;
    }
    if ((f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return 1;
    if (H5Literate2(f, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, visit, &read) < 0)
        return 1;
    H5Fclose(f);
    printf("%ld datasets\n", ndatasets);
    return 0;
}
