/*
 * h5_hyperslab.c: hyperslab selections. An 8 x 10 integer dataset with fill value -1 is written in two
 * parts: a 3 x 4 block from a 3 x 4 buffer, and a strided 2 x 3 pattern from a 1-D buffer of 6 values.
 * Everything else keeps the fill value. The program reopens the file and reads a strided selection of
 * 1 x 2 blocks (start {0,1}, stride {2,3}, count {4,3}) into a 4 x 6 buffer, and the written block
 * into the middle of a larger memory buffer, checking each against what it expects.
 *
 *     h5_hyperslab [FILE]     (default h5_hyperslab.h5)
 */
#include <hdf5.h>
#include <stdio.h>

#define FILE_NAME "h5_hyperslab.h5"
#define DATASET   "slabs"
#define NX        8
#define NY        10
#define FILL      -1

#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_hyperslab: line %d: %s failed\n", __LINE__, #call);                          \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int
main(int argc, char *argv[])
{
    const char *file_name = argc > 1 ? argv[1] : FILE_NAME;
    hsize_t     dims[2] = {NX, NY}, mem_dims[2], n = 6;
    hsize_t     start[2], stride[2], count[2], block[2];
    int         expected[NX][NY], block_data[3][4], pattern[6], strided[4][6], framed[5][6];
    int         fill = FILL, i, j, k, nerrors = 0;
    hid_t       file_id, file_space, mem_space, dcpl_id, dset_id;

    /* What the file must hold after both writes. */
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            expected[i][j] = FILL;
    for (i = 0; i < 3; i++) /* the block: rows 1..3, columns 2..5 */
        for (j = 0; j < 4; j++)
            expected[1 + i][2 + j] = block_data[i][j] = 10 * (i + 1) + j;
    for (k = 0; k < 6; k++) /* the pattern: rows 5 and 7, columns 0, 4 and 8 */
        expected[5 + 2 * (k / 3)][4 * (k % 3)] = pattern[k] = 500 + k;

    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    TRY(file_space = H5Screate_simple(2, dims, NULL));
    TRY(dcpl_id = H5Pcreate(H5P_DATASET_CREATE));
    TRY(H5Pset_fill_value(dcpl_id, H5T_NATIVE_INT, &fill));
    TRY(dset_id = H5Dcreate2(file_id, DATASET, H5T_STD_I32LE, file_space, H5P_DEFAULT, dcpl_id, H5P_DEFAULT));

    /* A contiguous block from a buffer of the same shape. */
    start[0] = 1, start[1] = 2, count[0] = 3, count[1] = 4;
    TRY(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL));
    TRY(mem_space = H5Screate_simple(2, count, NULL));
    TRY(H5Dwrite(dset_id, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, block_data));
    TRY(H5Sclose(mem_space));

    /* A strided pattern from a 1-D buffer: the elements are taken in row-major order. */
    start[0] = 5, start[1] = 0, stride[0] = 2, stride[1] = 4, count[0] = 2, count[1] = 3;
    TRY(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, stride, count, NULL));
    TRY(mem_space = H5Screate_simple(1, &n, NULL));
    TRY(H5Dwrite(dset_id, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, pattern));
    TRY(H5Sclose(mem_space));
    TRY(H5Dclose(dset_id));
    TRY(H5Pclose(dcpl_id));
    TRY(H5Sclose(file_space));
    TRY(H5Fclose(file_id));

    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    TRY(dset_id = H5Dopen2(file_id, DATASET, H5P_DEFAULT));
    TRY(file_space = H5Dget_space(dset_id));

    /* A strided selection of 1 x 2 blocks: rows 0, 2, 4, 6; columns {1,2}, {4,5}, {7,8}. */
    start[0] = 0, start[1] = 1, stride[0] = 2, stride[1] = 3, count[0] = 4, count[1] = 3;
    block[0] = 1, block[1] = 2;
    TRY(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, stride, count, block));
    if (H5Sget_select_npoints(file_space) != 4 * 6) {
        fprintf(stderr, "h5_hyperslab: the strided selection has %d elements, expected 24\n",
                (int)H5Sget_select_npoints(file_space));
        return 1;
    }
    mem_dims[0] = 4, mem_dims[1] = 6;
    TRY(mem_space = H5Screate_simple(2, mem_dims, NULL));
    TRY(H5Dread(dset_id, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, strided));
    TRY(H5Sclose(mem_space));
    for (i = 0; i < 4; i++)
        for (j = 0; j < 6; j++) {
            int want = expected[2 * i][1 + 3 * (j / 2) + j % 2];
            if (strided[i][j] != want && nerrors++ == 0)
                fprintf(stderr, "h5_hyperslab: strided[%d][%d] = %d, expected %d\n", i, j, strided[i][j],
                        want);
        }

    /* The block again, into rows 1..3, columns 1..4 of a 5 x 6 buffer; the rest must stay untouched. */
    for (i = 0; i < 5; i++)
        for (j = 0; j < 6; j++)
            framed[i][j] = -99;
    start[0] = 1, start[1] = 2, count[0] = 3, count[1] = 4;
    TRY(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL));
    mem_dims[0] = 5, mem_dims[1] = 6;
    TRY(mem_space = H5Screate_simple(2, mem_dims, NULL));
    start[0] = 1, start[1] = 1;
    TRY(H5Sselect_hyperslab(mem_space, H5S_SELECT_SET, start, NULL, count, NULL));
    TRY(H5Dread(dset_id, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, framed));
    TRY(H5Sclose(mem_space));
    for (i = 0; i < 5; i++)
        for (j = 0; j < 6; j++) {
            int inside = i >= 1 && i <= 3 && j >= 1 && j <= 4;
            int want   = inside ? block_data[i - 1][j - 1] : -99;
            if (framed[i][j] != want && nerrors++ == 0)
                fprintf(stderr, "h5_hyperslab: framed[%d][%d] = %d, expected %d\n", i, j, framed[i][j], want);
        }

    TRY(H5Sclose(file_space));
    TRY(H5Dclose(dset_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_hyperslab: %d wrong values\n", nerrors);
        return 1;
    }
    printf("h5_hyperslab: wrote a block and a strided pattern into %s /%s, read a strided selection back\n",
           file_name, DATASET);
    return 0;
}
