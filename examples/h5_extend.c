/*
 * h5_extend.c: an extendible dataset. The dataset has an unlimited first dimension; the program
 * writes 3 rows, then appends twice (2 rows, then 3 rows), each time growing the dataset with
 * H5Dset_extent and writing only the new rows through a hyperslab. It reopens the file and checks
 * the current and maximum dimensions and every value.
 *
 *     h5_extend [FILE]        (default h5_extend.h5)
 */
#include <hdf5.h>
#include <stdio.h>

#define FILE_NAME "h5_extend.h5"
#define DATASET   "extendible"
#define NCOLS     4
#define NROWS     8 /* 3 + 2 + 3 */

#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_extend: line %d: %s failed\n", __LINE__, #call);                             \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

/* The value of row r, column c, whichever write put it there. */
static int
value(int r, int c)
{
    return 100 * (r + 1) + c;
}

/* Grows the dataset to `new_rows` rows and writes rows [old_rows, new_rows) from `rows`. */
static int
append_rows(hid_t dset_id, hsize_t old_rows, hsize_t new_rows, int rows[][NCOLS])
{
    hsize_t size[2] = {new_rows, NCOLS}, start[2] = {old_rows, 0}, count[2] = {new_rows - old_rows, NCOLS};
    hid_t   file_space, mem_space;
    herr_t  status;

    if (H5Dset_extent(dset_id, size) < 0)
        return -1;
    if ((file_space = H5Dget_space(dset_id)) < 0) /* the space must be fetched again after the extent */
        return -1;
    if ((mem_space = H5Screate_simple(2, count, NULL)) < 0)
        return -1;
    status = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL);
    if (status >= 0)
        status = H5Dwrite(dset_id, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, rows);
    H5Sclose(mem_space);
    H5Sclose(file_space);
    return status;
}

int
main(int argc, char *argv[])
{
    const char *file_name = argc > 1 ? argv[1] : FILE_NAME;
    hsize_t     dims[2] = {3, NCOLS}, maxdims[2] = {H5S_UNLIMITED, NCOLS}, chunk[2] = {2, NCOLS};
    hsize_t     read_dims[2], read_max[2];
    hid_t       file_id, space_id, dcpl_id, dset_id;
    int         first[3][NCOLS], second[2][NCOLS], third[3][NCOLS], rdata[NROWS][NCOLS];
    int         r, c, nerrors = 0;

    for (c = 0; c < NCOLS; c++) {
        for (r = 0; r < 3; r++)
            first[r][c] = value(r, c);
        for (r = 0; r < 2; r++)
            second[r][c] = value(3 + r, c);
        for (r = 0; r < 3; r++)
            third[r][c] = value(5 + r, c);
    }

    /* An unlimited dimension needs a chunked layout. */
    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    TRY(space_id = H5Screate_simple(2, dims, maxdims));
    TRY(dcpl_id = H5Pcreate(H5P_DATASET_CREATE));
    TRY(H5Pset_chunk(dcpl_id, 2, chunk));
    TRY(dset_id = H5Dcreate2(file_id, DATASET, H5T_STD_I32LE, space_id, H5P_DEFAULT, dcpl_id, H5P_DEFAULT));
    TRY(H5Dwrite(dset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, first));
    TRY(append_rows(dset_id, 3, 5, second));
    TRY(append_rows(dset_id, 5, NROWS, third));
    TRY(H5Pclose(dcpl_id));
    TRY(H5Sclose(space_id));
    TRY(H5Dclose(dset_id));
    TRY(H5Fclose(file_id));

    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    TRY(dset_id = H5Dopen2(file_id, DATASET, H5P_DEFAULT));
    TRY(space_id = H5Dget_space(dset_id));
    if (H5Sget_simple_extent_dims(space_id, read_dims, read_max) != 2 || read_dims[0] != NROWS ||
        read_dims[1] != NCOLS || read_max[0] != H5S_UNLIMITED || read_max[1] != NCOLS) {
        fprintf(stderr, "h5_extend: %s is not %d x %d with an unlimited first dimension\n", DATASET, NROWS,
                NCOLS);
        return 1;
    }
    TRY(H5Dread(dset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, rdata));
    for (r = 0; r < NROWS; r++)
        for (c = 0; c < NCOLS; c++)
            if (rdata[r][c] != value(r, c) && nerrors++ == 0)
                fprintf(stderr, "h5_extend: [%d][%d] = %d, expected %d\n", r, c, rdata[r][c], value(r, c));
    TRY(H5Sclose(space_id));
    TRY(H5Dclose(dset_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_extend: %d wrong values\n", nerrors);
        return 1;
    }
    printf("h5_extend: wrote 3 rows, appended 2 and 3, read back %s /%s (%d x %d int32)\n", file_name,
           DATASET, NROWS, NCOLS);
    return 0;
}
