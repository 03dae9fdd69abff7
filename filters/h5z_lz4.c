/*
 * h5z_lz4.c: the LZ4 HDF5 filter (registered ID 32004) as a loadable plugin, on the core's HDF5-LZ4
 * kernel. Framing (the HDF Group's lz4 plugin): 8-byte big-endian original size, 4-byte big-endian
 * block size, then per block a 4-byte big-endian stored size and the block (raw when LZ4 did not shrink
 * it, so incompressible input never fails). cd_values[0] = block size in bytes (0 or absent: 1 GiB).
 *
 * This is not numcodecs' lz4 format (4-byte little-endian size + one block). Through the zarr connector
 * 32004 becomes h5zarr's hdf5_lz4 codec (docs/FORMAT.md), which calls the same kernel, so chunks are
 * byte-identical in .h5 files and zarr stores.
 */
#include "h5z_common.h"

static size_t
lz4_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
           void **buf)
{
    zarr_buf out = ZARR_BUF_INIT;

    if (flags & H5Z_FLAG_REVERSE) {
        if (zarr__h5lz4_decompress_buf(*buf, nbytes, ZARR__DECODE_LIMIT, &out) != ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("lz4 filter (32004): can't decode a chunk: %s", zarr_errmsg());
        }
    }
    else if (zarr__h5lz4_compress(cd_nelmts > 0 ? cd_values[0] : 0, *buf, nbytes, &out) != ZARR_OK) {
        zarr_buf_free(&out);
        return H5Z_FAIL("lz4 filter (32004): can't encode a chunk: %s", zarr_errmsg());
    }
    return h5z_hand_back(&out, buf_size, buf);
}

static const H5Z_class2_t lz4_class = {H5Z_CLASS_T_VERS, (H5Z_filter_t)ZARR_H5Z_LZ4, 1, 1, "lz4", NULL, NULL,
                                       lz4_filter};

H5Z_EXPORT H5PL_type_t
H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

H5Z_EXPORT const void *
H5PLget_plugin_info(void)
{
    return &lz4_class;
}
