/*
 * h5_create.c: the first program of an HDF5 tutorial. It creates a file with one 4 x 6 integer
 * dataset, writes it, closes everything, then reopens the file read-only, checks the dataspace and
 * reads every value back.
 *
 *     h5_create [FILE]        (default h5_create.h5)
 */
#include <hdf5.h>
#include <stdio.h>

#define FILE_NAME "h5_create.h5"
#define DATASET   "/dset"
#define DIM0      4
#define DIM1      6

/* Every HDF5 call returns a negative value on failure: stop at the first one. */
#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_create: line %d: %s failed\n", __LINE__, #call);                             \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int
main(int argc, char *argv[])
{
    const char *file_name = argc > 1 ? argv[1] : FILE_NAME;
    hid_t       file_id, dataset_id, dataspace_id;
    hsize_t     dims[2] = {DIM0, DIM1}, read_dims[2];
    int         dset_data[DIM0][DIM1], read_data[DIM0][DIM1];
    int         i, j, rank, nerrors = 0;

    for (i = 0; i < DIM0; i++)
        for (j = 0; j < DIM1; j++)
            dset_data[i][j] = i * DIM1 + j + 1;

    /* Create a new file, a 2-D dataspace and a big-endian 32-bit integer dataset, and write it. */
    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    TRY(dataspace_id = H5Screate_simple(2, dims, NULL));
    TRY(dataset_id =
            H5Dcreate2(file_id, DATASET, H5T_STD_I32BE, dataspace_id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    TRY(H5Dwrite(dataset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, dset_data));
    TRY(H5Dclose(dataset_id));
    TRY(H5Sclose(dataspace_id));
    TRY(H5Fclose(file_id));

    /* Reopen the file and the dataset, check the shape and read the values back. */
    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    TRY(dataset_id = H5Dopen2(file_id, DATASET, H5P_DEFAULT));
    TRY(dataspace_id = H5Dget_space(dataset_id));
    TRY(rank = H5Sget_simple_extent_dims(dataspace_id, read_dims, NULL));
    if (rank != 2 || read_dims[0] != DIM0 || read_dims[1] != DIM1) {
        fprintf(stderr, "h5_create: %s has rank %d, expected a %d x %d dataset\n", DATASET, rank, DIM0, DIM1);
        return 1;
    }
    TRY(H5Dread(dataset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, read_data));
    for (i = 0; i < DIM0; i++)
        for (j = 0; j < DIM1; j++)
            if (read_data[i][j] != dset_data[i][j]) {
                if (nerrors++ == 0)
                    fprintf(stderr, "h5_create: %s[%d][%d] = %d, expected %d\n", DATASET, i, j,
                            read_data[i][j], dset_data[i][j]);
            }
    TRY(H5Sclose(dataspace_id));
    TRY(H5Dclose(dataset_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_create: %d wrong values\n", nerrors);
        return 1;
    }
    printf("h5_create: wrote and read back %s %s (%d x %d int32)\n", file_name, DATASET, DIM0, DIM1);
    return 0;
}
