/*
 * h5_compress.c: a chunked dataset with the shuffle and deflate (gzip) filters. It checks that the
 * filters are available, writes a 32 x 20 float dataset in 8 x 10 chunks, reopens the file, lists the
 * filters of the dataset's creation property list and reads the values back.
 *
 *     h5_compress [FILE]      (default h5_compress.h5)
 */
#include <hdf5.h>
#include <stdio.h>

#define FILE_NAME "h5_compress.h5"
#define DATASET   "compressed"
#define DIM0      32
#define DIM1      20
#define CHUNK0    8
#define CHUNK1    10

#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_compress: line %d: %s failed\n", __LINE__, #call);                           \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int
main(int argc, char *argv[])
{
    const char  *file_name = argc > 1 ? argv[1] : FILE_NAME;
    hid_t        file_id, space_id, dcpl_id, dset_id;
    hsize_t      dims[2] = {DIM0, DIM1}, chunk[2] = {CHUNK0, CHUNK1}, read_chunk[2];
    float        wdata[DIM0][DIM1], rdata[DIM0][DIM1];
    unsigned int filter_info, flags, cd_values[4];
    size_t       nelmts;
    H5Z_filter_t filter;
    char         filter_name[64];
    int          i, j, nfilters, has_shuffle = 0, has_deflate = 0, nerrors = 0;

    /* The filters must be available for encoding and decoding. */
    if (!H5Zfilter_avail(H5Z_FILTER_DEFLATE) || !H5Zfilter_avail(H5Z_FILTER_SHUFFLE)) {
        fprintf(stderr, "h5_compress: deflate or shuffle filter not available\n");
        return 1;
    }
    TRY(H5Zget_filter_info(H5Z_FILTER_DEFLATE, &filter_info));
    if (!(filter_info & H5Z_FILTER_CONFIG_ENCODE_ENABLED) ||
        !(filter_info & H5Z_FILTER_CONFIG_DECODE_ENABLED)) {
        fprintf(stderr, "h5_compress: deflate cannot both encode and decode\n");
        return 1;
    }

    /* A smooth field with a few repeated values, which compresses well. */
    for (i = 0; i < DIM0; i++)
        for (j = 0; j < DIM1; j++)
            wdata[i][j] = (float)(i / 4) * 0.5f + (float)j * 0.25f;

    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    TRY(space_id = H5Screate_simple(2, dims, NULL));
    TRY(dcpl_id = H5Pcreate(H5P_DATASET_CREATE));
    TRY(H5Pset_chunk(dcpl_id, 2, chunk));
    TRY(H5Pset_shuffle(dcpl_id));
    TRY(H5Pset_deflate(dcpl_id, 6));
    TRY(dset_id = H5Dcreate2(file_id, DATASET, H5T_IEEE_F32LE, space_id, H5P_DEFAULT, dcpl_id, H5P_DEFAULT));
    TRY(H5Dwrite(dset_id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, wdata));
    TRY(H5Pclose(dcpl_id));
    TRY(H5Dclose(dset_id));
    TRY(H5Sclose(space_id));
    TRY(H5Fclose(file_id));

    /* Reopen: the dataset must still be chunked 8 x 10, with shuffle then deflate level 6. */
    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    TRY(dset_id = H5Dopen2(file_id, DATASET, H5P_DEFAULT));
    TRY(dcpl_id = H5Dget_create_plist(dset_id));
    if (H5Pget_layout(dcpl_id) != H5D_CHUNKED || H5Pget_chunk(dcpl_id, 2, read_chunk) != 2 ||
        read_chunk[0] != CHUNK0 || read_chunk[1] != CHUNK1) {
        fprintf(stderr, "h5_compress: %s is not chunked %d x %d\n", DATASET, CHUNK0, CHUNK1);
        return 1;
    }
    TRY(nfilters = H5Pget_nfilters(dcpl_id));
    for (i = 0; i < nfilters; i++) {
        nelmts = sizeof(cd_values) / sizeof(cd_values[0]);
        TRY(filter = H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &nelmts, cd_values, sizeof(filter_name),
                                    filter_name, &filter_info));
        if (filter == H5Z_FILTER_SHUFFLE && i == 0)
            has_shuffle = 1;
        else if (filter == H5Z_FILTER_DEFLATE && i == 1 && nelmts >= 1 && cd_values[0] == 6)
            has_deflate = 1;
        printf("h5_compress: filter %d: %s (id %d)\n", i, filter_name, (int)filter);
    }
    if (nfilters != 2 || !has_shuffle || !has_deflate) {
        fprintf(stderr, "h5_compress: expected shuffle then deflate level 6, found %d filters\n", nfilters);
        return 1;
    }
    TRY(H5Dread(dset_id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, rdata));
    for (i = 0; i < DIM0; i++)
        for (j = 0; j < DIM1; j++)
            if (rdata[i][j] != wdata[i][j] && nerrors++ == 0)
                fprintf(stderr, "h5_compress: [%d][%d] = %g, expected %g\n", i, j, rdata[i][j], wdata[i][j]);
    TRY(H5Pclose(dcpl_id));
    TRY(H5Dclose(dset_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_compress: %d wrong values\n", nerrors);
        return 1;
    }
    printf("h5_compress: wrote and read back %s /%s (%d x %d float32, shuffle + deflate)\n", file_name,
           DATASET, DIM0, DIM1);
    return 0;
}
